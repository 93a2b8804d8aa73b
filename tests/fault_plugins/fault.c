/*
 * fault.c — deliberately broken plugins for the loader tests. Compiled once
 * per fault (-DFAULT_<KIND>) into its own folder; each one is wrong in
 * exactly one way, and the core must reject or survive each with a reason.
 * (GOOD, ACCEL and BY_NAME are well-formed: the selection tests use them.)
 *
 * CTOR_CRASH, CTOR_EXIT and PROBE_CRASH run wrong code before any gate
 * decision: an ELF constructor that crashes or calls _exit(0), a probe that
 * dereferences NULL. The host must never run that code in its own process.
 * OP_STDOUT, OP_CRASH, OP_RUNAWAY and OP_EXIT compute euclidean f64
 * distances right (so they may pass a small certification) but, in the op,
 * write to stdout (every call), or for more than 150 points dereference
 * NULL, loop forever, or call exit(0). Not shipped with topoml, they run
 * in a helper process by default (isolate_ops.c), and none of that may
 * reach the user.
 *
 * Every fault plugin's constructor also appends "<name> <pid>" to the file
 * named by TOPOML_TEST_MARKER, so a test can see where its code ran, and
 * its probe appends "<name> <pid> <start> <end>" (CLOCK_MONOTONIC
 * nanoseconds, one clock for every process of the machine) to the file
 * named by TOPOML_TEST_PROBE_LOG, so a test can see whether and when probes
 * ran. PROBE_SLOW is well-formed but its probe takes TOPOML_TEST_PROBE_MS
 * milliseconds (default 400), like a probe that initialises a GPU runtime:
 * the lazy-probing tests and bench/bench_probe.py use it.
 *
 * The sandbox's faults (tests/cli/test_sandbox.py) compute euclidean f64
 * distances right too, and for more than 150 points first try to harm the
 * host from their helper: PROC_STDOUT writes into the host's stdout through
 * /proc/<parent>/fd/1; PROC_MEM opens /proc/<parent>/mem for writing (and,
 * when it got it, answers wrong: a plugin holding the host's memory could
 * make it print anything); KILL_HOST kills its parent; DAEMON forks a
 * child that leaves the process group and listens on 127.0.0.1, port
 * TOPOML_TEST_PORT (it ends after one connection or 20 s); HOME_WRITE
 * appends to $HOME/.profile; BIG_MEMORY touches 3 GiB; EXEC runs
 * /usr/bin/touch on the file named by TOPOML_TEST_EXEC_MARKER. Where the
 * attempt fails with an error it returns that error (TOPOML_E_IO,
 * TOPOML_E_NOMEM). CHATTY (any size) reports progress 20 times with a log
 * line each, and stops with TOPOML_E_CANCELLED when the progress callback
 * says so (logging "cancelled at K").
 *
 * STEAL tries to reach what the sandbox keeps from a plugin, from its
 * constructor (TOPOML_TEST_STEAL_AT unset or "ctor": in the probe process)
 * or from every distances call ("op": under certification). What it tries,
 * TOPOML_TEST_STEAL says: "read" the file TOPOML_TEST_KEY (topoml's
 * records.key), "write" (create) the file TOPOML_TEST_WRITE_MARKER with
 * what it read, "exec" /usr/bin/touch on TOPOML_TEST_EXEC_MARKER; unset:
 * all three in that order. Its probe then fails, saying what the read
 * gave: "read the key: <hex>" or "could not read the key: <error>".
 * Otherwise it computes euclidean f64 distances right.
 *
 * PROBE_FLAKY is well-formed and computes euclidean f64 distances right,
 * but its probe finds what the file named by TOPOML_TEST_PROBE_CONTROL
 * says when it runs: nothing (no file) or "ok": ok, on the device "cpu";
 * "fail": no widget (TOPOML_E_UNSUPPORTED); "crash": it dereferences NULL;
 * "device TEXT": ok, on the device TEXT. The environment stays the same
 * while that file changes, as a machine can change between two processes:
 * the probe cache's tests (test_probe_cache) use it.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "topoml/plugin.h"

#ifndef FAULT_NAME
#define FAULT_NAME "fault"
#endif

/* A descriptor to append a test record to, for the file the environment
 * variable `var` names: in a sandboxed helper (TOPOML_SANDBOX) opening a
 * file to write ends the process, so only the probe process, which opened
 * the file before its sandbox and says so as "fd:N", the host and the
 * unsandboxed leave marks. -1: none; *opened: close it after. */
static int test_log_fd(const char *var, bool *opened)
{
    const char *path = getenv(var);
    *opened = false;
    if (!path || !*path)
        return -1;
    if (strncmp(path, "fd:", 3) == 0)
        return atoi(path + 3);
    if (getenv("TOPOML_SANDBOX"))
        return -1;
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    *opened = fd >= 0;
    return fd;
}

#ifdef FAULT_STEAL
static char stolen[128] = "nothing tried";

static bool steal_wants(const char *what)
{
    const char *mode = getenv("TOPOML_TEST_STEAL");
    return !mode || !*mode || strcmp(mode, what) == 0;
}

/* The harm of STEAL (see the top), where TOPOML_TEST_STEAL_AT says. */
static void steal(const char *at)
{
    const char *want = getenv("TOPOML_TEST_STEAL_AT");
    if (strcmp(want && *want ? want : "ctor", at) != 0)
        return;
    if (steal_wants("read")) {
        const char *key = getenv("TOPOML_TEST_KEY");
        int fd = open(key ? key : "/nonexistent", O_RDONLY | O_CLOEXEC);
        unsigned char k[32];
        ssize_t n = fd >= 0 ? read(fd, k, sizeof k) : -1;
        int err = errno;
        if (fd >= 0)
            close(fd);
        if (n > 0) {
            int w = snprintf(stolen, sizeof stolen, "read the key: ");
            for (ssize_t i = 0; i < n && w < (int)sizeof stolen - 3; i++)
                w += snprintf(stolen + w, sizeof stolen - (size_t)w, "%02x", k[i]);
        } else {
            snprintf(stolen, sizeof stolen, "could not read the key: %s",
                     n < 0 ? strerror(err) : "empty");
        }
    }
    if (steal_wants("write")) {
        const char *marker = getenv("TOPOML_TEST_WRITE_MARKER");
        int fd = open(marker ? marker : "/nonexistent/marker",
                      O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd >= 0) {
            dprintf(fd, "%s\n", stolen);
            close(fd);
        }
    }
    if (steal_wants("exec")) {
        const char *marker = getenv("TOPOML_TEST_EXEC_MARKER");
        execl("/usr/bin/touch", "touch", marker ? marker : "/nonexistent/marker", (char *)NULL);
    }
}
#endif

__attribute__((constructor)) static void on_load(void)
{
    bool opened;
    int fd = test_log_fd("TOPOML_TEST_MARKER", &opened);
    if (fd >= 0)
        dprintf(fd, "%s %ld\n", FAULT_NAME, (long)getpid());
    if (opened)
        close(fd);
#ifdef FAULT_STEAL
    steal("ctor");
#endif
#ifdef FAULT_CTOR_CRASH
    *(volatile int *)(uintptr_t)getenv("TOPOML_NO_SUCH_VARIABLE_EVER") = 1;
#endif
#ifdef FAULT_CTOR_EXIT
    _exit(0);
#endif
}

static long long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* The probe's window, for the tests (see the top of the file). */
static void log_probe(long long start)
{
    bool opened;
    int fd = test_log_fd("TOPOML_TEST_PROBE_LOG", &opened);
    if (fd >= 0)
        dprintf(fd, "%s %ld %lld %lld\n", FAULT_NAME, (long)getpid(), start, now_ns());
    if (opened)
        close(fd);
}

#ifdef FAULT_PROBE_FLAKY
static char flaky_device[64] = "cpu";

/* What TOPOML_TEST_PROBE_CONTROL says now ("" without the file). */
static void flaky_control(char *what, size_t size)
{
    const char *control = getenv("TOPOML_TEST_PROBE_CONTROL");
    /* In the probe process: "fd:N", opened before its sandbox (see
     * test_log_fd). */
    const bool given = control && strncmp(control, "fd:", 3) == 0;
    int fd = given ? atoi(control + 3)
                   : control && *control ? open(control, O_RDONLY | O_CLOEXEC) : -1;
    ssize_t n = fd >= 0 ? pread(fd, what, size - 1, 0) : 0;
    if (fd >= 0 && !given)
        close(fd);
    what[n > 0 ? n : 0] = '\0';
    what[strcspn(what, "\n")] = '\0';
}
#endif

static int probe(void *state, char *why, size_t why_size)
{
    (void)state;
    const long long start = now_ns();
#ifdef FAULT_PROBE_SLOW
    const char *ms = getenv("TOPOML_TEST_PROBE_MS");
    long wait_ms = ms && *ms ? strtol(ms, NULL, 10) : 400;
    struct timespec left = {wait_ms / 1000, (wait_ms % 1000) * 1000000L};
    while (wait_ms > 0 && nanosleep(&left, &left) != 0)
        ;
#endif
    log_probe(start);
#ifdef FAULT_PROBE_CRASH
    *(volatile int *)(uintptr_t)getenv("TOPOML_NO_SUCH_VARIABLE_EVER") = 1;
#endif
#ifdef FAULT_PROBE_FLAKY
    char what[80];
    flaky_control(what, sizeof what);
    if (strcmp(what, "fail") == 0) {
        snprintf(why, why_size, "the widget went away");
        return TOPOML_E_UNSUPPORTED;
    }
    if (strcmp(what, "crash") == 0)
        *(volatile int *)(uintptr_t)getenv("TOPOML_NO_SUCH_VARIABLE_EVER") = 1;
    snprintf(flaky_device, sizeof flaky_device, "%.60s",
             strncmp(what, "device ", 7) == 0 ? what + 7 : "cpu");
#endif
#ifdef FAULT_STEAL
    const char *at = getenv("TOPOML_TEST_STEAL_AT");
    if (!at || !*at || strcmp(at, "ctor") == 0) {
        snprintf(why, why_size, "%s", stolen);
        return TOPOML_E_UNSUPPORTED;
    }
#endif
#ifdef FAULT_PROBE_FAILS
    snprintf(why, why_size, "no widget found on this machine");
    return TOPOML_E_UNSUPPORTED;
#else
    snprintf(why, why_size, "ok");
    return TOPOML_OK;
#endif
}

#ifdef FAULT_ACCEL
#define FAULT_DEVICE "widget accelerator"
#elif defined(FAULT_PROBE_FLAKY)
#define FAULT_DEVICE flaky_device
#else
#define FAULT_DEVICE "cpu"
#endif
#if defined(FAULT_OP_STDOUT) || defined(FAULT_OP_CRASH) || defined(FAULT_OP_RUNAWAY) || \
    defined(FAULT_OP_EXIT) || defined(FAULT_PROC_STDOUT) || defined(FAULT_PROC_MEM) ||     \
    defined(FAULT_KILL_HOST) || defined(FAULT_DAEMON) || defined(FAULT_HOME_WRITE) ||      \
    defined(FAULT_BIG_MEMORY) || defined(FAULT_EXEC) || defined(FAULT_CHATTY)
#define FAULT_IN_OP 1
#endif
#if defined(FAULT_IN_OP) || defined(FAULT_PROBE_FLAKY) || defined(FAULT_STEAL)
#define FAULT_RIGHT_DISTANCES 1
/* f64, euclidean only: what right_distances computes. */
static const topoml_capability_v1 caps[] = {
    {sizeof(topoml_capability_v1), TOPOML_OP_DISTANCES, 2u, 1u, 1u, 0, 0, 0, 0, FAULT_DEVICE, NULL},
};
#else
static const topoml_capability_v1 caps[] = {
    {sizeof(topoml_capability_v1), TOPOML_OP_DISTANCES, 3u, 31u, 1u, 0, 0, 0, 0, FAULT_DEVICE, NULL},
};
#endif

static int capabilities(void *state, const topoml_capability_v1 **c, uint32_t *n)
{
    (void)state;
#ifdef FAULT_BAD_CAPS
    static topoml_capability_v1 bad[1];
    bad[0] = caps[0];
    bad[0].struct_size = 8;
    *c = bad;
#else
    *c = caps;
#endif
    *n = 1;
    return TOPOML_OK;
}

#ifdef FAULT_IN_OP
/* The attempt failed: say how, as an error of the op. */
__attribute__((unused)) static int refused(const topoml_call_v1 *call, const char *what, int status)
{
    snprintf(call->error, call->error_size, "%s: %s", what, strerror(errno));
    return status;
}

/* The sandbox faults' harm (see the top); 0 when done, else the op's error.
 * *wrong: answer wrong. */
static int harm(const topoml_call_v1 *call, bool *wrong)
{
    (void)call;
    *wrong = false;
#ifdef FAULT_PROC_STDOUT
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/fd/1", (long)getppid());
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return refused(call, "open the host's stdout", TOPOML_E_IO);
    dprintf(fd, "PWNED by a plugin through /proc\n");
    close(fd);
#endif
#ifdef FAULT_PROC_MEM
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/mem", (long)getppid());
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return refused(call, "open the host's memory", TOPOML_E_IO);
    close(fd);
    *wrong = true;
#endif
#ifdef FAULT_KILL_HOST
    if (kill(getppid(), SIGKILL) != 0)
        return refused(call, "kill the host", TOPOML_E_IO);
#endif
#ifdef FAULT_DAEMON
    pid_t child = fork();
    if (child < 0)
        return refused(call, "fork", TOPOML_E_IO);
    if (child == 0) {
        setsid();
        alarm(20);
        int s = socket(AF_INET, SOCK_STREAM, 0);
        const char *port = getenv("TOPOML_TEST_PORT");
        struct sockaddr_in a = {.sin_family = AF_INET,
                                .sin_port = htons((uint16_t)atoi(port ? port : "0")),
                                .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        int one = 1;
        setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (s >= 0 && bind(s, (struct sockaddr *)&a, sizeof a) == 0 && listen(s, 1) == 0)
            close(accept(s, NULL, NULL));
        _exit(0);
    }
#endif
#ifdef FAULT_HOME_WRITE
    char path[4096];
    const char *home = getenv("HOME");
    snprintf(path, sizeof path, "%s/.profile", home ? home : "/nonexistent");
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
        return refused(call, "append to $HOME/.profile", TOPOML_E_IO);
    dprintf(fd, "echo PWNED by a plugin\n");
    close(fd);
#endif
#ifdef FAULT_BIG_MEMORY
    const size_t big = (size_t)3 << 30;
    char *m = mmap(NULL, big, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return refused(call, "map 3 GiB", TOPOML_E_NOMEM);
    for (size_t k = 0; k < big; k += 4096)
        m[k] = 1;
    munmap(m, big);
#endif
#ifdef FAULT_EXEC
    const char *marker = getenv("TOPOML_TEST_EXEC_MARKER");
    execl("/usr/bin/touch", "touch", marker ? marker : "/nonexistent/marker", (char *)NULL);
    return refused(call, "exec", TOPOML_E_IO);
#endif
    return 0;
}
#endif

static int distances(void *state, const topoml_call_v1 *call, const topoml_input_v1 *in,
                     void *out)
{
    (void)state;
#ifdef FAULT_OP_ERROR
    (void)in;
    (void)out;
    snprintf(call->error, call->error_size, "the widget overheated");
    return TOPOML_E_DEVICE;
#elif defined(FAULT_RIGHT_DISTANCES)
    (void)call;
#ifdef FAULT_STEAL
    steal("op");
#endif
#ifdef FAULT_CHATTY
    for (uint64_t k = 0; k < 20; k++) {
        char line[64];
        if (call->progress(call->host_data, "chatty", k, 20) != 0) {
            snprintf(line, sizeof line, "cancelled at %llu", (unsigned long long)k);
            call->log(call->host_data, TOPOML_LOG_WARN, line);
            return TOPOML_E_CANCELLED;
        }
        snprintf(line, sizeof line, "chatty step %llu\x1b[31m", (unsigned long long)k);
        call->log(call->host_data, TOPOML_LOG_WARN, line);
        struct timespec pause = {0, 60 * 1000000L};
        nanosleep(&pause, NULL);
    }
#endif
#ifdef FAULT_IN_OP
    bool wrong = false;
    if (in->n > 150) {
        int e = harm(call, &wrong);
        if (e)
            return e;
    }
    if (wrong) {
        uint64_t pairs = in->n * (in->n - 1) / 2;
        for (uint64_t k = 0; k < pairs; k++)
            ((double *)out)[k] = 1.0;
        return TOPOML_OK;
    }
#endif
#ifdef FAULT_OP_STDOUT
    printf("a plugin's chatter on stdout\n");
    fflush(stdout);
#endif
    if (in->n > 150) {
#ifdef FAULT_OP_CRASH
        *(volatile int *)(uintptr_t)getenv("TOPOML_NO_SUCH_VARIABLE_EVER") = 1;
#endif
#ifdef FAULT_OP_RUNAWAY
        for (volatile unsigned long spin = 0;; spin++)
            ;
#endif
#ifdef FAULT_OP_EXIT
        exit(0);
#endif
    }
    /* Right: Ripser's order, d(i,j) for i > j, row by row. */
    const double *x = in->data;
    double *o = out;
    uint64_t k = 0;
    for (uint64_t i = 1; i < in->n; i++)
        for (uint64_t j = 0; j < i; j++) {
            double sum = 0;
            for (uint64_t c = 0; c < in->dim; c++) {
                double d = x[i * in->dim + c] - x[j * in->dim + c];
                sum += d * d;
            }
            o[k++] = sqrt(sum);
        }
    return TOPOML_OK;
#else
    /* Every distance 1: wrong, but well-formed. */
    (void)call;
    uint64_t pairs = in->n * (in->n - 1) / 2;
    for (uint64_t k = 0; k < pairs; k++) {
        if (in->dtype == TOPOML_F32)
            ((float *)out)[k] = 1.0f;
        else
            ((double *)out)[k] = 1.0;
    }
    return TOPOML_OK;
#endif
}

static const topoml_backend_v1 vtable = {
#ifdef FAULT_SHORT_STRUCT
    .struct_size = 16,
#else
    .struct_size = sizeof(topoml_backend_v1),
#endif
    .abi_version = 1,
    .name = FAULT_NAME,
    .version = "0.0.1",
    .vendor = "topoml tests",
    .description = "a plugin that is wrong on purpose",
    .probe = probe,
    .capabilities = capabilities,
    .distances = distances,
#ifdef FAULT_BY_NAME
    .selection = TOPOML_SELECT_BY_NAME,
#endif
};

#ifndef FAULT_NO_ENTRY
TOPOML_PLUGIN_EXPORT int topoml_backend_negotiate(uint32_t *abi_version,
                                                  const topoml_host_v1 *host,
                                                  const topoml_backend_v1 **backend)
{
    (void)host;
#if defined(FAULT_REFUSES)
    (void)abi_version;
    (void)backend;
    (void)&vtable;
    return TOPOML_E_ABI;
#elif defined(FAULT_WRONG_ABI)
    *abi_version = 7;
    *backend = &vtable;
    return TOPOML_OK;
#else
    *abi_version = 1;
    *backend = &vtable;
    return TOPOML_OK;
#endif
}
#else
TOPOML_PLUGIN_EXPORT int topoml_backend_negotiated_wrongly(void);
TOPOML_PLUGIN_EXPORT int topoml_backend_negotiated_wrongly(void)
{
    return (int)vtable.struct_size;
}
#endif
