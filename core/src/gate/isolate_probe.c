/*
 * isolate_probe.c — discovery without running plugin code in the host.
 *
 * Loading a plugin runs its code: ELF constructors at dlopen, then
 * negotiate, create, probe and capabilities. The host does none of that for
 * a plugin the gate has not enabled. Each checked plugin file is handed, as
 * its open descriptor, to a helper process (topoml-plugin-host --probe);
 * the helper enters its sandbox (sandbox.h, the policy of tm_probe_policy),
 * then loads that very file through /proc/self/fd/3 and writes a
 * report on descriptor 4: the stage it reached, then either the reason the
 * loader refused the plugin or its identity, ABI version, op pointers,
 * probe result and capability records. A plugin that crashes, exits or
 * hangs in any of those stages leaves an incomplete report, and is
 * rejected with what happened and where ("died of signal 11
 * (Segmentation fault) in create, probe, capabilities"). The host keeps
 * working, and `topoml backends` still lists the plugin with that reason.
 *
 * The report comes from a process that runs the plugin's code, so it is
 * read as untrusted input: bounded in size, every field checked.
 *
 * A report that went well (complete, the probe said ok) is kept in the
 * cache folder (probe_cache.c); a later process that would probe the same
 * file on the same boot, with the same environment and the same build of
 * topoml, reads that report instead of starting a child, through the same
 * parser.
 *
 * Report format: records of one type byte followed by fields, each field a
 * netstring ("<length>:<bytes>,", "-," for none). Types: 'S' stage, 'R'
 * refused (reason), 'I' identity (see put_identity), 'E' end of report.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/api.h"
#include "gate/gate.h"
#include "gate/gate_internal.h"
#include "gate/sandbox.h"

#define MAX_CAPS 256u

/* ---- the helper's side ---- */

typedef struct out_buf {
    char *p;
    size_t len, cap;
    bool failed;
} out_buf;

static void put_bytes(out_buf *o, const char *s, size_t n)
{
    if (o->failed)
        return;
    if (o->len + n > o->cap) {
        size_t cap = o->cap ? o->cap : 1024;
        while (cap < o->len + n)
            cap *= 2;
        char *p = realloc(o->p, cap);
        if (!p) {
            o->failed = true;
            return;
        }
        o->p = p;
        o->cap = cap;
    }
    memcpy(o->p + o->len, s, n);
    o->len += n;
}

static void put_field(out_buf *o, const char *s)
{
    if (!s) {
        put_bytes(o, "-,", 2);
        return;
    }
    char head[32];
    size_t n = strlen(s);
    int k = snprintf(head, sizeof head, "%zu:", n);
    put_bytes(o, head, (size_t)k);
    put_bytes(o, s, n);
    put_bytes(o, ",", 1);
}

static void put_u64(out_buf *o, uint64_t v)
{
    char num[32];
    snprintf(num, sizeof num, "%" PRIu64, v);
    put_field(o, num);
}

static void write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        p += w;
        n -= (size_t)w;
    }
}

/* Records are written as they happen, so the parent knows the stage a
 * crash came in. */
static void send_record(int fd, char type, const char *field)
{
    out_buf o = {0};
    put_bytes(&o, &type, 1);
    if (field)
        put_field(&o, field);
    if (!o.failed)
        write_all(fd, o.p, o.len);
    free(o.p);
}

static void put_identity(out_buf *o, const tm_backend *b)
{
    const topoml_backend_v1 *vt = b->vt;
    put_bytes(o, "I", 1);
    put_field(o, vt->name);
    put_field(o, vt->version ? vt->version : "");
    put_field(o, vt->vendor ? vt->vendor : "");
    put_field(o, vt->description ? vt->description : "");
    put_u64(o, b->abi_version);
    put_u64(o, vt->selection);
    put_u64(o, tm_op_mask(vt));
    put_u64(o, (uint64_t)(int64_t)b->probe_status);
    put_field(o, b->probe_message);
    uint32_t n = b->probe_status == TOPOML_OK ? b->n_caps : 0;
    put_u64(o, n);
    for (uint32_t i = 0; i < n; i++) {
        const topoml_capability_v1 *c = &b->caps[i];
        put_u64(o, c->op);
        put_u64(o, c->dtypes);
        put_u64(o, c->metrics);
        put_u64(o, c->inputs);
        put_u64(o, c->max_dim);
        put_u64(o, c->max_modulus);
        put_u64(o, c->max_points);
        put_field(o, c->device);
        put_field(o, c->schedule);
        put_u64(o, c->features);
    }
}

void tm_probe_policy(const tm_backend *b, char *out, size_t size)
{
    snprintf(out, size, "%u:0:0:%ld", b->in_default_folder ? TM_SANDBOX_NVIDIA : 0u,
             (long)getpid());
}

/* The test plugins' files (tests/fault_plugins/fault.c): their record of
 * where their code ran and when their probes ran, and the file that tells
 * one what its probe finds. A sandboxed probe can open none of them, so
 * the files the environment names are opened here, before the sandbox and
 * only when the host's environment names them, and handed on as "fd:N"
 * (the records to append to, the other to read). Nothing else of the
 * user's is open in the probe. */
static void pass_test_file(const char *var, int at, int flags)
{
    const char *path = getenv(var);
    if (!path || path[0] != '/')
        return;
    int fd = open(path, flags | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return;
    if (dup3(fd, at, O_CLOEXEC) == at) {
        char v[16];
        snprintf(v, sizeof v, "fd:%d", at);
        setenv(var, v, 1);
    }
    close(fd);
}

int tm_probe_serve(int plugin_fd, int out_fd, const char *policy, const char *cache_dir)
{
    topoml_context_options opts = {.struct_size = sizeof opts,
                                   .flags = TOPOML_CTX_NO_ENV | TOPOML_CTX_NO_PLUGINS};
    topoml_context *ctx = NULL;
    if (topoml_context_new(&ctx, &opts) != TOPOML_OK) {
        send_record(out_fd, 'R', "the probe process could not make a context");
        send_record(out_fd, 'E', NULL);
        topoml_context_free(ctx);
        return 1;
    }
    /* The plugin's constructors run at the dlopen below: the sandbox is up
     * before them, as in a helper that serves calls (isolate_ops.c). */
    tm_sandbox_policy pol = {.plugin_fd = plugin_fd,
                             .lifeline_fd = -1,
                             .cache_dir = cache_dir && *cache_dir ? cache_dir : NULL};
    char why[400];
    pass_test_file("TOPOML_TEST_MARKER", 20, O_WRONLY | O_APPEND | O_CREAT);
    pass_test_file("TOPOML_TEST_PROBE_LOG", 21, O_WRONLY | O_APPEND | O_CREAT);
    pass_test_file("TOPOML_TEST_PROBE_CONTROL", 22, O_RDONLY);
    if (!tm_sandbox_policy_parse(policy, &pol) || tm_sandbox_enter(&pol, why, sizeof why) != 0) {
        char reason[480];
        snprintf(reason, sizeof reason, "its probe process could not enter the sandbox: %.400s",
                 policy ? why : "no sandbox policy given");
        send_record(out_fd, 'R', reason);
        send_record(out_fd, 'E', NULL);
        return 1;
    }
    char walls[300];
    tm_sandbox_support(NULL, walls, sizeof walls);
    setenv("TOPOML_SANDBOX", walls, 1);
    tm_backend b;
    memset(&b, 0, sizeof b);
    b.fd = plugin_fd;
    send_record(out_fd, 'S', "load (constructors) and negotiate");
    tm_loader_negotiate(ctx, &b);
    if (b.gate_state != TOPOML_GATE_REJECTED) {
        send_record(out_fd, 'S', "create, probe, capabilities");
        tm_backend_start(ctx, &b);
    }
    if (b.gate_state == TOPOML_GATE_REJECTED) {
        send_record(out_fd, 'R', b.gate_reason);
    } else {
        out_buf o = {0};
        put_identity(&o, &b);
        if (o.failed)
            send_record(out_fd, 'R', "the probe process ran out of memory");
        else
            write_all(out_fd, o.p, o.len);
        free(o.p);
    }
    /* The plugin's destroy and the dlclose are left out: the report is
     * complete, and nothing a plugin does at exit can change it. */
    send_record(out_fd, 'E', NULL);
    return 0;
}

/* ---- the host's side ---- */

typedef struct in_buf {
    const char *p;
    size_t len, at;
    bool bad;
} in_buf;

/* The next field: its bytes and length, or NULL for "-," (and for a bad
 * field, with bad set). */
static const char *get_field(in_buf *in, size_t *n)
{
    *n = 0;
    if (in->bad || in->at >= in->len) {
        in->bad = true;
        return NULL;
    }
    if (in->p[in->at] == '-') {
        if (in->at + 1 >= in->len || in->p[in->at + 1] != ',')
            in->bad = true;
        in->at += 2;
        return NULL;
    }
    size_t len = 0, k = in->at;
    while (k < in->len && in->p[k] >= '0' && in->p[k] <= '9' && len < TM_PROBE_REPORT_MAX)
        len = len * 10 + (size_t)(in->p[k++] - '0');
    if (k == in->at || k >= in->len || in->p[k] != ':' || len > in->len - k - 1 ||
        in->len - k - 1 - len < 1 || in->p[k + 1 + len] != ',') {
        in->bad = true;
        return NULL;
    }
    in->at = k + 2 + len;
    *n = len;
    return in->p + k + 1;
}

static bool get_u64(in_buf *in, uint64_t *v)
{
    size_t n;
    const char *s = get_field(in, &n);
    char num[32];
    if (!s || n == 0 || n >= sizeof num) {
        in->bad = true;
        return false;
    }
    memcpy(num, s, n);
    num[n] = '\0';
    char *end;
    errno = 0;
    *v = strtoull(num, &end, 10);
    if (*end || errno) {
        in->bad = true;
        return false;
    }
    return true;
}

/* A string field into `out` (cut to size), with control characters
 * replaced: this text ends up in the host's logs and tables. */
static bool get_text(in_buf *in, char *out, size_t size, bool *present)
{
    size_t n;
    const char *s = get_field(in, &n);
    if (present)
        *present = s != NULL;
    if (in->bad)
        return false;
    size_t m = n < size - 1 ? n : size - 1;
    for (size_t i = 0; i < m; i++)
        out[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? ' ' : s[i];
    out[m] = '\0';
    return true;
}

/* The probe's capability records as one allocation (b->probed): the
 * records first, read with sizeof(v1) strides like a plugin's own
 * (topoml_backend_info.caps), then the strings they point at. */
typedef struct cap_strings {
    char device[128];
    char schedule[256];
} cap_strings;

/* Read an 'I' record into b; false when it is malformed. */
static bool read_identity(topoml_context *ctx, in_buf *in, tm_backend *b)
{
    char name[64], version[64], vendor[128], description[256];
    uint64_t abi, selection, ops, probe, n;
    if (!get_text(in, name, sizeof name, NULL) || !get_text(in, version, sizeof version, NULL) ||
        !get_text(in, vendor, sizeof vendor, NULL) ||
        !get_text(in, description, sizeof description, NULL) || !get_u64(in, &abi) ||
        !get_u64(in, &selection) || !get_u64(in, &ops) || !get_u64(in, &probe) ||
        !get_text(in, b->probe_message, sizeof b->probe_message, NULL) || !get_u64(in, &n))
        return false;
    if (abi == 0 || abi > TOPOML_ABI_VERSION || ops >= (1u << TOPOML_OP_COUNT) ||
        selection > 0xffffffffu || n > MAX_CAPS || (int64_t)probe < INT32_MIN ||
        (int64_t)probe > INT32_MAX || !tm_valid_backend_name(name))
        return false;
    size_t bytes = (size_t)n * (sizeof(topoml_capability_v1) + sizeof(cap_strings));
    unsigned char *block = tm_calloc(ctx, 1, bytes ? bytes : 1);
    if (!block)
        return false;
    topoml_capability_v1 *caps = (topoml_capability_v1 *)block;
    cap_strings *text = (cap_strings *)(block + (size_t)n * sizeof *caps);
    for (uint64_t i = 0; i < n; i++) {
        uint64_t v[7];
        bool has_device = false, has_schedule = false;
        for (int k = 0; k < 7; k++)
            if (!get_u64(in, &v[k]))
                break;
        if (in->bad || !get_text(in, text[i].device, sizeof text[i].device, &has_device) ||
            !get_text(in, text[i].schedule, sizeof text[i].schedule, &has_schedule) ||
            v[0] >= TOPOML_OP_COUNT || v[1] > 0xffffffffu || v[2] > 0xffffffffu ||
            v[3] > 0xffffffffu || v[4] > 0xffffffffu || v[5] > 0xffffffffu) {
            tm_free(ctx, block);
            return false;
        }
        uint64_t features = 0;
        if (!get_u64(in, &features) || features > 0xffffffffu) {
            tm_free(ctx, block);
            return false;
        }
        topoml_capability_v1 *c = &caps[i];
        c->struct_size = sizeof *c;
        c->features = (uint32_t)features;
        c->op = (uint32_t)v[0];
        c->dtypes = (uint32_t)v[1];
        c->metrics = (uint32_t)v[2];
        c->inputs = (uint32_t)v[3];
        c->max_dim = (uint32_t)v[4];
        c->max_modulus = (uint32_t)v[5];
        c->max_points = v[6];
        c->device = has_device ? text[i].device : NULL;
        c->schedule = has_schedule ? text[i].schedule : NULL;
    }
    if (tm_set_identity(ctx, b, name, version, vendor, description) != TOPOML_OK) {
        tm_free(ctx, block);
        return false;
    }
    b->abi_version = (uint32_t)abi;
    b->selection = (uint32_t)selection;
    b->op_mask = (uint32_t)ops;
    b->probe_status = (int)(int64_t)probe;
    b->probed = block;
    b->caps = caps;
    b->n_caps = (uint32_t)n;
    return true;
}

static void reject_with(tm_backend *b, const char *fmt, const char *a, const char *c)
{
    b->gate_state = TOPOML_GATE_REJECTED;
    snprintf(b->gate_reason, sizeof b->gate_reason, fmt, a, c);
}

/* Interpret one finished child's report. */
static void read_report(topoml_context *ctx, tm_backend *b, const char *report, size_t len,
                        int status, bool timed_out)
{
    in_buf in = {report, len, 0, false};
    char stage[96] = "starting", reason[480];
    bool identity = false, refused = false, end = false;
    while (!in.bad && !end && in.at < in.len) {
        char type = in.p[in.at++];
        switch (type) {
        case 'S': get_text(&in, stage, sizeof stage, NULL); break;
        case 'R':
            if (get_text(&in, reason, sizeof reason, NULL))
                refused = true;
            break;
        case 'I':
            if (identity || !read_identity(ctx, &in, b))
                in.bad = true;
            identity = true;
            break;
        case 'E': end = true; break;
        default: in.bad = true;
        }
    }
    if (end && !in.bad && refused) {
        reject_with(b, "%s%s", reason, "");
        return;
    }
    if (end && !in.bad && identity)
        return;
    char what[200];
    if (in.bad || (end && !identity)) {
        reject_with(b, "the probe process sent a malformed report (in %s)%s", stage, "");
        return;
    }
    tm_describe_status(status, timed_out, TM_PROBE_TIMEOUT_S, what, sizeof what);
    reject_with(b, "the plugin's probe process %s, in %s", what, stage);
}

/* Does `b`'s report count for the cache: complete, and its probe said ok?
 * A probe that found no device may find one a minute later (a driver still
 * starting, a device busy), so only a probe that went well is kept; and
 * the host's own probe checks it before an enabled plugin runs
 * (registry.c). */
static bool worth_keeping(const tm_backend *b)
{
    return b->gate_state != TOPOML_GATE_REJECTED && b->probe_status == TOPOML_OK;
}

/* Give `b` the report kept for its file, if there is one for this core,
 * boot and environment and it reads as one worth keeping; else leave `b`
 * as it was (it is then probed in a child). */
static bool from_cache(topoml_context *ctx, tm_backend *b)
{
    char *report;
    size_t len;
    if (!tm_probe_cache_load(ctx, b, &report, &len))
        return false;
    /* Read into a copy: a report that does not count changes nothing. */
    tm_backend t = *b;
    read_report(ctx, &t, report, len, 0, false);
    if (!worth_keeping(&t)) {
        tm_free(ctx, report);
        if (t.probed != b->probed)
            tm_free(ctx, t.probed);
        if (t.name != b->name)
            tm_free(ctx, t.name);
        if (t.version != b->version)
            tm_free(ctx, t.version);
        if (t.vendor != b->vendor)
            tm_free(ctx, t.vendor);
        if (t.description != b->description)
            tm_free(ctx, t.description);
        return false;
    }
    *b = t;
    b->cached_report = report;
    b->cached_report_len = len;
    tm_log(ctx, TOPOML_LOG_INFO,
           "plugin %s: backend '%s' %s, ABI %u (probe report from the cache: probed before in a "
           "child process)",
           b->path, b->name, b->version, b->abi_version);
    return true;
}

void tm_probe_all(topoml_context *ctx)
{
    const uint32_t first = 1, count = ctx->n_backends - first; /* 0: the built-in reference */
    if (!count)
        return;
    tm_child *kids = tm_calloc(ctx, count, sizeof *kids);
    char helper[4096], why[512];
    bool have_helper = tm_find_helper(ctx, TM_PLUGIN_HOST, helper, sizeof helper);
    for (uint32_t i = 0; i < count; i++) {
        tm_backend *b = &ctx->backends[first + i];
        const bool queued = b->probe_queued;
        b->probe_queued = false;
        if (!queued || b->gate_state == TOPOML_GATE_REJECTED || from_cache(ctx, b))
            continue;
        if (!kids) {
            reject_with(b, "%s%s", "out of memory starting its probe process", "");
            continue;
        }
        if (!have_helper) {
            tm_helper_missing(ctx, TM_PLUGIN_HOST,
                              "plugins cannot be probed outside this process, so none is used "
                              "(the built-in reference still works)");
            reject_with(b,
                        "cannot probe it outside this process: " TM_PLUGIN_HOST " not found "
                        "(set plugin_host or TOPOML_PLUGIN_HOST)%s%s",
                        "", "");
            continue;
        }
        char policy[128], cache[4096];
        tm_probe_policy(b, policy, sizeof policy);
        tm_sandbox_cache_arg(ctx, cache, sizeof cache);
        char *argv[] = {helper, "--probe", "--sandbox", policy, cache, NULL};
        tm_sandbox_host_hold(); /* released when the probe has ended */
        if (tm_child_spawn(ctx, helper, argv, &b->fd, 1, &kids[i], why, sizeof why) != TOPOML_OK) {
            tm_sandbox_host_release();
            reject_with(b, "cannot start its probe process: %s%s", why, "");
        }
    }
    const double deadline = tm_now() + TM_PROBE_TIMEOUT_S;
    for (uint32_t i = 0; kids && i < count; i++) {
        tm_backend *b = &ctx->backends[first + i];
        if (!kids[i].pid)
            continue;
        char *report;
        size_t len;
        int status;
        bool timed_out;
        int finished = tm_child_finish(ctx, &kids[i], deadline, TM_PROBE_REPORT_MAX, &report,
                                       &len, &status, &timed_out);
        tm_sandbox_host_release();
        if (finished != TOPOML_OK) {
            reject_with(b, "%s%s", "out of memory reading its probe report", "");
            continue;
        }
        read_report(ctx, b, report, len, status, timed_out);
        if (worth_keeping(b))
            tm_probe_cache_store(ctx, b, report, len);
        tm_free(ctx, report);
        if (b->gate_state == TOPOML_GATE_REJECTED)
            tm_log(ctx, TOPOML_LOG_WARN, "plugin %s rejected: %s", b->path, b->gate_reason);
        else
            tm_log(ctx, TOPOML_LOG_INFO, "plugin %s: backend '%s' %s, ABI %u (probed in a child "
                   "process)", b->path, b->name, b->version, b->abi_version);
    }
    tm_free(ctx, kids);
}
