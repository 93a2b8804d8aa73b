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

#include <math.h>
#include <stdint.h>

#include "topoml/types.h"

/* One body for both precisions: T is the element type, SQRT and FABS its
 * functions, so f32 and f64 cannot drift apart. */
#define SCALAR_DIST_BODY(T, SQRT, FABS)                                                    \
    T acc = 0, xx = 0, yy = 0;                                                             \
    switch (metric) {                                                                      \
    case TOPOML_METRIC_EUCLIDEAN:                                                          \
    case TOPOML_METRIC_SQEUCLIDEAN:                                                        \
        for (uint64_t k = 0; k < dim; k++) {                                               \
            T t = x[k] - y[k];                                                             \
            acc += t * t;                                                                  \
        }                                                                                  \
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
        if (xx == 0 || yy == 0)                                                            \
            return 1;                                                                      \
        /* Rounding can push the cosine a hair past 1; a distance is never negative. */   \
        acc = 1 - acc / SQRT(xx * yy);                                                     \
        return acc < 0 ? 0 : acc;                                                          \
    }                                                                                      \
    return NAN

static inline double scalar_dist_f64(topoml_metric metric, const double *x, const double *y,
                                     uint64_t dim)
{
    SCALAR_DIST_BODY(double, sqrt, fabs);
}

static inline float scalar_dist_f32(topoml_metric metric, const float *x, const float *y,
                                    uint64_t dim)
{
    SCALAR_DIST_BODY(float, sqrtf, fabsf);
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
