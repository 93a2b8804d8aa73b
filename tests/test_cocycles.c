/*
 * test_cocycles.c — representative cocycles of the Rips barcode through the
 * public API (TOPOML_RIPS_COCYCLES, topoml_barcode_cocycle), checked here
 * independently of the core's own check: a circle's one H1 bar has a
 * cocycle that is non-zero on the circle (its class is not zero), over Z/2,
 * Z/3 and Z/5; on random inputs every cocycle of dimension 1 and 2 is a
 * cocycle of the complex at its bar's birth, starts with the bar's birth
 * simplex at value 1 and lists its rows in filtration order, in every
 * modulus, with and without a threshold; none unless asked for; the threads
 * plugin gives the reference's; and a plugin whose cocycles are wrong (not
 * a cocycle, or zero where the bar starts) is caught on its first call, the
 * caller getting the reference's.
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

/* d(i, j) in a condensed matrix. */
static double cond(const double *d, uint32_t i, uint32_t j)
{
    if (i == j)
        return 0;
    if (i < j) {
        uint32_t t = i;
        i = j;
        j = t;
    }
    return d[(uint64_t)i * (i - 1) / 2 + j];
}

static double diameter(const double *d, const uint32_t *v, uint32_t m)
{
    double x = 0;
    for (uint32_t a = 0; a < m; a++)
        for (uint32_t b = a + 1; b < m; b++)
            x = fmax(x, cond(d, v[a], v[b]));
    return x;
}

/* The cocycle's value on the simplex v (m vertices, descending). */
static uint32_t value_on(const uint32_t *rows, uint64_t n_rows, const uint32_t *v, uint32_t m)
{
    for (uint64_t r = 0; r < n_rows; r++)
        if (memcmp(rows + r * (m + 1), v, m * sizeof *v) == 0)
            return rows[r * (m + 1) + m];
    return 0;
}

/* Every (m+1)-vertex simplex tau of diameter <= limit, descending: the
 * coboundary of the cocycle there, sum of (-1)^i z(tau minus vertex i),
 * must be 0 mod p. */
static void assert_cocycle(const double *d, uint32_t n, const uint32_t *rows, uint64_t n_rows,
                           uint32_t m, uint32_t p, double limit, uint32_t *tau, uint32_t depth,
                           uint32_t below)
{
    if (depth == m + 1) {
        if (diameter(d, tau, m + 1) > limit)
            return;
        uint64_t sum = 0;
        uint32_t facet[8];
        for (uint32_t i = 0; i <= m; i++) {
            for (uint32_t a = 0, b = 0; a <= m; a++)
                if (a != i)
                    facet[b++] = tau[a];
            uint32_t z = value_on(rows, n_rows, facet, m);
            sum += i % 2 ? (p - z) % p : z;
        }
        ck_assert_msg(sum % p == 0, "not a cocycle at the birth: coboundary %llu on (%u,%u,%u)",
                      (unsigned long long)(sum % p), tau[0], tau[1], tau[2]);
        return;
    }
    for (uint32_t v = 0; v < below; v++) {
        tau[depth] = below - 1 - v;
        assert_cocycle(d, n, rows, n_rows, m, p, limit, tau, depth + 1, below - 1 - v);
    }
}

/* Compute with cocycles and check every one; returns the bars of
 * dimension >= 1. */
static uint64_t check_cocycles(topoml_context *ctx, const topoml_data *data, const double *d,
                               uint32_t n, const topoml_rips_options *o)
{
    topoml_barcode *bc = NULL;
    ck_assert_msg(topoml_barcode_compute(ctx, &bc, data, o) == TOPOML_OK, "%s",
                  topoml_errmsg(ctx));
    uint64_t nb = 0, higher = 0;
    const topoml_interval *iv = topoml_barcode_intervals(bc, &nb);
    for (uint64_t k = 0; k < nb; k++) {
        uint64_t n_rows = 99;
        const uint32_t *rows = topoml_barcode_cocycle(bc, k, &n_rows);
        ck_assert_ptr_nonnull(rows);
        const uint32_t m = iv[k].dim + 1; /* vertices of a row's simplex */
        if (iv[k].dim == 0) {
            ck_assert_uint_eq(n_rows, 0);
            continue;
        }
        higher++;
        ck_assert_uint_gt(n_rows, 0);
        double last = 0;
        for (uint64_t r = 0; r < n_rows; r++) {
            const uint32_t *row = rows + r * (m + 1);
            for (uint32_t i = 0; i < m; i++)
                ck_assert(row[i] < n && (i == 0 || row[i] < row[i - 1]));
            ck_assert(row[m] >= 1 && row[m] < o->modulus);
            const double diam = diameter(d, row, m);
            ck_assert_msg(diam >= last, "rows not in filtration order");
            last = diam;
        }
        /* the birth simplex first, at value 1 */
        ck_assert_msg(diameter(d, rows, m) == iv[k].birth, "bar %llu: first row at %.17g, birth %.17g",
                      (unsigned long long)k, diameter(d, rows, m), iv[k].birth);
        ck_assert_uint_eq(rows[m], 1);
        uint32_t tau[8];
        assert_cocycle(d, n, rows, n_rows, m, o->modulus, iv[k].birth, tau, 0, n);
    }
    ck_assert_ptr_null(topoml_barcode_cocycle(bc, nb, NULL));
    topoml_barcode_free(bc);
    return higher;
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

static topoml_context *ctx_with(const char *config_text, const char *plugin_path)
{
    char cfg[] = "/tmp/topoml-coc-XXXXXX";
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

/* n points on a circle, radii jittered (no two distances equal): the
 * condensed distances. */
static double *circle(uint32_t n, uint64_t seed, double jitter)
{
    rng_state = seed;
    double *xy = malloc(2 * n * sizeof *xy);
    double *d = malloc((uint64_t)n * (n - 1) / 2 * sizeof *d);
    ck_assert(xy && d);
    for (uint32_t i = 0; i < n; i++) {
        double r = 1 + jitter * uniform01(), a = 2 * M_PI * i / n;
        xy[2 * i] = r * cos(a);
        xy[2 * i + 1] = r * sin(a);
    }
    for (uint32_t i = 1; i < n; i++)
        for (uint32_t j = 0; j < i; j++)
            d[(uint64_t)i * (i - 1) / 2 + j] =
                hypot(xy[2 * i] - xy[2 * j], xy[2 * i + 1] - xy[2 * j + 1]);
    free(xy);
    return d;
}

/* A circle's one H1 bar: its cocycle, summed around the circle (edge i,
 * i+1 with the sign of its orientation), is not 0 mod p, so its class is not
 * zero: it is the circle's. Over Z/2, Z/3 (values 1 and 2) and Z/5. */
START_TEST(circle_h1)
{
    topoml_context *ctx = plain_ctx();
    const uint32_t n = 16, moduli[] = {2, 3, 5};
    double *d = circle(n, 7, 0.05);
    topoml_data *data = NULL;
    ck_assert_int_eq(topoml_data_from_condensed(ctx, &data, n, d), TOPOML_OK);
    for (size_t t = 0; t < 3; t++) {
        topoml_rips_options o;
        topoml_rips_options_init(&o);
        o.modulus = moduli[t];
        o.flags = TOPOML_RIPS_COCYCLES;
        ck_assert_uint_eq(check_cocycles(ctx, data, d, n, &o), 1);
        topoml_barcode *bc = NULL;
        ck_assert_int_eq(topoml_barcode_compute(ctx, &bc, data, &o), TOPOML_OK);
        uint64_t nb = 0, rows = 0;
        const topoml_interval *iv = topoml_barcode_intervals(bc, &nb);
        ck_assert_uint_eq(iv[nb - 1].dim, 1);
        const uint32_t *z = topoml_barcode_cocycle(bc, nb - 1, &rows);
        uint64_t around = 0;
        for (uint32_t i = 0; i < n; i++) {
            uint32_t a = i, b = (i + 1) % n;
            uint32_t e[2] = {a > b ? a : b, a > b ? b : a};
            uint32_t v = value_on(z, rows, e, 2);
            around += a < b ? v : (o.modulus - v) % o.modulus;
        }
        ck_assert_msg(around % o.modulus != 0, "Z/%u: the cocycle is 0 on the circle",
                      o.modulus);
        topoml_barcode_free(bc);
    }
    topoml_data_free(ctx, data);
    free(d);
    topoml_context_free(ctx);
}
END_TEST

/* Random distance matrices (no ties) and jittered circles, dimensions 1 and
 * 2, Z/2, Z/3, Z/5, Z/7, with and without a threshold. */
START_TEST(random_inputs_give_cocycles)
{
    topoml_context *ctx = plain_ctx();
    uint64_t bars = 0;
    for (uint32_t trial = 0; trial < 16; trial++) {
        const uint32_t n = 10 + trial % 12;
        double *d;
        if (trial % 4 == 3) {
            d = circle(n, 100 + trial, 0.5);
        } else {
            rng_state = 1000 + trial;
            d = malloc((uint64_t)n * (n - 1) / 2 * sizeof *d);
            ck_assert_ptr_nonnull(d);
            for (uint64_t q = 0; q < (uint64_t)n * (n - 1) / 2; q++)
                d[q] = 0.1 + uniform01();
        }
        topoml_data *data = NULL;
        ck_assert_int_eq(topoml_data_from_condensed(ctx, &data, n, d), TOPOML_OK);
        topoml_rips_options o;
        topoml_rips_options_init(&o);
        o.flags = TOPOML_RIPS_COCYCLES;
        o.max_dim = 2;
        o.modulus = (uint32_t[]){2, 3, 5, 7}[trial % 4];
        o.threshold = trial % 3 == 2 ? 0.7 : INFINITY;
        bars += check_cocycles(ctx, data, d, n, &o);
        topoml_data_free(ctx, data);
        free(d);
    }
    ck_assert_uint_gt(bars, 20);
    topoml_context_free(ctx);
}
END_TEST

START_TEST(only_when_asked)
{
    topoml_context *ctx = plain_ctx();
    const uint32_t n = 12;
    double *d = circle(n, 3, 0.1);
    topoml_data *data = NULL;
    ck_assert_int_eq(topoml_data_from_condensed(ctx, &data, n, d), TOPOML_OK);
    topoml_rips_options o;
    topoml_rips_options_init(&o);
    topoml_barcode *bc = NULL;
    ck_assert_int_eq(topoml_barcode_compute(ctx, &bc, data, &o), TOPOML_OK);
    uint64_t rows = 99;
    ck_assert_ptr_null(topoml_barcode_cocycle(bc, 0, &rows));
    ck_assert_uint_eq(rows, 0);
    topoml_barcode_free(bc);
    /* H0 alone (max_dim 0) asked for cocycles: every interval has none */
    o.max_dim = 0;
    o.flags = TOPOML_RIPS_COCYCLES;
    ck_assert_int_eq(topoml_barcode_compute(ctx, &bc, data, &o), TOPOML_OK);
    ck_assert_ptr_nonnull(topoml_barcode_cocycle(bc, 0, &rows));
    ck_assert_uint_eq(rows, 0);
    topoml_barcode_free(bc);
    /* an unknown flag is refused */
    o.flags = 4u;
    ck_assert_int_eq(topoml_barcode_compute(ctx, &bc, data, &o), TOPOML_E_INVALID);
    topoml_data_free(ctx, data);
    free(d);
    topoml_context_free(ctx);
}
END_TEST

/* Plugins whose cocycles are wrong at run time (tests/gen_faults) are
 * caught on their first call: the caller gets the reference's (which pass
 * the checks above) and the plugin is rejected. The threads plugin, which
 * shares the reference's reduction, gives its cocycles through. */
static const struct {
    const char *config, *dir, *name;
    bool wrong;
} coc_runs[] = {
    {"enable: [gen-coc-not-cocycle]\nisolation: none\n", "gen-faults/coc-not-cocycle",
     "gen-coc-not-cocycle", true},
    {"enable: [gen-coc-unborn]\nisolation: none\n", "gen-faults/coc-unborn", "gen-coc-unborn",
     true},
    {"isolation: none\n", "plugins-out", "threads", false},
};

START_TEST(wrong_cocycles_never_reach_the_caller)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/%s", TOPOML_TEST_BUILD_DIR, coc_runs[_i].dir);
    topoml_context *ctx = ctx_with(coc_runs[_i].config, dir);
    ck_assert_int_eq(topoml_use_backend(ctx, coc_runs[_i].name), TOPOML_OK);
    /* random distances: a bar's birth edge is in triangles that are
     * filled before it dies, where a wrong row shows */
    const uint32_t n = 18;
    double *d = malloc((uint64_t)n * (n - 1) / 2 * sizeof *d);
    ck_assert_ptr_nonnull(d);
    rng_state = 2024;
    for (uint64_t q = 0; q < (uint64_t)n * (n - 1) / 2; q++)
        d[q] = 0.1 + uniform01();
    topoml_data *data = NULL;
    ck_assert_int_eq(topoml_data_from_condensed(ctx, &data, n, d), TOPOML_OK);
    topoml_rips_options o;
    topoml_rips_options_init(&o);
    o.flags = TOPOML_RIPS_COCYCLES;
    o.modulus = 3;
    ck_assert_uint_gt(check_cocycles(ctx, data, d, n, &o), 0);
    ck_assert_str_eq(topoml_last_backend(ctx), coc_runs[_i].wrong ? "scalar" : coc_runs[_i].name);
    for (uint32_t i = 0; i < topoml_backend_count(ctx); i++) {
        topoml_backend_info info = {.struct_size = sizeof info};
        ck_assert_int_eq(topoml_backend_get(ctx, i, &info), TOPOML_OK);
        if (info.name && strcmp(info.name, coc_runs[_i].name) == 0 && info.path)
            ck_assert_uint_eq(info.gate_state, coc_runs[_i].wrong ? TOPOML_GATE_REJECTED
                                                                  : TOPOML_GATE_ENABLED);
    }
    topoml_data_free(ctx, data);
    free(d);
    topoml_context_free(ctx);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cocycles");
    TCase *tc = tcase_create("cocycles");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, circle_h1);
    tcase_add_test(tc, random_inputs_give_cocycles);
    tcase_add_test(tc, only_when_asked);
    tcase_add_loop_test(tc, wrong_cocycles_never_reach_the_caller, 0,
                        (int)(sizeof coc_runs / sizeof coc_runs[0]));
    suite_add_tcase(s, tc);
    return topoml_check_run(s);
}
