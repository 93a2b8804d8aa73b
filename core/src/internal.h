/*
 * internal.h — declarations shared by the core's own files (never installed).
 *
 * The context (context.c) owns the allocator, the error text, the log and
 * the limits; every other core file goes through the helpers declared here
 * so that fault injection, memory accounting and error reporting are the
 * same everywhere.
 */
#ifndef TOPOML_INTERNAL_H
#define TOPOML_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#include "topoml/plugin.h"
#include "topoml/topoml.h"

/* ---- the context (context.c) ---- */

/* Where plugin ops run (config key `isolation`, isolate_ops.c). */
enum tm_isolation { TM_ISOLATION_AUTO = 0, TM_ISOLATION_PROCESS = 1, TM_ISOLATION_NONE = 2 };

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
    bool select_cost;        /* `select: cost`: Rips by predicted time (calibrate.c) */
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

/* One backend the context knows (registry.c). */
typedef struct tm_backend {
    char *name, *version, *vendor, *description;
    char *path;                    /* NULL: built in */
    void *dl;                      /* dlopen handle, NULL: built in */
    const topoml_backend_v1 *vt;   /* NULL when rejected before negotiation;
                                      else &vt_copy */
    topoml_backend_v1 vt_copy;     /* the plugin's vtable, zero past its
                                      struct_size, so absent ops read NULL */
    void *state;
    uint32_t abi_version;
    bool created;
    bool duplicate;                /* same name as an earlier backend */
    int probe_status;
    char probe_message[256];
    uint32_t gate_state;           /* topoml_gate_state */
    char gate_reason[640];
    bool gate_pending;             /* DISABLED until certified on first use
                                      (gate: auto); see gate.c */
    const topoml_capability_v1 *caps;
    uint32_t n_caps;
    /* Loading (loader.c, isolate_probe.c, registry.c). */
    int fd;                        /* the plugin file, opened and checked once;
                                      -1 for the built-in backend */
    char file_sha256[65];          /* read from fd before the first probe
                                      (tm_loader_hash): what certificates bind */
    uint32_t op_mask;              /* 1u << op for every op pointer present */
    uint32_t selection;            /* topoml_selection of the vtable */
    void *probed;                  /* what the probe process reported:
                                      capability records and their strings,
                                      one allocation; caps points here until
                                      the plugin is loaded in this process */
    bool in_default_folder;        /* found in topoml's own plugin folder */
    bool isolated;                 /* vt is a proxy, state a tm_isolated:
                                      its ops run in a helper process */
    bool probe_queued;             /* to be probed by the next tm_probe_all */
    bool probed_here;              /* its probe has run (or it was rejected
                                      before one could) */
    bool brought_up;               /* given its gate state (registry.c) */
    char *cached_report;           /* the probe report it was given from the
                                      cache (probe_cache.c), kept until it is
                                      loaded in this process; NULL when a
                                      probe process reported */
    size_t cached_report_len;
    /* Run-time verification (verify.c): the largest input each kind of call
     * has been checked on against the reference, for this file and
     * certificate; loaded from the certificate cache on first need. */
    struct tm_envelope *envelope;
    uint32_t n_envelope;
    bool envelope_loaded;
    char cert_stamp[64];           /* the certificate's date and seed, "" if none */
    struct tm_cost_model *cost;    /* its Rips cost model (calibrate.c), NULL
                                      until selection by cost first needs it */
} tm_backend;

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
    uint32_t read_flags; /* TOPOML_READ_* (topoml_set_read_flags) */
    /* run-time verification (verify.c) */
    double verify_plugin_seconds; /* plugins' time on calls above the small size */
    double verify_ref_seconds;    /* re-runs of those calls on the reference */
    double verify_ratio;          /* reference time / plugin time, last re-run */
    uint64_t verify_rng;
    uint64_t verify_reruns, verify_rejections;
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

/* The smallest of physical memory, RLIMIT_AS and the cgroup's memory limit
 * (machine_memory.c); 0 when none is known. `source` gets which one it was.
 * The _at form reads the cgroup from other paths (for tests). */
uint64_t tm_machine_memory(char *source, size_t source_size);
uint64_t tm_machine_memory_at(const char *proc_cgroup, const char *sys_root, char *source,
                              size_t source_size);

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

/* ---- registry, loader, gate (registry.c, loader.c, gate.c) ---- */

/* Register the built-in scalar backend, then discover plugin files: checked
 * (loader.c), not probed. */
int tm_registry_init(topoml_context *ctx);
/* Probe every plugin file found (each in a child process, all at once),
 * give each its gate state and load what the gate enables; once per
 * context, on the first need: listing the backends (topoml_backend_get),
 * an automatic selection that looks past the entries of `prefer`, data in
 * device memory. */
void tm_registry_probe(topoml_context *ctx);
/* What a call that names backend `name` needs (topoml_use_backend, an
 * entry of `prefer`): nothing for the built-in reference; else the files
 * named topoml-backend-<name>.so are probed first, and every other one only
 * if none of them turns out to be `name`. */
void tm_registry_probe_name(topoml_context *ctx, const char *name);
void tm_registry_free(topoml_context *ctx);
/* Load every topoml-backend-*.so in the search path into the registry. */
void tm_loader_discover(topoml_context *ctx);
/* Is the plugin file at `path` named for backend `name`
 * (topoml-backend-<name>.so)? */
bool tm_loader_file_is_for(const char *path, const char *name);
/* Walk the search path without loading anything: fn gets every plugin file
 * the loader would open, in its order (topoml-conformance lists plugins this
 * way so that a broken one cannot crash it). */
typedef void (*tm_plugin_file_fn)(topoml_context *ctx, const char *path, void *user);
void tm_loader_each_file(topoml_context *ctx, tm_plugin_file_fn fn, void *user);
/* A file or folder we load code or certificates from must be owned by us
 * or root and not writable by group or others; false with the reason. */
bool tm_path_is_safe(const char *path, bool want_dir, char *why, size_t why_size);
/* Does this code run from libtopoml's build tree (not an installed copy)? */
bool tm_in_build_tree(void);
/* Open one plugin file once (O_NOFOLLOW | O_CLOEXEC) into b->fd and check
 * the owner and mode of the file and of every folder up to the root on that
 * descriptor; else `b` is rejected with the reason. Runs no plugin code and
 * reads nothing of the file. */
void tm_loader_check(topoml_context *ctx, const char *path, tm_backend *b);
/* Read the SHA-256 of the checked file from b->fd into b->file_sha256
 * (what certificates bind; once, before the file is first probed); `b` is
 * rejected if the file cannot be read. */
void tm_loader_hash(topoml_context *ctx, tm_backend *b);
/* dlopen the checked file through /proc/self/fd/<b->fd> and negotiate; on
 * success fills b->vt, else `b` is rejected with its reason. This runs the
 * plugin's code in this process. */
void tm_loader_negotiate(topoml_context *ctx, tm_backend *b);
/* tm_loader_check then tm_loader_negotiate (the conformance runner's child
 * and the probe helper load plugins this way). Never fails the context. */
void tm_loader_open(topoml_context *ctx, const char *path, tm_backend *b);
/* Is the open file `fd` safe to load code (or a certificate) from: a regular
 * file owned by us or root, not writable by group or others, and every
 * folder that holds it, up to the root, owned by us or root and not writable
 * by group or others unless sticky? Checked on descriptors, so it describes
 * the very file opened. `real` gets its path; false with the reason. */
bool tm_fd_is_safe(int fd, char *real, size_t real_size, char *why, size_t why_size);
/* "distances", "edges", "h0", "rips", "image". */
const char *tm_op_name(uint32_t op);
/* Create, probe and read the capability records of a negotiated backend
 * (registry.c). Returns TOPOML_OK; the probe's status when the probe fails
 * (the gate then calls the backend unsupported); or another error, with the
 * backend REJECTED and the reason set. No gate decision is made here: the
 * conformance runner uses this to start a plugin outside any gate. */
int tm_backend_start(topoml_context *ctx, tm_backend *b);
/* Does one of these capability records cover `op` for this input (NULL:
 * any) and, for rips, this dimension and modulus? */
bool tm_caps_cover(const topoml_capability_v1 *caps, uint32_t n_caps, uint32_t op,
                   const topoml_input_v1 *in, uint32_t max_dim, uint32_t modulus);
/* ... by a record that also says every TOPOML_CAP_* bit of `features`. */
bool tm_caps_cover_features(const topoml_capability_v1 *caps, uint32_t n_caps, uint32_t op,
                            const topoml_input_v1 *in, uint32_t max_dim, uint32_t modulus,
                            uint32_t features);
/* Does a RIPS capability record among `caps` say TOPOML_CAP_GENERATORS? */
bool tm_caps_generators(const topoml_capability_v1 *caps, uint32_t n_caps);
/* What the registry keeps of a backend, however it was learnt (a loaded
 * vtable, registry.c; a probe process's report, isolate_probe.c): the ops
 * its vtable has, as 1 << TOPOML_OP_* bits; its identity strings (copied;
 * NULL version, vendor or description as ""); whether a name is one a
 * backend may have ([a-z0-9-]+, at most 48 characters; loader.c). */
uint32_t tm_op_mask(const topoml_backend_v1 *vt);
int tm_set_identity(topoml_context *ctx, tm_backend *b, const char *name, const char *version,
                    const char *vendor, const char *description);
bool tm_valid_backend_name(const char *name);
/* Decide the gate state of a probed backend. */
void tm_gate_apply(topoml_context *ctx, tm_backend *b);
/* tm_select is about to use a backend whose gate decision was left for
 * first use: certify it now (gate: auto). true when it is now ENABLED;
 * otherwise its state and reason say why not. */
bool tm_gate_first_use(topoml_context *ctx, tm_backend *b);
/* Choose the backend for `op` (registry.c): TOPOML_OK and *out, or the
 * error (TOPOML_E_GATE, _UNSUPPORTED, _NOT_FOUND) with its message set. */
int tm_select(topoml_context *ctx, uint32_t op, const topoml_input_v1 *in, uint32_t max_dim,
              uint32_t modulus, tm_backend **out);

/* ---- child processes (isolate.c, isolate_probe.c) ---- */

/* The helper program that runs plugin code outside the host. */
#define TM_PLUGIN_HOST "topoml-plugin-host"
/* Seconds a plugin may take to load, negotiate, create and probe. */
#define TM_PROBE_TIMEOUT_S 30.0
/* The largest probe report read, from a probe process or the cache. */
#define TM_PROBE_REPORT_MAX (1u << 20)

/* Find one of topoml's programs: next to the running program, in the bin
 * folder beside an installed libtopoml.so, in the build tree when this code
 * runs from there, else in the configured bindir. Only a
 * regular executable file of ours or root's, not writable by group or
 * others, counts. */
bool tm_find_helper(const char *name, char *out, size_t size);

/* A helper process started with posix_spawn (safe in a multi-threaded host:
 * no fork of the host's state), in its own process group, stdin, stdout and
 * stderr on /dev/null, signals at their defaults; `fds[k]` becomes its
 * descriptor 3 + k and the write end of a report pipe 3 + n_fds; nothing
 * else of the host is inherited. */
typedef struct tm_child {
    int pid;     /* 0: none */
    int report;  /* read end of the report pipe */
} tm_child;
int tm_child_spawn(topoml_context *ctx, const char *program, char *const argv[],
                   const int *fds, int n_fds, tm_child *out, char *why, size_t why_size);
/* Read the child's report until the pipe closes, at most
 * `max` bytes, until `deadline` (CLOCK_MONOTONIC seconds); then end the
 * child: kill its process group if it has not exited, and reap it. *status
 * is the wait status, or -1 when unknown (reaped elsewhere); *timed_out says
 * whether the deadline passed. The report is tm_alloc'd. */
int tm_child_finish(topoml_context *ctx, tm_child *c, double deadline, size_t max, char **report,
                    size_t *len, int *status, bool *timed_out);
double tm_now(void);
/* "died of signal 11 (Segmentation fault)", "exited with status 0", ... */
void tm_describe_status(int status, bool timed_out, double timeout_s, char *out, size_t size);

/* Probe plugins in child processes (isolate_probe.c): start one child per
 * checked backend marked probe_queued (the mark is cleared), then collect every report:
 * identity, ABI, op pointers, probe result and capability records are
 * copied into the backend (caps into b->probed); a plugin that crashes,
 * exits, hangs or misbehaves is rejected with the reason. */
void tm_probe_all(topoml_context *ctx);
/* The child's side (the helper program): load the plugin on descriptor
 * `plugin_fd`, negotiate, create, probe, read the capability records, and
 * write the report to `out_fd`. Returns the helper's exit status. */
int tm_probe_serve(int plugin_fd, int out_fd);
/* Probe reports kept between processes (probe_cache.c), in the cache
 * folder (tm_cache_dir), one file per plugin file, bound to its SHA-256,
 * this core, the boot and the environment. All three do nothing under
 * `probe_cache: false` or without a cache folder, and a failure to read or
 * write is a cache miss, never an error.
 * _load: the report kept for b's file under this binding, its bytes
 * tm_alloc'd into *report (the caller reads them as untrusted, like a
 * probe process's); false when there is none that matches.
 * _store: keep the report a probe process wrote for b's file (written
 * atomically, mode 0600).
 * _forget: remove the report kept for b's file. */
bool tm_probe_cache_load(topoml_context *ctx, const tm_backend *b, char **report, size_t *len);
void tm_probe_cache_store(topoml_context *ctx, const tm_backend *b, const char *report,
                          size_t len);
void tm_probe_cache_forget(topoml_context *ctx, const tm_backend *b);
/* Load an enabled plugin in this process (registry.c): dlopen through its
 * descriptor, negotiate, create, probe, capabilities. false when that
 * failed (the backend is then rejected with the reason). */
bool tm_backend_load(topoml_context *ctx, tm_backend *b);
/* ---- run-time verification (verify.c) ---- */

/* What the core notes before a plugin's call: when it started and a hash of
 * the input (which the plugin must leave alone). */
typedef struct tm_verify_call {
    double start;
    uint64_t input_hash;
    uint32_t threads; /* the threads the call lets the plugin use (0 asked: every CPU) */
    int32_t device;   /* the accelerator the call names (-1: the plugin's default) */
} tm_verify_call;

void tm_verify_begin(topoml_context *ctx, const tm_backend *b, const topoml_input_v1 *in,
                     const topoml_call_v1 *call, tm_verify_call *vc);
/* After backend `b` answered an op with TOPOML_OK: check the answer and, as
 * the policy says, re-run it on the built-in reference. A plugin's wrong
 * answer is replaced by the reference's (the caller sees TOPOML_OK and the
 * right answer), `b` is rejected for the context, its certificate revoked
 * and a warning logged. Errors: TOPOML_E_PLUGIN when the plugin changed its
 * input (nothing right can be computed from it any more), or the
 * reference's own error. The built-in reference itself is never checked. */
int tm_verify_distances(topoml_context *ctx, tm_backend **b, const topoml_input_v1 *in,
                        const tm_verify_call *vc, void *out, uint64_t count, bool guard_ok);
int tm_verify_edges(topoml_context *ctx, tm_backend **b, const topoml_input_v1 *in,
                    const tm_verify_call *vc, double threshold, topoml_edge **edges,
                    uint64_t *n_edges);
/* Under automatic choice (no backend named), a plugin whose op failed —
 * any status but a cancel or the memory limit — does not end the call: the
 * reference computes it instead, and the failure is logged as a warning
 * (ops.c). Returns the reference to run, or NULL when the failure is the
 * caller's to see (a backend named, the reference's own, a cancel, the
 * limit). */
tm_backend *tm_fallback_after_failure(topoml_context *ctx, const tm_backend *b, uint32_t op,
                                      int rc, const char *msg);
/* The same for the finished dimensions 0..res->max_dim of a call that
 * stopped early (the memory limit; a cancel: no re-run then). */
int tm_verify_partial_barcode(topoml_context *ctx, tm_backend **b, uint32_t op,
                              const topoml_input_v1 *in, const tm_verify_call *vc,
                              const topoml_rips_params_v1 *params, topoml_barcode_v1 *res,
                              bool cancelled);
/* Persistence images (image.c): the diagrams' hash before the call, and
 * the same checks after it (finite, non-negative pixels; re-runs as above,
 * pixel by pixel within the suite's bound). */
void tm_verify_image_begin(const tm_backend *b, uint64_t n_diagrams, const uint64_t *offsets,
                           const topoml_pair *pairs, tm_verify_call *vc);
int tm_verify_image(topoml_context *ctx, tm_backend **b, const topoml_image_params_v1 *p,
                    uint64_t n_diagrams, const uint64_t *offsets, const topoml_pair *pairs,
                    const tm_verify_call *vc, double *out);
/* op TOPOML_OP_RIPS (params) or TOPOML_OP_H0 (params->threshold only). */
int tm_verify_barcode(topoml_context *ctx, tm_backend **b, uint32_t op, const topoml_input_v1 *in,
                      const tm_verify_call *vc, const topoml_rips_params_v1 *params,
                      topoml_barcode_v1 *res);
/* Mark the certificate of `b` failed ("revoked at run time: why"), so that no
 * context enables it again until something it is bound to changes (gate.c). */
void tm_gate_revoke(topoml_context *ctx, const tm_backend *b, const char *why);

/* Out-of-process execution of a plugin's ops (isolate_ops.c). Should this
 * enabled plugin run in a helper process (config `isolation`)? */
bool tm_isolation_wanted(const topoml_context *ctx, const tm_backend *b);
/* Give `b` a proxy vtable whose ops run in a helper process, started on
 * first use; nothing of the plugin is loaded here. */
int tm_isolation_attach(topoml_context *ctx, tm_backend *b);
/* Stop the helper and free the proxy's state. */
void tm_isolation_detach(topoml_context *ctx, tm_backend *b);
/* The helper's side: the plugin on `plugin_fd`, requests on `sock`, the
 * plugin's stdout to `stdout_fd`. Returns the helper's exit status. */
int tm_isolation_serve(int plugin_fd, int sock, int stdout_fd);
#define TM_ISOLATION_TIMEOUT_S 600.0

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

/* Read one data set in `format` from `f`; `name` is used in messages
 * ("name:line: reason"). On success *out is filled (arrays from tm_alloc); on
 * failure nothing is left allocated and the context holds the message. */
int tm_read_data(topoml_context *ctx, FILE *f, const char *name, topoml_format format,
                 struct topoml_data *out);

/* ---- edge collapse (collapse.c) ---- */

/* What the probe of a collapse with a minimum share to remove saw. */
typedef struct tm_collapse_probe {
    bool declined;     /* the list was left as it is */
    uint64_t size;     /* the edges the rule is about: the longest tenth, at
                          least 1000 (all, when fewer) */
    uint64_t examined; /* of those, looked at before the decision */
    uint64_t removed;  /* of those, removed */
    /* how it ran: threads (1: the calling thread alone), batches of
     * look-ahead, and the edges whose look-ahead was stale and done again */
    unsigned threads;
    uint64_t batches, redone;
    uint64_t alone; /* edges left to the calling thread alone once the
                       look-ahead was mostly redone */
} tm_collapse_probe;

/* Collapse the flag filtration of `edges` (sorted by (d, i, j), i < j < n)
 * in place: on return its first *n_out entries are the edges that remain,
 * with their new values, and the flag filtration they span has the barcode
 * of the original in every dimension. probe->declined (and the list left as
 * it is) when fewer than min_removed of the longest tenth of the edges go
 * (0: never declines; decided early when that is clear: collapse.c), or an
 * edge is repeated. TOPOML_E_LIMIT / _NOMEM when the working memory cannot
 * be had. With threads > 1 (at most 64; from 20 000 edges) the dominator
 * searches run on that many threads and the result is the same, edge for
 * edge, as on one (collapse.c, "In parallel"). */
int tm_collapse_edges(topoml_context *ctx, uint64_t n, topoml_edge *edges, uint64_t n_edges,
                      double min_removed, unsigned threads, uint64_t *n_out,
                      tm_collapse_probe *probe);

/* The order tm_collapse_edges wants its edges in: by (d, i, j), for qsort. */
int tm_collapse_edge_cmp(const void *a, const void *b);

/* The CPUs this process may run on (sched_getaffinity), at least 1. */
unsigned tm_cpus_available(void);
/* The threads a call asking for `asked` may use, as plugins read
 * call->n_threads: 0 is every CPU the process may run on, and never more
 * than those. */
unsigned tm_threads_allowed(unsigned asked);

/* ---- The size rule of TOPOML_COLLAPSE_AUTO (collapse.c) ---- */
/* What the rule decides from: the complex's sizes, known before any of the
 * collapse's own work. */
typedef struct tm_collapse_sizes {
    uint64_t n;       /* vertices */
    uint64_t m;       /* edges within the threshold */
    double sum_deg2;  /* sum over the vertices of deg(v)^2 at the threshold;
                         4 m^2 / n (its least value) when not counted */
    uint32_t max_dim; /* the highest homology dimension asked for */
} tm_collapse_sizes;

/* The rule's estimates, in seconds of one core of the machines measured
 * (docs/notes/bench-cpu.md, "Round 12"): what the collapse would cost, and
 * what the reduction it could shorten costs without it. `worth`: the
 * collapse could pay (collapse_s below reduction_s); the probe then decides
 * from what it removes. */
typedef struct tm_collapse_plan {
    bool worth;
    double collapse_s, reduction_s;
} tm_collapse_plan;

tm_collapse_plan tm_collapse_plan_for(const tm_collapse_sizes *s);

/* A Rips input after the edge collapse. */
typedef struct tm_collapsed {
    bool done;         /* false: nothing collapsed, run the input as it is */
    double threshold;  /* min(threshold, enclosing radius): what the backend gets */
    topoml_edge *edges; /* tm_alloc'd, n_edges of them (unsorted) */
    uint64_t n_edges;
    uint64_t n_before; /* edges within the threshold before the collapse (a
                          sampled estimate when the size rule decided first) */
    tm_collapse_probe probe; /* what the probe saw (min_removed > 0) */
    /* With max_dim > 0 and min_removed > 0: the size rule's verdict (and
     * planned: it was asked); not worth it leaves done false and the probe
     * unrun. */
    bool planned;
    tm_collapse_plan plan;
} tm_collapsed;

/* Sorts edges[0 .. m) by tm_collapse_edge_cmp, qsort's order exactly: a
 * merge sort when a second buffer of m edges fits under the memory limit,
 * on up to `threads` threads from 2^16 edges (slices sorted, then merged
 * two by two); qsort on the calling thread otherwise. */
void tm_collapse_sort_edges(topoml_context *ctx, topoml_edge *edges, uint64_t m,
                            unsigned threads);

/* The edges of `d` within min(threshold, enclosing radius) — the complex the
 * Rips engine would build — collapsed. out->done is false (and the input is
 * to be used as it is) for fewer than 3 points, for input the engine
 * refuses, so that the backend reports it, and when the collapse declines
 * (min_removed, as tm_collapse_edges), and with min_removed > 0 and
 * max_dim > 0 when tm_collapse_plan_for says the collapse cannot pay for
 * homology up to max_dim (0: no size rule). `threads`: the op's threads; the
 * edges are sorted on them from 2, the collapse itself runs on them from 4
 * (on one below, and on one for a graph of more than a quarter of all
 * pairs). */
int tm_collapse_input(topoml_context *ctx, const struct topoml_data *d, uint32_t metric,
                      double threshold, double min_removed, uint32_t max_dim, unsigned threads,
                      tm_collapsed *out);

/* ---- Selection by cost (calibrate.c; registry.c's tm_select) ---- */
/* seconds = a + b * work */
typedef struct tm_cost_fit {
    double a, b;
} tm_cost_fit;
/* A backend's Rips model on this machine: fitted on one thread and on
 * `threads` (what calls may use: tm_threads_allowed of the configuration). */
typedef struct tm_cost_model {
    unsigned threads;
    tm_cost_fit one, all;
    char source[32]; /* "calibrated now" or "calibration record" */
} tm_cost_model;

/* What the cost model is fed: the reduction's estimated cost (the collapse's
 * size rule, tm_collapse_plan_for) plus the edges' and points' own. */
double tm_rips_work(uint64_t n, uint64_t m, uint32_t max_dim);
/* b's model: from its record in the cache folder when that still holds
 * (same plugin file, core, CPU and thread count), else calibrated now (a
 * few timed Rips calls) and the record written. NULL when a calibration
 * call fails or memory runs out: b is then left out of the comparison. */
const tm_cost_model *tm_cost_model_of(topoml_context *ctx, tm_backend *b);
/* Edges of `d` within `threshold` (collapse.c): counted for sparse input,
 * every pair for no threshold or data in device memory, else estimated
 * from 4096 pairs drawn by a fixed generator (every pair when fewer). */
uint64_t tm_edges_estimate(const struct topoml_data *d, uint32_t metric, double threshold);
/* Predicted seconds of a call of `work` on `threads` (0: all). */
double tm_cost_predict(const tm_cost_model *m, double work, unsigned threads);
/* Parse a calibration record for b and `threads`: false, with why, when it
 * is damaged or bound to another plugin file, core, CPU or thread count. */
bool tm_calibration_parse(const tm_backend *b, unsigned threads, const char *text, size_t len,
                          tm_cost_model *m, char *why, size_t why_size);

#endif /* TOPOML_INTERNAL_H */
