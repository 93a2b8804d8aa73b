/*
 * test_progress.c — progress through the public API (topoml_set_progress):
 * a Rips barcode reports every stage with a total, done never above it and
 * never going back within a stage; the edge collapse reports its stages
 * from inside, and a cancel at any stage of the op, on the scalar and
 * threads backends, stops it with no report after the one that asked.
 * The engine's own cadence is tested in test_rips_pool.c.
 */
#include <check.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topoml/topoml.h"

#include "check_run.h"

typedef struct seen {
    char stage[64][40];
    uint64_t done[64], total[64];
    int n;           /* reports kept (the first 64 of each run of a stage) */
    int calls;       /* all reports */
    int after;       /* reports after the one that answered "stop" */
    bool stopped;
    bool bad;        /* total 0, done > total, or done going back in a stage */
    char why[160];
    const char *stop_at; /* answer "stop" to the first report of this stage */
    uint64_t stop_from;  /* ... with at least this much done */
} seen;

static int record(void *user, const char *stage, uint64_t done, uint64_t total)
{
    seen *s = user;
    s->calls++;
    if (s->stopped)
        s->after++;
    if (!s->bad && (total == 0 || done > total)) {
        s->bad = true;
        snprintf(s->why, sizeof s->why, "%s: %llu of %llu", stage, (unsigned long long)done,
                 (unsigned long long)total);
    }
    bool same = s->n > 0 && strcmp(s->stage[s->n - 1], stage) == 0;
    if (same && !s->bad && done < s->done[s->n - 1]) {
        s->bad = true;
        snprintf(s->why, sizeof s->why, "%s went back from %llu to %llu", stage,
                 (unsigned long long)s->done[s->n - 1], (unsigned long long)done);
    }
    if (same) {
        s->done[s->n - 1] = done;
    } else if (s->n < 64) {
        snprintf(s->stage[s->n], sizeof s->stage[s->n], "%s", stage);
        s->done[s->n] = done;
        s->total[s->n] = total;
        s->n++;
    }
    bool stop = s->stop_at && strcmp(stage, s->stop_at) == 0 && done >= s->stop_from;
    s->stopped = s->stopped || stop;
    return stop;
}

static int find(const seen *s, const char *stage)
{
    for (int k = 0; k < s->n; k++)
        if (strcmp(s->stage[k], stage) == 0)
            return k;
    return -1;
}

static topoml_data *cloud(topoml_context *ctx, uint64_t n, uint64_t dim, uint64_t seed)
{
    double *x = malloc(n * dim * sizeof *x);
    for (uint64_t q = 0; q < n * dim; q++) {
        seed = seed * 6364136223846793005u + 1442695040888963407u;
        x[q] = (double)(seed >> 11) / 9007199254740992.0;
    }
    topoml_data *d = NULL;
    ck_assert_int_eq(topoml_data_from_points(ctx, &d, n, dim, x), TOPOML_OK);
    free(x);
    return d;
}

static topoml_context *context(void)
{
    topoml_context_options o = {.struct_size = sizeof o,
                                .flags = TOPOML_CTX_NO_ENV | TOPOML_CTX_NO_PLUGINS};
    topoml_context *ctx = NULL;
    ck_assert_int_eq(topoml_context_new(&ctx, &o), TOPOML_OK);
    return ctx;
}

START_TEST(test_rips_stages_have_totals_and_each_runs_once)
{
    topoml_context *ctx = context();
    for (int collapse = TOPOML_COLLAPSE_ON; collapse <= TOPOML_COLLAPSE_OFF; collapse++) {
        for (int thresholded = 0; thresholded < 2; thresholded++) {
            topoml_data *d = cloud(ctx, 90, 3, 5 + (uint64_t)thresholded);
            seen s;
            memset(&s, 0, sizeof s);
            topoml_set_progress(ctx, record, &s);
            topoml_rips_options o;
            topoml_rips_options_init(&o);
            o.max_dim = 3;
            o.collapse = (uint32_t)collapse;
            o.threshold = thresholded ? 0.5 : INFINITY;
            topoml_barcode *bc = NULL;
            ck_assert_msg(topoml_barcode_compute(ctx, &bc, d, &o) == TOPOML_OK, "%s",
                          topoml_errmsg(ctx));
            ck_assert_msg(!s.bad, "%s", s.why);
            /* each stage is one run of reports: none comes back later */
            for (int a = 0; a < s.n; a++)
                for (int b = a + 1; b < s.n; b++)
                    ck_assert_msg(strcmp(s.stage[a], s.stage[b]) != 0, "%s came back",
                                  s.stage[a]);
            const char *must[] = {"dim 0", "dim 1", "dim 2 enumeration", "dim 2",
                                  "dim 3 enumeration", "dim 3"};
            for (size_t k = 0; k < sizeof must / sizeof *must; k++)
                ck_assert_msg(find(&s, must[k]) >= 0, "no report of %s", must[k]);
            /* the collapse's stages come first, and its edges are
             * counted to the end */
            int c = find(&s, "collapse");
            if (collapse == TOPOML_COLLAPSE_ON) {
                ck_assert_int_eq(strncmp(s.stage[0], "collapse ", 9), 0);
                ck_assert_int_ge(find(&s, "collapse sort"), 1);
                ck_assert_int_gt(c, find(&s, "collapse sort"));
                ck_assert_uint_gt(s.total[c], 1);
                ck_assert_uint_eq(s.done[c], s.total[c]);
                ck_assert_int_lt(c, find(&s, "dim 0"));
            } else {
                ck_assert_int_eq(c, -1);
                ck_assert_int_eq(find(&s, "collapse sort"), -1);
            }
            topoml_barcode_free(bc);
            topoml_data_free(ctx, d);
        }
    }
    topoml_context_free(ctx);
}
END_TEST

/* Every stage a run reports, then a run per stage cancelled there (at its
 * first report with work done): the op returns TOPOML_E_CANCELLED, no
 * report comes after the one that said "stop", a barcode comes back only
 * past the collapse (the finished dimensions), and freeing it is clean
 * (Valgrind: memcheck_test_progress). */
static void cancel_at_every_stage(topoml_context *ctx, uint32_t collapse, double threshold)
{
    topoml_data *d = cloud(ctx, 400, 3, 11);
    topoml_rips_options o;
    topoml_rips_options_init(&o);
    o.max_dim = 2;
    o.collapse = collapse;
    o.threshold = threshold;
    seen all;
    memset(&all, 0, sizeof all);
    topoml_set_progress(ctx, record, &all);
    topoml_barcode *bc = NULL;
    ck_assert_msg(topoml_barcode_compute(ctx, &bc, d, &o) == TOPOML_OK, "%s", topoml_errmsg(ctx));
    topoml_barcode_free(bc);
    int stopped = 0;
    for (int k = 0; k < all.n; k++) {
        seen s;
        memset(&s, 0, sizeof s);
        s.stop_at = all.stage[k];
        /* at the stage's first report with some of its work done, when
         * it reports any (else at its first): the cancel lands inside */
        s.stop_from = all.done[k] > 0 ? 1 : 0;
        topoml_set_progress(ctx, record, &s);
        bc = NULL;
        int rc = topoml_barcode_compute(ctx, &bc, d, &o);
        if (!s.stopped) {
            /* a stage of the reference's re-run, which verifies a plugin's
             * answer on some calls only (docs/conformance.md), or of the
             * plugin's certification on its first use */
            ck_assert_msg(rc == TOPOML_OK, "%s", topoml_errmsg(ctx));
            ck_assert_msg(strncmp(all.stage[k], "dim ", 4) == 0 ||
                              strncmp(all.stage[k], "verifying on the reference", 26) == 0 ||
                              strncmp(all.stage[k], "certifying ", 11) == 0,
                          "never stopped at %s", all.stage[k]);
            topoml_barcode_free(bc);
            continue;
        }
        stopped++;
        ck_assert_msg(rc == TOPOML_E_CANCELLED, "cancel at %s: %d %s", all.stage[k], rc,
                      topoml_errmsg(ctx));
        ck_assert_msg(s.after == 0, "%d reports after the cancel at %s", s.after, all.stage[k]);
        if (strncmp(all.stage[k], "collapse", 8) == 0) {
            ck_assert_ptr_null(bc);
            ck_assert_msg(strstr(topoml_errmsg(ctx), all.stage[k]) != NULL, "%s",
                          topoml_errmsg(ctx));
        }
        if (bc)
            ck_assert_int_eq(topoml_barcode_complete(bc), 0);
        topoml_barcode_free(bc);
    }
    ck_assert_int_ge(stopped, collapse == TOPOML_COLLAPSE_ON ? 8 : 5);
    topoml_set_progress(ctx, NULL, NULL);
    topoml_data_free(ctx, d);
}

START_TEST(test_cancel_at_every_stage_stops_the_op)
{
    topoml_context *ctx = context();
    cancel_at_every_stage(ctx, TOPOML_COLLAPSE_ON, INFINITY);
    cancel_at_every_stage(ctx, TOPOML_COLLAPSE_ON, 0.4);
    cancel_at_every_stage(ctx, TOPOML_COLLAPSE_OFF, INFINITY);
    topoml_context_free(ctx);
}
END_TEST

START_TEST(test_cancel_at_every_stage_on_the_threads_backend)
{
    topoml_context_options co = {.struct_size = sizeof co,
                                 .flags = TOPOML_CTX_NO_ENV,
                                 .plugin_path = TOPOML_PLUGIN_DIR};
    topoml_context *ctx = NULL;
    ck_assert_int_eq(topoml_context_new(&ctx, &co), TOPOML_OK);
    if (topoml_use_backend(ctx, "threads") != TOPOML_OK) {
        /* built without it: said, not silently passed */
        fprintf(stderr, "test_progress: no threads backend in %s: %s\n", TOPOML_PLUGIN_DIR,
                topoml_errmsg(ctx));
        topoml_context_free(ctx);
        return;
    }
    cancel_at_every_stage(ctx, TOPOML_COLLAPSE_ON, INFINITY);
    cancel_at_every_stage(ctx, TOPOML_COLLAPSE_OFF, INFINITY);
    topoml_context_free(ctx);
}
END_TEST

/* A cancel inside the collapse's main stage (its edges, longest first)
 * lands there: the stage had reported work done and not its end. */
START_TEST(test_cancel_inside_the_collapse)
{
    topoml_context *ctx = context();
    topoml_data *d = cloud(ctx, 700, 3, 13);
    seen s;
    memset(&s, 0, sizeof s);
    s.stop_at = "collapse";
    s.stop_from = 1;
    topoml_set_progress(ctx, record, &s);
    topoml_rips_options o;
    topoml_rips_options_init(&o);
    o.max_dim = 2;
    o.collapse = TOPOML_COLLAPSE_ON;
    topoml_barcode *bc = NULL;
    ck_assert_int_eq(topoml_barcode_compute(ctx, &bc, d, &o), TOPOML_E_CANCELLED);
    ck_assert_ptr_null(bc);
    int c = find(&s, "collapse");
    ck_assert_int_ge(c, 0);
    ck_assert_uint_gt(s.done[c], 0);
    ck_assert_uint_lt(s.done[c], s.total[c]);
    ck_assert_int_eq(s.after, 0);
    ck_assert_ptr_nonnull(strstr(topoml_errmsg(ctx), "edge collapse"));
    topoml_data_free(ctx, d);
    topoml_context_free(ctx);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("progress");
    TCase *tc = tcase_create("progress");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_rips_stages_have_totals_and_each_runs_once);
    tcase_add_test(tc, test_cancel_at_every_stage_stops_the_op);
    tcase_add_test(tc, test_cancel_at_every_stage_on_the_threads_backend);
    tcase_add_test(tc, test_cancel_inside_the_collapse);
    suite_add_tcase(s, tc);
    return topoml_check_run(s);
}
