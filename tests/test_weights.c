/*
 * test_weights.c — weighted Rips filtrations through the public API
 * (topoml_rips_options.weights): the edge rule for p = 1, 2, inf and the
 * DTM on hand-worked inputs; on random inputs every bar of dimension >= 1
 * is the Rips barcode of the weighted edge values (computed here from the
 * formulas) and H0 is the elder rule's, computed here another way: the bar
 * of vertex v is (w_v, the smallest scale at which a path joins v to an
 * older vertex), by a minimax Floyd-Warshall; with a threshold, vertices
 * above it have no bar; zero weights with p = inf give the plain barcode;
 * bad parameters are refused; a plugin wrong on the weighted edge values is
 * caught by the gate's checks on the first call and the caller gets the
 * reference's barcode.
 */
#include <check.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "topoml/topoml.h"

#include "check_context.h"
#include "check_run.h"

static uint64_t rng_state;

static double uniform01(void)
{
    rng_state = rng_state * 6364136223846793005u + 1442695040888963407u;
    return (double)(rng_state >> 11) / 9007199254740992.0;
}

static topoml_context *plain_ctx(void)
{
    topoml_context_options o = {0};
    o.struct_size = sizeof o;
    o.flags = TOPOML_CTX_NO_ENV | TOPOML_CTX_NO_PLUGINS;
    topoml_context *ctx = NULL;
    ck_assert_int_eq(topoml_context_new(&ctx, &o), TOPOML_OK);
    return ctx;
}

static int by_bar(const void *a, const void *b)
{
    const topoml_interval *x = a, *y = b;
    if (x->dim != y->dim)
        return x->dim < y->dim ? -1 : 1;
    if (x->birth != y->birth)
        return x->birth < y->birth ? -1 : 1;
    return x->death < y->death ? -1 : x->death > y->death;
}

/* The bars of `bc` of dimension in [lo, hi], sorted, into a fresh array. */
static topoml_interval *bars(const topoml_barcode *bc, uint32_t lo, uint32_t hi, uint64_t *n)
{
    uint64_t all;
    const topoml_interval *v = topoml_barcode_intervals(bc, &all);
    topoml_interval *out = malloc((all ? all : 1) * sizeof *out);
    *n = 0;
    for (uint64_t k = 0; k < all; k++)
        if (v[k].dim >= lo && v[k].dim <= hi)
            out[(*n)++] = v[k];
    qsort(out, *n, sizeof *out, by_bar);
    return out;
}

static void assert_same_bars(const topoml_interval *a, uint64_t na, const topoml_interval *b,
                             uint64_t nb)
{
    ck_assert_uint_eq(na, nb);
    for (uint64_t k = 0; k < na; k++) {
        ck_assert_uint_eq(a[k].dim, b[k].dim);
        ck_assert_double_eq_tol(a[k].birth, b[k].birth, 1e-12);
        if (isinf(b[k].death))
            ck_assert(isinf(a[k].death));
        else
            ck_assert_double_eq_tol(a[k].death, b[k].death, 1e-12);
    }
}

static double edge_rule(double d, double x, double y, double p)
{
    const double hi = fmax(x, y);
    if (isinf(p))
        return fmax(d, hi);
    if (p == 1)
        return d <= fabs(x - y) / 2 ? hi : d + (x + y) / 2;
    if (d <= sqrt(fabs(x * x - y * y)) / 2)
        return hi;
    return sqrt((d * d + (x + y) * (x + y) / 4) * (d * d + (x - y) * (x - y) / 4)) / d;
}

/* H0 by the elder rule, computed without union-find (see the top). */
static topoml_interval *h0_by_paths(uint64_t n, const double *e /* n*n */, const double *w,
                                    double t, uint64_t *nb)
{
    double *m = malloc(n * n * sizeof *m);
    for (uint64_t i = 0; i < n; i++)
        for (uint64_t j = 0; j < n; j++)
            m[i * n + j] = i == j ? w[i] : e[i * n + j] <= t ? e[i * n + j] : INFINITY;
    for (uint64_t k = 0; k < n; k++)
        for (uint64_t i = 0; i < n; i++)
            for (uint64_t j = 0; j < n; j++)
                m[i * n + j] = fmin(m[i * n + j], fmax(m[i * n + k], m[k * n + j]));
    topoml_interval *out = malloc(n * sizeof *out);
    *nb = 0;
    for (uint64_t v = 0; v < n; v++) {
        if (!(w[v] <= t))
            continue;
        double death = INFINITY;
        for (uint64_t u = 0; u < n; u++)
            if (w[u] < w[v] || (w[u] == w[v] && u < v))
                death = fmin(death, m[v * n + u]);
        if (death > w[v])
            out[(*nb)++] = (topoml_interval){w[v], death, 0, 0};
    }
    qsort(out, *nb, sizeof *out, by_bar);
    free(m);
    return out;
}

START_TEST(hand_worked_edge_rules_and_births)
{
    topoml_context *ctx = plain_ctx();
    /* d(0,1) = 1, d(0,2) = 3, d(1,2) = 2 (Ripser's order: 10, 20, 21) */
    const double cond[] = {1, 3, 2};
    const double w[] = {0.2, 0.5, 5.0};
    topoml_data *data = NULL;
    ck_assert_int_eq(topoml_data_from_condensed(ctx, &data, 3, cond), TOPOML_OK);
    topoml_rips_options o;
    topoml_rips_options_init(&o);
    o.max_dim = 0;
    o.weights = TOPOML_WEIGHTS_GIVEN;
    o.vertex_weights = w;
    struct {
        double p, threshold, death;
        uint64_t n;
    } runs[] = {
        {INFINITY, INFINITY, 1.0, 2},  /* {0,1} at max(1, 0.5); 2 joins at 5: length 0 */
        {1, INFINITY, 1.35, 2},        /* 1 + (0.2 + 0.5) / 2 */
        {2, INFINITY, sqrt((1 + 0.1225) * (1 + 0.0225)), 2},
        {INFINITY, 4, 1.0, 2},         /* vertex 2 (weight 5) is not in the complex */
        {INFINITY, 0.9, INFINITY, 2},  /* 0 and 1 both alive, never joined */
        {INFINITY, 0.3, INFINITY, 1},  /* only vertex 0 */
    };
    for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
        o.weight_p = runs[r].p;
        o.threshold = runs[r].threshold;
        topoml_barcode *bc = NULL;
        ck_assert_int_eq(topoml_barcode_compute(ctx, &bc, data, &o), TOPOML_OK);
        uint64_t n;
        topoml_interval *b = bars(bc, 0, 0, &n);
        ck_assert_uint_eq(n, runs[r].n);
        ck_assert_double_eq(b[0].birth, 0.2);
        ck_assert(isinf(b[0].death));
        if (n > 1) {
            ck_assert_double_eq(b[1].birth, 0.5);
            if (isinf(runs[r].death))
                ck_assert(isinf(b[1].death));
            else
                ck_assert_double_eq_tol(b[1].death, runs[r].death, 1e-15);
        }
        free(b);
        topoml_barcode_free(bc);
    }
    topoml_data_free(ctx, data);
    topoml_context_free(ctx);
}
END_TEST

START_TEST(dtm_of_points_on_a_line)
{
    topoml_context *ctx = plain_ctx();
    const double x[] = {0, 1, 2, 3, 10};
    topoml_data *data = NULL;
    ck_assert_int_eq(topoml_data_from_points(ctx, &data, 5, 1, x), TOPOML_OK);
    topoml_rips_options o;
    topoml_rips_options_init(&o);
    o.max_dim = 0;
    o.weights = TOPOML_WEIGHTS_DTM;
    o.dtm_neighbors = 1;
    o.dtm_r = 2;
    o.weight_p = INFINITY;
    /* w = 2 sqrt(d_nn^2 / 2): sqrt(2) for 0..3, 7 sqrt(2) for 10; edges of
     * length 1 enter at sqrt(2) (no bar), 10 joins 3 at max(7, 7 sqrt 2) */
    topoml_barcode *bc = NULL;
    ck_assert_int_eq(topoml_barcode_compute(ctx, &bc, data, &o), TOPOML_OK);
    uint64_t n;
    topoml_interval *b = bars(bc, 0, 0, &n);
    ck_assert_uint_eq(n, 1);
    ck_assert_double_eq_tol(b[0].birth, sqrt(2), 1e-15);
    ck_assert(isinf(b[0].death));
    free(b);
    topoml_barcode_free(bc);
    /* r = 1, k = 2: w = 2 (d1 + d2) / 3 */
    o.dtm_neighbors = 2;
    o.dtm_r = 1;
    o.weight_p = 1;
    ck_assert_int_eq(topoml_barcode_compute(ctx, &bc, data, &o), TOPOML_OK);
    b = bars(bc, 0, 0, &n);
    /* weights 2, 4/3, 4/3, 2, 2 (7 + 8) / 3 = 10; 1 and 2 (born together)
     * join at 1 + 4/3, and one of them dies there */
    ck_assert_uint_ge(n, 2);
    ck_assert_double_eq_tol(b[0].birth, 4.0 / 3, 1e-15);
    ck_assert_double_eq_tol(b[0].death, 1 + 4.0 / 3, 1e-15);
    ck_assert_double_eq_tol(b[1].birth, 4.0 / 3, 1e-15);
    ck_assert(isinf(b[1].death));
    free(b);
    topoml_barcode_free(bc);
    topoml_data_free(ctx, data);
    topoml_context_free(ctx);
}
END_TEST

/* Random points, weights given or DTM, p = 1, 2, inf, thresholds: the
 * weighted barcode against the formulas and the path construction. */
START_TEST(random_inputs_against_the_formulas)
{
    const double ps[] = {1, 2, INFINITY};
    const double p = ps[_i % 3];
    const bool dtm = (_i / 3) % 2;
    const bool sparse = _i >= 6;
    rng_state = 1000 + (uint64_t)_i;
    topoml_context *ctx = plain_ctx();
    enum { N = 24 };
    double pts[N * 2], e[N * N], w[N];
    for (int k = 0; k < N * 2; k++)
        pts[k] = uniform01();
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            e[i * N + j] = hypot(pts[2 * i] - pts[2 * j], pts[2 * i + 1] - pts[2 * j + 1]);
    const uint32_t k_nn = 3;
    for (int i = 0; i < N; i++) {
        if (!dtm) {
            w[i] = 0.3 * uniform01();
            continue;
        }
        double near[N];
        int m = 0;
        for (int j = 0; j < N; j++) /* an edge list's DTM sees its edges */
            if (j != i && (!sparse || e[i * N + j] <= 0.7))
                near[m++] = e[i * N + j];
        ck_assert_int_ge(m, (int)k_nn);
        double s = 0;
        for (uint32_t a = 0; a < k_nn; a++) { /* the k smallest, by selection */
            int best = a;
            for (int b = a + 1; b < m; b++)
                if (near[b] < near[best])
                    best = b;
            const double t = near[a];
            near[a] = near[best];
            near[best] = t;
            s += near[a] * near[a];
        }
        w[i] = 2 * sqrt(s / (k_nn + 1));
    }
    topoml_data *data = NULL;
    topoml_edge edges[N * (N - 1) / 2];
    uint64_t n_edges = 0;
    for (int i = 1; i < N; i++)
        for (int j = 0; j < i; j++) {
            if (e[i * N + j] <= 0.7)
                edges[n_edges++] = (topoml_edge){e[i * N + j], (uint32_t)j, (uint32_t)i};
        }
    if (sparse)
        ck_assert_int_eq(topoml_data_from_edges(ctx, &data, N, n_edges, edges), TOPOML_OK);
    else
        ck_assert_int_eq(topoml_data_from_points(ctx, &data, N, 2, pts), TOPOML_OK);
    /* the weighted edge values, here; missing edges infinite */
    double we[N * N];
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            we[i * N + j] = sparse && e[i * N + j] > 0.7 ? INFINITY
                                                          : edge_rule(e[i * N + j], w[i], w[j], p);
    const double thresholds[] = {INFINITY, 0.5};
    for (int t = 0; t < 2; t++) {
        topoml_rips_options o;
        topoml_rips_options_init(&o);
        o.max_dim = 2;
        o.threshold = thresholds[t];
        o.weight_p = p;
        o.weights = dtm ? TOPOML_WEIGHTS_DTM : TOPOML_WEIGHTS_GIVEN;
        o.vertex_weights = dtm ? NULL : w;
        o.dtm_neighbors = k_nn;
        o.dtm_r = 2;
        topoml_barcode *bc = NULL;
        ck_assert_int_eq(topoml_barcode_compute(ctx, &bc, data, &o), TOPOML_OK);
        /* dimensions >= 1: the plain Rips barcode of the weighted values */
        topoml_data *plain = NULL;
        if (sparse) {
            topoml_edge we_edges[N * (N - 1) / 2];
            uint64_t m = 0;
            for (uint64_t k = 0; k < n_edges; k++) {
                we_edges[m] = edges[k];
                we_edges[m].d = we[edges[k].i * N + edges[k].j];
                m++;
            }
            ck_assert_int_eq(topoml_data_from_edges(ctx, &plain, N, m, we_edges), TOPOML_OK);
        } else {
            double wc[N * (N - 1) / 2];
            for (int i = 1, c = 0; i < N; i++)
                for (int j = 0; j < i; j++, c++)
                    wc[c] = we[i * N + j];
            ck_assert_int_eq(topoml_data_from_condensed(ctx, &plain, N, wc), TOPOML_OK);
        }
        topoml_rips_options po;
        topoml_rips_options_init(&po);
        po.max_dim = 2;
        po.threshold = thresholds[t];
        topoml_barcode *pbc = NULL;
        ck_assert_int_eq(topoml_barcode_compute(ctx, &pbc, plain, &po), TOPOML_OK);
        uint64_t na, nb;
        topoml_interval *a = bars(bc, 1, 2, &na), *b = bars(pbc, 1, 2, &nb);
        assert_same_bars(a, na, b, nb);
        free(a);
        free(b);
        /* H0: the elder rule by paths */
        a = bars(bc, 0, 0, &na);
        b = h0_by_paths(N, we, w, thresholds[t], &nb);
        assert_same_bars(a, na, b, nb);
        free(a);
        free(b);
        topoml_barcode_free(pbc);
        topoml_data_free(ctx, plain);
        topoml_barcode_free(bc);
    }
    topoml_data_free(ctx, data);
    topoml_context_free(ctx);
}
END_TEST

START_TEST(zero_weights_with_p_inf_are_the_plain_filtration)
{
    topoml_context *ctx = plain_ctx();
    rng_state = 7;
    enum { N = 30 };
    double pts[N * 3], w[N] = {0};
    for (int k = 0; k < N * 3; k++)
        pts[k] = uniform01();
    topoml_data *data = NULL;
    ck_assert_int_eq(topoml_data_from_points(ctx, &data, N, 3, pts), TOPOML_OK);
    topoml_rips_options o;
    topoml_rips_options_init(&o);
    o.max_dim = 2;
    topoml_barcode *plain = NULL, *weighted = NULL;
    ck_assert_int_eq(topoml_barcode_compute(ctx, &plain, data, &o), TOPOML_OK);
    o.weights = TOPOML_WEIGHTS_GIVEN;
    o.vertex_weights = w;
    o.weight_p = INFINITY;
    ck_assert_int_eq(topoml_barcode_compute(ctx, &weighted, data, &o), TOPOML_OK);
    uint64_t na, nb;
    topoml_interval *a = bars(weighted, 0, 2, &na), *b = bars(plain, 0, 2, &nb);
    assert_same_bars(a, na, b, nb);
    free(a);
    free(b);
    topoml_barcode_free(plain);
    topoml_barcode_free(weighted);
    topoml_data_free(ctx, data);
    topoml_context_free(ctx);
}
END_TEST

START_TEST(bad_weights_are_refused)
{
    topoml_context *ctx = plain_ctx();
    const double x[] = {0, 1, 2, 4};
    topoml_data *data = NULL;
    ck_assert_int_eq(topoml_data_from_points(ctx, &data, 4, 1, x), TOPOML_OK);
    const double neg[] = {0, -1, 0, 0}, nan_w[] = {0, NAN, 0, 0};
    topoml_barcode *bc = NULL;
    topoml_rips_options o;
    struct {
        uint32_t weights;
        const double *w;
        double p;
        uint32_t k;
        double r;
        uint32_t flags;
        int status;
        const char *word;
    } bad[] = {
        {TOPOML_WEIGHTS_GIVEN, neg, 1, 3, 2, 0, TOPOML_E_INVALID, "vertex 1"},
        {TOPOML_WEIGHTS_GIVEN, nan_w, 1, 3, 2, 0, TOPOML_E_INVALID, "vertex 1"},
        {TOPOML_WEIGHTS_GIVEN, NULL, 1, 3, 2, 0, TOPOML_E_INVALID, "no vertex weights"},
        {TOPOML_WEIGHTS_DTM, NULL, 3, 3, 2, 0, TOPOML_E_INVALID, "1, 2 or infinity"},
        {TOPOML_WEIGHTS_DTM, NULL, 1, 4, 2, 0, TOPOML_E_INVALID, "only 4 points"},
        {TOPOML_WEIGHTS_DTM, NULL, 1, 0, 2, 0, TOPOML_E_INVALID, "neighbours"},
        {TOPOML_WEIGHTS_DTM, NULL, 1, 2, 0, 0, TOPOML_E_INVALID, "r must"},
        {7, NULL, 1, 2, 2, 0, TOPOML_E_INVALID, "unknown weights"},
        {TOPOML_WEIGHTS_DTM, NULL, 1, 2, 2, TOPOML_RIPS_GENERATORS, TOPOML_E_UNSUPPORTED,
         "generators"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        topoml_rips_options_init(&o);
        o.weights = bad[k].weights;
        o.vertex_weights = bad[k].w;
        o.weight_p = bad[k].p;
        o.dtm_neighbors = bad[k].k;
        o.dtm_r = bad[k].r;
        o.flags = bad[k].flags;
        ck_assert_int_eq(topoml_barcode_compute(ctx, &bc, data, &o), bad[k].status);
        ck_assert_ptr_null(bc);
        ck_assert_msg(strstr(topoml_errmsg(ctx), bad[k].word), "%zu: %s", k,
                      topoml_errmsg(ctx));
    }
    /* an edge list with a vertex of fewer edges than the neighbours asked */
    const topoml_edge e[] = {{1, 0, 1}, {1, 1, 2}, {2, 0, 2}};
    topoml_data *sp = NULL;
    ck_assert_int_eq(topoml_data_from_edges(ctx, &sp, 4, 3, e), TOPOML_OK);
    topoml_rips_options_init(&o);
    o.weights = TOPOML_WEIGHTS_DTM;
    o.dtm_neighbors = 2;
    ck_assert_int_eq(topoml_barcode_compute(ctx, &bc, sp, &o), TOPOML_E_INVALID);
    ck_assert_ptr_nonnull(strstr(topoml_errmsg(ctx), "vertex 3 has 0 edges"));
    topoml_data_free(ctx, sp);
    topoml_data_free(ctx, data);
    topoml_context_free(ctx);
}
END_TEST

/* gf-ulps (tests/gate_faults) gives deaths of dimension >= 1 three ulps
 * late: not lengths of its input, which the checks that need no history
 * see on the first call. The weighted call's backend answer is checked as
 * any Rips call's: the caller gets the reference's barcode. */
START_TEST(a_wrong_plugin_is_caught_on_weighted_input)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/gate-faults/ulps", TOPOML_TEST_BUILD_DIR);
    topoml_context *ctx = check_context_from_config("enable: [gf-ulps]\nverify: checks\n", dir);
    topoml_context *ref = plain_ctx();
    ck_assert_int_eq(topoml_use_backend(ctx, "gf-ulps"), TOPOML_OK);
    rng_state = 99;
    enum { N = 40 };
    double pts[N * 2];
    for (int k = 0; k < N * 2; k++)
        pts[k] = uniform01();
    topoml_data *a = NULL, *b = NULL;
    ck_assert_int_eq(topoml_data_from_points(ctx, &a, N, 2, pts), TOPOML_OK);
    ck_assert_int_eq(topoml_data_from_points(ref, &b, N, 2, pts), TOPOML_OK);
    topoml_rips_options o;
    topoml_rips_options_init(&o);
    o.max_dim = 1;
    o.collapse = TOPOML_COLLAPSE_OFF;
    o.weights = TOPOML_WEIGHTS_DTM;
    o.weight_p = 2;
    topoml_barcode *got = NULL, *want = NULL;
    int rc = topoml_barcode_compute(ctx, &got, a, &o);
    ck_assert_msg(rc == TOPOML_OK, "%s", topoml_errmsg(ctx));
    ck_assert_str_eq(topoml_last_backend(ctx), "scalar");
    ck_assert_int_eq(topoml_barcode_compute(ref, &want, b, &o), TOPOML_OK);
    uint64_t ng, nw;
    topoml_interval *g = bars(got, 0, 1, &ng), *w = bars(want, 0, 1, &nw);
    ck_assert_uint_gt(nw, 0);
    ck_assert_uint_eq(w[nw - 1].dim, 1); /* H1 bars there to be wrong */
    ck_assert_uint_eq(ng, nw);
    for (uint64_t k = 0; k < ng; k++) { /* to the bit */
        ck_assert(g[k].birth == w[k].birth);
        ck_assert(g[k].death == w[k].death || (isinf(g[k].death) && isinf(w[k].death)));
    }
    for (uint32_t i = 0; i < topoml_backend_count(ctx); i++) {
        topoml_backend_info info = {.struct_size = sizeof info};
        ck_assert_int_eq(topoml_backend_get(ctx, i, &info), TOPOML_OK);
        if (info.path && strcmp(info.name, "gf-ulps") == 0)
            ck_assert_uint_eq(info.gate_state, TOPOML_GATE_REJECTED);
    }
    free(g);
    free(w);
    topoml_barcode_free(got);
    topoml_barcode_free(want);
    topoml_data_free(ctx, a);
    topoml_data_free(ref, b);
    topoml_context_free(ctx);
    topoml_context_free(ref);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("weights");
    TCase *tc = tcase_create("weights");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, hand_worked_edge_rules_and_births);
    tcase_add_test(tc, dtm_of_points_on_a_line);
    tcase_add_loop_test(tc, random_inputs_against_the_formulas, 0, 12);
    tcase_add_test(tc, zero_weights_with_p_inf_are_the_plain_filtration);
    tcase_add_test(tc, bad_weights_are_refused);
    tcase_add_test(tc, a_wrong_plugin_is_caught_on_weighted_input);
    suite_add_tcase(s, tc);
    return topoml_check_run(s);
}
