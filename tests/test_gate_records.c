/*
 * test_gate_records.c — what the gate decides before any plugin code runs,
 * and what it says: `disable: [NAME]` keeps topoml-backend-NAME.so closed
 * (not even its constructor runs, in a probe process or here); a file from
 * another folder named like a plugin shipped with topoml is refused with
 * the reason, and the shipped one still found; `verify: checks|off` and
 * `enable:` are said at warning level on every context, as `gate: off` is.
 * (The authenticated records themselves: test_certificate, test_verify,
 * test_probe_cache.)
 */
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "topoml/topoml.h"

#include "check_context.h"
#include "check_run.h"

#define FAULT_DIR(x) TOPOML_TEST_BUILD_DIR "/fault-plugins/" x
#define COPY_SO TOPOML_TEST_BUILD_DIR "/conformance-plugins/scalar-copy/topoml-backend-scalar-copy.so"

static char logged[16384];

static void keep_log(void *user, int level, const char *message)
{
    (void)user;
    size_t n = strlen(logged);
    snprintf(logged + n, sizeof logged - n, "%d:%s\n", level, message);
}

/* Lines of the marker file naming `plugin` (every fault plugin's
 * constructor appends "<name> <pid>" to TOPOML_TEST_MARKER). */
static int marker_lines(const char *marker, const char *plugin)
{
    FILE *f = fopen(marker, "r");
    if (!f)
        return 0;
    char name[128];
    long pid;
    int n = 0;
    while (fscanf(f, "%127s %ld", name, &pid) == 2)
        n += strcmp(name, plugin) == 0;
    fclose(f);
    return n;
}

static const topoml_backend_info *find(topoml_context *ctx, const char *name, const char *in_path,
                                       topoml_backend_info *out)
{
    for (uint32_t i = 0; i < topoml_backend_count(ctx); i++) {
        topoml_backend_info b = {.struct_size = sizeof b};
        ck_assert_int_eq(topoml_backend_get(ctx, i, &b), TOPOML_OK);
        if (!strcmp(b.name, name) && (!in_path || (b.path && strstr(b.path, in_path)))) {
            *out = b;
            return out;
        }
    }
    return NULL;
}

START_TEST(test_disable_by_name_runs_none_of_the_plugins_code)
{
    char marker[] = "/tmp/topoml-marker-XXXXXX";
    int fd = mkstemp(marker);
    ck_assert_int_ge(fd, 0);
    close(fd);
    ck_assert_int_eq(setenv("TOPOML_TEST_MARKER", marker, 1), 0);

    /* The control: loaded into this process (gate off, no isolation), its
     * constructor writes the marker from here whatever a sandbox does to
     * the probe process. */
    topoml_context *ctx =
        check_context_from_config("gate: off\nisolation: none\n", FAULT_DIR("by-name"));
    topoml_backend_info b;
    ck_assert_ptr_nonnull(find(ctx, "fault-by-name", NULL, &b));
    ck_assert_uint_eq(b.gate_state, TOPOML_GATE_ENABLED);
    topoml_context_free(ctx);
    ck_assert_int_ge(marker_lines(marker, "fault-by-name"), 1);

    /* Disabled: listed, with the reason, and none of its code ran. */
    ck_assert_int_eq(truncate(marker, 0), 0);
    ctx = check_context_from_config("gate: off\nisolation: none\ndisable: [fault-by-name]\n",
                                    FAULT_DIR("by-name"));
    ck_assert_ptr_nonnull(find(ctx, "fault-by-name", NULL, &b));
    ck_assert_uint_eq(b.gate_state, TOPOML_GATE_DISABLED);
    ck_assert_msg(strstr(b.gate_reason, "none of its code runs"), "%s", b.gate_reason);
    /* Asking for it by name probes nothing either. */
    (void)topoml_use_backend(ctx, "fault-by-name");
    topoml_context_free(ctx);
    ck_assert_int_eq(marker_lines(marker, "fault-by-name"), 0);
    unlink(marker);
    unsetenv("TOPOML_TEST_MARKER");
}
END_TEST

/* A file from another folder named for a shipped plugin: refused, with the
 * reason, before any of it runs; the shipped plugin of that name is still
 * the one found. */
START_TEST(test_a_plugin_cannot_take_a_shipped_plugins_name)
{
    char dir[] = "/tmp/topoml-impostor-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char so[128], cmd[512], marker[] = "/tmp/topoml-marker-XXXXXX";
    snprintf(so, sizeof so, "%s/topoml-backend-threads.so", dir);
    snprintf(cmd, sizeof cmd, "cp '%s' '%s' && chmod 0700 '%s'", FAULT_DIR("good") "/topoml-backend-fault.so", so, so);
    ck_assert_int_eq(system(cmd), 0);
    int fd = mkstemp(marker);
    ck_assert_int_ge(fd, 0);
    close(fd);
    ck_assert_int_eq(setenv("TOPOML_TEST_MARKER", marker, 1), 0);

    logged[0] = '\0';
    topoml_context *ctx = check_context_from_config("gate: off\nisolation: none\n", dir);
    topoml_set_log(ctx, keep_log, NULL, TOPOML_LOG_WARN);
    topoml_backend_info b;
    ck_assert_ptr_nonnull(find(ctx, "threads", dir, &b));
    ck_assert_uint_eq(b.gate_state, TOPOML_GATE_REJECTED);
    ck_assert_msg(strstr(b.gate_reason, "belongs to the plugin shipped with topoml"), "%s",
                  b.gate_reason);
    ck_assert_msg(strstr(logged, "belongs to the plugin shipped with topoml"), "%s", logged);
    /* The shipped one, from topoml's own folder, where it is built. */
    char shipped[PATH_MAX];
    snprintf(shipped, sizeof shipped, "%s/topoml-backend-threads.so", TOPOML_PLUGIN_DIR);
    if (access(shipped, R_OK) == 0) {
        ck_assert_ptr_nonnull(find(ctx, "threads", TOPOML_PLUGIN_DIR, &b));
        ck_assert_uint_ne(b.gate_state, TOPOML_GATE_REJECTED);
    }
    topoml_context_free(ctx);
    ck_assert_int_eq(marker_lines(marker, "fault-good"), 0);
    unlink(marker);
    unsetenv("TOPOML_TEST_MARKER");
    unlink(so);
    rmdir(dir);
}
END_TEST

/* Settings that weaken the gate are said at warning level, to the first
 * log callback a host sets (the CLI sets one on every command). */
START_TEST(test_weakening_settings_warn_on_every_context)
{
    static const struct {
        const char *config, *said;
    } cases[] = {
        {"verify: checks\n", "verify: checks"},
        {"verify: off\n", "verify: off"},
        {"enable: [scalar-copy, other]\n", "enable: [scalar-copy, other]"},
        {"gate: off\n", "gate is off"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        for (int twice = 0; twice < 2; twice++) {
            logged[0] = '\0';
            topoml_context *ctx = check_context_from_config(cases[k].config, "");
            topoml_set_log(ctx, keep_log, NULL, TOPOML_LOG_WARN);
            char want[128];
            snprintf(want, sizeof want, "%d:%s", TOPOML_LOG_WARN, cases[k].said);
            ck_assert_msg(strstr(logged, want), "%s: %s", cases[k].config, logged);
            topoml_context_free(ctx);
        }
    /* The default says nothing of the kind. */
    logged[0] = '\0';
    topoml_context *ctx = check_context_from_config("verify: auto\n", "");
    topoml_set_log(ctx, keep_log, NULL, TOPOML_LOG_WARN);
    ck_assert_msg(!strstr(logged, "verify:") && !strstr(logged, "enable:"), "%s", logged);
    topoml_context_free(ctx);
}
END_TEST

/* First use: the certification's progress reaches the host's progress
 * callback ("certifying NAME", done of total), and the first call after it,
 * re-run on the reference, says "verifying on the reference". */
static char stages[1 << 16];
static uint64_t cert_total, cert_done_max;

static int note_progress(void *user, const char *stage, uint64_t done, uint64_t total)
{
    (void)user;
    if (!strcmp(stage, "certifying scalar-copy")) {
        cert_total = total;
        if (done > cert_done_max)
            cert_done_max = done;
    }
    size_t n = strlen(stages);
    if (n < sizeof stages - 200 && !strstr(stages, stage))
        snprintf(stages + n, sizeof stages - n, "%s\n", stage);
    return 0;
}

START_TEST(test_first_use_shows_certification_and_verification_progress)
{
    char cache[] = "/tmp/topoml-progress-cache-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(cache));
    char config[256];
    snprintf(config, sizeof config, "gate: auto\ncache_dir: %s\n", cache);
    topoml_context *ctx = check_context_from_config(
        config, TOPOML_TEST_BUILD_DIR "/conformance-plugins/scalar-copy");
    stages[0] = '\0';
    cert_total = cert_done_max = 0;
    topoml_set_progress(ctx, note_progress, NULL);
    ck_assert_int_eq(topoml_use_backend(ctx, "scalar-copy"), TOPOML_OK);
    double xy[2 * 40];
    for (int i = 0; i < 40; i++) {
        xy[2 * i] = (double)((i * 37) % 41) / 41.0;
        xy[2 * i + 1] = (double)((i * 11) % 43) / 43.0;
    }
    topoml_data *d = NULL;
    ck_assert_int_eq(topoml_data_from_points(ctx, &d, 40, 2, xy), TOPOML_OK);
    topoml_rips_options o;
    topoml_rips_options_init(&o);
    o.max_dim = 1;
    topoml_barcode *bc = NULL;
    ck_assert_int_eq(topoml_barcode_compute(ctx, &bc, d, &o), TOPOML_OK);
    ck_assert_str_eq(topoml_last_backend(ctx), "scalar-copy");
    ck_assert_msg(cert_total > 100 && cert_done_max > cert_total / 2, "%llu of %llu\n%s",
                  (unsigned long long)cert_done_max, (unsigned long long)cert_total, stages);
    ck_assert_msg(strstr(stages, "verifying on the reference\n"), "%s", stages);
    topoml_barcode_free(bc);
    topoml_data_free(ctx, d);
    topoml_context_free(ctx);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", cache);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("gate_records");
    TCase *tc = tcase_create("gate");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_disable_by_name_runs_none_of_the_plugins_code);
    tcase_add_test(tc, test_a_plugin_cannot_take_a_shipped_plugins_name);
    tcase_add_test(tc, test_weakening_settings_warn_on_every_context);
    tcase_add_test(tc, test_first_use_shows_certification_and_verification_progress);
    suite_add_tcase(s, tc);
    return topoml_check_run(s);
}
