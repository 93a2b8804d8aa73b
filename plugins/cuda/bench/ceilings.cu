/*
 * ceilings.cu — what the GPU can do at best, measured the way the distance
 * kernels use it, so the benchmark can say how close they come: the rate of
 * writing device memory, and the rate of separate (not fused) floating-point
 * adds and multiplies, which is what the distance kernels issue (FMA is off
 * there so that the results are metric.h's bits).
 */
#include <cuda_runtime.h>

#include "ceilings.h"

__global__ void write_kernel(float4 *out, size_t n, float v)
{
    for (size_t k = blockIdx.x * (size_t)blockDim.x + threadIdx.x; k < n;
         k += (size_t)gridDim.x * blockDim.x)
        out[k] = make_float4(v, v, v, v);
}

/* 8 independent chains of multiply then add, ITER times: 16 flops an
 * iteration, none fusable (round-to-nearest intrinsics). */
template <typename T> __device__ __forceinline__ T mul(T a, T b);
template <> __device__ __forceinline__ float mul(float a, float b)
{
    return __fmul_rn(a, b);
}
template <> __device__ __forceinline__ double mul(double a, double b)
{
    return __dmul_rn(a, b);
}
template <typename T> __device__ __forceinline__ T add(T a, T b);
template <> __device__ __forceinline__ float add(float a, float b)
{
    return __fadd_rn(a, b);
}
template <> __device__ __forceinline__ double add(double a, double b)
{
    return __dadd_rn(a, b);
}

constexpr int ITER = 4096;
template <typename T> __global__ void flops_kernel(T *out, T a, T b)
{
    T x[8];
#pragma unroll
    for (int c = 0; c < 8; c++)
        x[c] = (T)(threadIdx.x + c);
    for (int i = 0; i < ITER; i++)
#pragma unroll
        for (int c = 0; c < 8; c++)
            x[c] = add(mul(x[c], a), b);
    T s = 0;
#pragma unroll
    for (int c = 0; c < 8; c++)
        s = add(s, x[c]);
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

static double time_ms(cudaEvent_t a, cudaEvent_t b)
{
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    return ms;
}

template <typename T> static int flops(double *tflops)
{
    int sms = 0, dev = 0;
    cudaGetDevice(&dev);
    if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
        return -1;
    const int blocks = sms * 16, threads = 256;
    T *out = nullptr;
    cudaEvent_t e0, e1;
    if (cudaMalloc(&out, (size_t)blocks * threads * sizeof(T)) != cudaSuccess)
        return -1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    double best = 1e30;
    for (int rep = 0; rep < 4; rep++) {
        cudaEventRecord(e0);
        flops_kernel<T><<<blocks, threads>>>(out, (T)0.999, (T)0.001);
        cudaEventRecord(e1);
        cudaEventSynchronize(e1);
        double ms = time_ms(e0, e1);
        if (rep && ms < best)
            best = ms;
    }
    int rc = cudaGetLastError() == cudaSuccess ? 0 : -1;
    *tflops = (double)blocks * threads * ITER * 16 / (best * 1e-3) / 1e12;
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    cudaFree(out);
    return rc;
}

extern "C" int bench_ceilings(bench_ceiling *out)
{
    const size_t bytes = 4ull << 30;
    float4 *buf = nullptr;
    cudaEvent_t e0, e1;
    if (cudaMalloc(&buf, bytes) != cudaSuccess)
        return -1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    double best = 1e30;
    for (int rep = 0; rep < 4; rep++) {
        cudaEventRecord(e0);
        write_kernel<<<4096, 256>>>(buf, bytes / sizeof(float4), 1.0f);
        cudaEventRecord(e1);
        cudaEventSynchronize(e1);
        double ms = time_ms(e0, e1);
        if (rep && ms < best)
            best = ms;
    }
    out->write_gbs = bytes / (best * 1e-3) / 1e9;
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    cudaFree(buf);
    if (cudaGetLastError() != cudaSuccess)
        return -1;
    if (flops<float>(&out->fp32_tflops) || flops<double>(&out->fp64_tflops))
        return -1;
    return 0;
}
