/*
 * test_metric_rows.c — the distances of metric_rows.h, computed a row at a
 * time across pairs, against metric.h's pair-by-pair function: every bit
 * the same, for every metric, both dtypes, dimensions around the vector
 * widths and the panel width, ties, repeated points, zero vectors and
 * coordinates whose squares leave the dtype's plain range. And the Rips
 * engine, which reads point clouds through it: its edges under a threshold,
 * seen through its barcode and generators, are those of the pair-by-pair
 * distances handed to it as an edge list.
 */
#include <check.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif
#endif
#ifndef RUNNING_ON_VALGRIND
#define RUNNING_ON_VALGRIND 0
#endif

#include "metric.h"
#include "metric_rows.h"
#include "rips.h"

#include "check_run.h"

static uint64_t rng_state;

static uint64_t rnd(void)
{
    /* splitmix64 */
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double rnd_unit(void)
{
    return (double)(rnd() >> 11) * 0x1p-53;
}

enum { CLOUD_RANDOM, CLOUD_TIES, CLOUD_REPEATS, CLOUD_HUGE, CLOUD_TINY, CLOUD_KINDS };

/* n points of `dim` coordinates of one kind, in double; the float copy is
 * the same values rounded. Every kind has a zero vector now and then (the
 * cosine's 1) and some repeated points (distance 0). */
static void make_cloud(int kind, uint32_t n, uint32_t dim, double *x)
{
    for (uint64_t q = 0; q < (uint64_t)n * dim; q++) {
        double v = rnd_unit() * 2.0 - 1.0;
        switch (kind) {
        case CLOUD_TIES: v = (double)(rnd() % 3) - 1.0; break;
        case CLOUD_REPEATS: v = (double)(rnd() % 2) * 0.5; break;
        /* squares past float's and double's range, and a sum past them */
        case CLOUD_HUGE: v *= rnd() % 2 ? 0x1p+70 : 0x1p+600; break;
        /* squares below float's and double's plain range */
        case CLOUD_TINY: v *= rnd() % 2 ? 0x1p-70 : 0x1p-600; break;
        default: break;
        }
        x[q] = v;
    }
    for (uint32_t i = 1; i < n; i++) {
        if (rnd() % 5 == 0) /* a repeated point */
            memcpy(x + (uint64_t)i * dim, x + (uint64_t)(rnd() % i) * dim, dim * sizeof *x);
        else if (rnd() % 11 == 0) /* the zero vector */
            memset(x + (uint64_t)i * dim, 0, dim * sizeof *x);
    }
}

static bool same_bits(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

START_TEST(test_rows_equal_pair_by_pair_distances_bit_for_bit)
{
    static const uint32_t dims[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 64};
    static const uint32_t sizes[] = {1, 2, 9, 16, 17, 41};
    rng_state = 1;
    uint64_t compared = 0, scaled = 0;
    for (size_t di = 0; di < sizeof dims / sizeof dims[0]; di++)
        /* under Valgrind (50 times slower) n = 1, 2, 17: still partial
         * and whole panels of every width */
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
            for (int kind = 0; kind < CLOUD_KINDS; kind++) {
                const uint32_t dim = dims[di], n = sizes[si];
                if (RUNNING_ON_VALGRIND && n != 1 && n != 2 && n != 17)
                    continue;
                double *x = malloc((size_t)n * dim * sizeof *x);
                float *xf = malloc((size_t)n * dim * sizeof *xf);
                double *out = malloc((size_t)n * sizeof *out);
                ck_assert(x && xf && out);
                make_cloud(kind, n, dim, x);
                for (uint64_t q = 0; q < (uint64_t)n * dim; q++)
                    xf[q] = (float)x[q];
                for (uint32_t dtype = TOPOML_F32; dtype <= TOPOML_F64; dtype++)
                    for (uint32_t metric = 0; metric < TOPOML_METRIC_COUNT; metric++)
                        for (int wide = 0; wide <= (int)scalar_rows_wide(); wide++) {
                            const void *data = dtype == TOPOML_F32 ? (const void *)xf : x;
                            uint64_t bytes = scalar_panels_bytes(dtype, metric, n, dim, wide);
                            ck_assert_uint_gt(bytes, 0);
                            void *mem = malloc(bytes);
                            ck_assert_ptr_nonnull(mem);
                            scalar_panels p;
                            scalar_panels_fill(&p, dtype, metric, data, n, dim, wide, mem);
                            for (uint32_t i = 0; i < n; i++) {
                                /* the engine's rows (j < i), and whole rows */
                                const uint32_t end = i % 2 ? i : n;
                                for (uint32_t j = 0; j < n; j++)
                                    out[j] = -1.0;
                                scalar_panels_row(&p, i, end, out);
                                for (uint32_t j = 0; j < n; j++) {
                                    if (j >= end) {
                                        ck_assert_msg(out[j] == -1.0, "wrote past the row's end");
                                        continue;
                                    }
                                    double want = scalar_point_dist(dtype, metric, data, dim, i, j);
                                    ck_assert_msg(same_bits(out[j], want),
                                                  "dtype %u metric %u dim %u n %u kind %d wide %d: "
                                                  "d(%u, %u) = %a, pair by pair %a",
                                                  dtype, metric, dim, n, kind, wide, i, j, out[j],
                                                  want);
                                    compared++;
                                    scaled += kind >= CLOUD_HUGE;
                                }
                            }
                            free(mem);
                        }
                free(x);
                free(xf);
                free(out);
            }
    ck_assert_uint_gt(compared, 100000);
    ck_assert_uint_gt(scaled, 10000);
}
END_TEST

/* ---- the engine's edges under a threshold ---- */

static void *h_alloc(void *h, size_t size)
{
    (void)h;
    return malloc(size);
}

static void *h_realloc(void *h, void *p, size_t size)
{
    (void)h;
    return realloc(p, size);
}

static void h_free(void *h, void *p)
{
    (void)h;
    free(p);
}

static char errbuf[512];

static topoml_call_v1 make_call(void)
{
    topoml_call_v1 c = {0};
    c.struct_size = sizeof c;
    c.alloc = h_alloc;
    c.realloc = h_realloc;
    c.free = h_free;
    c.error = errbuf;
    c.error_size = sizeof errbuf;
    c.device = -1;
    return c;
}

typedef struct result {
    topoml_barcode_v1 b;
} result;

static void run(const topoml_input_v1 *in, uint32_t max_dim, double threshold, result *res)
{
    topoml_call_v1 call = make_call();
    topoml_rips_params_v1 prm = {0};
    prm.struct_size = sizeof prm;
    prm.max_dim = max_dim;
    prm.threshold = threshold;
    prm.modulus = 2;
    prm.flags = TOPOML_RIPS_PARAM_GENERATORS;
    memset(&res->b, 0, sizeof res->b);
    res->b.struct_size = sizeof res->b;
    int rc = scalar_rips(&call, in, &prm, &res->b);
    ck_assert_msg(rc == TOPOML_OK, "scalar_rips: %d %s", rc, errbuf);
}

/* Same intervals (every bit) with the same generators, in the same order. */
static void assert_same(const result *a, const result *b, const char *what)
{
    ck_assert_msg(a->b.n_intervals == b->b.n_intervals, "%s: %llu against %llu intervals", what,
                  (unsigned long long)a->b.n_intervals, (unsigned long long)b->b.n_intervals);
    for (uint64_t k = 0; k < a->b.n_intervals; k++) {
        const topoml_interval *x = &a->b.intervals[k], *y = &b->b.intervals[k];
        ck_assert_msg(
            x->dim == y->dim && same_bits(x->birth, y->birth) && same_bits(x->death, y->death),
            "%s: interval %llu: dim %u [%a, %a) against dim %u [%a, %a)", what,
            (unsigned long long)k, x->dim, x->birth, x->death, y->dim, y->birth, y->death);
        ck_assert_msg(memcmp(&a->b.generators[k], &b->b.generators[k], sizeof a->b.generators[k]) ==
                          0,
                      "%s: interval %llu: other generators", what, (unsigned long long)k);
    }
}

static void free_result(result *r)
{
    free(r->b.intervals);
    free(r->b.generators);
}

/* A star: the origin and points +-s e_k (some twice) at distances from the
 * origin that make it the centre: the enclosing radius is below most
 * distances, so a threshold above it keeps few pairs. */
static void make_star(uint32_t n, uint32_t dim, double *x)
{
    memset(x, 0, (size_t)n * dim * sizeof *x);
    for (uint32_t i = 1; i < n; i++)
        x[(uint64_t)i * dim + (i - 1) % dim] = ((i - 1) / dim) % 2 ? -1.0 : 1.0;
}

START_TEST(test_rips_edges_under_threshold_are_the_pair_by_pair_ones)
{
    static const uint32_t dims[] = {1, 3, 5, 16, 17, 33};
    rng_state = 2;
    int runs = 0;
    for (size_t di = 0; di < sizeof dims / sizeof dims[0]; di++)
        /* under Valgrind (50 times slower): ties and the star, in R^3, R^16, R^33 */
        for (int kind = 0; kind <= CLOUD_KINDS; kind++) {
            if (RUNNING_ON_VALGRIND && ((kind != CLOUD_TIES && kind != CLOUD_KINDS) || di % 2 == 0))
                continue;
            const uint32_t dim = dims[di], n = 30 + (uint32_t)(rnd() % 20);
            double *x = malloc((size_t)n * dim * sizeof *x);
            float *xf = malloc((size_t)n * dim * sizeof *xf);
            double *d = malloc((size_t)n * n * sizeof *d);
            topoml_edge *edges = malloc((size_t)n * n * sizeof *edges);
            ck_assert(x && xf && d && edges);
            if (kind == CLOUD_KINDS)
                make_star(n, dim, x);
            else
                make_cloud(kind == CLOUD_HUGE || kind == CLOUD_TINY ? CLOUD_RANDOM : kind, n, dim,
                           x);
            for (uint64_t q = 0; q < (uint64_t)n * dim; q++)
                xf[q] = (float)x[q];
            for (uint32_t dtype = TOPOML_F32; dtype <= TOPOML_F64; dtype++)
                for (uint32_t metric = 0; metric < TOPOML_METRIC_COUNT; metric++) {
                    const void *data = dtype == TOPOML_F32 ? (const void *)xf : x;
                    for (uint32_t i = 0; i < n; i++)
                        for (uint32_t j = 0; j < i; j++)
                            d[(uint64_t)i * n + j] =
                                scalar_point_dist(dtype, metric, data, dim, i, j);
                    /* thresholds: one of the distances (ties with it), one
                     * between two, one above every distance, none */
                    const uint32_t a = 1 + (uint32_t)(rnd() % (n - 1)), b = (uint32_t)(rnd() % a);
                    const double pick = d[(uint64_t)a * n + b];
                    const double star = metric == TOPOML_METRIC_SQEUCLIDEAN ? 1.5 : 1.2;
                    const double thresholds[] = {pick, pick * 0.75, star, 1e300, INFINITY};
                    for (size_t ti = 0; ti < sizeof thresholds / sizeof thresholds[0]; ti++) {
                        const double t = thresholds[ti];
                        uint64_t m = 0;
                        for (uint32_t i = 0; i < n; i++)
                            for (uint32_t j = 0; j < i; j++)
                                if (d[(uint64_t)i * n + j] <= t)
                                    edges[m++] = (topoml_edge){d[(uint64_t)i * n + j], j, i};
                        topoml_input_v1 pts = {0}, sp = {0};
                        pts.struct_size = sp.struct_size = sizeof pts;
                        pts.kind = TOPOML_INPUT_POINTS;
                        pts.dtype = dtype;
                        pts.metric = metric;
                        pts.n = n;
                        pts.dim = dim;
                        pts.data = data;
                        sp.kind = TOPOML_INPUT_SPARSE;
                        sp.n = n;
                        sp.n_edges = m;
                        sp.edges = edges;
                        result got, want;
                        run(&pts, 2, t, &got);
                        run(&sp, 2, t, &want);
                        char what[96];
                        snprintf(what, sizeof what, "dim %u kind %d dtype %u metric %u t %g", dim,
                                 kind, dtype, metric, t);
                        assert_same(&got, &want, what);
                        free_result(&got);
                        free_result(&want);
                        runs++;
                    }
                }
            free(x);
            free(xf);
            free(d);
            free(edges);
        }
    ck_assert_int_gt(runs, RUNNING_ON_VALGRIND ? 250 : 1000);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("metric_rows");
    TCase *tc = tcase_create("rows");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_rows_equal_pair_by_pair_distances_bit_for_bit);
    tcase_add_test(tc, test_rips_edges_under_threshold_are_the_pair_by_pair_ones);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return topoml_check_run(suite());
}
