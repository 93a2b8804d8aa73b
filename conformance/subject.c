/*
 * subject.c — the plugin under test, reached through the ABI alone.
 *
 * Every contact with the plugin happens in a child process (isolate.c):
 * once to learn who it is (negotiate, create, probe, capabilities), then
 * once per case to run one op. The child loads the file with the core's own
 * loader (the same checks a host applies: negotiation, struct sizes, name,
 * capability records) into a context that has no gate and no other plugin,
 * so a plugin is tested whatever the gate thinks of it, and enters the
 * sandbox of a helper process (gate/sandbox.h) after checking the file and
 * before loading it: the plugin under test cannot read the cache folder
 * (the key that seals certificates), write a file or start a program.
 * Certificates are written by the runner after the children end. The child
 * sends its
 * answers back over a pipe as tagged records; the parent never dlopens the
 * plugin, so nothing it does (a constructor that crashes, a GPU runtime
 * that dislikes fork) can reach the runner.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "conformance.h"
/* Internal: the subject is loaded and started as the loader does it
 * (tm_loader_check, the sandbox, tm_loader_negotiate, tm_backend_start) but
 * outside any gate, since the suite is what certifies; its records are read
 * from the backend (tm_backend). */
#include "api/api.h"
#include "gate/gate.h"
#include "gate/gate_internal.h"
#include "gate/sandbox.h"

/* ---- records on the pipe: tag (1 byte), length (4), payload ---- */

enum {
    REC_STAGE = 'S',
    REC_LOAD_FAILED = 'L',
    REC_IDENTITY = 'I',
    REC_RESULT = 'R',
    REC_END = 'E'
};

static void write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n > 0) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return; /* the parent is gone; nothing to tell anyone */
        c += w;
        n -= (size_t)w;
    }
}

static void put_record(int fd, char tag, const void *payload, uint32_t len)
{
    write_all(fd, &tag, 1);
    write_all(fd, &len, sizeof len);
    write_all(fd, payload, len);
}

static void put_text(int fd, char tag, const char *s)
{
    put_record(fd, tag, s, (uint32_t)strlen(s));
}

/* A growing buffer for one record's payload. */
typedef struct buf {
    unsigned char *p;
    size_t len, cap;
    bool failed;
} buf;

static void put(buf *b, const void *data, size_t n)
{
    if (b->failed || n == 0)
        return;
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n)
            cap *= 2;
        unsigned char *g = realloc(b->p, cap);
        if (!g) {
            b->failed = true;
            return;
        }
        b->p = g;
        b->cap = cap;
    }
    memcpy(b->p + b->len, data, n);
    b->len += n;
}

static void put_u32(buf *b, uint32_t v)
{
    put(b, &v, sizeof v);
}
static void put_u64(buf *b, uint64_t v)
{
    put(b, &v, sizeof v);
}
static void put_str(buf *b, const char *s)
{
    uint32_t n = s ? (uint32_t)strnlen(s, 4095) : 0;
    put_u32(b, n);
    put(b, s ? s : "", n);
}

/* Reading a payload back, every length checked against what is left. */
typedef struct cursor {
    const unsigned char *p;
    size_t left;
    bool bad;
} cursor;

static bool get(cursor *c, void *out, size_t n)
{
    if (c->bad || n > c->left) {
        c->bad = true;
        return false;
    }
    if (n) {
        memcpy(out, c->p, n);
        c->p += n;
    }
    c->left -= n;
    return true;
}
static uint32_t get_u32(cursor *c)
{
    uint32_t v = 0;
    get(c, &v, sizeof v);
    return v;
}
static uint64_t get_u64(cursor *c)
{
    uint64_t v = 0;
    get(c, &v, sizeof v);
    return v;
}
static void get_str(cursor *c, char *out, size_t size)
{
    uint32_t n = get_u32(c);
    if (c->bad || n > c->left) {
        c->bad = true;
        out[0] = '\0';
        return;
    }
    size_t keep = n < size - 1 ? n : size - 1;
    if (keep)
        memcpy(out, c->p, keep);
    out[keep] = '\0';
    if (n)
        c->p += n;
    c->left -= n;
}

/* The records of one child's answer. */
typedef struct answer {
    char stage[64]; /* the last stage it announced */
    bool load_failed;
    char load_reason[640];
    cursor identity; /* payload of REC_IDENTITY, if any */
    bool has_identity;
    cursor result;
    bool has_result;
    bool ended;
    bool garbled;
} answer;

static void parse_answer(const tc_child *ch, answer *a)
{
    memset(a, 0, sizeof *a);
    snprintf(a->stage, sizeof a->stage, "start");
    cursor c = {ch->data, ch->len, false};
    while (c.left > 0) {
        char tag;
        uint32_t len;
        if (!get(&c, &tag, 1) || !get(&c, &len, sizeof len) || len > c.left) {
            a->garbled = true;
            return;
        }
        cursor body = {c.p, len, false};
        c.p += len;
        c.left -= len;
        switch (tag) {
        case REC_STAGE:
            snprintf(a->stage, sizeof a->stage, "%.*s", (int)(len < 63 ? len : 63),
                     (const char *)body.p);
            break;
        case REC_LOAD_FAILED:
            a->load_failed = true;
            snprintf(a->load_reason, sizeof a->load_reason, "%.*s", (int)(len < 639 ? len : 639),
                     (const char *)body.p);
            break;
        case REC_IDENTITY:
            a->identity = body;
            a->has_identity = true;
            break;
        case REC_RESULT:
            a->result = body;
            a->has_result = true;
            break;
        case REC_END: a->ended = true; break;
        default: a->garbled = true; return;
        }
    }
}

/* ---- the child's side ---- */

typedef struct child_job {
    const char *path;
    bool verbose;
    const topoml_allocator *allocator; /* NULL: malloc */
    /* for a case (NULL when only identifying) */
    const tc_case *c;
    const tc_input *in;
    const tc_reference *r;
    const char *read_dir; /* a folder the child reads after its sandbox (the suite's data) */
} child_job;

/* The cache folder the runner uses (tc_subject_cache_dir): the child's
 * sandbox keeps it unreadable, with the default ones. */
static const char *subject_cache_dir;

void tc_subject_cache_dir(const char *dir)
{
    subject_cache_dir = dir;
}

/* Where the plugin's log messages go: stderr, or during the long-lived
 * checks (which watch stderr for the plugin's own writes) a copy of it. */
static int log_fd = 2;

static void child_log(void *user, int level, const char *message)
{
    (void)user;
    static const char *names[] = {"error", "warn", "info", "debug"};
    dprintf(log_fd, "  [plugin %s] %s\n", level >= 0 && level < 4 ? names[level] : "?", message);
}

/* Load and start the plugin in this (child) process. On failure the reason
 * is sent and false returned. */
static bool child_start(int fd, const child_job *job, topoml_context **ctx, tm_backend *b)
{
    topoml_context_options o = {.struct_size = sizeof o,
                                .flags = TOPOML_CTX_NO_ENV | TOPOML_CTX_NO_PLUGINS,
                                .allocator = job->allocator};
    if (topoml_context_new(ctx, &o) != TOPOML_OK) {
        put_text(fd, REC_LOAD_FAILED, "cannot make a context in the child");
        return false;
    }
    if (job->verbose)
        topoml_set_log(*ctx, child_log, NULL, TOPOML_LOG_DEBUG);
    memset(b, 0, sizeof *b);
    put_text(fd, REC_STAGE, "load and negotiate");
    tm_loader_check(*ctx, job->path, b);
    if (b->gate_state == TOPOML_GATE_REJECTED) {
        put_text(fd, REC_LOAD_FAILED, b->gate_reason);
        return false;
    }
    /* The plugin under test runs sandboxed from its first byte (its
     * constructors, at the dlopen in tm_loader_negotiate), as in a helper
     * of the library (gate/sandbox.h): no file of the user, no process, no
     * socket; the NVIDIA driver's rules only for a file in topoml's own
     * plugin folder (tm_probe_policy). Certificates are written by the
     * runner, after this child has ended. */
    tm_sandbox_policy pol = {.flags = b->in_default_folder ? TM_SANDBOX_NVIDIA : 0u,
                             .plugin_fd = b->fd,
                             .lifeline_fd = -1,
                             .host_pid = (int)getppid(),
                             .cache_dir = subject_cache_dir,
                             .read_dir = job->read_dir};
    char why[400];
    if (tm_sandbox_enter(&pol, why, sizeof why) != 0) {
        char reason[480];
        snprintf(reason, sizeof reason, "the test's child could not enter the sandbox: %s", why);
        put_text(fd, REC_LOAD_FAILED, reason);
        return false;
    }
    char walls[300];
    tm_sandbox_support(NULL, walls, sizeof walls);
    setenv("TOPOML_SANDBOX", walls, 1);
    tm_loader_negotiate(*ctx, b);
    if (b->gate_state == TOPOML_GATE_REJECTED) {
        put_text(fd, REC_LOAD_FAILED, b->gate_reason);
        return false;
    }
    put_text(fd, REC_STAGE, "create, probe, capabilities");
    tm_backend_start(*ctx, b);
    if (b->gate_state == TOPOML_GATE_REJECTED) {
        put_text(fd, REC_LOAD_FAILED, b->gate_reason);
        return false;
    }
    return true;
}

static void child_stop(int fd, topoml_context *ctx, tm_backend *b)
{
    put_text(fd, REC_STAGE, "destroy");
    if (b->created && b->vt->destroy)
        b->vt->destroy(b->state);
    if (b->dl)
        dlclose(b->dl);
    topoml_context_free(ctx);
}

typedef void (*child_body)(int fd, const child_job *job, topoml_context *ctx, tm_backend *b,
                           buf *out);

/* What every child does: start the plugin, let `body` write one record of
 * type `rec`, send it (when it ran out of memory: `nomem` as the answer's
 * message, or no record at all), stop the plugin, end the report. */
static int child_serve(int fd, const child_job *job, char rec, child_body body,
                       const char *nomem)
{
    topoml_context *ctx = NULL;
    tm_backend b;
    if (!child_start(fd, job, &ctx, &b)) {
        put_record(fd, REC_END, NULL, 0);
        topoml_context_free(ctx);
        return 0;
    }
    buf out = {0};
    body(fd, job, ctx, &b, &out);
    if (out.failed && nomem) {
        free(out.p);
        out = (buf){0};
        put_u32(&out, (uint32_t)TOPOML_E_NOMEM);
        put_str(&out, nomem);
    }
    if (!out.failed)
        put_record(fd, rec, out.p, (uint32_t)out.len);
    free(out.p);
    child_stop(fd, ctx, &b);
    put_record(fd, REC_END, NULL, 0);
    return 0;
}

static void identify(int fd, const child_job *job, topoml_context *ctx, tm_backend *b, buf *out)
{
    (void)fd;
    (void)job;
    (void)ctx;
    const topoml_backend_v1 *vt = b->vt;
    put_str(out, vt->name);
    put_str(out, vt->version);
    put_str(out, vt->vendor);
    put_str(out, vt->description);
    put_u32(out, b->abi_version);
    put_u32(out, (uint32_t)b->probe_status);
    put_str(out, b->probe_message);
    put_u32(out, tm_op_mask(vt));
    put_u32(out, b->n_caps);
    for (uint32_t i = 0; i < b->n_caps; i++) {
        topoml_capability_v1 cp = b->caps[i];
        put_str(out, cp.device);
        put_str(out, cp.schedule);
        cp.device = NULL;
        cp.schedule = NULL;
        put(out, &cp, sizeof cp);
    }
}

static int child_identify(int fd, void *arg)
{
    return child_serve(fd, arg, REC_IDENTITY, identify, NULL);
}

/* Bytes written past the end of an output array the host sized. */
#define GUARD_BYTES 64
#define GUARD_BYTE 0xA5

static bool guard_intact(const unsigned char *end)
{
    for (int k = 0; k < GUARD_BYTES; k++)
        if (end[k] != GUARD_BYTE)
            return false;
    return true;
}

/* Run the case's op once on a started backend and put the answer (status,
 * message, result) into `out` in the layout grade_answer reads. Stage
 * records go to fd. */
static void run_op(int fd, const child_job *job, topoml_context *ctx, tm_backend *b, buf *out)
{
    const tc_case *c = job->c;
    char msg[1024];
    topoml_call_v1 call;
    tm_call_init(ctx, &call, msg, sizeof msg);
    topoml_input_v1 in;
    tc_input_view(job->in, c, &in);
    int rc = b->probe_status;
    char stage[64];
    snprintf(stage, sizeof stage, "op %s", tm_op_name(c->op));
    if (rc != TOPOML_OK) {
        snprintf(msg, sizeof msg, "probe failed in this process: %.900s", b->probe_message);
        put_u32(out, (uint32_t)rc);
        put_str(out, msg);
    } else if (c->op == TOPOML_OP_DISTANCES || c->op == TOPOML_OP_IMAGE) {
        /* The host sizes these outputs; a guard after them catches a plugin
         * that writes past the end. */
        uint64_t count;
        size_t elem;
        topoml_image_params_v1 ip;
        uint64_t *offsets = NULL;
        topoml_pair *pairs = NULL;
        uint32_t k = c->max_dim + 1;
        if (c->op == TOPOML_OP_DISTANCES) {
            count = in.n * (in.n ? in.n - 1 : 0) / 2;
            elem = c->dtype == TOPOML_F32 ? sizeof(float) : sizeof(double);
        } else {
            count = (uint64_t)k * c->width * c->height;
            elem = sizeof(double);
            tc_image_params(c, job->r, &ip);
            offsets = calloc(k + 1, sizeof *offsets);
            pairs = malloc((job->r->n_bars ? job->r->n_bars : 1) * sizeof *pairs);
            for (uint32_t d = 0; offsets && pairs && d < k; d++)
                offsets[d + 1] = offsets[d] + tc_diagram_pairs(job->r->bars, job->r->n_bars, d,
                                                               pairs + offsets[d]);
        }
        unsigned char *o = malloc((size_t)(count * elem) + GUARD_BYTES);
        if (!o || (c->op == TOPOML_OP_IMAGE && (!offsets || !pairs))) {
            rc = TOPOML_E_NOMEM;
            snprintf(msg, sizeof msg, "the test harness ran out of memory");
        } else {
            memset(o, 0, (size_t)(count * elem));
            memset(o + count * elem, GUARD_BYTE, GUARD_BYTES);
            put_text(fd, REC_STAGE, stage);
            rc = c->op == TOPOML_OP_DISTANCES
                     ? b->vt->distances(b->state, &call, &in, o)
                     : b->vt->image(b->state, &call, &ip, k, offsets, pairs, (double *)o);
        }
        put_u32(out, (uint32_t)rc);
        put_str(out, rc == TOPOML_OK ? "" : msg);
        if (rc == TOPOML_OK) {
            put_u32(out, guard_intact(o + count * elem));
            put_u64(out, count);
            put(out, o, (size_t)(count * elem));
        }
        free(o);
        free(offsets);
        free(pairs);
    } else if (c->op == TOPOML_OP_EDGES) {
        topoml_edge *e = NULL;
        uint64_t n = 0;
        put_text(fd, REC_STAGE, stage);
        rc = b->vt->edges(b->state, &call, &in, c->threshold, &e, &n);
        put_u32(out, (uint32_t)rc);
        put_str(out, rc == TOPOML_OK ? "" : msg);
        if (rc == TOPOML_OK) {
            if (n && !e)
                n = UINT64_MAX; /* "n edges, no array": the parent fails it */
            put_u64(out, n);
            if (e && n != UINT64_MAX)
                put(out, e, (size_t)(n * sizeof *e));
        }
        if (e)
            call.free(call.host_data, e);
    } else {
        topoml_barcode_v1 bc;
        memset(&bc, 0, sizeof bc);
        bc.struct_size = sizeof bc;
        put_text(fd, REC_STAGE, stage);
        /* A plugin that claims generators is asked for them. */
        const bool gens = c->op == TOPOML_OP_RIPS && tm_caps_generators(b->caps, b->n_caps);
        /* ... and one that claims cocycles for this input, for them. */
        const bool coc = c->op == TOPOML_OP_RIPS &&
                         tm_caps_cover_features(b->caps, b->n_caps, TOPOML_OP_RIPS, &in,
                                                c->max_dim, c->modulus, TOPOML_CAP_COCYCLES);
        if (c->op == TOPOML_OP_H0) {
            rc = b->vt->h0(b->state, &call, &in, c->threshold, &bc);
        } else {
            topoml_rips_params_v1 p = {sizeof p, c->max_dim, c->threshold, c->modulus, 0,
                                       (gens ? TOPOML_RIPS_PARAM_GENERATORS : 0) |
                                           (coc ? TOPOML_RIPS_PARAM_COCYCLES : 0),
                                       0};
            rc = b->vt->rips(b->state, &call, &in, &p, &bc);
        }
        put_u32(out, (uint32_t)rc);
        put_str(out, rc == TOPOML_OK ? "" : msg);
        if (rc == TOPOML_OK) {
            uint64_t n = bc.n_intervals && !bc.intervals ? UINT64_MAX : bc.n_intervals;
            put_u32(out, bc.max_dim);
            put_u32(out, bc.complete);
            put_u64(out, n);
            if (n != UINT64_MAX)
                put(out, bc.intervals, (size_t)(n * sizeof *bc.intervals));
            /* 0: not asked; 1: the generators follow; 2: asked, none came */
            const uint32_t g = !gens ? 0 : bc.generators || bc.n_intervals == 0 ? 1 : 2;
            put_u32(out, g);
            if (g == 1 && n != UINT64_MAX && n)
                put(out, bc.generators, (size_t)(n * sizeof *bc.generators));
            /* 0: not asked; 1: the words and offsets follow; 2: asked, none
             * came */
            const uint32_t cf = !coc ? 0 : bc.cocycle_offsets ? 1 : 2;
            put_u32(out, cf);
            if (cf == 1 && n != UINT64_MAX) {
                const uint64_t words = bc.cocycle_offsets[n];
                put_u64(out, words);
                put(out, bc.cocycle_offsets, (size_t)((n + 1) * sizeof *bc.cocycle_offsets));
                if (words && bc.cocycles)
                    put(out, bc.cocycles, (size_t)(words * sizeof *bc.cocycles));
            }
        }
        if (bc.intervals)
            call.free(call.host_data, bc.intervals);
        if (bc.generators)
            call.free(call.host_data, bc.generators);
        if (bc.cocycle_offsets)
            call.free(call.host_data, bc.cocycle_offsets);
        if (bc.cocycles)
            call.free(call.host_data, bc.cocycles);
    }
}

static int child_run(int fd, void *arg)
{
    return child_serve(fd, arg, REC_RESULT, run_op,
                       "the test harness ran out of memory sending the answer");
}

/* ---- the long-lived checks: one process, many calls ---- */

static const char *unclaimed(const tc_plugin *p, const tc_case *c, const tc_input *in);
static void grade_answer(topoml_context *ref, const tc_case *c, const tc_input *in,
                         const tc_reference *r, cursor *res, tc_verdict *v);

/* The host allocator of the long-lived process: counts what is live. */
typedef struct counting {
    int64_t live;
} counting;

static void *count_alloc(void *user, size_t size)
{
    void *p = malloc(size ? size : 1);
    if (p)
        ((counting *)user)->live++;
    return p;
}

static void *count_realloc(void *user, void *ptr, size_t size)
{
    if (!ptr)
        return count_alloc(user, size);
    return realloc(ptr, size ? size : 1);
}

static void count_free(void *user, void *ptr)
{
    if (ptr) {
        ((counting *)user)->live--;
        free(ptr);
    }
}

/* FNV-1a over the bytes the plugin is given (points, distances, edges). */
static uint64_t fnv(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t k = 0; k < n; k++)
        h = (h ^ p[k]) * 0x100000001b3ull;
    return h;
}

static uint64_t input_hash(const tc_input *in, const tc_case *c)
{
    topoml_input_v1 v;
    tc_input_view(in, c, &v);
    uint64_t h = 0xcbf29ce484222325ull, pairs = v.n * (v.n ? v.n - 1 : 0) / 2;
    size_t elem = v.dtype == TOPOML_F32 ? sizeof(float) : sizeof(double);
    if (v.kind == TOPOML_INPUT_POINTS && v.data)
        h = fnv(h, v.data, (size_t)(v.n * v.dim) * elem);
    else if (v.kind == TOPOML_INPUT_CONDENSED && v.data)
        h = fnv(h, v.data, (size_t)pairs * elem);
    else if (v.kind == TOPOML_INPUT_SPARSE && v.edges)
        h = fnv(h, v.edges, (size_t)v.n_edges * sizeof *v.edges);
    return h;
}

/* The process's size in bytes (virtual: a leak need not touch its pages). */
static uint64_t process_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long long pages = 0;
    if (f) {
        if (fscanf(f, "%llu", &pages) != 1)
            pages = 0;
        fclose(f);
    }
    return (uint64_t)pages * (uint64_t)sysconf(_SC_PAGESIZE);
}

/* Growth of the process beyond which the repeated calls count as a leak. */
#define LEAK_ALLOWANCE ((uint64_t)32 << 20)

typedef struct soak_job {
    child_job base;
    topoml_context *ref;
    const tc_plugin *p;
    const tc_case *const *cases;
    const tc_input *inputs;
    const tc_reference *refs;
    size_t n_cases;
} soak_job;

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* What the plugin wrote into a capture file during a call: the byte count,
 * and the start of it in `sample`. */
static long captured(int fd, char *sample, size_t size)
{
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size <= 0) {
        sample[0] = '\0';
        return 0;
    }
    ssize_t r = pread(fd, sample, size - 1, 0);
    sample[r > 0 ? r : 0] = '\0';
    for (char *q = sample; *q; q++)
        if ((unsigned char)*q < 32)
            *q = ' ';
    return (long)st.st_size;
}

static int child_soak(int fd, void *arg)
{
    soak_job *job = arg;
    tc_verdict v;
    memset(&v, 0, sizeof v);
    counting count = {0};
    topoml_allocator alloc = {count_alloc, count_realloc, count_free, &count};
    job->base.allocator = &alloc;
    /* stdout and stderr go to capture files during every call; the
     * plugin's log messages to a copy of stderr. */
    fflush(stdout);
    fflush(stderr);
    int saved_out = dup(1), saved_err = dup(2);
    FILE *cap_out = tmpfile(), *cap_err = tmpfile();
    if (saved_out < 0 || saved_err < 0 || !cap_out || !cap_err) {
        put_text(fd, REC_LOAD_FAILED, "the test harness cannot capture stdout and stderr");
        put_record(fd, REC_END, NULL, 0);
        return 0;
    }
    log_fd = saved_err;
    topoml_context *ctx = NULL;
    tm_backend b;
    if (!child_start(fd, &job->base, &ctx, &b)) {
        put_record(fd, REC_END, NULL, 0);
        topoml_context_free(ctx);
        return 0;
    }
    size_t claimed[64], n_claimed = 0;
    for (size_t k = 0; k < job->n_cases && n_claimed < 64; k++)
        if (job->p->has_op[job->cases[k]->op] &&
            !unclaimed(job->p, job->cases[k], &job->inputs[k]))
            claimed[n_claimed++] = k;
    double total = 0, worst = 0;
    int calls = 0;
    uint64_t baseline = 0;
    /* Every op gets TC_LONGLIVED_CALLS calls: a plugin may count the calls
     * of one op. */
    bool op_seen[TOPOML_OP_COUNT] = {false};
    int n_ops = 0, n_calls;
    for (size_t q = 0; q < n_claimed; q++)
        if (!op_seen[job->cases[claimed[q]]->op]) {
            op_seen[job->cases[claimed[q]]->op] = true;
            n_ops++;
        }
    n_calls = TC_LONGLIVED_CALLS * n_ops;
    for (int call = 0; n_claimed && call < n_calls && v.result == TC_PASS; call++) {
        size_t k = claimed[(size_t)call % n_claimed];
        const tc_case *c = job->cases[k];
        char stage[240];
        snprintf(stage, sizeof stage, "call %d (%s)", call + 1, c->name);
        put_text(fd, REC_STAGE, stage);
        child_job one = job->base;
        one.c = c;
        one.in = &job->inputs[k];
        one.r = &job->refs[k];
        uint64_t before = input_hash(one.in, c);
        int64_t live = count.live;
        char out_sample[81], err_sample[81];
        if (ftruncate(fileno(cap_out), 0) != 0 || ftruncate(fileno(cap_err), 0) != 0 ||
            dup2(fileno(cap_out), 1) < 0 || dup2(fileno(cap_err), 2) < 0) {
            v.result = TC_FAIL;
            snprintf(v.detail, sizeof v.detail, "the test harness cannot capture stdout");
            break;
        }
        buf out = {0};
        double t0 = now_seconds();
        run_op(-1, &one, ctx, &b, &out);
        double dt = now_seconds() - t0;
        fflush(stdout);
        fflush(stderr);
        dup2(saved_out, 1);
        dup2(saved_err, 2);
        calls++;
        total += dt;
        worst = dt > worst ? dt : worst;
        long wrote_out = captured(fileno(cap_out), out_sample, sizeof out_sample);
        long wrote_err = captured(fileno(cap_err), err_sample, sizeof err_sample);
        uint64_t size = process_bytes();
        if (out.failed) {
            v.result = TC_FAIL;
            snprintf(v.detail, sizeof v.detail, "the test harness ran out of memory");
        } else if (wrote_out || wrote_err) {
            v.result = TC_FAIL;
            snprintf(v.detail, sizeof v.detail,
                     "call %d (%.100s): wrote %ld bytes to %s ('%.60s'); a plugin logs through "
                     "the host, never to the host's streams",
                     call + 1, c->name, wrote_out ? wrote_out : wrote_err,
                     wrote_out ? "stdout" : "stderr", wrote_out ? out_sample : err_sample);
        } else if (input_hash(one.in, c) != before) {
            v.result = TC_FAIL;
            snprintf(v.detail, sizeof v.detail,
                     "call %d (%.100s): changed its input, which belongs to the caller and is "
                     "read-only",
                     call + 1, c->name);
        } else if (count.live != live) {
            v.result = TC_FAIL;
            snprintf(v.detail, sizeof v.detail,
                     "call %d (%.100s): %lld allocations from the host allocator still live after "
                     "the call",
                     call + 1, c->name, (long long)(count.live - live));
        } else if (baseline && size > baseline + LEAK_ALLOWANCE) {
            v.result = TC_FAIL;
            snprintf(v.detail, sizeof v.detail,
                     "call %d (%.100s): the process grew by %llu MiB since call %zu and keeps "
                     "growing: memory is not returned",
                     call + 1, c->name, (unsigned long long)((size - baseline) >> 20), n_claimed);
        } else {
            cursor res = {out.p, out.len, false};
            tc_verdict cv;
            memset(&cv, 0, sizeof cv);
            grade_answer(job->ref, c, one.in, one.r, &res, &cv);
            if (!tc_result_ok(cv.result)) {
                v.result = cv.result == TC_CRASH ? TC_FAIL : cv.result;
                v.error = cv.error;
                v.bound = cv.bound;
                snprintf(v.detail, sizeof v.detail, "call %d (%.100s) of %d in one process: %.300s",
                         call + 1, c->name, n_calls, cv.detail);
            }
        }
        free(out.p);
        /* The first round warms caches and pools up; growth is counted
         * from its end. */
        if ((size_t)call + 1 == n_claimed)
            baseline = process_bytes();
    }
    if (!n_claimed) {
        v.result = TC_NOT_SUPPORTED;
        snprintf(v.detail, sizeof v.detail, "no capability record covers a long-lived case");
    } else if (v.result == TC_PASS) {
        snprintf(v.detail, sizeof v.detail,
                 "%d calls in one process over %zu cases: same answers, input untouched, nothing "
                 "on stdout/stderr, host allocations returned; %.3f ms per call, %.3f ms at most",
                 calls, n_claimed, 1e3 * total / calls, 1e3 * worst);
    }
    put_record(fd, REC_RESULT, &v, (uint32_t)sizeof v);
    log_fd = 2;
    child_stop(fd, ctx, &b);
    put_record(fd, REC_END, NULL, 0);
    fclose(cap_out);
    fclose(cap_err);
    close(saved_out);
    close(saved_err);
    return 0;
}

/* ---- the parent's side ---- */

/* What an abnormal end of a child means. True if it was abnormal. */
static bool abnormal_end(const tc_child *ch, const answer *a, double timeout_s, tc_verdict *v)
{
    if (ch->end == TC_CHILD_TIMED_OUT) {
        v->result = TC_TIMEOUT;
        snprintf(v->detail, sizeof v->detail, "no answer within %gs (in: %s); killed", timeout_s,
                 a->stage);
        return true;
    }
    if (ch->end == TC_CHILD_SIGNALED) {
        v->result = TC_CRASH;
        snprintf(v->detail, sizeof v->detail, "killed by signal %d (%s) in: %s", ch->code,
                 strsignal(ch->code), a->stage);
        return true;
    }
    if (a->garbled || !a->ended) {
        v->result = TC_CRASH;
        snprintf(v->detail, sizeof v->detail,
                 "the process ended with exit status %d in: %s (the plugin exited, or a "
                 "sanitizer caught a crash)",
                 ch->code, a->stage);
        return true;
    }
    return false;
}

void tc_plugin_identify(tc_plugin *p, const char *path, double timeout_s, bool verbose)
{
    memset(p, 0, sizeof *p);
    char real[PATH_MAX];
    snprintf(p->path, sizeof p->path, "%s", realpath(path, real) ? real : path);
    snprintf(p->name, sizeof p->name, "?");
    child_job job = {p->path, verbose, NULL, NULL, NULL, NULL, NULL};
    tc_child ch;
    char err[256];
    if (!tc_isolate(child_identify, &job, timeout_s, &ch, err, sizeof err)) {
        p->load.result = TC_FAIL;
        snprintf(p->load.detail, sizeof p->load.detail, "cannot run the plugin: %s", err);
        return;
    }
    answer a;
    parse_answer(&ch, &a);
    p->load.seconds = ch.seconds;
    if (abnormal_end(&ch, &a, timeout_s, &p->load)) {
        free(ch.data);
        return;
    }
    if (a.load_failed || !a.has_identity) {
        p->load.result = TC_FAIL;
        snprintf(p->load.detail, sizeof p->load.detail, "%.500s",
                 a.load_failed ? a.load_reason : "no identity received");
        free(ch.data);
        return;
    }
    cursor c = a.identity;
    get_str(&c, p->name, sizeof p->name);
    get_str(&c, p->version, sizeof p->version);
    get_str(&c, p->vendor, sizeof p->vendor);
    get_str(&c, p->description, sizeof p->description);
    p->abi_version = get_u32(&c);
    p->probe_status = (int)get_u32(&c);
    get_str(&c, p->probe_message, sizeof p->probe_message);
    uint32_t ops = get_u32(&c);
    for (int op = 0; op < TOPOML_OP_COUNT; op++)
        p->has_op[op] = (ops >> op) & 1u;
    uint32_t n = get_u32(&c);
    if (n <= 4096) {
        p->caps = calloc(n ? n : 1, sizeof *p->caps);
        p->devices = calloc(n ? n : 1, sizeof *p->devices);
        p->schedules = calloc(n ? n : 1, sizeof *p->schedules);
    }
    for (uint32_t i = 0; p->caps && p->devices && p->schedules && i < n && !c.bad; i++) {
        get_str(&c, p->devices[i], sizeof p->devices[i]);
        get_str(&c, p->schedules[i], sizeof p->schedules[i]);
        get(&c, &p->caps[i], sizeof p->caps[i]);
        p->caps[i].device = p->devices[i];
        p->caps[i].schedule = p->schedules[i][0] ? p->schedules[i] : NULL;
        p->n_caps = i + 1;
    }
    free(ch.data);
    if (c.bad || p->n_caps != n) {
        p->load.result = TC_FAIL;
        snprintf(p->load.detail, sizeof p->load.detail, "malformed identity from the child");
        return;
    }
    p->loaded = true;
}

void tc_plugin_free(tc_plugin *p)
{
    free(p->caps);
    free(p->devices);
    free(p->schedules);
    free(p->verdicts);
    p->caps = NULL;
    p->devices = NULL;
    p->schedules = NULL;
    p->verdicts = NULL;
}

/* Does the plugin claim this case? NULL if it does, else why not. */
static const char *unclaimed(const tc_plugin *p, const tc_case *c, const tc_input *in)
{
    topoml_input_v1 v;
    tc_input_view(in, c, &v);
    if (c->op == TOPOML_OP_IMAGE) {
        /* Images take diagrams, not an input; the dtype says the precision
         * the plugin computes in. */
        for (uint32_t i = 0; i < p->n_caps; i++)
            if (p->caps[i].op == TOPOML_OP_IMAGE && (p->caps[i].dtypes & (1u << c->dtype)))
                return NULL;
        return "no capability record covers it";
    }
    if (!tm_caps_cover(p->caps, p->n_caps, c->op, &v, c->op == TOPOML_OP_RIPS ? c->max_dim : 0,
                       c->op == TOPOML_OP_RIPS ? c->modulus : 0))
        return "no capability record covers it";
    return NULL;
}

/* Decode the op's answer and compare it with the reference. */
static void grade_answer(topoml_context *ref, const tc_case *c, const tc_input *in,
                         const tc_reference *r, cursor *res, tc_verdict *v)
{
    int rc = (int)get_u32(res);
    char msg[1024];
    get_str(res, msg, sizeof msg);
    if (res->bad) {
        v->result = TC_CRASH;
        snprintf(v->detail, sizeof v->detail, "malformed answer from the child");
        return;
    }
    if (rc == TOPOML_E_UNSUPPORTED) {
        v->result = TC_FAIL;
        snprintf(v->detail, sizeof v->detail,
                 "claims %s for these parameters but answered 'not supported' (it lied): %.300s",
                 tm_op_name(c->op), msg);
        return;
    }
    if (rc != TOPOML_OK) {
        v->result = TC_FAIL;
        snprintf(v->detail, sizeof v->detail, "returned %d (%s): %.300s", rc, topoml_strerror(rc),
                 msg);
        return;
    }
    tc_tolerance tol = tc_distance_tolerance(c, in->dim);
    if (c->op == TOPOML_OP_DISTANCES || c->op == TOPOML_OP_IMAGE) {
        uint32_t guard = get_u32(res);
        uint64_t count = get_u64(res);
        size_t elem = c->op == TOPOML_OP_IMAGE || c->dtype == TOPOML_F64 ? 8 : 4;
        uint64_t want = c->op == TOPOML_OP_IMAGE ? r->image_size : r->n_pairs;
        if (res->bad || count != want || res->left != count * elem) {
            v->result = TC_CRASH;
            snprintf(v->detail, sizeof v->detail, "malformed answer from the child");
        } else if (!guard) {
            v->result = TC_FAIL;
            snprintf(v->detail, sizeof v->detail, "wrote past the end of its output array");
        } else if (c->op == TOPOML_OP_DISTANCES) {
            /* The payload is not aligned for the element type: copy it. */
            void *got = malloc(count > 0 ? count * elem : 1);
            if (!got) {
                v->result = TC_FAIL;
                snprintf(v->detail, sizeof v->detail, "the test harness ran out of memory");
                return;
            }
            if (count)
                memcpy(got, res->p, count * elem);
            tc_compare_distances(r->dist, got, c->dtype, count, tol, v);
            free(got);
        } else {
            double *got = malloc(count ? count * 8 : 1);
            if (!got) {
                v->result = TC_FAIL;
                snprintf(v->detail, sizeof v->detail, "the test harness ran out of memory");
                return;
            }
            if (count)
                memcpy(got, res->p, count * 8);
            topoml_image_params_v1 ip;
            tc_image_params(c, r, &ip);
            uint64_t n_pairs = 0;
            for (uint32_t d = 0; d <= c->max_dim; d++)
                n_pairs += tc_diagram_pairs(r->bars, r->n_bars, d, NULL);
            tc_compare_images(r->image, got, count, tc_image_tolerance(c, &ip, n_pairs), v);
            free(got);
        }
        return;
    }
    if (c->op == TOPOML_OP_EDGES) {
        uint64_t n = get_u64(res);
        if (n == UINT64_MAX) {
            v->result = TC_FAIL;
            snprintf(v->detail, sizeof v->detail, "returned edges but no array");
            return;
        }
        if (res->bad || n > res->left / sizeof(topoml_edge) ||
            res->left != n * sizeof(topoml_edge)) {
            v->result = TC_CRASH;
            snprintf(v->detail, sizeof v->detail, "malformed answer from the child");
            return;
        }
        topoml_edge *e = malloc(n ? n * sizeof *e : 1);
        if (!e) {
            v->result = TC_FAIL;
            snprintf(v->detail, sizeof v->detail, "the test harness ran out of memory");
            return;
        }
        if (n)
            memcpy(e, res->p, n * sizeof *e);
        tc_compare_edges(r->dist, in->n, r->edges, r->n_edges, e, n, c->threshold, tol, c->dtype,
                         v);
        free(e);
        return;
    }
    uint32_t max_dim = get_u32(res), complete = get_u32(res);
    uint64_t n = get_u64(res);
    uint32_t want_dim = c->op == TOPOML_OP_H0 ? 0 : c->max_dim;
    if (n == UINT64_MAX) {
        v->result = TC_FAIL;
        snprintf(v->detail, sizeof v->detail, "returned intervals but no array");
        return;
    }
    if (res->bad || n > res->left / sizeof(topoml_interval) ||
        res->left < n * sizeof(topoml_interval) + sizeof(uint32_t)) {
        v->result = TC_CRASH;
        snprintf(v->detail, sizeof v->detail, "malformed answer from the child");
        return;
    }
    if (max_dim != want_dim || complete != 1) {
        v->result = TC_FAIL;
        snprintf(v->detail, sizeof v->detail,
                 "barcode says max_dim %u, complete %u; asked for dimensions 0..%u, complete",
                 max_dim, complete, want_dim);
        return;
    }
    topoml_interval *iv = malloc(n ? n * sizeof *iv : 1);
    if (!iv) {
        v->result = TC_FAIL;
        snprintf(v->detail, sizeof v->detail, "the test harness ran out of memory");
        return;
    }
    get(res, iv, n * sizeof *iv);
    const uint32_t gflag = get_u32(res);
    topoml_generator *gens = NULL;
    if (res->bad || gflag > 2 || res->left < (gflag == 1 ? n * sizeof *gens : 0) + 4) {
        free(iv);
        v->result = TC_CRASH;
        snprintf(v->detail, sizeof v->detail, "malformed answer from the child");
        return;
    }
    if (gflag == 2) {
        free(iv);
        v->result = TC_FAIL;
        snprintf(v->detail, sizeof v->detail,
                 "claims generators (TOPOML_CAP_GENERATORS) but returned none");
        return;
    }
    if (gflag == 1) {
        gens = malloc(n ? n * sizeof *gens : 1);
        if (!gens) {
            free(iv);
            v->result = TC_FAIL;
            snprintf(v->detail, sizeof v->detail, "the test harness ran out of memory");
            return;
        }
        get(res, gens, n * sizeof *gens);
    }
    /* the cocycles: as the generators, then the core's run-time check */
    const uint32_t cflag = get_u32(res);
    uint64_t words = cflag == 1 ? get_u64(res) : 0;
    uint64_t *coff = NULL;
    uint32_t *cw = NULL;
    if (res->bad || cflag > 2 || words > res->left / sizeof *cw ||
        res->left != (cflag == 1 ? (n + 1) * sizeof *coff + words * sizeof *cw : 0)) {
        free(gens);
        free(iv);
        v->result = TC_CRASH;
        snprintf(v->detail, sizeof v->detail, "malformed answer from the child");
        return;
    }
    if (cflag == 2) {
        free(gens);
        free(iv);
        v->result = TC_FAIL;
        snprintf(v->detail, sizeof v->detail,
                 "claims cocycles (TOPOML_CAP_COCYCLES) but returned none");
        return;
    }
    if (cflag == 1) {
        coff = malloc((n + 1) * sizeof *coff);
        cw = malloc(words ? words * sizeof *cw : 1);
        if (!coff || !cw) {
            free(coff);
            free(cw);
            free(gens);
            free(iv);
            v->result = TC_FAIL;
            snprintf(v->detail, sizeof v->detail, "the test harness ran out of memory");
            return;
        }
        get(res, coff, (n + 1) * sizeof *coff);
        get(res, cw, words * sizeof *cw);
    }
    tc_compare_barcodes(ref, r->bars, r->n_bars, iv, n, want_dim, v);
    if (gens && tc_result_ok(v->result))
        tc_compare_generators(r, in, iv, gens, n, v);
    if (coff && tc_result_ok(v->result)) {
        topoml_barcode_v1 bc;
        memset(&bc, 0, sizeof bc);
        bc.struct_size = sizeof bc;
        bc.n_intervals = n;
        bc.intervals = iv;
        bc.cocycle_offsets = coff;
        bc.cocycles = cw;
        topoml_input_v1 view;
        tc_input_view(in, c, &view);
        char why[320];
        if (coff[n] != words || tm_cocycles_wrong(ref, &view, c->modulus, &bc, why, sizeof why)) {
            v->result = TC_FAIL;
            snprintf(v->detail, sizeof v->detail, "cocycles: %s",
                     coff[n] != words ? "the offsets do not end at the words given" : why);
        }
    }
    free(coff);
    free(cw);
    free(gens);
    free(iv);
}

/* The verdicts a case gets before any of the plugin's code runs for it
 * (not loaded, hardware absent, not claimed, no op): true with *v set, or
 * false with *v cleared when the case is to be run. One rule for the
 * process-per-case and the session runners. */
static bool settled_before_running(const tc_plugin *p, const tc_case *c, const tc_input *in,
                                   tc_verdict *v)
{
    memset(v, 0, sizeof *v);
    if (!p->loaded) {
        *v = p->load;
        return true;
    }
    if (p->probe_status != TOPOML_OK) {
        v->result = TC_NOT_SUPPORTED;
        snprintf(v->detail, sizeof v->detail, "hardware absent: %.400s", p->probe_message);
        return true;
    }
    const char *why = unclaimed(p, c, in);
    if (why) {
        v->result = TC_NOT_SUPPORTED;
        snprintf(v->detail, sizeof v->detail, "%s", why);
        return true;
    }
    if (!p->has_op[c->op]) {
        v->result = TC_FAIL;
        snprintf(v->detail, sizeof v->detail,
                 "claims %s in its capability records but its vtable has no %s op",
                 tm_op_name(c->op), tm_op_name(c->op));
        return true;
    }
    return false;
}

void tc_plugin_run(const tc_plugin *p, topoml_context *ref, const tc_case *c, const tc_input *in,
                   const tc_reference *r, double timeout_s, bool verbose, tc_verdict *v)
{
    if (settled_before_running(p, c, in, v))
        return;
    child_job job = {p->path, verbose, NULL, c, in, r, NULL};
    tc_child ch;
    char err[256];
    if (!tc_isolate(child_run, &job, timeout_s, &ch, err, sizeof err)) {
        v->result = TC_FAIL;
        snprintf(v->detail, sizeof v->detail, "cannot run the plugin: %s", err);
        return;
    }
    answer a;
    parse_answer(&ch, &a);
    v->seconds = ch.seconds;
    if (!abnormal_end(&ch, &a, timeout_s, v)) {
        if (a.load_failed) {
            v->result = TC_FAIL;
            snprintf(v->detail, sizeof v->detail, "%.500s", a.load_reason);
        } else if (!a.has_result) {
            v->result = TC_CRASH;
            snprintf(v->detail, sizeof v->detail, "no answer from the child");
        } else {
            cursor res = a.result;
            grade_answer(ref, c, in, r, &res, v);
        }
    }
    v->seconds = ch.seconds;
    free(ch.data);
}

/* ---- the session: one process, case after case ---- */

typedef struct session_job {
    const char *path;
    bool verbose;
    topoml_context *ref; /* the parent's reference context, as forked */
    const tc_suite *suite;
    int cmd; /* read end: one `const tc_case *` per case (the same address
                space: a fork), EOF to stop */
} session_job;

static bool read_exact(int fd, void *p, size_t n)
{
    char *c = p;
    while (n > 0) {
        ssize_t r = read(fd, c, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return false;
        c += r;
        n -= (size_t)r;
    }
    return true;
}

/* The child: start the plugin (its end record says "ready"), then for each
 * case make its input (and, for the image op, the reference it draws its
 * pairs from), run the op as run_op does for one case, and answer with the
 * records tc_plugin_run reads, closed by an end record. */
static int child_session(int fd, void *arg)
{
    const session_job *job = arg;
    child_job start = {job->path, job->verbose, NULL, NULL, NULL, NULL, job->suite->data_dir};
    topoml_context *ctx = NULL;
    tm_backend b;
    if (!child_start(fd, &start, &ctx, &b)) {
        put_record(fd, REC_END, NULL, 0);
        topoml_context_free(ctx);
        return 0;
    }
    put_record(fd, REC_END, NULL, 0);
    const tc_case *c;
    while (read_exact(job->cmd, &c, sizeof c)) {
        tc_input in;
        tc_reference r;
        char err[512];
        buf out = {0};
        bool have_in = tc_input_make(job->ref, job->suite, c, &in, err, sizeof err);
        bool have_r = have_in && c->op == TOPOML_OP_IMAGE &&
                      tc_reference_make(job->ref, c, &in, &r, err, sizeof err);
        if (!have_in || (c->op == TOPOML_OP_IMAGE && !have_r)) {
            char msg[600];
            snprintf(msg, sizeof msg, "the test harness could not make the case: %.500s", err);
            put_u32(&out, (uint32_t)TOPOML_E_INTERNAL);
            put_str(&out, msg);
        } else {
            child_job one = {job->path, job->verbose, NULL, c, &in, have_r ? &r : NULL, NULL};
            run_op(fd, &one, ctx, &b, &out);
        }
        if (out.failed) {
            free(out.p);
            out = (buf){0};
            put_u32(&out, (uint32_t)TOPOML_E_NOMEM);
            put_str(&out, "the test harness ran out of memory sending the answer");
        }
        put_record(fd, REC_RESULT, out.p, (uint32_t)out.len);
        put_record(fd, REC_END, NULL, 0);
        free(out.p);
        if (have_r)
            tc_reference_free(job->ref, &r);
        if (have_in)
            tc_input_free(&in);
    }
    child_stop(fd, ctx, &b);
    return 0;
}

/* Read records from the session's pipe into `ch` until one end record,
 * until `deadline`. 1: the end came; 0: the deadline passed; -1: the pipe
 * closed first (the child ended). */
static int read_to_end(int fd, double deadline, tc_child *ch, size_t *cap)
{
    size_t at = 0; /* the next record starts here */
    for (;;) {
        /* Whole records so far: stop at an end record. */
        while (ch->len - at >= 5) {
            uint32_t len;
            memcpy(&len, ch->data + at + 1, sizeof len);
            if (ch->len - at - 5 < len)
                break;
            char tag = (char)ch->data[at];
            at += 5 + (size_t)len;
            if (tag == REC_END)
                return 1;
        }
        double left = deadline - now_seconds();
        if (left <= 0)
            return 0;
        struct pollfd pf = {fd, POLLIN, 0};
        int pr = poll(&pf, 1, (int)(left * 1000) + 1);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr <= 0)
            continue;
        if (ch->len == *cap) {
            size_t grown = *cap ? *cap * 2 : 65536;
            unsigned char *g = realloc(ch->data, grown);
            if (!g)
                return -1;
            ch->data = g;
            *cap = grown;
        }
        ssize_t got = read(fd, ch->data + ch->len, *cap - ch->len);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return -1;
        ch->len += (size_t)got;
    }
}

/* End the session: no more cases (EOF), a moment to stop the plugin, then
 * its process group goes. `how` gets how it ended (may be NULL). */
static void session_end(tc_plugin *p, double grace_s, tc_child *how)
{
    tc_child ignored;
    if (!p->session_pid)
        return;
    close(p->session_cmd);
    close(p->session_ans);
    memset(how ? how : &ignored, 0, sizeof ignored);
    tc_end_child(p->session_pid, grace_s, how ? how : &ignored);
    p->session_pid = 0;
}

void tc_plugin_end_session(tc_plugin *p)
{
    session_end(p, 2.0, NULL);
}

/* Start the plugin's session; false with the verdict set when it could not
 * start the plugin. */
static bool session_start(tc_plugin *p, topoml_context *ref, const tc_suite *suite,
                          double timeout_s, bool verbose, tc_verdict *v)
{
    int cmd[2];
    if (pipe(cmd) != 0) {
        v->result = TC_FAIL;
        snprintf(v->detail, sizeof v->detail, "cannot run the plugin: pipe: %s",
                 strerror(errno));
        return false;
    }
    session_job job = {p->path, verbose, ref, suite, cmd[0]};
    char err[256];
    pid_t pid;
    int ans;
    if (!tc_spawn(child_session, &job, cmd[1], &pid, &ans, err, sizeof err)) {
        close(cmd[0]);
        close(cmd[1]);
        v->result = TC_FAIL;
        snprintf(v->detail, sizeof v->detail, "cannot run the plugin: %s", err);
        return false;
    }
    close(cmd[0]);
    p->session_pid = pid;
    p->session_cmd = cmd[1];
    p->session_ans = ans;
    p->session_starts++;
    /* Loaded, created and probed: its first end record. */
    tc_child ch;
    memset(&ch, 0, sizeof ch);
    size_t cap = 0;
    int got = read_to_end(ans, now_seconds() + timeout_s, &ch, &cap);
    answer a;
    parse_answer(&ch, &a);
    if (got == 1 && !a.load_failed) {
        free(ch.data);
        return true;
    }
    tc_child how;
    session_end(p, got == 0 ? 0.0 : 2.0, &how);
    how.data = ch.data;
    how.len = ch.len;
    if (got == 0)
        how.end = TC_CHILD_TIMED_OUT;
    a.ended = got == 1;
    if (!abnormal_end(&how, &a, timeout_s, v)) {
        v->result = TC_FAIL;
        snprintf(v->detail, sizeof v->detail, "%.500s",
                 a.load_failed ? a.load_reason : "the plugin did not start");
    }
    free(ch.data);
    return false;
}

void tc_plugin_run_session(tc_plugin *p, topoml_context *ref, const tc_suite *suite,
                           const tc_case *c, const tc_input *in, const tc_reference *r,
                           double timeout_s, bool verbose, tc_verdict *v)
{
    if (settled_before_running(p, c, in, v))
        return;
    const double start = now_seconds();
    if (!p->session_pid && !session_start(p, ref, suite, timeout_s, verbose, v)) {
        v->seconds = now_seconds() - start;
        return;
    }
    tc_child ch;
    memset(&ch, 0, sizeof ch);
    size_t cap = 0;
    const double sent = now_seconds();
    int got = -1;
    if (write(p->session_cmd, &c, sizeof c) == (ssize_t)sizeof c)
        got = read_to_end(p->session_ans, sent + timeout_s, &ch, &cap);
    answer a;
    parse_answer(&ch, &a);
    if (got == 1) {
        ch.end = TC_CHILD_EXITED;
        ch.seconds = now_seconds() - sent;
    } else {
        /* It died, exited or hangs in this case: ended, graded as a child
         * of its own would be, and the next case starts a new one. */
        tc_child how;
        session_end(p, got == 0 ? 0.0 : 2.0, &how);
        ch.end = got == 0 ? TC_CHILD_TIMED_OUT : how.end;
        ch.code = how.code;
        ch.seconds = now_seconds() - sent;
    }
    v->seconds = ch.seconds;
    if (!abnormal_end(&ch, &a, timeout_s, v)) {
        if (!a.has_result) {
            v->result = TC_CRASH;
            snprintf(v->detail, sizeof v->detail, "no answer from the plugin's process");
        } else {
            cursor res = a.result;
            grade_answer(ref, c, in, r, &res, v);
        }
    }
    v->seconds = ch.seconds;
    free(ch.data);
}

void tc_plugin_soak(const tc_plugin *p, topoml_context *ref, const tc_case *const *cases,
                    const tc_input *inputs, const tc_reference *refs, size_t n_cases,
                    double timeout_s, bool verbose, tc_verdict *v)
{
    memset(v, 0, sizeof *v);
    if (!p->loaded) {
        *v = p->load;
        return;
    }
    if (p->probe_status != TOPOML_OK) {
        v->result = TC_NOT_SUPPORTED;
        snprintf(v->detail, sizeof v->detail, "hardware absent: %.400s", p->probe_message);
        return;
    }
    soak_job job = {{p->path, verbose, NULL, NULL, NULL, NULL, NULL}, ref, p, cases, inputs, refs,
                    n_cases};
    tc_child ch;
    char err[256];
    if (!tc_isolate(child_soak, &job, timeout_s, &ch, err, sizeof err)) {
        v->result = TC_FAIL;
        snprintf(v->detail, sizeof v->detail, "cannot run the plugin: %s", err);
        return;
    }
    answer a;
    parse_answer(&ch, &a);
    if (!abnormal_end(&ch, &a, timeout_s, v)) {
        if (a.load_failed) {
            v->result = TC_FAIL;
            snprintf(v->detail, sizeof v->detail, "%.500s", a.load_reason);
        } else if (!a.has_result || a.result.left != sizeof *v) {
            v->result = TC_CRASH;
            snprintf(v->detail, sizeof v->detail, "no answer from the long-lived process");
        } else {
            memcpy(v, a.result.p, sizeof *v);
            v->detail[sizeof v->detail - 1] = '\0';
        }
    }
    v->seconds = ch.seconds;
    free(ch.data);
}
