/*
 * sandbox.c — the parts of a helper's sandbox (sandbox.h) that do not depend
 * on the platform: the memory limit a policy gives, the line that
 * `topoml backends` shows, and, where no platform code exists, a sandbox
 * that says it is none. The walls themselves: sandbox_linux.c.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <unistd.h>

#include "gate/sandbox.h"

uint64_t tm_sandbox_memory_limit(const tm_sandbox_policy *p)
{
    if (!p->max_memory)
        return 0;
    /* The limit covers the helper as a whole: its code and libraries, and
     * per thread a stack (8 MiB) and a malloc arena's reservation (64 MiB). */
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    uint64_t threads = p->n_threads ? p->n_threads : (uint64_t)(cpus > 0 ? cpus : 1);
    uint64_t slack = (256ull << 20) + threads * (72ull << 20);
    return p->max_memory > UINT64_MAX - slack ? 0 : p->max_memory + slack;
}

static pthread_once_t text_once = PTHREAD_ONCE_INIT;
static char text_line[300];

static void make_text(void)
{
    tm_sandbox_support(NULL, text_line, sizeof text_line);
}

const char *tm_sandbox_text(void)
{
    pthread_once(&text_once, make_text);
    return text_line;
}

#ifndef __linux__
/* Elsewhere: no sandbox, and tm_sandbox_support says so. */
uint32_t tm_sandbox_support(int *abi, char *text, size_t size)
{
    if (abi)
        *abi = 0;
    if (text && size)
        snprintf(text, size, "none: no sandbox on this system");
    return 0;
}

int tm_sandbox_enter(const tm_sandbox_policy *policy, char *why, size_t why_size)
{
    (void)policy;
    snprintf(why, why_size, "none: no sandbox on this system");
    return 0;
}

void tm_sandbox_host_hold_as(bool landlock)
{
    (void)landlock;
}

void tm_sandbox_host_release_as(bool landlock)
{
    (void)landlock;
}

void tm_sandbox_host_hold(void) {}

void tm_sandbox_host_release(void) {}
#endif
