/*
 * opcheck.c — see opcheck.h.
 */
#include "opcheck.h"

#include <check.h>
#include <stdio.h>

#include "standin.h"
#include "testutil.h"

#define CANARY 16

static double expected(uint32_t dtype, uint32_t metric, const void *data, uint64_t dim, uint64_t i,
                       uint64_t j)
{
    if (dtype == TOPOML_F32) {
        const float *p = data;
        float s = standin_sum_f32(p + i * dim, p + j * dim, dim);
        return metric == TOPOML_METRIC_EUCLIDEAN ? (double)sqrtf(s) : (double)s;
    }
    const double *p = data;
    double s = standin_sum_f64(p + i * dim, p + j * dim, dim);
    return metric == TOPOML_METRIC_EUCLIDEAN ? sqrt(s) : s;
}

static double value_at(uint32_t dtype, const void *out, uint64_t idx)
{
    return dtype == TOPOML_F32 ? (double)((const float *)out)[idx] : ((const double *)out)[idx];
}

void opcheck_distances(const avx512_kernels *k, uint32_t dtype, uint32_t metric, uint64_t n,
                       uint64_t dim, uint64_t seed)
{
    uint64_t s = seed, pairs = n > 1 ? n * (n - 1) / 2 : 0;
    size_t elem = dtype == TOPOML_F32 ? 4 : 8;
    void *data = random_points(&s, dtype, n, dim, -4.0, 4.0);
    unsigned char *out = malloc((size_t)(pairs + CANARY) * elem);
    topoml_call_v1 call;
    topoml_input_v1 in;
    test_heap heap;
    char err[256];

    /* 0xff bytes are NaN in both dtypes: an entry left unwritten shows. */
    memset(out, 0xff, (size_t)(pairs + CANARY) * elem);
    make_call(&call, &heap, err, sizeof err);
    make_input(&in, dtype, metric, n, dim, data);
    int status = avx512_distances(k, &call, &in, out);
    ck_assert_msg(status == TOPOML_OK, "n=%llu dim=%llu: status %d (%s)", (unsigned long long)n,
                  (unsigned long long)dim, status, err);
    ck_assert_int_eq(heap.live, 0);
    for (uint64_t i = 1; i < n; i++)
        for (uint64_t j = 0; j < i; j++) {
            double got = value_at(dtype, out, condensed(i, j));
            double want = expected(dtype, metric, data, dim, i, j);
            double ref = scalar_point_dist(dtype, (topoml_metric)metric, data, dim, i, j);
            EXPECT(got == want, "dtype %u metric %u n=%llu dim=%llu: d(%llu,%llu) = %a, want %a",
                   dtype, metric, (unsigned long long)n, (unsigned long long)dim,
                   (unsigned long long)i, (unsigned long long)j, got, want);
            EXPECT(within_bound(dtype, dim, got, ref),
                   "d(%llu,%llu) = %a, reference %a: outside 2*dim*eps", (unsigned long long)i,
                   (unsigned long long)j, got, ref);
        }
    for (size_t b = (size_t)pairs * elem; b < (size_t)(pairs + CANARY) * elem; b++)
        EXPECT(out[b] == 0xff, "byte %zu past the end was written", b);
    free(out);
    free(data);
}

static int edge_order(const void *a, const void *b)
{
    const topoml_edge *x = a, *y = b;
    if (x->d != y->d)
        return x->d < y->d ? -1 : 1;
    if (x->i != y->i)
        return x->i < y->i ? -1 : 1;
    if (x->j != y->j)
        return x->j < y->j ? -1 : 1;
    return 0;
}

uint64_t opcheck_edges(const avx512_kernels *k, uint32_t dtype, uint32_t metric, uint64_t n,
                       uint64_t dim, const void *data, double threshold)
{
    uint64_t pairs = n > 1 ? n * (n - 1) / 2 : 0, want_n = 0, got_n = 0;
    size_t elem = dtype == TOPOML_F32 ? 4 : 8;
    void *dist = malloc((size_t)(pairs ? pairs : 1) * elem);
    topoml_edge *want = malloc((size_t)(pairs ? pairs : 1) * sizeof *want), *got = NULL;
    topoml_call_v1 call;
    topoml_input_v1 in;
    test_heap heap;
    char err[256];

    make_call(&call, &heap, err, sizeof err);
    make_input(&in, dtype, metric, n, dim, data);
    ck_assert_int_eq(avx512_distances(k, &call, &in, dist), TOPOML_OK);
    for (uint64_t i = 1; i < n; i++)
        for (uint64_t j = 0; j < i; j++) {
            double d = value_at(dtype, dist, condensed(i, j));
            if (d <= threshold)
                want[want_n++] = (topoml_edge){d, (uint32_t)j, (uint32_t)i};
        }
    qsort(want, (size_t)want_n, sizeof *want, edge_order);

    int status = avx512_edges(k, &call, &in, threshold, &got, &got_n);
    ck_assert_msg(status == TOPOML_OK, "edges: status %d (%s)", status, err);
    ck_assert_msg(got_n == want_n, "threshold %a: %llu edges, want %llu", threshold,
                  (unsigned long long)got_n, (unsigned long long)want_n);
    ck_assert(got_n == 0 ? got == NULL : got != NULL);
    for (uint64_t e = 0; e < got_n; e++)
        EXPECT(got[e].d == want[e].d && got[e].i == want[e].i && got[e].j == want[e].j,
               "edge %llu: (%a, %u, %u), want (%a, %u, %u)", (unsigned long long)e, got[e].d,
               got[e].i, got[e].j, want[e].d, want[e].i, want[e].j);
    call.free(call.host_data, got);
    ck_assert_int_eq(heap.live, 0);
    free(want);
    free(dist);
    return got_n;
}
