/*
 * bench.c — topoml-asm-avx512-bench: times the asm-avx512 plugin's distances
 * op (loaded through its entry symbol, as the core loads it) against a plain
 * C scalar loop and against the BLAS route d^2 = |x|^2 + |y|^2 - 2<x,y>
 * through OpenBLAS's cblas_sgemm/dgemm on one thread, and measures the
 * single-core FMA peak in the same run. Prints a table and writes JSON.
 *
 * Work is counted the same for every route: 3*dim flops per pair (subtract,
 * multiply, add per coordinate), n(n-1)/2 pairs; the square roots and the
 * BLAS route's norm arithmetic are not counted. So GFLOP/s is an inverse
 * time, comparable across routes, and "of peak" is that rate over the
 * measured FMA peak (2 flops per FMA lane). The plugin's exact formulation
 * issues a subtraction and an FMA per coordinate and lane, so it cannot pass
 * 75% of that peak; the BLAS route issues one FMA per coordinate and lane
 * but loses accuracy to cancellation, which the "err" column shows: the
 * largest error against the scalar reference on sampled pairs, in units of
 * eps times the reference (the plugin's bound is 2*dim).
 *
 * BLAS is found with dlopen (libopenblas.so.0, or --blas PATH), so the
 * benchmark builds without it and says so when it is not there. Two BLAS
 * variants run: "blas" multiplies each block of 256 rows by the points
 * before its end only (the triangle the condensed output needs, the fair
 * opponent), "blas-full" by all points (what a plain X*X^T does).
 *
 * The scalar loop is metric.h's, timed on as many rows as fit in
 * --scalar-seconds and extrapolated (marked "sampled").
 */
#define _DEFAULT_SOURCE /* setenv, clock_gettime */
#include <dlfcn.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "metric.h"
#include "topoml/plugin.h"

void topoml_bench_fma_f32(uint64_t iterations);
void topoml_bench_fma_f64(uint64_t iterations);

#define BLAS_BLOCK 256
#define ACCURACY_SAMPLES 20000

/* ---- small helpers ---------------------------------------------------- */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t rng_state = 0x5eed;

static uint64_t rng_next(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double rng_unit(void)
{
    return (double)(rng_next() >> 11) * 0x1p-53;
}

static int parse_list(const char *s, uint64_t *out, int max)
{
    int k = 0;
    while (*s && k < max) {
        char *end;
        out[k++] = strtoull(s, &end, 10);
        if (end == s)
            return -1;
        s = *end == ',' ? end + 1 : end;
    }
    return k;
}

/* ---- the plugin, loaded as the core loads it --------------------------- */

static void *host_alloc(void *h, size_t n)
{
    (void)h;
    return malloc(n);
}
static void *host_realloc(void *h, void *p, size_t n)
{
    (void)h;
    return realloc(p, n);
}
static void host_free(void *h, void *p)
{
    (void)h;
    free(p);
}

static const topoml_host_v1 host = {sizeof(topoml_host_v1), TOPOML_ABI_VERSION, NULL, host_alloc,
                                    host_realloc,           host_free,          NULL, "bench"};

typedef struct plugin {
    const topoml_backend_v1 *vt;
    void *state;
    int usable;
    char why[256];
    const char *device, *schedule;
} plugin;

static int plugin_open(const char *path, plugin *p)
{
    topoml_backend_negotiate_fn entry;
    uint32_t version = TOPOML_ABI_VERSION;
    const topoml_capability_v1 *caps = NULL;
    uint32_t n_caps = 0;
    void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);

    memset(p, 0, sizeof *p);
    if (!dl) {
        snprintf(p->why, sizeof p->why, "cannot load %s: %s", path, dlerror());
        return -1;
    }
    *(void **)&entry = dlsym(dl, TOPOML_PLUGIN_ENTRY);
    if (!entry || entry(&version, &host, &p->vt) != TOPOML_OK ||
        p->vt->create(&host, &p->state) != TOPOML_OK) {
        snprintf(p->why, sizeof p->why, "%s does not negotiate", path);
        return -1;
    }
    p->usable = p->vt->probe(p->state, p->why, sizeof p->why) == TOPOML_OK;
    if (p->vt->capabilities(p->state, &caps, &n_caps) == TOPOML_OK && n_caps > 0) {
        p->device = caps[0].device;
        p->schedule = caps[0].schedule;
    }
    return 0;
}

static void make_call(topoml_call_v1 *call, char *err, size_t err_size)
{
    memset(call, 0, sizeof *call);
    call->struct_size = sizeof *call;
    call->alloc = host_alloc;
    call->realloc = host_realloc;
    call->free = host_free;
    call->error = err;
    call->error_size = err_size;
    call->device = -1;
}

/* ---- OpenBLAS through dlopen ------------------------------------------ */

enum { ROW_MAJOR = 101, NO_TRANS = 111, TRANS = 112 }; /* CBLAS's values */

typedef void (*sgemm_fn)(int, int, int, int, int, int, float, const float *, int, const float *,
                         int, float, float *, int);
typedef void (*dgemm_fn)(int, int, int, int, int, int, double, const double *, int, const double *,
                         int, double, double *, int);

typedef struct blas {
    sgemm_fn sgemm;
    dgemm_fn dgemm;
    char name[512];
} blas;

static int blas_open(const char *path, blas *b)
{
    static const char *candidates[] = {"libopenblas.so.0", "libopenblas.so", "libopenblasp-r0.so"};
    void *dl = NULL;
    void (*set_threads)(int);
    char *(*get_config)(void);
    char *(*get_core)(void);

    memset(b, 0, sizeof *b);
    if (path && strcmp(path, "none") == 0)
        return -1;
    /* OpenBLAS reads this when it loads; the call below covers the rest. */
    setenv("OPENBLAS_NUM_THREADS", "1", 1);
    for (size_t k = 0; !dl && k < (path ? 1 : sizeof candidates / sizeof candidates[0]); k++)
        dl = dlopen(path ? path : candidates[k], RTLD_NOW | RTLD_LOCAL);
    if (!dl)
        return -1;
    *(void **)&b->sgemm = dlsym(dl, "cblas_sgemm");
    *(void **)&b->dgemm = dlsym(dl, "cblas_dgemm");
    *(void **)&set_threads = dlsym(dl, "openblas_set_num_threads");
    *(void **)&get_config = dlsym(dl, "openblas_get_config");
    *(void **)&get_core = dlsym(dl, "openblas_get_corename");
    if (!b->sgemm || !b->dgemm)
        return -1;
    if (set_threads)
        set_threads(1);
    snprintf(b->name, sizeof b->name, "%s%s%s%s", get_config ? get_config() : "blas",
             get_core ? " (core " : "", get_core ? get_core() : "", get_core ? ")" : "");
    return 0;
}

/* d^2 = |x_i|^2 + |x_j|^2 - 2 <x_i, x_j> for the condensed output, a block
 * of rows at a time; `full` multiplies each block by all n points. */
static int blas_distances(const blas *b, int f64, int euclid, int full, uint64_t n, uint64_t dim,
                          const void *x, void *out)
{
    size_t elem = f64 ? 8 : 4;
    void *norms = malloc(n * elem), *g = malloc((size_t)BLAS_BLOCK * n * elem);

    if (!norms || !g) {
        free(norms);
        free(g);
        return -1;
    }
    for (uint64_t i = 0; i < n; i++) {
        if (f64) {
            const double *p = (const double *)x + i * dim;
            double s = 0;
            for (uint64_t k = 0; k < dim; k++)
                s += p[k] * p[k];
            ((double *)norms)[i] = s;
        } else {
            const float *p = (const float *)x + i * dim;
            float s = 0;
            for (uint64_t k = 0; k < dim; k++)
                s += p[k] * p[k];
            ((float *)norms)[i] = s;
        }
    }
    for (uint64_t i0 = 0; i0 < n; i0 += BLAS_BLOCK) {
        uint64_t i1 = i0 + BLAS_BLOCK < n ? i0 + BLAS_BLOCK : n;
        uint64_t cols = full ? n : i1;
        if (f64)
            b->dgemm(ROW_MAJOR, NO_TRANS, TRANS, (int)(i1 - i0), (int)cols, (int)dim, 1.0,
                     (const double *)x + i0 * dim, (int)dim, (const double *)x, (int)dim, 0.0, g,
                     (int)cols);
        else
            b->sgemm(ROW_MAJOR, NO_TRANS, TRANS, (int)(i1 - i0), (int)cols, (int)dim, 1.0f,
                     (const float *)x + i0 * dim, (int)dim, (const float *)x, (int)dim, 0.0f, g,
                     (int)cols);
        for (uint64_t i = i0 > 0 ? i0 : 1; i < i1; i++) {
            uint64_t base = i * (i - 1) / 2;
            if (f64) {
                const double *gr = (const double *)g + (i - i0) * cols, *nr = norms;
                double *o = (double *)out + base;
                for (uint64_t j = 0; j < i; j++) {
                    double d2 = nr[i] + nr[j] - 2.0 * gr[j];
                    d2 = d2 > 0.0 ? d2 : 0.0;
                    o[j] = euclid ? sqrt(d2) : d2;
                }
            } else {
                const float *gr = (const float *)g + (i - i0) * cols, *nr = norms;
                float *o = (float *)out + base;
                for (uint64_t j = 0; j < i; j++) {
                    float d2 = nr[i] + nr[j] - 2.0f * gr[j];
                    d2 = d2 > 0.0f ? d2 : 0.0f;
                    o[j] = euclid ? sqrtf(d2) : d2;
                }
            }
        }
    }
    free(norms);
    free(g);
    return 0;
}

/* ---- the scalar loop, sampled ----------------------------------------- */

/* Rows from the last down until `budget` seconds pass; returns the time per
 * pair. */
static double scalar_sampled(int f64, topoml_metric metric, uint64_t n, uint64_t dim, const void *x,
                             void *out, double budget)
{
    uint64_t pairs = 0;
    double t0 = now(), t = 0;

    for (uint64_t i = n - 1; i >= 1; i--) {
        uint64_t base = i * (i - 1) / 2;
        for (uint64_t j = 0; j < i; j++) {
            if (f64)
                ((double *)out)[base + j] = scalar_dist_f64(metric, (const double *)x + i * dim,
                                                            (const double *)x + j * dim, dim);
            else
                ((float *)out)[base + j] = scalar_dist_f32(metric, (const float *)x + i * dim,
                                                           (const float *)x + j * dim, dim);
        }
        pairs += i;
        t = now() - t0;
        if (t >= budget)
            break;
    }
    return t / (double)pairs;
}

/* ---- the FMA peak ----------------------------------------------------- */

static double fma_peak(int f64)
{
    uint64_t iters = 1u << 10;
    double best = 0;

    /* Grow until one run takes 2 ms, then keep the best of 100 such runs:
     * short runs, so that some of them see the core undisturbed. */
    for (;;) {
        double t = now();
        (f64 ? topoml_bench_fma_f64 : topoml_bench_fma_f32)(iters);
        t = now() - t;
        if (t > 0.002)
            break;
        iters *= 2;
    }
    for (int r = 0; r < 100; r++) {
        double t = now();
        (f64 ? topoml_bench_fma_f64 : topoml_bench_fma_f32)(iters);
        t = now() - t;
        double gf = (double)iters * 24.0 * (f64 ? 8 : 16) * 2.0 / t * 1e-9;
        best = gf > best ? gf : best;
    }
    return best;
}

/* ---- one case --------------------------------------------------------- */

/* Repetitions keep the best time; the large cases stop after about a second
 * of repeats, so the whole sweep stays within a few minutes. */
#define REPEAT_SECONDS 1.0

static int more_reps(int rep, int reps, double best)
{
    return rep < reps && (rep == 0 || best * rep < REPEAT_SECONDS);
}

typedef struct result {
    const char *route;
    double seconds; /* best of the repetitions, or extrapolated */
    int sampled;
    double err_eps; /* max |d - ref| / (eps * ref) over sampled pairs; < 0: not measured */
    uint64_t n_edges;
    double threshold;
} result;

static double value(int f64, const void *out, uint64_t idx)
{
    return f64 ? ((const double *)out)[idx] : (double)((const float *)out)[idx];
}

static double max_error(int f64, topoml_metric metric, uint64_t n, uint64_t dim, const void *x,
                        const void *out)
{
    double eps = f64 ? DBL_EPSILON : FLT_EPSILON, worst = 0;
    uint64_t saved = rng_state;

    rng_state = 0xacc;
    for (int s = 0; s < ACCURACY_SAMPLES; s++) {
        uint64_t i = 1 + rng_next() % (n - 1), j = rng_next() % i;
        double ref = scalar_point_dist(f64 ? TOPOML_F64 : TOPOML_F32, metric, x, dim, i, j);
        double got = value(f64, out, i * (i - 1) / 2 + j);
        double e = ref > 0 ? fabs(got - ref) / (eps * ref) : (got == 0 ? 0 : INFINITY);
        worst = e > worst ? e : worst;
    }
    rng_state = saved;
    return worst;
}

/* The edges op's contract, checked against the distances op's output: every
 * pair with d <= threshold, that d exactly, sorted by (d, i, j). */
static int edges_agree(int f64, uint64_t n, const void *dist, double threshold,
                       const topoml_edge *e, uint64_t ne)
{
    uint64_t count = 0;

    for (uint64_t idx = 0; idx < n * (n - 1) / 2; idx++)
        count += value(f64, dist, idx) <= threshold;
    if (count != ne)
        return 0;
    for (uint64_t k = 0; k < ne; k++) {
        if (e[k].i >= e[k].j || e[k].j >= n ||
            e[k].d != value(f64, dist, (uint64_t)e[k].j * (e[k].j - 1) / 2 + e[k].i))
            return 0;
        if (k > 0 && !(e[k - 1].d < e[k].d ||
                       (e[k - 1].d == e[k].d &&
                        (e[k - 1].i < e[k].i || (e[k - 1].i == e[k].i && e[k - 1].j < e[k].j)))))
            return 0;
    }
    return 1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static FILE *json;
static int json_first_case = 1;

static void emit(const char *dtype, const char *metric, uint64_t n, uint64_t dim, const result *r,
                 double peak, double blas_seconds)
{
    double pairs = (double)n * (double)(n - 1) / 2.0;
    double gflops = 3.0 * (double)dim * pairs / r->seconds * 1e-9;
    double of_peak = peak > 0 ? gflops / peak : NAN;
    double vs_blas = blas_seconds > 0 ? blas_seconds / r->seconds : NAN;

    printf("%-4s %-11s %6llu %4llu  %-16s %9.4f%s %9.2f %6.1f%% ", dtype, metric,
           (unsigned long long)n, (unsigned long long)dim, r->route, r->seconds,
           r->sampled ? "*" : " ", gflops, 100.0 * of_peak);
    if (blas_seconds > 0)
        printf("%7.2fx ", vs_blas);
    else
        printf("%8s ", "-");
    if (r->err_eps >= 0)
        printf("%10.3g", r->err_eps);
    if (r->n_edges)
        printf("  edges=%llu", (unsigned long long)r->n_edges);
    printf("\n");
    fflush(stdout);
    if (!json)
        return;
    fprintf(json,
            "%s\n    {\"dtype\": \"%s\", \"metric\": \"%s\", \"n\": %llu, \"dim\": %llu, "
            "\"route\": \"%s\", \"seconds\": %.6g, \"sampled\": %s, \"gflops\": %.6g",
            json_first_case ? "" : ",", dtype, metric, (unsigned long long)n,
            (unsigned long long)dim, r->route, r->seconds, r->sampled ? "true" : "false", gflops);
    json_first_case = 0;
    if (peak > 0)
        fprintf(json, ", \"fraction_of_peak\": %.4f", of_peak);
    if (blas_seconds > 0)
        fprintf(json, ", \"speedup_vs_blas\": %.4f", vs_blas);
    if (r->err_eps >= 0)
        fprintf(json, ", \"max_err_eps\": %.6g, \"bound_eps\": %llu",
                isinf(r->err_eps) ? 1e308 : r->err_eps, (unsigned long long)(2 * dim));
    if (r->n_edges)
        fprintf(json, ", \"edges\": %llu, \"threshold\": %.17g", (unsigned long long)r->n_edges,
                r->threshold);
    fprintf(json, "}");
}

static void usage(void)
{
    fprintf(stderr,
            "usage: topoml-asm-avx512-bench [--plugin PATH] [--blas PATH|none] [--json FILE]\n"
            "         [--n 2048,4096,8192,16384] [--dim 3,16,64,256] [--dtype f32,f64]\n"
            "         [--metric euclidean,sqeuclidean] [--reps 3] [--scalar-seconds 0.3]\n"
            "         [--budget SECONDS] [--quick]\n");
}

int main(int argc, char **argv)
{
    const char *plugin_path = TOPOML_BENCH_PLUGIN, *blas_path = NULL, *json_path = NULL;
    uint64_t ns[16] = {2048, 4096, 8192, 16384}, dims[16] = {3, 16, 64, 256};
    int n_ns = 4, n_dims = 4, reps = 3, want_f32 = 1, want_f64 = 1, fails = 0;
    static const topoml_metric metric_list[2] = {TOPOML_METRIC_EUCLIDEAN,
                                                 TOPOML_METRIC_SQEUCLIDEAN};
    int want_metric[2] = {1, 1};
    double scalar_budget = 0.3, budget = 0, started = now();
    int truncated = 0;
    plugin pl;
    blas bl;

    for (int a = 1; a < argc; a++) {
        const char *v = a + 1 < argc ? argv[a + 1] : NULL;
        if (!strcmp(argv[a], "--quick")) {
            ns[0] = 1024, ns[1] = 2048, n_ns = 2;
            dims[0] = 3, dims[1] = 64, n_dims = 2;
            reps = 1;
            scalar_budget = 0.05;
            continue;
        }
        if (!v) {
            usage();
            return 2;
        }
        a++;
        if (!strcmp(argv[a - 1], "--plugin"))
            plugin_path = v;
        else if (!strcmp(argv[a - 1], "--blas"))
            blas_path = v;
        else if (!strcmp(argv[a - 1], "--json"))
            json_path = v;
        else if (!strcmp(argv[a - 1], "--n"))
            n_ns = parse_list(v, ns, 16);
        else if (!strcmp(argv[a - 1], "--dim"))
            n_dims = parse_list(v, dims, 16);
        else if (!strcmp(argv[a - 1], "--dtype")) {
            want_f32 = strstr(v, "f32") != NULL;
            want_f64 = strstr(v, "f64") != NULL;
        } else if (!strcmp(argv[a - 1], "--metric")) {
            /* "sqeuclidean" contains "euclidean": look for whole names. */
            want_metric[1] = strstr(v, "sqeuclidean") != NULL;
            want_metric[0] = !strcmp(v, "euclidean") || !strncmp(v, "euclidean,", 10) ||
                             strstr(v, ",euclidean") != NULL;
        } else if (!strcmp(argv[a - 1], "--reps"))
            reps = atoi(v) > 0 ? atoi(v) : 1;
        else if (!strcmp(argv[a - 1], "--scalar-seconds"))
            scalar_budget = atof(v);
        else if (!strcmp(argv[a - 1], "--budget"))
            budget = atof(v);
        else {
            usage();
            return 2;
        }
    }
    if (n_ns <= 0 || n_dims <= 0) {
        usage();
        return 2;
    }
    for (int k = 0; k < n_ns; k++)
        if (ns[k] < 2) {
            fprintf(stderr, "bench: n must be at least 2\n");
            return 2;
        }

    if (plugin_open(plugin_path, &pl) != 0)
        fprintf(stderr, "bench: plugin not run: %s\n", pl.why);
    else if (!pl.usable)
        fprintf(stderr, "bench: plugin not run: probe says %s\n", pl.why);
    int have_blas = blas_open(blas_path, &bl) == 0;
    if (!have_blas)
        fprintf(stderr, "bench: no BLAS route: OpenBLAS not found (try --blas PATH)\n");

    double peak32 = 0, peak64 = 0;
    if (pl.usable) {
        peak32 = fma_peak(0);
        peak64 = fma_peak(1);
    }
    printf("plugin:   %s\n          %s\n", pl.device ? pl.device : pl.why,
           pl.schedule ? pl.schedule : "");
    printf("blas:     %s\n", have_blas ? bl.name : "none");
    printf("FMA peak: %.1f GFLOP/s f32, %.1f GFLOP/s f64 (one core, zmm)\n", peak32, peak64);
    printf("work: 3*dim flops per pair; * = sampled; err = max |d-ref|/(eps*ref), plugin bound "
           "2*dim\n\n");
    printf("%-4s %-11s %6s %4s  %-16s %10s %9s %7s %8s %10s\n", "type", "metric", "n", "dim",
           "route", "seconds", "GFLOP/s", "peak", "vs BLAS", "err");

    if (json_path) {
        json = fopen(json_path, "w");
        if (!json) {
            fprintf(stderr, "bench: cannot write %s\n", json_path);
            return 2;
        }
        fprintf(json,
                "{\n  \"plugin\": {\"file\": \"%s\", \"usable\": %s, \"device\": \"%s\", "
                "\"schedule\": \"%s\", \"why\": \"%s\"},\n",
                plugin_path, pl.usable ? "true" : "false", pl.device ? pl.device : "",
                pl.schedule ? pl.schedule : "", pl.usable ? "" : pl.why);
        fprintf(json, "  \"blas\": \"%s\",\n  \"compiler\": \"%s\",\n", have_blas ? bl.name : "",
                __VERSION__);
        fprintf(json, "  \"peak_gflops\": {\"f32\": %.4g, \"f64\": %.4g},\n", peak32, peak64);
        fprintf(json, "  \"flops_per_pair\": \"3*dim\",\n  \"cases\": [");
    }

    /* Sizes outermost, smallest first: a run cut short by --budget still
     * covers every dtype and dimension for the sizes it reached. */
    for (int a = 0; a < n_ns && !truncated; a++)
        for (int f64 = 0; f64 < 2 && !truncated; f64++) {
            if (f64 ? !want_f64 : !want_f32)
                continue;
            const char *dtype = f64 ? "f64" : "f32";
            size_t elem = f64 ? 8 : 4;
            double peak = f64 ? peak64 : peak32;
            for (int b = 0; b < n_dims; b++) {
                uint64_t n = ns[a], dim = dims[b], pairs = n * (n - 1) / 2;
                if (budget > 0 && now() - started > budget) {
                    fprintf(stderr, "bench: --budget of %.0f s spent; stopped before n=%llu\n",
                            budget, (unsigned long long)n);
                    truncated = 1;
                    break;
                }
                void *x = malloc(n * dim * elem + 1);
                void *out = malloc(pairs * elem), *out_blas = malloc(pairs * elem);
                if (!x || !out || !out_blas) {
                    fprintf(stderr, "bench: out of memory for n=%llu dim=%llu\n",
                            (unsigned long long)n, (unsigned long long)dim);
                    free(x), free(out), free(out_blas);
                    fails++;
                    continue;
                }
                for (uint64_t k = 0; k < n * dim; k++) {
                    if (f64)
                        ((double *)x)[k] = rng_unit();
                    else
                        ((float *)x)[k] = (float)rng_unit();
                }
                /* Touch the outputs so page faults are not timed. */
                memset(out, 0, pairs * elem);
                memset(out_blas, 0, pairs * elem);

                for (int mi = 0; mi < 2; mi++) {
                    topoml_metric metric = metric_list[mi];
                    const char *metric_name =
                        metric == TOPOML_METRIC_EUCLIDEAN ? "euclidean" : "sqeuclidean";
                    double blas_seconds = -1;
                    if (!want_metric[mi])
                        continue;
                    if (have_blas) {
                        for (int full = 0; full < 2; full++) {
                            result r = {full ? "blas-full" : "blas", INFINITY, 0, -1, 0, 0};
                            for (int rep = 0; more_reps(rep, reps, r.seconds); rep++) {
                                double t = now();
                                if (blas_distances(&bl, f64, metric == TOPOML_METRIC_EUCLIDEAN,
                                                   full, n, dim, x, out_blas) != 0) {
                                    fails++;
                                    break;
                                }
                                t = now() - t;
                                r.seconds = t < r.seconds ? t : r.seconds;
                            }
                            r.err_eps = max_error(f64, metric, n, dim, x, out_blas);
                            if (!full)
                                blas_seconds = r.seconds;
                            emit(dtype, metric_name, n, dim, &r, peak, blas_seconds);
                        }
                    }

                    {
                        result r = {"scalar-c", 0, 1, -1, 0, 0};
                        r.seconds =
                            scalar_sampled(f64, metric, n, dim, x, out_blas, scalar_budget) *
                            (double)pairs;
                        emit(dtype, metric_name, n, dim, &r, peak, blas_seconds);
                    }

                    if (pl.usable) {
                        topoml_input_v1 in;
                        topoml_call_v1 call;
                        char err[256];
                        memset(&in, 0, sizeof in);
                        in.struct_size = sizeof in;
                        in.kind = TOPOML_INPUT_POINTS;
                        in.n = n;
                        in.dim = dim;
                        in.dtype = f64 ? TOPOML_F64 : TOPOML_F32;
                        in.metric = metric;
                        in.data = x;
                        make_call(&call, err, sizeof err);

                        result r = {"asm-avx512", INFINITY, 0, -1, 0, 0};
                        for (int rep = 0; more_reps(rep, reps, r.seconds); rep++) {
                            double t = now();
                            int status = pl.vt->distances(pl.state, &call, &in, out);
                            t = now() - t;
                            if (status != TOPOML_OK) {
                                fprintf(stderr, "bench: plugin distances failed: %s\n", err);
                                fails++;
                                break;
                            }
                            r.seconds = t < r.seconds ? t : r.seconds;
                        }
                        r.err_eps = max_error(f64, metric, n, dim, x, out);
                        if (r.err_eps > 2.0 * (double)dim) {
                            fprintf(stderr, "bench: plugin error %.3g eps exceeds the bound %llu\n",
                                    r.err_eps, (unsigned long long)(2 * dim));
                            fails++;
                        }
                        emit(dtype, metric_name, n, dim, &r, peak, blas_seconds);

                        /* The fused edges op at the 1% quantile of distances. */
                        double sample[1000];
                        uint64_t saved = rng_state;
                        for (int s = 0; s < 1000; s++) {
                            uint64_t i = 1 + rng_next() % (n - 1), j = rng_next() % i;
                            sample[s] = value(f64, out, i * (i - 1) / 2 + j);
                        }
                        rng_state = saved;
                        qsort(sample, 1000, sizeof sample[0], cmp_double);
                        result re = {"asm-avx512-edges", INFINITY, 0, -1, 0, sample[10]};
                        for (int rep = 0; more_reps(rep, reps, re.seconds); rep++) {
                            topoml_edge *e = NULL;
                            uint64_t ne = 0;
                            double t = now();
                            int status = pl.vt->edges(pl.state, &call, &in, re.threshold, &e, &ne);
                            t = now() - t;
                            if (status != TOPOML_OK) {
                                fprintf(stderr, "bench: plugin edges failed: %s\n", err);
                                fails++;
                                break;
                            }
                            if (rep == 0 && !edges_agree(f64, n, out, re.threshold, e, ne)) {
                                fprintf(stderr,
                                        "bench: edges disagree with distances (%s n=%llu "
                                        "dim=%llu %s)\n",
                                        dtype, (unsigned long long)n, (unsigned long long)dim,
                                        metric_name);
                                fails++;
                            }
                            free(e);
                            re.n_edges = ne;
                            re.seconds = t < re.seconds ? t : re.seconds;
                        }
                        emit(dtype, metric_name, n, dim, &re, peak, blas_seconds);
                    }
                }
                free(x);
                free(out);
                free(out_blas);
            }
        }
    if (json) {
        fprintf(json, "\n  ],\n  \"truncated\": %s,\n  \"failures\": %d\n}\n",
                truncated ? "true" : "false", fails);
        fclose(json);
    }
    if (pl.state)
        pl.vt->destroy(pl.state);
    return fails ? 1 : 0;
}
