/*
 * image.cu — the persistence image op (topoml_image_params_v1 in plugin.h):
 * each pixel the exact integral of the weighted Gaussians over its
 * rectangle, a product of two error-function differences per point.
 *
 * Same arithmetic as the scalar reference (plugins/scalar/image.c): pixel
 * edges lo + i*step, differences of erfc(|u|) so that pixels far from a
 * point keep their significant digits, per point the coefficient
 * 0.25*w*ey[r] times ex[c] added to the pixel, points in input order. The
 * round-to-nearest intrinsics stop the compiler from contracting to FMA;
 * what differs from the reference is only erfc's last bits (CUDA's erfc is
 * not glibc's), so results agree to a few ulps, not bitwise.
 *
 * Two kernels: factors_kernel writes, per point, ex[c] and 0.25*w*ey[r]
 * (zero rows for points that contribute nothing); pixels_kernel gives each
 * pixel a thread that adds its diagram's points in order. Points are taken
 * in chunks so the factors fit on the device; a pixel continues its sum
 * across chunks, so the order of additions is the same as in one pass.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "backend.h"
/* The scalar reference's scalar_image_check (one definition of valid
 * parameters); a C header without C++ guards. */
extern "C" {
#include "image.h"
}

namespace tmc
{

struct image_geometry {
    double birth_min, db, pers_min, dp, scale;
    uint32_t W, H, weight, infinite;
    double weight_max, weight_power, clip_death;
};

/* erf(u1) - erf(u0) from g = erfc(|u|) at both ends (image.c's
 * erf_differences, one pixel at a time). */
__device__ __forceinline__ double erf_difference(double lo, double step, uint32_t i, double centre,
                                                 double scale)
{
    const double u0 = __dsub_rn(__dadd_rn(lo, __dmul_rn((double)i, step)), centre);
    const double u1 = __dsub_rn(__dadd_rn(lo, __dmul_rn((double)(i + 1), step)), centre);
    const double g0 = erfc(fabs(__dmul_rn(u0, scale)));
    const double g1 = erfc(fabs(__dmul_rn(u1, scale)));
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
            ex[q * g.W + a] = skip ? 0.0 : erf_difference(g.birth_min, g.db, a, b, g.scale);
        } else {
            const uint32_t r = a - g.W;
            double v = 0.0;
            if (!skip) {
                const double e = erf_difference(g.pers_min, g.dp, r, pers, g.scale);
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

static unsigned grid_for(uint64_t work)
{
    uint64_t blocks = (work + 255) / 256;
    return (unsigned)(blocks < 65536 ? (blocks ? blocks : 1) : 65536);
}

} // namespace tmc

using namespace tmc;

extern "C" int tmc_image_schedule(char *out, size_t size)
{
    snprintf(out, size,
             "kernels=factors,pixels threads=256 factors=thread-per-point-and-edge "
             "pixels=thread-per-pixel,points-in-order erf=erfc-differences fma=off "
             "chunk<=256MiB");
    return TOPOML_OK;
}

extern "C" int tmc_image(tmc_ctx *ctx, const topoml_image_params_v1 *p, uint64_t n_diagrams,
                         const uint64_t *offsets, const topoml_pair *pairs, double *out)
{
    if (n_diagrams > 0 && (offsets == NULL || out == NULL))
        return tmc_fail(ctx->call, TOPOML_E_INVALID, "image: no offsets or no output given");
    int status =
        scalar_image_check(p, n_diagrams, offsets, pairs, ctx->call->error, ctx->call->error_size);
    if (status != TOPOML_OK || n_diagrams == 0)
        return status;
    image_geometry g;
    g.W = p->width;
    g.H = p->height;
    g.birth_min = p->birth_min;
    g.pers_min = p->pers_min;
    g.db = (p->birth_max - p->birth_min) / p->width;
    g.dp = (p->pers_max - p->pers_min) / p->height;
    g.scale = 1.0 / (p->sigma * sqrt(2.0));
    g.weight = p->weight;
    g.infinite = p->infinite;
    g.weight_max = p->weight_max;
    g.weight_power = p->weight_power;
    g.clip_death = p->clip_death;

    const uint64_t pixels = (uint64_t)g.W * g.H, total_pairs = offsets[n_diagrams];
    const uint64_t image_bytes = n_diagrams * pixels * sizeof(double);
    const uint64_t fixed =
        image_bytes + (n_diagrams + 1) * sizeof(uint64_t) + total_pairs * sizeof(topoml_pair);
    if ((status = tmc_check_device_memory(ctx, fixed, "persistence images")) != TOPOML_OK)
        return status;
    /* Points per chunk: the factors of a chunk take at most a quarter of
     * what is left, and at most 256 MiB. */
    const uint64_t per_point = ((uint64_t)g.W + g.H) * sizeof(double);
    uint64_t left = tmc_usable_device_memory(ctx);
    left = left > fixed ? (left - fixed) / 4 : 0;
    if (left > (256ull << 20))
        left = 256ull << 20;
    uint64_t chunk = left / per_point;
    if (chunk == 0)
        return tmc_fail(ctx->call, TOPOML_E_LIMIT,
                        "image: one point's %u + %u factors do not fit in device memory", g.W, g.H);
    if (chunk > total_pairs)
        chunk = total_pairs ? total_pairs : 1;

    cudaError_t err;
    double *img = nullptr, *ex = nullptr, *ey = nullptr;
    uint64_t *d_offsets = nullptr;
    topoml_pair *d_pairs = nullptr;
    if ((err = cudaMalloc((void **)&img, image_bytes)) != cudaSuccess)
        status = tmc_cuda_fail(ctx, err, "cudaMalloc(images)");
    else if ((err = cudaMalloc((void **)&d_offsets, (n_diagrams + 1) * sizeof(uint64_t))) !=
             cudaSuccess)
        status = tmc_cuda_fail(ctx, err, "cudaMalloc(offsets)");
    else if ((err = cudaMalloc((void **)&d_pairs, (total_pairs ? total_pairs : 1) *
                                                      sizeof(topoml_pair))) != cudaSuccess)
        status = tmc_cuda_fail(ctx, err, "cudaMalloc(pairs)");
    else if ((err = cudaMalloc((void **)&ex, chunk * g.W * sizeof(double))) != cudaSuccess)
        status = tmc_cuda_fail(ctx, err, "cudaMalloc(birth factors)");
    else if ((err = cudaMalloc((void **)&ey, chunk * g.H * sizeof(double))) != cudaSuccess)
        status = tmc_cuda_fail(ctx, err, "cudaMalloc(persistence factors)");
    TMC_TRY(ctx, status, cudaMemsetAsync(img, 0, image_bytes, ctx->stream),
            "cudaMemsetAsync(images)");
    TMC_TRY(ctx, status,
            cudaMemcpyAsync(d_offsets, offsets, (n_diagrams + 1) * sizeof(uint64_t),
                            cudaMemcpyHostToDevice, ctx->stream),
            "cudaMemcpyAsync(offsets)");
    TMC_TRY(ctx, status,
            cudaMemcpyAsync(d_pairs, pairs, total_pairs * sizeof(topoml_pair),
                            cudaMemcpyHostToDevice, ctx->stream),
            "cudaMemcpyAsync(pairs)");
    /* Points before offsets[0] belong to no diagram. */
    uint64_t k0 = 0;
    for (uint64_t q0 = offsets[0]; q0 < total_pairs && status == TOPOML_OK; q0 += chunk) {
        const uint64_t count = total_pairs - q0 < chunk ? total_pairs - q0 : chunk;
        while (k0 < n_diagrams && offsets[k0 + 1] <= q0)
            k0++;
        uint64_t k1 = k0;
        while (k1 < n_diagrams && offsets[k1] < q0 + count)
            k1++;
        if (k1 == k0)
            continue;
        factors_kernel<<<grid_for(count * (g.W + g.H)), 256, 0, ctx->stream>>>(g, d_pairs, q0,
                                                                               count, ex, ey);
        TMC_TRY(ctx, status, cudaGetLastError(), "factors_kernel launch");
        if (status == TOPOML_OK) {
            pixels_kernel<<<grid_for((k1 - k0) * pixels), 256, 0, ctx->stream>>>(
                g, d_offsets, k0, k1, q0, count, ex, ey, img + k0 * pixels);
            TMC_TRY(ctx, status, cudaGetLastError(), "pixels_kernel launch");
        }
        TMC_TRY(ctx, status, cudaStreamSynchronize(ctx->stream), "persistence image kernels");
        if (status == TOPOML_OK && tmc_cancelled(ctx, "image", q0 + count, total_pairs))
            status = tmc_fail(ctx->call, TOPOML_E_CANCELLED, "image: cancelled");
    }
    TMC_TRY(ctx, status,
            cudaMemcpyAsync(out, img, image_bytes, cudaMemcpyDeviceToHost, ctx->stream),
            "cudaMemcpyAsync(images to host)");
    TMC_ALWAYS(ctx, status, cudaStreamSynchronize(ctx->stream), "image");
    TMC_ALWAYS(ctx, status, cudaFree(img), "cudaFree(images)");
    TMC_ALWAYS(ctx, status, cudaFree(ex), "cudaFree(birth factors)");
    TMC_ALWAYS(ctx, status, cudaFree(ey), "cudaFree(persistence factors)");
    TMC_ALWAYS(ctx, status, cudaFree(d_offsets), "cudaFree(offsets)");
    TMC_ALWAYS(ctx, status, cudaFree(d_pairs), "cudaFree(pairs)");
    return status;
}
