/*
 * test_config_strict.c — the configuration cannot switch the gate off
 * silently: a repeated key, a second YAML document, an alias, deep nesting
 * and an oversized file are errors naming the place; warnings given while a
 * context is made (before any log callback exists) reach the first callback.
 */
#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "topoml/topoml.h"

#include "check_context.h"
#include "check_run.h"

static char config_file[64];

static void write_config(const char *text, size_t len)
{
    strcpy(config_file, "/tmp/topoml-cfg-XXXXXX");
    int fd = mkstemp(config_file);
    ck_assert_int_ge(fd, 0);
    size_t done = 0;
    while (done < len) {
        ssize_t w = write(fd, text + done, len - done);
        ck_assert_int_gt(w, 0);
        done += (size_t)w;
    }
    close(fd);
}

/* Make a context from `text`; the status, and the error text in `msg`. */
static int try_config(const char *text, size_t len, char *msg, size_t msg_size)
{
    write_config(text, len);
    topoml_context_options o = {.struct_size = sizeof o,
                                .flags = TOPOML_CTX_NO_ENV | TOPOML_CTX_NO_PLUGINS,
                                .config_path = config_file};
    topoml_context *ctx = NULL;
    int rc = topoml_context_new(&ctx, &o);
    snprintf(msg, msg_size, "%s", topoml_errmsg(ctx));
    topoml_context_free(ctx);
    unlink(config_file);
    return rc;
}

static void expect_error(const char *text, const char *where_and_what)
{
    char msg[1024];
    int rc = try_config(text, strlen(text), msg, sizeof msg);
    ck_assert_msg(rc == TOPOML_E_CONFIG, "accepted:\n%s", text);
    ck_assert_msg(strstr(msg, where_and_what), "'%s' lacks '%s'", msg, where_and_what);
}

START_TEST(test_config_rejects_repeated_keys_naming_both_places)
{
    /* Every key, plain or quoted, and the classic: the last one switching
     * the gate off. */
    expect_error("gate: strict\nlog_level: warn\ngate: \"off\"\n",
                 ":3:1: key 'gate' given twice (first at line 1, column 1)");
    expect_error("\"gate\": strict\ngate: auto\n", ":2:1: key 'gate' given twice");
    expect_error("disable: [cuda]\nprefer: []\ndisable: []\n", ":3:1: key 'disable' given twice");
    expect_error("plugin_paths: []\nplugin_paths: [/opt]\n", ":2:1: key 'plugin_paths'");
    expect_error("max_memory: 1G\ndevice: 0\nmax_memory: 0\n", ":3:1: key 'max_memory'");
}
END_TEST

START_TEST(test_config_rejects_a_second_document)
{
    expect_error("gate: strict\n---\ngate: \"off\"\n", ":2:1: a second YAML document");
    expect_error("---\ngate: strict\n...\n---\n", ":4:1: a second YAML document");
}
END_TEST

START_TEST(test_config_rejects_aliases)
{
    expect_error("enable: &e [a]\ndisable: *e\n", ":2:10: aliases");
}
END_TEST

START_TEST(test_config_rejects_deep_nesting_and_large_files)
{
    /* Nested flow and block collections, just under the size limit. */
    size_t n = 30000;
    char *text = malloc(2 * n + 16);
    ck_assert_ptr_nonnull(text);
    int k = sprintf(text, "gate: ");
    memset(text + k, '[', n);
    memset(text + k + n, ']', n);
    strcpy(text + k + 2 * n, "\n");
    char msg[1024];
    ck_assert_int_eq(try_config(text, strlen(text), msg, sizeof msg), TOPOML_E_CONFIG);
    ck_assert_msg(strstr(msg, ":1:14: nested deeper than 8 levels"), "%s", msg);
    free(text);

    char block[4096] = "prefer:\n";
    for (int d = 1; d < 20; d++)
        snprintf(block + strlen(block), sizeof block - strlen(block), "%*sk%d:\n", 2 * d, "", d);
    expect_error(block, "nested deeper than 8 levels");

    /* A file over the limit is refused before it is parsed, even if valid. */
    size_t big = 70000;
    text = malloc(big + 16);
    ck_assert_ptr_nonnull(text);
    memset(text, '#', big);
    strcpy(text + big, "\ngate: auto\n");
    ck_assert_int_eq(try_config(text, strlen(text), msg, sizeof msg), TOPOML_E_CONFIG);
    ck_assert_msg(strstr(msg, "configuration larger than 65536 bytes"), "%s", msg);
    free(text);
}
END_TEST

START_TEST(test_config_strictness_leaves_valid_files_alone)
{
    char msg[1024];
    const char *ok = "# comment\n---\ngate: strict\nenable: [a, b]\ndisable:\n  - c\n...\n";
    ck_assert_msg(try_config(ok, strlen(ok), msg, sizeof msg) == TOPOML_OK, "%s", msg);
    ck_assert_int_eq(try_config("", 0, msg, sizeof msg), TOPOML_OK);
}
END_TEST

START_TEST(test_config_isolation_keys)
{
    char msg[1024];
    const char *ok[] = {"isolation: auto\n", "isolation: process\n", "isolation: none\n",
                        "isolation_timeout: 2.5\n"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        ck_assert_msg(try_config(ok[i], strlen(ok[i]), msg, sizeof msg) == TOPOML_OK, "%s", msg);
    expect_error("isolation: sometimes\n", ":1:12: isolation must be auto, process or none");
    expect_error("isolation_timeout: 0\n", ":1:20: isolation_timeout must be a number");
    expect_error("isolation_timeout: soon\n", ":1:20: isolation_timeout must be a number");
}
END_TEST

START_TEST(test_config_probe_cache_key)
{
    char msg[1024];
    const char *ok[] = {"probe_cache: true\n", "probe_cache: false\n"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        ck_assert_msg(try_config(ok[i], strlen(ok[i]), msg, sizeof msg) == TOPOML_OK, "%s", msg);
    expect_error("probe_cache: yes\n", ":1:14: probe_cache must be true or false, not 'yes'");
    expect_error("probe_cache: [true]\n", ":1:14:");
    expect_error("probe_cach: true\n", "unknown key 'probe_cach' (known: ");
    expect_error("probe_cach: true\n", "verify_share, probe_cache, plugin_host, select)");
    const char *sel[] = {"select: order\n", "select: cost\n"};
    for (size_t i = 0; i < sizeof sel / sizeof sel[0]; i++)
        ck_assert_msg(try_config(sel[i], strlen(sel[i]), msg, sizeof msg) == TOPOML_OK, "%s", msg);
    expect_error("select: fastest\n", ":1:9: select must be order or cost, not 'fastest'");
}
END_TEST

/* plugin_host names the helper program: an absolute path, or an error. */
START_TEST(test_config_plugin_host_key)
{
    char msg[1024];
    const char *ok = "plugin_host: /opt/topoml/bin/topoml-plugin-host\n";
    ck_assert_msg(try_config(ok, strlen(ok), msg, sizeof msg) == TOPOML_OK, "%s", msg);
    expect_error("plugin_host: bin/topoml-plugin-host\n",
                 ":1:14: plugin_host must be an absolute path, not 'bin/topoml-plugin-host'");
    expect_error("plugin_host: [/a]\n", ":1:14:");
}
END_TEST

/* ---- startup warnings ---- */

typedef struct seen {
    int count;
    char text[8][512];
    int level[8];
} seen;

static void remember(void *user, int level, const char *message)
{
    seen *s = user;
    if (s->count < 8) {
        snprintf(s->text[s->count], sizeof s->text[0], "%s", message);
        s->level[s->count] = level;
    }
    s->count++;
}

static bool saw(const seen *s, const char *needle)
{
    for (int i = 0; i < s->count && i < 8; i++)
        if (strstr(s->text[i], needle))
            return true;
    return false;
}

START_TEST(test_startup_warnings_reach_a_late_log_callback_once)
{
    topoml_context *ctx = check_context_from_config("gate: \"off\"\n", "relative/plugins:/nonexistent-dir");
    seen s = {0};
    topoml_set_log(ctx, remember, &s, TOPOML_LOG_WARN);
    ck_assert_msg(saw(&s, "gate is off"), "no 'gate is off' among %d lines", s.count);
    ck_assert_msg(saw(&s, "ignoring relative plugin folder 'relative/plugins'"), "%d lines",
                  s.count);
    for (int i = 0; i < s.count && i < 8; i++)
        ck_assert_int_le(s.level[i], TOPOML_LOG_WARN);
    /* Told once: a second callback does not hear them again. */
    seen again = {0};
    topoml_set_log(ctx, remember, &again, TOPOML_LOG_DEBUG);
    ck_assert_int_eq(again.count, 0);
    topoml_context_free(ctx);
}
END_TEST

START_TEST(test_startup_warnings_respect_the_callbacks_level)
{
    topoml_context *ctx = check_context_from_config("gate: \"off\"\n", NULL);
    seen s = {0};
    topoml_set_log(ctx, remember, &s, TOPOML_LOG_ERROR);
    ck_assert_int_eq(s.count, 0);
    topoml_context_free(ctx);

    /* Without "gate: off" there is no such warning. */
    ctx = check_context_from_config("gate: auto\n", NULL);
    seen quiet = {0};
    topoml_set_log(ctx, remember, &quiet, TOPOML_LOG_WARN);
    ck_assert(!saw(&quiet, "gate is off"));
    topoml_context_free(ctx);
}
END_TEST

START_TEST(test_startup_warnings_past_the_limit_are_counted)
{
    /* 20 refused folders: 16 lines kept, the other 4 counted. */
    char path[2048] = "";
    for (int k = 0; k < 20; k++)
        snprintf(path + strlen(path), sizeof path - strlen(path), "%srel%d", k ? ":" : "", k);
    topoml_context *ctx = check_context_from_config("gate: auto\n", path);
    seen s = {0};
    topoml_set_log(ctx, remember, &s, TOPOML_LOG_INFO);
    ck_assert(saw(&s, "ignoring relative plugin folder 'rel0'"));
    ck_assert_int_eq(s.count, 17); /* and one line saying how many were dropped */
    topoml_context_free(ctx);
    ctx = check_context_from_config("gate: auto\n", path);
    seen w = {0};
    topoml_set_log(ctx, remember, &w, TOPOML_LOG_WARN);
    ck_assert_int_eq(w.count, 16);
    topoml_context_free(ctx);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("config_strict");
    TCase *tc = tcase_create("config_strict");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_config_rejects_repeated_keys_naming_both_places);
    tcase_add_test(tc, test_config_rejects_a_second_document);
    tcase_add_test(tc, test_config_rejects_aliases);
    tcase_add_test(tc, test_config_rejects_deep_nesting_and_large_files);
    tcase_add_test(tc, test_config_strictness_leaves_valid_files_alone);
    tcase_add_test(tc, test_config_isolation_keys);
    tcase_add_test(tc, test_config_probe_cache_key);
    tcase_add_test(tc, test_config_plugin_host_key);
    tcase_add_test(tc, test_startup_warnings_reach_a_late_log_callback_once);
    tcase_add_test(tc, test_startup_warnings_respect_the_callbacks_level);
    tcase_add_test(tc, test_startup_warnings_past_the_limit_are_counted);
    suite_add_tcase(s, tc);
    return topoml_check_run(s);
}
