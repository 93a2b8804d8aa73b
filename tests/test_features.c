/*
 * test_features.c — unit tests of topoml/features.h without the image op:
 * grids, Betti curves, landscapes, entropy, total persistence, bottleneck
 * and Wasserstein distances (hand-made cases and a brute-force reference
 * over all matchings of small random diagrams), and the diagram files.
 * tests/features_vs_gudhi.py compares the distances with GUDHI itself.
 */
#define _POSIX_C_SOURCE 200809L

#include <check.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topoml/features.h"

#include "check_run.h"

static topoml_context *ctx;

static void setup(void)
{
    topoml_context_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.flags = TOPOML_CTX_NO_ENV | TOPOML_CTX_NO_PLUGINS;
    ck_assert_int_eq(topoml_context_new(&ctx, &o), TOPOML_OK);
}

static void teardown(void)
{
    topoml_context_free(ctx);
    ctx = NULL;
}

#define P(b, d) ((topoml_pair){(b), (d)})

/* ------------------------------------------------------------------------
 * Grids and infinite points
 * ---------------------------------------------------------------------- */

START_TEST(test_grid_hits_both_ends)
{
    double g[7];
    ck_assert_int_eq(topoml_grid(ctx, 0.1, 0.7, 7, g), TOPOML_OK);
    ck_assert(g[0] == 0.1);
    ck_assert(g[6] == 0.7);
    for (int i = 1; i < 7; i++)
        ck_assert(g[i] > g[i - 1]);
    ck_assert_int_eq(topoml_grid(ctx, 2.0, 5.0, 1, g), TOPOML_OK);
    ck_assert(g[0] == 2.0);
}
END_TEST

START_TEST(test_grid_rejects_bad_range)
{
    double g[2];
    ck_assert_int_eq(topoml_grid(ctx, 1.0, 0.0, 2, g), TOPOML_E_INVALID);
    ck_assert(strstr(topoml_errmsg(ctx), "grid") != NULL);
    ck_assert_int_eq(topoml_grid(ctx, 0.0, INFINITY, 2, g), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_grid(ctx, NAN, 1.0, 2, g), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_grid(ctx, 0.0, 1.0, 0, g), TOPOML_E_INVALID);
}
END_TEST

START_TEST(test_pairs_finite_drops_and_clips_in_place)
{
    topoml_pair p[3] = {P(0, 1), P(0.5, INFINITY), P(2, 3)};
    uint64_t n;
    topoml_pair q[3];
    ck_assert_int_eq(topoml_pairs_finite(ctx, p, 3, TOPOML_INFINITE_DROP, 0, q, &n), TOPOML_OK);
    ck_assert_uint_eq(n, 2);
    ck_assert(q[1].birth == 2 && q[1].death == 3);
    ck_assert_int_eq(topoml_pairs_finite(ctx, p, 3, TOPOML_INFINITE_CLIP, 4, p, &n), TOPOML_OK);
    ck_assert_uint_eq(n, 3);
    ck_assert(p[1].death == 4);
}
END_TEST

START_TEST(test_pairs_finite_rejects_clip_below_birth)
{
    topoml_pair p[1] = {P(5, INFINITY)}, q[1];
    uint64_t n;
    ck_assert_int_eq(topoml_pairs_finite(ctx, p, 1, TOPOML_INFINITE_CLIP, 4, q, &n),
                     TOPOML_E_INVALID);
    ck_assert(strstr(topoml_errmsg(ctx), "clip_death") != NULL);
    ck_assert_int_eq(topoml_pairs_finite(ctx, p, 1, 7, 4, q, &n), TOPOML_E_INVALID);
}
END_TEST

/* ------------------------------------------------------------------------
 * Betti curves and landscapes
 * ---------------------------------------------------------------------- */

START_TEST(test_betti_curve_counts_half_open_intervals)
{
    topoml_pair p[] = {P(0, 1), P(0, 2), P(1, 3), P(2, 2)};
    double g[] = {-1, 0, 0.5, 1, 1.5, 2, 2.5, 3, 4};
    uint64_t want[] = {0, 2, 2, 2, 2, 1, 1, 0, 0};
    uint64_t out[9];
    ck_assert_int_eq(topoml_betti_curve(ctx, p, 4, g, 9, out), TOPOML_OK);
    for (int i = 0; i < 9; i++)
        ck_assert_uint_eq(out[i], want[i]);
}
END_TEST

START_TEST(test_betti_curve_counts_infinite_bars_for_ever)
{
    topoml_pair p[] = {P(0, INFINITY), P(0, 1), P(3, INFINITY)};
    double g[] = {5, 0.5, 1e300}; /* unsorted on purpose */
    uint64_t out[3];
    ck_assert_int_eq(topoml_betti_curve(ctx, p, 3, g, 3, out), TOPOML_OK);
    ck_assert_uint_eq(out[0], 2);
    ck_assert_uint_eq(out[1], 2);
    ck_assert_uint_eq(out[2], 2);
}
END_TEST

START_TEST(test_betti_curve_of_empty_diagram_is_zero)
{
    double g[] = {0, 1};
    uint64_t out[2] = {7, 7};
    ck_assert_int_eq(topoml_betti_curve(ctx, NULL, 0, g, 2, out), TOPOML_OK);
    ck_assert_uint_eq(out[0], 0);
    ck_assert_uint_eq(out[1], 0);
}
END_TEST

START_TEST(test_features_reject_bad_pairs)
{
    topoml_pair nan_p[] = {P(0, NAN)}, rev[] = {P(2, 1)};
    double g[] = {0}, v;
    uint64_t out[1];
    ck_assert_int_eq(topoml_betti_curve(ctx, nan_p, 1, g, 1, out), TOPOML_E_INVALID);
    ck_assert(strstr(topoml_errmsg(ctx), "NaN") != NULL);
    ck_assert_int_eq(topoml_betti_curve(ctx, rev, 1, g, 1, out), TOPOML_E_INVALID);
    ck_assert(strstr(topoml_errmsg(ctx), "death 1 < birth 2") != NULL);
    double gn[] = {NAN};
    ck_assert_int_eq(topoml_betti_curve(ctx, rev, 0, gn, 1, out), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_landscapes(ctx, rev, 1, 1, g, 1, &v), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_persistent_entropy(ctx, nan_p, 1, &v), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_total_persistence(ctx, rev, 1, 1.0, &v), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_betti_curve(ctx, NULL, 3, g, 1, out), TOPOML_E_INVALID);
}
END_TEST

START_TEST(test_landscapes_of_one_pair_are_a_tent)
{
    topoml_pair p[] = {P(0, 2)};
    double g[] = {-1, 0, 0.5, 1, 1.5, 2, 3};
    double want[] = {0, 0, 0.5, 1, 0.5, 0, 0};
    double out[14];
    ck_assert_int_eq(topoml_landscapes(ctx, p, 1, 2, g, 7, out), TOPOML_OK);
    for (int i = 0; i < 7; i++) {
        ck_assert_double_eq_tol(out[i], want[i], 1e-15);
        ck_assert(out[7 + i] == 0.0);
    }
}
END_TEST

START_TEST(test_landscapes_levels_are_ordered)
{
    /* Tents on (0,4), (1,3), (1.5,2.5), and one far away at (10,12). */
    topoml_pair p[] = {P(1, 3), P(10, 12), P(0, 4), P(1.5, 2.5)};
    double g[] = {1, 2, 11};
    double out[4 * 3];
    ck_assert_int_eq(topoml_landscapes(ctx, p, 4, 4, g, 3, out), TOPOML_OK);
    /* t = 1: tents 1, 0, -, - */
    ck_assert_double_eq_tol(out[0 * 3 + 0], 1.0, 1e-15);
    ck_assert_double_eq_tol(out[1 * 3 + 0], 0.0, 1e-15);
    /* t = 2: 2, 1, 0.5, 0 */
    ck_assert_double_eq_tol(out[0 * 3 + 1], 2.0, 1e-15);
    ck_assert_double_eq_tol(out[1 * 3 + 1], 1.0, 1e-15);
    ck_assert_double_eq_tol(out[2 * 3 + 1], 0.5, 1e-15);
    ck_assert_double_eq_tol(out[3 * 3 + 1], 0.0, 1e-15);
    /* t = 11: only the far tent */
    ck_assert_double_eq_tol(out[0 * 3 + 2], 1.0, 1e-15);
    ck_assert_double_eq_tol(out[1 * 3 + 2], 0.0, 1e-15);
}
END_TEST

START_TEST(test_landscapes_infinite_death_is_a_ramp)
{
    topoml_pair p[] = {P(1, INFINITY)};
    double g[] = {0, 1, 5}, out[3];
    ck_assert_int_eq(topoml_landscapes(ctx, p, 1, 1, g, 3, out), TOPOML_OK);
    ck_assert(out[0] == 0 && out[1] == 0 && out[2] == 4);
    ck_assert_int_eq(topoml_landscapes(ctx, p, 1, 0, g, 3, out), TOPOML_E_INVALID);
}
END_TEST

/* ------------------------------------------------------------------------
 * Entropy and total persistence
 * ---------------------------------------------------------------------- */

START_TEST(test_entropy_by_hand)
{
    topoml_pair two[] = {P(0, 1), P(5, 6)};
    topoml_pair four[] = {P(0, 0.1), P(0, 0.2), P(1, 1.3), P(2, 2.4), P(3, 3)};
    double e;
    ck_assert_int_eq(topoml_persistent_entropy(ctx, two, 2, &e), TOPOML_OK);
    ck_assert_double_eq_tol(e, log(2.0), 1e-15);
    /* lengths 0.1 0.2 0.3 0.4 (and a zero one, which adds nothing) */
    ck_assert_int_eq(topoml_persistent_entropy(ctx, four, 5, &e), TOPOML_OK);
    ck_assert_double_eq_tol(e, 1.2798542258336676, 1e-12);
    ck_assert_int_eq(topoml_persistent_entropy(ctx, NULL, 0, &e), TOPOML_OK);
    ck_assert(e == 0.0);
}
END_TEST

START_TEST(test_entropy_rejects_infinite_bars)
{
    topoml_pair p[] = {P(0, 1), P(0, INFINITY)};
    double e;
    ck_assert_int_eq(topoml_persistent_entropy(ctx, p, 2, &e), TOPOML_E_INVALID);
    ck_assert(strstr(topoml_errmsg(ctx), "infinite") != NULL);
}
END_TEST

START_TEST(test_total_persistence_by_hand)
{
    topoml_pair p[] = {P(0, 1), P(1, 3), P(2, 2.5)};
    double s;
    ck_assert_int_eq(topoml_total_persistence(ctx, p, 3, 1.0, &s), TOPOML_OK);
    ck_assert_double_eq_tol(s, 3.5, 1e-15);
    ck_assert_int_eq(topoml_total_persistence(ctx, p, 3, 2.0, &s), TOPOML_OK);
    ck_assert_double_eq_tol(s, 5.25, 1e-15);
    topoml_pair q[] = {P(0, INFINITY)};
    ck_assert_int_eq(topoml_total_persistence(ctx, q, 1, 2.0, &s), TOPOML_OK);
    ck_assert(isinf(s));
    ck_assert_int_eq(topoml_total_persistence(ctx, p, 3, 0.0, &s), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_total_persistence(ctx, p, 3, NAN, &s), TOPOML_E_INVALID);
}
END_TEST

/* ------------------------------------------------------------------------
 * Distances
 * ---------------------------------------------------------------------- */

/* The reference: every assignment of the (n+m)-square augmented problem,
 * by Heap's algorithm. Good for n + m <= 7 (5040 assignments). */
typedef struct brute {
    const topoml_pair *x, *y;
    int n, m;
    double q, p; /* q = INFINITY: bottleneck */
} brute;

static double ground(topoml_pair a, topoml_pair b, double p)
{
    double u = fabs(a.birth - b.birth), v = fabs(a.death - b.death);
    return isinf(p) ? fmax(u, v) : pow(pow(u, p) + pow(v, p), 1.0 / p);
}

static double to_diag(topoml_pair a, double p)
{
    return (a.death - a.birth) * (isinf(p) ? 0.5 : pow(2.0, 1.0 / p - 1.0));
}

static double brute_cost(const brute *b, int i, int j)
{
    if (i < b->n)
        return j < b->m ? ground(b->x[i], b->y[j], b->p) : to_diag(b->x[i], b->p);
    return j < b->m ? to_diag(b->y[j], b->p) : 0.0;
}

static double brute_force(const brute *b)
{
    int N = b->n + b->m, perm[8], c[8];
    double best = INFINITY;
    for (int i = 0; i < N; i++)
        perm[i] = i, c[i] = 0;
    for (int i = 0;;) {
        double v = 0;
        for (int r = 0; r < N; r++) {
            double t = brute_cost(b, r, perm[r]);
            v = isinf(b->q) ? fmax(v, t) : v + pow(t, b->q);
        }
        best = fmin(best, v);
        while (i < N && c[i] >= i) {
            c[i] = 0;
            i++;
        }
        if (i >= N)
            break;
        int k = i % 2 == 0 ? 0 : c[i];
        int t = perm[k];
        perm[k] = perm[i];
        perm[i] = t;
        c[i]++;
        i = 0;
    }
    return N == 0 ? 0.0 : isinf(b->q) ? best : pow(best, 1.0 / b->q);
}

static uint64_t rng_state = 88172645463325252ull;
static double rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) / 9007199254740992.0;
}

/* Coordinates on a coarse lattice so that ties (equal distances, equal
 * points, points on the diagonal) are common. */
static void random_diagram(topoml_pair *p, int n, bool lattice)
{
    for (int i = 0; i < n; i++) {
        double b = lattice ? floor(rnd() * 6) * 0.5 : rnd() * 3;
        double l = lattice ? floor(rnd() * 5) * 0.5 : rnd() * 2;
        p[i] = P(b, b + l);
    }
}

START_TEST(test_bottleneck_by_hand)
{
    double d;
    ck_assert_int_eq(topoml_bottleneck_distance(ctx, NULL, 0, NULL, 0, &d), TOPOML_OK);
    ck_assert(d == 0.0);
    topoml_pair a[] = {P(0, 4)};
    ck_assert_int_eq(topoml_bottleneck_distance(ctx, a, 1, NULL, 0, &d), TOPOML_OK);
    ck_assert(d == 2.0);
    ck_assert_int_eq(topoml_bottleneck_distance(ctx, NULL, 0, a, 1, &d), TOPOML_OK);
    ck_assert(d == 2.0);
    /* (0,4) vs (1,4.5): matched together at 1, better than 2 each. */
    topoml_pair b[] = {P(1, 4.5)};
    ck_assert_int_eq(topoml_bottleneck_distance(ctx, a, 1, b, 1, &d), TOPOML_OK);
    ck_assert(d == 1.0);
    /* Points on the diagonal cost nothing. */
    topoml_pair c[] = {P(1, 4.5), P(2, 2), P(7, 7)};
    ck_assert_int_eq(topoml_bottleneck_distance(ctx, a, 1, c, 3, &d), TOPOML_OK);
    ck_assert(d == 1.0);
}
END_TEST

START_TEST(test_bottleneck_matches_brute_force)
{
    topoml_pair x[8], y[8];
    for (int trial = 0; trial < 400; trial++) {
        int n = (int)(rnd() * 5), m = (int)(rnd() * 5);
        if (n + m > 7)
            m = 7 - n;
        bool lattice = trial % 2 == 0;
        random_diagram(x, n, lattice);
        random_diagram(y, m, lattice);
        brute b = {x, y, n, m, INFINITY, INFINITY};
        double want = brute_force(&b), got;
        ck_assert_int_eq(topoml_bottleneck_distance(ctx, x, (uint64_t)n, y, (uint64_t)m, &got),
                         TOPOML_OK);
        ck_assert_msg(fabs(got - want) <= 1e-12, "trial %d: n=%d m=%d got %.17g want %.17g", trial,
                      n, m, got, want);
    }
}
END_TEST

START_TEST(test_bottleneck_is_symmetric_on_larger_diagrams)
{
    enum { N = 300 };
    topoml_pair *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
    random_diagram(x, N, false);
    random_diagram(y, N - 17, true);
    double d1, d2;
    ck_assert_int_eq(topoml_bottleneck_distance(ctx, x, N, y, N - 17, &d1), TOPOML_OK);
    ck_assert_int_eq(topoml_bottleneck_distance(ctx, y, N - 17, x, N, &d2), TOPOML_OK);
    ck_assert(d1 == d2);
    ck_assert_int_eq(topoml_bottleneck_distance(ctx, x, N, x, N, &d1), TOPOML_OK);
    ck_assert(d1 == 0.0);
    free(x);
    free(y);
}
END_TEST

START_TEST(test_wasserstein_by_hand)
{
    double d;
    topoml_pair a[] = {P(0, 4)};
    ck_assert_int_eq(topoml_wasserstein_distance(ctx, a, 1, NULL, 0, 1.0, INFINITY, &d), TOPOML_OK);
    ck_assert(d == 2.0);
    ck_assert_int_eq(topoml_wasserstein_distance(ctx, a, 1, NULL, 0, 1.0, 2.0, &d), TOPOML_OK);
    ck_assert_double_eq_tol(d, 4.0 / sqrt(2.0), 1e-15);
    ck_assert_int_eq(topoml_wasserstein_distance(ctx, a, 1, NULL, 0, 1.0, 1.0, &d), TOPOML_OK);
    ck_assert_double_eq_tol(d, 4.0, 1e-15);
    /* Two points each going to the diagonal, order 2: sqrt(2^2 + 1^2). */
    topoml_pair b[] = {P(0, 4), P(1, 3)};
    ck_assert_int_eq(topoml_wasserstein_distance(ctx, b, 2, NULL, 0, 2.0, INFINITY, &d), TOPOML_OK);
    ck_assert_double_eq_tol(d, sqrt(5.0), 1e-15);
    ck_assert_int_eq(topoml_wasserstein_distance(ctx, NULL, 0, NULL, 0, 2.0, INFINITY, &d),
                     TOPOML_OK);
    ck_assert(d == 0.0);
}
END_TEST

START_TEST(test_wasserstein_matches_brute_force)
{
    const double qs[] = {1.0, 2.0, 3.5}, ps[] = {1.0, 2.0, INFINITY};
    topoml_pair x[8], y[8];
    for (int trial = 0; trial < 300; trial++) {
        int n = (int)(rnd() * 5), m = (int)(rnd() * 5);
        if (n + m > 7)
            m = 7 - n;
        random_diagram(x, n, trial % 3 == 0);
        random_diagram(y, m, trial % 3 == 0);
        double q = qs[trial % 3], p = ps[(trial / 3) % 3];
        brute b = {x, y, n, m, q, p};
        double want = brute_force(&b), got;
        ck_assert_int_eq(
            topoml_wasserstein_distance(ctx, x, (uint64_t)n, y, (uint64_t)m, q, p, &got),
            TOPOML_OK);
        ck_assert_msg(fabs(got - want) <= 1e-9 * fmax(1.0, want),
                      "trial %d: n=%d m=%d q=%g p=%g got %.17g want %.17g", trial, n, m, q, p, got,
                      want);
    }
}
END_TEST

START_TEST(test_distances_match_infinite_points_by_kind)
{
    double d;
    /* (b, +inf) points pair up in order of birth: |0-0.5| and |2-2.25|. */
    topoml_pair a[] = {P(2, INFINITY), P(0, INFINITY), P(1, 2)};
    topoml_pair b[] = {P(0.5, INFINITY), P(2.25, INFINITY), P(1, 2)};
    ck_assert_int_eq(topoml_bottleneck_distance(ctx, a, 3, b, 3, &d), TOPOML_OK);
    ck_assert(d == 0.5);
    ck_assert_int_eq(topoml_wasserstein_distance(ctx, a, 3, b, 3, 1.0, INFINITY, &d), TOPOML_OK);
    ck_assert_double_eq_tol(d, 0.75, 1e-15);
    ck_assert_int_eq(topoml_wasserstein_distance(ctx, a, 3, b, 3, 2.0, INFINITY, &d), TOPOML_OK);
    ck_assert_double_eq_tol(d, sqrt(0.25 + 0.0625), 1e-15);
    /* Different numbers of infinite points: infinitely far apart. */
    ck_assert_int_eq(topoml_bottleneck_distance(ctx, a, 3, b + 1, 2, &d), TOPOML_OK);
    ck_assert(isinf(d));
    ck_assert_int_eq(topoml_wasserstein_distance(ctx, a, 2, NULL, 0, 1.0, INFINITY, &d), TOPOML_OK);
    ck_assert(isinf(d));
    /* (-inf, d) matches only its kind, by death; (-inf, +inf) by count;
     * (+inf, +inf) lies on the diagonal. */
    topoml_pair c[] = {P(-INFINITY, 1), P(-INFINITY, INFINITY), P(INFINITY, INFINITY)};
    topoml_pair e[] = {P(-INFINITY, 4), P(-INFINITY, INFINITY)};
    ck_assert_int_eq(topoml_bottleneck_distance(ctx, c, 3, e, 2, &d), TOPOML_OK);
    ck_assert(d == 3.0);
    ck_assert_int_eq(topoml_bottleneck_distance(ctx, c, 2, e, 1, &d), TOPOML_OK);
    ck_assert(isinf(d));
    /* The finite part still counts: the larger of the two. */
    topoml_pair f[] = {P(0, INFINITY), P(0, 10)};
    topoml_pair g[] = {P(0.5, INFINITY)};
    ck_assert_int_eq(topoml_bottleneck_distance(ctx, f, 2, g, 1, &d), TOPOML_OK);
    ck_assert(d == 5.0);
}
END_TEST

START_TEST(test_distances_reject_bad_input)
{
    double d;
    topoml_pair ok[] = {P(0, 1)}, bad[] = {P(1, 0)}, nan_p[] = {P(NAN, 1)};
    ck_assert_int_eq(topoml_bottleneck_distance(ctx, bad, 1, ok, 1, &d), TOPOML_E_INVALID);
    ck_assert(strstr(topoml_errmsg(ctx), "first diagram") != NULL);
    ck_assert_int_eq(topoml_bottleneck_distance(ctx, ok, 1, nan_p, 1, &d), TOPOML_E_INVALID);
    ck_assert(strstr(topoml_errmsg(ctx), "second diagram") != NULL);
    ck_assert_int_eq(topoml_wasserstein_distance(ctx, ok, 1, ok, 1, 0.5, INFINITY, &d),
                     TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_wasserstein_distance(ctx, ok, 1, ok, 1, INFINITY, INFINITY, &d),
                     TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_wasserstein_distance(ctx, ok, 1, ok, 1, 1.0, 0.5, &d),
                     TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_wasserstein_distance(ctx, ok, 1, ok, 1, 1.0, NAN, &d),
                     TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_bottleneck_distance(ctx, ok, 1, ok, 1, NULL), TOPOML_E_INVALID);
}
END_TEST

START_TEST(test_distances_of_huge_coordinates)
{
    topoml_pair x[] = {P(0, 1e300)}, y[] = {P(-1e300, 1e300)};
    double d;
    /* The squared costs overflow a double: refused, not computed with. */
    ck_assert_int_eq(topoml_wasserstein_distance(ctx, x, 1, y, 1, 2.0, INFINITY, &d),
                     TOPOML_E_OVERFLOW);
    ck_assert(strstr(topoml_errmsg(ctx), "too large") != NULL);
    ck_assert_int_eq(topoml_wasserstein_distance(ctx, x, 1, y, 1, 1.0, INFINITY, &d), TOPOML_OK);
    ck_assert(d == 1e300);
    ck_assert_int_eq(topoml_bottleneck_distance(ctx, x, 1, y, 1, &d), TOPOML_OK);
    ck_assert(d == 1e300);
}
END_TEST

START_TEST(test_wasserstein_respects_memory_limit)
{
    enum { N = 200 };
    topoml_pair *x = malloc(N * sizeof *x);
    random_diagram(x, N, false);
    double d;
    topoml_set_max_memory(ctx, 10000);
    ck_assert_int_eq(topoml_wasserstein_distance(ctx, x, N, x, N, 1.0, INFINITY, &d),
                     TOPOML_E_LIMIT);
    topoml_set_max_memory(ctx, 0);
    ck_assert_int_eq(topoml_wasserstein_distance(ctx, x, N, x, N, 1.0, INFINITY, &d), TOPOML_OK);
    ck_assert_double_eq_tol(d, 0.0, 1e-12);
    free(x);
}
END_TEST

/* An allocator that fails from the k-th allocation on, to see that every
 * failure path reports TOPOML_E_NOMEM and frees what it had (the leak
 * checkers see the rest). */
typedef struct failing {
    int left;
} failing;

static void *f_alloc(void *u, size_t n)
{
    failing *f = u;
    if (f->left-- <= 0)
        return NULL;
    return malloc(n ? n : 1);
}

static void *f_realloc(void *u, void *p, size_t n)
{
    failing *f = u;
    if (f->left-- <= 0)
        return NULL;
    return realloc(p, n ? n : 1);
}

static void f_free(void *u, void *p)
{
    (void)u;
    free(p);
}

START_TEST(test_allocation_failures_are_reported)
{
    static const char json[] =
        "{\"dims\":[{\"dim\":0,\"intervals\":[[0,1],[0,null]]},{\"dim\":1,\"intervals\":[[1,2]]}]}";
    topoml_pair x[] = {P(0, 1), P(0.5, 3), P(1, INFINITY)}, y[] = {P(0, 2), P(2, INFINITY)};
    double g[] = {0, 1, 2}, land[6], d;
    uint64_t betti[3];
    bool finished = false;
    for (int k = 0; k < 200 && !finished; k++) {
        failing fl = {k};
        topoml_allocator al = {f_alloc, f_realloc, f_free, &fl};
        topoml_context_options o;
        memset(&o, 0, sizeof o);
        o.struct_size = sizeof o;
        o.flags = TOPOML_CTX_NO_ENV | TOPOML_CTX_NO_PLUGINS;
        o.allocator = &al;
        topoml_context *c = NULL;
        int st = topoml_context_new(&c, &o);
        if (st != TOPOML_OK) {
            topoml_context_free(c);
            continue;
        }
        int sts[6];
        sts[0] = topoml_betti_curve(c, x, 3, g, 3, betti);
        sts[1] = topoml_landscapes(c, x, 3, 2, g, 3, land);
        sts[2] = topoml_bottleneck_distance(c, x, 3, y, 2, &d);
        sts[3] = topoml_wasserstein_distance(c, x, 3, y, 2, 1.0, INFINITY, &d);
        FILE *f = fmemopen((void *)json, sizeof json - 1, "r");
        topoml_diagram *dg = NULL;
        sts[4] = topoml_diagram_read_stream(c, &dg, f, "mem.json", TOPOML_DIAGRAM_AUTO);
        fclose(f);
        topoml_diagram_free(dg);
        sts[5] = topoml_diagram_from_intervals(c, &dg, NULL, 0);
        if (sts[5] == TOPOML_OK)
            topoml_diagram_free(dg);
        finished = true;
        for (int i = 0; i < 6; i++) {
            ck_assert_msg(sts[i] == TOPOML_OK || sts[i] == TOPOML_E_NOMEM,
                          "k=%d call %d returned %d", k, i, sts[i]);
            finished &= sts[i] == TOPOML_OK;
        }
        topoml_context_free(c);
    }
    ck_assert(finished);
}
END_TEST

/* ------------------------------------------------------------------------
 * Diagram files
 * ---------------------------------------------------------------------- */

static int read_text(const char *text, topoml_diagram_format fmt, topoml_diagram **out)
{
    FILE *f = fmemopen((void *)text, strlen(text), "r");
    ck_assert_ptr_nonnull(f);
    int st = topoml_diagram_read_stream(ctx, out, f, "t.txt", fmt);
    fclose(f);
    return st;
}

static void expect_pairs(const topoml_diagram *d, uint32_t dim, const topoml_pair *want, uint64_t n)
{
    uint64_t got_n;
    const topoml_pair *got = topoml_diagram_pairs(d, dim, &got_n);
    ck_assert_uint_eq(got_n, n);
    for (uint64_t i = 0; i < n; i++) {
        ck_assert(got[i].birth == want[i].birth);
        ck_assert(got[i].death == want[i].death);
    }
}

START_TEST(test_read_ripser_output)
{
    static const char text[] = "value range: [0,2]\n"
                               "distance matrix with 4 points, using threshold at 2\n"
                               "persistence intervals in dim 0:\n"
                               " [0,1)\n"
                               " [0,0.5)\r\n"
                               " [0, )\n"
                               "persistence intervals in dim 1:\n"
                               "persistence intervals in dim 2:\n"
                               " [1.25,1.5)\n";
    topoml_diagram *d;
    ck_assert_int_eq(read_text(text, TOPOML_DIAGRAM_AUTO, &d), TOPOML_OK);
    ck_assert_uint_eq(topoml_diagram_dim_count(d), 3);
    topoml_pair h0[] = {P(0, 1), P(0, 0.5), P(0, INFINITY)}, h2[] = {P(1.25, 1.5)};
    expect_pairs(d, 0, h0, 3);
    expect_pairs(d, 1, NULL, 0);
    expect_pairs(d, 2, h2, 1);
    expect_pairs(d, 7, NULL, 0);
    topoml_diagram_free(d);
}
END_TEST

START_TEST(test_read_ripser_reports_line_of_bad_interval)
{
    topoml_diagram *d = NULL;
    ck_assert_int_eq(
        read_text("persistence intervals in dim 0:\n [0,1)\n [0;1)\n", TOPOML_DIAGRAM_RIPSER, &d),
        TOPOML_E_PARSE);
    ck_assert_str_eq(topoml_errmsg(ctx), "t.txt:3: expected ',' in the interval");
    ck_assert_ptr_null(d);
    ck_assert_int_eq(
        read_text("persistence intervals in dim 0:\n [2,1)\n", TOPOML_DIAGRAM_RIPSER, &d),
        TOPOML_E_PARSE);
    ck_assert(strstr(topoml_errmsg(ctx), "t.txt:2: death 1 is below birth 2") != NULL);
    ck_assert_int_eq(read_text("nothing here\n", TOPOML_DIAGRAM_RIPSER, &d), TOPOML_E_PARSE);
    ck_assert(strstr(topoml_errmsg(ctx), "no \"persistence intervals") != NULL);
}
END_TEST

START_TEST(test_read_gudhi_lines)
{
    static const char text[] = "# dim birth death\n"
                               "0 0 inf\n"
                               "  1  0.5   2.5  \n"
                               "\n"
                               "2 1 1.5 1.75\n" /* field dim birth death */
                               "0 0.25 0.75\n";
    topoml_diagram *d;
    ck_assert_int_eq(read_text(text, TOPOML_DIAGRAM_AUTO, &d), TOPOML_OK);
    topoml_pair h0[] = {P(0, INFINITY), P(0.25, 0.75)}, h1[] = {P(0.5, 2.5), P(1.5, 1.75)};
    expect_pairs(d, 0, h0, 2);
    expect_pairs(d, 1, h1, 2);
    topoml_diagram_free(d);
    ck_assert_int_eq(read_text("0.5 2\n", TOPOML_DIAGRAM_GUDHI, &d), TOPOML_OK);
    topoml_pair two[] = {P(0.5, 2)};
    expect_pairs(d, 0, two, 1);
    topoml_diagram_free(d);
    ck_assert_int_eq(read_text("0 0 1\n1 x 2\n", TOPOML_DIAGRAM_GUDHI, &d), TOPOML_E_PARSE);
    ck_assert_str_eq(topoml_errmsg(ctx), "t.txt:2: the birth is not a number");
    ck_assert_int_eq(read_text("0 0 nan\n", TOPOML_DIAGRAM_GUDHI, &d), TOPOML_E_PARSE);
    ck_assert_int_eq(read_text("0 inf inf\n", TOPOML_DIAGRAM_GUDHI, &d), TOPOML_E_PARSE);
    ck_assert(strstr(topoml_errmsg(ctx), "birth inf is not finite") != NULL);
    ck_assert_int_eq(read_text("5000 0 1\n", TOPOML_DIAGRAM_GUDHI, &d), TOPOML_E_PARSE);
    ck_assert_int_eq(read_text("0 0 1e999\n", TOPOML_DIAGRAM_GUDHI, &d), TOPOML_E_PARSE);
    ck_assert_int_eq(read_text("0 0 1 2 3\n", TOPOML_DIAGRAM_GUDHI, &d), TOPOML_E_PARSE);
    ck_assert_int_eq(read_text("", TOPOML_DIAGRAM_AUTO, &d), TOPOML_OK);
    ck_assert_uint_eq(topoml_diagram_dim_count(d), 0);
    topoml_diagram_free(d);
}
END_TEST

START_TEST(test_read_csv)
{
    topoml_diagram *d;
    ck_assert_int_eq(
        read_text("dim,birth,death\n0,0,inf\n1, 0.5 ,2\n0,0.25,\n", TOPOML_DIAGRAM_AUTO, &d),
        TOPOML_OK);
    topoml_pair h0[] = {P(0, INFINITY), P(0.25, INFINITY)}, h1[] = {P(0.5, 2)};
    expect_pairs(d, 0, h0, 2);
    expect_pairs(d, 1, h1, 1);
    topoml_diagram_free(d);
    ck_assert_int_eq(read_text("a,b,c\n", TOPOML_DIAGRAM_CSV, &d), TOPOML_E_PARSE);
    ck_assert_int_eq(read_text("0,1\n", TOPOML_DIAGRAM_CSV, &d), TOPOML_E_PARSE);
    ck_assert_str_eq(topoml_errmsg(ctx), "t.txt:1: expected 3 fields \"dim,birth,death\"");
}
END_TEST

START_TEST(test_read_json_schema_and_extras)
{
    static const char text[] =
        "{ \"format\": \"topoml-barcode\", \"version\": 1,\n"
        "  \"backend\": {\"name\": \"scalar\", \"tags\": [1, 2.5e-3, true, null, "
        "\"x\\\"y\\u00e9\"]},\n"
        "  \"dims\": [\n"
        "    {\"intervals\": [[0, 1.5], [0, null], [0.25, Infinity]], \"dim\": 0},\n"
        "    {\"dim\": 2, \"intervals\": [], \"count\": 0},\n"
        "    {\"dim\": 0, \"intervals\": [[-1e-3, 2E+1]]}\n"
        "  ]\n"
        "}\n";
    topoml_diagram *d;
    ck_assert_int_eq(read_text(text, TOPOML_DIAGRAM_AUTO, &d), TOPOML_OK);
    ck_assert_uint_eq(topoml_diagram_dim_count(d), 3);
    topoml_pair h0[] = {P(0, 1.5), P(0, INFINITY), P(0.25, INFINITY), P(-1e-3, 20)};
    expect_pairs(d, 0, h0, 4);
    expect_pairs(d, 2, NULL, 0);
    topoml_diagram_free(d);
}
END_TEST

START_TEST(test_read_json_errors_name_line_and_column)
{
    topoml_diagram *d = NULL;
    ck_assert_int_eq(
        read_text("{\"dims\":[\n {\"dim\":0,\"intervals\":[[0,01]]}]}", TOPOML_DIAGRAM_JSON, &d),
        TOPOML_E_PARSE);
    ck_assert_str_eq(topoml_errmsg(ctx), "t.txt:2:28: expected ']'");
    ck_assert_int_eq(read_text("{\"dims\":[]} x", TOPOML_DIAGRAM_JSON, &d), TOPOML_E_PARSE);
    ck_assert(strstr(topoml_errmsg(ctx), "unexpected text") != NULL);
    ck_assert_int_eq(read_text("{\"dim\":[]}", TOPOML_DIAGRAM_JSON, &d), TOPOML_E_PARSE);
    ck_assert(strstr(topoml_errmsg(ctx), "no \"dims\"") != NULL);
    ck_assert_int_eq(read_text("{\"dims\":[{\"dim\":0}]}", TOPOML_DIAGRAM_JSON, &d),
                     TOPOML_E_PARSE);
    ck_assert_int_eq(
        read_text("{\"dims\":[{\"dim\":1.5,\"intervals\":[]}]}", TOPOML_DIAGRAM_JSON, &d),
        TOPOML_E_PARSE);
    ck_assert_int_eq(
        read_text("{\"dims\":[{\"dim\":0,\"intervals\":[[null,1]]}]}", TOPOML_DIAGRAM_JSON, &d),
        TOPOML_E_PARSE);
    ck_assert_int_eq(
        read_text("{\"dims\":[{\"dim\":0,\"intervals\":[[3,1]]}]}", TOPOML_DIAGRAM_JSON, &d),
        TOPOML_E_PARSE);
    ck_assert(strstr(topoml_errmsg(ctx), "below birth") != NULL);
    ck_assert_int_eq(
        read_text("{\"dims\":[{\"dim\":0,\"intervals\":[[0,1,2]]}]}", TOPOML_DIAGRAM_JSON, &d),
        TOPOML_E_PARSE);
    ck_assert_int_eq(read_text("{\"dims\":[],}", TOPOML_DIAGRAM_JSON, &d), TOPOML_E_PARSE);
    ck_assert_int_eq(read_text("{\"dims\":[], \"s\":\"abc", TOPOML_DIAGRAM_JSON, &d),
                     TOPOML_E_PARSE);
    ck_assert(strstr(topoml_errmsg(ctx), "unterminated") != NULL);
    /* Deep nesting in a skipped member is refused, not recursed into. */
    char deep[400];
    strcpy(deep, "{\"x\":");
    for (int i = 0; i < 100; i++)
        strcat(deep, "[");
    ck_assert_int_eq(read_text(deep, TOPOML_DIAGRAM_JSON, &d), TOPOML_E_PARSE);
    ck_assert(strstr(topoml_errmsg(ctx), "nested too deeply") != NULL);
    ck_assert_ptr_null(d);
}
END_TEST

START_TEST(test_read_refuses_binary_and_missing_files)
{
    static const char bin[] = "0 0 1\n\0\1\2";
    FILE *f = fmemopen((void *)bin, sizeof bin - 1, "r");
    topoml_diagram *d = NULL;
    ck_assert_int_eq(topoml_diagram_read_stream(ctx, &d, f, "b.bin", TOPOML_DIAGRAM_AUTO),
                     TOPOML_E_PARSE);
    fclose(f);
    ck_assert_str_eq(topoml_errmsg(ctx), "b.bin:2: NUL byte in a text file");
    ck_assert_int_eq(topoml_diagram_read(ctx, &d, "/nonexistent/x.json", TOPOML_DIAGRAM_AUTO),
                     TOPOML_E_NOT_FOUND);
    ck_assert(strstr(topoml_errmsg(ctx), "/nonexistent/x.json") != NULL);
}
END_TEST

START_TEST(test_every_format_round_trips)
{
    const topoml_interval iv[] = {
        {0, 0.1, 0, 0},
        {0, INFINITY, 0, 0},
        {0.30000000000000004, 1e-300, 2, 0},
        {1.0 / 3.0, 2.0 / 3.0, 2, 0},
        {-5, 1e300, 2, 0},
    };
    /* 1e-300 < 0.3: swap it into order for a valid pair. */
    topoml_interval fixed[5];
    memcpy(fixed, iv, sizeof iv);
    fixed[2].birth = 1e-300;
    fixed[2].death = 0.30000000000000004;
    topoml_diagram *d;
    ck_assert_int_eq(topoml_diagram_from_intervals(ctx, &d, fixed, 5), TOPOML_OK);
    ck_assert_uint_eq(topoml_diagram_dim_count(d), 3);
    for (int fmt = TOPOML_DIAGRAM_JSON; fmt <= TOPOML_DIAGRAM_CSV; fmt++) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        ck_assert_int_eq(topoml_diagram_write(ctx, d, f, (topoml_diagram_format)fmt), TOPOML_OK);
        fclose(f);
        topoml_diagram *e;
        for (int how = 0; how < 2; how++) {
            topoml_diagram_format rf = how ? (topoml_diagram_format)fmt : TOPOML_DIAGRAM_AUTO;
            ck_assert_msg(read_text(buf, rf, &e) == TOPOML_OK, "format %d: %s\n%s", fmt,
                          topoml_errmsg(ctx), buf);
            for (uint32_t k = 0; k < 3; k++) {
                uint64_t n;
                const topoml_pair *p = topoml_diagram_pairs(d, k, &n);
                /* GUDHI and CSV lines cannot say that a dimension is empty. */
                if (n > 0 || fmt == TOPOML_DIAGRAM_JSON || fmt == TOPOML_DIAGRAM_RIPSER)
                    expect_pairs(e, k, p, n);
            }
            topoml_diagram_free(e);
        }
        free(buf);
    }
    ck_assert_int_eq(topoml_diagram_write(ctx, d, stdout, TOPOML_DIAGRAM_AUTO), TOPOML_E_INVALID);
    topoml_diagram_free(d);
}
END_TEST

START_TEST(test_diagram_add_and_format_names)
{
    topoml_diagram *d;
    ck_assert_int_eq(topoml_diagram_new(ctx, &d), TOPOML_OK);
    topoml_pair p[] = {P(0, 1), P(2, 3)}, bad[] = {P(2, 1)};
    ck_assert_int_eq(topoml_diagram_add(d, 4, p, 2), TOPOML_OK);
    ck_assert_int_eq(topoml_diagram_add(d, 4, p, 1), TOPOML_OK);
    ck_assert_int_eq(topoml_diagram_add(d, 1, bad, 1), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_diagram_add(d, TOPOML_DIAGRAM_MAX_DIM + 1, p, 1), TOPOML_E_INVALID);
    ck_assert_uint_eq(topoml_diagram_dim_count(d), 5);
    topoml_pair want[] = {P(0, 1), P(2, 3), P(0, 1)};
    expect_pairs(d, 4, want, 3);
    topoml_diagram_free(d);
    topoml_diagram_format f;
    ck_assert_int_eq(topoml_diagram_format_from_name("ripser", &f), TOPOML_OK);
    ck_assert_int_eq(f, TOPOML_DIAGRAM_RIPSER);
    ck_assert_str_eq(topoml_diagram_format_name(TOPOML_DIAGRAM_GUDHI), "gudhi");
    ck_assert_int_eq(topoml_diagram_format_from_name("xml", &f), TOPOML_E_NOT_FOUND);
}
END_TEST

/* The threshold and the cut-off bars of `topoml barcode`'s JSON and CSV are
 * read, kept through topoml_diagram_from_barcode, and written back. */
static void expect_cut(const topoml_diagram *d, uint32_t dim, const char *flags)
{
    uint64_t n;
    topoml_diagram_pairs(d, dim, &n);
    ck_assert_uint_eq(n, strlen(flags));
    for (uint64_t i = 0; i < n; i++)
        ck_assert_msg(topoml_diagram_cut_off(d, dim, i) == (flags[i] == 'c'), "dim %u pair %llu",
                      dim, (unsigned long long)i);
    ck_assert_int_eq(topoml_diagram_cut_off(d, dim, n), 0);
}

START_TEST(test_cut_off_bars_are_read_kept_and_written)
{
    topoml_diagram *d, *e;
    /* JSON: the last "cut_off" null deaths of a dimension are cut off. */
    ck_assert_int_eq(read_text("{\"threshold\":1.5,\"dims\":[{\"dim\":0,\"intervals\":[[0,1],"
                               "[0,null],[0,null],[0,null]],\"cut_off\":2},{\"dim\":1,"
                               "\"intervals\":[[0.5,null],[0.5,1]],\"cut_off\":1}]}",
                               TOPOML_DIAGRAM_AUTO, &d),
                     TOPOML_OK);
    ck_assert(topoml_diagram_threshold(d) == 1.5);
    expect_cut(d, 0, "-.cc");
    expect_cut(d, 1, "c-");
    /* Written and read back in both formats that can say it. */
    const topoml_diagram_format fmts[] = {TOPOML_DIAGRAM_JSON, TOPOML_DIAGRAM_CSV};
    for (int k = 0; k < 2; k++) {
        const topoml_diagram_format fmt = fmts[k];
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        ck_assert_int_eq(topoml_diagram_write(ctx, d, f, fmt), TOPOML_OK);
        fclose(f);
        ck_assert_msg(read_text(buf, TOPOML_DIAGRAM_AUTO, &e) == TOPOML_OK, "%s", buf);
        ck_assert(topoml_diagram_threshold(e) == 1.5);
        expect_cut(e, 0, "-.cc");
        expect_cut(e, 1, "c-");
        topoml_diagram_free(e);
        free(buf);
    }
    topoml_diagram_free(d);
    /* CSV: "cut" deaths and the "# threshold" comment; "inf" is essential. */
    ck_assert_int_eq(read_text("# threshold 2\ndim,birth,death\n0,0,cut\n0,0,inf\n1,1,cut\n",
                               TOPOML_DIAGRAM_AUTO, &d),
                     TOPOML_OK);
    ck_assert(topoml_diagram_threshold(d) == 2);
    expect_cut(d, 0, "c.");
    expect_cut(d, 1, "c");
    topoml_diagram_free(d);
    /* No threshold: +inf; nothing cut off. */
    ck_assert_int_eq(read_text("0 0 inf\n", TOPOML_DIAGRAM_AUTO, &d), TOPOML_OK);
    ck_assert(isinf(topoml_diagram_threshold(d)));
    expect_cut(d, 0, ".");
    topoml_diagram_free(d);
    ck_assert(isnan(topoml_diagram_threshold(NULL)));
    ck_assert_int_eq(topoml_diagram_cut_off(NULL, 0, 0), 0);
    /* More cut off than there are null deaths, or a bad threshold. */
    ck_assert_int_eq(read_text("{\"dims\":[{\"dim\":0,\"intervals\":[[0,null]],\"cut_off\":2}]}",
                               TOPOML_DIAGRAM_AUTO, &d),
                     TOPOML_E_PARSE);
    ck_assert_ptr_nonnull(strstr(topoml_errmsg(ctx), "t.txt:1: \"cut_off\" is 2"));
    ck_assert_int_eq(read_text("{\"threshold\":-1,\"dims\":[]}", TOPOML_DIAGRAM_AUTO, &d),
                     TOPOML_E_PARSE);
    ck_assert_int_eq(read_text("# threshold x\ndim,birth,death\n", TOPOML_DIAGRAM_CSV, &d),
                     TOPOML_E_PARSE);
    ck_assert_ptr_nonnull(strstr(topoml_errmsg(ctx), "t.txt:1:"));

    /* From a barcode: 4 points on a line 1 apart. Without a threshold 3 H0
     * bars die at 1 and one class is essential; under threshold 0.5 no edge
     * is in: 4 classes alive at it, one essential, three cut off. */
    const double dist[] = {1, 2, 1, 3, 2, 1};
    topoml_data *data;
    ck_assert_int_eq(topoml_data_from_condensed(ctx, &data, 4, dist), TOPOML_OK);
    for (int t = 0; t < 2; t++) {
        topoml_rips_options ro;
        topoml_rips_options_init(&ro);
        ro.max_dim = 0;
        ro.threshold = t ? 0.5 : INFINITY;
        topoml_barcode *bc;
        ck_assert_int_eq(topoml_barcode_compute(ctx, &bc, data, &ro), TOPOML_OK);
        ck_assert_int_eq(topoml_diagram_from_barcode(ctx, &d, bc), TOPOML_OK);
        ck_assert(topoml_diagram_threshold(d) == ro.threshold);
        uint64_t n, n_cut = 0, n_inf = 0;
        const topoml_pair *p = topoml_diagram_pairs(d, 0, &n);
        for (uint64_t i = 0; i < n; i++) {
            n_cut += topoml_diagram_cut_off(d, 0, i) == 1;
            n_inf += isinf(p[i].death) != 0;
            ck_assert_int_eq(topoml_diagram_cut_off(d, 0, i), topoml_barcode_cut_off(bc, i));
        }
        ck_assert_uint_eq(n_inf, t ? 4 : 1);
        ck_assert_uint_eq(n_cut, t ? 3 : 0);
        topoml_diagram_free(d);
        topoml_barcode_free(bc);
    }
    topoml_data_free(ctx, data);
    ck_assert_int_eq(topoml_diagram_from_barcode(ctx, &d, NULL), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_diagram_from_barcode(NULL, &d, NULL), TOPOML_E_INVALID);
}
END_TEST

static Suite *features_suite(void)
{
    Suite *s = suite_create("features");
    TCase *t = tcase_create("features");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_set_timeout(t, 60);
    tcase_add_test(t, test_grid_hits_both_ends);
    tcase_add_test(t, test_grid_rejects_bad_range);
    tcase_add_test(t, test_pairs_finite_drops_and_clips_in_place);
    tcase_add_test(t, test_pairs_finite_rejects_clip_below_birth);
    tcase_add_test(t, test_betti_curve_counts_half_open_intervals);
    tcase_add_test(t, test_betti_curve_counts_infinite_bars_for_ever);
    tcase_add_test(t, test_betti_curve_of_empty_diagram_is_zero);
    tcase_add_test(t, test_features_reject_bad_pairs);
    tcase_add_test(t, test_landscapes_of_one_pair_are_a_tent);
    tcase_add_test(t, test_landscapes_levels_are_ordered);
    tcase_add_test(t, test_landscapes_infinite_death_is_a_ramp);
    tcase_add_test(t, test_entropy_by_hand);
    tcase_add_test(t, test_entropy_rejects_infinite_bars);
    tcase_add_test(t, test_total_persistence_by_hand);
    tcase_add_test(t, test_bottleneck_by_hand);
    tcase_add_test(t, test_bottleneck_matches_brute_force);
    tcase_add_test(t, test_bottleneck_is_symmetric_on_larger_diagrams);
    tcase_add_test(t, test_wasserstein_by_hand);
    tcase_add_test(t, test_wasserstein_matches_brute_force);
    tcase_add_test(t, test_distances_match_infinite_points_by_kind);
    tcase_add_test(t, test_distances_reject_bad_input);
    tcase_add_test(t, test_distances_of_huge_coordinates);
    tcase_add_test(t, test_wasserstein_respects_memory_limit);
    tcase_add_test(t, test_allocation_failures_are_reported);
    tcase_add_test(t, test_read_ripser_output);
    tcase_add_test(t, test_read_ripser_reports_line_of_bad_interval);
    tcase_add_test(t, test_read_gudhi_lines);
    tcase_add_test(t, test_read_csv);
    tcase_add_test(t, test_read_json_schema_and_extras);
    tcase_add_test(t, test_read_json_errors_name_line_and_column);
    tcase_add_test(t, test_read_refuses_binary_and_missing_files);
    tcase_add_test(t, test_every_format_round_trips);
    tcase_add_test(t, test_diagram_add_and_format_names);
    tcase_add_test(t, test_cut_off_bars_are_read_kept_and_written);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return topoml_check_run(features_suite());
}
