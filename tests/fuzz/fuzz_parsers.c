/*
 * fuzz_parsers.c — libFuzzer target over every input parser. The first byte
 * picks the format, the rest is the file. Any crash, leak, sanitizer report
 * or a success that yields an inconsistent data set is a bug.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "topoml/topoml.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    if (size < 1)
        return 0;
    topoml_format fmt = (topoml_format)(data[0] % 7);
    topoml_context_options o = {.struct_size = sizeof o,
                                .flags = TOPOML_CTX_NO_ENV | TOPOML_CTX_NO_PLUGINS};
    topoml_context *ctx = NULL;
    if (topoml_context_new(&ctx, &o) != TOPOML_OK)
        abort();
    topoml_set_max_memory(ctx, 64u << 20);
    FILE *f = fmemopen((void *)(data + 1), size - 1 ? size - 1 : 1, "rb");
    if (size == 1 && f) {
        fclose(f);
        f = fmemopen((void *)"", 1, "rb");
        fgetc(f);
    }
    topoml_data *d = NULL;
    if (f && topoml_data_read_stream(ctx, &d, f, "fuzz", fmt) == TOPOML_OK) {
        /* What parsed must be usable: H0 of small inputs runs through. */
        if (topoml_data_count(d) <= 64) {
            topoml_rips_options r;
            topoml_rips_options_init(&r);
            r.max_dim = 0;
            topoml_barcode *bc = NULL;
            int rc = topoml_barcode_compute(ctx, &bc, d, &r);
            if (rc != TOPOML_OK && rc != TOPOML_E_LIMIT)
                abort();
            topoml_barcode_free(bc);
        }
        topoml_data_free(ctx, d);
    }
    if (f)
        fclose(f);
    topoml_context_free(ctx);
    return 0;
}
