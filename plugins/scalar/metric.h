/*
 * metric.h — the distance between two points, one definition per metric and
 * dtype, used by every scalar op that starts from a point cloud (distances,
 * edges, H0, Rips). Header-only so the compiler can inline it into the loops.
 *
 * Summation runs left to right over the coordinates in the point's own
 * precision (float for F32, double for F64); the f32 result is what the
 * conformance suite compares other backends' f32 output with.
 */
#ifndef TOPOML_SCALAR_METRIC_H
#define TOPOML_SCALAR_METRIC_H

#include <float.h>
#include <math.h>
#include <stdint.h>

#include "topoml/types.h"

/* Where the plain sums are right. A sum of squares in [LOW, HIGH] had no
 * term overflow, and whatever its terms lost to underflow (at most the
 * smallest subnormal each) is far below its last bit. Outside, the scaled
 * path below gives the right answer: (1e200, 0) to (-1e200, 0) is 2e200, not
 * inf; (1e-170, 0) and (2e-170, 0) have cosine distance 0, not 1. Everyday
 * data never leave the fast path. */
#define SCALAR_F64_LOW 0x1p-960
#define SCALAR_F32_LOW 0x1p-100f
#define SCALAR_F64_COS_LO 0x1p-500
#define SCALAR_F64_COS_HI 0x1p+500
#define SCALAR_F32_COS_LO 0x1p-50f
#define SCALAR_F32_COS_HI 0x1p+50f

/* The accurate path in double, as hypot does it: differences scaled by a
 * power of two (exact) so their squares neither overflow nor underflow;
 * a cosine from both vectors scaled to a largest coordinate in [1, 2) (the
 * cosine does not change). A difference that overflows is taken of halves.
 * The result is +inf only when the distance itself is beyond double (say
 * sqeuclidean of 1e200 and -1e200); the callers refuse it. */
static inline double scalar_dist_scaled_f64(topoml_metric metric, const double *x,
                                            const double *y, uint64_t dim)
{
    if (metric == TOPOML_METRIC_COSINE) {
        double mx = 0, my = 0;
        for (uint64_t k = 0; k < dim; k++) {
            mx = fmax(mx, fabs(x[k]));
            my = fmax(my, fabs(y[k]));
        }
        if (mx == 0 || my == 0)
            return 1;
        const int ex = ilogb(mx), ey = ilogb(my);
        double acc = 0, xx = 0, yy = 0;
        for (uint64_t k = 0; k < dim; k++) {
            const double a = scalbn(x[k], -ex), b = scalbn(y[k], -ey);
            acc += a * b;
            xx += a * a;
            yy += b * b;
        }
        acc = 1 - acc / sqrt(xx * yy);
        return acc < 0 ? 0 : acc;
    }
    int half = 0;
    for (uint64_t k = 0; k < dim && !half; k++)
        half = isinf(x[k] - y[k]) != 0; /* glibc: -1 for -inf */
    double m = 0;
    for (uint64_t k = 0; k < dim; k++)
        m = fmax(m, fabs(half ? x[k] * 0.5 - y[k] * 0.5 : x[k] - y[k]));
    if (m == 0 || isnan(m))
        return m;
    const int e = ilogb(m);
    double acc = 0;
    for (uint64_t k = 0; k < dim; k++) {
        const double t = scalbn(half ? x[k] * 0.5 - y[k] * 0.5 : x[k] - y[k], -e);
        acc += t * t;
    }
    if (metric == TOPOML_METRIC_EUCLIDEAN)
        return scalbn(sqrt(acc), e + half);
    return scalbn(acc, 2 * (e + half));
}

/* One body for both precisions: T is the element type, SQRT and FABS its
 * functions, so f32 and f64 cannot drift apart. SCALED is the accurate path
 * for sums outside [LOW, HIGH] (cosine: squared norms outside [CLO, CHI]). */
#define SCALAR_DIST_BODY(T, SQRT, FABS, LOW, HIGH, CLO, CHI, SCALED)                       \
    T acc = 0, xx = 0, yy = 0;                                                             \
    switch (metric) {                                                                      \
    case TOPOML_METRIC_EUCLIDEAN:                                                          \
    case TOPOML_METRIC_SQEUCLIDEAN:                                                        \
        for (uint64_t k = 0; k < dim; k++) {                                               \
            T t = x[k] - y[k];                                                             \
            acc += t * t;                                                                  \
        }                                                                                  \
        if (!(acc >= LOW && acc <= HIGH))                                                  \
            return SCALED;                                                                 \
        return metric == TOPOML_METRIC_EUCLIDEAN ? SQRT(acc) : acc;                        \
    case TOPOML_METRIC_MANHATTAN:                                                          \
        for (uint64_t k = 0; k < dim; k++)                                                 \
            acc += FABS(x[k] - y[k]);                                                      \
        return acc;                                                                        \
    case TOPOML_METRIC_CHEBYSHEV:                                                          \
        for (uint64_t k = 0; k < dim; k++) {                                               \
            T t = FABS(x[k] - y[k]);                                                       \
            if (t > acc)                                                                   \
                acc = t;                                                                   \
        }                                                                                  \
        return acc;                                                                        \
    case TOPOML_METRIC_COSINE:                                                             \
        for (uint64_t k = 0; k < dim; k++) {                                               \
            acc += x[k] * y[k];                                                            \
            xx += x[k] * x[k];                                                             \
            yy += y[k] * y[k];                                                             \
        }                                                                                  \
        if (!(xx >= CLO && xx <= CHI && yy >= CLO && yy <= CHI))                           \
            return SCALED;                                                                 \
        /* Rounding can push the cosine a hair past 1; a distance is never negative. */   \
        acc = 1 - acc / SQRT(xx * yy);                                                     \
        return acc < 0 ? 0 : acc;                                                          \
    }                                                                                      \
    return NAN

/* The accurate path for float: in double, where squares of floats neither
 * overflow nor underflow, rounded to float once at the end. */
static inline float scalar_dist_widened_f32(topoml_metric metric, const float *x, const float *y,
                                            uint64_t dim)
{
    double acc = 0, xx = 0, yy = 0;
    for (uint64_t k = 0; k < dim; k++) {
        const double a = x[k], b = y[k];
        acc += metric == TOPOML_METRIC_COSINE ? a * b : (a - b) * (a - b);
        xx += a * a;
        yy += b * b;
    }
    if (metric != TOPOML_METRIC_COSINE)
        return (float)(metric == TOPOML_METRIC_EUCLIDEAN ? sqrt(acc) : acc);
    if (xx == 0 || yy == 0)
        return 1;
    acc = 1 - acc / sqrt(xx * yy);
    return (float)(acc < 0 ? 0 : acc);
}

static inline double scalar_dist_f64(topoml_metric metric, const double *x, const double *y,
                                     uint64_t dim)
{
    SCALAR_DIST_BODY(double, sqrt, fabs, SCALAR_F64_LOW, DBL_MAX, SCALAR_F64_COS_LO,
                     SCALAR_F64_COS_HI, scalar_dist_scaled_f64(metric, x, y, dim));
}

static inline float scalar_dist_f32(topoml_metric metric, const float *x, const float *y,
                                    uint64_t dim)
{
    SCALAR_DIST_BODY(float, sqrtf, fabsf, SCALAR_F32_LOW, FLT_MAX, SCALAR_F32_COS_LO,
                     SCALAR_F32_COS_HI, scalar_dist_widened_f32(metric, x, y, dim));
}

#undef SCALAR_DIST_BODY

/* Distance between points i and j of a POINTS input of either dtype, widened
 * to double. */
static inline double scalar_point_dist(uint32_t dtype, topoml_metric metric, const void *data,
                                       uint64_t dim, uint64_t i, uint64_t j)
{
    if (dtype == TOPOML_F32) {
        const float *p = (const float *)data;
        return (double)scalar_dist_f32(metric, p + i * dim, p + j * dim, dim);
    }
    const double *p = (const double *)data;
    return scalar_dist_f64(metric, p + i * dim, p + j * dim, dim);
}

#endif /* TOPOML_SCALAR_METRIC_H */
