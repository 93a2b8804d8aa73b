/*
 * test_cuda_device_input.c — data sets in CUDA device memory through the
 * public C API (topoml_data_from_device) and topoml-backend-cuda, on a
 * machine with a GPU.
 *
 * For seeded random clouds (f32 and f64, with and without a threshold,
 * dimensions 1 to 3, 0 and 1 point too) the barcode from device memory must
 * equal, bit for bit, the scalar reference's from the same values in host
 * memory, with the input never copied to the host: the library's count
 * (topoml_data_host_copies) and the plugin's own (its log line) both 0, and
 * the cuda backend the one that ran. Then the paths that must copy, and say
 * so: a backend named that cannot read device memory (scalar), a condensed
 * matrix; and the refusals: a NaN coordinate on the device, a host pointer
 * passed off as a device pointer.
 *
 * Also through the same API: the edge collapse's output (a sparse graph
 * under a threshold) reduced with the columns of dimensions >= 2 collected
 * on the device (the plugin's log names each such dimension), with the
 * reference's barcode bit for bit.
 *
 * Usage: test_cuda_device_input PLUGIN_DIR [TEST_DATA_DIR]. Exit 0: passed; 1: a failure;
 * 77: no usable device (skipped), unless TOPOML_CUDA_EXPECT_DEVICE=1.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "topoml/topoml.h"

static int n_pass, n_fail;

static void result(int ok, const char *what, const char *detail)
{
    printf("%s %s%s%s\n", ok ? "PASS" : "FAIL", what, detail && detail[0] ? ": " : "",
           detail ? detail : "");
    fflush(stdout);
    ok ? n_pass++ : n_fail++;
}

/* The plugin's line "... N host copies of the input", last seen; and how
 * many dimensions had their columns collected on the device. */
static long plugin_copies = -1;
static int device_dims;
static void on_log(void *user, int level, const char *message)
{
    (void)user;
    (void)level;
    if (strstr(message, "cuda rips: dimension ") && strstr(message, "on the device"))
        device_dims++;
    const char *p = strstr(message, "cuda: rips read its input on CUDA device");
    if (p) {
        const char *c = strstr(p, ": ");
        c = c ? strstr(c + 2, ": ") : NULL;
        plugin_copies = c ? strtol(c + 2, NULL, 10) : -2;
    }
}

static uint64_t rng = 0x2545f4914f6cdd1dull;
static double uniform(void)
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return (double)((rng * 0x2545f4914f6cdd1dull) >> 11) / 9007199254740992.0;
}

static int by_dim_birth_death(const void *x, const void *y)
{
    const topoml_interval *a = x, *b = y;
    if (a->dim != b->dim)
        return a->dim < b->dim ? -1 : 1;
    if (a->birth != b->birth)
        return a->birth < b->birth ? -1 : 1;
    return a->death < b->death ? -1 : a->death > b->death;
}

/* The same bars, bit for bit, as multisets: the order in which a backend
 * emits them follows its reduction, which the collapse changes. */
static int same_barcode(const topoml_barcode *a, const topoml_barcode *b, char *why, size_t size)
{
    uint64_t na, nb;
    const topoml_interval *xa = topoml_barcode_intervals(a, &na);
    const topoml_interval *xb = topoml_barcode_intervals(b, &nb);
    if (na != nb || topoml_barcode_max_dim(a) != topoml_barcode_max_dim(b)) {
        snprintf(why, size, "%llu intervals against %llu", (unsigned long long)na,
                 (unsigned long long)nb);
        return 0;
    }
    topoml_interval *ia = malloc((na ? na : 1) * sizeof *ia), *ib = malloc((na ? na : 1) * sizeof *ib);
    if (!ia || !ib) {
        free(ia);
        free(ib);
        snprintf(why, size, "out of memory comparing barcodes");
        return 0;
    }
    memcpy(ia, xa, na * sizeof *ia);
    memcpy(ib, xb, na * sizeof *ib);
    qsort(ia, na, sizeof *ia, by_dim_birth_death);
    qsort(ib, na, sizeof *ib, by_dim_birth_death);
    int same = 1;
    for (uint64_t k = 0; k < na && same; k++)
        if (ia[k].dim != ib[k].dim || memcmp(&ia[k].birth, &ib[k].birth, sizeof(double)) ||
            memcmp(&ia[k].death, &ib[k].death, sizeof(double))) {
            snprintf(why, size, "interval %llu: dim %u [%.17g, %.17g) against dim %u [%.17g, %.17g)",
                     (unsigned long long)k, ia[k].dim, ia[k].birth, ia[k].death, ib[k].dim,
                     ib[k].birth, ib[k].death);
            same = 0;
        }
    free(ia);
    free(ib);
    return same;
}

/* Points (n x dim, dtype) in device memory, written on `stream`. */
static void *to_device(const void *host, size_t bytes, cudaStream_t stream)
{
    void *d = NULL;
    if (cudaMalloc(&d, bytes ? bytes : 1) != cudaSuccess)
        return NULL;
    if (bytes && cudaMemcpyAsync(d, host, bytes, cudaMemcpyHostToDevice, stream) != cudaSuccess) {
        cudaFree(d);
        return NULL;
    }
    return d;
}

typedef struct cloud_case {
    uint64_t n, dim;
    topoml_dtype dtype;
    uint32_t max_dim;
    double threshold;
} cloud_case;

static void run_cloud(topoml_context *ctx, const cloud_case *c, cudaStream_t stream)
{
    char what[160], why[512] = "";
    snprintf(what, sizeof what, "%llu points in R^%llu, %s, dim %u, threshold %g",
             (unsigned long long)c->n, (unsigned long long)c->dim,
             c->dtype == TOPOML_F32 ? "f32" : "f64", c->max_dim, c->threshold);
    const size_t count = (size_t)(c->n * c->dim), elem = c->dtype == TOPOML_F32 ? 4 : 8;
    void *host = malloc(count ? count * elem : 1);
    for (size_t k = 0; k < count; k++) {
        double v = uniform() * 2 - 1;
        if (c->dtype == TOPOML_F32)
            ((float *)host)[k] = (float)v;
        else
            ((double *)host)[k] = v;
    }
    void *dev = to_device(host, count * elem, stream);
    topoml_data *hd = NULL, *dd = NULL;
    topoml_barcode *want = NULL, *got = NULL;
    topoml_rips_options o;
    topoml_rips_options_init(&o);
    o.max_dim = c->max_dim;
    o.threshold = c->threshold;
    int rc = dev ? TOPOML_OK : TOPOML_E_DEVICE;
    if (rc == TOPOML_OK)
        rc = topoml_data_from_points_strided(ctx, &hd, c->n, c->dim, c->dtype, host,
                                             c->dim * elem, elem);
    if (rc == TOPOML_OK)
        rc = topoml_use_backend(ctx, "scalar");
    if (rc == TOPOML_OK)
        rc = topoml_barcode_compute(ctx, &want, hd, &o);
    if (rc == TOPOML_OK)
        rc = topoml_use_backend(ctx, NULL);
    if (rc == TOPOML_OK)
        rc = topoml_data_from_device(ctx, &dd, TOPOML_MEMORY_CUDA, TOPOML_INPUT_POINTS, c->dtype,
                                     c->n, c->dim, count ? dev : NULL, 0, stream);
    plugin_copies = -1;
    if (rc == TOPOML_OK)
        rc = topoml_barcode_compute(ctx, &got, dd, &o);
    if (rc != TOPOML_OK) {
        snprintf(why, sizeof why, "%s: %s", topoml_strerror(rc), topoml_errmsg(ctx));
        result(0, what, why);
    } else {
        int same = same_barcode(got, want, why, sizeof why);
        result(same, what, why);
        const char *ran = topoml_last_backend(ctx);
        snprintf(why, sizeof why, "backend %s, library copies %llu, plugin copies %ld", ran,
                 (unsigned long long)topoml_data_host_copies(dd), plugin_copies);
        char w2[256];
        snprintf(w2, sizeof w2, "%s: read on the device, no host copy", what);
        result(strcmp(ran, "cuda") == 0 && topoml_data_host_copies(dd) == 0 &&
                   plugin_copies == 0 && topoml_data_memory(dd) == TOPOML_MEMORY_CUDA,
               w2, why);
        /* A backend that cannot read device memory gets a host copy: one. */
        if (c->n >= 2) {
            topoml_barcode *copied = NULL;
            topoml_use_backend(ctx, "scalar");
            rc = topoml_barcode_compute(ctx, &copied, dd, &o);
            topoml_use_backend(ctx, NULL);
            snprintf(w2, sizeof w2, "%s: named scalar backend works on one host copy", what);
            if (rc != TOPOML_OK) {
                snprintf(why, sizeof why, "%s", topoml_errmsg(ctx));
                result(0, w2, why);
            } else {
                int ok = same_barcode(copied, want, why, sizeof why) &&
                         topoml_data_host_copies(dd) == 1;
                if (ok)
                    why[0] = '\0';
                else if (!why[0])
                    snprintf(why, sizeof why, "%llu copies",
                             (unsigned long long)topoml_data_host_copies(dd));
                result(ok, w2, why);
            }
            topoml_barcode_free(copied);
        }
    }
    topoml_barcode_free(want);
    topoml_barcode_free(got);
    topoml_data_free(ctx, hd);
    topoml_data_free(ctx, dd);
    cudaFree(dev);
    free(host);
}

static void run_condensed(topoml_context *ctx, cudaStream_t stream)
{
    const uint64_t n = 80, pairs = n * (n - 1) / 2;
    double *m = malloc(pairs * sizeof *m);
    for (uint64_t k = 0; k < pairs; k++)
        m[k] = 0.1 + uniform();
    void *dev = to_device(m, pairs * sizeof *m, stream);
    topoml_data *hd = NULL, *dd = NULL;
    topoml_barcode *want = NULL, *got = NULL;
    topoml_rips_options o;
    topoml_rips_options_init(&o);
    o.max_dim = 2;
    char why[512] = "";
    int rc = topoml_data_from_condensed(ctx, &hd, n, m);
    if (rc == TOPOML_OK)
        rc = topoml_barcode_compute(ctx, &want, hd, &o);
    if (rc == TOPOML_OK)
        rc = topoml_data_from_device(ctx, &dd, TOPOML_MEMORY_CUDA, TOPOML_INPUT_CONDENSED,
                                     TOPOML_F64, n, 0, dev, 0, stream);
    if (rc == TOPOML_OK)
        rc = topoml_barcode_compute(ctx, &got, dd, &o);
    if (rc != TOPOML_OK)
        snprintf(why, sizeof why, "%s", topoml_errmsg(ctx));
    result(rc == TOPOML_OK && same_barcode(got, want, why, sizeof why) &&
               topoml_data_host_copies(dd) == 1,
           "condensed matrix on the device: one host copy, the same barcode", why);
    topoml_barcode_free(want);
    topoml_barcode_free(got);
    topoml_data_free(ctx, hd);
    topoml_data_free(ctx, dd);
    cudaFree(dev);
    free(m);
}

static void run_refusals(topoml_context *ctx, cudaStream_t stream)
{
    const uint64_t n = 50, dim = 3;
    double pts[150];
    for (int k = 0; k < 150; k++)
        pts[k] = uniform();
    /* Every position of the NaN, over a few draws: the message names it. */
    for (int trial = 0; trial < 3; trial++) {
        uint64_t at = (uint64_t)(uniform() * (double)(n * dim));
        double keep = pts[at];
        pts[at] = trial == 2 ? INFINITY : NAN;
        void *dev = to_device(pts, sizeof pts, stream);
        topoml_data *dd = NULL;
        topoml_barcode *bc = NULL;
        topoml_rips_options o;
        topoml_rips_options_init(&o);
        int rc = topoml_data_from_device(ctx, &dd, TOPOML_MEMORY_CUDA, TOPOML_INPUT_POINTS,
                                         TOPOML_F64, n, dim, dev, 0, stream);
        if (rc == TOPOML_OK)
            rc = topoml_barcode_compute(ctx, &bc, dd, &o);
        char expect[64], what[160];
        snprintf(expect, sizeof expect, "point %llu, coordinate %llu", (unsigned long long)(at / dim),
                 (unsigned long long)(at % dim));
        snprintf(what, sizeof what, "a non-finite coordinate on the device (%s) is refused",
                 expect);
        result(rc == TOPOML_E_INVALID && strstr(topoml_errmsg(ctx), expect) && !bc &&
                   topoml_data_host_copies(dd) == 0,
               what, topoml_errmsg(ctx));
        topoml_barcode_free(bc);
        topoml_data_free(ctx, dd);
        cudaFree(dev);
        pts[at] = keep;
    }
    /* No points: refused as for host memory (topoml.h, "n = 0"). */
    {
        void *dev = to_device(pts, sizeof pts, stream);
        topoml_data *dz = NULL;
        int rz = topoml_data_from_device(ctx, &dz, TOPOML_MEMORY_CUDA, TOPOML_INPUT_POINTS,
                                         TOPOML_F64, 0, dim, dev, 0, stream);
        result(rz == TOPOML_E_INVALID && !dz && strstr(topoml_errmsg(ctx), "n = 0"),
               "no points in device memory are refused", topoml_errmsg(ctx));
        topoml_data_free(ctx, dz);
        cudaFree(dev);
    }
    /* Host memory said to be device memory. */
    topoml_data *dd = NULL;
    topoml_barcode *bc = NULL;
    int rc = topoml_data_from_device(ctx, &dd, TOPOML_MEMORY_CUDA, TOPOML_INPUT_POINTS,
                                     TOPOML_F64, n, dim, pts, 0, stream);
    if (rc == TOPOML_OK)
        rc = topoml_barcode_compute(ctx, &bc, dd, NULL);
    result(rc == TOPOML_E_INVALID && strstr(topoml_errmsg(ctx), "not device memory") && !bc,
           "a host pointer passed as device memory is refused", topoml_errmsg(ctx));
    topoml_barcode_free(bc);
    topoml_data_free(ctx, dd);
}

/* The collapse on (the core hands the cuda backend the collapsed graph,
 * SPARSE, under a finite threshold) against the reference with it off. */
static void run_collapsed(topoml_context *ctx, topoml_data *data, const char *name,
                          uint32_t max_dim, double threshold)
{
    topoml_rips_options o;
    topoml_rips_options_init(&o);
    o.max_dim = max_dim;
    o.threshold = threshold;
    o.collapse = TOPOML_COLLAPSE_OFF;
    topoml_barcode *want = NULL, *got = NULL;
    char what[160], why[512] = "";
    snprintf(what, sizeof what,
             "%s dim %u threshold %g, collapsed: columns on the device, the reference's bars",
             name, max_dim, threshold);
    int rc = topoml_use_backend(ctx, "scalar");
    if (rc == TOPOML_OK)
        rc = topoml_barcode_compute(ctx, &want, data, &o);
    topoml_use_backend(ctx, "cuda");
    o.collapse = TOPOML_COLLAPSE_ON;
    device_dims = 0;
    if (rc == TOPOML_OK)
        rc = topoml_barcode_compute(ctx, &got, data, &o);
    topoml_use_backend(ctx, NULL);
    if (rc != TOPOML_OK) {
        snprintf(why, sizeof why, "%s", topoml_errmsg(ctx));
        result(0, what, why);
    } else {
        int same = same_barcode(got, want, why, sizeof why);
        const int expect = (int)max_dim - 1;
        if (same && device_dims != expect)
            snprintf(why, sizeof why, "%d of %u dimensions >= 2 on the device", device_dims,
                     max_dim - 1);
        result(same && device_dims == expect, what, why);
    }
    topoml_barcode_free(want);
    topoml_barcode_free(got);
}

static void run_collapsed_cases(topoml_context *ctx, const char *test_data)
{
    topoml_data *d = NULL;
    char path[1024];
    snprintf(path, sizeof path, "%s/o3_1024.txt", test_data ? test_data : ".");
    if (test_data && topoml_data_read(ctx, &d, path, TOPOML_FORMAT_POINT_CLOUD) == TOPOML_OK) {
        run_collapsed(ctx, d, "o3_1024", 3, 1.8);
        topoml_data_free(ctx, d);
    } else if (test_data) {
        result(0, "reading o3_1024.txt", topoml_errmsg(ctx));
    }
    for (int k = 0; k < 3; k++) {
        const uint64_t n = 150 + 100 * (uint64_t)k, dim = 3;
        double *p = malloc(n * dim * sizeof *p);
        for (uint64_t i = 0; i < n * dim; i++)
            p[i] = uniform();
        if (topoml_data_from_points(ctx, &d, n, dim, p) == TOPOML_OK) {
            char name[64];
            snprintf(name, sizeof name, "%llu random points in R^3", (unsigned long long)n);
            run_collapsed(ctx, d, name, 2 + (uint32_t)(k % 2), 0.35 + 0.05 * k);
            topoml_data_free(ctx, d);
        }
        free(p);
    }
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_cuda_device_input PLUGIN_DIR\n");
        return 2;
    }
    const char *expect = getenv("TOPOML_CUDA_EXPECT_DEVICE");
    const int must = expect && strcmp(expect, "1") == 0;
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count < 1) {
        printf("SKIP no CUDA device\n");
        return must ? 1 : 77;
    }
    /* The cuda plugin enabled without a certificate and loaded into this
     * process: device pointers do not cross into a helper process. */
    char config[] = "/tmp/topoml-device-input-XXXXXX";
    int fd = mkstemp(config);
    if (fd < 0)
        return 1;
    const char text[] = "enable: [cuda]\nisolation: none\n";
    if (write(fd, text, sizeof text - 1) != (ssize_t)(sizeof text - 1))
        return 1;
    close(fd);
    topoml_context_options co;
    memset(&co, 0, sizeof co);
    co.struct_size = sizeof co;
    co.flags = TOPOML_CTX_NO_ENV;
    co.config_path = config;
    co.plugin_path = argv[1];
    topoml_context *ctx = NULL;
    int rc = topoml_context_new(&ctx, &co);
    unlink(config);
    if (rc != TOPOML_OK) {
        fprintf(stderr, "context: %s\n", ctx ? topoml_errmsg(ctx) : topoml_strerror(rc));
        topoml_context_free(ctx);
        return 1;
    }
    topoml_set_log(ctx, on_log, NULL, TOPOML_LOG_DEBUG);
    int device_input_record = 0, enabled = 0;
    for (uint32_t b = 0; b < topoml_backend_count(ctx); b++) {
        topoml_backend_info bi;
        memset(&bi, 0, sizeof bi);
        bi.struct_size = sizeof bi;
        if (topoml_backend_get(ctx, b, &bi) != TOPOML_OK || !bi.name || strcmp(bi.name, "cuda"))
            continue;
        enabled = bi.gate_state == TOPOML_GATE_ENABLED;
        if (!enabled)
            printf("cuda backend: gate %u (%s), probe %s\n", bi.gate_state, bi.gate_reason,
                   bi.probe_message);
        for (uint32_t k = 0; k < bi.n_caps; k++)
            if (bi.caps[k].op == TOPOML_OP_RIPS &&
                (bi.caps[k].features & TOPOML_CAP_DEVICE_INPUT))
                device_input_record = bi.caps[k].inputs == (1u << TOPOML_INPUT_POINTS);
    }
    if (!enabled) {
        topoml_context_free(ctx);
        printf("SKIP the cuda backend is not enabled here\n");
        return must ? 1 : 77;
    }
    result(device_input_record, "capability records: rips takes points in device memory", "");

    cudaStream_t stream;
    if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess)
        return 1;
    static const cloud_case cases[] = {
        {1, 3, TOPOML_F64, 2, INFINITY},
        {2, 2, TOPOML_F32, 1, INFINITY},   {60, 2, TOPOML_F64, 1, INFINITY},
        {200, 3, TOPOML_F64, 2, INFINITY}, {150, 4, TOPOML_F32, 2, INFINITY},
        {400, 3, TOPOML_F64, 2, 0.5},      {300, 3, TOPOML_F32, 3, 0.45},
        {1000, 8, TOPOML_F64, 1, INFINITY},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        run_cloud(ctx, &cases[k], stream);
    run_condensed(ctx, stream);
    run_refusals(ctx, stream);
    run_collapsed_cases(ctx, argc > 2 ? argv[2] : NULL);
    cudaStreamDestroy(stream);
    topoml_context_free(ctx);
    printf("%d passed, %d failed\n", n_pass, n_fail);
    return n_fail ? 1 : 0;
}
