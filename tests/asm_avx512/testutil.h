/*
 * testutil.h — what the asm-avx512 tests share: a counting host allocator
 * that can be told to fail, a call struct wired to it, a seeded generator,
 * and the reference distance of plugins/scalar/metric.h with the error bound
 * tiling.c claims against it.
 */
#ifndef TOPOML_ASM_AVX512_TESTUTIL_H
#define TOPOML_ASM_AVX512_TESTUTIL_H

#include <check.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "metric.h"
#include "topoml/plugin.h"

/* ck_assert records a checkpoint on every call, which costs a write to
 * Check's pipe: slow in loops of thousands, and very slow under Valgrind.
 * Inner loops test with a plain `if` and fail through this instead. */
#define EXPECT(cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond))                                                                               \
            ck_abort_msg(__VA_ARGS__);                                                             \
    } while (0)

typedef struct test_heap {
    long live;    /* blocks allocated and not freed */
    long calls;   /* alloc and realloc calls so far */
    long fail_at; /* the call with this number fails; -1: none */
    int progress_calls;
    int cancel; /* progress answers this */
    uint64_t last_done, last_total;
} test_heap;

static inline void *heap_alloc(void *h, size_t size)
{
    test_heap *t = h;
    if (t->calls++ == t->fail_at)
        return NULL;
    void *p = malloc(size ? size : 1);
    if (p)
        t->live++;
    return p;
}

static inline void *heap_realloc(void *h, void *ptr, size_t size)
{
    test_heap *t = h;
    if (t->calls++ == t->fail_at)
        return NULL;
    void *p = realloc(ptr, size ? size : 1);
    if (p && !ptr)
        t->live++;
    return p;
}

static inline void heap_free(void *h, void *ptr)
{
    test_heap *t = h;
    if (ptr)
        t->live--;
    free(ptr);
}

static inline int heap_progress(void *h, const char *stage, uint64_t done, uint64_t total)
{
    test_heap *t = h;
    (void)stage;
    t->progress_calls++;
    t->last_done = done;
    t->last_total = total;
    return t->cancel;
}

static inline void make_call(topoml_call_v1 *call, test_heap *heap, char *err, size_t err_size)
{
    memset(heap, 0, sizeof *heap);
    heap->fail_at = -1;
    memset(call, 0, sizeof *call);
    call->struct_size = sizeof *call;
    call->host_data = heap;
    call->alloc = heap_alloc;
    call->realloc = heap_realloc;
    call->free = heap_free;
    call->progress = heap_progress;
    call->error = err;
    call->error_size = err_size;
    call->device = -1;
    if (err && err_size)
        err[0] = '\0';
}

static inline void make_input(topoml_input_v1 *in, uint32_t dtype, uint32_t metric, uint64_t n,
                              uint64_t dim, const void *data)
{
    memset(in, 0, sizeof *in);
    in->struct_size = sizeof *in;
    in->kind = TOPOML_INPUT_POINTS;
    in->dtype = dtype;
    in->metric = metric;
    in->n = n;
    in->dim = dim;
    in->data = data;
}

/* splitmix64: the same sequence everywhere for a seed. */
static inline uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in [lo, hi). */
static inline double rng_uniform(uint64_t *s, double lo, double hi)
{
    return lo + (hi - lo) * (double)(rng_next(s) >> 11) * 0x1p-53;
}

/* n*dim coordinates of dtype, uniform in [lo, hi); free() the result. */
static inline void *random_points(uint64_t *seed, uint32_t dtype, uint64_t n, uint64_t dim,
                                  double lo, double hi)
{
    size_t cells = (size_t)(n * dim);
    if (dtype == TOPOML_F32) {
        float *p = malloc((cells ? cells : 1) * sizeof *p);
        for (size_t k = 0; k < cells; k++)
            p[k] = (float)rng_uniform(seed, lo, hi);
        return p;
    }
    double *p = malloc((cells ? cells : 1) * sizeof *p);
    for (size_t k = 0; k < cells; k++)
        p[k] = rng_uniform(seed, lo, hi);
    return p;
}

/* Condensed index of the pair i > j. */
static inline uint64_t condensed(uint64_t i, uint64_t j)
{
    return i * (i - 1) / 2 + j;
}

/* |ours - ref| <= 2*dim*eps*ref, the bound tiling.c states (plus a few
 * subnormals' worth for sums near the bottom of the range). */
static inline int within_bound(uint32_t dtype, uint64_t dim, double ours, double ref)
{
    double eps = dtype == TOPOML_F32 ? FLT_EPSILON : DBL_EPSILON;
    double tiny = dtype == TOPOML_F32 ? 0x1p-149 : 0x1p-1074;
    if (isnan(ref) || isnan(ours))
        return isnan(ref) && isnan(ours);
    if (isinf(ref) || isinf(ours))
        return ours == ref;
    return fabs(ours - ref) <= 2.0 * (double)dim * eps * ref + (double)dim * tiny;
}

#endif /* TOPOML_ASM_AVX512_TESTUTIL_H */
