/*
 * metric.hpp — the five metrics for float and double coordinates.
 *
 * The results must equal the scalar reference's bit for bit (the conformance
 * suite compares f32 distances with a tight ulp bound), so the arithmetic is
 * the reference's: summation left to right in the coordinates' own precision,
 * the same operations in the same order, no fused multiply-add (this file's
 * translation units are built with -ffp-contract=off).
 */
#ifndef TOPOML_CPP_COMPAT_METRIC_HPP
#define TOPOML_CPP_COMPAT_METRIC_HPP

#include <cmath>
#include <cstdint>

#include "topoml/types.h"

namespace cppcompat
{

template <class T> T distance(topoml_metric metric, const T *x, const T *y, uint64_t dim)
{
    T acc = 0, xx = 0, yy = 0;
    switch (metric) {
    case TOPOML_METRIC_EUCLIDEAN:
    case TOPOML_METRIC_SQEUCLIDEAN:
        for (uint64_t k = 0; k < dim; k++) {
            T t = x[k] - y[k];
            acc += t * t;
        }
        return metric == TOPOML_METRIC_EUCLIDEAN ? std::sqrt(acc) : acc;
    case TOPOML_METRIC_MANHATTAN:
        for (uint64_t k = 0; k < dim; k++)
            acc += std::fabs(x[k] - y[k]);
        return acc;
    case TOPOML_METRIC_CHEBYSHEV:
        for (uint64_t k = 0; k < dim; k++) {
            T t = std::fabs(x[k] - y[k]);
            if (t > acc)
                acc = t;
        }
        return acc;
    case TOPOML_METRIC_COSINE:
        for (uint64_t k = 0; k < dim; k++) {
            acc += x[k] * y[k];
            xx += x[k] * x[k];
            yy += y[k] * y[k];
        }
        if (xx == T(0) || yy == T(0))
            return T(1);
        /* Rounding can take the cosine a hair past 1; distances are never
         * negative. */
        acc = T(1) - acc / std::sqrt(xx * yy);
        return acc < T(0) ? T(0) : acc;
    }
    return NAN;
}

} // namespace cppcompat

#endif
