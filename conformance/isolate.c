/*
 * isolate.c — running a piece of work in a child process with a deadline,
 * so that a plugin that crashes, aborts, exits or hangs becomes a result
 * (CRASH, TIMEOUT) instead of the end of the runner.
 *
 * The child gets a pipe for its answer and its own process group; the
 * parent reads the pipe until it closes, with poll() bounded by the
 * deadline, then reaps the child. At the deadline the whole group gets
 * SIGKILL, so threads or helper processes a plugin started go too. The
 * child's stdout is pointed at its stderr: a plugin that prints must not
 * spoil the runner's table or a JSON report written to stdout.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "conformance.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Wait until `pid` has ended, at most until `deadline`, without reaping it:
 * while it is a zombie its pid, and so its process group's id, cannot be
 * taken by another process, and the group can be killed safely. */
static bool ended(pid_t pid, double deadline)
{
    for (;;) {
        siginfo_t info;
        memset(&info, 0, sizeof info);
        int r = waitid(P_PID, (id_t)pid, &info, WEXITED | WNOHANG | WNOWAIT);
        if (r == 0 && info.si_pid == pid)
            return true;
        if (r < 0 && errno != EINTR)
            return true;
        if (now_s() >= deadline)
            return false;
        struct timespec pause = {0, 2000000};
        nanosleep(&pause, NULL);
    }
}

/* What the child does before fn, in tc_isolate and tc_spawn alike: its
 * own process group, no core file, and a crash that ends it by its signal,
 * whatever handler the runner's own build installed (a sanitizer's, say),
 * so that it reads as a crash and not as an exit; its stdout is its
 * stderr (a plugin that prints must not spoil the runner's table). */
static void child_setup(void)
{
    setpgid(0, 0);
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    signal(SIGPIPE, SIG_IGN);
    static const int fatal[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
    for (size_t k = 0; k < sizeof fatal / sizeof fatal[0]; k++)
        signal(fatal[k], SIG_DFL);
    dup2(2, 1);
}

bool tc_spawn(tc_child_fn fn, void *arg, int close_in_child, pid_t *pid_out, int *fd_out,
              char *err, size_t err_size)
{
    int fds[2];
    if (pipe(fds) != 0) {
        snprintf(err, err_size, "pipe: %s", strerror(errno));
        return false;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, err_size, "fork: %s", strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return false;
    }
    if (pid == 0) {
        close(fds[0]);
        if (close_in_child >= 0)
            close(close_in_child);
        child_setup();
        int rc = fn(fds[1], arg);
        close(fds[1]);
        _exit(rc == 0 ? 0 : 1);
    }
    setpgid(pid, pid);
    close(fds[1]);
    *pid_out = pid;
    *fd_out = fds[0];
    return true;
}

void tc_end_child(pid_t pid, double grace_s, tc_child *out)
{
    /* Not reaped until its group is killed: its pid, and so its group's
     * id, cannot be taken by another process meanwhile. */
    bool done = ended(pid, now_s() + grace_s);
    kill(-pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (!done) {
        out->end = TC_CHILD_TIMED_OUT;
        out->code = 0;
    } else if (WIFSIGNALED(status)) {
        out->end = TC_CHILD_SIGNALED;
        out->code = WTERMSIG(status);
    } else {
        out->end = TC_CHILD_EXITED;
        out->code = WIFEXITED(status) ? WEXITSTATUS(status) : 0;
    }
}

bool tc_isolate(tc_child_fn fn, void *arg, double timeout_s, tc_child *out, char *err,
                size_t err_size)
{
    memset(out, 0, sizeof *out);
    int fds[2];
    if (pipe(fds) != 0) {
        snprintf(err, err_size, "pipe: %s", strerror(errno));
        return false;
    }
    fflush(NULL); /* nothing buffered may be written twice */
    double start = now_s(), deadline = start + timeout_s;
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, err_size, "fork: %s", strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return false;
    }
    if (pid == 0) {
        close(fds[0]);
        child_setup();
        int rc = fn(fds[1], arg);
        close(fds[1]);
        _exit(rc == 0 ? 0 : 1);
    }
    setpgid(pid, pid); /* also here, so the group exists before any kill */
    close(fds[1]);

    size_t cap = 0;
    bool timed_out = false;
    for (;;) {
        double left = deadline - now_s();
        if (left <= 0) {
            timed_out = true;
            break;
        }
        struct pollfd p = {fds[0], POLLIN, 0};
        int pr = poll(&p, 1, (int)(left * 1000) + 1);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr == 0)
            continue; /* the loop head sees the deadline */
        if (out->len == cap) {
            size_t grown = cap ? cap * 2 : 65536;
            unsigned char *g = realloc(out->data, grown);
            if (!g) {
                timed_out = false;
                break;
            }
            out->data = g;
            cap = grown;
        }
        ssize_t got = read(fds[0], out->data + out->len, cap - out->len);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break; /* EOF: the child closed its end, normally by exiting */
        out->len += (size_t)got;
    }
    close(fds[0]);
    if (!timed_out)
        timed_out = !ended(pid, deadline);
    /* The child's group goes, with anything the plugin left running in it;
     * the child itself is dead or about to be, and not yet reaped. */
    kill(-pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (timed_out) {
        out->end = TC_CHILD_TIMED_OUT;
        out->code = 0;
    } else if (WIFSIGNALED(status)) {
        out->end = TC_CHILD_SIGNALED;
        out->code = WTERMSIG(status);
    } else {
        out->end = TC_CHILD_EXITED;
        out->code = WIFEXITED(status) ? WEXITSTATUS(status) : 0;
    }
    out->seconds = now_s() - start;
    return true;
}
