/*
 * ops.c — the public ops (distances, edges, barcodes, data statistics): check
 * the arguments, pick a backend (registry.c), call it through the ABI, and
 * check what comes back before the caller sees it.
 *
 * A backend's answer is not trusted blindly: statuses outside the known set
 * become TOPOML_E_PLUGIN, every answer of a plugin is verified (verify.c:
 * invariants, spot checks, re-runs on the reference; a wrong one is replaced
 * by the reference's), and every array a plugin hands over is freed with the
 * allocator it came from.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/api.h"
#include "compute/compute.h"
#include "gate/gate.h"
#include "metric.h"

struct topoml_barcode {
    topoml_context *ctx;
    uint32_t max_dim;
    int complete;
    uint64_t n;
    topoml_interval *intervals;
    /* What it was computed from, for the JSON and CSV output. */
    double threshold;      /* as asked: +INFINITY for none */
    bool cut;              /* the threshold cut the filtration short (below) */
    bool dense;            /* points or a matrix: every pair has a distance */
    uint32_t input_format; /* topoml_format of the data set */
    uint64_t points;
    topoml_generator *generators; /* NULL unless TOPOML_RIPS_GENERATORS */
    /* NULL unless TOPOML_RIPS_COCYCLES: topoml_barcode_v1's layout */
    uint64_t *cocycle_offsets;
    uint32_t *cocycles;
    uint32_t modulus; /* the coefficients' Z/p */
    int status; /* TOPOML_OK, or what stopped it: TOPOML_E_CANCELLED, TOPOML_E_LIMIT */
};

/* Bytes after a distance array that a backend must leave alone. */
#define GUARD_BYTES 64
#define GUARD_BYTE 0xA5

/* Is interval k alive at the threshold (its death unknown, beyond it)
 * rather than essential? Only when the threshold cut the filtration short:
 * a threshold below the largest distance of a sparse input, or any finite
 * threshold of a dense one. A dense input's full complex is a simplex, so
 * exactly one class (of H0) is essential; all H0 bars are born at 0, and
 * the first infinite one is taken as it. */
static bool interval_cut_off(const struct topoml_barcode *bc, uint64_t k)
{
    const topoml_interval *v = &bc->intervals[k];
    if (!bc->cut || !isinf(v->death))
        return false;
    if (!bc->dense || v->dim > 0)
        return true;
    for (uint64_t m = 0; m < k; m++)
        if (bc->intervals[m].dim == 0 && isinf(bc->intervals[m].death))
            return true;
    return false;
}

static void input_from_data(const struct topoml_data *d, uint32_t metric, topoml_input_v1 *in)
{
    memset(in, 0, sizeof *in);
    in->struct_size = sizeof *in;
    in->kind = d->kind;
    in->n = d->n;
    in->dim = d->dim;
    in->dtype = TOPOML_F64;
    in->metric = metric;
    in->data = d->values;
    in->n_edges = d->n_edges;
    in->edges = d->edges;
    if (d->memory != TOPOML_MEMORY_HOST) {
        in->dtype = d->device_dtype;
        in->data = d->device_values;
        in->memory = d->memory;
        in->device = d->device;
        in->stream = d->stream;
    }
}

/* A plugin's status, mapped into the known set, with its message. */
static int backend_error(topoml_context *ctx, const tm_backend *b, int rc, const char *msg)
{
    if (rc > 0 || rc < TOPOML_E_INTERNAL)
        return tm_error(ctx, TOPOML_E_PLUGIN, "backend '%s' returned unknown status %d: %s",
                        b->name, rc, msg[0] ? msg : "(no message)");
    /* A plugin knows the limit's size, not where it came from. */
    char src[320] = "";
    if (rc == TOPOML_E_LIMIT) {
        char buf[300];
        snprintf(src, sizeof src, " (memory limit: %s)", tm_max_memory_source(ctx, buf, sizeof buf));
    }
    if (b->path)
        return tm_error(ctx, rc, "%s%s [backend %s]", msg[0] ? msg : topoml_strerror(rc), src,
                        b->name);
    return tm_error(ctx, rc, "%s%s", msg[0] ? msg : topoml_strerror(rc), src);
}

tm_backend *tm_fallback_after_failure(topoml_context *ctx, const tm_backend *b, uint32_t op,
                                      int rc, const char *msg)
{
    if (!b->path || ctx->preferred || rc == TOPOML_OK || rc == TOPOML_E_CANCELLED ||
        rc == TOPOML_E_LIMIT)
        return NULL;
    tm_backend *ref = &ctx->backends[0];
    const char *what = msg && msg[0] ? msg : topoml_strerror(rc);
    tm_log(ctx, TOPOML_LOG_WARN,
           "backend '%s' failed its %s call (%s); the %s reference computes it instead", b->name,
           tm_op_name(op), what, ref->name);
    snprintf(ctx->last_backend, sizeof ctx->last_backend, "%s", ref->name);
    snprintf(ctx->last_reason, sizeof ctx->last_reason,
             "the reference: backend '%.60s' failed (%.300s)", b->name, what);
    return ref;
}

static bool is_prime(uint32_t p)
{
    if (p < 2)
        return false;
    /* q <= p / q, not q * q <= p: the square wraps for primes near 2^32. */
    for (uint32_t q = 2; q <= p / q; q++)
        if (p % q == 0)
            return false;
    return true;
}

int topoml_distances(topoml_context *ctx, const topoml_data *points, topoml_metric metric,
                     topoml_dtype dtype, void **out, uint64_t *count)
{
    if (!ctx)
        return TOPOML_E_INVALID;
    if (!points || !out || !count)
        return tm_error(ctx, TOPOML_E_INVALID, "distances: NULL argument");
    *out = NULL;
    *count = 0;
    if (points->kind != TOPOML_INPUT_POINTS)
        return tm_error(ctx, TOPOML_E_INVALID,
                        "distances need a point cloud; this data set is a distance matrix");
    if (points->memory != TOPOML_MEMORY_HOST) {
        /* No backend's distances op reads device memory (yet): a host copy. */
        struct topoml_data host;
        int hrc = tm_data_host_copy(ctx, points, &host);
        if (hrc == TOPOML_OK)
            hrc = topoml_distances(ctx, &host, metric, dtype, out, count);
        tm_data_host_release(ctx, &host);
        return hrc;
    }
    if ((unsigned)metric >= TOPOML_METRIC_COUNT || (unsigned)dtype >= TOPOML_DTYPE_COUNT)
        return tm_error(ctx, TOPOML_E_INVALID, "distances: unknown metric or dtype");
    uint64_t n = points->n, pairs, bytes, coord_bytes = 0;
    size_t elem = dtype == TOPOML_F32 ? sizeof(float) : sizeof(double);
    if (!tm_mul_u64(n, n ? n - 1 : 0, &pairs) || !tm_mul_u64(pairs / 2, elem, &bytes))
        return tm_error(ctx, TOPOML_E_OVERFLOW, "distances of %llu points overflow",
                        (unsigned long long)n);
    pairs /= 2;
    if (dtype == TOPOML_F32 && !tm_mul_u64(n * points->dim, sizeof(float), &coord_bytes))
        return tm_error(ctx, TOPOML_E_OVERFLOW, "coordinates overflow");
    int rc = tm_check_memory(ctx, bytes + coord_bytes, "the distance matrix");
    if (rc != TOPOML_OK)
        return rc;
    if (bytes > SIZE_MAX - 1)
        return tm_error(ctx, TOPOML_E_OVERFLOW, "distance matrix too large for this machine");

    topoml_input_v1 in;
    input_from_data(points, metric, &in);
    float *coords32 = NULL;
    if (dtype == TOPOML_F32) {
        coords32 = tm_alloc(ctx, (size_t)coord_bytes);
        if (!coords32)
            return tm_nomem(ctx, (size_t)coord_bytes);
        for (uint64_t k = 0; k < n * points->dim; k++) {
            coords32[k] = (float)points->values[k];
            if (isinf(coords32[k])) {
                tm_free(ctx, coords32);
                return tm_error(ctx, TOPOML_E_OVERFLOW,
                                "distances in float32: coordinate %llu of point %llu (%g) is "
                                "beyond the range of float32",
                                (unsigned long long)(k % points->dim),
                                (unsigned long long)(k / points->dim), points->values[k]);
            }
        }
        in.dtype = TOPOML_F32;
        in.data = coords32;
    }
    tm_backend *b;
    rc = tm_select(ctx, TOPOML_OP_DISTANCES, &in, 0, 0, &b);
    if (rc != TOPOML_OK) {
        tm_free(ctx, coords32);
        return rc;
    }
    /* A guard zone after the array catches a backend that writes past it. */
    if (bytes > SIZE_MAX - 1 - GUARD_BYTES)
        return tm_error(ctx, TOPOML_E_OVERFLOW, "distance matrix too large for this machine");
    unsigned char *buf = tm_alloc(ctx, (size_t)bytes + GUARD_BYTES);
    if (!buf) {
        tm_free(ctx, coords32);
        return tm_nomem(ctx, (size_t)bytes);
    }
    memset(buf + bytes, GUARD_BYTE, GUARD_BYTES);
    char msg[512];
    topoml_call_v1 call;
    tm_call_init(ctx, &call, msg, sizeof msg);
    tm_verify_call vc;
    tm_verify_begin(ctx, b, &in, &call, &vc);
    rc = b->vt->distances(b->state, &call, &in, buf);
    tm_backend *ref = tm_fallback_after_failure(ctx, b, TOPOML_OP_DISTANCES, rc, msg);
    if (ref) {
        b = ref;
        tm_call_init(ctx, &call, msg, sizeof msg);
        rc = b->vt->distances(b->state, &call, &in, buf);
    }
    if (rc == TOPOML_OK) {
        bool guard_ok = true;
        for (size_t k = 0; k < GUARD_BYTES; k++)
            guard_ok &= buf[bytes + k] == GUARD_BYTE;
        rc = tm_verify_distances(ctx, &b, &in, &vc, buf, pairs, guard_ok);
        tm_free(ctx, coords32);
        if (rc != TOPOML_OK) {
            tm_free(ctx, buf);
            return rc;
        }
    } else {
        tm_free(ctx, coords32);
        tm_free(ctx, buf);
        return backend_error(ctx, b, rc, msg);
    }
    *out = buf;
    *count = pairs;
    return TOPOML_OK;
}

int topoml_edges(topoml_context *ctx, const topoml_data *data, topoml_metric metric,
                 double threshold, topoml_edge **out, uint64_t *n_out)
{
    if (!ctx)
        return TOPOML_E_INVALID;
    if (!data || !out || !n_out)
        return tm_error(ctx, TOPOML_E_INVALID, "edges: NULL argument");
    *out = NULL;
    *n_out = 0;
    if ((unsigned)metric >= TOPOML_METRIC_COUNT)
        return tm_error(ctx, TOPOML_E_INVALID, "edges: unknown metric");
    if (isnan(threshold) || threshold < 0)
        return tm_error(ctx, TOPOML_E_INVALID, "edges: threshold must be a number >= 0");
    if (data->memory != TOPOML_MEMORY_HOST) {
        struct topoml_data host;
        int hrc = tm_data_host_copy(ctx, data, &host);
        if (hrc == TOPOML_OK)
            hrc = topoml_edges(ctx, &host, metric, threshold, out, n_out);
        tm_data_host_release(ctx, &host);
        return hrc;
    }
    topoml_input_v1 in;
    input_from_data(data, metric, &in);
    tm_backend *b;
    int rc = tm_select(ctx, TOPOML_OP_EDGES, &in, 0, 0, &b);
    if (rc != TOPOML_OK)
        return rc;
    char msg[512];
    topoml_call_v1 call;
    tm_call_init(ctx, &call, msg, sizeof msg);
    topoml_edge *e = NULL;
    uint64_t n = 0;
    tm_verify_call vc;
    tm_verify_begin(ctx, b, &in, &call, &vc);
    rc = b->vt->edges(b->state, &call, &in, threshold, &e, &n);
    tm_backend *ref = tm_fallback_after_failure(ctx, b, TOPOML_OP_EDGES, rc, msg);
    if (ref) {
        tm_free(ctx, e);
        e = NULL;
        n = 0;
        b = ref;
        tm_call_init(ctx, &call, msg, sizeof msg);
        rc = b->vt->edges(b->state, &call, &in, threshold, &e, &n);
    }
    if (rc != TOPOML_OK) {
        tm_free(ctx, e);
        return backend_error(ctx, b, rc, msg);
    }
    rc = tm_verify_edges(ctx, &b, &in, &vc, threshold, &e, &n);
    if (rc != TOPOML_OK) {
        tm_free(ctx, e);
        return rc;
    }
    *out = e;
    *n_out = n;
    return TOPOML_OK;
}

void topoml_rips_options_init(topoml_rips_options *opts)
{
    if (!opts)
        return;
    memset(opts, 0, sizeof *opts);
    opts->struct_size = sizeof *opts;
    opts->max_dim = 1;
    opts->threshold = INFINITY;
    opts->modulus = 2;
    opts->metric = TOPOML_METRIC_EUCLIDEAN;
    opts->weight_p = 1;
    opts->dtm_neighbors = 3;
    opts->dtm_r = 2;
}

/* The intervals must be grouped by dimension, within 0..max_dim, with
 * birth <= death and no NaN; bars of zero length are dropped here too so
 * that no backend can make the output disagree on that convention. */
static int check_barcode(topoml_context *ctx, const tm_backend *b, topoml_barcode_v1 *bc,
                         uint32_t max_dim)
{
    topoml_generator *g = bc->generators;
    uint64_t *co = bc->cocycle_offsets; /* checked (tm_cocycles_malformed) */
    uint64_t from = 0;                  /* co[k] as it was before compaction */
    uint32_t last = 0;
    uint64_t kept = 0;
    if (bc->max_dim > max_dim)
        return tm_error(ctx, TOPOML_E_PLUGIN, "backend '%s' returned dimension %u > %u", b->name,
                        bc->max_dim, max_dim);
    for (uint64_t k = 0; k < bc->n_intervals; k++) {
        topoml_interval *v = &bc->intervals[k];
        if (v->dim < last || v->dim > bc->max_dim || isnan(v->birth) || isnan(v->death) ||
            v->death < v->birth || isinf(v->birth))
            return tm_error(ctx, TOPOML_E_PLUGIN,
                            "backend '%s' returned a bad interval %llu (dim %u, [%g,%g))",
                            b->name, (unsigned long long)k, v->dim, v->birth, v->death);
        last = v->dim;
        const uint64_t c0 = from, c1 = co ? co[k + 1] : 0;
        from = c1;
        if (!(v->death > v->birth))
            continue;
        if (g)
            g[kept] = g[k];
        if (co) {
            /* the bar's rows follow those of the bars kept before it */
            if (co[kept] != c0)
                memmove(bc->cocycles + co[kept], bc->cocycles + c0,
                        (size_t)(c1 - c0) * sizeof *bc->cocycles);
            co[kept + 1] = co[kept] + (c1 - c0);
        }
        bc->intervals[kept++] = *v;
    }
    bc->n_intervals = kept;
    return TOPOML_OK;
}

/* Generators or cocycles asked for: `b` if its rips capability for this
 * input says it gives them (cocycles: and it runs in this process; the
 * isolation's channel carries no cocycles), else the built-in scalar
 * reference (which always does). */
static tm_backend *generators_backend(topoml_context *ctx, tm_backend *b, uint32_t op,
                                      const topoml_input_v1 *in, const topoml_rips_options *o)
{
    if (op != TOPOML_OP_RIPS)
        return b; /* H0 by union-find (max_dim 0 without a rips op): none */
    const bool gens = (o->flags & TOPOML_RIPS_GENERATORS) != 0;
    const bool coc = (o->flags & TOPOML_RIPS_COCYCLES) != 0;
    const char *what = gens && coc ? "generators and cocycles" : gens ? "generators" : "cocycles";
    const uint32_t need = (gens ? TOPOML_CAP_GENERATORS : 0) | (coc ? TOPOML_CAP_COCYCLES : 0);
    if (!need)
        return b;
    if ((!gens || tm_caps_generators(b->caps, b->n_caps)) &&
        (!coc || (tm_caps_cover_features(b->caps, b->n_caps, op, in, o->max_dim, o->modulus,
                                         TOPOML_CAP_COCYCLES) &&
                  !b->isolated)))
        return b;
    tm_backend *ref = &ctx->backends[0];
    tm_log(ctx, TOPOML_LOG_INFO,
           "%s: backend '%s' does not give them%s; the %s reference computes the barcode", what,
           b->name, coc && b->isolated ? " in its own process" : "", ref->name);
    snprintf(ctx->last_backend, sizeof ctx->last_backend, "%s", ref->name);
    snprintf(ctx->last_reason, sizeof ctx->last_reason, "%s asked for; %s cannot give them", what,
             b->name);
    return ref;
}

/* Generators, when asked for, must have come back (one per interval, vertices
 * below n, each edge's vertices ascending, or TOPOML_NO_VERTEX where the
 * interval has no such edge); when not asked for, none may come back. */
static int check_generators(topoml_context *ctx, const tm_backend *b, topoml_barcode_v1 *bc,
                            uint64_t n, bool asked)
{
    if (!asked) {
        if (bc->generators)
            return tm_error(ctx, TOPOML_E_PLUGIN, "backend '%s' returned generators not asked for",
                            b->name);
        return TOPOML_OK;
    }
    if (!bc->generators && bc->n_intervals > 0)
        return tm_error(ctx, TOPOML_E_PLUGIN, "backend '%s' returned no generators", b->name);
    for (uint64_t k = 0; k < bc->n_intervals; k++) {
        const topoml_generator *g = &bc->generators[k];
        const topoml_interval *v = &bc->intervals[k];
        const bool need_birth = v->dim > 0, need_death = !isinf(v->death);
        const uint32_t *e[2] = {g->birth, g->death};
        const bool need[2] = {need_birth, need_death};
        for (int t = 0; t < 2; t++) {
            bool ok = need[t] ? e[t][0] < e[t][1] && e[t][1] < n
                              : e[t][0] == TOPOML_NO_VERTEX && e[t][1] == TOPOML_NO_VERTEX;
            if (!ok)
                return tm_error(ctx, TOPOML_E_PLUGIN,
                                "backend '%s' returned a bad %s edge (%u, %u) for interval %llu",
                                b->name, t ? "death" : "birth", e[t][0], e[t][1],
                                (unsigned long long)k);
        }
    }
    return TOPOML_OK;
}

/* TOPOML_COLLAPSE_AUTO goes on with the collapse only if it removes at
 * least this share of the longest tenth of the edges, the first it
 * processes (docs/architecture.md, "Edge collapse", has the measurements):
 * where few edges are dominated, as in sphere_3_192, the search costs more
 * than the reduction it saves; the probe stops as soon as the answer is
 * clear (collapse.c), there after about a quarter of that tenth. */
#define TM_COLLAPSE_AUTO_PROBE 0.1
/* The edge collapse stage: when it runs, `in` becomes the collapsed graph
 * (SPARSE, edges in col->edges) and col->threshold the threshold that goes
 * with it. */
static int collapse_stage(topoml_context *ctx, const struct topoml_data *d,
                          const topoml_rips_options *o, topoml_input_v1 *in, tm_collapsed *col)
{
    /* H0 alone gains nothing from it. */
    if (o->max_dim == 0 || o->collapse == TOPOML_COLLAPSE_OFF)
        return TOPOML_OK;
    double probe = o->collapse == TOPOML_COLLAPSE_ON ? 0.0 : TM_COLLAPSE_AUTO_PROBE;
    /* The collapse reports its stages from inside and stops at a cancel
     * (collapse.c, cl_tick; docs/embedding.md, "Progress"). */
    struct timespec t0, t1;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    /* on the threads the op may use: its own count, else the
     * configuration's (tm_threads_allowed: 0 is every CPU) */
    const unsigned threads = tm_threads_allowed(o->n_threads ? o->n_threads : ctx->config.threads);
    int rc = tm_collapse_input(ctx, d, o->metric, o->threshold, probe, o->max_dim, threads, col);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
    const double cpu =
        (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    if (rc == TOPOML_OK && col->planned)
        tm_log(ctx, TOPOML_LOG_INFO,
               "edge collapse: %s: %llu edges on %llu vertices, H%u: estimated %.3g s of "
               "collapse against %.3g s of reduction",
               col->plan.worth ? "may pay, the probe decides" : "not done, it would not pay",
               (unsigned long long)col->n_before, (unsigned long long)d->n, o->max_dim,
               col->plan.collapse_s, col->plan.reduction_s);
    if (rc == TOPOML_OK && col->probe.size)
        tm_log(ctx, TOPOML_LOG_INFO,
               "edge collapse: %s: the probe removed %llu of the first %llu of the longest "
               "%llu edges (auto goes on at %g%%); the stage took %.4f s CPU",
               col->probe.declined ? "not done" : "goes on",
               (unsigned long long)col->probe.removed, (unsigned long long)col->probe.examined,
               (unsigned long long)col->probe.size, 100.0 * probe, cpu);
    if (rc != TOPOML_OK || !col->done)
        return rc;
    tm_log(ctx, TOPOML_LOG_INFO, "edge collapse: %llu of %llu edges remain (threshold %g)",
           (unsigned long long)col->n_edges, (unsigned long long)col->n_before, col->threshold);
    if (col->probe.threads > 1)
        tm_log(ctx, TOPOML_LOG_DEBUG,
               "edge collapse: on %u threads, %llu batches; %llu of %llu edges done again "
               "in order, %llu on one thread after the look-ahead stopped paying",
               col->probe.threads, (unsigned long long)col->probe.batches,
               (unsigned long long)col->probe.redone, (unsigned long long)col->n_before,
               (unsigned long long)col->probe.alone);
    in->kind = TOPOML_INPUT_SPARSE;
    in->dim = 0;
    in->data = NULL;
    in->n_edges = col->n_edges;
    in->edges = col->edges;
    return TOPOML_OK;
}

/* Data in device memory: *b is the backend that takes it there for these
 * options (rips with TOPOML_CAP_DEVICE_INPUT), or NULL when it must go
 * through a host copy — no such backend, generators asked for and that
 * backend cannot give them (the reference then does), or the collapse
 * turned on (a stage of the core, on the host). Under TOPOML_COLLAPSE_AUTO
 * the device path does without it. */
static int device_stage(topoml_context *ctx, const struct topoml_data *d,
                        const topoml_rips_options *o, const topoml_input_v1 *in, tm_backend **b)
{
    *b = NULL;
    if (o->collapse == TOPOML_COLLAPSE_ON && o->max_dim > 0)
        return TOPOML_OK;
    ctx->select_edges = 0; /* not read on the host: every pair */
    ctx->select_threads = o->n_threads;
    int rc = tm_select(ctx, TOPOML_OP_RIPS, in, o->max_dim, o->modulus, b);
    if (rc == TOPOML_E_GATE || rc == TOPOML_E_NOT_FOUND)
        return rc; /* a backend named that cannot run: as for host data */
    if (rc != TOPOML_OK) {
        tm_log(ctx, TOPOML_LOG_INFO, "data set on device %d: %s; using a host copy",
               (int)d->device, topoml_errmsg(ctx));
        *b = NULL;
        return TOPOML_OK;
    }
    /* cocycles: the reference, on a host copy */
    if (o->flags & TOPOML_RIPS_COCYCLES) {
        tm_log(ctx, TOPOML_LOG_INFO, "data set on device %d: cocycles asked for; using a host copy",
               (int)d->device);
        *b = NULL;
        return TOPOML_OK;
    }
    /* the record that takes this input must say generators itself */
    if ((o->flags & TOPOML_RIPS_GENERATORS) &&
        !tm_caps_cover_features((*b)->caps, (*b)->n_caps, TOPOML_OP_RIPS, in, o->max_dim,
                                o->modulus, TOPOML_CAP_GENERATORS)) {
        tm_log(ctx, TOPOML_LOG_INFO,
               "data set on device %d: generators asked for and backend '%s' does not give "
               "them; using a host copy",
               (int)d->device, (*b)->name);
        *b = NULL;
        return TOPOML_OK;
    }
    if (o->max_dim > 0 && o->collapse == TOPOML_COLLAPSE_AUTO)
        tm_log(ctx, TOPOML_LOG_INFO,
               "edge collapse: not done; backend '%s' reads the data set on device %d",
               (*b)->name, (int)d->device);
    return TOPOML_OK;
}

static int barcode_on_host_copy(topoml_context *ctx, topoml_barcode **out,
                                const struct topoml_data *d, const topoml_rips_options *opts)
{
    struct topoml_data host;
    int rc = tm_data_host_copy(ctx, d, &host);
    if (rc == TOPOML_OK)
        rc = topoml_barcode_compute(ctx, out, &host, opts);
    tm_data_host_release(ctx, &host);
    return rc;
}

/* A weighted Rips filtration (topoml.h, "Weighted Rips filtrations";
 * weights.c): the backend computes the Rips barcode of the weighted edge
 * values, checked as any Rips call, and its H0 (every vertex born at 0) is
 * replaced by the one with the vertices born at their weights. */
static int weighted_barcode(topoml_context *ctx, topoml_barcode **out, const topoml_data *data,
                            const topoml_rips_options *o)
{
    if (o->flags & (TOPOML_RIPS_GENERATORS | TOPOML_RIPS_COCYCLES))
        return tm_error(ctx, TOPOML_E_UNSUPPORTED,
                        "weighted Rips filtrations: no generators or cocycles (yet)");
    if (data->memory != TOPOML_MEMORY_HOST)
        return tm_error(ctx, TOPOML_E_UNSUPPORTED,
                        "weighted Rips filtrations: data in device memory is not supported");
    topoml_data *wd = NULL;
    double *w = NULL;
    int rc = tm_weighted_data(ctx, data, o, &wd, &w);
    if (rc != TOPOML_OK)
        return rc;
    topoml_rips_options plain = *o;
    plain.weights = TOPOML_WEIGHTS_NONE;
    plain.vertex_weights = NULL;
    struct topoml_barcode *bc = NULL;
    rc = topoml_barcode_compute(ctx, &bc, wd, &plain);
    if (bc && bc->n > 0) {
        topoml_interval *h0 = NULL;
        uint64_t n0 = 0;
        int hrc = tm_weighted_h0(ctx, wd, w, o->threshold, &h0, &n0);
        uint64_t higher = 0;
        while (higher < bc->n && bc->intervals[higher].dim == 0)
            higher++;
        topoml_interval *all =
            hrc == TOPOML_OK ? tm_alloc(ctx, (size_t)(n0 + bc->n - higher + 1) * sizeof *all)
                             : NULL;
        if (!all) {
            if (hrc == TOPOML_OK)
                hrc = tm_nomem(ctx, (n0 + bc->n - higher) * sizeof *all);
            tm_free(ctx, h0);
            topoml_barcode_free(bc);
            topoml_data_free(ctx, wd);
            tm_free(ctx, w);
            return hrc;
        }
        memcpy(all, h0, (size_t)n0 * sizeof *all);
        memcpy(all + n0, bc->intervals + higher, (size_t)(bc->n - higher) * sizeof *all);
        tm_free(ctx, h0);
        tm_free(ctx, bc->intervals);
        bc->intervals = all;
        bc->n = n0 + bc->n - higher;
    }
    if (bc) {
        bc->input_format = data->format;
        bc->dense = data->kind != TOPOML_INPUT_SPARSE;
    }
    topoml_data_free(ctx, wd);
    tm_free(ctx, w);
    *out = bc;
    return rc;
}

int topoml_barcode_compute(topoml_context *ctx, topoml_barcode **out, const topoml_data *data,
                           const topoml_rips_options *opts)
{
    if (!ctx)
        return TOPOML_E_INVALID;
    if (!out || !data)
        return tm_error(ctx, TOPOML_E_INVALID, "barcode: NULL argument");
    *out = NULL;
    topoml_rips_options o;
    topoml_rips_options_init(&o);
    if (opts) {
        if (opts->struct_size < sizeof(uint32_t) * 2)
            return tm_error(ctx, TOPOML_E_INVALID, "barcode: options struct_size not set");
        memcpy(&o, opts, opts->struct_size < sizeof o ? opts->struct_size : sizeof o);
        o.struct_size = sizeof o;
    }
    if (isnan(o.threshold) || o.threshold < 0)
        return tm_error(ctx, TOPOML_E_INVALID, "threshold must be a number >= 0");
    if (!is_prime(o.modulus))
        return tm_error(ctx, TOPOML_E_INVALID, "modulus %u is not a prime", o.modulus);
    if (o.modulus > 2) {
        /* a prime no backend takes is bad input, said as such, rather than
         * each backend's capability record refusing it in turn */
        const uint32_t largest = tm_largest_modulus(ctx, o.modulus);
        if (largest && o.modulus > largest)
            return tm_error(ctx, TOPOML_E_INVALID,
                            "modulus %u is above %u, the largest prime modulus a backend here "
                            "supports",
                            o.modulus, largest);
    }
    if (o.metric >= TOPOML_METRIC_COUNT)
        return tm_error(ctx, TOPOML_E_INVALID, "unknown metric %u", o.metric);
    if (o.collapse > TOPOML_COLLAPSE_OFF)
        return tm_error(ctx, TOPOML_E_INVALID, "unknown collapse setting %u", o.collapse);
    if (o.flags & ~(TOPOML_RIPS_GENERATORS | TOPOML_RIPS_COCYCLES))
        return tm_error(ctx, TOPOML_E_INVALID, "unknown rips flags 0x%x", o.flags);
    if (o.weights != TOPOML_WEIGHTS_NONE)
        return weighted_barcode(ctx, out, data, &o);
    const bool want_gens = (o.flags & TOPOML_RIPS_GENERATORS) != 0;
    const bool want_coc = (o.flags & TOPOML_RIPS_COCYCLES) != 0;
    if ((want_gens || want_coc) && o.collapse != TOPOML_COLLAPSE_OFF && o.max_dim > 0) {
        /* The collapse gives edges later filtration values: the edges of
         * the collapsed complex are not the ones of the input's lengths,
         * and its simplices not the input's complex's. */
        tm_log(ctx, TOPOML_LOG_INFO, "%s asked for: no edge collapse",
               want_gens ? "generators" : "cocycles");
        o.collapse = TOPOML_COLLAPSE_OFF;
    }

    /* Without a threshold every pair of a point cloud is looked at and,
     * unless few are within the enclosing radius, kept: the distance matrix
     * is what the work needs. Refused here with its size, before the O(n^2)
     * passes of the collapse, the enclosing radius or the backend. */
    uint64_t n = data->n, pairs, bytes;
    if (data->kind == TOPOML_INPUT_POINTS && !(o.threshold < INFINITY) && n >= 2) {
        int st = !tm_mul_u64(n, n - 1, &pairs) || !tm_mul_u64(pairs / 2, sizeof(double), &bytes)
                     ? tm_error(ctx, TOPOML_E_OVERFLOW, "barcode: %llu points: too many pairs",
                                (unsigned long long)n)
                     : tm_check_memory(ctx, bytes,
                                       "the distance matrix (no threshold: every pair is kept, "
                                       "in the matrix or as edges to collapse; a threshold gives "
                                       "a sparse complex)");
        if (st != TOPOML_OK)
            return st;
    }

    topoml_input_v1 in;
    input_from_data(data, o.metric, &in);
    uint32_t op = TOPOML_OP_RIPS;
    tm_backend *b;
    tm_collapsed col;
    memset(&col, 0, sizeof col);
    const bool on_device = data->memory != TOPOML_MEMORY_HOST;
    /* A barcode of dimension 0 only (no generators, which only rips gives):
     * a backend's h0 op is as good as its rips op, and the choice among
     * backends considers both (docs/embedding.md, "Choosing a backend"). */
    const uint32_t select_h0 = o.max_dim == 0 && !want_gens ? TM_SELECT_OR_H0 : 0;
    int rc;
    if (on_device) {
        rc = device_stage(ctx, data, &o, &in, &b);
        if (rc != TOPOML_OK)
            return rc;
        if (!b)
            return barcode_on_host_copy(ctx, out, data, opts);
    } else {
        rc = collapse_stage(ctx, data, &o, &in, &col);
        if (rc != TOPOML_OK)
            return rc;
        if (ctx->config.select_cost) /* the call's sizes, for the cost model */
            ctx->select_edges = col.n_before && in.kind != TOPOML_INPUT_SPARSE
                                    ? col.n_before
                                    : tm_edges_estimate(data, o.metric, o.threshold);
        ctx->select_threads = o.n_threads;
        rc = tm_select(ctx, op | select_h0, &in, o.max_dim, o.modulus, &b);
        ctx->select_edges = 0;
    }
    if (rc != TOPOML_OK && col.done && o.collapse == TOPOML_COLLAPSE_AUTO) {
        /* No backend here takes the collapsed graph: run the input as it is. */
        tm_log(ctx, TOPOML_LOG_INFO, "edge collapse skipped: %s", topoml_errmsg(ctx));
        tm_free(ctx, col.edges);
        memset(&col, 0, sizeof col);
        input_from_data(data, o.metric, &in);
        if (ctx->config.select_cost)
            ctx->select_edges = tm_edges_estimate(data, o.metric, o.threshold);
        rc = tm_select(ctx, op | select_h0, &in, o.max_dim, o.modulus, &b);
        ctx->select_edges = 0;
    }
    /* Chosen for its h0 op (TM_SELECT_OR_H0): that op runs. */
    if (rc == TOPOML_OK && select_h0 && !tm_select_capable(b, op, &in, o.max_dim, o.modulus))
        op = TOPOML_OP_H0;
    if (rc != TOPOML_OK && o.max_dim == 0) {
        /* H0 needs no coefficients: the union-find op answers it too. */
        op = TOPOML_OP_H0;
        rc = tm_select(ctx, op, &in, 0, 0, &b);
    }
    if (rc != TOPOML_OK) {
        tm_free(ctx, col.edges);
        return rc;
    }
    b = generators_backend(ctx, b, op, &in, &o);

    struct topoml_barcode *bc = tm_calloc(ctx, 1, sizeof *bc);
    if (!bc) {
        tm_free(ctx, col.edges);
        return tm_nomem(ctx, sizeof *bc);
    }
    bc->ctx = ctx;
    char msg[512];
    topoml_call_v1 call;
    tm_call_init(ctx, &call, msg, sizeof msg);
    topoml_barcode_v1 res;
    memset(&res, 0, sizeof res);
    res.struct_size = sizeof res;
    if (o.n_threads)
        call.n_threads = o.n_threads;
    double threshold = col.done ? col.threshold : o.threshold;
    topoml_rips_params_v1 p;
    memset(&p, 0, sizeof p);
    p.struct_size = sizeof p;
    p.max_dim = o.max_dim;
    p.threshold = threshold;
    p.modulus = o.modulus;
    p.flags = (want_gens ? TOPOML_RIPS_PARAM_GENERATORS : 0) |
              (want_coc && op == TOPOML_OP_RIPS ? TOPOML_RIPS_PARAM_COCYCLES : 0);
    tm_verify_call vc;
    if (!on_device)
        tm_verify_begin(ctx, b, &in, &call, &vc);
    if (op == TOPOML_OP_RIPS)
        rc = b->vt->rips(b->state, &call, &in, &p, &res);
    else
        rc = b->vt->h0(b->state, &call, &in, threshold, &res);
    tm_backend *ref = on_device ? NULL : tm_fallback_after_failure(ctx, b, op, rc, msg);
    if (ref) {
        tm_free(ctx, res.intervals);
        tm_free(ctx, res.generators);
        tm_free(ctx, res.cocycle_offsets);
        tm_free(ctx, res.cocycles);
        memset(&res, 0, sizeof res);
        res.struct_size = sizeof res;
        b = ref;
        tm_call_init(ctx, &call, msg, sizeof msg);
        if (o.n_threads)
            call.n_threads = o.n_threads;
        rc = op == TOPOML_OP_RIPS ? b->vt->rips(b->state, &call, &in, &p, &res)
                                  : b->vt->h0(b->state, &call, &in, threshold, &res);
    }
    /* Verified on the input the backend was given (the collapsed graph, if
     * any): the reference re-runs that same input. Input in device memory
     * cannot be read here without the host copy this path exists to avoid:
     * its barcode gets the invariant checks below only (docs/plugin-abi.md,
     * "Device memory"). */
    int vrc = rc == TOPOML_OK && !on_device ? tm_verify_barcode(ctx, &b, op, &in, &vc, &p, &res)
                                            : TOPOML_OK;
    /* A call stopped by the memory limit or a cancel hands its finished
     * dimensions back: they are checked too. */
    if ((rc == TOPOML_E_LIMIT || rc == TOPOML_E_CANCELLED) && !on_device &&
        res.n_intervals > 0 && !res.complete && res.max_dim < o.max_dim) {
        vrc = tm_verify_partial_barcode(ctx, &b, op, &in, &vc, &p, &res,
                                        rc == TOPOML_E_CANCELLED);
    }
    tm_free(ctx, col.edges);
    if (vrc != TOPOML_OK && vrc != TOPOML_E_CANCELLED) {
        tm_free(ctx, res.intervals);
        tm_free(ctx, res.generators);
        tm_free(ctx, res.cocycle_offsets);
        tm_free(ctx, res.cocycles);
        tm_free(ctx, bc);
        return vrc;
    }
    if (vrc == TOPOML_E_CANCELLED) /* the reference, answering instead */
        rc = vrc;
    /* Stopped by the memory limit after some dimensions were finished: those
     * come back as for a cancel (plugin.h, topoml_barcode_v1.complete). */
    const bool partial_limit = rc == TOPOML_E_LIMIT && res.n_intervals > 0 && !res.complete &&
                               res.max_dim < o.max_dim;
    if (rc != TOPOML_OK && rc != TOPOML_E_CANCELLED && !partial_limit) {
        tm_free(ctx, res.intervals);
        tm_free(ctx, res.generators);
        tm_free(ctx, res.cocycle_offsets);
        tm_free(ctx, res.cocycles);
        tm_free(ctx, bc);
        return backend_error(ctx, b, rc, msg);
    }
    int crc = check_generators(ctx, b, &res, data->n, want_gens && op == TOPOML_OP_RIPS);
    if (crc == TOPOML_OK) {
        char why[320];
        if (tm_cocycles_malformed(&res, (p.flags & TOPOML_RIPS_PARAM_COCYCLES) != 0, data->n,
                                  o.modulus, why, sizeof why))
            crc = tm_error(ctx, TOPOML_E_PLUGIN, "backend '%s' returned bad cocycles: %s",
                           b->name, why);
    }
    if (crc == TOPOML_OK)
        crc = check_barcode(ctx, b, &res, o.max_dim);
    if (crc != TOPOML_OK) {
        tm_free(ctx, res.intervals);
        tm_free(ctx, res.generators);
        tm_free(ctx, res.cocycle_offsets);
        tm_free(ctx, res.cocycles);
        tm_free(ctx, bc);
        return crc;
    }
    bc->threshold = o.threshold;
    bc->dense = data->kind != TOPOML_INPUT_SPARSE;
    bc->cut = !isinf(o.threshold);
    if (!bc->dense) {
        double longest = 0;
        for (uint64_t e = 0; e < data->n_edges; e++)
            longest = fmax(longest, data->edges[e].d);
        bc->cut = o.threshold < longest;
    }
    bc->input_format = data->format;
    bc->points = data->n;
    bc->max_dim = rc == TOPOML_OK ? o.max_dim : res.max_dim;
    bc->complete = rc == TOPOML_OK ? 1 : 0;
    bc->status = rc;
    bc->n = res.n_intervals;
    bc->intervals = res.intervals;
    bc->generators = res.generators;
    bc->cocycle_offsets = res.cocycle_offsets;
    bc->modulus = o.modulus;
    bc->cocycles = res.cocycles;
    if (want_coc && !bc->cocycle_offsets) {
        /* H0 by union-find (no rips op): no cocycles in dimension 0 */
        bc->cocycle_offsets = tm_calloc(ctx, (size_t)bc->n + 1, sizeof *bc->cocycle_offsets);
        if (!bc->cocycle_offsets) {
            topoml_barcode_free(bc);
            *out = NULL;
            return tm_nomem(ctx, ((size_t)bc->n + 1) * sizeof(uint64_t));
        }
    }
    *out = bc;
    if (partial_limit)
        return backend_error(ctx, b, rc, msg);
    if (rc == TOPOML_E_CANCELLED) {
        if (res.n_intervals == 0 && data->n > 0)
            return tm_error(ctx, rc, "cancelled before any dimension was complete");
        return tm_error(ctx, rc, "cancelled; dimensions 0..%u are complete", res.max_dim);
    }
    return TOPOML_OK;
}

void topoml_barcode_free(topoml_barcode *bc)
{
    if (!bc)
        return;
    topoml_context *ctx = bc->ctx;
    tm_free(ctx, bc->intervals);
    tm_free(ctx, bc->generators);
    tm_free(ctx, bc->cocycle_offsets);
    tm_free(ctx, bc->cocycles);
    tm_free(ctx, bc);
}

uint32_t topoml_barcode_max_dim(const topoml_barcode *bc)
{
    return bc ? bc->max_dim : 0;
}

int topoml_barcode_complete(const topoml_barcode *bc)
{
    return bc ? bc->complete : 0;
}

int topoml_barcode_stop_status(const topoml_barcode *bc)
{
    return bc ? bc->status : TOPOML_E_INVALID;
}

const topoml_interval *topoml_barcode_intervals(const topoml_barcode *bc, uint64_t *n)
{
    if (n)
        *n = bc ? bc->n : 0;
    return bc ? bc->intervals : NULL;
}

double topoml_barcode_threshold(const topoml_barcode *bc)
{
    return bc ? bc->threshold : NAN;
}

int topoml_barcode_cut_off(const topoml_barcode *bc, uint64_t k)
{
    if (!bc || k >= bc->n)
        return TOPOML_E_INVALID;
    return interval_cut_off(bc, k) ? 1 : 0;
}

const topoml_generator *topoml_barcode_generators(const topoml_barcode *bc, uint64_t *n)
{
    if (n)
        *n = bc && bc->generators ? bc->n : 0;
    return bc ? bc->generators : NULL;
}

const uint32_t *topoml_barcode_cocycle(const topoml_barcode *bc, uint64_t k, uint64_t *rows)
{
    if (rows)
        *rows = 0;
    if (!bc || !bc->cocycle_offsets || k >= bc->n)
        return NULL;
    static const uint32_t none[1] = {0};
    const uint64_t w = bc->intervals[k].dim + 2u;
    if (rows)
        *rows = (bc->cocycle_offsets[k + 1] - bc->cocycle_offsets[k]) / w;
    return bc->cocycles ? bc->cocycles + bc->cocycle_offsets[k] : none;
}

/* The cocycle of interval k as Ripser's representative-cocycles output has
 * it, after the interval: {[v_d,...,v_0]:c,...}, each simplex's vertices
 * descending and its value normalised to (-p/2, p/2] (Ripser's normalize);
 * JSON: [[v_d,...,v_0,c],...] with c in 1..p-1, ripser.py's layout. */
static void write_cocycle(FILE *f, const topoml_barcode *bc, uint64_t k, bool json)
{
    uint64_t rows;
    const uint32_t *c = topoml_barcode_cocycle(bc, k, &rows);
    const uint32_t w = bc->intervals[k].dim + 2, p = bc->modulus;
    fputs(json ? "[" : "  {", f);
    for (uint64_t r = 0; r < rows; r++, c += w) {
        fputs(r ? ",[" : "[", f);
        for (uint32_t i = 0; i + 1 < w; i++)
            fprintf(f, i ? ",%u" : "%u", c[i]);
        if (json)
            fprintf(f, ",%u]", c[w - 1]);
        else
            fprintf(f, "]:%lld", c[w - 1] > p / 2 ? (long long)c[w - 1] - p : (long long)c[w - 1]);
    }
    fputs(json ? "]" : "}", f);
}

/* Ripser prints with the stream default: 6 significant digits, which is
 * printf's %g. */
int topoml_barcode_write(topoml_context *ctx, const topoml_barcode *bc, FILE *f,
                         topoml_output style, double ratio)
{
    if (!ctx)
        return TOPOML_E_INVALID;
    if (!bc || !f)
        return tm_error(ctx, TOPOML_E_INVALID, "barcode_write: NULL argument");
    if (isnan(ratio) || ratio < 0)
        return tm_error(ctx, TOPOML_E_INVALID, "barcode_write: the ratio must be a number >= 0");
    uint64_t k = 0;
    switch (style) {
    case TOPOML_OUTPUT_RIPSER:
        for (uint32_t d = 0; d <= bc->max_dim; d++) {
            fprintf(f, "persistence intervals in dim %u:\n", d);
            for (; k < bc->n && bc->intervals[k].dim == d; k++) {
                const topoml_interval *v = &bc->intervals[k];
                /* As Ripser: --ratio filters dimensions >= 1 only. */
                if (d > 0 && ratio > 0 && !(v->death > v->birth * ratio))
                    continue;
                if (isinf(v->death))
                    fprintf(f, " [%g, )", v->birth);
                else
                    fprintf(f, " [%g,%g)", v->birth, v->death);
                if (d > 0 && bc->cocycle_offsets)
                    write_cocycle(f, bc, k, false);
                fputc('\n', f);
            }
        }
        break;
    case TOPOML_OUTPUT_JSON: {
        const char *fmt = topoml_format_name((topoml_format)bc->input_format);
        fprintf(f, "{\"max_dim\":%u,\"complete\":%s,", bc->max_dim,
                bc->complete ? "true" : "false");
        /* A partial barcode says where and why it stopped: dimensions
         * 0..max_dim are finished, max_dim + 1 (or 0) is the one that was not. */
        if (!bc->complete)
            fprintf(f, "\"stopped\":{\"dim\":%u,\"reason\":\"%s\"},",
                    bc->n ? bc->max_dim + 1 : 0,
                    bc->status == TOPOML_E_LIMIT ? "memory limit" : "cancelled");
        fprintf(f, "\"input\":{\"format\":");
        if (bc->input_format == TOPOML_FORMAT_AUTO || !fmt)
            fprintf(f, "null"); /* made from memory */
        else
            fprintf(f, "\"%s\"", fmt);
        fprintf(f, ",\"points\":%llu},\"threshold\":", (unsigned long long)bc->points);
        if (isinf(bc->threshold))
            fprintf(f, "null");
        else
            fprintf(f, "%.17g", bc->threshold);
        fprintf(f, ",\"dims\":[");
        for (uint32_t d = 0; d <= bc->max_dim; d++) {
            fprintf(f, "%s{\"dim\":%u,\"intervals\":[", d ? "," : "", d);
            const uint64_t k0 = k;
            bool first = true;
            uint64_t cut = 0;
            for (; k < bc->n && bc->intervals[k].dim == d; k++) {
                const topoml_interval *v = &bc->intervals[k];
                if (d > 0 && ratio > 0 && !(v->death > v->birth * ratio))
                    continue;
                if (isinf(v->death))
                    fprintf(f, "%s[%.17g,null]", first ? "" : ",", v->birth);
                else
                    fprintf(f, "%s[%.17g,%.17g]", first ? "" : ",", v->birth, v->death);
                cut += interval_cut_off(bc, k);
                first = false;
            }
            /* How many of the null deaths are cut off by the threshold
             * (alive at it) rather than essential. */
            fprintf(f, "],\"cut_off\":%llu", (unsigned long long)cut);
            if (bc->cocycle_offsets) {
                /* parallel to "intervals": one cocycle per interval shown */
                fputs(",\"cocycles\":[", f);
                first = true;
                for (uint64_t j = k0; j < k; j++) {
                    const topoml_interval *v = &bc->intervals[j];
                    if (d > 0 && ratio > 0 && !(v->death > v->birth * ratio))
                        continue;
                    if (!first)
                        fputc(',', f);
                    write_cocycle(f, bc, j, true);
                    first = false;
                }
                fputc(']', f);
            }
            fputc('}', f);
        }
        fprintf(f, "]}\n");
        break;
    }
    case TOPOML_OUTPUT_CSV:
        /* The threshold as a comment line, which CSV readers (topoml's,
         * pandas with comment='#') skip; a cut-off bar's death is "cut". */
        if (!isinf(bc->threshold))
            fprintf(f, "# threshold %.17g\n", bc->threshold);
        fprintf(f, "dim,birth,death\n");
        for (; k < bc->n; k++) {
            const topoml_interval *v = &bc->intervals[k];
            if (v->dim > 0 && ratio > 0 && !(v->death > v->birth * ratio))
                continue;
            if (isinf(v->death))
                fprintf(f, "%u,%.17g,%s\n", v->dim, v->birth,
                        interval_cut_off(bc, k) ? "cut" : "inf");
            else
                fprintf(f, "%u,%.17g,%.17g\n", v->dim, v->birth, v->death);
        }
        break;
    default:
        return tm_error(ctx, TOPOML_E_INVALID, "unknown output style %d", (int)style);
    }
    if (ferror(f))
        return tm_error(ctx, TOPOML_E_IO, "write error");
    return TOPOML_OK;
}

int topoml_barcode_write_mem(topoml_context *ctx, const topoml_barcode *bc, topoml_output style,
                             double ratio, char **out, size_t *len)
{
    if (!ctx)
        return TOPOML_E_INVALID;
    if (!out || !len)
        return tm_error(ctx, TOPOML_E_INVALID, "barcode_write_mem: NULL argument");
    *out = NULL;
    *len = 0;
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    if (!f)
        return tm_nomem(ctx, 0);
    int st = topoml_barcode_write(ctx, bc, f, style, ratio);
    if (fclose(f) != 0 && st == TOPOML_OK)
        st = tm_nomem(ctx, size);
    if (st == TOPOML_OK) {
        /* Handed over in the context's allocator, as everything it returns. */
        char *copy = tm_alloc(ctx, size + 1);
        if (!copy) {
            st = tm_nomem(ctx, size + 1);
        } else {
            memcpy(copy, text, size);
            copy[size] = '\0';
            *out = copy;
            *len = size;
        }
    }
    free(text);
    return st;
}

int topoml_data_stats(topoml_context *ctx, const topoml_data *data, topoml_metric metric,
                      double threshold, topoml_stats *st)
{
    if (!ctx)
        return TOPOML_E_INVALID;
    if (!data || !st)
        return tm_error(ctx, TOPOML_E_INVALID, "data_stats: NULL argument");
    if ((unsigned)metric >= TOPOML_METRIC_COUNT)
        return tm_error(ctx, TOPOML_E_INVALID, "unknown metric");
    if (data->memory != TOPOML_MEMORY_HOST) {
        struct topoml_data host;
        int hrc = tm_data_host_copy(ctx, data, &host);
        if (hrc == TOPOML_OK)
            hrc = topoml_data_stats(ctx, &host, metric, threshold, st);
        tm_data_host_release(ctx, &host);
        return hrc;
    }
    memset(st, 0, sizeof *st);
    st->min = INFINITY;
    st->max_finite = -INFINITY;
    st->enclosing_radius = INFINITY;
    uint64_t n = data->n;
    if (data->kind == TOPOML_INPUT_SPARSE) {
        for (uint64_t e = 0; e < data->n_edges; e++) {
            double d = data->edges[e].d;
            st->min = d < st->min ? d : st->min;
            if (isfinite(d) && d > st->max_finite)
                st->max_finite = d;
            st->edges_within += d <= threshold;
        }
        return TOPOML_OK;
    }
    /* Row i's largest distance is over all j != i: walk the lower triangle
     * once and keep each vertex's running maximum. */
    double *row_max = tm_alloc(ctx, (size_t)(n ? n : 1) * sizeof *row_max);
    if (!row_max)
        return tm_nomem(ctx, (size_t)n * sizeof *row_max);
    /* 0 is d(i,i): Ripser's enclosing radius includes the diagonal, which
     * makes it 0 for a single point. */
    for (uint64_t i = 0; i < n; i++)
        row_max[i] = 0.0;
    for (uint64_t i = 1; i < n; i++) {
        for (uint64_t j = 0; j < i; j++) {
            double d = data->kind == TOPOML_INPUT_CONDENSED
                           ? data->values[i * (i - 1) / 2 + j]
                           : scalar_point_dist(TOPOML_F64, metric, data->values, data->dim, i, j);
            st->min = d < st->min ? d : st->min;
            if (isfinite(d) && d > st->max_finite)
                st->max_finite = d;
            st->edges_within += d <= threshold;
            row_max[i] = d > row_max[i] ? d : row_max[i];
            row_max[j] = d > row_max[j] ? d : row_max[j];
        }
    }
    for (uint64_t i = 0; i < n; i++)
        if (row_max[i] < st->enclosing_radius)
            st->enclosing_radius = row_max[i];
    tm_free(ctx, row_max);
    return TOPOML_OK;
}
