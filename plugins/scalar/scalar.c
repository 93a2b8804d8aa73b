/*
 * scalar.c — the scalar reference backend: its vtable and capabilities, and
 * the simple ops (pairwise distances, threshold edges, H0 by union-find).
 *
 * This is the code every other backend is judged against, so it is written
 * to be obviously right first: plain loops, metric.h's one definition of
 * each metric, a stable sort. Vietoris–Rips in higher dimensions lives in
 * rips.c, persistence images in image.c.
 *
 * A plugin file: it may include topoml/plugin.h and its own headers only.
 */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metric.h"
#include "scalar.h"
#ifdef TOPOML_SCALAR_HAVE_RIPS
#include "rips.h"
#endif
#ifdef TOPOML_SCALAR_HAVE_IMAGE
#include "image.h"
#endif

int scalar_fail(const topoml_call_v1 *call, int status, const char *fmt, ...)
{
    if (call && call->error && call->error_size) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(call->error, call->error_size, fmt, ap);
        va_end(ap);
    }
    return status;
}

static int scalar_probe(void *state, char *why, size_t why_size)
{
    (void)state;
    if (why && why_size)
        snprintf(why, why_size, "always available (plain C)");
    return TOPOML_OK;
}

#define ALL_METRICS ((1u << TOPOML_METRIC_COUNT) - 1u)
#define BOTH_DTYPES ((1u << TOPOML_F32) | (1u << TOPOML_F64))
#define ALL_INPUTS ((1u << TOPOML_INPUT_KIND_COUNT) - 1u)

static const topoml_capability_v1 scalar_caps[] = {
    {sizeof(topoml_capability_v1), TOPOML_OP_DISTANCES, BOTH_DTYPES, ALL_METRICS,
     1u << TOPOML_INPUT_POINTS, 0, 0, 0, 0, "cpu", "single-threaded reference"},
    {sizeof(topoml_capability_v1), TOPOML_OP_EDGES, BOTH_DTYPES, ALL_METRICS, ALL_INPUTS, 0, 0,
     0, 0, "cpu",
     "single-threaded reference"},
    {sizeof(topoml_capability_v1), TOPOML_OP_H0, BOTH_DTYPES, ALL_METRICS, ALL_INPUTS, 0, 0, 0,
     0, "cpu", "union-find over sorted edges"},
#ifdef TOPOML_SCALAR_HAVE_RIPS
    {sizeof(topoml_capability_v1), TOPOML_OP_RIPS, BOTH_DTYPES, ALL_METRICS, ALL_INPUTS,
     SCALAR_RIPS_MAX_DIM, SCALAR_RIPS_MAX_MODULUS, TOPOML_CAP_GENERATORS | TOPOML_CAP_COCYCLES, 0,
     "cpu",
     "persistent cohomology, clearing, apparent/emergent pairs"},
#endif
#ifdef TOPOML_SCALAR_HAVE_IMAGE
    {sizeof(topoml_capability_v1), TOPOML_OP_IMAGE, 1u << TOPOML_F64, 0, 0, 0, 0, 0, 0, "cpu",
     "exact pixel integrals (erf)"},
#endif
};

static int scalar_capabilities(void *state, const topoml_capability_v1 **caps, uint32_t *n)
{
    (void)state;
    *caps = scalar_caps;
    *n = (uint32_t)(sizeof scalar_caps / sizeof scalar_caps[0]);
    return TOPOML_OK;
}

/* Ask the host whether to go on; true means stop. */
static bool cancelled(const topoml_call_v1 *call, const char *stage, uint64_t done,
                      uint64_t total)
{
    return call->progress && call->progress(call->host_data, stage, done, total) != 0;
}

static int check_input(const topoml_call_v1 *call, const topoml_input_v1 *in, uint32_t kinds)
{
    if (!in || in->struct_size < TOPOML_INPUT_V1_MIN_SIZE)
        return scalar_fail(call, TOPOML_E_INVALID, "input struct missing or too short");
    if (in->kind >= TOPOML_INPUT_KIND_COUNT || !(kinds & (1u << in->kind)))
        return scalar_fail(call, TOPOML_E_UNSUPPORTED, "input kind %u not supported by this op",
                           in->kind);
    if (in->kind != TOPOML_INPUT_SPARSE && in->dtype >= TOPOML_DTYPE_COUNT)
        return scalar_fail(call, TOPOML_E_INVALID, "unknown dtype %u", in->dtype);
    if (in->kind == TOPOML_INPUT_POINTS && in->metric >= TOPOML_METRIC_COUNT)
        return scalar_fail(call, TOPOML_E_INVALID, "unknown metric %u", in->metric);
    if (in->n > UINT32_MAX)
        return scalar_fail(call, TOPOML_E_OVERFLOW, "%llu points: more than 2^32-1",
                           (unsigned long long)in->n);
    if (in->n > 1 && in->kind != TOPOML_INPUT_SPARSE && !in->data)
        return scalar_fail(call, TOPOML_E_INVALID, "input has no data");
    return TOPOML_OK;
}

/* d(i, j) for i > j of a POINTS or CONDENSED input. */
static inline double input_dist(const topoml_input_v1 *in, uint64_t i, uint64_t j)
{
    if (in->kind == TOPOML_INPUT_POINTS)
        return scalar_point_dist(in->dtype, (topoml_metric)in->metric, in->data, in->dim, i, j);
    uint64_t k = i * (i - 1) / 2 + j;
    return in->dtype == TOPOML_F32 ? (double)((const float *)in->data)[k]
                                   : ((const double *)in->data)[k];
}

/* A distance between points of finite coordinates that is not a finite
 * number: beyond the range of the dtype (metric.h computes with scaling, so
 * it is never an intermediate overflow). */
static int point_distance_fail(const topoml_call_v1 *call, const topoml_input_v1 *in, uint64_t i,
                               uint64_t j, double d)
{
    static const char *const names[] = {"euclidean", "sqeuclidean", "manhattan", "chebyshev",
                                        "cosine"};
    return scalar_fail(call, TOPOML_E_OVERFLOW,
                       "the %s distance between points %llu and %llu is %g: beyond the range of "
                       "%s (scale the coordinates)",
                       in->metric < sizeof names / sizeof names[0] ? names[in->metric] : "?",
                       (unsigned long long)j, (unsigned long long)i, d,
                       in->dtype == TOPOML_F32 ? "float32" : "float64");
}

static int scalar_distances(void *state, const topoml_call_v1 *call, const topoml_input_v1 *in,
                            void *out)
{
    (void)state;
    int rc = check_input(call, in, 1u << TOPOML_INPUT_POINTS);
    if (rc != TOPOML_OK)
        return rc;
    uint64_t n = in->n, k = 0;
    for (uint64_t i = 1; i < n; i++) {
        if ((i & 255) == 0 && cancelled(call, "distances", i, n))
            return scalar_fail(call, TOPOML_E_CANCELLED, "cancelled at row %llu",
                               (unsigned long long)i);
        const uint64_t row = k;
        if (in->dtype == TOPOML_F32) {
            const float *p = in->data;
            float *o = out;
            for (uint64_t j = 0; j < i; j++)
                o[k++] = scalar_dist_f32((topoml_metric)in->metric, p + i * in->dim,
                                         p + j * in->dim, in->dim);
        } else {
            const double *p = in->data;
            double *o = out;
            for (uint64_t j = 0; j < i; j++)
                o[k++] = scalar_dist_f64((topoml_metric)in->metric, p + i * in->dim,
                                         p + j * in->dim, in->dim);
        }
        for (uint64_t j = 0; j < i; j++) {
            double d = in->dtype == TOPOML_F32 ? (double)((float *)out)[row + j]
                                               : ((double *)out)[row + j];
            if (!(d <= DBL_MAX) || (in->dtype == TOPOML_F32 && !(d <= FLT_MAX)))
                return point_distance_fail(call, in, i, j, d);
        }
    }
    return TOPOML_OK;
}

static int edge_cmp(const void *a, const void *b)
{
    const topoml_edge *x = a, *y = b;
    if (x->d != y->d)
        return x->d < y->d ? -1 : 1;
    if (x->i != y->i)
        return x->i < y->i ? -1 : 1;
    return (x->j > y->j) - (x->j < y->j);
}

/* Every edge with d <= threshold of a POINTS/CONDENSED/SPARSE input, sorted
 * by (d, i, j). Two passes over the pairs (count, then fill) so that the
 * memory check sees the exact size before anything large is allocated. */
static int collect_edges(const topoml_call_v1 *call, const topoml_input_v1 *in, double threshold,
                         topoml_edge **out, uint64_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    if (isnan(threshold))
        return scalar_fail(call, TOPOML_E_INVALID, "threshold is NaN");
    uint64_t n = in->n, count = 0;
    if (in->kind == TOPOML_INPUT_SPARSE) {
        for (uint64_t e = 0; e < in->n_edges; e++)
            count += in->edges[e].d <= threshold;
    } else {
        for (uint64_t i = 1; i < n; i++) {
            if ((i & 255) == 0 && cancelled(call, "edges: counting", i, n))
                return scalar_fail(call, TOPOML_E_CANCELLED, "cancelled");
            for (uint64_t j = 0; j < i; j++) {
                double d = input_dist(in, i, j);
                if (isnan(d) || d < 0)
                    return scalar_fail(call, TOPOML_E_INVALID,
                                       "distance d(%llu,%llu) is %g: not a distance",
                                       (unsigned long long)i, (unsigned long long)j, d);
                if (isinf(d) && in->kind == TOPOML_INPUT_POINTS)
                    return point_distance_fail(call, in, i, j, d);
                count += d <= threshold;
            }
        }
    }
    uint64_t bytes = count * sizeof(topoml_edge);
    if (call->max_memory && bytes > call->max_memory)
        return scalar_fail(call, TOPOML_E_LIMIT,
                           "%llu edges need %llu bytes, more than the memory limit %llu",
                           (unsigned long long)count, (unsigned long long)bytes,
                           (unsigned long long)call->max_memory);
    if (bytes > SIZE_MAX)
        return scalar_fail(call, TOPOML_E_OVERFLOW, "edge list too large");
    topoml_edge *edges = call->alloc(call->host_data, (size_t)(bytes ? bytes : 1));
    if (!edges)
        return scalar_fail(call, TOPOML_E_NOMEM, "out of memory for %llu edges",
                           (unsigned long long)count);
    uint64_t k = 0;
    if (in->kind == TOPOML_INPUT_SPARSE) {
        for (uint64_t e = 0; e < in->n_edges; e++)
            if (in->edges[e].d <= threshold)
                edges[k++] = in->edges[e];
    } else {
        for (uint64_t i = 1; i < n; i++) {
            if ((i & 255) == 0 && cancelled(call, "edges: collecting", i, n)) {
                call->free(call->host_data, edges);
                return scalar_fail(call, TOPOML_E_CANCELLED, "cancelled");
            }
            for (uint64_t j = 0; j < i; j++) {
                double d = input_dist(in, i, j);
                if (d <= threshold)
                    edges[k++] = (topoml_edge){d, (uint32_t)j, (uint32_t)i};
            }
        }
    }
    qsort(edges, (size_t)count, sizeof *edges, edge_cmp);
    *out = edges;
    *n_out = count;
    return TOPOML_OK;
}

static int scalar_edges(void *state, const topoml_call_v1 *call, const topoml_input_v1 *in,
                        double threshold, topoml_edge **out, uint64_t *n_out)
{
    (void)state;
    int rc = check_input(call, in, (1u << TOPOML_INPUT_KIND_COUNT) - 1u);
    if (rc != TOPOML_OK)
        return rc;
    return collect_edges(call, in, threshold, out, n_out);
}

static uint32_t uf_find(uint32_t *parent, uint32_t x)
{
    while (parent[x] != x) {
        parent[x] = parent[parent[x]]; /* path halving */
        x = parent[x];
    }
    return x;
}

/* H0 by Kruskal: processing edges by increasing (d, i, j), an edge joining
 * two components kills the younger one. Every vertex is born at 0, so by the
 * elder rule the bar [0, d) is recorded; d == 0 (duplicate points) gives a
 * bar of zero length, which is not reported. */
static int scalar_h0(void *state, const topoml_call_v1 *call, const topoml_input_v1 *in,
                     double threshold, topoml_barcode_v1 *out)
{
    (void)state;
    int rc = check_input(call, in, (1u << TOPOML_INPUT_KIND_COUNT) - 1u);
    if (rc != TOPOML_OK)
        return rc;
    if (!out || out->struct_size < TOPOML_BARCODE_V1_MIN_SIZE)
        return scalar_fail(call, TOPOML_E_INVALID, "barcode struct missing or too short");
    topoml_edge *edges = NULL;
    uint64_t n_edges = 0;
    rc = collect_edges(call, in, threshold, &edges, &n_edges);
    if (rc != TOPOML_OK)
        return rc;
    uint64_t n = in->n;
    uint32_t *parent = call->alloc(call->host_data, (size_t)(n ? n : 1) * sizeof *parent);
    topoml_interval *bars =
        call->alloc(call->host_data, (size_t)(n ? n : 1) * sizeof(topoml_interval));
    if (!parent || !bars) {
        call->free(call->host_data, edges);
        if (parent)
            call->free(call->host_data, parent);
        if (bars)
            call->free(call->host_data, bars);
        return scalar_fail(call, TOPOML_E_NOMEM, "out of memory for %llu vertices",
                           (unsigned long long)n);
    }
    for (uint64_t v = 0; v < n; v++)
        parent[v] = (uint32_t)v;
    uint64_t n_bars = 0, components = n;
    for (uint64_t e = 0; e < n_edges && components > 1; e++) {
        uint32_t a = uf_find(parent, edges[e].i), b = uf_find(parent, edges[e].j);
        if (a == b)
            continue;
        parent[a < b ? b : a] = a < b ? a : b;
        components--;
        if (edges[e].d > 0)
            bars[n_bars++] = (topoml_interval){0.0, edges[e].d, 0, 0};
    }
    for (uint64_t c = 0; c < components; c++)
        bars[n_bars++] = (topoml_interval){0.0, INFINITY, 0, 0};
    call->free(call->host_data, edges);
    call->free(call->host_data, parent);
    out->max_dim = 0;
    out->n_intervals = n_bars;
    out->intervals = bars;
    out->complete = 1;
    return TOPOML_OK;
}

#ifdef TOPOML_SCALAR_HAVE_RIPS
static int scalar_rips_op(void *state, const topoml_call_v1 *call, const topoml_input_v1 *in,
                          const topoml_rips_params_v1 *params, topoml_barcode_v1 *out)
{
    (void)state;
    int rc = check_input(call, in, (1u << TOPOML_INPUT_KIND_COUNT) - 1u);
    if (rc != TOPOML_OK)
        return rc;
    return scalar_rips(call, in, params, out);
}
#endif

#ifdef TOPOML_SCALAR_HAVE_IMAGE
static int scalar_image_op(void *state, const topoml_call_v1 *call,
                           const topoml_image_params_v1 *params, uint64_t n_diagrams,
                           const uint64_t *offsets, const topoml_pair *pairs, double *out)
{
    (void)state;
    return scalar_image(call, params, n_diagrams, offsets, pairs, out);
}
#endif

static const topoml_backend_v1 scalar_vtable = {
    .struct_size = sizeof(topoml_backend_v1),
    .abi_version = 1,
    .name = "scalar",
    .version = "0.1.0",
    .vendor = "topoml",
    .description = "exact reference backend in plain C",
    .create = NULL,
    .destroy = NULL,
    .probe = scalar_probe,
    .capabilities = scalar_capabilities,
    .distances = scalar_distances,
    .edges = scalar_edges,
    .h0 = scalar_h0,
#ifdef TOPOML_SCALAR_HAVE_RIPS
    .rips = scalar_rips_op,
#endif
#ifdef TOPOML_SCALAR_HAVE_IMAGE
    .image = scalar_image_op,
#endif
};

const topoml_backend_v1 *topoml_scalar_backend(void)
{
    return &scalar_vtable;
}
