/*
 * test_registry.c — when the registry probes plugins (registry.c,
 * isolate_probe.c): only on a need, every plugin at once, with the
 * isolation guarantees of probing at context creation.
 *
 * The fault plugins append a line to the file named by TOPOML_TEST_PROBE_LOG
 * whenever their probe runs ("<name> <pid> <start ns> <end ns>", one
 * monotonic clock for every process) and to TOPOML_TEST_MARKER whenever
 * their code is loaded ("<name> <pid>"): the tests read what ran, where and
 * when, never the wall time of a call. PROBE_SLOW's probe sleeps
 * TOPOML_TEST_PROBE_MS.
 */
#include <check.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <ftw.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "topoml/topoml.h"

#include "check_ops.h"

static char probe_log[64], marker[64];

/* Fresh, empty log files named by the plugins' variables. */
static void fresh_logs(void)
{
    strcpy(probe_log, "/tmp/topoml-probe-log-XXXXXX");
    strcpy(marker, "/tmp/topoml-marker-XXXXXX");
    int a = mkstemp(probe_log), b = mkstemp(marker);
    ck_assert_int_ge(a, 0);
    ck_assert_int_ge(b, 0);
    close(a);
    close(b);
    ck_assert_int_eq(setenv("TOPOML_TEST_PROBE_LOG", probe_log, 1), 0);
    ck_assert_int_eq(setenv("TOPOML_TEST_MARKER", marker, 1), 0);
}

static void drop_logs(void)
{
    unlink(probe_log);
    unlink(marker);
    unsetenv("TOPOML_TEST_PROBE_LOG");
    unsetenv("TOPOML_TEST_MARKER");
    unsetenv("TOPOML_TEST_PROBE_MS");
}

static int count_lines(const char *path)
{
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    int n = 0, c;
    while ((c = fgetc(f)) != EOF)
        n += c == '\n';
    fclose(f);
    return n;
}

typedef struct probe_run {
    char name[64];
    long pid;
    long long start, end;
} probe_run;

/* The probe log's entries (at most `max`); returns how many. */
static int read_probe_log(probe_run *runs, int max)
{
    FILE *f = fopen(probe_log, "r");
    ck_assert_ptr_nonnull(f);
    int n = 0;
    probe_run r;
    while (n < max && fscanf(f, "%63s %ld %lld %lld", r.name, &r.pid, &r.start, &r.end) == 4)
        runs[n++] = r;
    fclose(f);
    return n;
}

static void fault_dir(const char *fault, char *out, size_t size)
{
    snprintf(out, size, "%s/fault-plugins/%s", TOPOML_TEST_BUILD_DIR, fault);
}

static topoml_context *context(const char *config_text, const char *plugin_path)
{
    char config_file[64] = "";
    topoml_context_options o = {
        .struct_size = sizeof o, .flags = TOPOML_CTX_NO_ENV, .plugin_path = plugin_path};
    if (config_text) {
        strcpy(config_file, "/tmp/topoml-cfg-XXXXXX");
        int fd = mkstemp(config_file);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, config_text, strlen(config_text)), (ssize_t)strlen(config_text));
        close(fd);
        o.config_path = config_file;
    }
    topoml_context *ctx = NULL;
    int rc = topoml_context_new(&ctx, &o);
    if (config_text)
        unlink(config_file);
    ck_assert_msg(rc == TOPOML_OK, "context: %s", topoml_errmsg(ctx));
    return ctx;
}

/* A Rips barcode of a small cloud (a square: one H1 bar), on whatever the
 * context picks; it must work and run on `want`. */
static void rips_runs_on(topoml_context *ctx, const char *want)
{
    static const double square[] = {0, 0, 1, 0, 1, 1, 0, 1};
    topoml_data *d = NULL;
    ck_assert_int_eq(topoml_data_from_points(ctx, &d, 4, 2, square), TOPOML_OK);
    topoml_rips_options opts;
    topoml_rips_options_init(&opts);
    topoml_barcode *bc = NULL;
    int rc = topoml_barcode_compute(ctx, &bc, d, &opts);
    ck_assert_msg(rc == TOPOML_OK, "%s", topoml_errmsg(ctx));
    ck_assert_str_eq(topoml_last_backend(ctx), want);
    uint64_t n = 0, h1 = 0;
    const topoml_interval *bars = topoml_barcode_intervals(bc, &n);
    for (uint64_t k = 0; k < n; k++)
        h1 += bars[k].dim == 1;
    ck_assert_uint_eq(h1, 1);
    topoml_barcode_free(bc);
    topoml_data_free(ctx, d);
}

/* The plugins of these folders: a slow probe, a good plugin that claims an
 * accelerator, a crashing probe. */
static void plugin_path(char *out, size_t size)
{
    char a[400], b[400], c[400];
    fault_dir("probe-slow", a, sizeof a);
    fault_dir("accel", b, sizeof b);
    fault_dir("probe-crash", c, sizeof c);
    snprintf(out, size, "%s:%s:%s", a, b, c);
}

/* How the reference is asked for without naming any plugin: by name
 * through the C API, or first in the configuration's `prefer` (whatever
 * follows it), for Rips and for distances. */
static const struct {
    const char *config;
    const char *use; /* topoml_use_backend, NULL: automatic selection */
} by_reference[] = {
    {NULL, "scalar"},
    {"gate: \"off\"\n", "scalar"},
    {"enable: [fault-accel]\n", "scalar"},
    {"prefer: [scalar]\n", NULL},
    {"prefer: [scalar, fault-accel]\ngate: \"off\"\n", NULL},
};

START_TEST(test_asking_for_the_reference_starts_no_probe)
{
    char path[2000];
    plugin_path(path, sizeof path);
    fresh_logs();
    topoml_context *ctx = context(by_reference[_i].config, path);
    ck_assert_int_eq(topoml_use_backend(ctx, by_reference[_i].use), TOPOML_OK);
    rips_runs_on(ctx, "scalar");
    check_distances_of_three_points(ctx);
    ck_assert_str_eq(topoml_last_backend(ctx), "scalar");
    /* No plugin code ran anywhere: no probe, not even a constructor. */
    ck_assert_int_eq(count_lines(probe_log), 0);
    ck_assert_int_eq(count_lines(marker), 0);
    /* Listing probes every plugin (ours, and those of topoml's own plugin
     * folder), once per context. */
    ck_assert_uint_ge(topoml_backend_count(ctx), 4);
    for (int round = 0; round < 2; round++)
        for (uint32_t i = 0; i < topoml_backend_count(ctx); i++) {
            topoml_backend_info b = {.struct_size = sizeof b};
            ck_assert_int_eq(topoml_backend_get(ctx, i, &b), TOPOML_OK);
            ck_assert_msg(b.name[0] || b.gate_state == TOPOML_GATE_REJECTED,
                          "backend %u listed unprobed", i);
        }
    probe_run runs[8];
    int n = read_probe_log(runs, 8);
    ck_assert_int_eq(n, 3); /* slow, accel, probe-crash (its log comes before the crash) */
    for (int k = 0; k < n; k++)
        ck_assert_int_ne(runs[k].pid, getpid());
    topoml_context_free(ctx);
    drop_logs();
}
END_TEST

/* Each of these needs to know the plugins, so it probes them (all). */
typedef enum need { NEED_LIST, NEED_UNKNOWN_NAME, NEED_AUTO } need;

START_TEST(test_a_call_that_needs_the_plugins_probes_them_all)
{
    char path[2000];
    plugin_path(path, sizeof path);
    fresh_logs();
    topoml_context *ctx = context("gate: strict\n", path);
    ck_assert_int_eq(count_lines(probe_log), 0); /* creating the context probes nothing */
    topoml_backend_info b = {.struct_size = sizeof b};
    switch ((need)_i) {
    case NEED_LIST: ck_assert_int_eq(topoml_backend_get(ctx, 0, &b), TOPOML_OK); break;
    case NEED_UNKNOWN_NAME: {
        /* No file is named for it, so every one is probed, and the refusal
         * lists what was found: the plugins too. */
        ck_assert_int_eq(topoml_use_backend(ctx, "no-such-backend"), TOPOML_E_NOT_FOUND);
        ck_assert_msg(strstr(topoml_errmsg(ctx), "no backend is named 'no-such-backend'") &&
                          strstr(topoml_errmsg(ctx), "fault-probe-slow") &&
                          strstr(topoml_errmsg(ctx), "fault-accel"),
                      "%s", topoml_errmsg(ctx));
        break;
    }
    case NEED_AUTO: rips_runs_on(ctx, "scalar"); break;
    }
    probe_run runs[8];
    ck_assert_int_eq(read_probe_log(runs, 8), 3);
    /* Nothing probes them again in this context. */
    rips_runs_on(ctx, "scalar");
    for (uint32_t i = 0; i < topoml_backend_count(ctx); i++)
        ck_assert_int_eq(topoml_backend_get(ctx, i, &b), TOPOML_OK);
    ck_assert_int_eq(count_lines(probe_log), 3);
    topoml_context_free(ctx);
    drop_logs();
}
END_TEST

/* The names in the probe log, in its order, joined by spaces. */
static void probed_names(char *out, size_t size)
{
    probe_run runs[16];
    int n = read_probe_log(runs, 16);
    size_t len = 0;
    out[0] = '\0';
    for (int k = 0; k < n && len < size; k++)
        len += (size_t)snprintf(out + len, size - len, "%s%s", k ? " " : "", runs[k].name);
}

/* fault-accel is named, and disabled (gate: strict; its answers are
 * wrong): an op is refused with the gate reason of the file that runs. */
static void accel_refused(topoml_context *ctx)
{
    static const double cloud[] = {0, 0, 3, 4, 6, 8};
    topoml_data *d = NULL;
    ck_assert_int_eq(topoml_data_from_points(ctx, &d, 3, 2, cloud), TOPOML_OK);
    void *out = NULL;
    uint64_t n = 0;
    ck_assert_int_eq(topoml_distances(ctx, d, TOPOML_METRIC_EUCLIDEAN, TOPOML_F64, &out, &n),
                     TOPOML_E_GATE);
    ck_assert_msg(strstr(topoml_errmsg(ctx), "backend 'fault-accel' is not enabled") &&
                      !strstr(topoml_errmsg(ctx), "duplicate"),
                  "%s", topoml_errmsg(ctx));
    topoml_data_free(ctx, d);
}

/* How a plugin is named: through the C API, or first in `prefer` (where,
 * disabled, it is passed over for the reference). */
static const struct {
    const char *config;
    const char *use;
} by_name[] = {
    {"gate: strict\n", "fault-accel"},
    {"prefer: [fault-accel, scalar]\ngate: strict\n", NULL},
};

START_TEST(test_naming_a_plugin_probes_only_the_file_named_for_it)
{
    /* Three plugin files (a slow probe; topoml-backend-fault.so, whose probe
     * crashes and which gives the name fault-probe-crash; and
     * topoml-backend-fault-accel.so): naming fault-accel probes its file
     * alone, once. */
    char path[2000];
    plugin_path(path, sizeof path);
    fresh_logs();
    topoml_context *ctx = context(by_name[_i].config, path);
    ck_assert_int_eq(topoml_use_backend(ctx, by_name[_i].use), TOPOML_OK);
    for (int round = 0; round < 2; round++) {
        if (by_name[_i].use) {
            accel_refused(ctx);
        } else {
            check_distances_of_three_points(ctx);
            ck_assert_str_eq(topoml_last_backend(ctx), "scalar");
        }
    }
    char names[256];
    probed_names(names, sizeof names);
    ck_assert_str_eq(names, "fault-accel");

    /* topoml_backend_find tells of it without probing anything more. */
    topoml_backend_info found = {.struct_size = sizeof found};
    ck_assert_int_eq(topoml_backend_find(ctx, "fault-accel", &found), TOPOML_OK);
    ck_assert_str_eq(found.name, "fault-accel");
    ck_assert_msg(strstr(found.path, "/accel/topoml-backend-fault-accel.so"), "%s", found.path);
    ck_assert_uint_eq(found.gate_state, TOPOML_GATE_DISABLED);
    ck_assert_int_eq(count_lines(probe_log), 1);

    /* Listing after it shows every plugin, probed (the named one not twice). */
    int listed = 0, dup = 0;
    for (uint32_t i = 1; i < topoml_backend_count(ctx); i++) {
        topoml_backend_info b = {.struct_size = sizeof b};
        ck_assert_int_eq(topoml_backend_get(ctx, i, &b), TOPOML_OK);
        ck_assert_msg(b.name[0] || b.gate_state == TOPOML_GATE_REJECTED,
                      "backend %u listed unprobed", i);
        if (!strstr(b.path, "/fault-plugins/"))
            continue; /* topoml's own plugin folder */
        listed++;
        dup += b.gate_reason && strstr(b.gate_reason, "duplicate") != NULL;
    }
    ck_assert_int_eq(listed, 3);
    ck_assert_int_eq(dup, 0);
    ck_assert_int_eq(count_lines(probe_log), 3);
    probed_names(names, sizeof names);
    ck_assert_msg(strstr(names, "fault-probe-slow") && strstr(names, "fault-probe-crash"), "%s",
                  names);
    ck_assert_ptr_eq(strstr(strstr(names, "fault-accel") + 1, "fault-accel"), NULL);
    topoml_context_free(ctx);
    drop_logs();
}
END_TEST

/* Copy `from` to `to`, mode 0700. */
static void copy_file(const char *from, const char *to)
{
    int in = open(from, O_RDONLY);
    ck_assert_int_ge(in, 0);
    int out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0700);
    ck_assert_int_ge(out, 0);
    char buf[65536];
    ssize_t n;
    while ((n = read(in, buf, sizeof buf)) > 0)
        ck_assert_int_eq(write(out, buf, (size_t)n), n);
    close(in);
    close(out);
}

START_TEST(test_plugins_are_probed_at_once_not_one_after_another)
{
    /* Three files of the slow plugin, each probe 800 ms: every probe process
     * is started before any is waited for, so all three windows overlap. */
    char dir[] = "/tmp/topoml-slow-XXXXXX", src[600], files[3][700];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(src, sizeof src, "%s/fault-plugins/probe-slow/topoml-backend-fault-probe-slow.so",
             TOPOML_TEST_BUILD_DIR);
    for (int k = 0; k < 3; k++) {
        snprintf(files[k], sizeof files[k], "%s/topoml-backend-slow-%d.so", dir, k);
        copy_file(src, files[k]);
    }
    fresh_logs();
    ck_assert_int_eq(setenv("TOPOML_TEST_PROBE_MS", "800", 1), 0);
    topoml_context *ctx = context("gate: strict\n", dir);
    check_distances_of_three_points(ctx); /* automatic selection: every plugin is probed */
    probe_run runs[8];
    int n = read_probe_log(runs, 8);
    ck_assert_int_eq(n, 3);
    long long last_start = runs[0].start, first_end = runs[0].end;
    for (int k = 1; k < n; k++) {
        ck_assert_int_ne(runs[k].pid, runs[0].pid);
        last_start = runs[k].start > last_start ? runs[k].start : last_start;
        first_end = runs[k].end < first_end ? runs[k].end : first_end;
    }
    ck_assert_msg(last_start < first_end,
                  "the probes ran one after another: the last started %lld ns after the first "
                  "ended",
                  last_start - first_end);

    /* One name in three files: the first found runs, the later ones are its
     * duplicates (and not the other way round). The caller's folder comes
     * first in discovery order, its files sorted. */
    for (uint32_t i = 1; i <= 3; i++) {
        topoml_backend_info b = {.struct_size = sizeof b};
        ck_assert_int_eq(topoml_backend_get(ctx, i, &b), TOPOML_OK);
        ck_assert_str_eq(b.path, files[i - 1]);
        ck_assert_str_eq(b.name, "fault-probe-slow");
        ck_assert_int_eq(b.probe_status, TOPOML_OK);
        if (i == 1) {
            ck_assert_msg(!strstr(b.gate_reason, "duplicate"), "%s", b.gate_reason);
        } else {
            char want[800];
            snprintf(want, sizeof want, "duplicate of backend 'fault-probe-slow' from %s",
                     files[0]);
            ck_assert_msg(strstr(b.gate_reason, want), "%s", b.gate_reason);
        }
    }
    topoml_context_free(ctx);
    drop_logs();
    for (int k = 0; k < 3; k++)
        unlink(files[k]);
    rmdir(dir);
}
END_TEST

static void accel_copy(const char *dir, const char *file_name, char *out, size_t size)
{
    char src[600];
    snprintf(src, sizeof src, "%s/fault-plugins/accel/topoml-backend-fault-accel.so",
             TOPOML_TEST_BUILD_DIR);
    snprintf(out, size, "%s/%s", dir, file_name);
    copy_file(src, out);
}

START_TEST(test_a_plugin_named_unlike_its_file_is_still_found_by_name)
{
    /* fault-accel in a file named topoml-backend-renamed.so, beside the slow
     * plugin: naming fault-accel finds no file named for it, so every file is
     * probed and the plugin is found. The file's name is no backend's. */
    char dir[] = "/tmp/topoml-renamed-XXXXXX", file[700], slow[400], path[1200];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    accel_copy(dir, "topoml-backend-renamed.so", file, sizeof file);
    fault_dir("probe-slow", slow, sizeof slow);
    snprintf(path, sizeof path, "%s:%s", slow, dir);
    fresh_logs();
    topoml_context *ctx = context(_i == 0 ? "gate: strict\n"
                                          : "prefer: [fault-accel, scalar]\ngate: strict\n",
                                  path);
    if (_i == 0) {
        ck_assert_int_eq(topoml_use_backend(ctx, "fault-accel"), TOPOML_OK);
        accel_refused(ctx);
    } else {
        check_distances_of_three_points(ctx);
        ck_assert_str_eq(topoml_last_backend(ctx), "scalar");
    }
    ck_assert_int_eq(count_lines(probe_log), 2);
    ck_assert_int_eq(topoml_use_backend(ctx, "renamed"), TOPOML_E_NOT_FOUND);
    ck_assert_msg(strstr(topoml_errmsg(ctx), "no backend is named 'renamed'") &&
                      strstr(topoml_errmsg(ctx), "fault-accel"),
                  "%s", topoml_errmsg(ctx));
    ck_assert_int_eq(count_lines(probe_log), 2);
    topoml_context_free(ctx);

    /* Named by its file's name first: that file is probed, is not the
     * backend, so every file is probed before the refusal. (Without the
     * probe cache, which would answer from the first context's reports:
     * test_probe_cache.) */
    ctx = context("gate: strict\nprobe_cache: false\n", path);
    ck_assert_int_eq(topoml_use_backend(ctx, "renamed"), TOPOML_E_NOT_FOUND);
    ck_assert_msg(strstr(topoml_errmsg(ctx), "fault-accel") &&
                      strstr(topoml_errmsg(ctx), "fault-probe-slow"),
                  "%s", topoml_errmsg(ctx));
    ck_assert_int_eq(count_lines(probe_log), 4);
    topoml_context_free(ctx);
    drop_logs();
    unlink(file);
    rmdir(dir);
}
END_TEST

START_TEST(test_the_file_named_for_a_backend_runs_before_another_giving_its_name)
{
    /* Two files give the name fault-accel: topoml-backend-a-copy.so, found
     * first, and topoml-backend-fault-accel.so. The file named for the
     * backend runs and the other is its duplicate, whether the backend was
     * named before the listing (_i == 0: only its file probed then) or not. */
    char dir[] = "/tmp/topoml-twonames-XXXXXX", copy[700], named[700];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    accel_copy(dir, "topoml-backend-a-copy.so", copy, sizeof copy);
    accel_copy(dir, "topoml-backend-fault-accel.so", named, sizeof named);
    fresh_logs();
    topoml_context *ctx = context("gate: strict\n", dir);
    if (_i == 0) {
        ck_assert_int_eq(topoml_use_backend(ctx, "fault-accel"), TOPOML_OK);
        accel_refused(ctx);
        ck_assert_int_eq(count_lines(probe_log), 1);
    }
    for (uint32_t i = 1; i <= 2; i++) {
        topoml_backend_info b = {.struct_size = sizeof b};
        ck_assert_int_eq(topoml_backend_get(ctx, i, &b), TOPOML_OK);
        ck_assert_str_eq(b.name, "fault-accel");
        if (strcmp(b.path, copy) == 0) {
            char want[800];
            snprintf(want, sizeof want, "duplicate of backend 'fault-accel' from %s", named);
            ck_assert_msg(strstr(b.gate_reason, want), "%s", b.gate_reason);
            ck_assert_uint_eq(b.gate_state, TOPOML_GATE_DISABLED);
        } else {
            ck_assert_str_eq(b.path, named);
            ck_assert_msg(!strstr(b.gate_reason, "duplicate"), "%s", b.gate_reason);
        }
    }
    ck_assert_int_eq(count_lines(probe_log), 2);
    /* The one that runs is the one named for it, in the same context. */
    ck_assert_int_eq(topoml_use_backend(ctx, "fault-accel"), TOPOML_OK);
    accel_refused(ctx);
    topoml_backend_info found = {.struct_size = sizeof found};
    ck_assert_int_eq(topoml_backend_find(ctx, "fault-accel", &found), TOPOML_OK);
    ck_assert_str_eq(found.path, named);
    topoml_context_free(ctx);
    drop_logs();
    unlink(copy);
    unlink(named);
    rmdir(dir);
}
END_TEST

/* How many times the watched file was read since the last call. */
static int reads_seen(int watch_fd)
{
    char buf[4096];
    int n = 0;
    for (;;) {
        ssize_t got = read(watch_fd, buf, sizeof buf);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return n;
        for (ssize_t at = 0; at < got;) {
            const struct inotify_event *ev = (const struct inotify_event *)(buf + at);
            n += (ev->mask & IN_ACCESS) != 0;
            at += (ssize_t)(sizeof *ev + ev->len);
        }
    }
}

START_TEST(test_a_call_on_the_reference_reads_no_plugin_file)
{
    /* A context that only runs on the reference opens and checks the
     * plugin files but reads none of them (their SHA-256 waits for their
     * probe); a call that probes one reads it. The kernel says when the
     * file is read (inotify), not a clock. */
    char dir[] = "/tmp/topoml-unread-XXXXXX", file[700];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    accel_copy(dir, "topoml-backend-fault-accel.so", file, sizeof file);
    int watch = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    ck_assert_int_ge(watch, 0);
    ck_assert_int_ge(inotify_add_watch(watch, file, IN_ACCESS), 0);
    fresh_logs();
    topoml_context *ctx = context("gate: strict\n", dir);
    ck_assert_int_eq(topoml_use_backend(ctx, "scalar"), TOPOML_OK);
    rips_runs_on(ctx, "scalar");
    check_distances_of_three_points(ctx);
    ck_assert_int_eq(reads_seen(watch), 0);
    ck_assert_int_eq(count_lines(probe_log), 0);
    /* Naming the plugin reads and probes it. */
    ck_assert_int_eq(topoml_use_backend(ctx, "fault-accel"), TOPOML_OK);
    ck_assert_int_gt(reads_seen(watch), 0);
    ck_assert_int_eq(count_lines(probe_log), 1);
    topoml_context_free(ctx);
    close(watch);
    drop_logs();
    unlink(file);
    rmdir(dir);
}
END_TEST

START_TEST(test_finding_a_backend_by_name_probes_what_naming_it_does)
{
    char path[2000];
    plugin_path(path, sizeof path);
    fresh_logs();
    topoml_context *ctx = context("gate: strict\n", path);
    topoml_backend_info b = {.struct_size = sizeof b};
    /* The reference: no probe. */
    ck_assert_int_eq(topoml_backend_find(ctx, "scalar", &b), TOPOML_OK);
    ck_assert_str_eq(b.name, "scalar");
    ck_assert_ptr_null(b.path);
    ck_assert_uint_eq(b.gate_state, TOPOML_GATE_ENABLED);
    ck_assert_int_eq(count_lines(probe_log), 0);
    /* A plugin: its file only. */
    ck_assert_int_eq(topoml_backend_find(ctx, "fault-probe-slow", &b), TOPOML_OK);
    ck_assert_str_eq(b.name, "fault-probe-slow");
    ck_assert_int_eq(b.probe_status, TOPOML_OK);
    ck_assert_int_eq(count_lines(probe_log), 1);
    /* A name nobody has: every file, and the names found in the message. */
    ck_assert_int_eq(topoml_backend_find(ctx, "no-such-backend", &b), TOPOML_E_NOT_FOUND);
    ck_assert_msg(strstr(topoml_errmsg(ctx), "no backend is named 'no-such-backend'") &&
                      strstr(topoml_errmsg(ctx), "fault-accel"),
                  "%s", topoml_errmsg(ctx));
    ck_assert_int_eq(count_lines(probe_log), 3);
    /* A plugin whose probe crashed has no name to be found by. */
    ck_assert_int_eq(topoml_backend_find(ctx, "fault-probe-crash", &b), TOPOML_E_NOT_FOUND);
    /* Misuse. */
    ck_assert_int_eq(topoml_backend_find(NULL, "scalar", &b), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_backend_find(ctx, NULL, &b), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_backend_find(ctx, "scalar", NULL), TOPOML_E_INVALID);
    topoml_backend_info small = {.struct_size = 8};
    ck_assert_int_eq(topoml_backend_find(ctx, "scalar", &small), TOPOML_E_INVALID);
    topoml_context_free(ctx);
    drop_logs();
}
END_TEST

START_TEST(test_a_crashing_probe_rejects_only_its_plugin_when_probed_on_need)
{
    /* The probes run when the automatic selection needs them (_i == 0) or
     * when the backends are listed (_i == 1); either way the crashing one is
     * rejected with the stage, its neighbours probe fine, and the host
     * never runs any of their code. */
    char path[2000];
    plugin_path(path, sizeof path);
    fresh_logs();
    topoml_context *ctx = context("gate: strict\n", path);
    if (_i == 0)
        check_distances_of_three_points(ctx);
    int rejected = 0, probed_ok = 0;
    for (uint32_t i = 1; i < topoml_backend_count(ctx); i++) {
        topoml_backend_info b = {.struct_size = sizeof b};
        ck_assert_int_eq(topoml_backend_get(ctx, i, &b), TOPOML_OK);
        if (!strstr(b.path, "/fault-plugins/"))
            continue; /* topoml's own plugin folder */
        if (strstr(b.path, "/probe-crash/")) {
            ck_assert_uint_eq(b.gate_state, TOPOML_GATE_REJECTED);
            ck_assert_msg(strstr(b.gate_reason, "probe process") &&
                              strstr(b.gate_reason, "in create, probe, capabilities"),
                          "%s", b.gate_reason);
            rejected++;
        } else {
            ck_assert_int_eq(b.probe_status, TOPOML_OK);
            ck_assert_uint_eq(b.gate_state, TOPOML_GATE_DISABLED); /* gate: strict */
            ck_assert_uint_eq(b.n_caps, 1);
            probed_ok++;
        }
    }
    ck_assert_int_eq(rejected, 1);
    ck_assert_int_eq(probed_ok, 2);
    check_distances_of_three_points(ctx);
    rips_runs_on(ctx, "scalar");
    topoml_context_free(ctx);
    /* Their code ran, in probe processes only. */
    FILE *f = fopen(marker, "r");
    ck_assert_ptr_nonnull(f);
    char name[128];
    long pid;
    int lines = 0;
    while (fscanf(f, "%127s %ld", name, &pid) == 2) {
        ck_assert_int_ne(pid, getpid());
        lines++;
    }
    fclose(f);
    ck_assert_int_eq(lines, 3);
    drop_logs();
}
END_TEST

/* The name the loader hands dlopen is bound to one file for the life of
 * the process (loader.c): a context made while another still holds its
 * plugins loaded, and given other descriptor numbers for the same files
 * (here shifted by files opened before it), loads each plugin as itself,
 * where "/proc/self/fd/N" once gave it the object another plugin had been
 * loaded under by that number. */
START_TEST(test_a_later_context_loads_each_plugin_as_itself)
{
    char good[400], accel[400], path[820];
    fault_dir("good", good, sizeof good);
    fault_dir("accel", accel, sizeof accel);
    snprintf(path, sizeof path, "%s:%s", good, accel);
    static const char config[] = "gate: \"off\"\nisolation: none\n";
    topoml_context *first = context(config, path), *kept[5] = {0};
    for (int shift = 0; shift <= 4; shift++) {
        int held[4];
        for (int k = 0; k < shift; k++)
            ck_assert_int_ge(held[k] = open("/dev/null", O_RDONLY | O_CLOEXEC), 0);
        topoml_context *ctx = context(config, path);
        for (int k = shift - 1; k >= 0; k--)
            close(held[k]);
        for (topoml_context *c = first; c; c = c == first ? ctx : NULL) {
            int found = 0;
            for (uint32_t i = 0; i < topoml_backend_count(c); i++) {
                topoml_backend_info info = {.struct_size = sizeof info};
                ck_assert_int_eq(topoml_backend_get(c, i, &info), TOPOML_OK);
                if (!info.name ||
                    (strcmp(info.name, "fault-good") != 0 && strcmp(info.name, "fault-accel") != 0))
                    continue; /* the build tree's plugins are found too */
                found++;
                ck_assert_msg(info.gate_state == TOPOML_GATE_ENABLED, "shift %d: %s: %s", shift,
                              info.name, info.gate_reason);
            }
            ck_assert_int_eq(found, 2);
        }
        if (shift % 2)
            topoml_context_free(ctx);
        else
            kept[shift] = ctx; /* held to the end: what they loaded stays loaded */
    }
    for (int k = 0; k < 5; k++)
        topoml_context_free(kept[k]);
    topoml_context_free(first);
}
END_TEST

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

int main(void)
{
    /* Certificates (none are made: gate strict or off) and probe reports in
     * a cache of our own. */
    char cache[] = "/tmp/topoml-test-cache-XXXXXX";
    if (!mkdtemp(cache) || setenv("XDG_CACHE_HOME", cache, 1) != 0)
        return EXIT_FAILURE;
    Suite *s = suite_create("registry");
    TCase *tc = tcase_create("probing");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_asking_for_the_reference_starts_no_probe, 0,
                        (int)(sizeof by_reference / sizeof by_reference[0]));
    tcase_add_loop_test(tc, test_a_call_that_needs_the_plugins_probes_them_all, NEED_LIST,
                        NEED_AUTO + 1);
    tcase_add_loop_test(tc, test_naming_a_plugin_probes_only_the_file_named_for_it, 0,
                        (int)(sizeof by_name / sizeof by_name[0]));
    tcase_add_loop_test(tc, test_a_plugin_named_unlike_its_file_is_still_found_by_name, 0, 2);
    tcase_add_test(tc, test_finding_a_backend_by_name_probes_what_naming_it_does);
    tcase_add_test(tc, test_a_call_on_the_reference_reads_no_plugin_file);
    tcase_add_loop_test(tc, test_the_file_named_for_a_backend_runs_before_another_giving_its_name,
                        0, 2);
    tcase_add_test(tc, test_plugins_are_probed_at_once_not_one_after_another);
    tcase_add_loop_test(tc, test_a_crashing_probe_rejects_only_its_plugin_when_probed_on_need, 0,
                        2);
    tcase_add_test(tc, test_a_later_context_loads_each_plugin_as_itself);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    nftw(cache, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
