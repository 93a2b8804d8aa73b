/*
 * isolate_ops.c — `isolation: process`: a plugin's ops run in a helper
 * process (topoml-plugin-host --serve), so that a crash, an exit, a write to
 * stdout or a call that never returns ends as an error for that call, not as
 * a dead or corrupted host.
 *
 * The host never loads such a plugin. Its registry entry gets a proxy
 * vtable (below) whose ops send the call to the helper: the inputs in a
 * sealed memfd (the helper maps it read-only, and the seals keep anyone from
 * changing it), the parameters in a fixed-size request over a SEQPACKET
 * socket; the helper runs the plugin's op and answers with a status, a
 * message and, on success, a memfd holding the result, which the host
 * checks for size and copies into memory of its own allocator. The
 * helper's stdout is a pipe the host reads after each call: a plugin that
 * writes there has misbehaved. Each call has a deadline from its size
 * (call_timeout; at most config `isolation_timeout`). The plugin's progress
 * and log lines come over the socket while the op runs and reach the
 * host's callbacks; a cancel from the host goes back to the plugin's
 * progress call (and a helper that does not stop is killed).
 *
 * The helper enters its sandbox (sandbox.h) before it loads the plugin, as
 * the plugin's capability records and the call's limits ask (sandbox_arg),
 * and holds one end of a lifeline pipe: when the host process is gone, the
 * helper ends too.
 *
 * When the helper dies, exits, times out or writes to stdout, the call is
 * run again on the built-in scalar reference (the caller gets the
 * reference's answer), a warning is logged, and the plugin is rejected for
 * the rest of the context with the reason. A status the plugin returns on
 * its own (an error with a message) is passed on as it would be in-process.
 *
 * Which plugins: `isolation: auto` (default) isolates every plugin except
 * those shipped with topoml and found in topoml's own plugin folder;
 * `process` isolates every plugin; `none` runs every enabled plugin in the
 * host process.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/api.h"
#include "gate/gate.h"
#include "gate/gate_internal.h"
#include "gate/sandbox.h"

/* What crosses the socket. Both ends are the same build of topoml. */
typedef struct iso_request {
    uint32_t op;
    uint32_t kind, dtype, metric;
    uint64_t n, dim, n_edges;
    uint64_t data_offset, edges_offset;     /* in the input memfd */
    uint64_t offsets_offset, pairs_offset;  /* image */
    uint64_t n_diagrams;
    uint64_t out_bytes; /* distances, image: the result's exact size */
    double threshold;
    topoml_rips_params_v1 rips;
    topoml_image_params_v1 image;
    uint64_t max_memory;
    int32_t device;
    uint32_t n_threads; /* the caller's call->n_threads: the helper's own config does not know it */
} iso_request;

/* iso_request.op of the message that cancels the call in progress. */
#define ISO_CANCEL 0xcacu

/* iso_response.kind: the answer to a request, or a message sent while the
 * op runs (progress: stage in `error`, done in `count`, `total`; a log line:
 * `level`, the text in `error`). */
enum { ISO_ANSWER = 0, ISO_PROGRESS = 1, ISO_LOG = 2 };

typedef struct iso_response {
    int32_t status;
    uint32_t max_dim, complete;
    uint32_t generators; /* rips: `count` generators follow the intervals */
    uint64_t count;      /* edges or intervals */
    uint32_t kind;       /* ISO_ANSWER, ISO_PROGRESS, ISO_LOG */
    int32_t level;       /* ISO_LOG */
    uint64_t total;      /* ISO_PROGRESS */
    char error[512];
} iso_response;

/* Log lines of the plugin passed on per call; the rest are counted. */
#define ISO_MAX_LOG_LINES 100

typedef struct tm_isolated {
    topoml_context *ctx;
    uint32_t index; /* in ctx->backends (the array does not move after discovery) */
    tm_child child;
    int sock;       /* -1: no helper running */
    int out;        /* the helper's stdout */
    int lifeline;   /* write end of the pipe whose closing ends the helper */
    bool held;      /* tm_sandbox_host_hold was called for this helper */
    uint64_t max_memory; /* the limits the running helper was started with */
    uint32_t n_threads;
    unsigned log_lines, log_dropped; /* in the call in progress */
} tm_isolated;

static const char *shipped[] = {"scalar",     "cuda",    "asm-avx512", "triton-bridge",
                                "cpp-compat", "threads", NULL};

bool tm_is_shipped_name(const char *name)
{
    for (int i = 0; name && shipped[i]; i++)
        if (strcmp(name, shipped[i]) == 0)
            return true;
    return false;
}

bool tm_isolation_wanted(const topoml_context *ctx, const tm_backend *b)
{
    if (!b->path || ctx->config.isolation == TM_ISOLATION_NONE)
        return false;
    if (ctx->config.isolation == TM_ISOLATION_PROCESS)
        return true;
    /* (A backend rejected before it told its name is no shipped one.) */
    if (!b->in_default_folder || !b->name)
        return true;
    for (int i = 0; shipped[i]; i++)
        if (strcmp(b->name, shipped[i]) == 0)
            return false;
    return true;
}

/* ---- descriptors over the socket ---- */

static int send_msg(int sock, const void *msg, size_t len, int fd)
{
    struct iovec iov = {(void *)msg, len};
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } u;
    struct msghdr mh = {0};
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    if (fd >= 0) {
        memset(&u, 0, sizeof u);
        mh.msg_control = u.buf;
        mh.msg_controllen = sizeof u.buf;
        struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof fd);
    }
    for (;;) {
        ssize_t w = sendmsg(sock, &mh, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        return w == (ssize_t)len ? 0 : -1;
    }
}

/* One message of exactly `len` bytes and at most one descriptor (-1 if
 * none). 0, or -1 (closed, short, error). */
static int recv_msg(int sock, void *msg, size_t len, int *fd)
{
    struct iovec iov = {msg, len};
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } u;
    struct msghdr mh = {0};
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    mh.msg_control = u.buf;
    mh.msg_controllen = sizeof u.buf;
    *fd = -1;
    ssize_t r;
    while ((r = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
        ;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); r >= 0 && c; c = CMSG_NXTHDR(&mh, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
            c->cmsg_len == CMSG_LEN(sizeof(int)))
            memcpy(fd, CMSG_DATA(c), sizeof *fd);
    if (r != (ssize_t)len || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
        if (*fd >= 0)
            close(*fd);
        *fd = -1;
        return -1;
    }
    return 0;
}

/* A memfd holding `len` bytes at `at` within `parts`, sealed. */
typedef struct part {
    const void *p;
    uint64_t len;
} part;

static int sealed_memfd(const part *parts, int n, uint64_t *offsets)
{
    int fd = memfd_create("topoml-input", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0)
        return -1;
    uint64_t at = 0;
    for (int k = 0; k < n; k++) {
        at = (at + 15) & ~(uint64_t)15; /* every array aligned for its type */
        offsets[k] = at;
        const char *p = parts[k].p;
        uint64_t left = parts[k].len, done = 0;
        while (left) {
            ssize_t w = pwrite(fd, p + done, left, (off_t)(at + done));
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0) {
                close(fd);
                return -1;
            }
            done += (uint64_t)w;
            left -= (uint64_t)w;
        }
        at += parts[k].len;
    }
    if (ftruncate(fd, (off_t)(at ? at : 1)) != 0 ||
        fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* ---- the host's side ---- */

static void close_ends(tm_isolated *iso)
{
    if (iso->sock >= 0)
        close(iso->sock);
    iso->sock = -1;
    if (iso->out >= 0)
        close(iso->out);
    iso->out = -1;
    if (iso->lifeline >= 0)
        close(iso->lifeline);
    iso->lifeline = -1;
}

static void reap(tm_isolated *iso, int *status)
{
    char *report = NULL;
    size_t len;
    bool late = false;
    *status = -1;
    if (iso->child.pid > 0 &&
        tm_child_finish(iso->ctx, &iso->child, tm_now() + 5.0, 64, &report, &len, status,
                        &late) == TOPOML_OK)
        tm_free(iso->ctx, report);
    iso->child.pid = 0;
    if (iso->held)
        tm_sandbox_host_release();
    iso->held = false;
}

static void stop_helper(tm_isolated *iso)
{
    close_ends(iso);
    if (iso->child.pid > 0)
        kill(-iso->child.pid, SIGKILL);
    int status;
    reap(iso, &status);
}

/* End the helper after a failure and say what became of it. */
static void end_helper(tm_isolated *iso, bool timed_out, double timeout_s, char *what,
                       size_t size)
{
    close_ends(iso);
    if (timed_out && iso->child.pid > 0)
        kill(-iso->child.pid, SIGKILL);
    int status;
    reap(iso, &status);
    tm_describe_status(status, timed_out, timeout_s, what, size);
}

static int report_progress(tm_isolated *iso, const topoml_call_v1 *call, const char *stage,
                           uint64_t done, uint64_t total)
{
    topoml_context *ctx = iso->ctx;
    if (call && call->progress)
        return call->progress(call->host_data, stage, done, total);
    return ctx->progress_fn ? ctx->progress_fn(ctx->progress_user, stage, done, total) : 0;
}

/* A log line of the plugin, from its process: passed on under the plugin's
 * name, control characters replaced, at most ISO_MAX_LOG_LINES a call. */
static void forward_log(tm_isolated *iso, const iso_response *m)
{
    const tm_backend *b = &iso->ctx->backends[iso->index];
    if (iso->log_lines >= ISO_MAX_LOG_LINES) {
        iso->log_dropped++;
        return;
    }
    iso->log_lines++;
    char text[sizeof m->error];
    size_t k = 0;
    for (; k + 1 < sizeof text && m->error[k]; k++)
        text[k] = (unsigned char)m->error[k] < 0x20 || m->error[k] == 0x7f ? ' ' : m->error[k];
    text[k] = '\0';
    int level = m->level < TOPOML_LOG_ERROR ? TOPOML_LOG_ERROR
                : m->level > TOPOML_LOG_DEBUG ? TOPOML_LOG_DEBUG
                                              : m->level;
    tm_log(iso->ctx, level, "backend '%s' (its process): %s", b->name, text);
}

/* Wait for the helper's answer until `deadline`, passing on its progress and
 * log lines, and the host's cancel: a progress callback that says stop
 * sends ISO_CANCEL, and the plugin has 2 s more to return
 * TOPOML_E_CANCELLED (with what its contract allows). 0: the answer is in
 * *rs (and *fd); 1 timed out; 2 cancelled without an answer; -1 closed. */
static int next_answer(tm_isolated *iso, const topoml_call_v1 *call, double deadline,
                       iso_response *rs, int *fd)
{
    bool cancel_sent = false;
    double quiet_since = tm_now() - 1.0;
    *fd = -1;
    for (;;) {
        double now = tm_now(), left = deadline - now;
        if (left <= 0)
            return cancel_sent ? 2 : 1;
        struct pollfd pf = {iso->sock, POLLIN, 0};
        int r = poll(&pf, 1, left > 0.1 ? 100 : (int)(left * 1000) + 1);
        if (r < 0 && errno != EINTR)
            return -1;
        bool stop = false;
        if (r > 0) {
            if (!(pf.revents & POLLIN))
                return -1;
            if (recv_msg(iso->sock, rs, sizeof *rs, fd) != 0)
                return -1;
            rs->error[sizeof rs->error - 1] = '\0';
            if (rs->kind == ISO_ANSWER)
                return 0;
            if (*fd >= 0)
                close(*fd);
            *fd = -1;
            if (rs->kind == ISO_LOG) {
                forward_log(iso, rs);
            } else if (rs->kind == ISO_PROGRESS && tm_now() - quiet_since >= 0.05) {
                /* At most 20 a second, however many the helper sends. */
                quiet_since = tm_now();
                stop = report_progress(iso, call, rs->error, rs->count, rs->total) != 0;
            }
        } else if (tm_now() - quiet_since >= 0.1) {
            /* A plugin that says nothing: the host's callback is still
             * asked, every 100 ms, so that a cancel reaches it. */
            quiet_since = tm_now();
            stop = report_progress(iso, call, "isolated call", 0, 0) != 0;
        }
        if (stop && !cancel_sent) {
            iso_request c;
            memset(&c, 0, sizeof c);
            c.op = ISO_CANCEL;
            if (send_msg(iso->sock, &c, sizeof c, -1) != 0)
                return 2;
            cancel_sent = true;
            if (deadline > tm_now() + 2.0)
                deadline = tm_now() + 2.0;
        }
    }
}

/* The sandbox of a plugin's helper (sandbox.h), as its capability records
 * and the call's limits ask: "--sandbox FLAGS:MAX_MEMORY:THREADS:HOST_PID". */
static void sandbox_arg(const tm_backend *b, const iso_request *rq, char *out, size_t size)
{
    uint32_t flags = 0;
    for (uint32_t i = 0; i < b->n_caps; i++)
        if (b->caps[i].features & TOPOML_CAP_NVIDIA_DRIVER)
            flags |= TM_SANDBOX_NVIDIA;
    snprintf(out, size, "%u:%llu:%u:%ld", flags, (unsigned long long)rq->max_memory,
             rq->n_threads, (long)getpid());
}

/* 0 started; -1 failed (`why`); -2 cancelled by the host's callback. */
static int start_helper(tm_isolated *iso, const topoml_call_v1 *call, const iso_request *rq,
                        char *why, size_t why_size)
{
    topoml_context *ctx = iso->ctx;
    tm_backend *b = &ctx->backends[iso->index];
    char helper[4096];
    if (!tm_find_helper(ctx, TM_PLUGIN_HOST, helper, sizeof helper)) {
        tm_helper_missing(ctx, TM_PLUGIN_HOST, "isolated plugins cannot run");
        snprintf(why, why_size, TM_PLUGIN_HOST " not found");
        return -1;
    }
    int sv[2], out[2], life[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
        snprintf(why, why_size, "socketpair: %s", strerror(errno));
        return -1;
    }
    if (pipe2(out, O_CLOEXEC | O_NONBLOCK) != 0) {
        snprintf(why, why_size, "pipe: %s", strerror(errno));
        close(sv[0]);
        close(sv[1]);
        return -1;
    }
    if (pipe2(life, O_CLOEXEC) != 0) {
        snprintf(why, why_size, "pipe: %s", strerror(errno));
        close(sv[0]);
        close(sv[1]);
        close(out[0]);
        close(out[1]);
        return -1;
    }
    char policy[128], cache[4096];
    sandbox_arg(b, rq, policy, sizeof policy);
    tm_sandbox_cache_arg(ctx, cache, sizeof cache);
    char *argv[] = {helper, "--serve", "--sandbox", policy, cache, NULL};
    int fds[4] = {b->fd, sv[1], out[1], life[0]};
    tm_sandbox_host_hold(); /* before the helper can run a line of the plugin */
    int rc = tm_child_spawn(ctx, helper, argv, fds, 4, &iso->child, why, why_size);
    close(sv[1]);
    close(out[1]);
    close(life[0]);
    if (rc != TOPOML_OK) {
        tm_sandbox_host_release();
        close(sv[0]);
        close(out[0]);
        close(life[1]);
        return -1;
    }
    iso->held = true;
    iso->sock = sv[0];
    iso->out = out[0];
    iso->lifeline = life[1];
    iso->max_memory = rq->max_memory;
    iso->n_threads = rq->n_threads;
    /* The helper enters its sandbox, loads, creates and probes the plugin,
     * then says ready. */
    iso_response ready;
    int fd, w = next_answer(iso, call, tm_now() + TM_PROBE_TIMEOUT_S, &ready, &fd);
    if (fd >= 0)
        close(fd);
    if (w == 2) {
        stop_helper(iso);
        return -2;
    }
    if (w != 0) {
        char what[200];
        end_helper(iso, w == 1, TM_PROBE_TIMEOUT_S, what, sizeof what);
        snprintf(why, why_size, "%s while starting", what);
        return -1;
    }
    if (ready.status != TOPOML_OK) {
        snprintf(why, why_size, "its process could not start it: %.400s", ready.error);
        stop_helper(iso);
        return -1;
    }
    return 0;
}

/* Bytes the helper wrote to its stdout since the last look (drained). */
static size_t stdout_bytes(tm_isolated *iso)
{
    size_t total = 0;
    char buf[4096];
    ssize_t r;
    while (iso->out >= 0 && (r = read(iso->out, buf, sizeof buf)) > 0)
        total += (size_t)r;
    return total;
}

/* The plugin failed as a process, not with a status: reject it for this
 * context and run the call on the reference instead. */
static void give_up(tm_isolated *iso, const char *op, const char *what)
{
    topoml_context *ctx = iso->ctx;
    tm_backend *b = &ctx->backends[iso->index];
    b->gate_state = TOPOML_GATE_REJECTED;
    snprintf(b->gate_reason, sizeof b->gate_reason,
             "in a %s call its process %.400s; not used again in this context", op, what);
    tm_log(ctx, TOPOML_LOG_WARN,
           "backend '%s': in a %s call its process %s; this call ran on the scalar reference "
           "instead and '%s' is not used again in this context",
           b->name, op, what, b->name);
    snprintf(ctx->last_backend, sizeof ctx->last_backend, "scalar");
    snprintf(ctx->last_reason, sizeof ctx->last_reason,
             "the reference, after backend '%.48s' failed in its own process: %.400s", b->name,
             what);
}

static double choose(double n, double k)
{
    double c = 1;
    for (double i = 0; i < k; i++)
        c = c * (n - i) / (i + 1);
    return c > 0 ? c : 0;
}

/* A call's deadline, from what it computes (docs/security.md, "Deadlines"):
 * floor + work / rate, where the work counts the steps of a plain
 * implementation — pairs x coordinates for distances and edges, sorting the
 * pairs for H0, the simplices up to dimension max_dim + 1 for Rips, pixels
 * x 64 for images — and the rate, 10^7 steps a second, is a slow machine's
 * for such steps. The floor is 5 s (30 s for a plugin on the NVIDIA driver,
 * whose first call may compile kernels); `isolation_timeout` is the most. */
static double call_timeout(const tm_isolated *iso, const iso_request *rq)
{
    const tm_backend *b = &iso->ctx->backends[iso->index];
    double floor_s = 5.0;
    for (uint32_t i = 0; i < b->n_caps; i++)
        if (b->caps[i].features & TOPOML_CAP_NVIDIA_DRIVER)
            floor_s = 30.0;
    const double n = (double)rq->n, dim = rq->dim ? (double)rq->dim : 1.0;
    const double pairs = rq->kind == TOPOML_INPUT_SPARSE ? (double)rq->n_edges : n * (n - 1) / 2;
    const double per = rq->kind == TOPOML_INPUT_POINTS ? dim : 1.0;
    double work = 0;
    switch (rq->op) {
    case TOPOML_OP_DISTANCES: work = pairs * per; break;
    case TOPOML_OP_EDGES:
    case TOPOML_OP_H0: work = pairs * per + pairs * log2(pairs + 2); break;
    case TOPOML_OP_RIPS:
        work = pairs * per;
        for (uint32_t k = 2; k <= rq->rips.max_dim + 2 && k < 64; k++)
            work += choose(n, k) * (double)(rq->rips.max_dim + 1);
        break;
    case TOPOML_OP_IMAGE:
        work = (double)rq->n_diagrams * (double)rq->image.width * (double)rq->image.height * 64;
        break;
    default: break;
    }
    double t = floor_s + work / 1e7;
    double most = iso->ctx->config.isolation_timeout;
    return t < most ? t : most;
}

/* Run one request. TOPOML_OK with the response (and *out_fd, the result,
 * or -1); the plugin's own status in rs->status. Returns TOPOML_E_PLUGIN
 * when the process failed (then the caller falls back); another status
 * for the host's own failures (memory, cancel). */
static int roundtrip(tm_isolated *iso, const topoml_call_v1 *call, const char *op,
                     const iso_request *rq, int in_fd, iso_response *rs, int *out_fd)
{
    char why[600];
    *out_fd = -1;
    /* The helper's limits are set when it starts: other limits, another
     * helper. */
    if (iso->sock >= 0 && (iso->max_memory != rq->max_memory || iso->n_threads != rq->n_threads))
        stop_helper(iso);
    if (iso->sock < 0) {
        int s = start_helper(iso, call, rq, why, sizeof why);
        if (s == -2)
            return tm_error(iso->ctx, TOPOML_E_CANCELLED, "cancelled");
        if (s != 0) {
            /* Its probe report (maybe from the cache) no longer holds: the
             * next process probes it afresh. */
            tm_probe_cache_forget(iso->ctx, &iso->ctx->backends[iso->index]);
            give_up(iso, op, why);
            return TOPOML_E_PLUGIN;
        }
    }
    stdout_bytes(iso);
    const double timeout = call_timeout(iso, rq);
    if (send_msg(iso->sock, rq, sizeof *rq, in_fd) != 0) {
        char what[200];
        end_helper(iso, false, timeout, what, sizeof what);
        give_up(iso, op, what);
        return TOPOML_E_PLUGIN;
    }
    iso->log_lines = iso->log_dropped = 0;
    int w = next_answer(iso, call, tm_now() + timeout, rs, out_fd);
    if (iso->log_dropped)
        tm_log(iso->ctx, TOPOML_LOG_INFO, "backend '%s' (its process): %u more log lines dropped",
               iso->ctx->backends[iso->index].name, iso->log_dropped);
    if (w == 2) {
        stop_helper(iso);
        return tm_error(iso->ctx, TOPOML_E_CANCELLED, "cancelled");
    }
    if (w != 0) {
        char what[200];
        end_helper(iso, w == 1, timeout, what, sizeof what);
        give_up(iso, op, what);
        return TOPOML_E_PLUGIN;
    }
    size_t printed = stdout_bytes(iso);
    if (printed) {
        char what[200];
        snprintf(what, sizeof what, "wrote %zu bytes to standard output", printed);
        if (*out_fd >= 0)
            close(*out_fd);
        *out_fd = -1;
        stop_helper(iso);
        give_up(iso, op, what);
        return TOPOML_E_PLUGIN;
    }
    return TOPOML_OK;
}

/* Copy the helper's result memfd (exactly `bytes` long) to `dst`. */
static bool copy_result(int fd, void *dst, uint64_t bytes)
{
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || (uint64_t)st.st_size != (bytes ? bytes : 1))
        return false;
    if (!bytes)
        return true;
    void *m = mmap(NULL, (size_t)bytes, PROT_READ, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED)
        return false;
    memcpy(dst, m, (size_t)bytes);
    munmap(m, (size_t)bytes);
    return true;
}

static const topoml_backend_v1 *reference(topoml_context *ctx, void **state)
{
    *state = ctx->backends[0].state;
    return ctx->backends[0].vt;
}

static void request_from(const topoml_call_v1 *call, const topoml_input_v1 *in, uint32_t op,
                         iso_request *rq)
{
    memset(rq, 0, sizeof *rq);
    rq->op = op;
    rq->max_memory = call->max_memory;
    rq->device = call->device;
    rq->n_threads = call->n_threads;
    if (in) {
        rq->kind = in->kind;
        rq->dtype = in->dtype;
        rq->metric = in->metric;
        rq->n = in->n;
        rq->dim = in->dim;
        rq->n_edges = in->n_edges;
    }
}

/* The input's arrays as memfd parts. */
static int input_memfd(const topoml_input_v1 *in, iso_request *rq)
{
    uint64_t elem = in->dtype == TOPOML_F32 ? sizeof(float) : sizeof(double), values = 0;
    if (in->kind == TOPOML_INPUT_POINTS)
        values = in->n * in->dim;
    else if (in->kind == TOPOML_INPUT_CONDENSED)
        values = in->n > 1 ? in->n * (in->n - 1) / 2 : 0;
    part parts[2] = {{in->data, in->data ? values * elem : 0},
                     {in->edges, in->kind == TOPOML_INPUT_SPARSE && in->edges
                                     ? in->n_edges * sizeof(topoml_edge)
                                     : 0}};
    uint64_t off[2];
    int fd = sealed_memfd(parts, 2, off);
    rq->data_offset = off[0];
    rq->edges_offset = off[1];
    return fd;
}

static int host_failure(const topoml_call_v1 *call, const char *what)
{
    snprintf(call->error, call->error_size, "%s", what);
    return TOPOML_E_IO;
}

/* What a call gets back, the one thing that differs between the ops:
 * rq->out_bytes into `fixed` (the caller's array, of a size known
 * beforehand: distances, images), or rs.count elements of `elem` bytes, at
 * most `most`, into a new array from the call's allocator, stored at
 * *array (edges, bars; `noun` names them). A cancelled barcode brings its
 * complete dimensions back too (`partial`). Filled in: `delivered` when
 * the result was copied, and what the response says of it. */
typedef struct iso_result {
    void *fixed;
    size_t elem;
    size_t extra;    /* bytes per element that follow the array when the
                        response says so (a barcode's generators) */
    bool with_extra; /* they did: *array holds count * (elem + extra) */
    uint64_t most;
    void **array;
    const char *noun;
    bool partial;
    bool delivered;
    uint64_t count;
    uint32_t max_dim, complete;
} iso_result;

/* Every op's path: send the request with its input (in_fd, closed here),
 * take the answer as `res` says, and pass the plugin's status and message
 * on. *fall_back is set when the helper failed as a process (or answered
 * with a result of the wrong size): the plugin is given up and the caller
 * runs the reference instead. Otherwise returns the host's own status
 * (memory, cancel) or the plugin's. */
static int exchange(tm_isolated *iso, const topoml_call_v1 *call, const char *name,
                    const iso_request *rq, int in_fd, iso_result *res, bool *fall_back)
{
    *fall_back = false;
    if (in_fd < 0)
        return host_failure(call, "cannot pass the input to the plugin's process");
    iso_response rs;
    int out_fd, rc = roundtrip(iso, call, name, rq, in_fd, &rs, &out_fd);
    close(in_fd);
    if (rc == TOPOML_OK &&
        (rs.status == TOPOML_OK || (res->partial && rs.status == TOPOML_E_CANCELLED))) {
        bool fits;
        if (res->fixed) {
            fits = copy_result(out_fd, res->fixed, rq->out_bytes);
        } else {
            uint64_t bytes = 0;
            void *v = NULL;
            const size_t elem = res->elem + (rs.generators ? res->extra : 0);
            fits = rs.count <= res->most && tm_mul_u64(rs.count, elem, &bytes) &&
                   bytes <= SIZE_MAX && (!rs.generators || res->extra);
            res->with_extra = rs.generators && res->extra;
            if (fits && (v = call->alloc(call->host_data, (size_t)bytes)) == NULL) {
                rs.status = TOPOML_E_NOMEM;
                snprintf(rs.error, sizeof rs.error, "out of memory copying %llu %s",
                         (unsigned long long)rs.count, res->noun);
            } else if (fits && !copy_result(out_fd, v, bytes)) {
                call->free(call->host_data, v);
                fits = false;
            } else if (fits) {
                *res->array = v;
            }
        }
        res->delivered = fits && rs.status != TOPOML_E_NOMEM;
        if (!fits) {
            give_up(iso, name, "answered with a result of the wrong size");
            rc = TOPOML_E_PLUGIN;
        }
    }
    if (out_fd >= 0)
        close(out_fd);
    if (rc == TOPOML_E_PLUGIN) {
        *fall_back = true;
        return rc;
    }
    if (rc != TOPOML_OK)
        return rc;
    if (rs.status != TOPOML_OK)
        snprintf(call->error, call->error_size, "%s", rs.error);
    res->count = rs.count;
    res->max_dim = rs.max_dim;
    res->complete = rs.complete;
    return rs.status;
}

static int proxy_distances(void *state, const topoml_call_v1 *call, const topoml_input_v1 *in,
                           void *out)
{
    iso_request rq;
    request_from(call, in, TOPOML_OP_DISTANCES, &rq);
    uint64_t pairs = in->n > 1 ? in->n * (in->n - 1) / 2 : 0;
    rq.out_bytes = pairs * (in->dtype == TOPOML_F32 ? sizeof(float) : sizeof(double));
    iso_result res = {.fixed = out};
    bool fall_back;
    int rc = exchange(state, call, "distances", &rq, input_memfd(in, &rq), &res, &fall_back);
    if (!fall_back)
        return rc;
    void *s;
    const topoml_backend_v1 *ref = reference(((tm_isolated *)state)->ctx, &s);
    return ref->distances(s, call, in, out);
}

static int proxy_edges(void *state, const topoml_call_v1 *call, const topoml_input_v1 *in,
                       double threshold, topoml_edge **out, uint64_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    iso_request rq;
    request_from(call, in, TOPOML_OP_EDGES, &rq);
    rq.threshold = threshold;
    iso_result res = {.elem = sizeof **out,
                      .most = in->kind == TOPOML_INPUT_SPARSE ? in->n_edges
                              : in->n > 1                     ? in->n * (in->n - 1) / 2
                                                              : 0,
                      .array = (void **)out,
                      .noun = "edges"};
    bool fall_back;
    int rc = exchange(state, call, "edges", &rq, input_memfd(in, &rq), &res, &fall_back);
    if (res.delivered)
        *n_out = res.count;
    if (!fall_back)
        return rc;
    void *s;
    const topoml_backend_v1 *ref = reference(((tm_isolated *)state)->ctx, &s);
    return ref->edges(s, call, in, threshold, out, n_out);
}

/* h0 and rips: a barcode comes back. */
static int proxy_barcode(void *state, const topoml_call_v1 *call, const topoml_input_v1 *in,
                         uint32_t op, double threshold, const topoml_rips_params_v1 *params,
                         topoml_barcode_v1 *out)
{
    iso_request rq;
    request_from(call, in, op, &rq);
    rq.threshold = threshold;
    if (params)
        rq.rips = *params;
    topoml_interval *v = NULL;
    const bool gens = params && (params->flags & TOPOML_RIPS_PARAM_GENERATORS);
    iso_result res = {.elem = sizeof *v,
                      .extra = gens ? sizeof(topoml_generator) : 0,
                      .most = UINT64_MAX,
                      .array = (void **)&v,
                      .noun = "bars",
                      .partial = true};
    bool fall_back;
    const char *name = op == TOPOML_OP_RIPS ? "rips" : "h0";
    int rc = exchange(state, call, name, &rq, input_memfd(in, &rq), &res, &fall_back);
    if (res.delivered) {
        out->n_intervals = res.count;
        out->intervals = v;
        out->max_dim = res.max_dim;
        out->complete = res.complete;
        if (res.with_extra && res.count) {
            /* the generators, behind the intervals in the same block */
            topoml_generator *g = call->alloc(call->host_data, res.count * sizeof *g);
            if (!g) {
                call->free(call->host_data, v);
                out->intervals = NULL;
                out->n_intervals = 0;
                snprintf(call->error, call->error_size, "out of memory copying %llu generators",
                         (unsigned long long)res.count);
                return TOPOML_E_NOMEM;
            }
            memcpy(g, (const char *)v + res.count * sizeof *v, res.count * sizeof *g);
            out->generators = g;
        }
    }
    if (!fall_back)
        return rc;
    void *s;
    const topoml_backend_v1 *ref = reference(((tm_isolated *)state)->ctx, &s);
    return op == TOPOML_OP_RIPS ? ref->rips(s, call, in, params, out)
                                : ref->h0(s, call, in, threshold, out);
}

static int proxy_h0(void *state, const topoml_call_v1 *call, const topoml_input_v1 *in,
                    double threshold, topoml_barcode_v1 *out)
{
    return proxy_barcode(state, call, in, TOPOML_OP_H0, threshold, NULL, out);
}

static int proxy_rips(void *state, const topoml_call_v1 *call, const topoml_input_v1 *in,
                      const topoml_rips_params_v1 *params, topoml_barcode_v1 *out)
{
    return proxy_barcode(state, call, in, TOPOML_OP_RIPS, params->threshold, params, out);
}

static int proxy_image(void *state, const topoml_call_v1 *call,
                       const topoml_image_params_v1 *params, uint64_t n_diagrams,
                       const uint64_t *offsets, const topoml_pair *pairs, double *out)
{
    iso_request rq;
    request_from(call, NULL, TOPOML_OP_IMAGE, &rq);
    rq.image = *params;
    rq.n_diagrams = n_diagrams;
    rq.out_bytes = n_diagrams * params->width * params->height * sizeof(double);
    part parts[2] = {{offsets, (n_diagrams + 1) * sizeof *offsets},
                     {pairs, pairs ? offsets[n_diagrams] * sizeof *pairs : 0}};
    uint64_t off[2];
    int in_fd = sealed_memfd(parts, 2, off);
    rq.offsets_offset = off[0];
    rq.pairs_offset = off[1];
    iso_result res = {.fixed = out};
    bool fall_back;
    int rc = exchange(state, call, "image", &rq, in_fd, &res, &fall_back);
    if (!fall_back)
        return rc;
    void *s;
    const topoml_backend_v1 *ref = reference(((tm_isolated *)state)->ctx, &s);
    return ref->image(s, call, params, n_diagrams, offsets, pairs, out);
}

static int proxy_probe(void *state, char *why, size_t why_size)
{
    (void)state;
    snprintf(why, why_size, "probed in its own process");
    return TOPOML_OK;
}

static int proxy_capabilities(void *state, const topoml_capability_v1 **caps, uint32_t *n)
{
    tm_isolated *iso = state;
    const tm_backend *b = &iso->ctx->backends[iso->index];
    *caps = b->caps;
    *n = b->n_caps;
    return TOPOML_OK;
}

int tm_isolation_attach(topoml_context *ctx, tm_backend *b)
{
    tm_isolated *iso = tm_calloc(ctx, 1, sizeof *iso);
    if (!iso)
        return tm_nomem(ctx, sizeof *iso);
    iso->ctx = ctx;
    iso->index = (uint32_t)(b - ctx->backends);
    iso->sock = -1;
    iso->out = -1;
    iso->lifeline = -1;
    topoml_backend_v1 *vt = &b->vt_copy;
    memset(vt, 0, sizeof *vt);
    vt->struct_size = sizeof *vt;
    vt->abi_version = b->abi_version;
    vt->name = b->name;
    vt->version = b->version;
    vt->vendor = b->vendor;
    vt->description = b->description;
    vt->probe = proxy_probe;
    vt->capabilities = proxy_capabilities;
    if (b->op_mask & (1u << TOPOML_OP_DISTANCES))
        vt->distances = proxy_distances;
    if (b->op_mask & (1u << TOPOML_OP_EDGES))
        vt->edges = proxy_edges;
    if (b->op_mask & (1u << TOPOML_OP_H0))
        vt->h0 = proxy_h0;
    if (b->op_mask & (1u << TOPOML_OP_RIPS))
        vt->rips = proxy_rips;
    if (b->op_mask & (1u << TOPOML_OP_IMAGE))
        vt->image = proxy_image;
    vt->selection = b->selection;
    b->vt = vt;
    b->state = iso;
    b->isolated = true;
    return TOPOML_OK;
}

void tm_isolation_detach(topoml_context *ctx, tm_backend *b)
{
    tm_isolated *iso = b->state;
    if (!b->isolated || !iso)
        return;
    stop_helper(iso);
    tm_free(ctx, iso);
    b->state = NULL;
    b->isolated = false;
}

/* ---- the helper's side ---- */

static int result_memfd(const void *p, uint64_t bytes)
{
    part one = {p, bytes};
    uint64_t off;
    return sealed_memfd(&one, 1, &off);
}

static void serve_one(tm_backend *b, topoml_context *ctx, const iso_request *rq, int in_fd,
                      int sock)
{
    iso_response rs;
    memset(&rs, 0, sizeof rs);
    int out_fd = -1;
    struct stat st;
    void *base = NULL;
    size_t size = 0;
    if (in_fd >= 0 && fstat(in_fd, &st) == 0 && st.st_size > 0) {
        size = (size_t)st.st_size;
        base = mmap(NULL, size, PROT_READ, MAP_SHARED, in_fd, 0);
        if (base == MAP_FAILED)
            base = NULL;
    }
    topoml_call_v1 call;
    tm_call_init(ctx, &call, rs.error, sizeof rs.error);
    call.max_memory = rq->max_memory;
    call.device = rq->device;
    call.n_threads = rq->n_threads;
    topoml_input_v1 in = {.struct_size = sizeof in,
                          .kind = rq->kind,
                          .n = rq->n,
                          .dim = rq->dim,
                          .dtype = rq->dtype,
                          .metric = rq->metric,
                          .n_edges = rq->n_edges};
    if (!base && rq->op != TOPOML_OP_IMAGE) {
        rs.status = TOPOML_E_IO;
        snprintf(rs.error, sizeof rs.error, "the plugin's process cannot map its input");
    } else if (rq->data_offset > size || rq->edges_offset > size ||
               rq->offsets_offset > size || rq->pairs_offset > size) {
        rs.status = TOPOML_E_INVALID;
        snprintf(rs.error, sizeof rs.error, "bad request");
    } else {
        const char *p = base;
        in.data = p && rq->kind != TOPOML_INPUT_SPARSE ? p + rq->data_offset : NULL;
        in.edges = p && rq->kind == TOPOML_INPUT_SPARSE ? (const void *)(p + rq->edges_offset)
                                                       : NULL;
        switch (rq->op) {
        case TOPOML_OP_DISTANCES:
        case TOPOML_OP_IMAGE: {
            out_fd = memfd_create("topoml-output", MFD_CLOEXEC | MFD_ALLOW_SEALING);
            void *o = MAP_FAILED;
            if (out_fd >= 0 && ftruncate(out_fd, (off_t)(rq->out_bytes ? rq->out_bytes : 1)) == 0)
                o = mmap(NULL, rq->out_bytes ? rq->out_bytes : 1, PROT_READ | PROT_WRITE,
                         MAP_SHARED, out_fd, 0);
            if (o == MAP_FAILED) {
                rs.status = TOPOML_E_NOMEM;
                snprintf(rs.error, sizeof rs.error, "the plugin's process cannot make its output");
                break;
            }
            if (rq->op == TOPOML_OP_DISTANCES)
                rs.status = b->vt->distances(b->state, &call, &in, o);
            else
                rs.status = b->vt->image(b->state, &call, &rq->image, rq->n_diagrams,
                                         (const uint64_t *)(p + rq->offsets_offset),
                                         (const topoml_pair *)(p + rq->pairs_offset), o);
            munmap(o, rq->out_bytes ? rq->out_bytes : 1);
            break;
        }
        case TOPOML_OP_EDGES: {
            topoml_edge *e = NULL;
            uint64_t n = 0;
            rs.status = b->vt->edges(b->state, &call, &in, rq->threshold, &e, &n);
            if (rs.status == TOPOML_OK) {
                out_fd = result_memfd(e, n * sizeof *e);
                rs.count = n;
            }
            call.free(call.host_data, e);
            break;
        }
        case TOPOML_OP_H0:
        case TOPOML_OP_RIPS: {
            topoml_barcode_v1 res = {.struct_size = sizeof res};
            rs.status = rq->op == TOPOML_OP_RIPS
                            ? b->vt->rips(b->state, &call, &in, &rq->rips, &res)
                            : b->vt->h0(b->state, &call, &in, rq->threshold, &res);
            if (rs.status == TOPOML_OK || rs.status == TOPOML_E_CANCELLED) {
                /* Generators asked for and given: behind the intervals. */
                const bool gens = rq->op == TOPOML_OP_RIPS &&
                                  (rq->rips.flags & TOPOML_RIPS_PARAM_GENERATORS) &&
                                  res.generators;
                const uint64_t a = res.n_intervals * sizeof *res.intervals,
                               g = gens ? res.n_intervals * sizeof *res.generators : 0;
                char *both = gens && a + g ? malloc((size_t)(a + g)) : NULL;
                if (gens && a + g && !both) {
                    rs.status = TOPOML_E_NOMEM;
                    snprintf(rs.error, sizeof rs.error, "the plugin's process is out of memory");
                } else if (both) {
                    memcpy(both, res.intervals, (size_t)a);
                    memcpy(both + a, res.generators, (size_t)g);
                    out_fd = result_memfd(both, a + g);
                    free(both);
                } else {
                    out_fd = result_memfd(res.intervals, a);
                }
                rs.count = res.n_intervals;
                rs.max_dim = res.max_dim;
                rs.complete = res.complete;
                rs.generators = gens;
            }
            call.free(call.host_data, res.intervals);
            call.free(call.host_data, res.generators);
            break;
        }
        default: rs.status = TOPOML_E_UNSUPPORTED;
        }
    }
    fflush(stdout); /* what the plugin printed goes to the host's pipe now */
    if (base)
        munmap(base, size);
    send_msg(sock, &rs, sizeof rs, out_fd);
    if (out_fd >= 0)
        close(out_fd);
}

/* The helper's end of progress, cancel and log lines: sent to the host as
 * they happen (progress at most every 50 ms); a cancel from the host is
 * looked for at each progress report. */
static int serve_sock = -1;
static bool serve_cancelled;
static double serve_last_progress;

static pthread_mutex_t serve_lock = PTHREAD_MUTEX_INITIALIZER;

static int serve_progress(void *user, const char *stage, uint64_t done, uint64_t total)
{
    (void)user;
    pthread_mutex_lock(&serve_lock); /* a plugin's threads may report at once */
    struct pollfd pf = {serve_sock, POLLIN, 0};
    while (!serve_cancelled && poll(&pf, 1, 0) > 0 && (pf.revents & POLLIN)) {
        iso_request rq;
        int fd;
        if (recv_msg(serve_sock, &rq, sizeof rq, &fd) != 0)
            serve_cancelled = true; /* the host is gone */
        else if (rq.op == ISO_CANCEL)
            serve_cancelled = true;
        if (fd >= 0)
            close(fd);
    }
    double now = tm_now();
    if (!serve_cancelled && now - serve_last_progress >= 0.05) {
        serve_last_progress = now;
        iso_response m;
        memset(&m, 0, sizeof m);
        m.kind = ISO_PROGRESS;
        m.count = done;
        m.total = total;
        snprintf(m.error, sizeof m.error, "%s", stage ? stage : "");
        send_msg(serve_sock, &m, sizeof m, -1);
    }
    const bool stop = serve_cancelled;
    pthread_mutex_unlock(&serve_lock);
    return stop;
}

static void serve_log(void *user, int level, const char *message)
{
    (void)user;
    iso_response m;
    memset(&m, 0, sizeof m);
    m.kind = ISO_LOG;
    m.level = level;
    snprintf(m.error, sizeof m.error, "%s", message ? message : "");
    send_msg(serve_sock, &m, sizeof m, -1);
}

/* "FLAGS:MAX_MEMORY:THREADS:HOST_PID" (sandbox_arg, tm_probe_policy). */
bool tm_sandbox_policy_parse(const char *arg, tm_sandbox_policy *p)
{
    unsigned flags, threads;
    unsigned long long mem;
    long host;
    char end;
    if (!arg || sscanf(arg, "%u:%llu:%u:%ld%c", &flags, &mem, &threads, &host, &end) != 4)
        return false;
    p->flags = flags;
    p->max_memory = mem;
    p->n_threads = threads;
    p->host_pid = (int)host;
    return true;
}

void tm_sandbox_cache_arg(const topoml_context *ctx, char *out, size_t size)
{
    const char *dir = ctx->config.cache_dir;
    snprintf(out, size, "%s", dir && dir[0] == '/' ? dir : "");
}

/* What the sandbox leaves out, to the host's log (debug level). */
static void serve_note(void *user, const char *text)
{
    tm_log((topoml_context *)user, TOPOML_LOG_DEBUG, "%s", text);
}

int tm_isolation_serve(int plugin_fd, int sock, int stdout_fd, int lifeline_fd,
                       const char *policy, const char *cache_dir)
{
    if (dup2(stdout_fd, STDOUT_FILENO) < 0)
        return 1;
    close(stdout_fd);
    serve_sock = sock;
    iso_response ready;
    memset(&ready, 0, sizeof ready);
    topoml_context_options opts = {.struct_size = sizeof opts,
                                   .flags = TOPOML_CTX_NO_ENV | TOPOML_CTX_NO_PLUGINS};
    topoml_context *ctx = NULL;
    tm_backend b;
    memset(&b, 0, sizeof b);
    b.fd = plugin_fd;
    tm_sandbox_policy pol = {.plugin_fd = plugin_fd,
                             .lifeline_fd = lifeline_fd,
                             .cache_dir = cache_dir && *cache_dir ? cache_dir : NULL,
                             .note = serve_note};
    char why[400];
    double entered = 0;
    if (!tm_sandbox_policy_parse(policy, &pol)) {
        ready.status = TOPOML_E_INTERNAL;
        snprintf(ready.error, sizeof ready.error, "no sandbox policy given to the helper");
    } else if (topoml_context_new(&ctx, &opts) != TOPOML_OK) {
        ready.status = TOPOML_E_NOMEM;
        snprintf(ready.error, sizeof ready.error, "cannot make a context");
    } else if (topoml_set_log(ctx, serve_log, NULL, TOPOML_LOG_DEBUG),
               topoml_set_progress(ctx, serve_progress, NULL), pol.note_user = ctx,
               entered = tm_now(),
               tm_sandbox_enter(&pol, why, sizeof why) != 0) {
        /* Nothing of the plugin has run yet: it does not run at all. */
        ready.status = TOPOML_E_PLUGIN;
        snprintf(ready.error, sizeof ready.error, "sandbox: %.400s", why);
    } else {
        /* A plugin may see that it runs sandboxed (it could find out anyway),
         * and keep from what would end it there. */
        char walls[300];
        tm_sandbox_support(NULL, walls, sizeof walls);
        tm_log(ctx, TOPOML_LOG_DEBUG, "sandbox: %s (entered in %.3f ms)", walls,
               (tm_now() - entered) * 1e3);
        setenv("TOPOML_SANDBOX", walls, 1);
        tm_loader_negotiate(ctx, &b);
        if (b.gate_state != TOPOML_GATE_REJECTED && tm_backend_start(ctx, &b) != TOPOML_OK &&
            b.gate_state != TOPOML_GATE_REJECTED)
            snprintf(b.gate_reason, sizeof b.gate_reason, "probe failed: %.250s", b.probe_message);
        if (b.gate_state == TOPOML_GATE_REJECTED || b.probe_status != TOPOML_OK) {
            ready.status = TOPOML_E_PLUGIN;
            snprintf(ready.error, sizeof ready.error, "%.500s", b.gate_reason);
        }
    }
    send_msg(sock, &ready, sizeof ready, -1);
    fflush(stdout);
    if (ready.status != TOPOML_OK)
        return 1;
    for (;;) {
        iso_request rq;
        int in_fd;
        if (recv_msg(sock, &rq, sizeof rq, &in_fd) != 0)
            break; /* the host closed the socket: done */
        if (rq.op != ISO_CANCEL) { /* (a cancel that came after its answer) */
            serve_cancelled = false;
            serve_last_progress = 0;
            serve_one(&b, ctx, &rq, in_fd, sock);
        }
        if (in_fd >= 0)
            close(in_fd);
    }
    return 0;
}
