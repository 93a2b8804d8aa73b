/*
 * cuda_driver.h — the part of the CUDA driver API that the triton-bridge
 * backend uses, loaded at run time from libcuda.so.1.
 *
 * The plugin never links against libcuda and never includes cuda.h: the
 * types and constants below are the driver's ABI (stable since CUDA 4; the
 * _v2 entry points are the 64-bit ones every driver since CUDA 4.0 exports),
 * so the plugin builds without a CUDA toolkit and loads on machines with no
 * driver at all, where probe says why it cannot run.
 * tests/test_cuda_driver_abi.c checks these against cuda.h where one exists.
 *
 * Not here: the runtime API, streams other than the legacy default stream,
 * anything the backend does not call.
 */
#ifndef TB_CUDA_DRIVER_H
#define TB_CUDA_DRIVER_H

#include <stddef.h>
#include <stdint.h>

/* CUresult is an enum of int's size and passing; tests/test_cuda_driver_abi.c
 * defines TB_CURESULT as CUresult to compare the prototypes with cuda.h's. */
#ifndef TB_CURESULT
#define TB_CURESULT int
#endif
typedef TB_CURESULT tb_curesult;
typedef int tb_cudevice;
typedef struct tb_cuctx_st *tb_cucontext;
typedef struct tb_cumod_st *tb_cumodule;
typedef struct tb_cufunc_st *tb_cufunction;
typedef struct tb_custream_st *tb_custream;
typedef unsigned long long tb_cudeviceptr;

#define TB_CUDA_SUCCESS 0
#define TB_CUDA_ERROR_NO_DEVICE 100

/* CUdevice_attribute values */
#define TB_CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X 5
#define TB_CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y 6
#define TB_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR 75
#define TB_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR 76
#define TB_CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN 97

/* CUfunction_attribute values */
#define TB_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES 8

/* The driver entry points, resolved by tb_cuda_open. Every one is non-NULL
 * once tb_cuda_open has succeeded. */
typedef struct tb_cuda {
    void *lib; /* dlopen handle of libcuda.so.1 */
    tb_curesult (*cuInit)(unsigned flags);
    tb_curesult (*cuDriverGetVersion)(int *version);
    tb_curesult (*cuGetErrorName)(tb_curesult error, const char **name);
    tb_curesult (*cuGetErrorString)(tb_curesult error, const char **text);
    tb_curesult (*cuDeviceGetCount)(int *count);
    tb_curesult (*cuDeviceGet)(tb_cudevice *device, int ordinal);
    tb_curesult (*cuDeviceGetName)(char *name, int len, tb_cudevice device);
    tb_curesult (*cuDeviceGetAttribute)(int *value, int attribute, tb_cudevice device);
    tb_curesult (*cuDeviceTotalMem)(size_t *bytes, tb_cudevice device);
    tb_curesult (*cuDevicePrimaryCtxRetain)(tb_cucontext *ctx, tb_cudevice device);
    tb_curesult (*cuDevicePrimaryCtxRelease)(tb_cudevice device);
    tb_curesult (*cuCtxPushCurrent)(tb_cucontext ctx);
    tb_curesult (*cuCtxPopCurrent)(tb_cucontext *ctx);
    tb_curesult (*cuCtxSynchronize)(void);
    tb_curesult (*cuModuleLoadData)(tb_cumodule *module, const void *image);
    tb_curesult (*cuModuleUnload)(tb_cumodule module);
    tb_curesult (*cuModuleGetFunction)(tb_cufunction *fn, tb_cumodule module, const char *name);
    tb_curesult (*cuFuncSetAttribute)(tb_cufunction fn, int attribute, int value);
    tb_curesult (*cuLaunchKernel)(tb_cufunction fn, unsigned gx, unsigned gy, unsigned gz,
                                  unsigned bx, unsigned by, unsigned bz, unsigned shared,
                                  tb_custream stream, void **params, void **extra);
    tb_curesult (*cuMemAlloc)(tb_cudeviceptr *ptr, size_t bytes);
    tb_curesult (*cuMemFree)(tb_cudeviceptr ptr);
    tb_curesult (*cuMemcpyHtoD)(tb_cudeviceptr dst, const void *src, size_t bytes);
    tb_curesult (*cuMemcpyDtoH)(void *dst, tb_cudeviceptr src, size_t bytes);
    tb_curesult (*cuMemsetD8)(tb_cudeviceptr dst, unsigned char value, size_t count);
    tb_curesult (*cuMemGetInfo)(size_t *free_bytes, size_t *total_bytes);
} tb_cuda;

/* Load `library` (NULL: "libcuda.so.1") and resolve every entry point. On
 * failure returns non-zero with the reason in `why`; *cu is then zeroed and
 * holds nothing to close. Does not call cuInit. */
int tb_cuda_open(tb_cuda *cu, const char *library, char *why, size_t why_size);

/* Unload the library; a zeroed or failed tb_cuda is fine. */
void tb_cuda_close(tb_cuda *cu);

/* "CUDA_ERROR_X (text)" for a driver status, into buf; returns buf. */
const char *tb_cuda_describe(const tb_cuda *cu, tb_curesult status, char *buf, size_t size);

#endif /* TB_CUDA_DRIVER_H */
