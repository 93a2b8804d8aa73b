/*
 * test_generators.c — generators of the Rips barcode through the public API
 * (TOPOML_RIPS_GENERATORS, topoml_barcode_generators): every interval's
 * birth and death edges are edges of the input whose lengths are exactly its
 * values, in every input kind, with and without the edge collapse, with a
 * threshold and with ties; on inputs without ties each is the one edge of
 * that length; none unless asked for; a backend that does not claim them
 * makes the core run the scalar reference instead; cpp-compat gives its own;
 * a plugin whose generators are wrong at run time is caught, in the host and
 * isolated.
 */
#include <check.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "topoml/topoml.h"

#include "check_run.h"

static uint64_t rng_state;

static double uniform01(void)
{
    rng_state = rng_state * 6364136223846793005u + 1442695040888963407u;
    return (double)(rng_state >> 11) / 9007199254740992.0;
}

static topoml_context *plain_ctx(void)
{
    topoml_context_options o = {0};
    o.struct_size = sizeof o;
    o.flags = TOPOML_CTX_NO_ENV | TOPOML_CTX_NO_PLUGINS;
    topoml_context *ctx = NULL;
    ck_assert_int_eq(topoml_context_new(&ctx, &o), TOPOML_OK);
    return ctx;
}

/* d(i, j) in a condensed matrix, i != j. */
static double cond(const double *d, uint32_t i, uint32_t j)
{
    if (i < j) {
        uint32_t t = i;
        i = j;
        j = t;
    }
    return d[(uint64_t)i * (i - 1) / 2 + j];
}

/* The one pair with distance exactly v, or (none, none) if there are
 * none or several. */
static void unique_edge(const double *d, uint32_t n, double v, uint32_t out[2])
{
    out[0] = out[1] = TOPOML_NO_VERTEX;
    int found = 0;
    for (uint32_t i = 1; i < n; i++)
        for (uint32_t j = 0; j < i; j++)
            if (cond(d, i, j) == v && found++ == 0) {
                out[0] = j;
                out[1] = i;
            }
    if (found != 1)
        out[0] = out[1] = TOPOML_NO_VERTEX;
}

/* Compute with generators and check them against the distances `d` (as the
 * backend sees them); with `no_ties`, each edge must be the unique one of
 * its length. Returns the number of bars of dimension >= 1. */
static uint64_t check_barcode(topoml_context *ctx, const topoml_data *data, const double *d,
                              uint32_t n, const topoml_rips_options *o, bool no_ties)
{
    topoml_barcode *bc = NULL;
    ck_assert_msg(topoml_barcode_compute(ctx, &bc, data, o) == TOPOML_OK, "%s",
                  topoml_errmsg(ctx));
    uint64_t nb = 0, ng = 99;
    const topoml_interval *iv = topoml_barcode_intervals(bc, &nb);
    const topoml_generator *g = topoml_barcode_generators(bc, &ng);
    ck_assert_uint_eq(ng, nb);
    ck_assert(nb == 0 || g != NULL);
    uint64_t higher = 0;
    for (uint64_t k = 0; k < nb; k++) {
        const topoml_interval *v = &iv[k];
        if (v->dim == 0) {
            ck_assert_uint_eq(g[k].birth[0], TOPOML_NO_VERTEX);
            ck_assert_uint_eq(g[k].birth[1], TOPOML_NO_VERTEX);
        } else {
            higher++;
            ck_assert_uint_lt(g[k].birth[0], g[k].birth[1]);
            ck_assert_uint_lt(g[k].birth[1], n);
            ck_assert_msg(cond(d, g[k].birth[0], g[k].birth[1]) == v->birth,
                          "dim %u bar %llu: birth edge (%u, %u) has length %.17g, birth %.17g",
                          v->dim, (unsigned long long)k, g[k].birth[0], g[k].birth[1],
                          cond(d, g[k].birth[0], g[k].birth[1]), v->birth);
        }
        if (isinf(v->death)) {
            ck_assert_uint_eq(g[k].death[0], TOPOML_NO_VERTEX);
            ck_assert_uint_eq(g[k].death[1], TOPOML_NO_VERTEX);
        } else {
            ck_assert_uint_lt(g[k].death[0], g[k].death[1]);
            ck_assert_uint_lt(g[k].death[1], n);
            ck_assert_msg(cond(d, g[k].death[0], g[k].death[1]) == v->death,
                          "dim %u bar %llu: death edge (%u, %u) has length %.17g, death %.17g",
                          v->dim, (unsigned long long)k, g[k].death[0], g[k].death[1],
                          cond(d, g[k].death[0], g[k].death[1]), v->death);
        }
        if (no_ties) {
            uint32_t e[2];
            if (v->dim > 0) {
                unique_edge(d, n, v->birth, e);
                ck_assert_uint_eq(g[k].birth[0], e[0]);
                ck_assert_uint_eq(g[k].birth[1], e[1]);
            }
            if (!isinf(v->death)) {
                unique_edge(d, n, v->death, e);
                ck_assert_uint_eq(g[k].death[0], e[0]);
                ck_assert_uint_eq(g[k].death[1], e[1]);
            }
        }
    }
    topoml_barcode_free(bc);
    return higher;
}

static double *random_condensed(uint32_t n)
{
    uint64_t m = (uint64_t)n * (n - 1) / 2;
    double *d = malloc((m ? m : 1) * sizeof *d);
    ck_assert_ptr_nonnull(d);
    for (uint64_t k = 0; k < m; k++)
        d[k] = 0.1 + uniform01(); /* continuous: no ties */
    return d;
}

/* A data set of n points from random distances of the seed (returned in
 * *d, the caller frees), and options for dimensions 0..2. */
static topoml_data *condensed_case(topoml_context *ctx, uint64_t seed, uint32_t n, double **d,
                                   topoml_rips_options *o)
{
    rng_state = seed;
    *d = random_condensed(n);
    topoml_data *data = NULL;
    ck_assert_int_eq(topoml_data_from_condensed(ctx, &data, n, *d), TOPOML_OK);
    topoml_rips_options_init(o);
    o->max_dim = 2;
    return data;
}

/* Random distance matrices (no ties), dimensions 0..3, Z/2 and Z/3, with
 * and without a threshold and the edge collapse. */
START_TEST(condensed_without_ties)
{
    topoml_context *ctx = plain_ctx();
    rng_state = 21;
    uint64_t higher = 0;
    for (int trial = 0; trial < 24; trial++) {
        uint32_t n = 6 + (uint32_t)trial;
        double *d = random_condensed(n);
        topoml_data *data = NULL;
        ck_assert_int_eq(topoml_data_from_condensed(ctx, &data, n, d), TOPOML_OK);
        topoml_rips_options o;
        topoml_rips_options_init(&o);
        o.flags = TOPOML_RIPS_GENERATORS;
        o.max_dim = (uint32_t)trial % 4;
        o.modulus = trial % 3 == 2 ? 3 : 2;
        o.threshold = trial % 2 ? 0.7 : INFINITY;
        o.collapse = trial % 4 < 2 ? TOPOML_COLLAPSE_OFF : TOPOML_COLLAPSE_ON;
        higher += check_barcode(ctx, data, d, n, &o, true);
        topoml_data_free(ctx, data);
        free(d);
    }
    ck_assert_uint_gt(higher, 20); /* the cases have bars beyond H0 */
    topoml_context_free(ctx);
}
END_TEST

/* Points on a grid: many equal distances; the edges still have the right
 * lengths. Points in general position: the unique edges. */
START_TEST(points_with_and_without_ties)
{
    topoml_context *ctx = plain_ctx();
    rng_state = 22;
    for (int grid = 0; grid < 2; grid++) {
        const uint32_t n = 36;
        double p[36 * 2];
        for (uint32_t i = 0; i < n; i++) {
            p[2 * i] = grid ? (double)(i % 6) : uniform01();
            p[2 * i + 1] = grid ? (double)(i / 6) : uniform01();
        }
        topoml_data *data = NULL;
        ck_assert_int_eq(topoml_data_from_points(ctx, &data, n, 2, p), TOPOML_OK);
        void *dist = NULL;
        uint64_t count = 0;
        ck_assert_int_eq(topoml_distances(ctx, data, TOPOML_METRIC_EUCLIDEAN, TOPOML_F64, &dist,
                                          &count),
                         TOPOML_OK);
        ck_assert_uint_eq(count, (uint64_t)n * (n - 1) / 2);
        topoml_rips_options o;
        topoml_rips_options_init(&o);
        o.flags = TOPOML_RIPS_GENERATORS;
        o.max_dim = 2;
        ck_assert_uint_gt(check_barcode(ctx, data, dist, n, &o, !grid), 0);
        topoml_free(ctx, dist);
        topoml_data_free(ctx, data);
    }
    topoml_context_free(ctx);
}
END_TEST

/* An edge list (SPARSE): absent pairs are not edges of the complex. */
START_TEST(sparse_edges)
{
    topoml_context *ctx = plain_ctx();
    rng_state = 23;
    const uint32_t n = 30;
    double *d = random_condensed(n);
    topoml_edge e[30 * 29 / 2];
    uint64_t m = 0;
    for (uint32_t i = 1; i < n; i++)
        for (uint32_t j = 0; j < i; j++) {
            if (cond(d, i, j) < 0.8)
                e[m++] = (topoml_edge){cond(d, i, j), j, i};
            else
                d[(uint64_t)i * (i - 1) / 2 + j] = INFINITY; /* absent */
        }
    topoml_data *data = NULL;
    ck_assert_int_eq(topoml_data_from_edges(ctx, &data, n, m, e), TOPOML_OK);
    topoml_rips_options o;
    topoml_rips_options_init(&o);
    o.flags = TOPOML_RIPS_GENERATORS;
    o.max_dim = 2;
    for (int collapse = 0; collapse < 2; collapse++) {
        o.collapse = collapse ? TOPOML_COLLAPSE_ON : TOPOML_COLLAPSE_OFF;
        ck_assert_uint_gt(check_barcode(ctx, data, d, n, &o, true), 0);
    }
    topoml_data_free(ctx, data);
    free(d);
    topoml_context_free(ctx);
}
END_TEST

/* Not asked: no generators. An unknown flag: refused. */
START_TEST(only_when_asked)
{
    topoml_context *ctx = plain_ctx();
    rng_state = 24;
    double *d = random_condensed(10);
    topoml_data *data = NULL;
    ck_assert_int_eq(topoml_data_from_condensed(ctx, &data, 10, d), TOPOML_OK);
    topoml_rips_options o;
    topoml_rips_options_init(&o);
    topoml_barcode *bc = NULL;
    ck_assert_int_eq(topoml_barcode_compute(ctx, &bc, data, &o), TOPOML_OK);
    uint64_t n = 99;
    ck_assert_ptr_null(topoml_barcode_generators(bc, &n));
    ck_assert_uint_eq(n, 0);
    topoml_barcode_free(bc);
    /* Options from before 0.3 (no flags field): no generators either. */
    o.struct_size = offsetof(topoml_rips_options, flags);
    o.flags = TOPOML_RIPS_GENERATORS;
    ck_assert_int_eq(topoml_barcode_compute(ctx, &bc, data, &o), TOPOML_OK);
    ck_assert_ptr_null(topoml_barcode_generators(bc, NULL));
    topoml_barcode_free(bc);
    o.struct_size = sizeof o;
    o.flags = 0x80u;
    bc = NULL;
    ck_assert_int_eq(topoml_barcode_compute(ctx, &bc, data, &o), TOPOML_E_INVALID);
    ck_assert_ptr_null(bc);
    ck_assert_msg(strstr(topoml_errmsg(ctx), "flags") != NULL, "%s", topoml_errmsg(ctx));
    topoml_data_free(ctx, data);
    free(d);
    topoml_context_free(ctx);
}
END_TEST

static topoml_context *ctx_with(const char *config_text, const char *plugin_path)
{
    char cfg[] = "/tmp/topoml-gen-XXXXXX";
    int fd = mkstemp(cfg);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, config_text, strlen(config_text)), (ssize_t)strlen(config_text));
    close(fd);
    topoml_context_options opts = {0};
    opts.struct_size = sizeof opts;
    opts.flags = TOPOML_CTX_NO_ENV;
    opts.config_path = cfg;
    opts.plugin_path = plugin_path;
    topoml_context *ctx = NULL;
    int rc = topoml_context_new(&ctx, &opts);
    unlink(cfg);
    ck_assert_msg(rc == TOPOML_OK, "%s", topoml_errmsg(ctx));
    return ctx;
}

/* A plugin that does not claim generators (a scalar copy without the
 * capability bit): asked by name, it runs the barcode without them; asked
 * for generators, the scalar reference runs instead, with the same bars. */
START_TEST(fallback_to_the_reference)
{
    topoml_context *ctx =
        ctx_with("enable: [gen-no-claim]\n", TOPOML_TEST_BUILD_DIR "/gen-faults/no-claim");
    ck_assert_int_eq(topoml_use_backend(ctx, "gen-no-claim"), TOPOML_OK);

    const uint32_t n = 20;
    double *d;
    topoml_rips_options o;
    topoml_data *data = condensed_case(ctx, 25, n, &d, &o);
    topoml_barcode *bc = NULL;
    ck_assert_msg(topoml_barcode_compute(ctx, &bc, data, &o) == TOPOML_OK, "%s",
                  topoml_errmsg(ctx));
    ck_assert_str_eq(topoml_last_backend(ctx), "gen-no-claim");
    ck_assert_ptr_null(topoml_barcode_generators(bc, NULL));
    uint64_t n_plain = 0;
    topoml_barcode_intervals(bc, &n_plain);
    topoml_barcode_free(bc);

    o.flags = TOPOML_RIPS_GENERATORS;
    ck_assert_uint_gt(check_barcode(ctx, data, d, n, &o, true), 0);
    ck_assert_str_eq(topoml_last_backend(ctx), "scalar");
    bc = NULL;
    ck_assert_int_eq(topoml_barcode_compute(ctx, &bc, data, &o), TOPOML_OK);
    uint64_t n_gen = 0;
    topoml_barcode_intervals(bc, &n_gen);
    ck_assert_uint_eq(n_gen, n_plain);
    topoml_barcode_free(bc);
    topoml_data_free(ctx, data);
    free(d);
    topoml_context_free(ctx);
}
END_TEST

/* Generators are checked at run time as the suite certifies them: a plugin
 * enabled without certification whose generators are wrong (an edge of
 * another length, the vertices the wrong way round) is caught on its first
 * call and the caller gets the reference's, in the host and in a process of
 * its own; a right plugin in a process of its own gives them through. */
static const struct {
    const char *config, *dir, *name;
    bool wrong;
} gen_runs[] = {
    {"enable: [gen-wrong-length]\nisolation: none\n", "wrong-length", "gen-wrong-length", true},
    {"enable: [gen-wrong-length]\nisolation: process\n", "wrong-length", "gen-wrong-length",
     true},
    {"enable: [gen-swapped]\nisolation: none\n", "swapped", "gen-swapped", true},
    {"enable: [gen-swapped]\nisolation: process\n", "swapped", "gen-swapped", true},
    {"enable: [scalar-copy]\nisolation: process\n", NULL, "scalar-copy", false},
};

START_TEST(wrong_generators_never_reach_the_caller)
{
    char dir[512];
    if (gen_runs[_i].dir)
        snprintf(dir, sizeof dir, "%s/gen-faults/%s", TOPOML_TEST_BUILD_DIR, gen_runs[_i].dir);
    else
        snprintf(dir, sizeof dir, "%s/conformance-plugins/scalar-copy", TOPOML_TEST_BUILD_DIR);
    topoml_context *ctx = ctx_with(gen_runs[_i].config, dir);
    ck_assert_int_eq(topoml_use_backend(ctx, gen_runs[_i].name), TOPOML_OK);
    const uint32_t n = 24;
    double *d;
    topoml_rips_options o;
    topoml_data *data = condensed_case(ctx, 27, n, &d, &o);
    o.flags = TOPOML_RIPS_GENERATORS;
    ck_assert_uint_gt(check_barcode(ctx, data, d, n, &o, true), 0);
    ck_assert_str_eq(topoml_last_backend(ctx),
                     gen_runs[_i].wrong ? "scalar" : gen_runs[_i].name);
    for (uint32_t i = 0; i < topoml_backend_count(ctx); i++) {
        topoml_backend_info info = {.struct_size = sizeof info};
        ck_assert_int_eq(topoml_backend_get(ctx, i, &info), TOPOML_OK);
        if (info.name && strcmp(info.name, gen_runs[_i].name) == 0 && info.path)
            ck_assert_uint_eq(info.gate_state, gen_runs[_i].wrong ? TOPOML_GATE_REJECTED
                                                                  : TOPOML_GATE_ENABLED);
    }
    topoml_data_free(ctx, data);
    free(d);
    topoml_context_free(ctx);
}
END_TEST

/* cpp-compat claims generators and computes them itself (an independent
 * implementation): the same checks, and no fallback. */
START_TEST(cpp_compat_gives_them)
{
    topoml_context *ctx = ctx_with("enable: [cpp-compat]\n", TOPOML_PLUGIN_DIR);
    ck_assert_int_eq(topoml_use_backend(ctx, "cpp-compat"), TOPOML_OK);
    rng_state = 26;
    for (int trial = 0; trial < 6; trial++) {
        const uint32_t n = 12 + 3 * (uint32_t)trial;
        double *d = random_condensed(n);
        topoml_data *data = NULL;
        ck_assert_int_eq(topoml_data_from_condensed(ctx, &data, n, d), TOPOML_OK);
        topoml_rips_options o;
        topoml_rips_options_init(&o);
        o.flags = TOPOML_RIPS_GENERATORS;
        o.max_dim = 1 + (uint32_t)trial % 3;
        o.modulus = trial % 2 ? 3 : 2;
        o.threshold = trial % 3 == 2 ? 0.8 : INFINITY;
        ck_assert_uint_gt(check_barcode(ctx, data, d, n, &o, true), 0);
        ck_assert_str_eq(topoml_last_backend(ctx), "cpp-compat");
        topoml_data_free(ctx, data);
        free(d);
    }
    topoml_context_free(ctx);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("generators");
    TCase *tc = tcase_create("generators");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, condensed_without_ties);
    tcase_add_test(tc, points_with_and_without_ties);
    tcase_add_test(tc, sparse_edges);
    tcase_add_test(tc, only_when_asked);
    tcase_add_test(tc, fallback_to_the_reference);
    tcase_add_test(tc, cpp_compat_gives_them);
    tcase_add_loop_test(tc, wrong_generators_never_reach_the_caller, 0,
                        (int)(sizeof gen_runs / sizeof gen_runs[0]));
    suite_add_tcase(s, tc);
    return topoml_check_run(s);
}
