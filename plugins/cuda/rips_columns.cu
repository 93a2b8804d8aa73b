/*
 * rips_columns.cu — the columns of the Rips reduction on the device (the
 * GPU half of the Ripser++ split; the reduction stays in the scalar engine,
 * which asks for the columns through scalar_rips_hooked).
 *
 * Once per call, on the first dimension asked (k = 2):
 *  - the condensed matrix of doubles on the device (computed from the points
 *    there, or uploaded from a condensed input), bit for bit the engine's;
 *  - neighbour lists of the edges under the engine's threshold, each in
 *    descending vertex order (one warp per vertex, ballots keep the order).
 * Then for each dimension k:
 *  - the k-simplices under the threshold, grown level by level from the
 *    vertices: each (j+1)-simplex from the j-simplex that is itself without
 *    its lowest vertex, counted, prefix-summed and written, so the order is
 *    fixed whatever the scheduling;
 *  - one thread per simplex: its index, clearing (binary search in the
 *    engine's pivots of dimension k-1), the two apparent-pair tests
 *    (rips_columns.h);
 *  - the survivors compacted, sorted by (diameter descending, index
 *    ascending) with two stable radix sorts, copied into the engine's
 *    storage.
 * The last dimension asked is not held whole: its simplices are nobody's
 * parents, so they are grown, tested and compacted a chunk of parents at a
 * time (64 MiB of simplices at most), and only the columns stay on the
 * device (columns_streamed). On a dense complex that level is most of the
 * memory: sphere_3_192 at dimension 3 has 47 million of them.
 * Everything the device holds is checked against its free memory first; a
 * dimension that does not fit is declined and the engine collects its
 * columns on the host (same barcode, slower).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include "backend.h"
#include "rips_columns.h"

namespace
{

__global__ void widen_kernel(const float *__restrict__ in, double *__restrict__ out, uint64_t m)
{
    for (uint64_t k = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; k < m;
         k += (uint64_t)gridDim.x * blockDim.x)
        out[k] = (double)in[k];
}

/* One warp per vertex: its neighbours under the threshold, from the top.
 * COUNT: cnt[v] = how many; else written at nb_v[nb_start[v]...]. */
template <bool COUNT>
__global__ void neighbours_kernel(tmr_graph g, uint64_t *__restrict__ cnt, uint32_t *nb_v)
{
    const uint32_t lane = threadIdx.x & 31;
    const uint64_t warps = (uint64_t)gridDim.x * (blockDim.x / 32);
    for (uint64_t v = ((uint64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32; v < g.n; v += warps) {
        uint64_t pos = COUNT ? 0 : g.nb_start[v];
        for (int64_t base = (int64_t)g.n - 1; base >= 0; base -= 32) {
            int64_t w = base - (int64_t)lane;
            bool ok = w >= 0 && (uint64_t)w != v && tmr_dist(&g, (uint32_t)v, (uint32_t)w) <= g.threshold;
            unsigned mask = __ballot_sync(0xffffffffu, ok);
            if (!COUNT && ok)
                nb_v[pos + __popc(mask & ((1u << lane) - 1u))] = (uint32_t)w;
            pos += __popc(mask);
        }
        if (COUNT && lane == 0)
            cnt[v] = pos;
    }
}

/* Level j -> j+1. COUNT: cnt[p] = children of parent p; else written at
 * off[p]. Parents have m vertices each. */
template <bool COUNT>
__global__ void extend_kernel(tmr_graph g, const uint32_t *__restrict__ pv,
                              const double *__restrict__ pd, uint64_t parents, uint32_t m,
                              uint64_t *__restrict__ cnt, const uint64_t *__restrict__ off,
                              uint64_t base, uint32_t *cv, double *cd)
{
    for (uint64_t p = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; p < parents;
         p += (uint64_t)gridDim.x * blockDim.x) {
        uint32_t v[TMR_MAX_VERTS];
        for (uint32_t i = 0; i < m; i++)
            v[i] = pv[p * m + i];
        if (COUNT)
            cnt[p] = tmr_extend(&g, v, m, pd[p], nullptr, nullptr);
        else
            tmr_extend(&g, v, m, pd[p], cv + (off[p] - base) * (m + 1), cd + (off[p] - base));
    }
}

/* flag[s] = 1 when simplex s (m vertices) is a column. */
__global__ void columns_kernel(tmr_graph g, const uint32_t *__restrict__ sv,
                               const double *__restrict__ sd, uint64_t count, uint32_t m,
                               const uint64_t *__restrict__ cleared, uint64_t n_cleared,
                               uint64_t *__restrict__ flag)
{
    for (uint64_t s = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; s < count;
         s += (uint64_t)gridDim.x * blockDim.x) {
        uint32_t v[TMR_MAX_VERTS];
        for (uint32_t i = 0; i < m; i++)
            v[i] = sv[s * m + i];
        bool col = !tmr_cleared(cleared, n_cleared, tmr_index(&g, v, m)) &&
                   tmr_is_column(&g, v, m, sd[s]);
        flag[s] = col;
    }
}

/* The columns, compacted: key = the diameter's bits, value = the index. */
__global__ void compact_kernel(tmr_graph g, const uint32_t *__restrict__ sv,
                               const double *__restrict__ sd, uint64_t count, uint32_t m,
                               const uint64_t *__restrict__ pos, uint64_t *__restrict__ keys,
                               uint64_t *__restrict__ vals)
{
    for (uint64_t s = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; s < count;
         s += (uint64_t)gridDim.x * blockDim.x) {
        if (pos[s + 1] == pos[s])
            continue;
        uint32_t v[TMR_MAX_VERTS];
        for (uint32_t i = 0; i < m; i++)
            v[i] = sv[s * m + i];
        keys[pos[s]] = (uint64_t)__double_as_longlong(sd[s]);
        vals[pos[s]] = tmr_index(&g, v, m);
    }
}

__global__ void iota_kernel(uint32_t *__restrict__ v, double *__restrict__ d, uint64_t n)
{
    for (uint64_t k = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; k < n;
         k += (uint64_t)gridDim.x * blockDim.x) {
        v[k] = (uint32_t)k;
        d[k] = 0.0;
    }
}

__global__ void pack_kernel(const uint64_t *__restrict__ keys, const uint64_t *__restrict__ vals,
                            uint64_t count, scalar_rips_column *__restrict__ out)
{
    for (uint64_t k = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; k < count;
         k += (uint64_t)gridDim.x * blockDim.x) {
        scalar_rips_column c;
        c.diam = __longlong_as_double((long long)keys[k]);
        c.index = vals[k];
        out[k] = c;
    }
}

double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

} // namespace

struct tmr_columns {
    tmc_ctx *ctx;
    const topoml_input_v1 *in; /* POINTS or CONDENSED, in host or device memory */
    bool ready, declined;
    uint32_t n;
    double threshold;
    double *dist;
    uint64_t *nb_start;
    uint32_t *nb_v;
    uint64_t *binom;
    uint32_t binom_rows;
    /* the simplices of the last level grown: `m` vertices each */
    uint32_t m;
    uint64_t count;
    uint32_t *lv;
    double *ld;
    double setup_ms;
    uint32_t max_dim;  /* the last dimension the engine asks for */
    uint64_t streamed; /* simplices of the last columns_streamed */
};

static void say(tmr_columns *c, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(tmr_columns *c, int level, const char *fmt, ...)
{
    const topoml_call_v1 *call = c->ctx->call;
    if (!call->log)
        return;
    char text[320];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    call->log(call->host_data, level, text);
}

/* Frees what the device holds (status kept if already an error). */
static int release(tmr_columns *c, int status)
{
    tmc_ctx *ctx = c->ctx;
    TMC_ALWAYS(ctx, status, cudaFree(c->dist), "cudaFree(distances)");
    TMC_ALWAYS(ctx, status, cudaFree(c->nb_start), "cudaFree(neighbour lists)");
    TMC_ALWAYS(ctx, status, cudaFree(c->nb_v), "cudaFree(neighbour lists)");
    TMC_ALWAYS(ctx, status, cudaFree(c->binom), "cudaFree(binomials)");
    TMC_ALWAYS(ctx, status, cudaFree(c->lv), "cudaFree(simplices)");
    TMC_ALWAYS(ctx, status, cudaFree(c->ld), "cudaFree(simplices)");
    c->dist = nullptr;
    c->nb_start = nullptr;
    c->nb_v = nullptr;
    c->binom = nullptr;
    c->lv = nullptr;
    c->ld = nullptr;
    return status;
}

/* Decline from here on; the engine does the rest on the host. */
static int decline(tmr_columns *c, const char *why, uint64_t bytes)
{
    say(c, TOPOML_LOG_INFO,
        "cuda rips: columns collected on the host from here on: %s needs %.1f MiB of device "
        "memory, %.1f MiB usable",
        why, bytes / 1048576.0, tmc_usable_device_memory(c->ctx) / 1048576.0);
    c->declined = true;
    int status = release(c, TOPOML_OK);
    return status == TOPOML_OK ? SCALAR_RIPS_HOOK_DECLINED : status;
}

static bool fits(tmr_columns *c, uint64_t bytes)
{
    return bytes <= tmc_usable_device_memory(c->ctx);
}

static tmr_graph graph_of(const tmr_columns *c)
{
    tmr_graph g;
    g.dist = c->dist;
    g.nb_start = c->nb_start;
    g.nb_v = c->nb_v;
    g.binom = c->binom;
    g.n = c->n;
    g.threshold = c->threshold;
    return g;
}

/* Exclusive prefix sum of cnt[0..count) into off[0..count] (off[count] is
 * the total). cnt and off may be the same array of count+1 entries. */
static int prefix_sum(tmc_ctx *ctx, uint64_t *cnt, uint64_t *off, uint64_t count, uint64_t *total)
{
    int status = TOPOML_OK;
    size_t bytes = 0;
    void *scratch = nullptr;
    TMC_TRY(ctx, status, cudaMemsetAsync(cnt + count, 0, sizeof *cnt, ctx->stream),
            "cudaMemsetAsync");
    TMC_TRY(ctx, status,
            cub::DeviceScan::ExclusiveSum(nullptr, bytes, cnt, off, count + 1, ctx->stream),
            "cub::DeviceScan (scratch size)");
    TMC_TRY(ctx, status, cudaMalloc(&scratch, bytes ? bytes : 1), "cudaMalloc(scan scratch)");
    TMC_TRY(ctx, status,
            cub::DeviceScan::ExclusiveSum(scratch, bytes, cnt, off, count + 1, ctx->stream),
            "cub::DeviceScan::ExclusiveSum");
    TMC_TRY(ctx, status,
            cudaMemcpyAsync(total, off + count, sizeof *total, cudaMemcpyDeviceToHost, ctx->stream),
            "cudaMemcpyAsync(total)");
    TMC_ALWAYS(ctx, status, cudaStreamSynchronize(ctx->stream), "prefix sum");
    TMC_ALWAYS(ctx, status, cudaFree(scratch), "cudaFree(scan scratch)");
    return status;
}

/* The distances and the neighbour lists on the device. */
static int setup(tmr_columns *c, uint64_t n, double threshold)
{
    tmc_ctx *ctx = c->ctx;
    const topoml_input_v1 *in = c->in;
    c->n = (uint32_t)n;
    c->threshold = threshold;
    c->ready = true;
    const uint64_t pairs = tmc_row_start(n);
    const uint64_t elem = in->dtype == TOPOML_F32 ? 4 : 8;
    uint64_t need = pairs * 8 + (in->dtype == TOPOML_F32 ? pairs * 4 : 0) +
                    (in->kind == TOPOML_INPUT_POINTS ? n * in->dim * elem * 2 : 0) +
                    2 * (n + 1) * 8 + (64u << 20);
    if (!fits(c, need))
        return decline(c, "the distance matrix", need);
    int status = TOPOML_OK;
    double t0 = now_ms();
    TMC_TRY(ctx, status, cudaMalloc((void **)&c->dist, (pairs ? pairs : 1) * 8),
            "cudaMalloc(distances)");
    void *raw = nullptr, *pts = nullptr;
    if (in->dtype == TOPOML_F32)
        TMC_TRY(ctx, status, cudaMalloc(&raw, (pairs ? pairs : 1) * 4), "cudaMalloc(distances)");
    else
        raw = c->dist;
    if (in->kind == TOPOML_INPUT_POINTS) {
        const uint64_t bytes = n * in->dim * elem;
        TMC_TRY(ctx, status, cudaMalloc(&pts, bytes ? bytes : 1), "cudaMalloc(points)");
        TMC_TRY(ctx, status,
                cudaMemcpyAsync(pts, in->data, bytes, cudaMemcpyDefault, ctx->stream),
                "cudaMemcpyAsync(points)");
        if (status == TOPOML_OK)
            status = tmc_distances_device(ctx, in->dtype, in->metric, n, in->dim, pts, raw);
    } else {
        TMC_TRY(ctx, status,
                cudaMemcpyAsync(raw, in->data, pairs * elem, cudaMemcpyDefault, ctx->stream),
                "cudaMemcpyAsync(distances)");
    }
    if (in->dtype == TOPOML_F32 && status == TOPOML_OK) {
        widen_kernel<<<tmc_grid_for(pairs), 256, 0, ctx->stream>>>((const float *)raw, c->dist, pairs);
        TMC_TRY(ctx, status, cudaGetLastError(), "widen_kernel launch");
    }
    TMC_ALWAYS(ctx, status, cudaStreamSynchronize(ctx->stream), "distances");
    if (raw != c->dist)
        TMC_ALWAYS(ctx, status, cudaFree(raw), "cudaFree(distances)");
    TMC_ALWAYS(ctx, status, cudaFree(pts), "cudaFree(points)");

    /* neighbour lists */
    TMC_TRY(ctx, status, cudaMalloc((void **)&c->nb_start, (n + 1) * 8), "cudaMalloc(neighbours)");
    tmr_graph g = graph_of(c);
    const unsigned warps_grid = tmc_grid_for(n * 32);
    if (status == TOPOML_OK) {
        neighbours_kernel<true><<<warps_grid, 256, 0, ctx->stream>>>(g, c->nb_start, nullptr);
        TMC_TRY(ctx, status, cudaGetLastError(), "neighbours_kernel launch");
    }
    uint64_t nnz = 0;
    if (status == TOPOML_OK)
        status = prefix_sum(ctx, c->nb_start, c->nb_start, n, &nnz);
    if (status != TOPOML_OK)
        return release(c, status);
    if (!fits(c, nnz * 4 + (64u << 20)))
        return decline(c, "the neighbour lists", nnz * 4);
    TMC_TRY(ctx, status, cudaMalloc((void **)&c->nb_v, (nnz ? nnz : 1) * 4),
            "cudaMalloc(neighbours)");
    g = graph_of(c);
    if (status == TOPOML_OK) {
        neighbours_kernel<false><<<warps_grid, 256, 0, ctx->stream>>>(g, nullptr, c->nb_v);
        TMC_TRY(ctx, status, cudaGetLastError(), "neighbours_kernel launch");
    }
    /* level 0: the vertices */
    TMC_TRY(ctx, status, cudaMalloc((void **)&c->lv, n * 4), "cudaMalloc(simplices)");
    TMC_TRY(ctx, status, cudaMalloc((void **)&c->ld, n * 8), "cudaMalloc(simplices)");
    if (status == TOPOML_OK) {
        iota_kernel<<<tmc_grid_for(n), 256, 0, ctx->stream>>>(c->lv, c->ld, n);
        TMC_TRY(ctx, status, cudaGetLastError(), "iota_kernel launch");
    }
    TMC_ALWAYS(ctx, status, cudaStreamSynchronize(ctx->stream), "neighbour lists");
    c->m = 1;
    c->count = n;
    c->setup_ms = now_ms() - t0;
    tmc_note_device_use(ctx);
    say(c, TOPOML_LOG_DEBUG, "cuda rips: distances and %llu neighbours under %.17g on the device in %.1f ms",
        (unsigned long long)nnz, threshold, c->setup_ms);
    return status == TOPOML_OK ? status : release(c, status);
}

/* The binomials C(v, r), v <= n, r <= rows - 1, on the device. */
static int binomials(tmr_columns *c, uint32_t rows)
{
    if (c->binom && c->binom_rows >= rows)
        return TOPOML_OK;
    tmc_ctx *ctx = c->ctx;
    const uint64_t stride = (uint64_t)c->n + 1;
    int status = TOPOML_OK;
    uint64_t *b = (uint64_t *)tmc_host_alloc(ctx, rows * stride * 8, "the binomials", &status);
    if (!b)
        return status;
    tmr_fill_binomials(b, rows, c->n);
    TMC_ALWAYS(ctx, status, cudaFree(c->binom), "cudaFree(binomials)");
    c->binom = nullptr;
    TMC_TRY(ctx, status, cudaMalloc((void **)&c->binom, rows * stride * 8), "cudaMalloc(binomials)");
    TMC_TRY(ctx, status, cudaMemcpy(c->binom, b, rows * stride * 8, cudaMemcpyHostToDevice),
            "cudaMemcpy(binomials)");
    tmc_host_free(ctx, b);
    c->binom_rows = rows;
    return status;
}

/* Grow the simplices by one vertex. */
static int extend(tmr_columns *c)
{
    tmc_ctx *ctx = c->ctx;
    const uint32_t m = c->m;
    const uint64_t parents = c->count;
    int status = TOPOML_OK;
    uint64_t *cnt = nullptr, total = 0;
    if (!fits(c, (parents + 1) * 8 + (64u << 20)))
        return decline(c, "counting the simplices", (parents + 1) * 8);
    /* Each parent has at most n children: below 2^62 in all, the sums and
     * sizes below cannot wrap. */
    if (parents && (uint64_t)c->n > (UINT64_C(1) << 62) / parents)
        return decline(c, "counting the simplices (too many to count in 64 bits)", UINT64_MAX);
    TMC_TRY(ctx, status, cudaMalloc((void **)&cnt, (parents + 1) * 8), "cudaMalloc(counts)");
    tmr_graph g = graph_of(c);
    if (status == TOPOML_OK) {
        extend_kernel<true><<<tmc_grid_for(parents), 256, 0, ctx->stream>>>(
            g, c->lv, c->ld, parents, m, cnt, nullptr, 0, nullptr, nullptr);
        TMC_TRY(ctx, status, cudaGetLastError(), "extend_kernel launch");
    }
    if (status == TOPOML_OK)
        status = prefix_sum(ctx, cnt, cnt, parents, &total);
    uint64_t bytes = 0;
    const bool wraps = __builtin_mul_overflow(total, (uint64_t)(m + 1) * 4 + 8, &bytes) ||
                       bytes > UINT64_MAX - (64u << 20);
    if (status == TOPOML_OK && (wraps || !fits(c, bytes + (64u << 20)))) {
        TMC_ALWAYS(ctx, status, cudaFree(cnt), "cudaFree(counts)");
        if (status != TOPOML_OK)
            return release(c, status);
        char what[64];
        snprintf(what, sizeof what, "the %llu simplices of dimension %u",
                 (unsigned long long)total, m);
        return decline(c, what, bytes);
    }
    uint32_t *cv = nullptr;
    double *cd = nullptr;
    TMC_TRY(ctx, status, cudaMalloc((void **)&cv, total ? total * (m + 1) * 4 : 4),
            "cudaMalloc(simplices)");
    TMC_TRY(ctx, status, cudaMalloc((void **)&cd, total ? total * 8 : 8), "cudaMalloc(simplices)");
    if (status == TOPOML_OK) {
        extend_kernel<false><<<tmc_grid_for(parents), 256, 0, ctx->stream>>>(
            g, c->lv, c->ld, parents, m, nullptr, cnt, 0, cv, cd);
        TMC_TRY(ctx, status, cudaGetLastError(), "extend_kernel launch");
    }
    TMC_ALWAYS(ctx, status, cudaStreamSynchronize(ctx->stream), "extend_kernel");
    TMC_ALWAYS(ctx, status, cudaFree(cnt), "cudaFree(counts)");
    TMC_ALWAYS(ctx, status, cudaFree(c->lv), "cudaFree(simplices)");
    TMC_ALWAYS(ctx, status, cudaFree(c->ld), "cudaFree(simplices)");
    c->lv = cv;
    c->ld = cd;
    c->m = m + 1;
    c->count = total;
    return status == TOPOML_OK ? status : release(c, status);
}

/* The pivots of dimension k - 1 on the device (*out: cudaFree). */
static int upload_cleared(tmc_ctx *ctx, const scalar_rips_columns_query *q, uint64_t **out)
{
    int status = TOPOML_OK;
    TMC_TRY(ctx, status, cudaMalloc((void **)out, q->n_cleared ? q->n_cleared * 8 : 8),
            "cudaMalloc(cleared)");
    TMC_TRY(ctx, status,
            cudaMemcpyAsync(*out, q->cleared, q->n_cleared * 8, cudaMemcpyHostToDevice,
                            ctx->stream),
            "cudaMemcpyAsync(cleared)");
    return status;
}

/* Which of the `count` simplices (m vertices each) at sv, sd are columns:
 * pos[s] = the columns before s, *total = all of them (flag, pos: count + 1
 * words each). */
static int test_simplices(tmr_columns *c, const uint32_t *sv, const double *sd, uint64_t count,
                          uint32_t m, const uint64_t *cleared, uint64_t n_cleared, uint64_t *flag,
                          uint64_t *pos, uint64_t *total)
{
    tmc_ctx *ctx = c->ctx;
    int status = TOPOML_OK;
    columns_kernel<<<tmc_grid_for(count), 256, 0, ctx->stream>>>(graph_of(c), sv, sd, count, m,
                                                             cleared, n_cleared, flag);
    TMC_TRY(ctx, status, cudaGetLastError(), "columns_kernel launch");
    if (status == TOPOML_OK)
        status = prefix_sum(ctx, flag, pos, count, total);
    return status;
}

/* Sorts the `total` columns whose keys are at work[0 .. total) and values at
 * work[cap .. cap + total) (work: 2 * cap words, cap >= total) by diameter
 * descending, then index ascending, and copies them into the engine's
 * storage. Frees work. */
static int deliver(tmr_columns *c, scalar_rips_columns_query *q, uint64_t *work, uint64_t cap,
                   uint64_t total)
{
    tmc_ctx *ctx = c->ctx;
    int status = TOPOML_OK;
    uint64_t *alt = nullptr;
    void *scratch = nullptr;
    size_t bytes_a = 0, bytes_b = 0;
    if (!fits(c, total * 16 + (128u << 20))) {
        TMC_ALWAYS(ctx, status, cudaFree(work), "cudaFree(columns)");
        return status == TOPOML_OK ? decline(c, "sorting the columns", total * 32) : release(c, status);
    }
    /* the sorts' second buffers */
    TMC_TRY(ctx, status, cudaMalloc((void **)&alt, total ? total * 16 : 16), "cudaMalloc(columns)");
    cub::DoubleBuffer<uint64_t> keys(work, alt), vals(work + cap, alt + total);
    /* index ascending, then (stable) diameter descending */
    TMC_TRY(ctx, status,
            cub::DeviceRadixSort::SortPairs(nullptr, bytes_a, vals, keys, total, 0, 64, ctx->stream),
            "cub::DeviceRadixSort (scratch size)");
    TMC_TRY(ctx, status,
            cub::DeviceRadixSort::SortPairsDescending(nullptr, bytes_b, keys, vals, total, 0, 63,
                                                      ctx->stream),
            "cub::DeviceRadixSort (scratch size)");
    size_t bytes = bytes_a > bytes_b ? bytes_a : bytes_b;
    TMC_TRY(ctx, status, cudaMalloc(&scratch, bytes ? bytes : 1), "cudaMalloc(sort scratch)");
    if (status == TOPOML_OK)
        tmc_note_device_use(ctx);
    TMC_TRY(ctx, status,
            cub::DeviceRadixSort::SortPairs(scratch, bytes, vals, keys, total, 0, 64, ctx->stream),
            "cub::DeviceRadixSort::SortPairs");
    TMC_TRY(ctx, status,
            cub::DeviceRadixSort::SortPairsDescending(scratch, bytes, keys, vals, total, 0, 63,
                                                      ctx->stream),
            "cub::DeviceRadixSort::SortPairsDescending");
    if (status == TOPOML_OK && keys.selector != vals.selector)
        status = tmc_fail(ctx->call, TOPOML_E_INTERNAL,
                          "radix sort left keys and values in different buffers");
    scalar_rips_column *host = nullptr;
    if (status == TOPOML_OK) {
        host = q->reserve(q, total);
        if (!host)
            status = TOPOML_E_NOMEM; /* the engine has recorded why */
    }
    if (status == TOPOML_OK) {
        /* packed into the buffers the result is not in: alt (16 * total
         * bytes) or work (16 * cap) */
        scalar_rips_column *packed = (scalar_rips_column *)(keys.selector ? work : alt);
        pack_kernel<<<tmc_grid_for(total), 256, 0, ctx->stream>>>(keys.Current(), vals.Current(),
                                                              total, packed);
        TMC_TRY(ctx, status, cudaGetLastError(), "pack_kernel launch");
        TMC_TRY(ctx, status,
                cudaMemcpyAsync(host, packed, total * sizeof *host, cudaMemcpyDeviceToHost,
                                ctx->stream),
                "cudaMemcpyAsync(columns to host)");
    }
    TMC_ALWAYS(ctx, status, cudaStreamSynchronize(ctx->stream), "column sort");
    TMC_ALWAYS(ctx, status, cudaFree(scratch), "cudaFree(sort scratch)");
    TMC_ALWAYS(ctx, status, cudaFree(alt), "cudaFree(columns)");
    TMC_ALWAYS(ctx, status, cudaFree(work), "cudaFree(columns)");
    if (status == TOPOML_OK)
        q->n_columns = total;
    return status;
}

/* The columns of the current level into the engine's storage. */
static int columns(tmr_columns *c, scalar_rips_columns_query *q)
{
    tmc_ctx *ctx = c->ctx;
    const uint32_t m = c->m;
    const uint64_t count = c->count;
    int status = TOPOML_OK;
    uint64_t need = (count + 1) * 16 + q->n_cleared * 8 + (64u << 20);
    if (!fits(c, need))
        return decline(c, "testing the simplices", need);
    uint64_t *flag = nullptr, *pos = nullptr, *cleared = nullptr, total = 0;
    TMC_TRY(ctx, status, cudaMalloc((void **)&flag, (count + 1) * 8), "cudaMalloc(flags)");
    TMC_TRY(ctx, status, cudaMalloc((void **)&pos, (count + 1) * 8), "cudaMalloc(flags)");
    if (status == TOPOML_OK)
        status = upload_cleared(ctx, q, &cleared);
    if (status == TOPOML_OK)
        status = test_simplices(c, c->lv, c->ld, count, m, cleared, q->n_cleared, flag, pos, &total);
    tmr_graph g = graph_of(c);
    TMC_ALWAYS(ctx, status, cudaFree(flag), "cudaFree(flags)");
    TMC_ALWAYS(ctx, status, cudaFree(cleared), "cudaFree(cleared)");

    uint64_t *work = nullptr;
    if (status == TOPOML_OK && !fits(c, total * 32 + (128u << 20))) {
        TMC_ALWAYS(ctx, status, cudaFree(pos), "cudaFree(flags)");
        return status == TOPOML_OK ? decline(c, "sorting the columns", total * 32) : release(c, status);
    }
    TMC_TRY(ctx, status, cudaMalloc((void **)&work, total ? total * 16 : 16), "cudaMalloc(columns)");
    if (status == TOPOML_OK) {
        compact_kernel<<<tmc_grid_for(count), 256, 0, ctx->stream>>>(g, c->lv, c->ld, count, m, pos,
                                                                 work, work + total);
        TMC_TRY(ctx, status, cudaGetLastError(), "compact_kernel launch");
    }
    TMC_ALWAYS(ctx, status, cudaStreamSynchronize(ctx->stream), "compact_kernel");
    TMC_ALWAYS(ctx, status, cudaFree(pos), "cudaFree(flags)");
    if (status != TOPOML_OK) {
        TMC_ALWAYS(ctx, status, cudaFree(work), "cudaFree(columns)");
        return status;
    }
    return deliver(c, q, work, total, total);
}

/* Device memory for one chunk of columns_streamed: 64 MiB, or a quarter of
 * what is usable when that is less. TOPOML_CUDA_CHUNK_BYTES sets another
 * size (the tests use tiny chunks to cut small inputs into many). */
static uint64_t chunk_budget(const tmr_columns *c)
{
    uint64_t budget = UINT64_C(64) << 20;
    const char *env = getenv("TOPOML_CUDA_CHUNK_BYTES");
    if (env && *env) {
        char *end = nullptr;
        unsigned long long v = strtoull(env, &end, 10);
        if (end && !*end && v)
            budget = v;
    }
    const uint64_t quarter = tmc_usable_device_memory(c->ctx) / 4;
    return budget < quarter || !quarter ? budget : quarter;
}

/* The columns of the simplices one vertex larger than those of the level
 * held, without ever holding all of those simplices: for the last dimension
 * asked, whose simplices are nobody's parents. The parents go in chunks
 * whose children fit chunk_budget: each chunk's children are grown, tested
 * and compacted, and only the columns stay on the device. The columns come
 * out in the same order as columns() would give them (the sort is the same,
 * and the keys are distinct), so the barcode is too. */
static int columns_streamed(tmr_columns *c, scalar_rips_columns_query *q)
{
    tmc_ctx *ctx = c->ctx;
    const uint32_t m = c->m, mc = m + 1;
    const uint64_t parents = c->count;
    int status = TOPOML_OK;
    if (!fits(c, (parents + 1) * 8 + q->n_cleared * 8 + (64u << 20)))
        return decline(c, "counting the simplices", (parents + 1) * 8 + q->n_cleared * 8);
    /* Each parent has at most n children: below 2^62 in all, the sums and
     * sizes below cannot wrap. */
    if (parents && (uint64_t)c->n > (UINT64_C(1) << 62) / parents)
        return decline(c, "counting the simplices (too many to count in 64 bits)", UINT64_MAX);
    uint64_t *off = nullptr, *cleared = nullptr, *flag = nullptr, *pos = nullptr, *acc = nullptr;
    uint32_t *cv = nullptr;
    double *cd = nullptr;
    uint64_t total = 0, cap = 0, kept = 0, chunk = 0, *hoff = nullptr;
    const char *declined = nullptr;
    uint64_t declined_bytes = 0;
    TMC_TRY(ctx, status, cudaMalloc((void **)&off, (parents + 1) * 8), "cudaMalloc(counts)");
    if (status == TOPOML_OK)
        status = upload_cleared(ctx, q, &cleared);
    tmr_graph g = graph_of(c);
    if (status == TOPOML_OK) {
        extend_kernel<true><<<tmc_grid_for(parents), 256, 0, ctx->stream>>>(
            g, c->lv, c->ld, parents, m, off, nullptr, 0, nullptr, nullptr);
        TMC_TRY(ctx, status, cudaGetLastError(), "extend_kernel launch");
    }
    if (status == TOPOML_OK)
        status = prefix_sum(ctx, off, off, parents, &total);
    /* the offsets on the host, to cut the parents into chunks */
    if (status == TOPOML_OK)
        hoff = (uint64_t *)tmc_host_alloc(ctx, (parents + 1) * 8, "the simplex counts", &status);
    TMC_TRY(ctx, status, cudaMemcpy(hoff, off, (parents + 1) * 8, cudaMemcpyDeviceToHost),
            "cudaMemcpy(simplex counts)");
    if (status == TOPOML_OK) {
        /* vertices, diameter, flag and position of each child */
        const uint64_t per = (uint64_t)mc * 4 + 24, largest_allowed = chunk_budget(c) / per;
        uint64_t largest = 0;
        for (uint64_t p = 0; p < parents; p++)
            if (hoff[p + 1] - hoff[p] > largest)
                largest = hoff[p + 1] - hoff[p];
        chunk = largest > largest_allowed ? largest : largest_allowed;
        if (chunk > total)
            chunk = total;
        if (!chunk)
            chunk = 1;
        if (!fits(c, chunk * per + (64u << 20))) {
            declined = "a chunk of the simplices";
            declined_bytes = chunk * per;
        }
    }
    if (status == TOPOML_OK && !declined) {
        TMC_TRY(ctx, status, cudaMalloc((void **)&cv, chunk * mc * 4), "cudaMalloc(simplices)");
        TMC_TRY(ctx, status, cudaMalloc((void **)&cd, chunk * 8), "cudaMalloc(simplices)");
        TMC_TRY(ctx, status, cudaMalloc((void **)&flag, (chunk + 1) * 8), "cudaMalloc(flags)");
        TMC_TRY(ctx, status, cudaMalloc((void **)&pos, (chunk + 1) * 8), "cudaMalloc(flags)");
    }
    uint64_t chunks = 0;
    for (uint64_t p0 = 0; status == TOPOML_OK && !declined && p0 < parents;) {
        uint64_t p1 = p0 + 1; /* a parent's children always fit a chunk */
        while (p1 < parents && hoff[p1 + 1] - hoff[p0] <= chunk)
            p1++;
        const uint64_t count = hoff[p1] - hoff[p0];
        uint64_t got = 0;
        if (count) {
            extend_kernel<false><<<tmc_grid_for(p1 - p0), 256, 0, ctx->stream>>>(
                g, c->lv + p0 * m, c->ld + p0, p1 - p0, m, nullptr, off + p0, hoff[p0], cv, cd);
            TMC_TRY(ctx, status, cudaGetLastError(), "extend_kernel launch");
            if (status == TOPOML_OK)
                status = test_simplices(c, cv, cd, count, mc, cleared, q->n_cleared, flag, pos, &got);
        }
        if (status == TOPOML_OK && kept + got > cap) {
            /* room for the columns: the first chunk's share of the rest,
             * then doubling */
            uint64_t want = cap ? 2 * cap : (uint64_t)((double)got * total / count * 1.25) + 1024;
            if (want < kept + got)
                want = kept + got;
            if (want > total)
                want = total;
            uint64_t *grown = nullptr;
            if (!fits(c, want * 16 + (64u << 20))) {
                declined = "the columns";
                declined_bytes = want * 16;
            } else {
                TMC_TRY(ctx, status, cudaMalloc((void **)&grown, want * 16), "cudaMalloc(columns)");
                if (kept) {
                    TMC_TRY(ctx, status,
                            cudaMemcpyAsync(grown, acc, kept * 8, cudaMemcpyDeviceToDevice, ctx->stream),
                            "cudaMemcpyAsync(columns)");
                    TMC_TRY(ctx, status,
                            cudaMemcpyAsync(grown + want, acc + cap, kept * 8,
                                            cudaMemcpyDeviceToDevice, ctx->stream),
                            "cudaMemcpyAsync(columns)");
                }
                TMC_ALWAYS(ctx, status, cudaStreamSynchronize(ctx->stream), "columns");
                TMC_ALWAYS(ctx, status, cudaFree(acc), "cudaFree(columns)");
                acc = grown;
                cap = want;
                if (status == TOPOML_OK)
                    tmc_note_device_use(ctx);
            }
        }
        if (status == TOPOML_OK && !declined && got) {
            compact_kernel<<<tmc_grid_for(count), 256, 0, ctx->stream>>>(g, cv, cd, count, mc, pos,
                                                                     acc + kept, acc + cap + kept);
            TMC_TRY(ctx, status, cudaGetLastError(), "compact_kernel launch");
            kept += got;
        }
        if (status == TOPOML_OK && chunks++ == 0)
            tmc_note_device_use(ctx);
        if (status == TOPOML_OK && tmc_cancelled(ctx, "columns", hoff[p1], total))
            status = tmc_fail(ctx->call, TOPOML_E_CANCELLED, "rips: cancelled in dimension %u", q->k);
        p0 = p1;
    }
    TMC_ALWAYS(ctx, status, cudaStreamSynchronize(ctx->stream), "columns");
    TMC_ALWAYS(ctx, status, cudaFree(cv), "cudaFree(simplices)");
    TMC_ALWAYS(ctx, status, cudaFree(cd), "cudaFree(simplices)");
    TMC_ALWAYS(ctx, status, cudaFree(flag), "cudaFree(flags)");
    TMC_ALWAYS(ctx, status, cudaFree(pos), "cudaFree(flags)");
    TMC_ALWAYS(ctx, status, cudaFree(off), "cudaFree(counts)");
    TMC_ALWAYS(ctx, status, cudaFree(cleared), "cudaFree(cleared)");
    tmc_host_free(ctx, hoff);
    if (status != TOPOML_OK || declined) {
        TMC_ALWAYS(ctx, status, cudaFree(acc), "cudaFree(columns)");
        if (status != TOPOML_OK)
            return release(c, status);
        return decline(c, declined, declined_bytes);
    }
    if (!acc) { /* no simplex at all, or none a column */
        TMC_TRY(ctx, status, cudaMalloc((void **)&acc, 16), "cudaMalloc(columns)");
        cap = 1;
        if (status != TOPOML_OK)
            return release(c, status);
    }
    say(c, TOPOML_LOG_DEBUG,
        "cuda rips: dimension %u: %llu simplices in %llu chunk%s of at most %llu, not kept", q->k,
        (unsigned long long)total, (unsigned long long)chunks, chunks == 1 ? "" : "s",
        (unsigned long long)chunk);
    c->streamed = total;
    return deliver(c, q, acc, cap, kept);
}

extern "C" int tmr_columns_hook(void *user, scalar_rips_columns_query *q)
{
    tmr_columns *c = (tmr_columns *)user;
    if (c->declined)
        return SCALAR_RIPS_HOOK_DECLINED;
    if (q->k + 1 > TMR_MAX_VERTS || q->n != c->in->n || q->n > UINT32_MAX - 1) {
        c->declined = true;
        return SCALAR_RIPS_HOOK_DECLINED;
    }
    double t0 = now_ms();
    int status = TOPOML_OK;
    if (!c->ready) {
        status = setup(c, q->n, q->threshold);
        if (status != TOPOML_OK || c->declined)
            return status;
    }
    if (q->threshold != c->threshold)
        return tmc_fail(c->ctx->call, TOPOML_E_INTERNAL,
                        "cuda rips: the threshold changed between dimensions");
    status = binomials(c, q->k + 2);
    /* The last dimension's simplices are nobody's parents: streamed, never
     * held (columns_streamed). */
    const bool stream = q->k >= c->max_dim && c->m <= q->k;
    while (status == TOPOML_OK && !c->declined && c->m < q->k + (stream ? 0 : 1))
        status = extend(c);
    if (status != TOPOML_OK || c->declined)
        return c->declined && status == TOPOML_OK ? SCALAR_RIPS_HOOK_DECLINED : status;
    if (tmc_cancelled(c->ctx, "columns", 0, 0))
        return tmc_fail(c->ctx->call, TOPOML_E_CANCELLED, "rips: cancelled in dimension %u", q->k);
    c->streamed = 0;
    status = stream ? columns_streamed(c, q) : columns(c, q);
    const uint64_t simplices = stream ? c->streamed : c->count;
    if (status == TOPOML_OK)
        say(c, TOPOML_LOG_DEBUG,
            "cuda rips: dimension %u: %llu simplices, %llu columns, %.1f ms on the device", q->k,
            (unsigned long long)simplices, (unsigned long long)q->n_columns, now_ms() - t0);
    return status;
}

extern "C" int tmr_columns_open(tmc_ctx *ctx, const topoml_input_v1 *in, uint32_t max_dim,
                                tmr_columns **out)
{
    int status = TOPOML_OK;
    tmr_columns *c = (tmr_columns *)tmc_host_alloc(ctx, sizeof *c, "the column state", &status);
    *out = c;
    if (!c)
        return status;
    memset(c, 0, sizeof *c);
    c->ctx = ctx;
    c->in = in;
    c->max_dim = max_dim;
    return TOPOML_OK;
}

extern "C" int tmr_columns_close(tmr_columns *c, int status)
{
    if (!c)
        return status;
    status = release(c, status);
    tmc_host_free(c->ctx, c);
    return status;
}
