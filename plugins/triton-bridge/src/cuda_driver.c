/*
 * cuda_driver.c — open libcuda.so.1 with dlopen and resolve the driver entry
 * points the backend calls (cuda_driver.h). Nothing here initialises the
 * driver or touches a device; device.c does that.
 */
#include "cuda_driver.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

/* The exported names. The _v2 ones are the size_t/64-bit variants that
 * cuda.h maps the plain names to; a driver keeps exporting them forever. */
static const struct {
    const char *symbol;
    size_t offset;
} entry_points[] = {
#define TB_ENTRY(field, symbol)                                                                    \
    {                                                                                              \
        symbol, offsetof(tb_cuda, field)                                                           \
    }
    TB_ENTRY(cuInit, "cuInit"),
    TB_ENTRY(cuDriverGetVersion, "cuDriverGetVersion"),
    TB_ENTRY(cuGetErrorName, "cuGetErrorName"),
    TB_ENTRY(cuGetErrorString, "cuGetErrorString"),
    TB_ENTRY(cuDeviceGetCount, "cuDeviceGetCount"),
    TB_ENTRY(cuDeviceGet, "cuDeviceGet"),
    TB_ENTRY(cuDeviceGetName, "cuDeviceGetName"),
    TB_ENTRY(cuDeviceGetAttribute, "cuDeviceGetAttribute"),
    TB_ENTRY(cuDeviceTotalMem, "cuDeviceTotalMem_v2"),
    TB_ENTRY(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"),
    TB_ENTRY(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2"),
    TB_ENTRY(cuCtxPushCurrent, "cuCtxPushCurrent_v2"),
    TB_ENTRY(cuCtxPopCurrent, "cuCtxPopCurrent_v2"),
    TB_ENTRY(cuCtxSynchronize, "cuCtxSynchronize"),
    TB_ENTRY(cuModuleLoadData, "cuModuleLoadData"),
    TB_ENTRY(cuModuleUnload, "cuModuleUnload"),
    TB_ENTRY(cuModuleGetFunction, "cuModuleGetFunction"),
    TB_ENTRY(cuFuncSetAttribute, "cuFuncSetAttribute"),
    TB_ENTRY(cuLaunchKernel, "cuLaunchKernel"),
    TB_ENTRY(cuMemAlloc, "cuMemAlloc_v2"),
    TB_ENTRY(cuMemFree, "cuMemFree_v2"),
    TB_ENTRY(cuMemcpyHtoD, "cuMemcpyHtoD_v2"),
    TB_ENTRY(cuMemcpyDtoH, "cuMemcpyDtoH_v2"),
    TB_ENTRY(cuMemsetD8, "cuMemsetD8_v2"),
    TB_ENTRY(cuMemGetInfo, "cuMemGetInfo_v2"),
#undef TB_ENTRY
};

int tb_cuda_open(tb_cuda *cu, const char *library, char *why, size_t why_size)
{
    memset(cu, 0, sizeof *cu);
    if (library == NULL)
        library = "libcuda.so.1";
    dlerror();
    void *lib = dlopen(library, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        const char *err = dlerror();
        snprintf(why, why_size, "no CUDA driver: %s", err ? err : library);
        return -1;
    }
    for (size_t k = 0; k < sizeof entry_points / sizeof entry_points[0]; k++) {
        dlerror();
        void *sym = dlsym(lib, entry_points[k].symbol);
        if (sym == NULL) {
            snprintf(why, why_size, "%s lacks %s: the CUDA driver is too old or not a CUDA driver",
                     library, entry_points[k].symbol);
            dlclose(lib);
            memset(cu, 0, sizeof *cu);
            return -1;
        }
        /* POSIX guarantees that a data pointer from dlsym converts to a
         * function pointer; store it through the byte image of the slot. */
        memcpy((char *)cu + entry_points[k].offset, &sym, sizeof sym);
    }
    cu->lib = lib;
    return 0;
}

void tb_cuda_close(tb_cuda *cu)
{
    if (cu->lib != NULL)
        dlclose(cu->lib);
    memset(cu, 0, sizeof *cu);
}

const char *tb_cuda_describe(const tb_cuda *cu, tb_curesult status, char *buf, size_t size)
{
    const char *name = NULL, *text = NULL;
    if (cu->cuGetErrorName != NULL && cu->cuGetErrorName(status, &name) != TB_CUDA_SUCCESS)
        name = NULL;
    if (cu->cuGetErrorString != NULL && cu->cuGetErrorString(status, &text) != TB_CUDA_SUCCESS)
        text = NULL;
    if (name != NULL && text != NULL)
        snprintf(buf, size, "%s (%s)", name, text);
    else if (name != NULL)
        snprintf(buf, size, "%s", name);
    else
        snprintf(buf, size, "CUDA error %d", status);
    return buf;
}
