/*
 * op_edges.c — the edges op: every pair of a point cloud within a
 * threshold, sorted by (d, i, j), with the distances computed and filtered
 * on the device by the fused threshold_edges kernel (kernels/edges.py).
 *
 * This file is the device half of a tb_edge_source; edges_host.c does the
 * rest (the retry when the edge buffer overflowed, the sort). The kernel
 * compares in the points' dtype: for f32 the double threshold t becomes the
 * largest float <= t (plan.h), which selects exactly the pairs whose float
 * distance, widened to double, is <= t.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "edges_host.h"
#include "exact_pairs.h"
#include "plan.h"
#include "tb.h"

/* Room for this many edges on the first run (unless every pair is an
 * edge); an input with more takes one retry with exactly enough room. */
#define TB_EDGES_INITIAL ((uint64_t)1 << 22)

/* Edges fetched from the device per copy. */
#define TB_EDGES_STAGE ((uint64_t)1 << 20)

typedef struct gpu_edges {
    tb_state *st;
    tb_device *d;
    const topoml_call_v1 *call;
    tb_budget *budget;
    int f32;
    uint64_t n, dim;
    int32_t root;
    float thr32;
    double thr64;
    tb_cudeviceptr xt, counter, ei, ej, ed;
    uint64_t room; /* edges ei/ej/ed hold */
    int runs;
    int variant; /* the tb_kernels[] entry launched last, -1 before */
    double t_kernel, t_fetch;
} gpu_edges;

static size_t elem_size(const gpu_edges *g)
{
    return g->f32 ? sizeof(float) : sizeof(double);
}

/* TOPOML_OK, or the driver's complaint in `why` and `status`. */
static int checked(gpu_edges *g, tb_curesult r, int status, const char *what, char *why,
                   size_t why_size)
{
    if (r == TB_CUDA_SUCCESS)
        return TOPOML_OK;
    char text[160];
    snprintf(why, why_size, "%s: %s", what, tb_cuda_describe(&g->st->cu, r, text, sizeof text));
    return status;
}

static void drop_room(gpu_edges *g, int *status)
{
    tb_device_free(g->st, g->call, &g->ei, status);
    tb_device_free(g->st, g->call, &g->ej, status);
    tb_device_free(g->st, g->call, &g->ed, status);
    g->room = 0;
}

static int gpu_reserve(void *ctx, uint64_t capacity, char *why, size_t why_size)
{
    gpu_edges *g = ctx;
    int status = TOPOML_OK;
    drop_room(g, &status);
    if (status != TOPOML_OK) {
        snprintf(why, why_size, "releasing the edge buffer failed");
        return status;
    }
    uint64_t per_edge = 2 * sizeof(uint32_t) + elem_size(g);
    size_t free_bytes = tb_free_device_memory(g->st);
    if (capacity > free_bytes / per_edge) {
        snprintf(why, why_size, "%llu edges need %llu bytes of device memory, %llu are free",
                 (unsigned long long)capacity, (unsigned long long)capacity * per_edge,
                 (unsigned long long)free_bytes);
        return TOPOML_E_LIMIT;
    }
    tb_cuda *cu = &g->st->cu;
    status = checked(g, cu->cuMemAlloc(&g->ei, capacity * sizeof(uint32_t)), TOPOML_E_NOMEM,
                     "device memory for the edges", why, why_size);
    if (status == TOPOML_OK)
        status = checked(g, cu->cuMemAlloc(&g->ej, capacity * sizeof(uint32_t)), TOPOML_E_NOMEM,
                         "device memory for the edges", why, why_size);
    if (status == TOPOML_OK)
        status = checked(g, cu->cuMemAlloc(&g->ed, capacity * elem_size(g)), TOPOML_E_NOMEM,
                         "device memory for the edges", why, why_size);
    if (status != TOPOML_OK) {
        int ignored = TOPOML_OK;
        drop_room(g, &ignored);
        return status;
    }
    g->room = capacity;
    return TOPOML_OK;
}

static int gpu_run(void *ctx, uint64_t capacity, uint64_t *found, char *why, size_t why_size)
{
    gpu_edges *g = ctx;
    tb_cuda *cu = &g->st->cu;
    double t = tb_now();
    uint64_t block = g->f32 ? TB_EDGES_F32_BLOCK : TB_EDGES_F64_BLOCK;
    uint64_t tiles = tb_tiles_below(tb_cdiv(g->n, block));
    uint64_t per_launch = (uint64_t)g->d->max_grid_x;
    int status = checked(g, cu->cuMemsetD8(g->counter, 0, sizeof(int64_t)), TOPOML_E_DEVICE,
                         "clearing the edge counter", why, why_size);
    /* The tiles are numbered over the whole triangle, so a triangle with more
     * tiles than one grid holds takes several launches sharing the counter. */
    for (uint64_t tile0 = 0; status == TOPOML_OK && tile0 < tiles; tile0 += per_launch) {
        uint64_t count = tiles - tile0 < per_launch ? tiles - tile0 : per_launch;
        tb_curesult r;
        if (g->f32)
            r = tb_launch_edges_f32(cu, g->d->functions, NULL, (unsigned)count, 1, 1, &g->variant,
                                    g->xt,
                                    (int64_t)g->n, (int64_t)g->dim, g->root, g->thr32,
                                    (int64_t)tile0, g->ei, g->ej, g->ed, g->counter,
                                    (int64_t)capacity);
        else
            r = tb_launch_edges_f64(cu, g->d->functions, NULL, (unsigned)count, 1, 1, &g->variant,
                                    g->xt,
                                    (int64_t)g->n, (int64_t)g->dim, g->root, g->thr64,
                                    (int64_t)tile0, g->ei, g->ej, g->ed, g->counter,
                                    (int64_t)capacity);
        status = checked(g, r, TOPOML_E_DEVICE, "launching threshold_edges", why, why_size);
    }
    int64_t counted = 0;
    if (status == TOPOML_OK)
        status = checked(g, cu->cuCtxSynchronize(), TOPOML_E_DEVICE, "running threshold_edges", why,
                         why_size);
    if (status == TOPOML_OK)
        status = checked(g, cu->cuMemcpyDtoH(&counted, g->counter, sizeof counted), TOPOML_E_DEVICE,
                         "reading the edge counter", why, why_size);
    g->t_kernel += tb_now() - t;
    g->runs++;
    if (status == TOPOML_OK && counted < 0) {
        snprintf(why, why_size, "the edge counter reads %lld", (long long)counted);
        status = TOPOML_E_DEVICE;
    }
    *found = status == TOPOML_OK ? (uint64_t)counted : 0;
    return status;
}

static int gpu_fetch(void *ctx, uint64_t count, topoml_edge *out, char *why, size_t why_size)
{
    gpu_edges *g = ctx;
    tb_cuda *cu = &g->st->cu;
    double t = tb_now();
    size_t esz = elem_size(g);
    uint64_t stage = count < TB_EDGES_STAGE ? count : TB_EDGES_STAGE;
    uint64_t stage_bytes = stage * (2 * sizeof(uint32_t) + esz);
    void *host;
    int status = tb_budget_alloc(g->budget, stage_bytes, "copying edges from the device", &host);
    if (status != TOPOML_OK) {
        snprintf(why, why_size, "no host memory for copying edges from the device");
        return status;
    }
    uint32_t *hi = host, *hj = hi + stage;
    void *hd = hj + stage;
    for (uint64_t off = 0; status == TOPOML_OK && off < count; off += stage) {
        uint64_t m = count - off < stage ? count - off : stage;
        status =
            checked(g, cu->cuMemcpyDtoH(hi, g->ei + off * sizeof(uint32_t), m * sizeof(uint32_t)),
                    TOPOML_E_DEVICE, "copying edges from the device", why, why_size);
        if (status == TOPOML_OK)
            status = checked(
                g, cu->cuMemcpyDtoH(hj, g->ej + off * sizeof(uint32_t), m * sizeof(uint32_t)),
                TOPOML_E_DEVICE, "copying edges from the device", why, why_size);
        if (status == TOPOML_OK)
            status = checked(g, cu->cuMemcpyDtoH(hd, g->ed + off * esz, m * esz), TOPOML_E_DEVICE,
                             "copying edges from the device", why, why_size);
        for (uint64_t x = 0; status == TOPOML_OK && x < m; x++) {
            double d = g->f32 ? (double)((const float *)hd)[x] : ((const double *)hd)[x];
            out[off + x].d = d == 0.0 ? 0.0 : d; /* +0, never -0: the sort relies on it */
            out[off + x].i = hi[x];
            out[off + x].j = hj[x];
        }
    }
    tb_budget_free(g->budget, host, stage_bytes);
    g->t_fetch += tb_now() - t;
    return status;
}

int tb_op_edges(void *state, const topoml_call_v1 *call, const topoml_input_v1 *in,
                double threshold, topoml_edge **out, uint64_t *n_out)
{
    tb_state *st = state;
    if (out == NULL || n_out == NULL)
        return tb_fail(call, TOPOML_E_INVALID, "triton-bridge: edges: no output");
    *out = NULL;
    *n_out = 0;
    int status = tb_check_points(call, in, "edges");
    if (status != TOPOML_OK)
        return status;
    if (threshold != threshold)
        return tb_fail(call, TOPOML_E_INVALID, "triton-bridge: edges: the threshold is NaN");
    /* Distances are never negative, so below 0 there is nothing to find. */
    if (in->n < 2 || threshold < 0.0)
        return TOPOML_OK;
    /* Coordinates whose squared differences the kernels' plain sums would
     * overflow or underflow: on the host, the reference's way. */
    if (!scalar_in_plain_range(in))
        return scalar_exact_edges(call, in, threshold, out, n_out, "triton-bridge");

    tb_device *d;
    if ((status = tb_device_for_call(st, call, &d)) != TOPOML_OK)
        return status;
    if ((status = tb_enter(st, call, d)) != TOPOML_OK)
        return status;
    /* The buffers the distances op keeps are for repeated distances calls;
     * this op sizes its own from the free memory, which they would take. */
    tb_device_buffers_drop(st, d);

    tb_budget budget = {call, 0};
    gpu_edges g = {
        .st = st,
        .d = d,
        .call = call,
        .budget = &budget,
        .variant = -1,
        .f32 = in->dtype == TOPOML_F32,
        .n = in->n,
        .dim = in->dim,
        .root = in->metric == TOPOML_METRIC_EUCLIDEAN,
        .thr32 = tb_float_at_most(threshold),
        .thr64 = threshold,
    };
    double t0 = tb_now();
    status = tb_upload_points(st, call, &budget, in, in->n, NULL, &g.xt, NULL);
    double t_upload = tb_now() - t0;
    if (status == TOPOML_OK)
        status = tb_check(st, call, st->cu.cuMemAlloc(&g.counter, sizeof(int64_t)), TOPOML_E_NOMEM,
                          "device memory for the edge counter");
    if (status == TOPOML_OK) {
        /* Room for every pair when all are edges or there are few; else a
         * guess, no more than a quarter of the free device memory. */
        uint64_t pairs = in->n * (in->n - 1) / 2;
        uint64_t initial =
            threshold == INFINITY || pairs < TB_EDGES_INITIAL ? pairs : TB_EDGES_INITIAL;
        uint64_t per_edge = 2 * sizeof(uint32_t) + elem_size(&g);
        uint64_t quarter = tb_free_device_memory(st) / 4 / per_edge;
        if (initial > quarter && threshold != INFINITY)
            initial = quarter > 0 ? quarter : 1;
        tb_edge_source src = {&g, gpu_reserve, gpu_run, gpu_fetch};
        double t1 = tb_now();
        status = tb_edges_collect(&src, call, initial, out, n_out);
        if (status == TOPOML_OK)
            tb_debug(call,
                     "triton-bridge: edges n=%llu dim=%llu %s: %llu edges, %d runs, upload %.3f "
                     "ms, kernels %.3f ms, download %.3f ms, total %.3f ms, kernel %s",
                     (unsigned long long)in->n, (unsigned long long)in->dim, g.f32 ? "f32" : "f64",
                     (unsigned long long)*n_out, g.runs, 1e3 * t_upload, 1e3 * g.t_kernel,
                     1e3 * g.t_fetch, 1e3 * (tb_now() - t1),
                     g.variant >= 0 ? tb_kernels[g.variant].name : "none");
    }
    int cleanup = TOPOML_OK;
    drop_room(&g, &cleanup);
    tb_device_free(st, call, &g.counter, &cleanup);
    tb_device_free(st, call, &g.xt, &cleanup);
    tb_leave(st);
    if (status == TOPOML_OK && cleanup != TOPOML_OK) {
        call->free(call->host_data, *out);
        *out = NULL;
        *n_out = 0;
        status = cleanup;
    }
    return status;
}
