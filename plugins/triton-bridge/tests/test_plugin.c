/*
 * test_plugin.c — the triton-bridge plugin file as the core sees it: it
 * loads anywhere, negotiates ABI v1, describes itself, and where there is
 * no usable CUDA driver its probe and ops answer TOPOML_E_UNSUPPORTED with
 * the reason, without crashing and without leaking.
 *
 * Runs twice: as it is (on a machine without libcuda.so.1, dlopen fails;
 * where a driver is found the program skips, exit 77), and with
 * LD_LIBRARY_PATH naming tests/not_cuda, whose libcuda.so.1 is not a CUDA
 * driver, so that the "no usable driver" answers are tested on GPU machines
 * too.
 */
#include <check.h>
#include <dlfcn.h>
#include <math.h>
#include <string.h>

#include "tb_test_host.h"

static void *lib;
static const topoml_backend_v1 *be;

static void load(void)
{
    lib = dlopen(TB_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
    ck_assert_msg(lib != NULL, "dlopen: %s", dlerror());
    topoml_backend_negotiate_fn negotiate;
    void *sym = dlsym(lib, TOPOML_PLUGIN_ENTRY);
    ck_assert_ptr_nonnull(sym);
    memcpy(&negotiate, &sym, sizeof sym);
    uint32_t abi = TOPOML_ABI_VERSION;
    ck_assert_int_eq(negotiate(&abi, &tb_test_host_table, &be), TOPOML_OK);
    ck_assert_uint_eq(abi, 1);
}

static void unload(void)
{
    ck_assert_int_eq(tb_host_data.live, 0);
    dlclose(lib);
}

START_TEST(test_negotiate_answers_v1_to_newer_core)
{
    topoml_backend_negotiate_fn negotiate;
    void *sym = dlsym(lib, TOPOML_PLUGIN_ENTRY);
    memcpy(&negotiate, &sym, sizeof sym);
    const topoml_backend_v1 *b = NULL;
    uint32_t abi = 7;
    ck_assert_int_eq(negotiate(&abi, &tb_test_host_table, &b), TOPOML_OK);
    ck_assert_uint_eq(abi, 1);
    ck_assert_ptr_eq(b, be);
    abi = 0;
    ck_assert_int_eq(negotiate(&abi, &tb_test_host_table, &b), TOPOML_E_ABI);
    ck_assert_ptr_null(b);
}
END_TEST

START_TEST(test_vtable_describes_triton_bridge)
{
    ck_assert_uint_ge(be->struct_size, sizeof(topoml_backend_v1));
    ck_assert_uint_eq(be->abi_version, 1);
    ck_assert_str_eq(be->name, "triton-bridge");
    ck_assert_ptr_nonnull(be->version);
    ck_assert_ptr_nonnull(strstr(be->description, "sm_90"));
    ck_assert_ptr_nonnull(be->distances);
    ck_assert_ptr_nonnull(be->edges);
    ck_assert_ptr_nonnull(be->image);
    ck_assert_ptr_null(be->h0);
    ck_assert_ptr_null(be->rips);
}
END_TEST

START_TEST(test_probe_without_driver_is_unsupported_with_reason)
{
    void *st = NULL;
    ck_assert_int_eq(be->create(&tb_test_host_table, &st), TOPOML_OK);
    char why[512] = "";
    ck_assert_int_eq(be->probe(st, why, sizeof why), TOPOML_E_UNSUPPORTED);
    /* Either dlopen failed or the library is not a CUDA driver. */
    ck_assert_msg(strstr(why, "libcuda.so.1") != NULL, "why: %s", why);
    ck_assert_msg(strstr(why, "no CUDA driver") != NULL || strstr(why, "lacks cuInit") != NULL,
                  "why: %s", why);
    /* Asked again, the same answer (the driver is not reopened). */
    char again[512] = "";
    ck_assert_int_eq(be->probe(st, again, sizeof again), TOPOML_E_UNSUPPORTED);
    ck_assert_str_eq(why, again);
    be->destroy(st);
}
END_TEST

START_TEST(test_probe_truncates_reason_to_buffer)
{
    void *st = NULL;
    ck_assert_int_eq(be->create(&tb_test_host_table, &st), TOPOML_OK);
    char why[8];
    memset(why, 'x', sizeof why);
    ck_assert_int_eq(be->probe(st, why, sizeof why), TOPOML_E_UNSUPPORTED);
    ck_assert_uint_eq(strlen(why), sizeof why - 1);
    ck_assert_int_eq(be->probe(st, NULL, 0), TOPOML_E_UNSUPPORTED);
    be->destroy(st);
}
END_TEST

START_TEST(test_capabilities_carry_schedule_metadata)
{
    void *st = NULL;
    ck_assert_int_eq(be->create(&tb_test_host_table, &st), TOPOML_OK);
    char why[256];
    be->probe(st, why, sizeof why);
    const topoml_capability_v1 *caps = NULL;
    uint32_t n = 0;
    ck_assert_int_eq(be->capabilities(st, &caps, &n), TOPOML_OK);
    ck_assert_uint_eq(n, 3);
    uint32_t ops = 0;
    for (uint32_t k = 0; k < n; k++) {
        ck_assert_uint_eq(caps[k].struct_size, sizeof(topoml_capability_v1));
        ops |= 1u << caps[k].op;
        ck_assert_ptr_nonnull(caps[k].device);
        ck_assert_ptr_nonnull(caps[k].schedule);
        ck_assert_ptr_nonnull(strstr(caps[k].schedule, "target=sm_90"));
        ck_assert_ptr_nonnull(strstr(caps[k].schedule, ".warps="));
        ck_assert_ptr_nonnull(strstr(caps[k].schedule, ".stages="));
        ck_assert_ptr_nonnull(strstr(caps[k].schedule, ".shared="));
        if (caps[k].op != TOPOML_OP_IMAGE) {
            ck_assert_uint_eq(caps[k].dtypes, (1u << TOPOML_F32) | (1u << TOPOML_F64));
            ck_assert_uint_eq(caps[k].metrics,
                              (1u << TOPOML_METRIC_EUCLIDEAN) | (1u << TOPOML_METRIC_SQEUCLIDEAN));
            ck_assert_uint_eq(caps[k].inputs, 1u << TOPOML_INPUT_POINTS);
            /* The exact kernels' tile: MT x TW per thread block row, BLOCK. */
            ck_assert_ptr_nonnull(strstr(caps[k].schedule, "f32.mt="));
            ck_assert_ptr_nonnull(strstr(caps[k].schedule, "f32.tw="));
            ck_assert_ptr_nonnull(strstr(caps[k].schedule, "f32.block="));
            ck_assert_ptr_nonnull(strstr(caps[k].schedule, "f64.block="));
        }
    }
    ck_assert_uint_eq(ops, (1u << TOPOML_OP_DISTANCES) | (1u << TOPOML_OP_EDGES) |
                               (1u << TOPOML_OP_IMAGE));
    be->destroy(st);
}
END_TEST

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

START_TEST(test_ops_without_driver_are_unsupported_with_reason)
{
    void *st = NULL;
    ck_assert_int_eq(be->create(&tb_test_host_table, &st), TOPOML_OK);
    float xyz[12] = {0};
    float out[6];
    topoml_call_v1 call = tb_test_call();
    topoml_input_v1 in = points(4, 3, TOPOML_F32, TOPOML_METRIC_EUCLIDEAN, xyz);
    ck_assert_int_eq(be->distances(st, &call, &in, out), TOPOML_E_UNSUPPORTED);
    ck_assert_msg(strstr(tb_test_error, "libcuda.so.1") != NULL, "error: %s", tb_test_error);
    topoml_edge *edges = (topoml_edge *)1;
    uint64_t n_edges = 99;
    call = tb_test_call();
    ck_assert_int_eq(be->edges(st, &call, &in, 1.0, &edges, &n_edges), TOPOML_E_UNSUPPORTED);
    ck_assert_ptr_null(edges);
    ck_assert_uint_eq(n_edges, 0);
    ck_assert_msg(strstr(tb_test_error, "libcuda.so.1") != NULL, "error: %s", tb_test_error);
    be->destroy(st);
}
END_TEST

START_TEST(test_ops_reject_what_the_kernels_cannot_do)
{
    void *st = NULL;
    ck_assert_int_eq(be->create(&tb_test_host_table, &st), TOPOML_OK);
    float xyz[12] = {0};
    float out[6];
    topoml_call_v1 call = tb_test_call();
    topoml_input_v1 in = points(4, 3, TOPOML_F32, TOPOML_METRIC_MANHATTAN, xyz);
    ck_assert_int_eq(be->distances(st, &call, &in, out), TOPOML_E_UNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(tb_test_error, "metric"));
    in = points(4, 3, TOPOML_F32, TOPOML_METRIC_COSINE, xyz);
    ck_assert_int_eq(be->distances(st, &call, &in, out), TOPOML_E_UNSUPPORTED);
    in = points(4, 3, TOPOML_F32, TOPOML_METRIC_EUCLIDEAN, xyz);
    in.kind = TOPOML_INPUT_CONDENSED;
    ck_assert_int_eq(be->distances(st, &call, &in, out), TOPOML_E_UNSUPPORTED);
    in = points(4, 3, 7, TOPOML_METRIC_EUCLIDEAN, xyz);
    ck_assert_int_eq(be->distances(st, &call, &in, out), TOPOML_E_UNSUPPORTED);
    topoml_edge *edges;
    uint64_t n_edges;
    in = points(4, 3, TOPOML_F32, TOPOML_METRIC_EUCLIDEAN, xyz);
    ck_assert_int_eq(be->edges(st, &call, &in, NAN, &edges, &n_edges), TOPOML_E_INVALID);
    ck_assert_ptr_nonnull(strstr(tb_test_error, "NaN"));
    be->destroy(st);
}
END_TEST

START_TEST(test_tiny_inputs_need_no_device)
{
    void *st = NULL;
    ck_assert_int_eq(be->create(&tb_test_host_table, &st), TOPOML_OK);
    float one[3] = {1, 2, 3};
    topoml_call_v1 call = tb_test_call();
    for (uint64_t n = 0; n < 2; n++) {
        topoml_input_v1 in = points(n, 3, TOPOML_F32, TOPOML_METRIC_EUCLIDEAN, one);
        ck_assert_int_eq(be->distances(st, &call, &in, NULL), TOPOML_OK);
        topoml_edge *edges = (topoml_edge *)1;
        uint64_t n_edges = 5;
        ck_assert_int_eq(be->edges(st, &call, &in, INFINITY, &edges, &n_edges), TOPOML_OK);
        ck_assert_ptr_null(edges);
        ck_assert_uint_eq(n_edges, 0);
    }
    /* Below zero no pair can be an edge. */
    float two[6] = {0, 0, 0, 1, 1, 1};
    topoml_input_v1 in = points(2, 3, TOPOML_F32, TOPOML_METRIC_EUCLIDEAN, two);
    topoml_edge *edges;
    uint64_t n_edges;
    ck_assert_int_eq(be->edges(st, &call, &in, -1.0, &edges, &n_edges), TOPOML_OK);
    ck_assert_uint_eq(n_edges, 0);
    /* Points without coordinates: every distance is 0. */
    float out[1] = {5.0f};
    in = points(2, 0, TOPOML_F32, TOPOML_METRIC_EUCLIDEAN, NULL);
    ck_assert_int_eq(be->distances(st, &call, &in, out), TOPOML_OK);
    ck_assert(out[0] == 0.0f);
    be->destroy(st);
}
END_TEST

static topoml_image_params_v1 image_params(void)
{
    topoml_image_params_v1 p;
    memset(&p, 0, sizeof p);
    p.struct_size = sizeof p;
    p.weight = TOPOML_WEIGHT_CONSTANT;
    p.sigma = 0.1;
    p.birth_min = 0;
    p.birth_max = 1;
    p.pers_min = 0;
    p.pers_max = 1;
    p.width = 4;
    p.height = 4;
    return p;
}

START_TEST(test_image_rejects_bad_parameters)
{
    void *st = NULL;
    ck_assert_int_eq(be->create(&tb_test_host_table, &st), TOPOML_OK);
    topoml_call_v1 call = tb_test_call();
    uint64_t offsets[2] = {0, 1};
    topoml_pair pair = {0.1, 0.5};
    double out[16];
    topoml_image_params_v1 p = image_params();
    p.sigma = 0;
    ck_assert_int_eq(be->image(st, &call, &p, 1, offsets, &pair, out), TOPOML_E_INVALID);
    ck_assert_ptr_nonnull(strstr(tb_test_error, "sigma"));
    p = image_params();
    p.width = 0;
    ck_assert_int_eq(be->image(st, &call, &p, 1, offsets, &pair, out), TOPOML_E_INVALID);
    p = image_params();
    p.birth_max = p.birth_min;
    ck_assert_int_eq(be->image(st, &call, &p, 1, offsets, &pair, out), TOPOML_E_INVALID);
    p = image_params();
    p.weight = TOPOML_WEIGHT_LINEAR;
    p.weight_max = 0;
    ck_assert_int_eq(be->image(st, &call, &p, 1, offsets, &pair, out), TOPOML_E_INVALID);
    p = image_params();
    p.weight = 9;
    ck_assert_int_eq(be->image(st, &call, &p, 1, offsets, &pair, out), TOPOML_E_UNSUPPORTED);
    p = image_params();
    p.infinite = TOPOML_INFINITE_CLIP;
    p.clip_death = INFINITY;
    ck_assert_int_eq(be->image(st, &call, &p, 1, offsets, &pair, out), TOPOML_E_INVALID);
    p = image_params();
    topoml_pair bad = {NAN, 1.0};
    ck_assert_int_eq(be->image(st, &call, &p, 1, offsets, &bad, out), TOPOML_E_INVALID);
    uint64_t backwards[3] = {0, 1, 0};
    ck_assert_int_eq(be->image(st, &call, &p, 2, backwards, &pair, out), TOPOML_E_INVALID);
    /* No diagrams: nothing to do, no device needed. */
    ck_assert_int_eq(be->image(st, &call, &p, 0, offsets, &pair, out), TOPOML_OK);
    be->destroy(st);
}
END_TEST

START_TEST(test_create_reports_allocation_failure)
{
    void *st = (void *)1;
    tb_host_data.fail_after = 0;
    ck_assert_int_eq(be->create(&tb_test_host_table, &st), TOPOML_E_NOMEM);
    tb_host_data.fail_after = -1;
    ck_assert_ptr_null(st);
}
END_TEST

int main(void)
{
    /* These tests are about a machine without a usable driver: where the
     * libcuda.so.1 that the plugin would load has cuInit, they cannot hold. */
    void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (cuda != NULL) {
        int real = dlsym(cuda, "cuInit") != NULL;
        dlclose(cuda);
        if (real) {
            fprintf(stderr, "skipped: a CUDA driver is loadable here\n");
            return 77;
        }
    }
    Suite *s = suite_create("triton_bridge_plugin");
    TCase *tc = tcase_create("plugin");
    tcase_add_checked_fixture(tc, load, unload);
    tcase_add_test(tc, test_negotiate_answers_v1_to_newer_core);
    tcase_add_test(tc, test_vtable_describes_triton_bridge);
    tcase_add_test(tc, test_probe_without_driver_is_unsupported_with_reason);
    tcase_add_test(tc, test_probe_truncates_reason_to_buffer);
    tcase_add_test(tc, test_capabilities_carry_schedule_metadata);
    tcase_add_test(tc, test_ops_without_driver_are_unsupported_with_reason);
    tcase_add_test(tc, test_ops_reject_what_the_kernels_cannot_do);
    tcase_add_test(tc, test_tiny_inputs_need_no_device);
    tcase_add_test(tc, test_image_rejects_bad_parameters);
    tcase_add_test(tc, test_create_reports_allocation_failure);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
