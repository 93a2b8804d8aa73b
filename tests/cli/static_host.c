/*
 * static_host.c — the smallest host of the static recipes
 * (test_static_host.sh, docs/embedding.md "Linking statically"): the
 * barcode of a file, written as Ripser writes it, on whichever backend the
 * library chooses — the built-in scalar reference when no plugin is there.
 *
 *   static_host FILE FORMAT MAX_DIM
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <topoml/topoml.h>

int main(int argc, char **argv)
{
    if (argc != 4)
        return 2;
    topoml_format format;
    topoml_context *ctx = NULL;
    topoml_data *data = NULL;
    topoml_barcode *bc = NULL;
    topoml_rips_options opts;
    topoml_rips_options_init(&opts);
    opts.max_dim = (uint32_t)atoi(argv[3]);
    int rc = topoml_context_new(&ctx, NULL);
    if (rc == TOPOML_OK)
        rc = topoml_format_from_name(argv[2], &format);
    if (rc == TOPOML_OK)
        rc = topoml_data_read(ctx, &data, argv[1], format);
    if (rc == TOPOML_OK)
        rc = topoml_barcode_compute(ctx, &bc, data, &opts);
    if (rc == TOPOML_OK)
        rc = topoml_barcode_write(ctx, bc, stdout, TOPOML_OUTPUT_RIPSER, 1.0);
    if (rc == TOPOML_OK)
        fprintf(stderr, "backend: %s\n", topoml_last_backend(ctx));
    else
        fprintf(stderr, "static_host: %s\n", ctx ? topoml_errmsg(ctx) : topoml_strerror(rc));
    topoml_barcode_free(bc);
    topoml_data_free(ctx, data);
    topoml_context_free(ctx);
    return rc == TOPOML_OK ? 0 : 1;
}
