/*
 * api/api.h — the context and its services, the configuration and the data
 * sets: what every folder of the core builds on (never installed).
 *
 * The context (context.c) owns the allocator, the error text, the log and
 * the limits; every other core file goes through the helpers declared here
 * so that fault injection, memory accounting and error reporting are the
 * same everywhere. The folders' own headers (io/io.h, gate/gate.h,
 * compute/compute.h, ...) include this one.
 *
 * Outside core/: the tests, conformance/ (generate.c and subject.c read
 * the values of a parsed data set and build calls for a plugin) and
 * tools/cli/topoml_conformance.c (the context's allocator) include it;
 * nothing installed does.
 */
#ifndef TOPOML_API_H
#define TOPOML_API_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#include "topoml/plugin.h"
#include "topoml/topoml.h"

/* ---- the context (context.c) ---- */

/* Where plugin ops run (config key `isolation`, isolate_ops.c). */
enum tm_isolation { TM_ISOLATION_AUTO = 0, TM_ISOLATION_PROCESS = 1, TM_ISOLATION_NONE = 2 };
/* The default of `isolation_timeout` (config.c): seconds one isolated call
 * may take. */
/* The most a call in a helper may take (`isolation_timeout`); each call's
 * own deadline comes from its size (gate/isolate_ops.c, call_timeout). */
#define TM_ISOLATION_TIMEOUT_S 600.0

/* Gate policies (config key `gate`). */
enum tm_gate_policy { TM_GATE_AUTO = 0, TM_GATE_STRICT = 1, TM_GATE_OFF = 2 };

/* A list of owned strings. */
typedef struct tm_strlist {
    char **items;
    size_t count;
} tm_strlist;

/* The configuration (config.c); every field has a default, so a context
 * works with no file at all. */
typedef struct tm_config {
    char *source;            /* file it came from, or NULL */
    tm_strlist plugin_paths; /* extra plugin folders, searched first */
    tm_strlist prefer;       /* backend preference, best first */
    tm_strlist enable;       /* plugins enabled before certification */
    tm_strlist disable;      /* plugins never enabled */
    uint64_t max_memory;     /* bytes, 0 = none */
    int gate;                /* enum tm_gate_policy */
    char *cache_dir;         /* certificates; NULL = $XDG_CACHE_HOME/topoml */
    int log_level;           /* -1: leave the context's level alone */
    int device;              /* accelerator index, -1 = plugin default */
    bool max_memory_set;     /* max_memory was given (then 0 = none) */
    uint32_t threads;        /* threads of multi-threaded backends, 0 = all cores */
    int isolation;           /* enum tm_isolation */
    double isolation_timeout; /* seconds one isolated call may take */
    int verify;              /* enum tm_verify_mode (verify.c) */
    double verify_share;     /* re-runs of large calls: this share of plugin time */
    bool probe_cache;        /* keep probe reports between processes (probe_cache.c) */
    bool select_cost;        /* `select: cost`: Rips by predicted time (gate/calibrate.c) */
    char *plugin_host;       /* the helper program topoml-plugin-host, or NULL: searched */
} tm_config;

/* Run-time verification (config key `verify`, verify.c). */
enum tm_verify_mode {
    TM_VERIFY_AUTO = 0,   /* invariants, spot checks, re-runs: every small call, large
                             ones within verify_share of the plugins' time */
    TM_VERIFY_ALWAYS = 1, /* ... and every call re-run on the reference */
    TM_VERIFY_CHECKS = 2, /* invariants and spot checks, no re-runs */
    TM_VERIFY_OFF = 3     /* invariants only */
};
#define TM_VERIFY_SHARE_DEFAULT 0.1

/* One backend the context knows: defined in gate/gate.h (registry.c). */
typedef struct tm_backend tm_backend;

struct topoml_context {
    topoml_allocator allocator;
    topoml_log_fn log_fn;
    void *log_user;
    int log_level;
    topoml_progress_fn progress_fn;
    void *progress_user;
    uint64_t max_memory;
    bool max_memory_set;
    uint32_t flags;
    char errmsg[1024];
    tm_config config;
    topoml_host_v1 host;
    tm_backend *backends;
    uint32_t n_backends;
    bool plugins_probed; /* tm_registry_probe has run */
    char *preferred; /* topoml_use_backend */
    char last_backend[64];
    char last_reason[512];
    uint64_t default_max_memory;    /* from the machine (machine_memory.c) */
    char default_max_memory_source[64];
    /* Log lines of level info or worse written while no log callback was
     * set (context creation: refused plugin folders, "gate is off"), kept
     * for topoml_set_log to replay; past TM_KEPT_LOGS only a count. */
    struct {
        int level;
        char text[256];
    } kept_logs[16];
    uint32_t n_kept_logs, n_dropped_logs;
    uint32_t helper_missing_said; /* tm_helper_missing warned already: 1 host, 2 other */
    bool progress_rerun; /* the reference is re-running a plugin's call (verify.c) */
    bool progress_rerun_cancelled; /* the caller said stop at "verifying on the reference" */
    uint32_t read_flags; /* TOPOML_READ_* (topoml_set_read_flags) */
    /* run-time verification (verify.c) */
    double verify_plugin_seconds; /* plugins' time on calls above the small size */
    double verify_ref_seconds;    /* re-runs of those calls on the reference */
    double verify_ratio;          /* reference time / plugin time, last re-run */
    uint64_t verify_rng;          /* from getrandom: nothing a plugin wrote */
    uint64_t verify_reruns, verify_rejections;
    /* the history-free checks (gate/verify_exact.c): the reference's seconds per
     * unit of tm_truncation_units, from the last truncated re-run (0: not
     * measured yet), and the counts of truncated and sampled re-runs */
    double verify_unit_seconds;
    uint64_t verify_truncated, verify_sampled;
    /* The sizes of the Rips call the next tm_select is for (ops.c sets them
     * under `select: cost`): edges within the threshold (0: unknown, taken
     * as every pair) and the call's threads (0: all). */
    uint64_t select_edges;
    uint32_t select_threads;
};
#define TM_KEPT_LOGS 16

/* Build the topoml_call_v1 for one op on this context. */
void tm_call_init(topoml_context *ctx, topoml_call_v1 *call, char *errbuf, size_t errbuf_size);

/* ---- context services (context.c) ---- */

/* Allocate through the context's allocator. NULL on failure; the caller then
 * reports TOPOML_E_NOMEM (tm_nomem does that). Sizes of 0 are allowed. */
void *tm_alloc(topoml_context *ctx, size_t size);
void *tm_calloc(topoml_context *ctx, size_t count, size_t size);
void *tm_realloc(topoml_context *ctx, void *ptr, size_t size);
void tm_free(topoml_context *ctx, void *ptr);
char *tm_strdup(topoml_context *ctx, const char *s);

/* Record an error message for the context and return `status`, so that a
 * failing path reads `return tm_error(ctx, TOPOML_E_PARSE, "%s:%zu: ...", ...)`. */
int tm_error(topoml_context *ctx, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int tm_nomem(topoml_context *ctx, size_t size);

/* A file name for a message: bytes outside printable ASCII as \xHH (a name
 * is untrusted bytes, like the data), at most about 200 of them. */
#define TM_NAME_BUF 840
const char *tm_escape_name(char *out, size_t size, const char *name);

/* Log through the context's log callback (never stdout). */
void tm_log(topoml_context *ctx, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The context's memory limit in bytes (0: none). Checked before allocating
 * anything that grows with the input: tm_check_memory reports TOPOML_E_LIMIT
 * with the estimate when `bytes` exceeds it. `what` names the allocation. */
uint64_t tm_max_memory(const topoml_context *ctx);
int tm_check_memory(topoml_context *ctx, uint64_t bytes, const char *what);
/* Where the limit comes from, for messages: "set by the caller", "max_memory
 * in FILE", "the default: the machine's physical memory" ... */
const char *tm_max_memory_source(const topoml_context *ctx, char *buf, size_t size);

/* The default memory limit: the smallest of TM_MEMORY_SHARE_PERCENT of the
 * memory available (MemAvailable; of physical memory without it),
 * RLIMIT_AS and the cgroup's memory limit (machine_memory.c); 0 when none
 * is known. `source` gets which one it was. The _at form reads the cgroup
 * and meminfo from other paths (for tests). */
#define TM_MEMORY_SHARE_PERCENT 50
uint64_t tm_machine_memory(char *source, size_t source_size);
uint64_t tm_machine_memory_at(const char *proc_cgroup, const char *sys_root, const char *meminfo,
                              char *source, size_t source_size);

/* The CPUs this process may run on (sched_getaffinity), at least 1; with
 * the rule below, in machine_memory.c. */
unsigned tm_cpus_available(void);
/* The threads a call asking for `asked` may use, as plugins read
 * call->n_threads: 0 is every CPU the process may run on, and never more
 * than those. */
unsigned tm_threads_allowed(unsigned asked);

/* Overflow-checked arithmetic: true when the result fits. */
static inline bool tm_mul_u64(uint64_t a, uint64_t b, uint64_t *out)
{
    return !__builtin_mul_overflow(a, b, out);
}
static inline bool tm_add_u64(uint64_t a, uint64_t b, uint64_t *out)
{
    return !__builtin_add_overflow(a, b, out);
}

/* ---- configuration (config.c) ---- */

/* Parse a YAML configuration file into *cfg (defaults first). Errors name
 * "file:line:column: reason": also a repeated key, a second document, an
 * alias, nesting deeper than TM_CONFIG_MAX_DEPTH and a file larger than
 * TM_CONFIG_MAX_BYTES. */
#define TM_CONFIG_MAX_BYTES (64u * 1024u)
#define TM_CONFIG_MAX_DEPTH 8
int tm_config_load(topoml_context *ctx, const char *path, tm_config *cfg);
void tm_config_defaults(tm_config *cfg);
void tm_config_clear(topoml_context *ctx, tm_config *cfg);
bool tm_strlist_has(const tm_strlist *list, const char *s);

/* ---- data sets (data.c, io_*.c) ---- */

/* The opaque topoml_data of the public API. Exactly one of the layouts is
 * used, as `kind` (topoml_input_kind) says; every array is owned. */
struct topoml_data {
    uint32_t kind;     /* TOPOML_INPUT_POINTS / _CONDENSED / _SPARSE */
    uint64_t n;        /* points or vertices */
    uint64_t dim;      /* POINTS: coordinates per point */
    double *values;    /* POINTS: n*dim row-major; CONDENSED: n(n-1)/2 */
    topoml_edge *edges; /* SPARSE: n_edges edges, i < j, no duplicates */
    uint64_t n_edges;
    uint32_t format;   /* the topoml_format it was read as; AUTO: made from memory */
    /* Device-resident data (topoml_data_from_device, device_data.c): memory
     * is not TOPOML_MEMORY_HOST, `values` is NULL and the caller's device
     * array is `device_values` (dtype `device_dtype`, not owned). */
    uint32_t memory;
    int32_t device;
    void *stream;
    const void *device_values;
    uint32_t device_dtype;
    _Atomic uint64_t host_copies; /* host copies made of it so far */
};

/* ---- device-resident data (device_data.c) ---- */

/* A host copy of device-resident `d` in *host (a data set of the same kind,
 * its values widened to double), made through the input_to_host entry of
 * the enabled backend that reads such memory; free it with
 * tm_data_host_release. Counts in d->host_copies. */
int tm_data_host_copy(topoml_context *ctx, const struct topoml_data *d, struct topoml_data *host);
void tm_data_host_release(topoml_context *ctx, struct topoml_data *host);
#endif /* TOPOML_API_H */
