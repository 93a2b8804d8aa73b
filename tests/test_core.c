/*
 * test_core.c — the context, the configuration, the loader and the gate:
 * a context works with no configuration; configuration errors name the
 * line and column; every kind of broken plugin is rejected with its reason
 * while the host keeps working.
 */
#include <check.h>
#include <ftw.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "topoml/topoml.h"

static char *write_temp(const char *text)
{
    static char paths[16][64];
    static int next;
    char *p = paths[next++ % 16];
    strcpy(p, "/tmp/topoml-test-XXXXXX");
    int fd = mkstemp(p);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return p;
}

static topoml_context *open_ctx(const char *config_text, const char *plugin_path, int *rc_out)
{
    topoml_context_options o = {0};
    o.struct_size = sizeof o;
    o.flags = TOPOML_CTX_NO_ENV;
    o.plugin_path = plugin_path;
    char *cfg = config_text ? write_temp(config_text) : NULL;
    o.config_path = cfg;
    topoml_context *ctx = NULL;
    int rc = topoml_context_new(&ctx, &o);
    if (cfg)
        unlink(cfg);
    if (rc_out)
        *rc_out = rc;
    else
        ck_assert_msg(rc == TOPOML_OK, "context: %s", topoml_errmsg(ctx));
    return ctx;
}

static int find_backend(topoml_context *ctx, const char *name, topoml_backend_info *info)
{
    for (uint32_t i = 0; i < topoml_backend_count(ctx); i++) {
        info->struct_size = sizeof *info;
        ck_assert_int_eq(topoml_backend_get(ctx, i, info), TOPOML_OK);
        if (strcmp(info->name, name) == 0)
            return (int)i;
    }
    return -1;
}

/* The single backend a fault folder produced (the last one listed). */
static topoml_backend_info fault_info(const char *fault, const char *config)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/fault-plugins/%s", TOPOML_TEST_BUILD_DIR, fault);
    topoml_context *ctx = open_ctx(config, dir, NULL);
    topoml_backend_info info = {.struct_size = sizeof info};
    uint32_t n = topoml_backend_count(ctx);
    ck_assert_uint_ge(n, 2);
    bool found = false;
    for (uint32_t i = 1; i < n; i++) {
        topoml_backend_info b = {.struct_size = sizeof b};
        ck_assert_int_eq(topoml_backend_get(ctx, i, &b), TOPOML_OK);
        if (b.path && strstr(b.path, dir)) {
            info = b;
            found = true;
        }
    }
    ck_assert_msg(found, "no backend from %s", dir);
    /* Copy what we check before the context goes: strings die with it. */
    static char reason[512], probe[512], name[64];
    snprintf(reason, sizeof reason, "%s", info.gate_reason);
    snprintf(probe, sizeof probe, "%s", info.probe_message ? info.probe_message : "");
    snprintf(name, sizeof name, "%s", info.name);
    info.gate_reason = reason;
    info.probe_message = probe;
    info.name = name;
    info.caps = NULL;
    info.path = NULL;
    topoml_context_free(ctx);
    return info;
}

START_TEST(test_context_works_without_config)
{
    topoml_context *ctx = open_ctx(NULL, NULL, NULL);
    topoml_backend_info info;
    ck_assert_int_eq(find_backend(ctx, "scalar", &info), 0);
    ck_assert_ptr_null(info.path);
    ck_assert_uint_eq(info.gate_state, TOPOML_GATE_ENABLED);
    ck_assert_uint_ge(info.n_caps, 3);
    ck_assert_str_eq(topoml_version(), TOPOML_VERSION_STRING);
    topoml_context_free(ctx);
}
END_TEST

START_TEST(test_strerror_covers_every_status)
{
    for (int s = TOPOML_E_INTERNAL; s <= 0; s++)
        ck_assert_str_ne(topoml_strerror(s), "unknown status");
    ck_assert_str_eq(topoml_strerror(12345), "unknown status");
}
END_TEST

START_TEST(test_config_unknown_key_names_line_and_column)
{
    int rc;
    topoml_context *ctx = open_ctx("gate: auto\n  \nbogus_key: 1\n", NULL, &rc);
    ck_assert_int_eq(rc, TOPOML_E_CONFIG);
    ck_assert_ptr_nonnull(strstr(topoml_errmsg(ctx), ":3:1: unknown key 'bogus_key'"));
    topoml_context_free(ctx);
}
END_TEST

START_TEST(test_config_bad_values_are_errors)
{
    const char *bad[] = {"gate: maybe\n", "max_memory: lots\n", "log_level: loud\n",
                         "device: -5\n", "prefer: scalar\n", "plugin_paths: {a: b}\n",
                         "- just\n- a list\n"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc;
        topoml_context *ctx = open_ctx(bad[i], NULL, &rc);
        ck_assert_msg(rc == TOPOML_E_CONFIG, "'%s' accepted", bad[i]);
        ck_assert_ptr_nonnull(strstr(topoml_errmsg(ctx), "/tmp/topoml-test-"));
        topoml_context_free(ctx);
    }
}
END_TEST

START_TEST(test_config_yaml_syntax_error_names_position)
{
    int rc;
    topoml_context *ctx = open_ctx("gate: [auto\n", NULL, &rc);
    ck_assert_int_eq(rc, TOPOML_E_CONFIG);
    ck_assert_ptr_nonnull(strstr(topoml_errmsg(ctx), ":2:"));
    topoml_context_free(ctx);
}
END_TEST

START_TEST(test_config_missing_file_is_an_error)
{
    topoml_context_options o = {.struct_size = sizeof o, .flags = TOPOML_CTX_NO_ENV,
                                .config_path = "/nonexistent/topoml.yaml"};
    topoml_context *ctx = NULL;
    ck_assert_int_eq(topoml_context_new(&ctx, &o), TOPOML_E_CONFIG);
    ck_assert_ptr_nonnull(strstr(topoml_errmsg(ctx), "/nonexistent/topoml.yaml"));
    topoml_context_free(ctx);
}
END_TEST

START_TEST(test_config_every_key_parses)
{
    topoml_context *ctx = open_ctx("plugin_paths: [/nonexistent/a, /nonexistent/b]\n"
                                   "prefer: [cuda, scalar]\n"
                                   "enable: []\n"
                                   "disable: [triton-bridge]\n"
                                   "gate: strict\n"
                                   "max_memory: 2GiB\n"
                                   "cache_dir: /tmp/topoml-cache\n"
                                   "log_level: info\n"
                                   "device: 1\n",
                                   NULL, NULL);
    ck_assert_uint_eq(topoml_get_max_memory(ctx), 2ull << 30);
    topoml_set_max_memory(ctx, 1000);
    ck_assert_uint_eq(topoml_get_max_memory(ctx), 1000);
    topoml_context_free(ctx);
}
END_TEST

START_TEST(test_parse_size_reads_binary_and_decimal_units)
{
    uint64_t v = 0;
    ck_assert_int_eq(topoml_parse_size("123", &v), TOPOML_OK);
    ck_assert_uint_eq(v, 123);
    ck_assert_int_eq(topoml_parse_size("64K", &v), TOPOML_OK);
    ck_assert_uint_eq(v, 64 * 1024);
    ck_assert_int_eq(topoml_parse_size("2GiB", &v), TOPOML_OK);
    ck_assert_uint_eq(v, 2ull << 30);
    ck_assert_int_eq(topoml_parse_size("1.5GB", &v), TOPOML_OK);
    ck_assert_uint_eq(v, 1500000000ull);
    ck_assert_int_eq(topoml_parse_size("lots", &v), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_parse_size("-1M", &v), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_parse_size("5X", &v), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_parse_size("99999999999999999999T", &v), TOPOML_E_OVERFLOW);
}
END_TEST

START_TEST(test_config_example_file_parses)
{
    topoml_context_options o = {.struct_size = sizeof o, .flags = TOPOML_CTX_NO_ENV,
                                .config_path = TOPOML_SOURCE_DIR "/topoml.yaml.example"};
    topoml_context *ctx = NULL;
    ck_assert_msg(topoml_context_new(&ctx, &o) == TOPOML_OK, "%s", topoml_errmsg(ctx));
    topoml_context_free(ctx);
}
END_TEST

START_TEST(test_loader_finds_scalar_plugin_in_build_tree)
{
    topoml_context *ctx = open_ctx(NULL, NULL, NULL);
    bool found = false;
    for (uint32_t i = 1; i < topoml_backend_count(ctx); i++) {
        topoml_backend_info b = {.struct_size = sizeof b};
        topoml_backend_get(ctx, i, &b);
        if (b.path && strstr(b.path, "topoml-backend-scalar.so")) {
            found = true;
            ck_assert_str_eq(b.name, "scalar");
            ck_assert_uint_eq(b.abi_version, 1);
            ck_assert_uint_eq(b.gate_state, TOPOML_GATE_DISABLED);
            ck_assert_ptr_nonnull(strstr(b.gate_reason, "duplicate"));
            ck_assert_uint_ge(b.n_caps, 3);
        }
    }
    ck_assert_msg(found, "topoml-backend-scalar.so not found in %s", TOPOML_PLUGIN_DIR);
    topoml_context_free(ctx);
}
END_TEST

START_TEST(test_loader_rejects_wrong_abi_version)
{
    topoml_backend_info b = fault_info("wrong-abi", NULL);
    ck_assert_uint_eq(b.gate_state, TOPOML_GATE_REJECTED);
    ck_assert_ptr_nonnull(strstr(b.gate_reason, "ABI version 7"));
}
END_TEST

START_TEST(test_loader_rejects_missing_entry_symbol)
{
    topoml_backend_info b = fault_info("no-entry", NULL);
    ck_assert_uint_eq(b.gate_state, TOPOML_GATE_REJECTED);
    ck_assert_ptr_nonnull(strstr(b.gate_reason, "missing entry symbol"));
}
END_TEST

START_TEST(test_loader_rejects_refused_negotiation)
{
    topoml_backend_info b = fault_info("refuses", NULL);
    ck_assert_uint_eq(b.gate_state, TOPOML_GATE_REJECTED);
    ck_assert_ptr_nonnull(strstr(b.gate_reason, "refused negotiation"));
}
END_TEST

START_TEST(test_loader_rejects_short_vtable)
{
    topoml_backend_info b = fault_info("short-struct", NULL);
    ck_assert_uint_eq(b.gate_state, TOPOML_GATE_REJECTED);
    ck_assert_ptr_nonnull(strstr(b.gate_reason, "too short"));
}
END_TEST

START_TEST(test_loader_rejects_bad_capability_records)
{
    topoml_backend_info b = fault_info("bad-caps", NULL);
    ck_assert_uint_eq(b.gate_state, TOPOML_GATE_REJECTED);
    ck_assert_ptr_nonnull(strstr(b.gate_reason, "capability"));
}
END_TEST

START_TEST(test_loader_rejects_file_that_is_not_a_library)
{
    topoml_backend_info b = fault_info("garbage", NULL);
    ck_assert_uint_eq(b.gate_state, TOPOML_GATE_REJECTED);
    ck_assert_ptr_nonnull(strstr(b.gate_reason, "cannot load"));
}
END_TEST

START_TEST(test_probe_failure_marks_backend_unsupported)
{
    topoml_backend_info b = fault_info("probe-fails", "enable: [fault-probe-fails]\n");
    ck_assert_uint_eq(b.gate_state, TOPOML_GATE_UNSUPPORTED);
    ck_assert_int_eq(b.probe_status, TOPOML_E_UNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(b.probe_message, "no widget"));
}
END_TEST

START_TEST(test_gate_keeps_uncertified_plugin_disabled)
{
    topoml_backend_info b = fault_info("good", NULL);
    ck_assert_uint_eq(b.gate_state, TOPOML_GATE_DISABLED);
    ck_assert_ptr_nonnull(strstr(b.gate_reason, "not certified"));
    b = fault_info("good", "enable: [fault-good]\n");
    ck_assert_uint_eq(b.gate_state, TOPOML_GATE_ENABLED);
    b = fault_info("good", "gate: off\n");
    ck_assert_uint_eq(b.gate_state, TOPOML_GATE_ENABLED);
    ck_assert_ptr_nonnull(strstr(b.gate_reason, "GATE OFF"));
    b = fault_info("good", "gate: off\ndisable: [fault-good]\n");
    ck_assert_uint_eq(b.gate_state, TOPOML_GATE_DISABLED);
}
END_TEST

static topoml_data *three_points(topoml_context *ctx)
{
    static const double xy[] = {0, 0, 3, 4, 1, 1};
    topoml_data *d = NULL;
    ck_assert_int_eq(topoml_data_from_points(ctx, &d, 3, 2, xy), TOPOML_OK);
    return d;
}

START_TEST(test_disabled_backend_is_refused_by_name)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/fault-plugins/good", TOPOML_TEST_BUILD_DIR);
    /* gate: strict, so that the build's other plugins (on a GPU machine: the
     * accelerators) are not certified on first use inside this test. */
    topoml_context *ctx = open_ctx("gate: strict\n", dir, NULL);
    topoml_data *d = three_points(ctx);
    void *out = NULL;
    uint64_t n = 0;
    ck_assert_int_eq(topoml_use_backend(ctx, "fault-good"), TOPOML_OK);
    ck_assert_int_eq(topoml_distances(ctx, d, TOPOML_METRIC_EUCLIDEAN, TOPOML_F64, &out, &n),
                     TOPOML_E_GATE);
    ck_assert_ptr_nonnull(strstr(topoml_errmsg(ctx), "not enabled"));
    /* A name no backend has is refused when it is given. */
    ck_assert_int_eq(topoml_use_backend(ctx, "no-such-backend"), TOPOML_E_NOT_FOUND);
    ck_assert_ptr_nonnull(strstr(topoml_errmsg(ctx), "no-such-backend"));
    /* Automatic selection still works, without the refused plugin (on the
     * reference, or on another plugin of the build that holds a
     * certificate). */
    ck_assert_int_eq(topoml_use_backend(ctx, NULL), TOPOML_OK);
    ck_assert_int_eq(topoml_distances(ctx, d, TOPOML_METRIC_EUCLIDEAN, TOPOML_F64, &out, &n),
                     TOPOML_OK);
    ck_assert_str_ne(topoml_last_backend(ctx), "fault-good");
    ck_assert_double_eq_tol(((double *)out)[0], 5.0, 1e-15);
    topoml_free(ctx, out);
    topoml_data_free(ctx, d);
    topoml_context_free(ctx);
}
END_TEST

START_TEST(test_plugin_op_error_is_reported_and_host_survives)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/fault-plugins/op-error", TOPOML_TEST_BUILD_DIR);
    topoml_context *ctx = open_ctx("enable: [fault-op-error]\n", dir, NULL);
    topoml_data *d = three_points(ctx);
    void *out = NULL;
    uint64_t n = 0;
    ck_assert_int_eq(topoml_use_backend(ctx, "fault-op-error"), TOPOML_OK);
    ck_assert_int_eq(topoml_distances(ctx, d, TOPOML_METRIC_EUCLIDEAN, TOPOML_F64, &out, &n),
                     TOPOML_E_DEVICE);
    ck_assert_ptr_nonnull(strstr(topoml_errmsg(ctx), "overheated"));
    ck_assert_ptr_null(out);
    ck_assert_int_eq(topoml_use_backend(ctx, "scalar"), TOPOML_OK);
    ck_assert_int_eq(topoml_distances(ctx, d, TOPOML_METRIC_EUCLIDEAN, TOPOML_F64, &out, &n),
                     TOPOML_OK);
    ck_assert_uint_eq(n, 3);
    topoml_free(ctx, out);
    topoml_data_free(ctx, d);
    topoml_context_free(ctx);
}
END_TEST

static void keep_warning(void *user, int level, const char *message)
{
    if (level <= TOPOML_LOG_WARN && strstr(message, "fault-op-error"))
        snprintf(user, 512, "%s", message);
}

/* Chosen automatically (not named), a plugin whose op fails does not end
 * the call: the reference computes it, and a warning says so. */
START_TEST(test_plugin_op_error_under_automatic_choice_falls_back_to_the_reference)
{
    char dir[512], warned[512] = "";
    snprintf(dir, sizeof dir, "%s/fault-plugins/op-error", TOPOML_TEST_BUILD_DIR);
    topoml_context *ctx = open_ctx("enable: [fault-op-error]\nprefer: [fault-op-error]\n", dir,
                                   NULL);
    topoml_set_log(ctx, keep_warning, warned, TOPOML_LOG_WARN);
    topoml_data *d = three_points(ctx);
    void *out = NULL;
    uint64_t n = 0;
    ck_assert_int_eq(topoml_distances(ctx, d, TOPOML_METRIC_EUCLIDEAN, TOPOML_F64, &out, &n),
                     TOPOML_OK);
    ck_assert_uint_eq(n, 3);
    ck_assert_double_eq_tol(((double *)out)[0], 5.0, 1e-15);
    ck_assert_str_eq(topoml_last_backend(ctx), "scalar");
    ck_assert_ptr_nonnull(strstr(topoml_last_selection_reason(ctx), "failed"));
    ck_assert_ptr_nonnull(strstr(warned, "overheated"));
    topoml_free(ctx, out);
    topoml_data_free(ctx, d);
    topoml_context_free(ctx);
}
END_TEST

START_TEST(test_enabled_plugin_is_preferred_over_reference)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/fault-plugins/good", TOPOML_TEST_BUILD_DIR);
    /* fault-good's distances are all 1: verification would replace them
     * (test_verify.c); this test is about selection. */
    topoml_context *ctx = open_ctx("gate: strict\nenable: [fault-good]\nverify: off\n", dir, NULL);
    topoml_data *d = three_points(ctx);
    void *out = NULL;
    uint64_t n = 0;
    ck_assert_int_eq(topoml_distances(ctx, d, TOPOML_METRIC_EUCLIDEAN, TOPOML_F64, &out, &n),
                     TOPOML_OK);
    ck_assert_str_eq(topoml_last_backend(ctx), "fault-good");
    topoml_free(ctx, out);
    /* The plugin claims distances only: edges go elsewhere (the reference, or
     * another plugin of the build that holds a certificate). */
    topoml_edge *e = NULL;
    ck_assert_int_eq(topoml_edges(ctx, d, TOPOML_METRIC_EUCLIDEAN, INFINITY, &e, &n), TOPOML_OK);
    ck_assert_str_ne(topoml_last_backend(ctx), "fault-good");
    ck_assert_ptr_nonnull(strstr(topoml_last_selection_reason(ctx), "fault-good has no edges"));
    topoml_free(ctx, e);
    topoml_data_free(ctx, d);
    topoml_context_free(ctx);
}
END_TEST

/* Automatic choice: accelerators before other plugins whatever the
 * discovery order; a plugin that asks to be chosen by name only is skipped
 * unless named or preferred; the reference last. */
START_TEST(test_selection_prefers_accelerators_and_respects_by_name)
{
    char dirs[1200];
    snprintf(dirs, sizeof dirs, "%s/fault-plugins/by-name:%s/fault-plugins/good:%s/fault-plugins/accel",
             TOPOML_TEST_BUILD_DIR, TOPOML_TEST_BUILD_DIR, TOPOML_TEST_BUILD_DIR);
    /* verify: off, since these plugins' distances are all 1 (test_verify.c). */
    const char *configs[] = {"gate: strict\nenable: [fault-good, fault-accel, fault-by-name]\nverify: off\n",
                             "gate: strict\nenable: [fault-good, fault-by-name]\nverify: off\n",
                             "gate: strict\nenable: [fault-by-name]\nverify: off\n",
                             "gate: strict\nenable: [fault-good, fault-accel, fault-by-name]\nprefer: [fault-by-name]\nverify: off\n"};
    const char *want[] = {"fault-accel", "fault-good", NULL, "fault-by-name"};
    for (int k = 0; k < 4; k++) {
        topoml_context *ctx = open_ctx(configs[k], dirs, NULL);
        topoml_backend_info info;
        ck_assert_int_ge(find_backend(ctx, "fault-by-name", &info), 0);
        ck_assert_uint_eq(info.selection, TOPOML_SELECT_BY_NAME);
        ck_assert_int_ge(find_backend(ctx, "fault-good", &info), 0);
        ck_assert_uint_eq(info.selection, TOPOML_SELECT_AUTO);
        topoml_data *d = three_points(ctx);
        void *out = NULL;
        uint64_t n = 0;
        ck_assert_int_eq(topoml_distances(ctx, d, TOPOML_METRIC_EUCLIDEAN, TOPOML_F64, &out, &n),
                         TOPOML_OK);
        if (want[k])
            ck_assert_str_eq(topoml_last_backend(ctx), want[k]);
        else
            ck_assert_str_ne(topoml_last_backend(ctx), "fault-by-name");
        topoml_free(ctx, out);
        /* named, it runs */
        ck_assert_int_eq(topoml_use_backend(ctx, "fault-by-name"), TOPOML_OK);
        ck_assert_int_eq(topoml_distances(ctx, d, TOPOML_METRIC_EUCLIDEAN, TOPOML_F64, &out, &n),
                         TOPOML_OK);
        ck_assert_str_eq(topoml_last_backend(ctx), "fault-by-name");
        topoml_free(ctx, out);
        topoml_data_free(ctx, d);
        topoml_context_free(ctx);
    }
}
END_TEST

/* A caller built against 0.1's shorter topoml_backend_info still works, and
 * nothing is written past its struct. */
START_TEST(test_backend_info_of_an_older_caller)
{
    topoml_context *ctx = open_ctx(NULL, NULL, NULL);
    const size_t v1 = offsetof(topoml_backend_info, caps) + sizeof(const topoml_capability_v1 *);
    unsigned char buf[sizeof(topoml_backend_info) + 16];
    memset(buf, 0xAB, sizeof buf);
    topoml_backend_info *info = (topoml_backend_info *)(void *)buf;
    info->struct_size = (uint32_t)v1;
    ck_assert_int_eq(topoml_backend_get(ctx, 0, info), TOPOML_OK);
    ck_assert_uint_eq(info->struct_size, v1);
    ck_assert_str_eq(info->name, "scalar");
    for (size_t k = v1; k < sizeof buf; k++)
        ck_assert_uint_eq(buf[k], 0xAB);
    info->struct_size = (uint32_t)v1 - 1;
    ck_assert_int_eq(topoml_backend_get(ctx, 0, info), TOPOML_E_INVALID);
    topoml_context_free(ctx);
}
END_TEST

START_TEST(test_relative_plugin_folder_is_ignored)
{
    topoml_context *ctx = open_ctx(NULL, "relative/folder", NULL);
    for (uint32_t i = 0; i < topoml_backend_count(ctx); i++) {
        topoml_backend_info b = {.struct_size = sizeof b};
        topoml_backend_get(ctx, i, &b);
        ck_assert(!b.path || b.path[0] == '/');
    }
    topoml_context_free(ctx);
}
END_TEST

/* Copy the scalar plugin into a fresh folder under another name. */
static void copy_plugin(const char *dir, const char *name)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cp %s/topoml-backend-scalar.so %s/%s", TOPOML_PLUGIN_DIR, dir,
             name);
    ck_assert_int_eq(system(cmd), 0);
}

START_TEST(test_loader_refuses_plugin_writable_by_others)
{
    char dir[] = "/tmp/topoml-unsafe-XXXXXX", file[256];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    copy_plugin(dir, "topoml-backend-unsafe.so");
    snprintf(file, sizeof file, "%s/topoml-backend-unsafe.so", dir);
    ck_assert_int_eq(chmod(file, 0666), 0);
    topoml_context *ctx = open_ctx(NULL, dir, NULL);
    bool found = false;
    for (uint32_t i = 1; i < topoml_backend_count(ctx); i++) {
        topoml_backend_info b = {.struct_size = sizeof b};
        topoml_backend_get(ctx, i, &b);
        if (b.path && strcmp(b.path, file) == 0) {
            found = true;
            ck_assert_uint_eq(b.gate_state, TOPOML_GATE_REJECTED);
            ck_assert_ptr_nonnull(strstr(b.gate_reason, "writable by group or others"));
        }
    }
    ck_assert(found);
    topoml_context_free(ctx);
    /* A folder writable by others is not searched at all. */
    ck_assert_int_eq(chmod(file, 0755), 0);
    ck_assert_int_eq(chmod(dir, 0777), 0);
    ctx = open_ctx(NULL, dir, NULL);
    for (uint32_t i = 1; i < topoml_backend_count(ctx); i++) {
        topoml_backend_info b = {.struct_size = sizeof b};
        topoml_backend_get(ctx, i, &b);
        ck_assert(!b.path || strncmp(b.path, dir, strlen(dir)) != 0);
    }
    topoml_context_free(ctx);
    unlink(file);
    rmdir(dir);
}
END_TEST

/* An allocator that counts, to show every allocation is freed. */
static long live;
static void *count_alloc(void *u, size_t n)
{
    (void)u;
    live++;
    return malloc(n);
}
static void *count_realloc(void *u, void *p, size_t n)
{
    (void)u;
    if (!p)
        live++;
    return realloc(p, n);
}
static void count_free(void *u, void *p)
{
    (void)u;
    if (p)
        live--;
    free(p);
}

START_TEST(test_custom_allocator_sees_every_allocation)
{
    topoml_allocator a = {count_alloc, count_realloc, count_free, NULL};
    /* gate: strict: the build's plugins load (their allocations count) but
     * none is certified inside this test. */
    char *cfg = write_temp("gate: strict\n");
    topoml_context_options o = {.struct_size = sizeof o, .flags = TOPOML_CTX_NO_ENV,
                                .allocator = &a, .config_path = cfg};
    live = 0;
    topoml_context *ctx = NULL;
    ck_assert_int_eq(topoml_context_new(&ctx, &o), TOPOML_OK);
    unlink(cfg);
    ck_assert_int_gt(live, 0);
    topoml_data *d = three_points(ctx);
    topoml_barcode *bc = NULL;
    topoml_rips_options ro;
    topoml_rips_options_init(&ro);
    ro.max_dim = 0;
    ck_assert_int_eq(topoml_barcode_compute(ctx, &bc, d, &ro), TOPOML_OK);
    topoml_barcode_free(bc);
    topoml_data_free(ctx, d);
    topoml_context_free(ctx);
    ck_assert_int_eq(live, 0);
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
    /* The gate caches verdicts (certification on first use): a cache of
     * this run's own keeps one test's verdict out of another run. */
    char cache[] = "/tmp/topoml-test-cache-XXXXXX";
    if (!mkdtemp(cache) || setenv("XDG_CACHE_HOME", cache, 1) != 0)
        return EXIT_FAILURE;
    Suite *s = suite_create("core");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_context_works_without_config);
    tcase_add_test(tc, test_strerror_covers_every_status);
    tcase_add_test(tc, test_config_unknown_key_names_line_and_column);
    tcase_add_test(tc, test_config_bad_values_are_errors);
    tcase_add_test(tc, test_config_yaml_syntax_error_names_position);
    tcase_add_test(tc, test_config_missing_file_is_an_error);
    tcase_add_test(tc, test_config_every_key_parses);
    tcase_add_test(tc, test_parse_size_reads_binary_and_decimal_units);
    tcase_add_test(tc, test_config_example_file_parses);
    tcase_add_test(tc, test_loader_finds_scalar_plugin_in_build_tree);
    tcase_add_test(tc, test_loader_rejects_wrong_abi_version);
    tcase_add_test(tc, test_loader_rejects_missing_entry_symbol);
    tcase_add_test(tc, test_loader_rejects_refused_negotiation);
    tcase_add_test(tc, test_loader_rejects_short_vtable);
    tcase_add_test(tc, test_loader_rejects_bad_capability_records);
    tcase_add_test(tc, test_loader_rejects_file_that_is_not_a_library);
    tcase_add_test(tc, test_probe_failure_marks_backend_unsupported);
    tcase_add_test(tc, test_gate_keeps_uncertified_plugin_disabled);
    tcase_add_test(tc, test_disabled_backend_is_refused_by_name);
    tcase_add_test(tc, test_plugin_op_error_is_reported_and_host_survives);
    tcase_add_test(tc, test_plugin_op_error_under_automatic_choice_falls_back_to_the_reference);
    tcase_add_test(tc, test_enabled_plugin_is_preferred_over_reference);
    tcase_add_test(tc, test_selection_prefers_accelerators_and_respects_by_name);
    tcase_add_test(tc, test_backend_info_of_an_older_caller);
    tcase_add_test(tc, test_relative_plugin_folder_is_ignored);
    tcase_add_test(tc, test_loader_refuses_plugin_writable_by_others);
    tcase_add_test(tc, test_custom_allocator_sees_every_allocation);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    nftw(cache, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
