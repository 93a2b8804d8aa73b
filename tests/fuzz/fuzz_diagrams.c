/*
 * fuzz_diagrams.c — libFuzzer target over the diagram readers (topoml JSON,
 * Ripser's text, GUDHI's lines, CSV, and the format detection). The first
 * byte picks the format, the rest is the file. Whatever parses must then
 * survive the features and distances, be at distance 0 from itself, and
 * read back unchanged from each writer; anything else is a bug.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topoml/features.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static void check(int ok)
{
    if (!ok)
        abort();
}

static void exercise(topoml_context *ctx, const topoml_pair *p, uint64_t n)
{
    double grid[5] = {-1, 0, 0.5, 1, 1e3}, land[10], v;
    uint64_t betti[5];
    check(topoml_betti_curve(ctx, p, n, grid, 5, betti) == TOPOML_OK);
    check(topoml_landscapes(ctx, p, n, 2, grid, 5, land) == TOPOML_OK);
    check(topoml_total_persistence(ctx, p, n, 1.0, &v) == TOPOML_OK);
    topoml_pair *fin = malloc((n + 1) * sizeof *fin);
    uint64_t nf;
    check(fin != NULL);
    check(topoml_pairs_finite(ctx, p, n, TOPOML_INFINITE_DROP, 0, fin, &nf) == TOPOML_OK);
    int rc = topoml_persistent_entropy(ctx, fin, nf, &v);
    check(rc == TOPOML_OK || rc == TOPOML_E_INVALID); /* lengths may overflow */
    free(fin);
    /* The matching problems are cubic at worst; keep each run short. */
    if (n <= 64) {
        rc = topoml_bottleneck_distance(ctx, p, n, p, n, &v);
        check(rc == TOPOML_OK && v == 0.0);
        /* Coordinates near the largest double make costs overflow, which
         * must be reported, never computed with. */
        rc = topoml_wasserstein_distance(ctx, p, n, p, n, 2.0, INFINITY, &v);
        check((rc == TOPOML_OK && v >= 0.0 && isfinite(v)) || rc == TOPOML_E_OVERFLOW);
    }
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    if (size < 1)
        return 0;
    topoml_diagram_format fmt = (topoml_diagram_format)(data[0] % 5);
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
    topoml_diagram *d = NULL;
    if (f && topoml_diagram_read_stream(ctx, &d, f, "fuzz", fmt) == TOPOML_OK) {
        uint32_t dims = topoml_diagram_dim_count(d);
        check(dims <= TOPOML_DIAGRAM_MAX_DIM + 1);
        for (uint32_t k = 0; k < dims; k++) {
            uint64_t n;
            const topoml_pair *p = topoml_diagram_pairs(d, k, &n);
            for (uint64_t i = 0; i < n; i++)
                check(isfinite(p[i].birth) && p[i].death >= p[i].birth);
            exercise(ctx, p, n);
        }
        for (int w = TOPOML_DIAGRAM_JSON; w <= TOPOML_DIAGRAM_CSV; w++) {
            char *buf = NULL;
            size_t len = 0;
            FILE *out = open_memstream(&buf, &len);
            check(out != NULL);
            check(topoml_diagram_write(ctx, d, out, (topoml_diagram_format)w) == TOPOML_OK);
            fclose(out);
            FILE *in = fmemopen(buf, len ? len : 1, "rb");
            if (len == 0)
                fgetc(in);
            topoml_diagram *e = NULL;
            check(topoml_diagram_read_stream(ctx, &e, in, "again", (topoml_diagram_format)w) ==
                  TOPOML_OK);
            fclose(in);
            for (uint32_t k = 0; k < dims; k++) {
                uint64_t n, m;
                const topoml_pair *p = topoml_diagram_pairs(d, k, &n);
                const topoml_pair *q = topoml_diagram_pairs(e, k, &m);
                check(n == m && (n == 0 || memcmp(p, q, n * sizeof *p) == 0));
            }
            topoml_diagram_free(e);
            free(buf);
        }
        topoml_diagram_free(d);
    }
    if (f)
        fclose(f);
    topoml_context_free(ctx);
    return 0;
}
