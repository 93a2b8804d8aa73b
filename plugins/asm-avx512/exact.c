/*
 * exact.c — the distances and edges ops for coordinates outside the range
 * where the kernels' plain sums of squares are right (tiling.c calls here
 * first). The kernels add squares of differences as they are: a difference
 * of 1e200 squares to inf, one of 1e-170 to 0. Within [2^-400, 2^480] (f64)
 * or [2^-36, 2^40] (f32) for every nonzero |coordinate|, each nonzero
 * difference is at least an ulp of 2^-400 (2^-36), so its square is a
 * normal number, and a sum of dim squares stays far below the largest: the
 * kernels' error bound (tiling.c) holds. Outside, the pairs are computed
 * here with the scalar reference's own definition (plugins/scalar/metric.h:
 * scaled as hypot does), pair by pair, slower but right; a distance beyond
 * the dtype is TOPOML_E_OVERFLOW, as in the reference.
 */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#include "metric.h"
#include "tiling.h"

bool avx512_in_kernel_range(const topoml_input_v1 *in)
{
    const uint64_t cells = in->n * in->dim;
    if (in->dtype == TOPOML_F32) {
        const float *p = in->data;
        for (uint64_t k = 0; k < cells; k++) {
            float a = fabsf(p[k]);
            if (a != 0 && !(a >= 0x1p-36f && a <= 0x1p+40f))
                return false;
        }
        return true;
    }
    const double *p = in->data;
    for (uint64_t k = 0; k < cells; k++) {
        double a = fabs(p[k]);
        if (a != 0 && !(a >= 0x1p-400 && a <= 0x1p+480))
            return false;
    }
    return true;
}

static int fail(const topoml_call_v1 *call, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(const topoml_call_v1 *call, int status, const char *fmt, ...)
{
    if (call->error && call->error_size) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(call->error, call->error_size, fmt, ap);
        va_end(ap);
    }
    return status;
}

static double pair(const topoml_input_v1 *in, uint64_t i, uint64_t j)
{
    return scalar_point_dist(in->dtype, (topoml_metric)in->metric, in->data, in->dim, i, j);
}

static int overflow(const topoml_call_v1 *call, const topoml_input_v1 *in, uint64_t i, uint64_t j)
{
    return fail(call, TOPOML_E_OVERFLOW,
                "asm-avx512: the distance between points %llu and %llu is beyond the range of %s",
                (unsigned long long)j, (unsigned long long)i,
                in->dtype == TOPOML_F32 ? "float32" : "float64");
}

int avx512_exact_distances(const topoml_call_v1 *call, const topoml_input_v1 *in, void *out)
{
    uint64_t k = 0;
    for (uint64_t i = 1; i < in->n; i++) {
        if (call->progress && call->progress(call->host_data, "distances", i, in->n) != 0)
            return fail(call, TOPOML_E_CANCELLED, "asm-avx512 distances: cancelled");
        for (uint64_t j = 0; j < i; j++, k++) {
            double d = pair(in, i, j);
            if (isinf(d))
                return overflow(call, in, i, j);
            if (in->dtype == TOPOML_F32)
                ((float *)out)[k] = (float)d;
            else
                ((double *)out)[k] = d;
        }
    }
    return TOPOML_OK;
}

int avx512_exact_edges(const topoml_call_v1 *call, const topoml_input_v1 *in, double threshold,
                       topoml_edge **out, uint64_t *n_out)
{
    /* Two passes: the count, checked against the memory limit, then the
     * edges. */
    uint64_t count = 0;
    for (uint64_t i = 1; i < in->n; i++) {
        if (call->progress && call->progress(call->host_data, "edges", i, in->n) != 0)
            return fail(call, TOPOML_E_CANCELLED, "asm-avx512 edges: cancelled");
        for (uint64_t j = 0; j < i; j++) {
            double d = pair(in, i, j);
            if (isinf(d))
                return overflow(call, in, i, j);
            count += d <= threshold;
        }
    }
    if (count == 0)
        return TOPOML_OK;
    const uint64_t bytes = 2 * count * sizeof(topoml_edge);
    if ((call->max_memory && bytes > call->max_memory) || bytes > SIZE_MAX)
        return fail(call, TOPOML_E_LIMIT,
                    "asm-avx512 edges: %llu edges need %llu bytes, more than the memory limit "
                    "of %llu",
                    (unsigned long long)count, (unsigned long long)bytes,
                    (unsigned long long)call->max_memory);
    topoml_edge *e = call->alloc(call->host_data, (size_t)(count * sizeof *e));
    topoml_edge *tmp = call->alloc(call->host_data, (size_t)(count * sizeof *tmp));
    if (!e || !tmp) {
        if (e)
            call->free(call->host_data, e);
        if (tmp)
            call->free(call->host_data, tmp);
        return fail(call, TOPOML_E_NOMEM, "asm-avx512 edges: out of memory for %llu edges",
                    (unsigned long long)count);
    }
    uint64_t k = 0;
    for (uint64_t i = 1; i < in->n; i++)
        for (uint64_t j = 0; j < i; j++) {
            double d = pair(in, i, j);
            if (d <= threshold)
                e[k++] = (topoml_edge){d, (uint32_t)j, (uint32_t)i};
        }
    avx512_sort_edges(e, tmp, count);
    call->free(call->host_data, tmp);
    *out = e;
    *n_out = count;
    return TOPOML_OK;
}
