/*
 * test_fake_driver.c — the triton-bridge probe and device checks against
 * tests/fake_cuda, a libcuda.so.1 whose answers the test chooses: a device
 * of another compute capability, no device, a failing cuInit, cubins the
 * driver will not load, a device index that does not exist. Each answer
 * must come back as the right status with a reason that names it, and
 * leave nothing retained, pushed or allocated.
 */
#include <check.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "tb_kernels.h"
#include "tb_test_host.h"

static void *lib;
static const topoml_backend_v1 *be;

static void load(void)
{
    lib = dlopen(TB_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
    ck_assert_msg(lib != NULL, "dlopen: %s", dlerror());
    topoml_backend_negotiate_fn negotiate;
    void *sym = dlsym(lib, TOPOML_PLUGIN_ENTRY);
    memcpy(&negotiate, &sym, sizeof sym);
    uint32_t abi = 1;
    ck_assert_int_eq(negotiate(&abi, &tb_test_host_table, &be), TOPOML_OK);
}

static void unload(void)
{
    dlclose(lib);
}

/* Probe a fresh state; returns the status, the reason in why. Checks that
 * destroy leaves the fake device clean. */
static int probe(char *why, size_t why_size)
{
    void *st;
    ck_assert_int_eq(be->create(&tb_test_host_table, &st), TOPOML_OK);
    int status = be->probe(st, why, why_size);
    void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    ck_assert_msg(cuda != NULL, "the fake driver is not the one loaded");
    be->destroy(st);
    int (*leaks)(char *, size_t);
    void *sym = dlsym(cuda, "tb_fake_cuda_leaks");
    ck_assert_ptr_nonnull(sym);
    memcpy(&leaks, &sym, sizeof sym);
    char text[256];
    ck_assert_msg(leaks(text, sizeof text) == 0, "left behind: %s", text);
    dlclose(cuda);
    ck_assert_int_eq(tb_host_data.live, 0);
    return status;
}

START_TEST(test_probe_accepts_sm90_device)
{
    char why[512];
    ck_assert_int_eq(probe(why, sizeof why), TOPOML_OK);
    ck_assert_msg(strstr(why, "topoml fake device 0 (sm_90") != NULL, "why: %s", why);
}
END_TEST

START_TEST(test_probe_refuses_other_compute_capability)
{
    setenv("TB_FAKE_CUDA_CC", "80", 1);
    char why[512];
    ck_assert_int_eq(probe(why, sizeof why), TOPOML_E_UNSUPPORTED);
    ck_assert_msg(strstr(why, "compute capability 8.0") != NULL, "why: %s", why);
    ck_assert_msg(strstr(why, "sm_90") != NULL, "why: %s", why);
    setenv("TB_FAKE_CUDA_CC", "100", 1);
    ck_assert_int_eq(probe(why, sizeof why), TOPOML_E_UNSUPPORTED);
    ck_assert_msg(strstr(why, "compute capability 10.0") != NULL, "why: %s", why);
    unsetenv("TB_FAKE_CUDA_CC");
}
END_TEST

START_TEST(test_probe_refuses_without_devices)
{
    setenv("TB_FAKE_CUDA_DEVICES", "0", 1);
    char why[512];
    ck_assert_int_eq(probe(why, sizeof why), TOPOML_E_UNSUPPORTED);
    ck_assert_msg(strstr(why, "no device") != NULL, "why: %s", why);
    unsetenv("TB_FAKE_CUDA_DEVICES");
}
END_TEST

START_TEST(test_probe_reports_failing_init)
{
    setenv("TB_FAKE_CUDA_INIT", "100", 1);
    char why[512];
    ck_assert_int_eq(probe(why, sizeof why), TOPOML_E_UNSUPPORTED);
    ck_assert_msg(strstr(why, "cuInit failed: CUDA_ERROR_NO_DEVICE") != NULL, "why: %s", why);
    unsetenv("TB_FAKE_CUDA_INIT");
}
END_TEST

START_TEST(test_probe_reports_unloadable_cubins)
{
    setenv("TB_FAKE_CUDA_LOAD", "209", 1);
    char why[512];
    ck_assert_int_eq(probe(why, sizeof why), TOPOML_E_DEVICE);
    ck_assert_msg(strstr(why, "cuModuleLoadData failed: CUDA_ERROR_NO_BINARY_FOR_GPU") != NULL,
                  "why: %s", why);
    ck_assert_msg(strstr(why, "distances_f32") != NULL, "why: %s", why);
    unsetenv("TB_FAKE_CUDA_LOAD");
}
END_TEST

START_TEST(test_ops_use_the_configured_device)
{
    /* Device 0 is sm_80, device 1 is sm_90: probe (device 0) refuses, but
     * a call for device 1 runs there. */
    setenv("TB_FAKE_CUDA_DEVICES", "2", 1);
    setenv("TB_FAKE_CUDA_CC", "80,90", 1);
    void *st;
    ck_assert_int_eq(be->create(&tb_test_host_table, &st), TOPOML_OK);
    char why[512];
    ck_assert_int_eq(be->probe(st, why, sizeof why), TOPOML_E_UNSUPPORTED);
    ck_assert_msg(strstr(why, "device 0") != NULL, "why: %s", why);
    float xyz[6] = {0, 0, 0, 3, 4, 0};
    float out[1] = {-1};
    topoml_input_v1 in;
    memset(&in, 0, sizeof in);
    in.struct_size = sizeof in;
    in.kind = TOPOML_INPUT_POINTS;
    in.n = 2;
    in.dim = 3;
    in.dtype = TOPOML_F32;
    in.metric = TOPOML_METRIC_EUCLIDEAN;
    in.data = xyz;
    topoml_call_v1 call = tb_test_call();
    call.device = 1;
    ck_assert_int_eq(be->distances(st, &call, &in, out), TOPOML_OK);
    ck_assert(out[0] == 5.0f);
    call.device = 2;
    ck_assert_int_eq(be->distances(st, &call, &in, out), TOPOML_E_DEVICE);
    ck_assert_msg(strstr(tb_test_error, "no CUDA device 2 (2 found)") != NULL, "%s", tb_test_error);
    call.device = 0;
    ck_assert_int_eq(be->distances(st, &call, &in, out), TOPOML_E_UNSUPPORTED);
    ck_assert_msg(strstr(tb_test_error, "compute capability 8.0") != NULL, "%s", tb_test_error);
    be->destroy(st);
    unsetenv("TB_FAKE_CUDA_DEVICES");
    unsetenv("TB_FAKE_CUDA_CC");
}
END_TEST

START_TEST(test_device_fault_is_reported_not_fatal)
{
    /* Points whose transposed copy the fake cannot hold: the allocation
     * fails with the driver's name for it. */
    setenv("TB_FAKE_CUDA_MEMORY", "4096", 1);
    void *st;
    ck_assert_int_eq(be->create(&tb_test_host_table, &st), TOPOML_OK);
    static float xyz[3000];
    float *out = malloc(sizeof(float) * 1000 * 999 / 2);
    topoml_input_v1 in;
    memset(&in, 0, sizeof in);
    in.struct_size = sizeof in;
    in.kind = TOPOML_INPUT_POINTS;
    in.n = 1000;
    in.dim = 3;
    in.dtype = TOPOML_F32;
    in.metric = TOPOML_METRIC_EUCLIDEAN;
    in.data = xyz;
    topoml_call_v1 call = tb_test_call();
    ck_assert_int_eq(be->distances(st, &call, &in, out), TOPOML_E_NOMEM);
    ck_assert_msg(strstr(tb_test_error, "CUDA_ERROR_OUT_OF_MEMORY") != NULL, "%s", tb_test_error);
    free(out);
    be->destroy(st);
    unsetenv("TB_FAKE_CUDA_MEMORY");
}
END_TEST

/* Launches of the kernel variant `name` so far, as the fake driver counts them. */
static unsigned long launches(const char *name)
{
    void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    ck_assert_msg(cuda != NULL, "the fake driver is not the one loaded");
    unsigned long (*count)(const char *);
    void *sym = dlsym(cuda, "tb_fake_cuda_launches");
    ck_assert_ptr_nonnull(sym);
    memcpy(&count, &sym, sizeof sym);
    unsigned long c = count(name);
    dlclose(cuda);
    return c;
}

START_TEST(test_launch_picks_the_variant_the_arguments_fit)
{
    /* Distances: the 32-bit variant whatever n is (alignment changes
     * nothing in the exact kernel's code, so it has no d16 variant). Edges:
     * the variant compiled for divisible arguments when n is a multiple of
     * 16, else the generic one. The fake driver fails a variant whose
     * assumptions do not hold. */
    void *st;
    ck_assert_int_eq(be->create(&tb_test_host_table, &st), TOPOML_OK);
    char why[512];
    ck_assert_int_eq(be->probe(st, why, sizeof why), TOPOML_OK); /* loads the driver */
    static float xyz[33 * 5];
    for (int k = 0; k < 33 * 5; k++)
        xyz[k] = (float)((k * 37) % 11) - 5.0f;
    static float out[33 * 32 / 2];
    topoml_input_v1 in;
    memset(&in, 0, sizeof in);
    in.struct_size = sizeof in;
    in.kind = TOPOML_INPUT_POINTS;
    in.dim = 5;
    in.dtype = TOPOML_F32;
    in.metric = TOPOML_METRIC_EUCLIDEAN;
    in.data = xyz;
    topoml_call_v1 call = tb_test_call();
    /* Euclidean: the root is compiled in (r1). */
    const char *names[] = {"distances_f32_n32r1", "distances_f32", "edges_f32_d16",
                           "edges_f32"};
    unsigned long before[4], after[4];
    for (int n = 32; n <= 33; n++) {
        for (int k = 0; k < 4; k++)
            before[k] = launches(names[k]);
        in.n = (uint64_t)n;
        ck_assert_int_eq(be->distances(st, &call, &in, out), TOPOML_OK);
        topoml_edge *edges = NULL;
        uint64_t n_edges = 0;
        ck_assert_int_eq(be->edges(st, &call, &in, 4.0, &edges, &n_edges), TOPOML_OK);
        tb_test_host_table.free(tb_test_host_table.host_data, edges);
        for (int k = 0; k < 4; k++)
            after[k] = launches(names[k]) - before[k];
        int d16 = n % 16 == 0;
        ck_assert_msg(after[0] > 0 && after[1] == 0,
                      "n=%d: distances launches n32r1 %lu, generic %lu", n, after[0], after[1]);
        ck_assert_msg((after[2] > 0) == d16 && (after[3] > 0) == !d16,
                      "n=%d: edges launches d16 %lu, generic %lu", n, after[2], after[3]);
    }
    /* Squared euclidean: root is 0, so not the variant with root == 1. */
    in.metric = TOPOML_METRIC_SQEUCLIDEAN;
    in.n = 32;
    unsigned long r1 = launches("distances_f32_n32r1"), plain = launches("distances_f32_n32");
    ck_assert_int_eq(be->distances(st, &call, &in, out), TOPOML_OK);
    ck_assert_uint_eq(launches("distances_f32_n32r1"), r1);
    ck_assert_uint_gt(launches("distances_f32_n32"), plain);
    be->destroy(st);
}
END_TEST

START_TEST(test_wide_f32_points_take_the_dot_kernel)
{
    /* float32 with TB_DISTANCES_DOT_F32_MIN_DIM (64) coordinates or more:
     * pairwise_distances_dot; from TB_DISTANCES_LONG_F32_MIN_DIM, the exact
     * kernel's long schedule; below, its short one; float64: its own. */
    void *st;
    ck_assert_int_eq(be->create(&tb_test_host_table, &st), TOPOML_OK);
    char why[512];
    ck_assert_int_eq(be->probe(st, why, sizeof why), TOPOML_OK);
    static float xyz[1023 * 64];
    static double xyz64[33 * 64];
    for (int k = 0; k < 1023 * 64; k++)
        xyz[k] = (float)((k * 37) % 11) - 5.0f;
    for (int k = 0; k < 33 * 64; k++)
        xyz64[k] = xyz[k];
    static double out[1023 * 1022 / 2];
    topoml_input_v1 in;
    memset(&in, 0, sizeof in);
    in.struct_size = sizeof in;
    in.kind = TOPOML_INPUT_POINTS;
    in.metric = TOPOML_METRIC_EUCLIDEAN;
    topoml_call_v1 call = tb_test_call();
    const struct {
        uint64_t n, dim;
        uint32_t dtype;
        const char *kernel;
    } cases[] = {
        {33, 64, TOPOML_F32, "distances_dot_f32_d16n32"},
        {1023, 64, TOPOML_F32, "distances_dot_f32_d16n32"}, /* n % 16 != 0: still aligned */
        {32, 64, TOPOML_F32, "distances_dot_f32_d16n32"},
        {33, 63, TOPOML_F32, "distances_long_f32_n32r1"},
        {33, TB_DISTANCES_LONG_F32_MIN_DIM, TOPOML_F32, "distances_long_f32_n32r1"},
        {33, TB_DISTANCES_LONG_F32_MIN_DIM - 1, TOPOML_F32, "distances_f32_n32r1"},
        {33, 64, TOPOML_F64, "distances_f64_n32"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        in.n = cases[c].n;
        in.dim = cases[c].dim;
        in.dtype = cases[c].dtype;
        in.data = cases[c].dtype == TOPOML_F32 ? (void *)xyz : (void *)xyz64;
        unsigned long before = launches(cases[c].kernel);
        ck_assert_int_eq(be->distances(st, &call, &in, out), TOPOML_OK);
        ck_assert_msg(launches(cases[c].kernel) > before, "n %llu dim %llu: %s not launched",
                      (unsigned long long)cases[c].n, (unsigned long long)cases[c].dim,
                      cases[c].kernel);
    }
    be->destroy(st);
}
END_TEST

/* Successful cuMemAlloc calls so far, as the fake driver counts them. */
static unsigned long device_allocs(void)
{
    void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    ck_assert_msg(cuda != NULL, "the fake driver is not the one loaded");
    unsigned long (*count)(void);
    void *sym = dlsym(cuda, "tb_fake_cuda_allocs");
    ck_assert_ptr_nonnull(sym);
    memcpy(&count, &sym, sizeof sym);
    unsigned long c = count();
    dlclose(cuda);
    return c;
}

START_TEST(test_repeated_distances_reuse_device_buffers)
{
    /* The distances op keeps its device buffers (points, centred points,
     * band) in the state: a second call of the same size allocates nothing,
     * a smaller one neither, a much larger one does. Edges give them up
     * (they size their buffers from the free memory); destroy frees them. */
    void *st;
    ck_assert_int_eq(be->create(&tb_test_host_table, &st), TOPOML_OK);
    char why[512];
    ck_assert_int_eq(be->probe(st, why, sizeof why), TOPOML_OK);
    static float xyz[300 * 64];
    for (int k = 0; k < 300 * 64; k++)
        xyz[k] = (float)((k * 37) % 11) - 5.0f;
    static float out[300 * 299 / 2], again[300 * 299 / 2];
    topoml_input_v1 in;
    memset(&in, 0, sizeof in);
    in.struct_size = sizeof in;
    in.kind = TOPOML_INPUT_POINTS;
    in.n = 150;
    in.dim = 64;
    in.dtype = TOPOML_F32;
    in.metric = TOPOML_METRIC_EUCLIDEAN;
    in.data = xyz;
    topoml_call_v1 call = tb_test_call();
    unsigned long a0 = device_allocs();
    ck_assert_int_eq(be->distances(st, &call, &in, out), TOPOML_OK);
    unsigned long a1 = device_allocs();
    ck_assert_msg(a1 - a0 == 3, "first call: %lu allocations", a1 - a0);
    ck_assert_int_eq(be->distances(st, &call, &in, again), TOPOML_OK);
    ck_assert_msg(device_allocs() == a1, "second call of the same size: %lu allocations",
                  device_allocs() - a1);
    ck_assert(memcmp(out, again, sizeof(float) * 150 * 149 / 2) == 0);
    in.n = 149; /* smaller, and no longer a multiple of 16: same buffers */
    ck_assert_int_eq(be->distances(st, &call, &in, again), TOPOML_OK);
    ck_assert_msg(device_allocs() == a1, "smaller call: %lu allocations", device_allocs() - a1);
    ck_assert(memcmp(out, again, sizeof(float) * 149 * 148 / 2) == 0);
    in.n = 300;
    ck_assert_int_eq(be->distances(st, &call, &in, out), TOPOML_OK);
    unsigned long a2 = device_allocs();
    ck_assert_msg(a2 > a1, "a larger call did not allocate");
    topoml_edge *edges = NULL;
    uint64_t n_edges = 0;
    ck_assert_int_eq(be->edges(st, &call, &in, 4.0, &edges, &n_edges), TOPOML_OK);
    tb_test_host_table.free(tb_test_host_table.host_data, edges);
    unsigned long a3 = device_allocs();
    ck_assert_int_eq(be->distances(st, &call, &in, again), TOPOML_OK);
    ck_assert_msg(device_allocs() - a3 == 3, "after edges: %lu allocations", device_allocs() - a3);
    ck_assert(memcmp(out, again, sizeof(float) * 300 * 299 / 2) == 0);
    void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    ck_assert_ptr_nonnull(cuda);
    be->destroy(st);
    int (*leaks)(char *, size_t);
    void *sym = dlsym(cuda, "tb_fake_cuda_leaks");
    ck_assert_ptr_nonnull(sym);
    memcpy(&leaks, &sym, sizeof sym);
    char text[256];
    ck_assert_msg(leaks(text, sizeof text) == 0, "left behind: %s", text);
    dlclose(cuda);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("triton_bridge_fake_driver");
    TCase *tc = tcase_create("fake_driver");
    tcase_add_checked_fixture(tc, load, unload);
    tcase_add_test(tc, test_probe_accepts_sm90_device);
    tcase_add_test(tc, test_probe_refuses_other_compute_capability);
    tcase_add_test(tc, test_probe_refuses_without_devices);
    tcase_add_test(tc, test_probe_reports_failing_init);
    tcase_add_test(tc, test_probe_reports_unloadable_cubins);
    tcase_add_test(tc, test_ops_use_the_configured_device);
    tcase_add_test(tc, test_device_fault_is_reported_not_fatal);
    tcase_add_test(tc, test_launch_picks_the_variant_the_arguments_fit);
    tcase_add_test(tc, test_wide_f32_points_take_the_dot_kernel);
    tcase_add_test(tc, test_repeated_distances_reuse_device_buffers);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
