/*
 * test_device_input.c — data sets in device memory (topoml_data_from_device)
 * on a machine without a GPU: the arguments it refuses; an op with no
 * backend that reads device memory failing clearly, with nothing copied;
 * and, through the fake-device plugin (tests/device_plugin, whose "device
 * memory" is host memory), the choice the core makes: rips read in place by
 * the backend that claims TOPOML_CAP_DEVICE_INPUT (no host copy, the same
 * barcode as the reference on host memory), and exactly one host copy,
 * through that plugin's input_to_host, wherever another backend, a kind it
 * does not claim, generators, the collapse or another op needs the values
 * on the host. A helper process (isolation) never gets a device pointer.
 * plugins/cuda/tests/test_cuda_device_input.c does the same on a real GPU.
 */
#include <check.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "topoml/topoml.h"

#include "check_run.h"

#define FAKE_DIR TOPOML_TEST_BUILD_DIR "/device-plugin"

static uint64_t rng_state;
static double uniform01(void)
{
    rng_state = rng_state * 6364136223846793005u + 1442695040888963407u;
    return (double)(rng_state >> 11) / 9007199254740992.0;
}

/* What the fake plugin said it did, counted. */
static int read_in_place, copied;
static void on_log(void *user, int level, const char *message)
{
    (void)user;
    (void)level;
    read_in_place += strstr(message, "fake-device: rips read its input in place") != NULL;
    copied += strstr(message, "fake-device: input copied to the host") != NULL;
}

static topoml_context *ctx_with(const char *config_text, const char *plugin_path)
{
    char cfg[] = "/tmp/topoml-devin-XXXXXX";
    int fd = mkstemp(cfg);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, config_text, strlen(config_text)), (ssize_t)strlen(config_text));
    close(fd);
    topoml_context_options opts = {0};
    opts.struct_size = sizeof opts;
    opts.flags = TOPOML_CTX_NO_ENV | (plugin_path ? 0 : TOPOML_CTX_NO_PLUGINS);
    opts.config_path = cfg;
    opts.plugin_path = plugin_path;
    topoml_context *ctx = NULL;
    int rc = topoml_context_new(&ctx, &opts);
    unlink(cfg);
    ck_assert_msg(rc == TOPOML_OK, "%s", topoml_errmsg(ctx));
    topoml_set_log(ctx, on_log, NULL, TOPOML_LOG_INFO);
    read_in_place = copied = 0;
    return ctx;
}

static topoml_context *fake_ctx(void)
{
    return ctx_with("enable: [fake-device]\nisolation: none\n", FAKE_DIR);
}

static void assert_same_barcode(const topoml_barcode *a, const topoml_barcode *b)
{
    uint64_t na, nb;
    const topoml_interval *ia = topoml_barcode_intervals(a, &na);
    const topoml_interval *ib = topoml_barcode_intervals(b, &nb);
    ck_assert_uint_eq(na, nb);
    ck_assert_uint_eq(topoml_barcode_max_dim(a), topoml_barcode_max_dim(b));
    for (uint64_t k = 0; k < na; k++) {
        ck_assert_uint_eq(ia[k].dim, ib[k].dim);
        ck_assert_msg(memcmp(&ia[k].birth, &ib[k].birth, sizeof(double)) == 0 &&
                          memcmp(&ia[k].death, &ib[k].death, sizeof(double)) == 0,
                      "interval %llu: [%.17g, %.17g) against [%.17g, %.17g)",
                      (unsigned long long)k, ia[k].birth, ia[k].death, ib[k].birth, ib[k].death);
    }
}

/* n x dim random coordinates of `dtype` (malloc'd). */
static void *random_points(uint64_t n, uint64_t dim, topoml_dtype dtype)
{
    size_t count = (size_t)(n * dim), elem = dtype == TOPOML_F32 ? 4 : 8;
    void *p = malloc(count ? count * elem : 1);
    for (size_t k = 0; k < count; k++) {
        double v = uniform01() * 2 - 1;
        if (dtype == TOPOML_F32)
            ((float *)p)[k] = (float)v;
        else
            ((double *)p)[k] = v;
    }
    return p;
}

START_TEST(arguments_are_checked)
{
    topoml_context *ctx = ctx_with("{}\n", NULL);
    double x[6] = {0};
    topoml_data *d = (topoml_data *)1;
    const struct {
        topoml_memory memory;
        topoml_input_kind kind;
        topoml_dtype dtype;
        uint64_t n, dim;
        const void *ptr;
        int32_t device;
        int status;
        const char *says;
    } bad[] = {
        {TOPOML_MEMORY_HOST, TOPOML_INPUT_POINTS, TOPOML_F64, 2, 3, x, 0, TOPOML_E_INVALID,
         "not a device's"},
        {(topoml_memory)7, TOPOML_INPUT_POINTS, TOPOML_F64, 2, 3, x, 0, TOPOML_E_INVALID,
         "not a device's"},
        {TOPOML_MEMORY_CUDA, TOPOML_INPUT_SPARSE, TOPOML_F64, 2, 3, x, 0, TOPOML_E_INVALID,
         "points or a condensed matrix"},
        {TOPOML_MEMORY_CUDA, TOPOML_INPUT_POINTS, (topoml_dtype)5, 2, 3, x, 0, TOPOML_E_INVALID,
         "dtype"},
        {TOPOML_MEMORY_CUDA, TOPOML_INPUT_POINTS, TOPOML_F64, 2, 3, x, -1, TOPOML_E_INVALID,
         "device index"},
        {TOPOML_MEMORY_CUDA, TOPOML_INPUT_POINTS, TOPOML_F64, 2, 0, x, 0, TOPOML_E_INVALID,
         "coordinate"},
        {TOPOML_MEMORY_CUDA, TOPOML_INPUT_POINTS, TOPOML_F64, 2, 3, NULL, 0, TOPOML_E_INVALID,
         "NULL"},
        {TOPOML_MEMORY_CUDA, TOPOML_INPUT_POINTS, TOPOML_F64, UINT64_MAX / 2, 3, x, 0,
         TOPOML_E_OVERFLOW, "overflow"},
        {TOPOML_MEMORY_CUDA, TOPOML_INPUT_CONDENSED, TOPOML_F32, UINT64_MAX / 4, 0, x, 0,
         TOPOML_E_OVERFLOW, "overflow"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        d = (topoml_data *)1;
        int rc = topoml_data_from_device(ctx, &d, bad[k].memory, bad[k].kind, bad[k].dtype,
                                         bad[k].n, bad[k].dim, bad[k].ptr, bad[k].device, NULL);
        ck_assert_msg(rc == bad[k].status, "case %zu: %d (%s)", k, rc, topoml_errmsg(ctx));
        ck_assert_ptr_null(d);
        ck_assert_msg(strstr(topoml_errmsg(ctx), bad[k].says), "case %zu: %s", k,
                      topoml_errmsg(ctx));
    }
    ck_assert_int_eq(topoml_data_from_device(ctx, NULL, TOPOML_MEMORY_CUDA, TOPOML_INPUT_POINTS,
                                             TOPOML_F64, 2, 3, x, 0, NULL),
                     TOPOML_E_INVALID);
    /* Zero points are refused, as by every data constructor. */
    ck_assert_int_eq(topoml_data_from_device(ctx, &d, TOPOML_MEMORY_CUDA, TOPOML_INPUT_POINTS,
                                             TOPOML_F32, 0, 3, NULL, 0, NULL),
                     TOPOML_E_INVALID);
    ck_assert_ptr_null(d);
    ck_assert_ptr_nonnull(strstr(topoml_errmsg(ctx), "no points"));
    ck_assert_int_eq(topoml_data_from_device(ctx, &d, TOPOML_MEMORY_CUDA, TOPOML_INPUT_POINTS,
                                             TOPOML_F64, 2, 3, x, 1, (void *)0x10),
                     TOPOML_OK);
    ck_assert_uint_eq(topoml_data_kind(d), TOPOML_INPUT_POINTS);
    ck_assert_uint_eq(topoml_data_count(d), 2);
    ck_assert_uint_eq(topoml_data_dim(d), 3);
    ck_assert_int_eq(topoml_data_memory(d), TOPOML_MEMORY_CUDA);
    ck_assert_uint_eq(topoml_data_host_copies(d), 0);
    topoml_data_free(ctx, d);
    ck_assert_int_eq(topoml_data_memory(NULL), TOPOML_MEMORY_HOST);
    /* Huge but representable: refused when a host copy of it is needed,
     * before anything is allocated or any backend is asked. */
    ck_assert_int_eq(topoml_data_from_device(ctx, &d, TOPOML_MEMORY_CUDA, TOPOML_INPUT_POINTS,
                                             TOPOML_F32, 1ull << 40, 1u << 20, x, 0, NULL),
                     TOPOML_OK);
    void *dist = NULL;
    uint64_t count = 0;
    int rc = topoml_distances(ctx, d, TOPOML_METRIC_EUCLIDEAN, TOPOML_F64, &dist, &count);
    ck_assert_msg(rc == TOPOML_E_OVERFLOW, "%d: %s", rc, topoml_errmsg(ctx));
    ck_assert_uint_eq(topoml_data_host_copies(d), 0);
    topoml_data_free(ctx, d);
    ck_assert_int_eq(topoml_data_from_device(ctx, &d, TOPOML_MEMORY_CUDA, TOPOML_INPUT_POINTS,
                                             TOPOML_F64, 1ull << 30, 1u << 10, x, 0, NULL),
                     TOPOML_OK);
    topoml_set_max_memory(ctx, 1u << 20);
    rc = topoml_distances(ctx, d, TOPOML_METRIC_EUCLIDEAN, TOPOML_F64, &dist, &count);
    ck_assert_msg(rc == TOPOML_E_LIMIT && strstr(topoml_errmsg(ctx), "host copy"), "%d: %s", rc,
                  topoml_errmsg(ctx));
    topoml_data_free(ctx, d);
    topoml_context_free(ctx);
}
END_TEST

/* No backend reads device memory: every op refuses, clearly, and nothing
 * is read. */
START_TEST(no_backend_reads_device_memory)
{
    topoml_context *ctx = ctx_with("{}\n", NULL);
    double x[12] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
    topoml_data *d = NULL;
    ck_assert_int_eq(topoml_data_from_device(ctx, &d, TOPOML_MEMORY_CUDA, TOPOML_INPUT_POINTS,
                                             TOPOML_F64, 4, 3, x, 0, NULL),
                     TOPOML_OK);
    topoml_barcode *bc = NULL;
    ck_assert_int_eq(topoml_barcode_compute(ctx, &bc, d, NULL), TOPOML_E_UNSUPPORTED);
    ck_assert_ptr_null(bc);
    ck_assert_msg(strstr(topoml_errmsg(ctx), "device memory"), "%s", topoml_errmsg(ctx));
    void *dist = NULL;
    uint64_t count = 0;
    ck_assert_int_eq(topoml_distances(ctx, d, TOPOML_METRIC_EUCLIDEAN, TOPOML_F64, &dist, &count),
                     TOPOML_E_UNSUPPORTED);
    topoml_edge *e = NULL;
    ck_assert_int_eq(topoml_edges(ctx, d, TOPOML_METRIC_EUCLIDEAN, 1.0, &e, &count),
                     TOPOML_E_UNSUPPORTED);
    topoml_stats st;
    ck_assert_int_eq(topoml_data_stats(ctx, d, TOPOML_METRIC_EUCLIDEAN, 1.0, &st),
                     TOPOML_E_UNSUPPORTED);
    ck_assert_uint_eq(topoml_data_host_copies(d), 0);
    topoml_data_free(ctx, d);
    topoml_context_free(ctx);
}
END_TEST

/* The device path: random clouds of both dtypes, with and without a
 * threshold, dimensions 0 to 3, down to 0 and 1 point. */
/* The same points in host memory and in (fake) device memory, the
 * reference's barcode of the host copy in *want and the default choice's
 * of the device copy in *got (the log counters reset just before it). */
static void reference_and_device(topoml_context *ctx, uint64_t n, uint64_t dim,
                                 topoml_dtype dtype, const void *p, void *stream,
                                 const topoml_rips_options *o, topoml_data **host,
                                 topoml_data **dev, topoml_barcode **want, topoml_barcode **got)
{
    const size_t elem = dtype == TOPOML_F32 ? 4 : 8;
    ck_assert_int_eq(topoml_data_from_points_strided(ctx, host, n, dim, dtype, p, dim * elem,
                                                     elem),
                     TOPOML_OK);
    ck_assert_int_eq(topoml_data_from_device(ctx, dev, TOPOML_MEMORY_CUDA, TOPOML_INPUT_POINTS,
                                             dtype, n, dim, p, 0, stream),
                     TOPOML_OK);
    ck_assert_int_eq(topoml_use_backend(ctx, "scalar"), TOPOML_OK);
    ck_assert_int_eq(topoml_barcode_compute(ctx, want, *host, o), TOPOML_OK);
    ck_assert_int_eq(topoml_use_backend(ctx, NULL), TOPOML_OK);
    read_in_place = copied = 0;
    ck_assert_msg(topoml_barcode_compute(ctx, got, *dev, o) == TOPOML_OK, "%s",
                  topoml_errmsg(ctx));
}

START_TEST(rips_reads_device_input_in_place)
{
    topoml_context *ctx = fake_ctx();
    rng_state = 7 + (uint64_t)_i;
    for (int trial = 0; trial < 12; trial++) {
        const uint64_t n = trial < 2 ? (uint64_t)trial : 5 + (uint64_t)(uniform01() * 60);
        const uint64_t dim = 1 + (uint64_t)(uniform01() * 4);
        const topoml_dtype dtype = trial % 2 ? TOPOML_F32 : TOPOML_F64;
        void *p = random_points(n, dim, dtype);
        const size_t elem = dtype == TOPOML_F32 ? 4 : 8;
        topoml_rips_options o;
        topoml_rips_options_init(&o);
        o.max_dim = (uint32_t)trial % 4;
        o.threshold = trial % 3 == 2 ? 0.3 + uniform01() : INFINITY;
        o.modulus = trial % 5 == 4 ? 3 : 2;
        topoml_data *host = NULL, *dev = NULL;
        if (n == 0) { /* no points: refused by both constructors */
            ck_assert_int_eq(topoml_data_from_points_strided(ctx, &host, n, dim, dtype, p,
                                                             dim * elem, elem),
                             TOPOML_E_INVALID);
            ck_assert_int_eq(topoml_data_from_device(ctx, &dev, TOPOML_MEMORY_CUDA,
                                                     TOPOML_INPUT_POINTS, dtype, n, dim, p, 0,
                                                     NULL),
                             TOPOML_E_INVALID);
            ck_assert_ptr_nonnull(strstr(topoml_errmsg(ctx), "no points"));
            free(p);
            continue;
        }
        topoml_barcode *want = NULL, *got = NULL;
        reference_and_device(ctx, n, dim, dtype, p, (void *)0x1234, &o, &host, &dev, &want, &got);
        ck_assert_str_eq(topoml_last_backend(ctx), "fake-device");
        ck_assert_int_eq(read_in_place, 1);
        ck_assert_int_eq(copied, 0);
        ck_assert_uint_eq(topoml_data_host_copies(dev), 0);
        assert_same_barcode(got, want);
        topoml_barcode_free(want);
        topoml_barcode_free(got);
        topoml_data_free(ctx, host);
        topoml_data_free(ctx, dev);
        free(p);
    }
    topoml_context_free(ctx);
}
END_TEST

/* Whatever needs the values on the host gets one copy each, through the
 * plugin that owns the memory, and the same answer as from host memory. */
START_TEST(host_copy_where_the_values_are_needed_on_the_host)
{
    topoml_context *ctx = fake_ctx();
    rng_state = 99;
    const uint64_t n = 40, dim = 3;
    void *p = random_points(n, dim, TOPOML_F32);
    topoml_data *host = NULL, *dev = NULL;
    ck_assert_int_eq(
        topoml_data_from_points_strided(ctx, &host, n, dim, TOPOML_F32, p, dim * 4, 4),
        TOPOML_OK);
    ck_assert_int_eq(topoml_data_from_device(ctx, &dev, TOPOML_MEMORY_CUDA, TOPOML_INPUT_POINTS,
                                             TOPOML_F32, n, dim, p, 0, NULL),
                     TOPOML_OK);
    topoml_rips_options o;
    topoml_rips_options_init(&o);
    o.max_dim = 2;
    topoml_barcode *want = NULL, *got = NULL;
    ck_assert_int_eq(topoml_use_backend(ctx, "scalar"), TOPOML_OK);
    ck_assert_int_eq(topoml_barcode_compute(ctx, &want, host, &o), TOPOML_OK);
    /* A backend named that cannot read device memory. */
    copied = read_in_place = 0;
    ck_assert_int_eq(topoml_barcode_compute(ctx, &got, dev, &o), TOPOML_OK);
    ck_assert_str_eq(topoml_last_backend(ctx), "scalar");
    ck_assert_int_eq(copied, 1);
    ck_assert_int_eq(read_in_place, 0);
    ck_assert_uint_eq(topoml_data_host_copies(dev), 1);
    assert_same_barcode(got, want);
    topoml_barcode_free(got);
    ck_assert_int_eq(topoml_use_backend(ctx, NULL), TOPOML_OK);
    /* Generators: the fake plugin's device-input record claims them, so
     * they are computed there, with no copy (generators_on_device_input
     * has the plugin that does not claim them). */
    o.flags = TOPOML_RIPS_GENERATORS;
    copied = read_in_place = 0;
    ck_assert_int_eq(topoml_barcode_compute(ctx, &got, dev, &o), TOPOML_OK);
    ck_assert_int_eq(read_in_place, 1);
    ck_assert_uint_eq(topoml_data_host_copies(dev), 1);
    uint64_t ng = 0;
    ck_assert_ptr_nonnull(topoml_barcode_generators(got, &ng));
    assert_same_barcode(got, want);
    topoml_barcode_free(got);
    o.flags = 0;
    o.collapse = TOPOML_COLLAPSE_ON;
    copied = read_in_place = 0;
    ck_assert_int_eq(topoml_barcode_compute(ctx, &got, dev, &o), TOPOML_OK);
    ck_assert_uint_eq(topoml_data_host_copies(dev), 2);
    assert_same_barcode(got, want);
    topoml_barcode_free(got);
    ck_assert_int_eq(read_in_place, 0);
    /* The other ops: the values as from host memory (f32 widened). */
    void *dh = NULL, *dd = NULL;
    uint64_t ch = 0, cd = 0;
    ck_assert_int_eq(topoml_distances(ctx, host, TOPOML_METRIC_MANHATTAN, TOPOML_F64, &dh, &ch),
                     TOPOML_OK);
    ck_assert_int_eq(topoml_distances(ctx, dev, TOPOML_METRIC_MANHATTAN, TOPOML_F64, &dd, &cd),
                     TOPOML_OK);
    ck_assert_uint_eq(ch, cd);
    ck_assert_int_eq(memcmp(dh, dd, ch * sizeof(double)), 0);
    topoml_free(ctx, dh);
    topoml_free(ctx, dd);
    topoml_edge *eh = NULL, *ed = NULL;
    ck_assert_int_eq(topoml_edges(ctx, host, TOPOML_METRIC_EUCLIDEAN, 0.7, &eh, &ch), TOPOML_OK);
    ck_assert_int_eq(topoml_edges(ctx, dev, TOPOML_METRIC_EUCLIDEAN, 0.7, &ed, &cd), TOPOML_OK);
    ck_assert_uint_eq(ch, cd);
    ck_assert_int_eq(memcmp(eh, ed, ch * sizeof *eh), 0);
    topoml_free(ctx, eh);
    topoml_free(ctx, ed);
    topoml_stats sh, sd;
    ck_assert_int_eq(topoml_data_stats(ctx, host, TOPOML_METRIC_EUCLIDEAN, 0.5, &sh), TOPOML_OK);
    ck_assert_int_eq(topoml_data_stats(ctx, dev, TOPOML_METRIC_EUCLIDEAN, 0.5, &sd), TOPOML_OK);
    ck_assert_int_eq(memcmp(&sh, &sd, sizeof sh), 0);
    ck_assert_uint_eq(topoml_data_host_copies(dev), 5);
    ck_assert_int_eq(copied, 4); /* collapse, distances, edges, stats: one copy each */
    topoml_barcode_free(want);
    topoml_data_free(ctx, host);
    topoml_data_free(ctx, dev);
    free(p);
    topoml_context_free(ctx);
}
END_TEST

/* A kind the plugin does not claim for device input (a condensed matrix):
 * one copy; a non-finite value in it is refused where it is read. */
START_TEST(condensed_matrix_and_bad_values)
{
    topoml_context *ctx = fake_ctx();
    rng_state = 3;
    const uint64_t n = 30, pairs = n * (n - 1) / 2;
    double *m = malloc(pairs * sizeof *m);
    for (uint64_t k = 0; k < pairs; k++)
        m[k] = 0.1 + uniform01();
    topoml_data *host = NULL, *dev = NULL;
    ck_assert_int_eq(topoml_data_from_condensed(ctx, &host, n, m), TOPOML_OK);
    ck_assert_int_eq(topoml_data_from_device(ctx, &dev, TOPOML_MEMORY_CUDA,
                                             TOPOML_INPUT_CONDENSED, TOPOML_F64, n, 0, m, 0, NULL),
                     TOPOML_OK);
    topoml_rips_options o;
    topoml_rips_options_init(&o);
    o.max_dim = 2;
    topoml_barcode *want = NULL, *got = NULL;
    ck_assert_int_eq(topoml_barcode_compute(ctx, &want, host, &o), TOPOML_OK);
    ck_assert_int_eq(topoml_barcode_compute(ctx, &got, dev, &o), TOPOML_OK);
    ck_assert_uint_eq(topoml_data_host_copies(dev), 1);
    assert_same_barcode(got, want);
    topoml_barcode_free(want);
    topoml_barcode_free(got);
    m[17] = -1;
    got = NULL;
    ck_assert_int_eq(topoml_barcode_compute(ctx, &got, dev, &o), TOPOML_E_INVALID);
    ck_assert_ptr_null(got);
    ck_assert_msg(strstr(topoml_errmsg(ctx), "entry 17"), "%s", topoml_errmsg(ctx));
    topoml_data_free(ctx, host);
    topoml_data_free(ctx, dev);
    /* Points: a NaN named by point and coordinate. */
    double pts[12] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
    pts[7] = NAN;
    ck_assert_int_eq(topoml_data_from_device(ctx, &dev, TOPOML_MEMORY_CUDA, TOPOML_INPUT_POINTS,
                                             TOPOML_F64, 4, 3, pts, 0, NULL),
                     TOPOML_OK);
    ck_assert_int_eq(topoml_use_backend(ctx, "scalar"), TOPOML_OK);
    ck_assert_int_eq(topoml_barcode_compute(ctx, &got, dev, &o), TOPOML_E_INVALID);
    ck_assert_msg(strstr(topoml_errmsg(ctx), "point 2, coordinate 1"), "%s", topoml_errmsg(ctx));
    topoml_data_free(ctx, dev);
    /* Memory on a device the plugin does not have: its error, named. */
    ck_assert_int_eq(topoml_use_backend(ctx, NULL), TOPOML_OK);
    pts[7] = 7;
    ck_assert_int_eq(topoml_data_from_device(ctx, &dev, TOPOML_MEMORY_CUDA, TOPOML_INPUT_POINTS,
                                             TOPOML_F64, 4, 3, pts, 3, NULL),
                     TOPOML_OK);
    ck_assert_int_eq(topoml_barcode_compute(ctx, &got, dev, &o), TOPOML_E_INVALID);
    ck_assert_msg(strstr(topoml_errmsg(ctx), "device 3"), "%s", topoml_errmsg(ctx));
    topoml_data_free(ctx, dev);
    free(m);
    topoml_context_free(ctx);
}
END_TEST

/* Generators asked for on device input: a backend whose device-input
 * record claims them gives them there (no host copy, the reference's
 * generators); one that does not claim them leaves the call to a host copy
 * and the reference. */
START_TEST(generators_on_device_input)
{
    for (int variant = 0; variant < 2; variant++) {
        topoml_context *ctx =
            variant ? ctx_with("enable: [fake-device-nogens]\nisolation: none\n",
                               TOPOML_TEST_BUILD_DIR "/device-plugin-nogens")
                    : fake_ctx();
        rng_state = 99;
        for (int trial = 0; trial < 6; trial++) {
            const uint64_t n = 8 + (uint64_t)(uniform01() * 40), dim = 2 + (uint64_t)trial % 3;
            const topoml_dtype dtype = trial % 2 ? TOPOML_F32 : TOPOML_F64;
            void *p = random_points(n, dim, dtype);
            topoml_rips_options o;
            topoml_rips_options_init(&o);
            o.max_dim = 1 + (uint32_t)trial % 2;
            o.threshold = trial == 5 ? 0.8 : INFINITY;
            o.flags |= TOPOML_RIPS_GENERATORS;
            topoml_data *host = NULL, *dev = NULL;
            topoml_barcode *want = NULL, *got = NULL;
            reference_and_device(ctx, n, dim, dtype, p, NULL, &o, &host, &dev, &want, &got);
            if (variant == 0) {
                ck_assert_str_eq(topoml_last_backend(ctx), "fake-device");
                ck_assert_int_eq(read_in_place, 1);
                ck_assert_uint_eq(topoml_data_host_copies(dev), 0);
            } else {
                ck_assert_int_eq(read_in_place, 0);
                ck_assert_uint_eq(topoml_data_host_copies(dev), 1);
            }
            assert_same_barcode(got, want);
            uint64_t ng, nw;
            const topoml_generator *g = topoml_barcode_generators(got, &ng);
            const topoml_generator *w = topoml_barcode_generators(want, &nw);
            ck_assert_ptr_nonnull(g);
            ck_assert_uint_eq(ng, nw);
            ck_assert_int_eq(memcmp(g, w, ng * sizeof *g), 0);
            topoml_barcode_free(want);
            topoml_barcode_free(got);
            topoml_data_free(ctx, host);
            topoml_data_free(ctx, dev);
            free(p);
        }
        topoml_context_free(ctx);
    }
}
END_TEST

/* A plugin whose ops run in a helper process cannot read this process's
 * device pointers: it is not chosen for them, and not used to copy them. */
START_TEST(isolated_plugin_gets_no_device_pointer)
{
    /* Only the fake plugin: on a machine with a GPU, topoml's own plugin
     * folder has a working cuda plugin, which is not what this is about. */
    topoml_context *ctx = ctx_with("enable: [fake-device]\nisolation: process\n"
                                   "disable: [cuda, triton-bridge]\n",
                                   FAKE_DIR);
    double pts[12] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
    topoml_data *dev = NULL;
    ck_assert_int_eq(topoml_data_from_device(ctx, &dev, TOPOML_MEMORY_CUDA, TOPOML_INPUT_POINTS,
                                             TOPOML_F64, 4, 3, pts, 0, NULL),
                     TOPOML_OK);
    topoml_barcode *bc = NULL;
    ck_assert_int_eq(topoml_barcode_compute(ctx, &bc, dev, NULL), TOPOML_E_UNSUPPORTED);
    ck_assert_ptr_null(bc);
    ck_assert_msg(strstr(topoml_errmsg(ctx), "no enabled backend in this process"), "%s",
                  topoml_errmsg(ctx));
    ck_assert_uint_eq(topoml_data_host_copies(dev), 0);
    ck_assert_int_eq(read_in_place + copied, 0);
    topoml_data_free(ctx, dev);
    topoml_context_free(ctx);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("device_input");
    TCase *tc = tcase_create("device_input");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, arguments_are_checked);
    tcase_add_test(tc, no_backend_reads_device_memory);
    tcase_add_loop_test(tc, rips_reads_device_input_in_place, 0, 3);
    tcase_add_test(tc, host_copy_where_the_values_are_needed_on_the_host);
    tcase_add_test(tc, condensed_matrix_and_bad_values);
    tcase_add_test(tc, isolated_plugin_gets_no_device_pointer);
    tcase_add_test(tc, generators_on_device_input);
    suite_add_tcase(s, tc);
    return topoml_check_run(s);
}
