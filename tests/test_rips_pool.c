/*
 * test_rips_pool.c — the multi-threaded Rips of topoml-backend-threads: the
 * scalar engine with a pool of threads (scalar_rips_pooled, with the pool of
 * plugins/threads/pool.c) gives exactly the single-threaded engine's
 * barcode, interval for interval, for every thread count from 1 to 8 and
 * every batch size of the parallel reduction (1, 2, 7 and the default), its
 * representative cocycles (TOPOML_RIPS_PARAM_COCYCLES) word for word too, on
 * seeded random clouds, tie-heavy matrices and sparse graphs in dimensions
 * up to 3 over Z/2, Z/3 and Z/5, with and without a threshold, and the
 * reduction's serial phase really finishes columns whose pivots collide in
 * their batch; it is cancelled, limited and freed like the serial engine,
 * and near a memory limit it reduces on the calling thread alone; the
 * pool runs every task exactly once and never asks for more threads than
 * the process may use. Run under ThreadSanitizer by the sanitize_thread
 * sub-build too.
 */
#include <check.h>
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdbool.h>
#include <stdio.h>
#include <time.h>

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif
#endif
#ifndef RUNNING_ON_VALGRIND
#define RUNNING_ON_VALGRIND 0
#endif

#include "pool.h"
#include "rips.h"

#include "check_run.h"

/* Host callbacks that count what is outstanding (any thread: atomics). */
typedef struct host {
    atomic_llong live;
    atomic_int progress_calls;
    int cancel_after; /* progress calls before asking to stop; 0: never */
    struct prog_log *log; /* log_progress: where the reports go */
} host;

static void *h_alloc(void *u, size_t n)
{
    atomic_fetch_add(&((host *)u)->live, 1);
    return malloc(n);
}

static void *h_realloc(void *u, void *p, size_t n)
{
    if (!p)
        atomic_fetch_add(&((host *)u)->live, 1);
    return realloc(p, n);
}

static void h_free(void *u, void *p)
{
    if (p)
        atomic_fetch_sub(&((host *)u)->live, 1);
    free(p);
}

static int h_progress(void *u, const char *stage, uint64_t done, uint64_t total)
{
    (void)stage;
    (void)done;
    (void)total;
    host *h = u;
    int calls = atomic_fetch_add(&h->progress_calls, 1) + 1;
    return h->cancel_after && calls >= h->cancel_after;
}

static char errbuf[512];

static topoml_call_v1 make_call(host *h)
{
    memset(h, 0, sizeof *h);
    atomic_init(&h->live, 0);
    atomic_init(&h->progress_calls, 0);
    topoml_call_v1 c;
    memset(&c, 0, sizeof c);
    c.struct_size = sizeof c;
    c.host_data = h;
    c.alloc = h_alloc;
    c.realloc = h_realloc;
    c.free = h_free;
    c.progress = h_progress;
    c.error = errbuf;
    c.error_size = sizeof errbuf;
    c.device = -1;
    return c;
}

static uint64_t rng_state_for_progress;

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * UINT64_C(2685821657736338717);
}

/* One run of the engine with `threads` threads (0: scalar_rips itself),
 * batches of `batch` columns in the batched reduction (0: the engine's
 * choice of scheme, the lock-free one unless cocycles are asked for);
 * the columns resumed by its serial phase are added to *resumed. */
static int compute_batched(const topoml_input_v1 *in, const topoml_rips_params_v1 *p,
                           uint32_t threads, uint32_t batch, uint64_t *resumed,
                           topoml_barcode_v1 *out, host *h)
{
    topoml_call_v1 call = make_call(h);
    memset(out, 0, sizeof *out);
    out->struct_size = sizeof *out;
    if (threads == 0)
        return scalar_rips(&call, in, p, out);
    threads_pool pool;
    ck_assert_int_eq(threads_pool_init(&pool, threads), 0);
    scalar_rips_pool lend = {pool.n_threads, &pool, threads_pool_run, threads_pool_lock,
                             threads_pool_unlock, batch, resumed,
                             batch ? SCALAR_RIPS_SCHEME_BATCHED : SCALAR_RIPS_SCHEME_AUTO, NULL};
    int rc = scalar_rips_pooled(&call, in, p, NULL, &lend, out);
    threads_pool_destroy(&pool);
    return rc;
}

static int compute(const topoml_input_v1 *in, const topoml_rips_params_v1 *p, uint32_t threads,
                   topoml_barcode_v1 *out, host *h)
{
    return compute_batched(in, p, threads, 0, NULL, out, h);
}

/* Batch sizes of the parallel reduction under test (0: the default), and
 * the columns each had to resume in its serial phase, over all runs. */
static const uint32_t batches[] = {1, 2, 7, 0};
#define N_BATCHES (sizeof batches / sizeof batches[0])
static uint64_t resumed_by_batch[N_BATCHES];

static void assert_same_as_serial(const topoml_input_v1 *in, const topoml_rips_params_v1 *p,
                                  const char *what, int seed)
{
    host h0;
    topoml_barcode_v1 ref;
    ck_assert_msg(compute(in, p, 0, &ref, &h0) == TOPOML_OK, "%s: %s", what, errbuf);
    /* Under Valgrind (50 times slower) 1, 2, 3 and 8 threads. */
    for (uint32_t threads = 1; threads <= 8;
         threads = RUNNING_ON_VALGRIND && threads == 3 ? 8 : threads + 1)
        for (size_t b = 0; b < N_BATCHES; b++) {
            host h;
            topoml_barcode_v1 got;
            uint64_t resumed = 0;
            int rc = compute_batched(in, p, threads, batches[b], &resumed, &got, &h);
            ck_assert_msg(rc == TOPOML_OK, "%s seed %d, %u threads, batch %u: %s", what, seed,
                          threads, batches[b], errbuf);
            ck_assert_msg(got.n_intervals == ref.n_intervals,
                          "%s seed %d, %u threads, batch %u: %llu bars, serial %llu", what, seed,
                          threads, batches[b], (unsigned long long)got.n_intervals,
                          (unsigned long long)ref.n_intervals);
            ck_assert_msg(got.n_intervals == 0 ||
                              memcmp(got.intervals, ref.intervals,
                                     got.n_intervals * sizeof *got.intervals) == 0,
                          "%s seed %d, %u threads, batch %u: other bars than serial", what, seed,
                          threads, batches[b]);
            /* Representative cocycles: the serial engine's, word for word
             * (every column's V is reached by the same additions). */
            if (p->flags & TOPOML_RIPS_PARAM_COCYCLES) {
                ck_assert_ptr_nonnull(got.cocycle_offsets);
                const uint64_t words = ref.cocycle_offsets[ref.n_intervals];
                ck_assert_msg(memcmp(got.cocycle_offsets, ref.cocycle_offsets,
                                     (ref.n_intervals + 1) * sizeof *ref.cocycle_offsets) == 0 &&
                                  (words == 0 || memcmp(got.cocycles, ref.cocycles,
                                                        words * sizeof *ref.cocycles) == 0),
                              "%s seed %d, %u threads, batch %u: other cocycles than serial",
                              what, seed, threads, batches[b]);
            }
            h_free(&h, got.cocycle_offsets);
            h_free(&h, got.cocycles);
            /* One thread is the serial engine; a batch of one column has
             * nothing in it to collide with. */
            if (threads == 1 || batches[b] == 1)
                ck_assert_uint_eq(resumed, 0);
            resumed_by_batch[b] += resumed;
            h_free(&h, got.intervals);
            ck_assert_int_eq(atomic_load(&h.live), 0);
        }
    h_free(&h0, ref.intervals);
    h_free(&h0, ref.cocycle_offsets);
    h_free(&h0, ref.cocycles);
}

START_TEST(test_pooled_rips_equals_serial_on_random_inputs)
{
    /* Every kind of input with every modulus (seed % 3, seed / 3 % 3) by
     * seed 12: under Valgrind those. */
    const int seeds = RUNNING_ON_VALGRIND ? 12 : 40;
    for (int seed = 1; seed <= seeds; seed++) {
        uint64_t s = 0x2545f4914f6cdd1du * (uint64_t)seed;
        uint64_t n = 6 + rng_next(&s) % 40, dim = 2 + rng_next(&s) % 3;
        int kind = seed % 3;
        double *x = malloc(n * n * sizeof *x);
        topoml_edge *e = malloc(n * n * sizeof *e);
        ck_assert(x && e);
        topoml_input_v1 in;
        memset(&in, 0, sizeof in);
        in.struct_size = sizeof in;
        in.n = n;
        in.dtype = TOPOML_F64;
        if (kind == 0) { /* points, some repeated */
            for (uint64_t q = 0; q < n * dim; q++)
                x[q] = (double)(rng_next(&s) % 1000) / 1000.0;
            memcpy(x + dim, x, dim * sizeof *x);
            in.kind = TOPOML_INPUT_POINTS;
            in.dim = dim;
            in.metric = TOPOML_METRIC_EUCLIDEAN;
            in.data = x;
        } else if (kind == 1) { /* a matrix of few values: ties */
            for (uint64_t q = 0; q < n * (n - 1) / 2; q++)
                x[q] = (double)(rng_next(&s) % 5);
            in.kind = TOPOML_INPUT_CONDENSED;
            in.data = x;
        } else { /* a sparse graph */
            uint64_t m = 0;
            for (uint32_t j = 1; j < n; j++)
                for (uint32_t i = 0; i < j; i++)
                    if (rng_next(&s) % 4 != 0)
                        e[m++] = (topoml_edge){(double)(rng_next(&s) % 9) * 0.25, i, j};
            in.kind = TOPOML_INPUT_SPARSE;
            in.n_edges = m;
            in.edges = e;
        }
        topoml_rips_params_v1 p;
        memset(&p, 0, sizeof p);
        p.struct_size = sizeof p;
        p.max_dim = n <= 20 ? 3 : 2;
        p.modulus = (uint32_t[]){2, 3, 5}[(seed / 3) % 3];
        p.threshold = seed % 2 ? INFINITY : (kind == 0 ? 0.6 : 2.5);
        p.flags = seed % 4 < 2 ? TOPOML_RIPS_PARAM_COCYCLES : 0;
        assert_same_as_serial(&in, &p, kind == 0 ? "points" : kind == 1 ? "matrix" : "sparse",
                              seed);
        free(x);
        free(e);
    }
    /* Columns of one batch did collide, so the serial phase was tested. */
    for (size_t b = 0; b < N_BATCHES; b++)
        ck_assert_msg(batches[b] == 1 || resumed_by_batch[b] > 0,
                      "batch %u: no column was resumed in the serial phase", batches[b]);
}
END_TEST

/* The lock-free reduction (rips.c, "The same reduction lock-free") gives
 * the serial engine's pairs — every bar and the edges that make it
 * (TOPOML_RIPS_PARAM_GENERATORS) — at every thread count from 1 to 8, on
 * seeded inputs full of ties (matrices of two to four values, points on a
 * small grid, sparse graphs of few lengths) over Z/2, Z/3 and Z/5: columns
 * with equal diameters whose pivots collide are where the smaller column
 * must win the pivot. Over all runs some columns really lost their pivot
 * to a column to their left that claimed it after them, so the
 * compare-and-swap rule was exercised (with the larger column winning, the
 * pairs differ). */
START_TEST(test_lockfree_reduction_pairs_equal_serial_with_ties)
{
    const int seeds = RUNNING_ON_VALGRIND ? 6 : 60;
    uint64_t displaced_total = 0;
    for (int seed = 1; seed <= seeds; seed++) {
        uint64_t s = 0x9e3779b97f4a7c15u * (uint64_t)seed + 17;
        uint64_t n = 12 + rng_next(&s) % 30;
        int kind = seed % 3;
        double *x = malloc(n * n * sizeof *x);
        topoml_edge *e = malloc(n * n * sizeof *e);
        ck_assert(x && e);
        topoml_input_v1 in;
        memset(&in, 0, sizeof in);
        in.struct_size = sizeof in;
        in.n = n;
        in.dtype = TOPOML_F64;
        if (kind == 0) { /* a matrix of 2 to 4 values */
            const uint64_t values = 2 + (uint64_t)seed % 3;
            for (uint64_t q = 0; q < n * (n - 1) / 2; q++)
                x[q] = (double)(1 + rng_next(&s) % values);
            in.kind = TOPOML_INPUT_CONDENSED;
            in.data = x;
        } else if (kind == 1) { /* points on a 4 x 4 x 4 grid, some repeated */
            for (uint64_t q = 0; q < n * 3; q++)
                x[q] = (double)(rng_next(&s) % 4);
            in.kind = TOPOML_INPUT_POINTS;
            in.dim = 3;
            in.metric = seed % 2 ? TOPOML_METRIC_MANHATTAN : TOPOML_METRIC_CHEBYSHEV;
            in.data = x;
        } else { /* a sparse graph of three lengths */
            uint64_t m = 0;
            for (uint32_t j = 1; j < n; j++)
                for (uint32_t i = 0; i < j; i++)
                    if (rng_next(&s) % 5 != 0)
                        e[m++] = (topoml_edge){(double)(1 + rng_next(&s) % 3), i, j};
            in.kind = TOPOML_INPUT_SPARSE;
            in.n_edges = m;
            in.edges = e;
        }
        topoml_rips_params_v1 p;
        memset(&p, 0, sizeof p);
        p.struct_size = sizeof p;
        p.max_dim = n <= 24 ? 3 : 2;
        p.modulus = (uint32_t[]){2, 3, 5}[(seed / 3) % 3];
        p.threshold = seed % 4 == 3 ? 2.0 : INFINITY;
        p.flags = TOPOML_RIPS_PARAM_GENERATORS;
        host h0;
        topoml_barcode_v1 ref;
        ck_assert_msg(compute(&in, &p, 0, &ref, &h0) == TOPOML_OK, "seed %d: %s", seed, errbuf);
        for (uint32_t threads = 1; threads <= 8;
             threads = RUNNING_ON_VALGRIND && threads == 2 ? 8 : threads + 1) {
            host h;
            topoml_call_v1 call = make_call(&h);
            topoml_barcode_v1 got;
            memset(&got, 0, sizeof got);
            got.struct_size = sizeof got;
            uint64_t displaced = 0;
            threads_pool pool;
            ck_assert_int_eq(threads_pool_init(&pool, threads), 0);
            scalar_rips_pool lend = {pool.n_threads,     &pool, threads_pool_run,
                                     threads_pool_lock,  threads_pool_unlock,
                                     0,                  NULL,  SCALAR_RIPS_SCHEME_LOCKFREE,
                                     &displaced};
            int rc = scalar_rips_pooled(&call, &in, &p, NULL, &lend, &got);
            threads_pool_destroy(&pool);
            ck_assert_msg(rc == TOPOML_OK, "seed %d, %u threads: %s", seed, threads, errbuf);
            ck_assert_msg(got.n_intervals == ref.n_intervals &&
                              (ref.n_intervals == 0 ||
                               (memcmp(got.intervals, ref.intervals,
                                       ref.n_intervals * sizeof *ref.intervals) == 0 &&
                                memcmp(got.generators, ref.generators,
                                       ref.n_intervals * sizeof *ref.generators) == 0)),
                          "seed %d (%s, Z/%u), %u threads: other pairs than serial", seed,
                          kind == 0 ? "matrix" : kind == 1 ? "grid" : "sparse", p.modulus,
                          threads);
            displaced_total += displaced;
            h_free(&h, got.intervals);
            h_free(&h, got.generators);
            ck_assert_int_eq(atomic_load(&h.live), 0);
        }
        h_free(&h0, ref.intervals);
        h_free(&h0, ref.generators);
        free(x);
        free(e);
    }
    ck_assert_msg(displaced_total > 0, "no column ever lost its pivot to one on its left");
}
END_TEST

/* A cloud large enough that the enumeration is split and reports. */
static double *cloud(uint64_t n, uint64_t dim, uint64_t seed)
{
    double *x = malloc(n * dim * sizeof *x);
    ck_assert_ptr_nonnull(x);
    uint64_t s = seed;
    for (uint64_t q = 0; q < n * dim; q++)
        x[q] = (double)(rng_next(&s) >> 11) / 9007199254740992.0;
    return x;
}

static topoml_input_v1 points_input(const double *x, uint64_t n, uint64_t dim)
{
    topoml_input_v1 in;
    memset(&in, 0, sizeof in);
    in.struct_size = sizeof in;
    in.kind = TOPOML_INPUT_POINTS;
    in.n = n;
    in.dim = dim;
    in.dtype = TOPOML_F64;
    in.metric = TOPOML_METRIC_EUCLIDEAN;
    in.data = x;
    return in;
}

/* A point cloud's distances on the pool (rips.c, "The distances of a point
 * cloud on the pool"): clouds large enough for it (pairs x coordinates over
 * SCALAR_RIPS_POOL_MIN_PAIR_WORK, rows over more than one round), both
 * dtypes, every metric, under a threshold (the kept pairs, and above the
 * enclosing radius) and without (the matrix), through scalar_rips_pooled
 * and scalar_rips_pooled_distances: the serial engine's barcode, every bit;
 * and a distance beyond float's range is the same error at the same pair. */
START_TEST(test_pooled_distances_equal_serial)
{
    const uint64_t n = 760, dim = 4;
    ck_assert_double_ge((double)n * (n - 1) / 2 * dim, SCALAR_RIPS_POOL_MIN_PAIR_WORK);
    double *x = cloud(n, dim, 77);
    float *xf = malloc(n * dim * sizeof *xf);
    ck_assert_ptr_nonnull(xf);
    for (uint64_t q = 0; q < n * dim; q++) {
        if (q % 17 == 0) /* ties */
            x[q] = 0.5;
        xf[q] = (float)x[q];
    }
    const uint32_t n_threads = RUNNING_ON_VALGRIND ? 2 : 3;
    for (uint32_t dtype = TOPOML_F32; dtype <= TOPOML_F64; dtype++)
        for (uint32_t metric = 0; metric < TOPOML_METRIC_COUNT; metric++)
            for (int th = 0; th < 3; th++) {
                /* under Valgrind (50 times slower) a third of the cases */
                if (RUNNING_ON_VALGRIND && (dtype + metric + (uint32_t)th) % 3 != 0)
                    continue;
                topoml_input_v1 in = points_input(x, n, dim);
                in.dtype = dtype;
                in.metric = metric;
                in.data = dtype == TOPOML_F32 ? (const void *)xf : x;
                topoml_rips_params_v1 p;
                memset(&p, 0, sizeof p);
                p.struct_size = sizeof p;
                p.modulus = 2;
                /* a cut, one above the enclosing radius, none (H0 only) */
                p.threshold = th == 0 ? (metric == TOPOML_METRIC_COSINE ? 0.02 : 0.12)
                              : th == 1 ? 1e300
                                        : INFINITY;
                p.max_dim = th == 2 ? 0 : 1;
                host h0;
                topoml_barcode_v1 ref;
                ck_assert_msg(compute(&in, &p, 0, &ref, &h0) == TOPOML_OK, "%s", errbuf);
                for (int only = 0; only < 2; only++) {
                    host h;
                    topoml_call_v1 call = make_call(&h);
                    topoml_barcode_v1 got;
                    memset(&got, 0, sizeof got);
                    got.struct_size = sizeof got;
                    threads_pool pool;
                    ck_assert_int_eq(threads_pool_init(&pool, n_threads), 0);
                    scalar_rips_pool lend = {pool.n_threads, &pool, threads_pool_run,
                                             threads_pool_lock, threads_pool_unlock, 0, NULL, 0, NULL};
                    int rc = only ? scalar_rips_pooled_distances(&call, &in, &p, NULL, &lend, &got)
                                  : scalar_rips_pooled(&call, &in, &p, NULL, &lend, &got);
                    threads_pool_destroy(&pool);
                    ck_assert_msg(rc == TOPOML_OK, "%s", errbuf);
                    ck_assert_msg(got.n_intervals == ref.n_intervals &&
                                      memcmp(got.intervals, ref.intervals,
                                             got.n_intervals * sizeof *got.intervals) == 0,
                                  "dtype %u metric %u threshold %g: other bars than serial",
                                  dtype, metric, p.threshold);
                    h_free(&h, got.intervals);
                    ck_assert_int_eq(atomic_load(&h.live), 0);
                }
                h_free(&h0, ref.intervals);
            }
    /* float coordinates whose distance is beyond float: one pair, late */
    xf[(n - 3) * dim] = 3e38f;
    xf[(n - 2) * dim] = -3e38f;
    topoml_input_v1 in = points_input(x, n, dim);
    in.dtype = TOPOML_F32;
    in.data = xf;
    topoml_rips_params_v1 p;
    memset(&p, 0, sizeof p);
    p.struct_size = sizeof p;
    p.modulus = 2;
    p.max_dim = 1;
    p.threshold = 0.12;
    host h0, h;
    topoml_barcode_v1 ref, got;
    ck_assert_int_eq(compute(&in, &p, 0, &ref, &h0), TOPOML_E_OVERFLOW);
    char want[sizeof errbuf];
    memcpy(want, errbuf, sizeof want);
    ck_assert_int_eq(compute(&in, &p, 2, &got, &h), TOPOML_E_OVERFLOW);
    ck_assert_str_eq(errbuf, want);
    ck_assert_int_eq(atomic_load(&h.live), 0);
    free(x);
    free(xf);
}
END_TEST

START_TEST(test_pooled_rips_cancels_and_frees_everything)
{
    double *x = cloud(60, 3, 11);
    topoml_input_v1 in = points_input(x, 60, 3);
    topoml_rips_params_v1 p;
    memset(&p, 0, sizeof p);
    p.struct_size = sizeof p;
    p.max_dim = 3;
    p.modulus = 2;
    p.threshold = INFINITY;
    for (int after = 1; after <= 3; after++) {
        host h;
        topoml_call_v1 call = make_call(&h);
        h.cancel_after = after;
        topoml_barcode_v1 out;
        memset(&out, 0, sizeof out);
        out.struct_size = sizeof out;
        threads_pool pool;
        ck_assert_int_eq(threads_pool_init(&pool, 3), 0);
        scalar_rips_pool lend = {pool.n_threads, &pool, threads_pool_run, threads_pool_lock,
                                 threads_pool_unlock, 0, NULL, 0, NULL};
        int rc = scalar_rips_pooled(&call, &in, &p, NULL, &lend, &out);
        threads_pool_destroy(&pool);
        ck_assert_int_eq(rc, TOPOML_E_CANCELLED);
        ck_assert_uint_eq(out.complete, 0);
        h_free(&h, out.intervals);
        ck_assert_int_eq(atomic_load(&h.live), 0);
    }
    free(x);
}
END_TEST

START_TEST(test_pooled_rips_respects_the_memory_limit)
{
    double *x = cloud(60, 3, 12);
    topoml_input_v1 in = points_input(x, 60, 3);
    topoml_rips_params_v1 p;
    memset(&p, 0, sizeof p);
    p.struct_size = sizeof p;
    p.max_dim = 3;
    p.modulus = 2;
    p.threshold = INFINITY;
    host h0;
    topoml_barcode_v1 ref;
    ck_assert_int_eq(compute(&in, &p, 0, &ref, &h0), TOPOML_OK);
    /* From far too little to plenty: each limit is either refused cleanly
     * or gives the serial barcode; the smallest is refused. */
    int refused = 0, done = 0, partial = 0;
    for (uint64_t limit = 1024; limit <= (UINT64_C(1) << 24); limit = limit * 5 / 4) {
        host h;
        topoml_call_v1 call = make_call(&h);
        call.max_memory = limit;
        topoml_barcode_v1 out;
        memset(&out, 0, sizeof out);
        out.struct_size = sizeof out;
        threads_pool pool;
        ck_assert_int_eq(threads_pool_init(&pool, 4), 0);
        scalar_rips_pool lend = {pool.n_threads, &pool, threads_pool_run, threads_pool_lock,
                                 threads_pool_unlock, 0, NULL, 0, NULL};
        int rc = scalar_rips_pooled(&call, &in, &p, NULL, &lend, &out);
        threads_pool_destroy(&pool);
        ck_assert_msg(rc == TOPOML_OK || rc == TOPOML_E_LIMIT, "limit %llu: rc %d: %s",
                      (unsigned long long)limit, rc, errbuf);
        if (rc == TOPOML_OK) {
            ck_assert_uint_eq(out.n_intervals, ref.n_intervals);
            ck_assert(memcmp(out.intervals, ref.intervals,
                             out.n_intervals * sizeof *out.intervals) == 0);
            done++;
        } else {
            /* Refused before any dimension, or stopped in one with the
             * finished dimensions kept: the serial barcode's first ones. */
            ck_assert_uint_eq(out.complete, 0);
            if (out.intervals) {
                ck_assert_uint_lt(out.max_dim, p.max_dim);
                uint64_t want = 0;
                while (want < ref.n_intervals && ref.intervals[want].dim <= out.max_dim)
                    want++;
                ck_assert_uint_eq(out.n_intervals, want);
                ck_assert(memcmp(out.intervals, ref.intervals,
                                 want * sizeof *out.intervals) == 0);
                partial++;
            }
            ck_assert_msg(done == 0, "limit %llu refused after a smaller one passed",
                          (unsigned long long)limit);
            refused++;
        }
        h_free(&h, out.intervals);
        ck_assert_int_eq(atomic_load(&h.live), 0);
    }
    ck_assert_int_gt(refused, 0);
    ck_assert_int_gt(done, 0);
    ck_assert_int_gt(partial, 0);
    h_free(&h0, ref.intervals);
    free(x);
}
END_TEST

/* Near a memory limit the parallel reduction leaves the dimension to the
 * calling thread (RIPS_PAR_ROOM, 8 MiB a thread, in rips.c): then no column
 * is resumed by a serial phase, and the bars are the serial ones; with
 * room, the same input does resume columns. */
START_TEST(test_pooled_reduction_goes_serial_near_the_memory_limit)
{
    const uint64_t n = 30;
    double *x = malloc(n * (n - 1) / 2 * sizeof *x);
    ck_assert_ptr_nonnull(x);
    uint64_t s = 77;
    for (uint64_t q = 0; q < n * (n - 1) / 2; q++)
        x[q] = (double)(rng_next(&s) % 5);
    topoml_input_v1 in;
    memset(&in, 0, sizeof in);
    in.struct_size = sizeof in;
    in.kind = TOPOML_INPUT_CONDENSED;
    in.n = n;
    in.dtype = TOPOML_F64;
    in.data = x;
    topoml_rips_params_v1 p;
    memset(&p, 0, sizeof p);
    p.struct_size = sizeof p;
    p.max_dim = 3;
    p.modulus = 3;
    p.threshold = INFINITY;
    host h0;
    topoml_barcode_v1 ref;
    ck_assert_int_eq(compute(&in, &p, 0, &ref, &h0), TOPOML_OK);
    /* 4 threads need 32 MiB of room: 24 MiB leaves too little, 1 GiB plenty
     * (the whole computation takes well under 1 MiB). */
    static const uint64_t limits[] = {UINT64_C(24) << 20, UINT64_C(1) << 30, 0};
    for (int k = 0; k < 3; k++) {
        host h;
        topoml_call_v1 call = make_call(&h);
        call.max_memory = limits[k];
        topoml_barcode_v1 out;
        memset(&out, 0, sizeof out);
        out.struct_size = sizeof out;
        uint64_t resumed = 0;
        threads_pool pool;
        ck_assert_int_eq(threads_pool_init(&pool, 4), 0);
        scalar_rips_pool lend = {pool.n_threads,      &pool, threads_pool_run, threads_pool_lock,
                                 threads_pool_unlock, 7,     &resumed, SCALAR_RIPS_SCHEME_BATCHED,
                                 NULL};
        int rc = scalar_rips_pooled(&call, &in, &p, NULL, &lend, &out);
        threads_pool_destroy(&pool);
        ck_assert_msg(rc == TOPOML_OK, "limit %llu: %s", (unsigned long long)limits[k], errbuf);
        ck_assert_uint_eq(out.n_intervals, ref.n_intervals);
        ck_assert(memcmp(out.intervals, ref.intervals, out.n_intervals * sizeof *out.intervals) ==
                  0);
        if (k == 0)
            ck_assert_uint_eq(resumed, 0);
        else
            ck_assert_msg(resumed > 0, "limit %llu: no column resumed",
                          (unsigned long long)limits[k]);
        h_free(&h, out.intervals);
        ck_assert_int_eq(atomic_load(&h.live), 0);
    }
    h_free(&h0, ref.intervals);
    free(x);
}
END_TEST

typedef struct count_job {
    atomic_int *seen;
    uint32_t n_threads;
    atomic_int bad_worker;
} count_job;

static void count_task(void *arg, uint32_t t, uint32_t worker)
{
    count_job *j = arg;
    atomic_fetch_add(&j->seen[t], 1);
    if (worker >= j->n_threads)
        atomic_store(&j->bad_worker, 1);
}

START_TEST(test_pool_runs_every_task_once)
{
    static const uint32_t threads[] = {1, 2, 7};
    static const uint32_t tasks[] = {0, 1, 3, 100, 1000};
    for (size_t a = 0; a < 3; a++)
        for (size_t b = 0; b < 5; b++) {
            threads_pool pool;
            ck_assert_int_eq(threads_pool_init(&pool, threads[a]), 0);
            atomic_int seen[1000];
            for (int q = 0; q < 1000; q++)
                atomic_init(&seen[q], 0);
            count_job j = {seen, threads[a], 0};
            atomic_init(&j.bad_worker, 0);
            threads_pool_run(&pool, tasks[b], count_task, &j);
            for (uint32_t q = 0; q < 1000; q++)
                ck_assert_int_eq(atomic_load(&seen[q]), q < tasks[b] ? 1 : 0);
            ck_assert_int_eq(atomic_load(&j.bad_worker), 0);
            threads_pool_destroy(&pool);
        }
}
END_TEST

START_TEST(test_thread_count_never_exceeds_the_cpus_available)
{
    uint32_t have = threads_available();
    ck_assert_uint_ge(have, 1);
    ck_assert_uint_eq(threads_for(0), have);
    ck_assert_uint_eq(threads_for(1), 1);
    ck_assert_uint_eq(threads_for(have), have);
    ck_assert_uint_eq(threads_for(have + 1), have);
    ck_assert_uint_eq(threads_for(4096), have);
    threads_pool pool;
    ck_assert_int_eq(threads_pool_init(&pool, 100000), 0);
    ck_assert_uint_le(pool.n_threads, 256);
    threads_pool_destroy(&pool);
}
END_TEST


/* ---- progress: totals, order and cadence ---- */

typedef struct prog_rec {
    char stage[40];
    uint64_t done, total;
    double cpu; /* process CPU seconds when it came */
} prog_rec;

typedef struct prog_log {
    prog_rec *a;
    size_t n, cap;
} prog_log;

static double cpu_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int log_progress(void *u, const char *stage, uint64_t done, uint64_t total)
{
    prog_log *l = ((host *)u)->log;
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 256;
        l->a = realloc(l->a, l->cap * sizeof *l->a);
        ck_assert_ptr_nonnull(l->a);
    }
    prog_rec *r = &l->a[l->n++];
    snprintf(r->stage, sizeof r->stage, "%s", stage);
    r->done = done;
    r->total = total;
    r->cpu = cpu_seconds();
    return 0;
}

static bool saw_stage(const prog_log *l, const char *stage)
{
    for (size_t k = 0; k < l->n; k++)
        if (strcmp(l->a[k].stage, stage) == 0)
            return true;
    return false;
}

/* Every report has a total and done <= total; within a stage, done never
 * goes back; each stage is one run of reports (a phase reports once); every
 * phase of every dimension reports; and, in CPU time (robust on a loaded
 * machine; not under Valgrind, which is 50 times slower), no more than a
 * quarter of a second per thread passes without a report. */
START_TEST(test_rips_progress_has_totals_and_comes_often)
{
    const bool vg = RUNNING_ON_VALGRIND;
    rng_state_for_progress = 4242;
    typedef struct pcase {
        uint64_t n, dim;
        uint32_t max_dim;
        double threshold;
    } pcase;
    const pcase cases[] = {
        {vg ? 40 : 110, 4, 3, INFINITY},   /* dense: every dimension */
        {vg ? 800 : 4000, 2, 2, vg ? 0.08 : 0.03}, /* points under a threshold: lists */
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        const pcase *pc = &cases[c];
        double *x = malloc(pc->n * pc->dim * sizeof *x);
        for (uint64_t q = 0; q < pc->n * pc->dim; q++)
            x[q] = (double)(rng_next(&rng_state_for_progress) >> 11) / 9007199254740992.0;
        topoml_input_v1 in = points_input(x, pc->n, pc->dim);
        topoml_rips_params_v1 p;
        memset(&p, 0, sizeof p);
        p.struct_size = sizeof p;
        p.max_dim = pc->max_dim;
        p.modulus = 2;
        p.threshold = pc->threshold;
        for (uint32_t threads = 0; threads <= 2; threads += 2) {
            prog_log l = {NULL, 0, 0};
            host h;
            topoml_call_v1 call = make_call(&h);
            h.log = &l;
            call.progress = log_progress;
            topoml_barcode_v1 out;
            memset(&out, 0, sizeof out);
            out.struct_size = sizeof out;
            threads_pool pool;
            ck_assert_int_eq(threads_pool_init(&pool, threads ? threads : 1), 0);
            scalar_rips_pool lend = {pool.n_threads, &pool, threads_pool_run, threads_pool_lock,
                                     threads_pool_unlock, 0, NULL, 0, NULL};
            double t0 = cpu_seconds();
            int rc = threads ? scalar_rips_pooled(&call, &in, &p, NULL, &lend, &out)
                             : scalar_rips(&call, &in, &p, &out);
            double t1 = cpu_seconds();
            threads_pool_destroy(&pool);
            ck_assert_msg(rc == TOPOML_OK, "case %zu: %s", c, errbuf);
            h_free(&h, out.intervals);
            ck_assert_uint_gt(l.n, 0);
            double gap = l.a[0].cpu - t0, budget = 0.25 * (threads ? threads : 1);
            size_t worst = 0;
            for (size_t k = 0; k < l.n; k++) {
                const prog_rec *r = &l.a[k];
                ck_assert_msg(r->total > 0 && r->done <= r->total, "case %zu: %s: %llu of %llu",
                              c, r->stage, (unsigned long long)r->done,
                              (unsigned long long)r->total);
                if (k > 0 && strcmp(r->stage, l.a[k - 1].stage) == 0) {
                    ck_assert_msg(r->done >= l.a[k - 1].done && r->total == l.a[k - 1].total,
                                  "case %zu: %s went back", c, r->stage);
                } else {
                    for (size_t j = 0; j + 1 < k; j++)
                        ck_assert_msg(strcmp(l.a[j].stage, r->stage) != 0,
                                      "case %zu: stage %s came back", c, r->stage);
                }
                if (k > 0 && r->cpu - l.a[k - 1].cpu > gap) {
                    gap = r->cpu - l.a[k - 1].cpu;
                    worst = k;
                }
            }
            if (t1 - l.a[l.n - 1].cpu > gap)
                gap = t1 - l.a[l.n - 1].cpu, worst = l.n;
            char stage[40];
            ck_assert(saw_stage(&l, "edges") && saw_stage(&l, "dim 0") && saw_stage(&l, "dim 1"));
            for (uint32_t k = 2; k <= p.max_dim; k++) {
                snprintf(stage, sizeof stage, "dim %u enumeration", k);
                ck_assert_msg(saw_stage(&l, stage), "case %zu: no %s", c, stage);
                snprintf(stage, sizeof stage, "dim %u", k);
                ck_assert_msg(saw_stage(&l, stage), "case %zu: no %s", c, stage);
            }
            if (pc->threshold < INFINITY)
                ck_assert(saw_stage(&l, "distances") && saw_stage(&l, "neighbours"));
            ck_assert_msg(vg || gap <= budget,
                          "case %zu, %u threads: %.3f s of CPU without a report, before %s "
                          "(%zu reports in %.3f s)",
                          c, threads, gap, worst < l.n ? l.a[worst].stage : "the end", l.n,
                          t1 - t0);
            free(l.a);
            ck_assert_int_eq(atomic_load(&h.live), 0);
        }
        free(x);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("rips_pool");
    TCase *tc = tcase_create("rips_pool");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_pooled_rips_equals_serial_on_random_inputs);
    tcase_add_test(tc, test_lockfree_reduction_pairs_equal_serial_with_ties);
    tcase_add_test(tc, test_pooled_rips_cancels_and_frees_everything);
    tcase_add_test(tc, test_pooled_distances_equal_serial);
    tcase_add_test(tc, test_pooled_rips_respects_the_memory_limit);
    tcase_add_test(tc, test_pooled_reduction_goes_serial_near_the_memory_limit);
    tcase_add_test(tc, test_pool_runs_every_task_once);
    tcase_add_test(tc, test_thread_count_never_exceeds_the_cpus_available);
    tcase_add_test(tc, test_rips_progress_has_totals_and_comes_often);
    suite_add_tcase(s, tc);
    return topoml_check_run(s);
}
