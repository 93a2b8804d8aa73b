/*
 * test_float_edges.c — right answers or clear errors at the edges of double:
 * distances of the scalar reference for coordinates from subnormal to near
 * DBL_MAX (scaled as hypot does, never an intermediate overflow or
 * underflow), distances beyond the dtype's range refused in every op, H0 and
 * Rips barcodes of scaled shapes equal to the shapes' scaled barcodes, and
 * the modulus check for primes near 2^32.
 */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "topoml/features.h"
#include "topoml/topoml.h"

#include "check_run.h"
#include "exact_pairs.h"

static topoml_context *ctx_new(void)
{
    topoml_context_options o = {.struct_size = sizeof o,
                                .flags = TOPOML_CTX_NO_ENV | TOPOML_CTX_NO_PLUGINS};
    topoml_context *ctx = NULL;
    ck_assert_int_eq(topoml_context_new(&ctx, &o), TOPOML_OK);
    return ctx;
}

/* Magnitudes from subnormal to near the largest double. */
static const double scales[] = {1e-320, 1e-310, 1e-300, 1e-200, 1e-170, 1e-160, 1e-100, 1,
                                1e100,  1e150,  1e160,  1e200,  1e250,  1e300,  1e307};
#define N_SCALES (sizeof scales / sizeof scales[0])

static bool close_to(double got, double want, double rel)
{
    if (isinf(want))
        return got == want;
    return fabs(got - want) <= rel * fabs(want) + 4 * DBL_TRUE_MIN;
}

/* d(1,0) of two points in the plane. */
static int dist2(topoml_context *ctx, topoml_metric m, topoml_dtype t, const double xy[4],
                 double *out)
{
    topoml_data *d = NULL;
    ck_assert_int_eq(topoml_data_from_points(ctx, &d, 2, 2, xy), TOPOML_OK);
    void *v = NULL;
    uint64_t n = 0;
    int st = topoml_distances(ctx, d, m, t, &v, &n);
    if (st == TOPOML_OK) {
        ck_assert_uint_eq(n, 1);
        *out = t == TOPOML_F32 ? ((float *)v)[0] : ((double *)v)[0];
    }
    topoml_free(ctx, v);
    topoml_data_free(ctx, d);
    return st;
}

START_TEST(test_euclidean_distances_scale_like_hypot)
{
    topoml_context *ctx = ctx_new();
    for (size_t k = 0; k < N_SCALES; k++) {
        const double s = scales[k];
        /* (3s, 0) to (0, 4s), and (s, 0) to (-s, 0) whose difference is 2s. */
        const double a[4] = {3 * s, 0, 0, 4 * s}, b[4] = {s, 0, -s, 0};
        const double want_a = hypot(3 * s, 4 * s), want_b = 2 * s;
        double got;
        ck_assert_int_eq(dist2(ctx, TOPOML_METRIC_EUCLIDEAN, TOPOML_F64, a, &got), TOPOML_OK);
        ck_assert_msg(close_to(got, want_a, 1e-15), "scale %g: %.17g vs %.17g", s, got, want_a);
        ck_assert_int_eq(dist2(ctx, TOPOML_METRIC_EUCLIDEAN, TOPOML_F64, b, &got), TOPOML_OK);
        ck_assert_msg(close_to(got, want_b, 1e-15), "scale %g: %.17g vs %.17g", s, got, want_b);
        /* Squared: the square where double holds it, else a clear refusal. */
        const double sq = want_a * want_a;
        int st = dist2(ctx, TOPOML_METRIC_SQEUCLIDEAN, TOPOML_F64, a, &got);
        if (isinf(sq)) {
            ck_assert_int_eq(st, TOPOML_E_OVERFLOW);
            ck_assert_msg(strstr(topoml_errmsg(ctx), "beyond the range") != NULL, "%s",
                          topoml_errmsg(ctx));
        } else {
            ck_assert_int_eq(st, TOPOML_OK);
            ck_assert_msg(close_to(got, sq, 4e-16 * 4), "scale %g: %.17g vs %.17g", s, got, sq);
        }
    }
    /* A distance beyond double is refused, never inf. */
    const double far[4] = {DBL_MAX, 0, -DBL_MAX, 0};
    double got;
    ck_assert_int_eq(dist2(ctx, TOPOML_METRIC_EUCLIDEAN, TOPOML_F64, far, &got), TOPOML_E_OVERFLOW);
    const double half[4] = {DBL_MAX / 2, 0, -DBL_MAX / 2, 0};
    ck_assert_int_eq(dist2(ctx, TOPOML_METRIC_EUCLIDEAN, TOPOML_F64, half, &got), TOPOML_OK);
    ck_assert_double_eq(got, DBL_MAX);
    topoml_context_free(ctx);
}
END_TEST

START_TEST(test_cosine_distances_are_scale_free)
{
    topoml_context *ctx = ctx_new();
    for (int t = 0; t < TOPOML_DTYPE_COUNT; t++) {
        for (size_t k = 0; k < N_SCALES; k++) {
            const double s = scales[k];
            if (t == TOPOML_F32 && (s > 1e30 || s < 1e-30))
                continue;
            const double tol = t == TOPOML_F32 ? 1e-6 : 1e-15;
            /* Parallel, opposite, orthogonal, at 45 degrees, and against a
             * vector of another scale entirely. */
            const double cases[][4] = {{s, 0, 2 * s, 0}, {s, 0, -3 * s, 0}, {s, 0, 0, s},
                                       {s, 0, s, s},     {s, s, 1, 1},      {s, 0, 1e-3, 1e-3}};
            const double want[] = {0, 2, 1, 1 - sqrt(0.5), 0, 1 - sqrt(0.5)};
            for (size_t c = 0; c < sizeof want / sizeof want[0]; c++) {
                double got;
                ck_assert_int_eq(dist2(ctx, TOPOML_METRIC_COSINE, (topoml_dtype)t, cases[c], &got),
                                 TOPOML_OK);
                ck_assert_msg(fabs(got - want[c]) <= tol * 4, "dtype %d scale %g case %zu: %.17g",
                              t, s, c, got);
            }
        }
    }
    /* A zero vector keeps its convention: distance 1. */
    const double z[4] = {0, 0, 1e-300, 0};
    double got;
    ck_assert_int_eq(dist2(ctx, TOPOML_METRIC_COSINE, TOPOML_F64, z, &got), TOPOML_OK);
    ck_assert_double_eq(got, 1.0);
    topoml_context_free(ctx);
}
END_TEST

START_TEST(test_float32_distances_widen_or_refuse)
{
    topoml_context *ctx = ctx_new();
    const double fs[] = {1e-44, 1e-38, 1e-25, 1e-20, 1, 1e18, 1e30, 1e38};
    for (size_t k = 0; k < sizeof fs / sizeof fs[0]; k++) {
        const double s = fs[k];
        const double a[4] = {s, 0, -s, 0};
        const double want = 2 * (double)(float)s;
        double got;
        int st = dist2(ctx, TOPOML_METRIC_EUCLIDEAN, TOPOML_F32, a, &got);
        if (want > FLT_MAX) {
            ck_assert_int_eq(st, TOPOML_E_OVERFLOW);
        } else {
            ck_assert_int_eq(st, TOPOML_OK);
            ck_assert_msg(close_to(got, (float)want, 1e-7), "scale %g: %.9g", s, got);
        }
    }
    /* A coordinate beyond float32 is refused, not turned into inf. */
    const double big[4] = {1e200, 0, 0, 1};
    double got;
    ck_assert_int_eq(dist2(ctx, TOPOML_METRIC_EUCLIDEAN, TOPOML_F32, big, &got), TOPOML_E_OVERFLOW);
    ck_assert_msg(strstr(topoml_errmsg(ctx), "float32") != NULL, "%s", topoml_errmsg(ctx));
    topoml_context_free(ctx);
}
END_TEST

static topoml_barcode *barcode(topoml_context *ctx, const double *xy, uint64_t n, uint32_t dim,
                               topoml_metric m, int want_status)
{
    topoml_data *d = NULL;
    ck_assert_int_eq(topoml_data_from_points(ctx, &d, n, 2, xy), TOPOML_OK);
    topoml_rips_options o;
    topoml_rips_options_init(&o);
    o.max_dim = dim;
    o.metric = m;
    topoml_barcode *bc = NULL;
    int st = topoml_barcode_compute(ctx, &bc, d, &o);
    ck_assert_msg(st == want_status, "status %d, want %d: %s", st, want_status, topoml_errmsg(ctx));
    topoml_data_free(ctx, d);
    return bc;
}

START_TEST(test_barcodes_of_scaled_shapes_scale)
{
    topoml_context *ctx = ctx_new();
    for (size_t k = 0; k < N_SCALES; k++) {
        const double s = scales[k];
        /* Two points 2s apart and one off their middle (the issue's
         * (1e200,0), (-1e200,0), (0,1)): one infinite H0 bar and the two
         * shortest of the edges 2s, h, h (h = hypot(s, 1)). */
        const double tri[6] = {s, 0, -s, 0, 0, 1};
        for (uint32_t dim = 0; dim <= 1; dim++) {
            topoml_barcode *bc = barcode(ctx, tri, 3, dim, TOPOML_METRIC_EUCLIDEAN, TOPOML_OK);
            uint64_t n, inf = 0, fin = 0;
            const double h = hypot(s, 1), want[2] = {fmin(2 * s, h), h};
            const topoml_interval *v = topoml_barcode_intervals(bc, &n);
            for (uint64_t i = 0; i < n; i++) {
                if (v[i].dim != 0)
                    continue;
                if (isinf(v[i].death)) {
                    inf++;
                } else {
                    ck_assert_msg(fin < 2 && close_to(v[i].death, want[fin], 1e-15),
                                  "scale %g: %.17g", s, v[i].death);
                    fin++;
                }
            }
            ck_assert_msg(inf == 1 && fin == 2, "scale %g max_dim %u: %llu infinite, %llu finite",
                          s, dim, (unsigned long long)inf, (unsigned long long)fin);
            topoml_barcode_free(bc);
        }
        /* A square of side s: one H1 bar [s, s*sqrt(2)). */
        const double sq[8] = {0, 0, s, 0, s, s, 0, s};
        topoml_barcode *bc = barcode(ctx, sq, 4, 1, TOPOML_METRIC_EUCLIDEAN, TOPOML_OK);
        uint64_t n, h1 = 0;
        const topoml_interval *v = topoml_barcode_intervals(bc, &n);
        for (uint64_t i = 0; i < n; i++)
            if (v[i].dim == 1) {
                h1++;
                ck_assert_msg(close_to(v[i].birth, s, 1e-15) &&
                                  close_to(v[i].death, hypot(s, s), 1e-15),
                              "scale %g: [%g, %g)", s, v[i].birth, v[i].death);
            }
        ck_assert_msg(h1 == (s > 0 ? 1u : 0u), "scale %g: %llu H1 bars", s, (unsigned long long)h1);
        topoml_barcode_free(bc);
    }
    topoml_context_free(ctx);
}
END_TEST

START_TEST(test_distances_beyond_double_are_refused_by_every_op)
{
    topoml_context *ctx = ctx_new();
    /* sqeuclidean of 1e200 apart is 1e400: refused by distances, edges, H0
     * and Rips alike, naming the range. */
    const double xy[6] = {1e200, 0, -1e200, 0, 0, 1};
    topoml_data *d = NULL;
    ck_assert_int_eq(topoml_data_from_points(ctx, &d, 3, 2, xy), TOPOML_OK);
    topoml_edge *e = NULL;
    uint64_t ne = 0;
    ck_assert_int_eq(topoml_edges(ctx, d, TOPOML_METRIC_SQEUCLIDEAN, INFINITY, &e, &ne),
                     TOPOML_E_OVERFLOW);
    ck_assert_ptr_null(e);
    ck_assert_msg(strstr(topoml_errmsg(ctx), "beyond the range") != NULL, "%s", topoml_errmsg(ctx));
    topoml_data_free(ctx, d);
    for (uint32_t dim = 0; dim <= 1; dim++) {
        topoml_barcode *bc = barcode(ctx, xy, 3, dim, TOPOML_METRIC_SQEUCLIDEAN, TOPOML_E_OVERFLOW);
        ck_assert_msg(strstr(topoml_errmsg(ctx), "beyond the range") != NULL, "%s",
                      topoml_errmsg(ctx));
        topoml_barcode_free(bc);
    }
    /* Manhattan of coordinates near DBL_MAX sums past it: refused too. */
    const double m[6] = {DBL_MAX, DBL_MAX, 0, 0, -DBL_MAX, 0};
    topoml_barcode_free(barcode(ctx, m, 3, 1, TOPOML_METRIC_MANHATTAN, TOPOML_E_OVERFLOW));
    topoml_context_free(ctx);
}
END_TEST

START_TEST(test_modulus_primes_near_2_to_the_32_are_primes)
{
    topoml_context *ctx = ctx_new();
    const double xy[6] = {0, 0, 1, 0, 0, 1};
    topoml_data *d = NULL;
    ck_assert_int_eq(topoml_data_from_points(ctx, &d, 3, 2, xy), TOPOML_OK);
    /* 4294967291 and 4294967279 are primes; 4294967295 = 3*5*17*257*65537 and
     * 4294967293 = 9241 * 464773 are not. The reference supports moduli up to
     * 65521: a prime above is refused as too large, not as composite. */
    const struct {
        uint32_t p;
        bool prime;
    } cases[] = {{4294967291u, true},  {4294967279u, true}, {4294967295u, false},
                 {4294967293u, false}, {65521u, true},      {65519u, true},
                 {65537u, true}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        topoml_rips_options o;
        topoml_rips_options_init(&o);
        o.modulus = cases[k].p;
        topoml_barcode *bc = NULL;
        int st = topoml_barcode_compute(ctx, &bc, d, &o);
        const char *msg = topoml_errmsg(ctx);
        if (cases[k].prime) {
            ck_assert_msg(st == TOPOML_OK || strstr(msg, "not a prime") == NULL,
                          "%u called composite: %s", cases[k].p, msg);
            ck_assert_msg(cases[k].p > 65521u || st == TOPOML_OK, "%u: %s", cases[k].p, msg);
        } else {
            ck_assert_int_eq(st, TOPOML_E_INVALID);
            ck_assert_msg(strstr(msg, "not a prime") != NULL, "%u: %s", cases[k].p, msg);
        }
        topoml_barcode_free(bc);
    }
    topoml_data_free(ctx, d);
    topoml_context_free(ctx);
}
END_TEST

START_TEST(test_grids_and_images_at_the_edges_of_double)
{
    topoml_context *ctx = ctx_new();
    /* Grids stay inside [lo, hi] however the interpolation rounds. */
    const double ends[][2] = {{DBL_MAX / 2, DBL_MAX / 2},
                              {-DBL_MAX, DBL_MAX},
                              {1e15, 1e15 + 0.125},
                              {DBL_TRUE_MIN, 2 * DBL_TRUE_MIN},
                              {-1e308, -1e308}};
    for (size_t k = 0; k < sizeof ends / sizeof ends[0]; k++) {
        double g[33];
        ck_assert_int_eq(topoml_grid(ctx, ends[k][0], ends[k][1], 33, g), TOPOML_OK);
        for (int i = 0; i < 33; i++)
            ck_assert_msg(isfinite(g[i]) && g[i] >= ends[k][0] && g[i] <= ends[k][1],
                          "grid %zu value %d: %.17g", k, i, g[i]);
    }
    /* Images of subnormal persistence with a subnormal sigma: 1/sigma
     * overflows, the pixels must not (they were NaN). */
    const double sigmas[] = {5e-312, 1e-320, 1e-300, 1e300};
    for (size_t k = 0; k < sizeof sigmas / sizeof sigmas[0]; k++) {
        const double s = sigmas[k];
        topoml_image_params_v1 prm;
        topoml_image_params_init(&prm);
        prm.sigma = s;
        prm.birth_min = -20 * s;
        prm.birth_max = 3 * s;
        prm.pers_min = 0;
        prm.pers_max = 23 * s;
        prm.width = prm.height = 8;
        const topoml_pair p[] = {{0, 0}, {-20 * s, 0}, {-20 * s, 0}};
        uint64_t off[2] = {0, 3};
        double img[64];
        ck_assert_int_eq(topoml_persistence_images(ctx, &prm, 1, off, p, img), TOPOML_OK);
        double sum = 0;
        for (int i = 0; i < 64; i++) {
            ck_assert_msg(isfinite(img[i]) && img[i] >= 0, "sigma %g pixel %d: %g", s, i, img[i]);
            sum += img[i];
        }
        ck_assert_msg(sum > 0, "sigma %g: an empty image", s);
    }
    topoml_context_free(ctx);
}
END_TEST

/* The pair-by-pair path that accelerated backends (asm-avx512, cuda,
 * triton-bridge) take for coordinates outside their kernels' range: a NaN
 * coordinate (outside every range) is refused, with nothing allocated, as
 * the reference refuses it; it is not a distance that no threshold admits. */
static void *exact_alloc(void *host, size_t size)
{
    (*(int *)host)++;
    return malloc(size);
}

START_TEST(test_exact_pairs_refuse_nan_distances)
{
    for (int dt = 0; dt < 2; dt++) {
        double p64[8] = {0, 0, 1e200, 1, NAN, 2, 3, 4};
        float p32[8] = {0, 0, 1e30f, 1, NAN, 2, 3, 4};
        topoml_input_v1 in = {0};
        in.struct_size = sizeof in;
        in.kind = TOPOML_INPUT_POINTS;
        in.dtype = dt ? TOPOML_F32 : TOPOML_F64;
        in.metric = TOPOML_METRIC_EUCLIDEAN;
        in.n = 4;
        in.dim = 2;
        in.data = dt ? (const void *)p32 : (const void *)p64;
        ck_assert(!scalar_in_plain_range(&in));
        int allocs = 0;
        char err[256] = "";
        topoml_call_v1 call = {0};
        call.struct_size = sizeof call;
        call.host_data = &allocs;
        call.alloc = exact_alloc;
        call.error = err;
        call.error_size = sizeof err;
        topoml_edge *e = NULL;
        uint64_t m = 7;
        ck_assert_int_eq(scalar_exact_edges(&call, &in, INFINITY, &e, &m, "test"),
                         TOPOML_E_INVALID);
        ck_assert_ptr_null(e);
        ck_assert_uint_eq(m, 0);
        ck_assert_int_eq(allocs, 0);
        ck_assert_ptr_nonnull(strstr(err, "not a distance"));
        double d[6];
        err[0] = 0;
        ck_assert_int_eq(scalar_exact_distances(&call, &in, d, true, "test"), TOPOML_E_INVALID);
        ck_assert_ptr_nonnull(strstr(err, "nan"));
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("float_edges");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_euclidean_distances_scale_like_hypot);
    tcase_add_test(tc, test_cosine_distances_are_scale_free);
    tcase_add_test(tc, test_float32_distances_widen_or_refuse);
    tcase_add_test(tc, test_barcodes_of_scaled_shapes_scale);
    tcase_add_test(tc, test_distances_beyond_double_are_refused_by_every_op);
    tcase_add_test(tc, test_modulus_primes_near_2_to_the_32_are_primes);
    tcase_add_test(tc, test_grids_and_images_at_the_edges_of_double);
    tcase_add_test(tc, test_exact_pairs_refuse_nan_distances);
    suite_add_tcase(s, tc);
    return topoml_check_run(s);
}
