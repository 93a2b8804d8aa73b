/*
 * test_probe_cache.c — probe reports kept between processes
 * (core/src/gate/probe_cache.c): a context that would probe a plugin file
 * already probed on this boot, with this environment and this build of
 * topoml, reads the report kept in the cache folder instead of starting a
 * probe process; any other report is not used; `probe_cache: false` leaves
 * the folder alone; a report the host's own probe contradicts is
 * forgotten; a plugin whose probe crashed or failed is never kept.
 *
 * The fault plugins append "<name> <pid> <start> <end>" to the file named
 * by TOPOML_TEST_PROBE_LOG whenever their probe runs: a line with another
 * pid than ours is a probe process, a line with ours the host's own probe.
 * fault-probe-flaky's probe answers what the file named by
 * TOPOML_TEST_PROBE_CONTROL says ("fail", "crash", "device TEXT"), so that
 * the machine can change between two contexts while the environment does
 * not. Each test has a cache folder of its own (cache_dir).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "topoml/topoml.h"

#include "check_context.h"
#include "check_ops.h"
#include "check_run.h"

#include "gate/certificate.h" /* tm_cert_file: where a plugin's report is kept */
#include "gate/gate_internal.h" /* tm_record_seal: a report sealed as the user could */
#include "gate/sha256.h"

/* The control file is in a folder of its own: a sandboxed helper may read
 * it through LD_LIBRARY_PATH, as it may not read the cache folder. */
static char cache[64], probe_log[64], control_dir[64], control[96];

static void start(void)
{
    strcpy(cache, "/tmp/topoml-probe-cache-XXXXXX");
    strcpy(probe_log, "/tmp/topoml-probe-log-XXXXXX");
    strcpy(control_dir, "/tmp/topoml-probe-control-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(cache));
    ck_assert_ptr_nonnull(mkdtemp(control_dir));
    int fd = mkstemp(probe_log);
    ck_assert_int_ge(fd, 0);
    close(fd);
    snprintf(control, sizeof control, "%s/control", control_dir);
    ck_assert_int_eq(setenv("TOPOML_TEST_PROBE_LOG", probe_log, 1), 0);
    ck_assert_int_eq(setenv("TOPOML_TEST_PROBE_CONTROL", control, 1), 0);
    ck_assert_int_eq(setenv("TOPOML_TEST_PROBE_MS", "10", 1), 0);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void finish(void)
{
    nftw(cache, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
    nftw(control_dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
    unlink(probe_log);
    unsetenv("TOPOML_TEST_PROBE_LOG");
    unsetenv("TOPOML_TEST_PROBE_CONTROL");
    unsetenv("TOPOML_TEST_PROBE_MS");
}

static void set_control(const char *what)
{
    FILE *f = fopen(control, "w");
    ck_assert_ptr_nonnull(f);
    fputs(what, f);
    ck_assert_int_eq(fclose(f), 0);
}

static const char *fault_dir(const char *fault)
{
    static char dir[4][512];
    static int next;
    char *d = dir[next++ % 4];
    snprintf(d, sizeof dir[0], "%s/fault-plugins/%s", TOPOML_TEST_BUILD_DIR, fault);
    return d;
}

/* Log lines of level info or worse, kept for the test to look at. */
typedef struct heard {
    char text[4096];
    size_t len;
} heard;

static void hear(void *user, int level, const char *message)
{
    (void)level;
    heard *h = user;
    if (h->len < sizeof h->text)
        h->len += (size_t)snprintf(h->text + h->len, sizeof h->text - h->len, "%s\n", message);
}

/* A context with our cache folder and `config`, plugins from `dir`. */
static topoml_context *context(const char *config, const char *dir, heard *h)
{
    char text[1024];
    snprintf(text, sizeof text, "cache_dir: %s\n%s", cache, config);
    topoml_context *ctx = check_context_from_config(text, dir);
    if (h) {
        memset(h, 0, sizeof *h);
        topoml_set_log(ctx, hear, h, TOPOML_LOG_INFO);
    }
    return ctx;
}

/* Probes logged so far: in probe processes, and in this process. */
static int probes(bool here)
{
    FILE *f = fopen(probe_log, "r");
    ck_assert_ptr_nonnull(f);
    char name[64];
    long pid;
    long long a, b;
    int n = 0;
    while (fscanf(f, "%63s %ld %lld %lld", name, &pid, &a, &b) == 4)
        n += (pid == (long)getpid()) == here;
    fclose(f);
    return n;
}

/* Where the report of plugin file `so` (in fault-plugins/<fault>/) is kept. */
static const char *report_of(const char *fault, const char *so)
{
    static char out[4400];
    char path[1024], real[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", fault_dir(fault), so);
    ck_assert_ptr_nonnull(realpath(path, real));
    ck_assert(tm_cert_file(cache, real, ".probe", out, sizeof out));
    return out;
}

static const char *slow_report(void)
{
    return report_of("probe-slow", "topoml-backend-fault-probe-slow.so");
}

static const char *flaky_report(void)
{
    return report_of("probe-flaky", "topoml-backend-fault-probe-flaky.so");
}

static bool exists(const char *file)
{
    struct stat st;
    return lstat(file, &st) == 0;
}

static char *read_all(const char *file, size_t *len)
{
    FILE *f = fopen(file, "rb");
    ck_assert_ptr_nonnull(f);
    char *buf = malloc(1 << 21);
    ck_assert_ptr_nonnull(buf);
    *len = fread(buf, 1, (1 << 21) - 1, f);
    buf[*len] = '\0';
    fclose(f);
    return buf;
}

static void write_all(const char *file, const char *buf, size_t len)
{
    int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, buf, len), (ssize_t)len);
    close(fd);
}

/* The backend named `name`, probing what naming it probes. */
static topoml_backend_info find(topoml_context *ctx, const char *name)
{
    topoml_backend_info b = {.struct_size = sizeof b};
    ck_assert_msg(topoml_backend_find(ctx, name, &b) == TOPOML_OK, "%s", topoml_errmsg(ctx));
    return b;
}

/* How the plugin's probe is needed: by naming it, or by listing. */
static void need_slow(topoml_context *ctx, int how)
{
    if (how == 0) {
        ck_assert_int_eq(topoml_use_backend(ctx, "fault-probe-slow"), TOPOML_OK);
        return;
    }
    for (uint32_t i = 0; i < topoml_backend_count(ctx); i++) {
        topoml_backend_info b = {.struct_size = sizeof b};
        ck_assert_int_eq(topoml_backend_get(ctx, i, &b), TOPOML_OK);
    }
}

START_TEST(test_a_second_context_reads_the_kept_report_instead_of_probing)
{
    start();
    heard h;
    topoml_context *ctx = context("gate: strict\n", fault_dir("probe-slow"), &h);
    need_slow(ctx, _i);
    ck_assert_int_eq(probes(false), 1);
    ck_assert_msg(strstr(h.text, "(probed in a child process)"), "%s", h.text);
    topoml_backend_info first = find(ctx, "fault-probe-slow");
    struct stat st;
    ck_assert_int_eq(stat(slow_report(), &st), 0);
    ck_assert_uint_eq(st.st_mode & 0777, 0600);

    /* Another context, as another process would be: no probe process, the
     * same backend. */
    topoml_context *again = context("gate: strict\n", fault_dir("probe-slow"), &h);
    need_slow(again, _i);
    ck_assert_int_eq(probes(false), 1);
    ck_assert_int_eq(probes(true), 0);
    ck_assert_msg(strstr(h.text, "fault-probe-slow' 0.0.1, ABI 1 (probe report from the cache"),
                  "%s", h.text);
    topoml_backend_info second = find(again, "fault-probe-slow");
    ck_assert_str_eq(second.version, first.version);
    ck_assert_str_eq(second.vendor, first.vendor);
    ck_assert_str_eq(second.description, first.description);
    ck_assert_int_eq(second.probe_status, TOPOML_OK);
    ck_assert_str_eq(second.probe_message, first.probe_message);
    ck_assert_uint_eq(second.abi_version, first.abi_version);
    ck_assert_uint_eq(second.gate_state, first.gate_state);
    ck_assert_uint_eq(second.n_caps, 1);
    ck_assert_uint_eq(second.caps[0].op, first.caps[0].op);
    ck_assert_uint_eq(second.caps[0].dtypes, first.caps[0].dtypes);
    ck_assert_uint_eq(second.caps[0].metrics, first.caps[0].metrics);
    ck_assert_str_eq(second.caps[0].device, first.caps[0].device);
    topoml_context_free(again);
    topoml_context_free(ctx);
    finish();
}
END_TEST

/* Write `buf` (a report file read whole, its authentication code last) with
 * a fresh code over what precedes it: what the user, who holds the key,
 * could write. The binding and the report's checksum are then all that
 * stands between a changed report and its use. */
static void write_sealed(const char *file, char *buf, size_t len)
{
    ck_assert(len > TM_RECORD_MAC_LINE && strncmp(buf + len - TM_RECORD_MAC_LINE, "mac=", 4) == 0);
    len -= TM_RECORD_MAC_LINE;
    char line[TM_RECORD_MAC_LINE + 1], why[512];
    ck_assert_msg(tm_record_seal(file, "probe", buf, len, line, why, sizeof why) == TOPOML_OK,
                  "%s", why);
    char *out = malloc(len + TM_RECORD_MAC_LINE);
    ck_assert_ptr_nonnull(out);
    memcpy(out, buf, len);
    memcpy(out + len, line, TM_RECORD_MAC_LINE);
    write_all(file, out, len + TM_RECORD_MAC_LINE);
    free(out);
}

/* Change the first character of the value of `field` ("boot=") in the
 * report's first line. */
static void change_field(const char *file, const char *field)
{
    size_t len;
    char *buf = read_all(file, &len);
    char *nl = strchr(buf, '\n');
    char *at = strstr(buf, field);
    ck_assert_msg(at && nl && at < nl, "no %s in %s", field, buf);
    at += strlen(field);
    *at = *at == '0' ? '1' : '0';
    write_sealed(file, buf, len);
    free(buf);
}

/* Replace the report after the first line by `body`, with a right
 * checksum: the header matches, the report is what we say. */
static void forge_body(const char *file, const char *body, bool sealed)
{
    size_t len;
    char *buf = read_all(file, &len);
    char *at = strstr(buf, " report=");
    ck_assert_ptr_nonnull(at);
    char hex[65], out[2048];
    tm_sha256_hex(body, strlen(body), hex);
    int n = snprintf(out, sizeof out, "%.*s report=%zu:%s\n%s%s", (int)(at - buf), buf,
                     strlen(body), hex, body, buf + len - TM_RECORD_MAC_LINE);
    if (sealed)
        write_sealed(file, out, (size_t)n);
    else
        write_all(file, out, (size_t)n); /* the old code: what a plugin could do */
    free(buf);
}

enum stale {
    OTHER_FILE,   /* another plugin file's SHA-256 */
    OTHER_BOOT,   /* another boot id */
    OTHER_CORE,   /* another core version */
    OTHER_HELPER, /* another build of the probe program */
    OTHER_ENV,    /* another environment */
    TRUNCATED,    /* the last bytes missing */
    CORRUPTED,    /* a byte of the report changed, its checksum not */
    FORGED,       /* a byte changed, its checksum made right, its code not */
    GARBAGE,      /* not a report file at all */
    EMPTY,        /* nothing */
    MALFORMED,    /* a report that does not parse, with a right checksum */
    UNSUPPORTED,  /* a complete report whose probe failed: never kept */
    SYMLINK,      /* a symbolic link to a good report */
    WRITABLE,     /* writable by others */
    N_STALE
};

START_TEST(test_a_report_bound_to_anything_else_is_not_used)
{
    start();
    const char *report = slow_report();
    topoml_context *ctx = context("gate: strict\n", fault_dir("probe-slow"), NULL);
    need_slow(ctx, 0);
    topoml_context_free(ctx);
    ck_assert_int_eq(probes(false), 1);
    ck_assert(exists(report));

    size_t len;
    char *good = read_all(report, &len), aside[4500];
    switch ((enum stale)_i) {
    case OTHER_FILE: change_field(report, " file="); break;
    case OTHER_BOOT: change_field(report, " boot="); break;
    case OTHER_CORE: change_field(report, " core="); break;
    case OTHER_HELPER: change_field(report, " helper="); break;
    case OTHER_ENV: ck_assert_int_eq(setenv("TOPOML_TEST_PROBE_CACHE_OTHER", "1", 1), 0); break;
    case TRUNCATED: write_all(report, good, len - 10); break;
    case CORRUPTED: {
        /* One letter of the probe's message: still a report that parses. */
        char *bad = malloc(len + 1);
        memcpy(bad, good, len + 1);
        char *at = strstr(strchr(bad, '\n'), "2:ok,");
        ck_assert_ptr_nonnull(at);
        at[3] = 'K';
        write_all(report, bad, len);
        free(bad);
        break;
    }
    case GARBAGE: write_all(report, "\177ELF not a report\n\n\n", 20); break;
    case EMPTY: write_all(report, "", 0); break;
    case MALFORMED: forge_body(report, "S5:start,I99999:short,E", true); break;
    case UNSUPPORTED: {
        /* Its own report, as if its probe had said "no widget": the probe's
         * status and message ("1:0,2:ok,") become TOPOML_E_UNSUPPORTED, as
         * the probe process writes it (a 64-bit two's complement). */
        char *plain = strndup(good, len - TM_RECORD_MAC_LINE); /* without its code */
        const char *body = strchr(plain, '\n') + 1, *at = strstr(body, "1:0,2:ok,");
        ck_assert_ptr_nonnull(at);
        char status[32], forged[2048];
        snprintf(status, sizeof status, "%llu", (unsigned long long)(int64_t)TOPOML_E_UNSUPPORTED);
        snprintf(forged, sizeof forged, "%.*s%zu:%s,9:no widget,%s", (int)(at - body), body,
                 strlen(status), status, at + strlen("1:0,2:ok,"));
        forge_body(report, forged, true);
        free(plain);
        break;
    }
    case FORGED: {
        /* One letter of the probe's message, the report's checksum made
         * right, the authentication code left as it was (no key). */
        char body[2048];
        snprintf(body, sizeof body, "%.*s", (int)(len - TM_RECORD_MAC_LINE - (size_t)(strchr(good, '\n') + 1 - good)),
                 strchr(good, '\n') + 1);
        char *at = strstr(body, "2:ok,");
        ck_assert_ptr_nonnull(at);
        at[3] = 'K';
        forge_body(report, body, false);
        break;
    }
    case SYMLINK:
        snprintf(aside, sizeof aside, "%s.aside", report);
        ck_assert_int_eq(rename(report, aside), 0);
        ck_assert_int_eq(symlink(aside, report), 0);
        break;
    case WRITABLE: ck_assert_int_eq(chmod(report, 0666), 0); break;
    case N_STALE: break;
    }

    /* Probed in a child again, as if nothing were kept, and right. */
    ctx = context("gate: strict\n", fault_dir("probe-slow"), NULL);
    need_slow(ctx, 0);
    ck_assert_int_eq(probes(false), 2);
    topoml_backend_info b = find(ctx, "fault-probe-slow");
    ck_assert_int_eq(b.probe_status, TOPOML_OK);
    ck_assert_str_eq(b.probe_message, "ok");
    ck_assert_uint_eq(b.gate_state, TOPOML_GATE_DISABLED); /* gate: strict */
    topoml_context_free(ctx);

    /* ... and its report kept in place of the other one (a link is not
     * followed; it is replaced). */
    ctx = context("gate: strict\n", fault_dir("probe-slow"), NULL);
    need_slow(ctx, 0);
    ck_assert_int_eq(probes(false), 2);
    topoml_context_free(ctx);
    struct stat st;
    ck_assert_int_eq(lstat(report, &st), 0);
    ck_assert(S_ISREG(st.st_mode) && (st.st_mode & 0777) == 0600);
    free(good);
    unsetenv("TOPOML_TEST_PROBE_CACHE_OTHER");
    finish();
}
END_TEST

/* Names of .probe files the cache folder saw opened, made, changed or
 * removed, as one string. */
static void probe_events(int watch, char *out, size_t size)
{
    char buf[8192];
    size_t used = 0;
    out[0] = '\0';
    ssize_t got;
    while ((got = read(watch, buf, sizeof buf)) > 0)
        for (ssize_t at = 0; at < got;) {
            const struct inotify_event *ev = (const struct inotify_event *)(buf + at);
            if (ev->len && strstr(ev->name, ".probe") && used < size)
                used += (size_t)snprintf(out + used, size - used, "%s (0x%x) ", ev->name, ev->mask);
            at += (ssize_t)(sizeof *ev + ev->len);
        }
}

START_TEST(test_probe_cache_false_neither_reads_nor_writes_the_cache)
{
    /* With a report kept (_i == 1) or none (_i == 0): two contexts each
     * probe in a child, load the plugin (gate: off, isolation: none) and
     * never touch a .probe file. */
    start();
    const char *report = slow_report();
    if (_i == 1) {
        topoml_context *ctx = context("gate: strict\n", fault_dir("probe-slow"), NULL);
        need_slow(ctx, 0);
        topoml_context_free(ctx);
        ck_assert(exists(report));
    }
    const int before = probes(false);
    int watch = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    ck_assert_int_ge(watch, 0);
    ck_assert_int_ge(inotify_add_watch(watch, cache, IN_ALL_EVENTS), 0);
    for (int round = 1; round <= 2; round++) {
        topoml_context *ctx = context("gate: \"off\"\nisolation: none\nprobe_cache: false\n",
                                      fault_dir("probe-slow"), NULL);
        need_slow(ctx, 0);
        ck_assert_int_eq(probes(false), before + round);
        ck_assert_int_eq(probes(true), round); /* loaded here: its probe ran here too */
        topoml_backend_info b = find(ctx, "fault-probe-slow");
        ck_assert_uint_eq(b.gate_state, TOPOML_GATE_ENABLED);
        topoml_context_free(ctx);
    }
    char seen[1024];
    probe_events(watch, seen, sizeof seen);
    ck_assert_msg(seen[0] == '\0', "the cache's report files were touched: %s", seen);
    ck_assert(exists(report) == (_i == 1));
    close(watch);
    finish();
}
END_TEST

/* What the machine does to fault-probe-flaky between two contexts, and
 * where the plugin runs. */
static const struct {
    const char *control;
    const char *isolation;
    const char *reason; /* why the host rejects it; NULL: it falls back */
} changed[] = {
    {"fail", "none", "its probe failed in this process (the widget went away)"},
    {"device widget v2", "none",
     "it reports the devices 'widget v2' in this process but 'cpu' in the probe process"},
    {"fail", "process", NULL},
};

START_TEST(test_a_kept_report_the_host_contradicts_is_forgotten)
{
    start();
    char config[128];
    snprintf(config, sizeof config, "gate: \"off\"\nisolation: %s\n", changed[_i].isolation);
    const bool here = strcmp(changed[_i].isolation, "none") == 0;
    /* A sandboxed helper reads only the plugin's file, the system's folders
     * and the loader's LD_LIBRARY_PATH folders (docs/security.md): the
     * machine it sees changing is the control file in one of those. */
    if (!here)
        ck_assert_int_eq(setenv("LD_LIBRARY_PATH", control_dir, 1), 0);
    topoml_context *ctx = context(config, fault_dir("probe-flaky"), NULL);
    ck_assert_int_eq(topoml_use_backend(ctx, "fault-probe-flaky"), TOPOML_OK);
    check_distances_of_three_points(ctx);
    ck_assert_str_eq(topoml_last_backend(ctx), "fault-probe-flaky");
    topoml_context_free(ctx);
    /* The probe process's (an isolated helper's probe runs in its sandbox,
     * where the plugin cannot open its log to write). */
    ck_assert_int_eq(probes(false), 1);
    ck_assert(exists(flaky_report()));

    /* The machine changes; the environment does not: the kept report is
     * read, and what the plugin says when it starts contradicts it. */
    set_control(changed[_i].control);
    const int children = probes(false);
    heard h;
    ctx = context(config, fault_dir("probe-flaky"), &h);
    ck_assert_int_eq(topoml_use_backend(ctx, "fault-probe-flaky"), TOPOML_OK);
    ck_assert_msg(strstr(h.text, "probe report from the cache"), "%s", h.text);
    if (here) {
        topoml_backend_info b = find(ctx, "fault-probe-flaky");
        ck_assert_uint_eq(b.gate_state, TOPOML_GATE_REJECTED);
        ck_assert_msg(strstr(b.gate_reason, changed[_i].reason), "%s", b.gate_reason);
        ck_assert_int_eq(probes(false), children);
    } else {
        /* Its helper cannot start it: the reference answers. */
        check_distances_of_three_points(ctx);
        ck_assert_str_eq(topoml_last_backend(ctx), "scalar");
    }
    topoml_context_free(ctx);
    ck_assert(!exists(flaky_report()));

    /* The next context probes it afresh, in a child, and sees the change. */
    ctx = context(config, fault_dir("probe-flaky"), NULL);
    topoml_backend_info b = find(ctx, "fault-probe-flaky");
    ck_assert_int_gt(probes(false), children);
    if (strcmp(changed[_i].control, "fail") == 0) {
        ck_assert_int_eq(b.probe_status, TOPOML_E_UNSUPPORTED);
        ck_assert_uint_eq(b.gate_state, TOPOML_GATE_UNSUPPORTED);
        ck_assert_str_eq(b.probe_message, "the widget went away");
        ck_assert(!exists(flaky_report())); /* a failed probe is not kept */
    } else {
        ck_assert_uint_eq(b.gate_state, TOPOML_GATE_ENABLED);
        ck_assert_str_eq(b.caps[0].device, "widget v2");
        ck_assert(exists(flaky_report()));
    }
    topoml_context_free(ctx);
    unsetenv("LD_LIBRARY_PATH");
    finish();
}
END_TEST

START_TEST(test_a_plugin_that_takes_the_host_down_from_a_kept_report_is_probed_in_a_child_next)
{
    /* Loaded into the host from a kept report, the plugin's probe now
     * crashes: that process dies, but the report was dropped before the
     * plugin ran, so the next process probes it in a child (which dies
     * instead) and carries on. */
    start();
    const char *config = "gate: \"off\"\nisolation: none\n";
    topoml_context *ctx = context(config, fault_dir("probe-flaky"), NULL);
    ck_assert_int_eq(topoml_use_backend(ctx, "fault-probe-flaky"), TOPOML_OK);
    topoml_context_free(ctx);
    ck_assert(exists(flaky_report()));
    set_control("crash");

    /* Under Valgrind the dying child's own report (its invalid write, the
     * memory it held) is printed; only this process's errors count. */
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        topoml_context *doomed = context(config, fault_dir("probe-flaky"), NULL);
        topoml_use_backend(doomed, "fault-probe-flaky");
        _exit(0); /* not reached when the probe crashes */
    }
    int status = 0;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    /* Died of the crash: SIGSEGV, or, under a sanitizer that reports the
     * bad store (UBSan) or the SEGV (ASan) and exits, a failure status.
     * Never the _exit(0) past it. */
    ck_assert_msg((WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV) ||
                      (WIFEXITED(status) && WEXITSTATUS(status) != 0),
                  "status %d", status);
    ck_assert(!exists(flaky_report()));

    const int children = probes(false);
    ctx = context(config, fault_dir("probe-flaky"), NULL);
    ck_assert_int_eq(topoml_use_backend(ctx, "fault-probe-flaky"), TOPOML_E_NOT_FOUND);
    ck_assert_int_eq(probes(false), children + 1);
    ck_assert(!exists(flaky_report()));
    check_distances_of_three_points(ctx);
    topoml_context_free(ctx);
    finish();
}
END_TEST

START_TEST(test_a_plugin_whose_probe_crashed_or_failed_is_never_kept)
{
    /* A probe that crashes (rejected), one that says unsupported, a plugin
     * of another ABI (refused): each listed in two contexts, probed in a
     * child both times, and no report kept. */
    static const struct {
        const char *fault;
        uint32_t gate_state;
        int probes; /* logged per context: a refused plugin is never probed,
                       a crashing probe logs before it crashes */
    } faults[] = {
        {"probe-crash", TOPOML_GATE_REJECTED, 1},
        {"probe-fails", TOPOML_GATE_UNSUPPORTED, 1},
        {"wrong-abi", TOPOML_GATE_REJECTED, 0},
    };
    start();
    for (size_t k = 0; k < sizeof faults / sizeof faults[0]; k++) {
        const int before = probes(false);
        for (int round = 1; round <= 2; round++) {
            topoml_context *ctx = context("gate: strict\n", fault_dir(faults[k].fault), NULL);
            topoml_backend_info b = {.struct_size = sizeof b};
            ck_assert_int_eq(topoml_backend_get(ctx, 1, &b), TOPOML_OK);
            ck_assert_msg(strstr(b.path, faults[k].fault), "%s", b.path);
            ck_assert_uint_eq(b.gate_state, faults[k].gate_state);
            topoml_context_free(ctx);
            ck_assert_int_eq(probes(false), before + round * faults[k].probes);
        }
        ck_assert(!exists(report_of(faults[k].fault, "topoml-backend-fault.so")));
    }
    finish();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("probe_cache");
    TCase *tc = tcase_create("probe_cache");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_a_second_context_reads_the_kept_report_instead_of_probing, 0, 2);
    tcase_add_loop_test(tc, test_a_report_bound_to_anything_else_is_not_used, 0, N_STALE);
    tcase_add_loop_test(tc, test_probe_cache_false_neither_reads_nor_writes_the_cache, 0, 2);
    tcase_add_loop_test(tc, test_a_kept_report_the_host_contradicts_is_forgotten, 0,
                        (int)(sizeof changed / sizeof changed[0]));
    tcase_add_test(
        tc, test_a_plugin_that_takes_the_host_down_from_a_kept_report_is_probed_in_a_child_next);
    tcase_add_test(tc, test_a_plugin_whose_probe_crashed_or_failed_is_never_kept);
    suite_add_tcase(s, tc);
    return topoml_check_run(s);
}
