/*
 * op_distances.c — the distances op: a point cloud in, its condensed
 * distance matrix (Ripser's order) out, computed on the device band by band.
 *
 * A band is a run of block rows whose condensed entries are contiguous in
 * the output (plan.h), so each band is one kernel launch into one device
 * buffer followed by one copy straight into the caller's array. The buffer
 * is sized from the device's free memory, so an output larger than the
 * device still comes out, one band at a time.
 *
 * Two kernels: float32 points of TB_DISTANCES_DOT_F32_MIN_DIM or more
 * coordinates go through kernels/distances_dot.py (inner products by
 * tl.dot, entries that could lose digits recomputed exactly: within the
 * conformance bound, see that file), everything else through
 * kernels/distances.py (bit-identical to the scalar reference).
 */
#include <string.h>

#include "exact_pairs.h"
#include "plan.h"
#include "tb.h"

/* The largest device buffer one band gets. Bigger bands save launches that
 * cost nothing next to the band's copy; smaller ones let progress reports
 * and cancellation come through more often. */
#define TB_BAND_BYTES ((uint64_t)1 << 30)

int tb_op_distances(void *state, const topoml_call_v1 *call, const topoml_input_v1 *in, void *out)
{
    tb_state *st = state;
    int status = tb_check_points(call, in, "distances");
    if (status != TOPOML_OK)
        return status;
    uint64_t n = in->n, dim = in->dim;
    if (n < 2)
        return TOPOML_OK;
    if (out == NULL)
        return tb_fail(call, TOPOML_E_INVALID, "triton-bridge: distances: no output array");
    /* Coordinates whose squared differences the kernels' plain sums would
     * overflow or underflow: on the host, the reference's way. */
    if (!scalar_in_plain_range(in))
        return scalar_exact_distances(call, in, out, in->dtype == TOPOML_F64, "triton-bridge");
    int f32 = in->dtype == TOPOML_F32;
    size_t esz = f32 ? sizeof(float) : sizeof(double);
    uint64_t total = n * (n - 1) / 2;
    if (dim == 0) {
        /* Points with no coordinates are all at distance 0. */
        memset(out, 0, (size_t)(total * esz));
        return TOPOML_OK;
    }

    tb_device *d;
    if ((status = tb_device_for_call(st, call, &d)) != TOPOML_OK)
        return status;
    if ((status = tb_enter(st, call, d)) != TOPOML_OK)
        return status;

    /* The points go up transposed with a leading dimension `ld`, n rounded
     * up to a multiple of 16 (zeros past the n points), and the kernels are
     * launched for ld points: the dot kernel's loads are then aligned and its
     * masks constant in runs of 16 whatever n is, which is what its _d16
     * variants were compiled for (n = 16383 through a generic variant ran up
     * to 4x slower than n = 16384 through _d16 on an H200); the exact kernel
     * does not care. Condensed indices do not depend on the number of
     * points, so the entries of the ld - n extra rows simply come after the
     * n*(n-1)/2 of the output: they are computed in the last band's buffer
     * and not copied. */
    uint64_t ld = tb_cdiv(n, 16) * 16;
    /* The matrix product pays from about 64 coordinates on (bench/bench.py
     * measures both kernels at every dimension) when its loads are aligned,
     * the _d16 variant, which the padding above always allows. */
    int dot = f32 && dim >= TB_DISTANCES_DOT_F32_MIN_DIM;
    /* Below that, the exact kernel in one of two schedules (long: its loop
     * unrolled; bench/bench.py --sweep measured where each pays). */
    int long_f32 = f32 && !dot && dim >= TB_DISTANCES_LONG_F32_MIN_DIM;
    uint64_t block = dot        ? TB_DISTANCES_DOT_F32_BLOCK
                     : long_f32 ? TB_DISTANCES_LONG_F32_BLOCK
                     : f32      ? TB_DISTANCES_F32_BLOCK
                                : TB_DISTANCES_F64_BLOCK;
    int32_t root = in->metric == TOPOML_METRIC_EUCLIDEAN;
    tb_budget budget = {call, 0};
    /* Device buffers are the device's cached ones (tb_device_buffer): a
     * repeated call of the same size allocates nothing. */
    tb_cudeviceptr xt = 0, xs = 0, buf = 0;
    double t0 = tb_now(), t_kernel = 0, t_copy = 0;
    int variant = -1; /* the tb_kernels[] entry launched last */

    status = tb_upload_points(st, call, &budget, in, ld, d, &xt, dot ? &xs : NULL);
    double t_upload = tb_now() - t0;

    /* The band buffer: at most TB_BAND_BYTES, at most half the free memory
     * (counting the cached band buffer, which may be given up for it), and
     * no more than the whole output needs. */
    uint64_t cap = TB_BAND_BYTES;
    uint64_t free_half = (tb_free_device_memory(st) + d->buf_size[TB_BUF_OUT]) / 2;
    if (cap > free_half)
        cap = free_half;
    tb_band band;
    uint64_t max_entries = 0;
    for (uint64_t bi = 0; status == TOPOML_OK && tb_next_band(ld, block, bi, esz, cap, &band);
         bi = band.bi1)
        if (band.entries > max_entries)
            max_entries = band.entries;
    if (status == TOPOML_OK && max_entries * esz > cap)
        status = tb_fail(call, TOPOML_E_LIMIT,
                         "triton-bridge: distances: one band of %llu rows needs %llu bytes of "
                         "device memory, %llu usable",
                         (unsigned long long)block, (unsigned long long)(max_entries * esz),
                         (unsigned long long)cap);
    if (status == TOPOML_OK)
        status = tb_device_buffer(st, call, d, TB_BUF_OUT, max_entries * esz, "the distances",
                                  &buf);

    uint64_t bands = 0;
    uint64_t per_launch = (uint64_t)d->max_grid_x;
    for (uint64_t bi = 0; status == TOPOML_OK && tb_next_band(ld, block, bi, esz, cap, &band);
         bi = band.bi1) {
        double t = tb_now();
        /* A band of more tiles than one grid holds goes in pieces; every
         * piece writes into the same band buffer (same out0). */
        for (uint64_t k = 0; status == TOPOML_OK && k < band.tiles; k += per_launch) {
            unsigned grid = (unsigned)(band.tiles - k < per_launch ? band.tiles - k : per_launch);
            tb_curesult r;
            if (dot)
                r = tb_launch_distances_dot_f32(&st->cu, d->functions, NULL, grid, 1, 1, &variant,
                                                xt, xs, buf, (int64_t)ld, (int64_t)dim, root,
                                                (int64_t)(band.tile0 + k), (int64_t)band.out0);
            else if (long_f32)
                r = tb_launch_distances_long_f32(&st->cu, d->functions, NULL, grid, 1, 1,
                                                 &variant, xt, buf, (int64_t)ld, (int64_t)dim,
                                                 root, (int64_t)(band.tile0 + k),
                                                 (int64_t)band.out0);
            else if (f32)
                r = tb_launch_distances_f32(&st->cu, d->functions, NULL, grid, 1, 1, &variant,
                                            xt, buf,
                                            (int64_t)ld, (int64_t)dim, root,
                                            (int64_t)(band.tile0 + k), (int64_t)band.out0);
            else
                r = tb_launch_distances_f64(&st->cu, d->functions, NULL, grid, 1, 1, &variant,
                                            xt, buf,
                                            (int64_t)ld, (int64_t)dim, root,
                                            (int64_t)(band.tile0 + k), (int64_t)band.out0);
            status = tb_check(st, call, r, TOPOML_E_DEVICE, "launching pairwise_distances");
        }
        if (status != TOPOML_OK)
            break;
        if ((status = tb_check(st, call, st->cu.cuCtxSynchronize(), TOPOML_E_DEVICE,
                               "running pairwise_distances")))
            break;
        double t2 = tb_now();
        t_kernel += t2 - t;
        /* The entries of the padding rows (past `total`) stay behind. */
        uint64_t entries = band.out0 >= total ? 0
                           : band.entries < total - band.out0 ? band.entries
                                                              : total - band.out0;
        if (entries > 0)
            status = tb_check(
                st, call,
                st->cu.cuMemcpyDtoH((char *)out + band.out0 * esz, buf, (size_t)(entries * esz)),
                TOPOML_E_DEVICE, "copying distances from the device");
        t_copy += tb_now() - t2;
        bands++;
        if (status == TOPOML_OK && tb_cancelled(call, "distances", band.out0 + entries, total))
            status = TOPOML_E_CANCELLED;
    }

    /* After a failure nothing is kept: the next call starts afresh (and a
     * faulted context holds no memory of ours). */
    if (status != TOPOML_OK)
        tb_device_buffers_drop(st, d);
    tb_leave(st);
    if (status == TOPOML_OK)
        tb_debug(call,
                 "triton-bridge: distances n=%llu dim=%llu %s %s: upload %.3f ms, kernels %.3f ms, "
                 "download %.3f ms, %llu bands, kernel %s",
                 (unsigned long long)n, (unsigned long long)dim, f32 ? "f32" : "f64",
                 root ? "euclidean" : "sqeuclidean", 1e3 * t_upload, 1e3 * t_kernel, 1e3 * t_copy,
                 (unsigned long long)bands, variant >= 0 ? tb_kernels[variant].name : "none");
    return status;
}
