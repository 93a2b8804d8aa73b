/*
 * sandbox_nvidia — does the NVIDIA driver work inside the sandbox a GPU
 * plugin's helper gets (tm_sandbox_enter with TM_SANDBOX_NVIDIA)?
 *
 *   sandbox_nvidia [no-landlock] [no-seccomp] [no-rlimit] [trap] [proc-rw] [none]
 *
 * Enters the sandbox (less the walls named; `none`: no sandbox at all),
 * then loads libcuda.so.1 and calls cuInit, cuDeviceGetCount, makes a
 * context and allocates, writes and reads back 1 MiB of device memory.
 * Prints each step's result; exit 0 when all went well, 77 when this
 * machine has no NVIDIA driver (nothing to test), 1 otherwise. The
 * `gpu`-labelled test runs it with every wall up; the options tell which
 * wall stops a driver that fails (`trap`: a call outside the seccomp list
 * is printed and fails with ENOSYS instead of ending the process;
 * `proc-rw`: all of /proc readable and writable).
 */
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#include "gate/sandbox.h"

typedef int (*cu_int_fn)(unsigned);
typedef int (*cu_count_fn)(int *);
typedef int (*cu_dev_fn)(int *, int);
typedef int (*cu_ctx_fn)(void **, unsigned, int);
typedef int (*cu_alloc_fn)(uint64_t *, size_t);
typedef int (*cu_htod_fn)(uint64_t, const void *, size_t);
typedef int (*cu_dtoh_fn)(void *, uint64_t, size_t);
typedef int (*cu_name_fn)(int, const char **);

static unsigned char host_in[1 << 20], host_out[1 << 20];

/* `trap`: which call the filter refused, then ENOSYS to the caller. */
static void on_sigsys(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    char line[64];
    int n = snprintf(line, sizeof line, "seccomp refused system call %d\n", si->si_syscall);
    if (n > 0)
        (void)!write(1, line, (size_t)n);
#if defined(__x86_64__)
    ((ucontext_t *)uc)->uc_mcontext.gregs[REG_RAX] = -ENOSYS;
#else
    (void)uc;
#endif
}

int main(int argc, char **argv)
{
    uint32_t flags = TM_SANDBOX_NVIDIA;
    int none = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "no-landlock"))
            flags |= TM_SANDBOX_TEST_NO_LANDLOCK;
        else if (!strcmp(argv[i], "no-seccomp"))
            flags |= TM_SANDBOX_TEST_NO_SECCOMP;
        else if (!strcmp(argv[i], "no-rlimit"))
            flags |= TM_SANDBOX_TEST_NO_RLIMIT;
        else if (!strcmp(argv[i], "trap"))
            flags |= TM_SANDBOX_TEST_TRAP;
        else if (!strcmp(argv[i], "proc-rw"))
            flags |= TM_SANDBOX_TEST_PROC_RW;
        else if (!strcmp(argv[i], "none"))
            none = 1;
        else {
            fprintf(stderr, "usage: sandbox_nvidia [no-landlock] [no-seccomp] [no-rlimit] [trap] "
                            "[proc-rw] [none]\n");
            return 2;
        }
    }
    if (access("/dev/nvidiactl", F_OK) != 0) {
        printf("no NVIDIA driver here (/dev/nvidiactl): nothing to test\n");
        return 77;
    }
    if (flags & TM_SANDBOX_TEST_TRAP) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_sigsys;
        sa.sa_flags = SA_SIGINFO;
        sigaction(SIGSYS, &sa, NULL);
    }
    if (!none) {
        /* as a helper serving a GPU plugin's calls: a memory limit of 8 GiB */
        tm_sandbox_policy pol = {.flags = flags, .max_memory = 8ull << 30, .plugin_fd = -1,
                                 .lifeline_fd = -1};
        char why[512];
        if (tm_sandbox_enter(&pol, why, sizeof why) != 0) {
            printf("entering the sandbox failed: %s\n", why);
            return 1;
        }
        printf("sandbox entered (flags %#x)%s%s\n", flags, why[0] ? ": " : "", why);
    }
    void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!cuda) {
        printf("dlopen libcuda.so.1: %s\n", dlerror());
        return 1;
    }
    cu_int_fn cu_init = (cu_int_fn)dlsym(cuda, "cuInit");
    cu_count_fn count = (cu_count_fn)dlsym(cuda, "cuDeviceGetCount");
    cu_dev_fn dev_get = (cu_dev_fn)dlsym(cuda, "cuDeviceGet");
    cu_ctx_fn ctx_create = (cu_ctx_fn)dlsym(cuda, "cuCtxCreate_v2");
    cu_alloc_fn alloc = (cu_alloc_fn)dlsym(cuda, "cuMemAlloc_v2");
    cu_htod_fn htod = (cu_htod_fn)dlsym(cuda, "cuMemcpyHtoD_v2");
    cu_dtoh_fn dtoh = (cu_dtoh_fn)dlsym(cuda, "cuMemcpyDtoH_v2");
    cu_name_fn err_name = (cu_name_fn)dlsym(cuda, "cuGetErrorName");
    if (!cu_init || !count || !dev_get || !ctx_create || !alloc || !htod || !dtoh || !err_name) {
        printf("libcuda.so.1 lacks a driver entry point\n");
        return 1;
    }
#define STEP(what, call)                                                                      \
    do {                                                                                      \
        int rc_ = (call);                                                                     \
        const char *name_ = "?";                                                              \
        err_name(rc_, &name_);                                                                \
        printf("%-22s %s (%d)\n", what, rc_ ? name_ : "ok", rc_);                             \
        if (rc_)                                                                              \
            return 1;                                                                         \
    } while (0)
    int n = 0, dev = 0;
    void *ctx = NULL;
    uint64_t ptr = 0;
    STEP("cuInit", cu_init(0));
    STEP("cuDeviceGetCount", count(&n));
    printf("devices: %d\n", n);
    STEP("cuDeviceGet", dev_get(&dev, 0));
    STEP("cuCtxCreate", ctx_create(&ctx, 0, dev));
    STEP("cuMemAlloc 1 MiB", alloc(&ptr, sizeof host_in));
    for (size_t i = 0; i < sizeof host_in; i++)
        host_in[i] = (unsigned char)(i * 131u + 7u);
    STEP("cuMemcpyHtoD", htod(ptr, host_in, sizeof host_in));
    STEP("cuMemcpyDtoH", dtoh(host_out, ptr, sizeof host_out));
    if (memcmp(host_in, host_out, sizeof host_in) != 0) {
        printf("the device gave back other bytes than it was given\n");
        return 1;
    }
    printf("the driver works in this sandbox\n");
    return 0;
}
