/*
 * check_context.h — a context made from a configuration text, as several
 * Check test programs of tests/ need one.
 */
#ifndef TOPOML_TESTS_CHECK_CONTEXT_H
#define TOPOML_TESTS_CHECK_CONTEXT_H

#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "topoml/topoml.h"

/* A context from the configuration `text` (written to a temporary file,
 * removed once read), its plugins from `plugin_path` (NULL: the default
 * places), the environment ignored. The test fails, with the library's
 * message, if the context cannot be made. */
static inline topoml_context *check_context_from_config(const char *text, const char *plugin_path)
{
    char file[] = "/tmp/topoml-cfg-XXXXXX";
    int fd = mkstemp(file);
    ck_assert_int_ge(fd, 0);
    size_t len = strlen(text), done = 0;
    while (done < len) {
        ssize_t w = write(fd, text + done, len - done);
        ck_assert_int_gt(w, 0);
        done += (size_t)w;
    }
    close(fd);
    topoml_context_options o = {.struct_size = sizeof o,
                                .flags = TOPOML_CTX_NO_ENV,
                                .config_path = file,
                                .plugin_path = plugin_path};
    topoml_context *ctx = NULL;
    int rc = topoml_context_new(&ctx, &o);
    unlink(file);
    ck_assert_msg(rc == TOPOML_OK, "context: %s", topoml_errmsg(ctx));
    return ctx;
}

#endif
