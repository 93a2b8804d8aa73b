/*
 * verify.c — trust, but verify: every answer a plugin gives is checked
 * before the caller sees it, because a certificate says what a plugin did
 * under topoml-conformance, not what it does now (a plugin may turn wrong on
 * its 51st call, when an environment variable is set, after a date, or
 * whenever it is not run by the suite).
 *
 * Per call, on a plugin's answer (never on the built-in reference's):
 *  - invariants: no NaN; distances non-negative and finite; edges with
 *    i < j < n, sorted by (d, i, j) and within the threshold; intervals
 *    grouped by dimension within 0..max_dim, birth <= death, H0 born at 0;
 *    an output array's guard zone intact; the input unchanged;
 *  - spot checks: a few random distances and edges recomputed exactly, and a
 *    few H0 deaths found among the input's distances; generators, when
 *    asked for, each an edge of the input of exactly its bar's length;
 *    representative cocycles, when asked for, each a cocycle of the
 *    complex at its bar's birth and non-zero on a simplex born there;
 *  - re-runs on the reference (config `verify`): every small call (at most
 *    TM_VERIFY_SMALL points and TM_VERIFY_SMALL_SIMPLICES top simplices,
 *    answered within TM_VERIFY_SMALL_SECONDS); every call larger than any
 *    of its kind the plugin has been checked on so far on this machine
 *    (the envelope, below), whatever it costs; and other
 *    larger calls while the reference's time, estimated from the last
 *    re-run, stays within `verify_share` (10%) of the plugins' time on
 *    larger calls over the context's life.
 * A wrong answer is replaced by the reference's; the plugin is rejected for
 * the context, its certificate revoked (gate.c) and a warning logged. An
 * answer the reference could not re-run is not passed on under `verify:
 * always` (unchecked()).
 *
 * Not here: what a plugin does to the process itself (a crash, a write to
 * stdout, a leak), which certification's long-lived checks and process
 * isolation are for.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "api/api.h"
#include "diagrams/diagram_compare.h"
#include "gate/certificate.h"
#include "gate/gate.h"
#include "gate/gate_internal.h"
#include "metric.h"
#include "metric_rows.h"
#include "topoml/features.h"

/* A call on at most this many points that took the plugin at most this
 * long is re-run on the reference every time. The time bound keeps a Rips
 * call of high dimension on few points within the budget; it is generous so
 * that a slow or loaded machine (or Valgrind) still re-runs small calls. */
#define TM_VERIFY_SMALL 256u
#define TM_VERIFY_SMALL_SECONDS 1.0
/* ... and whose simplices of the top dimension (C(n, max_dim + 2) for
 * Rips) number at most this: a fast plugin's 0.5 s on 192 points in
 * dimension 3 (C(192, 5) = 2e9) is seconds on the reference, far past any
 * share of the plugin's time; C(256, 3) (dimension 1 on 256 points) and
 * C(148, 4) (dimension 2 on 148 points) are re-run. */
#define TM_VERIFY_SMALL_SIMPLICES 2e7
/* Spot checks per call. */
#define SPOT_CHECKS 8u
/* The truncated re-run's share of the plugin's time is verify_share / 2
 * (the other half is for the sampled full re-runs), and at least this many
 * seconds; before a context has timed one, the reference is taken to need
 * this many seconds per unit of tm_truncation_units (o3_1024 in dimension
 * 3 took about 3e-7 on the 2-core build machine: rounded up, so that a
 * process's first call errs cheap). */
#define TM_TRUNCATION_FLOOR_SECONDS 0.002
#define TM_UNIT_SECONDS_DEFAULT 4e-7

/* 64-bit words at a time: a change anywhere in the input changes it. */
static uint64_t hash_bytes(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    size_t k = 0;
    for (; k + 8 <= n; k += 8) {
        uint64_t w;
        memcpy(&w, p + k, 8);
        h = (h ^ w) * 0x9e3779b97f4a7c15ull;
        h ^= h >> 29;
    }
    for (; k < n; k++)
        h = (h ^ p[k]) * 0x100000001b3ull;
    return h;
}

static uint64_t input_hash(const topoml_input_v1 *in)
{
    uint64_t h = 0xcbf29ce484222325ull;
    size_t elem = in->dtype == TOPOML_F32 ? sizeof(float) : sizeof(double);
    if (in->kind == TOPOML_INPUT_POINTS && in->data)
        h = hash_bytes(h, in->data, (size_t)(in->n * in->dim) * elem);
    else if (in->kind == TOPOML_INPUT_CONDENSED && in->data)
        h = hash_bytes(h, in->data, (size_t)(in->n * (in->n ? in->n - 1 : 0) / 2) * elem);
    else if (in->kind == TOPOML_INPUT_SPARSE && in->edges)
        h = hash_bytes(h, in->edges, (size_t)in->n_edges * sizeof *in->edges);
    return h;
}

void tm_verify_begin(topoml_context *ctx, const tm_backend *b, const topoml_input_v1 *in,
                     const topoml_call_v1 *call, tm_verify_call *vc)
{
    (void)ctx;
    vc->input_hash = b->path ? input_hash(in) : 0;
    vc->threads = tm_threads_allowed(call->n_threads);
    vc->device = call->device < 0 ? -1 : call->device;
    vc->start = tm_now();
}

/* The context's generator, seeded from the kernel (getrandom) on first
 * use and kept in the host's memory only: which calls are re-run in full
 * and which pairs are sampled depend on nothing a plugin can read from a
 * file or write. */
static uint64_t next_random(topoml_context *ctx)
{
    if (!ctx->verify_rng) {
        uint64_t seed = 0;
        if (getrandom(&seed, sizeof seed, GRND_NONBLOCK) != (ssize_t)sizeof seed)
            seed = ((uint64_t)time(NULL) << 20) ^ (uint64_t)(uintptr_t)ctx ^
                   (uint64_t)(tm_now() * 1e9);
        ctx->verify_rng = seed | 1; /* xorshift needs a state other than 0 */
    }
    uint64_t x = ctx->verify_rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return ctx->verify_rng = x;
}

uint64_t tm_verify_random(topoml_context *ctx)
{
    return next_random(ctx);
}

/* The bound on one distance: the conformance suite's, from the one set of
 * bounds both use (diagram_compare.c). */
typedef tm_tolerance tolerance;

static tolerance distance_tolerance(const topoml_input_v1 *in)
{
    return tm_distance_bound(in->kind, in->dtype, in->metric, in->dim, TM_TOLERANCE_ULPS);
}

static bool close_to(double got, double want, tolerance t)
{
    return tm_within_bound(got, want, t);
}

/* d(i, j) of the input, exactly as the reference computes it. */
static double input_distance(const topoml_input_v1 *in, uint64_t i, uint64_t j)
{
    if (i == j)
        return 0;
    if (i < j) {
        uint64_t t = i;
        i = j;
        j = t;
    }
    if (in->kind == TOPOML_INPUT_POINTS)
        return scalar_point_dist(in->dtype, (topoml_metric)in->metric, in->data, in->dim, i, j);
    if (in->kind == TOPOML_INPUT_CONDENSED) {
        uint64_t k = i * (i - 1) / 2 + j;
        return in->dtype == TOPOML_F32 ? (double)((const float *)in->data)[k]
                                       : ((const double *)in->data)[k];
    }
    for (uint64_t e = 0; e < in->n_edges; e++)
        if ((in->edges[e].i == j && in->edges[e].j == i) ||
            (in->edges[e].i == i && in->edges[e].j == j))
            return in->edges[e].d;
    return INFINITY;
}

/* ---- the envelope: the largest inputs checked so far ----
 *
 * A plugin may be right on every input the conformance suite gives it and
 * wrong on larger ones (past 2000 points, past a buffer it sized for the
 * suite); a share budget that lets the first large calls through unchecked
 * would hand such answers out, and a CLI process makes one call. So, per
 * plugin, the core keeps the largest input (points, and edges for an edge
 * list) and the largest answer (bars, edges) that each kind of call — op,
 * input kind, dtype, metric, modulus, dimension, cut or not — has been
 * checked on against the reference, and re-runs every call beyond either on
 * the reference, whatever that costs (once per new largest size of each
 * kind, on this machine). The thread count the call allows is part of the
 * kind: a plugin checked on 16 threads is not thereby checked on 1 (or the
 * other way round), where another path of its code, or a race, may run;
 * and so are asking for generators, which may take another reduction, and
 * the accelerator the call names (device 0 checked is not device 1 checked,
 * which may be another model). The record lives next to the plugin's
 * certificate (`<file>-<path hash>-<content hash>.verified`), bound to
 * the plugin file's hash and to that certificate and authenticated like it
 * (records.c: a record whose code does not match is ignored and logged), so
 * that every process and
 * context shares it and a new certificate starts it afresh; a record that
 * cannot be read or does not parse is treated as empty (more re-runs,
 * never fewer). Each kind also keeps the ratio of the reference's time to
 * the plugin's at its last full re-run, so that a fresh process draws its
 * full re-runs (sampled_rerun) at the rate its budget affords instead of
 * guessing the reference as fast as the plugin (a fast plugin's first call
 * of every process was drawn with probability verify_share / 2, each draw
 * costing the reference's whole time: an expected cost of verify_share / 2
 * times the ratio, e.g. 50% of the plugin's time at a ratio of 10). */
#define TM_VERIFIED_FORMAT "topoml-verified-3"
#define TM_ENVELOPE_MAX 512u
/* The record's size at most: every kind's line (under 160 bytes), the
 * header and the code. */
#define TM_ENVELOPE_FILE_MAX (TM_ENVELOPE_MAX * 160u + 512u)

typedef struct tm_envelope {
    uint32_t op, kind, dtype, metric, modulus, max_dim, cut, threads, gens;
    int32_t device;
    uint64_t n, edges; /* the input: points, and edges of an edge list */
    uint64_t out;      /* the answer: bars, edges or pixels */
    double ratio;      /* reference's seconds / plugin's at the last full re-run (0: none) */
} tm_envelope;

/* The kind of a call, its size left at 0. */
static tm_envelope call_kind(uint32_t op, const topoml_input_v1 *in, const tm_verify_call *vc,
                             uint32_t max_dim, uint32_t modulus, double threshold, bool gens)
{
    tm_envelope e;
    memset(&e, 0, sizeof e);
    e.op = op;
    e.kind = in->kind;
    e.dtype = in->dtype;
    e.metric = in->kind == TOPOML_INPUT_POINTS ? in->metric : 0;
    e.modulus = modulus;
    e.max_dim = max_dim;
    e.cut = threshold < INFINITY;
    e.threads = vc->threads;
    e.gens = gens;
    e.device = vc->device;
    return e;
}

static bool same_kind(const tm_envelope *a, const tm_envelope *b)
{
    return a->op == b->op && a->kind == b->kind && a->dtype == b->dtype &&
           a->metric == b->metric && a->modulus == b->modulus && a->max_dim == b->max_dim &&
           a->cut == b->cut && a->threads == b->threads && a->gens == b->gens &&
           a->device == b->device;
}

/* The record's file for `b`, or false (no cache folder: kept in memory). */
static bool verified_file(topoml_context *ctx, const tm_backend *b, bool create, char *out,
                          size_t size)
{
    char dir[4096], real[4096];
    if (!b->path || tm_cache_dir(ctx, create, dir, sizeof dir) != TOPOML_OK) {
        ctx->errmsg[0] = '\0'; /* no record: not an error of the caller's */
        return false;
    }
    return realpath(b->path, real) && tm_cert_file_for(dir, real, b->file_sha256, ".verified", out, size);
}

static const char *stamp_of(const tm_backend *b)
{
    return b->cert_stamp[0] ? b->cert_stamp : "uncertified";
}

static tm_envelope *envelope_find(tm_backend *b, const tm_envelope *k)
{
    for (uint32_t i = 0; i < b->n_envelope; i++)
        if (same_kind(&b->envelope[i], k))
            return &b->envelope[i];
    return NULL;
}

/* Raise the sizes of kind k to at least k's; false when the table is
 * full (the kind then stays unrecorded: re-run every time). */
static bool envelope_raise(topoml_context *ctx, tm_backend *b, const tm_envelope *k)
{
    tm_envelope *e = envelope_find(b, k);
    if (!e) {
        if (b->n_envelope >= TM_ENVELOPE_MAX)
            return false;
        if (!b->envelope) {
            b->envelope = tm_calloc(ctx, TM_ENVELOPE_MAX, sizeof *b->envelope);
            if (!b->envelope) {
                ctx->errmsg[0] = '\0';
                return false;
            }
        }
        e = &b->envelope[b->n_envelope++];
        *e = *k;
        return true;
    }
    if (k->n > e->n)
        e->n = k->n;
    if (k->edges > e->edges)
        e->edges = k->edges;
    if (k->out > e->out)
        e->out = k->out;
    if (!(e->ratio > 0) && k->ratio > 0)
        e->ratio = k->ratio; /* a ratio measured here wins over the record's */
    return true;
}

/* Merge the record on disk into b->envelope (the larger size of each kind
 * wins). Lines: the format, "sha256=<file hash>", "cert=<stamp>", then one
 * "op kind dtype metric modulus max_dim cut threads gens device n edges out
 * ratio" per kind. A record of another format (topoml-verified-1 had none of
 * threads, gens and device, -2 no ratio) counts for nothing: more re-runs,
 * never fewer. */
static void envelope_read(topoml_context *ctx, tm_backend *b)
{
    char file[4400], why[600];
    if (!verified_file(ctx, b, false, file, sizeof file))
        return;
    /* Read once through a checked descriptor, and used only when its
     * authentication code (records.c) matches: a plugin's process cannot
     * write a record that spares it re-runs. */
    const size_t cap = TM_ENVELOPE_FILE_MAX;
    char *text = tm_alloc(ctx, cap + 1);
    if (!text) {
        ctx->errmsg[0] = '\0';
        return;
    }
    size_t len = 0;
    int rc = tm_record_read(file, "verified", text, cap, &len, why, sizeof why);
    if (rc != TOPOML_OK) {
        if (rc == TOPOML_E_PARSE)
            tm_log(ctx, TOPOML_LOG_WARN, "verification record of backend '%s' ignored: %s",
                   b->name, why);
        tm_free(ctx, text);
        return;
    }
    text[len] = '\0';
    char want[160];
    char *line = text, *nl;
    bool ok = (nl = strchr(line, '\n')) != NULL &&
              strncmp(line, TM_VERIFIED_FORMAT "\n", (size_t)(nl - line) + 1) == 0 &&
              (size_t)(nl - line) == strlen(TM_VERIFIED_FORMAT);
    if (ok) {
        line = nl + 1;
        snprintf(want, sizeof want, "sha256=%s\n", b->file_sha256);
        ok = strncmp(line, want, strlen(want)) == 0;
        line += ok ? strlen(want) : 0;
    }
    if (ok) {
        snprintf(want, sizeof want, "cert=%s\n", stamp_of(b));
        ok = strncmp(line, want, strlen(want)) == 0;
        line += ok ? strlen(want) : 0;
    }
    while (ok && (nl = strchr(line, '\n')) != NULL) {
        tm_envelope e;
        unsigned long long n, edges, out;
        double ratio = 0;
        int used = 0;
        memset(&e, 0, sizeof e);
        *nl = '\0';
        if (sscanf(line, "%u %u %u %u %u %u %u %u %u %d %llu %llu %llu %lf%n", &e.op, &e.kind,
                   &e.dtype, &e.metric, &e.modulus, &e.max_dim, &e.cut, &e.threads, &e.gens,
                   &e.device, &n, &edges, &out, &ratio, &used) != 14 ||
            line[used] != '\0' || !(ratio >= 0) || !isfinite(ratio))
            break; /* the rest is not trusted; what was read is */
        e.n = n;
        e.edges = edges;
        e.out = out;
        e.ratio = ratio;
        if (!envelope_raise(ctx, b, &e))
            break;
        line = nl + 1;
    }
    tm_free(ctx, text);
}

/* Write b->envelope over the record (after merging what other processes
 * wrote since), with its authentication code: a temporary file renamed into
 * place, so that a reader sees the old record or the new one. Failing to
 * write costs re-runs only. */
static void envelope_write(topoml_context *ctx, tm_backend *b)
{
    char file[4400], why[600];
    if (!verified_file(ctx, b, true, file, sizeof file))
        return;
    envelope_read(ctx, b);
    const size_t cap = TM_ENVELOPE_FILE_MAX;
    char *text = tm_alloc(ctx, cap);
    if (!text) {
        ctx->errmsg[0] = '\0';
        return;
    }
    int w = snprintf(text, cap, "%s\nsha256=%s\ncert=%s\n", TM_VERIFIED_FORMAT, b->file_sha256,
                     stamp_of(b));
    size_t len = w > 0 ? (size_t)w : cap;
    for (uint32_t i = 0; i < b->n_envelope && len < cap; i++) {
        const tm_envelope *e = &b->envelope[i];
        w = snprintf(text + len, cap - len, "%u %u %u %u %u %u %u %u %u %d %llu %llu %llu %.6g\n",
                     e->op, e->kind, e->dtype, e->metric, e->modulus, e->max_dim, e->cut,
                     e->threads, e->gens, (int)e->device, (unsigned long long)e->n,
                     (unsigned long long)e->edges, (unsigned long long)e->out, e->ratio);
        len = w > 0 && (size_t)w < cap - len ? len + (size_t)w : cap;
    }
    if (len < cap && tm_record_write(file, "verified", text, len, why, sizeof why) != TOPOML_OK)
        tm_log(ctx, TOPOML_LOG_DEBUG, "verification record of backend '%s' not written: %s",
               b->name, why);
    tm_free(ctx, text);
}

/* Is this call larger than any of its kind `b` has been checked on? */
static bool beyond_envelope(topoml_context *ctx, tm_backend *b, const tm_envelope *k)
{
    if (ctx->config.verify != TM_VERIFY_AUTO && ctx->config.verify != TM_VERIFY_ALWAYS)
        return false;
    if (!b->envelope_loaded) {
        b->envelope_loaded = true;
        envelope_read(ctx, b);
    }
    const tm_envelope *e = envelope_find(b, k);
    return !e || k->n > e->n || k->edges > e->edges || k->out > e->out;
}

/* A call of kind k, of this size, matched the reference: record it, and
 * the time ratio measured on it (k->ratio, 0: none) when it is new or off
 * the recorded one by more than a factor of 2. */
static void envelope_checked(topoml_context *ctx, tm_backend *b, const tm_envelope *k)
{
    if (!b->path || (ctx->config.verify != TM_VERIFY_AUTO &&
                     ctx->config.verify != TM_VERIFY_ALWAYS))
        return;
    tm_envelope *e = envelope_find(b, k);
    const bool new_ratio =
        k->ratio > 0 && (!e || !(e->ratio > 0) || k->ratio > 2 * e->ratio || 2 * k->ratio < e->ratio);
    if (e && k->n <= e->n && k->edges <= e->edges && k->out <= e->out && !new_ratio)
        return;
    if (e && new_ratio)
        e->ratio = k->ratio;
    if (envelope_raise(ctx, b, k))
        envelope_write(ctx, b);
}

/* The reference's time over the plugin's on calls of kind k: the kind's
 * record, else the context's last re-run, else 1 (NAN: not known). */
static double kind_ratio(topoml_context *ctx, tm_backend *b, const tm_envelope *k)
{
    const tm_envelope *e = b->envelope_loaded ? envelope_find(b, k) : NULL;
    if (e && e->ratio > 0)
        return e->ratio;
    return ctx->verify_ratio > 0 ? ctx->verify_ratio : 1.0;
}

/* A call's size: its input's points and edges, and how much it answered
 * (`out`: the bars, the edges within the threshold) — at the same number
 * of points, a larger threshold makes a larger complex, where a plugin's
 * buffer sized for the suite may overflow. */
static tm_envelope sized(tm_envelope k, const topoml_input_v1 *in, uint64_t out)
{
    k.n = in->n;
    k.edges = in->kind == TOPOML_INPUT_SPARSE ? in->n_edges : 0;
    k.out = out;
    return k;
}

static tm_backend *reference(topoml_context *ctx)
{
    return &ctx->backends[0]; /* the built-in scalar backend, always entry 0 */
}

/* Should this call be re-run on the reference? Small inputs always are;
 * larger ones while the estimated reference time fits the budget. */
/* Is a call on n points whose largest simplices have `vertices` vertices,
 * answered in plugin_seconds, small (re-run every time)? */
static bool small_call(uint64_t n, uint32_t vertices, double plugin_seconds)
{
    if (n > TM_VERIFY_SMALL || plugin_seconds > TM_VERIFY_SMALL_SECONDS)
        return false;
    double c = 1;
    for (uint32_t k = 0; k < vertices && k < n; k++)
        c = c * (double)(n - k) / (double)(k + 1);
    return c <= TM_VERIFY_SMALL_SIMPLICES;
}

static bool want_rerun(topoml_context *ctx, uint64_t n, uint32_t vertices,
                       double plugin_seconds)
{
    switch (ctx->config.verify) {
    case TM_VERIFY_ALWAYS: return true;
    case TM_VERIFY_CHECKS:
    case TM_VERIFY_OFF: return false;
    }
    if (small_call(n, vertices, plugin_seconds))
        return true;
    ctx->verify_plugin_seconds += plugin_seconds;
    double ratio = ctx->verify_ratio > 0 ? ctx->verify_ratio : 1.0;
    return ctx->verify_ref_seconds + ratio * plugin_seconds <=
           ctx->config.verify_share * ctx->verify_plugin_seconds;
}

/* Account for a re-run of a large call. */
static void rerun_done(topoml_context *ctx, uint64_t n, uint32_t vertices, double plugin_seconds,
                       double ref_seconds)
{
    tm_progress_rerun(ctx, false);
    ctx->verify_reruns++;
    if (small_call(n, vertices, plugin_seconds) || ctx->config.verify != TM_VERIFY_AUTO)
        return;
    ctx->verify_ref_seconds += ref_seconds;
    if (plugin_seconds > 0)
        ctx->verify_ratio = ref_seconds / plugin_seconds;
}

/* The plugin answered wrongly: reject it for this context, revoke its
 * certificate, say so, and let the reference answer instead. */
static void reject(topoml_context *ctx, tm_backend **bp, uint32_t op, const char *why)
{
    tm_backend *b = *bp;
    char reason[sizeof b->gate_reason];
    snprintf(reason, sizeof reason, "wrong %s answer at run time: %.560s", tm_op_name(op), why);
    tm_log(ctx, TOPOML_LOG_WARN,
           "backend '%s' gave a wrong %s answer (%s); the reference's answer is used instead "
           "and the backend is disabled",
           b->name, tm_op_name(op), why);
    tm_gate_revoke(ctx, b, reason);
    b->gate_state = TOPOML_GATE_REJECTED;
    b->gate_pending = false;
    snprintf(b->gate_reason, sizeof b->gate_reason, "%s", reason);
    ctx->verify_rejections++;
    *bp = reference(ctx);
    snprintf(ctx->last_backend, sizeof ctx->last_backend, "%s", (*bp)->name);
    snprintf(ctx->last_reason, sizeof ctx->last_reason,
             "the reference: backend '%.60s' answered wrongly and was disabled", b->name);
}

/* The reference could not re-run the call (over the memory limit, an input
 * it refuses, cancelled), so the plugin's answer cannot be checked. A
 * cancel ends the call cancelled in every mode. Under
 * `verify: always` the caller asked for every answer to be checked: the
 * answer is not passed on, and the call fails with the reference's status
 * (the plugin is not blamed). Under `auto` a re-run is a sample, not a
 * promise: the answer stands on the invariants and spot checks, as a large
 * call's does. Returns what the call returns. */
static int unchecked(topoml_context *ctx, const tm_backend *b, uint32_t op, int rc,
                     const char *msg)
{
    /* A cancel is the caller's wish, honoured in every mode: the call ends
     * cancelled, with nothing of the unchecked answer. */
    if (rc == TOPOML_E_CANCELLED)
        return tm_error(ctx, rc, "cancelled while the reference checked backend '%s''s %s answer",
                        b->name, tm_op_name(op));
    if (ctx->config.verify != TM_VERIFY_ALWAYS)
        return TOPOML_OK;
    return tm_error(ctx, rc,
                    "verify: always: the reference could not check backend '%s''s %s answer, "
                    "so it is not returned: %s",
                    b->name, tm_op_name(op), msg && msg[0] ? msg : topoml_strerror(rc));
}

/* The plugin wrote to what it was given to read (`what`: "input data",
 * "diagrams"): rejected, and the call fails. */
static int changed(topoml_context *ctx, tm_backend *b, uint32_t op, const char *what)
{
    char why[128];
    snprintf(why, sizeof why, "it changed the caller's %s", what);
    tm_backend *keep = b;
    reject(ctx, &keep, op, why);
    return tm_error(ctx, TOPOML_E_PLUGIN,
                    "backend '%s' changed the %s during %s; its answer is discarded and "
                    "the %s can no longer be trusted: load them again",
                    b->name, what, tm_op_name(op), what);
}

static int changed_input(topoml_context *ctx, tm_backend *b, uint32_t op)
{
    return changed(ctx, b, op, "input data");
}

/* ---- distances ---- */

static bool distances_wrong(topoml_context *ctx, const topoml_input_v1 *in, const void *out,
                            uint64_t count, const void *want, char *why, size_t why_size)
{
    tolerance t = distance_tolerance(in);
    bool f32 = in->dtype == TOPOML_F32;
    for (uint64_t k = 0; k < count; k++) {
        double d = f32 ? (double)((const float *)out)[k] : ((const double *)out)[k];
        if (!(d >= 0) || isinf(d)) {
            snprintf(why, why_size, "distance %llu is %g", (unsigned long long)k, d);
            return true;
        }
    }
    if (want) {
        for (uint64_t k = 0; k < count; k++) {
            double d = f32 ? (double)((const float *)out)[k] : ((const double *)out)[k];
            double r = f32 ? (double)((const float *)want)[k] : ((const double *)want)[k];
            if (!close_to(d, r, t)) {
                snprintf(why, why_size, "distance %llu is %.17g, the reference's %.17g",
                         (unsigned long long)k, d, r);
                return true;
            }
        }
        return false;
    }
    if (ctx->config.verify == TM_VERIFY_OFF)
        return false;
    for (unsigned s = 0; s < SPOT_CHECKS && in->n >= 2; s++) {
        uint64_t i = 1 + next_random(ctx) % (in->n - 1), j = next_random(ctx) % i;
        if (s == 0) {
            i = in->n - 1;
            j = i - 1;
        }
        uint64_t k = i * (i - 1) / 2 + j;
        double d = f32 ? (double)((const float *)out)[k] : ((const double *)out)[k];
        double r = input_distance(in, i, j);
        if (f32)
            r = (double)(float)r;
        if (!close_to(d, r, t)) {
            snprintf(why, why_size, "d(%llu,%llu) is %.17g, recomputed %.17g",
                     (unsigned long long)i, (unsigned long long)j, d, r);
            return true;
        }
    }
    return false;
}

int tm_verify_distances(topoml_context *ctx, tm_backend **bp, const topoml_input_v1 *in,
                        const tm_verify_call *vc, void *out, uint64_t count, bool guard_ok)
{
    tm_backend *b = *bp;
    double seconds = tm_now() - vc->start;
    if (!b->path)
        return TOPOML_OK;
    if (input_hash(in) != vc->input_hash)
        return changed_input(ctx, b, TOPOML_OP_DISTANCES);
    size_t elem = in->dtype == TOPOML_F32 ? sizeof(float) : sizeof(double);
    char why[256];
    bool wrong = !guard_ok;
    if (wrong)
        snprintf(why, sizeof why, "it wrote past the end of the output array");
    else
        wrong = distances_wrong(ctx, in, out, count, NULL, why, sizeof why);
    tm_backend *ref = reference(ctx);
    const tm_envelope kind =
        sized(call_kind(TOPOML_OP_DISTANCES, in, vc, 0, 0, INFINITY, false), in, 0);
    if (!wrong && (beyond_envelope(ctx, b, &kind) || want_rerun(ctx, in->n, 2, seconds))) {
        void *want = tm_alloc(ctx, (size_t)(count * elem) + 1);
        if (!want)
            return tm_nomem(ctx, (size_t)(count * elem));
        char msg[512];
        topoml_call_v1 call;
        tm_call_init(ctx, &call, msg, sizeof msg);
        tm_progress_rerun(ctx, true);
        double t0 = tm_now();
        int rc = ref->vt->distances(ref->state, &call, in, want);
        if (ctx->progress_rerun_cancelled)
            rc = TOPOML_E_CANCELLED;
        rerun_done(ctx, in->n, 2, seconds, tm_now() - t0);
        if (rc != TOPOML_OK) {
            tm_free(ctx, want);
            return unchecked(ctx, b, TOPOML_OP_DISTANCES, rc, msg);
        }
        wrong = distances_wrong(ctx, in, out, count, want, why, sizeof why);
        tm_free(ctx, want);
        if (!wrong) {
            envelope_checked(ctx, b, &kind);
            return TOPOML_OK;
        }
    }
    if (!wrong)
        return TOPOML_OK;
    reject(ctx, bp, TOPOML_OP_DISTANCES, why);
    char msg[512];
    topoml_call_v1 call;
    tm_call_init(ctx, &call, msg, sizeof msg);
    int rc = ref->vt->distances(ref->state, &call, in, out);
    return rc == TOPOML_OK ? TOPOML_OK : tm_error(ctx, rc, "%s", msg[0] ? msg : "reference failed");
}

/* ---- edges ---- */

static int edge_order(const void *a, const void *b)
{
    const topoml_edge *x = a, *y = b;
    if (x->i != y->i)
        return x->i < y->i ? -1 : 1;
    return x->j < y->j ? -1 : x->j > y->j;
}

static bool edges_wrong(topoml_context *ctx, const topoml_input_v1 *in, double threshold,
                        const topoml_edge *e, uint64_t n, char *why, size_t why_size)
{
    for (uint64_t k = 0; k < n; k++) {
        bool ok = e[k].i < e[k].j && e[k].j < in->n && !isnan(e[k].d) && e[k].d >= 0 &&
                  e[k].d <= threshold;
        if (ok && k > 0) {
            const topoml_edge *p = &e[k - 1];
            ok = p->d < e[k].d ||
                 (p->d == e[k].d && (p->i < e[k].i || (p->i == e[k].i && p->j < e[k].j)));
        }
        if (!ok) {
            snprintf(why, why_size, "edge %llu (%u-%u at %g) is out of order or range",
                     (unsigned long long)k, e[k].i, e[k].j, e[k].d);
            return true;
        }
    }
    if (ctx->config.verify == TM_VERIFY_OFF)
        return false;
    tolerance t = distance_tolerance(in);
    for (unsigned s = 0; s < SPOT_CHECKS && n > 0; s++) {
        uint64_t k = s == 0 ? n - 1 : next_random(ctx) % n;
        double r = input_distance(in, e[k].i, e[k].j);
        if (!close_to(e[k].d, r, t)) {
            snprintf(why, why_size, "edge %u-%u has length %.17g, recomputed %.17g", e[k].i,
                     e[k].j, e[k].d, r);
            return true;
        }
    }
    return false;
}

/* Is the pair (u, v), u < v, in the list e (sorted by (d, i, j), checked
 * above) at a length within the bound of d? A binary search for (d, u, v);
 * where the bound allows another length, the lengths within it. */
static bool edge_listed(const topoml_edge *e, uint64_t n, uint32_t u, uint32_t v, double d,
                        tolerance t)
{
    const double lo = d - (t.rel * fabs(d) + t.abs), hi = d + (t.rel * fabs(d) + t.abs);
    uint64_t a = 0, b = n; /* first entry not before (lo, u, v) */
    while (a < b) {
        const uint64_t m = a + (b - a) / 2;
        const bool before = e[m].d < lo || (e[m].d == lo && lo == d &&
                                            (e[m].i < u || (e[m].i == u && e[m].j < v)));
        if (before)
            a = m + 1;
        else
            b = m;
    }
    for (uint64_t k = a; k < n && e[k].d <= hi; k++) {
        if (e[k].i == u && e[k].j == v)
            return true;
        if (lo == d && (e[k].i > u || (e[k].i == u && e[k].j > v)))
            return false; /* exact: past where it would be */
    }
    return false;
}

/* The tie rule and completeness, at run time: for a few rows i drawn at
 * random (and the row of the list's last edge), every pair (i, j) the
 * reference puts within the threshold — at exactly the threshold
 * included — must be in the plugin's list. Rows: verify_share / 4 of the
 * n / 2 rows' worth of pairs the plugin computed, at least 4; each costs n
 * distances and as many binary searches. An edge list's rows are its edges
 * at i. */
static bool edges_rows_wrong(topoml_context *ctx, const topoml_input_v1 *in, double threshold,
                             const topoml_edge *e, uint64_t n, char *why, size_t why_size)
{
    if (ctx->config.verify == TM_VERIFY_OFF || in->n < 2)
        return false;
    const tolerance t = distance_tolerance(in);
    double want = ctx->config.verify_share / 4 * (double)in->n / 2;
    uint64_t rows = want < 4 ? 4 : (uint64_t)want;
    if (rows > in->n)
        rows = in->n;
    if (in->kind == TOPOML_INPUT_SPARSE && rows > 4)
        rows = 4; /* each row reads the whole list */
    for (uint64_t r = 0; r < rows; r++) {
        const uint64_t i = r == 0 && n ? e[n - 1].i : next_random(ctx) % in->n;
        if (in->kind == TOPOML_INPUT_SPARSE) {
            for (uint64_t k = 0; k < in->n_edges; k++) {
                const topoml_edge *x = &in->edges[k];
                if ((x->i != i && x->j != i) || x->i == x->j || x->i >= in->n || x->j >= in->n)
                    continue;
                const uint32_t u = x->i < x->j ? x->i : x->j, v = x->i < x->j ? x->j : x->i;
                if (tm_edge_must_be_listed(x->d, threshold, t) &&
                    !edge_listed(e, n, u, v, x->d, t)) {
                    snprintf(why, why_size,
                             "the pair %u-%u at %.17g is missing (threshold %.17g%s)", u, v,
                             x->d, threshold,
                             x->d == threshold ? ": a pair at exactly the threshold is in" : "");
                    return true;
                }
            }
            continue;
        }
        for (uint64_t j = 0; j < in->n; j++) {
            if (j == i)
                continue;
            const double d = input_distance(in, i, j);
            const uint32_t u = (uint32_t)(i < j ? i : j), v = (uint32_t)(i < j ? j : i);
            if (tm_edge_must_be_listed(d, threshold, t) && !edge_listed(e, n, u, v, d, t)) {
                snprintf(why, why_size, "the pair %u-%u at %.17g is missing (threshold %.17g%s)",
                         u, v, d, threshold,
                         d == threshold ? ": a pair at exactly the threshold is in" : "");
                return true;
            }
        }
    }
    return false;
}

/* The same pairs as the reference's list, each within the distance bound;
 * the tie rule (tm_edge_must_be_listed, tm_edge_may_be_listed) says which
 * pairs near the threshold may be on either side. Both lists are sorted by (i, j) here (copies). */
static bool edges_differ(topoml_context *ctx, const topoml_input_v1 *in, double threshold,
                         const topoml_edge *e, uint64_t n, const topoml_edge *r, uint64_t nr,
                         char *why, size_t why_size)
{
    tolerance t = distance_tolerance(in);
    topoml_edge *a = tm_alloc(ctx, (size_t)(n + nr + 1) * sizeof *a);
    if (!a)
        return false; /* no memory to compare: the checks above stand */
    topoml_edge *c = a + n;
    if (n)
        memcpy(a, e, (size_t)n * sizeof *a);
    if (nr)
        memcpy(c, r, (size_t)nr * sizeof *c);
    qsort(a, (size_t)n, sizeof *a, edge_order);
    qsort(c, (size_t)nr, sizeof *c, edge_order);
    bool differ = false;
    uint64_t x = 0, y = 0;
    while (!differ && (x < n || y < nr)) {
        int o = x == n ? 1 : y == nr ? -1 : edge_order(&a[x], &c[y]);
        if (o == 0) {
            if (!close_to(a[x].d, c[y].d, t)) {
                snprintf(why, why_size, "edge %u-%u has length %.17g, the reference's %.17g",
                         a[x].i, a[x].j, a[x].d, c[y].d);
                differ = true;
            }
            x++;
            y++;
        } else {
            const topoml_edge *only = o < 0 ? &a[x] : &c[y];
            double ref_d = o < 0 ? input_distance(in, only->i, only->j) : only->d;
            if (o < 0 ? !tm_edge_may_be_listed(ref_d, threshold, t)
                      : tm_edge_must_be_listed(ref_d, threshold, t)) {
                snprintf(why, why_size, "edge %u-%u at %g is %s", only->i, only->j, only->d,
                         o < 0 ? "not in the reference's list" : "missing");
                differ = true;
            }
            if (o < 0)
                x++;
            else
                y++;
        }
    }
    tm_free(ctx, a);
    return differ;
}

int tm_verify_edges(topoml_context *ctx, tm_backend **bp, const topoml_input_v1 *in,
                    const tm_verify_call *vc, double threshold, topoml_edge **edges,
                    uint64_t *n_edges)
{
    tm_backend *b = *bp;
    double seconds = tm_now() - vc->start;
    char why[256];
    if (!b->path) {
        /* The reference is trusted, but its list is still checked for the
         * caller's sake (order and range), as always. */
        if (*n_edges && !*edges)
            return tm_error(ctx, TOPOML_E_INTERNAL, "the reference returned no edge array");
        if (edges_wrong(ctx, in, threshold, *edges, *n_edges, why, sizeof why))
            return tm_error(ctx, TOPOML_E_INTERNAL, "the reference's edge list is wrong: %s", why);
        return TOPOML_OK;
    }
    if (input_hash(in) != vc->input_hash)
        return changed_input(ctx, b, TOPOML_OP_EDGES);
    bool wrong = *n_edges && !*edges;
    if (wrong)
        snprintf(why, sizeof why, "it returned %llu edges but no array",
                 (unsigned long long)*n_edges);
    else
        wrong = edges_wrong(ctx, in, threshold, *edges, *n_edges, why, sizeof why) ||
                edges_rows_wrong(ctx, in, threshold, *edges, *n_edges, why, sizeof why);
    tm_backend *ref = reference(ctx);
    char msg[512];
    topoml_call_v1 call;
    topoml_edge *r = NULL;
    uint64_t nr = 0;
    const tm_envelope kind =
        sized(call_kind(TOPOML_OP_EDGES, in, vc, 0, 0, threshold, false), in, wrong ? 0 : *n_edges);
    if (!wrong && (beyond_envelope(ctx, b, &kind) || want_rerun(ctx, in->n, 2, seconds))) {
        tm_call_init(ctx, &call, msg, sizeof msg);
        tm_progress_rerun(ctx, true);
        double t0 = tm_now();
        int rc = ref->vt->edges(ref->state, &call, in, threshold, &r, &nr);
        if (ctx->progress_rerun_cancelled)
            rc = TOPOML_E_CANCELLED;
        rerun_done(ctx, in->n, 2, seconds, tm_now() - t0);
        if (rc != TOPOML_OK) {
            tm_free(ctx, r);
            rc = unchecked(ctx, b, TOPOML_OP_EDGES, rc, msg);
            if (rc != TOPOML_OK) {
                tm_free(ctx, *edges);
                *edges = NULL;
                *n_edges = 0;
            }
            return rc;
        }
        wrong = edges_differ(ctx, in, threshold, *edges, *n_edges, r, nr, why, sizeof why);
        if (!wrong) {
            tm_free(ctx, r);
            envelope_checked(ctx, b, &kind);
            return TOPOML_OK;
        }
        /* The reference's list is the answer. */
        reject(ctx, bp, TOPOML_OP_EDGES, why);
        tm_free(ctx, *edges);
        *edges = r;
        *n_edges = nr;
        return TOPOML_OK;
    }
    if (!wrong)
        return TOPOML_OK;
    reject(ctx, bp, TOPOML_OP_EDGES, why);
    tm_free(ctx, *edges);
    *edges = NULL;
    *n_edges = 0;
    tm_call_init(ctx, &call, msg, sizeof msg);
    int rc = ref->vt->edges(ref->state, &call, in, threshold, edges, n_edges);
    return rc == TOPOML_OK ? TOPOML_OK : tm_error(ctx, rc, "%s", msg[0] ? msg : "reference failed");
}

/* ---- barcodes ---- */

/* The invariants of a barcode (well formed, within the threshold); the
 * exact checks come after (verify_exact.c). */
static bool barcode_wrong(uint32_t max_dim, double threshold, const topoml_barcode_v1 *res,
                          char *why, size_t why_size)
{
    if (res->n_intervals && !res->intervals) {
        snprintf(why, why_size, "it returned %llu intervals but no array",
                 (unsigned long long)res->n_intervals);
        return true;
    }
    if (res->max_dim > max_dim) {
        snprintf(why, why_size, "it returned dimension %u > %u", res->max_dim, max_dim);
        return true;
    }
    uint32_t last = 0;
    for (uint64_t k = 0; k < res->n_intervals; k++) {
        const topoml_interval *v = &res->intervals[k];
        if (v->dim < last || v->dim > res->max_dim || isnan(v->birth) || isnan(v->death) ||
            v->death < v->birth || isinf(v->birth) || v->birth > threshold ||
            (isfinite(v->death) && v->death > threshold) || (v->dim == 0 && v->birth != 0)) {
            snprintf(why, why_size, "interval %llu (dim %u, [%g,%g)) is out of order or range",
                     (unsigned long long)k, v->dim, v->birth, v->death);
            return true;
        }
        last = v->dim;
    }
    return false;
}

/* Is (u, v) an edge of the input of length exactly `value`, as the
 * conformance suite has it (conformance/compare.c, edge_has_length)? For f32
 * points the length rounded to f32 counts too. `sorted`: a sparse input's
 * edges by (i, j), or NULL. */
static bool edge_of_length(const topoml_input_v1 *in, const topoml_edge *sorted, uint32_t u,
                           uint32_t v, double value)
{
    if (!(u < v && v < in->n))
        return false;
    if (in->kind == TOPOML_INPUT_SPARSE) {
        if (!sorted)
            return false;
        topoml_edge key = {.i = u, .j = v};
        const topoml_edge *e = bsearch(&key, sorted, (size_t)in->n_edges, sizeof *sorted,
                                       edge_order);
        if (!e) { /* the list may give either order */
            key.i = v;
            key.j = u;
            e = bsearch(&key, sorted, (size_t)in->n_edges, sizeof *sorted, edge_order);
        }
        return e && e->d == value;
    }
    const double d = input_distance(in, v, u);
    return d == value ||
           (in->kind == TOPOML_INPUT_POINTS && in->dtype == TOPOML_F32 && (double)(float)d == value);
}

/* A sparse input's edges sorted by edge_order, for the lookups of the
 * generator and cocycle checks (*out NULL for other inputs); false when
 * there is no memory for them (the error cleared: the other checks stand). */
static bool sorted_edges(topoml_context *ctx, const topoml_input_v1 *in, topoml_edge **out)
{
    *out = NULL;
    if (in->kind != TOPOML_INPUT_SPARSE || !in->n_edges)
        return true;
    topoml_edge *sorted = tm_alloc(ctx, (size_t)in->n_edges * sizeof *sorted);
    if (!sorted) {
        ctx->errmsg[0] = '\0';
        return false;
    }
    memcpy(sorted, in->edges, (size_t)in->n_edges * sizeof *sorted);
    qsort(sorted, (size_t)in->n_edges, sizeof *sorted, edge_order);
    *out = sorted;
    return true;
}

/* Generators, when asked for: every bar's birth edge (dimension >= 1) and
 * death edge (finite deaths) is an edge of the input of exactly that length,
 * the rule the suite certifies them by; a plugin that gets them wrong
 * outside the suite is wrong. */
static bool generators_wrong(topoml_context *ctx, const topoml_input_v1 *in,
                             const topoml_barcode_v1 *res, char *why, size_t why_size)
{
    if (!res->n_intervals)
        return false;
    if (!res->generators) {
        snprintf(why, why_size, "it returned no generators");
        return true;
    }
    topoml_edge *sorted = NULL;
    if (!sorted_edges(ctx, in, &sorted))
        return false; /* no memory to check: the other checks stand */
    bool wrong = false;
    for (uint64_t k = 0; k < res->n_intervals && !wrong; k++) {
        const topoml_interval *b = &res->intervals[k];
        const topoml_generator *g = &res->generators[k];
        if (!(b->death > b->birth))
            continue; /* zero length: not a bar */
        const bool birth_ok = b->dim == 0 ? g->birth[0] == TOPOML_NO_VERTEX &&
                                                g->birth[1] == TOPOML_NO_VERTEX
                                          : edge_of_length(in, sorted, g->birth[0], g->birth[1],
                                                           b->birth);
        const bool death_ok = isinf(b->death) ? g->death[0] == TOPOML_NO_VERTEX &&
                                                    g->death[1] == TOPOML_NO_VERTEX
                                              : edge_of_length(in, sorted, g->death[0],
                                                               g->death[1], b->death);
        if (!birth_ok || !death_ok) {
            snprintf(why, why_size,
                     "the %s edge (%u, %u) of bar %llu (dim %u, [%.17g, %.17g)) is not an edge "
                     "of that length",
                     birth_ok ? "death" : "birth", birth_ok ? g->death[0] : g->birth[0],
                     birth_ok ? g->death[1] : g->birth[1], (unsigned long long)k, b->dim,
                     b->birth, b->death);
            wrong = true;
        }
    }
    tm_free(ctx, sorted);
    return wrong;
}

/* ---- representative cocycles ---- */

bool tm_cocycles_malformed(const topoml_barcode_v1 *res, bool asked, uint64_t n, uint32_t p,
                           char *why, size_t why_size)
{
    if (!asked) {
        if (res->cocycle_offsets || res->cocycles) {
            snprintf(why, why_size, "cocycles not asked for");
            return true;
        }
        return false;
    }
    const uint64_t *off = res->cocycle_offsets;
    if (!off) {
        snprintf(why, why_size, "no cocycles");
        return true;
    }
    if (off[0] != 0) {
        snprintf(why, why_size, "the first offset is %llu, not 0", (unsigned long long)off[0]);
        return true;
    }
    for (uint64_t k = 0; k < res->n_intervals; k++) {
        const uint32_t d = res->intervals[k].dim;
        const uint64_t w = (uint64_t)d + 2, a = off[k], b = off[k + 1];
        if (b < a || (b - a) % w || (b > a && !res->cocycles) || (d == 0) != (a == b) ||
            d > UINT32_MAX - 3) {
            snprintf(why, why_size,
                     "interval %llu (dim %u): words %llu..%llu are not whole rows of %llu (none "
                     "in dimension 0, some above)",
                     (unsigned long long)k, d, (unsigned long long)a, (unsigned long long)b,
                     (unsigned long long)w);
            return true;
        }
        for (uint64_t r = a; r < b; r += w) {
            const uint32_t *row = res->cocycles + r;
            bool ok = row[d + 1] >= 1 && row[d + 1] < p && row[0] < n;
            for (uint32_t i = 1; ok && i <= d; i++)
                ok = row[i] < row[i - 1];
            if (!ok) {
                snprintf(why, why_size,
                         "interval %llu (dim %u): a row's vertices are not distinct, descending "
                         "and below %llu, or its value is not in 1..%u",
                         (unsigned long long)k, d, (unsigned long long)n, p - 1);
                return true;
            }
        }
    }
    return false;
}

/* d(u, v) as the reference has it; a sparse input's edges by (i, j) in
 * `sorted` (absent: +INFINITY). */
static double pair_distance(const topoml_input_v1 *in, const topoml_edge *sorted, uint32_t u,
                            uint32_t v)
{
    if (in->kind != TOPOML_INPUT_SPARSE)
        return input_distance(in, u, v);
    if (u == v)
        return 0;
    if (!sorted)
        return INFINITY;
    topoml_edge key = {.i = u < v ? u : v, .j = u < v ? v : u};
    const topoml_edge *e =
        bsearch(&key, sorted, (size_t)in->n_edges, sizeof *sorted, edge_order);
    if (!e) {
        uint32_t t = key.i;
        key.i = key.j;
        key.j = t;
        e = bsearch(&key, sorted, (size_t)in->n_edges, sizeof *sorted, edge_order);
    }
    return e ? e->d : INFINITY;
}

static double simplex_diameter(const topoml_input_v1 *in, const topoml_edge *sorted,
                               const uint32_t *v, uint32_t m)
{
    double diam = 0;
    for (uint32_t i = 0; i < m; i++)
        for (uint32_t j = i + 1; j < m; j++)
            diam = fmax(diam, pair_distance(in, sorted, v[i], v[j]));
    return diam;
}

/* The width of the records cofacet_order compares (qsort has no context). */
static _Thread_local uint32_t cofacet_words;

static int cofacet_order(const void *a, const void *b)
{
    return memcmp(a, b, (size_t)(cofacet_words - 1) * sizeof(uint32_t));
}

/* Is the cocycle of bar k (dimension d >= 1, rows checked well-formed) not a
 * cocycle of the complex at the bar's birth b, or zero on every simplex of
 * diameter b? Its coboundary, summed over the cofacets of diameter <= b of
 * its rows of diameter <= b, must vanish mod p: each cofacet of the complex
 * K_b whose facets the cocycle names gets one term from each, so this is
 * (delta z)(tau) for every tau in K_b where it could be non-zero. And some row
 * of diameter b must have a value: a cocycle of K_b vanishing on every
 * simplex of diameter b is one of the complex just before b, whose class
 * (if any) was there before the bar started. A plugin that rounds distances
 * otherwise (f32 points) is held to its birth within the distance
 * tolerance. Rows of larger diameter are outside K_b, and not looked at.
 * False also when there is no memory to check (the other checks stand). */
static bool cocycle_wrong(topoml_context *ctx, const topoml_input_v1 *in,
                          const topoml_edge *sorted, uint32_t p, const topoml_interval *bar,
                          const uint32_t *rows, uint64_t n_rows, char *why, size_t why_size)
{
    const uint32_t d = bar->dim, w = d + 2, W = d + 3;
    const tolerance t = distance_tolerance(in);
    double limit = bar->birth + t.rel * fabs(bar->birth) + t.abs;
    if (!(limit < bar->death))
        limit = bar->birth;
    const double low = bar->birth - (t.rel * fabs(bar->birth) + t.abs);
    bool born = false;
    uint64_t n_cf = 0, cap = 0;
    uint32_t *cf = NULL;
    for (uint64_t r = 0; r < n_rows; r++) {
        const uint32_t *row = rows + r * w;
        const double diam = simplex_diameter(in, sorted, row, d + 1);
        if (diam > limit)
            continue;
        born = born || diam >= low;
        for (uint32_t v = 0; v < in->n; v++) {
            uint32_t above = 0; /* vertices of the row above v: v's place in tau */
            bool in_row = false, within = true;
            for (uint32_t i = 0; i <= d && within && !in_row; i++) {
                in_row = row[i] == v;
                above += row[i] > v;
                within = pair_distance(in, sorted, row[i], v) <= limit;
            }
            if (in_row || !within)
                continue;
            if (n_cf == cap) {
                uint64_t c = cap ? 2 * cap : 256;
                uint32_t *g = tm_realloc(ctx, cf, (size_t)(c * W * sizeof *cf));
                if (!g) {
                    ctx->errmsg[0] = '\0';
                    tm_free(ctx, cf);
                    return false;
                }
                cf = g;
                cap = c;
            }
            uint32_t *rec = cf + n_cf++ * W;
            for (uint32_t i = 0, j = 0; i <= d + 1; i++)
                rec[i] = i == above ? v : row[j++];
            rec[d + 2] = above % 2 ? p - row[d + 1] : row[d + 1];
        }
    }
    bool wrong = false;
    if (!born) {
        snprintf(why, why_size,
                 "the cocycle of a bar (dim %u, [%.17g, %.17g)) is zero on every simplex of "
                 "diameter %.17g, where the bar starts",
                 d, bar->birth, bar->death, bar->birth);
        wrong = true;
    }
    cofacet_words = W;
    if (!wrong && n_cf)
        qsort(cf, (size_t)n_cf, (size_t)W * sizeof *cf, cofacet_order);
    for (uint64_t a = 0, b; !wrong && a < n_cf; a = b) {
        uint64_t sum = 0;
        for (b = a; b < n_cf && cofacet_order(cf + a * W, cf + b * W) == 0; b++)
            sum += cf[b * W + d + 2];
        if (sum % p) {
            snprintf(why, why_size,
                     "the cocycle of a bar (dim %u, [%.17g, %.17g)) is not a cocycle at its "
                     "birth: its coboundary is %llu (mod %u) on a simplex of diameter <= %.17g",
                     d, bar->birth, bar->death, (unsigned long long)(sum % p), p, limit);
            wrong = true;
        }
    }
    tm_free(ctx, cf);
    return wrong;
}

/* Cocycles, when asked for: well-formed, and each a cocycle of its bar's
 * birth complex that is non-zero there (cocycle_wrong). */
bool tm_cocycles_wrong(topoml_context *ctx, const topoml_input_v1 *in, uint32_t p,
                       const topoml_barcode_v1 *res, char *why, size_t why_size)
{
    if (tm_cocycles_malformed(res, true, in->n, p, why, why_size))
        return true;
    topoml_edge *sorted = NULL;
    if (!sorted_edges(ctx, in, &sorted))
        return false; /* no memory to check: the other checks stand */
    bool wrong = false;
    for (uint64_t k = 0; k < res->n_intervals && !wrong; k++) {
        const topoml_interval *b = &res->intervals[k];
        if (b->dim == 0 || !(b->death > b->birth))
            continue;
        const uint64_t a = res->cocycle_offsets[k], e = res->cocycle_offsets[k + 1];
        wrong = cocycle_wrong(ctx, in, sorted, p, b, res->cocycles + a, (e - a) / (b->dim + 2),
                              why, why_size);
    }
    tm_free(ctx, sorted);
    return wrong;
}

/* The conformance suite's rule (docs/conformance.md, "Barcodes"): the same
 * bars, exactly, through the one comparison both use (diagram_compare.c).
 * `prefix` starts the reason ("" or "cut at s: "). */
static bool barcodes_differ(topoml_context *ctx, uint32_t max_dim, const topoml_interval *got,
                            uint64_t n_got, const topoml_barcode_v1 *want, const char *prefix,
                            char *why, size_t why_size)
{
    bool differs = false;
    uint32_t dim = 0;
    tm_dim_comparison c;
    if (tm_compare_barcodes(ctx, want->intervals, want->n_intervals, got, n_got, max_dim,
                            &differs, &dim, &c) != TOPOML_OK) {
        ctx->errmsg[0] = '\0';
        return false; /* no memory to compare: the other checks stand */
    }
    if (differs) {
        char text[400];
        tm_describe_difference(dim, &c, text, sizeof text);
        snprintf(why, why_size, "%s%s", prefix, text);
    }
    return differs;
}

/* A barcode's arrays: the intervals and, when generators were asked for
 * (topoml_rips_params_v1.flags), the generators the reference gives too. */
static void free_barcode(topoml_context *ctx, topoml_barcode_v1 *bc)
{
    tm_free(ctx, bc->intervals);
    tm_free(ctx, bc->generators);
    tm_free(ctx, bc->cocycle_offsets);
    tm_free(ctx, bc->cocycles);
    bc->intervals = NULL;
    bc->generators = NULL;
    bc->cocycle_offsets = NULL;
    bc->cocycles = NULL;
}

static int run_barcode(topoml_context *ctx, tm_backend *b, uint32_t op, const topoml_input_v1 *in,
                       const topoml_rips_params_v1 *params, topoml_barcode_v1 *out, char *msg,
                       size_t msg_size)
{
    topoml_call_v1 call;
    tm_call_init(ctx, &call, msg, msg_size);
    memset(out, 0, sizeof *out);
    out->struct_size = sizeof *out;
    return op == TOPOML_OP_RIPS ? b->vt->rips(b->state, &call, in, params, out)
                                : b->vt->h0(b->state, &call, in, params->threshold, out);
}

static int verify_barcode(topoml_context *ctx, tm_backend **bp, uint32_t op,
                          const topoml_input_v1 *in, const tm_verify_call *vc,
                          const topoml_rips_params_v1 *params, topoml_barcode_v1 *res,
                          bool may_rerun);

int tm_verify_barcode(topoml_context *ctx, tm_backend **bp, uint32_t op, const topoml_input_v1 *in,
                      const tm_verify_call *vc, const topoml_rips_params_v1 *params,
                      topoml_barcode_v1 *res)
{
    return verify_barcode(ctx, bp, op, in, vc, params, res, true);
}

int tm_verify_partial_barcode(topoml_context *ctx, tm_backend **bp, uint32_t op,
                              const topoml_input_v1 *in, const tm_verify_call *vc,
                              const topoml_rips_params_v1 *params, topoml_barcode_v1 *res,
                              bool cancelled)
{
    /* The finished dimensions are an answer too: checked as a call that
     * asked for them (a cancelled call's without a re-run: the caller wants
     * out, not a second computation). */
    topoml_rips_params_v1 q = *params;
    q.max_dim = res->max_dim;
    const uint32_t complete = res->complete;
    int rc = verify_barcode(ctx, bp, op, in, vc, &q, res, !cancelled);
    res->complete = complete;
    return rc;
}

/* The plugin's bars as the filtration cut at s has them: those born at
 * or before s, a death after s made infinite (tm_alloc'd; NULL: memory). */
static topoml_interval *cut_bars(topoml_context *ctx, const topoml_barcode_v1 *res, double s,
                                 uint64_t *n)
{
    topoml_interval *out =
        tm_alloc(ctx, (size_t)(res->n_intervals ? res->n_intervals : 1) * sizeof *out);
    *n = 0;
    if (!out) {
        ctx->errmsg[0] = '\0';
        return NULL;
    }
    for (uint64_t k = 0; k < res->n_intervals; k++) {
        topoml_interval v = res->intervals[k];
        if (!(v.birth <= s) || !(v.death > v.birth))
            continue;
        if (v.death > s)
            v.death = INFINITY;
        out[(*n)++] = v;
    }
    return out;
}

/* The truncated re-run: the reference computes the filtration cut at
 * cut->scale (the input's pairs of length <= s, gathered by the exact
 * pass, as an edge list), and the plugin's bars cut there must be its bars,
 * exactly. Returns the reference's status (TOPOML_OK when compared). */
static int truncated_rerun(topoml_context *ctx, uint32_t op, const topoml_input_v1 *in,
                           const topoml_rips_params_v1 *params, const tm_exact_cut *cut,
                           const topoml_barcode_v1 *res, bool *wrong, char *why,
                           size_t why_size)
{
    topoml_input_v1 sub;
    memset(&sub, 0, sizeof sub);
    sub.struct_size = sizeof sub;
    sub.kind = TOPOML_INPUT_SPARSE;
    sub.n = in->n;
    sub.dtype = TOPOML_F64;
    sub.n_edges = cut->n_edges;
    sub.edges = cut->edges;
    topoml_rips_params_v1 q = *params;
    q.threshold = cut->scale;
    q.flags = 0;
    q.max_dim = res->max_dim;
    topoml_barcode_v1 want;
    char msg[512];
    const double t0 = tm_now();
    int rc = run_barcode(ctx, reference(ctx), op, &sub, &q, &want, msg, sizeof msg);
    const double spent = tm_now() - t0;
    ctx->verify_truncated++;
    const double units = tm_truncation_units(in->n, (double)cut->n_edges, q.max_dim);
    if (rc == TOPOML_OK && units > 0 && spent > 0)
        ctx->verify_unit_seconds = spent / units;
    if (rc != TOPOML_OK) {
        free_barcode(ctx, &want);
        return rc;
    }
    uint64_t n = 0;
    topoml_interval *got = cut_bars(ctx, res, cut->scale, &n);
    if (got) {
        char prefix[80];
        snprintf(prefix, sizeof prefix, "cut at %.17g: ", cut->scale);
        *wrong = barcodes_differ(ctx, q.max_dim, got, n, &want, prefix, why, why_size);
    }
    tm_free(ctx, got);
    free_barcode(ctx, &want);
    return TOPOML_OK;
}

/* A full re-run drawn at random (verify: auto), from the first call: with
 * probability verify_share / 2 over the reference's time relative to the
 * plugin's on calls of this kind (`ratio`: kind_ratio, the record's when
 * one was measured, in this process or an earlier one), so that each draw's
 * expected cost is verify_share / 2 of this call's plugin time, from a
 * process's first call on, and a plugin cannot tell which of its calls
 * will be checked. */
static bool sampled_rerun(topoml_context *ctx, double ratio)
{
    if (ctx->config.verify != TM_VERIFY_AUTO || !(ctx->config.verify_share > 0))
        return false;
    const double p = ctx->config.verify_share / 2 / ratio;
    const double u = (double)(next_random(ctx) >> 11) * 0x1p-53;
    if (!(u < p))
        return false;
    ctx->verify_sampled++;
    return true;
}

static int verify_barcode(topoml_context *ctx, tm_backend **bp, uint32_t op,
                          const topoml_input_v1 *in, const tm_verify_call *vc,
                          const topoml_rips_params_v1 *params, topoml_barcode_v1 *res,
                          bool may_rerun)
{
    tm_backend *b = *bp;
    double seconds = tm_now() - vc->start;
    if (!b->path)
        return TOPOML_OK;
    if (input_hash(in) != vc->input_hash)
        return changed_input(ctx, b, op);
    uint32_t max_dim = op == TOPOML_OP_RIPS ? params->max_dim : 0;
    char why[600], msg[512];
    bool wrong = barcode_wrong(max_dim, params->threshold, res, why, sizeof why);
    if (!wrong && op == TOPOML_OP_RIPS && (params->flags & TOPOML_RIPS_PARAM_GENERATORS) &&
        ctx->config.verify != TM_VERIFY_OFF)
        wrong = generators_wrong(ctx, in, res, why, sizeof why);
    if (!wrong && op == TOPOML_OP_RIPS && (params->flags & TOPOML_RIPS_PARAM_COCYCLES) &&
        ctx->config.verify != TM_VERIFY_OFF)
        wrong = tm_cocycles_wrong(ctx, in, params->modulus, res, why, sizeof why);
    tm_backend *ref = reference(ctx);
    topoml_barcode_v1 want;
    const uint32_t vertices = max_dim + 2;
    const tm_envelope kind =
        sized(call_kind(op, in, vc, max_dim, op == TOPOML_OP_RIPS ? params->modulus : 0,
                        params->threshold,
                        op == TOPOML_OP_RIPS && (params->flags & TOPOML_RIPS_PARAM_GENERATORS)),
              in, res->n_intervals);
    const bool checks = ctx->config.verify != TM_VERIFY_OFF;
    const bool reruns = may_rerun && (ctx->config.verify == TM_VERIFY_AUTO ||
                                      ctx->config.verify == TM_VERIFY_ALWAYS);
    /* (the share rule and the draw both looked at: each keeps its account;
     * no draw for a small call, which is re-run every time — at a recorded
     * ratio below 1 it was drawn often, and counted as a draw) */
    bool full = !wrong && may_rerun && beyond_envelope(ctx, b, &kind);
    if (!wrong && may_rerun && !full) {
        const bool by_share = want_rerun(ctx, in->n, vertices, seconds);
        const bool drawn = !small_call(in->n, vertices, seconds) &&
                           sampled_rerun(ctx, kind_ratio(ctx, b, &kind));
        full = by_share || drawn;
    }
    /* The history-free checks: the exact pass, and the truncated re-run
     * where no full one comes (when the budget affords the whole call, its
     * cut is at the threshold: a re-run of all of it). */
    tm_exact_cut cut;
    memset(&cut, 0, sizeof cut);
    cut.scale = NAN;
    double budget_units = 0;
    if (!wrong && !full && reruns && res->max_dim >= 1 && res->n_intervals) {
        const double unit = ctx->verify_unit_seconds > 0 ? ctx->verify_unit_seconds
                                                         : TM_UNIT_SECONDS_DEFAULT;
        double budget = ctx->config.verify_share / 2 * seconds;
        if (budget < TM_TRUNCATION_FLOOR_SECONDS)
            budget = TM_TRUNCATION_FLOOR_SECONDS;
        bool all_fits = false; /* then s is the threshold: the whole call, re-run */
        budget_units = budget / unit;
        cut.scale = tm_truncation_scale(ctx, in, params->threshold, res->max_dim, budget_units,
                                        &all_fits);
    }
    if (!wrong && checks) {
        int rc = tm_exact_barcode_wrong(ctx, in, params->threshold, res, &cut, &wrong, why,
                                        sizeof why);
        if (rc != TOPOML_OK) {
            tm_log(ctx, TOPOML_LOG_INFO,
                   "backend '%s''s %s answer on %llu points: the exact checks were not made "
                   "(%s)",
                   b->name, tm_op_name(op), (unsigned long long)in->n,
                   rc == TOPOML_E_LIMIT ? "too large an input, or over the memory limit"
                                        : "out of memory");
            cut.scale = NAN;
        }
    }
    /* The sample chose the scale; the pass counted its pairs exactly: a cut
     * the sample misjudged (a tie class it missed) is cut back to its
     * budget before the reference runs it. */
    if (!wrong && !isnan(cut.scale) && tm_truncation_trim(in, res->max_dim, budget_units, &cut))
        tm_log(ctx, TOPOML_LOG_DEBUG, "truncated re-run: cut back to %llu pairs, scale %.17g",
               (unsigned long long)cut.n_edges, cut.scale);
    if (!wrong && !isnan(cut.scale)) {
        /* the reference's work is shown as such, as a full re-run's is */
        tm_progress_rerun(ctx, true);
        int rc = truncated_rerun(ctx, op, in, params, &cut, res, &wrong, why, sizeof why);
        tm_progress_rerun(ctx, false);
        if (ctx->progress_rerun_cancelled)
            rc = TOPOML_E_CANCELLED;
        if (rc == TOPOML_E_CANCELLED) {
            tm_free(ctx, cut.edges);
            free_barcode(ctx, res);
            res->n_intervals = 0;
            res->max_dim = 0;
            return unchecked(ctx, b, op, rc, msg);
        }
        if (rc != TOPOML_OK)
            ctx->errmsg[0] = '\0'; /* not re-run: the other checks stand */
    }
    tm_free(ctx, cut.edges);
    if (!wrong && full) {
        tm_progress_rerun(ctx, true);
        double t0 = tm_now();
        int rc = run_barcode(ctx, ref, op, in, params, &want, msg, sizeof msg);
        if (ctx->progress_rerun_cancelled)
            rc = TOPOML_E_CANCELLED;
        const double ref_seconds = tm_now() - t0;
        rerun_done(ctx, in->n, vertices, seconds, ref_seconds);
        if (rc != TOPOML_OK) {
            free_barcode(ctx, &want);
            rc = unchecked(ctx, b, op, rc, msg);
            if (rc != TOPOML_OK) {
                /* nothing of the plugin's answer goes out, not even as a
                 * cancelled call's complete dimensions */
                free_barcode(ctx, res);
                res->n_intervals = 0;
                res->max_dim = 0;
            }
            return rc;
        }
        wrong = barcodes_differ(ctx, max_dim, res->intervals, res->n_intervals, &want, "", why,
                                sizeof why);
        if (!wrong) {
            free_barcode(ctx, &want);
            tm_envelope seen = kind;
            seen.ratio = seconds > 0 && ref_seconds > 0 ? ref_seconds / seconds : 0;
            envelope_checked(ctx, b, &seen);
            return TOPOML_OK;
        }
        reject(ctx, bp, op, why);
        free_barcode(ctx, res);
        *res = want;
        return TOPOML_OK;
    }
    if (!wrong)
        return TOPOML_OK;
    reject(ctx, bp, op, why);
    free_barcode(ctx, res);
    int rc = run_barcode(ctx, ref, op, in, params, res, msg, sizeof msg);
    if (rc != TOPOML_OK && rc != TOPOML_E_CANCELLED)
        return tm_error(ctx, rc, "%s", msg[0] ? msg : "reference failed");
    return rc;
}

/* ---- persistence images ---- */

static uint64_t image_input_hash(uint64_t n_diagrams, const uint64_t *offsets,
                                 const topoml_pair *pairs)
{
    uint64_t h = hash_bytes(0xcbf29ce484222325ull, offsets, (size_t)(n_diagrams + 1) * 8);
    return hash_bytes(h, pairs, (size_t)offsets[n_diagrams] * sizeof *pairs);
}

void tm_verify_image_begin(const tm_backend *b, uint64_t n_diagrams, const uint64_t *offsets,
                           const topoml_pair *pairs, tm_verify_call *vc)
{
    vc->input_hash = b->path ? image_input_hash(n_diagrams, offsets, pairs) : 0;
    vc->threads = 0; /* not part of an image's kind (tm_verify_image builds its own) */
    vc->device = -1;
    vc->start = tm_now();
}

/* The bound of one pixel: the conformance suite's (diagram_compare.c). */
static double pixel_tolerance(const topoml_image_params_v1 *p, uint64_t n_pairs)
{
    return tm_image_bound(p, n_pairs, TOPOML_F64, TM_TOLERANCE_ULPS);
}

static bool image_wrong(const topoml_image_params_v1 *p, uint64_t n_diagrams,
                        const uint64_t *offsets, const double *out, const double *want,
                        char *why, size_t why_size)
{
    const uint64_t cells = (uint64_t)p->width * p->height;
    for (uint64_t d = 0; d < n_diagrams; d++) {
        const double tol = pixel_tolerance(p, offsets[d + 1] - offsets[d]);
        for (uint64_t k = d * cells; k < (d + 1) * cells; k++) {
            const bool bad = !isfinite(out[k]) || out[k] < -tol ||
                             (want && !(fabs(out[k] - want[k]) <= tol));
            if (bad) {
                if (want)
                    snprintf(why, why_size, "pixel %llu of image %llu is %.17g, the reference's "
                             "%.17g (bound %.3g)",
                             (unsigned long long)(k - d * cells), (unsigned long long)d, out[k],
                             want[k], tol);
                else
                    snprintf(why, why_size, "pixel %llu of image %llu is %g",
                             (unsigned long long)(k - d * cells), (unsigned long long)d, out[k]);
                return true;
            }
        }
    }
    return false;
}

int tm_verify_image(topoml_context *ctx, tm_backend **bp, const topoml_image_params_v1 *p,
                    uint64_t n_diagrams, const uint64_t *offsets, const topoml_pair *pairs,
                    const tm_verify_call *vc, double *out)
{
    tm_backend *b = *bp;
    const double seconds = tm_now() - vc->start;
    if (!b->path)
        return TOPOML_OK;
    if (image_input_hash(n_diagrams, offsets, pairs) != vc->input_hash)
        return changed(ctx, b, TOPOML_OP_IMAGE, "diagrams");
    const uint64_t cells = (uint64_t)p->width * p->height * n_diagrams;
    char why[320], msg[512];
    bool wrong = image_wrong(p, n_diagrams, offsets, out, NULL, why, sizeof why);
    tm_backend *ref = reference(ctx);
    topoml_call_v1 call;
    /* Its kind: the op, the weight (in the modulus slot) and the rule for
     * infinite deaths (in the dimension slot); its size: the pairs, and the
     * pixels as the answer. */
    tm_envelope kind;
    memset(&kind, 0, sizeof kind);
    kind.op = TOPOML_OP_IMAGE;
    kind.modulus = p->weight;
    kind.max_dim = p->infinite;
    kind.n = offsets[n_diagrams];
    kind.out = cells;
    if (!wrong && (beyond_envelope(ctx, b, &kind) || want_rerun(ctx, kind.n, 2, seconds))) {
        double *want = tm_alloc(ctx, (size_t)(cells ? cells : 1) * sizeof *want);
        if (!want) {
            ctx->errmsg[0] = '\0';
            return unchecked(ctx, b, TOPOML_OP_IMAGE, TOPOML_E_NOMEM, "out of memory");
        }
        tm_call_init(ctx, &call, msg, sizeof msg);
        tm_progress_rerun(ctx, true);
        const double t0 = tm_now();
        int rc = ref->vt->image(ref->state, &call, p, n_diagrams, offsets, pairs, want);
        if (ctx->progress_rerun_cancelled)
            rc = TOPOML_E_CANCELLED;
        rerun_done(ctx, kind.n, 2, seconds, tm_now() - t0);
        if (rc != TOPOML_OK) {
            tm_free(ctx, want);
            return unchecked(ctx, b, TOPOML_OP_IMAGE, rc, msg);
        }
        wrong = image_wrong(p, n_diagrams, offsets, out, want, why, sizeof why);
        if (wrong)
            memcpy(out, want, (size_t)cells * sizeof *out);
        tm_free(ctx, want);
        if (!wrong) {
            envelope_checked(ctx, b, &kind);
            return TOPOML_OK;
        }
        reject(ctx, bp, TOPOML_OP_IMAGE, why);
        return TOPOML_OK;
    }
    if (!wrong)
        return TOPOML_OK;
    reject(ctx, bp, TOPOML_OP_IMAGE, why);
    tm_call_init(ctx, &call, msg, sizeof msg);
    int rc = ref->vt->image(ref->state, &call, p, n_diagrams, offsets, pairs, out);
    return rc == TOPOML_OK ? TOPOML_OK : tm_error(ctx, rc, "%s", msg[0] ? msg : "reference failed");
}
