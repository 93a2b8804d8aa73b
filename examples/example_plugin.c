/*
 * example_plugin.c — a complete topoml backend plugin, built out of tree
 * against the installed headers (topoml/plugin.h) and nothing else of
 * topoml. It computes euclidean distances of f64 point clouds and H0
 * barcodes by Prim's algorithm: O(n^2) time, O(n) memory, no edge list.
 * docs/writing-a-plugin.md walks through it.
 */
#include <topoml/plugin.h>

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>

/* Write a message into call->error and return the status. */
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

/* Nothing to check on a CPU: the reason goes to `topoml backends`. */
static int probe(void *state, char *why, size_t why_size)
{
    (void)state;
    snprintf(why, why_size, "portable C, runs on any CPU");
    return TOPOML_OK;
}

/* What this plugin does. The core sends it nothing outside these records,
 * and the conformance suite tests everything inside them. */
static const topoml_capability_v1 caps[] = {
    {sizeof(topoml_capability_v1), TOPOML_OP_DISTANCES, 1u << TOPOML_F64,
     1u << TOPOML_METRIC_EUCLIDEAN, 1u << TOPOML_INPUT_POINTS, 0, 0, 0, 0, "cpu", NULL},
    {sizeof(topoml_capability_v1), TOPOML_OP_H0, 1u << TOPOML_F64,
     1u << TOPOML_METRIC_EUCLIDEAN, (1u << TOPOML_INPUT_POINTS) | (1u << TOPOML_INPUT_CONDENSED),
     0, 0, 0, 0, "cpu", NULL},
};

static int capabilities(void *state, const topoml_capability_v1 **c, uint32_t *n)
{
    (void)state;
    *c = caps;
    *n = sizeof caps / sizeof caps[0];
    return TOPOML_OK;
}

/* d(i, j) of POINTS (euclidean, f64) or CONDENSED (f64) input. */
static double dist(const topoml_input_v1 *in, uint64_t i, uint64_t j)
{
    if (in->kind == TOPOML_INPUT_CONDENSED) {
        uint64_t hi = i > j ? i : j, lo = i > j ? j : i;
        return ((const double *)in->data)[hi * (hi - 1) / 2 + lo];
    }
    const double *x = (const double *)in->data + i * in->dim;
    const double *y = (const double *)in->data + j * in->dim;
    /* The reference's rounding, bit for bit (its metric.h): a barcode's
     * values must be the input's distances as the reference computes them
     * (docs/conformance.md, "Barcodes"); so no fused multiply-add either
     * (-ffp-contract=off where the target has one). A plain sum of squares,
     * left to right, where no square can overflow or underflow ... */
    double s = 0;
    for (uint64_t k = 0; k < in->dim; k++)
        s += (x[k] - y[k]) * (x[k] - y[k]);
    if (s >= 0x1p-960 && s <= DBL_MAX)
        return sqrt(s);
    /* ... else the differences scaled by a power of two (exact), as hypot
     * does it: coordinates near 1e200 or 1e-170, which the suite checks. A
     * difference that overflows is taken of halves. */
    int half = 0;
    for (uint64_t k = 0; k < in->dim && !half; k++)
        half = isinf(x[k] - y[k]) != 0;
    double m = 0;
    for (uint64_t k = 0; k < in->dim; k++)
        m = fmax(m, fabs(half ? x[k] * 0.5 - y[k] * 0.5 : x[k] - y[k]));
    if (m == 0 || isnan(m))
        return m;
    const int e = ilogb(m);
    s = 0;
    for (uint64_t k = 0; k < in->dim; k++) {
        const double t = scalbn(half ? x[k] * 0.5 - y[k] * 0.5 : x[k] - y[k], -e);
        s += t * t;
    }
    return scalbn(sqrt(s), e + half);
}

/* The core only calls inside the records, but a plugin checks what it is
 * given: another host may be less careful. A host built against an older
 * header hands shorter tables: accept every struct that holds the fields of
 * the first ABI-v1 layout (TOPOML_INPUT_V1_MIN_SIZE and its kin in newer
 * headers; spelled out here so that this file builds against every one). */
static int check(const topoml_call_v1 *call, const topoml_input_v1 *in, uint32_t kinds)
{
    if (!in || in->struct_size < offsetof(topoml_input_v1, edges) + sizeof in->edges ||
        in->kind >= 32 || !(kinds & (1u << in->kind)) || in->dtype != TOPOML_F64 ||
        (in->kind == TOPOML_INPUT_POINTS && in->metric != TOPOML_METRIC_EUCLIDEAN))
        return fail(call, TOPOML_E_UNSUPPORTED, "example: only euclidean f64 input");
    if (in->n > UINT32_MAX)
        return fail(call, TOPOML_E_OVERFLOW, "example: more than 2^32-1 points");
    return TOPOML_OK;
}

/* Ask the host every 256 rows whether to stop. */
static int stop(const topoml_call_v1 *call, const char *stage, uint64_t done, uint64_t total)
{
    return (done & 255) == 0 && call->progress &&
           call->progress(call->host_data, stage, done, total) != 0;
}

static int distances(void *state, const topoml_call_v1 *call, const topoml_input_v1 *in,
                     void *out)
{
    (void)state;
    int rc = check(call, in, 1u << TOPOML_INPUT_POINTS);
    if (rc != TOPOML_OK)
        return rc;
    double *o = out;
    for (uint64_t i = 1; i < in->n; i++) {
        if (stop(call, "distances", i, in->n))
            return fail(call, TOPOML_E_CANCELLED, "example: cancelled at row %llu",
                        (unsigned long long)i);
        for (uint64_t j = 0; j < i; j++)
            *o++ = dist(in, i, j);
    }
    return TOPOML_OK;
}

/* H0 by Prim's algorithm. Every minimum spanning tree has the same edge
 * lengths, and those are the deaths of H0 (Kruskal's union-find gives the
 * same bars): an edge of length d <= threshold is the bar [0, d) (none when
 * d == 0), and each tree edge longer than the threshold leaves one more
 * component alive, one more bar [0, inf). */
static int h0(void *state, const topoml_call_v1 *call, const topoml_input_v1 *in,
              double threshold, topoml_barcode_v1 *out)
{
    (void)state;
    int rc = check(call, in, (1u << TOPOML_INPUT_POINTS) | (1u << TOPOML_INPUT_CONDENSED));
    if (rc != TOPOML_OK)
        return rc;
    if (!out || out->struct_size < offsetof(topoml_barcode_v1, reserved) + sizeof out->reserved ||
        isnan(threshold))
        return fail(call, TOPOML_E_INVALID, "example: bad barcode or threshold");
    uint64_t n = in->n;
    size_t need = (size_t)(n ? n : 1) * (sizeof(double) + 1 + sizeof(topoml_interval));
    if (call->max_memory && need > call->max_memory)
        return fail(call, TOPOML_E_LIMIT, "example: %zu bytes needed, limit %llu", need,
                    (unsigned long long)call->max_memory);
    double *best = call->alloc(call->host_data, (size_t)(n ? n : 1) * sizeof *best);
    unsigned char *done = call->alloc(call->host_data, (size_t)(n ? n : 1));
    topoml_interval *bars = call->alloc(call->host_data, (size_t)(n ? n : 1) * sizeof *bars);
    uint64_t n_bars = 0;
    if (!best || !done || !bars) {
        rc = fail(call, TOPOML_E_NOMEM, "example: out of memory for %llu points",
                  (unsigned long long)n);
        goto out;
    }
    for (uint64_t v = 0; v < n; v++) {
        best[v] = INFINITY;
        done[v] = 0;
    }
    /* Grow the tree from vertex 0; best[v] is v's distance to the tree. */
    for (uint64_t step = 0, v = 0; step < n; step++) {
        if (stop(call, "h0", step, n)) {
            rc = fail(call, TOPOML_E_CANCELLED, "example: cancelled");
            goto out;
        }
        done[v] = 1;
        if (step > 0) {
            if (best[v] > threshold)
                bars[n_bars++] = (topoml_interval){0.0, INFINITY, 0, 0};
            else if (best[v] > 0)
                bars[n_bars++] = (topoml_interval){0.0, best[v], 0, 0};
        }
        uint64_t next = v;
        double next_d = INFINITY;
        for (uint64_t w = 0; w < n; w++) {
            if (done[w])
                continue;
            double d = dist(in, v, w);
            if (isnan(d) || d < 0) {
                rc = fail(call, TOPOML_E_INVALID, "example: d(%llu,%llu) is not a distance",
                          (unsigned long long)v, (unsigned long long)w);
                goto out;
            }
            if (d < best[w])
                best[w] = d;
            if (next == v || best[w] < next_d) {
                next = w;
                next_d = best[w];
            }
        }
        v = next;
    }
    if (n > 0)
        bars[n_bars++] = (topoml_interval){0.0, INFINITY, 0, 0}; /* the tree's root */
    out->max_dim = 0;
    out->n_intervals = n_bars;
    out->intervals = bars;
    out->complete = 1;
    bars = NULL; /* the caller owns them now */
out:
    if (best)
        call->free(call->host_data, best);
    if (done)
        call->free(call->host_data, done);
    if (bars)
        call->free(call->host_data, bars);
    return rc;
}

static const topoml_backend_v1 vtable = {
    .struct_size = sizeof(topoml_backend_v1),
    .abi_version = 1,
    .name = "example",
    .version = "1.0",
    .vendor = "topoml examples",
    .description = "euclidean distances and H0 by Prim's algorithm",
    .probe = probe,
    .capabilities = capabilities,
    .distances = distances,
    .h0 = h0,
};

/* The one exported symbol: speak ABI 1 if the core offers it. */
TOPOML_PLUGIN_EXPORT int topoml_backend_negotiate(uint32_t *abi, const topoml_host_v1 *host,
                                                  const topoml_backend_v1 **out)
{
    (void)host;
    if (*abi < 1)
        return TOPOML_E_ABI;
    *abi = 1;
    *out = &vtable;
    return TOPOML_OK;
}
