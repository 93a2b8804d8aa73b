/*
 * bench_cuda.c — how fast topoml-backend-cuda is, and how far from what the
 * GPU can do: the measured ceilings (ceilings.cu), the distance kernel from
 * device memory to device memory (what torch.cdist is compared with, in
 * bench_cuda.py), and through the plugin ABI against the scalar reference:
 * distances to host memory, threshold edges, Rips barcodes.
 *
 * Usage: bench_cuda CUDA_PLUGIN.so SCALAR_PLUGIN.so OUT.json [--quick]
 * (The scalar reference is loaded as a plugin too: this program links the
 * CUDA backend's objects, which contain the scalar Rips engine already.)
 * Writes one JSON object to OUT.json and a readable summary to stdout.
 */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend.h"
#include "ceilings.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void *h_alloc(void *hd, size_t n)
{
    (void)hd;
    return malloc(n);
}
static void *h_realloc(void *hd, void *p, size_t n)
{
    (void)hd;
    return realloc(p, n);
}
static void h_free(void *hd, void *p)
{
    (void)hd;
    free(p);
}

static char err[512];
static topoml_call_v1 make_call(void)
{
    topoml_call_v1 c;
    memset(&c, 0, sizeof c);
    c.struct_size = sizeof c;
    c.alloc = h_alloc;
    c.realloc = h_realloc;
    c.free = h_free;
    c.error = err;
    c.error_size = sizeof err;
    c.device = -1;
    err[0] = '\0';
    return c;
}

static uint64_t rng = 12345;
static double uniform(void)
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return (double)((rng * 0x2545f4914f6cdd1dull) >> 11) / 9007199254740992.0;
}
static double gaussian(void)
{
    double u = uniform() + 1e-300, v = uniform();
    return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

static topoml_input_v1 points(uint64_t n, uint64_t dim, uint32_t dtype, const void *data)
{
    topoml_input_v1 in;
    memset(&in, 0, sizeof in);
    in.struct_size = sizeof in;
    in.kind = TOPOML_INPUT_POINTS;
    in.n = n;
    in.dim = dim;
    in.dtype = dtype;
    in.metric = TOPOML_METRIC_EUCLIDEAN;
    in.data = data;
    return in;
}

/* n points near the unit sphere S^2 in R^3. */
static double *sphere_cloud(uint64_t n)
{
    double *p = malloc(n * 3 * sizeof *p);
    for (uint64_t i = 0; i < n; i++) {
        double x = gaussian(), y = gaussian(), z = gaussian(), r = sqrt(x * x + y * y + z * z);
        double s = (1 + 0.02 * gaussian()) / r;
        p[3 * i] = x * s;
        p[3 * i + 1] = y * s;
        p[3 * i + 2] = z * s;
    }
    return p;
}

/* n random orthogonal 3x3 matrices as points of R^9 (Gram-Schmidt of
 * Gaussian matrices), like Ripser's o3 examples. */
static double *o3_cloud(uint64_t n)
{
    double *p = malloc(n * 9 * sizeof *p);
    for (uint64_t i = 0; i < n; i++) {
        double *m = p + 9 * i;
        for (int k = 0; k < 9; k++)
            m[k] = gaussian();
        for (int r = 0; r < 3; r++) {
            for (int q = 0; q < r; q++) {
                double dot = 0;
                for (int k = 0; k < 3; k++)
                    dot += m[3 * r + k] * m[3 * q + k];
                for (int k = 0; k < 3; k++)
                    m[3 * r + k] -= dot * m[3 * q + k];
            }
            double norm = 0;
            for (int k = 0; k < 3; k++)
                norm += m[3 * r + k] * m[3 * r + k];
            for (int k = 0; k < 3; k++)
                m[3 * r + k] /= sqrt(norm);
        }
    }
    return p;
}

static const topoml_backend_v1 *cuda, *ref;

static const topoml_backend_v1 *load(const char *path, const topoml_host_v1 *host)
{
    void *so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    topoml_backend_negotiate_fn negotiate = NULL;
    if (so)
        *(void **)&negotiate = dlsym(so, TOPOML_PLUGIN_ENTRY);
    const topoml_backend_v1 *be = NULL;
    uint32_t abi = 1;
    if (!negotiate || negotiate(&abi, host, &be) != TOPOML_OK) {
        fprintf(stderr, "cannot load %s: %s\n", path, so ? "no entry" : dlerror());
        return NULL;
    }
    return be;
}
static void *cuda_state;
static FILE *out;
static int first_row;

static void row_begin(const char *section)
{
    fprintf(out, "%s\n    ", first_row ? "" : ",");
    first_row = 0;
    (void)section;
}

/* The device-to-device distance kernel: best of `reps` after a warm-up. */
static void bench_device_distances(tmc_ctx *ctx, const bench_ceiling *c, uint32_t dtype,
                                   uint32_t metric, uint64_t n, uint64_t dim, int reps)
{
    const size_t elem = dtype == TOPOML_F32 ? 4 : 8;
    const uint64_t pairs = n * (n - 1) / 2;
    const uint64_t bytes = pairs * elem + n * dim * elem;
    if (bytes + (1ull << 30) > tmc_usable_device_memory(ctx)) {
        printf("distances %s n=%llu dim=%llu: does not fit, skipped\n", dtype ? "f64" : "f32",
               (unsigned long long)n, (unsigned long long)dim);
        return;
    }
    void *h = malloc(n * dim * elem), *d_pts = NULL, *d_out = NULL;
    for (uint64_t k = 0; k < n * dim; k++) {
        if (dtype == TOPOML_F32)
            ((float *)h)[k] = (float)uniform();
        else
            ((double *)h)[k] = uniform();
    }
    if (cudaMalloc(&d_pts, n * dim * elem) != cudaSuccess ||
        cudaMalloc(&d_out, pairs * elem) != cudaSuccess ||
        cudaMemcpy(d_pts, h, n * dim * elem, cudaMemcpyHostToDevice) != cudaSuccess) {
        printf("distances n=%llu: allocation failed\n", (unsigned long long)n);
        cudaFree(d_pts);
        cudaFree(d_out);
        free(h);
        return;
    }
    double best = 1e30;
    int status = TOPOML_OK;
    for (int r = 0; r <= reps && status == TOPOML_OK; r++) {
        double t0 = now();
        status = tmc_distances_device(ctx, dtype, metric, n, dim, d_pts, d_out);
        double t = now() - t0;
        if (r > 0 && t < best)
            best = t;
    }
    cudaFree(d_pts);
    cudaFree(d_out);
    free(h);
    if (status != TOPOML_OK) {
        printf("distances n=%llu: %d %s\n", (unsigned long long)n, status, err);
        return;
    }
    /* Euclidean: a subtraction, a multiplication and an addition per
     * coordinate of each pair. */
    const double flops = 3.0 * pairs * dim, gbs = pairs * elem / best / 1e9;
    const double tflops = flops / best / 1e12;
    const double ceil_flops = dtype == TOPOML_F32 ? c->fp32_tflops : c->fp64_tflops;
    printf("distances %s %-11s n=%6llu dim=%3llu: %9.3f ms  %7.1f GB/s (%4.1f%% of write)  "
           "%6.2f TFLOP/s (%4.1f%% of add/mul)\n",
           dtype ? "f64" : "f32", metric == TOPOML_METRIC_EUCLIDEAN ? "euclidean" : "other",
           (unsigned long long)n, (unsigned long long)dim, best * 1e3, gbs,
           100 * gbs / c->write_gbs, tflops, 100 * tflops / ceil_flops);
    row_begin("distances_device");
    fprintf(out,
            "{\"op\": \"distances_device\", \"dtype\": \"%s\", \"metric\": %u, \"n\": %llu, "
            "\"dim\": %llu, \"seconds\": %.6f, \"gb_per_s\": %.2f, \"tflop_per_s\": %.3f, "
            "\"pct_write_ceiling\": %.1f, \"pct_flop_ceiling\": %.1f}",
            dtype ? "f64" : "f32", metric, (unsigned long long)n, (unsigned long long)dim, best,
            gbs, tflops, 100 * gbs / c->write_gbs, 100 * tflops / ceil_flops);
}

/* An op through the ABI on both backends; times in seconds (scalar < 0:
 * not run). */
static void report(const char *op, const char *data, uint64_t n, uint64_t dim, const char *extra,
                   double t_cuda, double t_scalar, const char *status)
{
    printf("%-10s %-8s n=%6llu dim=%3llu %-24s cuda %8.3f s  scalar %8.3f s  x%.1f %s\n", op, data,
           (unsigned long long)n, (unsigned long long)dim, extra, t_cuda, t_scalar,
           t_scalar > 0 ? t_scalar / t_cuda : 0.0, status);
    row_begin(op);
    fprintf(out,
            "{\"op\": \"%s\", \"data\": \"%s\", \"n\": %llu, \"dim\": %llu, \"params\": \"%s\", "
            "\"cuda_seconds\": %.6f, \"scalar_seconds\": %.6f, \"status\": \"%s\"}",
            op, data, (unsigned long long)n, (unsigned long long)dim, extra, t_cuda, t_scalar,
            status);
}

static void bench_host_distances(uint64_t n, uint64_t dim)
{
    float *p = malloc(n * dim * sizeof *p);
    for (uint64_t k = 0; k < n * dim; k++)
        p[k] = (float)uniform();
    topoml_input_v1 in = points(n, dim, TOPOML_F32, p);
    float *d = malloc(n * (n - 1) / 2 * sizeof *d);
    topoml_call_v1 call = make_call();
    double t0 = now();
    int rc = cuda->distances(cuda_state, &call, &in, d);
    double t1 = now();
    rc = rc ? rc : cuda->distances(cuda_state, &call, &in, d);
    double t2 = now();
    ref->distances(NULL, &call, &in, d);
    double t3 = now();
    char what[64];
    snprintf(what, sizeof what, "f32 to host (2nd run)");
    (void)t0;
    report("distances", "uniform", n, dim, what, t2 - t1, t3 - t2, rc ? err : "ok");
    free(d);
    free(p);
}

static void bench_edges(uint64_t n, double t, int with_scalar)
{
    float *p = malloc(n * 3 * sizeof *p);
    for (uint64_t k = 0; k < n * 3; k++)
        p[k] = (float)uniform();
    topoml_input_v1 in = points(n, 3, TOPOML_F32, p);
    topoml_call_v1 call = make_call();
    topoml_edge *e = NULL;
    uint64_t m = 0;
    cuda->edges(cuda_state, &call, &in, t, &e, &m); /* warm-up */
    free(e);
    e = NULL;
    double t0 = now();
    int rc = cuda->edges(cuda_state, &call, &in, t, &e, &m);
    double t1 = now();
    free(e);
    double ts = -1;
    if (with_scalar) {
        e = NULL;
        ref->edges(NULL, &call, &in, t, &e, &m);
        ts = now() - t1;
        free(e);
    }
    char what[64];
    snprintf(what, sizeof what, "t=%g: %llu edges", t, (unsigned long long)m);
    report("edges", "uniform", n, 3, what, t1 - t0, ts, rc ? err : "ok");
    free(p);
}

static void bench_rips(const char *name, const double *p, uint64_t n, uint64_t dim,
                       uint32_t max_dim, double threshold)
{
    topoml_input_v1 in = points(n, dim, TOPOML_F64, p);
    topoml_rips_params_v1 params = {sizeof params, max_dim, threshold, 2, 0, 0, 0};
    topoml_barcode_v1 a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    a.struct_size = b.struct_size = sizeof a;
    topoml_call_v1 call = make_call();
    double t0 = now();
    int rc = cuda->rips(cuda_state, &call, &in, &params, &a);
    double t1 = now();
    int rr = ref->rips(NULL, &call, &in, &params, &b);
    double t2 = now();
    char what[96];
    snprintf(what, sizeof what, "dim<=%u t=%g: %llu bars", max_dim, threshold,
             (unsigned long long)b.n_intervals);
    report("rips", name, n, dim, what, t1 - t0, t2 - t1,
           rc || rr                         ? err
           : a.n_intervals == b.n_intervals ? "ok"
                                            : "bar counts differ");
    free(a.intervals);
    free(b.intervals);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr,
                "usage: %s topoml-backend-cuda.so topoml-backend-scalar.so OUT.json "
                "[--quick]\n",
                argv[0]);
        return 2;
    }
    const int quick = argc > 4 && strcmp(argv[4], "--quick") == 0;
    topoml_host_v1 host = {sizeof host, 1, NULL, h_alloc, h_realloc, h_free, NULL, "0.1.0"};
    cuda = load(argv[1], &host);
    ref = load(argv[2], &host);
    if (!cuda || !ref || cuda->create(&host, &cuda_state) != TOPOML_OK)
        return 1;
    char why[256];
    if (cuda->probe(cuda_state, why, sizeof why) != TOPOML_OK) {
        fprintf(stderr, "no device: %s\n", why);
        return 77;
    }
    const topoml_capability_v1 *caps;
    uint32_t n_caps;
    cuda->capabilities(cuda_state, &caps, &n_caps);
    out = fopen(argv[3], "w");
    if (!out)
        return 1;

    /* The device kernel, through the plugin's own functions (the same
     * objects as in the .so). */
    tmc_state st;
    memset(&st, 0, sizeof st);
    tmc_ctx ctx;
    topoml_call_v1 call = make_call();
    if (tmc_begin(&ctx, &st, &call, NULL, 0) != TOPOML_OK) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    bench_ceiling c;
    if (bench_ceilings(&c) != 0) {
        fprintf(stderr, "measuring the ceilings failed\n");
        return 1;
    }
    printf("device: %s\nceilings: write %.0f GB/s, f32 add/mul %.1f TFLOP/s, f64 add/mul %.1f "
           "TFLOP/s\n",
           caps[0].device, c.write_gbs, c.fp32_tflops, c.fp64_tflops);
    fprintf(out,
            "{\"device\": \"%s\", \"schedule\": \"%s\",\n \"ceilings\": {\"write_gb_per_s\": %.1f, "
            "\"fp32_addmul_tflop_per_s\": %.2f, \"fp64_addmul_tflop_per_s\": %.2f},\n "
            "\"rows\": [",
            caps[0].device, caps[0].schedule, c.write_gbs, c.fp32_tflops, c.fp64_tflops);
    first_row = 1;
    const uint64_t ns[] = {4096, 16384, 65536}, dims[] = {3, 16, 64, 256};
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 4; b++)
            bench_device_distances(&ctx, &c, TOPOML_F32, TOPOML_METRIC_EUCLIDEAN, ns[a], dims[b],
                                   3);
    bench_device_distances(&ctx, &c, TOPOML_F64, TOPOML_METRIC_EUCLIDEAN, 65536, 3, 2);
    bench_device_distances(&ctx, &c, TOPOML_F64, TOPOML_METRIC_EUCLIDEAN, 65536, 64, 2);
    bench_device_distances(&ctx, &c, TOPOML_F32, TOPOML_METRIC_MANHATTAN, 65536, 64, 2);
    bench_device_distances(&ctx, &c, TOPOML_F32, TOPOML_METRIC_COSINE, 65536, 64, 2);
    tmc_end(&ctx, TOPOML_OK);
    tmc_state_release(&st);

    bench_host_distances(quick ? 4096 : 12000, 16);
    bench_edges(16384, 0.1, 1);
    bench_edges(65536, 0.05, 0);
    if (cuda->rips && ref->rips) {
        double *s = sphere_cloud(quick ? 150 : 250);
        bench_rips("sphere", s, quick ? 150 : 250, 3, 2, INFINITY);
        free(s);
        double *o = o3_cloud(1024);
        bench_rips("o3", o, quick ? 512 : 1024, 9, 3, 1.8);
        free(o);
    }
    fprintf(out, "\n]}\n");
    fclose(out);
    cuda->destroy(cuda_state);
    return 0;
}
