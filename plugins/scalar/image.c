/*
 * image.c — persistence images (Adams et al., "Persistence Images: A Stable
 * Vector Representation of Persistent Homology", JMLR 18, 2017), the scalar
 * reference of the `image` op.
 *
 * Each point (b, d) of a diagram becomes (b, p = d - b) and contributes w(p)
 * times an isotropic Gaussian of standard deviation sigma centred there. A
 * pixel is the exact integral of that sum over the pixel's rectangle, which
 * factorises because the Gaussian is a product of two one-dimensional ones:
 *
 *   pixel(r, c) = sum over points of  w * 1/4 * Ex[c] * Ey[r],
 *   Ex[c] = erf((x_{c+1} - b)/(sigma*sqrt2)) - erf((x_c - b)/(sigma*sqrt2)),
 *   Ey[r] likewise in persistence.
 *
 * So a point costs W+1 + H+1 error-function calls and a W*H outer product,
 * not W*H two-dimensional integrals.
 *
 * What this file is not: it does not choose the parameters (the caller, or
 * the `topoml image` command, does) and it does not know about dimensions.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "image.h"

/* Report progress after roughly this many pixel updates, which is a few
 * hundred times a second, as the call contract asks. */
#define PROGRESS_WORK (1u << 20)

static int fail(char *error, size_t error_size, int status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail(char *error, size_t error_size, int status, const char *fmt, ...)
{
    if (error != NULL && error_size > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(error, error_size, fmt, ap);
        va_end(ap);
    }
    return status;
}

static int check_range(const char *name, double lo, double hi, uint32_t n, char *error,
                       size_t error_size)
{
    if (!isfinite(lo) || !isfinite(hi) || !(lo < hi))
        return fail(error, error_size, TOPOML_E_INVALID,
                    "image: %s range [%g, %g] must be finite with min < max", name, lo, hi);
    if (n < 1)
        return fail(error, error_size, TOPOML_E_INVALID, "image: %s pixel count must be >= 1",
                    name);
    /* A range so wide that max - min overflows, or so narrow that the step
     * underflows, would give pixels of infinite or zero size. */
    double step = (hi - lo) / n;
    if (!isfinite(step) || !(step > 0.0))
        return fail(error, error_size, TOPOML_E_INVALID,
                    "image: %s range [%g, %g] over %u pixels gives a pixel size of %g", name, lo,
                    hi, n, step);
    return TOPOML_OK;
}

static double weight_of(const topoml_image_params_v1 *p, double pers)
{
    switch (p->weight) {
    case TOPOML_WEIGHT_LINEAR: return pers >= p->weight_max ? 1.0 : pers / p->weight_max;
    case TOPOML_WEIGHT_POWER: return pow(pers, p->weight_power);
    default: return 1.0;
    }
}

int scalar_image_check(const topoml_image_params_v1 *params, uint64_t n_diagrams,
                       const uint64_t *offsets, const topoml_pair *pairs, char *error,
                       size_t error_size)
{
    const topoml_image_params_v1 *p = params;
    int st;

    if (p == NULL)
        return fail(error, error_size, TOPOML_E_INVALID, "image: no parameters given");
    if (p->struct_size < TOPOML_IMAGE_PARAMS_V1_MIN_SIZE)
        return fail(error, error_size, TOPOML_E_INVALID,
                    "image: params struct_size %u is smaller than topoml_image_params_v1 (%zu)",
                    p->struct_size, (size_t)TOPOML_IMAGE_PARAMS_V1_MIN_SIZE);

    switch (p->weight) {
    case TOPOML_WEIGHT_CONSTANT: break;
    case TOPOML_WEIGHT_LINEAR:
        if (!isfinite(p->weight_max) || !(p->weight_max > 0.0))
            return fail(error, error_size, TOPOML_E_INVALID,
                        "image: linear weight needs weight_max > 0, got %g", p->weight_max);
        break;
    case TOPOML_WEIGHT_POWER:
        if (!isfinite(p->weight_power) || !(p->weight_power >= 0.0))
            return fail(error, error_size, TOPOML_E_INVALID,
                        "image: power weight needs a finite weight_power >= 0, got %g",
                        p->weight_power);
        break;
    default:
        return fail(error, error_size, TOPOML_E_INVALID, "image: unknown weight %u", p->weight);
    }

    if (!isfinite(p->sigma) || !(p->sigma > 0.0))
        return fail(error, error_size, TOPOML_E_INVALID,
                    "image: sigma must be finite and > 0, got %g", p->sigma);
    if ((st = check_range("birth", p->birth_min, p->birth_max, p->width, error, error_size)))
        return st;
    if ((st = check_range("persistence", p->pers_min, p->pers_max, p->height, error, error_size)))
        return st;

    switch (p->infinite) {
    case TOPOML_INFINITE_DROP: break;
    case TOPOML_INFINITE_CLIP:
        if (!isfinite(p->clip_death))
            return fail(error, error_size, TOPOML_E_INVALID,
                        "image: clip_death must be finite, got %g", p->clip_death);
        break;
    default:
        return fail(error, error_size, TOPOML_E_INVALID,
                    "image: unknown treatment of infinite points %u", p->infinite);
    }

    uint64_t pixels, total, bytes;
    if (__builtin_mul_overflow((uint64_t)p->width, (uint64_t)p->height, &pixels) ||
        __builtin_mul_overflow(pixels, n_diagrams, &total) ||
        __builtin_mul_overflow(total, (uint64_t)sizeof(double), &bytes) || bytes > SIZE_MAX)
        return fail(error, error_size, TOPOML_E_OVERFLOW,
                    "image: %llu images of %u x %u pixels overflow the size type",
                    (unsigned long long)n_diagrams, p->width, p->height);

    if (offsets == NULL)
        return n_diagrams == 0 || pairs == NULL
                   ? TOPOML_OK
                   : fail(error, error_size, TOPOML_E_INVALID, "image: no offsets given");
    for (uint64_t k = 0; k < n_diagrams; k++) {
        if (offsets[k + 1] < offsets[k])
            return fail(error, error_size, TOPOML_E_INVALID,
                        "image: offsets[%llu] = %llu is smaller than offsets[%llu] = %llu",
                        (unsigned long long)(k + 1), (unsigned long long)offsets[k + 1],
                        (unsigned long long)k, (unsigned long long)offsets[k]);
    }
    if (n_diagrams > 0 && offsets[n_diagrams] > offsets[0] && pairs == NULL)
        return fail(error, error_size, TOPOML_E_INVALID, "image: no pairs given");

    for (uint64_t k = 0; k < n_diagrams; k++) {
        for (uint64_t i = offsets[k]; i < offsets[k + 1]; i++) {
            double b = pairs[i].birth, d = pairs[i].death;
            if (!isfinite(b))
                return fail(error, error_size, TOPOML_E_INVALID,
                            "image: diagram %llu, pair %llu: birth %g is not finite",
                            (unsigned long long)k, (unsigned long long)(i - offsets[k]), b);
            if (isnan(d) || d < b)
                return fail(error, error_size, TOPOML_E_INVALID,
                            "image: diagram %llu, pair %llu: death %g is not >= birth %g",
                            (unsigned long long)k, (unsigned long long)(i - offsets[k]), d, b);
            if (isinf(d) && p->infinite == TOPOML_INFINITE_CLIP && p->clip_death < b)
                return fail(error, error_size, TOPOML_E_INVALID,
                            "image: diagram %llu, pair %llu: clip_death %g is below birth %g",
                            (unsigned long long)k, (unsigned long long)(i - offsets[k]),
                            p->clip_death, b);
            if (isinf(d) && p->infinite == TOPOML_INFINITE_DROP)
                continue;
            /* Values near the largest double can make the persistence or
             * its weight overflow; a pixel would then be inf * 0. */
            double pers = (isinf(d) ? p->clip_death : d) - b;
            double w = weight_of(p, pers);
            if (!isfinite(pers) || !isfinite(w))
                return fail(error, error_size, TOPOML_E_INVALID,
                            "image: diagram %llu, pair %llu: persistence %g (weight %g) is "
                            "not representable",
                            (unsigned long long)k, (unsigned long long)(i - offsets[k]), pers, w);
        }
    }
    return TOPOML_OK;
}

/* diff[i] = erf(u[i+1]) - erf(u[i]) for the n+1 pixel edges
 * lo + i*step, i = 0..n, with u = (edge - centre) / (sigma*sqrt2).
 *
 * Far from the centre both erf values are close to +-1 and their difference
 * would lose every significant digit; erfc(|u|) keeps them. With
 * g = erfc(|u|): on the right of the centre erf(u) = 1 - g, on the left
 * erf(u) = g - 1, so each difference is a difference (or, across the centre,
 * a sum) of small accurate numbers. `g` holds n+1 values of scratch. */
static void erf_differences(double lo, double step, uint32_t n, double centre, double width,
                            double *g, double *diff)
{
    /* Divided by width = sigma*sqrt2, not multiplied by its reciprocal: for
     * a subnormal sigma the reciprocal overflows (and inf * 0 is NaN), the
     * quotient does not. */
    for (uint32_t i = 0; i <= n; i++)
        g[i] = erfc(fabs((lo + i * step - centre) / width));
    for (uint32_t i = 0; i < n; i++) {
        double u0 = lo + i * step - centre, u1 = lo + (i + 1) * step - centre;
        if (u0 >= 0.0)
            diff[i] = g[i] - g[i + 1];
        else if (u1 <= 0.0)
            diff[i] = g[i + 1] - g[i];
        else
            diff[i] = 2.0 - g[i] - g[i + 1];
    }
}

int scalar_image(const topoml_call_v1 *call, const topoml_image_params_v1 *params,
                 uint64_t n_diagrams, const uint64_t *offsets, const topoml_pair *pairs,
                 double *out)
{
    char *error = call != NULL ? call->error : NULL;
    size_t error_size = call != NULL ? call->error_size : 0;
    if (call == NULL)
        return TOPOML_E_INVALID;
    if (n_diagrams > 0 && (offsets == NULL || out == NULL))
        return fail(error, error_size, TOPOML_E_INVALID, "image: no offsets or no output given");
    int st = scalar_image_check(params, n_diagrams, offsets, pairs, error, error_size);
    if (st != TOPOML_OK || n_diagrams == 0)
        return st;

    const topoml_image_params_v1 *p = params;
    const uint32_t W = p->width, H = p->height;
    const size_t pixels = (size_t)W * H;
    const double db = (p->birth_max - p->birth_min) / W;
    const double dp = (p->pers_max - p->pers_min) / H;
    const double width = p->sigma * sqrt(2.0);

    /* Scratch: edge values and differences for both axes. */
    const size_t n_scratch = 2 * ((size_t)W + 1) + 2 * ((size_t)H + 1);
    const size_t scratch_bytes = n_scratch * sizeof(double);
    if (call->max_memory != 0 && scratch_bytes > call->max_memory)
        return fail(error, error_size, TOPOML_E_LIMIT,
                    "image: %zu bytes of scratch exceed the memory limit of %llu bytes",
                    scratch_bytes, (unsigned long long)call->max_memory);
    double *scratch =
        call->alloc != NULL ? call->alloc(call->host_data, scratch_bytes) : malloc(scratch_bytes);
    if (scratch == NULL)
        return fail(error, error_size, TOPOML_E_NOMEM, "image: out of memory (%zu bytes)",
                    scratch_bytes);
    double *gx = scratch, *ex = gx + W + 1, *gy = ex + W + 1, *ey = gy + H + 1;

    const uint64_t total = offsets[n_diagrams] - offsets[0];
    uint64_t done = 0, work = 0;
    st = TOPOML_OK;
    memset(out, 0, pixels * n_diagrams * sizeof(double));

    for (uint64_t k = 0; k < n_diagrams && st == TOPOML_OK; k++) {
        double *img = out + k * pixels;
        for (uint64_t i = offsets[k]; i < offsets[k + 1]; i++, done++) {
            double b = pairs[i].birth, d = pairs[i].death;
            if (isinf(d)) {
                if (p->infinite == TOPOML_INFINITE_DROP)
                    continue;
                d = p->clip_death;
            }
            double pers = d - b;
            double w = weight_of(p, pers);
            if (w == 0.0)
                continue;
            erf_differences(p->birth_min, db, W, b, width, gx, ex);
            erf_differences(p->pers_min, dp, H, pers, width, gy, ey);
            double coef = 0.25 * w;
            for (uint32_t r = 0; r < H; r++) {
                /* Rows many sigmas away from the point get exactly zero. */
                if (ey[r] == 0.0)
                    continue;
                double cr = coef * ey[r];
                double *row = img + (size_t)r * W;
                for (uint32_t c = 0; c < W; c++)
                    row[c] += cr * ex[c];
            }
            work += pixels + W + H;
            if (work >= PROGRESS_WORK && call->progress != NULL) {
                work = 0;
                if (call->progress(call->host_data, "image", done + 1, total)) {
                    st = fail(error, error_size, TOPOML_E_CANCELLED, "image: cancelled");
                    break;
                }
            }
        }
    }
    if (st == TOPOML_OK && call->progress != NULL)
        call->progress(call->host_data, "image", total, total);

    if (call->alloc != NULL)
        call->free(call->host_data, scratch);
    else
        free(scratch);
    return st;
}
