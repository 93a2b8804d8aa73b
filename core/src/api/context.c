/*
 * context.c — the topoml_context: allocator, error text, log, limits, and
 * the services (allocation, errors, progress) the core hands to plugins
 * through topoml_host_v1 and topoml_call_v1.
 *
 * Not here: configuration parsing (config.c), plugin discovery (loader.c),
 * which backend runs what (registry.c, gate.c).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "gate/gate.h"

const char *topoml_version(void)
{
    return TOPOML_VERSION_STRING;
}

const char *topoml_strerror(int status)
{
    switch (status) {
    case TOPOML_OK: return "success";
    case TOPOML_E_INVALID: return "invalid argument or input";
    case TOPOML_E_NOMEM: return "out of memory";
    case TOPOML_E_UNSUPPORTED: return "not supported";
    case TOPOML_E_OVERFLOW: return "size or index overflow";
    case TOPOML_E_LIMIT: return "limit exceeded";
    case TOPOML_E_CANCELLED: return "cancelled";
    case TOPOML_E_IO: return "input/output error";
    case TOPOML_E_PARSE: return "parse error";
    case TOPOML_E_ABI: return "incompatible plugin ABI";
    case TOPOML_E_PLUGIN: return "plugin misbehaved";
    case TOPOML_E_DEVICE: return "device error";
    case TOPOML_E_NOT_FOUND: return "not found";
    case TOPOML_E_CONFIG: return "configuration error";
    case TOPOML_E_GATE: return "backend not enabled by the gate";
    case TOPOML_E_INTERNAL: return "internal error";
    }
    return "unknown status";
}

/* ---- default allocator ---- */

static void *default_alloc(void *user, size_t size)
{
    (void)user;
    return malloc(size ? size : 1);
}
static void *default_realloc(void *user, void *ptr, size_t size)
{
    (void)user;
    return realloc(ptr, size ? size : 1);
}
static void default_free(void *user, void *ptr)
{
    (void)user;
    free(ptr);
}

void *tm_alloc(topoml_context *ctx, size_t size)
{
    return ctx->allocator.alloc(ctx->allocator.user, size);
}

void *tm_calloc(topoml_context *ctx, size_t count, size_t size)
{
    uint64_t bytes;
    if (!tm_mul_u64(count, size, &bytes) || bytes > SIZE_MAX)
        return NULL;
    void *p = tm_alloc(ctx, (size_t)bytes);
    if (p)
        memset(p, 0, (size_t)bytes);
    return p;
}

void *tm_realloc(topoml_context *ctx, void *ptr, size_t size)
{
    if (!ptr)
        return tm_alloc(ctx, size);
    return ctx->allocator.realloc(ctx->allocator.user, ptr, size);
}

void tm_free(topoml_context *ctx, void *ptr)
{
    if (ptr)
        ctx->allocator.free(ctx->allocator.user, ptr);
}

void topoml_free(topoml_context *ctx, void *ptr)
{
    if (ctx)
        tm_free(ctx, ptr);
}

char *tm_strdup(topoml_context *ctx, const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *d = tm_alloc(ctx, n);
    if (d)
        memcpy(d, s, n);
    return d;
}

/* ---- errors and log ---- */

int tm_error(topoml_context *ctx, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx->errmsg, sizeof ctx->errmsg, fmt, ap);
    va_end(ap);
    tm_log(ctx, TOPOML_LOG_DEBUG, "error: %s", ctx->errmsg);
    return status;
}

const char *tm_escape_name(char *out, size_t size, const char *name)
{
    size_t k = 0, i = 0;
    if (!size)
        return out;
    for (; name[i] && i < 200 && k + 5 < size; i++) {
        unsigned char ch = (unsigned char)name[i];
        if (ch >= 0x20 && ch < 0x7f && ch != '\\') {
            out[k++] = (char)ch;
        } else {
            snprintf(out + k, size - k, "\\x%02x", ch);
            k += 4;
        }
    }
    if (name[i] && k + 4 < size)
        for (int d = 0; d < 3; d++)
            out[k++] = '.';
    out[k] = '\0';
    return out;
}

int tm_nomem(topoml_context *ctx, size_t size)
{
    return tm_error(ctx, TOPOML_E_NOMEM, "out of memory (allocating %zu bytes)", size);
}

void tm_log(topoml_context *ctx, int level, const char *fmt, ...)
{
    /* Without a callback (a context is made before its host can set one)
     * the line is kept for topoml_set_log, so that warnings given while the
     * context was made still reach someone. */
    const bool keep = !ctx->log_fn && level <= TOPOML_LOG_INFO;
    if (!keep && (!ctx->log_fn || level > ctx->log_level))
        return;
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (!keep) {
        ctx->log_fn(ctx->log_user, level, buf);
    } else if (ctx->n_kept_logs < TM_KEPT_LOGS) {
        ctx->kept_logs[ctx->n_kept_logs].level = level;
        char *text = ctx->kept_logs[ctx->n_kept_logs].text;
        const size_t room = sizeof ctx->kept_logs[0].text;
        memcpy(text, buf, room - 1); /* a longer line is cut */
        text[room - 1] = '\0';
        ctx->n_kept_logs++;
    } else {
        ctx->n_dropped_logs++;
    }
}

const char *topoml_errmsg(const topoml_context *ctx)
{
    return ctx ? ctx->errmsg : "no context";
}

void topoml_set_log(topoml_context *ctx, topoml_log_fn fn, void *user, int max_level)
{
    if (!ctx)
        return;
    ctx->log_fn = fn;
    ctx->log_user = user;
    ctx->log_level = max_level;
    if (!fn)
        return;
    /* Replay what was logged before there was anyone to tell, once. */
    uint32_t dropped_warnings = 0;
    for (uint32_t i = 0; i < ctx->n_kept_logs; i++)
        if (ctx->kept_logs[i].level <= max_level)
            fn(user, ctx->kept_logs[i].level, ctx->kept_logs[i].text);
    if (ctx->n_dropped_logs)
        dropped_warnings = ctx->n_dropped_logs;
    ctx->n_kept_logs = 0;
    ctx->n_dropped_logs = 0;
    if (dropped_warnings && max_level >= TOPOML_LOG_INFO) {
        char line[128];
        snprintf(line, sizeof line, "%u more log lines from before the log was set were dropped",
                 dropped_warnings);
        fn(user, TOPOML_LOG_INFO, line);
    }
}

void topoml_set_progress(topoml_context *ctx, topoml_progress_fn fn, void *user)
{
    if (!ctx)
        return;
    ctx->progress_fn = fn;
    ctx->progress_user = user;
}

/* ---- limits ---- */

void topoml_set_max_memory(topoml_context *ctx, uint64_t bytes)
{
    if (!ctx)
        return;
    ctx->max_memory = bytes;
    ctx->max_memory_set = true;
}

uint64_t topoml_get_max_memory(const topoml_context *ctx)
{
    return ctx ? tm_max_memory(ctx) : 0;
}

/* The caller's limit, else the configuration's, else the machine's. */
uint64_t tm_max_memory(const topoml_context *ctx)
{
    if (ctx->max_memory_set)
        return ctx->max_memory;
    if (ctx->config.max_memory_set)
        return ctx->config.max_memory;
    return ctx->default_max_memory;
}

const char *tm_max_memory_source(const topoml_context *ctx, char *buf, size_t size)
{
    if (ctx->max_memory_set)
        snprintf(buf, size, "set by the caller: topoml_set_max_memory, --max-memory");
    else if (ctx->config.max_memory_set)
        snprintf(buf, size, "max_memory in %s",
                 ctx->config.source ? ctx->config.source : "the configuration");
    else
        snprintf(buf, size, "the default: %s", ctx->default_max_memory_source);
    return buf;
}

int tm_check_memory(topoml_context *ctx, uint64_t bytes, const char *what)
{
    uint64_t limit = tm_max_memory(ctx);
    char src[320];
    if (limit && bytes > limit)
        return tm_error(ctx, TOPOML_E_LIMIT,
                        "%s needs about %llu bytes (%.1f MiB), more than the memory limit of "
                        "%llu bytes (%.1f MiB, %s; raise it with max_memory in the "
                        "configuration, --max-memory or topoml_set_max_memory)",
                        what, (unsigned long long)bytes, bytes / 1048576.0,
                        (unsigned long long)limit, limit / 1048576.0,
                        tm_max_memory_source(ctx, src, sizeof src));
    return TOPOML_OK;
}

int topoml_check_memory(topoml_context *ctx, uint64_t bytes, const char *what)
{
    if (!ctx)
        return TOPOML_E_INVALID;
    return tm_check_memory(ctx, bytes, what ? what : "this buffer");
}

/* ---- services handed to plugins ---- */

static void *host_alloc(void *data, size_t size)
{
    return tm_alloc(data, size);
}
static void *host_realloc(void *data, void *ptr, size_t size)
{
    return tm_realloc(data, ptr, size);
}
static void host_free(void *data, void *ptr)
{
    tm_free(data, ptr);
}
static void host_log(void *data, int level, const char *message)
{
    tm_log(data, level, "%s", message);
}
static int host_progress(void *data, const char *stage, uint64_t done, uint64_t total)
{
    topoml_context *ctx = data;
    if (!ctx->progress_fn)
        return 0;
    if (ctx->progress_rerun) {
        /* A caller that said stop at "verifying on the reference" hears
         * nothing more of the re-run: it ends at its next report. */
        if (ctx->progress_rerun_cancelled)
            return 1;
        /* The reference re-running a plugin's call: said in each stage. */
        char s[160];
        snprintf(s, sizeof s, "verifying on the reference: %.120s", stage);
        return ctx->progress_fn(ctx->progress_user, s, done, total);
    }
    return ctx->progress_fn(ctx->progress_user, stage, done, total);
}

void tm_progress_rerun(topoml_context *ctx, bool on)
{
    ctx->progress_rerun = on;
    if (on)
        ctx->progress_rerun_cancelled =
            ctx->progress_fn &&
            ctx->progress_fn(ctx->progress_user, "verifying on the reference", 0, 0) != 0;
}

void tm_call_init(topoml_context *ctx, topoml_call_v1 *call, char *errbuf, size_t errbuf_size)
{
    memset(call, 0, sizeof *call);
    call->struct_size = sizeof *call;
    call->host_data = ctx;
    call->alloc = host_alloc;
    call->realloc = host_realloc;
    call->free = host_free;
    call->log = host_log;
    call->progress = host_progress;
    call->max_memory = tm_max_memory(ctx);
    call->error = errbuf;
    call->error_size = errbuf_size;
    call->device = ctx->config.device;
    call->n_threads = ctx->config.threads;
    if (errbuf && errbuf_size)
        errbuf[0] = '\0';
}

/* ---- life cycle ---- */

int topoml_context_new(topoml_context **out, const topoml_context_options *opts)
{
    if (!out)
        return TOPOML_E_INVALID;
    *out = NULL;
    topoml_context_options o = {0};
    if (opts) {
        if (opts->struct_size < offsetof(topoml_context_options, allocator))
            return TOPOML_E_INVALID;
        memcpy(&o, opts, opts->struct_size < sizeof o ? opts->struct_size : sizeof o);
    }
    topoml_allocator a = {default_alloc, default_realloc, default_free, NULL};
    if (o.struct_size > offsetof(topoml_context_options, allocator) && o.allocator) {
        if (!o.allocator->alloc || !o.allocator->realloc || !o.allocator->free)
            return TOPOML_E_INVALID;
        a = *o.allocator;
    }
    topoml_context *ctx = a.alloc(a.user, sizeof *ctx);
    if (!ctx)
        return TOPOML_E_NOMEM;
    memset(ctx, 0, sizeof *ctx);
    ctx->allocator = a;
    ctx->flags = o.flags;
    ctx->log_level = TOPOML_LOG_WARN;
    tm_config_defaults(&ctx->config);
    ctx->default_max_memory = tm_machine_memory(ctx->default_max_memory_source,
                                                sizeof ctx->default_max_memory_source);

    ctx->host.struct_size = sizeof ctx->host;
    ctx->host.abi_version = TOPOML_ABI_VERSION;
    ctx->host.host_data = ctx;
    ctx->host.alloc = host_alloc;
    ctx->host.realloc = host_realloc;
    ctx->host.free = host_free;
    ctx->host.log = host_log;
    ctx->host.core_version = TOPOML_VERSION_STRING;

    *out = ctx;

    /* The environment is ignored for setuid/setgid programs: secure_getenv
     * returns NULL there. */
    const char *config = o.config_path;
    if (!config && !(ctx->flags & TOPOML_CTX_NO_ENV))
        config = secure_getenv("TOPOML_CONFIG");
    if (config && *config) {
        int rc = tm_config_load(ctx, config, &ctx->config);
        if (rc != TOPOML_OK)
            return rc;
        if (ctx->config.gate == TM_GATE_OFF)
            tm_log(ctx, TOPOML_LOG_WARN,
                   "gate is off (%s): every plugin that probes ok runs user work without a "
                   "certificate; for plugin development only",
                   config);
        /* Every other setting that weakens the gate is said as loudly, on
         * every command: a configuration left behind must not go unnoticed. */
        if (ctx->config.verify == TM_VERIFY_CHECKS || ctx->config.verify == TM_VERIFY_OFF)
            tm_log(ctx, TOPOML_LOG_WARN,
                   "verify: %s (%s): plugins' answers are %s; a wrong answer of a certified "
                   "plugin can reach the caller",
                   ctx->config.verify == TM_VERIFY_OFF ? "off" : "checks", config,
                   ctx->config.verify == TM_VERIFY_OFF
                       ? "only checked for well-formedness, never re-run on the reference"
                       : "checked but never re-run on the reference");
        if (ctx->config.enable.count) {
            char names[256];
            size_t used = 0;
            names[0] = '\0';
            for (size_t i = 0; i < ctx->config.enable.count && used < sizeof names; i++) {
                int w = snprintf(names + used, sizeof names - used, "%s%s", i ? ", " : "",
                                 ctx->config.enable.items[i]);
                used = w > 0 ? used + (size_t)w : sizeof names;
            }
            tm_log(ctx, TOPOML_LOG_WARN,
                   "enable: [%s] (%s): these plugins run without a certificate when they have "
                   "none",
                   names, config);
        }
    }
    if (o.struct_size > offsetof(topoml_context_options, plugin_path) && o.plugin_path) {
        /* Caller-given folders come before the configuration's. */
        tm_strlist *l = &ctx->config.plugin_paths;
        const char *p = o.plugin_path;
        size_t extra = 1;
        for (const char *q = p; *q; q++)
            extra += *q == ':';
        char **items = tm_calloc(ctx, l->count + extra, sizeof *items);
        if (!items)
            return tm_nomem(ctx, (l->count + extra) * sizeof *items);
        size_t k = 0;
        while (*p) {
            const char *e = strchr(p, ':');
            size_t len = e ? (size_t)(e - p) : strlen(p);
            if (len) {
                items[k] = tm_alloc(ctx, len + 1);
                if (!items[k]) {
                    for (size_t m = 0; m < k; m++)
                        tm_free(ctx, items[m]);
                    tm_free(ctx, items);
                    return tm_nomem(ctx, len + 1);
                }
                memcpy(items[k], p, len);
                items[k++][len] = '\0';
            }
            p += len + (e ? 1 : 0);
        }
        for (size_t m = 0; m < l->count; m++)
            items[k++] = l->items[m];
        tm_free(ctx, l->items);
        l->items = items;
        l->count = k;
    }
    return tm_registry_init(ctx);
}

void topoml_context_free(topoml_context *ctx)
{
    if (!ctx)
        return;
    tm_registry_free(ctx);
    tm_config_clear(ctx, &ctx->config);
    tm_free(ctx, ctx->preferred);
    topoml_allocator a = ctx->allocator;
    a.free(a.user, ctx);
}
