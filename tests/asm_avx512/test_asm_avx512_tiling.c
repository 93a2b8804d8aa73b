/*
 * test_tiling.c — the glue of asm-avx512 (tiling.c, edge_sort.c) driven by
 * the C stand-in kernels, so it runs on any machine: tiling and remainders
 * for every small size, edge collection and its (d, i, j) order with ties,
 * the exact threshold limits, argument checks, memory limit, cancellation
 * and allocation failure.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metric.h"

#include "opcheck.h"
#include "standin.h"
#include "testutil.h"

static const uint32_t dtypes[] = {TOPOML_F32, TOPOML_F64};
static const uint32_t metrics[] = {TOPOML_METRIC_SQEUCLIDEAN, TOPOML_METRIC_EUCLIDEAN};

START_TEST(test_distances_cover_every_pair_for_small_and_odd_sizes)
{
    /* Around every boundary: none, one and two pairs; one row tile (6);
     * one f64 panel (24) and one f32 panel (48), each +-1; several panels,
     * with every remainder of rows past a panel's first row modulo 6. The
     * glue treats every dimension alike (only the kernels loop over it). */
    static const uint64_t ns[] = {0,  1,  2,  3,  4,  5,  6,  7,  8,  13,  23,  24, 25,
                                  26, 47, 48, 49, 50, 53, 97, 98, 99, 100, 101, 102};
    static const uint64_t dims[] = {0, 1, 3};
    uint64_t seed = 1;

    for (size_t t = 0; t < 2; t++)
        for (size_t m = 0; m < 2; m++)
            for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++)
                for (size_t b = 0; b < sizeof dims / sizeof dims[0]; b++)
                    opcheck_distances(&standin_kernels, dtypes[t], metrics[m], ns[a], dims[b],
                                      seed++);
}
END_TEST

START_TEST(test_distances_match_reference_in_high_dimension)
{
    opcheck_distances(&standin_kernels, TOPOML_F32, TOPOML_METRIC_SQEUCLIDEAN, 31, 300, 7);
    opcheck_distances(&standin_kernels, TOPOML_F64, TOPOML_METRIC_EUCLIDEAN, 29, 257, 8);
}
END_TEST

/* Points on an integer grid: every distance is exact in both dtypes and
 * many are equal, so the order among ties (i, then j) decides the list. */
static void *grid_points(uint32_t dtype, uint64_t side, uint64_t *n)
{
    *n = side * side;
    size_t elem = dtype == TOPOML_F32 ? 4 : 8;
    unsigned char *p = malloc((size_t)(*n * 2) * elem);
    for (uint64_t a = 0; a < side; a++)
        for (uint64_t b = 0; b < side; b++) {
            uint64_t i = a * side + b;
            if (dtype == TOPOML_F32) {
                ((float *)p)[2 * i] = (float)b;
                ((float *)p)[2 * i + 1] = (float)a;
            } else {
                ((double *)p)[2 * i] = (double)b;
                ((double *)p)[2 * i + 1] = (double)a;
            }
        }
    return p;
}

START_TEST(test_edges_sorted_by_d_then_i_then_j_with_ties)
{
    for (size_t t = 0; t < 2; t++)
        for (size_t m = 0; m < 2; m++) {
            uint64_t n;
            void *p = grid_points(dtypes[t], 9, &n);
            /* Threshold exactly on a distance: "<=" keeps it. */
            double thr = metrics[m] == TOPOML_METRIC_EUCLIDEAN ? 2.0 : 4.0;
            uint64_t got = opcheck_edges(&standin_kernels, dtypes[t], metrics[m], n, 2, p, thr);
            /* On a 9x9 grid: 144 unit edges, 128 diagonals, 126 of length 2. */
            ck_assert_uint_eq(got, 144 + 128 + 126);
            free(p);
        }
}
END_TEST

START_TEST(test_edges_thresholds_at_the_extremes)
{
    uint64_t n, seed = 11;

    for (size_t t = 0; t < 2; t++)
        for (size_t m = 0; m < 2; m++) {
            void *p = grid_points(dtypes[t], 7, &n);
            ck_assert_uint_eq(opcheck_edges(&standin_kernels, dtypes[t], metrics[m], n, 2, p, -1.0),
                              0);
            ck_assert_uint_eq(opcheck_edges(&standin_kernels, dtypes[t], metrics[m], n, 2, p, 0.0),
                              0);
            ck_assert_uint_eq(
                opcheck_edges(&standin_kernels, dtypes[t], metrics[m], n, 2, p, INFINITY),
                n * (n - 1) / 2);
            ck_assert_uint_eq(
                opcheck_edges(&standin_kernels, dtypes[t], metrics[m], n, 2, p, 1e300),
                n * (n - 1) / 2);
            free(p);

            /* Duplicate points are at distance 0, which -0 and 0 admit. */
            void *r = random_points(&seed, dtypes[t], 40, 3, 0.0, 1.0);
            size_t elem = dtypes[t] == TOPOML_F32 ? 4 : 8;
            memcpy((unsigned char *)r + 3 * 3 * elem, r, 3 * elem);
            memcpy((unsigned char *)r + 30 * 3 * elem, r, 3 * elem);
            ck_assert_uint_eq(
                opcheck_edges(&standin_kernels, dtypes[t], metrics[m], 40, 3, r, -0.0), 3);
            ck_assert_uint_eq(opcheck_edges(&standin_kernels, dtypes[t], metrics[m], 40, 3, r, 0.0),
                              3);
            free(r);
        }
}
END_TEST

START_TEST(test_edges_random_clouds_match_distances_op)
{
    uint64_t seed = 5;
    static const uint64_t ns[] = {2, 3, 7, 25, 49, 130};
    static const uint64_t dims[] = {0, 3, 16};

    for (size_t t = 0; t < 2; t++)
        for (size_t m = 0; m < 2; m++)
            for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++)
                for (size_t b = 0; b < sizeof dims / sizeof dims[0]; b++) {
                    void *p = random_points(&seed, dtypes[t], ns[a], dims[b], -1.0, 1.0);
                    for (int q = 0; q < 2; q++) {
                        double thr = rng_uniform(&seed, 0.0, 1.5 * (double)dims[b]);
                        opcheck_edges(&standin_kernels, dtypes[t], metrics[m], ns[a], dims[b], p,
                                      thr);
                    }
                    free(p);
                }
}
END_TEST

START_TEST(test_edge_limit_decides_threshold_exactly)
{
    uint64_t seed = 99;
    /* Thresholds of every kind: random, exact squares' roots, tiny,
     * subnormal, near FLT_MAX, beyond float range. */
    double special[] = {0.0,          -0.0,     1.0,     2.0,     3.0,
                        0x1p-149,     0x1p-140, 1e-30,   FLT_MAX, (double)FLT_MAX * 1.5,
                        1.8446744e19, 1e300,    DBL_MAX, -5.0};

    for (int q = 0; q < 2000 + (int)(sizeof special / sizeof special[0]); q++) {
        double thr = q < 2000
                         ? ldexp(rng_uniform(&seed, 1.0, 2.0), (int)(rng_next(&seed) % 200) - 100)
                         : special[q - 2000];
        for (int euclid = 0; euclid < 2; euclid++) {
            float lf = avx512_edge_limit_f32(euclid, thr);
            double ld = avx512_edge_limit_f64(euclid, thr);
            if (thr < 0.0) {
                EXPECT(lf < 0.0f && ld < 0.0, "line %d", __LINE__);
                continue;
            }
            /* s <= limit exactly when the distance widened is <= thr, for
             * the limit and its neighbours. */
            float s = lf;
            for (int step = 0; step < 4; step++)
                s = nextafterf(s, -INFINITY);
            for (int step = 0; step < 9; step++, s = nextafterf(s, INFINITY)) {
                if (s < 0.0f)
                    continue;
                double d = euclid ? (double)sqrtf(s) : (double)s;
                EXPECT((s <= lf) == (d <= thr), "f32 thr %a euclid %d s %a limit %a", thr, euclid,
                       (double)s, (double)lf);
            }
            double u = ld;
            for (int step = 0; step < 4; step++)
                u = nextafter(u, -INFINITY);
            for (int step = 0; step < 9; step++, u = nextafter(u, INFINITY)) {
                if (u < 0.0)
                    continue;
                double d = euclid ? sqrt(u) : u;
                EXPECT((u <= ld) == (d <= thr), "f64 thr %a euclid %d s %a limit %a", thr, euclid,
                       u, ld);
            }
        }
    }
    ck_assert(isinf(avx512_edge_limit_f32(1, INFINITY)));
    ck_assert(isinf(avx512_edge_limit_f64(1, INFINITY)));
}
END_TEST

START_TEST(test_sort_edges_orders_by_d_i_j)
{
    uint64_t seed = 3;
    static const uint64_t sizes[] = {0, 1, 2, 3, 100, 1500};

    for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
        uint64_t n = sizes[z];
        topoml_edge *e = malloc((size_t)(n + 1) * sizeof *e);
        topoml_edge *tmp = malloc((size_t)(n + 1) * sizeof *e);
        topoml_edge *want = malloc((size_t)(n + 1) * sizeof *e);
        for (uint64_t k = 0; k < n; k++) {
            /* Few distinct values (ties), some large indices and
             * magnitudes, +0 and +inf. */
            uint64_t r = rng_next(&seed);
            double d = (double)(r % 7) * ldexp(1.0, (int)(r >> 60) - 4);
            if (r % 97 == 0)
                d = INFINITY;
            e[k].d = d;
            e[k].i = (uint32_t)((r >> 8) % 5) * 0x01010101u;
            e[k].j = (uint32_t)(rng_next(&seed) % 3) << (8 * (k % 4));
        }
        memcpy(want, e, (size_t)n * sizeof *e);
        for (uint64_t a = 1; a < n; a++) /* insertion sort: slow and obviously right */
            for (uint64_t b = a; b > 0; b--) {
                topoml_edge *x = &want[b - 1], *y = &want[b];
                int gt =
                    x->d > y->d || (x->d == y->d && (x->i > y->i || (x->i == y->i && x->j > y->j)));
                if (!gt)
                    break;
                topoml_edge sw = *x;
                *x = *y;
                *y = sw;
            }
        avx512_sort_edges(e, tmp, n);
        for (uint64_t k = 0; k < n; k++)
            EXPECT(e[k].d == want[k].d && e[k].i == want[k].i && e[k].j == want[k].j, "line %d",
                   __LINE__);
        free(e);
        free(tmp);
        free(want);
    }
}
END_TEST

/* Coordinates outside the kernels' range (1e-300, 1e200; float 1e-30,
 * 1e30) take the exact path: every distance equals the reference's
 * (plugins/scalar/metric.h) bit for bit, edges follow it, and a distance
 * beyond the dtype is TOPOML_E_OVERFLOW, never inf. */
START_TEST(test_extreme_coordinates_take_the_exact_path)
{
    static const double scales64[] = {1e-320, 1e-300, 1e-170, 1e150, 1e200, 1e300};
    static const double scales32[] = {1e-44, 1e-30, 1e-20, 1e20, 1e30};
    for (unsigned t = 0; t < 2; t++)
        for (unsigned m = 0; m < 2; m++)
            for (unsigned k = 0; k < (t ? 6u : 5u); k++) {
                const double s = t ? scales64[k] : scales32[k];
                const uint32_t dt = dtypes[t], mt = metrics[m];
                topoml_call_v1 call;
                topoml_input_v1 in;
                test_heap heap;
                char err[256];
                uint64_t seed = 11 + k, n = 23, dim = 3, ne = 0;
                void *p = random_points(&seed, dt, n, dim, -s, s);
                make_call(&call, &heap, err, sizeof err);
                make_input(&in, dt, mt, n, dim, p);
                const size_t elem = dt == TOPOML_F32 ? 4 : 8;
                unsigned char *out = malloc(n * (n - 1) / 2 * elem);
                int want_overflow = 0;
                for (uint64_t i = 1; i < n; i++)
                    for (uint64_t j = 0; j < i; j++)
                        want_overflow |= isinf(scalar_point_dist(dt, mt, p, dim, i, j)) != 0;
                int st = avx512_distances(&standin_kernels, &call, &in, out);
                if (want_overflow) {
                    ck_assert_int_eq(st, TOPOML_E_OVERFLOW);
                    ck_assert_ptr_nonnull(strstr(err, "beyond the range"));
                } else {
                    ck_assert_int_eq(st, TOPOML_OK);
                    uint64_t q = 0;
                    for (uint64_t i = 1; i < n; i++)
                        for (uint64_t j = 0; j < i; j++, q++) {
                            double want = scalar_point_dist(dt, mt, p, dim, i, j);
                            double got = dt == TOPOML_F32 ? ((float *)out)[q] : ((double *)out)[q];
                            ck_assert_msg(got == want, "dtype %u metric %u scale %g: %g vs %g", dt,
                                          mt, s, got, want);
                        }
                    topoml_edge *e = NULL;
                    const double thr = dt == TOPOML_F32 ? ((float *)out)[100] : ((double *)out)[100];
                    ck_assert_uint_gt(opcheck_edges(&standin_kernels, dt, mt, n, dim, p, thr), 0);
                    ck_assert_int_eq(avx512_edges(&standin_kernels, &call, &in, thr, &e, &ne),
                                     TOPOML_OK);
                    for (uint64_t a = 0; a < ne; a++) {
                        ck_assert(e[a].d <= thr);
                        ck_assert(a == 0 || e[a - 1].d <= e[a].d);
                        ck_assert(e[a].d == scalar_point_dist(dt, mt, p, dim, e[a].j, e[a].i));
                    }
                    ck_assert_uint_gt(ne, 0);
                    call.free(call.host_data, e);
                }
                ck_assert_int_eq(heap.live, 0);
                free(out);
                free(p);
            }
    /* Squared distances beyond double: refused by both ops. */
    topoml_call_v1 call;
    topoml_input_v1 in;
    test_heap heap;
    char err[256];
    double pts[4] = {1e200, 0, -1e200, 0}, out[1];
    topoml_edge *e = NULL;
    uint64_t ne = 0;
    make_call(&call, &heap, err, sizeof err);
    make_input(&in, TOPOML_F64, TOPOML_METRIC_SQEUCLIDEAN, 2, 2, pts);
    ck_assert_int_eq(avx512_distances(&standin_kernels, &call, &in, out), TOPOML_E_OVERFLOW);
    ck_assert_int_eq(avx512_edges(&standin_kernels, &call, &in, INFINITY, &e, &ne),
                     TOPOML_E_OVERFLOW);
    in.metric = TOPOML_METRIC_EUCLIDEAN;
    ck_assert_int_eq(avx512_distances(&standin_kernels, &call, &in, out), TOPOML_OK);
    ck_assert(out[0] == 2e200);
    ck_assert_int_eq(heap.live, 0);
}
END_TEST

START_TEST(test_ops_reject_bad_arguments)
{
    topoml_call_v1 call;
    topoml_input_v1 in;
    test_heap heap;
    char err[256];
    float pts[6] = {0, 1, 2, 3, 4, 5}, out[3];
    topoml_edge *e = (topoml_edge *)1;
    uint64_t ne = 7;

    make_call(&call, &heap, err, sizeof err);
    make_input(&in, TOPOML_F32, TOPOML_METRIC_EUCLIDEAN, 3, 2, pts);

    ck_assert_int_eq(avx512_distances(&standin_kernels, &call, NULL, out), TOPOML_E_INVALID);
    ck_assert_int_eq(avx512_distances(&standin_kernels, &call, &in, NULL), TOPOML_E_INVALID);
    ck_assert_ptr_nonnull(strstr(err, "output is NULL"));
    ck_assert_int_eq(avx512_distances(&standin_kernels, NULL, &in, out), TOPOML_E_INVALID);

    in.kind = TOPOML_INPUT_CONDENSED;
    ck_assert_int_eq(avx512_distances(&standin_kernels, &call, &in, out), TOPOML_E_UNSUPPORTED);
    ck_assert_int_eq(avx512_edges(&standin_kernels, &call, &in, 1.0, &e, &ne),
                     TOPOML_E_UNSUPPORTED);
    ck_assert_ptr_null(e);
    ck_assert_uint_eq(ne, 0);
    in.kind = TOPOML_INPUT_POINTS;

    in.metric = TOPOML_METRIC_MANHATTAN;
    ck_assert_int_eq(avx512_distances(&standin_kernels, &call, &in, out), TOPOML_E_UNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(err, "metric 2"));
    in.metric = TOPOML_METRIC_EUCLIDEAN;
    in.dtype = 9;
    ck_assert_int_eq(avx512_distances(&standin_kernels, &call, &in, out), TOPOML_E_UNSUPPORTED);
    in.dtype = TOPOML_F32;

    in.data = NULL;
    ck_assert_int_eq(avx512_distances(&standin_kernels, &call, &in, out), TOPOML_E_INVALID);
    in.data = pts;
    in.struct_size = 8;
    ck_assert_int_eq(avx512_distances(&standin_kernels, &call, &in, out), TOPOML_E_INVALID);
    in.struct_size = sizeof in;

    ck_assert_int_eq(avx512_edges(&standin_kernels, &call, &in, NAN, &e, &ne), TOPOML_E_INVALID);
    ck_assert_ptr_nonnull(strstr(err, "NaN"));
    ck_assert_int_eq(avx512_edges(&standin_kernels, &call, &in, 1.0, NULL, &ne), TOPOML_E_INVALID);

    in.n = 1ull << 40;
    in.dim = 1ull << 30;
    ck_assert_int_eq(avx512_distances(&standin_kernels, &call, &in, out), TOPOML_E_OVERFLOW);
    in.n = 1ull << 33;
    in.dim = 1;
    ck_assert_int_eq(avx512_distances(&standin_kernels, &call, &in, out), TOPOML_E_OVERFLOW);
    ck_assert_int_eq(avx512_edges(&standin_kernels, &call, &in, 1.0, &e, &ne), TOPOML_E_OVERFLOW);
    in.n = 3;
    in.dim = 2;

    call.alloc = NULL;
    ck_assert_int_eq(avx512_distances(&standin_kernels, &call, &in, out), TOPOML_E_INVALID);
    call.alloc = heap_alloc;
    call.struct_size = 16;
    ck_assert_int_eq(avx512_edges(&standin_kernels, &call, &in, 1.0, &e, &ne), TOPOML_E_INVALID);
    ck_assert_int_eq(heap.live, 0);
}
END_TEST

START_TEST(test_ops_respect_memory_limit)
{
    topoml_call_v1 call;
    topoml_input_v1 in;
    test_heap heap;
    char err[256];
    uint64_t seed = 4, ne = 0;
    void *p = random_points(&seed, TOPOML_F64, 200, 64, 0, 1);
    double *out = malloc(200 * 199 / 2 * sizeof *out);
    topoml_edge *e = NULL;

    make_call(&call, &heap, err, sizeof err);
    make_input(&in, TOPOML_F64, TOPOML_METRIC_EUCLIDEAN, 200, 64, p);
    /* The packed panels alone: 9 of 24 points, 192 bytes per coordinate,
     * and 64 for alignment. */
    const uint64_t panels = 9 * 192 * 64 + 64, cands = (6 * 24 + 16) * (8 + 4);
    call.max_memory = 4096;
    ck_assert_int_eq(avx512_distances(&standin_kernels, &call, &in, out), TOPOML_E_LIMIT);
    ck_assert_ptr_nonnull(strstr(err, "memory limit"));
    ck_assert_int_eq(heap.live, 0);
    call.max_memory = panels;
    ck_assert_int_eq(avx512_distances(&standin_kernels, &call, &in, out), TOPOML_OK);
    /* Room for the panels and candidates, not for all 19900 edges. */
    call.max_memory = panels + cands + 100000;
    ck_assert_int_eq(avx512_edges(&standin_kernels, &call, &in, INFINITY, &e, &ne), TOPOML_E_LIMIT);
    ck_assert_ptr_nonnull(strstr(err, "the edge list"));
    ck_assert_ptr_null(e);
    ck_assert_uint_eq(ne, 0);
    ck_assert_int_eq(heap.live, 0);
    /* Enough for everything, the sort's second copy included: the list
     * grows by doubling to 32768 edges. */
    call.max_memory = panels + cands + (32768 + 19900) * 16;
    ck_assert_int_eq(avx512_edges(&standin_kernels, &call, &in, INFINITY, &e, &ne), TOPOML_OK);
    ck_assert_uint_eq(ne, 19900);
    call.free(call.host_data, e);
    ck_assert_int_eq(heap.live, 0);
    free(out);
    free(p);
}
END_TEST

START_TEST(test_ops_stop_when_progress_cancels)
{
    topoml_call_v1 call;
    topoml_input_v1 in;
    test_heap heap;
    char err[256];
    uint64_t seed = 6, ne = 0;
    void *p = random_points(&seed, TOPOML_F32, 300, 4, 0, 1);
    float *out = malloc(300 * 299 / 2 * sizeof *out);
    topoml_edge *e = NULL;

    make_call(&call, &heap, err, sizeof err);
    make_input(&in, TOPOML_F32, TOPOML_METRIC_SQEUCLIDEAN, 300, 4, p);
    ck_assert_int_eq(avx512_distances(&standin_kernels, &call, &in, out), TOPOML_OK);
    /* Small work: one report, at the end. */
    ck_assert_int_eq(heap.progress_calls, 1);
    ck_assert_uint_eq(heap.last_done, heap.last_total);
    ck_assert_uint_eq(heap.last_total, 299); /* rows 1 .. 299 */

    heap.cancel = 1;
    ck_assert_int_eq(avx512_distances(&standin_kernels, &call, &in, out), TOPOML_E_CANCELLED);
    ck_assert_int_eq(avx512_edges(&standin_kernels, &call, &in, 1.0, &e, &ne), TOPOML_E_CANCELLED);
    ck_assert_ptr_nonnull(strstr(err, "cancelled"));
    ck_assert_ptr_null(e);
    ck_assert_int_eq(heap.live, 0);
    free(out);
    free(p);
}
END_TEST

START_TEST(test_ops_report_every_allocation_failure)
{
    topoml_call_v1 call;
    topoml_input_v1 in;
    test_heap heap;
    char err[256];
    uint64_t seed = 8, ne = 0;
    void *p = random_points(&seed, TOPOML_F32, 150, 3, 0, 1);
    float *out = malloc(150 * 149 / 2 * sizeof *out);
    topoml_edge *e = NULL;
    int failures = 0;

    make_call(&call, &heap, err, sizeof err);
    make_input(&in, TOPOML_F32, TOPOML_METRIC_EUCLIDEAN, 150, 3, p);
    for (long at = 0;; at++) {
        heap.calls = 0;
        heap.fail_at = at;
        int status = avx512_edges(&standin_kernels, &call, &in, INFINITY, &e, &ne);
        ck_assert_int_eq(heap.live, status == TOPOML_OK ? 1 : 0);
        if (status == TOPOML_OK) {
            ck_assert_uint_eq(ne, 150 * 149 / 2);
            call.free(call.host_data, e);
            break;
        }
        ck_assert_int_eq(status, TOPOML_E_NOMEM);
        ck_assert_ptr_null(e);
        failures++;
    }
    ck_assert_int_gt(failures, 3);
    heap.calls = 0;
    heap.fail_at = 0;
    ck_assert_int_eq(avx512_distances(&standin_kernels, &call, &in, out), TOPOML_E_NOMEM);
    ck_assert_int_eq(heap.live, 0);
    free(out);
    free(p);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("asm-avx512 tiling");
    TCase *tc = tcase_create("tiling");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_distances_cover_every_pair_for_small_and_odd_sizes);
    tcase_add_test(tc, test_distances_match_reference_in_high_dimension);
    tcase_add_test(tc, test_edges_sorted_by_d_then_i_then_j_with_ties);
    tcase_add_test(tc, test_edges_thresholds_at_the_extremes);
    tcase_add_test(tc, test_edges_random_clouds_match_distances_op);
    tcase_add_test(tc, test_edge_limit_decides_threshold_exactly);
    tcase_add_test(tc, test_sort_edges_orders_by_d_i_j);
    tcase_add_test(tc, test_ops_reject_bad_arguments);
    tcase_add_test(tc, test_ops_respect_memory_limit);
    tcase_add_test(tc, test_ops_stop_when_progress_cancels);
    tcase_add_test(tc, test_ops_report_every_allocation_failure);
    tcase_add_test(tc, test_extreme_coordinates_take_the_exact_path);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
