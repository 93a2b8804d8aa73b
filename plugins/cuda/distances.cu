/*
 * distances.cu — the pairwise distance op: all five metrics, f32 and f64,
 * written in Ripser's condensed lower-triangular order (entry of i > j at
 * i*(i-1)/2 + j).
 *
 * The caller's output lives in host memory and may be larger than the
 * device, so the lower triangle is computed in bands of tile rows: each band
 * is a contiguous stretch of the condensed array. Two device buffers
 * alternate so that the kernel of band b+1 runs while band b is copied out.
 * The per-pair arithmetic is in pairs.cuh.
 */
#include <stdio.h>

#include "backend.h"
#include "pairs.cuh"

namespace tmc
{

/* The kernel for a metric chosen at run time. */
template <typename T, typename O> struct kernels {
    typedef void (*fn)(const T *, const T *, uint64_t, uint64_t, uint64_t, uint64_t, O *);
    static fn get(uint32_t metric)
    {
        switch (metric) {
        case TOPOML_METRIC_EUCLIDEAN: return distances_kernel<T, O, TOPOML_METRIC_EUCLIDEAN>;
        case TOPOML_METRIC_SQEUCLIDEAN: return distances_kernel<T, O, TOPOML_METRIC_SQEUCLIDEAN>;
        case TOPOML_METRIC_MANHATTAN: return distances_kernel<T, O, TOPOML_METRIC_MANHATTAN>;
        case TOPOML_METRIC_CHEBYSHEV: return distances_kernel<T, O, TOPOML_METRIC_CHEBYSHEV>;
        case TOPOML_METRIC_COSINE: return distances_kernel<T, O, TOPOML_METRIC_COSINE>;
        }
        return nullptr;
    }
};

/* Upload the points (and their norms for cosine) to the device. */
template <typename T>
static int upload_points(tmc_ctx *ctx, const topoml_input_v1 *in, T **d_pts, T **d_norms)
{
    cudaError_t err;
    const uint64_t n = in->n, dim = in->dim;
    *d_pts = nullptr;
    *d_norms = nullptr;
    if ((err = cudaMalloc((void **)d_pts, (n * dim != 0 ? n * dim : 1) * sizeof(T))) != cudaSuccess)
        return tmc_cuda_fail(ctx, err, "cudaMalloc(points)");
    if ((err = cudaMemcpyAsync(*d_pts, in->data, n * dim * sizeof(T), cudaMemcpyDefault,
                               ctx->stream)) != cudaSuccess)
        return tmc_cuda_fail(ctx, err, "cudaMemcpyAsync(points)");
    if (in->metric != TOPOML_METRIC_COSINE)
        return TOPOML_OK;
    if ((err = cudaMalloc((void **)d_norms, n * sizeof(T))) != cudaSuccess)
        return tmc_cuda_fail(ctx, err, "cudaMalloc(norms)");
    norms_kernel<T><<<(unsigned)((n + 255) / 256), 256, 0, ctx->stream>>>(*d_pts, n, dim, *d_norms);
    if ((err = cudaGetLastError()) != cudaSuccess)
        return tmc_cuda_fail(ctx, err, "norms_kernel launch");
    return TOPOML_OK;
}

/* Launch the tiles [t0, t1) writing into `out`, whose element 0 is condensed
 * entry `out_base`. Grids are capped so each launch has < 2^31 blocks. */
template <typename T, typename O>
static int launch_tiles(tmc_ctx *ctx, uint32_t metric, const T *pts, const T *norms, uint64_t n,
                        uint64_t dim, uint64_t t0, uint64_t t1, uint64_t out_base, O *out)
{
    typename kernels<T, O>::fn k = kernels<T, O>::get(metric);
    if (!k)
        return tmc_fail(ctx->call, TOPOML_E_INVALID, "unknown metric %u", metric);
    for (uint64_t t = t0; t < t1;) {
        uint64_t blocks = t1 - t < (1ull << 30) ? t1 - t : (1ull << 30);
        k<<<(unsigned)blocks, THREADS, 0, ctx->stream>>>(pts, norms, n, dim, t, out_base, out);
        cudaError_t err = cudaGetLastError();
        if (err != cudaSuccess)
            return tmc_cuda_fail(ctx, err, "distances_kernel launch");
        t += blocks;
    }
    return TOPOML_OK;
}

/* The host-output op: bands of tile rows, double-buffered. */
template <typename T, typename O>
static int distances_to_host(tmc_ctx *ctx, const topoml_input_v1 *in, O *out)
{
    constexpr uint64_t TILE = tile_size<T>();
    const uint64_t n = in->n, dim = in->dim;
    if (n < 2)
        return TOPOML_OK;
    const uint64_t tile_rows = (n + TILE - 1) / TILE;
    /* Largest band: a quarter of the usable memory per buffer, at most
     * 256 MiB (enough to keep the copy engine busy), at least one tile row. */
    const uint64_t points_bytes = n * dim * sizeof(T) + n * sizeof(T);
    int status = tmc_check_device_memory(ctx, points_bytes, "the points");
    if (status != TOPOML_OK)
        return status;
    uint64_t usable = tmc_usable_device_memory(ctx);
    usable = usable > points_bytes ? usable - points_bytes : 0;
    uint64_t band_bytes = usable / 4 < (256ull << 20) ? usable / 4 : (256ull << 20);
    const uint64_t widest_row =
        (tmc_row_start(n) - tmc_row_start(n > TILE ? n - TILE : 0)) * sizeof(O);
    if (band_bytes < widest_row)
        band_bytes = widest_row;
    status = tmc_check_device_memory(ctx, points_bytes + 2 * band_bytes,
                                     "distances (points and two output bands)");
    if (status != TOPOML_OK)
        return status;

    T *d_pts = nullptr, *d_norms = nullptr;
    O *buf[2] = {nullptr, nullptr};
    cudaEvent_t computed[2] = {nullptr, nullptr};
    cudaError_t err;
    status = upload_points<T>(ctx, in, &d_pts, &d_norms);
    for (int b = 0; b < 2 && status == TOPOML_OK; b++) {
        if ((err = cudaMalloc((void **)&buf[b], band_bytes)) != cudaSuccess)
            status = tmc_cuda_fail(ctx, err, "cudaMalloc(output band)");
        else if ((err = cudaEventCreateWithFlags(&computed[b], cudaEventDisableTiming)) !=
                 cudaSuccess)
            status = tmc_cuda_fail(ctx, err, "cudaEventCreate");
    }
    if (status == TOPOML_OK)
        tmc_note_device_use(ctx);
    /* Iteration k launches band k into buf[k % 2], then copies band k-1 out
     * of the other buffer on the copy stream and waits for that copy. So
     * band k's kernel overlaps band k-1's copy, and a buffer is only written
     * again once the copy that read it has finished. */
    const uint64_t total = tmc_row_start(n);
    uint64_t row = 0, pend_first = 0, pend_last = 0;
    int pending = -1, cur = 0;
    while (status == TOPOML_OK && (row < tile_rows || pending >= 0)) {
        int launched = -1;
        uint64_t first = 0, last = 0;
        if (row < tile_rows) {
            const uint64_t end = tmc_band_end(n, TILE, row, band_bytes, sizeof(O));
            first = tmc_row_start(row * TILE);
            last = tmc_row_start(end * TILE < n ? end * TILE : n);
            status = launch_tiles<T, O>(ctx, in->metric, d_pts, d_norms, n, dim,
                                        row * (row + 1) / 2, end * (end + 1) / 2, first, buf[cur]);
            if (status == TOPOML_OK)
                TMC_TRY(ctx, status, cudaEventRecord(computed[cur], ctx->stream),
                        "cudaEventRecord");
            launched = cur;
            row = end;
        }
        if (status == TOPOML_OK && pending >= 0) {
            TMC_TRY(ctx, status, cudaStreamWaitEvent(ctx->copy_stream, computed[pending], 0),
                    "cudaStreamWaitEvent");
            TMC_TRY(ctx, status,
                    cudaMemcpyAsync(out + pend_first, buf[pending],
                                    (pend_last - pend_first) * sizeof(O), cudaMemcpyDeviceToHost,
                                    ctx->copy_stream),
                    "cudaMemcpyAsync(distances to host)");
            TMC_TRY(ctx, status, cudaStreamSynchronize(ctx->copy_stream),
                    "distances (kernel or copy to host)");
            if (status == TOPOML_OK && tmc_cancelled(ctx, "distances", pend_last, total))
                status = tmc_fail(ctx->call, TOPOML_E_CANCELLED,
                                  "cancelled after %llu of %llu distances",
                                  (unsigned long long)pend_last, (unsigned long long)total);
        }
        pending = launched;
        pend_first = first;
        pend_last = last;
        cur ^= 1;
    }
    /* After an error kernels or copies may still be queued: wait for them
     * before freeing what they use. */
    TMC_ALWAYS(ctx, status, cudaStreamSynchronize(ctx->stream), "distances_kernel");
    TMC_ALWAYS(ctx, status, cudaStreamSynchronize(ctx->copy_stream), "copy to host");
    for (int b = 0; b < 2; b++) {
        TMC_ALWAYS(ctx, status, cudaFree(buf[b]), "cudaFree(output band)");
        if (computed[b])
            TMC_ALWAYS(ctx, status, cudaEventDestroy(computed[b]), "cudaEventDestroy");
    }
    TMC_ALWAYS(ctx, status, cudaFree(d_pts), "cudaFree(points)");
    TMC_ALWAYS(ctx, status, cudaFree(d_norms), "cudaFree(norms)");
    return status;
}

} // namespace tmc

using namespace tmc;

extern "C" cudaError_t tmc_kernel_image_check(void)
{
    cudaFuncAttributes a;
    return cudaFuncGetAttributes(&a, distances_kernel<float, float, TOPOML_METRIC_EUCLIDEAN>);
}

extern "C" int tmc_distances_schedule(char *out, size_t size, int with_device)
{
    cudaFuncAttributes f32, f64;
    cudaError_t e1 = cudaErrorNoDevice, e2 = cudaErrorNoDevice;
    if (with_device) {
        e1 = cudaFuncGetAttributes(&f32, distances_kernel<float, float, TOPOML_METRIC_EUCLIDEAN>);
        e2 = cudaFuncGetAttributes(&f64, distances_kernel<double, double, TOPOML_METRIC_EUCLIDEAN>);
    }
    int w = snprintf(out, size,
                     "kernel=tiled-direct threads=%d tile.f32=%dx%d per-thread.f32=%dx%d "
                     "tile.f64=%dx%d per-thread.f64=%dx%d k-stage=%d fma=off output=row-bands "
                     "buffers=2",
                     THREADS, tile_size<float>(), tile_size<float>(), tiling<float>::MT,
                     tiling<float>::MT, tile_size<double>(), tile_size<double>(),
                     tiling<double>::MT, tiling<double>::MT, tiling<float>::KC);
    if (e1 == cudaSuccess && e2 == cudaSuccess && w > 0 && (size_t)w < size)
        snprintf(out + w, size - w, " regs.f32=%d regs.f64=%d smem.f32=%zu smem.f64=%zu",
                 f32.numRegs, f64.numRegs, f32.sharedSizeBytes, f64.sharedSizeBytes);
    return TOPOML_OK;
}

extern "C" int tmc_distances(tmc_ctx *ctx, const topoml_input_v1 *in, void *out)
{
    if (!out && in->n > 1)
        return tmc_fail(ctx->call, TOPOML_E_INVALID, "no output buffer");
    if (!tmc_in_device_range(in))
        return tmc_exact_distances(ctx->call, in, out, in->dtype == TOPOML_F64);
    if (in->dtype == TOPOML_F32)
        return distances_to_host<float, float>(ctx, in, (float *)out);
    return distances_to_host<double, double>(ctx, in, (double *)out);
}

extern "C" int tmc_distances_f64(tmc_ctx *ctx, const topoml_input_v1 *in, double *out)
{
    if (!tmc_in_device_range(in))
        return tmc_exact_distances(ctx->call, in, out, true);
    if (in->dtype == TOPOML_F32)
        return distances_to_host<float, double>(ctx, in, out);
    return distances_to_host<double, double>(ctx, in, out);
}

extern "C" int tmc_distances_device(tmc_ctx *ctx, uint32_t dtype, uint32_t metric, uint64_t n,
                                    uint64_t dim, const void *points, void *out)
{
    if (n < 2)
        return TOPOML_OK;
    cudaError_t err;
    int status = TOPOML_OK;
    void *norms = nullptr;
    const size_t elem = dtype == TOPOML_F32 ? sizeof(float) : sizeof(double);
    if (metric == TOPOML_METRIC_COSINE) {
        if ((err = cudaMalloc(&norms, n * elem)) != cudaSuccess)
            return tmc_cuda_fail(ctx, err, "cudaMalloc(norms)");
        if (dtype == TOPOML_F32)
            norms_kernel<float><<<(unsigned)((n + 255) / 256), 256, 0, ctx->stream>>>(
                (const float *)points, n, dim, (float *)norms);
        else
            norms_kernel<double><<<(unsigned)((n + 255) / 256), 256, 0, ctx->stream>>>(
                (const double *)points, n, dim, (double *)norms);
        if ((err = cudaGetLastError()) != cudaSuccess)
            status = tmc_cuda_fail(ctx, err, "norms_kernel launch");
    }
    if (status == TOPOML_OK) {
        if (dtype == TOPOML_F32) {
            uint64_t tr = (n + tile_size<float>() - 1) / tile_size<float>();
            status =
                launch_tiles<float, float>(ctx, metric, (const float *)points, (const float *)norms,
                                           n, dim, 0, tr * (tr + 1) / 2, 0, (float *)out);
        } else {
            uint64_t tr = (n + tile_size<double>() - 1) / tile_size<double>();
            status = launch_tiles<double, double>(ctx, metric, (const double *)points,
                                                  (const double *)norms, n, dim, 0,
                                                  tr * (tr + 1) / 2, 0, (double *)out);
        }
    }
    TMC_ALWAYS(ctx, status, cudaStreamSynchronize(ctx->stream), "distances_kernel");
    TMC_ALWAYS(ctx, status, cudaFree(norms), "cudaFree(norms)");
    return status;
}
