/*
 * exact_pairs.h — for accelerated backends whose kernels add squares of
 * differences as they are: which inputs those plain sums get right, and the
 * distances and threshold edges of the other inputs computed pair by pair
 * with the reference's own definition (metric.h, scaled as hypot does).
 *
 * Within [2^-400, 2^480] (f64) or [2^-36, 2^40] (f32) for every nonzero
 * |coordinate|, each nonzero difference or product is a normal number whose
 * square cannot overflow, and a sum of dim squares stays far below the
 * largest: plain kernels keep their usual error bounds. Outside (1e200,
 * 1e-170, 1e-30 in f32), a kernel's difference squares to inf or to 0, so
 * the backend calls these instead: slower, right. A distance beyond the
 * dtype is TOPOML_E_OVERFLOW, as in the reference.
 *
 * Header-only, like metric.h; a backend that compiles the reference's
 * sources in (asm-avx512, cuda, triton-bridge) includes it. Plain C.
 */
#ifndef TOPOML_SCALAR_EXACT_PAIRS_H
#define TOPOML_SCALAR_EXACT_PAIRS_H

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "metric.h"
#include "topoml/plugin.h"

static inline bool scalar_in_plain_range(const topoml_input_v1 *in)
{
    const uint64_t cells = in->n * in->dim;
    if (in->dtype == TOPOML_F32) {
        const float *p = (const float *)in->data;
        for (uint64_t k = 0; k < cells; k++) {
            float a = fabsf(p[k]);
            if (a != 0 && !(a >= 0x1p-36f && a <= 0x1p+40f))
                return false;
        }
        return true;
    }
    const double *p = (const double *)in->data;
    for (uint64_t k = 0; k < cells; k++) {
        double a = fabs(p[k]);
        if (a != 0 && !(a >= 0x1p-400 && a <= 0x1p+480))
            return false;
    }
    return true;
}

static inline int scalar_exact_fail(const topoml_call_v1 *call, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static inline int scalar_exact_fail(const topoml_call_v1 *call, int status, const char *fmt, ...)
{
    if (call->error && call->error_size) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(call->error, call->error_size, fmt, ap);
        va_end(ap);
    }
    return status;
}

static inline int scalar_exact_pair(const topoml_call_v1 *call, const topoml_input_v1 *in,
                                    uint64_t i, uint64_t j, const char *who, double *d)
{
    *d = scalar_point_dist(in->dtype, (topoml_metric)in->metric, in->data, in->dim, i, j);
    if (isnan(*d))
        return scalar_exact_fail(call, TOPOML_E_INVALID,
                                 "%s: distance d(%llu,%llu) is nan: not a distance", who,
                                 (unsigned long long)j, (unsigned long long)i);
    if (!isinf(*d))
        return TOPOML_OK;
    return scalar_exact_fail(call, TOPOML_E_OVERFLOW,
                             "%s: the distance between points %llu and %llu is beyond the range "
                             "of %s",
                             who, (unsigned long long)j, (unsigned long long)i,
                             in->dtype == TOPOML_F32 ? "float32" : "float64");
}

/* The condensed distances (Ripser's order) into `out`: double when out_f64,
 * else the dtype's float. */
static inline int scalar_exact_distances(const topoml_call_v1 *call, const topoml_input_v1 *in,
                                         void *out, bool out_f64, const char *who)
{
    uint64_t k = 0;
    for (uint64_t i = 1; i < in->n; i++) {
        if (call->progress && call->progress(call->host_data, "distances", i, in->n) != 0)
            return scalar_exact_fail(call, TOPOML_E_CANCELLED, "%s: distances cancelled", who);
        for (uint64_t j = 0; j < i; j++, k++) {
            double d;
            int st = scalar_exact_pair(call, in, i, j, who, &d);
            if (st != TOPOML_OK)
                return st;
            if (out_f64)
                ((double *)out)[k] = d;
            else
                ((float *)out)[k] = (float)d;
        }
    }
    return TOPOML_OK;
}

static inline int scalar_exact_edge_order(const void *a, const void *b)
{
    const topoml_edge *x = (const topoml_edge *)a, *y = (const topoml_edge *)b;
    if (x->d != y->d)
        return x->d < y->d ? -1 : 1;
    if (x->i != y->i)
        return x->i < y->i ? -1 : 1;
    return (x->j > y->j) - (x->j < y->j);
}

/* Every pair i < j with d <= threshold, sorted by (d, i, j), in an array
 * from call->alloc (*out NULL when there are none). Two passes: the count,
 * checked against the memory limit, then the edges. */
static inline int scalar_exact_edges(const topoml_call_v1 *call, const topoml_input_v1 *in,
                                     double threshold, topoml_edge **out, uint64_t *n_out,
                                     const char *who)
{
    uint64_t count = 0;
    *out = NULL;
    *n_out = 0;
    for (uint64_t i = 1; i < in->n; i++) {
        if (call->progress && call->progress(call->host_data, "edges", i, in->n) != 0)
            return scalar_exact_fail(call, TOPOML_E_CANCELLED, "%s: edges cancelled", who);
        for (uint64_t j = 0; j < i; j++) {
            double d;
            int st = scalar_exact_pair(call, in, i, j, who, &d);
            if (st != TOPOML_OK)
                return st;
            count += d <= threshold;
        }
    }
    if (count == 0)
        return TOPOML_OK;
    const uint64_t bytes = count * sizeof(topoml_edge);
    if ((call->max_memory && bytes > call->max_memory) || bytes > SIZE_MAX)
        return scalar_exact_fail(call, TOPOML_E_LIMIT,
                                 "%s: %llu edges need %llu bytes, more than the memory limit of "
                                 "%llu",
                                 who, (unsigned long long)count, (unsigned long long)bytes,
                                 (unsigned long long)call->max_memory);
    topoml_edge *e = (topoml_edge *)call->alloc(call->host_data, (size_t)bytes);
    if (!e)
        return scalar_exact_fail(call, TOPOML_E_NOMEM, "%s: out of memory for %llu edges", who,
                                 (unsigned long long)count);
    uint64_t k = 0;
    for (uint64_t i = 1; i < in->n; i++)
        for (uint64_t j = 0; j < i; j++) {
            double d = scalar_point_dist(in->dtype, (topoml_metric)in->metric, in->data, in->dim,
                                         i, j);
            if (d <= threshold) {
                e[k].d = d;
                e[k].i = (uint32_t)j;
                e[k].j = (uint32_t)i;
                k++;
            }
        }
    qsort(e, (size_t)count, sizeof *e, scalar_exact_edge_order);
    *out = e;
    *n_out = count;
    return TOPOML_OK;
}

#endif /* TOPOML_SCALAR_EXACT_PAIRS_H */
