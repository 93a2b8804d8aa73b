/*
 * device.c — the driver and the devices of one backend state: initialise the
 * driver, check a device's compute capability against the cubins' target,
 * retain its primary context, load every kernel, and make that context
 * current around an op.
 *
 * The primary context is the one the CUDA runtime (and so PyTorch) uses, so
 * the backend shares a device with a host application instead of creating a
 * second context on it. Every driver call is checked; nothing here exits,
 * aborts or prints.
 */
#include <stdio.h>
#include <string.h>

#include "tb.h"

int tb_driver_init(tb_state *st)
{
    if (st->driver_tried)
        return st->driver_status;
    st->driver_tried = 1;
    st->driver_status = TOPOML_E_UNSUPPORTED;
    if (tb_cuda_open(&st->cu, st->driver_library, st->driver_why, sizeof st->driver_why) != 0)
        return st->driver_status;
    char text[160];
    tb_curesult r = st->cu.cuInit(0);
    if (r != TB_CUDA_SUCCESS) {
        snprintf(st->driver_why, sizeof st->driver_why, "cuInit failed: %s",
                 tb_cuda_describe(&st->cu, r, text, sizeof text));
        return st->driver_status;
    }
    int count = 0;
    r = st->cu.cuDeviceGetCount(&count);
    if (r != TB_CUDA_SUCCESS) {
        snprintf(st->driver_why, sizeof st->driver_why, "cuDeviceGetCount failed: %s",
                 tb_cuda_describe(&st->cu, r, text, sizeof text));
        return st->driver_status;
    }
    if (count <= 0) {
        snprintf(st->driver_why, sizeof st->driver_why, "the CUDA driver reports no device");
        return st->driver_status;
    }
    st->device_count = count < TB_MAX_DEVICES ? count : TB_MAX_DEVICES;
    st->driver_status = TOPOML_OK;
    st->driver_why[0] = '\0';
    return TOPOML_OK;
}

/* Set d->status/why from a failed driver call and return the status. */
static int device_error(tb_state *st, tb_device *d, tb_curesult r, const char *what)
{
    char text[160];
    snprintf(d->why, sizeof d->why, "device %d: %s failed: %s", (int)d->dev, what,
             tb_cuda_describe(&st->cu, r, text, sizeof text));
    d->status = TOPOML_E_DEVICE;
    return d->status;
}

static void device_release(tb_state *st, tb_device *d)
{
    if (d->ctx != NULL) {
        int pushed = st->cu.cuCtxPushCurrent(d->ctx) == TB_CUDA_SUCCESS;
        if (pushed)
            tb_device_buffers_drop(st, d);
        for (int k = 0; k < TB_KERNEL_COUNT; k++) {
            /* Unloading can only fail if the context is already gone, and
             * then there is nothing left to release. */
            if (pushed && d->modules[k] != NULL)
                (void)st->cu.cuModuleUnload(d->modules[k]);
            d->modules[k] = NULL;
            d->functions[k] = NULL;
        }
        if (pushed) {
            tb_cucontext popped;
            (void)st->cu.cuCtxPopCurrent(&popped);
        }
        (void)st->cu.cuDevicePrimaryCtxRelease(d->dev);
        d->ctx = NULL;
    }
}

/* Everything that makes a device ready (tb.h). Sets d->status and d->why. */
static int device_open(tb_state *st, int ordinal, tb_device *d)
{
    tb_curesult r;
    d->tried = 1;
    d->dev = ordinal;
    if ((r = st->cu.cuDeviceGet(&d->dev, ordinal)) != TB_CUDA_SUCCESS)
        return device_error(st, d, r, "cuDeviceGet");
    if ((r = st->cu.cuDeviceGetName(d->name, (int)sizeof d->name, d->dev)) != TB_CUDA_SUCCESS)
        return device_error(st, d, r, "cuDeviceGetName");
    d->name[sizeof d->name - 1] = '\0';
    static const struct {
        int attribute;
        size_t offset;
        const char *what;
    } attrs[] = {
        {TB_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, offsetof(tb_device, cc_major),
         "compute capability"},
        {TB_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, offsetof(tb_device, cc_minor),
         "compute capability"},
        {TB_CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, offsetof(tb_device, max_grid_x), "grid limit"},
        {TB_CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, offsetof(tb_device, max_grid_y), "grid limit"},
    };
    for (size_t k = 0; k < sizeof attrs / sizeof attrs[0]; k++) {
        r = st->cu.cuDeviceGetAttribute((int *)((char *)d + attrs[k].offset), attrs[k].attribute,
                                        d->dev);
        if (r != TB_CUDA_SUCCESS)
            return device_error(st, d, r, attrs[k].what);
    }
    if ((r = st->cu.cuDeviceTotalMem(&d->total_mem, d->dev)) != TB_CUDA_SUCCESS)
        return device_error(st, d, r, "cuDeviceTotalMem");

    /* The cubins hold sm_90a machine code, which runs on compute capability
     * 9.0 and nothing else: no PTX is embedded to be compiled for another. */
    if (d->cc_major * 10 + d->cc_minor != TB_TARGET_CC) {
        char name[sizeof d->name];
        memcpy(name, d->name, sizeof name);
        snprintf(d->why, sizeof d->why,
                 "device %d (%s) has compute capability %d.%d; the triton-bridge kernels are "
                 "built for %s only",
                 ordinal, name, d->cc_major, d->cc_minor, TB_TARGET_NAME);
        d->status = TOPOML_E_UNSUPPORTED;
        return d->status;
    }

    if ((r = st->cu.cuDevicePrimaryCtxRetain(&d->ctx, d->dev)) != TB_CUDA_SUCCESS) {
        d->ctx = NULL;
        return device_error(st, d, r, "cuDevicePrimaryCtxRetain");
    }
    if ((r = st->cu.cuCtxPushCurrent(d->ctx)) != TB_CUDA_SUCCESS) {
        device_error(st, d, r, "cuCtxPushCurrent");
        device_release(st, d);
        return d->status;
    }
    int optin = 0;
    r = st->cu.cuDeviceGetAttribute(
        &optin, TB_CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, d->dev);
    for (int k = 0; r == TB_CUDA_SUCCESS && k < TB_KERNEL_COUNT; k++) {
        const tb_kernel_spec *ks = &tb_kernels[k];
        r = st->cu.cuModuleLoadData(&d->modules[k], ks->cubin);
        if (r != TB_CUDA_SUCCESS) {
            d->modules[k] = NULL;
            device_error(st, d, r, "cuModuleLoadData");
            snprintf(d->why + strlen(d->why), sizeof d->why - strlen(d->why), " (kernel %s)",
                     ks->name);
            break;
        }
        r = st->cu.cuModuleGetFunction(&d->functions[k], d->modules[k], ks->function);
        if (r != TB_CUDA_SUCCESS) {
            device_error(st, d, r, "cuModuleGetFunction");
            break;
        }
        /* Above 48 KiB a kernel must opt in to its dynamic shared memory, and
         * only as much as the device allows. */
        if (ks->shared > 49152) {
            if ((int)ks->shared > optin) {
                snprintf(d->why, sizeof d->why,
                         "device %d: kernel %s needs %u bytes of shared memory, the device "
                         "allows %d",
                         ordinal, ks->name, ks->shared, optin);
                d->status = TOPOML_E_UNSUPPORTED;
                r = -1;
                break;
            }
            r = st->cu.cuFuncSetAttribute(d->functions[k],
                                          TB_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                          (int)ks->shared);
            if (r != TB_CUDA_SUCCESS) {
                device_error(st, d, r, "cuFuncSetAttribute");
                break;
            }
        }
    }
    if (r != TB_CUDA_SUCCESS && d->why[0] == '\0')
        device_error(st, d, r, "cuDeviceGetAttribute");
    tb_cucontext popped;
    tb_curesult rp = st->cu.cuCtxPopCurrent(&popped);
    if (r == TB_CUDA_SUCCESS && rp != TB_CUDA_SUCCESS)
        device_error(st, d, rp, "cuCtxPopCurrent");
    if (r != TB_CUDA_SUCCESS || rp != TB_CUDA_SUCCESS) {
        device_release(st, d);
        return d->status;
    }
    d->status = TOPOML_OK;
    return TOPOML_OK;
}

int tb_device_get(tb_state *st, int ordinal, tb_device **out, char *why, size_t why_size)
{
    *out = NULL;
    int status = tb_driver_init(st);
    if (status != TOPOML_OK) {
        snprintf(why, why_size, "%s", st->driver_why);
        return status;
    }
    if (ordinal < 0 || ordinal >= st->device_count) {
        snprintf(why, why_size, "there is no CUDA device %d (%d found)", ordinal, st->device_count);
        return TOPOML_E_DEVICE;
    }
    tb_device *d = &st->devices[ordinal];
    if (!d->tried)
        device_open(st, ordinal, d);
    if (d->status != TOPOML_OK) {
        snprintf(why, why_size, "%s", d->why);
        return d->status;
    }
    *out = d;
    return TOPOML_OK;
}

int tb_device_for_call(tb_state *st, const topoml_call_v1 *call, tb_device **out)
{
    int ordinal = 0;
    if (call->struct_size >= offsetof(topoml_call_v1, device) + sizeof call->device &&
        call->device >= 0)
        ordinal = call->device;
    char why[300];
    int status = tb_device_get(st, ordinal, out, why, sizeof why);
    if (status != TOPOML_OK)
        return tb_fail(call, status, "triton-bridge: %s", why);
    return TOPOML_OK;
}

void tb_devices_close(tb_state *st)
{
    for (int k = 0; k < TB_MAX_DEVICES; k++)
        if (st->devices[k].tried)
            device_release(st, &st->devices[k]);
}

int tb_enter(tb_state *st, const topoml_call_v1 *call, tb_device *d)
{
    return tb_check(st, call, st->cu.cuCtxPushCurrent(d->ctx), TOPOML_E_DEVICE, "cuCtxPushCurrent");
}

void tb_leave(tb_state *st)
{
    tb_cucontext popped;
    /* Fails only if nothing is current, which tb_enter rules out. */
    (void)st->cu.cuCtxPopCurrent(&popped);
}
