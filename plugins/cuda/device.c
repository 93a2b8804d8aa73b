/*
 * device.c — everything the CUDA backend does before and around a kernel:
 * the probe (is there a driver, a device, a new enough one?), choosing the
 * device of a call, its stream, turning CUDA errors into topoml statuses and
 * messages, and checking memory before allocating it.
 *
 * It is the only file that looks for the driver itself. The runtime is linked
 * statically and loads libcuda.so.1 lazily, so until the probe has found the
 * driver no CUDA call is made; after that every CUDA call is checked.
 */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "backend.h"

#ifndef TMC_MIN_CC
#error "TMC_MIN_CC (lowest compute capability built, e.g. 90) must be defined by the build"
#endif
#ifndef TMC_ARCHS
#error "TMC_ARCHS (the CUDA architectures built, e.g. \"90\") must be defined by the build"
#endif

/* Device memory kept free for the runtime, CUB's scratch and the other users
 * of the device: 256 MiB or 2% of the device, whichever is larger. */
#define TMC_MARGIN_MIN (256ull << 20)

int tmc_fail(const topoml_call_v1 *call, int status, const char *fmt, ...)
{
    if (call && call->error && call->error_size) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(call->error, call->error_size, fmt, ap);
        va_end(ap);
    }
    return status;
}

static void say(char *why, size_t why_size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void say(char *why, size_t why_size, const char *fmt, ...)
{
    if (!why || !why_size)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, why_size, fmt, ap);
    va_end(ap);
}

static void version_text(int v, char *buf, size_t size)
{
    snprintf(buf, size, "%d.%d", v / 1000, (v % 1000) / 10);
}

/* Does this build have a kernel image the device can run? Asks the runtime
 * about one kernel of distances.cu (defined there). */
cudaError_t tmc_kernel_image_check(void);

int tmc_probe_device(int device, char *why, size_t why_size, int *cc_major, int *cc_minor,
                     int *n_devices)
{
    if (n_devices)
        *n_devices = 0;
    /* The runtime would report a missing driver as "insufficient driver";
     * looking for the library first gives the true reason. */
    void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!driver) {
        say(why, why_size, "no CUDA driver (libcuda.so.1 not found)");
        return TOPOML_E_UNSUPPORTED;
    }
    dlclose(driver);

    int driver_version = 0, runtime_version = 0;
    char dv[16], rv[16];
    cudaError_t err = cudaDriverGetVersion(&driver_version);
    if (err == cudaSuccess)
        err = cudaRuntimeGetVersion(&runtime_version);
    if (err != cudaSuccess) {
        say(why, why_size, "CUDA driver unusable: %s (%s)", cudaGetErrorName(err),
            cudaGetErrorString(err));
        return TOPOML_E_UNSUPPORTED;
    }
    version_text(driver_version, dv, sizeof dv);
    version_text(runtime_version, rv, sizeof rv);

    int count = 0;
    err = cudaGetDeviceCount(&count);
    switch (err) {
    case cudaSuccess: break;
    case cudaErrorInsufficientDriver:
    case cudaErrorSystemDriverMismatch:
    case cudaErrorCompatNotSupportedOnDevice:
        say(why, why_size,
            "CUDA driver too old: it supports CUDA %s, topoml-backend-cuda needs CUDA %s (%s)", dv,
            rv, cudaGetErrorName(err));
        return TOPOML_E_UNSUPPORTED;
    case cudaErrorNoDevice:
        say(why, why_size, "no CUDA device (driver for CUDA %s present)", dv);
        return TOPOML_E_UNSUPPORTED;
    default:
        say(why, why_size, "cudaGetDeviceCount failed: %s (%s)", cudaGetErrorName(err),
            cudaGetErrorString(err));
        return TOPOML_E_DEVICE;
    }
    if (count <= 0) {
        say(why, why_size, "no CUDA device (driver for CUDA %s present)", dv);
        return TOPOML_E_UNSUPPORTED;
    }
    if (n_devices)
        *n_devices = count;
    int dev = device < 0 ? 0 : device;
    if (dev >= count) {
        say(why, why_size, "CUDA device %d does not exist (%d device%s)", dev, count,
            count == 1 ? "" : "s");
        return TOPOML_E_DEVICE;
    }
    int major = 0, minor = 0;
    err = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
    if (err == cudaSuccess)
        err = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
    if (err != cudaSuccess) {
        say(why, why_size, "cudaDeviceGetAttribute(device %d) failed: %s (%s)", dev,
            cudaGetErrorName(err), cudaGetErrorString(err));
        return TOPOML_E_DEVICE;
    }
    if (cc_major)
        *cc_major = major;
    if (cc_minor)
        *cc_minor = minor;
    if (major * 10 + minor < TMC_MIN_CC) {
        say(why, why_size,
            "compute capability %d.%d of CUDA device %d too low: topoml-backend-cuda is built "
            "for CUDA architectures %s (needs %d.%d or newer)",
            major, minor, dev, TMC_ARCHS, TMC_MIN_CC / 10, TMC_MIN_CC % 10);
        return TOPOML_E_UNSUPPORTED;
    }
    int previous = 0;
    err = cudaGetDevice(&previous);
    if (err == cudaSuccess)
        err = cudaSetDevice(dev);
    if (err != cudaSuccess) {
        say(why, why_size, "cudaSetDevice(%d) failed: %s (%s)", dev, cudaGetErrorName(err),
            cudaGetErrorString(err));
        return TOPOML_E_DEVICE;
    }
    err = tmc_kernel_image_check();
    cudaError_t restore = cudaSetDevice(previous);
    if (err == cudaErrorNoKernelImageForDevice || err == cudaErrorInvalidDeviceFunction ||
        err == cudaErrorUnsupportedPtxVersion) {
        say(why, why_size,
            "no kernel image for compute capability %d.%d (built for CUDA architectures %s, "
            "driver for CUDA %s): %s",
            major, minor, TMC_ARCHS, dv, cudaGetErrorName(err));
        return TOPOML_E_UNSUPPORTED;
    }
    if (err == cudaSuccess)
        err = restore;
    if (err != cudaSuccess) {
        say(why, why_size, "CUDA device %d unusable: %s (%s)", dev, cudaGetErrorName(err),
            cudaGetErrorString(err));
        return TOPOML_E_DEVICE;
    }
    say(why, why_size, "CUDA device %d of %d, compute capability %d.%d, driver for CUDA %s", dev,
        count, major, minor, dv);
    return TOPOML_OK;
}

int tmc_cuda_fail(const tmc_ctx *ctx, cudaError_t err, const char *what)
{
    int status = err == cudaErrorMemoryAllocation ? TOPOML_E_LIMIT : TOPOML_E_DEVICE;
    return tmc_fail(ctx->call, status, "CUDA device %d: %s failed: %s (%s)", ctx->device, what,
                    cudaGetErrorName(err), cudaGetErrorString(err));
}

int tmc_begin(tmc_ctx *ctx, tmc_state *st, const topoml_call_v1 *call, const topoml_input_v1 *in,
              uint32_t kinds)
{
    memset(ctx, 0, sizeof *ctx);
    ctx->call = call;
    ctx->st = st;
    ctx->previous_device = -1;
    if (!call || call->struct_size < TOPOML_CALL_V1_MIN_SIZE || !call->alloc || !call->free)
        return tmc_fail(call, TOPOML_E_INVALID,
                        "call struct missing, too short or without "
                        "allocator");
    if (!st)
        return tmc_fail(call, TOPOML_E_INVALID, "no backend state");
    if (in) {
        int status = tmc_check_input(call, in, kinds);
        if (status != TOPOML_OK)
            return status;
    }
    /* Input in device memory is worked on where it is. */
    const int32_t wanted = in && tmc_on_device(in) ? in->device : call->device;
    char why[TMC_TEXT];
    int status = tmc_probe_device(wanted, why, sizeof why, NULL, NULL, NULL);
    if (status != TOPOML_OK)
        return tmc_fail(call, TOPOML_E_DEVICE, "%s", why);
    ctx->device = wanted < 0 ? 0 : wanted;
    if (ctx->device >= TMC_MAX_DEVICES)
        return tmc_fail(call, TOPOML_E_DEVICE, "CUDA device %d: more than %d devices", ctx->device,
                        TMC_MAX_DEVICES);
    cudaError_t err = cudaGetDevice(&ctx->previous_device);
    if (err != cudaSuccess)
        return tmc_cuda_fail(ctx, err, "cudaGetDevice");
    err = cudaSetDevice(ctx->device);
    if (err != cudaSuccess)
        return tmc_cuda_fail(ctx, err, "cudaSetDevice");
    cudaStream_t *mine[2] = {&st->streams[ctx->device], &st->copy_streams[ctx->device]};
    for (int s = 0; s < 2; s++) {
        if (*mine[s])
            continue;
        /* Non-blocking: the host application's work on the legacy default
         * stream neither waits for ours nor makes ours wait. */
        err = cudaStreamCreateWithFlags(mine[s], cudaStreamNonBlocking);
        if (err != cudaSuccess) {
            *mine[s] = NULL;
            return tmc_cuda_fail(ctx, err, "cudaStreamCreateWithFlags");
        }
    }
    ctx->stream = st->streams[ctx->device];
    ctx->copy_stream = st->copy_streams[ctx->device];
    size_t free_b = 0, total_b = 0;
    st->free_at_begin = cudaMemGetInfo(&free_b, &total_b) == cudaSuccess ? free_b : 0;
    st->device_high = 0;
    return TOPOML_OK;
}

void tmc_note_device_use(const tmc_ctx *ctx)
{
    size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess)
        return;
    tmc_state *st = ctx->st;
    if (st->free_at_begin > free_b && st->free_at_begin - free_b > st->device_high)
        st->device_high = st->free_at_begin - free_b;
}

int tmc_end(tmc_ctx *ctx, int status)
{
    /* Leave the caller's thread on the device it had chosen. */
    if (ctx->previous_device >= 0) {
        cudaError_t err = cudaSetDevice(ctx->previous_device);
        if (err != cudaSuccess && status == TOPOML_OK)
            status = tmc_cuda_fail(ctx, err, "cudaSetDevice (restoring the caller's device)");
        ctx->previous_device = -1;
    }
    return status;
}

void tmc_state_release(tmc_state *st)
{
    /* No stream, no CUDA call: a state that never ran work may live on a
     * machine without a driver. */
    bool any = false;
    for (int d = 0; d < TMC_MAX_DEVICES; d++)
        any = any || st->streams[d] || st->copy_streams[d];
    if (!any)
        return;
    int previous = -1;
    if (cudaGetDevice(&previous) != cudaSuccess)
        previous = -1;
    for (int d = 0; d < TMC_MAX_DEVICES; d++) {
        if (!st->streams[d] && !st->copy_streams[d])
            continue;
        /* Errors here have no one to go to: the state is going away. */
        if (cudaSetDevice(d) == cudaSuccess) {
            if (st->streams[d])
                (void)cudaStreamDestroy(st->streams[d]);
            if (st->copy_streams[d])
                (void)cudaStreamDestroy(st->copy_streams[d]);
        }
        st->streams[d] = st->copy_streams[d] = NULL;
    }
    if (previous >= 0)
        (void)cudaSetDevice(previous);
}

static uint64_t margin_of(uint64_t total)
{
    uint64_t m = total / 50;
    return m > TMC_MARGIN_MIN ? m : TMC_MARGIN_MIN;
}

uint64_t tmc_usable_device_memory(const tmc_ctx *ctx)
{
    size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess)
        return 0;
    uint64_t margin = margin_of(total_b);
    uint64_t usable = free_b > margin ? free_b - margin : 0;
    if (ctx->call->max_memory && usable > ctx->call->max_memory)
        usable = ctx->call->max_memory;
    return usable;
}

int tmc_check_device_memory(const tmc_ctx *ctx, uint64_t bytes, const char *what)
{
    if (ctx->call->max_memory && bytes > ctx->call->max_memory)
        return tmc_fail(ctx->call, TOPOML_E_LIMIT,
                        "%s needs %llu bytes of device memory, more than the memory limit %llu",
                        what, (unsigned long long)bytes, (unsigned long long)ctx->call->max_memory);
    size_t free_b = 0, total_b = 0;
    cudaError_t err = cudaMemGetInfo(&free_b, &total_b);
    if (err != cudaSuccess)
        return tmc_cuda_fail(ctx, err, "cudaMemGetInfo");
    uint64_t margin = margin_of(total_b);
    if (bytes > (free_b > margin ? free_b - margin : 0))
        return tmc_fail(ctx->call, TOPOML_E_LIMIT,
                        "%s needs %.1f MiB of device memory; CUDA device %d has %.1f MiB free "
                        "of %.1f MiB (%.1f MiB kept in reserve)",
                        what, bytes / 1048576.0, ctx->device, free_b / 1048576.0,
                        total_b / 1048576.0, margin / 1048576.0);
    return TOPOML_OK;
}

void *tmc_host_alloc(const tmc_ctx *ctx, uint64_t bytes, const char *what, int *status)
{
    const topoml_call_v1 *call = ctx->call;
    if (call->max_memory && bytes > call->max_memory) {
        *status =
            tmc_fail(call, TOPOML_E_LIMIT, "%s needs %llu bytes, more than the memory limit %llu",
                     what, (unsigned long long)bytes, (unsigned long long)call->max_memory);
        return NULL;
    }
    if (bytes > SIZE_MAX) {
        *status = tmc_fail(call, TOPOML_E_OVERFLOW, "%s: %llu bytes do not fit in size_t", what,
                           (unsigned long long)bytes);
        return NULL;
    }
    void *p = call->alloc(call->host_data, (size_t)(bytes ? bytes : 1));
    if (!p) {
        *status = tmc_fail(call, TOPOML_E_NOMEM, "out of memory for %s (%llu bytes)", what,
                           (unsigned long long)bytes);
        return NULL;
    }
    *status = TOPOML_OK;
    return p;
}

void tmc_host_free(const tmc_ctx *ctx, void *p)
{
    if (p)
        ctx->call->free(ctx->call->host_data, p);
}

bool tmc_cancelled(const tmc_ctx *ctx, const char *stage, uint64_t done, uint64_t total)
{
    const topoml_call_v1 *call = ctx->call;
    return call->progress && call->progress(call->host_data, stage, done, total) != 0;
}

int tmc_check_input(const topoml_call_v1 *call, const topoml_input_v1 *in, uint32_t kinds)
{
    /* The fields appended in core 0.4 (memory, device, stream) may be
     * missing: an older core's input is host memory. */
    if (!in || in->struct_size < TOPOML_INPUT_V1_MIN_SIZE)
        return tmc_fail(call, TOPOML_E_INVALID, "input struct missing or too short");
    if (tmc_on_device(in)) {
        int status = tmc_device_input_check(call, in);
        if (status != TOPOML_OK)
            return status;
    }
    if (in->kind >= TOPOML_INPUT_KIND_COUNT || !(kinds & (1u << in->kind)))
        return tmc_fail(call, TOPOML_E_UNSUPPORTED, "input kind %u not supported by this op",
                        in->kind);
    if (in->kind != TOPOML_INPUT_SPARSE && in->dtype >= TOPOML_DTYPE_COUNT)
        return tmc_fail(call, TOPOML_E_INVALID, "unknown dtype %u", in->dtype);
    if (in->kind == TOPOML_INPUT_POINTS && in->metric >= TOPOML_METRIC_COUNT)
        return tmc_fail(call, TOPOML_E_INVALID, "unknown metric %u", in->metric);
    if (in->n > UINT32_MAX)
        return tmc_fail(call, TOPOML_E_OVERFLOW, "%llu points: more than 2^32-1",
                        (unsigned long long)in->n);
    if (in->n > 1 && in->kind != TOPOML_INPUT_SPARSE && !in->data)
        return tmc_fail(call, TOPOML_E_INVALID, "input has no data");
    if (in->kind == TOPOML_INPUT_SPARSE && in->n_edges && !in->edges)
        return tmc_fail(call, TOPOML_E_INVALID, "sparse input has no edges");
    if (in->kind == TOPOML_INPUT_POINTS) {
        uint64_t elems;
        if (__builtin_mul_overflow(in->n, in->dim, &elems) ||
            __builtin_mul_overflow(elems, (uint64_t)8, &elems))
            return tmc_fail(call, TOPOML_E_OVERFLOW, "%llu points of dimension %llu overflow",
                            (unsigned long long)in->n, (unsigned long long)in->dim);
    }
    return TOPOML_OK;
}
