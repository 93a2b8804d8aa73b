/*
 * test_collapse.c — the edge collapse (core/src/compute/collapse.c): with collapse
 * on, topoml_barcode_compute gives exactly the barcode it gives with collapse
 * off, on many seeded random inputs of every kind — point clouds, distance
 * matrices with ties and absent edges, sparse edge lists — with duplicate
 * points, thresholds that cut and none, Z/2 and Z/3; the collapse really
 * removes edges where it should; bad input still fails the way it does
 * without the collapse.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "compute/compute.h"
#include "topoml/topoml.h"

#include "check_run.h"

static topoml_context *new_ctx(void)
{
    topoml_context_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.flags = TOPOML_CTX_NO_ENV | TOPOML_CTX_NO_PLUGINS;
    topoml_context *ctx = NULL;
    ck_assert_int_eq(topoml_context_new(&ctx, &o), TOPOML_OK);
    return ctx;
}

/* A small seeded generator (xorshift64*), the same on every platform. */
static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * UINT64_C(2685821657736338717);
}

static double rng_unit(uint64_t *s)
{
    return (double)(rng_next(s) >> 11) / 9007199254740992.0;
}

static int interval_cmp(const void *a, const void *b)
{
    const topoml_interval *x = a, *y = b;
    if (x->dim != y->dim)
        return x->dim < y->dim ? -1 : 1;
    if (x->birth != y->birth)
        return x->birth < y->birth ? -1 : 1;
    if (x->death != y->death)
        return x->death < y->death ? -1 : 1;
    return 0;
}

/* The barcode of `d` under `opts` with the given collapse setting, sorted. */
static topoml_interval *barcode(topoml_context *ctx, const topoml_data *d,
                                topoml_rips_options opts, uint32_t collapse, uint64_t *n)
{
    opts.collapse = collapse;
    topoml_barcode *bc = NULL;
    int rc = topoml_barcode_compute(ctx, &bc, d, &opts);
    ck_assert_msg(rc == TOPOML_OK, "collapse %u: %s", collapse, topoml_errmsg(ctx));
    const topoml_interval *iv = topoml_barcode_intervals(bc, n);
    topoml_interval *copy = malloc((*n ? *n : 1) * sizeof *copy);
    ck_assert_ptr_nonnull(copy);
    memcpy(copy, iv, *n * sizeof *copy);
    qsort(copy, *n, sizeof *copy, interval_cmp);
    topoml_barcode_free(bc);
    return copy;
}

/* Collapse on and off must agree bar for bar, bit for bit: a delayed edge
 * takes the value of another input edge, so no value is ever computed. */
static void assert_same_barcode(topoml_context *ctx, const topoml_data *d,
                                const topoml_rips_options *opts, const char *what, int seed)
{
    uint64_t n_on, n_off;
    topoml_interval *on = barcode(ctx, d, *opts, TOPOML_COLLAPSE_ON, &n_on);
    topoml_interval *off = barcode(ctx, d, *opts, TOPOML_COLLAPSE_OFF, &n_off);
    ck_assert_msg(n_on == n_off, "%s seed %d (dim %u, threshold %g, Z/%u): %llu bars with "
                  "collapse, %llu without", what, seed, opts->max_dim, opts->threshold,
                  opts->modulus, (unsigned long long)n_on, (unsigned long long)n_off);
    for (uint64_t k = 0; k < n_on; k++)
        ck_assert_msg(interval_cmp(&on[k], &off[k]) == 0,
                      "%s seed %d: bar %llu differs: dim %u [%g, %g) with collapse, "
                      "dim %u [%g, %g) without", what, seed, (unsigned long long)k, on[k].dim,
                      on[k].birth, on[k].death, off[k].dim, off[k].birth, off[k].death);
    free(on);
    free(off);
}

/* Points: uniform in a cube, on a grid (many equal distances), or on a
 * noisy circle (where the collapse removes most edges), some repeated. */
static double *random_points(uint64_t *s, int shape, uint64_t n, uint64_t dim)
{
    double *x = malloc(n * dim * sizeof *x);
    ck_assert_ptr_nonnull(x);
    for (uint64_t i = 0; i < n; i++) {
        for (uint64_t c = 0; c < dim; c++) {
            if (shape == 0)
                x[i * dim + c] = rng_unit(s);
            else if (shape == 1)
                x[i * dim + c] = (double)(rng_next(s) % 4);
            else
                x[i * dim + c] = (c == 0   ? cos(6.283185307179586 * i / n)
                                  : c == 1 ? sin(6.283185307179586 * i / n)
                                           : 0.0) + 0.05 * rng_unit(s);
        }
        if (i > 0 && rng_next(s) % 8 == 0) /* a duplicate of an earlier point */
            memcpy(x + i * dim, x + (rng_next(s) % i) * dim, dim * sizeof *x);
    }
    return x;
}

START_TEST(test_collapse_keeps_barcode_of_point_clouds)
{
    topoml_context *ctx = new_ctx();
    for (int seed = 1; seed <= 60; seed++) {
        uint64_t s = 0x9e3779b97f4a7c15u * (uint64_t)seed;
        int shape = seed % 3;
        uint64_t n = 4 + rng_next(&s) % 36, dim = 1 + rng_next(&s) % 4;
        double *x = random_points(&s, shape, n, dim);
        topoml_data *d = NULL;
        ck_assert_int_eq(topoml_data_from_points(ctx, &d, n, dim, x), TOPOML_OK);
        topoml_rips_options o;
        topoml_rips_options_init(&o);
        o.max_dim = n <= 16 ? 3 : 2;
        o.modulus = seed % 4 == 0 ? 3 : 2;
        o.threshold = seed % 2 ? INFINITY : (shape == 1 ? 2.0 : 0.2 + 0.8 * rng_unit(&s));
        assert_same_barcode(ctx, d, &o, "points", seed);
        topoml_data_free(ctx, d);
        free(x);
    }
    topoml_context_free(ctx);
}
END_TEST

/* The collapse reads a point cloud's pairs a row at a time (metric_rows.h),
 * the engine too: in every metric and in dimensions around the rows' vector
 * widths, with repeated points, the bars with the collapse on must be the
 * ones without, value for value (a distance one ulp off would move a bar). */
START_TEST(test_collapse_rows_give_the_engine_distances_in_every_metric)
{
    topoml_context *ctx = new_ctx();
    static const uint64_t dims[] = {1, 3, 5, 8, 16, 17, 33};
    int seed = 0;
    for (uint32_t metric = 0; metric < TOPOML_METRIC_COUNT; metric++)
        for (size_t k = 0; k < sizeof dims / sizeof *dims; k++) {
            seed++;
            uint64_t s = 0xbf58476d1ce4e5b9u * (uint64_t)seed;
            uint64_t n = 20 + rng_next(&s) % 21, dim = dims[k];
            double *x = random_points(&s, seed % 3, n, dim);
            topoml_data *d = NULL;
            ck_assert_int_eq(topoml_data_from_points(ctx, &d, n, dim, x), TOPOML_OK);
            topoml_rips_options o;
            topoml_rips_options_init(&o);
            o.max_dim = 2;
            o.metric = metric;
            /* no threshold, and one that cuts: some pair's distance */
            o.threshold = INFINITY;
            assert_same_barcode(ctx, d, &o, "points, every metric", seed);
            double *all = NULL;
            uint64_t count = 0;
            ck_assert_int_eq(topoml_distances(ctx, d, (topoml_metric)metric, TOPOML_F64,
                                              (void **)&all, &count),
                             TOPOML_OK);
            ck_assert_uint_gt(count, 0);
            o.threshold = all[count / 2];
            topoml_free(ctx, all);
            assert_same_barcode(ctx, d, &o, "points, every metric, threshold", seed);
            topoml_data_free(ctx, d);
            free(x);
        }
    topoml_context_free(ctx);
}
END_TEST

START_TEST(test_collapse_keeps_barcode_of_matrices_with_ties)
{
    topoml_context *ctx = new_ctx();
    for (int seed = 1; seed <= 60; seed++) {
        uint64_t s = 0xd1b54a32d192ed03u * (uint64_t)seed;
        uint64_t n = 3 + rng_next(&s) % 30, pairs = n * (n - 1) / 2;
        double *m = malloc(pairs * sizeof *m);
        ck_assert_ptr_nonnull(m);
        /* Few distinct values: ties everywhere; zeros are repeated points. */
        for (uint64_t q = 0; q < pairs; q++)
            m[q] = (double)(rng_next(&s) % (seed % 3 == 0 ? 3 : 6));
        topoml_data *d = NULL;
        ck_assert_int_eq(topoml_data_from_condensed(ctx, &d, n, m), TOPOML_OK);
        topoml_rips_options o;
        topoml_rips_options_init(&o);
        o.max_dim = n <= 12 ? 3 : 2;
        o.modulus = seed % 5 == 0 ? 3 : 2;
        o.threshold = seed % 2 ? INFINITY : 3.0;
        assert_same_barcode(ctx, d, &o, "matrix", seed);
        topoml_data_free(ctx, d);
        free(m);
    }
    topoml_context_free(ctx);
}
END_TEST

START_TEST(test_collapse_keeps_barcode_of_sparse_input)
{
    topoml_context *ctx = new_ctx();
    for (int seed = 1; seed <= 40; seed++) {
        uint64_t s = 0xbf58476d1ce4e5b9u * (uint64_t)seed;
        uint64_t n = 3 + rng_next(&s) % 30;
        topoml_edge *e = malloc(n * n * sizeof *e);
        ck_assert_ptr_nonnull(e);
        uint64_t m = 0;
        /* Sometimes one vertex is joined to all others: then the enclosing
         * radius is finite for sparse input too. */
        bool hub = seed % 4 == 0;
        for (uint32_t j = 1; j < n; j++)
            for (uint32_t i = 0; i < j; i++)
                if ((hub && i == 0) || rng_next(&s) % 3 != 0)
                    e[m++] = (topoml_edge){(double)(rng_next(&s) % 7) * 0.5, i, j};
        topoml_data *d = NULL;
        ck_assert_int_eq(topoml_data_from_edges(ctx, &d, n, m, e), TOPOML_OK);
        topoml_rips_options o;
        topoml_rips_options_init(&o);
        o.max_dim = 2;
        o.threshold = seed % 2 ? INFINITY : 2.0;
        assert_same_barcode(ctx, d, &o, "sparse", seed);
        topoml_data_free(ctx, d);
        free(e);
    }
    topoml_context_free(ctx);
}
END_TEST

/* The stage must do something: on samples of a circle the flag complex
 * below the threshold is mostly filled-in disks, whose edges collapse. */
START_TEST(test_collapse_removes_dominated_edges)
{
    topoml_context *ctx = new_ctx();
    for (int seed = 1; seed <= 5; seed++) {
        uint64_t s = 77u * (uint64_t)seed;
        double *x = random_points(&s, 2, 200, 2);
        topoml_data *d = NULL;
        ck_assert_int_eq(topoml_data_from_points(ctx, &d, 200, 2, x), TOPOML_OK);
        tm_collapsed c;
        ck_assert_int_eq(tm_collapse_input(ctx, d, TOPOML_METRIC_EUCLIDEAN, 0.5, 0.0, 0, 1, &c),
                         TOPOML_OK);
        ck_assert(c.done);
        ck_assert_msg(c.n_edges * 2 < c.n_before, "seed %d: %llu of %llu edges left", seed,
                      (unsigned long long)c.n_edges, (unsigned long long)c.n_before);
        /* What is left is a valid edge list whose values are input values
         * no smaller than the edge's own. */
        for (uint64_t k = 0; k < c.n_edges; k++) {
            topoml_edge *e = &c.edges[k];
            ck_assert(e->i < e->j && e->j < 200);
            double own = 0.0;
            for (uint64_t q = 0; q < 2; q++) {
                double t = x[e->i * 2 + q] - x[e->j * 2 + q];
                own += t * t;
            }
            ck_assert(e->d >= sqrt(own) && e->d <= 0.5);
        }
        tm_free(ctx, c.edges);
        topoml_data_free(ctx, d);
        free(x);
    }
    topoml_context_free(ctx);
}
END_TEST

/* The edges of a point cloud under a cutting threshold come from a grid
 * search (collapse.c): it must find every pair the full scan finds, in
 * every dimension (1 to 6, more than the grid's 3 axes), for each metric it
 * serves, with points on cell borders (a lattice) and repeated points. */
START_TEST(test_collapse_grid_finds_every_edge)
{
    topoml_context *ctx = new_ctx();
    static const topoml_metric metrics[] = {TOPOML_METRIC_EUCLIDEAN, TOPOML_METRIC_MANHATTAN,
                                            TOPOML_METRIC_CHEBYSHEV, TOPOML_METRIC_COSINE};
    for (int seed = 1; seed <= 18; seed++) {
        uint64_t s = 0x94d049bb133111ebu * (uint64_t)seed;
        uint64_t n = 150 + rng_next(&s) % 200, dim = 1 + (uint64_t)seed % 6;
        double *x = random_points(&s, seed % 2, n, dim);
        if (seed % 2) /* lattice spacing 1, threshold exactly 1: pairs on cell borders */
            for (uint64_t q = 0; q < n * dim; q++)
                x[q] = (double)((uint64_t)x[q] % 4);
        topoml_data *d = NULL;
        ck_assert_int_eq(topoml_data_from_points(ctx, &d, n, dim, x), TOPOML_OK);
        topoml_metric metric = metrics[seed % 4];
        double t = seed % 2 ? 1.0 : 0.05 + 0.1 * rng_unit(&s);
        /* The engine's threshold: t, or the enclosing radius if smaller. */
        topoml_stats st;
        ck_assert_int_eq(topoml_data_stats(ctx, d, metric, t, &st), TOPOML_OK);
        double cut = st.enclosing_radius < t ? st.enclosing_radius : t;
        topoml_edge *all = NULL;
        uint64_t n_all = 0;
        ck_assert_int_eq(topoml_edges(ctx, d, metric, cut, &all, &n_all), TOPOML_OK);
        tm_collapsed c;
        ck_assert_int_eq(tm_collapse_input(ctx, d, metric, t, 0.0, 0, 1, &c), TOPOML_OK);
        ck_assert(c.done);
        ck_assert_msg(c.n_before == n_all, "seed %d (n %llu, dim %llu, metric %d, t %g): %llu "
                      "edges found, %llu within the threshold", seed, (unsigned long long)n,
                      (unsigned long long)dim, (int)metric, t, (unsigned long long)c.n_before,
                      (unsigned long long)n_all);
        tm_free(ctx, c.edges);
        topoml_free(ctx, all);
        topoml_data_free(ctx, d);
        free(x);
    }
    topoml_context_free(ctx);
}
END_TEST

/* The flag complex of a complete graph with distinct edge values ends as a
 * simplex: most edges collapse, but never so many that the graph falls
 * apart (H0 is kept too). */
START_TEST(test_collapse_direct_on_complete_graph)
{
    topoml_context *ctx = new_ctx();
    const uint32_t n = 12;
    topoml_edge e[66];
    uint64_t m = 0;
    for (uint32_t j = 1; j < n; j++)
        for (uint32_t i = 0; i < j; i++, m++)
            e[m] = (topoml_edge){(double)(m + 1), i, j};
    uint64_t left = 0;
    tm_collapse_probe probe;
    ck_assert_int_eq(tm_collapse_edges(ctx, n, e, m, 0.0, 1, &left, &probe), TOPOML_OK);
    ck_assert(!probe.declined);
    ck_assert_uint_lt(left, m);
    ck_assert_uint_ge(left, n - 1);
    topoml_context_free(ctx);
}
END_TEST

/* TOPOML_COLLAPSE_AUTO's probe: a collapse asked to remove more of the
 * longest edges than it can declines and leaves the list exactly as it was;
 * one asked for nothing never declines; on a circle sample (most edges
 * dominated) the automatic share is reached. */
START_TEST(test_collapse_probe_declines_and_leaves_the_list)
{
    topoml_context *ctx = new_ctx();
    for (int seed = 1; seed <= 4; seed++) {
        uint64_t s = 99u * (uint64_t)seed;
        double *x = random_points(&s, seed % 3, 120, 3);
        topoml_data *d = NULL;
        ck_assert_int_eq(topoml_data_from_points(ctx, &d, 120, 3, x), TOPOML_OK);
        topoml_edge *e = NULL;
        uint64_t m = 0;
        ck_assert_int_eq(topoml_edges(ctx, d, TOPOML_METRIC_EUCLIDEAN, 0.6, &e, &m), TOPOML_OK);
        topoml_edge *copy = malloc((m ? m : 1) * sizeof *copy);
        ck_assert_ptr_nonnull(copy);
        memcpy(copy, e, m * sizeof *e);
        uint64_t left = 0;
        tm_collapse_probe probe;
        ck_assert_int_eq(tm_collapse_edges(ctx, 120, e, m, 1.01, 1, &left, &probe), TOPOML_OK);
        ck_assert(probe.declined);
        ck_assert_uint_eq(left, m);
        ck_assert(memcmp(copy, e, m * sizeof *e) == 0);
        ck_assert_int_eq(tm_collapse_edges(ctx, 120, e, m, 0.0, 1, &left, &probe), TOPOML_OK);
        ck_assert(!probe.declined);
        topoml_free(ctx, e);
        free(copy);
        topoml_data_free(ctx, d);
        free(x);
    }
    uint64_t s = 5;
    double *x = random_points(&s, 2, 300, 2);
    topoml_data *d = NULL;
    ck_assert_int_eq(topoml_data_from_points(ctx, &d, 300, 2, x), TOPOML_OK);
    tm_collapsed c;
    ck_assert_int_eq(tm_collapse_input(ctx, d, TOPOML_METRIC_EUCLIDEAN, 0.5, 0.1, 0, 1, &c),
                     TOPOML_OK);
    ck_assert(c.done);
    tm_free(ctx, c.edges);
    topoml_data_free(ctx, d);
    free(x);
    topoml_context_free(ctx);
}
END_TEST

/* n points uniform on the unit 3-sphere in R^4 (normalised points of the
 * ball): like sphere_3_192, a sample too sparse for its dimension, where
 * almost no edge is dominated. */
static double *sphere3_points(uint64_t *s, uint64_t n)
{
    double *x = malloc(n * 4 * sizeof *x);
    ck_assert_ptr_nonnull(x);
    for (uint64_t i = 0; i < n; i++) {
        double r2;
        do {
            r2 = 0.0;
            for (int c = 0; c < 4; c++) {
                x[i * 4 + c] = 2.0 * rng_unit(s) - 1.0;
                r2 += x[i * 4 + c] * x[i * 4 + c];
            }
        } while (r2 > 1.0 || r2 < 1e-6);
        for (int c = 0; c < 4; c++)
            x[i * 4 + c] /= sqrt(r2);
    }
    return x;
}

/* TOPOML_COLLAPSE_AUTO's rule (the share ops.c uses, 0.1): a sparse sample
 * of the 3-sphere is handed on as it is, and the probe says so before it has
 * looked at all of the longest tenth of the edges (it stops once the answer
 * is clear); well-sampled clouds — uniform in a cube with no threshold, a
 * noisy circle under one — are collapsed, most of their edges gone. Either
 * way the barcode is the one without the collapse. */
/* H0 and H1 with the collapse on auto are the bars without it, bit for bit,
 * whatever the probe decided. */
static void assert_auto_is_off(topoml_context *ctx, const topoml_data *d, double threshold)
{
    topoml_rips_options o;
    topoml_rips_options_init(&o);
    o.max_dim = 1;
    o.threshold = threshold;
    uint64_t n_auto, n_off;
    topoml_interval *a = barcode(ctx, d, o, TOPOML_COLLAPSE_AUTO, &n_auto);
    topoml_interval *f = barcode(ctx, d, o, TOPOML_COLLAPSE_OFF, &n_off);
    ck_assert_uint_eq(n_auto, n_off);
    ck_assert(memcmp(a, f, n_auto * sizeof *a) == 0);
    free(a);
    free(f);
}

/* The size rule of the collapse's auto, on the sizes of inputs measured
 * (docs/notes/bench-cpu.md, "Round 12"): everyday clouds at the enclosing
 * radius, where H1's reduction is cheaper than the collapse, are left as
 * they are; the complexes the collapse was built for are handed to the probe. */
START_TEST(test_collapse_plan_skips_cheap_reductions_and_keeps_the_big_wins)
{
    /* n, m, sum of deg^2, max_dim: not worth it */
    const tm_collapse_sizes skip[] = {
        {300, 42102, 23657942.0, 1},   /* a 300-point circle, no threshold */
        {400, 61581, 39215594.0, 1},   /* 400 uniform points in R^2 */
        {1000, 463946, 861698500.0, 1}, /* a 1000-point circle */
        {1000, 367187, 561661858.0, 1}, /* 1000 uniform points in R^2 */
        {2000, 1999000, 0.0, 1},       /* every pair of 2000 points, degrees not counted */
    };
    for (size_t k = 0; k < sizeof skip / sizeof skip[0]; k++) {
        tm_collapse_plan p = tm_collapse_plan_for(&skip[k]);
        ck_assert_msg(!p.worth && p.collapse_s > p.reduction_s && p.reduction_s > 0.0,
                      "case %zu: worth it (collapse %g s, reduction %g s)", k, p.collapse_s,
                      p.reduction_s);
    }
    const tm_collapse_sizes go[] = {
        {297, 41340, 22960000.0, 3},      /* celegans, dim 3 */
        {4096, 234145, 53981526.0, 3},    /* o3_4096, threshold 1.4, dim 3 */
        {1024, 33189, 4344300.0, 3},      /* o3_1024, threshold 1.8, dim 3 */
        {50000, 4490000, 1.65e9, 2},      /* the 50 000-point torus, threshold 0.15 */
        {10000, 179269, 13191444.0, 2},   /* the 10 000-point torus */
        {192, 17857, 6643910.0, 2},       /* sphere_3_192: the probe declines it */
        {20000, 60000, 0.0, 1},           /* a sparse graph, degree 6: H1 costs more */
    };
    for (size_t k = 0; k < sizeof go / sizeof go[0]; k++) {
        tm_collapse_plan p = tm_collapse_plan_for(&go[k]);
        ck_assert_msg(p.worth && p.collapse_s < p.reduction_s,
                      "case %zu: not worth it (collapse %g s, reduction %g s)", k, p.collapse_s,
                      p.reduction_s);
    }
    /* More dimensions only add to the reduction; unknown degrees are taken
     * at their least, 4 m^2 / n, never below it. */
    for (uint32_t dim = 1; dim < 6; dim++) {
        tm_collapse_sizes a = {500, 40000, 0.0, dim}, b = a;
        b.max_dim = dim + 1;
        tm_collapse_plan pa = tm_collapse_plan_for(&a), pb = tm_collapse_plan_for(&b);
        ck_assert(pb.reduction_s >= pa.reduction_s);
        ck_assert(!pa.worth || pb.worth);
        a.sum_deg2 = 1.0; /* below the least possible: taken as the least */
        ck_assert(tm_collapse_plan_for(&a).collapse_s == pa.collapse_s);
    }
    /* H0 alone, or no edges: nothing to weigh */
    const tm_collapse_sizes h0 = {300, 42102, 23657942.0, 0}, none = {300, 0, 0.0, 2};
    ck_assert(tm_collapse_plan_for(&h0).worth && tm_collapse_plan_for(&none).worth);
}
END_TEST

/* tm_collapse_input with auto's probe and the size rule: a 300-point cloud
 * at the enclosing radius for H1 is left as it is before any edge is
 * sorted or probed; for H2, or with no rule (max_dim 0), the probe runs. */
START_TEST(test_collapse_input_applies_the_size_rule)
{
    topoml_context *ctx = new_ctx();
    uint64_t s = 4242;
    double *x = random_points(&s, 0, 300, 2);
    topoml_data *d = NULL;
    ck_assert_int_eq(topoml_data_from_points(ctx, &d, 300, 2, x), TOPOML_OK);
    tm_collapsed c;
    ck_assert_int_eq(tm_collapse_input(ctx, d, TOPOML_METRIC_EUCLIDEAN, INFINITY, 0.1, 1, 1, &c),
                     TOPOML_OK);
    ck_assert(c.planned && !c.plan.worth && !c.done && c.edges == NULL);
    ck_assert_uint_eq(c.probe.size, 0); /* the probe never ran */
    ck_assert_uint_gt(c.n_before, 300 * 299 / 4);
    ck_assert_int_eq(tm_collapse_input(ctx, d, TOPOML_METRIC_EUCLIDEAN, INFINITY, 0.1, 0, 1, &c),
                     TOPOML_OK);
    ck_assert(!c.planned && c.probe.size > 0);
    tm_free(ctx, c.edges);
    ck_assert_int_eq(tm_collapse_input(ctx, d, TOPOML_METRIC_EUCLIDEAN, INFINITY, 0.1, 3, 1, &c),
                     TOPOML_OK);
    ck_assert(c.planned && c.plan.worth && c.probe.size > 0);
    tm_free(ctx, c.edges);
    /* collapse on (no probe): no rule either */
    ck_assert_int_eq(tm_collapse_input(ctx, d, TOPOML_METRIC_EUCLIDEAN, INFINITY, 0.0, 1, 1, &c),
                     TOPOML_OK);
    ck_assert(!c.planned && c.done);
    tm_free(ctx, c.edges);
    topoml_data_free(ctx, d);
    free(x);
    topoml_context_free(ctx);
}
END_TEST

START_TEST(test_collapse_auto_declines_on_a_sphere_and_goes_on_on_a_sampled_space)
{
    topoml_context *ctx = new_ctx();
    for (int seed = 1; seed <= 6; seed++) {
        uint64_t s = 1234u + 77u * (uint64_t)seed;
        const uint64_t n = 150 + 25 * (uint64_t)(seed % 3);
        double *x = sphere3_points(&s, n);
        topoml_data *d = NULL;
        ck_assert_int_eq(topoml_data_from_points(ctx, &d, n, 4, x), TOPOML_OK);
        tm_collapsed c;
        ck_assert_int_eq(tm_collapse_input(ctx, d, TOPOML_METRIC_EUCLIDEAN, INFINITY, 0.1, 0, 1, &c),
                         TOPOML_OK);
        ck_assert_msg(!c.done && c.probe.declined,
                      "sphere seed %d, %llu points: collapsed (%llu of the first %llu of %llu "
                      "removed)",
                      seed, (unsigned long long)n, (unsigned long long)c.probe.removed,
                      (unsigned long long)c.probe.examined, (unsigned long long)c.probe.size);
        ck_assert_uint_lt(c.probe.examined, c.probe.size);
        ck_assert_uint_lt(c.probe.removed * 10, c.probe.size);
        if (seed == 1)
            assert_auto_is_off(ctx, d, INFINITY);
        topoml_data_free(ctx, d);
        free(x);
    }
    for (int seed = 1; seed <= 6; seed++) {
        uint64_t s = 4321u + 31u * (uint64_t)seed;
        const int shape = seed % 2 ? 0 : 2; /* a cube, no threshold; a circle, 0.5 */
        const uint64_t n = shape == 0 ? 200 + 50 * (uint64_t)(seed % 3) : 300;
        double *x = random_points(&s, shape, n, 3);
        topoml_data *d = NULL;
        ck_assert_int_eq(topoml_data_from_points(ctx, &d, n, 3, x), TOPOML_OK);
        tm_collapsed c;
        ck_assert_int_eq(tm_collapse_input(ctx, d, TOPOML_METRIC_EUCLIDEAN,
                                           shape == 0 ? INFINITY : 0.5, 0.1, 0, 1, &c),
                         TOPOML_OK);
        ck_assert_msg(c.done && !c.probe.declined, "shape %d seed %d: declined", shape, seed);
        ck_assert_uint_lt(c.n_edges * 2, c.n_before);
        tm_free(ctx, c.edges);
        if (seed <= 2)
            assert_auto_is_off(ctx, d, shape == 0 ? INFINITY : 0.5);
        topoml_data_free(ctx, d);
        free(x);
    }
    topoml_context_free(ctx);
}
END_TEST

/* With threads the collapse takes the serial one's steps with the serial
 * one's results (collapse.c, "In parallel"): the same edges, values and
 * order, and the same probe, at 2, 3 and 8 threads — on clouds where most
 * edges go (a cube, a noisy circle), where almost none do (the 3-sphere:
 * asked to remove 10% of the longest tenth it declines, asked for nothing
 * it goes through), on a small grid, whose distances tie everywhere and
 * whose points repeat, and on complete graphs, where the look-ahead is
 * mostly redone and stops (the op itself keeps such dense graphs on one
 * thread: tm_collapse_input). The edges are all pairs within the threshold,
 * sorted as the collapse wants them. */
static topoml_edge *pairs_within(const double *x, uint64_t n, uint64_t dim, double threshold,
                                 uint64_t *m)
{
    topoml_edge *e = malloc(n * (n - 1) / 2 * sizeof *e);
    ck_assert_ptr_nonnull(e);
    *m = 0;
    for (uint64_t j = 1; j < n; j++)
        for (uint64_t i = 0; i < j; i++) {
            double s = 0;
            for (uint64_t c = 0; c < dim; c++)
                s += (x[i * dim + c] - x[j * dim + c]) * (x[i * dim + c] - x[j * dim + c]);
            if (sqrt(s) <= threshold)
                e[(*m)++] = (topoml_edge){sqrt(s), (uint32_t)i, (uint32_t)j};
        }
    qsort(e, *m, sizeof *e, tm_collapse_edge_cmp);
    return e;
}

static void assert_threads_are_serial(topoml_context *ctx, const double *x, uint64_t n,
                                      uint64_t dim, double threshold, double min_removed,
                                      bool expect_stop, const char *what)
{
    uint64_t m;
    topoml_edge *in = pairs_within(x, n, dim, threshold, &m);
    ck_assert_msg(m >= 20000, "%s: %llu edges, too few for threads", what, (unsigned long long)m);
    topoml_edge *one = malloc(m * sizeof *one), *par = malloc(m * sizeof *par);
    ck_assert(one && par);
    memcpy(one, in, m * sizeof *in);
    uint64_t n_one, n_par;
    tm_collapse_probe p_one, p_par;
    ck_assert_int_eq(tm_collapse_edges(ctx, n, one, m, min_removed, 1, &n_one, &p_one), TOPOML_OK);
    static const unsigned counts[] = {2, 3, 8};
    for (int k = 0; k < 3; k++) {
        memcpy(par, in, m * sizeof *in);
        ck_assert_int_eq(tm_collapse_edges(ctx, n, par, m, min_removed, counts[k], &n_par, &p_par),
                         TOPOML_OK);
        ck_assert_msg(n_par == n_one && p_par.declined == p_one.declined &&
                          p_par.examined == p_one.examined && p_par.removed == p_one.removed,
                      "%s, %u threads: %llu edges left (serial %llu), probe %llu of %llu "
                      "(serial %llu of %llu)",
                      what, counts[k], (unsigned long long)n_par, (unsigned long long)n_one,
                      (unsigned long long)p_par.removed, (unsigned long long)p_par.examined,
                      (unsigned long long)p_one.removed, (unsigned long long)p_one.examined);
        ck_assert_msg(memcmp(par, one, m * sizeof *one) == 0,
                      "%s, %u threads: other edges or values", what, counts[k]);
        ck_assert_uint_eq(p_par.threads, counts[k]);
        ck_assert_uint_gt(p_par.batches, 0);
        ck_assert_msg((p_par.alone > 0) == expect_stop,
                      "%s, %u threads: the look-ahead %s (%llu batches, %llu redone, %llu alone)",
                      what, counts[k], expect_stop ? "did not stop" : "stopped",
                      (unsigned long long)p_par.batches, (unsigned long long)p_par.redone,
                      (unsigned long long)p_par.alone);
    }
    free(in);
    free(one);
    free(par);
}

START_TEST(test_collapse_on_threads_is_the_serial_collapse)
{
    topoml_context *ctx = new_ctx();
    uint64_t s = 20261204u;
    struct {
        int shape; /* 0 cube, 1 grid, 2 circle, 3 the 3-sphere */
        uint64_t n;
        double threshold, min_removed;
        bool stops; /* the look-ahead is expected to stop paying */
        const char *what;
    } cases[] = {
        {0, 300, INFINITY, 0.0, true, "cube, 300 points (a complete graph)"},
        {2, 1500, 0.3, 0.0, false, "circle, 1500 points, 0.3"},
        {0, 2000, 0.2, 0.0, false, "cube, 2000 points, 0.2"},
        {0, 1000, 0.4, 0.1, false, "cube, 1000 points, 0.4, auto"},
        {1, 240, INFINITY, 0.0, true, "grid with repeats, 240 points"},
        {3, 250, INFINITY, 0.1, true, "3-sphere, 250 points, auto (declines)"},
        {3, 210, INFINITY, 0.0, true, "3-sphere, 210 points, on"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const uint64_t n = cases[k].n, dim = cases[k].shape == 3 ? 4 : 3;
        double *x = cases[k].shape == 3 ? sphere3_points(&s, n)
                                        : random_points(&s, cases[k].shape, n, dim);
        assert_threads_are_serial(ctx, x, n, dim, cases[k].threshold, cases[k].min_removed,
                                  cases[k].stops, cases[k].what);
        free(x);
    }
    topoml_context_free(ctx);
}
END_TEST

/* The edges sorted (by the inlined merge sort, on threads or not) are in
 * qsort's order, element for element:
 * many ties in d (a few distinct values, and equal values from different
 * pairs), slice counts that do not divide the count, thread counts that are
 * not powers of two, and, under a memory limit too small for the second
 * buffer, the calling thread's qsort. */
START_TEST(test_collapse_sorts_edges_on_threads_as_qsort_does)
{
    topoml_context *ctx = new_ctx();
    uint64_t s = 77;
    const uint64_t counts[] = {2, 17, 1000, (UINT64_C(1) << 16) - 1, UINT64_C(1) << 16, 70001};
    const unsigned threads[] = {1, 2, 3, 8, 100};
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        const uint64_t m = counts[c];
        topoml_edge *in = malloc(m * sizeof *in), *want = malloc(m * sizeof *want),
                    *got = malloc(m * sizeof *got);
        ck_assert(in && want && got);
        for (uint64_t q = 0; q < m; q++) {
            uint32_t i = (uint32_t)(rng_next(&s) % 5000), j = (uint32_t)(rng_next(&s) % 5000);
            in[q] = (topoml_edge){c % 2 ? (double)(rng_next(&s) % 50) * 0.125 : rng_unit(&s),
                                  i < j ? i : j, i < j ? j : i};
        }
        memcpy(want, in, m * sizeof *in);
        qsort(want, m, sizeof *want, tm_collapse_edge_cmp);
        for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
            memcpy(got, in, m * sizeof *in);
            tm_collapse_sort_edges(ctx, got, m, threads[t]);
            for (uint64_t q = 0; q < m; q++)
                ck_assert_msg(got[q].d == want[q].d && got[q].i == want[q].i &&
                                  got[q].j == want[q].j,
                              "%llu edges on %u threads: edge %llu is (%g, %u, %u), qsort has "
                              "(%g, %u, %u)",
                              (unsigned long long)m, threads[t], (unsigned long long)q,
                              got[q].d, got[q].i, got[q].j, want[q].d, want[q].i, want[q].j);
        }
        /* no room for the second buffer: sorted all the same */
        topoml_set_max_memory(ctx, m * sizeof *in + 1);
        memcpy(got, in, m * sizeof *in);
        tm_collapse_sort_edges(ctx, got, m, 8);
        ck_assert_int_eq(memcmp(got, want, m * sizeof *got), 0);
        topoml_set_max_memory(ctx, 0);
        free(in);
        free(want);
        free(got);
    }
    topoml_context_free(ctx);
}
END_TEST

START_TEST(test_collapse_refuses_bad_settings_and_limits)
{
    topoml_context *ctx = new_ctx();
    topoml_rips_options o;
    topoml_rips_options_init(&o);
    uint64_t s = 5;
    double *x = random_points(&s, 0, 300, 3);
    topoml_data *d = NULL;
    ck_assert_int_eq(topoml_data_from_points(ctx, &d, 300, 3, x), TOPOML_OK);
    topoml_barcode *bc = NULL;
    /* An unknown setting is refused. */
    o.collapse = 7;
    ck_assert_int_eq(topoml_barcode_compute(ctx, &bc, d, &o), TOPOML_E_INVALID);
    ck_assert(strstr(topoml_errmsg(ctx), "collapse") != NULL);
    ck_assert_ptr_null(bc);
    /* Under a limit too small for the work, collapse or not: refused. */
    o.collapse = TOPOML_COLLAPSE_ON;
    topoml_set_max_memory(ctx, 4096);
    ck_assert_int_eq(topoml_barcode_compute(ctx, &bc, d, &o), TOPOML_E_LIMIT);
    ck_assert_ptr_null(bc);
    /* The collapse's own memory counts against the limit: refused, named. */
    topoml_set_max_memory(ctx, 0);
    topoml_edge *e = NULL;
    uint64_t m = 0, left = 0;
    ck_assert_int_eq(topoml_edges(ctx, d, TOPOML_METRIC_EUCLIDEAN, 0.5, &e, &m), TOPOML_OK);
    topoml_set_max_memory(ctx, 4096);
    tm_collapse_probe probe;
    ck_assert_int_eq(tm_collapse_edges(ctx, 300, e, m, 0.0, 1, &left, &probe), TOPOML_E_LIMIT);
    ck_assert(strstr(topoml_errmsg(ctx), "collapse") != NULL);
    topoml_free(ctx, e);
    topoml_data_free(ctx, d);
    free(x);
    topoml_context_free(ctx);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("collapse");
    TCase *tc = tcase_create("collapse");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_collapse_keeps_barcode_of_point_clouds);
    tcase_add_test(tc, test_collapse_keeps_barcode_of_matrices_with_ties);
    tcase_add_test(tc, test_collapse_rows_give_the_engine_distances_in_every_metric);
    tcase_add_test(tc, test_collapse_keeps_barcode_of_sparse_input);
    tcase_add_test(tc, test_collapse_removes_dominated_edges);
    tcase_add_test(tc, test_collapse_grid_finds_every_edge);
    tcase_add_test(tc, test_collapse_direct_on_complete_graph);
    tcase_add_test(tc, test_collapse_probe_declines_and_leaves_the_list);
    tcase_add_test(tc, test_collapse_auto_declines_on_a_sphere_and_goes_on_on_a_sampled_space);
    tcase_add_test(tc, test_collapse_plan_skips_cheap_reductions_and_keeps_the_big_wins);
    tcase_add_test(tc, test_collapse_input_applies_the_size_rule);
    tcase_add_test(tc, test_collapse_on_threads_is_the_serial_collapse);
    tcase_add_test(tc, test_collapse_sorts_edges_on_threads_as_qsort_does);
    tcase_add_test(tc, test_collapse_refuses_bad_settings_and_limits);
    suite_add_tcase(s, tc);
    return topoml_check_run(s);
}
