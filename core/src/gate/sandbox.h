/*
 * sandbox.h — the walls around a helper process that runs plugin code
 * (topoml-plugin-host, isolate_ops.c), and what this kernel offers for them.
 *
 * The helper calls tm_sandbox_enter once, after topoml's own start-up (its
 * context) and before the first byte of plugin code runs (the dlopen that
 * runs the plugin's constructors). From then on, in that process and every
 * thread it starts:
 *
 *   - no new privileges (PR_SET_NO_NEW_PRIVS), every capability dropped;
 *   - a seccomp allow-list: no sockets, no fork or exec (threads only), no
 *     ptrace or process_vm_*, no signal to another process, no file opened
 *     for writing (CPU plugins), no prlimit that raises a limit; a call
 *     outside the list ends the process (SIGSYS), so the host sees a
 *     failure and the reference answers;
 *   - Landlock: read-only access to the plugin's own file, the system's
 *     libraries and /proc/self, nothing else (no /proc of other processes,
 *     no file of the user), and no signal to a process outside the helper;
 *     the NVIDIA driver's device files (read, write, ioctl) only for a
 *     plugin whose capability records say TOPOML_CAP_NVIDIA_DRIVER;
 *   - RLIMIT_AS (RLIMIT_DATA for the NVIDIA driver, whose address space
 *     reservations are larger than any memory limit) from the memory limit,
 *     RLIMIT_FSIZE the same (one memfd), RLIMIT_CORE 0;
 *   - a watcher thread that ends the helper when the host is gone (the
 *     lifeline pipe's other end closed, or the parent process changed).
 *
 * The platform's code is in sandbox_linux.c, what does not depend on it in
 * sandbox.c; elsewhere than Linux nothing is entered and tm_sandbox_support
 * says so.
 */
#ifndef TOPOML_SANDBOX_H
#define TOPOML_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* tm_sandbox_policy.flags */
#define TM_SANDBOX_NVIDIA 1u /* the NVIDIA driver's device files and ioctls */
/* For tests that find which wall stops a driver (tests/sandbox_nvidia.c):
 * leave that wall down. topoml's own helpers never set them. */
#define TM_SANDBOX_TEST_NO_LANDLOCK 0x100u
#define TM_SANDBOX_TEST_NO_SECCOMP 0x200u
#define TM_SANDBOX_TEST_NO_RLIMIT 0x400u
#define TM_SANDBOX_TEST_TRAP 0x800u     /* a call outside the list: SIGSYS to a handler */
#define TM_SANDBOX_TEST_PROC_RW 0x1000u /* all of /proc readable and writable */

typedef struct tm_sandbox_policy {
    uint32_t flags;
    uint32_t n_threads;  /* the threads the plugin may start (0: the CPUs) */
    uint64_t max_memory; /* bytes; 0: no limit of topoml's */
    int plugin_fd;       /* the plugin file, readable in the sandbox; -1: none */
    int lifeline_fd;     /* read end of a pipe the host holds open; -1: none */
    int host_pid;        /* the helper's parent; 0: not watched */
    /* topoml's cache folder as the host sees it (its records.key, its
     * certificates; NULL: only the defaults below). No folder that holds
     * it, nor anything in it, is readable in the sandbox: a folder of
     * LD_LIBRARY_PATH or `read_dir` that is the cache folder, one of its
     * ancestors ($HOME) or inside it is left out, and so are the default
     * cache folders ($XDG_CACHE_HOME/topoml, $HOME/.cache/topoml). */
    const char *cache_dir;
    /* One more folder readable in the sandbox (the conformance suite's
     * data files); NULL: none. */
    const char *read_dir;
    /* Where the sandbox says what it left out (debug level); NULL: nowhere. */
    void (*note)(void *user, const char *text);
    void *note_user;
} tm_sandbox_policy;

/* What the kernel offers (tm_sandbox_support) and what was entered. */
#define TM_SANDBOX_NO_NEW_PRIVS 1u
#define TM_SANDBOX_SECCOMP 2u
#define TM_SANDBOX_LANDLOCK 4u
#define TM_SANDBOX_LANDLOCK_SCOPE 8u /* signals to processes outside (ABI 6) */
#define TM_SANDBOX_RLIMIT 16u
#define TM_SANDBOX_ALL 31u

/* Enter the sandbox, as the policy says. 0 when every wall this kernel
 * offers is up (`why` then lists the ones it lacks, or is empty); -1 when
 * one it offers could not be raised (`why` says which): the caller must not
 * run plugin code then. */
int tm_sandbox_enter(const tm_sandbox_policy *policy, char *why, size_t why_size);

/* The walls this kernel offers (TM_SANDBOX_* bits), the Landlock ABI
 * version (0: none) and one line for `topoml backends`: "seccomp, landlock
 * (ABI 7), no new privileges, memory limit" or "partial: no landlock
 * (kernel ABI 0); ...". Cheap after the first call. */
uint32_t tm_sandbox_support(int *landlock_abi, char *text, size_t size);

/* tm_sandbox_support's line, made once for the process. */
const char *tm_sandbox_text(void);

/* The address-space limit a helper gets for a call's memory limit
 * (0: none), as tm_sandbox_enter sets it. */
uint64_t tm_sandbox_memory_limit(const tm_sandbox_policy *policy);

/* The host's side: a helper starts / ends. Where the kernel has no Landlock
 * to keep a helper from /proc/<host>/mem, the host is made non-dumpable
 * while at least one helper lives (and set back after the last one). */
void tm_sandbox_host_hold(void);
void tm_sandbox_host_release(void);
/* The same, as on a kernel with (true) or without Landlock (tests). */
void tm_sandbox_host_hold_as(bool landlock);
void tm_sandbox_host_release_as(bool landlock);

#endif
