/*
 * test_sandbox.c — the walls of a helper's sandbox (core/src/gate/sandbox.h),
 * each tried from a child process of this test that entered it: what a
 * compute plugin needs still works (threads, reading the system's
 * libraries and /proc/self, memory under the limit), and what it may not
 * do fails — an error where the wall is Landlock or a limit, the end of the
 * process (SIGSYS) where it is the seccomp filter. Also the lifeline (the
 * child ends when this process closes its pipe) and the host's
 * non-dumpable hold where Landlock is missing. A wall this kernel lacks is
 * skipped with the reason; under Valgrind (whose own system calls the
 * filter refuses) the children are not run.
 *
 * The same walls against real plugins, through the CLI: tests/cli/test_sandbox.py.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gate/sandbox.h"

static bool under_valgrind(void)
{
    const char *p = getenv("LD_PRELOAD");
    return p && strstr(p, "vgpreload");
}

static void *nothing(void *arg)
{
    return arg;
}

/* What the child tries after entering the sandbox; its exit status: 0 as
 * expected, 1 not, 3 could not enter. */
typedef enum {
    TRY_THREAD,       /* allowed: a thread */
    TRY_READ_SYSTEM,  /* allowed: the loader's cache */
    TRY_READ_SELF,    /* allowed: /proc/self/status */
    TRY_MEMORY_SMALL, /* allowed: 32 MiB under a 64 MiB limit */
    TRY_MEMORY_BIG,   /* refused: 1 GiB under a 64 MiB limit (NULL) */
    TRY_RAISE_LIMIT,  /* refused: setrlimit (EPERM) */
    TRY_READ_USER,    /* refused by Landlock: a file of the source tree */
    TRY_READ_PARENT,  /* refused by Landlock: /proc/<parent>/status */
    TRY_SOCKET,       /* ends it: socket */
    TRY_FORK,         /* ends it: fork */
    TRY_EXEC,         /* ends it: execve */
    TRY_KILL_PARENT,  /* ends it: kill(parent, 0) */
    TRY_WRITE_OPEN,   /* ends it: open /dev/null to write */
} attempt;

static const struct {
    attempt what;
    const char *name;
    uint32_t needs; /* TM_SANDBOX_* bits */
    int signal;     /* the child ends by this signal; 0: exits 0 */
} cases[] = {
    {TRY_THREAD, "a thread", 0, 0},
    {TRY_READ_SYSTEM, "read /etc/ld.so.cache", 0, 0},
    {TRY_READ_SELF, "read /proc/self/status", 0, 0},
    {TRY_MEMORY_SMALL, "32 MiB under a 64 MiB limit", TM_SANDBOX_RLIMIT, 0},
    {TRY_MEMORY_BIG, "1 GiB under a 64 MiB limit", TM_SANDBOX_RLIMIT, 0},
    {TRY_RAISE_LIMIT, "raise RLIMIT_AS", TM_SANDBOX_SECCOMP, 0},
    {TRY_READ_USER, "read a file of the user", TM_SANDBOX_LANDLOCK, 0},
    {TRY_READ_PARENT, "read /proc/<parent>/status", TM_SANDBOX_LANDLOCK, 0},
    {TRY_SOCKET, "socket", TM_SANDBOX_SECCOMP, SIGSYS},
    {TRY_FORK, "fork", TM_SANDBOX_SECCOMP, SIGSYS},
    {TRY_EXEC, "execve", TM_SANDBOX_SECCOMP, SIGSYS},
    {TRY_KILL_PARENT, "kill the parent", TM_SANDBOX_SECCOMP, SIGSYS},
    {TRY_WRITE_OPEN, "open /dev/null to write", TM_SANDBOX_SECCOMP, SIGSYS},
};

static int refused(int fd)
{
    return fd < 0 && errno == EACCES ? 0 : 1;
}

static int try(attempt what)
{
    char path[64];
    switch (what) {
    case TRY_THREAD: {
        pthread_t t;
        return pthread_create(&t, NULL, nothing, NULL) == 0 && pthread_join(t, NULL) == 0 ? 0 : 1;
    }
    case TRY_READ_SYSTEM: return open("/etc/ld.so.cache", O_RDONLY | O_CLOEXEC) >= 0 ? 0 : 1;
    case TRY_READ_SELF: return open("/proc/self/status", O_RDONLY | O_CLOEXEC) >= 0 ? 0 : 1;
    case TRY_MEMORY_SMALL:
    case TRY_MEMORY_BIG: {
        size_t n = what == TRY_MEMORY_SMALL ? (size_t)32 << 20 : (size_t)1 << 30;
        char *p = malloc(n);
        if (p)
            memset(p, 1, n);
        return (p != NULL) == (what == TRY_MEMORY_SMALL) ? 0 : 1;
    }
    case TRY_RAISE_LIMIT: {
        struct rlimit r = {RLIM_INFINITY, RLIM_INFINITY};
        return setrlimit(RLIMIT_AS, &r) != 0 && errno == EPERM ? 0 : 1;
    }
    case TRY_READ_USER:
        return refused(open(TOPOML_SOURCE_DIR "/README.md", O_RDONLY | O_CLOEXEC));
    case TRY_READ_PARENT:
        snprintf(path, sizeof path, "/proc/%ld/status", (long)getppid());
        return refused(open(path, O_RDONLY | O_CLOEXEC));
    case TRY_SOCKET: socket(AF_UNIX, SOCK_STREAM, 0); return 1;
    case TRY_FORK: fork(); return 1;
    case TRY_EXEC: execl("/bin/true", "true", (char *)NULL); return 1;
    case TRY_KILL_PARENT: kill(getppid(), 0); return 1;
    case TRY_WRITE_OPEN: open("/dev/null", O_WRONLY | O_CLOEXEC); return 1;
    }
    return 1;
}

START_TEST(test_each_wall_of_the_sandbox_from_a_child)
{
    int abi;
    char text[300];
    uint32_t have = tm_sandbox_support(&abi, text, sizeof text);
    if (under_valgrind() || (have & cases[_i].needs) != cases[_i].needs) {
        fprintf(stderr, "skipped %s: %s\n", cases[_i].name,
                under_valgrind() ? "under Valgrind" : text);
        return;
    }
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        tm_sandbox_policy p = {.max_memory = 64u << 20, .n_threads = 1, .plugin_fd = -1,
                               .lifeline_fd = -1};
        char why[400];
        if (tm_sandbox_enter(&p, why, sizeof why) != 0)
            _exit(3);
        _exit(try(cases[_i].what));
    }
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    if (cases[_i].signal)
        ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == cases[_i].signal,
                      "%s: status 0x%x, not signal %d", cases[_i].name, st, cases[_i].signal);
    else
        ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: status 0x%x", cases[_i].name,
                      st);
}
END_TEST

/* The child holds the read end of a pipe as its lifeline and waits; when
 * this process closes the write end (as the kernel does when a host ends),
 * the child ends by itself, within a second. */
START_TEST(test_a_helper_ends_when_its_lifeline_closes)
{
    if (under_valgrind())
        return;
    int life[2];
    ck_assert_int_eq(pipe(life), 0);
    pid_t parent = getpid();
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        close(life[1]);
        tm_sandbox_policy p = {.plugin_fd = -1, .lifeline_fd = life[0], .host_pid = parent};
        char why[400];
        if (tm_sandbox_enter(&p, why, sizeof why) != 0)
            _exit(3);
        for (;;)
            pause();
    }
    close(life[0]);
    struct timespec pause_ = {0, 200 * 1000000L};
    nanosleep(&pause_, NULL);
    int st;
    ck_assert_int_eq(waitpid(pid, &st, WNOHANG), 0); /* still there while the pipe is open */
    close(life[1]);
    int waited = 0;
    while (waitpid(pid, &st, WNOHANG) == 0 && waited < 200) {
        struct timespec tick = {0, 10 * 1000000L};
        nanosleep(&tick, NULL);
        waited++;
    }
    if (waited >= 200) {
        kill(pid, SIGKILL);
        waitpid(pid, &st, 0);
        ck_abort_msg("the child outlived its lifeline by 2 s");
    }
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status 0x%x", st);
}
END_TEST

/* Where the kernel has no Landlock, the host is not dumpable while a helper
 * lives, and as before after the last one; with Landlock it is left alone. */
START_TEST(test_the_host_is_not_dumpable_while_a_helper_lives_without_landlock)
{
    ck_assert_int_eq(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), 1);
    tm_sandbox_host_hold_as(true);
    ck_assert_int_eq(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), 1);
    tm_sandbox_host_release_as(true);
    tm_sandbox_host_hold_as(false);
    tm_sandbox_host_hold_as(false);
    ck_assert_int_eq(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), 0);
    tm_sandbox_host_release_as(false);
    ck_assert_int_eq(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), 0); /* one helper still lives */
    tm_sandbox_host_release_as(false);
    ck_assert_int_eq(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), 1);
}
END_TEST

/* The line for `topoml backends` says what the bits say. */
START_TEST(test_the_support_line_says_what_the_kernel_offers)
{
    int abi;
    char text[300], want[64];
    uint32_t have = tm_sandbox_support(&abi, text, sizeof text);
    ck_assert(have & TM_SANDBOX_NO_NEW_PRIVS);
    ck_assert_int_eq(!!(have & TM_SANDBOX_LANDLOCK), abi >= 1);
    snprintf(want, sizeof want, "landlock (ABI %d)", abi);
    ck_assert_msg(abi >= 1 ? strstr(text, want) != NULL : strstr(text, "no landlock") != NULL,
                  "%s", text);
    ck_assert_msg(!!strstr(text, "seccomp, ") == !!(have & TM_SANDBOX_SECCOMP), "%s", text);
    const bool whole = (have & TM_SANDBOX_ALL) == TM_SANDBOX_ALL;
    ck_assert_msg(whole == (strncmp(text, "partial: ", 9) != 0), "%s", text);
    ck_assert_str_eq(tm_sandbox_text(), text);
    fprintf(stderr, "this kernel: %s\n", text);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sandbox");
    TCase *tc = tcase_create("sandbox");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_each_wall_of_the_sandbox_from_a_child, 0,
                        (int)(sizeof cases / sizeof cases[0]));
    tcase_add_test(tc, test_a_helper_ends_when_its_lifeline_closes);
    tcase_add_test(tc, test_the_host_is_not_dumpable_while_a_helper_lives_without_landlock);
    tcase_add_test(tc, test_the_support_line_says_what_the_kernel_offers);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
