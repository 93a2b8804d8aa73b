/*
 * test_memory_limits.c — memory is bounded by default: the limit derived
 * from the machine (physical memory, RLIMIT_AS, cgroup v2 and v1 limits,
 * read from a fake cgroup tree here), shown with its source in every
 * refusal, overridden by configuration and API; sizes read strictly (no
 * fraction of a byte, sign, exponent or hexadecimal); text readers refuse a
 * NUL byte as soon as they read it; work too large for the limit refused
 * before any O(n^2) pass.
 */
#include <check.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "api/api.h"
#include "topoml/features.h"
#include "topoml/topoml.h"

#include "check_run.h"

static topoml_context *ctx_new(const char *config)
{
    char path[] = "/tmp/topoml-memtest-XXXXXX";
    topoml_context_options o = {.struct_size = sizeof o,
                                .flags = TOPOML_CTX_NO_ENV | TOPOML_CTX_NO_PLUGINS};
    if (config) {
        int fd = mkstemp(path);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, config, strlen(config)), (ssize_t)strlen(config));
        close(fd);
        o.config_path = path;
    }
    topoml_context *ctx = NULL;
    int st = topoml_context_new(&ctx, &o);
    if (config)
        unlink(path);
    if (st != TOPOML_OK) {
        topoml_context_free(ctx);
        return NULL;
    }
    return ctx;
}

START_TEST(test_parse_size_refuses_what_is_not_whole_bytes)
{
    uint64_t v = 99;
    const char *bad[] = {"0.5", "1e-300", "-0",  "0.3",  "0x10", "0X1p4", "+1",   " 1",
                         "1.",  ".5K",    "inf", "nan",  "1e3",  "1.1K",  "0.0",  "",
                         "1 2", "1KK",    "1.5", "12ab", "1,5G", "0.3K",  "1e30T"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        ck_assert_msg(topoml_parse_size(bad[k], &v) == TOPOML_E_INVALID, "'%s' accepted", bad[k]);
        ck_assert_uint_eq(v, 99); /* untouched */
    }
    const struct {
        const char *s;
        uint64_t want;
    } good[] = {{"0", 0},
                {"unlimited", 0},
                {"1", 1},
                {"0.5K", 512},
                {"1.5GB", 1500000000},
                {"1.25 KiB", 1280},
                {"18446744073709551615", UINT64_MAX},
                {"16777215T", 16777215ull << 40}};
    for (size_t k = 0; k < sizeof good / sizeof good[0]; k++) {
        ck_assert_msg(topoml_parse_size(good[k].s, &v) == TOPOML_OK, "'%s' refused", good[k].s);
        ck_assert_msg(v == good[k].want, "'%s' read as %llu", good[k].s, (unsigned long long)v);
    }
    const char *over[] = {"18446744073709551616", "16777216T", "99999999999999999999T"};
    for (size_t k = 0; k < sizeof over / sizeof over[0]; k++)
        ck_assert_int_eq(topoml_parse_size(over[k], &v), TOPOML_E_OVERFLOW);
}
END_TEST

START_TEST(test_config_max_memory_is_strict_and_may_say_unlimited)
{
    const char *bad[] = {"max_memory: 0.3\n", "max_memory: 0x10\n", "max_memory: -0\n",
                         "max_memory: 1e-300\n"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++)
        ck_assert_msg(ctx_new(bad[k]) == NULL, "accepted %s", bad[k]);
    topoml_context *ctx = ctx_new("max_memory: unlimited\n");
    ck_assert_ptr_nonnull(ctx);
    ck_assert_uint_eq(topoml_get_max_memory(ctx), 0);
    topoml_context_free(ctx);
    ctx = ctx_new("max_memory: 3MiB\n");
    ck_assert_uint_eq(topoml_get_max_memory(ctx), 3u << 20);
    /* The API overrides the configuration, 0 meaning none. */
    topoml_set_max_memory(ctx, 0);
    ck_assert_uint_eq(topoml_get_max_memory(ctx), 0);
    topoml_context_free(ctx);
}
END_TEST

START_TEST(test_default_limit_is_the_machines)
{
    topoml_context *ctx = ctx_new(NULL);
    const uint64_t phys = (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE);
    char src[96];
    const uint64_t machine = tm_machine_memory(src, sizeof src);
    ck_assert_uint_gt(machine, 0);
    /* a share: at most half of physical memory (all of it before) */
    ck_assert_uint_le(machine, phys / 2);
    /* MemAvailable moves between the two reads: the same up to a quarter */
    const uint64_t got = topoml_get_max_memory(ctx);
    ck_assert_msg(got > machine - machine / 4 && got < machine + machine / 4, "%llu, %llu",
                  (unsigned long long)got, (unsigned long long)machine);
    /* A refusal under the default names it. 2^20 points on a line have
     * distances of 4 TiB, beyond this machine; the check comes first. */
    const uint64_t n = 1u << 20;
    double *x = malloc(n * sizeof *x);
    for (uint64_t i = 0; i < n; i++)
        x[i] = (double)i;
    topoml_data *d = NULL;
    ck_assert_int_eq(topoml_data_from_points(ctx, &d, n, 1, x), TOPOML_OK);
    free(x);
    void *out = NULL;
    uint64_t count;
    ck_assert_int_eq(topoml_distances(ctx, d, TOPOML_METRIC_EUCLIDEAN, TOPOML_F64, &out, &count),
                     TOPOML_E_LIMIT);
    ck_assert_msg(strstr(topoml_errmsg(ctx), "the default: ") && strstr(topoml_errmsg(ctx), src),
                  "%s", topoml_errmsg(ctx));
    topoml_data_free(ctx, d);
    topoml_context_free(ctx);
}
END_TEST

/* A fake /proc/self/cgroup and /sys/fs/cgroup under a temporary folder. */
static void put(const char *root, const char *rel, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    for (char *p = path + strlen(root) + 1; (p = strchr(p, '/')) != NULL; p++) {
        *p = '\0';
        mkdir(path, 0700);
        *p = '/';
    }
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

START_TEST(test_machine_limit_reads_cgroup_v2_and_v1)
{
    char root[] = "/tmp/topoml-cgroup-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(root));
    char proc[600], sys[600], src[64];
    snprintf(proc, sizeof proc, "%s/proc-cgroup", root);
    snprintf(sys, sizeof sys, "%s/sys", root);
    /* v2: the smallest memory.max of the group and those above it. */
    put(root, "proc-cgroup", "0::/a/b/c\n");
    put(root, "sys/a/memory.max", "3145728\n");
    put(root, "sys/a/b/memory.max", "max\n");
    put(root, "sys/a/b/c/memory.max", "5242880\n");
    ck_assert_uint_eq(tm_machine_memory_at(proc, sys, "/nonexistent", src, sizeof src), 3145728);
    ck_assert_str_eq(src, "the cgroup's memory limit");
    /* v1: memory.limit_in_bytes under the memory controller's tree. */
    put(root, "proc-cgroup", "5:cpu,cpuacct:/x\n4:memory:/x/y\n0::/\n");
    put(root, "sys/memory/x/y/memory.limit_in_bytes", "2097152\n");
    ck_assert_uint_eq(tm_machine_memory_at(proc, sys, "/nonexistent", src, sizeof src), 2097152);
    /* v1's "no limit" is a huge number: the machine's other limits hold. */
    put(root, "sys/memory/x/y/memory.limit_in_bytes", "9223372036854771712\n");
    const uint64_t phys = (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE);
    uint64_t v = tm_machine_memory_at(proc, sys, "/nonexistent", src, sizeof src);
    ck_assert_uint_le(v, phys);
    ck_assert_str_ne(src, "the cgroup's memory limit");
    /* No cgroup files at all. */
    ck_assert_uint_eq(
        tm_machine_memory_at("/nonexistent", "/nonexistent", "/nonexistent", src, sizeof src), v);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* The default is half of MemAvailable, read when the context is made; half
 * of physical memory where meminfo does not say. */
START_TEST(test_default_is_half_the_available_memory)
{
    char root[] = "/tmp/topoml-meminfo-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(root));
    char meminfo[600], src[96];
    snprintf(meminfo, sizeof meminfo, "%s/meminfo", root);
    put(root, "meminfo", "MemTotal:       16384000 kB\nMemFree:         1000000 kB\n"
                         "MemAvailable:    4096000 kB\nBuffers:          100000 kB\n");
    ck_assert_uint_eq(
        tm_machine_memory_at("/nonexistent", "/nonexistent", meminfo, src, sizeof src),
                      UINT64_C(4096000) * 1024 / 2);
    ck_assert_ptr_nonnull(strstr(src, "MemAvailable"));
    /* the cgroup's limit, when smaller, still wins */
    put(root, "proc-cgroup", "0::/g\n");
    put(root, "sys/g/memory.max", "1048576\n");
    char proc[600], sys[600];
    snprintf(proc, sizeof proc, "%s/proc-cgroup", root);
    snprintf(sys, sizeof sys, "%s/sys", root);
    ck_assert_uint_eq(tm_machine_memory_at(proc, sys, meminfo, src, sizeof src), 1048576);
    /* no MemAvailable line: half of physical memory */
    put(root, "meminfo", "MemTotal:       16384000 kB\n");
    const uint64_t phys = (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE);
    ck_assert_uint_eq(
        tm_machine_memory_at("/nonexistent", "/nonexistent", meminfo, src, sizeof src),
                      phys / 100 * 50);
    ck_assert_ptr_nonnull(strstr(src, "physical"));
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* The edge collapse's working memory is checked, as its edge list is,
 * before the edges are listed: when it cannot fit, the op is refused with
 * the collapse's estimate and no large buffer is ever allocated. Before,
 * only the edge list was checked first: every pair within the radius was
 * listed (about 0.9 MB here), then the collapse refused. */
static size_t largest_alloc;
static void *track_alloc(void *user, size_t size)
{
    (void)user;
    largest_alloc = size > largest_alloc ? size : largest_alloc;
    return malloc(size);
}
static void *track_realloc(void *user, void *ptr, size_t size)
{
    (void)user;
    largest_alloc = size > largest_alloc ? size : largest_alloc;
    return realloc(ptr, size);
}
static void track_free(void *user, void *ptr)
{
    (void)user;
    free(ptr);
}

START_TEST(test_the_collapse_is_not_begun_when_it_cannot_fit)
{
    topoml_allocator a = {track_alloc, track_realloc, track_free, NULL};
    topoml_context_options co = {.struct_size = sizeof co,
                                 .flags = TOPOML_CTX_NO_ENV | TOPOML_CTX_NO_PLUGINS,
                                 .allocator = &a};
    topoml_context *ctx = NULL;
    ck_assert_int_eq(topoml_context_new(&ctx, &co), TOPOML_OK);
    const uint64_t n = 300, pairs = n * (n - 1) / 2;
    double *x = malloc(n * 3 * sizeof *x);
    uint64_t seed = 3;
    for (uint64_t q = 0; q < n * 3; q++) {
        seed = seed * 6364136223846793005u + 1442695040888963407u;
        x[q] = (double)(seed >> 11) / 9007199254740992.0;
    }
    /* m: the pairs within the enclosing radius, the edges to collapse */
    double radius = INFINITY;
    for (uint64_t i = 0; i < n; i++) {
        double far = 0;
        for (uint64_t j = 0; j < n; j++) {
            double s2 = 0;
            for (int k = 0; k < 3; k++)
                s2 += (x[i * 3 + k] - x[j * 3 + k]) * (x[i * 3 + k] - x[j * 3 + k]);
            far = sqrt(s2) > far ? sqrt(s2) : far;
        }
        radius = far < radius ? far : radius;
    }
    uint64_t m = 0;
    for (uint64_t i = 0; i < n; i++)
        for (uint64_t j = 0; j < i; j++) {
            double s2 = 0;
            for (int k = 0; k < 3; k++)
                s2 += (x[i * 3 + k] - x[j * 3 + k]) * (x[i * 3 + k] - x[j * 3 + k]);
            m += sqrt(s2) <= radius;
        }
    ck_assert_uint_gt(m, pairs / 2);
    /* as a condensed matrix: every pair is scanned (no grid over cells) */
    double *cd = malloc(pairs * sizeof *cd);
    for (uint64_t i = 1, q = 0; i < n; i++)
        for (uint64_t j = 0; j < i; j++, q++) {
            double s2 = 0;
            for (int k = 0; k < 3; k++)
                s2 += (x[i * 3 + k] - x[j * 3 + k]) * (x[i * 3 + k] - x[j * 3 + k]);
            cd[q] = sqrt(s2);
        }
    topoml_data *d = NULL;
    ck_assert_int_eq(topoml_data_from_condensed(ctx, &d, n, cd), TOPOML_OK);
    free(cd);
    free(x);
    /* room for the edge list (24 bytes an edge), not for the collapse's
     * working memory (36 bytes an edge), most pairs being within the
     * enclosing radius of a uniform cloud */
    topoml_set_max_memory(ctx, pairs * 25);
    largest_alloc = 0;
    topoml_rips_options o;
    topoml_rips_options_init(&o);
    o.max_dim = 1;
    o.collapse = TOPOML_COLLAPSE_ON;
    topoml_barcode *bc = NULL;
    ck_assert_int_eq(topoml_barcode_compute(ctx, &bc, d, &o), TOPOML_E_LIMIT);
    ck_assert_msg(strstr(topoml_errmsg(ctx), "the edge collapse needs"), "%s",
                  topoml_errmsg(ctx));
    /* the edge list would be 24 bytes an edge */
    ck_assert_msg(largest_alloc < m * 24 && largest_alloc < pairs * 8 + 4096,
                  "%zu bytes allocated at once (the edge list: %llu)",
                  largest_alloc, (unsigned long long)(m * 24));
    topoml_data_free(ctx, d);
    topoml_context_free(ctx);
}
END_TEST

/* Under AddressSanitizer the process already maps far more address space
 * than any RLIMIT_AS it could set: the child could not allocate at all. */
#if defined(__SANITIZE_ADDRESS__)
#define TOPOML_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TOPOML_ASAN 1
#endif
#endif

START_TEST(test_machine_limit_follows_rlimit_as)
{
#ifdef TOPOML_ASAN
    return;
#endif
    /* In a child: lowering RLIMIT_AS cannot be undone. */
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        /* Half the default without it: below it, so it must be the limit. */
        char src0[96];
        const uint64_t v0 =
            tm_machine_memory_at("/nonexistent", "/nonexistent", "/nonexistent", src0, sizeof src0);
        struct rlimit rl;
        getrlimit(RLIMIT_AS, &rl);
        rl.rlim_cur = v0 / 2;
        if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < rl.rlim_cur)
            rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_AS, &rl) != 0)
            _exit(2);
        char src[64];
        uint64_t v =
            tm_machine_memory_at("/nonexistent", "/nonexistent", "/nonexistent", src, sizeof src);
        bool ok = v == rl.rlim_cur && strstr(src, "RLIMIT_AS") != NULL;
        _exit(ok ? 0 : 1);
    }
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
}
END_TEST

START_TEST(test_text_readers_refuse_nul_as_they_stream)
{
    topoml_context *ctx = ctx_new(NULL);
    /* A stream of NUL bytes with no newline: refused on line 1 after the
     * first block, not after reading to the memory limit. */
    FILE *f = fopen("/dev/zero", "r");
    ck_assert_ptr_nonnull(f);
    topoml_data *d = NULL;
    const topoml_format fmts[] = {TOPOML_FORMAT_POINT_CLOUD, TOPOML_FORMAT_LOWER_DISTANCE,
                                  TOPOML_FORMAT_SPARSE};
    for (size_t k = 0; k < sizeof fmts / sizeof fmts[0]; k++) {
        ck_assert_int_eq(topoml_data_read_stream(ctx, &d, f, "zeros", fmts[k]), TOPOML_E_PARSE);
        ck_assert_msg(strstr(topoml_errmsg(ctx), "zeros:1: NUL byte") != NULL, "%s",
                      topoml_errmsg(ctx));
        ck_assert_msg(ftell(f) < (64 << 20), "read %ld bytes first", ftell(f));
    }
    fclose(f);
    topoml_diagram *dg = NULL;
    ck_assert_int_eq(topoml_diagram_read(ctx, &dg, "/dev/zero", TOPOML_DIAGRAM_AUTO),
                     TOPOML_E_PARSE);
    ck_assert_msg(strstr(topoml_errmsg(ctx), "NUL byte") != NULL, "%s", topoml_errmsg(ctx));
    /* The NUL is placed on its own line and column, lines before it read. */
    char text[] = "1 2\n3 4\n5 \0 6\n7 8\n";
    f = fmemopen(text, sizeof text - 1, "r");
    ck_assert_int_eq(topoml_data_read_stream(ctx, &d, f, "t", TOPOML_FORMAT_POINT_CLOUD),
                     TOPOML_E_PARSE);
    ck_assert_msg(strstr(topoml_errmsg(ctx), "t:3: NUL byte in column 3") != NULL, "%s",
                  topoml_errmsg(ctx));
    fclose(f);
    topoml_context_free(ctx);
}
END_TEST

START_TEST(test_rips_too_large_is_refused_before_any_pass_over_pairs)
{
    /* 200 000 points: the distance matrix is 160 GB. H1 and H2 are refused
     * with that estimate and the limit (H2's simplex indices would also
     * overflow: the memory is said first), before any O(n^2) work. */
    topoml_context *ctx = ctx_new(NULL);
    topoml_set_max_memory(ctx, 1u << 30);
    const uint64_t n = 200000;
    double *x = malloc(2 * n * sizeof *x);
    for (uint64_t i = 0; i < 2 * n; i++)
        x[i] = (double)(i * 7919 % 10007);
    topoml_data *d = NULL;
    ck_assert_int_eq(topoml_data_from_points(ctx, &d, n, 2, x), TOPOML_OK);
    free(x);
    for (uint32_t dim = 1; dim <= 2; dim++) {
        topoml_rips_options o;
        topoml_rips_options_init(&o);
        o.max_dim = dim;
        topoml_barcode *bc = NULL;
        clock_t t0 = clock();
        ck_assert_int_eq(topoml_barcode_compute(ctx, &bc, d, &o), TOPOML_E_LIMIT);
        /* A bound, not a benchmark: the pass over 2e10 pairs takes a minute. */
        ck_assert_msg((double)(clock() - t0) / CLOCKS_PER_SEC < 5.0, "took %.1f s",
                      (double)(clock() - t0) / CLOCKS_PER_SEC);
        const char *m = topoml_errmsg(ctx);
        ck_assert_msg(strstr(m, "distance matrix") && strstr(m, "159999200000") &&
                          strstr(m, "set by the caller"),
                      "%s", m);
        topoml_barcode_free(bc);
    }
    topoml_data_free(ctx, d);
    topoml_context_free(ctx);
}
END_TEST

START_TEST(test_host_buffers_check_against_the_limit)
{
    topoml_context *ctx = ctx_new(NULL);
    topoml_set_max_memory(ctx, 1000);
    ck_assert_int_eq(topoml_check_memory(ctx, 1000, "a buffer"), TOPOML_OK);
    ck_assert_int_eq(topoml_check_memory(ctx, 1001, "a buffer"), TOPOML_E_LIMIT);
    ck_assert_msg(strstr(topoml_errmsg(ctx), "a buffer needs about 1001 bytes") != NULL, "%s",
                  topoml_errmsg(ctx));
    topoml_set_max_memory(ctx, 0);
    ck_assert_int_eq(topoml_check_memory(ctx, UINT64_MAX, "a buffer"), TOPOML_OK);
    ck_assert_int_eq(topoml_check_memory(NULL, 1, "a buffer"), TOPOML_E_INVALID);
    topoml_context_free(ctx);
}
END_TEST

START_TEST(test_entropy_and_total_persistence_at_the_edges_of_double)
{
    topoml_context *ctx = ctx_new(NULL);
    /* Two equal lengths: entropy ln 2 at every scale, even where the
     * lengths (-1e308 to 1e308) or their sum overflow, or are subnormal. */
    const double scales[] = {1e-320, 1e-300, 1, 1e300, 1e308};
    for (size_t k = 0; k < sizeof scales / sizeof scales[0]; k++) {
        const double s = scales[k];
        const topoml_pair two[] = {{-s, s}, {-s, s}};
        double e = -1;
        ck_assert_int_eq(topoml_persistent_entropy(ctx, two, 2, &e), TOPOML_OK);
        ck_assert_msg(fabs(e - log(2.0)) < 1e-15, "scale %g: %.17g", s, e);
    }
    const topoml_pair big[] = {{0, 1e308}, {0, 1e308}};
    double t;
    ck_assert_int_eq(topoml_total_persistence(ctx, big, 2, 1.0, &t), TOPOML_E_OVERFLOW);
    const topoml_pair inf[] = {{0, INFINITY}};
    ck_assert_int_eq(topoml_total_persistence(ctx, inf, 1, 1.0, &t), TOPOML_OK);
    ck_assert(isinf(t));
    topoml_context_free(ctx);
}
END_TEST


/* Through the public API: under limits from plenty down to nothing, each
 * answer is the whole barcode, a refusal before any work (no barcode), or
 * a partial barcode — TOPOML_E_LIMIT, not complete, the stop status, the
 * finished dimensions exactly the full barcode's first ones, and JSON
 * output that says where it stopped. Some limit gives each kind. */
START_TEST(test_rips_limit_mid_way_returns_the_finished_dimensions)
{
    topoml_context *ctx = ctx_new(NULL);
    enum { N = 60, D = 4 };
    double *x = malloc(N * D * sizeof *x);
    uint64_t s = 99;
    for (int q = 0; q < N * D; q++) {
        s = s * 6364136223846793005u + 1442695040888963407u;
        x[q] = (double)(s >> 11) / 9007199254740992.0;
    }
    topoml_data *data = NULL;
    ck_assert_int_eq(topoml_data_from_points(ctx, &data, N, D, x), TOPOML_OK);
    topoml_rips_options o;
    topoml_rips_options_init(&o);
    o.max_dim = 3;
    o.collapse = TOPOML_COLLAPSE_OFF;
    topoml_set_max_memory(ctx, 0);
    topoml_barcode *full = NULL;
    ck_assert_int_eq(topoml_barcode_compute(ctx, &full, data, &o), TOPOML_OK);
    ck_assert_int_eq(topoml_barcode_stop_status(full), TOPOML_OK);
    uint64_t nfull;
    const topoml_interval *fv = topoml_barcode_intervals(full, &nfull);
    int whole = 0, refused = 0, partial = 0;
    for (uint64_t limit = 64u << 20; limit > 4096; limit = limit * 7 / 8) {
        topoml_set_max_memory(ctx, limit);
        topoml_barcode *bc = NULL;
        int rc = topoml_barcode_compute(ctx, &bc, data, &o);
        if (rc == TOPOML_OK) {
            ck_assert_int_eq(topoml_barcode_complete(bc), 1);
            whole++;
        } else {
            ck_assert_int_eq(rc, TOPOML_E_LIMIT);
            ck_assert_ptr_nonnull(strstr(topoml_errmsg(ctx), "memory limit"));
            if (!bc) {
                refused++;
            } else {
                partial++;
                uint32_t k = topoml_barcode_max_dim(bc);
                ck_assert_uint_lt(k, 3);
                ck_assert_int_eq(topoml_barcode_complete(bc), 0);
                ck_assert_int_eq(topoml_barcode_stop_status(bc), TOPOML_E_LIMIT);
                char stopped[64];
                snprintf(stopped, sizeof stopped, "dimension %u stopped", k + 1);
                ck_assert_msg(strstr(topoml_errmsg(ctx), stopped), "%s", topoml_errmsg(ctx));
                uint64_t n, want = 0;
                const topoml_interval *v = topoml_barcode_intervals(bc, &n);
                while (want < nfull && fv[want].dim <= k)
                    want++;
                ck_assert_uint_eq(n, want);
                ck_assert(memcmp(v, fv, n * sizeof *v) == 0);
                char *text = NULL;
                size_t len = 0;
                ck_assert_int_eq(topoml_barcode_write_mem(ctx, bc, TOPOML_OUTPUT_JSON, 0, &text,
                                                          &len),
                                 TOPOML_OK);
                char want_json[96];
                snprintf(want_json, sizeof want_json,
                         "\"complete\":false,\"stopped\":{\"dim\":%u,\"reason\":\"memory limit\"}",
                         k + 1);
                ck_assert_msg(strstr(text, want_json), "%s", text);
                topoml_free(ctx, text);
            }
        }
        topoml_barcode_free(bc);
    }
    ck_assert(whole > 0 && refused > 0 && partial > 0);
    ck_assert_int_eq(topoml_barcode_stop_status(NULL), TOPOML_E_INVALID);
    topoml_barcode_free(full);
    topoml_data_free(ctx, data);
    topoml_context_free(ctx);
    free(x);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("memory_limits");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_parse_size_refuses_what_is_not_whole_bytes);
    tcase_add_test(tc, test_config_max_memory_is_strict_and_may_say_unlimited);
    tcase_add_test(tc, test_default_limit_is_the_machines);
    tcase_add_test(tc, test_machine_limit_reads_cgroup_v2_and_v1);
    tcase_add_test(tc, test_default_is_half_the_available_memory);
    tcase_add_test(tc, test_the_collapse_is_not_begun_when_it_cannot_fit);
    tcase_add_test(tc, test_machine_limit_follows_rlimit_as);
    tcase_add_test(tc, test_text_readers_refuse_nul_as_they_stream);
    tcase_add_test(tc, test_rips_too_large_is_refused_before_any_pass_over_pairs);
    tcase_add_test(tc, test_host_buffers_check_against_the_limit);
    tcase_add_test(tc, test_entropy_and_total_persistence_at_the_edges_of_double);
    tcase_add_test(tc, test_rips_limit_mid_way_returns_the_finished_dimensions);
    suite_add_tcase(s, tc);
    return topoml_check_run(s);
}
