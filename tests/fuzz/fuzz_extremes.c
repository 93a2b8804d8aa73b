/*
 * fuzz_extremes.c — libFuzzer target over diagram values at the edges of
 * double: each input byte picks a value from a palette of extremes (zeros,
 * the smallest subnormal and normal doubles, the largest double, 1e15 and
 * its next doubles, powers of ten from 1e-320 to 1e308) or, with the next
 * eight bytes, any finite double; the values become pairs (birth <= death,
 * or an infinite death). Every pair set then goes through what a user
 * reaches from the command line: plot (diagram and barcode: every number in
 * the SVG finite, no "inf" or "nan" written), the features (grid, Betti
 * curves, landscapes, entropy, total persistence), persistence images with
 * the CLI's default parameters, and compare (bottleneck and Wasserstein).
 * Each ends with a value or a clear status, within libFuzzer's time limit.
 */
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot_svg.h"
#include "topoml/features.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

#define check(ok)                                                                                  \
    do {                                                                                           \
        if (!(ok)) {                                                                               \
            fprintf(stderr, "fuzz_extremes.c:%d: %s\n", __LINE__, #ok);                            \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* The next value: a palette entry, or eight raw bytes (finite only). */
static double next_value(const unsigned char **p, const unsigned char *end)
{
    static const double palette[] = {0.0,
                                     -0.0,
                                     DBL_TRUE_MIN,
                                     DBL_MIN,
                                     DBL_MAX,
                                     -DBL_MAX,
                                     DBL_MAX / 2,
                                     1e15,
                                     1.0000000000000002e15,
                                     1.0000000000000004e15,
                                     1e-320,
                                     1e-310,
                                     1e-300,
                                     1e-170,
                                     1e-160,
                                     1e-100,
                                     1e-9,
                                     1.0,
                                     1.0000000000000002,
                                     2.0,
                                     1e9,
                                     1e100,
                                     1e150,
                                     1e200,
                                     1e300,
                                     1e307,
                                     1e308,
                                     -1e308,
                                     -1e-310,
                                     -1.0,
                                     0.5};
    const size_t n_pal = sizeof palette / sizeof palette[0];
    if (*p >= end)
        return 0.0;
    unsigned char b = *(*p)++;
    if (b < 0xf0 || end - *p < 8)
        return palette[b % n_pal];
    double v;
    memcpy(&v, *p, 8);
    *p += 8;
    return isfinite(v) ? v : palette[b % n_pal];
}

/* Every attribute value and text of the SVG: no "inf" or "nan", every
 * number finite. */
static void check_svg(const char *s)
{
    for (const char *q = s; (q = strstr(q, "=\"")) != NULL;) {
        q += 2;
        const char *e = strchr(q, '"');
        check(e != NULL);
        char v[128];
        size_t len = (size_t)(e - q) < sizeof v - 1 ? (size_t)(e - q) : sizeof v - 1;
        memcpy(v, q, len);
        v[len] = '\0';
        check(strstr(v, "inf") == NULL && strstr(v, "nan") == NULL);
        q = e + 1;
    }
    for (const char *q = s; (q = strchr(q, '>')) != NULL;) {
        const char *e = strchr(++q, '<');
        if (e == NULL)
            break;
        char v[128];
        size_t len = (size_t)(e - q) < sizeof v - 1 ? (size_t)(e - q) : sizeof v - 1;
        memcpy(v, q, len);
        v[len] = '\0';
        check(strstr(v, "inf") == NULL && strstr(v, "nan") == NULL);
        q = e;
    }
}

static void plot_with(const topoml_pair *p, uint64_t n, plot_kind kind, const bool *cut,
                      double threshold)
{
    plot_series se = {.dim = 1, .pairs = p, .n = n, .cut = cut};
    plot_spec spec = {.kind = kind, .series = &se, .n_series = 1, .title = "extremes",
                      .width = 0, .height = 0, .threshold = threshold};
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    check(f != NULL);
    check(plot_svg_write(f, &spec) == 0);
    fclose(f);
    check_svg(buf);
    free(buf);
}

/* Drawn twice: with no threshold, and with the largest finite value as the
 * threshold, the infinite deaths then marked cut off (a barcode with
 * --threshold). */
static void plot(const topoml_pair *p, uint64_t n, plot_kind kind)
{
    plot_with(p, n, kind, NULL, INFINITY);
    double t = -INFINITY;
    for (uint64_t i = 0; i < n; i++)
        t = fmax(t, isinf(p[i].death) ? p[i].birth : p[i].death);
    if (n == 0 || !isfinite(t))
        return;
    bool *cut = malloc(n * sizeof *cut);
    check(cut != NULL);
    for (uint64_t i = 0; i < n; i++)
        cut[i] = isinf(p[i].death);
    plot_with(p, n, kind, cut, t);
    free(cut);
}

static void features(topoml_context *ctx, const topoml_pair *p, uint64_t n)
{
    /* The CLI's default grid: the smallest birth to the largest finite value. */
    double lo = INFINITY, hi = -INFINITY;
    for (uint64_t i = 0; i < n; i++) {
        lo = fmin(lo, p[i].birth);
        hi = fmax(hi, isinf(p[i].death) ? p[i].birth : p[i].death);
    }
    if (lo > hi)
        lo = 0.0, hi = 1.0;
    if (lo == hi)
        hi = lo + 1.0;
    if (isinf(hi))
        hi = lo; /* lo + 1 may round to lo, never to inf; keep the guard */
    double grid[16];
    uint64_t betti[16];
    double land[3 * 16], v;
    check(topoml_grid(ctx, lo, hi, 16, grid) == TOPOML_OK);
    for (int i = 0; i < 16; i++)
        check(isfinite(grid[i]) && grid[i] >= lo && grid[i] <= hi);
    check(topoml_betti_curve(ctx, p, n, grid, 16, betti) == TOPOML_OK);
    check(topoml_landscapes(ctx, p, n, 3, grid, 16, land) == TOPOML_OK);
    for (int i = 0; i < 3 * 16; i++)
        check(!isnan(land[i]) && land[i] >= 0.0);
    topoml_pair *fin = malloc((n + 1) * sizeof *fin);
    uint64_t nf;
    check(fin != NULL);
    check(topoml_pairs_finite(ctx, p, n, TOPOML_INFINITE_DROP, 0, fin, &nf) == TOPOML_OK);
    /* Entropy is scale-free: always a value in [0, ln n]. */
    check(topoml_persistent_entropy(ctx, fin, nf, &v) == TOPOML_OK);
    check(v >= 0.0 && v <= log((double)(nf ? nf : 1)) + 1e-12);
    int rc = topoml_total_persistence(ctx, fin, nf, 1.0, &v);
    check((rc == TOPOML_OK && isfinite(v) && v >= 0.0) || rc == TOPOML_E_OVERFLOW);

    /* Images with the CLI's defaults (tools/cli/cmd_features.c). */
    double bmin = INFINITY, bmax = -INFINITY, pmax = 0.0;
    for (uint64_t i = 0; i < nf; i++) {
        bmin = fmin(bmin, fin[i].birth);
        bmax = fmax(bmax, fin[i].birth);
        pmax = fmax(pmax, fin[i].death - fin[i].birth);
    }
    if (bmin > bmax)
        bmin = bmax = 0.0;
    topoml_image_params_v1 prm;
    topoml_image_params_init(&prm);
    double span = fmax(bmax - bmin, pmax);
    prm.sigma = (span > 0.0 ? span : 1.0) / 20.0;
    prm.birth_min = bmin - 3.0 * prm.sigma;
    prm.birth_max = bmax + 3.0 * prm.sigma;
    prm.pers_min = 0.0;
    prm.pers_max = pmax + 3.0 * prm.sigma;
    prm.width = prm.height = 8;
    uint64_t offsets[2] = {0, nf};
    double img[64];
    rc = topoml_persistence_images(ctx, &prm, 1, offsets, fin, img);
    if (rc == TOPOML_OK)
        for (int i = 0; i < 64; i++)
            check(isfinite(img[i]) && img[i] >= 0.0);
    else
        check(rc == TOPOML_E_INVALID || rc == TOPOML_E_OVERFLOW);

    /* Compare with itself and with its finite part. */
    rc = topoml_bottleneck_distance(ctx, p, n, p, n, &v);
    check(rc == TOPOML_OK && v == 0.0);
    rc = topoml_bottleneck_distance(ctx, p, n, fin, nf, &v);
    check((rc == TOPOML_OK && v >= 0.0) || rc == TOPOML_E_OVERFLOW);
    rc = topoml_wasserstein_distance(ctx, p, n, fin, nf, 1.0, INFINITY, &v);
    check((rc == TOPOML_OK && v >= 0.0 && !isnan(v)) || rc == TOPOML_E_OVERFLOW);
    free(fin);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    static topoml_context *ctx;
    if (ctx == NULL) {
        topoml_context_options o = {.struct_size = sizeof o,
                                    .flags = TOPOML_CTX_NO_ENV | TOPOML_CTX_NO_PLUGINS};
        if (topoml_context_new(&ctx, &o) != TOPOML_OK)
            abort();
        topoml_set_max_memory(ctx, 64u << 20);
    }
    topoml_pair p[32];
    uint64_t n = 0;
    const unsigned char *q = data, *end = data + size;
    while (end - q >= 2 && n < 32) {
        double a = next_value(&q, end);
        unsigned char inf = q < end ? *q : 0;
        double b = next_value(&q, end);
        if (inf % 5 == 4)
            b = INFINITY;
        p[n].birth = fmin(a, b);
        p[n].death = fmax(a, b);
        n++;
    }
    plot(p, n, PLOT_DIAGRAM);
    plot(p, n, PLOT_BARCODE);
    features(ctx, p, n);
    return 0;
}
