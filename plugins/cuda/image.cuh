/*
 * image.cuh — the device side of the persistence image op (image.cu): the
 * pixel geometry, the error-function differences and the two kernels.
 * factors_kernel writes, per point, ex[c] and 0.25*w*ey[r] (zero rows for
 * points that contribute nothing); pixels_kernel gives each pixel a thread
 * that adds its diagram's points in order. Device code only, so that
 * tests/test_cuda_emulated.cpp can run it on the host.
 */
#ifndef TOPOML_CUDA_IMAGE_CUH
#define TOPOML_CUDA_IMAGE_CUH

#include <math.h>
#include <stdint.h>

#include "backend.h"

namespace tmc
{

struct image_geometry {
    double birth_min, db, pers_min, dp, width; /* width = sigma*sqrt2 */
    uint32_t W, H, weight, infinite;
    double weight_max, weight_power, clip_death;
};

/* erf(u1) - erf(u0) from g = erfc(|u|) at both ends (image.c's
 * erf_differences, one pixel at a time). Divided by the width, as image.c
 * does: the reciprocal of a subnormal sigma overflows. */
__device__ __forceinline__ double erf_difference(double lo, double step, uint32_t i, double centre,
                                                 double width)
{
    const double u0 = __dsub_rn(__dadd_rn(lo, __dmul_rn((double)i, step)), centre);
    const double u1 = __dsub_rn(__dadd_rn(lo, __dmul_rn((double)(i + 1), step)), centre);
    const double g0 = erfc(fabs(__ddiv_rn(u0, width)));
    const double g1 = erfc(fabs(__ddiv_rn(u1, width)));
    if (u0 >= 0.0)
        return __dsub_rn(g0, g1);
    if (u1 <= 0.0)
        return __dsub_rn(g1, g0);
    return __dsub_rn(__dsub_rn(2.0, g0), g1);
}

__device__ __forceinline__ double weight_of(const image_geometry &g, double pers)
{
    if (g.weight == TOPOML_WEIGHT_LINEAR)
        return pers >= g.weight_max ? 1.0 : __ddiv_rn(pers, g.weight_max);
    if (g.weight == TOPOML_WEIGHT_POWER)
        return pow(pers, g.weight_power);
    return 1.0;
}

/* Factors of points [q0, q0 + count): ex (count x W) and ey (count x H),
 * point-major. One thread per (point, column or row). */
__global__ void factors_kernel(image_geometry g, const topoml_pair *__restrict__ pairs, uint64_t q0,
                               uint64_t count, double *__restrict__ ex, double *__restrict__ ey)
{
    const uint64_t per_point = (uint64_t)g.W + g.H;
    for (uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; t < count * per_point;
         t += (uint64_t)gridDim.x * blockDim.x) {
        const uint64_t q = t / per_point;
        const uint32_t a = (uint32_t)(t - q * per_point);
        const double b = pairs[q0 + q].birth;
        double d = pairs[q0 + q].death;
        bool skip = false;
        if (isinf(d)) {
            skip = g.infinite == TOPOML_INFINITE_DROP;
            d = g.clip_death;
        }
        const double pers = __dsub_rn(d, b);
        const double w = skip ? 0.0 : weight_of(g, pers);
        skip = skip || w == 0.0;
        if (a < g.W) {
            ex[q * g.W + a] = skip ? 0.0 : erf_difference(g.birth_min, g.db, a, b, g.width);
        } else {
            const uint32_t r = a - g.W;
            double v = 0.0;
            if (!skip) {
                const double e = erf_difference(g.pers_min, g.dp, r, pers, g.width);
                /* image.c skips rows with ey == 0: a zero factor marks them. */
                v = e == 0.0 ? 0.0 : __dmul_rn(__dmul_rn(0.25, w), e);
            }
            ey[q * g.H + r] = v;
        }
    }
}

/* Pixels of diagrams [k0, k1) gain the points of [q0, q0 + count) that are
 * theirs; `img` holds those diagrams' images, from diagram k0 on. */
__global__ void pixels_kernel(image_geometry g, const uint64_t *__restrict__ offsets, uint64_t k0,
                              uint64_t k1, uint64_t q0, uint64_t count,
                              const double *__restrict__ ex, const double *__restrict__ ey,
                              double *__restrict__ img)
{
    const uint64_t pixels = (uint64_t)g.W * g.H;
    for (uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; t < (k1 - k0) * pixels;
         t += (uint64_t)gridDim.x * blockDim.x) {
        const uint64_t k = k0 + t / pixels, p = t - (t / pixels) * pixels;
        const uint32_t r = (uint32_t)(p / g.W), c = (uint32_t)(p - (uint64_t)r * g.W);
        uint64_t lo = offsets[k], hi = offsets[k + 1];
        lo = lo > q0 ? lo : q0;
        hi = hi < q0 + count ? hi : q0 + count;
        double acc = img[t];
        for (uint64_t q = lo; q < hi; q++) {
            const double cr = ey[(q - q0) * g.H + r];
            if (cr != 0.0)
                acc = __dadd_rn(acc, __dmul_rn(cr, ex[(q - q0) * g.W + c]));
        }
        img[t] = acc;
    }
}

/* The geometry of validated parameters, computed as image.c does. */
static inline image_geometry image_geometry_of(const topoml_image_params_v1 *p)
{
    image_geometry g;
    g.W = p->width;
    g.H = p->height;
    g.birth_min = p->birth_min;
    g.pers_min = p->pers_min;
    g.db = (p->birth_max - p->birth_min) / p->width;
    g.dp = (p->pers_max - p->pers_min) / p->height;
    g.width = p->sigma * sqrt(2.0);
    g.weight = p->weight;
    g.infinite = p->infinite;
    g.weight_max = p->weight_max;
    g.weight_power = p->weight_power;
    g.clip_death = p->clip_death;
    return g;
}

/* The diagrams [*k0, *k1) that own points of [q0, q0 + count). Chunks come
 * in order, so *k0 only moves forward (start it at 0). */
static inline void image_chunk_diagrams(const uint64_t *offsets, uint64_t n_diagrams, uint64_t q0,
                                        uint64_t count, uint64_t *k0, uint64_t *k1)
{
    while (*k0 < n_diagrams && offsets[*k0 + 1] <= q0)
        ++*k0;
    *k1 = *k0;
    while (*k1 < n_diagrams && offsets[*k1] < q0 + count)
        ++*k1;
}

} // namespace tmc

#endif /* TOPOML_CUDA_IMAGE_CUH */
