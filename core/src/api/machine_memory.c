/*
 * machine_memory.c — how much memory this process may use, from the
 * machine: half of the memory available when the context is made
 * (MemAvailable in /proc/meminfo; half of physical memory where the kernel
 * does not say), RLIMIT_AS, and the memory limit of the cgroup the process
 * runs in (v2 memory.max, v1 memory.limit_in_bytes, of its own group and
 * every group above it). The smallest is the context's default memory
 * limit (context.c), so that work too large for the machine is refused
 * with an estimate instead of growing until the machine is unusable or the
 * kernel ends it; a share, so that the rest of the machine keeps working.
 *
 * Also the CPUs this process may run on (sched_getaffinity) and the rule of
 * how many threads a call may use (tm_cpus_available, tm_threads_allowed).
 *
 * Platform code only: Linux's /proc and /sys layout. Not here: the limit's
 * use (context.c), the configuration's max_memory (config.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "api/api.h"

/* A file's first line as a number of bytes; false for "max", a missing or
 * unreadable file, or anything that is not a plain number. */
static bool read_limit_file(const char *path, uint64_t *out)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return false;
    char buf[64];
    bool ok = fgets(buf, sizeof buf, f) != NULL;
    fclose(f);
    if (!ok || buf[0] < '0' || buf[0] > '9')
        return false;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(buf, &end, 10);
    if (errno || (*end != '\n' && *end != '\0'))
        return false;
    *out = v;
    return true;
}

/* The smallest limit file `name` in the cgroup folder `dir` and its
 * parents up to `root`. `dir` is modified. */
static bool cgroup_walk(const char *root, char *dir, const char *name, uint64_t *out)
{
    bool any = false;
    size_t root_len = strlen(root);
    for (;;) {
        char path[4096];
        uint64_t v = 0;
        if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) < sizeof path &&
            read_limit_file(path, &v) && (!any || v < *out)) {
            *out = v;
            any = true;
        }
        char *slash = strrchr(dir, '/');
        if (!slash || (size_t)(slash - dir) < root_len)
            break;
        *slash = '\0';
    }
    return any;
}

/* The cgroup limits for the process described by `proc_cgroup` (the text
 * of /proc/self/cgroup) under the mount point `sys_root` (/sys/fs/cgroup). */
static bool cgroup_limit(const char *proc_cgroup, const char *sys_root, uint64_t *out)
{
    FILE *f = fopen(proc_cgroup, "re");
    if (!f)
        return false;
    bool any = false;
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        /* "hierarchy-ID:controllers:path" */
        char *c1 = strchr(line, ':');
        char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2 || c2[1] != '/')
            continue;
        *c1 = *c2 = '\0';
        const char *controllers = c1 + 1, *path = c2 + 1;
        char root[4096], dir[8192];
        const char *file;
        if (strcmp(line, "0") == 0 && *controllers == '\0') {
            snprintf(root, sizeof root, "%s", sys_root); /* v2: one unified tree */
            file = "memory.max";
        } else if (strstr(controllers, "memory") != NULL) {
            snprintf(root, sizeof root, "%s/memory", sys_root);
            file = "memory.limit_in_bytes";
        } else {
            continue;
        }
        if ((size_t)snprintf(dir, sizeof dir, "%s%s", root, strcmp(path, "/") ? path : "") >=
            sizeof dir)
            continue;
        uint64_t v = 0;
        if (cgroup_walk(root, dir, file, &v) && (!any || v < *out)) {
            *out = v;
            any = true;
        }
    }
    fclose(f);
    return any;
}

/* MemAvailable of a /proc/meminfo text, in bytes; false when it has none. */
static bool mem_available(const char *meminfo, uint64_t *out)
{
    FILE *f = fopen(meminfo, "re");
    if (!f)
        return false;
    char line[256];
    bool ok = false;
    while (!ok && fgets(line, sizeof line, f)) {
        unsigned long long kib;
        if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1 && kib <= UINT64_MAX / 1024) {
            *out = (uint64_t)kib * 1024;
            ok = true;
        }
    }
    fclose(f);
    return ok;
}

/* v1 reports "no limit" as a huge number (LONG_MAX rounded to pages). */
#define NO_LIMIT_ABOVE (UINT64_C(1) << 60)

uint64_t tm_machine_memory_at(const char *proc_cgroup, const char *sys_root, const char *meminfo,
                              char *source, size_t source_size)
{
    uint64_t best = 0;
    const char *why = "no limit known";
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    uint64_t avail = 0;
    if (mem_available(meminfo, &avail) && avail > 0) {
        best = avail / 100 * TM_MEMORY_SHARE_PERCENT;
        why = "half of MemAvailable at context creation";
    } else if (pages > 0 && page > 0 && (uint64_t)pages <= UINT64_MAX / (uint64_t)page) {
        best = (uint64_t)pages * (uint64_t)page / 100 * TM_MEMORY_SHARE_PERCENT;
        why = "half of physical memory";
    }
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        (best == 0 || (uint64_t)rl.rlim_cur < best)) {
        best = (uint64_t)rl.rlim_cur;
        why = "the address-space limit (RLIMIT_AS)";
    }
    uint64_t cg = 0;
    if (cgroup_limit(proc_cgroup, sys_root, &cg) && cg < NO_LIMIT_ABOVE &&
        (best == 0 || cg < best)) {
        best = cg;
        why = "the cgroup's memory limit";
    }
    if (source && source_size)
        snprintf(source, source_size, "%s", why);
    return best;
}

uint64_t tm_machine_memory(char *source, size_t source_size)
{
    return tm_machine_memory_at("/proc/self/cgroup", "/sys/fs/cgroup", "/proc/meminfo", source,
                                source_size);
}

unsigned tm_cpus_available(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return 1;
    int n = CPU_COUNT(&set);
    return n > 0 ? (unsigned)n : 1;
}

unsigned tm_threads_allowed(unsigned asked)
{
    const unsigned cpus = tm_cpus_available();
    return asked && asked < cpus ? asked : cpus;
}
