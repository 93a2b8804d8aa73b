/*
 * fake_libcuda.c — a stand-in for libcuda.so.1 that runs the triton-bridge
 * kernels' contracts on the CPU, so that everything the backend does on the
 * host (driver loading, device checks, context push/pop, bands, launch
 * chunking, the edge-buffer retry, copies, cleanup) is tested on machines
 * without a GPU. Tests put its folder first on LD_LIBRARY_PATH.
 *
 * It recognises a module by comparing the image with the generated cubins,
 * and a launch by the module; it then does what the kernel's docstring (in
 * the kernels/ folder) says, tile by tile, with the kernel's block sizes,
 * checking every store against the allocation it lands in
 * (CUDA_ERROR_ILLEGAL_ADDRESS otherwise). Edge tiles take their slots in reverse order, so nothing
 * may rely on the order the kernel emits edges in.
 *
 * Behaviour is set by environment variables, read at each call:
 *   TB_FAKE_CUDA_INIT=<code>     cuInit returns <code>
 *   TB_FAKE_CUDA_DEVICES=<n>     device count (default 1)
 *   TB_FAKE_CUDA_CC=<cc>[,<cc>...]  compute capability major*10+minor of
 *                                device 0, 1, ... (the last one repeats; 90)
 *   TB_FAKE_CUDA_MEMORY=<bytes>  device memory (default 1 GiB)
 *   TB_FAKE_CUDA_GRID_X=<n>, TB_FAKE_CUDA_GRID_Y=<n>   grid limits
 *   TB_FAKE_CUDA_LOAD=<code>     cuModuleLoadData returns <code>
 * tb_fake_cuda_leaks() says what is still allocated, retained or pushed;
 * tb_fake_cuda_launches(name) how many launches the kernel variant `name`
 * (a tb_kernels[] name) has had; tb_fake_cuda_allocs() how many successful
 * cuMemAlloc calls there have been. A variant launched with arguments that
 * break its divisibility assumptions fails with CUDA_ERROR_MISALIGNED_ADDRESS.
 *
 * Not a model of timing, streams, or concurrency.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_driver.h"
#include "tb_kernels.h"

#define EXPORT __attribute__((visibility("default")))

enum {
    OK = 0,
    INVALID_VALUE = 1,
    OUT_OF_MEMORY = 2,
    NOT_INITIALIZED = 3,
    NO_DEVICE = 100,
    INVALID_DEVICE = 101,
    INVALID_CONTEXT = 201,
    INVALID_HANDLE = 400,
    NOT_FOUND = 500,
    ILLEGAL_ADDRESS = 700,
    MISALIGNED_ADDRESS = 716,
    LAUNCH_FAILED = 719
};

static long env_long(const char *name, long fallback)
{
    const char *v = getenv(name);
    return v != NULL && *v != '\0' ? strtol(v, NULL, 0) : fallback;
}

static int initialised;
static int sticky; /* a launch failed: like the real driver, every later call fails */
static unsigned long launched[TB_KERNEL_COUNT]; /* launches per tb_kernels[] entry */

/* ---- allocations ---- */

typedef struct block {
    struct block *next;
    uint64_t size;
    unsigned char *data;
} block;
static block *blocks;
static uint64_t used;
static unsigned long allocs; /* successful cuMemAlloc calls */

static uint64_t memory_total(void)
{
    return (uint64_t)env_long("TB_FAKE_CUDA_MEMORY", 1L << 30);
}

static block *find_block(uint64_t ptr)
{
    for (block *b = blocks; b != NULL; b = b->next)
        if (ptr >= (uint64_t)(uintptr_t)b->data && ptr < (uint64_t)(uintptr_t)b->data + b->size)
            return b;
    return NULL;
}

/* True when [ptr, ptr + bytes) lies inside one allocation. */
static int span_ok(uint64_t ptr, uint64_t bytes)
{
    block *b = find_block(ptr);
    return b != NULL && ptr + bytes <= (uint64_t)(uintptr_t)b->data + b->size;
}

/* ---- contexts and modules ---- */

static int ctx_stack[64];
static int ctx_depth;
static int retained[64];
static int modules_loaded;

typedef struct fake_module {
    int kernel;
} fake_module;

static int current_ok(void)
{
    return ctx_depth > 0;
}

EXPORT unsigned long tb_fake_cuda_launches(const char *name)
{
    for (int k = 0; k < TB_KERNEL_COUNT; k++)
        if (strcmp(tb_kernels[k].name, name) == 0)
            return launched[k];
    return 0;
}

EXPORT unsigned long tb_fake_cuda_allocs(void)
{
    return allocs;
}

EXPORT int tb_fake_cuda_leaks(char *text, size_t size)
{
    int retains = 0;
    for (int k = 0; k < 64; k++)
        retains += retained[k];
    int n_blocks = 0;
    for (block *b = blocks; b != NULL; b = b->next)
        n_blocks++;
    snprintf(text, size, "%d allocations (%llu bytes), %d contexts retained, %d pushed, %d modules",
             n_blocks, (unsigned long long)used, retains, ctx_depth, modules_loaded);
    return n_blocks + retains + ctx_depth + modules_loaded;
}

/* ---- the driver API ---- */

EXPORT tb_curesult cuInit(unsigned flags)
{
    if (flags != 0)
        return INVALID_VALUE;
    long code = env_long("TB_FAKE_CUDA_INIT", 0);
    if (code != 0)
        return (tb_curesult)code;
    initialised = 1;
    return OK;
}

EXPORT tb_curesult cuDriverGetVersion(int *version)
{
    *version = 12080;
    return OK;
}

static const struct {
    int code;
    const char *name, *text;
} errors[] = {
    {OK, "CUDA_SUCCESS", "no error"},
    {INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {209, "CUDA_ERROR_NO_BINARY_FOR_GPU",
     "no kernel image is available for execution on the device"},
    {INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"},
    {LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
};

EXPORT tb_curesult cuGetErrorName(tb_curesult error, const char **name)
{
    for (size_t k = 0; k < sizeof errors / sizeof errors[0]; k++)
        if (errors[k].code == error) {
            *name = errors[k].name;
            return OK;
        }
    *name = NULL;
    return INVALID_VALUE;
}

EXPORT tb_curesult cuGetErrorString(tb_curesult error, const char **text)
{
    for (size_t k = 0; k < sizeof errors / sizeof errors[0]; k++)
        if (errors[k].code == error) {
            *text = errors[k].text;
            return OK;
        }
    *text = NULL;
    return INVALID_VALUE;
}

EXPORT tb_curesult cuDeviceGetCount(int *count)
{
    if (!initialised)
        return NOT_INITIALIZED;
    *count = (int)env_long("TB_FAKE_CUDA_DEVICES", 1);
    return OK;
}

EXPORT tb_curesult cuDeviceGet(tb_cudevice *device, int ordinal)
{
    if (!initialised)
        return NOT_INITIALIZED;
    if (ordinal < 0 || ordinal >= env_long("TB_FAKE_CUDA_DEVICES", 1) || ordinal >= 64)
        return INVALID_DEVICE;
    *device = ordinal;
    return OK;
}

EXPORT tb_curesult cuDeviceGetName(char *name, int len, tb_cudevice device)
{
    snprintf(name, (size_t)len, "topoml fake device %d", device);
    return OK;
}

static long device_cc(tb_cudevice device)
{
    const char *v = getenv("TB_FAKE_CUDA_CC");
    long cc = 90;
    for (int k = 0; v != NULL && *v != '\0' && k <= device; k++) {
        char *end;
        cc = strtol(v, &end, 10);
        v = *end == ',' ? end + 1 : NULL;
    }
    return cc;
}

EXPORT tb_curesult cuDeviceGetAttribute(int *value, int attribute, tb_cudevice device)
{
    long cc = device_cc(device);
    switch (attribute) {
    case TB_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *value = (int)(cc / 10); return OK;
    case TB_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *value = (int)(cc % 10); return OK;
    case TB_CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X:
        *value = (int)env_long("TB_FAKE_CUDA_GRID_X", 2147483647L);
        return OK;
    case TB_CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
        *value = (int)env_long("TB_FAKE_CUDA_GRID_Y", 65535);
        return OK;
    case TB_CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *value = 232448; return OK;
    }
    return INVALID_VALUE;
}

EXPORT tb_curesult cuDeviceTotalMem_v2(size_t *bytes, tb_cudevice device)
{
    (void)device;
    *bytes = (size_t)memory_total();
    return OK;
}

EXPORT tb_curesult cuDevicePrimaryCtxRetain(tb_cucontext *ctx, tb_cudevice device)
{
    if (device < 0 || device >= 64)
        return INVALID_DEVICE;
    retained[device]++;
    *ctx = (tb_cucontext)(uintptr_t)(0x1000 + 16 * device);
    return OK;
}

EXPORT tb_curesult cuDevicePrimaryCtxRelease_v2(tb_cudevice device)
{
    if (device < 0 || device >= 64 || retained[device] == 0)
        return INVALID_CONTEXT;
    retained[device]--;
    return OK;
}

EXPORT tb_curesult cuCtxPushCurrent_v2(tb_cucontext ctx)
{
    if (ctx == NULL || ctx_depth == 64)
        return INVALID_CONTEXT;
    ctx_stack[ctx_depth++] = (int)(((uintptr_t)ctx - 0x1000) / 16);
    return OK;
}

EXPORT tb_curesult cuCtxPopCurrent_v2(tb_cucontext *ctx)
{
    if (ctx_depth == 0)
        return INVALID_CONTEXT;
    ctx_depth--;
    *ctx = (tb_cucontext)(uintptr_t)(0x1000 + 16 * ctx_stack[ctx_depth]);
    return OK;
}

EXPORT tb_curesult cuCtxSynchronize(void)
{
    if (!current_ok())
        return INVALID_CONTEXT;
    return sticky ? sticky : OK;
}

/* The size of an ELF64 image, as the driver finds it: the end of its
 * section or program header table, whichever is last (0 if not ELF64). */
static uint64_t elf_size(const unsigned char *e)
{
    if (memcmp(e, "\177ELF", 4) != 0 || e[4] != 2 /* ELFCLASS64 */)
        return 0;
    uint64_t phoff, shoff;
    uint16_t phentsize, phnum, shentsize, shnum;
    memcpy(&phoff, e + 32, 8);
    memcpy(&shoff, e + 40, 8);
    memcpy(&phentsize, e + 54, 2);
    memcpy(&phnum, e + 56, 2);
    memcpy(&shentsize, e + 58, 2);
    memcpy(&shnum, e + 60, 2);
    uint64_t a = phoff + (uint64_t)phentsize * phnum, b = shoff + (uint64_t)shentsize * shnum;
    return a > b ? a : b;
}

EXPORT tb_curesult cuModuleLoadData(tb_cumodule *module, const void *image)
{
    if (!current_ok())
        return INVALID_CONTEXT;
    long code = env_long("TB_FAKE_CUDA_LOAD", 0);
    if (code != 0)
        return (tb_curesult)code;
    uint64_t size = elf_size(image);
    for (int k = 0; k < TB_KERNEL_COUNT; k++)
        if (size == tb_kernels[k].cubin_size &&
            memcmp(image, tb_kernels[k].cubin, tb_kernels[k].cubin_size) == 0) {
            fake_module *m = malloc(sizeof *m);
            if (m == NULL)
                return OUT_OF_MEMORY;
            m->kernel = k;
            modules_loaded++;
            *module = (tb_cumodule)m;
            return OK;
        }
    return INVALID_VALUE;
}

EXPORT tb_curesult cuModuleUnload(tb_cumodule module)
{
    if (!current_ok())
        return INVALID_CONTEXT;
    free(module);
    modules_loaded--;
    return OK;
}

EXPORT tb_curesult cuModuleGetFunction(tb_cufunction *fn, tb_cumodule module, const char *name)
{
    fake_module *m = (fake_module *)module;
    if (strcmp(name, tb_kernels[m->kernel].function) != 0)
        return NOT_FOUND;
    *fn = (tb_cufunction)module;
    return OK;
}

EXPORT tb_curesult cuFuncSetAttribute(tb_cufunction fn, int attribute, int value)
{
    (void)fn;
    (void)value;
    return attribute == TB_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES ? OK : INVALID_VALUE;
}

EXPORT tb_curesult cuMemAlloc_v2(tb_cudeviceptr *ptr, size_t bytes)
{
    if (!current_ok())
        return INVALID_CONTEXT;
    if (bytes == 0)
        return INVALID_VALUE;
    if (bytes > memory_total() - used)
        return OUT_OF_MEMORY;
    block *b = malloc(sizeof *b);
    /* The real driver aligns allocations to 256 bytes; the kernel variants
     * compiled for 16-byte aligned addresses rely on it. */
    unsigned char *data = aligned_alloc(256, (bytes + 255) / 256 * 256);
    if (b == NULL || data == NULL) {
        free(b);
        free(data);
        return OUT_OF_MEMORY;
    }
    /* Fresh device memory is not zero; make sure nothing relies on it. */
    memset(data, 0xa5, bytes);
    b->size = bytes;
    b->data = data;
    b->next = blocks;
    blocks = b;
    used += bytes;
    allocs++;
    *ptr = (tb_cudeviceptr)(uintptr_t)data;
    return OK;
}

EXPORT tb_curesult cuMemFree_v2(tb_cudeviceptr ptr)
{
    if (!current_ok())
        return INVALID_CONTEXT;
    for (block **p = &blocks; *p != NULL; p = &(*p)->next)
        if ((uint64_t)(uintptr_t)(*p)->data == ptr) {
            block *b = *p;
            *p = b->next;
            used -= b->size;
            free(b->data);
            free(b);
            return OK;
        }
    return INVALID_VALUE;
}

EXPORT tb_curesult cuMemcpyHtoD_v2(tb_cudeviceptr dst, const void *src, size_t bytes)
{
    if (!current_ok())
        return INVALID_CONTEXT;
    if (sticky)
        return sticky;
    if (!span_ok(dst, bytes))
        return INVALID_VALUE;
    memcpy((void *)(uintptr_t)dst, src, bytes);
    return OK;
}

EXPORT tb_curesult cuMemcpyDtoH_v2(void *dst, tb_cudeviceptr src, size_t bytes)
{
    if (!current_ok())
        return INVALID_CONTEXT;
    if (sticky)
        return sticky;
    if (!span_ok(src, bytes))
        return INVALID_VALUE;
    memcpy(dst, (const void *)(uintptr_t)src, bytes);
    return OK;
}

EXPORT tb_curesult cuMemsetD8_v2(tb_cudeviceptr dst, unsigned char value, size_t count)
{
    if (!current_ok())
        return INVALID_CONTEXT;
    if (!span_ok(dst, count))
        return INVALID_VALUE;
    memset((void *)(uintptr_t)dst, value, count);
    return OK;
}

EXPORT tb_curesult cuMemGetInfo_v2(size_t *free_bytes, size_t *total_bytes)
{
    if (!current_ok())
        return INVALID_CONTEXT;
    *free_bytes = (size_t)(memory_total() - used);
    *total_bytes = (size_t)memory_total();
    return OK;
}

/* ---- the kernels' contracts ---- */

#define ARG(type, k) (*(const type *)params[k])

/* A 64-bit integer argument, which the variant being run may take as a
 * 32-bit one (tb_kernels[].int32). */
static int launched_kernel;
static int64_t int_arg(void **params, int k)
{
    if (tb_kernels[launched_kernel].int32 & (1u << k))
        return ARG(int32_t, k);
    return ARG(int64_t, k);
}

/* Tile number t -> (bi, bj), as kernels/tiles.py:lower_tile. */
static void lower_tile(int64_t t, int64_t *bi, int64_t *bj)
{
    int64_t r = (int64_t)((sqrt((double)(8 * t + 1)) - 1.0) * 0.5);
    while (r * (r + 1) / 2 > t)
        r--;
    while ((r + 1) * (r + 2) / 2 <= t)
        r++;
    *bi = r;
    *bj = t - r * (r + 1) / 2;
}

static double dist(int f32, uint64_t xt, int64_t n, int64_t dim, int root, int64_t r, int64_t c)
{
    if (f32) {
        const float *x = (const float *)(uintptr_t)xt;
        float acc = 0.0f;
        for (int64_t k = 0; k < dim; k++) {
            float t = x[k * n + r] - x[k * n + c];
            acc += t * t;
        }
        return root ? sqrtf(acc) : acc;
    }
    const double *x = (const double *)(uintptr_t)xt;
    double acc = 0.0;
    for (int64_t k = 0; k < dim; k++) {
        double t = x[k * n + r] - x[k * n + c];
        acc += t * t;
    }
    return root ? sqrt(acc) : acc;
}

/* pairwise_distances(xt, out, n, dim, root, tile0, out0) and, with `dot`,
 * pairwise_distances_dot(xt, xs, out, n, ...): the same contract (the dot
 * kernel's results are within the conformance bound of these, and exact
 * where it recomputes; here they are exact everywhere). */
static tb_curesult run_distances(int f32, int dot, int64_t B, unsigned gx, void **params)
{
    int a = dot; /* arguments after xt move by one in the dot kernel */
    uint64_t xt = ARG(uint64_t, 0), out = ARG(uint64_t, 1 + a);
    int64_t n = int_arg(params, 2 + a), dim = int_arg(params, 3 + a);
    int root = ARG(int32_t, 4 + a) != 0;
    int64_t tile0 = ARG(int64_t, 5 + a), out0 = ARG(int64_t, 6 + a);
    size_t esz = f32 ? sizeof(float) : sizeof(double);
    if (!span_ok(xt, (uint64_t)(n * dim) * esz))
        return ILLEGAL_ADDRESS;
    if (dot && !span_ok(ARG(uint64_t, 1), (uint64_t)(n * dim) * esz))
        return ILLEGAL_ADDRESS;
    for (unsigned pid = 0; pid < gx; pid++) {
        int64_t bi, bj;
        lower_tile(tile0 + pid, &bi, &bj);
        for (int64_t r = bi * B; r < (bi + 1) * B && r < n; r++)
            for (int64_t c = bj * B; c < (bj + 1) * B && c < r; c++) {
                double d = dist(f32, xt, n, dim, root, r, c);
                uint64_t at = out + (uint64_t)(r * (r - 1) / 2 + c - out0) * esz;
                if (!span_ok(at, esz))
                    return ILLEGAL_ADDRESS;
                if (f32) {
                    float v = (float)d;
                    memcpy((void *)(uintptr_t)at, &v, sizeof v);
                } else {
                    memcpy((void *)(uintptr_t)at, &d, sizeof d);
                }
            }
    }
    return OK;
}

static tb_curesult run_edges(int f32, unsigned gx, void **params)
{
    uint64_t xt = ARG(uint64_t, 0);
    int64_t n = ARG(int64_t, 1), dim = ARG(int64_t, 2);
    int root = ARG(int32_t, 3) != 0;
    double thr = f32 ? (double)ARG(float, 4) : ARG(double, 4);
    int64_t tile0 = ARG(int64_t, 5);
    uint64_t ei = ARG(uint64_t, 6), ej = ARG(uint64_t, 7), ed = ARG(uint64_t, 8);
    uint64_t counter = ARG(uint64_t, 9);
    int64_t capacity = ARG(int64_t, 10);
    int64_t B = f32 ? TB_EDGES_F32_BLOCK : TB_EDGES_F64_BLOCK;
    size_t esz = f32 ? sizeof(float) : sizeof(double);
    if (!span_ok(counter, 8) || (capacity > 0 && (!span_ok(ei, (uint64_t)capacity * 4) ||
                                                  !span_ok(ej, (uint64_t)capacity * 4) ||
                                                  !span_ok(ed, (uint64_t)capacity * esz))))
        return ILLEGAL_ADDRESS;
    int64_t *count = (int64_t *)(uintptr_t)counter;
    for (unsigned p = gx; p-- > 0;) {
        int64_t bi, bj;
        lower_tile(tile0 + p, &bi, &bj);
        for (int64_t r = bi * B; r < (bi + 1) * B && r < n; r++)
            for (int64_t c = bj * B; c < (bj + 1) * B && c < r; c++) {
                double d = dist(f32, xt, n, dim, root, r, c);
                if (!(d <= thr))
                    continue;
                int64_t slot = (*count)++;
                if (slot >= capacity)
                    continue;
                ((uint32_t *)(uintptr_t)ei)[slot] = (uint32_t)c;
                ((uint32_t *)(uintptr_t)ej)[slot] = (uint32_t)r;
                if (f32)
                    ((float *)(uintptr_t)ed)[slot] = (float)d;
                else
                    ((double *)(uintptr_t)ed)[slot] = d;
            }
    }
    return OK;
}

static tb_curesult run_image(unsigned gx, unsigned gy, void **params)
{
    const double *pairs = (const double *)(uintptr_t)ARG(uint64_t, 0);
    const uint64_t *offsets = (const uint64_t *)(uintptr_t)ARG(uint64_t, 1);
    uint64_t out = ARG(uint64_t, 2);
    int64_t diag0 = ARG(int64_t, 3);
    int32_t tile0 = ARG(int32_t, 4);
    int32_t width = ARG(int32_t, 5), height = ARG(int32_t, 6);
    double birth_min = ARG(double, 7), db = ARG(double, 8), pers_min = ARG(double, 9);
    double dp = ARG(double, 10), s = ARG(double, 11);
    int32_t weight_mode = ARG(int32_t, 12);
    double weight_max = ARG(double, 13), weight_power = ARG(double, 14);
    int32_t infinite_mode = ARG(int32_t, 15);
    double clip_death = ARG(double, 16);
    const int BR = TB_IMAGE_F64_BLOCK_R, BC = TB_IMAGE_F64_BLOCK_C;
    int tiles_c = (width + BC - 1) / BC;
    /* Programs past the last tile would write nothing (masked); a host that
     * launches them has its tile count wrong. */
    if (tile0 < 0 || (int64_t)tile0 + gx > (int64_t)tiles_c * ((height + BR - 1) / BR))
        return LAUNCH_FAILED;
    for (unsigned y = 0; y < gy; y++) {
        int64_t k = diag0 + y;
        if (!span_ok((uint64_t)(uintptr_t)(offsets + k), 16))
            return ILLEGAL_ADDRESS;
        uint64_t start = offsets[k], end = offsets[k + 1];
        if (end > start && !span_ok((uint64_t)(uintptr_t)(pairs + 2 * start), 16 * (end - start)))
            return ILLEGAL_ADDRESS;
        for (unsigned x = 0; x < gx; x++) {
            int tr = (tile0 + (int)x) / tiles_c, tc = (tile0 + (int)x) % tiles_c;
            for (int r = tr * BR; r < (tr + 1) * BR && r < height; r++)
                for (int c = tc * BC; c < (tc + 1) * BC && c < width; c++) {
                    double x0 = birth_min + c * db, x1 = birth_min + (c + 1) * db;
                    double y0 = pers_min + r * dp, y1 = pers_min + (r + 1) * dp;
                    double acc = 0.0;
                    for (uint64_t q = start; q < end; q++) {
                        double b = pairs[2 * q], d = pairs[2 * q + 1];
                        int inf = d == INFINITY;
                        if (inf && infinite_mode == 0)
                            continue;
                        if (inf)
                            d = clip_death;
                        double p = d - b, w = 1.0;
                        if (weight_mode == 1)
                            w = fmin(p / weight_max, 1.0);
                        else if (weight_mode == 2)
                            w = pow(p, weight_power);
                        acc += 0.5 * w * (erf((y1 - p) * s) - erf((y0 - p) * s)) * 0.5 *
                               (erf((x1 - b) * s) - erf((x0 - b) * s));
                    }
                    uint64_t at = out + ((uint64_t)y * (uint64_t)height * (uint64_t)width +
                                         (uint64_t)r * (uint64_t)width + (uint64_t)c) *
                                            sizeof(double);
                    if (!span_ok(at, sizeof(double)))
                        return ILLEGAL_ADDRESS;
                    memcpy((void *)(uintptr_t)at, &acc, sizeof acc);
                }
        }
    }
    return OK;
}

EXPORT tb_curesult cuLaunchKernel(tb_cufunction fn, unsigned gx, unsigned gy, unsigned gz,
                                  unsigned bx, unsigned by, unsigned bz, unsigned shared,
                                  tb_custream stream, void **params, void **extra)
{
    if (!current_ok())
        return INVALID_CONTEXT;
    if (sticky)
        return sticky;
    if (fn == NULL || params == NULL || extra != NULL || stream != NULL)
        return INVALID_VALUE;
    int k = ((fake_module *)fn)->kernel;
    const tb_kernel_spec *spec = &tb_kernels[k];
    /* The real driver refuses an empty grid and a grid past the limits. */
    if (gx == 0 || gy == 0 || gz == 0 ||
        gx > (unsigned)env_long("TB_FAKE_CUDA_GRID_X", 2147483647L) ||
        gy > (unsigned)env_long("TB_FAKE_CUDA_GRID_Y", 65535) || gz != 1)
        return INVALID_VALUE;
    if (bx != spec->threads || by != 1 || bz != 1 || shared != spec->shared)
        return INVALID_VALUE;
    /* A variant that has arguments compiled in as 1 (tb_kernels[].one) is
     * launched without them: put them back, so that params[i] is argument i
     * of the kernel's signature below (plus the two scratch pointers). */
    const char *base = spec->base;
    int exact = strcmp(base, "distances_f32") == 0 || strcmp(base, "distances_long_f32") == 0 ||
                strcmp(base, "distances_f64") == 0;
    int full_count = exact                                    ? 9
                     : strcmp(base, "distances_dot_f32") == 0 ? 10
                     : strncmp(base, "edges_", 6) == 0        ? 13
                                                              : 19;
    static const int32_t one = 1;
    void *full[19];
    if (spec->one != 0) {
        for (int a = 0, from = 0; a < full_count; a++)
            full[a] = (spec->one >> a) & 1 ? (void *)&one : params[from++];
        params = full;
    }
    /* Triton's two trailing scratch pointers must be there and be NULL. */
    /* A variant run with arguments that break its compiled-in assumptions
     * would read or write misaligned vectors on the real device. */
    if (!tb_kernel_fits(k, params, 1)) {
        sticky = MISALIGNED_ADDRESS;
        return OK;
    }
    tb_curesult r;
    launched_kernel = k;
    if (exact) {
        if (gy != 1 || ARG(uint64_t, 7) != 0 || ARG(uint64_t, 8) != 0)
            return INVALID_VALUE;
        int f64 = strcmp(base, "distances_f64") == 0;
        int64_t block = f64 ? TB_DISTANCES_F64_BLOCK
                        : strcmp(base, "distances_long_f32") == 0 ? TB_DISTANCES_LONG_F32_BLOCK
                                                                  : TB_DISTANCES_F32_BLOCK;
        r = run_distances(!f64, 0, block, gx, params);
    } else if (strcmp(base, "distances_dot_f32") == 0) {
        if (gy != 1 || ARG(uint64_t, 8) != 0 || ARG(uint64_t, 9) != 0)
            return INVALID_VALUE;
        r = run_distances(1, 1, TB_DISTANCES_DOT_F32_BLOCK, gx, params);
    } else if (strcmp(base, "edges_f32") == 0 || strcmp(base, "edges_f64") == 0) {
        if (gy != 1 || ARG(uint64_t, 11) != 0 || ARG(uint64_t, 12) != 0)
            return INVALID_VALUE;
        r = run_edges(strcmp(base, "edges_f32") == 0, gx, params);
    } else if (strcmp(base, "image_f64") == 0) {
        if (ARG(uint64_t, 17) != 0 || ARG(uint64_t, 18) != 0)
            return INVALID_VALUE;
        r = run_image(gx, gy, params);
    } else {
        return INVALID_HANDLE;
    }
    launched[k]++;
    /* Like a fault inside a kernel: reported later, by every call. */
    if (r != OK)
        sticky = r;
    return OK;
}
