/*
 * sandbox_linux.c — tm_sandbox_enter and tm_sandbox_support on Linux
 * (sandbox.h): no new privileges, capabilities dropped, Landlock through its
 * raw system calls (the ABI version the kernel reports decides which rights
 * are handled), a hand-written seccomp BPF allow-list, resource limits, and
 * the watcher thread that ends a helper whose host is gone.
 *
 * The seccomp filter is written by hand, not with libseccomp: it is short,
 * needs argument checks on a handful of calls only, and adds no library to
 * the helper. It knows x86-64 and AArch64; on another architecture no
 * filter is installed and tm_sandbox_support says so.
 *
 * Why no PR_SET_PDEATHSIG: it fires when the *thread* that started the
 * helper ends, not the host process, so a host that calls topoml from a
 * worker thread (a Python thread pool) would lose its helper between two
 * calls. The lifeline pipe below ends the helper when the host process is
 * gone, whatever thread started it, and whatever killed the host.
 */
#ifdef __linux__
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

#include "gate/sandbox.h"

/* ---- Landlock, from the kernel's UAPI (the build machine's headers may be
 * older than the kernel it runs on) ---- */

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#define __NR_landlock_add_rule 445
#define __NR_landlock_restrict_self 446
#endif

#define LL_CREATE_RULESET_VERSION 1u
#define LL_RULE_PATH_BENEATH 1
#define LL_FS_EXECUTE (1ull << 0)
#define LL_FS_WRITE_FILE (1ull << 1)
#define LL_FS_READ_FILE (1ull << 2)
#define LL_FS_READ_DIR (1ull << 3)
#define LL_FS_ABI1 ((1ull << 13) - 1) /* execute .. make_sym */
#define LL_FS_REFER (1ull << 13)      /* ABI 2 */
#define LL_FS_TRUNCATE (1ull << 14)   /* ABI 3 */
#define LL_FS_IOCTL_DEV (1ull << 15)  /* ABI 5 */
#define LL_NET_BIND_TCP (1ull << 0)   /* ABI 4 */
#define LL_NET_CONNECT_TCP (1ull << 1)
#define LL_SCOPE_ABSTRACT_UNIX (1ull << 0) /* ABI 6 */
#define LL_SCOPE_SIGNAL (1ull << 1)
#define LL_FILE_RIGHTS (LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | LL_FS_TRUNCATE | \
                        LL_FS_IOCTL_DEV)

struct ll_ruleset_attr {
    uint64_t handled_access_fs;
    uint64_t handled_access_net;
    uint64_t scoped;
};

struct ll_path_beneath_attr {
    uint64_t allowed_access;
    int32_t parent_fd;
} __attribute__((packed));

static int landlock_abi(void)
{
    long v = syscall(__NR_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
    return v > 0 ? (int)v : 0;
}

/* ---- seccomp ---- */

#if defined(__x86_64__)
#define SB_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define SB_ARCH AUDIT_ARCH_AARCH64
#endif

#ifndef SECCOMP_RET_KILL_PROCESS
#define SECCOMP_RET_KILL_PROCESS 0x80000000u
#endif
#ifndef SECCOMP_GET_ACTION_AVAIL
#define SECCOMP_GET_ACTION_AVAIL 2
#endif

static bool seccomp_available(void)
{
#ifdef SB_ARCH
    uint32_t action = SECCOMP_RET_KILL_PROCESS;
    return prctl(PR_GET_SECCOMP, 0, 0, 0, 0) >= 0 &&
           syscall(__NR_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0;
#else
    return false;
#endif
}

/* An address- or thread-sanitized build reserves terabytes of shadow before
 * main: an address-space limit would refuse its every later mapping, so
 * the helpers of such a build get no memory limit, and say so. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TM_SANDBOX_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define TM_SANDBOX_ASAN 1
#endif
#endif
#ifndef TM_SANDBOX_ASAN
#define TM_SANDBOX_ASAN 0
#endif

/* What the kernel said, asked once: in a sandboxed helper the questions
 * themselves are calls the filter no longer allows. */
static int known_abi = -1;
static bool known_seccomp;

uint32_t tm_sandbox_support(int *abi, char *text, size_t size)
{
    int ll = __atomic_load_n(&known_abi, __ATOMIC_ACQUIRE);
    if (ll < 0) {
        __atomic_store_n(&known_seccomp, seccomp_available(), __ATOMIC_RELAXED);
        ll = landlock_abi();
        __atomic_store_n(&known_abi, ll, __ATOMIC_RELEASE);
    }
    uint32_t bits = TM_SANDBOX_NO_NEW_PRIVS | (TM_SANDBOX_ASAN ? 0u : TM_SANDBOX_RLIMIT);
    if (__atomic_load_n(&known_seccomp, __ATOMIC_RELAXED))
        bits |= TM_SANDBOX_SECCOMP;
    if (ll >= 1)
        bits |= TM_SANDBOX_LANDLOCK;
    if (ll >= 6)
        bits |= TM_SANDBOX_LANDLOCK_SCOPE;
    if (abi)
        *abi = ll;
    if (text && size) {
        char have[160] = "", lack[200] = "";
        size_t h = 0, l = 0;
        if (bits & TM_SANDBOX_SECCOMP)
            h += (size_t)snprintf(have + h, sizeof have - h, "seccomp, ");
        else
            l += (size_t)snprintf(lack + l, sizeof lack - l, "no seccomp filter, ");
        if (ll >= 1)
            h += (size_t)snprintf(have + h, sizeof have - h, "landlock (ABI %d), ", ll);
        else
            l += (size_t)snprintf(lack + l, sizeof lack - l,
                                  "no landlock (kernel ABI 0: the host is made non-dumpable "
                                  "while a helper runs), ");
        if (ll >= 1 && ll < 6)
            l += (size_t)snprintf(lack + l, sizeof lack - l,
                                  "no landlock signal scope (ABI %d < 6), ", ll);
        snprintf(have + h, sizeof have - h, "no new privileges%s",
                 TM_SANDBOX_ASAN ? "" : ", memory limit");
        if (TM_SANDBOX_ASAN)
            l += (size_t)snprintf(lack + l, sizeof lack - l,
                                  "no memory limit (an address-sanitized build), ");
        if (l >= 2)
            lack[l - 2] = '\0';
        if (l)
            snprintf(text, size, "partial: %s; %s", have, lack);
        else
            snprintf(text, size, "%s", have);
    }
    return bits;
}

/* ---- the filter ---- */

typedef struct prog {
    struct sock_filter f[512];
    unsigned n;
    bool overflow;
} prog;

static void emit(prog *p, uint16_t code, uint32_t k, uint8_t jt, uint8_t jf)
{
    if (p->n >= sizeof p->f / sizeof p->f[0]) {
        p->overflow = true;
        return;
    }
    p->f[p->n++] = (struct sock_filter)BPF_JUMP(code, k, jt, jf);
}

#define RET(p, v) emit(p, BPF_RET | BPF_K, (v), 0, 0)
#define ARG_LO(i) ((uint32_t)offsetof(struct seccomp_data, args[i]))
#define ARG_HI(i) ((uint32_t)offsetof(struct seccomp_data, args[i]) + 4)
#define ALLOW SECCOMP_RET_ALLOW
#define KILL SECCOMP_RET_KILL_PROCESS
#define FAIL(e) (SECCOMP_RET_ERRNO | ((e) & SECCOMP_RET_DATA))

/* if (nr == `nr`) return `action`; */
static void plain(prog *p, int nr, uint32_t action)
{
    emit(p, BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)nr, 0, 1);
    RET(p, action);
}

/* if (nr == `nr`) { the block of `len` instructions, ending in returns } */
static void block_start(prog *p, int nr, uint8_t len)
{
    emit(p, BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)nr, 0, len);
}

/* A = args[i] (low 32 bits) */
static void load_arg(prog *p, int i)
{
    emit(p, BPF_LD | BPF_W | BPF_ABS, ARG_LO(i), 0, 0);
}

static void reload_nr(prog *p)
{
    emit(p, BPF_LD | BPF_W | BPF_ABS, (uint32_t)offsetof(struct seccomp_data, nr), 0, 0);
}

/* The calls every sandboxed helper may make: memory, threads (clone with
 * CLONE_THREAD only, below), time, reading files Landlock lets it open,
 * its own descriptors (the request socket, the pipes, memfds). */
static const int allowed[] = {
    __NR_read, __NR_write, __NR_readv, __NR_writev, __NR_pread64, __NR_pwrite64,
    __NR_preadv, __NR_pwritev, __NR_close, __NR_fstat, __NR_newfstatat, __NR_statx,
    __NR_lseek, __NR_mmap, __NR_mprotect, __NR_munmap, __NR_mremap, __NR_madvise, __NR_brk,
    __NR_msync, __NR_mincore, __NR_mlock, __NR_munlock, __NR_rt_sigaction,
    __NR_rt_sigprocmask, __NR_rt_sigreturn, __NR_sigaltstack, __NR_faccessat,
    __NR_readlinkat, __NR_getdents64, __NR_getcwd, __NR_dup, __NR_dup3, __NR_fcntl,
    __NR_pipe2, __NR_ppoll, __NR_pselect6, __NR_epoll_create1, __NR_epoll_ctl,
    __NR_epoll_pwait, __NR_eventfd2, __NR_futex, __NR_set_robust_list, __NR_get_robust_list,
    __NR_set_tid_address, __NR_exit, __NR_exit_group, __NR_gettid, __NR_getpid, __NR_getppid,
    __NR_getuid, __NR_geteuid, __NR_getgid, __NR_getegid, __NR_getrusage,
    __NR_sched_getaffinity, __NR_sched_setaffinity, __NR_sched_yield, __NR_sched_getparam,
    __NR_sched_getscheduler, __NR_sched_get_priority_max, __NR_sched_get_priority_min,
    __NR_nanosleep, __NR_clock_nanosleep, __NR_clock_gettime, __NR_clock_getres,
    __NR_gettimeofday, __NR_uname, __NR_sysinfo, __NR_getrandom, __NR_memfd_create,
    __NR_ftruncate, __NR_fallocate, __NR_sendmsg, __NR_recvmsg, __NR_membarrier,
    __NR_fadvise64, __NR_fsync, __NR_fdatasync, __NR_getpgid, __NR_getsid,
    __NR_rt_sigsuspend,
#ifdef __NR_pause
    __NR_pause,
#endif
#ifdef __NR_rseq
    __NR_rseq,
#endif
#ifdef __NR_faccessat2
    __NR_faccessat2,
#endif
#ifdef __NR_close_range
    __NR_close_range,
#endif
#ifdef __NR_getrlimit
    __NR_getrlimit,
#endif
#ifdef __NR_poll
    __NR_poll, __NR_select, __NR_pipe, __NR_dup2, __NR_access, __NR_readlink, __NR_stat,
    __NR_lstat, __NR_getdents, __NR_epoll_wait, __NR_epoll_create, __NR_time, __NR_getpgrp,
#endif
#ifdef __NR_arch_prctl
    __NR_arch_prctl,
#endif
};

/* Calls a GPU driver's runtime also makes. */
static const int allowed_nvidia[] = {
    __NR_mbind, __NR_get_mempolicy, __NR_set_mempolicy, __NR_timerfd_create,
    __NR_timerfd_settime, __NR_timerfd_gettime,
#ifdef __NR_eventfd
    __NR_eventfd,
#endif
};

static int install_filter(const tm_sandbox_policy *pol, char *why, size_t why_size)
{
#ifndef SB_ARCH
    (void)pol;
    (void)why;
    (void)why_size;
    return 0;
#else
    const bool nvidia = pol->flags & TM_SANDBOX_NVIDIA;
    const uint32_t self = (uint32_t)getpid();
    prog *p = calloc(1, sizeof *p);
    if (!p) {
        snprintf(why, why_size, "out of memory for the seccomp filter");
        return -1;
    }
    emit(p, BPF_LD | BPF_W | BPF_ABS, (uint32_t)offsetof(struct seccomp_data, arch), 0, 0);
    emit(p, BPF_JMP | BPF_JEQ | BPF_K, SB_ARCH, 1, 0);
    RET(p, KILL);
    reload_nr(p);
#ifdef __x86_64__
    emit(p, BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1); /* the x32 ABI */
    RET(p, KILL);
#endif
    for (size_t i = 0; i < sizeof allowed / sizeof allowed[0]; i++)
        plain(p, allowed[i], ALLOW);
    if (nvidia)
        for (size_t i = 0; i < sizeof allowed_nvidia / sizeof allowed_nvidia[0]; i++)
            plain(p, allowed_nvidia[i], ALLOW);
    /* glibc tries clone3 first and falls back to clone on ENOSYS; clone3's
     * flags are behind a pointer, where a filter cannot look. */
#ifdef __NR_clone3
    plain(p, __NR_clone3, FAIL(ENOSYS));
#endif
    /* Threads, nothing else: CLONE_THREAD set, no new namespace. */
    {
        const uint32_t ns = 0x00020000u /* NEWNS */ | 0x02000000u /* NEWCGROUP */ |
                            0x04000000u /* NEWUTS */ | 0x08000000u /* NEWIPC */ |
                            0x10000000u /* NEWUSER */ | 0x20000000u /* NEWPID */ |
                            0x40000000u /* NEWNET */ | 0x00000080u /* NEWTIME */;
        block_start(p, __NR_clone, 5);
        load_arg(p, 0);
        emit(p, BPF_ALU | BPF_AND | BPF_K, 0x00010000u /* CLONE_THREAD */ | ns, 0, 0);
        emit(p, BPF_JMP | BPF_JEQ | BPF_K, 0x00010000u, 0, 1);
        RET(p, ALLOW);
        RET(p, KILL);
    }
    /* Signals to itself only (raise, abort, pthread_kill). */
    static const int own_signals[] = {__NR_kill, __NR_tgkill};
    for (int i = 0; i < 2; i++) {
        block_start(p, own_signals[i], 4);
        load_arg(p, 0);
        emit(p, BPF_JMP | BPF_JEQ | BPF_K, self, 0, 1);
        RET(p, ALLOW);
        RET(p, KILL);
    }
    /* Limits may be read, never set (they are the sandbox's). */
    block_start(p, __NR_prlimit64, 6);
    emit(p, BPF_LD | BPF_W | BPF_ABS, ARG_LO(2), 0, 0);
    emit(p, BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 3);
    emit(p, BPF_LD | BPF_W | BPF_ABS, ARG_HI(2), 0, 0);
    emit(p, BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1);
    RET(p, ALLOW);
    RET(p, FAIL(EPERM));
#ifdef __NR_setrlimit
    plain(p, __NR_setrlimit, FAIL(EPERM));
#endif
    /* prctl: naming threads and reading state; nothing that changes the
     * process's rights or its parent's view of it. */
    {
        static const uint32_t opts[] = {PR_SET_NAME, PR_GET_NAME, PR_GET_DUMPABLE,
                                        PR_GET_NO_NEW_PRIVS, PR_GET_SECCOMP,
                                        0x53564d41u /* PR_SET_VMA */};
        const uint8_t n = sizeof opts / sizeof opts[0];
        block_start(p, __NR_prctl, (uint8_t)(1 + 2 * n + 1));
        load_arg(p, 0);
        for (uint8_t i = 0; i < n; i++) {
            emit(p, BPF_JMP | BPF_JEQ | BPF_K, opts[i], 0, 1);
            RET(p, ALLOW);
        }
        RET(p, FAIL(EPERM));
    }
    /* ioctl: a GPU driver's, on the device files Landlock lets it open;
     * otherwise only what the C library asks of a descriptor. */
    if (nvidia) {
        plain(p, __NR_ioctl, ALLOW);
    } else {
        static const uint32_t cmds[] = {TCGETS, TIOCGWINSZ, FIONREAD, FIONBIO, FIOCLEX,
                                        FIONCLEX};
        const uint8_t n = sizeof cmds / sizeof cmds[0];
        block_start(p, __NR_ioctl, (uint8_t)(1 + 2 * n + 1));
        load_arg(p, 1);
        for (uint8_t i = 0; i < n; i++) {
            emit(p, BPF_JMP | BPF_JEQ | BPF_K, cmds[i], 0, 1);
            RET(p, ALLOW);
        }
        RET(p, FAIL(ENOTTY));
    }
    /* open: a CPU plugin opens files for reading only (a write, a create,
     * an append, a truncation ends it); a GPU plugin opens its device files
     * read-write, and Landlock decides which. openat2's flags are behind a
     * pointer: ENOSYS (the C library does not need it). */
    {
        const uint32_t writing = O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND |
                                 (O_TMPFILE & ~(uint32_t)O_DIRECTORY);
        struct {
            int nr, flags_arg;
        } opens[] = {{__NR_openat, 2},
#ifdef __NR_open
                     {__NR_open, 1},
#endif
        };
        for (size_t i = 0; i < sizeof opens / sizeof opens[0]; i++) {
            if (nvidia) {
                plain(p, opens[i].nr, ALLOW);
                continue;
            }
            block_start(p, opens[i].nr, 5);
            load_arg(p, opens[i].flags_arg);
            emit(p, BPF_ALU | BPF_AND | BPF_K, writing, 0, 0);
            emit(p, BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1);
            RET(p, ALLOW);
            RET(p, KILL);
        }
#ifdef __NR_openat2
        plain(p, __NR_openat2, FAIL(ENOSYS));
#endif
    }
    /* The NVIDIA driver's cuInit asks for a socket (the MPS control
     * daemon's) and makes, links and removes files (its compute cache):
     * refused as on a read-only machine without that daemon, which it
     * takes in its stride; ended, it would be no GPU at all. */
    if (nvidia) {
        static const int refused[] = {__NR_socket, __NR_mkdirat, __NR_unlinkat, __NR_symlinkat,
                                      __NR_linkat, __NR_renameat,
#ifdef __NR_renameat2
                                      __NR_renameat2,
#endif
#ifdef __NR_mkdir
                                      __NR_mkdir, __NR_unlink, __NR_symlink, __NR_link,
                                      __NR_rename, __NR_rmdir,
#endif
        };
        for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
            plain(p, refused[i], FAIL(EACCES));
    }
    /* Everything else — socket, connect, bind, fork, vfork, execve, ptrace,
     * process_vm_*, pidfd_*, unshare, mount, io_uring, ... — ends it
     * (a test that looks for which call a driver needs traps it instead). */
    RET(p, (pol->flags & TM_SANDBOX_TEST_TRAP) ? SECCOMP_RET_TRAP : KILL);
    if (p->overflow) {
        free(p);
        snprintf(why, why_size, "the seccomp filter is too long");
        return -1;
    }
    struct sock_fprog fp = {.len = (unsigned short)p->n, .filter = p->f};
    long r = syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fp);
    int err = errno;
    free(p);
    if (r != 0) {
        snprintf(why, why_size, "seccomp filter: %s", strerror(err));
        return -1;
    }
    return 0;
#endif
}

/* ---- Landlock rules ---- */

static int add_path(int ruleset, const char *path, uint64_t rights, uint64_t handled)
{
    int fd = open(path, O_PATH | O_CLOEXEC);
    if (fd < 0)
        return 0; /* not on this machine: nothing to allow */
    struct stat st;
    int r = 0;
    if (fstat(fd, &st) == 0) {
        if (!S_ISDIR(st.st_mode))
            rights &= LL_FILE_RIGHTS;
        struct ll_path_beneath_attr a = {.allowed_access = rights & handled, .parent_fd = fd};
        r = (int)syscall(__NR_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &a, 0);
    }
    close(fd);
    return r;
}

static int add_fd(int ruleset, int fd, uint64_t rights, uint64_t handled)
{
    struct ll_path_beneath_attr a = {.allowed_access = rights & handled & LL_FILE_RIGHTS,
                                     .parent_fd = fd};
    return (int)syscall(__NR_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &a, 0);
}

/* `path` made canonical where it exists (else kept as given, without
 * trailing slashes), into `out`. */
static void canonical(const char *path, char *out, size_t size)
{
    char real[PATH_MAX];
    if (realpath(path, real))
        snprintf(out, size, "%s", real);
    else
        snprintf(out, size, "%s", path);
    size_t n = strlen(out);
    while (n > 1 && out[n - 1] == '/')
        out[--n] = '\0';
}

/* Is one of `a` and `b` the other or a folder above it? */
static bool nested(const char *a, const char *b)
{
    size_t na = strlen(a), nb = strlen(b), n = na < nb ? na : nb;
    if (strncmp(a, b, n) != 0)
        return false;
    const char *longer = na < nb ? b : a;
    return na == nb || n == 1 /* "/" */ || longer[n] == '/';
}

/* Would a rule that lets the plugin read folder `dir` let it read topoml's
 * cache folder (its records.key)? Then it is left out, and said so. */
static bool near_cache(const tm_sandbox_policy *pol, const char *dir, const char *whence)
{
    char caches[3][PATH_MAX];
    int n = 0;
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (pol->cache_dir && pol->cache_dir[0] == '/')
        canonical(pol->cache_dir, caches[n++], PATH_MAX);
    if (xdg && xdg[0] == '/' && strlen(xdg) < PATH_MAX - 8) {
        char c[PATH_MAX];
        snprintf(c, sizeof c, "%s/topoml", xdg);
        canonical(c, caches[n++], PATH_MAX);
    }
    if (home && home[0] == '/' && strlen(home) < PATH_MAX - 16) {
        char c[PATH_MAX];
        snprintf(c, sizeof c, "%s/.cache/topoml", home);
        canonical(c, caches[n++], PATH_MAX);
    }
    char d[PATH_MAX];
    canonical(dir, d, sizeof d);
    for (int i = 0; i < n; i++)
        if (nested(d, caches[i])) {
            if (pol->note) {
                char text[PATH_MAX * 2 + 128];
                snprintf(text, sizeof text,
                         "sandbox: %.64s folder %.4000s not made readable: it %s topoml's "
                         "cache folder %.4000s (records.key)",
                         whence, dir, strlen(d) > strlen(caches[i]) ? "is inside" : "holds",
                         caches[i]);
                pol->note(pol->note_user, text);
            }
            return true;
        }
    return false;
}

static int enter_landlock(const tm_sandbox_policy *pol, int abi, char *why, size_t why_size)
{
    uint64_t fs = LL_FS_ABI1;
    if (abi >= 2)
        fs |= LL_FS_REFER;
    if (abi >= 3)
        fs |= LL_FS_TRUNCATE;
    if (abi >= 5)
        fs |= LL_FS_IOCTL_DEV;
    struct ll_ruleset_attr attr = {.handled_access_fs = fs};
    if (abi >= 4)
        attr.handled_access_net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;
    if (abi >= 6)
        attr.scoped = LL_SCOPE_ABSTRACT_UNIX | LL_SCOPE_SIGNAL;
    size_t attr_size = abi >= 6 ? sizeof attr : abi >= 4 ? 2 * sizeof(uint64_t) : sizeof(uint64_t);
    int rs = (int)syscall(__NR_landlock_create_ruleset, &attr, attr_size, 0);
    if (rs < 0) {
        snprintf(why, why_size, "landlock ruleset: %s", strerror(errno));
        return -1;
    }
    const uint64_t read = LL_FS_READ_FILE | LL_FS_READ_DIR;
    /* The C library, the dynamic loader's cache and the system's shared
     * libraries (where a plugin's dependencies are); the helper's own
     * /proc/self; what sysconf reads about the CPUs. */
    static const char *const system_read[] = {
        "/usr", "/lib", "/lib64", "/lib32", "/libx32", "/etc/ld.so.cache", "/etc/ld.so.conf",
        "/etc/ld.so.conf.d", "/etc/ld.so.preload", "/proc/self", "/proc/cpuinfo",
        "/proc/meminfo", "/sys/devices/system/cpu", "/sys/fs/cgroup", NULL};
    int bad = 0;
    for (int i = 0; system_read[i]; i++)
        bad |= add_path(rs, system_read[i], read, fs);
    bad |= add_path(rs, "/dev/null", LL_FS_READ_FILE | LL_FS_WRITE_FILE, fs);
    bad |= add_path(rs, "/dev/zero", LL_FS_READ_FILE, fs);
    bad |= add_path(rs, "/dev/urandom", LL_FS_READ_FILE, fs);
    /* Folders the user's environment adds to the loader's search, and the
     * policy's own: read-only, unless they would open the cache folder. */
    const char *ld = getenv("LD_LIBRARY_PATH");
    if (ld && *ld) {
        char *copy = strdup(ld), *save = NULL;
        for (char *d = copy ? strtok_r(copy, ":", &save) : NULL; d; d = strtok_r(NULL, ":", &save))
            if (d[0] == '/' && !near_cache(pol, d, "LD_LIBRARY_PATH"))
                bad |= add_path(rs, d, read, fs);
        free(copy);
    }
    if (pol->read_dir && pol->read_dir[0] == '/' && !near_cache(pol, pol->read_dir, "the data"))
        bad |= add_path(rs, pol->read_dir, read, fs);
    if (pol->plugin_fd >= 0)
        bad |= add_fd(rs, pol->plugin_fd, LL_FS_READ_FILE, fs);
    if (pol->flags & TM_SANDBOX_NVIDIA) {
        /* The driver's device nodes: open read-write, and ioctl (ABI 5). */
        const uint64_t dev = LL_FS_READ_FILE | LL_FS_WRITE_FILE | LL_FS_IOCTL_DEV;
        static const char *const nodes[] = {"/dev/nvidiactl", "/dev/nvidia-uvm",
                                            "/dev/nvidia-uvm-tools", "/dev/nvidia-modeset",
                                            NULL};
        for (int i = 0; nodes[i]; i++)
            bad |= add_path(rs, nodes[i], dev, fs);
        for (int k = 0; k < 64; k++) {
            char node[32];
            snprintf(node, sizeof node, "/dev/nvidia%d", k);
            bad |= add_path(rs, node, dev, fs);
        }
        bad |= add_path(rs, "/dev/nvidia-caps", dev | LL_FS_READ_DIR, fs);
        /* What the runtime reads about the devices and the driver. */
        static const char *const info[] = {"/proc/driver/nvidia", "/proc/driver/nvidia-uvm",
                                           "/proc/devices", "/proc/modules", "/sys",
                                           "/etc/nvidia", NULL};
        for (int i = 0; info[i]; i++)
            bad |= add_path(rs, info[i], read, fs);
        /* The driver (570 and later) names the threads it starts in cuInit
         * by writing /proc/self/task/<tid>/comm, and fails the whole
         * initialisation (CUDA error 304, "OS call failed") when it may
         * not. The rule is made in the helper itself, so /proc/self is the
         * helper's own folder: its threads' files, nothing of another
         * process. */
        bad |= add_path(rs, "/proc/self/task", read | LL_FS_WRITE_FILE | LL_FS_TRUNCATE, fs);
        /* ... and reads the lowest address it may map. */
        bad |= add_path(rs, "/proc/sys/vm/mmap_min_addr", read, fs);
        if (pol->flags & TM_SANDBOX_TEST_PROC_RW)
            bad |= add_path(rs, "/proc", read | LL_FS_WRITE_FILE | LL_FS_TRUNCATE, fs);
    }
    if (bad) {
        snprintf(why, why_size, "landlock rule: %s", strerror(errno));
        close(rs);
        return -1;
    }
    long r = syscall(__NR_landlock_restrict_self, rs, 0);
    int err = errno;
    close(rs);
    if (r != 0) {
        snprintf(why, why_size, "landlock: %s", strerror(err));
        return -1;
    }
    return 0;
}

/* ---- the watcher ---- */

static int watch_fd = -1, watch_parent;

static void *watch_host(void *unused)
{
    (void)unused;
    for (;;) {
        struct pollfd pf = {watch_fd, POLLIN, 0};
        int r = poll(&pf, 1, 500);
        /* The host closes nothing on this pipe and writes nothing to it:
         * anything readable means its end is gone. */
        if ((r > 0 && pf.revents) || (watch_parent && getppid() != watch_parent))
            syscall(__NR_exit_group, 0);
    }
    return NULL;
}

static int drop_capabilities(char *why, size_t why_size)
{
    struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct d[2];
    memset(d, 0, sizeof d);
    if (syscall(__NR_capget, &h, d) != 0) {
        snprintf(why, why_size, "capget: %s", strerror(errno));
        return -1;
    }
    if (!(d[0].permitted | d[1].permitted | d[0].inheritable | d[1].inheritable))
        return 0;
    memset(d, 0, sizeof d);
    if (syscall(__NR_capset, &h, d) != 0) {
        snprintf(why, why_size, "capset: %s", strerror(errno));
        return -1;
    }
    return 0;
}

int tm_sandbox_enter(const tm_sandbox_policy *pol, char *why, size_t why_size)
{
    why[0] = '\0';
    int abi = 0;
    uint32_t have = tm_sandbox_support(&abi, NULL, 0);
    struct rlimit none = {0, 0};
    if (setrlimit(RLIMIT_CORE, &none) != 0) {
        snprintf(why, why_size, "RLIMIT_CORE: %s", strerror(errno));
        return -1;
    }
    uint64_t lim = TM_SANDBOX_ASAN || (pol->flags & TM_SANDBOX_TEST_NO_RLIMIT)
                       ? 0
                       : tm_sandbox_memory_limit(pol);
    if (lim) {
        struct rlimit r = {(rlim_t)lim, (rlim_t)lim};
        /* A memfd holds a result: as large as the helper may be. */
        struct rlimit file = {(rlim_t)lim, (rlim_t)lim};
        int which = (pol->flags & TM_SANDBOX_NVIDIA) ? RLIMIT_DATA : RLIMIT_AS;
        struct rlimit now;
        /* Never above a limit the host itself runs under. */
        if (getrlimit(which, &now) == 0 && now.rlim_max != RLIM_INFINITY && now.rlim_max < r.rlim_max)
            r.rlim_cur = r.rlim_max = now.rlim_max;
        if (setrlimit(which, &r) != 0 || setrlimit(RLIMIT_FSIZE, &file) != 0) {
            snprintf(why, why_size, "memory limit: %s", strerror(errno));
            return -1;
        }
    }
    if (chdir("/") != 0) {
        snprintf(why, why_size, "chdir /: %s", strerror(errno));
        return -1;
    }
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
        snprintf(why, why_size, "no new privileges: %s", strerror(errno));
        return -1;
    }
    if (drop_capabilities(why, why_size) != 0)
        return -1;
    if ((have & TM_SANDBOX_LANDLOCK) && !(pol->flags & TM_SANDBOX_TEST_NO_LANDLOCK) &&
        enter_landlock(pol, abi, why, why_size) != 0)
        return -1;
    if ((have & TM_SANDBOX_SECCOMP) && !(pol->flags & TM_SANDBOX_TEST_NO_SECCOMP) &&
        install_filter(pol, why, why_size) != 0)
        return -1;
    if (pol->lifeline_fd >= 0 || pol->host_pid > 0) {
        watch_fd = pol->lifeline_fd;
        watch_parent = pol->host_pid;
        pthread_t t;
        pthread_attr_t a;
        pthread_attr_init(&a);
        pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&a, 64 * 1024);
        int e = pthread_create(&t, &a, watch_host, NULL);
        pthread_attr_destroy(&a);
        if (e != 0) {
            snprintf(why, why_size, "watcher thread: %s", strerror(e));
            return -1;
        }
    }
    char text[300];
    tm_sandbox_support(NULL, text, sizeof text);
    if (strncmp(text, "partial: ", 9) == 0)
        snprintf(why, why_size, "%s", text);
    return 0;
}

/* ---- the host ---- */

static pthread_mutex_t hold_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned holders;
static int saved_dumpable = -1;

static bool host_has_landlock(void)
{
    int abi;
    tm_sandbox_support(&abi, NULL, 0);
    return abi >= 1;
}

void tm_sandbox_host_hold_as(bool landlock)
{
    if (landlock)
        return; /* Landlock keeps helpers from /proc/<host>: nothing to change */
    pthread_mutex_lock(&hold_lock);
    if (holders++ == 0) {
        saved_dumpable = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
        prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    }
    pthread_mutex_unlock(&hold_lock);
}

void tm_sandbox_host_release_as(bool landlock)
{
    if (landlock)
        return;
    pthread_mutex_lock(&hold_lock);
    if (holders && --holders == 0 && saved_dumpable > 0)
        prctl(PR_SET_DUMPABLE, saved_dumpable, 0, 0, 0);
    pthread_mutex_unlock(&hold_lock);
}

void tm_sandbox_host_hold(void)
{
    tm_sandbox_host_hold_as(host_has_landlock());
}

void tm_sandbox_host_release(void)
{
    tm_sandbox_host_release_as(host_has_landlock());
}

#endif /* __linux__ */

