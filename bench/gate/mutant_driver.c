/*
 * mutant_driver.c — the C API half of the mutation campaign
 * (bench/gate/mutants.py): runs a workload of calls on one backend, named,
 * through the public API, each answer compared exactly with the built-in
 * reference's in a context of its own, and prints one line per call:
 *
 *   call K right|caught|wrong|error SECONDS DETAIL
 *
 * `caught`: the backend was rejected by run-time verification during the
 * call (the caller got the reference's answer, a warning was logged);
 * `wrong`: status 0 and an answer that is not the reference's; `error`: a
 * non-zero status (no answer reached the caller). After a catch the
 * certificate cache is restored from its pristine copy and a fresh context
 * opened, so that every call meets the plugin as a first call would.
 *
 * Usage: mutant_driver BACKEND PLUGIN_DIR LIVE_CACHE PRISTINE_CACHE CALLS [VERIFY]
 * CALLS: lines "rips FILE THRESHOLD MAX_DIM MODULUS" or "edges FILE THRESHOLD"
 * (FILE: a point cloud, comma separated; THRESHOLD: a number or inf).
 * Not installed, not a test: a tool of the campaign.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "topoml/topoml.h"

static char warnings[8192];

static void keep(void *user, int level, const char *message)
{
    (void)user;
    if (level <= 1 && strlen(warnings) + strlen(message) + 2 < sizeof warnings) {
        strcat(warnings, message);
        strcat(warnings, "\n");
    }
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static topoml_context *open_ctx(const char *config_text, const char *plugin_dir)
{
    char file[] = "/tmp/topoml-mutant-cfg-XXXXXX";
    int fd = mkstemp(file);
    if (fd < 0)
        return NULL;
    FILE *f = fdopen(fd, "w");
    fputs(config_text, f);
    fclose(f);
    topoml_context_options o = {0};
    o.struct_size = sizeof o;
    o.flags = TOPOML_CTX_NO_ENV;
    o.plugin_path = plugin_dir;
    o.config_path = file;
    topoml_context *ctx = NULL;
    int rc = topoml_context_new(&ctx, &o);
    remove(file);
    if (rc != TOPOML_OK) {
        fprintf(stderr, "context: %s\n", topoml_errmsg(ctx));
        topoml_context_free(ctx);
        return NULL;
    }
    topoml_set_log(ctx, keep, NULL, 1);
    return ctx;
}

static int bar_order(const void *a, const void *b)
{
    const topoml_interval *x = a, *y = b;
    if (x->dim != y->dim)
        return x->dim < y->dim ? -1 : 1;
    if (x->birth != y->birth)
        return x->birth < y->birth ? -1 : 1;
    return x->death < y->death ? -1 : x->death > y->death;
}

/* Do the two answers differ? (barcodes: as sorted multisets of bars;
 * edges: as lists) */
static bool barcodes_differ(const topoml_barcode *a, const topoml_barcode *b, char *why,
                            size_t size)
{
    uint64_t na, nb;
    const topoml_interval *ia = topoml_barcode_intervals(a, &na);
    const topoml_interval *ib = topoml_barcode_intervals(b, &nb);
    if (na != nb) {
        snprintf(why, size, "%llu bars, the reference %llu", (unsigned long long)na,
                 (unsigned long long)nb);
        return true;
    }
    topoml_interval *x = malloc((na + 1) * sizeof *x), *y = malloc((na + 1) * sizeof *y);
    if (na) {
        memcpy(x, ia, na * sizeof *x);
        memcpy(y, ib, na * sizeof *y);
    }
    qsort(x, na, sizeof *x, bar_order);
    qsort(y, na, sizeof *y, bar_order);
    bool differ = false;
    for (uint64_t k = 0; k < na && !differ; k++)
        if (bar_order(&x[k], &y[k]) != 0) {
            snprintf(why, size, "H%u [%.17g, %.17g), the reference H%u [%.17g, %.17g)", x[k].dim,
                     x[k].birth, x[k].death, y[k].dim, y[k].birth, y[k].death);
            differ = true;
        }
    free(x);
    free(y);
    return differ;
}

static bool edges_differ(const topoml_edge *a, uint64_t na, const topoml_edge *b, uint64_t nb,
                         char *why, size_t size)
{
    if (na != nb) {
        snprintf(why, size, "%llu edges, the reference %llu", (unsigned long long)na,
                 (unsigned long long)nb);
        return true;
    }
    for (uint64_t k = 0; k < na; k++)
        if (a[k].i != b[k].i || a[k].j != b[k].j || a[k].d != b[k].d) {
            snprintf(why, size, "edge %llu differs", (unsigned long long)k);
            return true;
        }
    return false;
}

int main(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(stderr, "usage: %s BACKEND PLUGIN_DIR LIVE_CACHE PRISTINE_CACHE CALLS [VERIFY]\n",
                argv[0]);
        return 2;
    }
    const char *name = argv[1], *dir = argv[2], *live = argv[3], *pristine = argv[4];
    const char *verify = argc > 6 ? argv[6] : "auto";
    FILE *calls = fopen(argv[5], "r");
    if (!calls)
        return 2;
    char config[1200], restore[2600];
    snprintf(config, sizeof config, "cache_dir: %s\nverify: %s\n", live, verify);
    snprintf(restore, sizeof restore, "rm -rf '%s' && cp -a '%s' '%s'", live, pristine, live);
    if (system(restore) != 0)
        return 2;
    topoml_context *ref = open_ctx("", "");
    topoml_context *ctx = open_ctx(config, dir);
    if (!ref || !ctx)
        return 2;
    char line[1024];
    int k = 0;
    while (fgets(line, sizeof line, calls)) {
        char op[16], file[800], thr[32];
        unsigned max_dim = 0, modulus = 2;
        if (sscanf(line, "%15s %799s %31s %u %u", op, file, thr, &max_dim, &modulus) < 3)
            continue;
        const double threshold = strcmp(thr, "inf") == 0 ? INFINITY : atof(thr);
        topoml_data *d = NULL, *dr = NULL;
        if (topoml_data_read(ctx, &d, file, TOPOML_FORMAT_POINT_CLOUD) != TOPOML_OK ||
            topoml_data_read(ref, &dr, file, TOPOML_FORMAT_POINT_CLOUD) != TOPOML_OK) {
            fprintf(stderr, "%s: %s\n", file, topoml_errmsg(ctx));
            return 2;
        }
        warnings[0] = '\0';
        topoml_use_backend(ctx, name);
        char why[300] = "";
        const char *verdict;
        double t0 = now(), seconds;
        int rc;
        if (strcmp(op, "edges") == 0) {
            topoml_edge *e = NULL, *er = NULL;
            uint64_t n = 0, nr = 0;
            rc = topoml_edges(ctx, d, TOPOML_METRIC_EUCLIDEAN, threshold, &e, &n);
            seconds = now() - t0;
            topoml_edges(ref, dr, TOPOML_METRIC_EUCLIDEAN, threshold, &er, &nr);
            const bool differ = rc == TOPOML_OK && edges_differ(e, n, er, nr, why, sizeof why);
            verdict = rc != TOPOML_OK ? "error"
                      : strcmp(topoml_last_backend(ctx), name) != 0 && strstr(warnings, "wrong")
                          ? "caught"
                      : differ ? "wrong" : "right";
            if (rc != TOPOML_OK)
                snprintf(why, sizeof why, "%s", topoml_errmsg(ctx));
            topoml_free(ctx, e);
            topoml_free(ref, er);
        } else {
            topoml_rips_options o;
            topoml_rips_options_init(&o);
            o.max_dim = max_dim;
            o.modulus = modulus;
            o.threshold = threshold;
            topoml_barcode *bc = NULL, *br = NULL;
            rc = topoml_barcode_compute(ctx, &bc, d, &o);
            seconds = now() - t0;
            topoml_barcode_compute(ref, &br, dr, &o);
            const bool differ = rc == TOPOML_OK && barcodes_differ(bc, br, why, sizeof why);
            verdict = rc != TOPOML_OK ? "error"
                      : strcmp(topoml_last_backend(ctx), name) != 0 && strstr(warnings, "wrong")
                          ? "caught"
                      : differ ? "wrong" : "right";
            if (rc != TOPOML_OK)
                snprintf(why, sizeof why, "%s", topoml_errmsg(ctx));
            topoml_barcode_free(bc);
            topoml_barcode_free(br);
        }
        if (strcmp(verdict, "caught") == 0) {
            const char *w = strstr(warnings, "gave a wrong");
            snprintf(why, sizeof why, "%.290s", w ? w : warnings);
        }
        for (char *c = why; *c; c++)
            if (*c == '\n')
                *c = ' ';
        printf("call %d %s %.4f %s\n", k++, verdict, seconds, why);
        fflush(stdout);
        topoml_data_free(ctx, d);
        topoml_data_free(ref, dr);
        if (strcmp(verdict, "right") != 0) {
            /* the next call meets the plugin afresh */
            topoml_context_free(ctx);
            if (system(restore) != 0)
                return 2;
            ctx = open_ctx(config, dir);
            if (!ctx)
                return 2;
        }
    }
    fclose(calls);
    topoml_context_free(ctx);
    topoml_context_free(ref);
    return 0;
}
