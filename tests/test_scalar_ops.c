/*
 * test_scalar_ops.c — the scalar reference's simple ops through the public
 * API: distances against hand-computed values for every metric and dtype,
 * threshold edges and their order, H0 by union-find, limits, cancellation.
 * (Distances against numpy and H0 against Ripser run in tests/cli/.)
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "topoml/topoml.h"

#include "check_run.h"

static topoml_context *ctx_new(void)
{
    topoml_context_options o = {.struct_size = sizeof o,
                                .flags = TOPOML_CTX_NO_ENV | TOPOML_CTX_NO_PLUGINS};
    topoml_context *ctx = NULL;
    ck_assert_int_eq(topoml_context_new(&ctx, &o), TOPOML_OK);
    return ctx;
}

static topoml_data *points(topoml_context *ctx, uint64_t n, uint64_t dim, const double *xy)
{
    topoml_data *d = NULL;
    ck_assert_int_eq(topoml_data_from_points(ctx, &d, n, dim, xy), TOPOML_OK);
    return d;
}

/* (0,0), (3,4), (1,1): condensed order d(1,0), d(2,0), d(2,1). */
static const double tri[] = {0, 0, 3, 4, 1, 1};

START_TEST(test_distances_match_hand_values_for_every_metric)
{
    const double want[5][3] = {
        {5.0, sqrt(2.0), sqrt(13.0)},                  /* euclidean */
        {25.0, 2.0, 13.0},                             /* sqeuclidean */
        {7.0, 2.0, 5.0},                               /* manhattan */
        {4.0, 1.0, 3.0},                               /* chebyshev */
        {1.0, 1.0, 1.0 - 7.0 / (5.0 * sqrt(2.0))},     /* cosine; zero vector -> 1 */
    };
    topoml_context *ctx = ctx_new();
    topoml_data *d = points(ctx, 3, 2, tri);
    for (int m = 0; m < TOPOML_METRIC_COUNT; m++) {
        for (int t = 0; t < TOPOML_DTYPE_COUNT; t++) {
            void *out = NULL;
            uint64_t n = 0;
            ck_assert_int_eq(topoml_distances(ctx, d, (topoml_metric)m, (topoml_dtype)t, &out, &n),
                             TOPOML_OK);
            ck_assert_uint_eq(n, 3);
            for (int k = 0; k < 3; k++) {
                double got = t == TOPOML_F32 ? ((float *)out)[k] : ((double *)out)[k];
                double tol = t == TOPOML_F32 ? 1e-6 * fmax(1.0, want[m][k]) : 1e-15 * 8;
                ck_assert_msg(fabs(got - want[m][k]) <= tol, "metric %d dtype %d pair %d: %.17g vs %.17g",
                              m, t, k, got, want[m][k]);
            }
            topoml_free(ctx, out);
        }
    }
    topoml_data_free(ctx, d);
    topoml_context_free(ctx);
}
END_TEST

START_TEST(test_distances_refuse_distance_matrix_input)
{
    topoml_context *ctx = ctx_new();
    const double cond[] = {1.0};
    topoml_data *d = NULL;
    ck_assert_int_eq(topoml_data_from_condensed(ctx, &d, 2, cond), TOPOML_OK);
    void *out = NULL;
    uint64_t n;
    ck_assert_int_eq(topoml_distances(ctx, d, TOPOML_METRIC_EUCLIDEAN, TOPOML_F64, &out, &n),
                     TOPOML_E_INVALID);
    ck_assert_ptr_nonnull(strstr(topoml_errmsg(ctx), "point cloud"));
    topoml_data_free(ctx, d);
    topoml_context_free(ctx);
}
END_TEST

START_TEST(test_distances_respect_memory_limit)
{
    topoml_context *ctx = ctx_new();
    double *xy = calloc(2000, sizeof *xy);
    topoml_data *d = points(ctx, 1000, 2, xy);
    topoml_set_max_memory(ctx, 1 << 20); /* 1000 points need ~4 MB */
    void *out = NULL;
    uint64_t n;
    ck_assert_int_eq(topoml_distances(ctx, d, TOPOML_METRIC_EUCLIDEAN, TOPOML_F64, &out, &n),
                     TOPOML_E_LIMIT);
    ck_assert_ptr_nonnull(strstr(topoml_errmsg(ctx), "memory limit"));
    ck_assert_ptr_null(out);
    free(xy);
    topoml_data_free(ctx, d);
    topoml_context_free(ctx);
}
END_TEST

static int cancel_at_once(void *user, const char *stage, uint64_t done, uint64_t total)
{
    (void)stage;
    (void)done;
    (void)total;
    ++*(int *)user;
    return 1;
}

START_TEST(test_distances_can_be_cancelled)
{
    topoml_context *ctx = ctx_new();
    double *xy = calloc(2 * 2000, sizeof *xy);
    topoml_data *d = points(ctx, 2000, 2, xy);
    int calls = 0;
    topoml_set_progress(ctx, cancel_at_once, &calls);
    void *out = NULL;
    uint64_t n;
    ck_assert_int_eq(topoml_distances(ctx, d, TOPOML_METRIC_EUCLIDEAN, TOPOML_F64, &out, &n),
                     TOPOML_E_CANCELLED);
    ck_assert_int_eq(calls, 1);
    ck_assert_ptr_null(out);
    free(xy);
    topoml_data_free(ctx, d);
    topoml_context_free(ctx);
}
END_TEST

START_TEST(test_edges_are_sorted_by_distance_then_indices)
{
    /* A unit square plus its centre: many ties. */
    const double sq[] = {0, 0, 1, 0, 0, 1, 1, 1, 0.5, 0.5};
    topoml_context *ctx = ctx_new();
    topoml_data *d = points(ctx, 5, 2, sq);
    topoml_edge *e = NULL;
    uint64_t n = 0;
    ck_assert_int_eq(topoml_edges(ctx, d, TOPOML_METRIC_EUCLIDEAN, 1.0, &e, &n), TOPOML_OK);
    ck_assert_uint_eq(n, 8); /* 4 to the centre (0.707) and 4 sides (1.0) */
    const uint32_t want[8][2] = {{0, 4}, {1, 4}, {2, 4}, {3, 4}, {0, 1}, {0, 2}, {1, 3}, {2, 3}};
    for (int k = 0; k < 8; k++) {
        ck_assert_uint_eq(e[k].i, want[k][0]);
        ck_assert_uint_eq(e[k].j, want[k][1]);
    }
    ck_assert_double_eq_tol(e[0].d, sqrt(0.5), 1e-15);
    ck_assert_double_eq(e[7].d, 1.0); /* d == threshold is kept */
    topoml_free(ctx, e);
    ck_assert_int_eq(topoml_edges(ctx, d, TOPOML_METRIC_EUCLIDEAN, 0.5, &e, &n), TOPOML_OK);
    ck_assert_uint_eq(n, 0);
    topoml_free(ctx, e);
    ck_assert_int_eq(topoml_edges(ctx, d, TOPOML_METRIC_EUCLIDEAN, NAN, &e, &n),
                     TOPOML_E_INVALID);
    topoml_data_free(ctx, d);
    topoml_context_free(ctx);
}
END_TEST

static topoml_barcode *h0(topoml_context *ctx, topoml_data *d, double threshold)
{
    topoml_rips_options o;
    topoml_rips_options_init(&o);
    o.max_dim = 0;
    o.threshold = threshold;
    topoml_barcode *bc = NULL;
    ck_assert_int_eq(topoml_barcode_compute(ctx, &bc, d, &o), TOPOML_OK);
    return bc;
}

START_TEST(test_h0_of_points_on_a_line)
{
    const double x[] = {0, 1, 3, 6, 6}; /* the duplicate dies at 0: not reported */
    topoml_context *ctx = ctx_new();
    topoml_data *d = points(ctx, 5, 1, x);
    topoml_barcode *bc = h0(ctx, d, INFINITY);
    uint64_t n;
    const topoml_interval *v = topoml_barcode_intervals(bc, &n);
    ck_assert_uint_eq(n, 4);
    const double deaths[] = {1, 2, 3, INFINITY};
    for (int k = 0; k < 4; k++) {
        ck_assert_uint_eq(v[k].dim, 0);
        ck_assert_double_eq(v[k].birth, 0.0);
        ck_assert_double_eq(v[k].death, deaths[k]);
    }
    topoml_barcode_free(bc);
    /* Components alive at the threshold are infinite. */
    bc = h0(ctx, d, 2.5);
    v = topoml_barcode_intervals(bc, &n);
    ck_assert_uint_eq(n, 4);
    ck_assert_double_eq(v[1].death, 2.0);
    ck_assert(isinf(v[2].death) && isinf(v[3].death));
    topoml_barcode_free(bc);
    topoml_data_free(ctx, d);
    topoml_context_free(ctx);
}
END_TEST

/* (No points is refused when the data set is made: test_io.c.) */
START_TEST(test_h0_of_one_and_two_points)
{
    topoml_context *ctx = ctx_new();
    const double x[] = {0.0, 2.0};
    for (uint64_t npts = 1; npts <= 2; npts++) {
        topoml_data *d = points(ctx, npts, 1, x);
        topoml_barcode *bc = h0(ctx, d, INFINITY);
        uint64_t n;
        const topoml_interval *v = topoml_barcode_intervals(bc, &n);
        ck_assert_uint_eq(n, npts);
        if (npts == 1)
            ck_assert(isinf(v[0].death));
        if (npts == 2) {
            ck_assert_double_eq(v[0].death, 2.0);
            ck_assert(isinf(v[1].death));
        }
        topoml_barcode_free(bc);
        topoml_data_free(ctx, d);
    }
    topoml_context_free(ctx);
}
END_TEST

START_TEST(test_h0_from_sparse_edges)
{
    topoml_context *ctx = ctx_new();
    const topoml_edge e[] = {{0.5, 0, 1}, {0.25, 2, 3}, {2.0, 1, 2}};
    topoml_data *d = NULL;
    ck_assert_int_eq(topoml_data_from_edges(ctx, &d, 5, 3, e), TOPOML_OK);
    topoml_barcode *bc = h0(ctx, d, INFINITY);
    uint64_t n;
    const topoml_interval *v = topoml_barcode_intervals(bc, &n);
    /* Vertex 4 is isolated: two components survive. */
    ck_assert_uint_eq(n, 5);
    ck_assert_double_eq(v[0].death, 0.25);
    ck_assert_double_eq(v[1].death, 0.5);
    ck_assert_double_eq(v[2].death, 2.0);
    ck_assert(isinf(v[3].death) && isinf(v[4].death));
    topoml_barcode_free(bc);
    topoml_data_free(ctx, d);
    topoml_context_free(ctx);
}
END_TEST

START_TEST(test_barcode_rejects_bad_options)
{
    topoml_context *ctx = ctx_new();
    topoml_data *d = points(ctx, 3, 2, tri);
    topoml_rips_options o;
    topoml_barcode *bc = NULL;
    topoml_rips_options_init(&o);
    o.modulus = 4;
    ck_assert_int_eq(topoml_barcode_compute(ctx, &bc, d, &o), TOPOML_E_INVALID);
    ck_assert_ptr_nonnull(strstr(topoml_errmsg(ctx), "not a prime"));
    topoml_rips_options_init(&o);
    o.threshold = -1;
    ck_assert_int_eq(topoml_barcode_compute(ctx, &bc, d, &o), TOPOML_E_INVALID);
    topoml_rips_options_init(&o);
    o.threshold = NAN;
    ck_assert_int_eq(topoml_barcode_compute(ctx, &bc, d, &o), TOPOML_E_INVALID);
    ck_assert_ptr_null(bc);
    topoml_data_free(ctx, d);
    topoml_context_free(ctx);
}
END_TEST

START_TEST(test_barcode_writes_ripser_json_and_csv)
{
    const double x[] = {0, 1, 3};
    topoml_context *ctx = ctx_new();
    topoml_data *d = points(ctx, 3, 1, x);
    topoml_barcode *bc = h0(ctx, d, INFINITY);
    char buf[512];
    const struct {
        topoml_output style;
        const char *want;
    } cases[] = {
        {TOPOML_OUTPUT_RIPSER, "persistence intervals in dim 0:\n [0,1)\n [0,2)\n [0, )\n"},
        {TOPOML_OUTPUT_JSON,
         "{\"max_dim\":0,\"complete\":true,\"input\":{\"format\":null,\"points\":3},"
         "\"threshold\":null,\"dims\":[{\"dim\":0,\"intervals\":[[0,1],[0,2],[0,"
         "null]],\"cut_off\":0}]}\n"},
        {TOPOML_OUTPUT_CSV, "dim,birth,death\n0,0,1\n0,0,2\n0,0,inf\n"},
    };
    for (size_t i = 0; i < 3; i++) {
        FILE *f = fmemopen(buf, sizeof buf, "w");
        ck_assert_int_eq(topoml_barcode_write(ctx, bc, f, cases[i].style, 0), TOPOML_OK);
        fclose(f);
        ck_assert_str_eq(buf, cases[i].want);
    }
    topoml_barcode_free(bc);
    topoml_data_free(ctx, d);
    topoml_context_free(ctx);
}
END_TEST

START_TEST(test_data_stats_match_ripser_header_values)
{
    /* Points 0, 1, 3 on a line: values 1..3, enclosing radius 2 (from 1). */
    const double x[] = {0, 1, 3};
    topoml_context *ctx = ctx_new();
    topoml_data *d = points(ctx, 3, 1, x);
    topoml_stats st;
    ck_assert_int_eq(topoml_data_stats(ctx, d, TOPOML_METRIC_EUCLIDEAN, 2.0, &st), TOPOML_OK);
    ck_assert_double_eq(st.min, 1.0);
    ck_assert_double_eq(st.max_finite, 3.0);
    ck_assert_double_eq(st.enclosing_radius, 2.0);
    ck_assert_uint_eq(st.edges_within, 2);
    topoml_data_free(ctx, d);
    topoml_context_free(ctx);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("scalar_ops");
    TCase *tc = tcase_create("scalar_ops");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_distances_match_hand_values_for_every_metric);
    tcase_add_test(tc, test_distances_refuse_distance_matrix_input);
    tcase_add_test(tc, test_distances_respect_memory_limit);
    tcase_add_test(tc, test_distances_can_be_cancelled);
    tcase_add_test(tc, test_edges_are_sorted_by_distance_then_indices);
    tcase_add_test(tc, test_h0_of_points_on_a_line);
    tcase_add_test(tc, test_h0_of_one_and_two_points);
    tcase_add_test(tc, test_h0_from_sparse_edges);
    tcase_add_test(tc, test_barcode_rejects_bad_options);
    tcase_add_test(tc, test_barcode_writes_ripser_json_and_csv);
    tcase_add_test(tc, test_data_stats_match_ripser_header_values);
    suite_add_tcase(s, tc);
    return topoml_check_run(s);
}
