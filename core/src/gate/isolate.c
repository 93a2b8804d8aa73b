/*
 * isolate.c — running plugin code in a helper process instead of the host.
 *
 * The host may be multi-threaded (a Python interpreter, a server), so a
 * plain fork() of it is unsafe: the child would inherit locks held by other
 * threads. Helpers are started with posix_spawn, which execs at once, and
 * get only what they need: the descriptors handed over (as 3, 4, ...), a
 * report pipe, /dev/null for the standard streams (a plugin that prints
 * must not write into the host's output), default signal dispositions and
 * their own process group, so that a deadline kills whatever the plugin
 * started too.
 *
 * Not here: what a helper does and what its report means
 * (isolate_probe.c), which helper program exists (tools/cli/topoml_plugin_host.c).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "api/api.h"
#include "gate/gate_internal.h"

extern char **environ;

double tm_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static bool usable_helper(const char *path)
{
    char why[512];
    return access(path, X_OK) == 0 && tm_path_is_safe(path, false, why, sizeof why);
}

/* One place to look: `dir`/`name`, noted in `tried` (for the warning). */
static bool try_in(const char *dir, const char *name, char *out, size_t size, char *tried,
                   size_t tried_size)
{
    if ((size_t)snprintf(out, size, "%s/%s", dir, name) >= size)
        return false;
    if (tried) {
        size_t n = strlen(tried);
        snprintf(tried + n, tried_size - n, "%s%s", n ? ", " : "", out);
    }
    return usable_helper(out);
}

/* Where the plugin host was named (configuration, then environment): the
 * file itself for the plugin host, its folder for another helper. */
static bool named_place(topoml_context *ctx, const char *name, char *out, size_t size,
                        char *tried, size_t tried_size)
{
    const char *given[2] = {ctx ? ctx->config.plugin_host : NULL,
                            ctx && !(ctx->flags & TOPOML_CTX_NO_ENV)
                                ? secure_getenv("TOPOML_PLUGIN_HOST")
                                : NULL};
    for (int k = 0; k < 2; k++) {
        const char *g = given[k];
        if (!g || g[0] != '/')
            continue;
        char dir[PATH_MAX];
        const char *slash = strrchr(g, '/');
        snprintf(dir, sizeof dir, "%.*s", slash == g ? 1 : (int)(slash - g), g);
        if (strcmp(name, TM_PLUGIN_HOST) == 0) {
            if (tried) {
                size_t n = strlen(tried);
                snprintf(tried + n, tried_size - n, "%s%s (%s)", n ? ", " : "", g,
                         k == 0 ? "plugin_host" : "TOPOML_PLUGIN_HOST");
            }
            if ((size_t)snprintf(out, size, "%s", g) < size && usable_helper(out))
                return true;
        } else if (try_in(dir, name, out, size, tried, tried_size)) {
            return true;
        }
    }
    return false;
}

static bool search(topoml_context *ctx, const char *name, char *out, size_t size, char *tried,
                   size_t tried_size)
{
    if (tried && tried_size)
        tried[0] = '\0';
    if (named_place(ctx, name, out, size, tried, tried_size))
        return true;
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    char *exe_dir = NULL;
    if (n > 0) {
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        if (slash) {
            *slash = '\0';
            exe_dir = self;
            if (try_in(self, name, out, size, tried, tried_size))
                return true;
        }
    }
#ifdef TOPOML_LIB_TO_BINDIR
    /* Next to the installed programs, found from where libtopoml.so itself
     * is: a tree installed with another --prefix, or moved, finds its
     * helpers as it finds its plugins (loader.c, default_folder). */
    Dl_info info;
    char lib[PATH_MAX], dir[PATH_MAX + 64];
    if (dladdr((void *)tm_find_helper, &info) && info.dli_fname && realpath(info.dli_fname, lib)) {
        char *slash = strrchr(lib, '/');
        if (slash && strstr(slash, ".so")) {
            *slash = '\0';
            snprintf(dir, sizeof dir, "%s/%s", lib, TOPOML_LIB_TO_BINDIR);
            if (try_in(dir, name, out, size, tried, tried_size))
                return true;
        }
    }
#endif
#ifdef TOPOML_BUILD_TOOL_DIR
    if (tm_in_build_tree() && try_in(TOPOML_BUILD_TOOL_DIR, name, out, size, tried, tried_size))
        return true;
#endif
#ifdef TOPOML_INSTALL_BINDIR_NAME
    /* The bin folder of the running program's prefix: a program that links
     * libtopoml statically, installed (or moved) into a prefix with topoml,
     * in <prefix>/bin, <prefix>/libexec/<x>, <prefix>/lib/<x>/... */
    if (exe_dir) {
        char prefix[PATH_MAX], up[PATH_MAX + 8], where[PATH_MAX + 64];
        snprintf(up, sizeof up, "%s/..", exe_dir);
        for (int depth = 0; depth < 2 && realpath(up, prefix); depth++) {
            snprintf(where, sizeof where, "%s/%s", prefix, TOPOML_INSTALL_BINDIR_NAME);
            if (strcmp(where, exe_dir) != 0 && try_in(where, name, out, size, tried, tried_size))
                return true;
            snprintf(up, sizeof up, "%s/..", prefix);
        }
    }
#endif
#ifdef TOPOML_INSTALL_BINDIR
    if (try_in(TOPOML_INSTALL_BINDIR, name, out, size, tried, tried_size))
        return true;
#endif
    return false;
}

bool tm_find_helper(topoml_context *ctx, const char *name, char *out, size_t size)
{
    return search(ctx, name, out, size, NULL, 0);
}

void tm_helper_missing(topoml_context *ctx, const char *name, const char *consequence)
{
    const uint32_t bit = strcmp(name, TM_PLUGIN_HOST) == 0 ? 1u : 2u;
    if (!ctx || (ctx->helper_missing_said & bit))
        return;
    ctx->helper_missing_said |= bit;
    char out[PATH_MAX], tried[2048];
    if (search(ctx, name, out, sizeof out, tried, sizeof tried))
        return;
    tm_log(ctx, TOPOML_LOG_WARN,
           "%s not found (looked for %s); %s. Install it with topoml, or name it with the "
           "configuration key plugin_host or the environment variable TOPOML_PLUGIN_HOST",
           name, tried, consequence);
}

int tm_child_spawn(topoml_context *ctx, const char *program, char *const argv[],
                   const int *fds, int n_fds, tm_child *out, char *why, size_t why_size)
{
    (void)ctx;
    memset(out, 0, sizeof *out);
    out->report = -1;
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) {
        snprintf(why, why_size, "pipe: %s", strerror(errno));
        return TOPOML_E_IO;
    }
    /* Move every descriptor above the ones the child will use, so that the
     * dup2 calls below cannot overwrite one another. */
    int high[9];
    int n_high = 0, rc = TOPOML_OK;
    if (n_fds > 8) {
        snprintf(why, why_size, "too many descriptors for a helper");
        rc = TOPOML_E_INTERNAL;
    }
    for (int k = 0; rc == TOPOML_OK && k <= n_fds; k++) {
        int fd = fcntl(k == n_fds ? p[1] : fds[k], F_DUPFD_CLOEXEC, 16);
        if (fd < 0) {
            snprintf(why, why_size, "dup: %s", strerror(errno));
            rc = TOPOML_E_IO;
            break;
        }
        high[n_high++] = fd;
    }
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    bool fa_ok = false, attr_ok = false;
    if (rc == TOPOML_OK) {
        fa_ok = posix_spawn_file_actions_init(&fa) == 0;
        attr_ok = posix_spawnattr_init(&attr) == 0;
        if (!fa_ok || !attr_ok) {
            snprintf(why, why_size, "cannot prepare a helper process");
            rc = TOPOML_E_NOMEM;
        }
    }
    if (rc == TOPOML_OK) {
        posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
        posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
        posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
        for (int k = 0; k < n_high; k++) /* dup2 clears close-on-exec */
            posix_spawn_file_actions_adddup2(&fa, high[k], 3 + k);
        /* Descriptors the host opened without close-on-exec stay out too. */
        posix_spawn_file_actions_addclosefrom_np(&fa, 3 + n_high);
        sigset_t all, none;
        sigfillset(&all);
        sigemptyset(&none);
        posix_spawnattr_setsigdefault(&attr, &all);
        posix_spawnattr_setsigmask(&attr, &none);
        posix_spawnattr_setpgroup(&attr, 0);
        posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK |
                                            POSIX_SPAWN_SETPGROUP);
        pid_t pid;
        int err = posix_spawn(&pid, program, &fa, &attr, argv, environ);
        if (err) {
            snprintf(why, why_size, "cannot start %.400s: %s", program, strerror(err));
            rc = TOPOML_E_IO;
        } else {
            out->pid = pid;
        }
    }
    if (fa_ok)
        posix_spawn_file_actions_destroy(&fa);
    if (attr_ok)
        posix_spawnattr_destroy(&attr);
    for (int k = 0; k < n_high; k++)
        close(high[k]);
    close(p[1]);
    if (rc != TOPOML_OK) {
        close(p[0]);
        return rc;
    }
    out->report = p[0];
    return TOPOML_OK;
}

/* Has `pid` ended? Waits until `deadline` at most, without reaping it: while
 * it is a zombie its process group id cannot be reused, so killing the group
 * afterwards is safe. -1: it cannot be waited for (reaped elsewhere). */
static int ended(pid_t pid, double deadline)
{
    for (;;) {
        siginfo_t info;
        memset(&info, 0, sizeof info);
        int r = waitid(P_PID, (id_t)pid, &info, WEXITED | WNOHANG | WNOWAIT);
        if (r == 0 && info.si_pid == pid)
            return 1;
        if (r < 0 && errno != EINTR)
            return -1;
        if (tm_now() >= deadline)
            return 0;
        struct timespec pause = {0, 1000000};
        nanosleep(&pause, NULL);
    }
}

int tm_child_finish(topoml_context *ctx, tm_child *c, double deadline, size_t max, char **report,
                    size_t *len, int *status, bool *timed_out)
{
    *report = NULL;
    *len = 0;
    *status = -1;
    *timed_out = false;
    size_t cap = 4096, n = 0;
    char *buf = tm_alloc(ctx, cap);
    int rc = buf ? TOPOML_OK : tm_nomem(ctx, cap);
    while (rc == TOPOML_OK && c->report >= 0) {
        double left = deadline - tm_now();
        if (left <= 0) {
            *timed_out = true;
            break;
        }
        struct pollfd pf = {c->report, POLLIN, 0};
        int r = poll(&pf, 1, left > 1e6 ? 1000000000 : (int)(left * 1000) + 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            continue; /* the deadline is checked above */
        if (n == cap) {
            if (cap >= max)
                break; /* more than a report can be: the child is ended below */
            char *grown = tm_realloc(ctx, buf, cap * 2);
            if (!grown) {
                rc = tm_nomem(ctx, cap * 2);
                break;
            }
            buf = grown;
            cap *= 2;
        }
        ssize_t got = read(c->report, buf + n, cap - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        n += (size_t)got;
    }
    if (c->report >= 0)
        close(c->report);
    c->report = -1;
    if (c->pid > 0) {
        /* A child that closed its report has finished or is about to. */
        int e = ended(c->pid, *timed_out ? tm_now() : tm_now() + 2.0);
        if (e == 0 && !*timed_out)
            *timed_out = true;
        if (e != -1) {
            /* Not reaped yet, so the group id is still the child's: end
             * whatever the plugin started in it too. */
            kill(-c->pid, SIGKILL);
            int st;
            while (waitpid(c->pid, &st, 0) < 0 && errno == EINTR)
                ;
            *status = e == 1 ? st : -1;
        }
        c->pid = 0;
    }
    if (rc != TOPOML_OK) {
        tm_free(ctx, buf);
        return rc;
    }
    *report = buf;
    *len = n;
    return TOPOML_OK;
}

void tm_describe_status(int status, bool timed_out, double timeout_s, char *out, size_t size)
{
    if (timed_out)
        snprintf(out, size, "did not finish within %.0f s and was killed", timeout_s);
    else if (status == -1)
        snprintf(out, size, "ended without a complete report");
    else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS)
        snprintf(out, size,
                 "died of signal %d (%s): the sandbox stopped a system call a plugin may not "
                 "make",
                 SIGSYS, strsignal(SIGSYS));
    else if (WIFSIGNALED(status))
        snprintf(out, size, "died of signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
    else
        snprintf(out, size, "exited with status %d without a complete report",
                 WEXITSTATUS(status));
}
