/*
 * test_cuda_gpu.c — every op of topoml-backend-cuda.so against the scalar
 * reference (the backend built into libtopoml), on a machine with a GPU.
 *
 * What "agrees" means here:
 *  - distances, threshold edges, H0 and Rips: the same bits. The device
 *    computes each distance with metric.h's operations in metric.h's order,
 *    and Rips reduces with the reference's own engine, so nothing less than
 *    equality is expected;
 *  - persistence images: within 1e-12 of the image's largest pixel (CUDA's
 *    erfc is not glibc's);
 *  - Ripser's published output (test-data/expected): within 1e-5 relative,
 *    as Ripser prints 6 digits.
 * Every op also runs twice and must give the same bits both times.
 *
 * Usage: test_cuda_gpu PLUGIN.so TEST_DATA_DIR [--small] [--only PART] [--json FILE]
 *   --small: small sizes only (for compute-sanitizer, which is slow).
 *   --only PART: one part only: distances, edges, rips, images or errors.
 * Exit 0: all passed; 1: a failure; 77: no usable device (skipped), unless
 * TOPOML_CUDA_EXPECT_DEVICE=1, when that is a failure.
 */
#include <dlfcn.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "scalar.h"
#include "topoml/plugin.h"

static const topoml_backend_v1 *cuda, *ref;
static void *cuda_state;
static int small_mode;
static int n_pass, n_fail;
static FILE *json;
static char err_cuda[512], err_ref[512];

/* ---- bookkeeping ---- */

static void result(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void result(int ok, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    printf("%s %s\n", ok ? "PASS" : "FAIL", what);
    fflush(stdout);
    if (json) {
        fprintf(json, "%s{\"result\": \"%s\", \"case\": \"", n_pass + n_fail ? ",\n" : "",
                ok ? "PASS" : "FAIL");
        for (const char *c = what; *c; c++)
            fputs(*c == '"' ? "\\\"" : *c == '\\' ? "\\\\" : (char[2]){*c, 0}, json);
        fputs("\"}", json);
    }
    if (ok)
        n_pass++;
    else
        n_fail++;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static long live_blocks;
static void *t_alloc(void *hd, size_t n)
{
    (void)hd;
    void *p = malloc(n);
    if (p)
        live_blocks++;
    return p;
}
static void *t_realloc(void *hd, void *p, size_t n)
{
    (void)hd;
    void *q = realloc(p, n);
    if (q && !p)
        live_blocks++;
    return q;
}
static void t_free(void *hd, void *p)
{
    (void)hd;
    if (p)
        live_blocks--;
    free(p);
}

static int cancel_after; /* > 0: the progress callback says stop on that call */
static int t_progress(void *hd, const char *stage, uint64_t done, uint64_t total)
{
    (void)hd;
    (void)stage;
    (void)done;
    (void)total;
    return cancel_after > 0 && --cancel_after == 0;
}

static topoml_call_v1 make_call(char *err)
{
    topoml_call_v1 c;
    memset(&c, 0, sizeof c);
    c.struct_size = sizeof c;
    c.alloc = t_alloc;
    c.realloc = t_realloc;
    c.free = t_free;
    c.progress = t_progress;
    c.error = err;
    c.error_size = 512;
    c.device = -1;
    err[0] = '\0';
    return c;
}

/* ---- data ---- */

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static double uniform(void)
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return (double)((rng * 0x2545f4914f6cdd1dull) >> 11) / 9007199254740992.0;
}

enum shape { RANDOM, GRID, DUPLICATES, SPHERE };
static const char *shape_name[] = {"random", "grid", "duplicates", "sphere"};

/* n points of dimension dim as doubles: uniform in [-1,1]^dim; on an
 * integer grid (many equal distances, to test the tie order); with every
 * point repeated (zero distances; a zero vector for cosine); or on the unit
 * sphere with a little noise. */
static double *make_points(uint64_t n, uint64_t dim, enum shape s)
{
    double *p = malloc((n * dim != 0 ? n * dim : 1) * sizeof *p);
    for (uint64_t i = 0; i < n; i++) {
        double norm = 0;
        for (uint64_t k = 0; k < dim; k++) {
            double x = uniform() * 2 - 1;
            if (s == GRID)
                x = floor(x * 3);
            if (s == DUPLICATES && i % 2 == 1)
                x = p[(i - 1) * dim + k];
            if (s == DUPLICATES && i == 0)
                x = 0;
            p[i * dim + k] = x;
            norm += x * x;
        }
        if (s == SPHERE && norm > 0)
            for (uint64_t k = 0; k < dim; k++)
                p[i * dim + k] = p[i * dim + k] / sqrt(norm) * (1 + 0.01 * uniform());
    }
    return p;
}

/* The same numbers as f32 or f64 (a new array). */
static void *as_dtype(const double *p, uint64_t count, uint32_t dtype)
{
    if (dtype == TOPOML_F64) {
        double *q = malloc((count ? count : 1) * sizeof *q);
        memcpy(q, p, count * sizeof *q);
        return q;
    }
    float *q = malloc((count ? count : 1) * sizeof *q);
    for (uint64_t k = 0; k < count; k++)
        q[k] = (float)p[k];
    return q;
}

static topoml_input_v1 points_input(uint64_t n, uint64_t dim, uint32_t dtype, uint32_t metric,
                                    const void *data)
{
    topoml_input_v1 in;
    memset(&in, 0, sizeof in);
    in.struct_size = sizeof in;
    in.kind = TOPOML_INPUT_POINTS;
    in.n = n;
    in.dim = dim;
    in.dtype = dtype;
    in.metric = metric;
    in.data = data;
    return in;
}

static const char *metric_name[] = {"euclidean", "sqeuclidean", "manhattan", "chebyshev", "cosine"};
static const char *dtype_name[] = {"f32", "f64"};

/* ---- comparisons ---- */

static int same_edges(const topoml_edge *a, const topoml_edge *b, uint64_t m, char *why,
                      size_t size)
{
    for (uint64_t k = 0; k < m; k++)
        if (memcmp(&a[k].d, &b[k].d, sizeof(double)) != 0 || a[k].i != b[k].i || a[k].j != b[k].j) {
            snprintf(why, size, "edge %llu: (%.17g,%u,%u) vs reference (%.17g,%u,%u)",
                     (unsigned long long)k, a[k].d, a[k].i, a[k].j, b[k].d, b[k].i, b[k].j);
            return 0;
        }
    return 1;
}

static int cmp_interval(const void *x, const void *y)
{
    const topoml_interval *a = x, *b = y;
    if (a->dim != b->dim)
        return a->dim < b->dim ? -1 : 1;
    if (a->death != b->death)
        return a->death < b->death ? -1 : 1;
    if (a->birth != b->birth)
        return a->birth < b->birth ? -1 : 1;
    return 0;
}

/* Barcodes as multisets: equal bits after sorting. */
static int same_barcode(topoml_barcode_v1 *a, topoml_barcode_v1 *b, char *why, size_t size)
{
    if (a->n_intervals != b->n_intervals || a->max_dim != b->max_dim ||
        a->complete != b->complete) {
        snprintf(why, size, "%llu intervals (max_dim %u, complete %u) vs reference %llu (%u, %u)",
                 (unsigned long long)a->n_intervals, a->max_dim, a->complete,
                 (unsigned long long)b->n_intervals, b->max_dim, b->complete);
        return 0;
    }
    qsort(a->intervals, a->n_intervals, sizeof *a->intervals, cmp_interval);
    qsort(b->intervals, b->n_intervals, sizeof *b->intervals, cmp_interval);
    for (uint64_t k = 0; k < a->n_intervals; k++) {
        topoml_interval *x = &a->intervals[k], *y = &b->intervals[k];
        if (x->dim != y->dim || memcmp(&x->birth, &y->birth, 8) ||
            memcmp(&x->death, &y->death, 8)) {
            snprintf(why, size,
                     "interval %llu: dim %u [%.17g, %.17g) vs reference dim %u [%.17g, "
                     "%.17g)",
                     (unsigned long long)k, x->dim, x->birth, x->death, y->dim, y->birth, y->death);
            return 0;
        }
    }
    return 1;
}

static topoml_barcode_v1 empty_barcode(void)
{
    topoml_barcode_v1 b;
    memset(&b, 0, sizeof b);
    b.struct_size = sizeof b;
    return b;
}

/* ---- distances ---- */

static void test_distances_case(uint64_t n, uint64_t dim, enum shape s, uint32_t dtype,
                                uint32_t metric, uint64_t max_memory)
{
    double *p = make_points(n, dim, s);
    void *data = as_dtype(p, n * dim, dtype);
    topoml_input_v1 in = points_input(n, dim, dtype, metric, data);
    const size_t elem = dtype == TOPOML_F32 ? 4 : 8;
    const uint64_t m = n > 1 ? n * (n - 1) / 2 : 0;
    void *a = malloc(m * elem + 1), *a2 = malloc(m * elem + 1), *b = malloc(m * elem + 1);
    topoml_call_v1 cc = make_call(err_cuda), cr = make_call(err_ref);
    cc.max_memory = max_memory;
    double t0 = now();
    int rc = cuda->distances(cuda_state, &cc, &in, a);
    double t1 = now();
    int rc2 = cuda->distances(cuda_state, &cc, &in, a2);
    double t2 = now();
    int rr = ref->distances(NULL, &cr, &in, b);
    double t3 = now();
    char why[256] = "";
    int ok = rc == TOPOML_OK && rc2 == TOPOML_OK && rr == TOPOML_OK;
    if (!ok)
        snprintf(why, sizeof why, "status %d/%d (%s), reference %d (%s)", rc, rc2, err_cuda, rr,
                 err_ref);
    if (ok && memcmp(a, a2, m * elem) != 0) {
        ok = 0;
        snprintf(why, sizeof why, "two runs differ");
    }
    for (uint64_t k = 0; ok && k < m; k++)
        if (memcmp((char *)a + k * elem, (char *)b + k * elem, elem) != 0) {
            double x = dtype == TOPOML_F32 ? ((float *)a)[k] : ((double *)a)[k];
            double y = dtype == TOPOML_F32 ? ((float *)b)[k] : ((double *)b)[k];
            snprintf(why, sizeof why, "entry %llu: %.17g vs reference %.17g", (unsigned long long)k,
                     x, y);
            ok = 0;
        }
    result(ok, "distances %s %s %s n=%llu dim=%llu%s: cuda %.3fs/%.3fs, scalar %.3fs %s",
           dtype_name[dtype], metric_name[metric], shape_name[s], (unsigned long long)n,
           (unsigned long long)dim, max_memory ? " (small bands)" : "", t1 - t0, t2 - t1, t3 - t2,
           why);
    free(p);
    free(data);
    free(a);
    free(a2);
    free(b);
}

static void test_distances(void)
{
    /* --small (for compute-sanitizer) keeps one case of each kind. */
    static const uint64_t shapes_small[][2] = {{0, 3}, {2, 3}, {64, 0}, {130, 3}, {200, 40}};
    static const uint64_t shapes_more[][2] = {{1, 3}, {5, 1}, {129, 17}};
    static const uint64_t shapes_full[][2] = {{1000, 3}, {777, 64}, {600, 256}, {2500, 9}};
    for (uint32_t dtype = 0; dtype < 2; dtype++)
        for (uint32_t metric = 0; metric < 5; metric++) {
            for (size_t k = 0; k < sizeof shapes_small / sizeof shapes_small[0]; k++)
                test_distances_case(shapes_small[k][0], shapes_small[k][1], RANDOM, dtype, metric,
                                    0);
            test_distances_case(150, 5, DUPLICATES, dtype, metric, 0);
            if (small_mode)
                continue;
            test_distances_case(150, 4, GRID, dtype, metric, 0);
            for (size_t k = 0; k < sizeof shapes_more / sizeof shapes_more[0]; k++)
                test_distances_case(shapes_more[k][0], shapes_more[k][1], RANDOM, dtype, metric, 0);
            for (size_t k = 0; k < sizeof shapes_full / sizeof shapes_full[0]; k++)
                test_distances_case(shapes_full[k][0], shapes_full[k][1], RANDOM, dtype, metric, 0);
        }
    /* Many bands: the memory limit leaves room for bands of a few hundred
     * KiB only, so the double buffering runs through dozens of bands. */
    test_distances_case(small_mode ? 700 : 3000, 7, RANDOM, TOPOML_F32, TOPOML_METRIC_EUCLIDEAN,
                        small_mode ? (1u << 20) : (4u << 20));
    test_distances_case(small_mode ? 700 : 3000, 7, RANDOM, TOPOML_F64, TOPOML_METRIC_COSINE,
                        small_mode ? (1u << 20) : (4u << 20));
}

/* ---- edges and H0 ---- */

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static void compare_edges_and_h0(const topoml_input_v1 *in, double threshold, const char *what)
{
    topoml_call_v1 cc = make_call(err_cuda), cr = make_call(err_ref);
    topoml_edge *a = NULL, *a2 = NULL, *b = NULL;
    uint64_t ma = 0, ma2 = 0, mb = 0;
    double t0 = now();
    int rc = cuda->edges(cuda_state, &cc, in, threshold, &a, &ma);
    double t1 = now();
    int rc2 = cuda->edges(cuda_state, &cc, in, threshold, &a2, &ma2);
    double t2 = now();
    int rr = ref->edges(NULL, &cr, in, threshold, &b, &mb);
    double t3 = now();
    char why[512] = "";
    int ok = rc == rr && rc2 == rc;
    if (!ok)
        snprintf(why, sizeof why, "status %d/%d (%s) vs reference %d (%s)", rc, rc2, err_cuda, rr,
                 err_ref);
    if (ok && rc == TOPOML_OK) {
        if (ma != mb || ma2 != ma) {
            ok = 0;
            snprintf(why, sizeof why, "%llu/%llu edges vs reference %llu", (unsigned long long)ma,
                     (unsigned long long)ma2, (unsigned long long)mb);
        } else if (!same_edges(a, a2, ma, why, sizeof why)) {
            ok = 0;
            strcat(why, " (two runs differ)");
        } else {
            ok = same_edges(a, b, ma, why, sizeof why);
        }
    }
    result(ok, "edges %s t=%g: %llu edges, cuda %.3fs/%.3fs, scalar %.3fs %s", what, threshold,
           (unsigned long long)mb, t1 - t0, t2 - t1, t3 - t2, why);
    t_free(NULL, a);
    t_free(NULL, a2);
    t_free(NULL, b);

    topoml_barcode_v1 ha = empty_barcode(), ha2 = empty_barcode(), hb = empty_barcode();
    cc = make_call(err_cuda);
    cr = make_call(err_ref);
    rc = cuda->h0(cuda_state, &cc, in, threshold, &ha);
    rc2 = cuda->h0(cuda_state, &cc, in, threshold, &ha2);
    rr = ref->h0(NULL, &cr, in, threshold, &hb);
    ok = rc == rr && rc2 == rc;
    why[0] = '\0';
    if (!ok)
        snprintf(why, sizeof why, "status %d/%d (%s) vs reference %d (%s)", rc, rc2, err_cuda, rr,
                 err_ref);
    if (ok && rc == TOPOML_OK) {
        ok = ha.n_intervals == ha2.n_intervals &&
             memcmp(ha.intervals, ha2.intervals, ha.n_intervals * sizeof *ha.intervals) == 0;
        if (!ok)
            snprintf(why, sizeof why, "two runs differ");
        else
            ok = same_barcode(&ha, &hb, why, sizeof why);
    }
    result(ok, "h0 %s t=%g: %llu bars %s", what, threshold, (unsigned long long)hb.n_intervals,
           why);
    t_free(NULL, ha.intervals);
    t_free(NULL, ha2.intervals);
    t_free(NULL, hb.intervals);
}

static void test_edges(void)
{
    const uint64_t n = small_mode ? 150 : 700;
    char what[256];
    for (uint32_t dtype = 0; dtype < 2; dtype++)
        for (uint32_t metric = 0; metric < 5; metric++)
            for (int s = RANDOM; s <= DUPLICATES; s++) {
                const uint64_t dim = s == GRID ? 3 : 6;
                double *p = make_points(n, dim, (enum shape)s);
                void *data = as_dtype(p, n * dim, dtype);
                topoml_input_v1 in = points_input(n, dim, dtype, metric, data);
                /* Thresholds: none pass, ties at 0, a quarter, half, all. */
                const uint64_t m = n * (n - 1) / 2;
                double *d = malloc(m * sizeof *d);
                topoml_input_v1 in64 = points_input(n, dim, TOPOML_F64, metric, p);
                topoml_call_v1 cr = make_call(err_ref);
                ref->distances(NULL, &cr, &in64, d);
                qsort(d, m, sizeof *d, cmp_double);
                const double thresholds[] = {d[m / 4], INFINITY, -1, 0, d[m / 2]};
                snprintf(what, sizeof what, "points %s %s %s n=%llu dim=%llu", dtype_name[dtype],
                         metric_name[metric], shape_name[s], (unsigned long long)n,
                         (unsigned long long)dim);
                for (int k = 0; k < (small_mode ? 2 : 5); k++)
                    compare_edges_and_h0(&in, thresholds[k], what);
                free(d);
                free(data);
                free(p);
            }

    /* Condensed and sparse inputs. */
    double *p = make_points(n, 4, RANDOM);
    for (uint32_t dtype = 0; dtype < 2; dtype++) {
        void *pts = as_dtype(p, n * 4, dtype);
        topoml_input_v1 pin = points_input(n, 4, dtype, TOPOML_METRIC_EUCLIDEAN, pts);
        const uint64_t m = n * (n - 1) / 2;
        void *dist = malloc(m * (dtype == TOPOML_F32 ? 4 : 8));
        topoml_call_v1 cr = make_call(err_ref);
        ref->distances(NULL, &cr, &pin, dist);
        topoml_input_v1 in;
        memset(&in, 0, sizeof in);
        in.struct_size = sizeof in;
        in.kind = TOPOML_INPUT_CONDENSED;
        in.n = n;
        in.dtype = dtype;
        in.data = dist;
        snprintf(what, sizeof what, "condensed %s n=%llu", dtype_name[dtype],
                 (unsigned long long)n);
        compare_edges_and_h0(&in, 0.8, what);
        compare_edges_and_h0(&in, INFINITY, what);
        if (dtype == TOPOML_F64) {
            /* Sparse: the edges under 1.2, shuffled. */
            topoml_edge *e = NULL;
            uint64_t me = 0;
            cr = make_call(err_ref);
            ref->edges(NULL, &cr, &in, 1.2, &e, &me);
            for (uint64_t k = me; k > 1; k--) {
                uint64_t r = (uint64_t)(uniform() * k);
                topoml_edge t = e[k - 1];
                e[k - 1] = e[r];
                e[r] = t;
            }
            topoml_input_v1 sp;
            memset(&sp, 0, sizeof sp);
            sp.struct_size = sizeof sp;
            sp.kind = TOPOML_INPUT_SPARSE;
            sp.n = n;
            sp.n_edges = me;
            sp.edges = e;
            snprintf(what, sizeof what, "sparse n=%llu m=%llu", (unsigned long long)n,
                     (unsigned long long)me);
            compare_edges_and_h0(&sp, 0.9, what);
            compare_edges_and_h0(&sp, INFINITY, what);
            t_free(NULL, e);
        }
        free(dist);
        free(pts);
    }
    free(p);
    /* Larger: many tiles, millions of edges through the radix sorts. */
    if (!small_mode) {
        const uint64_t big = 4000;
        double *q = make_points(big, 3, GRID);
        topoml_input_v1 in = points_input(big, 3, TOPOML_F64, TOPOML_METRIC_EUCLIDEAN, q);
        compare_edges_and_h0(&in, 2.0, "points f64 euclidean grid n=4000 dim=3");
        float *qf = as_dtype(q, big * 3, TOPOML_F32);
        in = points_input(big, 3, TOPOML_F32, TOPOML_METRIC_MANHATTAN, qf);
        compare_edges_and_h0(&in, INFINITY, "points f32 manhattan grid n=4000 dim=3");
        free(qf);
        free(q);
    }
}

/* ---- Rips ---- */

static void compare_rips(const topoml_input_v1 *in, uint32_t max_dim, double threshold,
                         uint32_t modulus, const char *what, topoml_barcode_v1 *keep)
{
    topoml_rips_params_v1 params = {sizeof params, max_dim, threshold, modulus, 0, 0, 0};
    topoml_call_v1 cc = make_call(err_cuda), cr = make_call(err_ref);
    topoml_barcode_v1 a = empty_barcode(), a2 = empty_barcode(), b = empty_barcode();
    double t0 = now();
    int rc = cuda->rips(cuda_state, &cc, in, &params, &a);
    double t1 = now();
    int rc2 = cuda->rips(cuda_state, &cc, in, &params, &a2);
    double t2 = now();
    int rr = ref->rips(NULL, &cr, in, &params, &b);
    double t3 = now();
    char why[512] = "";
    int ok = rc == rr && rc2 == rc;
    if (!ok)
        snprintf(why, sizeof why, "status %d/%d (%s) vs reference %d (%s)", rc, rc2, err_cuda, rr,
                 err_ref);
    if (ok && rc == TOPOML_OK) {
        ok = same_barcode(&a, &a2, why, sizeof why);
        if (!ok)
            strcat(why, " (two runs differ)");
        else
            ok = same_barcode(&a, &b, why, sizeof why);
    }
    result(ok, "rips %s dim<=%u t=%g Z/%u: %llu bars, cuda %.3fs/%.3fs, scalar %.3fs %s", what,
           max_dim, threshold, modulus, (unsigned long long)b.n_intervals, t1 - t0, t2 - t1,
           t3 - t2, why);
    t_free(NULL, a2.intervals);
    t_free(NULL, b.intervals);
    if (keep && ok)
        *keep = a;
    else
        t_free(NULL, a.intervals);
}

/* Read every number of a text file (separators: anything else). */
static double *read_numbers(const char *path, uint64_t *count, uint64_t *lines_with_numbers)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    uint64_t cap = 1024, n = 0, lines = 0;
    double *v = malloc(cap * sizeof *v);
    char line[1 << 16];
    while (fgets(line, sizeof line, f)) {
        char *s = line, *end;
        int any = 0;
        while (*s) {
            double x = strtod(s, &end);
            if (end == s) {
                s++;
                continue;
            }
            if (n == cap)
                v = realloc(v, (cap *= 2) * sizeof *v);
            v[n++] = x;
            any = 1;
            s = end;
        }
        lines += any;
    }
    fclose(f);
    *count = n;
    if (lines_with_numbers)
        *lines_with_numbers = lines;
    return v;
}

/* Ripser's text output: "persistence intervals in dim k:" then " [b,d)" or
 * " [b, )". */
static topoml_interval *read_ripser_output(const char *path, uint64_t *count)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    uint64_t cap = 256, n = 0;
    topoml_interval *v = malloc(cap * sizeof *v);
    char line[512];
    unsigned dim = 0;
    while (fgets(line, sizeof line, f)) {
        double b, d;
        if (sscanf(line, "persistence intervals in dim %u", &dim) == 1)
            continue;
        if (sscanf(line, " [%lf,%lf)", &b, &d) == 2 || sscanf(line, " [%lf, )", &b) == 1) {
            if (strstr(line, ", )"))
                d = INFINITY;
            if (n == cap)
                v = realloc(v, (cap *= 2) * sizeof *v);
            v[n++] = (topoml_interval){b, d, dim, 0};
        }
    }
    fclose(f);
    *count = n;
    return v;
}

static int close_to(double a, double b)
{
    if (isinf(a) || isinf(b))
        return a == b;
    return fabs(a - b) <= 1e-5 * fmax(fabs(a), fabs(b)) + 1e-12;
}

/* Our barcode (dimensions <= max_dim) against Ripser's printed one. */
static void compare_with_ripser(topoml_barcode_v1 *ours, const char *path, uint32_t max_dim,
                                const char *what)
{
    uint64_t m = 0;
    topoml_interval *want = read_ripser_output(path, &m);
    char why[512] = "";
    int ok = want != NULL;
    if (!ok)
        snprintf(why, sizeof why, "cannot read %s", path);
    uint64_t kept = 0;
    for (uint64_t k = 0; ok && k < m; k++)
        if (want[k].dim <= max_dim)
            want[kept++] = want[k];
    if (ok) {
        qsort(want, kept, sizeof *want, cmp_interval);
        qsort(ours->intervals, ours->n_intervals, sizeof *ours->intervals, cmp_interval);
        if (kept != ours->n_intervals) {
            ok = 0;
            snprintf(why, sizeof why, "%llu intervals vs Ripser's %llu",
                     (unsigned long long)ours->n_intervals, (unsigned long long)kept);
        }
        for (uint64_t k = 0; ok && k < kept; k++) {
            topoml_interval *x = &ours->intervals[k], *y = &want[k];
            if (x->dim != y->dim || !close_to(x->birth, y->birth) ||
                !close_to(x->death, y->death)) {
                ok = 0;
                snprintf(
                    why, sizeof why, "interval %llu: dim %u [%g, %g) vs Ripser dim %u [%g, %g)",
                    (unsigned long long)k, x->dim, x->birth, x->death, y->dim, y->birth, y->death);
            }
        }
    }
    result(ok, "rips %s matches Ripser's output %s", what, why);
    free(want);
}

static void test_rips_file(const char *dir, const char *file, int point_cloud, uint32_t max_dim,
                           double threshold, uint32_t modulus, const char *expected)
{
    char path[1024], what[256];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    uint64_t count = 0, lines = 0;
    double *v = read_numbers(path, &count, &lines);
    if (!v) {
        result(0, "rips %s: cannot read %s", file, path);
        return;
    }
    topoml_input_v1 in;
    memset(&in, 0, sizeof in);
    in.struct_size = sizeof in;
    if (point_cloud) {
        in = points_input(lines, count / lines, TOPOML_F64, TOPOML_METRIC_EUCLIDEAN, v);
    } else {
        uint64_t n = (uint64_t)((1 + sqrt(1 + 8.0 * count)) / 2);
        in.kind = TOPOML_INPUT_CONDENSED;
        in.n = n;
        in.dtype = TOPOML_F64;
        in.data = v;
    }
    snprintf(what, sizeof what, "%s n=%llu", file, (unsigned long long)in.n);
    topoml_barcode_v1 ours = empty_barcode();
    compare_rips(&in, max_dim, threshold, modulus, what, &ours);
    if (ours.intervals && expected) {
        snprintf(path, sizeof path, "%s/expected/%s", dir, expected);
        compare_with_ripser(&ours, path, max_dim, what);
    }
    t_free(NULL, ours.intervals);
    free(v);
}

static void test_rips(const char *dir)
{
    if (!cuda->rips || !ref->rips) {
        result(!ref->rips, "rips: the reference has it, the cuda plugin does not");
        return;
    }
    char what[256];
    /* Random clouds through the device path (points in), every metric. */
    for (uint32_t dtype = 0; dtype < 2; dtype++)
        for (uint32_t metric = 0; metric < 5; metric++) {
            const uint64_t n = small_mode ? 30 : 70, dim = 3;
            double *p = make_points(n, dim, metric == TOPOML_METRIC_COSINE ? RANDOM : SPHERE);
            void *data = as_dtype(p, n * dim, dtype);
            topoml_input_v1 in = points_input(n, dim, dtype, metric, data);
            snprintf(what, sizeof what, "points %s %s n=%llu dim=%llu", dtype_name[dtype],
                     metric_name[metric], (unsigned long long)n, (unsigned long long)dim);
            compare_rips(&in, 2, INFINITY, 2, what, NULL);
            compare_rips(&in, 2, metric == TOPOML_METRIC_SQEUCLIDEAN ? 0.5 : 0.7, 3, what, NULL);
            free(data);
            free(p);
        }
    {
        const uint64_t n = small_mode ? 20 : 40;
        double *p = make_points(n, 4, GRID);
        topoml_input_v1 in = points_input(n, 4, TOPOML_F64, TOPOML_METRIC_CHEBYSHEV, p);
        compare_rips(&in, 3, INFINITY, 2, "points f64 chebyshev grid n=40 dim=4 (ties)", NULL);
        free(p);
    }
    /* Sparse input under a threshold, as the edge collapse hands it over:
     * geometric graphs (a share of the edges dropped; lengths kept or
     * rounded to a few values: ties) and random graphs, whose columns of
     * dimensions >= 2 the device collects from the condensed matrix of the
     * edges' values (rips.c, tmc_sparse_source). */
    {
        for (int c = 0; c < 6; c++) {
            const uint32_t n = small_mode ? 60 : (c < 2 ? 350 : c < 4 ? 150 : 80), dim = c < 4 ? 3 : 4;
            const double thr = c < 2 ? 0.4 : c < 4 ? 0.45 : 0.6;
            double *p = make_points(n, dim, RANDOM);
            topoml_edge *edges = malloc((size_t)n * n * sizeof *edges);
            uint64_t m = 0;
            for (uint32_t j = 1; j < n; j++)
                for (uint32_t i = 0; i < j; i++) {
                    double d = 0;
                    for (uint32_t x = 0; x < dim; x++)
                        d += (p[j * dim + x] - p[i * dim + x]) * (p[j * dim + x] - p[i * dim + x]);
                    d = sqrt(d);
                    if (c >= 4)
                        d = (double)(int)(uniform() * 8) / 8; /* random graph, ties */
                    if (d <= thr && (c % 2 == 0 || uniform() < 0.6))
                        edges[m++] = (topoml_edge){c % 2 ? (double)(int)(d * 20) / 20 : d, i, j};
                }
            topoml_input_v1 in;
            memset(&in, 0, sizeof in);
            in.struct_size = sizeof in;
            in.kind = TOPOML_INPUT_SPARSE;
            in.n = n;
            in.n_edges = m;
            in.edges = edges;
            snprintf(what, sizeof what, "sparse %s graph n=%u %llu edges%s",
                     c < 4 ? "geometric" : "random", n, (unsigned long long)m,
                     c % 2 ? " (ties)" : "");
            compare_rips(&in, c < 2 ? 2 : 3, thr, 2, what, NULL);
            free(edges);
            free(p);
        }
    }
    test_rips_file(dir, "projective_plane.lower_distance_matrix", 0, 2, INFINITY, 2,
                   "projective_plane.dim2.mod2.txt");
    test_rips_file(dir, "projective_plane.lower_distance_matrix", 0, 2, INFINITY, 3,
                   "projective_plane.dim2.mod3.txt");
    test_rips_file(dir, "random16.lower_distance_matrix", 0, 3, INFINITY, 2, "random16.dim7.txt");
    /* The last dimension's simplices go through the device in chunks of
     * parents, and are never all held (rips_columns.cu, columns_streamed):
     * tiny chunks cut these inputs into hundreds or thousands of them; with
     * 64 bytes no two parents share a chunk. Same barcodes. */
    static const char *chunk_bytes[] = {"4096", "64"};
    for (int b = 0; b < 2; b++) {
        setenv("TOPOML_CUDA_CHUNK_BYTES", chunk_bytes[b], 1);
        const uint64_t n = small_mode ? 24 : (b ? 30 : 60), dim = 3;
        double *p = make_points(n, dim, SPHERE);
        topoml_input_v1 in = points_input(n, dim, TOPOML_F64, TOPOML_METRIC_EUCLIDEAN, p);
        snprintf(what, sizeof what, "points n=%llu, chunks of %s bytes", (unsigned long long)n,
                 chunk_bytes[b]);
        compare_rips(&in, 2, INFINITY, 2, what, NULL);
        compare_rips(&in, 3, 0.9, 3, what, NULL);
        free(p);
        test_rips_file(dir, "random16.lower_distance_matrix", 0, 3, INFINITY, 2,
                       "random16.dim7.txt");
        unsetenv("TOPOML_CUDA_CHUNK_BYTES");
    }
    if (small_mode)
        return;
    test_rips_file(dir, "sphere_3_192.lower_distance_matrix", 0, 2, INFINITY, 2,
                   "sphere_3_192.dim2.txt");
    /* Ripser's published benchmark: --dim 3 --threshold 1.8. */
    test_rips_file(dir, "o3_1024.txt", 1, 3, 1.8, 2, "o3_1024.dim3.t1.8.txt");
}

/* ---- images ---- */

static void test_images(void)
{
    if (!cuda->image || !ref->image) {
        result(!ref->image, "image: the reference has it, the cuda plugin does not");
        return;
    }
    const uint64_t n_diagrams = small_mode ? 3 : 12;
    uint64_t *offsets = malloc((n_diagrams + 1) * sizeof *offsets);
    offsets[0] = 0;
    for (uint64_t k = 0; k < n_diagrams; k++)
        offsets[k + 1] =
            offsets[k] + (k == 1 ? 0 : (uint64_t)(uniform() * (small_mode ? 40 : 400)));
    const uint64_t total = offsets[n_diagrams];
    topoml_pair *pairs = malloc((total ? total : 1) * sizeof *pairs);
    for (uint64_t q = 0; q < total; q++) {
        double b = uniform() * 2, l = uniform() * uniform() * 1.5;
        pairs[q] = (topoml_pair){b, q % 17 == 0 ? INFINITY : b + l};
    }
    for (uint32_t weight = 0; weight < 3; weight++)
        for (uint32_t inf = 0; inf < 2; inf++) {
            topoml_image_params_v1 pr;
            memset(&pr, 0, sizeof pr);
            pr.struct_size = sizeof pr;
            pr.weight = weight;
            pr.weight_max = 1.0;
            pr.weight_power = 1.5;
            pr.sigma = weight == 2 ? 0.02 : 0.1;
            pr.birth_min = -0.2;
            pr.birth_max = 2.2;
            pr.pers_min = 0;
            pr.pers_max = 1.6;
            pr.width = weight == 1 ? 7 : 40;
            pr.height = weight == 1 ? 50 : 30;
            pr.infinite = inf;
            pr.clip_death = 2.5;
            const uint64_t pix = (uint64_t)pr.width * pr.height * n_diagrams;
            double *a = malloc(pix * 8), *a2 = malloc(pix * 8), *b = malloc(pix * 8);
            topoml_call_v1 cc = make_call(err_cuda), cr = make_call(err_ref);
            double t0 = now();
            int rc = cuda->image(cuda_state, &cc, &pr, n_diagrams, offsets, pairs, a);
            double t1 = now();
            int rc2 = cuda->image(cuda_state, &cc, &pr, n_diagrams, offsets, pairs, a2);
            int rr = ref->image(NULL, &cr, &pr, n_diagrams, offsets, pairs, b);
            double t2 = now();
            char why[512] = "";
            int ok = rc == TOPOML_OK && rc2 == TOPOML_OK && rr == TOPOML_OK;
            if (!ok)
                snprintf(why, sizeof why, "status %d/%d (%s) vs reference %d (%s)", rc, rc2,
                         err_cuda, rr, err_ref);
            if (ok && memcmp(a, a2, pix * 8) != 0) {
                ok = 0;
                snprintf(why, sizeof why, "two runs differ");
            }
            double peak = 0, worst = 0;
            for (uint64_t k = 0; k < pix; k++)
                peak = fmax(peak, fabs(b[k]));
            for (uint64_t k = 0; ok && k < pix; k++) {
                double e = fabs(a[k] - b[k]);
                worst = fmax(worst, e);
                if (!(e <= 1e-12 * peak)) {
                    ok = 0;
                    snprintf(why, sizeof why, "pixel %llu: %.17g vs reference %.17g",
                             (unsigned long long)k, a[k], b[k]);
                }
            }
            result(ok,
                   "image weight=%u infinite=%s %ux%u x%llu diagrams, %llu points: max "
                   "error %.3g of peak %.3g, cuda %.3fs, scalar %.3fs %s",
                   weight, inf ? "clip" : "drop", pr.width, pr.height,
                   (unsigned long long)n_diagrams, (unsigned long long)total, worst, peak, t1 - t0,
                   t2 - t1, why);
            free(a);
            free(a2);
            free(b);
        }
    /* A bad parameter is refused like the reference refuses it. */
    topoml_image_params_v1 bad;
    memset(&bad, 0, sizeof bad);
    bad.struct_size = sizeof bad;
    bad.sigma = -1;
    bad.birth_max = bad.pers_max = 1;
    bad.width = bad.height = 4;
    double out[16 * 12];
    topoml_call_v1 cc = make_call(err_cuda);
    int rc = cuda->image(cuda_state, &cc, &bad, 1, offsets, pairs, out);
    result(rc == TOPOML_E_INVALID && err_cuda[0], "image: sigma < 0 is invalid (%d: %s)", rc,
           err_cuda);
    free(offsets);
    free(pairs);
}

/* ---- errors and limits ---- */

static void test_errors(void)
{
    double p[12] = {0, 1, 2, NAN, 4, 5, 6, 7, 8, 9, 10, 11};
    topoml_input_v1 in = points_input(4, 3, TOPOML_F64, TOPOML_METRIC_EUCLIDEAN, p);
    topoml_call_v1 cc = make_call(err_cuda);
    topoml_edge *e = NULL;
    uint64_t m = 0;
    int rc = cuda->edges(cuda_state, &cc, &in, 100, &e, &m);
    result(rc == TOPOML_E_INVALID && e == NULL && strstr(err_cuda, "not a distance"),
           "edges: a NaN coordinate gives a NaN distance, which is invalid (%d: %s)", rc, err_cuda);
    if (cuda->rips) {
        topoml_rips_params_v1 params = {sizeof params, 1, INFINITY, 2, 0, 0, 0};
        topoml_barcode_v1 bc = empty_barcode();
        p[3] = INFINITY;
        cc = make_call(err_cuda);
        rc = cuda->rips(cuda_state, &cc, &in, &params, &bc);
        result(rc == TOPOML_E_INVALID, "rips: an infinite coordinate is invalid (%d: %s)", rc,
               err_cuda);
        t_free(NULL, bc.intervals);
    }

    int count = 0;
    cudaGetDeviceCount(&count);
    double q[6] = {0, 0, 1, 1, 2, 2};
    in = points_input(3, 2, TOPOML_F64, TOPOML_METRIC_EUCLIDEAN, q);
    double out[3];
    cc = make_call(err_cuda);
    cc.device = count;
    rc = cuda->distances(cuda_state, &cc, &in, out);
    result(rc == TOPOML_E_DEVICE && strstr(err_cuda, "does not exist"),
           "distances on device %d of %d: %d (%s)", count, count, rc, err_cuda);

    /* The memory limit: 2000 points have 2 million edges (64 MiB to sort). */
    double *big = make_points(2000, 3, RANDOM);
    in = points_input(2000, 3, TOPOML_F64, TOPOML_METRIC_EUCLIDEAN, big);
    cc = make_call(err_cuda);
    cc.max_memory = 8u << 20;
    e = NULL;
    rc = cuda->edges(cuda_state, &cc, &in, INFINITY, &e, &m);
    result(rc == TOPOML_E_LIMIT && e == NULL, "edges over max_memory: %d (%s)", rc, err_cuda);

    /* Cancellation between bands. */
    cc = make_call(err_cuda);
    cc.max_memory = 4u << 20; /* bands of one tile row, so there are many */
    cancel_after = 2;
    double *dist = malloc(2000 * 1999 / 2 * sizeof *dist);
    rc = cuda->distances(cuda_state, &cc, &in, dist);
    cancel_after = 0;
    result(rc == TOPOML_E_CANCELLED, "distances cancelled by the progress callback: %d (%s)", rc,
           err_cuda);
    free(dist);
    free(big);

    if (small_mode)
        return;
    /* A device that is nearly full: the edges do not fit and say so before
     * allocating; distances still work, in smaller bands. */
    size_t free_b = 0, total_b = 0;
    void *hog = NULL;
    if (cudaMemGetInfo(&free_b, &total_b) == cudaSuccess && free_b > (4ull << 30) &&
        cudaMalloc(&hog, free_b - (4ull << 30)) == cudaSuccess) {
        const uint64_t n = 30000;
        float *f = malloc(n * 3 * sizeof *f);
        for (uint64_t k = 0; k < n * 3; k++)
            f[k] = (float)uniform();
        in = points_input(n, 3, TOPOML_F32, TOPOML_METRIC_EUCLIDEAN, f);
        cc = make_call(err_cuda);
        e = NULL;
        rc = cuda->edges(cuda_state, &cc, &in, INFINITY, &e, &m);
        result(rc == TOPOML_E_LIMIT && strstr(err_cuda, "device memory"),
               "edges on a nearly full device: %d (%s)", rc, err_cuda);
        t_free(NULL, e);
        float *d = malloc(n * (n - 1) / 2 * sizeof *d);
        cc = make_call(err_cuda);
        rc = cuda->distances(cuda_state, &cc, &in, d);
        result(rc == TOPOML_OK &&
                   d[0] == sqrtf((f[3] - f[0]) * (f[3] - f[0]) + (f[4] - f[1]) * (f[4] - f[1]) +
                                 (f[5] - f[2]) * (f[5] - f[2])),
               "distances n=30000 on a nearly full device: %d (%s)", rc, err_cuda);
        free(d);
        free(f);
        cudaFree(hog);
    } else {
        result(0, "could not fill the device to test the memory check");
    }
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr,
                "usage: %s topoml-backend-cuda.so test-data-dir [--small] [--only PART] "
                "[--json FILE]\n",
                argv[0]);
        return 2;
    }
    const char *json_path = NULL, *only = NULL;
    for (int k = 3; k < argc; k++) {
        if (strcmp(argv[k], "--small") == 0)
            small_mode = 1;
        else if (strcmp(argv[k], "--only") == 0 && k + 1 < argc)
            only = argv[++k];
        else if (strcmp(argv[k], "--json") == 0 && k + 1 < argc)
            json_path = argv[++k];
    }
    void *so = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!so) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 1;
    }
    topoml_backend_negotiate_fn negotiate;
    *(void **)&negotiate = dlsym(so, TOPOML_PLUGIN_ENTRY);
    topoml_host_v1 host = {sizeof host, 1, NULL, t_alloc, t_realloc, t_free, NULL, "0.1.0"};
    uint32_t abi = 1;
    if (!negotiate || negotiate(&abi, &host, &cuda) != TOPOML_OK ||
        (cuda->create && cuda->create(&host, &cuda_state) != TOPOML_OK)) {
        fprintf(stderr, "cannot negotiate with or create %s\n", argv[1]);
        return 1;
    }
    ref = topoml_scalar_backend();
    char why[512];
    int probe = cuda->probe(cuda_state, why, sizeof why);
    printf("probe: %d: %s\n", probe, why);
    if (probe != TOPOML_OK) {
        const char *expect = getenv("TOPOML_CUDA_EXPECT_DEVICE");
        if (cuda->destroy)
            cuda->destroy(cuda_state);
        return expect && strcmp(expect, "1") == 0 ? 1 : 77;
    }
    const topoml_capability_v1 *caps;
    uint32_t n_caps;
    cuda->capabilities(cuda_state, &caps, &n_caps);
    for (uint32_t k = 0; k < n_caps; k++)
        printf("capability op=%u device=\"%s\" schedule=\"%s\"\n", caps[k].op, caps[k].device,
               caps[k].schedule);
    if (json_path) {
        json = fopen(json_path, "w");
        if (json)
            fprintf(json, "{\"device\": \"%s\", \"small\": %d, \"cases\": [\n", caps[0].device,
                    small_mode);
    }

    double t0 = now();
#define PART(name) (!only || strcmp(only, name) == 0)
    if (PART("distances"))
        test_distances();
    if (PART("edges"))
        test_edges();
    if (PART("rips"))
        test_rips(argv[2]);
    if (PART("images"))
        test_images();
    if (PART("errors"))
        test_errors();
#undef PART

    if (cuda->destroy)
        cuda->destroy(cuda_state);
    result(live_blocks == 0, "no host memory left allocated (%ld blocks)", live_blocks);
    printf("%d passed, %d failed in %.1f s\n", n_pass, n_fail, now() - t0);
    if (json) {
        fprintf(json, "\n], \"passed\": %d, \"failed\": %d, \"seconds\": %.1f}\n", n_pass, n_fail,
                now() - t0);
        fclose(json);
    }
    dlclose(so);
    return n_fail ? 1 : 0;
}
