/*
 * device_input.cu — input that is already in device memory (topoml_input_v1
 * with memory TOPOML_MEMORY_CUDA, core 0.4): checking what the pointer is,
 * waiting for the caller's stream, the coordinate checks on the device, f32
 * widened to f64 there, and the one place that copies such input to the host
 * (input_to_host, or an input out of the device kernels' range), counted.
 *
 * Why the checks run on the device: the host path reads every coordinate
 * (finite? within the range where the kernels' plain sums are exact?); here
 * that would need the very host copy this path exists to avoid, so a kernel
 * answers both questions and only its two words come back.
 */
#include <math.h>

#include "backend.h"

/* [0]: the first index of a non-finite value (~0: none); [1]: 1 when a
 * non-zero |x| is outside the plain range of scalar_in_plain_range. */
template <typename T>
__global__ void scan_kernel(const T *x, uint64_t count, unsigned long long *flags, double *wide)
{
    for (uint64_t k = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; k < count;
         k += (uint64_t)gridDim.x * blockDim.x) {
        const double v = (double)x[k];
        if (wide)
            wide[k] = v;
        if (!isfinite(v)) {
            atomicMin(&flags[0], (unsigned long long)k);
            continue;
        }
        const double a = fabs(v);
        if (a != 0 && !(a >= 0x1p-400 && a <= 0x1p+480))
            flags[1] = 1; /* every writer writes 1 */
    }
}

int tmc_device_input_check(const topoml_call_v1 *call, const topoml_input_v1 *in)
{
    if (in->memory != TOPOML_MEMORY_CUDA)
        return tmc_fail(call, TOPOML_E_UNSUPPORTED, "input memory kind %u: not CUDA memory",
                        in->memory);
    if (in->kind != TOPOML_INPUT_POINTS && in->kind != TOPOML_INPUT_CONDENSED)
        return tmc_fail(call, TOPOML_E_UNSUPPORTED,
                        "input in device memory: points or a condensed matrix only");
    if (in->device < 0)
        return tmc_fail(call, TOPOML_E_INVALID, "input in device memory: device index %d",
                        in->device);
    return TOPOML_OK;
}

/* What the pointer is: device memory (or managed) on in->device. */
static int check_pointer(const tmc_ctx *ctx, const topoml_input_v1 *in)
{
    struct cudaPointerAttributes attr;
    cudaError_t err = cudaPointerGetAttributes(&attr, in->data);
    if (err != cudaSuccess)
        return tmc_cuda_fail(ctx, err, "cudaPointerGetAttributes(input)");
    if (attr.type != cudaMemoryTypeDevice && attr.type != cudaMemoryTypeManaged)
        return tmc_fail(ctx->call, TOPOML_E_INVALID,
                        "input said to be on CUDA device %d is not device memory (%s)", in->device,
                        attr.type == cudaMemoryTypeHost ? "page-locked host memory"
                                                        : "not known to CUDA");
    if (attr.device != in->device)
        return tmc_fail(ctx->call, TOPOML_E_INVALID,
                        "input said to be on CUDA device %d is on device %d", in->device,
                        attr.device);
    return TOPOML_OK;
}

/* Our stream waits for the work the caller queued on in->stream. */
static int wait_for_caller(const tmc_ctx *ctx, const topoml_input_v1 *in)
{
    int status = TOPOML_OK;
    cudaEvent_t ready = nullptr;
    TMC_TRY(ctx, status, cudaEventCreateWithFlags(&ready, cudaEventDisableTiming),
            "cudaEventCreate(input ready)");
    TMC_TRY(ctx, status, cudaEventRecord(ready, (cudaStream_t)in->stream),
            "cudaEventRecord(the caller's stream)");
    TMC_TRY(ctx, status, cudaStreamWaitEvent(ctx->stream, ready, 0), "cudaStreamWaitEvent");
    if (ready)
        TMC_ALWAYS(ctx, status, cudaEventDestroy(ready), "cudaEventDestroy");
    return status;
}

int tmc_input_to_host(tmc_ctx *ctx, const topoml_input_v1 *in, void *out)
{
    int status = check_pointer(ctx, in);
    if (status == TOPOML_OK)
        status = wait_for_caller(ctx, in);
    const uint64_t count = in->kind == TOPOML_INPUT_POINTS ? in->n * in->dim
                                                           : tmc_row_start(in->n);
    const size_t elem = in->dtype == TOPOML_F32 ? sizeof(float) : sizeof(double);
    TMC_TRY(ctx, status,
            cudaMemcpyAsync(out, in->data, count * elem, cudaMemcpyDeviceToHost, ctx->stream),
            "cudaMemcpyAsync(input to host)");
    TMC_ALWAYS(ctx, status, cudaStreamSynchronize(ctx->stream), "cudaStreamSynchronize");
    if (status == TOPOML_OK) {
        ctx->input_copies++;
        ctx->st->input_host_copies++;
    }
    return status;
}

int tmc_device_points(tmc_ctx *ctx, const topoml_input_v1 *in, topoml_input_v1 *view,
                      double **wide, double **host)
{
    *view = *in;
    *wide = nullptr;
    *host = nullptr;
    const uint64_t count = in->n * in->dim;
    if (count == 0)
        return TOPOML_OK; /* nothing to read (an empty array may have no pointer) */
    int status = check_pointer(ctx, in);
    if (status == TOPOML_OK)
        status = wait_for_caller(ctx, in);
    unsigned long long *flags = nullptr;
    unsigned long long got[2] = {~0ull, 0};
    TMC_TRY(ctx, status, cudaMalloc((void **)&flags, sizeof got), "cudaMalloc(flags)");
    if (in->dtype == TOPOML_F32)
        TMC_TRY(ctx, status, cudaMalloc((void **)wide, (count ? count : 1) * sizeof(double)),
                "cudaMalloc(widened points)");
    TMC_TRY(ctx, status, cudaMemcpyAsync(flags, got, sizeof got, cudaMemcpyHostToDevice, ctx->stream),
            "cudaMemcpyAsync(flags)");
    if (status == TOPOML_OK)
        tmc_note_device_use(ctx);
    if (status == TOPOML_OK && count) {
        if (in->dtype == TOPOML_F32)
            scan_kernel<float><<<tmc_grid_for(count), 256, 0, ctx->stream>>>(
                (const float *)in->data, count, flags, *wide);
        else
            scan_kernel<double><<<tmc_grid_for(count), 256, 0, ctx->stream>>>(
                (const double *)in->data, count, flags, nullptr);
        TMC_TRY(ctx, status, cudaGetLastError(), "scan_kernel launch");
    }
    TMC_TRY(ctx, status, cudaMemcpyAsync(got, flags, sizeof got, cudaMemcpyDeviceToHost, ctx->stream),
            "cudaMemcpyAsync(flags to host)");
    TMC_ALWAYS(ctx, status, cudaStreamSynchronize(ctx->stream), "cudaStreamSynchronize");
    if (flags)
        TMC_ALWAYS(ctx, status, cudaFree(flags), "cudaFree(flags)");
    if (status == TOPOML_OK && got[0] != ~0ull)
        status = tmc_fail(ctx->call, TOPOML_E_INVALID,
                          "point %llu, coordinate %llu is not finite (input on CUDA device %d)",
                          got[0] / in->dim, got[0] % in->dim, in->device);
    if (status == TOPOML_OK && got[1]) {
        /* Beyond the kernels' range: the reference's exact distances, on the
         * host (host_exact.c), need the coordinates there. */
        const size_t bytes = (size_t)count * sizeof(double);
        *host = (double *)tmc_host_alloc(ctx, bytes, "the host copy of the points", &status);
        if (*host && in->dtype == TOPOML_F32) {
            TMC_TRY(ctx, status,
                    cudaMemcpyAsync(*host, *wide, bytes, cudaMemcpyDeviceToHost, ctx->stream),
                    "cudaMemcpyAsync(input to host)");
            TMC_ALWAYS(ctx, status, cudaStreamSynchronize(ctx->stream), "cudaStreamSynchronize");
            if (status == TOPOML_OK) {
                ctx->input_copies++;
                ctx->st->input_host_copies++;
            }
        } else if (*host) {
            status = tmc_input_to_host(ctx, in, *host);
        }
        view->memory = TOPOML_MEMORY_HOST;
        view->dtype = TOPOML_F64;
        view->data = *host;
        if (ctx->call->log)
            ctx->call->log(ctx->call->host_data, TOPOML_LOG_INFO,
                           "cuda: coordinates beyond the device kernels' range: the points are "
                           "copied to the host");
        return status;
    }
    if (status == TOPOML_OK && in->dtype == TOPOML_F32) {
        view->dtype = TOPOML_F64; /* widened, as a host data set's f32 values are */
        view->data = *wide;
    }
    return status;
}

void tmc_device_free(void *p)
{
    if (p)
        (void)cudaFree(p);
}
