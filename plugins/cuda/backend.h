/*
 * backend.h — declarations shared by the files of the CUDA backend
 * (topoml-backend-cuda.so); never seen by the core.
 *
 * The plugin is split by concern: plugin.c (vtable, negotiation,
 * capabilities), device.c (probe, device choice, streams, errors, memory
 * checks), one .cu file per op family with a C interface, h0.c (union-find on
 * the host) and rips.c (Vietoris–Rips). Every function here that can fail
 * returns a topoml_status and has already written the reason into
 * call->error when it returns.
 *
 * The CUDA runtime is linked statically, so this file may name CUDA types but
 * nothing here may assume a driver or a device exists until tmc_begin() has
 * succeeded.
 */
#ifndef TOPOML_CUDA_BACKEND_H
#define TOPOML_CUDA_BACKEND_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "topoml/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Index arithmetic of the condensed order, shared by host and device code. */
#ifdef __CUDACC__
#define TMC_HD __host__ __device__
#else
#define TMC_HD
#endif

/* First condensed index of row i: entry (i, j), j < i, is at
 * tmc_row_start(i) + j. */
static inline TMC_HD uint64_t tmc_row_start(uint64_t i)
{
    return i ? i * (i - 1) / 2 : 0;
}

/* r*(r+1)/2 without overflowing before the division (exact while the
 * result fits in 64 bits). */
static inline TMC_HD uint64_t tmc_triangle(uint64_t r)
{
    return r % 2 == 0 ? (r / 2) * (r + 1) : r * ((r + 1) / 2);
}

/* The largest r with r*(r+1)/2 <= t. Tile t of the lower triangle of tiles
 * (numbered bi*(bi+1)/2 + bj, bj <= bi) is in tile row tmc_triangular_root(t);
 * condensed entry t is in row tmc_triangular_root(t) + 1. The floating-point
 * square root is only a first guess, corrected to the exact answer. */
static inline TMC_HD uint64_t tmc_triangular_root(uint64_t t)
{
    uint64_t r = (uint64_t)((sqrt(8.0 * (double)t + 1.0) - 1.0) / 2.0);
    while (tmc_triangle(r) > t)
        r--;
    while (tmc_triangle(r + 1) <= t)
        r++;
    return r;
}

/* Bands of the distances op: tile rows [row, end) whose condensed output
 * (elem bytes an entry) fits in max_bytes, but at least one tile row. Points
 * are n, tiles tile x tile; returns end (<= the number of tile rows). */
static inline uint64_t tmc_band_end(uint64_t n, uint64_t tile, uint64_t row, uint64_t max_bytes,
                                    uint64_t elem)
{
    const uint64_t rows = (n + tile - 1) / tile;
    const uint64_t first = tmc_row_start(row * tile);
    uint64_t end = row + 1;
    while (end < rows) {
        uint64_t hi = (end + 1) * tile < n ? (end + 1) * tile : n;
        if ((tmc_row_start(hi) - first) * elem > max_bytes)
            break;
        end++;
    }
    return end;
}

/* Blocks of 256 threads for a grid-stride loop over `work` items: enough to
 * cover them, at least 1, at most 65536 (the loop does the rest). */
static inline unsigned tmc_grid_for(uint64_t work)
{
    uint64_t blocks = (work + 255) / 256;
    return (unsigned)(blocks < 65536 ? (blocks ? blocks : 1) : 65536);
}

#define TMC_MAX_DEVICES 64
#define TMC_TEXT 256
#define TMC_SCHEDULE 512

/* Everything the backend keeps between calls. One state is used by one
 * thread at a time (plugin.h); nothing global is written after load. */
typedef struct tmc_state {
    const topoml_host_v1 *host;
    int probe_status; /* TOPOML_OK once probe found a usable device */
    char probe_why[TMC_TEXT];
    int n_devices;
    /* Per device, made on first use: the stream the kernels run on and one
     * for copies out, so that a band's copy overlaps the next band's kernel. */
    cudaStream_t streams[TMC_MAX_DEVICES];
    cudaStream_t copy_streams[TMC_MAX_DEVICES];
    /* Capability records and the strings they point to (valid until destroy). */
    topoml_capability_v1 caps[TOPOML_OP_COUNT + 1]; /* + rips on device input */
    uint32_t n_caps;
    char device_text[TMC_TEXT];
    char schedule_text[TOPOML_OP_COUNT][TMC_SCHEDULE];
    char device_input_schedule[TMC_SCHEDULE];
    /* Copies of input in device memory to the host, over the state's life
     * (device_input.cu): input_to_host, and points beyond the kernels'
     * range. The rips op logs its own count. */
    uint64_t input_host_copies;
    /* Device memory of the op in progress (tmc_begin, tmc_note_device_use):
     * free when it began, and the most taken since, sampled after each large
     * allocation. */
    uint64_t free_at_begin, device_high;
} tmc_state;

/* What one op call works with: the caller's services, the chosen device and
 * its stream. Made by tmc_begin, released by tmc_end. */
typedef struct tmc_ctx {
    const topoml_call_v1 *call;
    tmc_state *st;
    int device;
    cudaStream_t stream;
    cudaStream_t copy_stream;
    int previous_device; /* the caller's current device, restored by tmc_end */
    uint64_t input_copies; /* host copies of device input in this op */
} tmc_ctx;

/* Is `in` in device memory? (memory is a field of core 0.4: a shorter
 * struct, from an older core, is host memory.) */
static inline bool tmc_on_device(const topoml_input_v1 *in)
{
    return in->struct_size >= offsetof(topoml_input_v1, stream) + sizeof(void *) &&
           in->memory != TOPOML_MEMORY_HOST;
}

/* ---- device.c ---- */

/* The probe's verdict for device `device` (-1: device 0): TOPOML_OK, or
 * TOPOML_E_UNSUPPORTED / TOPOML_E_DEVICE with the reason in `why`. Safe on a
 * machine without driver or device. `cc_major`/`cc_minor` may be NULL. */
int tmc_probe_device(int device, char *why, size_t why_size, int *cc_major, int *cc_minor,
                     int *n_devices);

/* Check the call struct, then the input (if `in` is not NULL: one of the
 * kinds in `kinds`, see tmc_check_input), then pick the device from
 * call->device, make it current and fetch its streams. On failure the
 * message is in call->error. Every tmc_begin, failed or not, is paired with
 * tmc_end, which makes the caller's device current again and returns
 * `status` (or the error of doing so). */
int tmc_begin(tmc_ctx *ctx, tmc_state *st, const topoml_call_v1 *call, const topoml_input_v1 *in,
              uint32_t kinds);
int tmc_end(tmc_ctx *ctx, int status);

/* Free what a state holds on the devices (its streams). */
void tmc_state_release(tmc_state *st);

/* Write a formatted message into call->error and return `status`. */
int tmc_fail(const topoml_call_v1 *call, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Turn a CUDA error into a status and message: "what: cudaErrorX (text)".
 * Out-of-memory becomes TOPOML_E_LIMIT, everything else TOPOML_E_DEVICE. */
int tmc_cuda_fail(const tmc_ctx *ctx, cudaError_t err, const char *what);

/* Checked CUDA calls in a function that carries `status`:
 * TMC_TRY runs `expr` only while status is TOPOML_OK (a step of the work);
 * TMC_ALWAYS runs it in any case (cleanup: synchronise, free) and keeps the
 * first error. Either way a CUDA error becomes status and message. */
#define TMC_TRY(ctx, status, expr, what)                                                           \
    do {                                                                                           \
        if ((status) == TOPOML_OK) {                                                               \
            cudaError_t tmc_err_ = (expr);                                                         \
            if (tmc_err_ != cudaSuccess)                                                           \
                (status) = tmc_cuda_fail((ctx), tmc_err_, (what));                                 \
        }                                                                                          \
    } while (0)
#define TMC_ALWAYS(ctx, status, expr, what)                                                        \
    do {                                                                                           \
        cudaError_t tmc_err_ = (expr);                                                             \
        if (tmc_err_ != cudaSuccess && (status) == TOPOML_OK)                                      \
            (status) = tmc_cuda_fail((ctx), tmc_err_, (what));                                     \
    } while (0)

/* Before allocating `bytes` of device memory in all: TOPOML_E_LIMIT with a
 * clear message when the device does not have that much free (with a margin
 * for the runtime and CUB's scratch), else TOPOML_OK. */
int tmc_check_device_memory(const tmc_ctx *ctx, uint64_t bytes, const char *what);

/* Sample the device memory the op has taken so far (cudaMemGetInfo against
 * what was free when it began) into st->device_high: called right after the
 * op's large allocations, so the samples catch its high-water mark (other
 * users of the device blur it). */
void tmc_note_device_use(const tmc_ctx *ctx);

/* Device memory free on the current device, minus the safety margin. */
uint64_t tmc_usable_device_memory(const tmc_ctx *ctx);

/* Host scratch through call->alloc, checked against call->max_memory. */
void *tmc_host_alloc(const tmc_ctx *ctx, uint64_t bytes, const char *what, int *status);
void tmc_host_free(const tmc_ctx *ctx, void *p);

/* True when the host asked to stop; the op then returns TOPOML_E_CANCELLED. */
bool tmc_cancelled(const tmc_ctx *ctx, const char *stage, uint64_t done, uint64_t total);

/* Validate an input for an op that accepts the kinds in `kinds` (bits of
 * topoml_input_kind). */
int tmc_check_input(const topoml_call_v1 *call, const topoml_input_v1 *in, uint32_t kinds);

/* ---- device_input.cu ---- */

/* The memory kind, input kind and device index of input in device memory. */
int tmc_device_input_check(const topoml_call_v1 *call, const topoml_input_v1 *in);

/* Copy input in device memory to the host (`out`: its n*dim or n(n-1)/2
 * values of in->dtype) after the caller's stream; counted. */
int tmc_input_to_host(tmc_ctx *ctx, const topoml_input_v1 *in, void *out);

/* POINTS in device memory, made ready for the op: the pointer checked
 * (device memory on in->device), the caller's stream waited for, every
 * coordinate checked finite on the device, f32 widened to f64 there (*wide,
 * device memory). *view is the input the op then works on: f64 points on
 * the device; or, for coordinates beyond the device kernels' range, f64
 * points in *host (a counted host copy). Free *wide with tmc_device_free
 * and *host with tmc_host_free. */
int tmc_device_points(tmc_ctx *ctx, const topoml_input_v1 *in, topoml_input_v1 *view,
                      double **wide, double **host);
void tmc_device_free(void *p);

/* ---- distances.cu ---- */

/* Launch configuration of the distance kernels, for the schedule string;
 * with_device: the current device is usable, so registers and shared
 * memory per kernel can be read too. */
int tmc_distances_schedule(char *out, size_t size, int with_device);

/* POINTS in, condensed distances of in->dtype out (host memory). Works in
 * row bands so that the output need not fit on the device. */
int tmc_distances(tmc_ctx *ctx, const topoml_input_v1 *in, void *out);

/* Coordinates outside the range where the device's plain sums are right go
 * to the host (host_exact.c): the reference's metric, pair by pair. */
bool tmc_in_device_range(const topoml_input_v1 *in);
int tmc_exact_distances(const topoml_call_v1 *call, const topoml_input_v1 *in, void *out,
                        bool out_f64);
int tmc_exact_edges(const topoml_call_v1 *call, const topoml_input_v1 *in, double threshold,
                    topoml_edge **out, uint64_t *n_out);


/* Condensed distances as doubles (f32 results widened), for rips. */
int tmc_distances_f64(tmc_ctx *ctx, const topoml_input_v1 *in, double *out);

/* Device-to-device form used by the benchmark: `points` and `out` are device
 * pointers; out receives n*(n-1)/2 values of `dtype`. */
int tmc_distances_device(tmc_ctx *ctx, uint32_t dtype, uint32_t metric, uint64_t n, uint64_t dim,
                         const void *points, void *out);

/* ---- edges.cu ---- */

int tmc_edges_schedule(char *out, size_t size);

/* Every pair i < j with d <= threshold, sorted by (d, i, j), in an array from
 * call->alloc (POINTS, CONDENSED or SPARSE in). */
int tmc_edges(tmc_ctx *ctx, const topoml_input_v1 *in, double threshold, topoml_edge **out,
              uint64_t *n_out);

/* ---- host_edges.c ---- */

/* The edge array an edges op returns, from call->alloc (at least 1 byte). */
topoml_edge *tmc_alloc_edges(const tmc_ctx *ctx, uint64_t m, int *status);

/* The edges of a CONDENSED or SPARSE input with d <= threshold, each with
 * i < j, unsorted (condensed: in the matrix's order; sparse: in the list's).
 * Checks that every distance is a distance (not NaN, >= 0) and that sparse
 * edges have i < j < n. The array comes from tmc_alloc_edges. */
int tmc_filter_edges_host(const tmc_ctx *ctx, const topoml_input_v1 *in, double threshold,
                          topoml_edge **out, uint64_t *n_out);

/* ---- h0.c ---- */

/* H0 bars from edges sorted by (d, i, j) over n vertices (Kruskal). */
int tmc_h0_from_edges(const tmc_ctx *ctx, uint64_t n, const topoml_edge *edges, uint64_t n_edges,
                      topoml_barcode_v1 *out);

/* ---- rips.c (built with the scalar engine, plugins/scalar/rips.c) ---- */

int tmc_rips(tmc_ctx *ctx, const topoml_input_v1 *in, const topoml_rips_params_v1 *params,
             topoml_barcode_v1 *out);

/* A SPARSE input as the CONDENSED source the device's columns read: the
 * edges' values, +inf where there is no edge, in *held (tmc_host_free). */
int tmc_sparse_source(tmc_ctx *ctx, const topoml_input_v1 *in, topoml_input_v1 *source,
                      double **held);

/* ---- image.cu ---- */

int tmc_image_schedule(char *out, size_t size);

int tmc_image(tmc_ctx *ctx, const topoml_image_params_v1 *params, uint64_t n_diagrams,
              const uint64_t *offsets, const topoml_pair *pairs, double *out);

#ifdef __cplusplus
}
#endif
#endif /* TOPOML_CUDA_BACKEND_H */
