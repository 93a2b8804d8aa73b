/*
 * test_image.c — unit tests of the persistence image op: the scalar
 * reference (plugins/scalar/image.c) called through its vtable signature,
 * and topoml_persistence_images through the context. Values are checked
 * against cases computed by hand; tests/image_vs_scipy.py checks them
 * against numerical integration.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "image.h"
#include "topoml/features.h"

#include "check_run.h"

#define P(b, d) ((topoml_pair){(b), (d)})

static char errbuf[256];

static int cancel_after; /* progress calls before asking to stop; -1 never */
static int progress_calls;

static int on_progress(void *host, const char *stage, uint64_t done, uint64_t total)
{
    (void)host;
    (void)stage;
    ck_assert(done <= total);
    progress_calls++;
    return cancel_after >= 0 && progress_calls > cancel_after;
}

static void *h_alloc(void *h, size_t n)
{
    (void)h;
    return malloc(n);
}

static void *h_realloc(void *h, void *p, size_t n)
{
    (void)h;
    return realloc(p, n);
}

static void h_free(void *h, void *p)
{
    (void)h;
    free(p);
}

static void *null_alloc(void *h, size_t n)
{
    (void)h;
    (void)n;
    return NULL;
}

static topoml_call_v1 make_call(void)
{
    topoml_call_v1 c;
    memset(&c, 0, sizeof c);
    c.struct_size = sizeof c;
    c.alloc = h_alloc;
    c.realloc = h_realloc;
    c.free = h_free;
    c.progress = on_progress;
    c.error = errbuf;
    c.error_size = sizeof errbuf;
    c.device = -1;
    errbuf[0] = '\0';
    cancel_after = -1;
    progress_calls = 0;
    return c;
}

static topoml_image_params_v1 params(double b0, double b1, double p0, double p1, uint32_t w,
                                     uint32_t h, double sigma)
{
    topoml_image_params_v1 p;
    topoml_image_params_init(&p);
    p.birth_min = b0;
    p.birth_max = b1;
    p.pers_min = p0;
    p.pers_max = p1;
    p.width = w;
    p.height = h;
    p.sigma = sigma;
    return p;
}

/* One image of one diagram. */
static int image1(const topoml_image_params_v1 *p, const topoml_pair *pairs, uint64_t n,
                  double *out)
{
    topoml_call_v1 c = make_call();
    uint64_t off[2] = {0, n};
    return scalar_image(&c, p, 1, off, pairs, out);
}

START_TEST(test_pixel_of_one_sigma_holds_the_68_percent)
{
    /* A pixel reaching one sigma either way of the point in both axes
     * holds erf(1/sqrt2)^2 of its mass. */
    topoml_image_params_v1 p = params(-0.5, 0.5, 0.5, 1.5, 1, 1, 0.5);
    topoml_pair pt[] = {P(0, 1)};
    double v;
    ck_assert_int_eq(image1(&p, pt, 1, &v), TOPOML_OK);
    const double one_sigma = 0.68268949213708589717;
    ck_assert_double_eq_tol(v, one_sigma * one_sigma, 1e-15);
}
END_TEST

START_TEST(test_quadrants_around_a_point_share_its_mass)
{
    topoml_image_params_v1 p = params(1 - 3, 1 + 3, 2 - 3, 2 + 3, 2, 2, 0.25);
    topoml_pair pt[] = {P(1, 3)}; /* (b, p) = (1, 2), the image centre */
    double v[4];
    ck_assert_int_eq(image1(&p, pt, 1, v), TOPOML_OK);
    for (int i = 0; i < 4; i++)
        ck_assert_double_eq_tol(v[i], 0.25, 1e-15);
}
END_TEST

START_TEST(test_image_sums_to_the_weights)
{
    topoml_image_params_v1 p = params(-5, 10, -5, 10, 37, 23, 0.4);
    topoml_pair pts[] = {P(0, 1), P(2, 6), P(3, 3.5), P(4, 8)};
    double *v = malloc(37 * 23 * sizeof *v);
    const double w_linear = (1.0 / 3) + 1 + (0.5 / 3) + 1;
    for (int weight = 0; weight < 3; weight++) {
        p.weight = (uint32_t)weight;
        p.weight_max = 3;
        p.weight_power = 2;
        ck_assert_int_eq(image1(&p, pts, 4, v), TOPOML_OK);
        double s = 0;
        for (int i = 0; i < 37 * 23; i++) {
            ck_assert(v[i] >= 0.0);
            s += v[i];
        }
        double want = weight == 0 ? 4.0 : weight == 1 ? w_linear : 1 + 16 + 0.25 + 16;
        ck_assert_double_eq_tol(s, want, 1e-12 * want);
    }
    free(v);
}
END_TEST

START_TEST(test_rows_are_persistence_and_columns_birth)
{
    /* A point of high birth and low persistence lands in row 0, last
     * column; the image is not transposed or flipped. */
    topoml_image_params_v1 p = params(0, 4, 0, 3, 4, 3, 0.1);
    topoml_pair pt[] = {P(3.5, 4.0)}; /* (b, p) = (3.5, 0.5) */
    double v[12];
    ck_assert_int_eq(image1(&p, pt, 1, v), TOPOML_OK);
    int best = 0;
    for (int i = 1; i < 12; i++)
        if (v[i] > v[best])
            best = i;
    ck_assert_int_eq(best, 0 * 4 + 3);
}
END_TEST

START_TEST(test_weights_scale_a_point)
{
    topoml_image_params_v1 p = params(0, 2, 0, 2, 5, 5, 0.3);
    topoml_pair pt[] = {P(0.5, 1.5)};  /* persistence 1 */
    topoml_pair pt2[] = {P(0.5, 2.0)}; /* persistence 1.5 */
    double c[25], l[25];
    ck_assert_int_eq(image1(&p, pt, 1, c), TOPOML_OK);
    p.weight = TOPOML_WEIGHT_LINEAR;
    p.weight_max = 4;
    ck_assert_int_eq(image1(&p, pt, 1, l), TOPOML_OK);
    for (int i = 0; i < 25; i++)
        ck_assert_double_eq_tol(l[i], 0.25 * c[i], 1e-16);
    p.weight_max = 0.5; /* the ramp has reached 1 */
    ck_assert_int_eq(image1(&p, pt, 1, l), TOPOML_OK);
    for (int i = 0; i < 25; i++)
        ck_assert(l[i] == c[i]);
    p.weight = TOPOML_WEIGHT_CONSTANT;
    ck_assert_int_eq(image1(&p, pt2, 1, c), TOPOML_OK);
    p.weight = TOPOML_WEIGHT_POWER;
    p.weight_power = 3;
    ck_assert_int_eq(image1(&p, pt2, 1, l), TOPOML_OK);
    for (int i = 0; i < 25; i++)
        ck_assert_double_eq_tol(l[i], 3.375 * c[i], 1e-15);
}
END_TEST

START_TEST(test_infinite_points_dropped_or_clipped)
{
    topoml_image_params_v1 p = params(0, 2, 0, 2, 3, 3, 0.2);
    topoml_pair with_inf[] = {P(0.5, INFINITY), P(1, 1.5)};
    topoml_pair clipped[] = {P(0.5, 1.7), P(1, 1.5)};
    topoml_pair finite[] = {P(1, 1.5)};
    double a[9], b[9];
    ck_assert_int_eq(image1(&p, with_inf, 2, a), TOPOML_OK);
    ck_assert_int_eq(image1(&p, finite, 1, b), TOPOML_OK);
    ck_assert_mem_eq(a, b, sizeof a);
    p.infinite = TOPOML_INFINITE_CLIP;
    p.clip_death = 1.7;
    ck_assert_int_eq(image1(&p, with_inf, 2, a), TOPOML_OK);
    ck_assert_int_eq(image1(&p, clipped, 2, b), TOPOML_OK);
    ck_assert_mem_eq(a, b, sizeof a);
    p.clip_death = 0.25; /* below the birth 0.5 */
    ck_assert_int_eq(image1(&p, with_inf, 2, a), TOPOML_E_INVALID);
    ck_assert(strstr(errbuf, "clip_death") != NULL);
}
END_TEST

START_TEST(test_batch_images_are_independent)
{
    topoml_image_params_v1 p = params(0, 3, 0, 3, 6, 4, 0.3);
    topoml_pair all[] = {P(0, 1), P(1, 2.5), P(0.5, 2)};
    uint64_t off[] = {0, 2, 2, 3}; /* the middle diagram is empty */
    double batch[3 * 24], one[24];
    topoml_call_v1 c = make_call();
    ck_assert_int_eq(scalar_image(&c, &p, 3, off, all, batch), TOPOML_OK);
    ck_assert_int_eq(image1(&p, all, 2, one), TOPOML_OK);
    ck_assert_mem_eq(batch, one, sizeof one);
    for (int i = 0; i < 24; i++)
        ck_assert(batch[24 + i] == 0.0);
    ck_assert_int_eq(image1(&p, all + 2, 1, one), TOPOML_OK);
    ck_assert_mem_eq(batch + 48, one, sizeof one);
    /* Offsets need not start at 0. */
    uint64_t off2[] = {2, 3};
    c = make_call();
    ck_assert_int_eq(scalar_image(&c, &p, 1, off2, all, batch), TOPOML_OK);
    ck_assert_mem_eq(batch, one, sizeof one);
    /* No diagrams: nothing to do, nothing written. */
    c = make_call();
    ck_assert_int_eq(scalar_image(&c, &p, 0, NULL, NULL, NULL), TOPOML_OK);
}
END_TEST

START_TEST(test_far_pixels_keep_their_digits)
{
    /* A pixel 9 to 10 sigma from the point: erf would round both edges to
     * 1 and give 0; the true value is about 1e-19 of the mass. */
    topoml_image_params_v1 p = params(9, 10, -5, 5, 1, 1, 1.0);
    topoml_pair pt[] = {P(0, 1)}; /* (0, 1): persistence axis holds ~all */
    double v;
    ck_assert_int_eq(image1(&p, pt, 1, &v), TOPOML_OK);
    double ex = 0.5 * (erfc(9 / sqrt(2.0)) - erfc(10 / sqrt(2.0)));
    double ey = 0.5 * (erf(4 / sqrt(2.0)) + erf(6 / sqrt(2.0)));
    ck_assert(v > 0.0);
    ck_assert_double_eq_tol(v, ex * ey, 1e-12 * ex * ey);
}
END_TEST

START_TEST(test_rejects_bad_parameters)
{
    topoml_pair pt[] = {P(0, 1)};
    double v[4];
    const topoml_image_params_v1 good = params(0, 1, 0, 1, 2, 2, 0.1);
    topoml_image_params_v1 p;
#define BAD(field, value, code, text)                                                              \
    do {                                                                                           \
        p = good;                                                                                  \
        p.field = value;                                                                           \
        ck_assert_int_eq(image1(&p, pt, 1, v), code);                                              \
        ck_assert_msg(strstr(errbuf, text) != NULL, "%s: %s", #field, errbuf);                     \
    } while (0)
    BAD(sigma, 0.0, TOPOML_E_INVALID, "sigma");
    BAD(sigma, -1.0, TOPOML_E_INVALID, "sigma");
    BAD(sigma, NAN, TOPOML_E_INVALID, "sigma");
    BAD(sigma, INFINITY, TOPOML_E_INVALID, "sigma");
    BAD(birth_max, 0.0, TOPOML_E_INVALID, "birth range");
    BAD(birth_min, NAN, TOPOML_E_INVALID, "birth range");
    BAD(pers_max, -1.0, TOPOML_E_INVALID, "persistence range");
    BAD(pers_max, INFINITY, TOPOML_E_INVALID, "persistence range");
    BAD(width, 0, TOPOML_E_INVALID, "birth pixel count");
    BAD(height, 0, TOPOML_E_INVALID, "persistence pixel count");
    BAD(weight, 9, TOPOML_E_INVALID, "unknown weight");
    BAD(infinite, 9, TOPOML_E_INVALID, "infinite");
    BAD(struct_size, 8, TOPOML_E_INVALID, "struct_size");
    p = good;
    p.weight = TOPOML_WEIGHT_LINEAR;
    p.weight_max = 0;
    ck_assert_int_eq(image1(&p, pt, 1, v), TOPOML_E_INVALID);
    p.weight = TOPOML_WEIGHT_POWER;
    p.weight_power = -1;
    ck_assert_int_eq(image1(&p, pt, 1, v), TOPOML_E_INVALID);
    p = good;
    p.infinite = TOPOML_INFINITE_CLIP;
    p.clip_death = INFINITY;
    ck_assert_int_eq(image1(&p, pt, 1, v), TOPOML_E_INVALID);
    /* A range so wide that max - min overflows. */
    p = good;
    p.birth_min = -1e308;
    p.birth_max = 1e308;
    ck_assert_int_eq(image1(&p, pt, 1, v), TOPOML_E_INVALID);
#undef BAD
}
END_TEST

START_TEST(test_rejects_bad_diagrams)
{
    const topoml_image_params_v1 p = params(0, 1, 0, 1, 2, 2, 0.1);
    double v[8];
    topoml_pair nan_b[] = {P(NAN, 1)}, inf_b[] = {P(-INFINITY, 1)}, rev[] = {P(1, 0.5)},
                nan_d[] = {P(0, NAN)};
    ck_assert_int_eq(image1(&p, nan_b, 1, v), TOPOML_E_INVALID);
    ck_assert(strstr(errbuf, "birth") != NULL);
    ck_assert_int_eq(image1(&p, inf_b, 1, v), TOPOML_E_INVALID);
    ck_assert_int_eq(image1(&p, rev, 1, v), TOPOML_E_INVALID);
    ck_assert(strstr(errbuf, "diagram 0, pair 0") != NULL);
    ck_assert_int_eq(image1(&p, nan_d, 1, v), TOPOML_E_INVALID);
    /* A persistence or a weight that overflows would make pixels inf * 0. */
    topoml_pair wide[] = {P(-1e308, 1e308)}, big[] = {P(0, 1e300)};
    ck_assert_int_eq(image1(&p, wide, 1, v), TOPOML_E_INVALID);
    ck_assert(strstr(errbuf, "not representable") != NULL);
    topoml_image_params_v1 pw = p;
    pw.weight = TOPOML_WEIGHT_POWER;
    pw.weight_power = 2;
    ck_assert_int_eq(image1(&pw, big, 1, v), TOPOML_E_INVALID);
    pw.weight_power = 1;
    ck_assert_int_eq(image1(&pw, big, 1, v), TOPOML_OK);
    topoml_pair ok[] = {P(0, 1), P(0, 1)};
    uint64_t off[] = {0, 2, 1};
    topoml_call_v1 c = make_call();
    ck_assert_int_eq(scalar_image(&c, &p, 2, off, ok, v), TOPOML_E_INVALID);
    ck_assert(strstr(errbuf, "offsets") != NULL);
    c = make_call();
    ck_assert_int_eq(scalar_image(&c, &p, 1, NULL, ok, v), TOPOML_E_INVALID);
    ck_assert_int_eq(scalar_image(NULL, &p, 1, off, ok, v), TOPOML_E_INVALID);
    c = make_call();
    ck_assert_int_eq(scalar_image(&c, NULL, 1, off, ok, v), TOPOML_E_INVALID);
}
END_TEST

START_TEST(test_rejects_sizes_that_overflow)
{
    topoml_image_params_v1 p = params(0, 1, 0, 1, 65536, 65536, 0.1);
    uint64_t off[2] = {0, 0};
    double v;
    topoml_call_v1 c = make_call();
    ck_assert_int_eq(scalar_image(&c, &p, UINT64_C(1) << 40, off, NULL, &v), TOPOML_E_OVERFLOW);
    ck_assert(strstr(errbuf, "overflow") != NULL);
}
END_TEST

START_TEST(test_cancel_limit_and_out_of_memory)
{
    topoml_image_params_v1 p = params(0, 1, 0, 1, 100, 100, 0.05);
    enum { N = 400 };
    topoml_pair *pts = malloc(N * sizeof *pts);
    for (int i = 0; i < N; i++)
        pts[i] = P(i / (double)N, 0.5 + i / (double)N);
    double *v = malloc(100 * 100 * sizeof *v);
    uint64_t off[2] = {0, N};
    topoml_call_v1 c = make_call();
    ck_assert_int_eq(scalar_image(&c, &p, 1, off, pts, v), TOPOML_OK);
    ck_assert_int_ge(progress_calls, 2);
    c = make_call();
    cancel_after = 0;
    ck_assert_int_eq(scalar_image(&c, &p, 1, off, pts, v), TOPOML_E_CANCELLED);
    ck_assert(strstr(errbuf, "cancelled") != NULL);
    c = make_call();
    c.max_memory = 64;
    ck_assert_int_eq(scalar_image(&c, &p, 1, off, pts, v), TOPOML_E_LIMIT);
    c = make_call();
    c.alloc = null_alloc;
    ck_assert_int_eq(scalar_image(&c, &p, 1, off, pts, v), TOPOML_E_NOMEM);
    free(pts);
    free(v);
}
END_TEST

START_TEST(test_public_api_checks_and_computes)
{
    topoml_context *ctx;
    topoml_context_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.flags = TOPOML_CTX_NO_ENV | TOPOML_CTX_NO_PLUGINS;
    ck_assert_int_eq(topoml_context_new(&ctx, &o), TOPOML_OK);
    topoml_image_params_v1 p = params(-0.5, 0.5, 0.5, 1.5, 1, 1, 0.5);
    topoml_pair pt[] = {P(0, 1)};
    uint64_t off[] = {0, 1};
    double v;
    ck_assert_int_eq(topoml_persistence_images(ctx, &p, 1, off, pt, &v), TOPOML_OK);
    ck_assert_double_eq_tol(v, 0.68268949213708589717 * 0.68268949213708589717, 1e-15);
    p.sigma = -1;
    ck_assert_int_eq(topoml_persistence_images(ctx, &p, 1, off, pt, &v), TOPOML_E_INVALID);
    ck_assert(strstr(topoml_errmsg(ctx), "sigma must be finite and > 0") != NULL);
    topoml_context_free(ctx);
}
END_TEST

static Suite *image_suite(void)
{
    Suite *s = suite_create("image");
    TCase *t = tcase_create("image");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, test_pixel_of_one_sigma_holds_the_68_percent);
    tcase_add_test(t, test_quadrants_around_a_point_share_its_mass);
    tcase_add_test(t, test_image_sums_to_the_weights);
    tcase_add_test(t, test_rows_are_persistence_and_columns_birth);
    tcase_add_test(t, test_weights_scale_a_point);
    tcase_add_test(t, test_infinite_points_dropped_or_clipped);
    tcase_add_test(t, test_batch_images_are_independent);
    tcase_add_test(t, test_far_pixels_keep_their_digits);
    tcase_add_test(t, test_rejects_bad_parameters);
    tcase_add_test(t, test_rejects_bad_diagrams);
    tcase_add_test(t, test_rejects_sizes_that_overflow);
    tcase_add_test(t, test_cancel_limit_and_out_of_memory);
    tcase_add_test(t, test_public_api_checks_and_computes);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return topoml_check_run(image_suite());
}
