/*
 * fuzz_config.c — libFuzzer target over the YAML configuration reader: any
 * byte string as topoml.yaml must give a context or a clean
 * TOPOML_E_CONFIG, never a crash or a leak.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "topoml/topoml.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    char path[] = "/tmp/topoml-fuzz-config-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return 0;
    if (write(fd, data, size) != (ssize_t)size) {
        close(fd);
        unlink(path);
        return 0;
    }
    close(fd);
    topoml_context_options o = {.struct_size = sizeof o,
                                .flags = TOPOML_CTX_NO_ENV | TOPOML_CTX_NO_PLUGINS,
                                .config_path = path};
    topoml_context *ctx = NULL;
    int rc = topoml_context_new(&ctx, &o);
    if (rc != TOPOML_OK && rc != TOPOML_E_CONFIG && rc != TOPOML_E_NOMEM)
        abort();
    topoml_context_free(ctx);
    unlink(path);
    return 0;
}
