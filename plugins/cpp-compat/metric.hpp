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

/* Where the plain sums are right, as in the reference (plugins/scalar/
 * metric.h): a sum of squares in [low, max] had no term overflow and lost
 * nothing to underflow that shows; cosine's squared norms in [clo, chi]. */
template <class T> struct fp_range;
template <> struct fp_range<double> {
    static constexpr double low = 0x1p-960, max = 1.7976931348623157e308, clo = 0x1p-500,
                            chi = 0x1p+500;
};
template <> struct fp_range<float> {
    static constexpr float low = 0x1p-100f, max = 3.40282347e38f, clo = 0x1p-50f, chi = 0x1p+50f;
};

/* The reference's accurate path for double: differences scaled by a power
 * of two (halves where a difference overflows), cosine of vectors scaled to
 * a largest coordinate in [1, 2). +inf only for a distance beyond double. */
inline double scaled(topoml_metric metric, const double *x, const double *y, uint64_t dim)
{
    if (metric == TOPOML_METRIC_COSINE) {
        double mx = 0, my = 0;
        for (uint64_t k = 0; k < dim; k++) {
            mx = std::fmax(mx, std::fabs(x[k]));
            my = std::fmax(my, std::fabs(y[k]));
        }
        if (mx == 0 || my == 0)
            return 1;
        const int ex = std::ilogb(mx), ey = std::ilogb(my);
        double acc = 0, xx = 0, yy = 0;
        for (uint64_t k = 0; k < dim; k++) {
            const double a = std::scalbn(x[k], -ex), b = std::scalbn(y[k], -ey);
            acc += a * b;
            xx += a * a;
            yy += b * b;
        }
        acc = 1 - acc / std::sqrt(xx * yy);
        return acc < 0 ? 0 : acc;
    }
    bool half = false;
    for (uint64_t k = 0; k < dim && !half; k++)
        half = std::isinf(x[k] - y[k]);
    double m = 0;
    for (uint64_t k = 0; k < dim; k++)
        m = std::fmax(m, std::fabs(half ? x[k] * 0.5 - y[k] * 0.5 : x[k] - y[k]));
    if (m == 0 || std::isnan(m))
        return m;
    const int e = std::ilogb(m);
    double acc = 0;
    for (uint64_t k = 0; k < dim; k++) {
        const double t = std::scalbn(half ? x[k] * 0.5 - y[k] * 0.5 : x[k] - y[k], -e);
        acc += t * t;
    }
    const int eh = e + (half ? 1 : 0);
    if (metric == TOPOML_METRIC_EUCLIDEAN)
        return std::scalbn(std::sqrt(acc), eh);
    return std::scalbn(acc, 2 * eh);
}

/* For float: in double, where squares of floats cannot overflow or
 * underflow, rounded once. */
inline float scaled(topoml_metric metric, const float *x, const float *y, uint64_t dim)
{
    double acc = 0, xx = 0, yy = 0;
    for (uint64_t k = 0; k < dim; k++) {
        const double a = x[k], b = y[k];
        acc += metric == TOPOML_METRIC_COSINE ? a * b : (a - b) * (a - b);
        xx += a * a;
        yy += b * b;
    }
    if (metric != TOPOML_METRIC_COSINE)
        return float(metric == TOPOML_METRIC_EUCLIDEAN ? std::sqrt(acc) : acc);
    if (xx == 0 || yy == 0)
        return 1;
    acc = 1 - acc / std::sqrt(xx * yy);
    return float(acc < 0 ? 0 : acc);
}

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
        if (!(acc >= fp_range<T>::low && acc <= fp_range<T>::max))
            return scaled(metric, x, y, dim);
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
        if (!(xx >= fp_range<T>::clo && xx <= fp_range<T>::chi && yy >= fp_range<T>::clo &&
              yy <= fp_range<T>::chi))
            return scaled(metric, x, y, dim);
        /* Rounding can take the cosine a hair past 1; distances are never
         * negative. */
        acc = T(1) - acc / std::sqrt(xx * yy);
        return acc < T(0) ? T(0) : acc;
    }
    return NAN;
}

/* Between points of finite coordinates an infinite distance is one beyond
 * the dtype (never an intermediate overflow, see scaled): callers refuse it
 * with TOPOML_E_OVERFLOW rather than treat it as an absent edge. */
template <class T> bool beyond_range(T d)
{
    return std::isinf(d);
}

} // namespace cppcompat

#endif
