/*
 * gate/gate_internal.h — what the gate's own files share (never installed):
 * the loader's checks of plugin files, the start of a backend, the child
 * processes that probe plugins and run their ops (isolate*.c), the probe
 * cache and the revocation of a certificate. The rest of the core uses
 * gate.h.
 *
 * Outside core/, beside the tests: the two programs that are the gate's
 * other half include it, tools/cli/topoml_plugin_host.c (the helper process:
 * tm_probe_serve, tm_isolation_serve) and the conformance suite
 * (conformance/subject.c and tools/cli/topoml_conformance.c load and start a
 * plugin as the loader does, tm_loader_check / tm_loader_negotiate /
 * tm_backend_start / tm_loader_each_file, but outside any gate: the suite
 * is what certifies).
 */
#ifndef TOPOML_GATE_INTERNAL_H
#define TOPOML_GATE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gate/gate.h"

/* ---- loader (loader.c) ---- */

/* Load every topoml-backend-*.so in the search path into the registry. */
void tm_loader_discover(topoml_context *ctx);
/* Is the plugin file at `path` named for backend `name`
 * (topoml-backend-<name>.so)? */
bool tm_loader_file_is_for(const char *path, const char *name);
/* The backend name a plugin file's name gives (topoml-backend-NAME.so), read
 * before any of its code runs: false when it is not of that form. */
bool tm_loader_file_name(const char *path, char *out, size_t size);
/* Is `name` one of the plugins shipped with topoml (isolate_ops.c)? Only
 * the file in topoml's own plugin folder may take it. */
bool tm_is_shipped_name(const char *name);
/* Does topoml's own plugin folder (the build tree's, or the installed one
 * beside this code) exist? Without one (a static host outside any prefix)
 * no name is reserved: there is no shipped plugin to take it from. */
bool tm_loader_own_folder(void);
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
/* tm_loader_check then tm_loader_negotiate, with nothing between them (the
 * conformance runner's child and the helpers call the two themselves, to
 * enter the sandbox between them). Never fails the context. */
void tm_loader_open(topoml_context *ctx, const char *path, tm_backend *b);
/* Is the open file `fd` safe to load code (or a certificate) from: a regular
 * file owned by us or root, not writable by group or others, and every
 * folder that holds it, up to the root, owned by us or root and not writable
 * by group or others unless sticky? Checked on descriptors, so it describes
 * the very file opened. `real` gets its path; false with the reason. */
bool tm_fd_is_safe(int fd, char *real, size_t real_size, char *why, size_t why_size);

/* ---- starting a backend, the gate's decision (registry.c, gate.c) ---- */

/* Create, probe and read the capability records of a negotiated backend
 * (registry.c). Returns TOPOML_OK; the probe's status when the probe fails
 * (the gate then calls the backend unsupported); or another error, with the
 * backend REJECTED and the reason set. No gate decision is made here: the
 * conformance runner uses this to start a plugin outside any gate. */
int tm_backend_start(topoml_context *ctx, tm_backend *b);
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

/* ---- child processes (isolate.c, isolate_probe.c) ---- */

/* The helper program that runs plugin code outside the host. */
#define TM_PLUGIN_HOST "topoml-plugin-host"
/* Seconds a plugin may take to load, negotiate, create and probe. */
#define TM_PROBE_TIMEOUT_S 30.0
/* The largest probe report read, from a probe process or the cache. */
#define TM_PROBE_REPORT_MAX (1u << 20)

/* Find one of topoml's programs (topoml-plugin-host, topoml-conformance):
 * where the configuration key plugin_host, then the environment variable
 * TOPOML_PLUGIN_HOST (not with TOPOML_CTX_NO_ENV, nor in setuid programs)
 * say the plugin host is (another program: in the same folder); next to
 * the running program; in the bin folder beside an installed libtopoml.so;
 * in the build tree when this code runs from there; in the bin folder of
 * the running program's prefix (<exe>/../bin: a statically linked host
 * installed, or moved, with topoml); else in the configured bindir. Only a
 * regular executable file of ours or root's, not writable by group or
 * others, counts. `ctx` may be NULL (then neither key nor variable). */
bool tm_find_helper(topoml_context *ctx, const char *name, char *out, size_t size);
/* Say once per context, at warning level, that the helper `name` was not
 * found, where it was looked for, and what stops working without it. */
void tm_helper_missing(topoml_context *ctx, const char *name, const char *consequence);


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
/* The child's side (the helper program): enter the sandbox `policy`
 * describes (tm_probe_policy; `cache_dir` the host's cache folder or NULL),
 * then load the plugin on descriptor `plugin_fd`, negotiate, create, probe,
 * read the capability records, and write the report to `out_fd`. Returns
 * the helper's exit status. */
int tm_probe_serve(int plugin_fd, int out_fd, const char *policy, const char *cache_dir);
/* The sandbox of a probe (the --sandbox argument): the NVIDIA driver's
 * rules only for a file in topoml's own plugin folder (a plugin shipped
 * with topoml: the cuda plugin's probe needs the driver before its
 * capability records are known), never for a third-party file. */
void tm_probe_policy(const tm_backend *b, char *out, size_t size);
/* "FLAGS:MAX_MEMORY:THREADS:HOST_PID" into `p` (flags, max_memory,
 * n_threads, host_pid); false when malformed. */
struct tm_sandbox_policy;
bool tm_sandbox_policy_parse(const char *arg, struct tm_sandbox_policy *p);
/* The host's configured cache folder (config cache_dir) for a helper's
 * command line, or "" (the helper then knows the defaults from the
 * environment it inherits). */
void tm_sandbox_cache_arg(const topoml_context *ctx, char *out, size_t size);
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

/* ---- revocation (gate.c) and isolated calls (isolate_ops.c) ---- */

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
 * plugin's stdout to `stdout_fd`, the host's lifeline on `lifeline_fd`; it
 * enters the sandbox `policy` describes (gate/sandbox.h, isolate_ops.c
 * sandbox_arg; `cache_dir` as for tm_probe_serve) before loading the
 * plugin. Returns the helper's exit status. */
int tm_isolation_serve(int plugin_fd, int sock, int stdout_fd, int lifeline_fd,
                       const char *policy, const char *cache_dir);

/* ---- authenticated records (records.c) ----
 * Certificates, revocations, the verification record and kept probe
 * reports end with "mac=<HMAC-SHA256>\n" under the key <cache>/records.key
 * (32 random bytes, mode 0600, made on first write). `kind` names the
 * record ("certificate", "verified", "probe", "revocation") and is covered
 * by the code. */
#define TM_RECORD_MAC_LINE 69 /* "mac=" + 64 hex digits + newline */
/* The key of cache folder `dir`: TOPOML_OK, TOPOML_E_NOT_FOUND (none and
 * not `create`), TOPOML_E_PARSE (not ours, readable by others, wrong size),
 * TOPOML_E_IO; the reason in `why`. */
int tm_record_key(const char *dir, bool create, uint8_t key[32], char *why, size_t why_size);
/* The "mac=...\n" line (NUL-terminated) for a record of `file` whose
 * content before that line is `body`; makes the key if need be. */
int tm_record_seal(const char *file, const char *kind, const void *body, size_t len,
                   char line[TM_RECORD_MAC_LINE + 1], char *why, size_t why_size);
/* Check the last line of `text` (the whole file as read): TOPOML_OK with
 * the length of what precedes it in *body_len, or TOPOML_E_PARSE with the
 * reason (no code, no key, a code that does not match). */
int tm_record_open(const char *file, const char *kind, const char *text, size_t len,
                   size_t *body_len, char *why, size_t why_size);
/* Open `file` once (O_NOFOLLOW), require tm_fd_is_safe on that descriptor,
 * read it into buf (less than `size` bytes) and check it as _open does.
 * TOPOML_E_NOT_FOUND when there is no file. */
int tm_record_read(const char *file, const char *kind, char *buf, size_t size, size_t *body_len,
                   char *why, size_t why_size);
/* Write body + code atomically (a private file renamed over `file`), 0600. */
int tm_record_write(const char *file, const char *kind, const void *body, size_t len, char *why,
                    size_t why_size);
/* Revocations in <dir>/revoked, one authenticated line per plugin file:
 * _lookup: 1 when `file_sha256` is revoked (its reason copied out), else 0;
 * *forged is set when a line whose code does not match was skipped.
 * _add: append one. */
int tm_revoked_lookup(const char *dir, const char *file_sha256, char *reason, size_t reason_size,
                      int *forged);
int tm_revoked_add(const char *dir, const char *file_sha256, const char *reason, char *why,
                   size_t why_size);

#endif /* TOPOML_GATE_INTERNAL_H */
