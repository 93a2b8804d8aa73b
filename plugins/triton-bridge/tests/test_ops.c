/*
 * test_ops.c — every triton-bridge op against a CPU reference, through the
 * plugin file as the core loads it.
 *
 * On a machine with an sm_90 GPU this is the test of the kernels themselves
 * (run-on-gpu.sh runs it with --large). Elsewhere it runs against
 * tests/fake_cuda (a libcuda.so.1 that carries out the kernels' contracts
 * on the CPU), which tests everything the plugin does around the kernels.
 * Where probe says the backend cannot run, it exits 77 (skipped).
 *
 * Bounds, stated once here and printed with every result:
 *  - distances, f32 and f64: at most TB_ULP_BOUND units in the last place
 *    from plugins/scalar/metric.h (built with -ffp-contract=off). The kernels
 *    perform the same IEEE operations in the same order (no contraction,
 *    sqrt rounded to nearest), so 0 is expected and the bound is 1.
 *    Except f32 points of the dimension the distances capability's schedule
 *    gives as `f32.dot.min_dim` or more, which go through the matrix-product
 *    kernel (kernels/distances_dot.py): there the conformance suite's bound,
 *    |d - d_ref| <= 4 (dim + 2) FLT_EPSILON d_ref with d_ref the exact
 *    distance (in double) of the float points, and exact zeros.
 *  - edges: exactly the reference list: the same (d, i, j), bit for bit,
 *    in the same order, where the reference is every pair with
 *    metric.h's distance <= t, sorted by (d, i, j).
 *  - images: |got - ref| <= 64 * DBL_EPSILON * W per pixel, W the sum of the
 *    diagram's weights; ref evaluates the same erf-difference formula with
 *    the C library's erf, which like CUDA's is within 2 ulp.
 */
#include <dlfcn.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "metric.h"
#include "tb_test_host.h"

#define TB_ULP_BOUND 1

static const topoml_backend_v1 *be;
static void *st;
static uint64_t dot_min_dim = UINT64_MAX; /* from the distances schedule */
static int failures, passes;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void verdict(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void verdict(int ok, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s ", ok ? "PASS" : "FAIL");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    if (ok)
        passes++;
    else
        failures++;
}

/* ---- data ---- */

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static double uniform(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

enum pattern { RANDOM, GRID, DUPLICATES, OFFSET, NEAR, TINY, HUGE };
static const char *pattern_name[] = {"random", "grid", "duplicates", "offset", "near", "tiny", "huge"};

static void *make_points(uint64_t n, uint64_t dim, uint32_t dtype, enum pattern pat)
{
    size_t esz = dtype == TOPOML_F32 ? 4 : 8;
    void *data = malloc(n * dim * esz + 1);
    for (uint64_t p = 0; p < n; p++)
        for (uint64_t k = 0; k < dim; k++) {
            double v;
            switch (pat) {
            case GRID: /* integer lattice: many equal distances */
                v = (double)((p / (k + 1)) % 7);
                break;
            case DUPLICATES: { /* every point three times */
                uint64_t z = 0x9e3779b97f4a7c15ull * ((p / 3) * 131 + k + 1);
                z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
                z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
                v = (double)((z ^ (z >> 31)) >> 11) / 4503599627370496.0 - 1.0;
                break;
            }
            case OFFSET: /* far from the origin: differences lose digits */
                v = 1000.0 + uniform();
                break;
            case NEAR: { /* near-duplicates of 4 far centres, 1e-2 .. 1e-6 apart */
                double centre = 1000.0 * ((double)(((p % 4) * 7919 + k * 104729) % 2001) / 1000.0 - 1.0);
                v = centre * (1.0 + pow(10.0, -(double)(2 + p % 5)) * (uniform() * 2 - 1));
                break;
            }
            /* Beyond the kernels' range (squares of differences underflow
             * or overflow there): the host's exact path, still metric.h's
             * values bit for bit. */
            case TINY: v = (uniform() * 2 - 1) * (dtype == TOPOML_F32 ? 1e-20 : 1e-170); break;
            case HUGE: v = (uniform() * 2 - 1) * (dtype == TOPOML_F32 ? 1e15 : 1e150); break;
            default: v = uniform() * 2 - 1;
            }
            if (dtype == TOPOML_F32)
                ((float *)data)[p * dim + k] = (float)v;
            else
                ((double *)data)[p * dim + k] = v;
        }
    return data;
}

static topoml_input_v1 points(uint64_t n, uint64_t dim, uint32_t dtype, uint32_t metric,
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

/* Distance in units in the last place, on the ordered bit patterns. */
static uint64_t ulps_f32(float a, float b)
{
    int32_t x, y;
    memcpy(&x, &a, 4);
    memcpy(&y, &b, 4);
    if (x < 0)
        x = INT32_MIN - x;
    if (y < 0)
        y = INT32_MIN - y;
    return x > y ? (uint64_t)((int64_t)x - y) : (uint64_t)((int64_t)y - x);
}

static uint64_t ulps_f64(double a, double b)
{
    int64_t x, y;
    memcpy(&x, &a, 8);
    memcpy(&y, &b, 8);
    if (x < 0)
        x = INT64_MIN - x;
    if (y < 0)
        y = INT64_MIN - y;
    return x > y ? (uint64_t)x - (uint64_t)y : (uint64_t)y - (uint64_t)x;
}

static const char *metric_name(uint32_t m)
{
    return m == TOPOML_METRIC_EUCLIDEAN ? "euclidean" : "sqeuclidean";
}

/* ---- distances ---- */

/* The exact distance, in double, of two float points (a double's 53 bits
 * hold the square of a float difference exactly; the sum rounds a little). */
static double exact_f32(const float *x, uint64_t dim, uint32_t metric, uint64_t i, uint64_t j)
{
    double s = 0;
    for (uint64_t k = 0; k < dim; k++) {
        double d = (double)x[i * dim + k] - (double)x[j * dim + k];
        s += d * d;
    }
    return metric == TOPOML_METRIC_EUCLIDEAN ? sqrt(s) : s;
}

/* The matrix-product route: the conformance bound, in units of that bound. */
static void test_distances_dot(uint64_t n, uint64_t dim, uint32_t metric, enum pattern pat,
                               const float *data, const float *out, int status, double t)
{
    double bound = 4.0 * (double)(dim + 2) * FLT_EPSILON, worst = 0;
    uint64_t where = 0;
    if (status == TOPOML_OK)
        for (uint64_t i = 1; i < n; i++)
            for (uint64_t j = 0; j < i; j++) {
                uint64_t at = i * (i - 1) / 2 + j;
                double ref = exact_f32(data, dim, metric, i, j);
                double got = out[at];
                double e = ref == 0 ? (got == 0 ? 0 : INFINITY) : fabs(got - ref) / (bound * ref);
                if (!(e <= worst)) { /* NaN too */
                    worst = isnan(e) ? INFINITY : e;
                    where = at;
                }
            }
    verdict(status == TOPOML_OK && worst <= 1,
            "distances n=%llu dim=%llu f32 %s %s (matrix product): status %d, max %.4f of the "
            "bound 4(dim+2)eps%s%s, %.3f s",
            (unsigned long long)n, (unsigned long long)dim, metric_name(metric), pattern_name[pat],
            status, worst, status ? ": " : "", status ? tb_test_error : "", t);
    if (worst > 1)
        fprintf(stderr, "     worst at condensed entry %llu\n", (unsigned long long)where);
}

static void test_distances(uint64_t n, uint64_t dim, uint32_t dtype, uint32_t metric,
                           enum pattern pat)
{
    void *data = make_points(n, dim, dtype, pat);
    uint64_t m = n * (n - 1) / 2;
    size_t esz = dtype == TOPOML_F32 ? 4 : 8;
    void *out = malloc(m * esz + 1);
    memset(out, 0xff, m * esz); /* NaN everywhere: every entry must be written */
    topoml_input_v1 in = points(n, dim, dtype, metric, data);
    topoml_call_v1 call = tb_test_call();
    double t0 = now();
    int status = be->distances(st, &call, &in, out);
    double t = now() - t0;
    if (dtype == TOPOML_F32 && dim >= dot_min_dim) {
        test_distances_dot(n, dim, metric, pat, data, out, status, t);
        free(out);
        free(data);
        return;
    }
    uint64_t worst = 0, where = 0;
    if (status == TOPOML_OK) {
        for (uint64_t i = 1; i < n; i++)
            for (uint64_t j = 0; j < i; j++) {
                uint64_t at = i * (i - 1) / 2 + j, u;
                double ref = scalar_point_dist(dtype, metric, data, dim, i, j);
                if (dtype == TOPOML_F32)
                    u = ulps_f32(((float *)out)[at], (float)ref);
                else
                    u = ulps_f64(((double *)out)[at], ref);
                if (u > worst) {
                    worst = u;
                    where = at;
                }
            }
    }
    verdict(status == TOPOML_OK && worst <= TB_ULP_BOUND,
            "distances n=%llu dim=%llu %s %s %s: status %d, max %llu ulp (bound %d)%s%s, %.3f s",
            (unsigned long long)n, (unsigned long long)dim, dtype == TOPOML_F32 ? "f32" : "f64",
            metric_name(metric), pattern_name[pat], status, (unsigned long long)worst, TB_ULP_BOUND,
            status ? ": " : "", status ? tb_test_error : "", t);
    if (worst > TB_ULP_BOUND)
        fprintf(stderr, "     worst at condensed entry %llu\n", (unsigned long long)where);
    free(out);
    free(data);
}

/* ---- edges ---- */

static int edge_cmp(const void *a, const void *b)
{
    const topoml_edge *x = a, *y = b;
    if (x->d != y->d)
        return x->d < y->d ? -1 : 1;
    if (x->i != y->i)
        return x->i < y->i ? -1 : 1;
    return x->j < y->j ? -1 : x->j > y->j;
}

static int double_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The distance at quantile q of all pairs (so that some pairs tie with it). */
static double quantile(const void *data, uint64_t n, uint64_t dim, uint32_t dtype, uint32_t metric,
                       double q)
{
    enum { SAMPLES = 4096 };
    double s[SAMPLES];
    for (int k = 0; k < SAMPLES; k++) {
        uint64_t i = (uint64_t)(uniform() * (double)n) % n,
                 j = (uint64_t)(uniform() * (double)n) % n;
        if (i == j)
            j = (j + 1) % n;
        s[k] = scalar_point_dist(dtype, metric, data, dim, i, j);
    }
    qsort(s, SAMPLES, sizeof s[0], double_cmp);
    return s[(int)(q * (SAMPLES - 1))];
}

static void test_edges(uint64_t n, uint64_t dim, uint32_t dtype, uint32_t metric, enum pattern pat,
                       double q, double fixed_t)
{
    void *data = make_points(n, dim, dtype, pat);
    double t = isnan(q) ? fixed_t : quantile(data, n, dim, dtype, metric, q);
    uint64_t cap = 1024, m = 0;
    topoml_edge *ref = malloc(cap * sizeof *ref);
    for (uint64_t i = 1; i < n; i++)
        for (uint64_t j = 0; j < i; j++) {
            double d = scalar_point_dist(dtype, metric, data, dim, i, j);
            if (d <= t) {
                if (m == cap)
                    ref = realloc(ref, (cap *= 2) * sizeof *ref);
                ref[m].d = d;
                ref[m].i = (uint32_t)j;
                ref[m].j = (uint32_t)i;
                m++;
            }
        }
    qsort(ref, m, sizeof *ref, edge_cmp);
    topoml_input_v1 in = points(n, dim, dtype, metric, data);
    topoml_call_v1 call = tb_test_call();
    topoml_edge *got = NULL;
    uint64_t n_got = 0;
    double t0 = now();
    int status = be->edges(st, &call, &in, t, &got, &n_got);
    double secs = now() - t0;
    uint64_t bad = UINT64_MAX;
    if (status == TOPOML_OK) {
        for (uint64_t k = 0; k < m && k < n_got && bad == UINT64_MAX; k++)
            if (memcmp(&got[k].d, &ref[k].d, 8) != 0 || got[k].i != ref[k].i ||
                got[k].j != ref[k].j)
                bad = k;
    }
    int ok = status == TOPOML_OK && n_got == m && bad == UINT64_MAX;
    verdict(
        ok,
        "edges n=%llu dim=%llu %s %s %s t=%.9g: status %d, %llu edges (reference %llu)%s%s, %.3f s",
        (unsigned long long)n, (unsigned long long)dim, dtype == TOPOML_F32 ? "f32" : "f64",
        metric_name(metric), pattern_name[pat], t, status, (unsigned long long)n_got,
        (unsigned long long)m, status ? ": " : "", status ? tb_test_error : "", secs);
    if (bad != UINT64_MAX)
        fprintf(stderr,
                "     first difference at %llu: got (%.17g, %u, %u), want (%.17g, %u, %u)\n",
                (unsigned long long)bad, got[bad].d, got[bad].i, got[bad].j, ref[bad].d, ref[bad].i,
                ref[bad].j);
    if (got != NULL)
        call.free(call.host_data, got);
    free(ref);
    free(data);
}

/* ---- images ---- */

static void reference_image(const topoml_image_params_v1 *p, const topoml_pair *pairs,
                            uint64_t start, uint64_t end, double *img, double *sum_w)
{
    double db = (p->birth_max - p->birth_min) / p->width;
    double dp = (p->pers_max - p->pers_min) / p->height;
    double s = 1.0 / (p->sigma * sqrt(2.0));
    *sum_w = 0;
    memset(img, 0, sizeof(double) * p->width * p->height);
    for (uint64_t q = start; q < end; q++) {
        double b = pairs[q].birth, d = pairs[q].death;
        if (d == INFINITY) {
            if (p->infinite == TOPOML_INFINITE_DROP)
                continue;
            d = p->clip_death;
        }
        double pers = d - b, w = 1.0;
        if (p->weight == TOPOML_WEIGHT_LINEAR)
            w = fmin(pers / p->weight_max, 1.0);
        else if (p->weight == TOPOML_WEIGHT_POWER)
            w = pow(pers, p->weight_power);
        *sum_w += fabs(w);
        for (uint32_t r = 0; r < p->height; r++) {
            double y0 = p->pers_min + r * dp, y1 = p->pers_min + (r + 1) * dp;
            double fy = 0.5 * (erf((y1 - pers) * s) - erf((y0 - pers) * s));
            for (uint32_t c = 0; c < p->width; c++) {
                double x0 = p->birth_min + c * db, x1 = p->birth_min + (c + 1) * db;
                double fx = 0.5 * (erf((x1 - b) * s) - erf((x0 - b) * s));
                img[(uint64_t)r * p->width + c] += w * fy * fx;
            }
        }
    }
}

static void test_image(const char *name, topoml_image_params_v1 p, uint64_t n_diagrams,
                       const uint64_t *sizes, uint64_t lead)
{
    uint64_t *offsets = malloc((n_diagrams + 1) * sizeof *offsets);
    offsets[0] = lead;
    for (uint64_t k = 0; k < n_diagrams; k++)
        offsets[k + 1] = offsets[k] + sizes[k % 7];
    uint64_t total = offsets[n_diagrams];
    topoml_pair *pairs = malloc((total + 1) * sizeof *pairs);
    for (uint64_t q = 0; q < total; q++) {
        pairs[q].birth = uniform();
        pairs[q].death = q % 17 == 5 ? INFINITY : pairs[q].birth + uniform() * 0.9;
    }
    uint64_t pixels = (uint64_t)p.width * p.height;
    double *out = malloc(n_diagrams * pixels * sizeof *out);
    double *ref = malloc(pixels * sizeof *ref);
    topoml_call_v1 call = tb_test_call();
    double t0 = now();
    int status = be->image(st, &call, &p, n_diagrams, offsets, pairs, out);
    double secs = now() - t0;
    double worst = 0; /* |got - ref| / (DBL_EPSILON * W) */
    for (uint64_t k = 0; status == TOPOML_OK && k < n_diagrams; k++) {
        double sum_w;
        reference_image(&p, pairs, offsets[k], offsets[k + 1], ref, &sum_w);
        for (uint64_t x = 0; x < pixels; x++) {
            double diff = fabs(out[k * pixels + x] - ref[x]);
            double scale = DBL_EPSILON * (sum_w > 0 ? sum_w : 1.0);
            if (!(diff / scale <= worst))
                worst = isnan(diff) ? INFINITY : diff / scale;
        }
    }
    verdict(status == TOPOML_OK && worst <= 64,
            "image %s: %llu diagrams, %llu pairs, %ux%u: status %d, max |err| %.2f eps*W (bound "
            "64)%s%s, %.3f s",
            name, (unsigned long long)n_diagrams, (unsigned long long)(total - lead), p.width,
            p.height, status, worst, status ? ": " : "", status ? tb_test_error : "", secs);
    free(ref);
    free(out);
    free(pairs);
    free(offsets);
}

static topoml_image_params_v1 params(uint32_t weight, uint32_t infinite, uint32_t w, uint32_t h)
{
    topoml_image_params_v1 p;
    memset(&p, 0, sizeof p);
    p.struct_size = sizeof p;
    p.weight = weight;
    p.weight_max = 0.5;
    p.weight_power = 1.5;
    p.sigma = 0.05;
    p.birth_min = -0.1;
    p.birth_max = 1.1;
    p.pers_min = 0.0;
    p.pers_max = 1.0;
    p.width = w;
    p.height = h;
    p.infinite = infinite;
    p.clip_death = 1.2;
    return p;
}

/* ---- failures the op must report, after which the state still works ---- */

static void test_errors(void)
{
    float xyz[3 * 100];
    for (int k = 0; k < 300; k++)
        xyz[k] = (float)uniform();
    float out[4950];
    topoml_input_v1 in = points(100, 3, TOPOML_F32, TOPOML_METRIC_EUCLIDEAN, xyz);

    topoml_call_v1 call = tb_test_call();
    call.device = 63;
    int status = be->distances(st, &call, &in, out);
    verdict(status == TOPOML_E_DEVICE && strstr(tb_test_error, "device 63") != NULL,
            "an absent device is TOPOML_E_DEVICE: status %d, \"%s\"", status, tb_test_error);

    call = tb_test_call();
    tb_host_data.cancel_after = 0;
    tb_host_data.progress_calls = 0;
    status = be->distances(st, &call, &in, out);
    tb_host_data.cancel_after = -1;
    verdict(status == TOPOML_E_CANCELLED, "cancelling distances: status %d, \"%s\"", status,
            tb_test_error);

    call = tb_test_call();
    call.max_memory = 64;
    status = be->distances(st, &call, &in, out);
    verdict(status == TOPOML_E_LIMIT, "a memory limit below the points: status %d, \"%s\"", status,
            tb_test_error);

    call = tb_test_call();
    topoml_edge *edges = NULL;
    uint64_t n_edges = 0;
    call.max_memory = 4096; /* the points fit, 4950 edges do not */
    status = be->edges(st, &call, &in, INFINITY, &edges, &n_edges);
    verdict(status == TOPOML_E_LIMIT && edges == NULL && n_edges == 0,
            "a memory limit below the edge list: status %d, \"%s\"", status, tb_test_error);

    call = tb_test_call();
    status = be->distances(st, &call, &in, out);
    verdict(status == TOPOML_OK, "distances after the failures: status %d", status);
}

/* For a device of about 1 MB (the fake driver with TB_FAKE_CUDA_MEMORY):
 * outputs of many bands, edge buffers that overflow, images in chunks. */
static void small_device_cases(void)
{
    test_distances(1000, 3, TOPOML_F32, TOPOML_METRIC_EUCLIDEAN, RANDOM);
    test_distances(600, 3, TOPOML_F64, TOPOML_METRIC_SQEUCLIDEAN, GRID);
    test_edges(500, 3, TOPOML_F32, TOPOML_METRIC_EUCLIDEAN, RANDOM, 0.5, 0);
    test_edges(400, 2, TOPOML_F64, TOPOML_METRIC_EUCLIDEAN, DUPLICATES, 0.7, 0);
    const uint64_t sizes[7] = {0, 1, 5, 10, 3, 7, 2};
    test_image("chunks", params(TOPOML_WEIGHT_LINEAR, TOPOML_INFINITE_CLIP, 5, 5), 2000, sizes, 2);
    test_image("wide", params(TOPOML_WEIGHT_CONSTANT, TOPOML_INFINITE_DROP, 200, 3), 31, sizes, 0);
}

int main(int argc, char **argv)
{
    int large = argc > 1 && strcmp(argv[1], "--large") == 0;
    int small = argc > 1 && strcmp(argv[1], "--small") == 0;
    const char *path = getenv("TB_PLUGIN");
    void *lib = dlopen(path ? path : TB_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        fprintf(stderr, "FAIL dlopen: %s\n", dlerror());
        return 1;
    }
    topoml_backend_negotiate_fn negotiate;
    void *sym = dlsym(lib, TOPOML_PLUGIN_ENTRY);
    memcpy(&negotiate, &sym, sizeof sym);
    uint32_t abi = TOPOML_ABI_VERSION;
    if (sym == NULL || negotiate(&abi, &tb_test_host_table, &be) != TOPOML_OK ||
        be->create(&tb_test_host_table, &st) != TOPOML_OK) {
        fprintf(stderr, "FAIL negotiate/create\n");
        return 1;
    }
    char why[512];
    int status = be->probe(st, why, sizeof why);
    fprintf(stderr, "probe: %d: %s\n", status, why);
    if (status != TOPOML_OK) {
        be->destroy(st);
        dlclose(lib);
        return 77;
    }
    /* Hold the driver library, so that after destroy the fake driver (if
     * that is what was loaded) can still be asked what was left behind. */
    void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    const topoml_capability_v1 *caps;
    uint32_t n_caps;
    be->capabilities(st, &caps, &n_caps);
    for (uint32_t k = 0; k < n_caps; k++) {
        fprintf(stderr, "capability op %u on %s: %s\n", caps[k].op, caps[k].device,
                caps[k].schedule);
        const char *w = caps[k].schedule ? strstr(caps[k].schedule, "f32.dot.min_dim=") : NULL;
        if (caps[k].op == TOPOML_OP_DISTANCES && w != NULL)
            dot_min_dim = strtoull(w + strlen("f32.dot.min_dim="), NULL, 10);
    }

    if (small) {
        small_device_cases();
        goto done;
    }

    const uint32_t dtypes[] = {TOPOML_F32, TOPOML_F64};
    const uint32_t metrics[] = {TOPOML_METRIC_EUCLIDEAN, TOPOML_METRIC_SQEUCLIDEAN};
    const struct {
        uint64_t n, dim;
        enum pattern pat;
    } shapes[] = {
        {2, 1, RANDOM},     {3, 2, RANDOM},       {64, 3, RANDOM},  {65, 3, RANDOM},
        {130, 7, GRID},     {200, 2, DUPLICATES}, {300, 5, OFFSET}, {1000, 16, RANDOM},
        {777, 128, RANDOM}, {5, 0, RANDOM},
        /* For the matrix-product kernel: near-duplicates with large norms
         * (cancellation), far from the origin, exact duplicates, a dimension
         * that is not a multiple of its 32-coordinate steps. */
        {400, 64, NEAR},    {300, 96, OFFSET},    {200, 80, DUPLICATES}, {129, 200, RANDOM},
        {100, 3, TINY},     {100, 3, HUGE},
    };
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int d = 0; d < 2; d++)
            for (int m = 0; m < 2; m++)
                test_distances(shapes[s].n, shapes[s].dim, dtypes[d], metrics[m], shapes[s].pat);

    for (int d = 0; d < 2; d++)
        for (int m = 0; m < 2; m++) {
            test_edges(500, 3, dtypes[d], metrics[m], RANDOM, 0.01, 0);
            test_edges(500, 3, dtypes[d], metrics[m], RANDOM, 0.5, 0);
            test_edges(130, 7, dtypes[d], metrics[m], GRID, 0.3, 0);
            test_edges(100, 3, dtypes[d], metrics[m], TINY, 0.3, 0);
            test_edges(100, 3, dtypes[d], metrics[m], HUGE, 0.3, 0);
            test_edges(200, 2, dtypes[d], metrics[m], DUPLICATES, NAN, 0.0);
            test_edges(100, 4, dtypes[d], metrics[m], RANDOM, NAN, INFINITY);
        }
    /* 4.5 million pairs, all within t: more than the first buffer holds. */
    test_edges(3000, 3, TOPOML_F32, TOPOML_METRIC_EUCLIDEAN, RANDOM, NAN, 1e30);

    const uint64_t sizes[7] = {0, 1, 5, 100, 37, 1000, 3};
    test_image("constant/drop", params(TOPOML_WEIGHT_CONSTANT, TOPOML_INFINITE_DROP, 20, 20), 9,
               sizes, 0);
    test_image("linear/clip", params(TOPOML_WEIGHT_LINEAR, TOPOML_INFINITE_CLIP, 33, 7), 7, sizes,
               3);
    test_image("power/drop", params(TOPOML_WEIGHT_POWER, TOPOML_INFINITE_DROP, 16, 16), 14, sizes,
               1);
    test_image("power/clip", params(TOPOML_WEIGHT_POWER, TOPOML_INFINITE_CLIP, 1, 50), 5, sizes, 0);
    test_image("many small", params(TOPOML_WEIGHT_CONSTANT, TOPOML_INFINITE_CLIP, 5, 5), 2000,
               sizes, 0);

    test_errors();

    if (large) {
        /* Past one 1 GiB band: two bands on the device. */
        test_distances(24000, 4, TOPOML_F32, TOPOML_METRIC_EUCLIDEAN, RANDOM);
        test_distances(12000, 32, TOPOML_F64, TOPOML_METRIC_SQEUCLIDEAN, RANDOM);
        /* About 20 million edges: the first buffer overflows, one retry. */
        test_edges(20000, 3, TOPOML_F32, TOPOML_METRIC_EUCLIDEAN, RANDOM, 0.1, 0);
        test_edges(6000, 8, TOPOML_F64, TOPOML_METRIC_EUCLIDEAN, RANDOM, 0.25, 0);
        test_image("large", params(TOPOML_WEIGHT_LINEAR, TOPOML_INFINITE_DROP, 64, 64), 3000, sizes,
                   0);
    }

done:
    be->destroy(st);
    verdict(tb_host_data.live == 0, "no host memory left allocated (%ld blocks)",
            tb_host_data.live);
    /* With the fake driver: nothing left on the "device" either. */
    if (cuda != NULL) {
        void *leaks_sym = dlsym(cuda, "tb_fake_cuda_leaks");
        if (leaks_sym != NULL) {
            int (*leaks)(char *, size_t);
            memcpy(&leaks, &leaks_sym, sizeof leaks_sym);
            char text[256];
            int left = leaks(text, sizeof text);
            verdict(left == 0, "nothing left on the fake device: %s", text);
        }
        dlclose(cuda);
    }
    dlclose(lib);
    fprintf(stderr, "%d passed, %d failed\n", passes, failures);
    return failures == 0 ? 0 : 1;
}
