/*
 * tb.h — declarations shared by the triton-bridge backend's own files.
 *
 * The backend state (one per create()) owns the loaded driver and, per
 * device, a retained primary context with every kernel loaded. Ops find the
 * device the call names, make its context current for the duration of the
 * call, and leave the caller's current context as it was.
 *
 * Nothing here is part of the plugin ABI; the only project header included
 * is topoml/plugin.h.
 */
#ifndef TB_H
#define TB_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "topoml/plugin.h"

#include "cuda_driver.h"
#include "tb_kernels.h"

#define TB_MAX_DEVICES 64

/* One device as the state knows it. `ready` once the primary context is
 * retained, the compute capability matches the cubins and every kernel is
 * loaded; `status`/`why` keep the answer of the first attempt, so that a
 * device that cannot run is asked only once. */
/* The device buffers a tb_device keeps (tb_device_buffer). */
enum { TB_BUF_XT, TB_BUF_XS, TB_BUF_OUT, TB_BUF_COUNT };

typedef struct tb_device {
    int tried;
    int status; /* topoml_status of the attempt */
    char why[256];
    tb_cudevice dev;
    tb_cucontext ctx; /* retained primary context (NULL if not retained) */
    tb_cumodule modules[TB_KERNEL_COUNT];
    tb_cufunction functions[TB_KERNEL_COUNT];
    int cc_major, cc_minor;
    int max_grid_x, max_grid_y;
    size_t total_mem;
    char name[128];
    /* Device buffers the distances op keeps between calls (points, centred
     * points, band output), so that repeated calls do not allocate; see
     * tb_device_buffer. Freed when the state is destroyed, and after a
     * failed call. */
    tb_cudeviceptr buf[TB_BUF_COUNT];
    uint64_t buf_size[TB_BUF_COUNT];
} tb_device;

typedef struct tb_state {
    const topoml_host_v1 *host;
    const char *driver_library; /* NULL: libcuda.so.1 */
    int driver_tried;
    int driver_status;
    char driver_why[256];
    tb_cuda cu;
    int device_count;
    tb_device devices[TB_MAX_DEVICES];
    char device_text[192]; /* capability records' `device` */
    topoml_capability_v1 caps[3];
} tb_state;

/* ---- device.c ---- */

/* Load and initialise the driver once per state; TOPOML_OK or
 * TOPOML_E_UNSUPPORTED with the reason in st->driver_why. */
int tb_driver_init(tb_state *st);

/* The ready device for call->device (-1: device 0). Initialises the driver
 * and the device on first use. Errors: TOPOML_E_UNSUPPORTED (no driver, or a
 * device of another compute capability), TOPOML_E_DEVICE (no such device, a
 * driver failure); the message is written to the call. */
int tb_device_for_call(tb_state *st, const topoml_call_v1 *call, tb_device **out);

/* Same for an ordinal, with the reason in `why`. */
int tb_device_get(tb_state *st, int ordinal, tb_device **out, char *why, size_t why_size);

/* Release everything the state holds on every device. */
void tb_devices_close(tb_state *st);

/* Make the device's context current (push) and restore the previous one
 * (pop). Every op that enters leaves on every path. */
int tb_enter(tb_state *st, const topoml_call_v1 *call, tb_device *d);
void tb_leave(tb_state *st);

/* ---- errors and scratch memory (call.c) ---- */

/* Write a message into call->error (if any) and return `status`. */
int tb_fail(const topoml_call_v1 *call, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Return TOPOML_OK for TB_CUDA_SUCCESS, else write "what: CUDA_ERROR_X
 * (text)" to the call and return `status`. */
int tb_check(tb_state *st, const topoml_call_v1 *call, tb_curesult r, int status, const char *what);

/* Log through call->log at DEBUG level, if the host gave one. */
void tb_debug(const topoml_call_v1 *call, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Host memory of one call, counted against call->max_memory. */
typedef struct tb_budget {
    const topoml_call_v1 *call;
    uint64_t used;
} tb_budget;

/* Allocate `size` bytes with call->alloc; TOPOML_E_LIMIT when it would pass
 * max_memory, TOPOML_E_NOMEM when the allocator fails (message written). */
int tb_budget_alloc(tb_budget *b, uint64_t size, const char *what, void **out);
void tb_budget_free(tb_budget *b, void *ptr, uint64_t size);

/* Returns non-zero (and writes the message) when the host asks to stop. */
int tb_cancelled(const topoml_call_v1 *call, const char *stage, uint64_t done, uint64_t total);

/* Seconds on a monotonic clock, for the debug timings. */
double tb_now(void);

/* ---- points.c ---- */

/* Copy a POINTS input to the device transposed (coordinate k of point p at
 * element k*ld + p, ld >= n; the ld - n columns past the points are zeros)
 * in its own dtype. When xs is not NULL, also a second copy, centred (each
 * coordinate minus its rounded mean over the n points), for
 * kernels/distances_dot.py. With `cache` NULL the buffers are allocated for
 * the call: the caller frees them, and on failure nothing stays allocated.
 * Otherwise they are the device's cached TB_BUF_XT and TB_BUF_XS buffers
 * (tb_device_buffer): the caller does not free them. */
int tb_upload_points(tb_state *st, const topoml_call_v1 *call, tb_budget *b,
                     const topoml_input_v1 *in, uint64_t ld, tb_device *cache, tb_cudeviceptr *xt,
                     tb_cudeviceptr *xs);

/* The device's cached buffer `slot` (TB_BUF_*) with room for `bytes` (> 0),
 * in *ptr. Kept as it is when it holds between bytes and twice bytes;
 * otherwise freed and allocated anew at exactly `bytes` (TOPOML_E_NOMEM and
 * the driver's message when that fails; the slot is then empty). The
 * device's context must be current. */
int tb_device_buffer(tb_state *st, const topoml_call_v1 *call, tb_device *d, int slot,
                     uint64_t bytes, const char *what, tb_cudeviceptr *ptr);

/* Free every cached buffer of the device (context current), ignoring the
 * driver's answers: used on cleanup and after failures. */
void tb_device_buffers_drop(tb_state *st, tb_device *d);

/* Device memory free now (0 on failure). */
size_t tb_free_device_memory(tb_state *st);

/* cuMemFree *ptr (if set) and zero it. A failure becomes *status when that
 * was still TOPOML_OK, so cleanup paths check the driver too. */
void tb_device_free(tb_state *st, const topoml_call_v1 *call, tb_cudeviceptr *ptr, int *status);

/* ---- ops ---- */

int tb_op_distances(void *state, const topoml_call_v1 *call, const topoml_input_v1 *in, void *out);
int tb_op_edges(void *state, const topoml_call_v1 *call, const topoml_input_v1 *in,
                double threshold, topoml_edge **out, uint64_t *n_out);
int tb_op_image(void *state, const topoml_call_v1 *call, const topoml_image_params_v1 *params,
                uint64_t n_diagrams, const uint64_t *offsets, const topoml_pair *pairs,
                double *out);

/* Checks shared by the point-cloud ops: kind, dtype, metric, sizes.
 * TOPOML_OK, TOPOML_E_UNSUPPORTED or TOPOML_E_INVALID (message written). */
int tb_check_points(const topoml_call_v1 *call, const topoml_input_v1 *in, const char *op);

#endif /* TB_H */
