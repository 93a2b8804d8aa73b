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
#include "rips_columns.h"
#include "metric.h"

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

/* ---- the column hook's per-simplex code, run on the host ----
 *
 * host_columns does on the host what rips_columns.cu does on the device,
 * with the same functions of rips_columns.h: neighbour lists, levels grown
 * with tmr_extend, tmr_cleared and tmr_is_column, then the sort. The engine
 * must give the same barcode with it as without it. */

typedef struct host_cols {
    uint32_t n;
    double *dist;
    uint64_t calls, columns, simplices;
} host_cols;

static int col_cmp(const void *a, const void *b)
{
    const scalar_rips_column *x = a, *y = b;
    if (x->diam != y->diam)
        return x->diam > y->diam ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

static int host_columns(void *user, scalar_rips_columns_query *q)
{
    host_cols *h = user;
    const uint32_t n = h->n, K = q->k + 1;
    h->calls++;
    ck_assert_uint_le(K, TMR_MAX_VERTS);
    uint64_t *nb_start = calloc(n + 1, 8);
    uint32_t *nb_v = malloc((uint64_t)n * n * 4 + 4);
    uint64_t *binom = malloc((uint64_t)(K + 1) * (n + 1) * 8);
    tmr_fill_binomials(binom, K + 1, n);
    tmr_graph g = {h->dist, nb_start, nb_v, binom, n, q->threshold};
    for (uint32_t v = 0; v < n; v++) {
        nb_start[v + 1] = nb_start[v];
        for (int64_t w = n - 1; w >= 0; w--)
            if (w != v && tmr_dist(&g, v, (uint32_t)w) <= q->threshold)
                nb_v[nb_start[v + 1]++] = (uint32_t)w;
    }
    /* levels */
    uint64_t count = n;
    uint32_t *lv = malloc(n * 4 + 4);
    double *ld = malloc(n * 8 + 8);
    for (uint32_t v = 0; v < n; v++) {
        lv[v] = v;
        ld[v] = 0.0;
    }
    for (uint32_t m = 1; m < K; m++) {
        uint64_t total = 0;
        for (uint64_t p = 0; p < count; p++)
            total += tmr_extend(&g, lv + p * m, m, ld[p], NULL, NULL);
        uint32_t *cv = malloc(total * (m + 1) * 4 + 4);
        double *cd = malloc(total * 8 + 8);
        uint64_t at = 0;
        for (uint64_t p = 0; p < count; p++)
            at += tmr_extend(&g, lv + p * m, m, ld[p], cv + at * (m + 1), cd + at);
        ck_assert_uint_eq(at, total);
        free(lv);
        free(ld);
        lv = cv;
        ld = cd;
        count = total;
    }
    h->simplices += count;
    scalar_rips_column *out = q->reserve(q, count);
    ck_assert_ptr_nonnull(out);
    uint64_t cols = 0;
    for (uint64_t s = 0; s < count; s++) {
        const uint32_t *v = lv + s * K;
        for (uint32_t i = 1; i < K; i++)
            ck_assert_uint_gt(v[i - 1], v[i]);
        ck_assert(ld[s] <= q->threshold);
        if (!tmr_cleared(q->cleared, q->n_cleared, tmr_index(&g, v, K)) &&
            tmr_is_column(&g, v, K, ld[s]))
            out[cols++] = (scalar_rips_column){ld[s], tmr_index(&g, v, K)};
    }
    qsort(out, cols, sizeof *out, col_cmp);
    q->n_columns = cols;
    h->columns += cols;
    free(lv);
    free(ld);
    free(nb_start);
    free(nb_v);
    free(binom);
    return TOPOML_OK;
}

static uint64_t rng = 0x9E3779B97F4A7C15u;
static double rnd_unit(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

static int bar_cmp(const void *a, const void *b)
{
    const topoml_interval *x = a, *y = b;
    if (x->dim != y->dim)
        return x->dim < y->dim ? -1 : 1;
    if (x->birth != y->birth)
        return x->birth < y->birth ? -1 : 1;
    return x->death < y->death ? -1 : x->death > y->death;
}

/* The engine's barcodes of `in` with its own columns and with the hook's
 * (host_columns over h), equal bar for bar. */
static void expect_hooked_barcodes_equal(const topoml_input_v1 *in,
                                         const topoml_rips_params_v1 *prm, host_cols *h)
{
    topoml_barcode_v1 a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    a.struct_size = b.struct_size = sizeof a;
    scalar_rips_hook hook = {h, host_columns};
    ck_assert_msg(scalar_rips(&call, in, prm, &a) == TOPOML_OK, "%s", err);
    ck_assert_msg(scalar_rips_hooked(&call, in, prm, &hook, &b) == TOPOML_OK, "%s", err);
    ck_assert_uint_ge(h->calls, 1);
    ck_assert_uint_eq(a.n_intervals, b.n_intervals);
    qsort(a.intervals, a.n_intervals, sizeof *a.intervals, bar_cmp);
    qsort(b.intervals, b.n_intervals, sizeof *b.intervals, bar_cmp);
    for (uint64_t k = 0; k < a.n_intervals; k++)
        ck_assert_int_eq(bar_cmp(&a.intervals[k], &b.intervals[k]), 0);
    free(a.intervals);
    free(b.intervals);
}

START_TEST(test_column_code_gives_the_engines_barcodes)
{
    setup();
    uint64_t total_cols = 0, total_simplices = 0;
    for (int c = 0; c < 160; c++) {
        uint32_t n = 4 + (uint32_t)(rnd_unit() * 22), dim = 1 + (uint32_t)(rnd_unit() * 3);
        int grid = c % 3 == 0; /* integer coordinates: many ties */
        double *pts = malloc(n * dim * 8);
        for (uint32_t k = 0; k < n * dim; k++)
            pts[k] = grid ? (double)(int)(rnd_unit() * 3) : rnd_unit();
        topoml_input_v1 in = {0};
        in.struct_size = sizeof in;
        in.kind = TOPOML_INPUT_POINTS;
        in.n = n;
        in.dim = dim;
        in.dtype = TOPOML_F64;
        in.metric = c % 2 ? TOPOML_METRIC_EUCLIDEAN : TOPOML_METRIC_CHEBYSHEV;
        in.data = pts;
        host_cols h = {n, malloc((uint64_t)n * n * 8 + 8), 0, 0, 0};
        for (uint32_t i = 0; i < n; i++)
            for (uint32_t j = 0; j < i; j++)
                h.dist[tmc_row_start(i) + j] =
                    scalar_point_dist(TOPOML_F64, (topoml_metric)in.metric, pts, dim, i, j);
        topoml_rips_params_v1 prm = {sizeof prm, 2 + (uint32_t)(c % 3),
                                     c % 4 == 1 ? 0.6 : INFINITY, c % 5 == 0 ? 3u : 2u, 0, 0, 0};
        expect_hooked_barcodes_equal(&in, &prm, &h);
        total_cols += h.columns;
        total_simplices += h.simplices;
        free(h.dist);
        free(pts);
    }
    /* the apparent pairs take most simplices out, but not all */
    ck_assert_uint_gt(total_cols, 0);
    ck_assert_uint_lt(total_cols * 2, total_simplices);
}
END_TEST

/* A SPARSE input of m edges over n vertices. */
static topoml_input_v1 sparse_input(uint32_t n, topoml_edge *edges, uint64_t m)
{
    topoml_input_v1 in = {0};
    in.struct_size = sizeof in;
    in.kind = TOPOML_INPUT_SPARSE;
    in.n = n;
    in.n_edges = m;
    in.edges = edges;
    return in;
}

/* The edge collapse's output goes to the plugin as SPARSE input under a
 * finite threshold; its columns come from the condensed matrix of the
 * edges' values, +inf where there is no edge (tmc_sparse_source). With that
 * matrix the column code must give the engine's barcode on the edges, for
 * random graphs whose values are not distances (the collapse moves edges to
 * other edges' values), with ties. */
START_TEST(test_sparse_columns_read_the_matrix_of_the_edges)
{
    setup();
    uint64_t total_cols = 0;
    for (int c = 0; c < 120; c++) {
        const uint32_t n = 4 + (uint32_t)(rnd_unit() * 24);
        const int ties = c % 3 == 0;
        topoml_edge *edges = malloc((size_t)n * n * sizeof *edges);
        uint64_t m = 0;
        double keep = 0.4 + 0.5 * rnd_unit();
        for (uint32_t j = 1; j < n; j++)
            for (uint32_t i = 0; i < j; i++)
                if (rnd_unit() < keep)
                    edges[m++] = (topoml_edge){ties ? (double)(int)(rnd_unit() * 4)
                                                    : rnd_unit(),
                                               i, j};
        topoml_input_v1 in = sparse_input(n, edges, m);
        topoml_input_v1 source;
        double *held = NULL;
        ck_assert_int_eq(tmc_sparse_source(&ctx, &in, &source, &held), TOPOML_OK);
        ck_assert_int_eq(source.kind, TOPOML_INPUT_CONDENSED);
        ck_assert_ptr_eq(source.data, held);
        uint64_t finite = 0;
        for (uint64_t k = 0; k < tmc_row_start(n); k++)
            finite += isfinite(held[k]);
        ck_assert_uint_eq(finite, m);
        for (uint64_t e = 0; e < m; e++)
            ck_assert(held[tmc_row_start(edges[e].j) + edges[e].i] == edges[e].d);
        host_cols h = {n, held, 0, 0, 0};
        topoml_rips_params_v1 prm = {sizeof prm, 2 + (uint32_t)(c % 2),
                                     ties ? 2.0 : 0.3 + 0.6 * rnd_unit(), c % 5 == 0 ? 3u : 2u,
                                     0, 0, 0};
        expect_hooked_barcodes_equal(&in, &prm, &h);
        total_cols += h.columns;
        tmc_host_free(&ctx, held);
        free(edges);
    }
    ck_assert_uint_gt(total_cols, 0);
    /* An edge that is not one is refused; the matrix counts against the
     * memory limit. */
    topoml_edge bad[2] = {{0.5, 0, 1}, {0.5, 2, 2}};
    topoml_input_v1 in = {0};
    in.struct_size = sizeof in;
    in.kind = TOPOML_INPUT_SPARSE;
    in.n = 3;
    in.n_edges = 2;
    in.edges = bad;
    topoml_input_v1 source;
    double *held = (double *)1;
    ck_assert_int_eq(tmc_sparse_source(&ctx, &in, &source, &held), TOPOML_E_INVALID);
    ck_assert_ptr_null(held);
    ck_assert_ptr_nonnull(strstr(err, "edge 1"));
    in.n_edges = 1;
    in.n = 1000;
    call.max_memory = 1000;
    ck_assert_int_eq(tmc_sparse_source(&ctx, &in, &source, &held), TOPOML_E_LIMIT);
    ck_assert_ptr_null(held);
}
END_TEST

/* Larger graphs than above, as the collapse hands them over: geometric
 * graphs of a few hundred points (the edges under a threshold, a share of
 * them dropped, with their own lengths or rounded to a few values: ties),
 * up to dimension 2 or 3. */
START_TEST(test_sparse_columns_on_larger_geometric_graphs)
{
    setup();
    for (int c = 0; c < 4; c++) {
        const uint32_t n = c < 2 ? 240 : 120, dim = 3;
        const double thr = c < 2 ? 0.35 : 0.45;
        double *pts = malloc((size_t)n * dim * 8);
        for (uint32_t k = 0; k < n * dim; k++)
            pts[k] = rnd_unit();
        topoml_edge *edges = malloc((size_t)n * n * sizeof *edges);
        uint64_t m = 0;
        for (uint32_t j = 1; j < n; j++)
            for (uint32_t i = 0; i < j; i++) {
                double d = scalar_point_dist(TOPOML_F64, TOPOML_METRIC_EUCLIDEAN, pts, dim, j, i);
                if (d <= thr && (c % 2 == 0 || rnd_unit() < 0.6))
                    edges[m++] = (topoml_edge){c % 2 ? (double)(int)(d * 20) / 20 : d, i, j};
            }
        topoml_input_v1 in = sparse_input(n, edges, m);
        topoml_input_v1 source;
        double *held = NULL;
        ck_assert_int_eq(tmc_sparse_source(&ctx, &in, &source, &held), TOPOML_OK);
        host_cols h = {n, held, 0, 0, 0};
        topoml_rips_params_v1 prm = {sizeof prm, c < 2 ? 2u : 3u, thr, 2u, 0, 0, 0};
        expect_hooked_barcodes_equal(&in, &prm, &h);
        tmc_host_free(&ctx, held);
        free(edges);
        free(pts);
    }
}
END_TEST

/* Fields appended in core 0.4 are read only when the struct has them; input
 * in device memory is checked for what it can be before any device work. */
START_TEST(test_device_input_fields_are_checked)
{
    setup();
    double pts[4] = {0, 1, 2, 3};
    topoml_input_v1 in;
    memset(&in, 0, sizeof in);
    in.struct_size = offsetof(topoml_input_v1, memory); /* an older core's */
    in.kind = TOPOML_INPUT_POINTS;
    in.n = 2;
    in.dim = 2;
    in.data = pts;
    in.memory = 7; /* beyond struct_size: never read */
    ck_assert(!tmc_on_device(&in));
    ck_assert_int_eq(tmc_check_input(&call, &in, 1u << TOPOML_INPUT_POINTS), TOPOML_OK);
    in.struct_size = offsetof(topoml_input_v1, memory) - 4;
    ck_assert_int_eq(tmc_check_input(&call, &in, 1u << TOPOML_INPUT_POINTS), TOPOML_E_INVALID);
    in.struct_size = sizeof in;
    ck_assert(tmc_on_device(&in));
    ck_assert_int_eq(tmc_check_input(&call, &in, 1u << TOPOML_INPUT_POINTS),
                     TOPOML_E_UNSUPPORTED);
    in.memory = TOPOML_MEMORY_CUDA;
    ck_assert_int_eq(tmc_check_input(&call, &in, 1u << TOPOML_INPUT_POINTS), TOPOML_OK);
    in.device = -1;
    ck_assert_int_eq(tmc_check_input(&call, &in, 1u << TOPOML_INPUT_POINTS), TOPOML_E_INVALID);
    in.device = 0;
    in.kind = TOPOML_INPUT_SPARSE;
    ck_assert_int_eq(tmc_check_input(&call, &in, 1u << TOPOML_INPUT_SPARSE),
                     TOPOML_E_UNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(err, "points or a condensed matrix"));
    in.memory = TOPOML_MEMORY_HOST;
    ck_assert(!tmc_on_device(&in));
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
    tcase_add_test(tc, test_column_code_gives_the_engines_barcodes);
    tcase_add_test(tc, test_sparse_columns_read_the_matrix_of_the_edges);
    tcase_add_test(tc, test_sparse_columns_on_larger_geometric_graphs);
    tcase_add_test(tc, test_device_input_fields_are_checked);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
