/*
 * test_plugin_so.c — topoml-backend-asm-avx512.so as the core will see it:
 * dlopen, the entry symbol, ABI negotiation, the vtable's size and contents,
 * probe on this machine (a verdict, never a crash), the capability records,
 * and both ops: matching the reference where the gate passes, refusing with
 * the probe's reason where it does not.
 */
#include <check.h>
#include <dlfcn.h>
#include <stdio.h>

#include "gate.h"
#include "testutil.h"
#include "topoml/plugin.h"

static void *handle;
static topoml_backend_negotiate_fn entry;

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

static const topoml_host_v1 host = {sizeof(topoml_host_v1), 1,         NULL, host_alloc,
                                    host_realloc,           host_free, NULL, "0.1.0"};

static void open_plugin(void)
{
    handle = dlopen(TOPOML_PLUGIN_DIR "/topoml-backend-asm-avx512.so", RTLD_NOW | RTLD_LOCAL);
    ck_assert_msg(handle != NULL, "dlopen: %s", dlerror());
    *(void **)&entry = dlsym(handle, TOPOML_PLUGIN_ENTRY);
    ck_assert_msg(entry != NULL, "no %s", TOPOML_PLUGIN_ENTRY);
}

static void close_plugin(void)
{
    dlclose(handle);
}

START_TEST(test_plugin_so_negotiates_abi_v1)
{
    const topoml_backend_v1 *b = NULL;
    uint32_t v = TOPOML_ABI_VERSION;

    ck_assert_int_eq(entry(&v, &host, &b), TOPOML_OK);
    ck_assert_uint_eq(v, 1);
    ck_assert_ptr_nonnull(b);
    ck_assert_uint_ge(b->struct_size, sizeof(topoml_backend_v1));
    ck_assert_uint_eq(b->abi_version, 1);
    ck_assert_str_eq(b->name, "asm-avx512");
    ck_assert_ptr_nonnull(b->create);
    ck_assert_ptr_nonnull(b->destroy);
    ck_assert_ptr_nonnull(b->probe);
    ck_assert_ptr_nonnull(b->capabilities);
    ck_assert_ptr_nonnull(b->distances);
    ck_assert_ptr_nonnull(b->edges);
    ck_assert_ptr_null(b->h0);
    ck_assert_ptr_null(b->rips);
    ck_assert_ptr_null(b->image);

    /* A newer core gets version 1 back; a core older than 1 is refused. */
    v = 7;
    ck_assert_int_eq(entry(&v, &host, &b), TOPOML_OK);
    ck_assert_uint_eq(v, 1);
    v = 0;
    ck_assert_int_eq(entry(&v, &host, &b), TOPOML_E_ABI);
    ck_assert_int_eq(entry(NULL, &host, &b), TOPOML_E_INVALID);
}
END_TEST

START_TEST(test_plugin_so_exports_only_the_entry_symbol)
{
    static const char *internal[] = {"topoml_avx512_dist_f32", "topoml_avx512_edges_f64",
                                     "topoml_avx512_cpuid",    "avx512_cpu_hardware",
                                     "avx512_distances",       "avx512_gate_decode"};
    for (size_t k = 0; k < sizeof internal / sizeof internal[0]; k++)
        ck_assert_msg(dlsym(handle, internal[k]) == NULL, "%s is exported", internal[k]);
}
END_TEST

START_TEST(test_plugin_so_probe_gives_this_machines_verdict)
{
    const topoml_backend_v1 *b = NULL;
    uint32_t v = TOPOML_ABI_VERSION;
    void *state = NULL;
    avx512_cpu_regs regs;
    char why[128] = "", want[128] = "";
    const topoml_capability_v1 *caps = NULL;
    uint32_t n_caps = 0;

    ck_assert_int_eq(entry(&v, &host, &b), TOPOML_OK);
    ck_assert_int_eq(b->create(&host, &state), TOPOML_OK);
    avx512_gate_read(&avx512_cpu_hardware, &regs);
    int expect = avx512_gate_decode(&regs, NULL, want, sizeof want);
    int got = b->probe(state, why, sizeof why);
    ck_assert_int_eq(got, expect);
    ck_assert_str_eq(why, want);
    ck_assert(got == TOPOML_OK || got == TOPOML_E_UNSUPPORTED);
    fprintf(stderr, "probe on this machine: %s: %s\n", got == TOPOML_OK ? "ok" : "unsupported",
            why);

    ck_assert_int_eq(b->capabilities(state, &caps, &n_caps), TOPOML_OK);
    ck_assert_uint_eq(n_caps, 2);
    for (uint32_t c = 0; c < n_caps; c++) {
        ck_assert_uint_ge(caps[c].struct_size, sizeof(topoml_capability_v1));
        ck_assert_uint_eq(caps[c].op, c == 0 ? TOPOML_OP_DISTANCES : TOPOML_OP_EDGES);
        ck_assert_uint_eq(caps[c].dtypes, 3);
        ck_assert_uint_eq(caps[c].metrics,
                          (1u << TOPOML_METRIC_EUCLIDEAN) | (1u << TOPOML_METRIC_SQEUCLIDEAN));
        ck_assert_uint_eq(caps[c].inputs, 1u << TOPOML_INPUT_POINTS);
        ck_assert_int_eq(strncmp(caps[c].device, "cpu: ", 5), 0);
        ck_assert_ptr_nonnull(strstr(caps[c].schedule, "tile_f32=6x48"));
        ck_assert_ptr_nonnull(strstr(caps[c].schedule, "tile_f64=6x24"));
    }
    fprintf(stderr, "device: %s\nschedule: %s\n", caps[0].device, caps[0].schedule);
    b->destroy(state);
}
END_TEST

START_TEST(test_plugin_so_ops_run_or_refuse_with_the_probe_reason)
{
    const topoml_backend_v1 *b = NULL;
    uint32_t v = TOPOML_ABI_VERSION;
    void *state = NULL;
    char why[128] = "", err[256];
    topoml_call_v1 call;
    topoml_input_v1 in;
    test_heap heap;
    uint64_t seed = 12, n = 203, dim = 7;

    ck_assert_int_eq(entry(&v, &host, &b), TOPOML_OK);
    ck_assert_int_eq(b->create(&host, &state), TOPOML_OK);
    int verdict = b->probe(state, why, sizeof why);
    for (uint32_t t = 0; t < 2; t++)
        for (uint32_t m = 0; m < 2; m++) {
            uint32_t metric = m ? TOPOML_METRIC_EUCLIDEAN : TOPOML_METRIC_SQEUCLIDEAN;
            size_t elem = t == TOPOML_F32 ? 4 : 8;
            void *p = random_points(&seed, t, n, dim, -2, 2);
            void *out = malloc(n * (n - 1) / 2 * elem);
            topoml_edge *e = NULL;
            uint64_t ne = 0;

            make_call(&call, &heap, err, sizeof err);
            make_input(&in, t, metric, n, dim, p);
            int ds = b->distances(state, &call, &in, out);
            int es = b->edges(state, &call, &in, 1.5, &e, &ne);
            if (verdict != TOPOML_OK) {
                ck_assert_int_eq(ds, TOPOML_E_UNSUPPORTED);
                ck_assert_int_eq(es, TOPOML_E_UNSUPPORTED);
                ck_assert_ptr_nonnull(strstr(err, why));
                ck_assert_ptr_null(e);
            } else {
                ck_assert_int_eq(ds, TOPOML_OK);
                ck_assert_int_eq(es, TOPOML_OK);
                uint64_t count = 0;
                for (uint64_t i = 1; i < n; i++)
                    for (uint64_t j = 0; j < i; j++) {
                        double got = t == TOPOML_F32 ? ((float *)out)[condensed(i, j)]
                                                     : ((double *)out)[condensed(i, j)];
                        double ref = scalar_point_dist(t, metric, p, dim, i, j);
                        EXPECT(within_bound(t, dim, got, ref), "line %d", __LINE__);
                        count += got <= 1.5;
                    }
                ck_assert_uint_eq(ne, count);
                for (uint64_t k = 0; k < ne; k++) {
                    EXPECT(e[k].i < e[k].j && e[k].j < n && e[k].d <= 1.5, "line %d", __LINE__);
                    double d = t == TOPOML_F32 ? ((float *)out)[condensed(e[k].j, e[k].i)]
                                               : ((double *)out)[condensed(e[k].j, e[k].i)];
                    EXPECT(e[k].d == d, "line %d", __LINE__);
                    if (k > 0)
                        EXPECT(e[k - 1].d < e[k].d ||
                                   (e[k - 1].d == e[k].d &&
                                    (e[k - 1].i < e[k].i ||
                                     (e[k - 1].i == e[k].i && e[k - 1].j < e[k].j))),
                               "line %d", __LINE__);
                }
                call.free(call.host_data, e);
            }
            ck_assert_int_eq(heap.live, 0);
            free(out);
            free(p);
        }
    b->destroy(state);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("asm-avx512 plugin .so");
    TCase *tc = tcase_create("so");
    tcase_add_checked_fixture(tc, open_plugin, close_plugin);
    tcase_add_test(tc, test_plugin_so_negotiates_abi_v1);
    tcase_add_test(tc, test_plugin_so_exports_only_the_entry_symbol);
    tcase_add_test(tc, test_plugin_so_probe_gives_this_machines_verdict);
    tcase_add_test(tc, test_plugin_so_ops_run_or_refuse_with_the_probe_reason);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
