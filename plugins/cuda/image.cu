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
 * The two kernels are in image.cuh. Points are taken in chunks so that
 * their factors fit on the device; a pixel continues its sum across chunks,
 * so the order of additions is the same as in one pass.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "backend.h"
#include "image.cuh"
/* The scalar reference's scalar_image_check (one definition of valid
 * parameters); a C header without C++ guards. */
extern "C" {
#include "image.h"
}

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
    const image_geometry g = image_geometry_of(p);

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
        uint64_t k1;
        image_chunk_diagrams(offsets, n_diagrams, q0, count, &k0, &k1);
        if (k1 == k0)
            continue;
        factors_kernel<<<tmc_grid_for(count * (g.W + g.H)), 256, 0, ctx->stream>>>(g, d_pairs, q0,
                                                                               count, ex, ey);
        TMC_TRY(ctx, status, cudaGetLastError(), "factors_kernel launch");
        if (status == TOPOML_OK) {
            pixels_kernel<<<tmc_grid_for((k1 - k0) * pixels), 256, 0, ctx->stream>>>(
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
