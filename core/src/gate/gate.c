/*
 * gate.c — which plugins may run user work.
 *
 * The built-in scalar backend is the reference and always runs. A plugin
 * runs when it holds a valid certificate from topoml-conformance (see
 * certificate.h): the suite's verdict "pass" bound to this very file, core,
 * ABI, suite version and machine. The policy (config `gate:`) says what
 * happens to a plugin without one:
 *   strict - it stays DISABLED;
 *   auto   - it stays DISABLED until tm_select would first choose it; then
 *            the quick tier runs in a separate process (topoml-conformance
 *            --certify, spawned, never inside this address space), and the
 *            verdict, pass or fail, is cached as a certificate;
 *   off    - everything that probes ok runs, said in every report.
 * The configuration's `enable` list is an operator's explicit override, and
 * `disable` always wins.
 *
 * Certification waits for first use rather than context creation: a context
 * is made often (every CLI run, every host thread), and certifying every
 * plugin found would make each one pay for plugins it never calls.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api/api.h"
#include "gate/certificate.h"
#include "gate/gate.h"
#include "gate/gate_internal.h"

extern char **environ;

#define CONFORMANCE_TOOL "topoml-conformance"

/* What the certificate cache says about a plugin file. */
typedef enum cert_state {
    CERT_PASS,       /* valid, verdict pass */
    CERT_FAIL,       /* valid, verdict fail */
    CERT_NONE,       /* no certificate */
    CERT_STALE,      /* a certificate that does not hold (any more) */
    CERT_UNAVAILABLE, /* the cache cannot be used */
    CERT_REVOKED      /* revoked at run time (records.c): sticky for the file */
} cert_state;

/* Look up and check the certificate of `b`; `why` gets a reason for the
 * backend list. A missing cache folder is CERT_NONE. */
static cert_state cert_lookup(topoml_context *ctx, const tm_backend *b, tm_cert *cert, char *why,
                              size_t why_size)
{
    char dir[4096], file[4400], real[PATH_MAX], err[512];
    int rc = tm_cache_dir(ctx, false, dir, sizeof dir);
    if (rc != TOPOML_OK) {
        snprintf(why, why_size, "%.580s", rc == TOPOML_E_NOT_FOUND ? "not certified" : ctx->errmsg);
        ctx->errmsg[0] = '\0'; /* a gate decision, not an error of the caller's */
        return rc == TOPOML_E_NOT_FOUND ? CERT_NONE : CERT_UNAVAILABLE;
    }
    /* Revocations first (records.c): a revoked file stays revoked whatever
     * certificate is (put back) in the cache. */
    char revoked[900];
    int forged = 0;
    if (tm_revoked_lookup(dir, b->file_sha256, revoked, sizeof revoked, &forged)) {
        snprintf(why, why_size, "revoked at run time (%.400s); this file is not certified again",
                 revoked);
        return CERT_REVOKED;
    }
    if (forged)
        tm_log(ctx, TOPOML_LOG_WARN,
               "%s/revoked: lines whose authentication code does not match were ignored", dir);
    if (!realpath(b->path, real) ||
        !tm_cert_file_for(dir, real, b->file_sha256, ".cert", file, sizeof file)) {
        snprintf(why, why_size, "cannot resolve %.500s", b->path);
        return CERT_UNAVAILABLE;
    }
    rc = tm_cert_load(file, cert, err, sizeof err);
    if (rc == TOPOML_E_NOT_FOUND) {
        snprintf(why, why_size, "not certified");
        return CERT_NONE;
    }
    if (rc != TOPOML_OK) {
        tm_log(ctx, TOPOML_LOG_WARN, "certificate of backend '%s' ignored: %s", b->name, err);
        snprintf(why, why_size, "certificate invalid: %.400s", err);
        return CERT_STALE;
    }
    tm_cert now;
    /* The file's hash is the one read from the descriptor the plugin is (or
     * will be) loaded from, never a second read by path. */
    if (tm_cert_describe_sha(&now, real, b->file_sha256, b->name, b->abi_version, b->caps,
                             b->n_caps) != 0) {
        snprintf(why, why_size, "cannot read plugin file %.500s", real);
        return CERT_UNAVAILABLE;
    }
    if (strcmp(cert->path, real) != 0) {
        snprintf(why, why_size, "certificate invalid: made for %.300s", cert->path);
        return CERT_STALE;
    }
    if (!tm_cert_matches(cert, &now, err, sizeof err)) {
        snprintf(why, why_size, "certificate invalid: %.400s", err);
        return CERT_STALE;
    }
    if (strcmp(cert->verdict, "pass") == 0) {
        snprintf(why, why_size, "certified on %.10s for tier %s", cert->date, cert->tier);
        return CERT_PASS;
    }
    snprintf(why, why_size, "failed conformance (tier %s) on %.10s: %.420s%s%.80s", cert->tier,
             cert->date, cert->summary, cert->report[0] ? "; report " : "", cert->report);
    return CERT_FAIL;
}

/* Is there a certificate of another content of this plugin file (it was
 * rebuilt or replaced since)? Then certifying it is announced. */
static bool other_content_certified(topoml_context *ctx, const tm_backend *b)
{
    char dir[4096], real[PATH_MAX], file[4400];
    if (tm_cache_dir(ctx, false, dir, sizeof dir) != TOPOML_OK) {
        ctx->errmsg[0] = '\0';
        return false;
    }
    if (!realpath(b->path, real) ||
        !tm_cert_file_for(dir, real, b->file_sha256, ".cert", file, sizeof file))
        return false;
    /* <base>-<path hash>-<content hash>.cert: the same up to the content. */
    const char *base = strrchr(file, '/') + 1;
    const size_t stem = strlen(base) - strlen("0123456789abcdef.cert");
    DIR *d = opendir(dir);
    if (!d)
        return false;
    bool found = false;
    struct dirent *e;
    while (!found && (e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        found = n == strlen(base) && strncmp(e->d_name, base, stem) == 0 &&
                strcmp(e->d_name + n - 5, ".cert") == 0 && strcmp(e->d_name, base) != 0;
    }
    closedir(d);
    return found;
}

static void set_state(tm_backend *b, uint32_t state, bool pending, const char *reason)
{
    b->gate_state = state;
    b->gate_pending = pending;
    snprintf(b->gate_reason, sizeof b->gate_reason, "%s", reason);
}

void tm_gate_apply(topoml_context *ctx, tm_backend *b)
{
    char why[600], reason[sizeof b->gate_reason];
    b->gate_pending = false;
    if (!b->path) {
        set_state(b, TOPOML_GATE_ENABLED, false, "built-in reference");
        return;
    }
    if (b->probe_status != TOPOML_OK) {
        snprintf(reason, sizeof reason, "probe: %.240s", b->probe_message);
        set_state(b, TOPOML_GATE_UNSUPPORTED, false, reason);
        return;
    }
    if (tm_strlist_has(&ctx->config.disable, b->name)) {
        set_state(b, TOPOML_GATE_DISABLED, false, "disabled by configuration");
        return;
    }
    if (ctx->config.gate == TM_GATE_OFF) {
        set_state(b, TOPOML_GATE_ENABLED, false,
                  "GATE OFF: not certified, for plugin development only");
        tm_log(ctx, TOPOML_LOG_WARN, "gate is off: backend '%s' runs without a certificate",
               b->name);
        return;
    }
    tm_cert cert;
    cert_state cs = cert_lookup(ctx, b, &cert, why, sizeof why);
    b->cert_stamp[0] = '\0';
    if (cs == CERT_PASS) {
        /* What run-time verification's record of checked sizes is bound to
         * (verify.c): a new certificate starts it afresh. */
        snprintf(b->cert_stamp, sizeof b->cert_stamp, "%.31s/%.23s", cert.date, cert.seed);
        set_state(b, TOPOML_GATE_ENABLED, false, why);
        return;
    }
    if (cs == CERT_REVOKED) {
        set_state(b, TOPOML_GATE_REJECTED, false, why);
        return;
    }
    if (tm_strlist_has(&ctx->config.enable, b->name)) {
        if (cs == CERT_NONE)
            set_state(b, TOPOML_GATE_ENABLED, false, "enabled by configuration, not certified");
        else {
            snprintf(reason, sizeof reason, "enabled by configuration, not certified (%.500s)",
                     why);
            set_state(b, TOPOML_GATE_ENABLED, false, reason);
        }
        return;
    }
    if (cs == CERT_FAIL) {
        set_state(b, TOPOML_GATE_REJECTED, false, why);
        return;
    }
    if (ctx->config.gate == TM_GATE_STRICT || cs == CERT_UNAVAILABLE) {
        snprintf(reason, sizeof reason, "%.560s%s", why,
                 ctx->config.gate == TM_GATE_STRICT ? " (gate: strict)" : "");
        set_state(b, TOPOML_GATE_DISABLED, false, reason);
        return;
    }
    snprintf(reason, sizeof reason, "%.500s; the quick conformance tier runs on first use", why);
    set_state(b, TOPOML_GATE_DISABLED, true, reason);
}

/* Find topoml-conformance: next to the running program (the topoml CLI and
 * the tool are installed, and built, side by side), in the build tree when
 * this code runs from there, else in the installed bindir. */
static bool find_tool(topoml_context *ctx, char *out, size_t size)
{
    return tm_find_helper(ctx, CONFORMANCE_TOOL, out, size);
}

/* Run the quick tier on `plugin` in a child process, its output to
 * /dev/null (the library never writes to the host's streams) but for its
 * progress lines, which come back through a pipe and go to the log at most
 * once a second ("certifying 'x': 120 of 289 cases"), so that a host that
 * waits can say why. Returns the child's exit status, or -1 with the
 * reason in `why`. */
static int run_tool(topoml_context *ctx, const char *name, const char *tool, const char *plugin,
                    const char *cache, const char *report, char *why, size_t why_size)
{
    int pipe_fds[2];
    if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
        snprintf(why, why_size, "cannot start %.400s: %.100s", tool, strerror(errno));
        return -1;
    }
    posix_spawn_file_actions_t fa;
    if (posix_spawn_file_actions_init(&fa) != 0) {
        close(pipe_fds[0]);
        close(pipe_fds[1]);
        snprintf(why, why_size, "cannot start %.400s", tool);
        return -1;
    }
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, pipe_fds[1], 2);
    char *argv[] = {(char *)tool,  "--plugin",    (char *)plugin, "--tier",
                    "quick",       "--certify",   "--fail-fast",  "--cache-dir",
                    (char *)cache, "--json",      (char *)report, "--progress",
                    NULL};
    pid_t pid;
    int err = posix_spawn(&pid, tool, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(pipe_fds[1]);
    if (err) {
        close(pipe_fds[0]);
        snprintf(why, why_size, "cannot start %.400s: %.100s", tool, strerror(err));
        return -1;
    }
    FILE *f = fdopen(pipe_fds[0], "r");
    if (f) {
        char line[512], stage[96];
        snprintf(stage, sizeof stage, "certifying %.60s", name);
        double last = -INFINITY; /* the first line at once, then once a second */
        bool cancelled = false;
        while (fgets(line, sizeof line, f)) {
            unsigned long done, total;
            char case_name[200];
            if (sscanf(line, "progress %lu %lu %199s", &done, &total, case_name) != 3)
                continue;
            /* "certifying NAME: 120/289" in a host's progress display; a
             * host that cancels stops the certification (and gets none). */
            if (!cancelled && ctx->progress_fn &&
                ctx->progress_fn(ctx->progress_user, stage, done, total) != 0) {
                cancelled = true;
                kill(pid, SIGKILL);
            }
            if (tm_now() - last >= 1.0) {
                last = tm_now();
                tm_log(ctx, TOPOML_LOG_INFO, "certifying backend '%s': %lu of %lu cases (%s)",
                       name, done, total, case_name);
            }
        }
        fclose(f);
        if (cancelled) {
            while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
                ;
            snprintf(why, why_size, "cancelled by the host");
            return -1;
        }
    } else {
        close(pipe_fds[0]);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno == EINTR)
            continue;
        /* ECHILD: the host ignores SIGCHLD and the child was reaped for us;
         * the certificate file, not the status, carries the verdict. */
        return 0;
    }
    if (WIFSIGNALED(status)) {
        snprintf(why, why_size, "%.400s died of signal %d", tool, WTERMSIG(status));
        return -1;
    }
    return WEXITSTATUS(status);
}

bool tm_gate_first_use(topoml_context *ctx, tm_backend *b)
{
    char why[600], reason[sizeof b->gate_reason];
    /* Another context or process may have certified it in the meantime. */
    tm_gate_apply(ctx, b);
    if (!b->gate_pending)
        return b->gate_state == TOPOML_GATE_ENABLED;

    char cache[4096], real[PATH_MAX], report[4400], tool[PATH_MAX];
    if (tm_cache_dir(ctx, true, cache, sizeof cache) != TOPOML_OK) {
        snprintf(reason, sizeof reason, "cannot certify: %.560s", ctx->errmsg);
        ctx->errmsg[0] = '\0';
        set_state(b, TOPOML_GATE_DISABLED, false, reason);
        return false;
    }
    if (!find_tool(ctx, tool, sizeof tool)) {
        tm_helper_missing(ctx, CONFORMANCE_TOOL,
                          "plugins without a certificate cannot be certified");
        set_state(b, TOPOML_GATE_DISABLED, false,
                  "cannot certify: " CONFORMANCE_TOOL " not found (see the warning; "
                  "plugin_host or TOPOML_PLUGIN_HOST name the folder of topoml's programs)");
        return false;
    }
    if (!realpath(b->path, real) ||
        !tm_cert_file_for(cache, real, b->file_sha256, ".json", report, sizeof report)) {
        set_state(b, TOPOML_GATE_DISABLED, false, "cannot certify: plugin path does not resolve");
        return false;
    }
    /* A file that changed since it was certified is certified again: said
     * at warning level, since it may be a rebuild or someone else's file. */
    if (other_content_certified(ctx, b))
        tm_log(ctx, TOPOML_LOG_WARN,
               "plugin file %s changed since it was certified (now SHA-256 %.16s...): "
               "certifying backend '%s' again",
               real, b->file_sha256, b->name);
    tm_log(ctx, TOPOML_LOG_INFO,
           "backend '%s' is not certified: running the quick conformance "
           "tier (%s --plugin %s)",
           b->name, tool, real);
    int status = run_tool(ctx, b->name, tool, real, cache, report, why, sizeof why);
    tm_gate_apply(ctx, b);
    if (b->gate_pending) {
        /* No certificate came out of it: do not try again in this context. */
        if (status < 0)
            snprintf(reason, sizeof reason, "cannot certify: %.560s", why);
        else
            snprintf(reason, sizeof reason,
                     "cannot certify: " CONFORMANCE_TOOL " exited with status %d and wrote no "
                     "certificate",
                     status);
        set_state(b, TOPOML_GATE_DISABLED, false, reason);
    }
    tm_log(ctx, b->gate_state == TOPOML_GATE_ENABLED ? TOPOML_LOG_INFO : TOPOML_LOG_WARN,
           "backend '%s': %s", b->name, b->gate_reason);
    return b->gate_state == TOPOML_GATE_ENABLED;
}

void tm_gate_revoke(topoml_context *ctx, const tm_backend *b, const char *why)
{
    char dir[4096], file[4400], real[PATH_MAX], err[512];
    if (!b->path)
        return;
    if (tm_cache_dir(ctx, false, dir, sizeof dir) != TOPOML_OK) {
        ctx->errmsg[0] = '\0'; /* no cache, no certificate to revoke */
        return;
    }
    if (!realpath(b->path, real) ||
        !tm_cert_file_for(dir, real, b->file_sha256, ".cert", file, sizeof file))
        return;
    tm_cert c, old;
    bool had = tm_cert_load(file, &old, err, sizeof err) == TOPOML_OK;
    if (!had && access(file, F_OK) != 0) {
        /* Enabled by configuration or with the gate off: nothing to revoke. */
        return;
    }
    /* The revocation proper: a line in the append-only, authenticated
     * store, read before any certificate (records.c), so that restoring an
     * earlier certificate gains nothing. */
    char line[700];
    snprintf(line, sizeof line, "backend '%.48s': %.500s", b->name, why);
    int rc = tm_revoked_add(dir, b->file_sha256, line, err, sizeof err);
    if (rc != TOPOML_OK)
        tm_log(ctx, TOPOML_LOG_WARN, "cannot record the revocation of backend '%s': %s", b->name,
               err);
    /* And its certificate says so too, for people and tools that read it:
     * a failed certificate, not a deleted one. */
    if (tm_cert_describe_sha(&c, real, b->file_sha256, b->name, b->abi_version, b->caps,
                             b->n_caps) == 0) {
        snprintf(c.tier, sizeof c.tier, "%s", had ? old.tier : "quick");
        snprintf(c.seed, sizeof c.seed, "%s", had ? old.seed : "0");
        snprintf(c.report, sizeof c.report, "%s", had ? old.report : "");
        snprintf(c.verdict, sizeof c.verdict, "fail");
        snprintf(c.summary, sizeof c.summary, "revoked at run time: %.200s", why);
        for (char *q = c.summary; *q; q++)
            if (*q == '\n' || *q == '\r')
                *q = ' ';
        tm_cert_stamp(&c);
        if (tm_cert_store(file, &c, err, sizeof err) != TOPOML_OK)
            unlink(file);
    } else {
        unlink(file);
    }
    tm_log(ctx, TOPOML_LOG_WARN, "certificate of backend '%s' revoked: %s", b->name, why);
}
