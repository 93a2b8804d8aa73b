/*
 * rips.c — the Vietoris–Rips op: the distances on the device, the reduction
 * on the host by the scalar reference engine (plugins/scalar/rips.c,
 * compiled into this plugin), which gives the same barcode as the scalar
 * backend bit for bit because it sees the same distances.
 *
 * What runs where:
 *  - no threshold: the condensed matrix, computed on the device (f32 inputs
 *    are computed in f32 and widened, exactly as the engine widens them);
 *  - a finite threshold: only the edges under it, filtered and sorted on the
 *    device (edges.cu), handed over as a sparse input, so the n x n matrix is
 *    never stored. The engine then works in its sparse mode, as it would
 *    for a threshold that cuts the complex anyway; above the enclosing
 *    radius the complex is a cone, so the bars are the same either way.
 *  - condensed inputs go to the engine as they are;
 *  - a sparse input under a finite threshold — the edge collapse's output
 *    (core/src/compute/collapse.c) — goes to the engine as it is too, with the
 *    columns of dimensions >= 2 from the device, which works from the
 *    condensed matrix of the edges' values (+inf where there is no edge) when
 *    that fits in TMC_SPARSE_DENSE_MAX bytes (tmc_sparse_source); else,
 *    or without a threshold, the engine alone;
 *  - points in device memory (core 0.4) are read where they are: checked
 *    and (f32) widened on the device (device_input.cu), then the same
 *    steps, which copy from them device to device.
 *
 * With max_dim >= 2 the columns of each dimension k >= 2 — the k-simplices
 * under the threshold less the cleared ones and those in zero-persistence
 * apparent pairs, sorted — are collected on the device as well
 * (rips_columns.cu, through scalar_rips_hooked): the split of Ripser++. The
 * engine reduces what is left; a dimension too large for the device is
 * collected by the engine itself.
 *
 * The engine runs on a pool of host threads (plugins/threads/pool.c, the
 * threads backend's; engine() below): the reduction of every dimension in
 * batches of columns, and the enumeration of the columns the device does
 * not collect, on as many CPUs as the call allows. The barcode is the same
 * at every thread count.
 */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "backend.h"
#include "pool.h"
#include "rips.h"
#include "rips_columns.h"

/* The scalar engine with the columns of dimensions >= 2 from `hook` (NULL:
 * the engine's own), lent a pool of the threads the call allows
 * (call->n_threads; 0: every CPU of the process's affinity mask; never
 * more). Only the engine's tasks run on the pool: the hook is called from
 * the calling thread, so the device is used from one thread as before. */
static int engine(const tmc_ctx *ctx, const topoml_input_v1 *in,
                  const topoml_rips_params_v1 *params, const scalar_rips_hook *hook,
                  topoml_barcode_v1 *out)
{
    const topoml_call_v1 *call = ctx->call;
    /* A core older than 0.3 hands a shorter call: the default then. */
    uint32_t wanted =
        call->struct_size >= offsetof(topoml_call_v1, n_threads) + sizeof call->n_threads
            ? call->n_threads
            : 0;
    threads_pool pool;
    if (threads_pool_init(&pool, threads_for(wanted)) != 0)
        return tmc_fail(call, TOPOML_E_INTERNAL, "rips: cannot make a mutex for the host threads");
    scalar_rips_pool lend = {
        pool.n_threads, &pool, threads_pool_run, threads_pool_lock, threads_pool_unlock, 0, NULL, 0, NULL};
    int status = scalar_rips_pooled(call, in, params, hook, &lend, out);
    threads_pool_destroy(&pool);
    return status;
}

/* Points must have finite coordinates: the engine refuses others, and
 * through a distance matrix an infinite coordinate would turn into an
 * "absent edge" instead. */
static int check_coordinates(const tmc_ctx *ctx, const topoml_input_v1 *in)
{
    const uint64_t count = in->n * in->dim;
    for (uint64_t k = 0; k < count; k++) {
        double x = in->dtype == TOPOML_F32 ? (double)((const float *)in->data)[k]
                                           : ((const double *)in->data)[k];
        if (!isfinite(x))
            return tmc_fail(
                ctx->call, TOPOML_E_INVALID, "point %llu, coordinate %llu is %g: not finite",
                (unsigned long long)(k / in->dim), (unsigned long long)(k % in->dim), x);
    }
    return TOPOML_OK;
}

/* The engine on `in` with the columns of dimensions >= 2 from the device,
 * which works from `source` (the caller's POINTS or CONDENSED input). */
static int rips_hooked(tmc_ctx *ctx, const topoml_input_v1 *source, const topoml_input_v1 *in,
                       const topoml_rips_params_v1 *params, topoml_barcode_v1 *out)
{
    if (params->max_dim < 2 || in->n < 4)
        return engine(ctx, in, params, NULL, out);
    tmr_columns *cols = NULL;
    int status = tmr_columns_open(ctx, source, params->max_dim, &cols);
    if (status != TOPOML_OK)
        return status;
    scalar_rips_hook hook = {cols, tmr_columns_hook};
    status = engine(ctx, in, params, &hook, out);
    int closed = tmr_columns_close(cols, TOPOML_OK);
    if (status == TOPOML_OK && closed != TOPOML_OK) {
        ctx->call->free(ctx->call->host_data, out->intervals);
        out->intervals = NULL;
        out->n_intervals = 0;
        status = closed;
    }
    return status;
}

static int rips_points(tmc_ctx *ctx, const topoml_input_v1 *in,
                       const topoml_rips_params_v1 *params, topoml_barcode_v1 *out);

/* The largest condensed matrix made for a sparse input's columns (1 GiB:
 * 16 384 vertices); above it the engine collects the columns on the host. */
#define TMC_SPARSE_DENSE_MAX (1ull << 30)

/* A sparse input over n vertices as the condensed matrix of its edges'
 * values, +inf where there is no edge: the source the device's columns read
 * (rips_columns.cu reads an entry above the threshold as no edge, and the
 * threshold is finite here). The engine itself still reads the edges: the
 * filtration, and so the columns, are the same. */
int tmc_sparse_source(tmc_ctx *ctx, const topoml_input_v1 *in, topoml_input_v1 *source,
                      double **held)
{
    *held = NULL;
    const uint64_t pairs = tmc_row_start(in->n);
    int status = TOPOML_OK;
    double *m = tmc_host_alloc(ctx, pairs * sizeof *m, "the condensed matrix of the edges", &status);
    if (!m)
        return status;
    for (uint64_t k = 0; k < pairs; k++)
        m[k] = INFINITY;
    for (uint64_t e = 0; e < in->n_edges; e++) {
        const topoml_edge *ed = &in->edges[e];
        if (ed->i >= ed->j || ed->j >= in->n || !(ed->d >= 0)) {
            tmc_host_free(ctx, m);
            return tmc_fail(ctx->call, TOPOML_E_INVALID, "edge %llu (%u, %u, %g) is not an edge",
                            (unsigned long long)e, ed->i, ed->j, ed->d);
        }
        m[tmc_row_start(ed->j) + ed->i] = ed->d;
    }
    memset(source, 0, sizeof *source);
    source->struct_size = sizeof *source;
    source->kind = TOPOML_INPUT_CONDENSED;
    source->n = in->n;
    source->dtype = TOPOML_F64;
    source->data = m;
    *held = m;
    return TOPOML_OK;
}

int tmc_rips(tmc_ctx *ctx, const topoml_input_v1 *in, const topoml_rips_params_v1 *params,
             topoml_barcode_v1 *out)
{
    if (!params || params->struct_size < TOPOML_RIPS_PARAMS_V1_MIN_SIZE || !out ||
        out->struct_size < TOPOML_BARCODE_V1_MIN_SIZE)
        return tmc_fail(ctx->call, TOPOML_E_INVALID,
                        "rips: parameter or barcode struct "
                        "missing or too short");
    if (in->kind == TOPOML_INPUT_CONDENSED)
        return rips_hooked(ctx, in, in, params, out);
    if (tmc_on_device(in)) {
        if (in->kind != TOPOML_INPUT_POINTS)
            return tmc_fail(ctx->call, TOPOML_E_UNSUPPORTED,
                            "rips: a matrix in device memory is not read there");
        topoml_input_v1 view;
        double *wide = NULL, *host = NULL;
        int status = tmc_device_points(ctx, in, &view, &wide, &host);
        if (status == TOPOML_OK && (tmc_on_device(&view) && in->n < 2)) {
            /* One point (or none): checked finite, its coordinates change
             * nothing; zeros on the host stand in for them. */
            host = tmc_host_alloc(ctx, (in->dim ? in->dim : 1) * sizeof(double),
                                  "the coordinates of one point", &status);
            if (host) {
                memset(host, 0, (in->dim ? in->dim : 1) * sizeof(double));
                view.memory = TOPOML_MEMORY_HOST;
                view.data = host;
            }
        }
        if (status == TOPOML_OK)
            status = tmc_on_device(&view) ? rips_points(ctx, &view, params, out)
                                          : tmc_rips(ctx, &view, params, out);
        tmc_device_free(wide);
        tmc_host_free(ctx, host);
        return status;
    }
    if (in->kind == TOPOML_INPUT_SPARSE && params->max_dim >= 2 && in->n >= 4 &&
        isfinite(params->threshold) && tmc_row_start(in->n) <= TMC_SPARSE_DENSE_MAX / 8 &&
        (!ctx->call->max_memory || tmc_row_start(in->n) * 8 <= ctx->call->max_memory / 2)) {
        topoml_input_v1 source;
        double *held = NULL;
        int status = tmc_sparse_source(ctx, in, &source, &held);
        if (status == TOPOML_OK) {
            topoml_call_v1 call = *ctx->call;
            const uint64_t held_bytes = tmc_row_start(in->n) * 8;
            if (call.max_memory)
                call.max_memory = call.max_memory - held_bytes;
            tmc_ctx sub = *ctx;
            sub.call = &call;
            status = rips_hooked(&sub, &source, in, params, out);
        }
        tmc_host_free(ctx, held);
        return status;
    }
    if (in->kind != TOPOML_INPUT_POINTS || in->n < 2)
        return engine(ctx, in, params, NULL, out);
    int status = check_coordinates(ctx, in);
    if (status != TOPOML_OK)
        return status;
    /* Out of the device's range, the reference engine computes its own
     * distances (metric.h, scaled). */
    if (!tmc_in_device_range(in))
        return engine(ctx, in, params, NULL, out);
    return rips_points(ctx, in, params, out);
}

/* Points with finite coordinates in the device kernels' range, n >= 2, in
 * host or device memory: distances or threshold edges on the device, then
 * the engine. */
static int rips_points(tmc_ctx *ctx, const topoml_input_v1 *in,
                       const topoml_rips_params_v1 *params, topoml_barcode_v1 *out)
{
    int status = TOPOML_OK;
    if (isnan(params->threshold))
        return tmc_fail(ctx->call, TOPOML_E_INVALID, "rips: threshold is NaN");

    topoml_input_v1 derived;
    memset(&derived, 0, sizeof derived);
    derived.struct_size = sizeof derived;
    derived.n = in->n;
    void *held = NULL;
    uint64_t held_bytes = 0;
    if (isinf(params->threshold) && params->threshold > 0) {
        held_bytes = tmc_row_start(in->n) * sizeof(double);
        double *dist = tmc_host_alloc(ctx, held_bytes, "the distance matrix", &status);
        if (!dist)
            return status;
        status = tmc_distances_f64(ctx, in, dist);
        derived.kind = TOPOML_INPUT_CONDENSED;
        derived.dtype = TOPOML_F64;
        derived.data = dist;
        held = dist;
    } else {
        topoml_edge *edges = NULL;
        uint64_t m = 0;
        status = tmc_edges(ctx, in, params->threshold, &edges, &m);
        held_bytes = m * sizeof(topoml_edge);
        derived.kind = TOPOML_INPUT_SPARSE;
        derived.n_edges = m;
        derived.edges = edges;
        held = edges;
    }
    if (status == TOPOML_OK) {
        /* What this op holds counts against the caller's limit too. */
        topoml_call_v1 call = *ctx->call;
        if (call.max_memory)
            call.max_memory = call.max_memory > held_bytes ? call.max_memory - held_bytes : 1;
        tmc_ctx sub = *ctx;
        sub.call = &call;
        status = rips_hooked(&sub, in, &derived, params, out);
    }
    tmc_host_free(ctx, held);
    return status;
}
