/*
 * test_verify.c — run-time verification (core/src/gate/verify.c): a plugin's
 * wrong answer never reaches the caller. It is replaced by the reference's,
 * the plugin is rejected for the context and its certificate revoked; the
 * checks hold in every `verify` mode they are meant for, and the
 * configuration keys are strict.
 *
 * The plugins: fault-good (every distance 1, well-formed), wrong-edge-order
 * (its last two edges swapped), and the gate fault plugins gf-nan64 (a NaN
 * distance above 64 points), gf-big200 (one distance wrong above 200
 * points), gf-env (right until TOPOML_TEST_FAULT_TRIGGER is set) and
 * gf-no-limit (right, but blind to the memory limit), gf-partial (wrong in
 * the dimensions it returns when the memory limit stops it) and
 * scalar-copy (right: re-runs, the record of checked sizes, a cancel during
 * a re-run).
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

#include "topoml/topoml.h"

#include "api/api.h" /* the context's re-run count, tm_cpus_available */

static char *write_temp(const char *text)
{
    static char paths[8][64];
    static int next;
    char *p = paths[next++ % 8];
    strcpy(p, "/tmp/topoml-verify-XXXXXX");
    int fd = mkstemp(p);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return p;
}

static topoml_context *open_ctx(const char *config_text, const char *plugin_dir, int *rc_out)
{
    topoml_context_options o = {0};
    o.struct_size = sizeof o;
    o.flags = TOPOML_CTX_NO_ENV;
    o.plugin_path = plugin_dir;
    char *cfg = write_temp(config_text);
    o.config_path = cfg;
    topoml_context *ctx = NULL;
    int rc = topoml_context_new(&ctx, &o);
    unlink(cfg);
    if (rc_out)
        *rc_out = rc;
    else
        ck_assert_msg(rc == TOPOML_OK, "context: %s", topoml_errmsg(ctx));
    return ctx;
}

static const char *dir_of(const char *kind, const char *name)
{
    static char dir[512];
    snprintf(dir, sizeof dir, "%s/%s/%s", TOPOML_TEST_BUILD_DIR, kind, name);
    return dir;
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

static topoml_data *random_points(topoml_context *ctx, uint64_t n, uint64_t dim, unsigned seed)
{
    double *xy = malloc(n * dim * sizeof *xy);
    srand(seed);
    for (uint64_t k = 0; k < n * dim; k++)
        xy[k] = (double)rand() / RAND_MAX;
    topoml_data *d = NULL;
    ck_assert_int_eq(topoml_data_from_points(ctx, &d, n, dim, xy), TOPOML_OK);
    free(xy);
    return d;
}

/* The distances of `d` by the built-in reference, in a context of its own. */
static double *reference_distances(uint64_t n, uint64_t dim, unsigned seed)
{
    topoml_context *ref = open_ctx("", "", NULL);
    topoml_data *d = random_points(ref, n, dim, seed);
    ck_assert_int_eq(topoml_use_backend(ref, "scalar"), TOPOML_OK);
    void *out = NULL;
    uint64_t count = 0;
    ck_assert_int_eq(topoml_distances(ref, d, TOPOML_METRIC_EUCLIDEAN, TOPOML_F64, &out, &count),
                     TOPOML_OK);
    double *copy = malloc(count * sizeof *copy);
    memcpy(copy, out, count * sizeof *copy);
    topoml_free(ref, out);
    topoml_data_free(ref, d);
    topoml_context_free(ref);
    return copy;
}

/* Run fault-good / gf-* named, check that the caller got the reference's
 * distances and that the plugin ends rejected with `why` in its reason. */
static void expect_replaced(const char *config, const char *kind, const char *plugin,
                            const char *name, uint64_t n, const char *why)
{
    topoml_context *ctx = open_ctx(config, dir_of(kind, plugin), NULL);
    ck_assert_int_eq(topoml_use_backend(ctx, name), TOPOML_OK);
    topoml_data *d = random_points(ctx, n, 3, 7);
    void *out = NULL;
    uint64_t count = 0;
    ck_assert_int_eq(topoml_distances(ctx, d, TOPOML_METRIC_EUCLIDEAN, TOPOML_F64, &out, &count),
                     TOPOML_OK);
    double *want = reference_distances(n, 3, 7);
    ck_assert_uint_eq(count, n * (n - 1) / 2);
    for (uint64_t k = 0; k < count; k++)
        ck_assert_msg(((double *)out)[k] == want[k], "%s: distance %llu is %g, want %g", plugin,
                      (unsigned long long)k, ((double *)out)[k], want[k]);
    ck_assert_str_eq(topoml_last_backend(ctx), "scalar");
    topoml_backend_info info = backend(ctx, name);
    ck_assert_uint_eq(info.gate_state, TOPOML_GATE_REJECTED);
    ck_assert_msg(strstr(info.gate_reason, why), "reason: %s", info.gate_reason);
    /* Named again, it is refused: it is rejected for the context. */
    topoml_free(ctx, out);
    out = NULL;
    ck_assert_int_ne(topoml_distances(ctx, d, TOPOML_METRIC_EUCLIDEAN, TOPOML_F64, &out, &count),
                     TOPOML_OK);
    free(want);
    topoml_data_free(ctx, d);
    topoml_context_free(ctx);
}

START_TEST(test_verify_replaces_wrong_distances_in_every_checking_mode)
{
    /* Every distance 1: a re-run finds it (auto, always), and so do the spot
     * checks alone (checks). */
    expect_replaced("enable: [fault-good]\n", "fault-plugins", "good", "fault-good", 20,
                    "wrong distances answer at run time");
    expect_replaced("enable: [fault-good]\nverify: always\n", "fault-plugins", "good",
                    "fault-good", 20, "wrong distances answer");
    expect_replaced("enable: [fault-good]\nverify: checks\n", "fault-plugins", "good",
                    "fault-good", 20, "recomputed");
}
END_TEST

START_TEST(test_verify_invariants_hold_even_when_off)
{
    /* A NaN distance is never passed on, whatever the policy. */
    expect_replaced("enable: [gf-nan64]\nverify: off\n", "gate-faults", "nan64", "gf-nan64", 80,
                    "is nan");
}
END_TEST

START_TEST(test_verify_always_rechecks_large_inputs)
{
    /* One distance wrong of 45150: the spot checks alone would likely miss
     * it; a re-run on the reference does not. */
    expect_replaced("enable: [gf-big200]\nverify: always\n", "gate-faults", "big200",
                    "gf-big200", 301, "the reference's");
}
END_TEST

START_TEST(test_verify_replaces_a_wrong_edge_list)
{
    topoml_context *ctx =
        open_ctx("enable: [wrong-edge-order]\n", dir_of("conformance-plugins", "wrong-edge-order"),
                 NULL);
    ck_assert_int_eq(topoml_use_backend(ctx, "wrong-edge-order"), TOPOML_OK);
    topoml_data *d = random_points(ctx, 12, 2, 3);
    topoml_edge *e = NULL;
    uint64_t n = 0;
    ck_assert_int_eq(topoml_edges(ctx, d, TOPOML_METRIC_EUCLIDEAN, INFINITY, &e, &n), TOPOML_OK);
    ck_assert_uint_eq(n, 66);
    for (uint64_t k = 1; k < n; k++)
        ck_assert(e[k - 1].d < e[k].d || (e[k - 1].d == e[k].d && e[k - 1].i <= e[k].i));
    ck_assert_str_eq(topoml_last_backend(ctx), "scalar");
    ck_assert_uint_eq(backend(ctx, "wrong-edge-order").gate_state, TOPOML_GATE_REJECTED);
    topoml_free(ctx, e);
    topoml_data_free(ctx, d);
    topoml_context_free(ctx);
}
END_TEST

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* Certified on first use (the behaviour is right under topoml-conformance),
 * then wrong: the caller gets the reference's barcode, and the certificate
 * is revoked, so that a new context rejects the plugin without certifying
 * it again. */
START_TEST(test_verify_revokes_the_certificate)
{
    char cache[] = "/tmp/topoml-verify-cache-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(cache));
    /* In the host's process: the variable is set after the plugin started,
     * which an isolated plugin's own process would not see. */
    char config[600];
    snprintf(config, sizeof config, "cache_dir: %s\nisolation: none\n", cache);
    unsetenv("TOPOML_TEST_FAULT_TRIGGER");
    topoml_context *ctx = open_ctx(config, dir_of("gate-faults", "env"), NULL);
    ck_assert_int_eq(topoml_use_backend(ctx, "gf-env"), TOPOML_OK);
    topoml_data *d = random_points(ctx, 30, 2, 11);
    topoml_barcode *right = NULL, *got = NULL;
    ck_assert_msg(topoml_barcode_compute(ctx, &right, d, NULL) == TOPOML_OK, "%s",
                  topoml_errmsg(ctx));
    ck_assert_str_eq(topoml_last_backend(ctx), "gf-env");
    setenv("TOPOML_TEST_FAULT_TRIGGER", "1", 1);
    ck_assert_int_eq(topoml_barcode_compute(ctx, &got, d, NULL), TOPOML_OK);
    unsetenv("TOPOML_TEST_FAULT_TRIGGER");
    ck_assert_str_eq(topoml_last_backend(ctx), "scalar");
    uint64_t nr, ng;
    const topoml_interval *r = topoml_barcode_intervals(right, &nr);
    const topoml_interval *g = topoml_barcode_intervals(got, &ng);
    ck_assert_uint_eq(nr, ng);
    ck_assert_int_eq(memcmp(r, g, nr * sizeof *r), 0);
    topoml_barcode_free(right);
    topoml_barcode_free(got);
    topoml_data_free(ctx, d);
    topoml_context_free(ctx);

    ctx = open_ctx(config, dir_of("gate-faults", "env"), NULL);
    topoml_backend_info info = backend(ctx, "gf-env");
    ck_assert_uint_eq(info.gate_state, TOPOML_GATE_REJECTED);
    ck_assert_msg(strstr(info.gate_reason, "revoked at run time"), "%s", info.gate_reason);
    topoml_context_free(ctx);
    nftw(cache, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}
END_TEST

/* A right plugin that ignores the memory limit answers calls the reference
 * refuses (TOPOML_E_LIMIT), so a re-run cannot check them. Under `verify:
 * always` such an answer is not passed on: the call fails with the
 * reference's status and says why, nothing is returned, and the plugin is
 * not blamed. Under `auto` (and `checks`) it stands on the invariants and
 * spot checks. For edge lists and barcodes, in the host and isolated. */
START_TEST(test_verify_always_withholds_an_answer_the_reference_cannot_check)
{
    static const char *modes[] = {"auto", "checks", "always"};
    static const char *isolation[] = {"none", "process"};
    for (size_t m = 0; m < 3; m++)
        for (size_t i = 0; i < 2; i++) {
            char config[160];
            snprintf(config, sizeof config,
                     "enable: [gf-no-limit]\nverify: %s\nisolation: %s\nmax_memory: 1KB\n",
                     modes[m], isolation[i]);
            topoml_context *ctx = open_ctx(config, dir_of("gate-faults", "no-limit"), NULL);
            ck_assert_int_eq(topoml_use_backend(ctx, "gf-no-limit"), TOPOML_OK);
            const bool always = strcmp(modes[m], "always") == 0;
            topoml_data *d = random_points(ctx, 12, 2, 5);

            /* 66 edges, 1056 bytes: over the reference's limit */
            topoml_edge *e = NULL;
            uint64_t n = 0;
            int rc = topoml_edges(ctx, d, TOPOML_METRIC_EUCLIDEAN, INFINITY, &e, &n);
            if (always) {
                ck_assert_msg(rc == TOPOML_E_LIMIT, "%s: edges: %d %s", config, rc,
                              topoml_errmsg(ctx));
                ck_assert_ptr_null(e);
                ck_assert_msg(strstr(topoml_errmsg(ctx), "could not check") &&
                                  strstr(topoml_errmsg(ctx), "gf-no-limit") &&
                                  strstr(topoml_errmsg(ctx), "memory limit"),
                              "%s", topoml_errmsg(ctx));
            } else {
                ck_assert_msg(rc == TOPOML_OK, "%s: edges: %s", config, topoml_errmsg(ctx));
                ck_assert_uint_eq(n, 66);
                ck_assert_str_eq(topoml_last_backend(ctx), "gf-no-limit");
            }
            topoml_free(ctx, e);

            topoml_rips_options ro;
            topoml_rips_options_init(&ro);
            ro.max_dim = 1;
            ro.collapse = TOPOML_COLLAPSE_OFF;
            topoml_barcode *bc = NULL;
            rc = topoml_barcode_compute(ctx, &bc, d, &ro);
            if (always) {
                ck_assert_msg(rc == TOPOML_E_LIMIT, "%s: rips: %d %s", config, rc,
                              topoml_errmsg(ctx));
                ck_assert_ptr_null(bc);
                ck_assert_ptr_nonnull(strstr(topoml_errmsg(ctx), "could not check"));
            } else {
                ck_assert_msg(rc == TOPOML_OK, "%s: rips: %s", config, topoml_errmsg(ctx));
                uint64_t bars = 0;
                ck_assert_ptr_nonnull(topoml_barcode_intervals(bc, &bars));
                ck_assert_uint_ge(bars, 12); /* H0: 11 finite bars and one essential */
                ck_assert_str_eq(topoml_last_backend(ctx), "gf-no-limit");
            }
            topoml_barcode_free(bc);
            /* Not blamed: still enabled, and nothing revoked. */
            topoml_backend_info info = backend(ctx, "gf-no-limit");
            ck_assert_uint_eq(info.gate_state, TOPOML_GATE_ENABLED);
            topoml_data_free(ctx, d);
            topoml_context_free(ctx);
        }
}
END_TEST

/* Small calls are re-run on the reference every time, but "small" counts
 * the top simplices, not only the points: a fast plugin's Rips call of
 * dimension 3 on 120 points (C(120, 5) = 1.9e8 bound) would cost the
 * reference far more than the plugin took, so a second such call goes by
 * the share budget (which it does not fit); dimension 1 on the same points
 * is re-run every time. The first call of each kind larger than any the
 * plugin was checked on (in points, or in bars) is re-run whatever it costs
 * (the envelope), and the record of it outlives the context. */
static int count_reruns_on(const char *config, uint32_t max_dim, double threshold, int calls,
                           uint32_t threads, uint32_t flags)
{
    topoml_context *ctx = open_ctx(config, dir_of("conformance-plugins", "scalar-copy"), NULL);
    ck_assert_int_eq(topoml_use_backend(ctx, "scalar-copy"), TOPOML_OK);
    topoml_data *d = random_points(ctx, 120, 3, 11);
    topoml_rips_options ro;
    topoml_rips_options_init(&ro);
    ro.max_dim = max_dim;
    ro.threshold = threshold;
    ro.collapse = TOPOML_COLLAPSE_OFF;
    ro.n_threads = threads;
    ro.flags = flags;
    for (int k = 0; k < calls; k++) {
        topoml_barcode *bc = NULL;
        ck_assert_int_eq(topoml_barcode_compute(ctx, &bc, d, &ro), TOPOML_OK);
        ck_assert_msg(strcmp(topoml_last_backend(ctx), "scalar-copy") == 0, "%s: %s",
                      topoml_last_backend(ctx), backend(ctx, "scalar-copy").gate_reason);
        topoml_barcode_free(bc);
    }
    /* the rules of the record and the budget; the full re-runs drawn at
     * random (about verify_share / 2 of the calls) are not theirs */
    int reruns = (int)(ctx->verify_reruns - ctx->verify_sampled);
    topoml_data_free(ctx, d);
    topoml_context_free(ctx);
    return reruns;
}

static int count_reruns(const char *config, uint32_t max_dim, double threshold, int calls)
{
    return count_reruns_on(config, max_dim, threshold, calls, 1, 0);
}

START_TEST(test_verify_reruns_small_calls_only_when_the_reference_is_cheap)
{
    char cache[] = "/tmp/topoml-verify-cache-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(cache));
    char config[600];
    snprintf(config, sizeof config, "enable: [scalar-copy]\ncache_dir: %s\n", cache);
    /* dimension 1: small, re-run every time */
    ck_assert_int_eq(count_reruns(config, 1, INFINITY, 2), 2);
    /* dimension 3: the first call is past the envelope, the second is not
     * and does not fit the budget */
    ck_assert_int_eq(count_reruns(config, 3, 0.25, 2), 1);
    /* a new context finds the record: no re-run */
    ck_assert_int_eq(count_reruns(config, 3, 0.25, 1), 0);
    /* the same points under a larger threshold: a larger answer (more
     * bars), past the record; a smaller one is not */
    ck_assert_int_eq(count_reruns(config, 3, 0.3, 1), 1);
    ck_assert_int_eq(count_reruns(config, 3, 0.2, 1), 0);
    /* the thread count the call allows is part of its kind: the same call
     * on two threads (another path of a plugin's code, or a race) is past
     * the record of one thread, once */
    if (tm_cpus_available() >= 2) {
        ck_assert_int_eq(count_reruns_on(config, 3, 0.25, 1, 2, 0), 1);
        ck_assert_int_eq(count_reruns_on(config, 3, 0.25, 1, 2, 0), 0);
        ck_assert_int_eq(count_reruns(config, 3, 0.25, 1), 0);
    }
    /* and so is asking for generators (another reduction may run) */
    ck_assert_int_eq(count_reruns_on(config, 3, 0.25, 1, 1, TOPOML_RIPS_GENERATORS), 1);
    ck_assert_int_eq(count_reruns_on(config, 3, 0.25, 1, 1, TOPOML_RIPS_GENERATORS), 0);
    /* and so is the accelerator the call names (`device:`) */
    char on_device1[700];
    snprintf(on_device1, sizeof on_device1, "%sdevice: 1\n", config);
    ck_assert_int_eq(count_reruns(on_device1, 3, 0.25, 1), 1);
    ck_assert_int_eq(count_reruns(on_device1, 3, 0.25, 1), 0);
    ck_assert_int_eq(count_reruns(config, 3, 0.25, 1), 0);
    /* a record bound to another file or certificate, or one that does not
     * parse, counts for nothing */
    char path[4200];
    DIR *dir = opendir(cache);
    ck_assert_ptr_nonnull(dir);
    struct dirent *e;
    path[0] = '\0';
    while ((e = readdir(dir)))
        if (strstr(e->d_name, ".verified"))
            snprintf(path, sizeof path, "%s/%s", cache, e->d_name);
    closedir(dir);
    ck_assert_msg(path[0], "no .verified record in %s", cache);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    char text[4096];
    size_t len = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[len] = '\0';
    ck_assert_ptr_nonnull(strstr(text, "topoml-verified-3\nsha256="));
    char *sha = strstr(text, "sha256=") + 7;
    sha[0] = sha[0] == '0' ? '1' : '0';
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    ck_assert_int_eq(count_reruns(config, 3, 0.25, 1), 1);
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("topoml-verified-3\nnot a record\n", f);
    fclose(f);
    ck_assert_int_eq(count_reruns(config, 3, 0.25, 1), 1);
    /* under `verify: checks` nothing is re-run, the envelope included */
    snprintf(config, sizeof config, "enable: [scalar-copy]\ncache_dir: %s\nverify: checks\n",
             cache);
    ck_assert_int_eq(count_reruns(config, 2, 0.5, 1), 0);
    nftw(cache, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}
END_TEST

/* The finished dimensions a call stopped by the memory limit hands back are
 * an answer too: a plugin right when it finishes but wrong in those (the
 * suite never sees them) is caught, and the caller gets the reference's
 * finished dimensions, still marked partial. */
START_TEST(test_verify_checks_the_finished_dimensions_of_a_stopped_call)
{
    topoml_context *ctx = open_ctx("enable: [gf-partial]\nisolation: none\n",
                                   dir_of("gate-faults", "partial"), NULL);
    topoml_data *d = random_points(ctx, 60, 4, 99);
    topoml_rips_options o;
    topoml_rips_options_init(&o);
    o.max_dim = 3;
    o.collapse = TOPOML_COLLAPSE_OFF;
    int partial = 0;
    for (uint64_t limit = 64u << 20; limit > 4096 && !partial; limit = limit * 7 / 8) {
        /* the reference's answer under this limit */
        ck_assert_int_eq(topoml_use_backend(ctx, "scalar"), TOPOML_OK);
        topoml_set_max_memory(ctx, limit);
        topoml_barcode *want = NULL, *got = NULL;
        int rc = topoml_barcode_compute(ctx, &want, d, &o);
        if (rc != TOPOML_E_LIMIT || !want) {
            topoml_barcode_free(want);
            continue;
        }
        ck_assert_int_eq(topoml_use_backend(ctx, "gf-partial"), TOPOML_OK);
        ck_assert_int_eq(topoml_barcode_compute(ctx, &got, d, &o), TOPOML_E_LIMIT);
        ck_assert_ptr_nonnull(got);
        ck_assert_int_eq(topoml_barcode_complete(got), 0);
        ck_assert_uint_eq(topoml_barcode_max_dim(got), topoml_barcode_max_dim(want));
        uint64_t nw, ng;
        const topoml_interval *w = topoml_barcode_intervals(want, &nw);
        const topoml_interval *g = topoml_barcode_intervals(got, &ng);
        ck_assert_uint_eq(ng, nw);
        ck_assert(memcmp(g, w, nw * sizeof *w) == 0);
        ck_assert_str_eq(topoml_last_backend(ctx), "scalar");
        ck_assert_uint_eq(backend(ctx, "gf-partial").gate_state, TOPOML_GATE_REJECTED);
        topoml_barcode_free(want);
        topoml_barcode_free(got);
        partial++;
    }
    ck_assert_int_eq(partial, 1);
    topoml_data_free(ctx, d);
    topoml_context_free(ctx);
}
END_TEST

/* Stops the call at the first report of the stage the run began with once
 * another stage has been seen: that is the reference's re-run starting. */
typedef struct restart {
    char first[64];
    bool moved;
} restart;

static int stop_at_restart(void *user, const char *stage, uint64_t done, uint64_t total)
{
    (void)done;
    (void)total;
    restart *r = user;
    /* The re-run says so ("verifying on the reference", then its own stages
     * prefixed with it): cancel in the first of those. */
    if (strncmp(stage, "verifying on the reference", 26) == 0) {
        r->moved = true;
        return stage[26] == ':';
    }
    if (!r->first[0])
        snprintf(r->first, sizeof r->first, "%s", stage);
    else if (strcmp(stage, r->first) != 0)
        r->moved = true;
    else if (r->moved)
        return 1;
    return 0;
}

/* A cancel during the reference's re-run ends the call cancelled, with none
 * of the plugin's unchecked answer, under `verify: auto` too. */
START_TEST(test_verify_a_cancel_during_the_rerun_cancels_the_call)
{
    topoml_context *ctx = open_ctx("enable: [scalar-copy]\nisolation: none\n",
                                   dir_of("conformance-plugins", "scalar-copy"), NULL);
    ck_assert_int_eq(topoml_use_backend(ctx, "scalar-copy"), TOPOML_OK);
    topoml_data *d = random_points(ctx, 60, 3, 7);
    topoml_rips_options o;
    topoml_rips_options_init(&o);
    o.max_dim = 2;
    o.collapse = TOPOML_COLLAPSE_OFF;
    restart r = {"", false};
    topoml_set_progress(ctx, stop_at_restart, &r);
    topoml_barcode *bc = NULL;
    int rc = topoml_barcode_compute(ctx, &bc, d, &o);
    ck_assert_msg(r.moved, "the run reported one stage only (%s)", r.first);
    ck_assert_int_eq(rc, TOPOML_E_CANCELLED);
    uint64_t n = 0;
    if (bc)
        topoml_barcode_intervals(bc, &n);
    ck_assert_uint_eq(n, 0);
    topoml_barcode_free(bc);
    topoml_set_progress(ctx, NULL, NULL);
    topoml_data_free(ctx, d);
    topoml_context_free(ctx);
}
END_TEST

START_TEST(test_verify_configuration_is_strict)
{
    static const char *bad[] = {"verify: sometimes\n", "verify_share: 2\n", "verify_share: x\n",
                                "verify_share: -0.1\n"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        int rc;
        topoml_context *ctx = open_ctx(bad[k], "", &rc);
        ck_assert_int_eq(rc, TOPOML_E_CONFIG);
        ck_assert_ptr_nonnull(strstr(topoml_errmsg(ctx), "verify"));
        topoml_context_free(ctx);
    }
    static const char *good[] = {"verify: auto\n", "verify: always\n", "verify: checks\n",
                                 "verify: off\n", "verify_share: 0.25\n", "verify_share: 0\n"};
    for (size_t k = 0; k < sizeof good / sizeof good[0]; k++)
        topoml_context_free(open_ctx(good[k], "", NULL));
}
END_TEST

/* The spot checks alone (verify: checks, no re-run) find an H0 bar that
 * dies at no distance of the input, in a point cloud (its distances a row
 * at a time) and in a distance matrix (pair by pair); a right answer on
 * points in R^16 passes them. gf-big200 makes the longest finite bar of a
 * call on more than 200 points die 10% late. 301 points at four places a
 * unit apart on a line have three finite bars (the enclosing radius, 2,
 * keeps a death of 1.1 in range), so each call's four spot checks pick the
 * late one with probability 1 - (2/3)^4; the plugin must be caught within
 * 20 calls. */
static void four_places(uint64_t n, uint64_t dim, double *xy, double *condensed)
{
    const double unit = 1 / sqrt((double)dim);
    for (uint64_t i = 0; i < n; i++)
        for (uint64_t k = 0; k < dim; k++)
            xy[i * dim + k] = (double)(i % 4) * unit;
    for (uint64_t i = 1, e = 0; i < n; i++)
        for (uint64_t j = 0; j < i; j++, e++) {
            double s = 0;
            for (uint64_t k = 0; k < dim; k++) {
                const double t = xy[i * dim + k] - xy[j * dim + k];
                s += t * t;
            }
            condensed[e] = sqrt(s);
        }
}

START_TEST(test_verify_spot_checks_find_a_death_that_is_no_distance)
{
    const uint64_t n = 301, dim = 16;
    double *xy = malloc(n * dim * sizeof *xy);
    double *condensed = malloc(n * (n - 1) / 2 * sizeof *condensed);
    four_places(n, dim, xy, condensed);
    for (int matrix = 0; matrix < 2; matrix++) {
        topoml_context *ctx =
            open_ctx("enable: [gf-big200]\nverify: checks\n", dir_of("gate-faults", "big200"), NULL);
        ck_assert_int_eq(topoml_use_backend(ctx, "gf-big200"), TOPOML_OK);
        topoml_data *d = NULL;
        ck_assert_int_eq(matrix ? topoml_data_from_condensed(ctx, &d, n, condensed)
                                : topoml_data_from_points(ctx, &d, n, dim, xy),
                         TOPOML_OK);
        /* as given: the edge collapse would make it a sparse data set */
        topoml_rips_options o;
        topoml_rips_options_init(&o);
        o.collapse = TOPOML_COLLAPSE_OFF;
        int calls = 0;
        topoml_barcode *got = NULL;
        do {
            topoml_barcode_free(got);
            got = NULL;
            ck_assert_int_eq(topoml_barcode_compute(ctx, &got, d, &o), TOPOML_OK);
        } while (strcmp(topoml_last_backend(ctx), "scalar") != 0 && ++calls < 20);
        ck_assert_str_eq(topoml_last_backend(ctx), "scalar");
        topoml_backend_info info = backend(ctx, "gf-big200");
        ck_assert_uint_eq(info.gate_state, TOPOML_GATE_REJECTED);
        ck_assert_msg(strstr(info.gate_reason, "no distance of the input"), "reason: %s",
                      info.gate_reason);
        /* the reference's answer: three finite bars, each at a distance */
        uint64_t m, finite = 0;
        const topoml_interval *v = topoml_barcode_intervals(got, &m);
        for (uint64_t k = 0; k < m; k++)
            if (v[k].dim == 0 && isfinite(v[k].death)) {
                finite++;
                ck_assert(fabs(v[k].death - 1) < 1e-12);
            }
        ck_assert_uint_eq(finite, 3);
        topoml_barcode_free(got);
        topoml_data_free(ctx, d);
        topoml_context_free(ctx);
    }
    /* Right (200 points or fewer): every spot check passes, in R^16. */
    topoml_context *ctx =
        open_ctx("enable: [gf-big200]\nverify: checks\n", dir_of("gate-faults", "big200"), NULL);
    ck_assert_int_eq(topoml_use_backend(ctx, "gf-big200"), TOPOML_OK);
    for (unsigned seed = 1; seed <= 5; seed++) {
        topoml_data *d = random_points(ctx, 200, dim, seed);
        topoml_barcode *got = NULL;
        ck_assert_int_eq(topoml_barcode_compute(ctx, &got, d, NULL), TOPOML_OK);
        ck_assert_str_eq(topoml_last_backend(ctx), "gf-big200");
        topoml_barcode_free(got);
        topoml_data_free(ctx, d);
    }
    ck_assert_uint_eq(backend(ctx, "gf-big200").gate_state, TOPOML_GATE_ENABLED);
    topoml_context_free(ctx);
    free(xy);
    free(condensed);
}
END_TEST

/* What a plugin's process would write to be spared re-runs: the record of
 * checked sizes raised far past anything checked, in its own format, with
 * the authentication code it cannot make. Ignored (and said): the next
 * call past the real record is re-run. */
static char verify_logged[8192];
static void verify_keep_log(void *user, int level, const char *message)
{
    (void)user;
    (void)level;
    size_t n = strlen(verify_logged);
    snprintf(verify_logged + n, sizeof verify_logged - n, "%s\n", message);
}

START_TEST(test_verify_ignores_a_record_of_checked_sizes_changed_without_the_key)
{
    char cache[] = "/tmp/topoml-verify-cache-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(cache));
    char config[600];
    snprintf(config, sizeof config, "enable: [scalar-copy]\ncache_dir: %s\n", cache);
    ck_assert_int_eq(count_reruns(config, 3, 0.25, 1), 1);
    char path[4200];
    DIR *dir = opendir(cache);
    ck_assert_ptr_nonnull(dir);
    struct dirent *e;
    path[0] = '\0';
    while ((e = readdir(dir)))
        if (strstr(e->d_name, ".verified"))
            snprintf(path, sizeof path, "%s/%s", cache, e->d_name);
    closedir(dir);
    ck_assert_msg(path[0], "no .verified record in %s", cache);
    FILE *f = fopen(path, "r");
    char line[512], out[8192];
    size_t used = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned v[9];
        int device;
        unsigned long long n, edges, answer;
        if (sscanf(line, "%u %u %u %u %u %u %u %u %u %d %llu %llu %llu", &v[0], &v[1], &v[2],
                   &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &device, &n, &edges, &answer) == 13)
            used += (size_t)snprintf(out + used, sizeof out - used,
                                     "%u %u %u %u %u %u %u %u %u %d 1000000000 1000000000 "
                                     "1000000000\n",
                                     v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], device);
        else /* the header, and the old code kept as it was */
            used += (size_t)snprintf(out + used, sizeof out - used, "%s", line);
    }
    fclose(f);
    f = fopen(path, "w");
    fputs(out, f);
    fclose(f);
    /* A larger answer than the real record holds: re-run, the record not. */
    verify_logged[0] = '\0';
    topoml_context *ctx = open_ctx(config, dir_of("conformance-plugins", "scalar-copy"), NULL);
    topoml_set_log(ctx, verify_keep_log, NULL, TOPOML_LOG_WARN);
    ck_assert_int_eq(topoml_use_backend(ctx, "scalar-copy"), TOPOML_OK);
    topoml_data *d = random_points(ctx, 120, 3, 11);
    topoml_rips_options ro;
    topoml_rips_options_init(&ro);
    ro.max_dim = 3;
    ro.threshold = 0.3;
    ro.collapse = TOPOML_COLLAPSE_OFF;
    ro.n_threads = 1;
    topoml_barcode *bc = NULL;
    ck_assert_int_eq(topoml_barcode_compute(ctx, &bc, d, &ro), TOPOML_OK);
    ck_assert_uint_eq(ctx->verify_reruns, 1);
    ck_assert_msg(strstr(verify_logged, "verification record of backend 'scalar-copy' ignored") &&
                      strstr(verify_logged, "authentication code does not match"),
                  "%s", verify_logged);
    topoml_barcode_free(bc);
    topoml_data_free(ctx, d);
    topoml_context_free(ctx);
    nftw(cache, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("verify");
    TCase *t = tcase_create("verify");
    tcase_set_timeout(t, 300);
    tcase_add_test(t, test_verify_replaces_wrong_distances_in_every_checking_mode);
    tcase_add_test(t, test_verify_invariants_hold_even_when_off);
    tcase_add_test(t, test_verify_always_rechecks_large_inputs);
    tcase_add_test(t, test_verify_replaces_a_wrong_edge_list);
    tcase_add_test(t, test_verify_revokes_the_certificate);
    tcase_add_test(t, test_verify_ignores_a_record_of_checked_sizes_changed_without_the_key);
    tcase_add_test(t, test_verify_configuration_is_strict);
    tcase_add_test(t, test_verify_always_withholds_an_answer_the_reference_cannot_check);
    tcase_add_test(t, test_verify_reruns_small_calls_only_when_the_reference_is_cheap);
    tcase_add_test(t, test_verify_checks_the_finished_dimensions_of_a_stopped_call);
    tcase_add_test(t, test_verify_a_cancel_during_the_rerun_cancels_the_call);
    tcase_add_test(t, test_verify_spot_checks_find_a_death_that_is_no_distance);
    suite_add_tcase(s, t);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
