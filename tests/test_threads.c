/*
 * test_threads.c — the thread-safety rules of topoml.h under load: several
 * threads, each with its own context, all reading one shared data set, get
 * the same answers as a single thread. Run under ThreadSanitizer by the
 * sanitize_thread test.
 */
#include <check.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "topoml/topoml.h"

#include "check_run.h"

#define THREADS 4
#define ROUNDS 6
#define POINTS 60

static topoml_data *shared; /* read-only while the threads run */

typedef struct result {
    uint64_t n;
    double sum_death; /* finite deaths */
    uint64_t n_edges;
    double sum_dist;
} result;

static int compute(topoml_context *ctx, result *r)
{
    topoml_rips_options o;
    topoml_rips_options_init(&o);
    topoml_barcode *bc = NULL;
    int rc = topoml_barcode_compute(ctx, &bc, shared, &o);
    if (rc == TOPOML_E_UNSUPPORTED) {
        o.max_dim = 0;
        rc = topoml_barcode_compute(ctx, &bc, shared, &o);
    }
    if (rc != TOPOML_OK)
        return rc;
    const topoml_interval *v = topoml_barcode_intervals(bc, &r->n);
    r->sum_death = 0;
    for (uint64_t k = 0; k < r->n; k++)
        if (isfinite(v[k].death))
            r->sum_death += v[k].death;
    topoml_barcode_free(bc);
    topoml_edge *e = NULL;
    rc = topoml_edges(ctx, shared, TOPOML_METRIC_EUCLIDEAN, 0.5, &e, &r->n_edges);
    if (rc != TOPOML_OK)
        return rc;
    topoml_free(ctx, e);
    void *d = NULL;
    uint64_t n;
    rc = topoml_distances(ctx, shared, TOPOML_METRIC_MANHATTAN, TOPOML_F64, &d, &n);
    if (rc != TOPOML_OK)
        return rc;
    r->sum_dist = 0;
    for (uint64_t k = 0; k < n; k++)
        r->sum_dist += ((double *)d)[k];
    topoml_free(ctx, d);
    return TOPOML_OK;
}

typedef struct job {
    result want;
    int failures;
} job;

static void *worker(void *arg)
{
    job *j = arg;
    for (int round = 0; round < ROUNDS; round++) {
        topoml_context_options o = {.struct_size = sizeof o, .flags = TOPOML_CTX_NO_ENV};
        topoml_context *ctx = NULL;
        if (topoml_context_new(&ctx, &o) != TOPOML_OK) {
            j->failures++;
            topoml_context_free(ctx);
            continue;
        }
        result r;
        if (compute(ctx, &r) != TOPOML_OK || r.n != j->want.n ||
            r.sum_death != j->want.sum_death || r.n_edges != j->want.n_edges ||
            r.sum_dist != j->want.sum_dist)
            j->failures++;
        topoml_context_free(ctx);
    }
    return NULL;
}

START_TEST(test_threads_with_own_contexts_agree_with_one_thread)
{
    topoml_context_options o = {.struct_size = sizeof o, .flags = TOPOML_CTX_NO_ENV};
    topoml_context *main_ctx = NULL;
    ck_assert_int_eq(topoml_context_new(&main_ctx, &o), TOPOML_OK);
    double xy[POINTS * 3];
    unsigned seed = 12345;
    for (int k = 0; k < POINTS * 3; k++) {
        seed = seed * 1103515245u + 12345u;
        xy[k] = (seed >> 8) / 16777216.0;
    }
    ck_assert_int_eq(topoml_data_from_points(main_ctx, &shared, POINTS, 3, xy), TOPOML_OK);
    result want;
    ck_assert_int_eq(compute(main_ctx, &want), TOPOML_OK);
    ck_assert_uint_gt(want.n, 0);

    pthread_t t[THREADS];
    job jobs[THREADS];
    for (int i = 0; i < THREADS; i++) {
        jobs[i].want = want;
        jobs[i].failures = 0;
        ck_assert_int_eq(pthread_create(&t[i], NULL, worker, &jobs[i]), 0);
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(t[i], NULL);
        ck_assert_int_eq(jobs[i].failures, 0);
    }
    topoml_data_free(main_ctx, shared);
    topoml_context_free(main_ctx);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("threads");
    TCase *tc = tcase_create("threads");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_threads_with_own_contexts_agree_with_one_thread);
    suite_add_tcase(s, tc);
    return topoml_check_run(s);
}
