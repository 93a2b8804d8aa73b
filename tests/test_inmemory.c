/*
 * test_inmemory.c — Check tests of the in-memory inputs and outputs of the C
 * API: points as float32 or float64 in any strides (C order, Fortran order,
 * every other column), +INFINITY in a condensed matrix meaning "no edge",
 * and barcodes written into memory (topoml_barcode_write_mem); one data set
 * shared by several contexts in several threads (docs/embedding.md).
 */
#define _POSIX_C_SOURCE 200809L

#include <check.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h" /* struct topoml_data, to compare what was stored */
#include "topoml/topoml.h"

#include "check_run.h"

static topoml_context *ctx_new(void)
{
    topoml_context_options o = {.struct_size = sizeof o,
                                .flags = TOPOML_CTX_NO_ENV | TOPOML_CTX_NO_PLUGINS};
    topoml_context *ctx = NULL;
    ck_assert_int_eq(topoml_context_new(&ctx, &o), TOPOML_OK);
    return ctx;
}

enum { N = 7, DIM = 3 };

/* Coordinate k of point i: not representable exactly in float for most. */
static double coord(int i, int k)
{
    return 0.1 * (i + 1) + 0.37 * k * k - 0.05 * i * k;
}

START_TEST(test_strided_points_in_every_layout_match_c_ordered_doubles)
{
    topoml_context *ctx = ctx_new();
    double c64[N][DIM], f64[DIM][N], wide64[N][2 * DIM];
    float c32[N][DIM], f32[DIM][N];
    double want32[N * DIM];
    for (int i = 0; i < N; i++)
        for (int k = 0; k < DIM; k++) {
            c64[i][k] = f64[k][i] = wide64[i][2 * k] = coord(i, k);
            wide64[i][2 * k + 1] = NAN; /* skipped by the stride */
            c32[i][k] = f32[k][i] = (float)coord(i, k);
            want32[i * DIM + k] = (double)(float)coord(i, k);
        }
    topoml_data *ref;
    ck_assert_int_eq(topoml_data_from_points(ctx, &ref, N, DIM, &c64[0][0]), TOPOML_OK);
    const struct {
        topoml_dtype dtype;
        const void *p;
        uint64_t row, col;
        const double *want;
    } cases[] = {
        {TOPOML_F64, c64, DIM * 8, 8, ref->values},
        {TOPOML_F64, f64, 8, N * 8, ref->values},
        {TOPOML_F64, wide64, 2 * DIM * 8, 16, ref->values},
        {TOPOML_F32, c32, DIM * 4, 4, want32},
        {TOPOML_F32, f32, 4, N * 4, want32},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        topoml_data *d = NULL;
        ck_assert_msg(topoml_data_from_points_strided(ctx, &d, N, DIM, cases[c].dtype, cases[c].p,
                                                      cases[c].row, cases[c].col) == TOPOML_OK,
                      "case %zu: %s", c, topoml_errmsg(ctx));
        ck_assert_uint_eq(topoml_data_kind(d), TOPOML_INPUT_POINTS);
        ck_assert_uint_eq(topoml_data_count(d), N);
        ck_assert_uint_eq(topoml_data_dim(d), DIM);
        ck_assert_msg(memcmp(d->values, cases[c].want, sizeof want32) == 0, "case %zu", c);
        topoml_data_free(ctx, d);
    }
    topoml_data *d = (topoml_data *)1;
    ck_assert_int_eq(topoml_data_from_points_strided(ctx, &d, N, DIM, TOPOML_F32, c32, 6, 4),
                     TOPOML_E_INVALID);
    ck_assert_ptr_null(d);
    ck_assert_int_eq(
        topoml_data_from_points_strided(ctx, &d, N, DIM, (topoml_dtype)7, c32, DIM * 4, 4),
        TOPOML_E_INVALID);
    ck_assert_int_eq(
        topoml_data_from_points_strided(ctx, &d, N, DIM, TOPOML_F64, wide64, 2 * DIM * 8, 8),
        TOPOML_E_INVALID); /* reaches the NaNs */
    ck_assert_ptr_nonnull(strstr(topoml_errmsg(ctx), "NaN"));
    ck_assert_int_eq(topoml_data_from_points_strided(ctx, &d, N, DIM, TOPOML_F64, NULL, 8, 8),
                     TOPOML_E_INVALID);
    topoml_data_free(ctx, ref);
    topoml_context_free(ctx);
}
END_TEST

START_TEST(test_infinite_condensed_entries_mean_no_edge)
{
    /* Four points; d(2,0) and d(3,1) are missing. */
    const double cond[] = {1, INFINITY, 2, 3, INFINITY, 4};
    topoml_context *ctx = ctx_new();
    topoml_data *d;
    ck_assert_int_eq(topoml_data_from_condensed(ctx, &d, 4, cond), TOPOML_OK);
    ck_assert_uint_eq(topoml_data_kind(d), TOPOML_INPUT_SPARSE);
    ck_assert_uint_eq(topoml_data_count(d), 4);
    ck_assert_uint_eq(d->n_edges, 4);
    const topoml_edge want[] = {{.i = 0, .j = 1, .d = 1},
                                {.i = 0, .j = 3, .d = 3},
                                {.i = 1, .j = 2, .d = 2},
                                {.i = 2, .j = 3, .d = 4}};
    for (int k = 0; k < 4; k++) {
        ck_assert_uint_eq(d->edges[k].i, want[k].i);
        ck_assert_uint_eq(d->edges[k].j, want[k].j);
        ck_assert_double_eq(d->edges[k].d, want[k].d);
    }
    /* The square 0-1-2-3 has an H1 class born at 3 that never dies. */
    topoml_rips_options o;
    topoml_rips_options_init(&o);
    topoml_barcode *bc;
    ck_assert_int_eq(topoml_barcode_compute(ctx, &bc, d, &o), TOPOML_OK);
    uint64_t n;
    const topoml_interval *v = topoml_barcode_intervals(bc, &n);
    ck_assert_uint_eq(v[n - 1].dim, 1);
    ck_assert_double_eq(v[n - 1].birth, 4);
    ck_assert(isinf(v[n - 1].death));
    topoml_barcode_free(bc);
    topoml_data_free(ctx, d);

    const double bad[][3] = {{1, NAN, 2}, {1, -INFINITY, 2}, {1, -1, 2}};
    for (int k = 0; k < 3; k++) {
        d = (topoml_data *)1;
        ck_assert_int_eq(topoml_data_from_condensed(ctx, &d, 3, bad[k]), TOPOML_E_INVALID);
        ck_assert_ptr_null(d);
    }
    topoml_context_free(ctx);
}
END_TEST

START_TEST(test_write_mem_gives_what_write_gives_in_every_style)
{
    const double x[] = {0, 1, 3, 7.5};
    topoml_context *ctx = ctx_new();
    topoml_data *d;
    ck_assert_int_eq(topoml_data_from_points(ctx, &d, 4, 1, x), TOPOML_OK);
    topoml_rips_options o;
    topoml_rips_options_init(&o);
    o.threshold = 3;
    topoml_barcode *bc;
    ck_assert_int_eq(topoml_barcode_compute(ctx, &bc, d, &o), TOPOML_OK);
    for (int style = 0; style < 3; style++) {
        char *want = NULL;
        size_t want_len = 0;
        FILE *f = open_memstream(&want, &want_len);
        ck_assert_int_eq(topoml_barcode_write(ctx, bc, f, (topoml_output)style, 0), TOPOML_OK);
        fclose(f);
        char *got = NULL;
        size_t len = 99;
        ck_assert_int_eq(topoml_barcode_write_mem(ctx, bc, (topoml_output)style, 0, &got, &len),
                         TOPOML_OK);
        ck_assert_uint_eq(len, want_len);
        ck_assert_uint_gt(len, 10);
        ck_assert_str_eq(got, want);
        topoml_free(ctx, got);
        free(want);
    }
    char *got = (char *)1;
    size_t len = 5;
    ck_assert_int_eq(topoml_barcode_write_mem(ctx, bc, TOPOML_OUTPUT_JSON, NAN, &got, &len),
                     TOPOML_E_INVALID);
    ck_assert_ptr_null(got);
    ck_assert_uint_eq(len, 0);
    ck_assert_int_eq(topoml_barcode_write_mem(ctx, NULL, TOPOML_OUTPUT_JSON, 0, &got, &len),
                     TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_barcode_write_mem(ctx, bc, TOPOML_OUTPUT_JSON, 0, NULL, &len),
                     TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_barcode_write_mem(ctx, bc, TOPOML_OUTPUT_JSON, 0, &got, NULL),
                     TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_barcode_write_mem(NULL, bc, TOPOML_OUTPUT_JSON, 0, &got, &len),
                     TOPOML_E_INVALID);
    topoml_barcode_free(bc);
    topoml_data_free(ctx, d);
    topoml_context_free(ctx);
}
END_TEST

/* A data set is read-only once made: contexts other than the one that made
 * it may run ops on it, each in its own thread, at the same time, and get
 * what the maker gets; it is freed with the maker, after them. */
typedef struct share_job {
    const topoml_data *data;
    char *text; /* the barcode as JSON, malloc'd */
    int rc;
} share_job;

static void *share_run(void *arg)
{
    share_job *job = arg;
    topoml_context_options o = {.struct_size = sizeof o,
                                .flags = TOPOML_CTX_NO_ENV | TOPOML_CTX_NO_PLUGINS};
    topoml_context *ctx = NULL;
    job->rc = topoml_context_new(&ctx, &o);
    topoml_rips_options ro;
    topoml_rips_options_init(&ro);
    ro.max_dim = 2;
    topoml_barcode *bc = NULL;
    for (int rep = 0; job->rc == TOPOML_OK && rep < 3; rep++) {
        topoml_barcode_free(bc);
        bc = NULL;
        job->rc = topoml_barcode_compute(ctx, &bc, job->data, &ro);
    }
    char *text = NULL;
    size_t len = 0;
    if (job->rc == TOPOML_OK)
        job->rc = topoml_barcode_write_mem(ctx, bc, TOPOML_OUTPUT_JSON, 0, &text, &len);
    if (job->rc == TOPOML_OK) {
        job->text = malloc(len + 1);
        memcpy(job->text, text, len + 1);
    }
    topoml_free(ctx, text);
    topoml_barcode_free(bc);
    topoml_context_free(ctx);
    return NULL;
}

START_TEST(test_one_data_set_shared_by_contexts_in_threads)
{
    topoml_context *maker = ctx_new();
    enum { NP = 40, THREADS = 4 };
    double xy[NP * 3];
    for (int i = 0; i < NP; i++)
        for (int k = 0; k < 3; k++)
            xy[i * 3 + k] = coord(i, k) + sin(1.7 * i + k);
    topoml_data *d = NULL;
    ck_assert_int_eq(topoml_data_from_points(maker, &d, NP, 3, xy), TOPOML_OK);
    share_job own = {d, NULL, 0};
    share_run(&own);
    ck_assert_int_eq(own.rc, TOPOML_OK);
    share_job jobs[THREADS];
    pthread_t t[THREADS];
    for (int k = 0; k < THREADS; k++) {
        jobs[k] = (share_job){d, NULL, 0};
        ck_assert_int_eq(pthread_create(&t[k], NULL, share_run, &jobs[k]), 0);
    }
    for (int k = 0; k < THREADS; k++) {
        pthread_join(t[k], NULL);
        ck_assert_int_eq(jobs[k].rc, TOPOML_OK);
        ck_assert_str_eq(jobs[k].text, own.text);
        free(jobs[k].text);
    }
    free(own.text);
    topoml_data_free(maker, d);
    topoml_context_free(maker);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("inmemory");
    TCase *t = tcase_create("inmemory");
    tcase_add_test(t, test_strided_points_in_every_layout_match_c_ordered_doubles);
    tcase_add_test(t, test_infinite_condensed_entries_mean_no_edge);
    tcase_add_test(t, test_write_mem_gives_what_write_gives_in_every_style);
    tcase_add_test(t, test_one_data_set_shared_by_contexts_in_threads);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return topoml_check_run(suite());
}
