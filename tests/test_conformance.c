/*
 * test_conformance.c — the pieces of the conformance suite on their own:
 * the tolerances, the comparison of distances, edges and diagrams (with the
 * tie rule and the quality share), the case list parser and its expansion,
 * and the child-process isolation that turns a crash or a hang into a
 * result. Whole runs against real plugins are in tests/cli/.
 */
#include <check.h>
#include <float.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conformance.h"
#include "diagrams/diagram_compare.h"

#include "check_run.h"

static topoml_context *ctx_new(void)
{
    topoml_context_options o = {.struct_size = sizeof o,
                                .flags = TOPOML_CTX_NO_ENV | TOPOML_CTX_NO_PLUGINS};
    topoml_context *ctx = NULL;
    ck_assert_int_eq(topoml_context_new(&ctx, &o), TOPOML_OK);
    return ctx;
}

static tc_case points_case(uint32_t dtype, uint32_t metric)
{
    tc_case c;
    memset(&c, 0, sizeof c);
    c.as = TOPOML_INPUT_POINTS;
    c.dtype = dtype;
    c.metric = metric;
    c.tol_ulps = 4;
    return c;
}

START_TEST(test_tolerance_follows_dtype_dimension_and_metric)
{
    tc_case c = points_case(TOPOML_F64, TOPOML_METRIC_EUCLIDEAN);
    tc_tolerance t = tc_distance_tolerance(&c, 3);
    ck_assert_double_eq(t.rel, 4 * 5 * DBL_EPSILON);
    ck_assert_double_eq(t.abs, 0);
    c.dtype = TOPOML_F32;
    t = tc_distance_tolerance(&c, 254);
    ck_assert_double_eq(t.rel, 4 * 256 * (double)FLT_EPSILON);
    c.metric = TOPOML_METRIC_COSINE;
    t = tc_distance_tolerance(&c, 254);
    ck_assert_double_eq(t.abs, t.rel);
    /* Given the distances themselves, there is nothing to round. */
    c.as = TOPOML_INPUT_CONDENSED;
    t = tc_distance_tolerance(&c, 254);
    ck_assert_double_eq(t.rel, 0);
    ck_assert_double_eq(tc_barcode_tolerance(&c, 0, 2.0), 4 * (double)FLT_EPSILON * 2.0);
}
END_TEST

START_TEST(test_distances_within_a_tenth_pass_within_bound_warn_beyond_fail)
{
    double ref[3] = {1.0, 2.0, 4.0};
    tc_tolerance tol = {1e-10, 0};
    double got[3] = {1.0, 2.0, 4.0};
    tc_verdict v;
    memset(&v, 0, sizeof v);
    tc_compare_distances(ref, got, TOPOML_F64, 3, tol, &v);
    ck_assert_int_eq(v.result, TC_PASS);
    got[2] = 4.0 * (1 + 0.05e-10);
    tc_compare_distances(ref, got, TOPOML_F64, 3, tol, &v);
    ck_assert_int_eq(v.result, TC_PASS);
    got[2] = 4.0 * (1 + 0.5e-10);
    tc_compare_distances(ref, got, TOPOML_F64, 3, tol, &v);
    ck_assert_int_eq(v.result, TC_QUALITY_WARNING);
    got[2] = 4.0 * (1 + 2e-10);
    tc_compare_distances(ref, got, TOPOML_F64, 3, tol, &v);
    ck_assert_int_eq(v.result, TC_FAIL);
    ck_assert_ptr_nonnull(strstr(v.detail, "d(2,1)")); /* index 2 is the pair (2,1) */
    got[2] = NAN;
    tc_compare_distances(ref, got, TOPOML_F64, 3, tol, &v);
    ck_assert_int_eq(v.result, TC_FAIL);
    float got32[3] = {1.0f, 2.0f, 4.0f};
    tc_compare_distances(ref, got32, TOPOML_F32, 3, tol, &v);
    ck_assert_int_eq(v.result, TC_PASS);
}
END_TEST

START_TEST(test_a_last_bit_difference_never_warns)
{
    /* With a bound of 3 ulps, a 1-ulp difference uses a third of it, but it
     * is the smallest difference there is: PASS. Two ulps warn. */
    double ref[1] = {1.5};
    tc_tolerance tol = {3 * DBL_EPSILON, 0};
    double got[1] = {nextafter(1.5, 2.0)};
    tc_verdict v;
    memset(&v, 0, sizeof v);
    tc_compare_distances(ref, got, TOPOML_F64, 1, tol, &v);
    ck_assert_int_eq(v.result, TC_PASS);
    ck_assert_double_gt(v.error, 0);
    got[0] = nextafter(got[0], 2.0);
    tc_compare_distances(ref, got, TOPOML_F64, 1, tol, &v);
    ck_assert_int_eq(v.result, TC_QUALITY_WARNING);
    ck_assert_double_eq(tc_ulp(1.5, TOPOML_F64), DBL_EPSILON);
    ck_assert_double_eq(tc_ulp(1.5f, TOPOML_F32), (double)FLT_EPSILON);
}
END_TEST

/* Three points on a line at 0, 1, 3: d(1,0) = 1, d(2,0) = 3, d(2,1) = 2. */
static const double line_dist[3] = {1, 3, 2};

START_TEST(test_edges_must_match_in_set_and_order)
{
    topoml_edge ref[2] = {{1, 0, 1}, {2, 1, 2}};
    tc_tolerance tol = {1e-12, 0};
    tc_verdict v;
    memset(&v, 0, sizeof v);
    topoml_edge got[2] = {{1, 0, 1}, {2, 1, 2}};
    tc_compare_edges(line_dist, 3, ref, 2, got, 2, 2.5, tol, TOPOML_F64, &v);
    ck_assert_int_eq(v.result, TC_PASS);
    topoml_edge swapped[2] = {{2, 1, 2}, {1, 0, 1}};
    tc_compare_edges(line_dist, 3, ref, 2, swapped, 2, 2.5, tol, TOPOML_F64, &v);
    ck_assert_int_eq(v.result, TC_FAIL);
    ck_assert_ptr_nonnull(strstr(v.detail, "out of (d, i, j) order"));
    tc_compare_edges(line_dist, 3, ref, 2, got, 1, 2.5, tol, TOPOML_F64, &v);
    ck_assert_int_eq(v.result, TC_FAIL);
    ck_assert_ptr_nonnull(strstr(v.detail, "missing"));
    topoml_edge reversed[1] = {{1, 1, 0}};
    tc_compare_edges(line_dist, 3, ref, 1, reversed, 1, 1.5, tol, TOPOML_F64, &v);
    ck_assert_int_eq(v.result, TC_FAIL);
    topoml_edge off[2] = {{1, 0, 1}, {2.1, 1, 2}};
    tc_compare_edges(line_dist, 3, ref, 2, off, 2, 2.5, tol, TOPOML_F64, &v);
    ck_assert_int_eq(v.result, TC_FAIL);
    ck_assert_ptr_nonnull(strstr(v.detail, "reference distance"));
}
END_TEST

START_TEST(test_edges_at_the_threshold_may_be_in_or_out)
{
    /* Threshold exactly 2: the pair (1,2) at reference distance 2 is in the
     * reference list; a plugin whose distance came out one ulp above may
     * leave it out, and one whose came out below keeps it. Both pass with a
     * quality warning; the tie rule does not reach beyond the bound. */
    topoml_edge ref[2] = {{1, 0, 1}, {2, 1, 2}};
    tc_tolerance tol = {1e-12, 0};
    tc_verdict v;
    memset(&v, 0, sizeof v);
    tc_compare_edges(line_dist, 3, ref, 2, ref, 1, 2.0, tol, TOPOML_F64, &v);
    ck_assert_int_eq(v.result, TC_QUALITY_WARNING);
    ck_assert_ptr_nonnull(strstr(v.detail, "1 decided differently"));
    /* Threshold just below 2, within the bound: the plugin may include it. */
    double t = 2.0 * (1 - 1e-13);
    topoml_edge in[2] = {{1, 0, 1}, {t, 1, 2}};
    tc_compare_edges(line_dist, 3, ref, 1, in, 2, t, tol, TOPOML_F64, &v);
    ck_assert_int_eq(v.result, TC_QUALITY_WARNING);
    /* Well below: it may not. */
    t = 1.9;
    topoml_edge beyond[2] = {{1, 0, 1}, {1.9, 1, 2}};
    tc_compare_edges(line_dist, 3, ref, 1, beyond, 2, t, tol, TOPOML_F64, &v);
    ck_assert_int_eq(v.result, TC_FAIL);
    /* With the distances given (no tolerance), the list must be identical. */
    tc_tolerance exact = {0, 0};
    tc_compare_edges(line_dist, 3, ref, 2, ref, 1, 2.0, exact, TOPOML_F64, &v);
    ck_assert_int_eq(v.result, TC_FAIL);
}
END_TEST

static topoml_interval bar(uint32_t dim, double b, double d)
{
    return (topoml_interval){b, d, dim, 0};
}

START_TEST(test_gate_rejects_wrong_barcode)
{
    topoml_context *ctx = ctx_new();
    topoml_interval ref[4] = {bar(0, 0, 1), bar(0, 0, INFINITY), bar(1, 1, 3), bar(1, 2, 2.5)};
    tc_verdict v;
    memset(&v, 0, sizeof v);
    double tol = 1e-6;
    tc_compare_barcodes(ctx, ref, 4, ref, 4, 1, tol, tc_ulp(3.0, TOPOML_F64), &v);
    ck_assert_int_eq(v.result, TC_PASS);
    /* One bar shifted by more than the tolerance. */
    topoml_interval shifted[4] = {bar(0, 0, 1), bar(0, 0, INFINITY), bar(1, 1, 3.1),
                                  bar(1, 2, 2.5)};
    tc_compare_barcodes(ctx, ref, 4, shifted, 4, 1, tol, tc_ulp(3.0, TOPOML_F64), &v);
    ck_assert_int_eq(v.result, TC_FAIL);
    ck_assert_ptr_nonnull(strstr(v.detail, "H1: bottleneck distance"));
    /* Shifted by half the tolerance: passes, with a warning. */
    shifted[2].death = 3 + 0.5e-6;
    tc_compare_barcodes(ctx, ref, 4, shifted, 4, 1, tol, tc_ulp(3.0, TOPOML_F64), &v);
    ck_assert_int_eq(v.result, TC_QUALITY_WARNING);
    shifted[2].death = 3 + 0.05e-6;
    tc_compare_barcodes(ctx, ref, 4, shifted, 4, 1, tol, tc_ulp(3.0, TOPOML_F64), &v);
    ck_assert_int_eq(v.result, TC_PASS);
    /* A missing H1 bar. */
    tc_compare_barcodes(ctx, ref, 4, ref, 3, 1, tol, tc_ulp(3.0, TOPOML_F64), &v);
    ck_assert_int_eq(v.result, TC_FAIL);
    ck_assert_ptr_nonnull(strstr(v.detail, "H1: 1 bars longer"));
    /* A missing essential class. */
    topoml_interval no_inf[3] = {bar(0, 0, 1), bar(1, 1, 3), bar(1, 2, 2.5)};
    tc_compare_barcodes(ctx, ref, 4, no_inf, 3, 1, tol, tc_ulp(3.0, TOPOML_F64), &v);
    ck_assert_int_eq(v.result, TC_FAIL);
    ck_assert_ptr_nonnull(strstr(v.detail, "essential"));
    topoml_context_free(ctx);
}
END_TEST

START_TEST(test_short_extra_bars_are_noise_long_ones_are_not)
{
    topoml_context *ctx = ctx_new();
    topoml_interval ref[2] = {bar(0, 0, INFINITY), bar(1, 1, 3)};
    double tol = 1e-6;
    tc_verdict v;
    memset(&v, 0, sizeof v);
    /* A bar shorter than twice the tolerance can come from rounding ties. */
    topoml_interval noise[3] = {bar(0, 0, INFINITY), bar(1, 1, 3), bar(1, 2, 2 + 1e-7)};
    tc_compare_barcodes(ctx, ref, 2, noise, 3, 1, tol, tc_ulp(3.0, TOPOML_F64), &v);
    ck_assert(tc_result_ok(v.result));
    topoml_interval extra[3] = {bar(0, 0, INFINITY), bar(1, 1, 3), bar(1, 2, 2.5)};
    tc_compare_barcodes(ctx, ref, 2, extra, 3, 1, tol, tc_ulp(3.0, TOPOML_F64), &v);
    ck_assert_int_eq(v.result, TC_FAIL);
    topoml_context_free(ctx);
}
END_TEST

START_TEST(test_malformed_barcodes_fail)
{
    topoml_context *ctx = ctx_new();
    topoml_interval ref[2] = {bar(0, 0, INFINITY), bar(1, 1, 3)};
    tc_verdict v;
    memset(&v, 0, sizeof v);
    topoml_interval unordered[2] = {bar(1, 1, 3), bar(0, 0, INFINITY)};
    tc_compare_barcodes(ctx, ref, 2, unordered, 2, 1, 1e-9, tc_ulp(3.0, TOPOML_F64), &v);
    ck_assert_int_eq(v.result, TC_FAIL);
    topoml_interval zero[3] = {bar(0, 0, INFINITY), bar(1, 1, 3), bar(1, 2, 2)};
    tc_compare_barcodes(ctx, ref, 2, zero, 3, 1, 1e-9, tc_ulp(3.0, TOPOML_F64), &v);
    ck_assert_int_eq(v.result, TC_FAIL);
    ck_assert_ptr_nonnull(strstr(v.detail, "zero length"));
    topoml_interval too_high[3] = {bar(0, 0, INFINITY), bar(1, 1, 3), bar(2, 1, 3)};
    tc_compare_barcodes(ctx, ref, 2, too_high, 3, 1, 1e-9, tc_ulp(3.0, TOPOML_F64), &v);
    ck_assert_int_eq(v.result, TC_FAIL);
    topoml_interval nan_bar[2] = {bar(0, 0, INFINITY), bar(1, NAN, 3)};
    tc_compare_barcodes(ctx, ref, 2, nan_bar, 2, 1, 1e-9, tc_ulp(3.0, TOPOML_F64), &v);
    ck_assert_int_eq(v.result, TC_FAIL);
    topoml_context_free(ctx);
}
END_TEST

static char *write_temp(const char *text)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/topoml-cases-XXXXXX");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return path;
}

/* The one comparison of diagrams (core/src/diagrams/diagram_compare.c), which
 * run-time verification and the suite share, on seeded random diagrams:
 * order and zero-length bars do not matter; a shift within the tolerance
 * matches and one beyond it does not; a bar shorter than twice the
 * tolerance may come or go, a longer one may not; an essential class more
 * or less never matches. */
START_TEST(test_shared_diagram_comparison_follows_the_rule)
{
    topoml_context *ctx = ctx_new();
    const double tol = 1e-3;
    srand(11);
    for (int round = 0; round < 50; round++) {
        topoml_interval ref[40], got[42];
        uint64_t n = 0;
        for (; n < 30; n++) {
            double b = (double)rand() / RAND_MAX, len = 0.01 + (double)rand() / RAND_MAX;
            ref[n] = (topoml_interval){.dim = (uint32_t)(n % 2), .birth = b, .death = b + len};
        }
        ref[n++] = (topoml_interval){.dim = 0, .birth = 0, .death = INFINITY};
        tm_dim_comparison c;
        for (uint32_t d = 0; d < 2; d++) {
            /* reversed, with a bar of zero length added */
            for (uint64_t k = 0; k < n; k++)
                got[k] = ref[n - 1 - k];
            got[n] = (topoml_interval){.dim = d, .birth = 0.5, .death = 0.5};
            ck_assert_int_eq(tm_compare_dimension(ctx, ref, n, got, n + 1, d, tol, &c), TOPOML_OK);
            ck_assert(tm_dimension_matches(&c, tol));
            ck_assert_double_eq(c.bottleneck, 0);
            ck_assert_uint_eq(c.n_ref, c.n_got);
        }
        uint64_t k = (uint64_t)rand() % (n - 1);
        uint32_t d = ref[k].dim;
        const double shifts[] = {0.5 * tol, 2 * tol};
        for (int s = 0; s < 2; s++) {
            memcpy(got, ref, n * sizeof *ref);
            got[k].death += shifts[s];
            ck_assert_int_eq(tm_compare_dimension(ctx, ref, n, got, n, d, tol, &c), TOPOML_OK);
            ck_assert_msg(tm_dimension_matches(&c, tol) == (s == 0), "shift %g: bottleneck %g",
                          shifts[s], c.bottleneck);
        }
        const double extra[] = {1.5 * tol, 3 * tol};
        for (int s = 0; s < 2; s++) {
            memcpy(got, ref, n * sizeof *ref);
            got[n] = (topoml_interval){.dim = d, .birth = 0.25, .death = 0.25 + extra[s]};
            ck_assert_int_eq(tm_compare_dimension(ctx, ref, n, got, n + 1, d, tol, &c), TOPOML_OK);
            ck_assert_msg(tm_dimension_matches(&c, tol) == (s == 0), "extra bar of %g",
                          extra[s]);
        }
        memcpy(got, ref, n * sizeof *ref);
        got[n] = (topoml_interval){.dim = 0, .birth = 0.1, .death = INFINITY};
        ck_assert_int_eq(tm_compare_dimension(ctx, ref, n, got, n + 1, 0, tol, &c), TOPOML_OK);
        ck_assert(!tm_dimension_matches(&c, tol));
        ck_assert_uint_eq(c.essential_got, c.essential_ref + 1);
    }
    topoml_context_free(ctx);
}
END_TEST

START_TEST(test_case_lists_expand_into_named_cases)
{
    const char *text = "suite_version: \"7\"\n"
                       "tolerance: {ulps: 8}\n"
                       "cases:\n"
                       "  - name: d\n"
                       "    tier: quick\n"
                       "    op: distances\n"
                       "    input: {generator: uniform, seed: 1, n: 5, dim: 2}\n"
                       "    params: {metric: [euclidean, cosine], dtype: [f64, f32]}\n"
                       "  - name: r\n"
                       "    op: rips\n"
                       "    input: {generator: circle, seed: 2, n: 9, dim: 2, as: condensed}\n"
                       "    params: {max_dim: 2, modulus: 3, threshold: inf}\n"
                       "    tolerance: {ulps: 2}\n";
    char *path = write_temp(text);
    tc_suite s;
    char err[512];
    ck_assert_msg(tc_suite_load(&s, path, err, sizeof err), "%s", err);
    unlink(path);
    ck_assert_str_eq(s.version, "7");
    ck_assert_uint_eq(s.n_cases, 5);
    ck_assert_str_eq(s.cases[0].name, "d/euclidean/f64");
    ck_assert_str_eq(s.cases[3].name, "d/cosine/f32");
    ck_assert_uint_eq(s.cases[3].metric, TOPOML_METRIC_COSINE);
    ck_assert_uint_eq(s.cases[3].dtype, TOPOML_F32);
    ck_assert_double_eq(s.cases[0].tol_ulps, 8);
    ck_assert_str_eq(s.cases[4].name, "r");
    ck_assert_double_eq(s.cases[4].tol_ulps, 2);
    ck_assert(isinf(s.cases[4].threshold));
    ck_assert_uint_eq(s.cases[4].as, TOPOML_INPUT_CONDENSED);
    ck_assert(tc_case_selected(&s.cases[0], TC_TIER_QUICK, NULL, 0));
    ck_assert(!tc_case_selected(&s.cases[4], TC_TIER_QUICK, NULL, 0));
    ck_assert(tc_case_selected(&s.cases[4], TC_TIER_FULL, NULL, 0));
    char *globs[] = {"d/*/f32"};
    ck_assert(tc_case_selected(&s.cases[1], TC_TIER_FULL, globs, 1));
    ck_assert(!tc_case_selected(&s.cases[0], TC_TIER_FULL, globs, 1));
    tc_suite_free(&s);
}
END_TEST

START_TEST(test_case_list_errors_name_line_and_column)
{
    const char *bad[][2] = {
        {"suite_version: 1\ncases:\n  - name: a\n    op: rips\n    input: {generator: circle, "
         "n: 4, dim: 2, colour: red}\n",
         ":5:"},
        {"suite_version: 1\ncases:\n  - name: a\n    op: sorting\n", ":4:"},
        {"cases: []\n", "no suite_version"},
        {"suite_version: 1\ncases:\n  - name: a\n    op: h0\n    input: {generator: uniform, n: "
         "4, dim: 2}\n  - name: a\n    op: h0\n    input: {generator: uniform, n: 4, dim: 2}\n",
         "used twice"},
        {"suite_version: 1\ncases:\n  - name: a\n    op: h0\n    input: {generator: uniform, n: "
         "4, dim: 2, radius: [1, 2]}\n",
         "cannot be a list"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *path = write_temp(bad[i][0]);
        tc_suite s;
        char err[512];
        ck_assert_msg(!tc_suite_load(&s, path, err, sizeof err), "case list %zu accepted", i);
        ck_assert_msg(strstr(err, bad[i][1]), "'%s' lacks '%s'", err, bad[i][1]);
        unlink(path);
    }
}
END_TEST

static int answer_then_exit(int fd, void *arg)
{
    (void)arg;
    return write(fd, "hello", 5) == 5 ? 0 : 1;
}

static int crash(int fd, void *arg)
{
    (void)fd;
    (void)arg;
    raise(SIGSEGV);
    return 0;
}

static int hang(int fd, void *arg)
{
    (void)fd;
    (void)arg;
    for (;;)
        pause();
    return 0;
}

START_TEST(test_isolation_turns_crash_and_hang_into_results)
{
    tc_child ch;
    char err[128];
    ck_assert(tc_isolate(answer_then_exit, NULL, 10, &ch, err, sizeof err));
    ck_assert_int_eq(ch.end, TC_CHILD_EXITED);
    ck_assert_int_eq(ch.code, 0);
    ck_assert_uint_eq(ch.len, 5);
    ck_assert_int_eq(memcmp(ch.data, "hello", 5), 0);
    free(ch.data);
    ck_assert(tc_isolate(crash, NULL, 10, &ch, err, sizeof err));
    ck_assert_int_eq(ch.end, TC_CHILD_SIGNALED);
    ck_assert_int_eq(ch.code, SIGSEGV);
    free(ch.data);
    ck_assert(tc_isolate(hang, NULL, 0.3, &ch, err, sizeof err));
    ck_assert_int_eq(ch.end, TC_CHILD_TIMED_OUT);
    ck_assert(ch.seconds < 5);
    free(ch.data);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("conformance");
    TCase *tc = tcase_create("conformance");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_tolerance_follows_dtype_dimension_and_metric);
    tcase_add_test(tc, test_distances_within_a_tenth_pass_within_bound_warn_beyond_fail);
    tcase_add_test(tc, test_a_last_bit_difference_never_warns);
    tcase_add_test(tc, test_edges_must_match_in_set_and_order);
    tcase_add_test(tc, test_edges_at_the_threshold_may_be_in_or_out);
    tcase_add_test(tc, test_gate_rejects_wrong_barcode);
    tcase_add_test(tc, test_short_extra_bars_are_noise_long_ones_are_not);
    tcase_add_test(tc, test_malformed_barcodes_fail);
    tcase_add_test(tc, test_shared_diagram_comparison_follows_the_rule);
    tcase_add_test(tc, test_case_lists_expand_into_named_cases);
    tcase_add_test(tc, test_case_list_errors_name_line_and_column);
    tcase_add_test(tc, test_isolation_turns_crash_and_hang_into_results);
    suite_add_tcase(s, tc);
    return topoml_check_run(s);
}
