/*
 * test_plugin_isolation.c — no plugin code runs in the host before the gate
 * enables it, and what is loaded is exactly what was checked.
 *
 * Plugins whose constructor crashes or calls _exit(0), or whose probe
 * crashes, are probed in a child process and rejected with the reason; the
 * host goes on under every configuration. The fault plugins write their
 * name and pid to a marker file when their code runs, so the tests can see
 * which process ran it. The race tests swap folders and symbolic links in a
 * loop (bounded in count and time) while contexts are made: a file from a
 * place another user could write must never run anywhere.
 */
#include <check.h>
#include <math.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gate/certificate.h"
#include "gate/sha256.h"
#include "gate/gate.h"
#include "gate/gate_internal.h"
#include "topoml/features.h"
#include "topoml/topoml.h"

#include "check_ops.h"

static char marker[64];

static void fresh_marker(void)
{
    strcpy(marker, "/tmp/topoml-marker-XXXXXX");
    int fd = mkstemp(marker);
    ck_assert_int_ge(fd, 0);
    close(fd);
    ck_assert_int_eq(setenv("TOPOML_TEST_MARKER", marker, 1), 0);
}

/* The marker's lines naming `plugin`: how many ran in this process, and
 * how many elsewhere. */
static void marker_count(const char *plugin, int *here, int *elsewhere)
{
    *here = *elsewhere = 0;
    FILE *f = fopen(marker, "r");
    ck_assert_ptr_nonnull(f);
    char name[128];
    long pid;
    while (fscanf(f, "%127s %ld", name, &pid) == 2) {
        if (strcmp(name, plugin) != 0)
            continue;
        if (pid == (long)getpid())
            (*here)++;
        else
            (*elsewhere)++;
    }
    fclose(f);
}

static void drop_marker(void)
{
    unlink(marker);
    unsetenv("TOPOML_TEST_MARKER");
}

static char config_file[64];

static topoml_context *context(const char *config_text, const char *plugin_path)
{
    topoml_context_options o = {.struct_size = sizeof o,
                                .flags = TOPOML_CTX_NO_ENV,
                                .plugin_path = plugin_path};
    if (config_text) {
        strcpy(config_file, "/tmp/topoml-cfg-XXXXXX");
        int fd = mkstemp(config_file);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, config_text, strlen(config_text)),
                         (ssize_t)strlen(config_text));
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

static bool backend_named(topoml_context *ctx, const char *name, topoml_backend_info *out)
{
    for (uint32_t i = 0; i < topoml_backend_count(ctx); i++) {
        topoml_backend_info b = {.struct_size = sizeof b};
        ck_assert_int_eq(topoml_backend_get(ctx, i, &b), TOPOML_OK);
        if (strcmp(b.name, name) == 0) {
            *out = b;
            return true;
        }
    }
    return false;
}

/* The one backend from `dir` (by path). */
static bool backend_from(topoml_context *ctx, const char *dir, topoml_backend_info *out)
{
    for (uint32_t i = 1; i < topoml_backend_count(ctx); i++) {
        topoml_backend_info b = {.struct_size = sizeof b};
        ck_assert_int_eq(topoml_backend_get(ctx, i, &b), TOPOML_OK);
        if (b.path && strncmp(b.path, dir, strlen(dir)) == 0) {
            *out = b;
            return true;
        }
    }
    return false;
}

/* Distances of a small cloud on whatever the context picks (or `name`):
 * must work and be right. */
static void distances_work(topoml_context *ctx, const char *name)
{
    ck_assert_int_eq(topoml_use_backend(ctx, name), TOPOML_OK);
    check_distances_of_three_points(ctx);
}

static const struct {
    const char *folder, *name, *reason;
} code_before_gate[] = {
    {"ctor-crash", "fault-ctor-crash", "in load (constructors) and negotiate"},
    {"ctor-exit", "fault-ctor-exit", "in load (constructors) and negotiate"},
    {"probe-crash", "fault-probe-crash", "in create, probe, capabilities"},
};

START_TEST(test_plugin_crashing_before_the_gate_leaves_the_host_working)
{
    const char *configs[] = {NULL, "gate: strict\n", "gate: \"off\"\n",
                             "disable: [fault-ctor-crash, fault-ctor-exit, fault-probe-crash]\n",
                             "enable: [fault-ctor-crash, fault-ctor-exit, fault-probe-crash]\n"};
    char dir[512];
    snprintf(dir, sizeof dir, "%s/fault-plugins/%s", TOPOML_TEST_BUILD_DIR,
             code_before_gate[_i].folder);
    for (size_t k = 0; k < sizeof configs / sizeof configs[0]; k++) {
        fresh_marker();
        topoml_context *ctx = context(configs[k], dir);
        topoml_backend_info b;
        ck_assert_msg(backend_from(ctx, dir, &b), "no backend listed from %s", dir);
        ck_assert_uint_eq(b.gate_state, TOPOML_GATE_REJECTED);
        ck_assert_msg(strstr(b.gate_reason, "probe process") &&
                          strstr(b.gate_reason, code_before_gate[_i].reason),
                      "reason: %s", b.gate_reason);
        distances_work(ctx, NULL);
        distances_work(ctx, "scalar");
        /* Naming it is an error, now or at the call; never a crash. */
        if (topoml_use_backend(ctx, code_before_gate[_i].name) == TOPOML_OK) {
            void *out = NULL;
            uint64_t n = 0;
            topoml_data *d = NULL;
            static const double two[] = {0, 0, 1, 1};
            ck_assert_int_eq(topoml_data_from_points(ctx, &d, 2, 2, two), TOPOML_OK);
            ck_assert_int_ne(
                topoml_distances(ctx, d, TOPOML_METRIC_EUCLIDEAN, TOPOML_F64, &out, &n),
                TOPOML_OK);
            topoml_data_free(ctx, d);
        }
        topoml_context_free(ctx);
        int here, elsewhere;
        marker_count(code_before_gate[_i].name, &here, &elsewhere);
        ck_assert_int_eq(here, 0);
        ck_assert_int_ge(elsewhere, 1); /* it did run: in the probe process */
        drop_marker();
    }
}
END_TEST

START_TEST(test_plugin_code_runs_in_the_host_only_once_enabled)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/fault-plugins/good", TOPOML_TEST_BUILD_DIR);
    topoml_backend_info b;
    int here, elsewhere;

    /* Not enabled (strict, disabled, uncertified under auto before first
     * use): listed with its identity and capabilities, run elsewhere only. */
    const char *not_enabled[] = {"gate: strict\n", "disable: [fault-good]\n", NULL};
    for (size_t k = 0; k < 3; k++) {
        fresh_marker();
        topoml_context *ctx = context(not_enabled[k], dir);
        ck_assert(backend_named(ctx, "fault-good", &b));
        ck_assert_uint_eq(b.gate_state, TOPOML_GATE_DISABLED);
        ck_assert_str_eq(b.vendor, "topoml tests");
        ck_assert_uint_eq(b.n_caps, 1);
        ck_assert_uint_eq(b.caps[0].op, TOPOML_OP_DISTANCES);
        ck_assert_str_eq(b.caps[0].device, "cpu");
        distances_work(ctx, "scalar");
        topoml_context_free(ctx);
        marker_count("fault-good", &here, &elsewhere);
        ck_assert_int_eq(here, 0);
        ck_assert_int_eq(elsewhere, 1);
        drop_marker();
    }

    /* Enabled by the configuration with `isolation: none`: loaded into the
     * host, after its probe. */
    fresh_marker();
    topoml_context *ctx = context("enable: [fault-good]\nisolation: none\n", dir);
    ck_assert(backend_named(ctx, "fault-good", &b));
    ck_assert_uint_eq(b.gate_state, TOPOML_GATE_ENABLED);
    topoml_context_free(ctx);
    marker_count("fault-good", &here, &elsewhere);
    ck_assert_int_eq(here, 1);
    ck_assert_int_eq(elsewhere, 1);
    drop_marker();

    /* Enabled under the default isolation: not shipped with topoml, so its
     * ops run in a helper process, started on the first call; the host
     * never loads it. */
    fresh_marker();
    ctx = context("enable: [fault-good]\n", dir);
    ck_assert(backend_named(ctx, "fault-good", &b));
    ck_assert_uint_eq(b.gate_state, TOPOML_GATE_ENABLED);
    static const double cloud[] = {0, 0, 3, 4, 6, 8};
    topoml_data *d = NULL;
    ck_assert_int_eq(topoml_data_from_points(ctx, &d, 3, 2, cloud), TOPOML_OK);
    void *out = NULL;
    uint64_t n = 0;
    ck_assert_int_eq(topoml_use_backend(ctx, "fault-good"), TOPOML_OK);
    /* Its answer (every distance 1) is wrong: run-time verification may
     * replace it with the reference's; either way the call went to it. */
    ck_assert_int_eq(topoml_distances(ctx, d, TOPOML_METRIC_EUCLIDEAN, TOPOML_F64, &out, &n),
                     TOPOML_OK);
    topoml_free(ctx, out);
    topoml_data_free(ctx, d);
    topoml_context_free(ctx);
    marker_count("fault-good", &here, &elsewhere);
    ck_assert_int_eq(here, 0);
    /* The probe; the helper ran it too, but in its sandbox a plugin cannot
     * open a file to write (fault.c leaves no mark there). */
    ck_assert_int_eq(elsewhere, 1);
    drop_marker();
}
END_TEST

/* ---- load what was checked ---- */

static void copy_file(const char *from, const char *to, mode_t mode)
{
    int in = open(from, O_RDONLY);
    ck_assert_int_ge(in, 0);
    int out = open(to, O_WRONLY | O_CREAT | O_TRUNC, mode);
    ck_assert_int_ge(out, 0);
    char buf[65536];
    ssize_t n;
    while ((n = read(in, buf, sizeof buf)) > 0)
        ck_assert_int_eq(write(out, buf, (size_t)n), n);
    close(in);
    close(out);
    ck_assert_int_eq(chmod(to, mode), 0);
}

static void fault_file(const char *fault, char *out, size_t size)
{
    snprintf(out, size, "%s/fault-plugins/%s/topoml-backend-fault%s.so", TOPOML_TEST_BUILD_DIR,
             fault, strcmp(fault, "accel") == 0 ? "-accel" : "");
}

START_TEST(test_loader_loads_the_file_it_checked_even_if_the_path_changes)
{
    char dir[] = "/tmp/topoml-swap-XXXXXX", path[256], good[512], other[512], tmp[300];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    fault_file("good", good, sizeof good);
    fault_file("accel", other, sizeof other);
    snprintf(path, sizeof path, "%s/topoml-backend-x.so", dir);
    snprintf(tmp, sizeof tmp, "%s/next.so", dir);
    copy_file(good, path, 0755);

    topoml_context *ctx = context("gate: strict\n", NULL);
    tm_backend b;
    memset(&b, 0, sizeof b);
    tm_loader_check(ctx, path, &b);
    ck_assert_uint_ne(b.gate_state, TOPOML_GATE_REJECTED);
    /* Another plugin takes the path; the descriptor still holds the first,
     * and the hash read from it later is the first file's. */
    copy_file(other, tmp, 0755);
    ck_assert_int_eq(rename(tmp, path), 0);
    tm_loader_hash(ctx, &b);
    char sha[65];
    ck_assert_int_eq(tm_sha256_file(good, sha), 0);
    ck_assert_str_eq(b.file_sha256, sha);
    tm_loader_negotiate(ctx, &b);
    ck_assert_uint_ne(b.gate_state, TOPOML_GATE_REJECTED);
    ck_assert_str_eq(b.vt->name, "fault-good");
    dlclose(b.dl);
    close(b.fd);

    /* A symbolic link as the plugin file is refused (O_NOFOLLOW). */
    char link[300];
    snprintf(link, sizeof link, "%s/topoml-backend-link.so", dir);
    ck_assert_int_eq(symlink(path, link), 0);
    memset(&b, 0, sizeof b);
    tm_loader_check(ctx, link, &b);
    ck_assert_uint_eq(b.gate_state, TOPOML_GATE_REJECTED);
    topoml_context_free(ctx);
    unlink(link);
    unlink(path);
    rmdir(dir);
}
END_TEST

START_TEST(test_loader_checks_every_folder_up_to_the_root)
{
    /* /tmp/a (0777, not sticky) / b (ours, 0755) / plugin (0755): another
     * user could rename b away and put their own b in its place. */
    char top[] = "/tmp/topoml-chain-XXXXXX", mid[300], path[400], good[512];
    ck_assert_ptr_nonnull(mkdtemp(top));
    snprintf(mid, sizeof mid, "%s/b", top);
    ck_assert_int_eq(mkdir(mid, 0755), 0);
    snprintf(path, sizeof path, "%s/topoml-backend-fault.so", mid);
    fault_file("good", good, sizeof good);
    copy_file(good, path, 0755);
    topoml_context *ctx = context(NULL, NULL);
    tm_backend b;
    char why[512], real[4096];

    ck_assert_int_eq(chmod(top, 0777), 0);
    memset(&b, 0, sizeof b);
    tm_loader_check(ctx, path, &b);
    ck_assert_uint_eq(b.gate_state, TOPOML_GATE_REJECTED);
    ck_assert_msg(strstr(b.gate_reason, "writable by group or others (mode 777)"), "%s",
                  b.gate_reason);

    /* Sticky (like /tmp itself): others cannot rename our entries. */
    ck_assert_int_eq(chmod(top, 01777), 0);
    memset(&b, 0, sizeof b);
    tm_loader_check(ctx, path, &b);
    ck_assert_msg(b.gate_state != TOPOML_GATE_REJECTED, "%s", b.gate_reason);
    close(b.fd);

    /* The same check guards certificates. */
    ck_assert_int_eq(chmod(top, 0777), 0);
    int fd = open(path, O_RDONLY);
    ck_assert(!tm_fd_is_safe(fd, real, sizeof real, why, sizeof why));
    close(fd);
    tm_cert cert;
    ck_assert_int_eq(tm_cert_load(path, &cert, why, sizeof why), TOPOML_E_PARSE);
    ck_assert_msg(strstr(why, "not trusted"), "%s", why);
    ck_assert_int_eq(chmod(top, 0700), 0);
    ck_assert_int_eq(chmod(path, 0666), 0);
    ck_assert_int_eq(tm_cert_load(path, &cert, why, sizeof why), TOPOML_E_PARSE);
    ck_assert_msg(strstr(why, "writable by group or others"), "%s", why);

    topoml_context_free(ctx);
    unlink(path);
    rmdir(mid);
    rmdir(top);
}
END_TEST

/* As root the attacker is another user (nobody) and owns its files; as
 * anyone else the attacker's files are writable by others, which is what
 * makes them the attacker's. Either way they must never run. */
static void make_evil(const char *evil_dir, const char *evil_file)
{
    char other[512];
    fault_file("accel", other, sizeof other);
    ck_assert_int_eq(mkdir(evil_dir, 0755), 0);
    copy_file(other, evil_file, 0755);
    if (geteuid() == 0) {
        ck_assert_int_eq(chown(evil_dir, 65534, 65534), 0);
        ck_assert_int_eq(chown(evil_file, 65534, 65534), 0);
    } else {
        ck_assert_int_eq(chmod(evil_dir, 0777), 0);
        ck_assert_int_eq(chmod(evil_file, 0666), 0);
    }
}

/* The attacker: swap `a` and `b` (by rename) until killed. */
static pid_t start_swapper(const char *a, const char *b, const char *spare)
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0))
            _exit(3);
        for (;;) {
            rename(a, spare);
            rename(b, a);
            rename(spare, b);
        }
    }
    return pid;
}

static void stop(pid_t pid)
{
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

/* Make contexts while the swapper runs: at most `tries`, at most 5 s. The
 * attacker's plugin (fault-accel) must never run, here or in a probe. */
static void race(const char *plugin_dir, int tries)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int done = 0;
    for (; done < tries; done++) {
        topoml_context *ctx = context("enable: [fault-good, fault-accel]\n", plugin_dir);
        topoml_backend_info b;
        ck_assert(!backend_named(ctx, "fault-accel", &b) ||
                  b.gate_state != TOPOML_GATE_ENABLED);
        topoml_context_free(ctx);
        clock_gettime(CLOCK_MONOTONIC, &t);
        if ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) * 1e-9 > 5.0)
            break;
    }
    int here, elsewhere;
    marker_count("fault-accel", &here, &elsewhere);
    ck_assert_msg(here == 0 && elsewhere == 0,
                  "the attacker's plugin ran %d times here and %d in a probe (%d tries)", here,
                  elsewhere, done);
}

START_TEST(test_race_swapping_a_writable_parent_folder_never_loads_the_swapped_in_file)
{
    fresh_marker();
    char top[] = "/tmp/topoml-race-XXXXXX", plugins[300], evil[300], spare[300], file[400],
         evil_file[400], good[512];
    ck_assert_ptr_nonnull(mkdtemp(top));
    ck_assert_int_eq(chmod(top, 0777), 0); /* the attacker can rename in here */
    snprintf(plugins, sizeof plugins, "%s/plugins", top);
    snprintf(evil, sizeof evil, "%s/evil", top);
    snprintf(spare, sizeof spare, "%s/spare", top);
    ck_assert_int_eq(mkdir(plugins, 0755), 0);
    snprintf(file, sizeof file, "%s/topoml-backend-fault.so", plugins);
    fault_file("good", good, sizeof good);
    copy_file(good, file, 0755);
    snprintf(evil_file, sizeof evil_file, "%s/topoml-backend-fault.so", evil);
    make_evil(evil, evil_file);
    pid_t pid = start_swapper(plugins, evil, spare);
    race(plugins, 100);
    stop(pid);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", top);
    ck_assert_int_eq(system(cmd), 0);
    drop_marker();
}
END_TEST

START_TEST(test_race_swapping_a_symlinked_folder_never_loads_the_swapped_in_file)
{
    fresh_marker();
    /* The plugin folder is a link in a folder the attacker can write; it
     * points at our good folder or, when swapped, at the attacker's. */
    char top[] = "/tmp/topoml-race-XXXXXX", mine[300], links[200], link[300], other[300],
         spare[300], evil[300], file[400], evil_file[400], good[512];
    ck_assert_ptr_nonnull(mkdtemp(top));
    ck_assert_int_eq(chmod(top, 0755), 0);
    snprintf(mine, sizeof mine, "%s/mine", top);
    ck_assert_int_eq(mkdir(mine, 0755), 0);
    snprintf(file, sizeof file, "%s/topoml-backend-fault.so", mine);
    fault_file("good", good, sizeof good);
    copy_file(good, file, 0755);
    snprintf(evil, sizeof evil, "%s/evil", top);
    snprintf(evil_file, sizeof evil_file, "%s/topoml-backend-fault.so", evil);
    make_evil(evil, evil_file);
    snprintf(links, sizeof links, "%.100s/links", top);
    ck_assert_int_eq(mkdir(links, 0777), 0);
    ck_assert_int_eq(chmod(links, 0777), 0);
    snprintf(link, sizeof link, "%s/plugins", links);
    snprintf(other, sizeof other, "%s/other", links);
    snprintf(spare, sizeof spare, "%s/spare", links);
    ck_assert_int_eq(symlink(mine, link), 0);
    ck_assert_int_eq(symlink(evil, other), 0);
    pid_t pid = start_swapper(link, other, spare);
    race(link, 100);
    stop(pid);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", top);
    ck_assert_int_eq(system(cmd), 0);
    drop_marker();
}
END_TEST


/* ---- isolation: process ---- */

/* A cloud of n points in the plane, fixed by `seed`. */
static double *cloud_of(uint64_t n, unsigned seed)
{
    double *x = malloc(2 * n * sizeof *x);
    ck_assert_ptr_nonnull(x);
    srand(seed);
    for (uint64_t k = 0; k < 2 * n; k++)
        x[k] = (double)rand() / RAND_MAX;
    return x;
}

/* Every op of the scalar reference's copy, run through the proxy in its
 * own process, gives what the built-in reference gives, bit for bit. */
START_TEST(test_isolated_plugin_answers_every_op_like_in_process)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/conformance-plugins/scalar-copy", TOPOML_TEST_BUILD_DIR);
    topoml_context *ctx = context("enable: [scalar-copy]\nisolation: process\n", dir);
    topoml_backend_info b;
    ck_assert(backend_named(ctx, "scalar-copy", &b));
    ck_assert_uint_eq(b.gate_state, TOPOML_GATE_ENABLED);
    const uint64_t n = 40;
    double *x = cloud_of(n, 7);
    topoml_data *pts = NULL, *cond = NULL, *sparse = NULL;
    ck_assert_int_eq(topoml_data_from_points(ctx, &pts, n, 2, x), TOPOML_OK);
    const char *names[2] = {"scalar", "scalar-copy"};
    void *dist[2][2];
    uint64_t nd[2][2];
    topoml_edge *edges[2][3];
    uint64_t ne[2][3];
    topoml_barcode *bars[2][2];
    double images[2][2 * 16 * 16];
    for (int k = 0; k < 2; k++) {
        ck_assert_int_eq(topoml_use_backend(ctx, names[k]), TOPOML_OK);
        for (int t = 0; t < 2; t++) {
            int rc = topoml_distances(ctx, pts, TOPOML_METRIC_EUCLIDEAN, t ? TOPOML_F32 : TOPOML_F64,
                                      &dist[k][t], &nd[k][t]);
            ck_assert_msg(rc == TOPOML_OK, "%s", topoml_errmsg(ctx));
            ck_assert_str_eq(topoml_last_backend(ctx), names[k]);
        }
        if (k == 0) {
            ck_assert_int_eq(topoml_data_from_condensed(ctx, &cond, n, dist[0][0]), TOPOML_OK);
        }
        ck_assert_int_eq(topoml_edges(ctx, pts, TOPOML_METRIC_EUCLIDEAN, 0.3, &edges[k][0],
                                      &ne[k][0]),
                         TOPOML_OK);
        ck_assert_int_eq(topoml_edges(ctx, cond, TOPOML_METRIC_EUCLIDEAN, 0.25, &edges[k][1],
                                      &ne[k][1]),
                         TOPOML_OK);
        if (k == 0)
            ck_assert_int_eq(topoml_data_from_edges(ctx, &sparse, n, ne[0][0], edges[0][0]),
                             TOPOML_OK);
        ck_assert_int_eq(topoml_edges(ctx, sparse, TOPOML_METRIC_EUCLIDEAN, 0.2, &edges[k][2],
                                      &ne[k][2]),
                         TOPOML_OK);
        topoml_rips_options ro;
        topoml_rips_options_init(&ro);
        ro.max_dim = 0;
        ck_assert_int_eq(topoml_barcode_compute(ctx, &bars[k][0], pts, &ro), TOPOML_OK);
        ro.max_dim = 2;
        ro.modulus = 3;
        ck_assert_int_eq(topoml_barcode_compute(ctx, &bars[k][1], cond, &ro), TOPOML_OK);
        ck_assert_str_eq(topoml_last_backend(ctx), names[k]);
        topoml_image_params_v1 ip;
        topoml_image_params_init(&ip);
        ip.width = ip.height = 16;
        ip.birth_max = ip.pers_max = 0.5;
        uint64_t bn;
        const topoml_interval *iv = topoml_barcode_intervals(bars[0][1], &bn);
        topoml_pair pairs[4096];
        uint64_t np = 0;
        for (uint64_t i = 0; i < bn && np < 4096; i++)
            if (iv[i].death < INFINITY)
                pairs[np++] = (topoml_pair){iv[i].birth, iv[i].death};
        uint64_t offsets[3] = {0, np / 2, np};
        ck_assert_int_eq(topoml_persistence_images(ctx, &ip, 2, offsets, pairs, images[k]),
                         TOPOML_OK);
        ck_assert_str_eq(topoml_last_backend(ctx), names[k]);
    }
    for (int t = 0; t < 2; t++) {
        ck_assert_uint_eq(nd[0][t], nd[1][t]);
        ck_assert(memcmp(dist[0][t], dist[1][t], nd[0][t] * (t ? 4 : 8)) == 0);
    }
    for (int e = 0; e < 3; e++) {
        ck_assert_uint_eq(ne[0][e], ne[1][e]);
        ck_assert_uint_gt(ne[0][e], 0);
        ck_assert(memcmp(edges[0][e], edges[1][e], ne[0][e] * sizeof(topoml_edge)) == 0);
    }
    for (int k = 0; k < 2; k++) {
        uint64_t na, nb;
        const topoml_interval *a = topoml_barcode_intervals(bars[0][k], &na);
        const topoml_interval *c = topoml_barcode_intervals(bars[1][k], &nb);
        ck_assert_uint_eq(na, nb);
        ck_assert(memcmp(a, c, na * sizeof *a) == 0);
    }
    ck_assert(memcmp(images[0], images[1], sizeof images[0]) == 0);
    for (int k = 0; k < 2; k++) {
        for (int t = 0; t < 2; t++)
            topoml_free(ctx, dist[k][t]);
        for (int e = 0; e < 3; e++)
            topoml_free(ctx, edges[k][e]);
        topoml_barcode_free(bars[k][0]);
        topoml_barcode_free(bars[k][1]);
    }
    topoml_data_free(ctx, pts);
    topoml_data_free(ctx, cond);
    topoml_data_free(ctx, sparse);
    topoml_context_free(ctx);
    free(x);
}
END_TEST

typedef struct warnings {
    int count;
    char last[1024];
} warnings;

static void keep_warning(void *user, int level, const char *message)
{
    warnings *w = user;
    if (level <= TOPOML_LOG_WARN) {
        w->count++;
        snprintf(w->last, sizeof w->last, "%s", message);
    }
}

static const struct {
    const char *folder, *name, *what;
} op_faults[] = {
    {"op-crash", "fault-op-crash", "died of signal"},
    {"op-exit", "fault-op-exit", "exited with status 0"},
    {"op-stdout", "fault-op-stdout", "bytes to standard output"},
    {"op-runaway", "fault-op-runaway", "did not finish within 1 s"},
};

/* A plugin that crashes, exits, prints or never returns inside an op: the
 * call gets the reference's answer with a warning, the plugin is not used
 * again, and the host lives on. With and without naming the backend. */
START_TEST(test_isolated_plugin_failing_in_an_op_falls_back_to_the_reference)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/fault-plugins/%s", TOPOML_TEST_BUILD_DIR, op_faults[_i].folder);
    const uint64_t n = 200;
    double *x = cloud_of(n, 3);
    for (int named = 0; named < 2; named++) {
        char config[256];
        snprintf(config, sizeof config, "enable: [%s]\nisolation_timeout: 1\n",
                 op_faults[_i].name);
        topoml_context *ctx = context(config, dir);
        warnings w = {0};
        topoml_set_log(ctx, keep_warning, &w, TOPOML_LOG_WARN);
        topoml_data *pts = NULL;
        ck_assert_int_eq(topoml_data_from_points(ctx, &pts, n, 2, x), TOPOML_OK);
        void *ref = NULL, *got = NULL;
        uint64_t nr, ng;
        ck_assert_int_eq(topoml_use_backend(ctx, "scalar"), TOPOML_OK);
        ck_assert_int_eq(topoml_distances(ctx, pts, TOPOML_METRIC_EUCLIDEAN, TOPOML_F64, &ref, &nr),
                         TOPOML_OK);
        ck_assert_int_eq(topoml_use_backend(ctx, named ? op_faults[_i].name : NULL), TOPOML_OK);
        int rc = topoml_distances(ctx, pts, TOPOML_METRIC_EUCLIDEAN, TOPOML_F64, &got, &ng);
        ck_assert_msg(rc == TOPOML_OK, "%s", topoml_errmsg(ctx));
        ck_assert_uint_eq(nr, ng);
        ck_assert(memcmp(ref, got, nr * sizeof(double)) == 0);
        ck_assert_str_eq(topoml_last_backend(ctx), "scalar");
        ck_assert_int_ge(w.count, 1);
        /* Under AddressSanitizer a crash is an exit with status 1. */
        const bool said = strstr(w.last, op_faults[_i].what) ||
                          (_i == 0 && strstr(w.last, "exited with status"));
        ck_assert_msg(strstr(w.last, op_faults[_i].name) && said &&
                          strstr(w.last, "scalar reference"),
                      "warning: %s", w.last);
        topoml_backend_info b;
        ck_assert(backend_named(ctx, op_faults[_i].name, &b));
        ck_assert_uint_eq(b.gate_state, TOPOML_GATE_REJECTED);
        /* Not used again: the next call goes to the reference directly. */
        topoml_free(ctx, got);
        ck_assert_int_eq(topoml_use_backend(ctx, NULL), TOPOML_OK);
        ck_assert_int_eq(topoml_distances(ctx, pts, TOPOML_METRIC_EUCLIDEAN, TOPOML_F64, &got, &ng),
                         TOPOML_OK);
        ck_assert_str_ne(topoml_last_backend(ctx), op_faults[_i].name);
        topoml_free(ctx, got);
        topoml_free(ctx, ref);
        topoml_data_free(ctx, pts);
        topoml_context_free(ctx);
    }
    free(x);
}
END_TEST

/* topoml_backend_info.isolation says where each backend's ops run, as the
 * configuration decides (tm_isolation_wanted): the built-in reference in the
 * host always; a plugin found outside topoml's own folder in a helper unless
 * `isolation: none`; a plugin shipped with topoml in its own folder in the
 * host unless `isolation: process`. A caller's struct of the size before the
 * field is not written past. */
START_TEST(test_backend_info_says_where_each_backend_runs)
{
    char dir[512], own_dir[512];
    snprintf(dir, sizeof dir, "%s/fault-plugins/good", TOPOML_TEST_BUILD_DIR);
    snprintf(own_dir, sizeof own_dir, "%s/plugins-out", TOPOML_TEST_BUILD_DIR);
    static const struct {
        const char *config;
        const char *found, *shipped; /* fault-good's, a shipped plugin's */
    } rows[] = {
        {"enable: [fault-good]\n", "process", "host"},
        {"enable: [fault-good]\nisolation: auto\n", "process", "host"},
        {"enable: [fault-good]\nisolation: none\n", "host", "host"},
        {"enable: [fault-good]\nisolation: process\n", "process", "process"},
    };
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        fresh_marker();
        topoml_context *ctx = context(rows[r].config, dir);
        topoml_backend_info b;
        ck_assert(backend_named(ctx, "scalar", &b));
        ck_assert_ptr_null(b.path);
        ck_assert_str_eq(b.isolation, "host");
        ck_assert(backend_named(ctx, "fault-good", &b));
        ck_assert_msg(strcmp(b.isolation, rows[r].found) == 0, "%s: fault-good runs in %s",
                      rows[r].config, b.isolation);
        /* What is said is what happens: the plugin's code runs in the host,
         * or in its probe and then a helper process, never both. */
        static const double cloud[] = {0, 0, 3, 4, 6, 8};
        topoml_data *d = NULL;
        void *out = NULL;
        uint64_t n = 0;
        ck_assert_int_eq(topoml_data_from_points(ctx, &d, 3, 2, cloud), TOPOML_OK);
        ck_assert_int_eq(topoml_use_backend(ctx, "fault-good"), TOPOML_OK);
        ck_assert_int_eq(topoml_distances(ctx, d, TOPOML_METRIC_EUCLIDEAN, TOPOML_F64, &out, &n),
                         TOPOML_OK);
        topoml_free(ctx, out);
        topoml_data_free(ctx, d);
        topoml_context_free(ctx);
        int here, elsewhere;
        marker_count("fault-good", &here, &elsewhere);
        const bool isolated = strcmp(rows[r].found, "process") == 0;
        ck_assert_int_eq(here, isolated ? 0 : 1);
        ck_assert_int_eq(elsewhere, 1); /* the probe (a sandboxed helper leaves no mark) */
        drop_marker();

        ctx = context(rows[r].config, own_dir);
        ck_assert_msg(backend_named(ctx, "threads", &b), "no threads plugin in %s", own_dir);
        ck_assert_msg(strcmp(b.isolation, rows[r].shipped) == 0, "%s: threads runs in %s",
                      rows[r].config, b.isolation);
        /* A caller built before the field: nothing written past its size. */
        unsigned char old[sizeof(topoml_backend_info) + 8];
        memset(old, 0xa5, sizeof old);
        topoml_backend_info *o = (topoml_backend_info *)(void *)old;
        o->struct_size = (uint32_t)offsetof(topoml_backend_info, isolation);
        ck_assert_int_eq(topoml_backend_get(ctx, 0, o), TOPOML_OK);
        for (size_t k = offsetof(topoml_backend_info, isolation); k < sizeof old; k++)
            ck_assert_uint_eq(old[k], 0xa5);
        topoml_context_free(ctx);
    }
}
END_TEST

static int cancel_after_half_a_second(void *user, const char *stage, uint64_t done, uint64_t total)
{
    (void)stage;
    (void)done;
    (void)total;
    struct timespec *t0 = user, t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) * 1e-9 > 0.5;
}

/* A cancel from the host's progress callback reaches a call that runs in
 * the plugin's process: the helper is stopped, the call is cancelled long
 * before the deadline, and the plugin is not blamed for it. */
START_TEST(test_isolated_call_is_cancelled_through_the_progress_callback)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/fault-plugins/op-runaway", TOPOML_TEST_BUILD_DIR);
    topoml_context *ctx = context("enable: [fault-op-runaway]\nisolation_timeout: 60\n", dir);
    const uint64_t n = 200;
    double *x = cloud_of(n, 9);
    topoml_data *pts = NULL;
    ck_assert_int_eq(topoml_data_from_points(ctx, &pts, n, 2, x), TOPOML_OK);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    topoml_set_progress(ctx, cancel_after_half_a_second, &t0);
    ck_assert_int_eq(topoml_use_backend(ctx, "fault-op-runaway"), TOPOML_OK);
    void *out = NULL;
    uint64_t count = 0;
    ck_assert_int_eq(topoml_distances(ctx, pts, TOPOML_METRIC_EUCLIDEAN, TOPOML_F64, &out, &count),
                     TOPOML_E_CANCELLED);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    ck_assert((double)(t1.tv_sec - t0.tv_sec) < 30.0);
    ck_assert_ptr_null(out);
    topoml_backend_info b;
    ck_assert(backend_named(ctx, "fault-op-runaway", &b));
    ck_assert_uint_eq(b.gate_state, TOPOML_GATE_ENABLED);
    topoml_data_free(ctx, pts);
    topoml_context_free(ctx);
    free(x);
}
END_TEST

typedef struct chatter {
    int progress, log_lines, cancel_at, escapes, cancelled_said;
    char last[512];
} chatter;

static int count_progress(void *user, const char *stage, uint64_t done, uint64_t total)
{
    chatter *c = user;
    if (strcmp(stage, "chatty") != 0)
        return 0;
    ck_assert_uint_eq(total, 20);
    c->progress++;
    return c->cancel_at >= 0 && done >= (uint64_t)c->cancel_at;
}

static void count_log(void *user, int level, const char *message)
{
    (void)level;
    chatter *c = user;
    if (strstr(message, "fault-chatty") && strstr(message, "(its process)")) {
        if (strstr(message, "chatty step"))
            c->log_lines++;
        if (strstr(message, "cancelled at"))
            c->cancelled_said++;
        if (strchr(message, '\x1b'))
            c->escapes++;
        snprintf(c->last, sizeof c->last, "%s", message);
    }
}

/* A plugin in its own process reports progress and logs (fault-chatty: 20
 * steps, a log line each, one with an escape character): the host's
 * callbacks get both, the log lines under the plugin's name with control
 * characters replaced. A cancel from the host's progress callback reaches
 * the plugin itself, which stops and says so, and the helper lives on. */
START_TEST(test_isolated_plugin_progress_log_and_cancel_reach_the_host)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/fault-plugins/chatty", TOPOML_TEST_BUILD_DIR);
    topoml_context *ctx = context("enable: [fault-chatty]\n", dir);
    double *x = cloud_of(10, 3);
    topoml_data *pts = NULL;
    ck_assert_int_eq(topoml_data_from_points(ctx, &pts, 10, 2, x), TOPOML_OK);
    ck_assert_int_eq(topoml_use_backend(ctx, "fault-chatty"), TOPOML_OK);
    for (int cancel = 0; cancel < 2; cancel++) {
        chatter c = {.cancel_at = cancel ? 3 : -1};
        topoml_set_progress(ctx, count_progress, &c);
        topoml_set_log(ctx, count_log, &c, TOPOML_LOG_DEBUG);
        void *out = NULL;
        uint64_t count = 0;
        int rc = topoml_distances(ctx, pts, TOPOML_METRIC_EUCLIDEAN, TOPOML_F64, &out, &count);
        if (!cancel) {
            ck_assert_msg(rc == TOPOML_OK, "%s", topoml_errmsg(ctx));
            ck_assert_str_eq(topoml_last_backend(ctx), "fault-chatty");
            ck_assert_int_ge(c.progress, 10); /* 60 ms apart, passed on every 50 ms */
            ck_assert_int_eq(c.log_lines, 20);
            ck_assert_int_eq(c.escapes, 0);
            topoml_free(ctx, out);
        } else {
            ck_assert_int_eq(rc, TOPOML_E_CANCELLED);
            ck_assert_int_eq(c.cancelled_said, 1);
            ck_assert_int_le(c.log_lines, 6);
        }
    }
    topoml_backend_info b;
    ck_assert(backend_named(ctx, "fault-chatty", &b));
    ck_assert_uint_eq(b.gate_state, TOPOML_GATE_ENABLED);
    topoml_data_free(ctx, pts);
    topoml_context_free(ctx);
    free(x);
}
END_TEST

int main(void)
{
    char cache[] = "/tmp/topoml-test-cache-XXXXXX";
    if (!mkdtemp(cache) || setenv("XDG_CACHE_HOME", cache, 1) != 0)
        return EXIT_FAILURE;
    Suite *s = suite_create("plugin_isolation");
    TCase *tc = tcase_create("plugin_isolation");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_plugin_crashing_before_the_gate_leaves_the_host_working, 0,
                        (int)(sizeof code_before_gate / sizeof code_before_gate[0]));
    tcase_add_test(tc, test_plugin_code_runs_in_the_host_only_once_enabled);
    tcase_add_test(tc, test_loader_loads_the_file_it_checked_even_if_the_path_changes);
    tcase_add_test(tc, test_loader_checks_every_folder_up_to_the_root);
    tcase_add_test(tc, test_race_swapping_a_writable_parent_folder_never_loads_the_swapped_in_file);
    tcase_add_test(tc, test_race_swapping_a_symlinked_folder_never_loads_the_swapped_in_file);
    tcase_add_test(tc, test_isolated_plugin_answers_every_op_like_in_process);
    tcase_add_test(tc, test_isolated_call_is_cancelled_through_the_progress_callback);
    tcase_add_test(tc, test_isolated_plugin_progress_log_and_cancel_reach_the_host);
    tcase_add_test(tc, test_backend_info_says_where_each_backend_runs);
    tcase_add_loop_test(tc, test_isolated_plugin_failing_in_an_op_falls_back_to_the_reference, 0,
                        (int)(sizeof op_faults / sizeof op_faults[0]));
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    rmdir(cache);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
