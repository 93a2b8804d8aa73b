/*
 * calibrate.c — the cost model by which tm_select (registry.c) picks, among
 * several enabled backends that can run a Rips call, the one predicted
 * fastest for that call on this machine (configuration `select: cost`).
 *
 * The model of a backend: seconds = a + b * work, where work is what the
 * call's sizes (points, edges within the threshold, max_dim) say the
 * reduction costs (tm_rips_work: the estimate the collapse's size rule uses,
 * plus a term for the edges and points themselves), fitted by least squares
 * on a few calls of growing size timed here: seeded uniform clouds in R^3,
 * H1 and H2, each the faster of two runs. A backend that uses threads is
 * fitted twice, on one thread and on every thread the calls may use, and a
 * call on T threads is predicted between the two. What is not modelled:
 * the modulus (every backend pays about the same for Z/p) and device
 * residency (data in device memory reaches only a backend that reads it
 * there: tm_caps_cover decides that before any prediction).
 *
 * The fit is kept in the certificate cache folder beside the plugin's
 * certificate, in its own record (<file>-<hash>.calib, key=value lines
 * closed by a SHA-256 checksum line as certificates are), bound to the
 * plugin file's SHA-256 (the built-in reference: the core's version), the
 * core's version, the CPU fingerprint (tm_cert_cpu) and the CPUs this
 * process may use: change any and the calibration is made again. It is not
 * a trust decision — the gate makes those — only a speed estimate, so a
 * record that does not parse is simply made again.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/api.h"
#include "compute/compute.h"
#include "gate/certificate.h"
#include "gate/gate.h"
#include "gate/gate_internal.h"
#include "gate/sha256.h"

#define CAL_FORMAT "topoml-calibration-1"

double tm_rips_work(uint64_t n, uint64_t m, uint32_t max_dim)
{
    double work = 20e-9 * (double)m + 1e-9 * (double)n;
    if (max_dim > 0) {
        const tm_collapse_sizes s = {n, m, 0.0, max_dim};
        work += tm_collapse_plan_for(&s).reduction_s;
    }
    return work;
}

/* ---- the calibration calls ---- */

/* A seeded uniform cloud in the unit cube of R^3 (splitmix64). */
static void cloud(double *x, uint64_t n, uint64_t seed)
{
    for (uint64_t i = 0; i < 3 * n; i++) {
        uint64_t z = (seed += 0x9e3779b97f4a7c15u);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
        x[i] = (double)((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
    }
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The calls: (points, max_dim), growing. */
static const struct {
    uint32_t n, max_dim;
} cal_calls[] = {{40, 1}, {80, 1}, {160, 1}, {40, 2}, {70, 2}};
#define CAL_CALLS (sizeof cal_calls / sizeof cal_calls[0])

/* Seconds of b's Rips on a cloud of n points at max_dim on `threads`
 * threads, the faster of two runs; < 0 when a run fails. */
static double time_call(topoml_context *ctx, tm_backend *b, const double *x, uint32_t n,
                        uint32_t max_dim, unsigned threads)
{
    topoml_input_v1 in;
    memset(&in, 0, sizeof in);
    in.struct_size = sizeof in;
    in.kind = TOPOML_INPUT_POINTS;
    in.n = n;
    in.dim = 3;
    in.dtype = TOPOML_F64;
    in.metric = TOPOML_METRIC_EUCLIDEAN;
    in.data = x;
    topoml_rips_params_v1 p;
    memset(&p, 0, sizeof p);
    p.struct_size = sizeof p;
    p.max_dim = max_dim;
    p.threshold = INFINITY;
    p.modulus = 2;
    double best = -1.0;
    for (int rep = 0; rep < 2; rep++) {
        char msg[256];
        topoml_call_v1 call;
        tm_call_init(ctx, &call, msg, sizeof msg);
        call.progress = NULL; /* not the user's work: nothing to report */
        call.n_threads = threads;
        topoml_barcode_v1 res;
        memset(&res, 0, sizeof res);
        res.struct_size = sizeof res;
        const double t0 = now_s();
        int rc = b->vt->rips(b->state, &call, &in, &p, &res);
        const double t = now_s() - t0;
        tm_free(ctx, res.intervals);
        tm_free(ctx, res.generators);
        if (rc != TOPOML_OK) {
            tm_log(ctx, TOPOML_LOG_INFO, "calibration of '%s': a call failed: %s", b->name,
                   msg[0] ? msg : topoml_strerror(rc));
            return -1.0;
        }
        best = best < 0.0 || t < best ? t : best;
    }
    return best;
}

/* Least squares of t = a + b w with a, b >= 0. */
static tm_cost_fit fit(const double *w, const double *t, size_t k)
{
    double sw = 0, st = 0, sww = 0, swt = 0;
    for (size_t i = 0; i < k; i++) {
        sw += w[i];
        st += t[i];
        sww += w[i] * w[i];
        swt += w[i] * t[i];
    }
    const double kk = (double)k, det = kk * sww - sw * sw;
    tm_cost_fit f = {st / kk, 0.0};
    if (det > 0.0) {
        f.b = (kk * swt - sw * st) / det;
        f.a = (st - f.b * sw) / kk;
    }
    if (f.b < 0.0) {
        f.b = 0.0;
        f.a = st / kk;
    } else if (f.a < 0.0) {
        f.a = 0.0;
        f.b = sww > 0.0 ? swt / sww : 0.0;
    }
    return f;
}

static int calibrate(topoml_context *ctx, tm_backend *b, tm_cost_model *m)
{
    double *x = tm_alloc(ctx, 3 * 160 * sizeof *x);
    if (!x)
        return tm_nomem(ctx, 3 * 160 * sizeof *x);
    double w[CAL_CALLS], t1[CAL_CALLS], tn[CAL_CALLS];
    const double start = now_s();
    int rc = TOPOML_OK;
    for (size_t i = 0; i < CAL_CALLS && rc == TOPOML_OK; i++) {
        const uint32_t n = cal_calls[i].n;
        cloud(x, n, 1000 + i);
        /* edges at the enclosing radius: counted as the engine would keep them */
        double radius = INFINITY;
        for (uint32_t u = 0; u < n; u++) {
            double far = 0.0;
            for (uint32_t v = 0; v < n; v++) {
                double d2 = 0.0;
                for (int c = 0; c < 3; c++)
                    d2 += (x[3 * u + c] - x[3 * v + c]) * (x[3 * u + c] - x[3 * v + c]);
                far = d2 > far ? d2 : far;
            }
            radius = far < radius ? far : radius;
        }
        uint64_t edges = 0;
        for (uint32_t u = 0; u < n; u++)
            for (uint32_t v = u + 1; v < n; v++) {
                double d2 = 0.0;
                for (int c = 0; c < 3; c++)
                    d2 += (x[3 * u + c] - x[3 * v + c]) * (x[3 * u + c] - x[3 * v + c]);
                edges += d2 <= radius;
            }
        w[i] = tm_rips_work(n, edges, cal_calls[i].max_dim);
        t1[i] = time_call(ctx, b, x, n, cal_calls[i].max_dim, 1);
        tn[i] = m->threads > 1 ? time_call(ctx, b, x, n, cal_calls[i].max_dim, m->threads)
                               : t1[i];
        if (t1[i] < 0.0 || tn[i] < 0.0)
            rc = TOPOML_E_PLUGIN;
    }
    tm_free(ctx, x);
    if (rc != TOPOML_OK)
        return rc;
    m->one = fit(w, t1, CAL_CALLS);
    m->all = fit(w, tn, CAL_CALLS);
    tm_log(ctx, TOPOML_LOG_INFO,
           "calibration of '%s': %zu calls in %.3f s: %.3g s + %.3g x work on 1 thread, "
           "%.3g s + %.3g x work on %u",
           b->name, CAL_CALLS, now_s() - start, m->one.a, m->one.b, m->all.a, m->all.b,
           m->threads);
    return TOPOML_OK;
}

/* ---- the record ---- */

/* What binds a record: the file, the core, the CPU, the CPUs. */
static void bindings(const tm_backend *b, unsigned threads, char *out, size_t size)
{
    char model[160], cpu[65];
    tm_cert_cpu(model, cpu);
    snprintf(out, size, "backend=%s\nfile_sha256=%s\ncore_version=%s\ncpu_sha256=%s\nthreads=%u\n",
             b->name, b->path ? b->file_sha256 : "built-in", TOPOML_VERSION_STRING, cpu, threads);
}

static int format(const tm_backend *b, const tm_cost_model *m, char *buf, size_t size)
{
    char bind[512];
    bindings(b, m->threads, bind, sizeof bind);
    int w = snprintf(buf, size, "format=" CAL_FORMAT "\n%sone=%.17g %.17g\nall=%.17g %.17g\n",
                     bind, m->one.a, m->one.b, m->all.a, m->all.b);
    if (w < 0 || (size_t)w >= size)
        return -1;
    char hex[65];
    tm_sha256_hex(buf, (size_t)w, hex);
    int w2 = snprintf(buf + w, size - (size_t)w, "checksum=%s\n", hex);
    return w2 < 0 || (size_t)w2 >= size - (size_t)w ? -1 : w + w2;
}

bool tm_calibration_parse(const tm_backend *b, unsigned threads, const char *text, size_t len,
                          tm_cost_model *m, char *why, size_t why_size)
{
    const char *sum = len > 0 ? strstr(text, "checksum=") : NULL;
    char hex[65];
    if (!sum || (size_t)(sum - text) + 9 + 64 + 1 != len || text[len - 1] != '\n') {
        snprintf(why, why_size, "no checksum line at its end");
        return false;
    }
    tm_sha256_hex(text, (size_t)(sum - text), hex);
    if (memcmp(sum + 9, hex, 64) != 0) {
        snprintf(why, why_size, "checksum does not match");
        return false;
    }
    char bind[512];
    bindings(b, threads, bind, sizeof bind);
    const char *head = "format=" CAL_FORMAT "\n";
    const size_t hl = strlen(head), bl = strlen(bind);
    if ((size_t)(sum - text) < hl + bl || memcmp(text, head, hl) != 0) {
        snprintf(why, why_size, "not a " CAL_FORMAT " record");
        return false;
    }
    if (memcmp(text + hl, bind, bl) != 0) {
        snprintf(why, why_size, "made for another plugin file, core, CPU or thread count");
        return false;
    }
    char tail[256];
    size_t tl = (size_t)(sum - text) - hl - bl;
    if (tl >= sizeof tail) {
        snprintf(why, why_size, "bad fit lines");
        return false;
    }
    memcpy(tail, text + hl + bl, tl);
    tail[tl] = '\0';
    double v[4];
    int used = 0;
    if (sscanf(tail, "one=%lf %lf\nall=%lf %lf\n%n", &v[0], &v[1], &v[2], &v[3], &used) != 4 ||
        (size_t)used != tl) {
        snprintf(why, why_size, "bad fit lines");
        return false;
    }
    for (int i = 0; i < 4; i++)
        if (!(v[i] >= 0.0) || !isfinite(v[i])) {
            snprintf(why, why_size, "bad fit lines");
            return false;
        }
    m->threads = threads;
    m->one = (tm_cost_fit){v[0], v[1]};
    m->all = (tm_cost_fit){v[2], v[3]};
    return true;
}

/* Where b's record lives: beside its certificate (tm_cert_file), or for
 * the built-in reference "builtin-<name>.calib". false without a cache. */
static bool record_file(topoml_context *ctx, const tm_backend *b, bool create, char *out,
                        size_t size)
{
    char dir[4096], real[4096];
    if (tm_cache_dir(ctx, create, dir, sizeof dir) != TOPOML_OK)
        return false;
    if (b->path)
        return realpath(b->path, real) && tm_cert_file(dir, real, ".calib", out, size);
    int w = snprintf(out, size, "%s/builtin-%s.calib", dir, b->name);
    return w > 0 && (size_t)w < size;
}

static bool load(topoml_context *ctx, const tm_backend *b, tm_cost_model *m)
{
    char file[4200], why[160];
    if (!record_file(ctx, b, false, file, sizeof file))
        return false;
    int fd = open(file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return false;
    char text[2048];
    ssize_t len = read(fd, text, sizeof text - 1);
    close(fd);
    if (len <= 0)
        return false;
    text[len] = '\0';
    if (!tm_calibration_parse(b, m->threads, text, (size_t)len, m, why, sizeof why)) {
        tm_log(ctx, TOPOML_LOG_INFO, "calibration of '%s' in %s: %s: made again", b->name, file,
               why);
        return false;
    }
    return true;
}

static void store(topoml_context *ctx, const tm_backend *b, const tm_cost_model *m)
{
    char file[4200], tmp[4300], text[2048];
    int len = format(b, m, text, sizeof text);
    if (len < 0 || !record_file(ctx, b, true, file, sizeof file))
        return;
    snprintf(tmp, sizeof tmp, "%s.XXXXXX", file);
    int fd = mkstemp(tmp);
    if (fd < 0)
        return;
    bool ok = write(fd, text, (size_t)len) == len;
    ok = close(fd) == 0 && ok;
    if (!ok || rename(tmp, file) != 0) {
        unlink(tmp);
        tm_log(ctx, TOPOML_LOG_INFO, "calibration of '%s': cannot write %s", b->name, file);
    }
}

const tm_cost_model *tm_cost_model_of(topoml_context *ctx, tm_backend *b)
{
    const unsigned threads = tm_threads_allowed(ctx->config.threads);
    if (b->cost && b->cost->threads == threads)
        return b->cost;
    if (!b->cost) {
        b->cost = tm_calloc(ctx, 1, sizeof *b->cost);
        if (!b->cost)
            return NULL;
    }
    tm_cost_model *m = b->cost;
    memset(m, 0, sizeof *m);
    m->threads = threads;
    if (load(ctx, b, m)) {
        snprintf(m->source, sizeof m->source, "calibration record");
        return m;
    }
    if (calibrate(ctx, b, m) != TOPOML_OK) {
        tm_free(ctx, b->cost);
        b->cost = NULL;
        return NULL;
    }
    snprintf(m->source, sizeof m->source, "calibrated now");
    store(ctx, b, m);
    return m;
}

double tm_cost_predict(const tm_cost_model *m, double work, unsigned threads)
{
    const unsigned t = threads == 0 ? m->threads : threads;
    if (t <= 1)
        return m->one.a + m->one.b * work;
    if (t >= m->threads)
        return m->all.a + m->all.b * work;
    const double f = (double)(t - 1) / (double)(m->threads - 1);
    const double a = m->one.a + f * (m->all.a - m->one.a), b = m->one.b + f * (m->all.b - m->one.b);
    return a + b * work;
}
