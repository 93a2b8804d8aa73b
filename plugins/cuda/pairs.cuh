/*
 * pairs.cuh — the distance of a pair of points on the device, the tiling of
 * the lower triangle, and the two kernels built on it: distances_kernel
 * (distances.cu) and edges_kernel (edges.cu). Device code only, with no CUB,
 * so that tests/test_cuda_emulated.cpp can run it on the host.
 *
 * Bitwise agreement with the reference (plugins/scalar/metric.h): each
 * distance is accumulated left to right over the coordinates in the point's
 * own precision, with the round-to-nearest intrinsics (__fadd_rn, __dmul_rn,
 * ...) so that the compiler cannot contract a multiply and an add into an
 * FMA, and with correctly rounded division and square root. The host
 * reference does exactly these IEEE operations in the same order, so the
 * results are the same bits, which makes thresholds cut the same edges.
 * Cosine needs |x|^2 and |y|^2: metric.h sums them in the same loop, but each
 * is its own left-to-right sum, so precomputing them per point (norms_kernel)
 * gives the same values.
 */
#ifndef TOPOML_CUDA_PAIRS_CUH
#define TOPOML_CUDA_PAIRS_CUH

#include <stdint.h>

#include "backend.h"

namespace tmc
{

template <typename T> struct ieee;
template <> struct ieee<float> {
    static __device__ __forceinline__ float add(float a, float b)
    {
        return __fadd_rn(a, b);
    }
    static __device__ __forceinline__ float sub(float a, float b)
    {
        return __fsub_rn(a, b);
    }
    static __device__ __forceinline__ float mul(float a, float b)
    {
        return __fmul_rn(a, b);
    }
    static __device__ __forceinline__ float div(float a, float b)
    {
        return __fdiv_rn(a, b);
    }
    static __device__ __forceinline__ float sqrt(float a)
    {
        return __fsqrt_rn(a);
    }
    static __device__ __forceinline__ float abs(float a)
    {
        return fabsf(a);
    }
};
template <> struct ieee<double> {
    static __device__ __forceinline__ double add(double a, double b)
    {
        return __dadd_rn(a, b);
    }
    static __device__ __forceinline__ double sub(double a, double b)
    {
        return __dsub_rn(a, b);
    }
    static __device__ __forceinline__ double mul(double a, double b)
    {
        return __dmul_rn(a, b);
    }
    static __device__ __forceinline__ double div(double a, double b)
    {
        return __ddiv_rn(a, b);
    }
    static __device__ __forceinline__ double sqrt(double a)
    {
        return __dsqrt_rn(a);
    }
    static __device__ __forceinline__ double abs(double a)
    {
        return fabs(a);
    }
};

/* One coordinate's contribution, as in metric.h's loops. For cosine only the
 * inner product is accumulated here; the norms come precomputed. */
template <typename T, int M> __device__ __forceinline__ T step(T acc, T x, T y)
{
    typedef ieee<T> f;
    if (M == TOPOML_METRIC_EUCLIDEAN || M == TOPOML_METRIC_SQEUCLIDEAN) {
        T t = f::sub(x, y);
        return f::add(acc, f::mul(t, t));
    } else if (M == TOPOML_METRIC_MANHATTAN) {
        return f::add(acc, f::abs(f::sub(x, y)));
    } else if (M == TOPOML_METRIC_CHEBYSHEV) {
        T t = f::abs(f::sub(x, y));
        return t > acc ? t : acc; /* as metric.h: a NaN t leaves acc alone */
    } else {
        return f::add(acc, f::mul(x, y));
    }
}

template <typename T, int M> __device__ __forceinline__ T finish(T acc, T xx, T yy)
{
    typedef ieee<T> f;
    if (M == TOPOML_METRIC_EUCLIDEAN)
        return f::sqrt(acc);
    if (M == TOPOML_METRIC_COSINE) {
        if (xx == T(0) || yy == T(0))
            return T(1);
        T c = f::sub(T(1), f::div(acc, f::sqrt(f::mul(xx, yy))));
        return c < T(0) ? T(0) : c;
    }
    return acc;
}

/* |x|^2 of each point, left to right (only cosine uses it). */
template <typename T>
__global__ void norms_kernel(const T *__restrict__ pts, uint64_t n, uint64_t dim,
                             T *__restrict__ norms)
{
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const T *x = pts + i * dim;
    T acc = T(0);
    for (uint64_t k = 0; k < dim; k++)
        acc = ieee<T>::add(acc, ieee<T>::mul(x[k], x[k]));
    norms[i] = acc;
}

/* Tiling. The pairs i > j are covered by square tiles (bi, bj), bi >= bj, of
 * TILE x TILE points, numbered row by row: tile t = bi*(bi+1)/2 + bj. A block
 * of 256 threads (16 x 16) computes one tile; thread (ty, tx) owns the MT x MT
 * pairs i = i0 + ty + 16 r, j = j0 + tx + 16 c, so that consecutive threads
 * hold consecutive j and the row-wise condensed output is written coalesced. */
constexpr int THREADS = 256;
template <typename T> struct tiling;
template <> struct tiling<float> {
    static constexpr int MT = 8, KC = 32; /* 128 x 128 tiles, 32 coordinates per stage */
};
template <> struct tiling<double> {
    static constexpr int MT = 4, KC = 32; /* 64 x 64 tiles */
};
template <typename T> constexpr int tile_size()
{
    return 16 * tiling<T>::MT;
}

/* The distances of tile t's pairs into acc[r][c] (finished, i.e. after the
 * square root / cosine formula). Entries with i <= j or i >= n are garbage
 * and must be skipped by the caller (the loads there read zeros). All
 * threads of the block must call it (it synchronises). */
template <typename T, int M>
__device__ __forceinline__ void
tile_distances(const T *__restrict__ pts, const T *__restrict__ norms, uint64_t n, uint64_t dim,
               uint64_t i0, uint64_t j0, T (&acc)[tiling<T>::MT][tiling<T>::MT])
{
    constexpr int MT = tiling<T>::MT, KC = tiling<T>::KC, TILE = 16 * MT;
    /* +1: the loads below write sa[k][p] with consecutive threads at
     * consecutive k; the padding puts those in different banks. */
    __shared__ T sa[KC][TILE + 1];
    __shared__ T sb[KC][TILE + 1];
    const int tx = threadIdx.x & 15, ty = threadIdx.x >> 4;
#pragma unroll
    for (int r = 0; r < MT; r++)
#pragma unroll
        for (int c = 0; c < MT; c++)
            acc[r][c] = T(0);
    for (uint64_t k0 = 0; k0 < dim; k0 += KC) {
        const int kc = (int)(dim - k0 < (uint64_t)KC ? dim - k0 : (uint64_t)KC);
        for (int e = threadIdx.x; e < TILE * kc; e += THREADS) {
            const int p = e / kc, k = e - p * kc;
            const uint64_t ia = i0 + p, ib = j0 + p;
            sa[k][p] = ia < n ? pts[ia * dim + k0 + k] : T(0);
            sb[k][p] = ib < n ? pts[ib * dim + k0 + k] : T(0);
        }
        __syncthreads();
        /* kc is the same for the whole block, so no coordinate past dim is
         * ever accumulated: the order of operations is metric.h's. */
        for (int k = 0; k < kc; k++) {
            T a[MT], b[MT];
#pragma unroll
            for (int r = 0; r < MT; r++)
                a[r] = sa[k][ty + 16 * r];
#pragma unroll
            for (int c = 0; c < MT; c++)
                b[c] = sb[k][tx + 16 * c];
#pragma unroll
            for (int r = 0; r < MT; r++)
#pragma unroll
                for (int c = 0; c < MT; c++)
                    acc[r][c] = step<T, M>(acc[r][c], a[r], b[c]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int r = 0; r < MT; r++) {
        const uint64_t i = i0 + ty + 16 * r;
        const T xx = (M == TOPOML_METRIC_COSINE && i < n) ? norms[i] : T(0);
#pragma unroll
        for (int c = 0; c < MT; c++) {
            const uint64_t j = j0 + tx + 16 * c;
            const T yy = (M == TOPOML_METRIC_COSINE && j < n) ? norms[j] : T(0);
            acc[r][c] = finish<T, M>(acc[r][c], xx, yy);
        }
    }
}

/* ---- kernels ---- */

template <typename T, typename O, int M>
__global__ void __launch_bounds__(THREADS)
    distances_kernel(const T *__restrict__ pts, const T *__restrict__ norms, uint64_t n,
                     uint64_t dim, uint64_t first_tile, uint64_t out_base, O *__restrict__ out)
{
    constexpr int MT = tiling<T>::MT, TILE = 16 * MT;
    const uint64_t t = first_tile + blockIdx.x;
    const uint64_t bi = tmc_triangular_root(t), bj = t - bi * (bi + 1) / 2;
    const uint64_t i0 = bi * TILE, j0 = bj * TILE;
    T acc[MT][MT];
    tile_distances<T, M>(pts, norms, n, dim, i0, j0, acc);
    const int tx = threadIdx.x & 15, ty = threadIdx.x >> 4;
#pragma unroll
    for (int r = 0; r < MT; r++) {
        const uint64_t i = i0 + ty + 16 * r;
        if (i >= n)
            continue;
        O *row = out + (i * (i - 1) / 2 - out_base);
#pragma unroll
        for (int c = 0; c < MT; c++) {
            const uint64_t j = j0 + tx + 16 * c;
            if (j < i)
                row[j] = (O)acc[r][c];
        }
    }
}

/* d as sort key: +0.0 for -0.0, so that the two zeros sort as one value. */
__device__ __forceinline__ uint64_t dist_key(double d)
{
    return (uint64_t)__double_as_longlong(__dadd_rn(d, 0.0));
}

/* Count (EMIT false) or emit (EMIT true) the pairs of tiles [first_tile,
 * first_tile + gridDim.x) with d <= threshold. A pair whose distance is NaN
 * is not a distance: the smallest such packed pair goes to *bad. */
template <typename T, int M, bool EMIT>
__global__ void __launch_bounds__(THREADS)
    edges_kernel(const T *__restrict__ pts, const T *__restrict__ norms, uint64_t n, uint64_t dim,
                 uint64_t first_tile, double threshold, unsigned long long *count,
                 unsigned long long *bad, uint64_t *keys, uint64_t *vals, uint64_t capacity)
{
    constexpr int MT = tiling<T>::MT, TILE = 16 * MT;
    const uint64_t t = first_tile + blockIdx.x;
    const uint64_t bi = tmc_triangular_root(t), bj = t - bi * (bi + 1) / 2;
    const uint64_t i0 = bi * TILE, j0 = bj * TILE;
    T acc[MT][MT];
    tile_distances<T, M>(pts, norms, n, dim, i0, j0, acc);
    const int tx = threadIdx.x & 15, ty = threadIdx.x >> 4;
    unsigned mine = 0;
#pragma unroll
    for (int r = 0; r < MT; r++) {
        const uint64_t i = i0 + ty + 16 * r;
#pragma unroll
        for (int c = 0; c < MT; c++) {
            const uint64_t j = j0 + tx + 16 * c;
            if (i >= n || j >= i)
                continue;
            const double d = (double)acc[r][c];
            if (!EMIT && d != d)
                atomicMin(bad, (unsigned long long)(j * n + i));
            mine += d <= threshold;
        }
    }
    /* Offsets of each thread's edges within the tile: an inclusive scan of
     * the counts in shared memory (Hillis-Steele, 8 steps). */
    __shared__ unsigned scan[THREADS];
    __shared__ unsigned long long base;
    scan[threadIdx.x] = mine;
    __syncthreads();
    for (int d = 1; d < THREADS; d <<= 1) {
        const unsigned v = (int)threadIdx.x >= d ? scan[threadIdx.x - d] : 0u;
        __syncthreads();
        scan[threadIdx.x] += v;
        __syncthreads();
    }
    const unsigned total = scan[THREADS - 1];
    if (threadIdx.x == 0)
        base = total ? atomicAdd(count, (unsigned long long)total) : 0;
    if (!EMIT)
        return;
    __syncthreads();
    const uint64_t offset = scan[threadIdx.x] - mine;
    uint64_t slot = base + offset;
#pragma unroll
    for (int r = 0; r < MT; r++) {
        const uint64_t i = i0 + ty + 16 * r;
#pragma unroll
        for (int c = 0; c < MT; c++) {
            const uint64_t j = j0 + tx + 16 * c;
            if (i >= n || j >= i)
                continue;
            const double d = (double)acc[r][c];
            /* The count pass saw the same bits, so slot < capacity; the test
             * only keeps a broken device from writing out of bounds. */
            if (d <= threshold && slot < capacity) {
                keys[slot] = dist_key(d);
                vals[slot] = j * n + i; /* j < i: the pair (j, i) */
                slot++;
            }
        }
    }
}

} // namespace tmc

#endif /* TOPOML_CUDA_PAIRS_CUH */
