/*
 * test_verify_exact.c — the checks of run-time verification that need no
 * history (core/src/verify_exact.c and verify.c): a plugin wrong only for
 * some inputs is caught on its FIRST such call in a fresh context, with
 * nothing recorded and no re-run budget earned, the caller gets the
 * reference's answer, a warning is logged and the plugin is rejected.
 *
 * The plugins (tests/gate_faults): mod7 (a late H2 death, only when the
 * number of points is a multiple of 7), ulps (deaths of dimension >= 1 three
 * ulps late), tiny (an extra H1 bar three ulps long), h0 (a finite H0 bar
 * dying at another length of the input), drop-h1 (the earliest H1 bar left
 * out when the number of points is a multiple of 7: every value left is a
 * length of the input), drop-ties (pairs at exactly the threshold left
 * out), and scalar-copy (right).
 */
#include <check.h>
#include <dirent.h>
#include <ftw.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_context.h"
#include "api/api.h" /* the context's counts of re-runs */
#include "gate/gate.h" /* tm_truncation_scale, tm_truncation_trim */
#include "gate/gate_internal.h" /* tm_record_read, tm_record_write */
#include "topoml/topoml.h"

static char warnings[4096];

static void keep_warnings(void *user, int level, const char *message)
{
    (void)user;
    if (level <= TOPOML_LOG_WARN && strlen(warnings) + strlen(message) + 2 < sizeof warnings) {
        strcat(warnings, message);
        strcat(warnings, "\n");
    }
}

static const char *dir_of(const char *kind, const char *name)
{
    static char dir[512];
    snprintf(dir, sizeof dir, "%s/%s/%s", TOPOML_TEST_BUILD_DIR, kind, name);
    return dir;
}

static topoml_context *open_ctx(const char *config, const char *plugin_dir)
{
    topoml_context *ctx = check_context_from_config(config, plugin_dir);
    warnings[0] = '\0';
    topoml_set_log(ctx, keep_warnings, NULL, TOPOML_LOG_WARN);
    return ctx;
}

static topoml_backend_info backend(topoml_context *ctx, const char *name)
{
    for (uint32_t i = 0; i < topoml_backend_count(ctx); i++) {
        topoml_backend_info info = {.struct_size = sizeof info};
        ck_assert_int_eq(topoml_backend_get(ctx, i, &info), TOPOML_OK);
        if (strcmp(info.name, name) == 0)
            return info;
    }
    ck_abort_msg("no backend %s", name);
    return (topoml_backend_info){0};
}

static double *random_xy(uint64_t n, uint64_t dim, unsigned seed)
{
    double *xy = malloc(n * dim * sizeof *xy);
    srand(seed);
    for (uint64_t k = 0; k < n * dim; k++)
        xy[k] = (double)rand() / RAND_MAX;
    return xy;
}

/* side x side integer grid in the plane. */
static double *grid_xy(uint64_t side)
{
    double *xy = malloc(side * side * 2 * sizeof *xy);
    for (uint64_t k = 0; k < side * side; k++) {
        xy[2 * k] = (double)(k % side);
        xy[2 * k + 1] = (double)(k / side);
    }
    return xy;
}

static int bar_order(const void *a, const void *b)
{
    const topoml_interval *x = a, *y = b;
    if (x->dim != y->dim)
        return x->dim < y->dim ? -1 : 1;
    if (x->birth != y->birth)
        return x->birth < y->birth ? -1 : 1;
    return x->death < y->death ? -1 : x->death > y->death;
}

/* The bars of `bc`, sorted (malloc'd). */
static topoml_interval *sorted_bars(const topoml_barcode *bc, uint64_t *n)
{
    const topoml_interval *iv = topoml_barcode_intervals(bc, n);
    topoml_interval *copy = malloc((*n ? *n : 1) * sizeof *copy);
    if (*n)
        memcpy(copy, iv, *n * sizeof *copy);
    qsort(copy, *n, sizeof *copy, bar_order);
    return copy;
}

/* The built-in reference's barcode of the same points, in a context with
 * no plugins. */
static topoml_context *ref_ctx; /* the reference barcode's, until free_reference */

static topoml_barcode *reference_barcode(uint64_t n, uint64_t dim, const double *xy,
                                         const topoml_rips_options *o)
{
    topoml_context *ref = ref_ctx = check_context_from_config("", "");
    topoml_data *d = NULL;
    ck_assert_int_eq(topoml_data_from_points(ref, &d, n, dim, xy), TOPOML_OK);
    topoml_barcode *bc = NULL;
    ck_assert_int_eq(topoml_barcode_compute(ref, &bc, d, o), TOPOML_OK);
    topoml_data_free(ref, d);
    /* the barcode keeps its context: freed with it by the caller */
    return bc;
}

static void free_reference(topoml_barcode *bc)
{
    topoml_barcode_free(bc);
    topoml_context_free(ref_ctx);
    ref_ctx = NULL;
}

/* One call of `plugin` on the points; returns whether it was caught (the
 * plugin rejected, with `why` in its reason, a warning logged) and checks
 * that the caller got exactly the reference's bars either way. */
static bool one_call(const char *config, const char *plugin, uint64_t n, uint64_t dim,
                     const double *xy, const topoml_rips_options *o, const char *why)
{
    char name[64];
    snprintf(name, sizeof name, "gf-%s", plugin);
    topoml_context *ctx = open_ctx(config, dir_of("gate-faults", plugin));
    ck_assert_int_eq(topoml_use_backend(ctx, name), TOPOML_OK);
    topoml_data *d = NULL;
    ck_assert_int_eq(topoml_data_from_points(ctx, &d, n, dim, xy), TOPOML_OK);
    topoml_barcode *got = NULL;
    ck_assert_msg(topoml_barcode_compute(ctx, &got, d, o) == TOPOML_OK, "%s: %s", plugin,
                  topoml_errmsg(ctx));
    topoml_barcode *want = reference_barcode(n, dim, xy, o);
    uint64_t ng, nw;
    topoml_interval *g = sorted_bars(got, &ng), *w = sorted_bars(want, &nw);
    ck_assert_msg(ng == nw, "%s on %llu points: %llu bars, the reference %llu", plugin,
                  (unsigned long long)n, (unsigned long long)ng, (unsigned long long)nw);
    for (uint64_t k = 0; k < ng; k++)
        ck_assert_msg(bar_order(&g[k], &w[k]) == 0,
                      "%s on %llu points: bar %llu is H%u [%.17g, %.17g), the reference's H%u "
                      "[%.17g, %.17g)",
                      plugin, (unsigned long long)n, (unsigned long long)k, g[k].dim, g[k].birth,
                      g[k].death, w[k].dim, w[k].birth, w[k].death);
    topoml_backend_info info = backend(ctx, name);
    const bool caught = info.gate_state == TOPOML_GATE_REJECTED;
    if (caught) {
        ck_assert_str_eq(topoml_last_backend(ctx), "scalar");
        ck_assert_msg(why && strstr(info.gate_reason, why), "%s: reason: %s", plugin,
                      info.gate_reason);
        ck_assert_msg(strstr(warnings, "gave a wrong rips answer") &&
                          strstr(warnings, "the reference's answer is used instead"),
                      "%s: warnings: %s", plugin, warnings);
    } else {
        ck_assert_str_eq(topoml_last_backend(ctx), name);
    }
    free(g);
    free(w);
    topoml_barcode_free(got);
    free_reference(want);
    topoml_data_free(ctx, d);
    topoml_context_free(ctx);
    return caught;
}

/* verify: checks makes no re-run at all: what catches these is the exact
 * pass alone, on the first call of a fresh context. Without it, H>=1 bars
 * and all but a few H0 deaths were never looked at. */
START_TEST(test_exact_checks_catch_wrong_values_on_a_first_call)
{
    topoml_rips_options o;
    topoml_rips_options_init(&o);
    o.max_dim = 2;
    o.collapse = TOPOML_COLLAPSE_OFF;
    const char *cfg = "enable: [gf-mod7, gf-ulps, gf-tiny, gf-h0]\nverify: checks\n";
    for (unsigned seed = 1; seed <= 3; seed++) {
        double *xy = random_xy(70, 3, seed);
        /* only in H2, only for a multiple of 7 points: a death 10% late */
        ck_assert(one_call(cfg, "mod7", 70, 3, xy, &o, "which is no distance of the input"));
        ck_assert(!one_call(cfg, "mod7", 69, 3, xy, &o, NULL)); /* right there */
        /* deaths a few ulps late; an extra bar a few ulps long */
        ck_assert(one_call(cfg, "ulps", 70, 3, xy, &o, "which is no distance of the input"));
        ck_assert(one_call(cfg, "tiny", 70, 3, xy, &o, "which is no distance of the input"));
        /* a death at another length of the input: only H0 exactly sees it */
        ck_assert(one_call(cfg, "h0", 70, 3, xy, &o, "H0 is not the input's"));
        free(xy);
    }
}
END_TEST

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* The case: a larger call of the same kind was checked (the
 * record says so), the budget is off (verify_share: 0, so neither the share
 * rule nor the random draw re-runs anything), and the plugin leaves out an
 * H1 bar only when the number of points is a multiple of 7: every value it
 * gives is a length of the input and H0 is right, so only a re-run can
 * tell. The truncated re-run of the first such call does. */
START_TEST(test_truncated_rerun_catches_a_missing_bar_on_a_first_call)
{
    char cache[] = "/tmp/topoml-exact-cache-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(cache));
    char cfg[512];
    snprintf(cfg, sizeof cfg, "enable: [gf-drop-h1]\ncache_dir: %s\nverify_share: 0\n", cache);
    topoml_rips_options o;
    topoml_rips_options_init(&o);
    o.max_dim = 1;
    o.threshold = 0.3;
    o.collapse = TOPOML_COLLAPSE_OFF;
    double *xy = random_xy(400, 3, 5);
    /* 400 points: right, and checked in full (past the empty record) */
    ck_assert(!one_call(cfg, "drop-h1", 400, 3, xy, &o, NULL));
    /* 301 = 7 * 43 points, within the record: a fresh context catches it */
    topoml_context *probe = open_ctx(cfg, dir_of("gate-faults", "drop-h1"));
    topoml_context_free(probe);
    ck_assert(one_call(cfg, "drop-h1", 301, 3, xy, &o, "cut at "));
    free(xy);
    nftw(cache, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}
END_TEST

/* Without the truncated re-run (and without a full one) the same call goes
 * through: the defence above is what catches it. `verify: checks` makes no
 * re-run; the plugin's wrong bars reach the caller there, which is what
 * `checks` means (and what it warns about). */
START_TEST(test_a_missing_bar_needs_a_rerun)
{
    topoml_rips_options o;
    topoml_rips_options_init(&o);
    o.max_dim = 1;
    o.threshold = 0.3;
    o.collapse = TOPOML_COLLAPSE_OFF;
    double *xy = random_xy(301, 3, 5);
    topoml_context *ctx =
        open_ctx("enable: [gf-drop-h1]\nverify: checks\n", dir_of("gate-faults", "drop-h1"));
    ck_assert_int_eq(topoml_use_backend(ctx, "gf-drop-h1"), TOPOML_OK);
    topoml_data *d = NULL;
    ck_assert_int_eq(topoml_data_from_points(ctx, &d, 301, 3, xy), TOPOML_OK);
    topoml_barcode *got = NULL;
    ck_assert_int_eq(topoml_barcode_compute(ctx, &got, d, &o), TOPOML_OK);
    ck_assert_str_eq(topoml_last_backend(ctx), "gf-drop-h1");
    ck_assert_uint_eq(ctx->verify_truncated, 0);
    topoml_barcode *want = reference_barcode(301, 3, xy, &o);
    uint64_t ng, nw;
    topoml_barcode_intervals(got, &ng);
    topoml_barcode_intervals(want, &nw);
    ck_assert_uint_eq(ng + 1, nw);
    topoml_barcode_free(got);
    free_reference(want);
    topoml_data_free(ctx, d);
    topoml_context_free(ctx);
    free(xy);
}
END_TEST

/* Full re-runs drawn at random from the first call: with verify_share 1,
 * about half of the calls past the small size are re-run in full, in a
 * context with no record and no budget earned. */
START_TEST(test_full_reruns_are_drawn_from_the_first_call)
{
    char cache[] = "/tmp/topoml-exact-cache-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(cache));
    char cfg[512];
    snprintf(cfg, sizeof cfg, "enable: [scalar-copy]\ncache_dir: %s\nverify_share: 1\n", cache);
    topoml_context *ctx = open_ctx(cfg, dir_of("conformance-plugins", "scalar-copy"));
    ck_assert_int_eq(topoml_use_backend(ctx, "scalar-copy"), TOPOML_OK);
    double *xy = random_xy(300, 2, 9);
    topoml_data *d = NULL;
    ck_assert_int_eq(topoml_data_from_points(ctx, &d, 300, 2, xy), TOPOML_OK);
    topoml_rips_options o;
    topoml_rips_options_init(&o);
    o.max_dim = 0;
    for (int k = 0; k < 60; k++) {
        topoml_barcode *bc = NULL;
        ck_assert_int_eq(topoml_barcode_compute(ctx, &bc, d, &o), TOPOML_OK);
        topoml_barcode_free(bc);
    }
    ck_assert_uint_gt(ctx->verify_sampled, 0);
    ck_assert_uint_lt(ctx->verify_sampled, 60);
    ck_assert_str_eq(topoml_last_backend(ctx), "scalar-copy");
    topoml_data_free(ctx, d);
    topoml_context_free(ctx);
    free(xy);
    nftw(cache, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}
END_TEST

/* The tie rule at run time: a plugin that leaves out the pairs at exactly
 * the threshold gives 0 edges of a 5 x 5 grid at threshold 1 instead of 40,
 * H0 of 25 components instead of 1, and Rips the same; each is caught on
 * the first call under `verify: checks` (no re-run), and the caller gets
 * the reference's answer. */
START_TEST(test_pairs_at_the_threshold_are_edges)
{
    double *xy = grid_xy(5);
    const char *cfg = "enable: [gf-drop-ties]\nverify: checks\n";
    topoml_context *ctx = open_ctx(cfg, dir_of("gate-faults", "drop-ties"));
    ck_assert_int_eq(topoml_use_backend(ctx, "gf-drop-ties"), TOPOML_OK);
    topoml_data *d = NULL;
    ck_assert_int_eq(topoml_data_from_points(ctx, &d, 25, 2, xy), TOPOML_OK);
    topoml_edge *e = NULL;
    uint64_t n = 0;
    ck_assert_int_eq(topoml_edges(ctx, d, TOPOML_METRIC_EUCLIDEAN, 1.0, &e, &n), TOPOML_OK);
    ck_assert_uint_eq(n, 40);
    ck_assert_str_eq(topoml_last_backend(ctx), "scalar");
    topoml_backend_info info = backend(ctx, "gf-drop-ties");
    ck_assert_uint_eq(info.gate_state, TOPOML_GATE_REJECTED);
    ck_assert_msg(strstr(info.gate_reason, "exactly the threshold"), "%s", info.gate_reason);
    ck_assert_ptr_nonnull(strstr(warnings, "gave a wrong edges answer"));
    topoml_free(ctx, e);
    topoml_data_free(ctx, d);
    topoml_context_free(ctx);
    /* H0 (dimension 0) and Rips (dimension 1), each in a fresh context */
    for (uint32_t dim = 0; dim <= 1; dim++) {
        topoml_rips_options o;
        topoml_rips_options_init(&o);
        o.max_dim = dim;
        o.threshold = 1.0;
        o.collapse = TOPOML_COLLAPSE_OFF;
        ck_assert(one_call(cfg, "drop-ties", 25, 2, xy, &o, "H0 is not the input's"));
    }
    free(xy);
}
END_TEST


/* The record's time ratio of every kind set to `ratio` (the host's own key
 * seals it again: what a plugin's process cannot do). Returns the ratio
 * the record had for the last kind. */
static double set_recorded_ratio(const char *cache, double ratio)
{
    DIR *dir = opendir(cache);
    ck_assert_ptr_nonnull(dir);
    char file[1024] = "";
    for (struct dirent *de; (de = readdir(dir)) != NULL;) {
        const size_t len = strlen(de->d_name);
        if (len > 9 && strcmp(de->d_name + len - 9, ".verified") == 0)
            snprintf(file, sizeof file, "%s/%s", cache, de->d_name);
    }
    closedir(dir);
    ck_assert_msg(file[0], "no verification record in %s", cache);
    static char text[65536], out[65536];
    char why[600];
    size_t len = 0, used = 0;
    ck_assert_int_eq(tm_record_read(file, "verified", text, sizeof text - 1, &len, why, sizeof why),
                     TOPOML_OK);
    text[len] = '\0';
    double had = NAN;
    int line_no = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"), line_no++) {
        char *last = strrchr(line, ' ');
        if (line_no >= 3 && last) { /* a kind's line: its last field is the ratio */
            had = strtod(last + 1, NULL);
            *last = '\0';
            used += (size_t)snprintf(out + used, sizeof out - used, "%s %.6g\n", line, ratio);
        } else {
            used += (size_t)snprintf(out + used, sizeof out - used, "%s\n", line);
        }
    }
    ck_assert_int_eq(tm_record_write(file, "verified", out, used, why, sizeof why), TOPOML_OK);
    return had;
}

/* A fresh process draws its full re-runs at the rate the kind's recorded
 * time ratio affords: each draw's expected cost is verify_share / 2 of the
 * plugin's time. Before, a process's first call was drawn with probability
 * verify_share / 2 whatever the reference cost: against a plugin 10 times
 * faster than the reference, an expected 50% of its time per process. Each
 * context below makes one call, the first of its process, of a kind
 * recorded before: with the reference recorded 1e6 times slower than the
 * plugin none of 60 is drawn (p = 5e-8; at p = 0.05, 3 expected), with it
 * recorded 1e6 times faster every one is. */
START_TEST(test_draws_use_the_recorded_ratio)
{
    char cache[] = "/tmp/topoml-exact-ratio-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(cache));
    char cfg[512];
    snprintf(cfg, sizeof cfg, "enable: [scalar-copy]\ncache_dir: %s\n", cache);
    double *xy = random_xy(300, 2, 21);
    topoml_rips_options o;
    topoml_rips_options_init(&o);
    o.max_dim = 0;
    uint64_t drawn[2] = {0, 0};
    for (int k = 0; k < 81; k++) {
        /* k = 0: the kind's first call, re-run in full (the envelope);
         * then 60 calls at a ratio of 1e6, 20 at 1e-6 */
        const double ratio = k <= 60 ? 1e6 : 1e-6;
        if (k > 0) {
            const double had = set_recorded_ratio(cache, ratio);
            ck_assert_msg(had > 0 && isfinite(had), "recorded ratio %g", had);
        }
        topoml_context *ctx = open_ctx(cfg, dir_of("conformance-plugins", "scalar-copy"));
        ck_assert_int_eq(topoml_use_backend(ctx, "scalar-copy"), TOPOML_OK);
        topoml_data *d = NULL;
        ck_assert_int_eq(topoml_data_from_points(ctx, &d, 300, 2, xy), TOPOML_OK);
        topoml_barcode *bc = NULL;
        ck_assert_int_eq(topoml_barcode_compute(ctx, &bc, d, &o), TOPOML_OK);
        ck_assert_str_eq(topoml_last_backend(ctx), "scalar-copy");
        if (k == 0)
            ck_assert_uint_eq(ctx->verify_reruns, 1);
        else
            drawn[k > 60] += ctx->verify_sampled;
        topoml_barcode_free(bc);
        topoml_data_free(ctx, d);
        topoml_context_free(ctx);
    }
    ck_assert_uint_eq(drawn[0], 0);
    ck_assert_uint_eq(drawn[1], 20);
    free(xy);
    nftw(cache, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}
END_TEST

/* The truncated re-run's cost stays within its budget on a large input,
 * also where one length stands for a large share of the pairs: 3000 points
 * of which half sit on one spot (a quarter of the pairs at length 0), and a
 * 60 x 50 integer grid (many pairs at each of few lengths). Counting the
 * sampled lengths as if each stood for its own pairs put the 1500-point
 * clique of length 0 (1.1e6 edges; C(1500, 4) 4-cliques in dimension 2)
 * into a cut budgeted for 2e5 units (2.7e8 units in dimension 1). The pairs
 * at or below the chosen scale are counted exactly here, and
 * tm_truncation_units of that count must be within twice the budget (the
 * scale takes an upper bound of the sample's count, which a draw exceeds
 * about once in 10^4; tm_truncation_trim, below, makes the bound exact on
 * the pass's count), or the count within the floor of
 * pairs a cut may always take (n / 2, or the pairs one sampled length
 * stands for). A tie-free cloud of the same size still gets a cut. */
static uint64_t pairs_within(const double *xy, uint64_t n, double s)
{
    uint64_t c = 0;
    for (uint64_t i = 1; i < n; i++)
        for (uint64_t j = 0; j < i; j++) {
            const double dx = xy[2 * i] - xy[2 * j], dy = xy[2 * i + 1] - xy[2 * j + 1];
            c += sqrt(dx * dx + dy * dy) <= s;
        }
    return c;
}

START_TEST(test_truncation_scale_stays_within_its_budget)
{
    const uint64_t n = 3000;
    const double total = (double)n * (n - 1) / 2, floor_pairs = fmax(n / 2.0, total / 2048);
    double *clumped = random_xy(n, 2, 17);
    for (uint64_t k = 0; k < n / 2; k++)
        clumped[2 * k] = clumped[2 * k + 1] = 0.25;
    double *grid = malloc(n * 2 * sizeof *grid);
    for (uint64_t k = 0; k < n; k++) {
        grid[2 * k] = (double)(k % 60);
        grid[2 * k + 1] = (double)(k / 60);
    }
    double *plain = random_xy(n, 2, 18);
    const double *inputs[] = {clumped, grid, plain};
    topoml_context *ctx = check_context_from_config("", "");
    for (int which = 0; which < 3; which++) {
        topoml_input_v1 in;
        memset(&in, 0, sizeof in);
        in.struct_size = sizeof in;
        in.kind = TOPOML_INPUT_POINTS;
        in.n = n;
        in.dim = 2;
        in.dtype = TOPOML_F64;
        in.metric = TOPOML_METRIC_EUCLIDEAN;
        in.data = inputs[which];
        for (uint32_t max_dim = 1; max_dim <= 2; max_dim++) {
            for (int draw = 0; draw < 3; draw++) {
                const double budget = 2e5;
                bool all = true;
                const double s = tm_truncation_scale(ctx, &in, INFINITY, max_dim, budget, &all);
                ck_assert(!all);
                if (which == 2)
                    ck_assert_msg(!isnan(s), "no cut of a cloud without ties");
                if (isnan(s))
                    continue;
                const uint64_t m = pairs_within(inputs[which], n, s);
                const double units = tm_truncation_units(n, (double)m, max_dim);
                ck_assert_msg(units <= 2 * budget || (double)m <= floor_pairs,
                              "input %d, dimension %u: the cut at %.17g has %llu pairs, %.3g "
                              "units, over the budget of %.3g",
                              which, max_dim, s, (unsigned long long)m, units, budget);
            }
        }
    }
    topoml_context_free(ctx);
    free(clumped);
    free(grid);
    free(plain);
}
END_TEST

/* After the pass, the cut's exact count decides: a cut whose pairs cost
 * more than the budget keeps its shortest pairs up to a length where the
 * length changes (every pair at or below the new scale, none above), within
 * the budget; one that fits is left as it is. */
START_TEST(test_truncation_trim_cuts_back_to_the_budget)
{
    const uint64_t n = 4000, m = 200000;
    topoml_input_v1 in;
    memset(&in, 0, sizeof in);
    in.struct_size = sizeof in;
    in.kind = TOPOML_INPUT_POINTS;
    in.n = n;
    in.dim = 2;
    in.dtype = TOPOML_F64;
    tm_exact_cut cut;
    memset(&cut, 0, sizeof cut);
    cut.edges = malloc(m * sizeof *cut.edges);
    cut.n_edges = m;
    cut.scale = 50;
    for (uint64_t k = 0; k < m; k++) /* lengths 0..50 in classes of about 4000, unsorted */
        cut.edges[k] = (topoml_edge){.i = (uint32_t)(k % n), .j = (uint32_t)(k % n + 1),
                                     .d = (double)((k * 7919) % 51)};
    const double budget = 1e5;
    ck_assert(tm_truncation_trim(&in, 2, budget, &cut));
    ck_assert(!isnan(cut.scale));
    ck_assert_uint_gt(cut.n_edges, 0);
    ck_assert(tm_truncation_units(n, (double)cut.n_edges, 2) <= budget);
    for (uint64_t k = 0; k < m; k++)
        ck_assert((k < cut.n_edges) == (cut.edges[k].d <= cut.scale));
    /* within the budget already: untouched */
    const uint64_t kept = cut.n_edges;
    const double scale = cut.scale;
    ck_assert(!tm_truncation_trim(&in, 2, budget, &cut));
    ck_assert_uint_eq(cut.n_edges, kept);
    ck_assert(cut.scale == scale);
    free(cut.edges);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("verify_exact");
    TCase *t = tcase_create("verify_exact");
    tcase_set_timeout(t, 300);
    tcase_add_test(t, test_exact_checks_catch_wrong_values_on_a_first_call);
    tcase_add_test(t, test_truncated_rerun_catches_a_missing_bar_on_a_first_call);
    tcase_add_test(t, test_a_missing_bar_needs_a_rerun);
    tcase_add_test(t, test_full_reruns_are_drawn_from_the_first_call);
    tcase_add_test(t, test_pairs_at_the_threshold_are_edges);
    tcase_add_test(t, test_draws_use_the_recorded_ratio);
    tcase_add_test(t, test_truncation_scale_stays_within_its_budget);
    tcase_add_test(t, test_truncation_trim_cuts_back_to_the_budget);
    suite_add_tcase(s, t);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
