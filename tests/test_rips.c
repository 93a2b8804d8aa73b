/*
 * test_rips.c — the scalar Vietoris–Rips engine (plugins/scalar/rips.c),
 * called directly: thousands of small random inputs against the explicit
 * reference (rips_reference.c) in every input kind, dtype, metric, with ties,
 * duplicate points, absent edges, thresholds and Z/2, Z/3, Z/5; then the
 * contract's edges: tiny inputs, bad input, bad moduli, overflow, the memory
 * limit, allocation failure, progress and cancellation.
 * (The comparison with Ripser and GUDHI runs the CLI: tests/cli/.)
 */
#include <check.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif
#endif
#ifndef RUNNING_ON_VALGRIND
#define RUNNING_ON_VALGRIND 0
#endif

#include "metric.h"
#include "rips.h"
#include "rips_reference.h"

#include "check_run.h"

/* ---- an allocator that counts, remembers sizes and fails on request ---- */

typedef struct tracker {
    long live;      /* blocks not yet freed */
    uint64_t bytes; /* bytes not yet freed */
    uint64_t peak;
    long calls;   /* alloc + realloc calls so far */
    long fail_at; /* the call that fails (-1: none) */
    int progress_calls;
    const char *cancel_stage; /* progress answers "stop" on this stage */
    char last_stage[32];
    bool saw_h0; /* a report of stage "dim 0": H0 was begun */
} tracker;

typedef struct block {
    uint64_t size;
    uint64_t pad;
} block;

static void *t_alloc(void *h, size_t size)
{
    tracker *t = h;
    if (t->calls++ == t->fail_at)
        return NULL;
    block *b = malloc(sizeof *b + size);
    if (!b)
        return NULL;
    b->size = size;
    t->live++;
    t->bytes += size;
    if (t->bytes > t->peak)
        t->peak = t->bytes;
    return b + 1;
}

static void t_free(void *h, void *p)
{
    tracker *t = h;
    if (!p)
        return;
    block *b = (block *)p - 1;
    t->live--;
    t->bytes -= b->size;
    free(b);
}

static void *t_realloc(void *h, void *p, size_t size)
{
    tracker *t = h;
    if (!p)
        return t_alloc(h, size);
    if (t->calls++ == t->fail_at)
        return NULL;
    block *b = (block *)p - 1;
    uint64_t old = b->size;
    block *nb = realloc(b, sizeof *nb + size);
    if (!nb)
        return NULL;
    nb->size = size;
    t->bytes = t->bytes - old + size;
    if (t->bytes > t->peak)
        t->peak = t->bytes;
    return nb + 1;
}

static int t_progress(void *h, const char *stage, uint64_t done, uint64_t total)
{
    tracker *t = h;
    (void)done;
    (void)total;
    t->progress_calls++;
    snprintf(t->last_stage, sizeof t->last_stage, "%s", stage);
    t->saw_h0 = t->saw_h0 || strcmp(stage, "dim 0") == 0;
    return t->cancel_stage && strcmp(stage, t->cancel_stage) == 0;
}

static char errbuf[512];

static topoml_call_v1 make_call(tracker *t)
{
    memset(t, 0, sizeof *t);
    t->fail_at = -1;
    errbuf[0] = '\0';
    topoml_call_v1 c = {0};
    c.struct_size = sizeof c;
    c.host_data = t;
    c.alloc = t_alloc;
    c.realloc = t_realloc;
    c.free = t_free;
    c.progress = t_progress;
    c.error = errbuf;
    c.error_size = sizeof errbuf;
    c.device = -1;
    return c;
}

static topoml_rips_params_v1 params(uint32_t max_dim, double threshold, uint32_t p)
{
    topoml_rips_params_v1 r = {0};
    r.struct_size = sizeof r;
    r.max_dim = max_dim;
    r.threshold = threshold;
    r.modulus = p;
    return r;
}

static topoml_barcode_v1 barcode(void)
{
    topoml_barcode_v1 b = {0};
    b.struct_size = sizeof b;
    return b;
}

static topoml_input_v1 condensed(uint64_t n, const void *data, uint32_t dtype)
{
    topoml_input_v1 in = {0};
    in.struct_size = sizeof in;
    in.kind = TOPOML_INPUT_CONDENSED;
    in.n = n;
    in.dtype = dtype;
    in.data = data;
    return in;
}

static topoml_input_v1 points(uint64_t n, uint64_t dim, const void *data, uint32_t dtype,
                              uint32_t metric)
{
    topoml_input_v1 in = {0};
    in.struct_size = sizeof in;
    in.kind = TOPOML_INPUT_POINTS;
    in.n = n;
    in.dim = dim;
    in.dtype = dtype;
    in.metric = metric;
    in.data = data;
    return in;
}

static topoml_input_v1 sparse(uint64_t n, uint64_t n_edges, const topoml_edge *edges)
{
    topoml_input_v1 in = {0};
    in.struct_size = sizeof in;
    in.kind = TOPOML_INPUT_SPARSE;
    in.n = n;
    in.n_edges = n_edges;
    in.edges = edges;
    return in;
}

/* ---- a column hook written from the definitions in rips.h ----
 *
 * Brute force over every (k+1)-subset, with the filtration spelled out:
 * within a dimension by diameter, then by index descending. So the first
 * cofacet of s with diam(s) is the one that adds the highest vertex, and the
 * last facet of t with diam(t) is the one of smallest index. */

typedef struct bf_hook {
    uint32_t n;
    const double *full; /* n x n, INFINITY for an absent edge */
    int mode;           /* 0 answer, 1 decline, 2 fail, 3 answer out of order */
    uint64_t calls;
} bf_hook;

static double bf_diam(const bf_hook *h, const uint32_t *v, uint32_t m)
{
    double d = 0.0;
    for (uint32_t a = 0; a < m; a++)
        for (uint32_t b = 0; b < a; b++)
            d = h->full[v[a] * h->n + v[b]] > d ? h->full[v[a] * h->n + v[b]] : d;
    return d;
}

static uint64_t bf_binom(uint64_t v, uint64_t k)
{
    if (k > v)
        return 0;
    uint64_t r = 1;
    for (uint64_t i = 1; i <= k; i++)
        r = r * (v - k + i) / i;
    return r;
}

/* index of the simplex with vertices v (ascending) */
static uint64_t bf_index(const uint32_t *v, uint32_t m)
{
    uint64_t idx = 0;
    for (uint32_t i = 0; i < m; i++)
        idx += bf_binom(v[i], i + 1);
    return idx;
}

/* v plus w, ascending */
static void bf_insert(const uint32_t *v, uint32_t m, uint32_t w, uint32_t *out)
{
    uint32_t j = 0;
    for (uint32_t i = 0; i < m; i++) {
        if (w < v[i] && (j == i))
            out[j++] = w;
        out[j++] = v[i];
    }
    if (j == m)
        out[j++] = w;
}

static bool bf_contains(const uint32_t *v, uint32_t m, uint32_t w)
{
    for (uint32_t i = 0; i < m; i++)
        if (v[i] == w)
            return true;
    return false;
}

/* The vertex whose coface is the first cofacet of s with diam(s), or -1. */
static int64_t bf_first_cofacet(const bf_hook *h, const uint32_t *v, uint32_t m, double d)
{
    uint32_t t[16];
    for (int64_t w = (int64_t)h->n - 1; w >= 0; w--) {
        if (bf_contains(v, m, (uint32_t)w))
            continue;
        bf_insert(v, m, (uint32_t)w, t);
        if (bf_diam(h, t, m + 1) == d)
            return w;
    }
    return -1;
}

/* The vertex whose removal gives the last facet of t with diam(t), or -1. */
static int64_t bf_last_facet(const bf_hook *h, const uint32_t *t, uint32_t m, double d)
{
    uint32_t f[16];
    int64_t best = -1;
    uint64_t best_idx = 0;
    for (uint32_t u = 0; u < m; u++) {
        for (uint32_t i = 0, j = 0; i < m; i++)
            if (i != u)
                f[j++] = t[i];
        if (bf_diam(h, f, m - 1) != d)
            continue;
        uint64_t idx = bf_index(f, m - 1);
        if (best < 0 || idx < best_idx) {
            best = t[u];
            best_idx = idx;
        }
    }
    return best;
}

static bool bf_is_column(const bf_hook *h, const uint32_t *v, uint32_t m, double d)
{
    uint32_t t[16], f[16];
    int64_t w = bf_first_cofacet(h, v, m, d);
    if (w >= 0) { /* s the facet of a zero apparent pair? */
        bf_insert(v, m, (uint32_t)w, t);
        if (bf_last_facet(h, t, m + 1, d) == w)
            return false;
    }
    int64_t u = bf_last_facet(h, v, m, d);
    if (u >= 0) { /* s the cofacet of a zero apparent pair? */
        for (uint32_t i = 0, j = 0; i < m; i++)
            if (v[i] != (uint32_t)u)
                f[j++] = v[i];
        if (bf_first_cofacet(h, f, m - 1, d) == u)
            return false;
    }
    return true;
}

static int bf_cmp(const void *a, const void *b)
{
    const scalar_rips_column *x = a, *y = b;
    if (x->diam != y->diam)
        return x->diam > y->diam ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

static int bf_columns(void *user, scalar_rips_columns_query *q)
{
    bf_hook *h = user;
    h->calls++;
    ck_assert_uint_eq(q->n, h->n);
    ck_assert_uint_ge(q->k, 2);
    for (uint64_t i = 1; i < q->n_cleared; i++)
        ck_assert_uint_lt(q->cleared[i - 1], q->cleared[i]);
    if (h->mode == 1)
        return SCALAR_RIPS_HOOK_DECLINED;
    if (h->mode == 2) {
        snprintf(errbuf, sizeof errbuf, "the device is on fire");
        return TOPOML_E_DEVICE;
    }
    const uint32_t m = q->k + 1;
    uint64_t total = bf_binom(h->n, m), count = 0;
    scalar_rips_column *cols = q->reserve(q, total);
    if (!cols)
        return TOPOML_E_NOMEM;
    uint32_t v[16];
    for (uint32_t i = 0; i < m; i++)
        v[i] = i;
    while (m <= h->n) {
        double d = bf_diam(h, v, m);
        uint64_t idx = bf_index(v, m);
        bool cleared = false;
        for (uint64_t i = 0; i < q->n_cleared; i++)
            cleared = cleared || q->cleared[i] == idx;
        if (d <= q->threshold && !cleared && bf_is_column(h, v, m, d))
            cols[count++] = (scalar_rips_column){d, idx};
        /* next subset in colex order */
        uint32_t i = 0;
        while (i + 1 < m && v[i] + 1 == v[i + 1]) {
            v[i] = i;
            i++;
        }
        if (++v[i] >= h->n)
            break;
    }
    qsort(cols, count, sizeof *cols, bf_cmp);
    if (h->mode == 3 && count >= 2) {
        scalar_rips_column t = cols[0];
        cols[0] = cols[count - 1];
        cols[count - 1] = t;
    }
    q->n_columns = count;
    return TOPOML_OK;
}

/* When set, run() gives the engine this hook. */
static const scalar_rips_hook *run_hook;

/* Runs the engine; checks the output's shape and that nothing leaked once
 * the intervals are freed. */
static int run(const topoml_input_v1 *in, const topoml_rips_params_v1 *p, ref_bar **bars,
               size_t *n_bars, tracker *t_out)
{
    tracker t;
    topoml_call_v1 call = make_call(&t);
    topoml_barcode_v1 out = barcode();
    int rc = scalar_rips_hooked(&call, in, p, run_hook, &out);
    *bars = NULL;
    *n_bars = 0;
    if (rc == TOPOML_OK) {
        ck_assert_uint_eq(out.complete, 1);
        ck_assert_uint_eq(out.max_dim, p->max_dim);
        *bars = malloc((out.n_intervals + 1) * sizeof **bars);
        /* one assertion for all bars: Check records every assertion */
        bool grouped = true, in_range = true, zeroed = true, positive = true;
        for (uint64_t k = 0; k < out.n_intervals; k++) {
            const topoml_interval *b = &out.intervals[k];
            grouped = grouped && (k == 0 || b->dim >= out.intervals[k - 1].dim);
            in_range = in_range && b->dim <= p->max_dim;
            zeroed = zeroed && b->reserved == 0;
            positive = positive && b->death > b->birth;
            (*bars)[k] = (ref_bar){b->dim, b->birth, b->death};
        }
        ck_assert_msg(grouped && in_range && zeroed && positive,
                      "bars: grouped %d, dims in range %d, reserved zero %d, no zero length %d",
                      grouped, in_range, zeroed, positive);
        *n_bars = out.n_intervals;
        qsort(*bars, *n_bars, sizeof **bars, ref_bar_cmp);
    } else {
        ck_assert_ptr_null(out.intervals);
        ck_assert_uint_eq(out.n_intervals, 0);
    }
    t_free(&t, out.intervals);
    ck_assert_int_eq(t.live, 0);
    ck_assert_uint_eq(t.bytes, 0);
    if (t_out)
        *t_out = t;
    return rc;
}

/* ---- random inputs ---- */

static uint64_t rng_state;

static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static uint32_t rnd_below(uint32_t k)
{
    return (uint32_t)(rnd() % k);
}

static double rnd_unit(void)
{
    return (double)(rnd() >> 11) / 9007199254740992.0;
}

/* A random value: small integers (many ties and zeros) or a float. */
static double rnd_value(int mode)
{
    return mode == 0   ? (double)rnd_below(5)
           : mode == 1 ? (double)(1 + rnd_below(3))
                       : rnd_unit() * 10.0;
}

static void print_case(const char *what, uint32_t n, const double *full, const ref_bar *a,
                       size_t na, const ref_bar *b, size_t nb)
{
    fprintf(stderr, "%s, n = %u, distances:\n", what, n);
    for (uint32_t i = 0; i < n; i++) {
        for (uint32_t j = 0; j < i; j++)
            fprintf(stderr, " %.17g", full[i * n + j]);
        fprintf(stderr, "\n");
    }
    for (size_t k = 0; k < na; k++)
        fprintf(stderr, "  engine    dim %u [%.17g, %.17g)\n", a[k].dim, a[k].birth, a[k].death);
    for (size_t k = 0; k < nb; k++)
        fprintf(stderr, "  reference dim %u [%.17g, %.17g)\n", b[k].dim, b[k].birth, b[k].death);
}

/* One random case: builds the input of a random kind, the full matrix the
 * engine will see, runs both and compares the diagrams exactly (every birth
 * and death is one of the input's distances, so no tolerance is needed). */
static void random_case(uint32_t max_n, uint32_t max_dim_cap)
{
    uint32_t n = rnd_below(max_n + 1);
    uint32_t max_dim = rnd_below(max_dim_cap + 1);
    static const uint32_t primes[] = {2, 2, 3, 3, 5, 7, 251};
    uint32_t p = primes[rnd_below(7)];
    int kind = (int)rnd_below(4); /* 0 condensed f64, 1 condensed f32, 2 sparse, 3 points */
    int mode = (int)rnd_below(3);
    double full[144];
    double cond[66];
    float condf[66];
    topoml_edge edges[66];
    double coords[12 * 3];
    float coordsf[12 * 3];
    uint64_t n_edges = 0;
    topoml_input_v1 in;
    for (uint32_t k = 0; k < n * n; k++)
        full[k] = 0.0;
    if (kind == 3) {
        uint32_t dim = 1 + rnd_below(3), metric = rnd_below(TOPOML_METRIC_COUNT);
        uint32_t dtype = rnd_below(2);
        for (uint32_t k = 0; k < n * dim; k++) {
            coords[k] = mode == 2 ? rnd_unit() * 2.0 - 1.0 : (double)rnd_below(3);
            coordsf[k] = (float)coords[k];
        }
        in = points(n, dim, dtype == TOPOML_F32 ? (const void *)coordsf : coords, dtype, metric);
        for (uint32_t i = 0; i < n; i++)
            for (uint32_t j = 0; j < i; j++)
                full[i * n + j] = full[j * n + i] =
                    scalar_point_dist(dtype, (topoml_metric)metric, in.data, dim, i, j);
    } else {
        for (uint32_t i = 0; i < n; i++)
            for (uint32_t j = 0; j < i; j++) {
                double v = rnd_value(mode);
                if (kind == 1)
                    v = (double)(float)v;
                /* now and then an absent edge */
                if (rnd_below(12) == 0)
                    v = INFINITY;
                full[i * n + j] = full[j * n + i] = v;
                cond[i * (i - 1) / 2 + j] = v;
                condf[i * (i - 1) / 2 + j] = (float)v;
                if (v < INFINITY || rnd_below(2))
                    edges[n_edges++] = (topoml_edge){v, j, i};
            }
        /* edge lists come in any order */
        for (uint64_t k = n_edges; k > 1; k--) {
            uint64_t m = rnd() % k;
            topoml_edge t = edges[k - 1];
            edges[k - 1] = edges[m];
            edges[m] = t;
        }
        in = kind == 2   ? sparse(n, n_edges, edges)
             : kind == 1 ? condensed(n, condf, TOPOML_F32)
                         : condensed(n, cond, TOPOML_F64);
    }
    double thr = INFINITY;
    switch (rnd_below(5)) {
    case 0: /* exactly one of the distances: ties with the threshold */
        if (n >= 2) {
            uint32_t i = 1 + rnd_below(n - 1), j = rnd_below(i);
            thr = full[i * n + j];
        }
        break;
    case 1: thr = rnd_unit() * (mode == 2 ? 10.0 : 5.0); break;
    case 2: thr = rnd_below(10) == 0 ? -1.0 : 0.0; break;
    default: break;
    }
    topoml_rips_params_v1 prm = params(max_dim, thr, p);
    ref_bar *got, *want;
    size_t n_got, n_want;
    int rc = run(&in, &prm, &got, &n_got, NULL);
    ck_assert_msg(rc == TOPOML_OK, "scalar_rips failed (%d): %s", rc, errbuf);
    ck_assert_int_eq(ref_rips(n, full, max_dim, thr, p, &want, &n_want), 0);
    bool same = n_got == n_want;
    for (size_t k = 0; same && k < n_got; k++)
        same = ref_bar_cmp(&got[k], &want[k]) == 0;
    if (same && max_dim >= 2 && n >= 4) {
        /* the same with the columns of dimensions >= 2 from outside */
        bf_hook h = {n, full, 0, 0};
        scalar_rips_hook hook = {&h, bf_columns};
        ref_bar *hooked;
        size_t n_hooked;
        run_hook = &hook;
        rc = run(&in, &prm, &hooked, &n_hooked, NULL);
        run_hook = NULL;
        ck_assert_msg(rc == TOPOML_OK, "scalar_rips_hooked failed (%d): %s", rc, errbuf);
        same = n_hooked == n_got;
        for (size_t k = 0; same && k < n_got; k++)
            same = ref_bar_cmp(&got[k], &hooked[k]) == 0;
        if (!same) {
            free(got);
            got = hooked;
            n_got = n_hooked;
            hooked = NULL;
        }
        free(hooked);
    }
    if (!same) {
        char what[160];
        snprintf(what, sizeof what, "kind %d mode %d max_dim %u threshold %.17g Z/%u", kind, mode,
                 max_dim, thr, p);
        print_case(what, n, full, got, n_got, want, n_want);
    }
    free(got);
    free(want);
    ck_assert_msg(same, "engine and reference differ (see above)");
}

START_TEST(test_rips_matches_reference_on_random_small_inputs)
{
    rng_state = UINT64_C(0x243F6A8885A308D3);
    int cases = RUNNING_ON_VALGRIND ? 300 : 4000;
    for (int k = 0; k < cases; k++)
        random_case(9, 3);
}
END_TEST

START_TEST(test_rips_matches_reference_on_random_larger_inputs)
{
    rng_state = UINT64_C(0x13198A2E03707344);
    int cases = RUNNING_ON_VALGRIND ? 20 : 300;
    for (int k = 0; k < cases; k++)
        random_case(12, 2);
}
END_TEST

/* The hook's other answers: a refusal (the engine does the work), an error
 * (it ends the call with that status, nothing leaks), a wrong answer
 * (refused as an internal error). */
START_TEST(test_rips_column_hook_decline_error_and_wrong_answer)
{
    enum { N = 10 };
    double pts[N * 3], full[N * N];
    rng_state = UINT64_C(0x452821E638D01377);
    for (int i = 0; i < N * 3; i++)
        pts[i] = rnd_unit();
    topoml_input_v1 in = points(N, 3, pts, TOPOML_F64, TOPOML_METRIC_EUCLIDEAN);
    for (uint32_t i = 0; i < N; i++)
        for (uint32_t j = 0; j < N; j++)
            full[i * N + j] = i == j ? 0.0
                                     : scalar_point_dist(TOPOML_F64, TOPOML_METRIC_EUCLIDEAN,
                                                         pts, 3, i, j);
    topoml_rips_params_v1 prm = params(3, INFINITY, 2);
    ref_bar *want, *got;
    size_t n_want, n_got;
    ck_assert_int_eq(run(&in, &prm, &want, &n_want, NULL), TOPOML_OK);
    for (int mode = 0; mode < 4; mode++) {
        bf_hook h = {N, full, mode, 0};
        scalar_rips_hook hook = {&h, bf_columns};
        run_hook = &hook;
        errbuf[0] = 0;
        int rc = run(&in, &prm, &got, &n_got, NULL);
        run_hook = NULL;
        ck_assert_uint_ge(h.calls, 1);
        if (mode <= 1) {
            ck_assert_int_eq(rc, TOPOML_OK);
            ck_assert_uint_eq(n_got, n_want);
            for (size_t k = 0; k < n_got; k++)
                ck_assert_int_eq(ref_bar_cmp(&got[k], &want[k]), 0);
        } else if (mode == 2) {
            ck_assert_int_eq(rc, TOPOML_E_DEVICE);
            ck_assert_str_eq(errbuf, "the device is on fire");
        } else {
            ck_assert_int_eq(rc, TOPOML_E_INTERNAL);
            ck_assert_ptr_nonnull(strstr(errbuf, "column hook"));
        }
        free(got);
    }
    free(want);
}
END_TEST

/* ---- shapes of input ---- */

START_TEST(test_rips_empty_input_gives_empty_barcode)
{
    topoml_input_v1 in = condensed(0, NULL, TOPOML_F64);
    topoml_rips_params_v1 p = params(3, INFINITY, 2);
    ref_bar *b;
    size_t nb;
    ck_assert_int_eq(run(&in, &p, &b, &nb, NULL), TOPOML_OK);
    ck_assert_uint_eq(nb, 0);
    free(b);
}
END_TEST

START_TEST(test_rips_one_point_gives_one_infinite_bar)
{
    const double xy[2] = {0.5, 0.5};
    for (int kind = 0; kind < 3; kind++) {
        topoml_input_v1 in = kind == 0   ? points(1, 2, xy, TOPOML_F64, TOPOML_METRIC_EUCLIDEAN)
                             : kind == 1 ? condensed(1, NULL, TOPOML_F64)
                                         : sparse(1, 0, NULL);
        topoml_rips_params_v1 p = params(2, kind == 0 ? 1.0 : INFINITY, 3);
        ref_bar *b;
        size_t nb;
        ck_assert_int_eq(run(&in, &p, &b, &nb, NULL), TOPOML_OK);
        ck_assert_uint_eq(nb, 1);
        ck_assert_uint_eq(b[0].dim, 0);
        ck_assert(b[0].birth == 0.0 && b[0].death == INFINITY);
        free(b);
    }
}
END_TEST

START_TEST(test_rips_max_dim_beyond_n_is_empty_there)
{
    const double d[] = {1, 2, 1, 3, 2, 1}; /* four points */
    topoml_input_v1 in = condensed(4, d, TOPOML_F64);
    topoml_rips_params_v1 p3 = params(2, INFINITY, 2), p9 = params(9, INFINITY, 2);
    ref_bar *a, *b;
    size_t na, nb;
    ck_assert_int_eq(run(&in, &p3, &a, &na, NULL), TOPOML_OK);
    ck_assert_int_eq(run(&in, &p9, &b, &nb, NULL), TOPOML_OK);
    ck_assert_uint_eq(na, nb);
    for (size_t k = 0; k < na; k++)
        ck_assert_int_eq(ref_bar_cmp(&a[k], &b[k]), 0);
    free(a);
    free(b);
}
END_TEST

/* The unit square: H1 is born at 1 and dies at sqrt(2) when the diagonals
 * come in; cut at 1.2 it is still alive, so its death is infinite. */
START_TEST(test_rips_threshold_reports_classes_alive_there_as_infinite)
{
    const double sq[] = {0, 0, 1, 0, 1, 1, 0, 1};
    topoml_input_v1 in = points(4, 2, sq, TOPOML_F64, TOPOML_METRIC_EUCLIDEAN);
    for (int cut = 0; cut < 2; cut++) {
        topoml_rips_params_v1 p = params(1, cut ? 1.2 : INFINITY, 2);
        ref_bar *b;
        size_t nb;
        ck_assert_int_eq(run(&in, &p, &b, &nb, NULL), TOPOML_OK);
        ck_assert_uint_eq(nb, 5); /* three [0,1), one [0,inf), one H1 */
        ck_assert_uint_eq(b[4].dim, 1);
        ck_assert(b[4].birth == 1.0);
        ck_assert(cut ? b[4].death == INFINITY : b[4].death == sqrt(2.0));
        free(b);
    }
}
END_TEST

/* RP^2 on 13 vertices (Ripser's example): H1 and H2 over Z/2, none over
 * Z/3. */
START_TEST(test_rips_projective_plane_depends_on_the_field)
{
    FILE *f = fopen(TOPOML_SHARED_DATA "/projective_plane.lower_distance_matrix", "r");
    ck_assert_ptr_nonnull(f);
    double d[78];
    int k = 0;
    while (k < 78 && fscanf(f, " %lf ,", &d[k]) == 1)
        k++;
    fclose(f);
    ck_assert_int_eq(k, 78);
    topoml_input_v1 in = condensed(13, d, TOPOML_F64);
    for (uint32_t p = 2; p <= 3; p++) {
        topoml_rips_params_v1 prm = params(2, INFINITY, p);
        ref_bar *b;
        size_t nb;
        ck_assert_int_eq(run(&in, &prm, &b, &nb, NULL), TOPOML_OK);
        int h1 = 0, h2 = 0;
        for (size_t q = 0; q < nb; q++) {
            h1 += b[q].dim == 1;
            h2 += b[q].dim == 2;
        }
        ck_assert_int_eq(h1, p == 2);
        ck_assert_int_eq(h2, p == 2);
        free(b);
    }
}
END_TEST

/* ---- bad input ---- */

static void expect_error(const topoml_input_v1 *in, const topoml_rips_params_v1 *p, int status,
                         const char *needle)
{
    ref_bar *b;
    size_t nb;
    int rc = run(in, p, &b, &nb, NULL);
    ck_assert_msg(rc == status, "status %d, wanted %d (%s)", rc, status, errbuf);
    ck_assert_msg(strstr(errbuf, needle) != NULL, "message \"%s\" lacks \"%s\"", errbuf, needle);
    free(b);
}

START_TEST(test_rips_rejects_bad_moduli)
{
    const double d[] = {1, 2, 1};
    topoml_input_v1 in = condensed(3, d, TOPOML_F64);
    const uint32_t bad[] = {0, 1, 4, 9, 15, 256, 65535, 65537, 100003};
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        topoml_rips_params_v1 p = params(1, INFINITY, bad[k]);
        expect_error(&in, &p, TOPOML_E_INVALID, "prime");
    }
    const uint32_t good[] = {2, 3, 251, 257, 65521};
    for (size_t k = 0; k < sizeof good / sizeof *good; k++) {
        topoml_rips_params_v1 p = params(1, INFINITY, good[k]);
        ref_bar *b;
        size_t nb;
        ck_assert_int_eq(run(&in, &p, &b, &nb, NULL), TOPOML_OK);
        free(b);
    }
}
END_TEST

START_TEST(test_rips_rejects_nan_and_negative_distances)
{
    double d[] = {1, 2, 1};
    topoml_input_v1 in = condensed(3, d, TOPOML_F64);
    topoml_rips_params_v1 p = params(1, INFINITY, 2);
    d[1] = NAN;
    expect_error(&in, &p, TOPOML_E_INVALID, "between points 0 and 2");
    d[1] = -0.5;
    expect_error(&in, &p, TOPOML_E_INVALID, "between points 0 and 2");
    float f[] = {1, -1, 1};
    in = condensed(3, f, TOPOML_F32);
    expect_error(&in, &p, TOPOML_E_INVALID, "distance");
    const double xy[] = {0, 0, NAN, 1, 2, 2};
    in = points(3, 2, xy, TOPOML_F64, TOPOML_METRIC_EUCLIDEAN);
    expect_error(&in, &p, TOPOML_E_INVALID, "coordinate 0 of point 1");
    const double inf_xy[] = {0, 0, INFINITY, 1};
    in = points(2, 2, inf_xy, TOPOML_F64, TOPOML_METRIC_MANHATTAN);
    expect_error(&in, &p, TOPOML_E_INVALID, "coordinate");
    p.threshold = NAN;
    in = condensed(3, (double[]){1, 2, 1}, TOPOML_F64);
    expect_error(&in, &p, TOPOML_E_INVALID, "threshold");
}
END_TEST

START_TEST(test_rips_rejects_bad_edges)
{
    topoml_rips_params_v1 p = params(1, INFINITY, 2);
    topoml_edge e1[] = {{1.0, 1, 0}};
    topoml_input_v1 in = sparse(3, 1, e1);
    expect_error(&in, &p, TOPOML_E_INVALID, "edge 0");
    topoml_edge e2[] = {{1.0, 0, 1}, {1.0, 0, 3}};
    in = sparse(3, 2, e2);
    expect_error(&in, &p, TOPOML_E_INVALID, "edge 1");
    topoml_edge e3[] = {{1.0, 0, 1}, {NAN, 1, 2}};
    in = sparse(3, 2, e3);
    expect_error(&in, &p, TOPOML_E_INVALID, "edge 1");
    topoml_edge e4[] = {{1.0, 0, 1}, {2.0, 1, 2}, {1.5, 0, 1}};
    in = sparse(3, 3, e4);
    expect_error(&in, &p, TOPOML_E_INVALID, "twice");
}
END_TEST

START_TEST(test_rips_rejects_bad_arguments)
{
    const double d[] = {1, 2, 1};
    topoml_input_v1 in = condensed(3, d, TOPOML_F64);
    topoml_rips_params_v1 p = params(1, INFINITY, 2);
    tracker t;
    topoml_call_v1 call = make_call(&t);
    topoml_barcode_v1 out = barcode();
    ck_assert_int_eq(scalar_rips(NULL, &in, &p, &out), TOPOML_E_INVALID);
    ck_assert_int_eq(scalar_rips(&call, NULL, &p, &out), TOPOML_E_INVALID);
    ck_assert_int_eq(scalar_rips(&call, &in, NULL, &out), TOPOML_E_INVALID);
    ck_assert_int_eq(scalar_rips(&call, &in, &p, NULL), TOPOML_E_INVALID);
    topoml_input_v1 bad = in;
    bad.struct_size = 8;
    expect_error(&bad, &p, TOPOML_E_INVALID, "shorter");
    bad = in;
    bad.kind = 7;
    expect_error(&bad, &p, TOPOML_E_INVALID, "kind");
    bad.kind = TOPOML_INPUT_CONDENSED;
    bad.dtype = 5;
    expect_error(&bad, &p, TOPOML_E_INVALID, "dtype");
    bad = points(3, 2, NULL, TOPOML_F64, TOPOML_METRIC_EUCLIDEAN);
    expect_error(&bad, &p, TOPOML_E_INVALID, "no data");
    bad.data = d;
    bad.metric = 99;
    expect_error(&bad, &p, TOPOML_E_INVALID, "metric");
    ck_assert_int_eq(t.live, 0);
}
END_TEST

/* ---- limits ---- */

START_TEST(test_rips_index_overflow_is_refused_before_any_work)
{
    /* 2^20 vertices up to dimension 3 need C(2^20, 5) ~ 2^93 indices. */
    topoml_input_v1 in = sparse(1u << 20, 0, NULL);
    topoml_rips_params_v1 p = params(3, INFINITY, 2);
    tracker t;
    ref_bar *b;
    size_t nb;
    ck_assert_int_eq(run(&in, &p, &b, &nb, &t), TOPOML_E_OVERFLOW);
    ck_assert_ptr_nonnull(strstr(errbuf, "n = 1048576"));
    ck_assert_ptr_nonnull(strstr(errbuf, "k = 3"));
    ck_assert_uint_lt(t.peak, 1u << 20); /* nothing proportional to n was allocated */
    free(b);
    /* and the same vertices with H0 alone are fine: C(2^20, 2) fits */
    p.max_dim = 0;
    ck_assert_int_eq(run(&in, &p, &b, &nb, NULL), TOPOML_OK);
    ck_assert_uint_eq(nb, 1u << 20);
    free(b);
    /* 66 points fit every dimension over Z/2 (C(66, 33) < 2^63); 67 do not */
    p = params(70, INFINITY, 2);
    in = sparse(66, 0, NULL);
    ck_assert_int_eq(run(&in, &p, &b, &nb, NULL), TOPOML_OK);
    free(b);
    in = sparse(67, 0, NULL);
    expect_error(&in, &p, TOPOML_E_OVERFLOW, "n = 67");
    /* and coefficient bits count: Z/251 leaves 56 bits, C(66, 33) > 2^56 */
    p.modulus = 251;
    in = sparse(66, 0, NULL);
    expect_error(&in, &p, TOPOML_E_OVERFLOW, "8 coefficient bits");
    /* vertices are 32-bit */
    p = params(0, INFINITY, 2);
    in = sparse(UINT64_C(1) << 32, 0, NULL);
    expect_error(&in, &p, TOPOML_E_OVERFLOW, "n = 4294967296");
}
END_TEST

static double *random_cloud(uint32_t n, uint32_t dim)
{
    double *x = malloc(n * dim * sizeof *x);
    for (uint32_t k = 0; k < n * dim; k++)
        x[k] = rnd_unit();
    return x;
}

/* Under any limit the engine either answers right or refuses with
 * TOPOML_E_LIMIT, and never holds more than the limit, the intervals
 * included. */
START_TEST(test_rips_memory_limit_is_never_exceeded)
{
    rng_state = 77;
    double *x = random_cloud(60, 3);
    for (int sparse_mode = 0; sparse_mode < 2; sparse_mode++) {
        topoml_input_v1 in = points(60, 3, x, TOPOML_F64, TOPOML_METRIC_EUCLIDEAN);
        topoml_rips_params_v1 p = params(2, sparse_mode ? 0.5 : INFINITY, 3);
        tracker t;
        ref_bar *full;
        size_t nfull;
        ck_assert_int_eq(run(&in, &p, &full, &nfull, &t), TOPOML_OK);
        int answered = 0, refused = 0, partial = 0;
        for (uint64_t limit = t.peak; limit > 0; limit = limit * 7 / 8) {
            tracker tt;
            topoml_call_v1 call = make_call(&tt);
            call.max_memory = limit;
            topoml_barcode_v1 out = barcode();
            int rc = scalar_rips(&call, &in, &p, &out);
            ck_assert_msg(rc == TOPOML_OK || rc == TOPOML_E_LIMIT, "limit %llu: status %d",
                          (unsigned long long)limit, rc);
            ck_assert_uint_le(tt.peak, limit);
            if (rc == TOPOML_OK) {
                answered++;
                ck_assert_uint_eq(out.n_intervals, nfull);
            } else {
                refused++;
                ck_assert_ptr_nonnull(strstr(errbuf, "bytes"));
                ck_assert_uint_eq(out.complete, 0);
                if (out.intervals) {
                    /* stopped mid-way: the dimensions before come back,
                     * exactly, and the message names the dimension */
                    ck_assert_uint_lt(out.max_dim, p.max_dim);
                    size_t want = 0;
                    while (want < nfull && full[want].dim <= out.max_dim)
                        want++;
                    ck_assert_uint_eq(out.n_intervals, want);
                    ref_bar *got = malloc((want + 1) * sizeof *got);
                    for (uint64_t k = 0; k < want; k++)
                        got[k] = (ref_bar){out.intervals[k].dim, out.intervals[k].birth,
                                           out.intervals[k].death};
                    qsort(got, want, sizeof *got, ref_bar_cmp);
                    for (size_t k = 0; k < want; k++)
                        ck_assert_int_eq(ref_bar_cmp(&got[k], &full[k]), 0);
                    free(got);
                    char dim[32];
                    snprintf(dim, sizeof dim, "dimension %u stopped", out.max_dim + 1);
                    ck_assert_msg(strstr(errbuf, dim), "%s", errbuf);
                    partial++;
                } else {
                    ck_assert_ptr_nonnull(strstr(errbuf, "memory limit"));
                }
            }
            t_free(&tt, out.intervals);
            ck_assert_int_eq(tt.live, 0);
        }
        ck_assert(answered > 0 && refused > 0 && partial > 0);
        free(full);
    }
    free(x);
}
END_TEST

/* A point cloud with a threshold goes to neighbour lists without ever
 * building the n(n-1)/2 matrix: it runs under a limit the matrix alone
 * would break, and the same cloud without a threshold is refused with the
 * matrix's size in the message. */
START_TEST(test_rips_points_with_threshold_never_build_the_matrix)
{
    rng_state = 99;
    uint32_t n = RUNNING_ON_VALGRIND ? 800 : 2000;
    double *x = random_cloud(n, 2);
    topoml_input_v1 in = points(n, 2, x, TOPOML_F64, TOPOML_METRIC_EUCLIDEAN);
    uint64_t matrix = (uint64_t)n * (n - 1) / 2 * sizeof(double);
    tracker t;
    topoml_call_v1 call = make_call(&t);
    call.max_memory = matrix / 2;
    topoml_rips_params_v1 p = params(1, 0.04, 2);
    topoml_barcode_v1 out = barcode();
    ck_assert_msg(scalar_rips(&call, &in, &p, &out) == TOPOML_OK, "%s", errbuf);
    ck_assert_uint_le(t.peak, matrix / 2);
    t_free(&t, out.intervals);
    p.threshold = INFINITY;
    out = barcode();
    ck_assert_int_eq(scalar_rips(&call, &in, &p, &out), TOPOML_E_LIMIT);
    char want[64];
    snprintf(want, sizeof want, "%llu", (unsigned long long)matrix);
    ck_assert_msg(strstr(errbuf, "distance matrix") && strstr(errbuf, want), "%s", errbuf);
    ck_assert_int_eq(t.live, 0);
    free(x);
}
END_TEST

/* Every allocation, in turn, fails: the engine answers TOPOML_E_NOMEM and
 * leaves nothing allocated. */
START_TEST(test_rips_allocation_failure_is_nomem_without_leaks)
{
    rng_state = 5;
    double *x = random_cloud(25, 3);
    for (int kind = 0; kind < 3; kind++) {
        topoml_input_v1 in = points(25, 3, x, TOPOML_F64, TOPOML_METRIC_EUCLIDEAN);
        topoml_rips_params_v1 p = params(3, kind == 1 ? 0.6 : INFINITY, kind == 2 ? 5 : 2);
        tracker t;
        topoml_call_v1 call = make_call(&t);
        topoml_barcode_v1 out = barcode();
        ck_assert_int_eq(scalar_rips(&call, &in, &p, &out), TOPOML_OK);
        t_free(&t, out.intervals);
        long calls = t.calls;
        ck_assert_int_gt(calls, 5);
        for (long k = 0; k < calls; k++) {
            call = make_call(&t);
            t.fail_at = k;
            out = barcode();
            int rc = scalar_rips(&call, &in, &p, &out);
            ck_assert_msg(rc == TOPOML_E_NOMEM, "failing call %ld: status %d", k, rc);
            ck_assert_ptr_null(out.intervals);
            ck_assert_int_eq(t.live, 0);
        }
    }
    free(x);
}
END_TEST

/* ---- progress and cancellation ---- */

START_TEST(test_rips_cancel_keeps_the_finished_dimensions)
{
    rng_state = 11;
    double *x = random_cloud(40, 4);
    topoml_input_v1 in = points(40, 4, x, TOPOML_F64, TOPOML_METRIC_EUCLIDEAN);
    topoml_rips_params_v1 p = params(3, INFINITY, 2);
    ref_bar *full;
    size_t nfull;
    tracker t;
    ck_assert_int_eq(run(&in, &p, &full, &nfull, &t), TOPOML_OK);
    ck_assert_int_gt(t.progress_calls, 0);
    for (uint32_t stop = 1; stop <= 3; stop++) {
        char stage[16];
        snprintf(stage, sizeof stage, "dim %u", stop);
        topoml_call_v1 call = make_call(&t);
        t.cancel_stage = stage;
        topoml_barcode_v1 out = barcode();
        ck_assert_int_eq(scalar_rips(&call, &in, &p, &out), TOPOML_E_CANCELLED);
        ck_assert_uint_eq(out.complete, 0);
        ck_assert_uint_eq(out.max_dim, stop - 1);
        size_t want = 0;
        while (want < nfull && full[want].dim < stop)
            want++;
        ck_assert_uint_eq(out.n_intervals, want);
        ref_bar *got = malloc((out.n_intervals + 1) * sizeof *got);
        for (uint64_t k = 0; k < out.n_intervals; k++)
            got[k] =
                (ref_bar){out.intervals[k].dim, out.intervals[k].birth, out.intervals[k].death};
        qsort(got, out.n_intervals, sizeof *got, ref_bar_cmp);
        for (size_t k = 0; k < want; k++)
            ck_assert_int_eq(ref_bar_cmp(&got[k], &full[k]), 0);
        free(got);
        t_free(&t, out.intervals);
        ck_assert_int_eq(t.live, 0);
    }
    free(full);
    free(x);
}
END_TEST

START_TEST(test_rips_cancel_before_h0_leaves_nothing)
{
    rng_state = 12;
    uint32_t n = 3000; /* enough pairs for the distance pass to report */
    double *x = random_cloud(n, 2);
    topoml_input_v1 in = points(n, 2, x, TOPOML_F64, TOPOML_METRIC_EUCLIDEAN);
    topoml_rips_params_v1 p = params(1, 0.01, 2);
    tracker t;
    topoml_call_v1 call = make_call(&t);
    t.cancel_stage = "distances";
    topoml_barcode_v1 out = barcode();
    ck_assert_int_eq(scalar_rips(&call, &in, &p, &out), TOPOML_E_CANCELLED);
    ck_assert_int_eq(t.progress_calls, 1);
    ck_assert_ptr_null(out.intervals);
    ck_assert_uint_eq(out.n_intervals, 0);
    ck_assert_uint_eq(out.complete, 0);
    ck_assert_int_eq(t.live, 0);
    free(x);
}
END_TEST

/* Without a progress callback, or with an error buffer of NULL, it works. */
START_TEST(test_rips_works_without_callback_or_error_buffer)
{
    const double d[] = {1, 2, 1};
    topoml_input_v1 in = condensed(3, d, TOPOML_F64);
    topoml_rips_params_v1 p = params(1, INFINITY, 4);
    tracker t;
    topoml_call_v1 call = make_call(&t);
    call.progress = NULL;
    call.error = NULL;
    call.error_size = 0;
    topoml_barcode_v1 out = barcode();
    ck_assert_int_eq(scalar_rips(&call, &in, &p, &out), TOPOML_E_INVALID);
    p.modulus = 2;
    ck_assert_int_eq(scalar_rips(&call, &in, &p, &out), TOPOML_OK);
    ck_assert_uint_eq(out.n_intervals, 3); /* [0,1) twice, [0,inf) */
    t_free(&t, out.intervals);
    ck_assert_int_eq(t.live, 0);
}
END_TEST


/* ---- the memory estimate made before any dimension ---- */

typedef struct estimate_case {
    uint32_t n, dim, max_dim, p;
    double threshold;
} estimate_case;

/* Over a class of inputs (dense and sparse, Z/2 and Z/3, dimensions 2 and
 * 3): work given twice the memory it took is never refused, and work given
 * a fraction of the memory it took is refused by the estimate,
 * before H0 is begun, with a message in terms of the complex. */
START_TEST(test_rips_estimate_refuses_before_work_and_passes_what_fits)
{
    const estimate_case cases[] = {
        {40, 4, 3, 2, INFINITY}, {100, 4, 3, 3, INFINITY}, {200, 3, 3, 2, 0.5},
        {60, 3, 2, 3, INFINITY}, {90, 3, 3, 2, 0.7},
        {50, 5, 3, 3, INFINITY},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        if (RUNNING_ON_VALGRIND && c != 0 && c != 4)
            continue; /* one dense and one sparse case: 50 times slower there */
        const estimate_case *e = &cases[c];
        rng_state = 500 + c;
        double *x = random_cloud(e->n, e->dim);
        topoml_input_v1 in = points(e->n, e->dim, x, TOPOML_F64, TOPOML_METRIC_EUCLIDEAN);
        topoml_rips_params_v1 p = params(e->max_dim, e->threshold, e->p);
        tracker t;
        topoml_call_v1 call = make_call(&t);
        topoml_barcode_v1 out = barcode();
        ck_assert_int_eq(scalar_rips(&call, &in, &p, &out), TOPOML_OK);
        const uint64_t peak = t.peak;
        t_free(&t, out.intervals);

        call = make_call(&t);
        call.max_memory = 2 * peak;
        out = barcode();
        ck_assert_msg(scalar_rips(&call, &in, &p, &out) == TOPOML_OK, "case %zu: %s", c, errbuf);
        ck_assert_uint_eq(out.complete, 1);
        t_free(&t, out.intervals);

        call = make_call(&t);
        call.max_memory = peak / 4;
        out = barcode();
        ck_assert_int_eq(scalar_rips(&call, &in, &p, &out), TOPOML_E_LIMIT);
        ck_assert_msg(!t.saw_h0, "case %zu: refused only after H0 began: %s", c, errbuf);
        ck_assert_ptr_null(out.intervals);
        ck_assert_msg(strstr(errbuf, "would need about") &&
                          (strstr(errbuf, "simplices") || strstr(errbuf, "edges")) &&
                          strstr(errbuf, "memory limit") && strstr(errbuf, "lower the dimension"),
                      "case %zu: %s", c, errbuf);
        ck_assert_int_eq(t.live, 0);
        free(x);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("rips");
    TCase *tc = tcase_create("rips");
    tcase_set_timeout(tc, 900);
    tcase_add_test(tc, test_rips_matches_reference_on_random_small_inputs);
    tcase_add_test(tc, test_rips_matches_reference_on_random_larger_inputs);
    tcase_add_test(tc, test_rips_column_hook_decline_error_and_wrong_answer);
    tcase_add_test(tc, test_rips_empty_input_gives_empty_barcode);
    tcase_add_test(tc, test_rips_one_point_gives_one_infinite_bar);
    tcase_add_test(tc, test_rips_max_dim_beyond_n_is_empty_there);
    tcase_add_test(tc, test_rips_threshold_reports_classes_alive_there_as_infinite);
    tcase_add_test(tc, test_rips_projective_plane_depends_on_the_field);
    tcase_add_test(tc, test_rips_rejects_bad_moduli);
    tcase_add_test(tc, test_rips_rejects_nan_and_negative_distances);
    tcase_add_test(tc, test_rips_rejects_bad_edges);
    tcase_add_test(tc, test_rips_rejects_bad_arguments);
    tcase_add_test(tc, test_rips_index_overflow_is_refused_before_any_work);
    tcase_add_test(tc, test_rips_memory_limit_is_never_exceeded);
    tcase_add_test(tc, test_rips_points_with_threshold_never_build_the_matrix);
    tcase_add_test(tc, test_rips_allocation_failure_is_nomem_without_leaks);
    tcase_add_test(tc, test_rips_cancel_keeps_the_finished_dimensions);
    tcase_add_test(tc, test_rips_cancel_before_h0_leaves_nothing);
    tcase_add_test(tc, test_rips_works_without_callback_or_error_buffer);
    tcase_add_test(tc, test_rips_estimate_refuses_before_work_and_passes_what_fits);
    suite_add_tcase(s, tc);
    return topoml_check_run(s);
}
