/*
 * test_cuda_driver_abi.c — src/cuda_driver.h restates part of the CUDA
 * driver's ABI so that the backend builds without cuda.h; where cuda.h is
 * installed, this checks every restated value and type against it at
 * compile time. Running it only says that it compiled.
 */
#include <cuda.h>

#define TB_CURESULT CUresult
#include "cuda_driver.h"

_Static_assert(TB_CUDA_SUCCESS == CUDA_SUCCESS, "CUDA_SUCCESS");
_Static_assert(TB_CUDA_ERROR_NO_DEVICE == CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE");
_Static_assert(TB_CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X == CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, "");
_Static_assert(TB_CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y == CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, "");
_Static_assert(TB_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR ==
                   CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
               "");
_Static_assert(TB_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR ==
                   CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
               "");
_Static_assert(TB_CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN ==
                   CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
               "");
_Static_assert(TB_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES ==
                   CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
               "");
_Static_assert(sizeof(tb_curesult) == sizeof(CUresult), "CUresult");
_Static_assert(sizeof(tb_cudevice) == sizeof(CUdevice), "CUdevice");
_Static_assert(sizeof(tb_cudeviceptr) == sizeof(CUdeviceptr), "CUdeviceptr");

/* The entry points' types, where they involve no handle types (the handles
 * are distinct struct pointers on each side). Only types: nothing links. */
#define SAME_TYPE(field, symbol)                                                                   \
    _Static_assert(                                                                                \
        __builtin_types_compatible_p(__typeof__(((tb_cuda *)0)->field), __typeof__(&symbol)),      \
        #symbol)
SAME_TYPE(cuInit, cuInit);
SAME_TYPE(cuDriverGetVersion, cuDriverGetVersion);
SAME_TYPE(cuDeviceGetCount, cuDeviceGetCount);
SAME_TYPE(cuDeviceGet, cuDeviceGet);
SAME_TYPE(cuDeviceGetName, cuDeviceGetName);
SAME_TYPE(cuDeviceTotalMem, cuDeviceTotalMem_v2);
SAME_TYPE(cuDevicePrimaryCtxRelease, cuDevicePrimaryCtxRelease_v2);
SAME_TYPE(cuCtxSynchronize, cuCtxSynchronize);
SAME_TYPE(cuMemAlloc, cuMemAlloc_v2);
SAME_TYPE(cuMemFree, cuMemFree_v2);
SAME_TYPE(cuMemcpyHtoD, cuMemcpyHtoD_v2);
SAME_TYPE(cuMemcpyDtoH, cuMemcpyDtoH_v2);
SAME_TYPE(cuMemsetD8, cuMemsetD8_v2);
SAME_TYPE(cuMemGetInfo, cuMemGetInfo_v2);

int main(void)
{
    return 0;
}
