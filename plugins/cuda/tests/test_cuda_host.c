/*
 * test_cuda_host.c — the CUDA backend's host-side logic, which needs no GPU:
 * condensed-index arithmetic, the banding of the distance output, filtering
 * condensed and sparse inputs into edges, H0 by union-find, input checks and
 * the memory limit. (Check unit tests.)
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"

static char err[256];
static topoml_call_v1 call;
static tmc_ctx ctx;

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

static void setup(void)
{
    memset(&call, 0, sizeof call);
    call.struct_size = sizeof call;
    call.alloc = h_alloc;
    call.realloc = h_realloc;
    call.free = h_free;
    call.error = err;
    call.error_size = sizeof err;
    call.device = -1;
    err[0] = '\0';
    memset(&ctx, 0, sizeof ctx);
    ctx.call = &call;
}

static topoml_input_v1 condensed(uint64_t n, uint32_t dtype, const void *data)
{
    topoml_input_v1 in;
    memset(&in, 0, sizeof in);
    in.struct_size = sizeof in;
    in.kind = TOPOML_INPUT_CONDENSED;
    in.n = n;
    in.dtype = dtype;
    in.data = data;
    return in;
}

START_TEST(test_triangular_root_inverts_triangular_numbers)
{
    for (uint64_t t = 0; t < 200000; t++) {
        uint64_t r = tmc_triangular_root(t);
        ck_assert_uint_le(r * (r + 1) / 2, t);
        ck_assert_uint_gt((r + 1) * (r + 2) / 2, t);
    }
    /* Near the top of what a condensed index of 2^32 points reaches, where
     * the double square root is no longer exact. */
    for (uint64_t r = (1ull << 32) - 5; r < (1ull << 32) + 5; r++) {
        uint64_t t = tmc_triangle(r);
        ck_assert_uint_eq(tmc_triangular_root(t), r);
        ck_assert_uint_eq(tmc_triangular_root(t - 1), r - 1);
        ck_assert_uint_eq(tmc_triangular_root(t + r), r);
    }
}
END_TEST

START_TEST(test_row_start_is_the_condensed_offset)
{
    ck_assert_uint_eq(tmc_row_start(0), 0);
    ck_assert_uint_eq(tmc_row_start(1), 0);
    ck_assert_uint_eq(tmc_row_start(2), 1);
    ck_assert_uint_eq(tmc_row_start(5), 10);
    /* Entry (i, j) at row_start(i) + j, and condensed entry k in row
     * triangular_root(k) + 1. */
    for (uint64_t k = 0; k < 5000; k++) {
        uint64_t i = tmc_triangular_root(k) + 1, j = k - tmc_row_start(i);
        ck_assert_uint_lt(j, i);
    }
}
END_TEST

START_TEST(test_bands_cover_all_rows_within_the_byte_limit)
{
    const uint64_t ns[] = {2, 3, 64, 65, 127, 128, 129, 1000, 4097, 65536};
    const uint64_t tiles[] = {64, 128};
    const uint64_t limits[] = {1, 4096, 1u << 20, 1ull << 28, 1ull << 40};
    for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++)
        for (size_t b = 0; b < 2; b++)
            for (size_t c = 0; c < sizeof limits / sizeof limits[0]; c++) {
                uint64_t n = ns[a], tile = tiles[b], rows = (n + tile - 1) / tile;
                uint64_t row = 0, covered = 0;
                while (row < rows) {
                    uint64_t end = tmc_band_end(n, tile, row, limits[c], 4);
                    ck_assert_uint_gt(end, row);
                    ck_assert_uint_le(end, rows);
                    uint64_t first = tmc_row_start(row * tile);
                    uint64_t last = tmc_row_start(end * tile < n ? end * tile : n);
                    ck_assert_uint_eq(first, covered);
                    if (end > row + 1) /* more than one tile row: must fit */
                        ck_assert_uint_le((last - first) * 4, limits[c]);
                    covered = last;
                    row = end;
                }
                ck_assert_uint_eq(covered, tmc_row_start(n));
            }
}
END_TEST

START_TEST(test_condensed_edges_are_filtered_in_matrix_order)
{
    setup();
    /* d(1,0)=1, d(2,0)=3, d(2,1)=2, d(3,0)=0.5, d(3,1)=4, d(3,2)=2 */
    const double d[6] = {1, 3, 2, 0.5, 4, 2};
    topoml_input_v1 in = condensed(4, TOPOML_F64, d);
    topoml_edge *e = NULL;
    uint64_t m = 0;
    ck_assert_int_eq(tmc_filter_edges_host(&ctx, &in, 2.0, &e, &m), TOPOML_OK);
    ck_assert_uint_eq(m, 4);
    const topoml_edge want[4] = {{1, 0, 1}, {2, 1, 2}, {0.5, 0, 3}, {2, 2, 3}};
    for (int k = 0; k < 4; k++) {
        ck_assert_double_eq(e[k].d, want[k].d);
        ck_assert_uint_eq(e[k].i, want[k].i);
        ck_assert_uint_eq(e[k].j, want[k].j);
    }
    free(e);
    const float f[6] = {1, 3, 2, 0.5f, 4, 2};
    in = condensed(4, TOPOML_F32, f);
    ck_assert_int_eq(tmc_filter_edges_host(&ctx, &in, -1.0, &e, &m), TOPOML_OK);
    ck_assert_uint_eq(m, 0);
    free(e);
    ck_assert_int_eq(tmc_filter_edges_host(&ctx, &in, INFINITY, &e, &m), TOPOML_OK);
    ck_assert_uint_eq(m, 6);
    free(e);
}
END_TEST

START_TEST(test_condensed_nan_is_not_a_distance)
{
    setup();
    const double d[6] = {1, 3, NAN, 0.5, 4, 2};
    topoml_input_v1 in = condensed(4, TOPOML_F64, d);
    topoml_edge *e = NULL;
    uint64_t m = 0;
    ck_assert_int_eq(tmc_filter_edges_host(&ctx, &in, 2.0, &e, &m), TOPOML_E_INVALID);
    ck_assert_ptr_null(e);
    ck_assert_ptr_nonnull(strstr(err, "d(2,1)"));
    const double neg[3] = {1, -3, 2};
    in = condensed(3, TOPOML_F64, neg);
    ck_assert_int_eq(tmc_filter_edges_host(&ctx, &in, 2.0, &e, &m), TOPOML_E_INVALID);
    ck_assert_ptr_nonnull(strstr(err, "d(2,0)"));
}
END_TEST

START_TEST(test_sparse_edges_need_ordered_vertices_below_n)
{
    setup();
    topoml_edge list[3] = {{1.5, 0, 2}, {0.5, 1, 2}, {9, 0, 1}};
    topoml_input_v1 in;
    memset(&in, 0, sizeof in);
    in.struct_size = sizeof in;
    in.kind = TOPOML_INPUT_SPARSE;
    in.n = 3;
    in.n_edges = 3;
    in.edges = list;
    topoml_edge *e = NULL;
    uint64_t m = 0;
    ck_assert_int_eq(tmc_filter_edges_host(&ctx, &in, 2.0, &e, &m), TOPOML_OK);
    ck_assert_uint_eq(m, 2);
    ck_assert_double_eq(e[0].d, 1.5);
    ck_assert_double_eq(e[1].d, 0.5);
    free(e);
    list[1].i = 2;
    list[1].j = 1;
    ck_assert_int_eq(tmc_filter_edges_host(&ctx, &in, 2.0, &e, &m), TOPOML_E_INVALID);
    list[1].i = 1;
    list[1].j = 3;
    ck_assert_int_eq(tmc_filter_edges_host(&ctx, &in, 2.0, &e, &m), TOPOML_E_INVALID);
    ck_assert_ptr_nonnull(strstr(err, "sparse edge 1"));
}
END_TEST

START_TEST(test_h0_kills_the_younger_component_and_skips_zero_bars)
{
    setup();
    /* Five vertices: 0-1 at distance 0 (duplicates), 1-2 at 1, 0-2 at 1.5
     * (a cycle, no bar), 3-4 at 2; vertex groups {0,1,2} and {3,4} stay apart. */
    const topoml_edge e[4] = {{0, 0, 1}, {1, 1, 2}, {1.5, 0, 2}, {2, 3, 4}};
    topoml_barcode_v1 bc;
    memset(&bc, 0, sizeof bc);
    bc.struct_size = sizeof bc;
    ck_assert_int_eq(tmc_h0_from_edges(&ctx, 5, e, 4, &bc), TOPOML_OK);
    ck_assert_uint_eq(bc.n_intervals, 4);
    ck_assert_uint_eq(bc.max_dim, 0);
    ck_assert_uint_eq(bc.complete, 1);
    ck_assert_double_eq(bc.intervals[0].death, 1);
    ck_assert_double_eq(bc.intervals[1].death, 2);
    ck_assert(isinf(bc.intervals[2].death) && isinf(bc.intervals[3].death));
    for (int k = 0; k < 4; k++) {
        ck_assert_double_eq(bc.intervals[k].birth, 0);
        ck_assert_uint_eq(bc.intervals[k].dim, 0);
    }
    free(bc.intervals);
    /* No vertices: no bars. */
    memset(&bc, 0, sizeof bc);
    bc.struct_size = sizeof bc;
    ck_assert_int_eq(tmc_h0_from_edges(&ctx, 0, NULL, 0, &bc), TOPOML_OK);
    ck_assert_uint_eq(bc.n_intervals, 0);
    free(bc.intervals);
}
END_TEST

START_TEST(test_inputs_are_checked_before_any_device_work)
{
    setup();
    double pts[4] = {0, 1, 2, 3};
    topoml_input_v1 in;
    memset(&in, 0, sizeof in);
    in.struct_size = sizeof in;
    in.kind = TOPOML_INPUT_POINTS;
    in.n = 2;
    in.dim = 2;
    in.data = pts;
    ck_assert_int_eq(tmc_check_input(&call, &in, 1u << TOPOML_INPUT_POINTS), TOPOML_OK);
    in.metric = 9;
    ck_assert_int_eq(tmc_check_input(&call, &in, 1u << TOPOML_INPUT_POINTS), TOPOML_E_INVALID);
    in.metric = 0;
    in.dtype = 5;
    ck_assert_int_eq(tmc_check_input(&call, &in, 1u << TOPOML_INPUT_POINTS), TOPOML_E_INVALID);
    in.dtype = 0;
    ck_assert_int_eq(tmc_check_input(&call, &in, 1u << TOPOML_INPUT_CONDENSED),
                     TOPOML_E_UNSUPPORTED);
    in.n = 1ull << 33;
    ck_assert_int_eq(tmc_check_input(&call, &in, 1u << TOPOML_INPUT_POINTS), TOPOML_E_OVERFLOW);
    in.n = 1u << 31;
    in.dim = 1ull << 62;
    ck_assert_int_eq(tmc_check_input(&call, &in, 1u << TOPOML_INPUT_POINTS), TOPOML_E_OVERFLOW);
    in.dim = 2;
    in.data = NULL;
    ck_assert_int_eq(tmc_check_input(&call, &in, 1u << TOPOML_INPUT_POINTS), TOPOML_E_INVALID);
    in.struct_size = 8;
    ck_assert_int_eq(tmc_check_input(&call, &in, 1u << TOPOML_INPUT_POINTS), TOPOML_E_INVALID);
}
END_TEST

START_TEST(test_host_scratch_respects_the_memory_limit)
{
    setup();
    call.max_memory = 1000;
    int status = 0;
    ck_assert_ptr_null(tmc_host_alloc(&ctx, 1001, "the test", &status));
    ck_assert_int_eq(status, TOPOML_E_LIMIT);
    ck_assert_ptr_nonnull(strstr(err, "the test"));
    void *p = tmc_host_alloc(&ctx, 1000, "the test", &status);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(status, TOPOML_OK);
    tmc_host_free(&ctx, p);
    ck_assert_int_eq(tmc_check_device_memory(&ctx, 5000, "device work"), TOPOML_E_LIMIT);
}
END_TEST

START_TEST(test_probe_without_driver_says_why)
{
    char why[256] = "";
    int status = tmc_probe_device(-1, why, sizeof why, NULL, NULL, NULL);
    ck_assert(status == TOPOML_OK || status == TOPOML_E_UNSUPPORTED || status == TOPOML_E_DEVICE);
    ck_assert(why[0] != '\0');
    if (status == TOPOML_OK)
        ck_assert_ptr_nonnull(strstr(why, "compute capability"));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cuda-host");
    TCase *tc = tcase_create("host");
    tcase_add_test(tc, test_triangular_root_inverts_triangular_numbers);
    tcase_add_test(tc, test_row_start_is_the_condensed_offset);
    tcase_add_test(tc, test_bands_cover_all_rows_within_the_byte_limit);
    tcase_add_test(tc, test_condensed_edges_are_filtered_in_matrix_order);
    tcase_add_test(tc, test_condensed_nan_is_not_a_distance);
    tcase_add_test(tc, test_sparse_edges_need_ordered_vertices_below_n);
    tcase_add_test(tc, test_h0_kills_the_younger_component_and_skips_zero_bars);
    tcase_add_test(tc, test_inputs_are_checked_before_any_device_work);
    tcase_add_test(tc, test_host_scratch_respects_the_memory_limit);
    tcase_add_test(tc, test_probe_without_driver_says_why);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
