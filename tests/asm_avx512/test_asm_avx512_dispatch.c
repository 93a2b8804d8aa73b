/*
 * test_plugin_dispatch.c — plugin.c linked against a recorded processor
 * (this file defines avx512_cpu_hardware) and against kernels that forward to
 * the C stand-ins only while the recorded processor passes the gate. So on
 * any machine: probe reports the recorded machine's verdict, ops refuse with
 * its reason, and no kernel is ever entered when the gate said no.
 */
#include <check.h>
#include <stdio.h>

#include "gate.h"
#include "standin.h"
#include "testutil.h"
#include "topoml/plugin.h"

int topoml_backend_negotiate(uint32_t *abi_version, const topoml_host_v1 *host,
                             const topoml_backend_v1 **backend);

/* The recorded processor. */
static avx512_cpu_regs machine;
static int kernel_calls, forbidden_calls, gate_open;

static void rec_cpuid(uint32_t leaf, uint32_t subleaf, uint32_t out[4])
{
    static const char brand[49] = "Recorded CPU @ 2.00GHz                          ";
    (void)subleaf;
    memset(out, 0, 4 * sizeof out[0]);
    if (leaf == 0)
        out[0] = machine.max_leaf;
    else if (leaf == 1)
        out[2] = machine.leaf1_ecx;
    else if (leaf == 7) {
        out[1] = machine.leaf7_ebx;
        out[2] = machine.leaf7_ecx;
        out[3] = machine.leaf7_edx;
    } else if (leaf == 0x80000000u)
        out[0] = 0x80000004u;
    else if (leaf >= 0x80000002u && leaf <= 0x80000004u)
        memcpy(out, brand + 16 * (leaf - 0x80000002u), 16);
}

static uint64_t rec_xgetbv(uint32_t index)
{
    (void)index;
    return machine.xcr0;
}

const avx512_cpu_access avx512_cpu_hardware = {rec_cpuid, rec_xgetbv};

static void entered(void)
{
    kernel_calls++;
    if (!gate_open)
        forbidden_calls++;
}

void topoml_avx512_dist_f32(const struct avx512_tile *t)
{
    entered();
    standin_kernels.dist_f32(t);
}
void topoml_avx512_dist_f64(const struct avx512_tile *t)
{
    entered();
    standin_kernels.dist_f64(t);
}
uint32_t topoml_avx512_edges_f32(struct avx512_tile *t)
{
    entered();
    return standin_kernels.edges_f32(t);
}
uint32_t topoml_avx512_edges_f64(struct avx512_tile *t)
{
    entered();
    return standin_kernels.edges_f64(t);
}

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
static char last_log[512];
static void host_log(void *h, int level, const char *message)
{
    (void)h;
    (void)level;
    snprintf(last_log, sizeof last_log, "%s", message);
}

static const topoml_host_v1 host = {sizeof(topoml_host_v1), 1,         NULL,     host_alloc,
                                    host_realloc,           host_free, host_log, "0.1.0"};

static void set_machine(int avx512, uint64_t xcr0)
{
    memset(&machine, 0, sizeof machine);
    machine.max_leaf = 0x16;
    machine.leaf1_ecx =
        AVX512_CPUID1_ECX_POPCNT | AVX512_CPUID1_ECX_OSXSAVE | AVX512_CPUID1_ECX_AVX;
    machine.leaf7_ebx = avx512 ? AVX512_CPUID7_EBX_AVX512F | AVX512_CPUID7_EBX_AVX512DQ |
                                     AVX512_CPUID7_EBX_AVX512BW | AVX512_CPUID7_EBX_AVX512VL
                               : (1u << 5);
    machine.xcr0 = xcr0;
    kernel_calls = forbidden_calls = 0;
}

/* Run both ops on a small cloud; returns the distances op's status. */
static int run_ops(const topoml_backend_v1 *b, void *state, char *err, size_t err_size,
                   int *edges_status)
{
    topoml_call_v1 call;
    topoml_input_v1 in;
    test_heap heap;
    uint64_t seed = 2, ne = 99;
    float *p = random_points(&seed, TOPOML_F32, 30, 3, 0, 1), out[435];
    topoml_edge *e = (topoml_edge *)&ne;

    make_call(&call, &heap, err, err_size);
    make_input(&in, TOPOML_F32, TOPOML_METRIC_EUCLIDEAN, 30, 3, p);
    int status = b->distances(state, &call, &in, out);
    if (status == TOPOML_OK)
        for (uint64_t i = 1; i < 30; i++)
            for (uint64_t j = 0; j < i; j++)
                EXPECT(within_bound(
                           TOPOML_F32, 3, out[condensed(i, j)],
                           scalar_point_dist(TOPOML_F32, TOPOML_METRIC_EUCLIDEAN, p, 3, i, j)),
                       "line %d", __LINE__);
    *edges_status = b->edges(state, &call, &in, 0.5, &e, &ne);
    if (*edges_status == TOPOML_OK)
        call.free(call.host_data, e);
    else
        ck_assert(e == NULL && ne == 0);
    ck_assert_int_eq(heap.live, 0);
    free(p);
    return status;
}

static const topoml_backend_v1 *negotiate(void)
{
    uint32_t v = TOPOML_ABI_VERSION;
    const topoml_backend_v1 *b = NULL;
    ck_assert_int_eq(topoml_backend_negotiate(&v, &host, &b), TOPOML_OK);
    return b;
}

START_TEST(test_plugin_refuses_ops_on_os_without_zmm_state)
{
    const topoml_backend_v1 *b = negotiate();
    void *state = NULL;
    char why[128], err[256];
    int es;

    set_machine(1, 0x7);
    gate_open = 0;
    ck_assert_int_eq(b->create(&host, &state), TOPOML_OK);
    ck_assert_int_eq(b->probe(state, why, sizeof why), TOPOML_E_UNSUPPORTED);
    ck_assert_str_eq(why, "OS has not enabled ZMM state (XCR0=0x7)");
    ck_assert_int_eq(run_ops(b, state, err, sizeof err, &es), TOPOML_E_UNSUPPORTED);
    ck_assert_str_eq(err, "asm-avx512: OS has not enabled ZMM state (XCR0=0x7)");
    ck_assert_int_eq(es, TOPOML_E_UNSUPPORTED);
    ck_assert_int_eq(kernel_calls, 0);
    b->destroy(state);
}
END_TEST

START_TEST(test_plugin_refuses_ops_on_processor_without_avx512)
{
    const topoml_backend_v1 *b = negotiate();
    void *state = NULL;
    const topoml_capability_v1 *caps;
    uint32_t n_caps;
    char why[128], err[256];
    int es;

    set_machine(0, 0x7);
    gate_open = 0;
    ck_assert_int_eq(b->create(&host, &state), TOPOML_OK);
    ck_assert_ptr_nonnull(strstr(last_log, "AVX512F not reported by CPUID"));
    ck_assert_int_eq(b->probe(state, why, sizeof why), TOPOML_E_UNSUPPORTED);
    ck_assert_str_eq(why, "AVX512F not reported by CPUID");
    ck_assert_int_eq(b->probe(NULL, why, sizeof why), TOPOML_E_UNSUPPORTED);
    ck_assert_int_eq(b->capabilities(state, &caps, &n_caps), TOPOML_OK);
    ck_assert_str_eq(caps[0].device, "cpu: Recorded CPU @ 2.00GHz (no avx512f)");
    ck_assert_int_eq(run_ops(b, state, err, sizeof err, &es), TOPOML_E_UNSUPPORTED);
    ck_assert_int_eq(es, TOPOML_E_UNSUPPORTED);
    ck_assert_int_eq(kernel_calls, 0);
    b->destroy(state);
}
END_TEST

START_TEST(test_plugin_runs_ops_when_gate_passes)
{
    const topoml_backend_v1 *b = negotiate();
    void *state = NULL;
    const topoml_capability_v1 *caps;
    uint32_t n_caps;
    char why[128] = "", err[256];
    int es;

    set_machine(1, 0xE7);
    gate_open = 1;
    ck_assert_int_eq(b->create(&host, &state), TOPOML_OK);
    ck_assert_int_eq(b->probe(state, why, sizeof why), TOPOML_OK);
    ck_assert_int_eq(b->capabilities(state, &caps, &n_caps), TOPOML_OK);
    ck_assert_uint_eq(n_caps, 2);
    ck_assert_str_eq(caps[0].device,
                     "cpu: Recorded CPU @ 2.00GHz (avx512f avx512dq avx512bw avx512vl)");
    ck_assert_int_eq(run_ops(b, state, err, sizeof err, &es), TOPOML_OK);
    ck_assert_int_eq(es, TOPOML_OK);
    ck_assert_int_gt(kernel_calls, 0);
    ck_assert_int_eq(forbidden_calls, 0);
    b->destroy(state);
}
END_TEST

START_TEST(test_plugin_ops_without_state_refuse)
{
    const topoml_backend_v1 *b = negotiate();
    char err[256];
    int es;

    set_machine(1, 0xE7);
    gate_open = 0;
    ck_assert_int_eq(run_ops(b, NULL, err, sizeof err, &es), TOPOML_E_INVALID);
    ck_assert_int_eq(es, TOPOML_E_INVALID);
    ck_assert_int_eq(kernel_calls, 0);
    ck_assert_int_eq(b->create(NULL, NULL), TOPOML_E_INVALID);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("asm-avx512 plugin dispatch");
    TCase *tc = tcase_create("dispatch");
    tcase_add_test(tc, test_plugin_refuses_ops_on_os_without_zmm_state);
    tcase_add_test(tc, test_plugin_refuses_ops_on_processor_without_avx512);
    tcase_add_test(tc, test_plugin_runs_ops_when_gate_passes);
    tcase_add_test(tc, test_plugin_ops_without_state_refuse);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
