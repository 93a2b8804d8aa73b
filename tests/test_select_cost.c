/*
 * test_select_cost.c — selection by cost (`select: cost`, registry.c and
 * calibrate.c) with two plugins that give the same answers at different
 * speeds: fake-device-swift (the scalar reference's code) and
 * fake-device-slow (the same, sleeping 40 us per pair of points after each
 * call), both from tests/device_plugin/fake_device.c. On data "in device
 * memory" (which they read in place) they are the only candidates, so the
 * choice is theirs alone; on host data the reference competes too.
 */
#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/api.h"
#include "gate/gate.h"
#include "gate/sha256.h"
#include "topoml/topoml.h"

#define SELECT_DIR TOPOML_TEST_BUILD_DIR "/select-plugins"

static int calibrations, loaded;
static void on_log(void *user, int level, const char *message)
{
    (void)user;
    (void)level;
    calibrations += strstr(message, "calibration of '") != NULL && strstr(message, " calls in ");
    loaded += strstr(message, "made again") != NULL;
}

/* A context under `select: cost` with the certificate cache in `cache`,
 * the plugins from `plugins`, and `extra` configuration lines. */
static topoml_context *cost_ctx(const char *cache, const char *plugins, const char *extra)
{
    char text[2048];
    snprintf(text, sizeof text,
             "enable: [fake-device-slow, fake-device-swift]\nisolation: none\nselect: cost\n"
             "cache_dir: %s\n%s",
             cache, extra);
    char cfg[] = "/tmp/topoml-selcost-XXXXXX";
    int fd = mkstemp(cfg);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    topoml_context_options opts = {0};
    opts.struct_size = sizeof opts;
    opts.flags = TOPOML_CTX_NO_ENV;
    opts.config_path = cfg;
    opts.plugin_path = plugins;
    topoml_context *ctx = NULL;
    int rc = topoml_context_new(&ctx, &opts);
    unlink(cfg);
    ck_assert_msg(rc == TOPOML_OK, "%s", topoml_errmsg(ctx));
    topoml_set_log(ctx, on_log, NULL, TOPOML_LOG_INFO);
    calibrations = loaded = 0;
    return ctx;
}

static double *cloud(uint64_t n, uint64_t seed)
{
    double *x = malloc(n * 3 * sizeof *x);
    ck_assert_ptr_nonnull(x);
    for (uint64_t i = 0; i < 3 * n; i++) {
        seed = seed * 6364136223846793005u + 1442695040888963407u;
        x[i] = (double)(seed >> 11) / 9007199254740992.0;
    }
    return x;
}

/* The backend that runs a Rips call of x (n points) at max_dim, on device
 * "memory" or the host; the reason in `reason`. */
static const char *run(topoml_context *ctx, const double *x, uint64_t n, bool device,
                       char *reason, size_t size)
{
    topoml_data *d = NULL;
    if (device)
        ck_assert_int_eq(topoml_data_from_device(ctx, &d, TOPOML_MEMORY_CUDA, TOPOML_INPUT_POINTS,
                                                 TOPOML_F64, n, 3, x, 0, NULL),
                         TOPOML_OK);
    else
        ck_assert_int_eq(topoml_data_from_points(ctx, &d, n, 3, x), TOPOML_OK);
    topoml_rips_options o;
    topoml_rips_options_init(&o);
    o.max_dim = 1;
    topoml_barcode *bc = NULL;
    ck_assert_msg(topoml_barcode_compute(ctx, &bc, d, &o) == TOPOML_OK, "%s", topoml_errmsg(ctx));
    topoml_barcode_free(bc);
    topoml_data_free(ctx, d);
    snprintf(reason, size, "%s", topoml_last_selection_reason(ctx));
    return topoml_last_backend(ctx);
}

static void temp_dir(char *out, size_t size)
{
    snprintf(out, size, "/tmp/topoml-selcost-cache-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(out));
}

static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    struct dirent *e;
    char path[4200];
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
    closedir(d);
    rmdir(dir);
}

START_TEST(test_select_cost_picks_the_plugin_predicted_fastest)
{
    char cache[64], reason[512];
    temp_dir(cache, sizeof cache);
    topoml_context *ctx = cost_ctx(cache, SELECT_DIR, "");
    double *x = cloud(120, 5);
    ck_assert_str_eq(run(ctx, x, 120, true, reason, sizeof reason), "fake-device-swift");
    ck_assert_msg(strstr(reason, "predicted fastest for 120 points, 7140 edges, H1") &&
                      strstr(reason, "fake-device-slow") && strstr(reason, "fake-device-swift"),
                  "%s", reason);
    ck_assert_int_eq(calibrations, 2); /* each calibrated once, the reference not needed */
    /* on the host the reference (and any CPU plugin of the default folder)
     * competes: never the slow one */
    ck_assert_str_ne(run(ctx, x, 120, false, reason, sizeof reason), "fake-device-slow");
    ck_assert_msg(strstr(reason, "scalar") && strstr(reason, "fake-device-slow"), "%s", reason);
    free(x);
    topoml_context_free(ctx);
    remove_dir(cache);
}
END_TEST

START_TEST(test_select_cost_yields_to_names_and_prefer)
{
    char cache[64], reason[512];
    temp_dir(cache, sizeof cache);
    double *x = cloud(60, 9);
    topoml_context *ctx = cost_ctx(cache, SELECT_DIR, "prefer: [fake-device-slow]\n");
    ck_assert_str_eq(run(ctx, x, 60, true, reason, sizeof reason), "fake-device-slow");
    ck_assert_str_eq(reason, "first capable in `prefer`");
    ck_assert_int_eq(calibrations, 0);
    topoml_context_free(ctx);
    ctx = cost_ctx(cache, SELECT_DIR, "");
    ck_assert_int_eq(topoml_use_backend(ctx, "fake-device-slow"), TOPOML_OK);
    ck_assert_str_eq(run(ctx, x, 60, true, reason, sizeof reason), "fake-device-slow");
    ck_assert_str_eq(reason, "asked for by name");
    ck_assert_int_eq(calibrations, 0);
    free(x);
    topoml_context_free(ctx);
    remove_dir(cache);
}
END_TEST

/* The record of `name`'s calibration in `cache` (the one file named
 * topoml-backend-<name>.so-*.calib): its path, and its text in `text`. */
static void record_of(const char *cache, const char *name, char *path, size_t size, char *text,
                      size_t text_size)
{
    char prefix[128];
    snprintf(prefix, sizeof prefix, "topoml-backend-%s.so-", name);
    DIR *d = opendir(cache);
    ck_assert_ptr_nonnull(d);
    struct dirent *e;
    path[0] = '\0';
    while ((e = readdir(d)))
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0 && strstr(e->d_name, ".calib"))
            snprintf(path, size, "%s/%s", cache, e->d_name);
    closedir(d);
    ck_assert_msg(path[0], "no calibration record of %s in %s", name, cache);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    size_t len = fread(text, 1, text_size - 1, f);
    text[len] = '\0';
    fclose(f);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fputs(text, f) >= 0, 1);
    ck_assert_int_eq(fclose(f), 0);
}

START_TEST(test_select_cost_redoes_a_stale_calibration)
{
    char cache[64], plugins[64], reason[512], path[4200], text[2048];
    temp_dir(cache, sizeof cache);
    temp_dir(plugins, sizeof plugins);
    /* the plugins copied, so that a file can change */
    const char *names[] = {"slow", "swift"};
    char file[2][256];
    for (int k = 0; k < 2; k++) {
        char src[512], cmd[2000];
        snprintf(src, sizeof src, SELECT_DIR "/topoml-backend-fake-device-%s.so", names[k]);
        snprintf(file[k], sizeof file[k], "%s/topoml-backend-fake-device-%s.so", plugins,
                 names[k]);
        snprintf(cmd, sizeof cmd, "cp '%s' '%s' && chmod 755 '%s'", src, file[k], file[k]);
        ck_assert_int_eq(system(cmd), 0);
    }
    double *x = cloud(80, 3);
    topoml_context *ctx = cost_ctx(cache, plugins, "");
    ck_assert_str_eq(run(ctx, x, 80, true, reason, sizeof reason), "fake-device-swift");
    ck_assert_int_eq(calibrations, 2);
    topoml_context_free(ctx);

    /* kept: a second process reads the records */
    ctx = cost_ctx(cache, plugins, "");
    ck_assert_str_eq(run(ctx, x, 80, true, reason, sizeof reason), "fake-device-swift");
    ck_assert_int_eq(calibrations, 0);
    ck_assert_msg(strstr(reason, "fake-device-swift") && strstr(reason, "(calibration record)") &&
                      !strstr(reason, "calibrated now"),
                  "%s", reason);
    topoml_context_free(ctx);

    /* another machine: the record of swift says another CPU, with a checksum
     * that matches */
    record_of(cache, "fake-device-swift", path, sizeof path, text, sizeof text);
    char *cpu = strstr(text, "cpu_sha256=");
    ck_assert_ptr_nonnull(cpu);
    cpu[11] = cpu[11] == '0' ? '1' : '0';
    char *sum = strstr(text, "checksum=");
    ck_assert_ptr_nonnull(sum);
    char hex[65];
    tm_sha256_hex(text, (size_t)(sum - text), hex);
    snprintf(sum, sizeof text - (size_t)(sum - text), "checksum=%s\n", hex);
    write_file(path, text);
    ctx = cost_ctx(cache, plugins, "");
    ck_assert_str_eq(run(ctx, x, 80, true, reason, sizeof reason), "fake-device-swift");
    ck_assert_int_eq(calibrations, 1);
    ck_assert_int_eq(loaded, 1); /* "... made for another ... CPU ...: made again" */
    ck_assert_msg(strstr(reason, "fake-device-swift") && strstr(reason, "calibrated now"), "%s",
                  reason);
    topoml_context_free(ctx);

    /* the plugin file changed: slow's record no longer holds */
    char cmd[600];
    snprintf(cmd, sizeof cmd, "printf 'x' >> '%s'", file[0]);
    ck_assert_int_eq(system(cmd), 0);
    ctx = cost_ctx(cache, plugins, "");
    ck_assert_str_eq(run(ctx, x, 80, true, reason, sizeof reason), "fake-device-swift");
    ck_assert_int_eq(calibrations, 1);
    topoml_context_free(ctx);

    /* a damaged record is made again too */
    record_of(cache, "fake-device-swift", path, sizeof path, text, sizeof text);
    text[strlen(text) / 2] ^= 1;
    write_file(path, text);
    ctx = cost_ctx(cache, plugins, "");
    ck_assert_str_eq(run(ctx, x, 80, true, reason, sizeof reason), "fake-device-swift");
    ck_assert_int_eq(calibrations, 1);
    topoml_context_free(ctx);
    free(x);
    remove_dir(cache);
    remove_dir(plugins);
}
END_TEST

/* The model's prediction between one thread and all, and its work. */
START_TEST(test_select_cost_model_predicts_between_thread_counts)
{
    const tm_cost_model m = {4, {0.01, 2.0}, {0.02, 0.5}, "calibrated now"};
    ck_assert(fabs(tm_cost_predict(&m, 1.0, 1) - 2.01) < 1e-12);
    ck_assert(fabs(tm_cost_predict(&m, 1.0, 4) - 0.52) < 1e-12);
    ck_assert(fabs(tm_cost_predict(&m, 1.0, 0) - 0.52) < 1e-12); /* 0: all */
    ck_assert(fabs(tm_cost_predict(&m, 1.0, 64) - 0.52) < 1e-12);
    const double mid = tm_cost_predict(&m, 1.0, 2);
    ck_assert(mid < 2.01 && mid > 0.52);
    /* more edges or dimensions: more work */
    ck_assert(tm_rips_work(300, 40000, 2) > tm_rips_work(300, 40000, 1));
    ck_assert(tm_rips_work(300, 40000, 1) > tm_rips_work(300, 20000, 1));
    ck_assert(tm_rips_work(300, 40000, 0) > 0.0);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("select_cost");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_select_cost_picks_the_plugin_predicted_fastest);
    tcase_add_test(tc, test_select_cost_yields_to_names_and_prefer);
    tcase_add_test(tc, test_select_cost_redoes_a_stale_calibration);
    tcase_add_test(tc, test_select_cost_model_predicts_between_thread_counts);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
