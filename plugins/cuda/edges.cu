/*
 * edges.cu — the threshold-edges op: every pair i < j with d(i,j) <=
 * threshold, sorted by (d, i, j).
 *
 * Points: the distances are computed and filtered on the device in one
 * fused kernel (pairs.cuh's tiles), run twice — once to count, once to emit
 * into an array of exactly that size — so no distance matrix is ever stored
 * and the memory check sees the true size before allocating it. Condensed
 * and sparse inputs are filtered on the host (one pass over data already in
 * memory) straight into the output array, which is then uploaded.
 *
 * Sorting: an edge is a key (the bits of d as a double; for d >= 0 these
 * order like d) and a value (the pair packed as i*n + j, which orders like
 * (i, j)). CUB's radix sort is stable, so sorting by the packed pair and then
 * by d gives (d, i, j) order — a total order, so the result does not depend
 * on the order in which the emit kernel's atomics handed out slots.
 */
#include <math.h>
#include <string.h>

#include <cub/device/device_radix_sort.cuh>

#include "backend.h"
#include "pairs.cuh"

namespace tmc
{

template <typename T, bool EMIT> struct edge_kernels {
    typedef void (*fn)(const T *, const T *, uint64_t, uint64_t, uint64_t, double,
                       unsigned long long *, unsigned long long *, uint64_t *, uint64_t *,
                       uint64_t);
    static fn get(uint32_t metric)
    {
        switch (metric) {
        case TOPOML_METRIC_EUCLIDEAN: return edges_kernel<T, TOPOML_METRIC_EUCLIDEAN, EMIT>;
        case TOPOML_METRIC_SQEUCLIDEAN: return edges_kernel<T, TOPOML_METRIC_SQEUCLIDEAN, EMIT>;
        case TOPOML_METRIC_MANHATTAN: return edges_kernel<T, TOPOML_METRIC_MANHATTAN, EMIT>;
        case TOPOML_METRIC_CHEBYSHEV: return edges_kernel<T, TOPOML_METRIC_CHEBYSHEV, EMIT>;
        case TOPOML_METRIC_COSINE: return edges_kernel<T, TOPOML_METRIC_COSINE, EMIT>;
        }
        return nullptr;
    }
};

/* Host edges (uploaded) into keys and packed pairs. */
__global__ void split_edges_kernel(const topoml_edge *__restrict__ e, uint64_t m, uint64_t n,
                                   uint64_t *__restrict__ keys, uint64_t *__restrict__ vals)
{
    for (uint64_t k = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; k < m;
         k += (uint64_t)gridDim.x * blockDim.x) {
        keys[k] = dist_key(e[k].d);
        vals[k] = (uint64_t)e[k].i * n + e[k].j;
    }
}

/* Sorted keys and packed pairs back into topoml_edge. */
__global__ void assemble_edges_kernel(const uint64_t *__restrict__ keys,
                                      const uint64_t *__restrict__ vals, uint64_t m, uint64_t n,
                                      topoml_edge *__restrict__ out)
{
    for (uint64_t k = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; k < m;
         k += (uint64_t)gridDim.x * blockDim.x) {
        topoml_edge e;
        e.d = __longlong_as_double((long long)keys[k]);
        e.i = (uint32_t)(vals[k] / n);
        e.j = (uint32_t)(vals[k] % n);
        out[k] = e;
    }
}

static int bits_for(uint64_t x)
{
    return x ? 64 - __builtin_clzll(x) : 1;
}

/* The device side of the op. `work` holds 4*m uint64: keys and values in its
 * first half on entry (front), the second half is the sort's other buffer.
 * Sorts, assembles topoml_edge into whichever half is free, copies to host. */
static int sort_and_download(tmc_ctx *ctx, uint64_t *work, uint64_t m, uint64_t n,
                             int key_begin_bit, topoml_edge *host_out)
{
    cudaError_t err;
    int status = TOPOML_OK;
    cub::DoubleBuffer<uint64_t> keys(work, work + 2 * m), vals(work + m, work + 3 * m);
    const int pair_bits = bits_for(n * n - 1);
    size_t bytes_a = 0, bytes_b = 0;
    err =
        cub::DeviceRadixSort::SortPairs(nullptr, bytes_a, vals, keys, m, 0, pair_bits, ctx->stream);
    if (err == cudaSuccess)
        err = cub::DeviceRadixSort::SortPairs(nullptr, bytes_b, keys, vals, m, key_begin_bit, 63,
                                              ctx->stream);
    if (err != cudaSuccess)
        return tmc_cuda_fail(ctx, err, "cub::DeviceRadixSort (temporary storage size)");
    size_t bytes = bytes_a > bytes_b ? bytes_a : bytes_b;
    if ((status = tmc_check_device_memory(ctx, bytes, "radix sort scratch")) != TOPOML_OK)
        return status;
    void *scratch = nullptr;
    if ((err = cudaMalloc(&scratch, bytes)) != cudaSuccess)
        return tmc_cuda_fail(ctx, err, "cudaMalloc(radix sort scratch)");
    tmc_note_device_use(ctx);
    /* (i, j) order first, then a stable sort by d (bit 63, the sign, is 0). */
    err = cub::DeviceRadixSort::SortPairs(scratch, bytes, vals, keys, m, 0, pair_bits, ctx->stream);
    if (err == cudaSuccess)
        err = cub::DeviceRadixSort::SortPairs(scratch, bytes, keys, vals, m, key_begin_bit, 63,
                                              ctx->stream);
    if (err != cudaSuccess)
        status = tmc_cuda_fail(ctx, err, "cub::DeviceRadixSort::SortPairs");
    /* CUB flips the selectors of keys and values together, so the sorted
     * pair sits in one half of `work` and the other half is free. */
    if (status == TOPOML_OK && keys.selector != vals.selector)
        status = tmc_fail(ctx->call, TOPOML_E_INTERNAL,
                          "radix sort left keys and values in different buffers");
    if (status == TOPOML_OK) {
        topoml_edge *edges = (topoml_edge *)(keys.selector ? work : work + 2 * m);
        assemble_edges_kernel<<<tmc_grid_for(m), 256, 0, ctx->stream>>>(keys.Current(), vals.Current(),
                                                                    m, n, edges);
        TMC_TRY(ctx, status, cudaGetLastError(), "assemble_edges_kernel launch");
        TMC_TRY(ctx, status,
                cudaMemcpyAsync(host_out, edges, m * sizeof(topoml_edge), cudaMemcpyDeviceToHost,
                                ctx->stream),
                "cudaMemcpyAsync(edges to host)");
    }
    TMC_ALWAYS(ctx, status, cudaStreamSynchronize(ctx->stream), "edge sort");
    TMC_ALWAYS(ctx, status, cudaFree(scratch), "cudaFree(radix sort scratch)");
    return status;
}

/* Check the device memory for m edges (4 uint64 each), then allocate it. */
static int alloc_work(tmc_ctx *ctx, uint64_t m, uint64_t already, uint64_t **work)
{
    *work = nullptr;
    if (m > (UINT64_MAX - already) / 64)
        return tmc_fail(ctx->call, TOPOML_E_LIMIT, "%llu edges: too many to sort",
                        (unsigned long long)m);
    int status = tmc_check_device_memory(ctx, already + 32 * m + (64ull << 20),
                                         "sorting the edges (32 bytes per edge)");
    if (status != TOPOML_OK)
        return status;
    cudaError_t err = cudaMalloc((void **)work, 32 * (m ? m : 1));
    return err == cudaSuccess ? TOPOML_OK : tmc_cuda_fail(ctx, err, "cudaMalloc(edges)");
}

template <typename T>
static int edges_from_points(tmc_ctx *ctx, const topoml_input_v1 *in, double threshold,
                             topoml_edge **out, uint64_t *n_out)
{
    const uint64_t n = in->n, dim = in->dim;
    constexpr uint64_t TILE = tile_size<T>();
    const uint64_t rows = (n + TILE - 1) / TILE, tiles = rows * (rows + 1) / 2;
    const uint64_t points_bytes = (n * dim + n) * sizeof(T);
    int status = tmc_check_device_memory(ctx, points_bytes, "the points");
    if (status != TOPOML_OK)
        return status;
    typename edge_kernels<T, false>::fn count_k = edge_kernels<T, false>::get(in->metric);
    typename edge_kernels<T, true>::fn emit_k = edge_kernels<T, true>::get(in->metric);
    if (!count_k || !emit_k)
        return tmc_fail(ctx->call, TOPOML_E_INVALID, "unknown metric %u", in->metric);

    cudaError_t err;
    T *pts = nullptr, *norms = nullptr;
    unsigned long long *counters = nullptr; /* [0] count, [1] bad pair */
    unsigned long long host_counters[2] = {0, ~0ull};
    uint64_t *work = nullptr, m = 0;
    topoml_edge *edges = nullptr;

    if ((err = cudaMalloc((void **)&pts, (n * dim != 0 ? n * dim : 1) * sizeof(T))) != cudaSuccess)
        status = tmc_cuda_fail(ctx, err, "cudaMalloc(points)");
    else if ((err = cudaMalloc((void **)&norms, n * sizeof(T))) != cudaSuccess)
        status = tmc_cuda_fail(ctx, err, "cudaMalloc(norms)");
    else if ((err = cudaMalloc((void **)&counters, sizeof host_counters)) != cudaSuccess)
        status = tmc_cuda_fail(ctx, err, "cudaMalloc(counters)");
    TMC_TRY(
        ctx, status,
        cudaMemcpyAsync(pts, in->data, n * dim * sizeof(T), cudaMemcpyDefault, ctx->stream),
        "cudaMemcpyAsync(points)");
    TMC_TRY(ctx, status,
            cudaMemcpyAsync(counters, host_counters, sizeof host_counters, cudaMemcpyHostToDevice,
                            ctx->stream),
            "cudaMemcpyAsync(counters)");
    if (status == TOPOML_OK && in->metric == TOPOML_METRIC_COSINE) {
        norms_kernel<T><<<(unsigned)((n + 255) / 256), 256, 0, ctx->stream>>>(pts, n, dim, norms);
        TMC_TRY(ctx, status, cudaGetLastError(), "norms_kernel launch");
    }
    /* Pass 1: count. Launches of at most 2^20 tiles, so cancellation is
     * looked at now and then. */
    const uint64_t chunk = 1ull << 20;
    for (uint64_t t = 0; t < tiles && status == TOPOML_OK; t += chunk) {
        uint64_t b = tiles - t < chunk ? tiles - t : chunk;
        count_k<<<(unsigned)b, THREADS, 0, ctx->stream>>>(
            pts, norms, n, dim, t, threshold, counters, counters + 1, nullptr, nullptr, 0);
        TMC_TRY(ctx, status, cudaGetLastError(), "edges_kernel (count) launch");
        if (status == TOPOML_OK && t + b < tiles && tmc_cancelled(ctx, "edges: counting", t, tiles))
            status = tmc_fail(ctx->call, TOPOML_E_CANCELLED, "cancelled");
    }
    TMC_TRY(ctx, status,
            cudaMemcpyAsync(host_counters, counters, sizeof host_counters, cudaMemcpyDeviceToHost,
                            ctx->stream),
            "cudaMemcpyAsync(counters)");
    TMC_TRY(ctx, status, cudaStreamSynchronize(ctx->stream), "edges_kernel (count)");
    if (status == TOPOML_OK && host_counters[1] != ~0ull)
        status =
            tmc_fail(ctx->call, TOPOML_E_INVALID, "distance d(%llu,%llu) is nan: not a distance",
                     host_counters[1] % n, host_counters[1] / n);
    m = host_counters[0];
    /* Device first: a problem too large for the device is refused before
     * the host array of the same size is allocated. */
    if (status == TOPOML_OK)
        status = alloc_work(ctx, m, points_bytes, &work);
    if (status == TOPOML_OK)
        edges = tmc_alloc_edges(ctx, m, &status);
    /* Pass 2: emit into exactly m slots. */
    if (status == TOPOML_OK && m) {
        TMC_TRY(ctx, status, cudaMemsetAsync(counters, 0, sizeof(unsigned long long), ctx->stream),
                "cudaMemsetAsync(counter)");
        for (uint64_t t = 0; t < tiles && status == TOPOML_OK; t += chunk) {
            uint64_t b = tiles - t < chunk ? tiles - t : chunk;
            emit_k<<<(unsigned)b, THREADS, 0, ctx->stream>>>(
                pts, norms, n, dim, t, threshold, counters, counters + 1, work, work + m, m);
            TMC_TRY(ctx, status, cudaGetLastError(), "edges_kernel (emit) launch");
            if (status == TOPOML_OK && t + b < tiles &&
                tmc_cancelled(ctx, "edges: collecting", t, tiles))
                status = tmc_fail(ctx->call, TOPOML_E_CANCELLED, "cancelled");
        }
        /* The points are not needed any more: give their memory to the sort. */
        TMC_TRY(ctx, status, cudaStreamSynchronize(ctx->stream), "edges_kernel (emit)");
        if (status == TOPOML_OK) {
            TMC_ALWAYS(ctx, status, cudaFree(pts), "cudaFree(points)");
            pts = nullptr;
            status = sort_and_download(ctx, work, m, n, sizeof(T) == 4 ? 29 : 0, edges);
        }
    }
    TMC_ALWAYS(ctx, status, cudaStreamSynchronize(ctx->stream), "edges");
    TMC_ALWAYS(ctx, status, cudaFree(work), "cudaFree(edges)");
    TMC_ALWAYS(ctx, status, cudaFree(pts), "cudaFree(points)");
    TMC_ALWAYS(ctx, status, cudaFree(norms), "cudaFree(norms)");
    TMC_ALWAYS(ctx, status, cudaFree(counters), "cudaFree(counters)");
    if (status != TOPOML_OK) {
        tmc_host_free(ctx, edges);
        return status;
    }
    *out = edges;
    *n_out = m;
    return TOPOML_OK;
}

/* Condensed or sparse: filtered on the host (host_edges.c) into the output
 * array; the device only sorts. */
static int edges_from_host(tmc_ctx *ctx, const topoml_input_v1 *in, double threshold,
                           topoml_edge **out, uint64_t *n_out)
{
    const uint64_t n = in->n;
    const int f32 = in->kind == TOPOML_INPUT_CONDENSED && in->dtype == TOPOML_F32;
    uint64_t m = 0;
    topoml_edge *edges = nullptr;
    int status = tmc_filter_edges_host(ctx, in, threshold, &edges, &m);
    if (status != TOPOML_OK)
        return status;
    uint64_t *work = nullptr;
    if (m) {
        status = alloc_work(ctx, m, 0, &work);
        TMC_TRY(ctx, status,
                cudaMemcpyAsync(work + 2 * m, edges, m * sizeof(topoml_edge),
                                cudaMemcpyHostToDevice, ctx->stream),
                "cudaMemcpyAsync(edges to device)");
        if (status == TOPOML_OK) {
            split_edges_kernel<<<tmc_grid_for(m), 256, 0, ctx->stream>>>(
                (const topoml_edge *)(work + 2 * m), m, n, work, work + m);
            TMC_TRY(ctx, status, cudaGetLastError(), "split_edges_kernel launch");
        }
        if (status == TOPOML_OK)
            status = sort_and_download(ctx, work, m, n, f32 ? 29 : 0, edges);
        TMC_ALWAYS(ctx, status, cudaStreamSynchronize(ctx->stream), "edges");
        TMC_ALWAYS(ctx, status, cudaFree(work), "cudaFree(edges)");
    }
    if (status != TOPOML_OK) {
        tmc_host_free(ctx, edges);
        return status;
    }
    *out = edges;
    *n_out = m;
    return TOPOML_OK;
}

} // namespace tmc

using namespace tmc;

extern "C" int tmc_edges_schedule(char *out, size_t size)
{
    snprintf(out, size,
             "kernel=fused-distance-filter passes=count,emit tiles=as-distances "
             "sort=cub-radix-stable sort-keys=pair(i*n+j),then-d f32-skipped-bits=29 "
             "filter.condensed=host filter.sparse=host");
    return TOPOML_OK;
}

extern "C" int tmc_edges(tmc_ctx *ctx, const topoml_input_v1 *in, double threshold,
                         topoml_edge **out, uint64_t *n_out)
{
    *out = nullptr;
    *n_out = 0;
    if (isnan(threshold))
        return tmc_fail(ctx->call, TOPOML_E_INVALID, "threshold is NaN");
    if (in->kind == TOPOML_INPUT_POINTS && in->n > 1 && !tmc_in_device_range(in))
        return tmc_exact_edges(ctx->call, in, threshold, out, n_out);
    if (in->kind == TOPOML_INPUT_POINTS && in->n > 1)
        return in->dtype == TOPOML_F32 ? edges_from_points<float>(ctx, in, threshold, out, n_out)
                                       : edges_from_points<double>(ctx, in, threshold, out, n_out);
    return edges_from_host(ctx, in, threshold, out, n_out);
}
