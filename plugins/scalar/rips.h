/*
 * rips.h — the exact Vietoris–Rips persistence engine of the scalar
 * reference backend (rips.c). The backend glue (scalar.c) exposes it as the
 * `rips` op of the plugin ABI; the tests call it directly.
 *
 * Only the engine is declared here: the glue owns the vtable and the
 * capability record, the core owns parsing and output.
 */
#ifndef TOPOML_SCALAR_RIPS_H
#define TOPOML_SCALAR_RIPS_H

#include "topoml/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Highest homology dimension the capability record claims. The engine has
 * no limit of its own below it: what does not fit the 64-bit simplex index
 * is refused with TOPOML_E_OVERFLOW before any work is done. */
#define SCALAR_RIPS_MAX_DIM 1024u

/* Largest modulus scalar_rips accepts: every prime p <= this. */
#define SCALAR_RIPS_MAX_MODULUS 65521u

/* Barcodes of the Vietoris–Rips filtration of `in` in dimensions
 * 0..params->max_dim over Z/p, p = params->modulus, as the `rips` op of
 * plugin.h promises.
 *
 * Input: CONDENSED (F64 or F32, Ripser's order), SPARSE (an edge list; absent
 * pairs are infinitely far) or POINTS (any dtype and metric of metric.h).
 * A distance of +INFINITY is an absent edge; a NaN or negative distance, a
 * non-finite coordinate, a bad or repeated edge is TOPOML_E_INVALID.
 *
 * Threshold: params->threshold bounds the diameter of the simplices;
 * +INFINITY means none. The enclosing radius r = min_i max_j d(i,j) is used
 * whenever it is smaller, since the complex is a cone from r on and nothing
 * changes beyond it. Classes still alive at the threshold get death
 * +INFINITY. Bars with death == birth are not reported.
 *
 * Output: out->intervals from call->alloc, grouped by dimension ascending;
 * out->max_dim = params->max_dim and out->complete = 1 on success.
 *
 * Errors (message in call->error): TOPOML_E_INVALID (bad argument, bad data,
 * modulus not a prime in [2, SCALAR_RIPS_MAX_MODULUS]); TOPOML_E_OVERFLOW (n >=
 * 2^32, or the simplex indices of n points up to dimension max_dim + 1 do not
 * fit 64 bits less the coefficient bits: found before anything is
 * allocated); TOPOML_E_LIMIT (call->max_memory would be exceeded; the
 * message gives the bytes wanted); TOPOML_E_NOMEM.
 * On these, out->intervals is NULL and out->n_intervals 0, except for
 * TOPOML_E_LIMIT mid-way (below).
 *
 * Progress: call->progress(host_data, stage, done, total) when a stage
 * begins and then at most every 50 ms, with total > 0 and done <= total
 * rising within a stage: "distances", "distances within the radius",
 * "neighbours", "dim k estimate", "edges", "dim 0", "dim k enumeration",
 * "dim k sort", "dim k" (docs/embedding.md, "Progress", says what each
 * counts). A non-zero answer stops the work: the function returns
 * TOPOML_E_CANCELLED with the dimensions finished so far in *out,
 * out->max_dim the last of them and out->complete = 0 (no interval at all,
 * max_dim 0, when H0 was not finished).
 *
 * Memory: with call->max_memory set, each dimension's memory is estimated
 * after the distances are read and before H0 (estimate_memory in rips.c);
 * work that would not fit is TOPOML_E_LIMIT with no intervals. A limit
 * reached mid-way all the same is TOPOML_E_LIMIT with the finished
 * dimensions in *out, as for a cancel.
 *
 * Scratch memory comes from call->alloc/realloc/free and counts against
 * call->max_memory, as do the intervals. The caller's data is only read. */
int scalar_rips(const topoml_call_v1 *call, const topoml_input_v1 *in,
                const topoml_rips_params_v1 *params, topoml_barcode_v1 *out);

/* ------------------------------------------------------------------------
 * Columns from outside: the hook an accelerated backend uses to take over
 * the most expensive step of the engine in dense and mildly sparse
 * complexes, collecting the columns of each dimension k >= 2 (the split of
 * Ripser++, Zhang, Xiao and Wang 2020: the columns and their apparent pairs
 * on the device, the reduction here).
 *
 * The columns of dimension k are exactly the k-simplices s (k + 1 vertices,
 * Ripser's combinatorial index) with diam(s) <= threshold, except
 *  - the indices in `cleared` (pivots of dimension k - 1; clearing),
 *  - the facets of zero apparent pairs: the first cofacet t of s in the
 *    filtration has diam(t) == diam(s), and s is the last facet of t,
 *  - the cofacets of zero apparent pairs: the last facet f of s has
 *    diam(f) == diam(s), and s is the first cofacet of f,
 * in reduction order: diameter descending, then index ascending. Within a
 * dimension the filtration orders by diameter, then by index descending; a
 * simplex's cofacets with equal diameter therefore come first in order of
 * decreasing added vertex, and its facets with equal diameter last in order
 * of decreasing removed vertex (rips.c, "Zero-persistence apparent pairs").
 *
 * Distances are the engine's: doubles, an f32 input widened; an edge longer
 * than the threshold does not exist. A hook that computes them itself must
 * get the same bits (metric.h says how).
 *
 * The hook may decline a dimension (SCALAR_RIPS_HOOK_DECLINED: too large for
 * the device, say); the engine then collects the columns itself. Any
 * other non-zero answer is an error status, with the message already in
 * call->error, and ends the computation with that status. The engine checks
 * the answer it gets (order, index range) and treats a wrong one as
 * TOPOML_E_INTERNAL. */

typedef struct scalar_rips_column {
    double diam;
    uint64_t index;
} scalar_rips_column;

typedef struct scalar_rips_columns_query {
    uint32_t k;              /* dimension of the columns: k >= 2 */
    uint64_t n;              /* points */
    double threshold;        /* the engine's: min(asked, enclosing radius) */
    const uint64_t *cleared; /* indices of the pivots of dimension k - 1, */
    uint64_t n_cleared;      /* ascending */
    /* Storage for the answer: room for `count` columns, counted against
     * call->max_memory; NULL (status set) when it cannot be had. Valid until
     * the hook returns; a second call replaces the first. */
    scalar_rips_column *(*reserve)(struct scalar_rips_columns_query *q, uint64_t count);
    void *engine;        /* for reserve */
    uint64_t n_columns;  /* set by the hook: columns written */
} scalar_rips_columns_query;

#define SCALAR_RIPS_HOOK_DECLINED 1

typedef struct scalar_rips_hook {
    void *user;
    int (*columns)(void *user, scalar_rips_columns_query *q);
} scalar_rips_hook;

/* scalar_rips with the columns of dimensions k >= 2 asked of `hook` (NULL:
 * exactly scalar_rips). The barcode is the same either way. */
int scalar_rips_hooked(const topoml_call_v1 *call, const topoml_input_v1 *in,
                       const topoml_rips_params_v1 *params, const scalar_rips_hook *hook,
                       topoml_barcode_v1 *out);

/* ------------------------------------------------------------------------
 * Threads from outside: the engine stays single-threaded code, but with a
 * pool it hands the pool two things as independent tasks. The enumeration
 * of the columns of each dimension k >= 2 (the simplices under the
 * threshold, clearing, the apparent-pair tests and the sort: most of the
 * time of a dense complex). And the reduction of every dimension k >= 1:
 * lock-free, the columns in chunks on the pool, pivots claimed in a shared
 * table by compare-and-swap (rips.c, "The same reduction lock-free"); or,
 * with cocycles asked for, in batches of consecutive columns: each column
 * of a batch reduced on the pool against the pivots of the batches before,
 * then, on the calling thread in column order, finished against those of
 * its own batch (rips.c, "The same reduction in parallel"). The barcode is
 * the same either way, bit for bit. plugins/threads is the user.
 *
 * run(user, n_tasks, task, arg) calls task(arg, t, worker) once for every
 * t < n_tasks, on at most n_threads threads at once, worker (< n_threads)
 * naming the thread, 0 being the calling thread; it returns when every call
 * has returned. Tasks call lock/unlock around everything they share: the
 * memory count, the host's allocator, the status and the progress callback
 * (called from worker 0 only). */
typedef struct scalar_rips_pool {
    uint32_t n_threads;
    void *user;
    void (*run)(void *user, uint32_t n_tasks, void (*task)(void *arg, uint32_t t, uint32_t worker),
                void *arg);
    void (*lock)(void *user);
    void (*unlock)(void *user);
    /* Columns per batch of the parallel reduction; 0: the engine's choice,
     * from 256 on, halved or doubled (up to 65536) after each batch as the
     * serial phase's share of the work is large or small. Smaller batches
     * leave less work to the serial phase but start the threads more often;
     * tests use 1, 2, 7 so that columns of one batch really collide. */
    uint32_t batch;
    /* If not NULL, the engine adds to it the columns whose pivot was claimed
     * by an earlier column of their batch, so that the serial phase had to
     * reduce them further (for tests and benchmarks). */
    uint64_t *resumed;
    /* Which parallel reduction (rips.c, "The same reduction lock-free"):
     * SCALAR_RIPS_SCHEME_AUTO (0) the engine's choice, _BATCHED the
     * batches in two phases, _LOCKFREE the lock-free one with no serial
     * phase (with cocycles asked for, or under a memory limit too close,
     * always the batched). The barcode is the same either way. */
    uint32_t scheme;
    /* If not NULL, the engine adds to it the columns of the lock-free
     * reduction that lost their pivot to a column to their left claimed
     * after them (for tests: the compare-and-swap rule was exercised). */
    uint64_t *displaced;
} scalar_rips_pool;

#define SCALAR_RIPS_SCHEME_AUTO 0u
#define SCALAR_RIPS_SCHEME_BATCHED 1u
#define SCALAR_RIPS_SCHEME_LOCKFREE 2u

/* A point cloud's distances go to the pool when its pairs times its
 * coordinates reach this (rips.c, "The distances of a point cloud on the
 * pool"); below, starting the threads costs more than they save. */
#define SCALAR_RIPS_POOL_MIN_PAIR_WORK (1u << 20)

/* scalar_rips_hooked with a pool (NULL, or one of fewer than 2 threads:
 * exactly scalar_rips_hooked). Columns the hook takes are the hook's. */
int scalar_rips_pooled(const topoml_call_v1 *call, const topoml_input_v1 *in,
                       const topoml_rips_params_v1 *params, const scalar_rips_hook *hook,
                       const scalar_rips_pool *pool, topoml_barcode_v1 *out);

/* scalar_rips_pooled whose pool computes the distances of a point cloud's
 * set-up and nothing else: the rest runs as in scalar_rips_hooked
 * (plugins/threads lends its pool so for a complex too small for the rest
 * to gain). */
int scalar_rips_pooled_distances(const topoml_call_v1 *call, const topoml_input_v1 *in,
                                 const topoml_rips_params_v1 *params,
                                 const scalar_rips_hook *hook, const scalar_rips_pool *pool,
                                 topoml_barcode_v1 *out);

#ifdef __cplusplus
}
#endif
#endif /* TOPOML_SCALAR_RIPS_H */
