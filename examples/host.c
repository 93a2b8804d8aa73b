/*
 * host.c — a C program that embeds libtopoml, built out of tree against the
 * installed package. It lists the backends topoml found, then computes the
 * H0 barcode of 40 points on a circle on the backend named on the command
 * line (default: let topoml choose) and prints it in Ripser's format.
 *
 *   host [BACKEND]
 */
#include <topoml/topoml.h>

#include <math.h>
#include <stdio.h>

static const char *const gate_names[] = {"enabled", "disabled", "unsupported", "rejected"};

int main(int argc, char **argv)
{
    topoml_context *ctx = NULL;
    int rc = topoml_context_new(&ctx, NULL);
    if (rc != TOPOML_OK) {
        fprintf(stderr, "host: %s\n", ctx ? topoml_errmsg(ctx) : topoml_strerror(rc));
        topoml_context_free(ctx);
        return 1;
    }
    for (uint32_t i = 0; i < topoml_backend_count(ctx); i++) {
        topoml_backend_info b = {.struct_size = sizeof b};
        if (topoml_backend_get(ctx, i, &b) == TOPOML_OK)
            fprintf(stderr, "backend %s: %s (%s)\n", b.name,
                    gate_names[b.gate_state < 4 ? b.gate_state : 3], b.gate_reason);
    }

    const double pi = 3.14159265358979323846;
    double xy[2 * 40];
    for (int i = 0; i < 40; i++) {
        xy[2 * i] = cos(2 * pi * i / 40);
        xy[2 * i + 1] = sin(2 * pi * i / 40) * (1 + 0.01 * (i % 3));
    }
    topoml_data *data = NULL;
    topoml_barcode *bc = NULL;
    topoml_rips_options opts;
    topoml_rips_options_init(&opts);
    opts.max_dim = 0;
    rc = topoml_use_backend(ctx, argc > 1 ? argv[1] : NULL);
    if (rc == TOPOML_OK)
        rc = topoml_data_from_points(ctx, &data, 40, 2, xy);
    if (rc == TOPOML_OK)
        rc = topoml_barcode_compute(ctx, &bc, data, &opts);
    if (rc == TOPOML_OK) {
        printf("backend: %s\n", topoml_last_backend(ctx));
        rc = topoml_barcode_write(ctx, bc, stdout, TOPOML_OUTPUT_RIPSER, 0);
    }
    if (rc != TOPOML_OK)
        fprintf(stderr, "host: %s\n", topoml_errmsg(ctx));
    topoml_barcode_free(bc);
    topoml_data_free(ctx, data);
    topoml_context_free(ctx);
    return rc == TOPOML_OK ? 0 : 1;
}
