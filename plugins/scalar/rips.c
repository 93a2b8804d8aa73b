/*
 * rips.c — the exact Vietoris–Rips persistence engine of the scalar
 * reference backend: barcodes in dimensions 0..k over Z/p, computed the way
 * Ripser 1.2 computes them (U. Bauer, "Ripser: efficient computation of
 * Vietoris–Rips persistence barcodes", J. Appl. Comput. Topol. 5, 2021).
 *
 *  - H0 comes from union-find over the edges in filtration order.
 *  - H_k, k >= 1, comes from reducing the coboundary matrix column by column
 *    in reverse filtration order (persistent cohomology). Columns paired in
 *    dimension k-1 are skipped (clearing).
 *  - A simplex is a number in the combinatorial number system. The matrix is
 *    never stored: coboundaries are enumerated when they are needed, and only
 *    the reduction coefficients V of R = D V are kept.
 *  - Zero-persistence apparent pairs and emergent pairs are recognised
 *    without any column operation.
 *  - Distances come from a compressed lower-triangular matrix (dense mode) or
 *    from sorted neighbour lists of the edges under the threshold (sparse
 *    mode, used whenever a threshold cuts the complex and for SPARSE input).
 *
 * This file is the algorithm only: no parsing, no output format, no choice of
 * backend. It runs on one thread and allocates only through the call; a
 * caller may lend it threads (scalar_rips_pooled), which then share the
 * enumeration of the columns (assemble_parallel) and the reduction: lock-free,
 * with no serial phase (reduce_lockfree), or, with cocycles asked for, the
 * first phase of each batch of columns (reduce_parallel).
 *
 * Filtration order (relied on throughout). Within a dimension, simplex a
 * comes before simplex b when diam(a) < diam(b), or the diameters are equal
 * and index(a) > index(b). Across dimensions, by diameter, then dimension.
 * Every face then comes before its cofaces, so this is a filtration, and it
 * is Ripser's, which makes apparent pairs plentiful. Hence:
 *  - columns are reduced in the order (diameter desc, index asc);
 *  - the pivot of a coboundary column is its entry that comes first in the
 *    filtration: smallest diameter, then largest index;
 *  - the pivot of a boundary column is its entry that comes last:
 *    largest diameter, then smallest index.
 */
#include "rips.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "metric.h"
#include "metric_rows.h"

/* An entry packs a simplex index and a coefficient: index << cbits | coef.
 * All ones is never a valid entry because indices stay below
 * 2^(64 - cbits) - 1 (check_index_range). */
#define RIPS_NONE UINT64_MAX

/* Bounds every vertex array. check_index_range lets simplices of K vertices
 * through only if C(n, j) < 2^63 for all j <= K <= n; if K >= n/2 that
 * includes C(n, n/2), past 2^63 from n = 67 on, and otherwise C(n, K) >=
 * C(2K, K) >= 4^K / (2K + 1), past 2^63 from K = 36 on. So K <= 66. */
#define RIPS_MAX_VERTS 72

/* How often the progress callback is called. The work loops look at the
 * clock every RIPS_REPORT_WORK units of work (cofacets enumerated, rows of
 * distances), every RIPS_REPORT_COLUMNS columns, edges or RIPS_REPORT_SORT
 * entries sorted; never per unit. A unit costs from a few nanoseconds (a
 * push in the reduction) to microseconds (an apparent-pair test in the
 * enumeration), which no fixed count evens out, so the callback itself is
 * called when a new stage begins and then when RIPS_REPORT_SECONDS have
 * passed since the last call (report): about 20 times a second in every
 * long phase, which a terminal's progress line (4 a second) and a cancel
 * (Ctrl-C in the Python package, within a second) need, and not more. */
#define RIPS_REPORT_COLUMNS 4096u
#define RIPS_REPORT_WORK 4096u
#define RIPS_REPORT_SECONDS 0.05
#define RIPS_REPORT_SORT (1u << 14)

typedef struct rips_dentry {
    double diam;
    uint64_t entry;
} rips_dentry;

/* A pair j < i within the threshold, kept from the scan of row i. */
typedef struct rips_kept {
    double d;
    uint32_t j;
} rips_kept;

typedef struct rips_vec {
    rips_dentry *a;
    uint64_t n, cap;
} rips_vec;

/* A heap entry is one 128-bit key whose unsigned order is the filtration
 * order: the bits of the diameter above (a non-negative double orders like
 * its bit pattern once -0.0 is made +0.0 by clearing the sign bit), the
 * complement of the entry below (larger index first). One integer compare
 * per step instead of a double compare and a tie-break. */
typedef unsigned __int128 rips_key;

/* The working column of V: a binary min-heap of keys. Entries of one
 * simplex differ only in their coefficient bits, so they leave the heap one
 * after the other and are summed there. */
typedef struct rips_heap {
    rips_key *a;
    uint64_t n, cap;
} rips_heap;

/* The working coboundary: a radix heap (Ahuja, Mehlhorn, Orlin, Tarjan
 * 1990) over the keys with their coefficient bits cleared (the "order").
 * Bucket 0 holds the entries whose order equals `last`, the order of the
 * last minimum; bucket i > 0 those whose highest bit differing from it is
 * bit i-1. A push is an append; finding the next minimum empties the lowest
 * non-empty bucket into lower ones, so each entry moves a few times at most
 * and always by streaming through memory, where a binary heap of millions
 * of entries misses the cache on every level. Bucket 0 is, at any time, all
 * the copies of one simplex: lazy cancellation sums it in one go.
 *
 * A radix heap needs every push to be >= the last minimum. Pushes below it
 * are dropped, which is exact: see add_column. */
#define RIPS_BUCKETS 129

typedef struct rips_bucket {
    rips_key *a;
    uint64_t n, cap;
} rips_bucket;

typedef struct rips_column {
    rips_bucket b[RIPS_BUCKETS];
    uint64_t used[3]; /* bit i: bucket i may be non-empty */
    rips_key last;
    rips_key ordmask;
    bool held; /* the pivot, taken out and not yet consumed */
    rips_key top;
} rips_column;

/* The state of one column's reduction: the working coboundary, the working
 * column of V, and the counter the work goes to. The serial reduction has
 * one (r->w0, counting into r->work); the parallel one (reduce_parallel)
 * one per worker. */
typedef struct rips_work {
    rips_column cob;
    rips_heap red;
    uint64_t *work;
} rips_work;

/* Pivots of one dimension: open addressing with linear probing, keyed by the
 * simplex index of the pivot (the key keeps its coefficient in the low bits),
 * valued by the column that has it. */
typedef struct rips_pivots {
    uint64_t *key;
    uint32_t *col;
    uint64_t mask;
    unsigned shift;
} rips_pivots;

typedef struct rips_engine {
    const topoml_call_v1 *call;
    int status;
    uint64_t mem_used, mem_limit;

    uint64_t n;
    uint32_t dim_max; /* highest dimension reduced: min(asked, n - 2) */
    double thr;       /* largest diameter in the complex */
    uint32_t p;
    unsigned cbits;
    uint64_t cmask;
    uint32_t *inv; /* inv[c] * c = 1 mod p */

    uint64_t *binom; /* binom[k * bstride + v] = C(v, k), v <= n, k <= bk */
    uint64_t bstride;
    unsigned bk;

    bool sparse;
    const double *dist; /* dense: n(n-1)/2 distances, Ripser's order */
    double *dist_own;   /* a converted copy when the input was not f64 */
    uint64_t *nb_start; /* sparse: neighbours of v are [nb_start[v], nb_start[v+1]) */
    uint32_t *nb_v;     /* ... sorted by vertex, ascending */
    double *nb_d;

    /* set-up of a CONDENSED or POINTS input (setup_pairs) */
    scalar_panels pan; /* POINTS: the points laid out for metric_rows.h */
    uint64_t pan_bytes;
    double *row;     /* the distances of one row, i > j */
    rips_kept *kept; /* the pairs within the threshold, row by row, while `keep` */
    uint64_t n_kept, cap_kept, max_kept;
    uint64_t *kept_row; /* row i's pairs are kept[kept_row[i] .. kept_row[i + 1]) */
    bool keep;

    topoml_interval *bars;
    uint64_t n_bars, cap_bars;
    /* With TOPOML_RIPS_PARAM_GENERATORS: gens[k] belongs to bars[k]. */
    bool want_gens;
    topoml_generator *gens;
    uint64_t cap_gens;
    /* With TOPOML_RIPS_PARAM_COCYCLES: bars[k]'s cocycle is
     * coc[coc_off[k] .. coc_off[k + 1]) (topoml_barcode_v1.cocycles). */
    bool want_cocycles;
    uint64_t *coc_off;
    uint64_t cap_coc_off;
    uint32_t *coc;
    uint64_t n_coc, cap_coc;

    /* reduction of one dimension */
    rips_vec cols;  /* columns to reduce, in reduction order */
    uint64_t *voff; /* V of column j is vent.a[voff[j] .. voff[j+1]) */
    rips_vec vent;
    rips_work w0; /* the serial reduction's working columns */
    rips_pivots piv;
    const scalar_rips_hook *hook; /* columns of dimensions >= 2 from outside */
    const scalar_rips_pool *pool; /* threads from outside, or NULL */
    const scalar_rips_pool *rows_pool; /* the same for the distances of the set-up */
    /* Set while tasks of the parallel reduction run: grow() then takes the
     * pool's lock (written only by the calling thread, between runs). */
    bool par;

    /* progress */
    uint64_t work, work_mark;
    struct timespec last_report; /* when the callback was last called */
    char stage[32];
    char last_stage[32]; /* of that call */
    int cur_dim; /* the dimension being computed; -1 while setting up */
} rips_engine;

/* One cofacet from the enumerator. */
typedef struct rips_cofacet {
    double diam;
    uint64_t index;
    uint32_t vertex; /* the vertex added */
    uint32_t kb;     /* vertices of the simplex below it: the sign is (-1)^kb */
} rips_cofacet;

/* Enumerates the cofacets of a simplex with diameter <= limit in order of
 * decreasing index (the order the emergent-pair and zero-pivot searches rely
 * on), optionally only those that add a vertex above every vertex of the
 * simplex (each simplex then arises from exactly one facet). */
typedef struct rips_cob {
    uint32_t m;  /* vertices of the simplex */
    uint32_t kb; /* of them, those below the next candidate */
    bool upper_only;
    double diam, limit;
    uint64_t idx_below, idx_above;
    uint32_t v;                     /* dense: the candidates left are v-1 down to 0 */
    uint32_t verts[RIPS_MAX_VERTS]; /* descending */
    uint64_t row[RIPS_MAX_VERTS];   /* dense: where verts[i]'s row starts */
    uint64_t pos[RIPS_MAX_VERTS], lo[RIPS_MAX_VERTS]; /* sparse cursors */
} rips_cob;

/* ------------------------------------------------------------------------
 * Errors, memory, output
 * ---------------------------------------------------------------------- */

__attribute__((format(printf, 3, 4))) static int fail(rips_engine *r, int status, const char *fmt,
                                                      ...)
{
    if (r->status == TOPOML_OK) {
        r->status = status;
        if (r->call->error && r->call->error_size) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(r->call->error, r->call->error_size, fmt, ap);
            va_end(ap);
        }
    }
    return r->status;
}

/* "1.5 GiB": a size in the unit a person reads it in. */
static const char *human_bytes(double bytes, char *buf, size_t size)
{
    static const char *unit[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    unsigned u = 0;
    while (bytes >= 1024.0 && u < 6) {
        bytes /= 1024.0;
        u++;
    }
    if (u == 0)
        snprintf(buf, size, "%.0f bytes", bytes);
    else
        snprintf(buf, size, "%.1f %s", bytes, unit[u]);
    return buf;
}

static bool mem_admit(rips_engine *r, uint64_t bytes, const char *what)
{
    if (bytes > SIZE_MAX) {
        fail(r, TOPOML_E_NOMEM, "rips: %s needs %llu bytes, more than this machine can address",
             what, (unsigned long long)bytes);
        return false;
    }
    if (r->mem_limit && bytes > r->mem_limit - r->mem_used) {
        char want[32], used[32], lim[32];
        human_bytes((double)bytes, want, sizeof want);
        human_bytes((double)r->mem_used, used, sizeof used);
        human_bytes((double)r->mem_limit, lim, sizeof lim);
        /* In a dimension, say so in the terms of the complex: the estimate
         * made before the work was too low (estimate_memory). */
        if (r->cur_dim >= 0)
            fail(r, TOPOML_E_LIMIT,
                 "rips: dimension %d stopped at %llu %s: %s more needed with %s in use, over "
                 "the memory limit of %s (%llu bytes); lower the dimension or the threshold, "
                 "or raise the memory limit",
                 r->cur_dim, (unsigned long long)r->cols.n,
                 r->cur_dim == 0 ? "edges" : "simplices to reduce", want, used, lim,
                 (unsigned long long)r->mem_limit);
        else
            fail(r, TOPOML_E_LIMIT,
                 "rips: %s needs %s (%llu bytes) more with %s in use, over the memory limit of "
                 "%s (%llu bytes)",
                 what, want, (unsigned long long)bytes, used, lim,
                 (unsigned long long)r->mem_limit);
        return false;
    }
    return true;
}

/* Blocks of 0 bytes are asked for as 1 byte (and counted so), since the
 * host's allocator need not accept 0. */
static inline uint64_t mem_size(uint64_t bytes)
{
    return bytes ? bytes : 1;
}

static void *mem_alloc(rips_engine *r, uint64_t bytes, const char *what)
{
    bytes = mem_size(bytes);
    if (!mem_admit(r, bytes, what))
        return NULL;
    void *p = r->call->alloc(r->call->host_data, (size_t)bytes);
    if (!p) {
        fail(r, TOPOML_E_NOMEM, "rips: out of memory allocating %llu bytes for %s",
             (unsigned long long)bytes, what);
        return NULL;
    }
    r->mem_used += bytes;
    return p;
}

/* Grows (or shrinks) the block p of `old` bytes (none if p is NULL) to
 * `bytes`; on failure p is untouched and still owned by the caller. */
static void *mem_resize(rips_engine *r, void *p, uint64_t old, uint64_t bytes, const char *what)
{
    old = p ? mem_size(old) : 0;
    bytes = mem_size(bytes);
    if (bytes > old && !mem_admit(r, bytes - old, what))
        return NULL;
    void *q = p ? r->call->realloc(r->call->host_data, p, (size_t)bytes)
                : r->call->alloc(r->call->host_data, (size_t)bytes);
    if (!q) {
        fail(r, TOPOML_E_NOMEM, "rips: out of memory growing %s to %llu bytes", what,
             (unsigned long long)bytes);
        return NULL;
    }
    r->mem_used = r->mem_used - old + bytes;
    return q;
}

static void mem_free(rips_engine *r, void *p, uint64_t bytes)
{
    if (p) {
        r->call->free(r->call->host_data, p);
        r->mem_used -= mem_size(bytes);
    }
}

/* Grows the array a of *cap elements of `size` bytes to hold `want`: by
 * half again as much (amortised O(1) appends), or, when that would cross
 * the memory limit, to exactly `want`, so that the limit refuses only what
 * does not fit. NULL on failure, a untouched. */
static void *grow_unlocked(rips_engine *r, void *a, uint64_t *cap, uint64_t want, uint64_t size,
                           uint64_t first, const char *what)
{
    if (want > UINT64_MAX / 2 / size) {
        fail(r, TOPOML_E_LIMIT, "rips: %s would need more than 2^63 bytes", what);
        return NULL;
    }
    uint64_t c = *cap ? *cap : first;
    while (c < want)
        c += c / 2 + 1;
    if (r->mem_limit && (c - *cap) * size > r->mem_limit - r->mem_used)
        c = want;
    void *b = mem_resize(r, a, *cap * size, c * size, what);
    if (b)
        *cap = c;
    return b;
}

/* grow, under the pool's lock while the parallel reduction's tasks run:
 * the memory count, the status and the host's allocator are shared. The
 * only allocations of those tasks come through here, and rarely (amortised
 * growth of per-worker arrays). */
static void *grow(rips_engine *r, void *a, uint64_t *cap, uint64_t want, uint64_t size,
                  uint64_t first, const char *what)
{
    if (!r->par)
        return grow_unlocked(r, a, cap, want, size, first, what);
    r->pool->lock(r->pool->user);
    void *b = grow_unlocked(r, a, cap, want, size, first, what);
    r->pool->unlock(r->pool->user);
    return b;
}

static bool vec_reserve(rips_engine *r, rips_vec *v, uint64_t extra, const char *what)
{
    if (v->cap - v->n >= extra)
        return true;
    rips_dentry *a = grow(r, v->a, &v->cap, v->n + extra, sizeof *a, 64, what);
    if (a)
        v->a = a;
    return a != NULL;
}

static void vec_free(rips_engine *r, rips_vec *v)
{
    mem_free(r, v->a, v->cap * sizeof(rips_dentry));
    v->a = NULL;
    v->n = v->cap = 0;
}

/* One interval; with generators wanted, also the edges that give its
 * values (NULL: none, TOPOML_NO_VERTEX). */
static bool emit(rips_engine *r, uint32_t dim, double birth, double death, const uint32_t *birth_edge,
                 const uint32_t *death_edge)
{
    if (r->want_gens) {
        if (r->n_bars == r->cap_gens) {
            topoml_generator *g =
                grow(r, r->gens, &r->cap_gens, r->n_bars + 1, sizeof *g, 256, "the generators");
            if (!g)
                return false;
            r->gens = g;
        }
        topoml_generator *g = &r->gens[r->n_bars];
        for (int t = 0; t < 2; t++) {
            g->birth[t] = birth_edge ? birth_edge[t] : TOPOML_NO_VERTEX;
            g->death[t] = death_edge ? death_edge[t] : TOPOML_NO_VERTEX;
        }
    }
    if (r->want_cocycles) {
        /* the rows of this bar's cocycle, if any, are already in r->coc */
        if (r->n_bars + 2 > r->cap_coc_off) {
            uint64_t *o = grow(r, r->coc_off, &r->cap_coc_off, r->n_bars + 2, sizeof *o, 256,
                               "the cocycles");
            if (!o)
                return false;
            r->coc_off = o;
        }
        r->coc_off[0] = 0;
        r->coc_off[r->n_bars + 1] = r->n_coc;
    }
    if (r->n_bars == r->cap_bars) {
        topoml_interval *b =
            grow(r, r->bars, &r->cap_bars, r->n_bars + 1, sizeof *b, 256, "the barcode");
        if (!b)
            return false;
        r->bars = b;
    }
    topoml_interval *b = &r->bars[r->n_bars++];
    b->birth = birth;
    b->death = death;
    b->dim = dim;
    b->reserved = 0;
    return true;
}

/* Calls the progress callback; false (and status CANCELLED) when asked to
 * stop. */
static bool report(rips_engine *r, uint64_t done, uint64_t total)
{
    if (!r->call->progress) {
        r->work_mark = UINT64_MAX;
        return true;
    }
    r->work_mark = r->work + RIPS_REPORT_WORK;
    /* A new stage is always told; within one, at most every
     * RIPS_REPORT_SECONDS (see there). */
    struct timespec now;
    if (timespec_get(&now, TIME_UTC) != TIME_UTC)
        memset(&now, 0, sizeof now);
    if (strcmp(r->stage, r->last_stage) == 0) {
        double since = (double)(now.tv_sec - r->last_report.tv_sec) +
                       (double)(now.tv_nsec - r->last_report.tv_nsec) * 1e-9;
        if (since >= 0 && since < RIPS_REPORT_SECONDS)
            return true;
    } else {
        memcpy(r->last_stage, r->stage, sizeof r->stage);
    }
    r->last_report = now;
    if (r->call->progress(r->call->host_data, r->stage, done, total) == 0)
        return true;
    fail(r, TOPOML_E_CANCELLED, "rips: cancelled during %s", r->stage);
    return false;
}

/* ------------------------------------------------------------------------
 * Simplices and distances
 * ---------------------------------------------------------------------- */

static inline uint64_t B(const rips_engine *r, uint64_t v, unsigned k)
{
    return r->binom[k * r->bstride + v];
}

static inline uint64_t entry_index(const rips_engine *r, uint64_t e)
{
    return e >> r->cbits;
}

static inline uint32_t entry_coef(const rips_engine *r, uint64_t e)
{
    return (uint32_t)(e & r->cmask);
}

static inline uint64_t make_entry(const rips_engine *r, uint64_t index, uint32_t coef)
{
    return index << r->cbits | coef;
}

static inline uint64_t tri(uint64_t v)
{
    return v * (v - (v > 0)) / 2;
}

/* The m vertices of the simplex `index`, descending. Vertex j (counted from
 * the bottom, 0-based) is the largest v with C(v, j+1) <= what is left of
 * the index. */
static void simplex_vertices(const rips_engine *r, uint64_t index, uint32_t m, uint32_t *out)
{
    uint64_t top = r->n;
    for (uint32_t j = m; j >= 2; j--) {
        const uint64_t *row = r->binom + (uint64_t)j * r->bstride;
        uint64_t lo = j - 1, hi = top - 1; /* C(lo, j) = 0 <= index */
        while (lo < hi) {
            uint64_t mid = hi - (hi - lo) / 2;
            if (row[mid] <= index)
                lo = mid;
            else
                hi = mid - 1;
        }
        out[m - j] = (uint32_t)lo;
        index -= row[lo];
        top = lo;
    }
    out[m - 1] = (uint32_t)index;
}

static inline double dist_dense(const rips_engine *r, uint32_t a, uint32_t b)
{
    if (a < b) {
        uint32_t t = a;
        a = b;
        b = t;
    }
    return a == b ? 0.0 : r->dist[tri(a) + b];
}

static double dist_any(const rips_engine *r, uint32_t a, uint32_t b)
{
    if (!r->sparse)
        return dist_dense(r, a, b);
    if (a == b)
        return 0.0;
    uint64_t lo = r->nb_start[a], hi = r->nb_start[a + 1];
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (r->nb_v[mid] < b)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < r->nb_start[a + 1] && r->nb_v[lo] == b ? r->nb_d[lo] : INFINITY;
}

/* The vertices (ascending) of an edge of the simplex `index` of m vertices
 * whose length is its diameter `diam`: the edge that gives a bar's value
 * (generators). Of several such edges, the first in the order of the
 * vertices, descending. */
static void diameter_edge(const rips_engine *r, uint64_t index, uint32_t m, double diam,
                          uint32_t out[2])
{
    uint32_t v[RIPS_MAX_VERTS];
    simplex_vertices(r, index, m, v);
    out[0] = out[1] = TOPOML_NO_VERTEX;
    for (uint32_t a = 0; a < m; a++)
        for (uint32_t b = a + 1; b < m; b++)
            if (dist_any(r, v[a], v[b]) == diam) {
                out[0] = v[b];
                out[1] = v[a];
                return;
            }
}

/* ------------------------------------------------------------------------
 * Cofacet enumeration
 * ---------------------------------------------------------------------- */

static inline void cob_init(const rips_engine *r, rips_cob *c, const uint32_t *verts, uint32_t m,
                            double diam, uint64_t index, double limit, bool upper_only)
{
    c->m = m;
    c->kb = m;
    c->upper_only = upper_only;
    c->diam = diam;
    c->limit = limit;
    c->idx_below = index;
    c->idx_above = 0;
    c->v = (uint32_t)r->n;
    for (uint32_t i = 0; i < m; i++) {
        c->verts[i] = verts[i];
        if (r->sparse) {
            c->lo[i] = r->nb_start[verts[i]];
            c->pos[i] = r->nb_start[verts[i] + 1];
        } else {
            c->row[i] = tri(verts[i]);
        }
    }
}

/* The candidate vertex has moved below the lowest simplex vertex above it:
 * that vertex's term moves up one position in the cofacet's index. */
static inline void cob_pass(const rips_engine *r, rips_cob *c)
{
    uint32_t w = c->verts[c->m - c->kb];
    c->idx_below -= B(r, w, c->kb);
    c->idx_above += B(r, w, c->kb + 1);
    c->kb--;
}

static inline bool cob_next_dense(const rips_engine *r, rips_cob *c, rips_cofacet *out)
{
    const double *D = r->dist;
    while (c->v > 0) {
        uint32_t v = --c->v;
        if (c->kb > 0 && v == c->verts[c->m - c->kb]) {
            if (c->upper_only) {
                c->v = 0;
                return false;
            }
            cob_pass(r, c);
            continue;
        }
        uint32_t above = c->m - c->kb, i;
        double d = c->diam, lim = c->limit;
        uint64_t tv = tri(v);
        bool ok = true;
        for (i = 0; i < above && ok; i++) {
            double x = D[c->row[i] + v];
            d = x > d ? x : d;
            ok = d <= lim;
        }
        for (; i < c->m && ok; i++) {
            double x = D[tv + c->verts[i]];
            d = x > d ? x : d;
            ok = d <= lim;
        }
        if (!ok)
            continue;
        out->diam = d;
        out->index = c->idx_above + B(r, v, c->kb + 1) + c->idx_below;
        out->vertex = v;
        out->kb = c->kb;
        return true;
    }
    return false;
}

/* Sparse mode: the cofacets are the common neighbours of all vertices,
 * found by walking every neighbour list downwards in step (leapfrog). The
 * lists hold only edges within the threshold, so every common neighbour is
 * a cofacet within it; under a lower limit (the zero-pivot searches) edges
 * beyond the limit are passed over on the way, which prunes candidates
 * early. */
static inline bool cob_next_sparse(const rips_engine *r, rips_cob *c, rips_cofacet *out)
{
    const uint32_t *V = r->nb_v;
    const double *W = r->nb_d;
    const uint32_t m = c->m;
    const double lim = c->limit;
    const bool filter = lim < r->thr;
    uint32_t cand = UINT32_MAX, agree = 0, i = 0;
    while (agree < m) {
        uint64_t p = c->pos[i], lo = c->lo[i];
        if (filter) {
            while (p > lo && (V[p - 1] > cand || W[p - 1] > lim))
                p--;
        } else {
            while (p > lo && V[p - 1] > cand)
                p--;
        }
        c->pos[i] = p;
        if (p == lo)
            return false;
        uint32_t x = V[p - 1];
        if (x == cand) {
            agree++;
        } else {
            cand = x;
            agree = 1;
        }
        i = i + 1 == m ? 0 : i + 1;
    }
    if (c->upper_only && cand < c->verts[0]) {
        c->pos[0] = c->lo[0];
        return false;
    }
    double d = c->diam;
    for (i = 0; i < m; i++) {
        double x = W[--c->pos[i]];
        d = x > d ? x : d;
    }
    while (c->kb > 0 && c->verts[c->m - c->kb] > cand)
        cob_pass(r, c);
    out->diam = d;
    out->index = c->idx_above + B(r, cand, c->kb + 1) + c->idx_below;
    out->vertex = cand;
    out->kb = c->kb;
    return true;
}

static inline bool cob_next(const rips_engine *r, rips_cob *c, rips_cofacet *out)
{
    return r->sparse ? cob_next_sparse(r, c, out) : cob_next_dense(r, c, out);
}

/* ------------------------------------------------------------------------
 * Zero-persistence apparent pairs
 *
 * (s, t) is an apparent pair when t is the pivot of the coboundary of s (its
 * first cofacet in the filtration) and s is the pivot of the boundary of t
 * (its last facet). Why that makes (s, t) a persistence pair whose column
 * needs no work: the columns left of s are simplices later than s, and a
 * reduced column is a combination of coboundaries of simplices at or left
 * of it, so of simplices later than s; none of them is a facet of t (s is
 * its last one), so no column left of s has t as an entry. The coboundary
 * of s is therefore already reduced, with pivot t. We only look for pairs
 * with diam(s) == diam(t): each search stops at its first hit, and they are
 * never reported (zero persistence).
 * ---------------------------------------------------------------------- */

/* The first cofacet of the simplex in the filtration if it has the same
 * diameter. Every cofacet has diameter >= diam, so those within `diam` are
 * exactly those of equal diameter, and the first one in decreasing index
 * order is the pivot. */
static inline bool zero_pivot_cofacet(const rips_engine *r, const uint32_t *verts, uint32_t m,
                                      double diam, uint64_t index, rips_cofacet *out)
{
    rips_cob c;
    cob_init(r, &c, verts, m, diam, index, diam, false);
    return cob_next(r, &c, out);
}

/* Which edges of a simplex have its diameter: enough to find its last
 * facet of equal diameter. cnt[i] counts them at vertex i (descending
 * order), total counts them all. */
typedef struct rips_profile {
    uint32_t total;
    uint8_t cnt[RIPS_MAX_VERTS];
} rips_profile;

/* The profile by looking every distance up (for a simplex known by index). */
static void profile_lookup(const rips_engine *r, const uint32_t *verts, uint32_t m, double diam,
                           rips_profile *p)
{
    p->total = 0;
    memset(p->cnt, 0, m);
    for (uint32_t a = 1; a < m; a++)
        for (uint32_t b = 0; b < a; b++)
            if (dist_any(r, verts[a], verts[b]) == diam) {
                p->cnt[a]++;
                p->cnt[b]++;
                p->total++;
            }
}

/* The profile of the cofacet that adds, at position pos, a vertex at
 * distances dw[i] from vertex i, with the same diameter. */
static void profile_insert(const rips_profile *p, uint32_t m, uint32_t pos, const double *dw,
                           double diam, rips_profile *out)
{
    uint32_t own = 0;
    out->total = p->total;
    for (uint32_t i = 0, j = 0; i < m; i++, j++) {
        if (j == pos)
            j++;
        uint32_t hit = dw[i] == diam;
        out->cnt[j] = (uint8_t)(p->cnt[i] + hit);
        own += hit;
    }
    out->cnt[pos] = (uint8_t)own;
    out->total += own;
}

/* The last facet of the simplex (m vertices, descending) in the filtration
 * if it has the same diameter: returns the position of the vertex to remove,
 * or -1. A facet keeps the diameter iff it keeps an edge of maximal length;
 * removing a higher vertex gives a smaller index, so the first such vertex
 * from the top gives the last facet. */
static int zero_pivot_facet(const rips_profile *p, uint32_t m, double diam)
{
    if (m == 2) /* the facets are vertices, at 0 */
        return diam == 0.0 ? 0 : -1;
    for (uint32_t i = 0; i < m; i++)
        if (p->total > p->cnt[i])
            return (int)i;
    return -1;
}

/* Index of the facet of the simplex (m vertices, descending) without
 * verts[i]: the vertices above it move down one position. */
static inline uint64_t facet_index(const rips_engine *r, const uint32_t *verts, uint32_t m,
                                   uint32_t i)
{
    uint64_t idx = 0;
    for (uint32_t j = 0; j < i; j++)
        idx += B(r, verts[j], m - 1 - j);
    for (uint32_t j = i + 1; j < m; j++)
        idx += B(r, verts[j], m - j);
    return idx;
}

/* Is t (m vertices, profile p) the cofacet of a zero apparent pair? If so,
 * gives the facet and the sign of t in its coboundary. */
static bool zero_apparent_facet(const rips_engine *r, const uint32_t *verts, uint32_t m,
                                const rips_profile *p, double diam, uint64_t index, uint64_t *facet,
                                int *sign)
{
    int i = zero_pivot_facet(p, m, diam);
    if (i < 0)
        return false;
    uint32_t fv[RIPS_MAX_VERTS];
    for (uint32_t j = 0, k = 0; j < m; j++)
        if (j != (uint32_t)i)
            fv[k++] = verts[j];
    uint64_t fidx = facet_index(r, verts, m, (uint32_t)i);
    rips_cofacet cf;
    if (!zero_pivot_cofacet(r, fv, m - 1, diam, fidx, &cf) || cf.index != index)
        return false;
    *facet = fidx;
    *sign = ((m - 1 - (uint32_t)i) & 1) ? -1 : 1;
    return true;
}

/* Distances from the vertex of the cofacet cob_next just returned to the
 * simplex's vertices, in their order: sparse mode still has them under its
 * cursors. */
static inline void cob_dists(const rips_engine *r, const rips_cob *c, uint32_t v, double *out)
{
    if (r->sparse) {
        for (uint32_t i = 0; i < c->m; i++)
            out[i] = r->nb_d[c->pos[i]];
    } else {
        for (uint32_t i = 0; i < c->m; i++)
            out[i] = dist_dense(r, v, c->verts[i]);
    }
}

/* Is s (m vertices, profile p) the facet of a zero apparent pair? */
static bool zero_apparent_cofacet(const rips_engine *r, const uint32_t *verts, uint32_t m,
                                  const rips_profile *p, double diam, uint64_t index)
{
    rips_cob c;
    rips_cofacet cf;
    cob_init(r, &c, verts, m, diam, index, diam, false);
    if (!cob_next(r, &c, &cf))
        return false;
    double dw[RIPS_MAX_VERTS];
    rips_profile q;
    cob_dists(r, &c, cf.vertex, dw);
    uint32_t pos = m - cf.kb; /* the simplex's vertices above the new one */
    profile_insert(p, m, pos, dw, diam, &q);
    return zero_pivot_facet(&q, m + 1, diam) == (int)pos;
}

/* ------------------------------------------------------------------------
 * Heaps (the working columns) and sorting
 * ---------------------------------------------------------------------- */

static inline rips_key key_make(double diam, uint64_t entry)
{
    uint64_t bits;
    memcpy(&bits, &diam, sizeof bits);
    bits &= ~(UINT64_C(1) << 63);
    return (rips_key)bits << 64 | (uint64_t)~entry;
}

static inline double key_diam(rips_key k)
{
    uint64_t bits = (uint64_t)(k >> 64);
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

static inline uint64_t key_entry(rips_key k)
{
    return ~(uint64_t)k;
}

static bool heap_reserve(rips_engine *r, rips_heap *h, uint64_t extra, const char *what)
{
    if (h->cap - h->n >= extra)
        return true;
    rips_key *a = grow(r, h->a, &h->cap, h->n + extra, sizeof *a, 256, what);
    if (a)
        h->a = a;
    return a != NULL;
}

static void heap_free(rips_engine *r, rips_heap *h)
{
    mem_free(r, h->a, h->cap * sizeof *h->a);
    memset(h, 0, sizeof *h);
}

static inline void heap_clear(rips_heap *h)
{
    h->n = 0;
}

static inline void heap_push(rips_heap *h, rips_key x)
{
    rips_key *a = h->a;
    uint64_t i = h->n++;
    while (i > 0) {
        uint64_t parent = (i - 1) / 2;
        if (!(x < a[parent]))
            break;
        a[i] = a[parent];
        i = parent;
    }
    a[i] = x;
}

/* Removes the root: the hole goes down to a leaf along the smaller children,
 * then the last element rises from there (Floyd): about log n compares
 * instead of 2 log n, since the last element usually belongs near the
 * bottom. */
static inline void heap_pop_root(rips_heap *h)
{
    rips_key *a = h->a;
    rips_key x = a[--h->n];
    uint64_t n = h->n, i = 0, c;
    while ((c = 2 * i + 1) < n) {
        c += c + 1 < n && a[c + 1] < a[c];
        a[i] = a[c];
        i = c;
    }
    while (i > 0) {
        uint64_t parent = (i - 1) / 2;
        if (!(x < a[parent]))
            break;
        a[i] = a[parent];
        i = parent;
    }
    a[i] = x;
}

/* Removes and returns the first entry with its coefficients summed; entry
 * RIPS_NONE when the heap is empty. */
static rips_dentry pop_pivot(const rips_engine *r, rips_heap *h)
{
    const uint32_t p = r->p;
    while (h->n) {
        rips_key k = h->a[0];
        heap_pop_root(h);
        uint64_t e = key_entry(k), index = entry_index(r, e);
        uint32_t coef = entry_coef(r, e);
        while (h->n && entry_index(r, key_entry(h->a[0])) == index) {
            coef += entry_coef(r, key_entry(h->a[0]));
            heap_pop_root(h);
            coef = coef >= p ? coef - p : coef;
        }
        if (coef != 0)
            return (rips_dentry){key_diam(k), make_entry(r, index, coef)};
    }
    return (rips_dentry){0.0, RIPS_NONE};
}

static inline rips_key col_order(const rips_column *c, rips_key k)
{
    return k & c->ordmask;
}

static inline unsigned col_bucket(const rips_column *c, rips_key k)
{
    rips_key x = col_order(c, k) ^ c->last;
    uint64_t hi = (uint64_t)(x >> 64), lo = (uint64_t)x;
    return hi   ? 128u - (unsigned)__builtin_clzll(hi)
           : lo ? 64u - (unsigned)__builtin_clzll(lo)
                : 0u;
}

static bool bucket_grow(rips_engine *r, rips_bucket *b)
{
    rips_key *a = grow(r, b->a, &b->cap, b->n + 1, sizeof *a, 64, "the working coboundary");
    if (a)
        b->a = a;
    return a != NULL;
}

static inline bool col_put(rips_engine *r, rips_column *c, unsigned i, rips_key k)
{
    rips_bucket *b = &c->b[i];
    if (b->n == b->cap && !bucket_grow(r, b))
        return false;
    b->a[b->n++] = k;
    c->used[i >> 6] |= UINT64_C(1) << (i & 63);
    return true;
}

static inline bool col_push(rips_engine *r, rips_column *c, rips_key k)
{
    if (col_order(c, k) < c->last)
        return true;
    return col_put(r, c, col_bucket(c, k), k);
}

static void col_clear(rips_column *c)
{
    for (unsigned w = 0; w < 3; w++)
        for (uint64_t u = c->used[w]; u; u &= u - 1)
            c->b[w * 64 + (unsigned)__builtin_ctzll(u)].n = 0;
    memset(c->used, 0, sizeof c->used);
    c->last = 0;
    c->held = false;
}

static void col_free(rips_engine *r, rips_column *c)
{
    for (unsigned i = 0; i < RIPS_BUCKETS; i++)
        mem_free(r, c->b[i].a, c->b[i].cap * sizeof(rips_key));
    memset(c, 0, sizeof *c);
}

/* Makes the next minimum the new `last` and fills bucket 0 with its copies:
 * 1; 0 when the column is empty; -1 on allocation failure (status set). Not
 * a bool and a look at the status: the status is shared with other workers
 * in the parallel reduction. */
static int col_advance(rips_engine *r, rips_column *c)
{
    unsigned i = RIPS_BUCKETS;
    for (unsigned w = 0; w < 3; w++) {
        uint64_t u = c->used[w];
        while (u) {
            unsigned j = w * 64 + (unsigned)__builtin_ctzll(u);
            if (c->b[j].n) {
                i = j;
                break;
            }
            u &= u - 1;
            c->used[w] &= ~(UINT64_C(1) << (j & 63));
        }
        if (i < RIPS_BUCKETS)
            break;
    }
    if (i == RIPS_BUCKETS)
        return 0;
    rips_bucket *b = &c->b[i];
    rips_key m = col_order(c, b->a[0]);
    for (uint64_t q = 1; q < b->n; q++) {
        rips_key o = col_order(c, b->a[q]);
        m = o < m ? o : m;
    }
    c->last = m;
    uint64_t cnt = b->n;
    b->n = 0;
    c->used[i >> 6] &= ~(UINT64_C(1) << (i & 63));
    /* every entry lands in a lower bucket, so b is not written to */
    for (uint64_t q = 0; q < cnt; q++)
        if (!col_put(r, c, col_bucket(c, b->a[q]), b->a[q]))
            return -1;
    return 1;
}

/* Removes the first entry of the column with its copies summed; entry
 * RIPS_NONE when the column is zero. False on allocation failure. */
static bool col_pop_pivot(rips_engine *r, rips_column *c, rips_dentry *out)
{
    const uint32_t p = r->p;
    for (;;) {
        rips_bucket *b0 = &c->b[0];
        if (!c->held && b0->n == 0) {
            int a = col_advance(r, c);
            if (a < 0)
                return false;
            if (a == 0) {
                *out = (rips_dentry){0.0, RIPS_NONE};
                return true;
            }
        }
        rips_key k = c->held ? c->top : b0->a[0];
        uint32_t coef = c->held ? entry_coef(r, key_entry(c->top)) : 0;
        c->held = false;
        for (uint64_t q = 0; q < b0->n; q++) {
            coef += entry_coef(r, key_entry(b0->a[q]));
            coef = coef >= p ? coef - p : coef;
        }
        b0->n = 0;
        if (coef != 0) {
            *out = (rips_dentry){key_diam(k), make_entry(r, entry_index(r, key_entry(k)), coef)};
            return true;
        }
    }
}

/* The pivot of the column, left in it. */
static bool col_get_pivot(rips_engine *r, rips_column *c, rips_dentry *out)
{
    if (!col_pop_pivot(r, c, out))
        return false;
    if (out->entry != RIPS_NONE) {
        c->held = true;
        c->top = key_make(out->diam, out->entry);
    }
    return true;
}

/* Reduction order of columns: diameter descending, index ascending. */
static inline bool col_before(rips_dentry a, rips_dentry b)
{
    return a.diam > b.diam || (a.diam == b.diam && a.entry < b.entry);
}

static void sort_insertion(rips_dentry *a, uint64_t n)
{
    for (uint64_t i = 1; i < n; i++) {
        rips_dentry x = a[i];
        uint64_t j = i;
        while (j > 0 && col_before(x, a[j - 1])) {
            a[j] = a[j - 1];
            j--;
        }
        a[j] = x;
    }
}

static void sort_heap_down(rips_dentry *a, uint64_t n, uint64_t i)
{
    rips_dentry x = a[i];
    for (;;) {
        uint64_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && col_before(a[c], a[c + 1]))
            c++;
        if (!col_before(x, a[c]))
            break;
        a[i] = a[c];
        i = c;
    }
    a[i] = x;
}

/* Introsort: quicksort, with heapsort when the recursion goes too deep so
 * that inputs full of ties or built against us stay O(n log n). */
/* Progress of a long sort on the calling thread: the entries in their
 * final place so far (those of the finished pieces), of all of them. A
 * cancel is noted (the engine's status) and takes effect after the sort. */
typedef struct rips_sort_progress {
    rips_engine *r;
    uint64_t done, total, mark;
} rips_sort_progress;

static inline void sort_placed(rips_sort_progress *sp, uint64_t n)
{
    if (!sp || n == 0)
        return;
    sp->done += n;
    if (sp->done >= sp->mark) {
        sp->mark = sp->done + RIPS_REPORT_SORT;
        if (sp->r->status == TOPOML_OK)
            report(sp->r, sp->done, sp->total);
    }
}

static void sort_columns_rec(rips_dentry *a, uint64_t n, unsigned depth, rips_sort_progress *sp)
{
    while (n > 24) {
        if (depth-- == 0) {
            for (uint64_t i = n / 2; i-- > 0;)
                sort_heap_down(a, n, i);
            for (uint64_t i = n - 1; i > 0; i--) {
                rips_dentry t = a[0];
                a[0] = a[i];
                a[i] = t;
                sort_heap_down(a, i, 0);
            }
            sort_placed(sp, n);
            return;
        }
        rips_dentry *x = &a[0], *y = &a[n / 2], *z = &a[n - 1], pivot;
        if (col_before(*y, *x)) {
            rips_dentry *t = x;
            x = y;
            y = t;
        }
        if (col_before(*z, *y))
            y = col_before(*z, *x) ? x : z;
        pivot = *y;
        uint64_t i = 0, j = n - 1;
        for (;;) {
            while (col_before(a[i], pivot))
                i++;
            while (col_before(pivot, a[j]))
                j--;
            if (i >= j)
                break;
            rips_dentry t = a[i];
            a[i] = a[j];
            a[j] = t;
            i++;
            j--;
        }
        /* [0, j] and [j+1, n) */
        uint64_t left = j + 1;
        if (left < n - left) {
            sort_columns_rec(a, left, depth, sp);
            a += left;
            n -= left;
        } else {
            sort_columns_rec(a + left, n - left, depth, sp);
            n = left;
        }
    }
    sort_insertion(a, n);
    sort_placed(sp, n);
}

static void sort_columns_reporting(rips_dentry *a, uint64_t n, rips_sort_progress *sp)
{
    unsigned depth = 2;
    for (uint64_t m = n; m > 1; m >>= 1)
        depth += 2;
    sort_columns_rec(a, n, depth, sp);
}

static void sort_columns(rips_dentry *a, uint64_t n)
{
    sort_columns_reporting(a, n, NULL);
}

/* A sort that reports under its own stage, then goes back to `stage`;
 * false when cancelled meanwhile. */
static bool sort_columns_staged(rips_engine *r, rips_dentry *a, uint64_t n, const char *sort_stage)
{
    char stage[sizeof r->stage];
    memcpy(stage, r->stage, sizeof stage);
    snprintf(r->stage, sizeof r->stage, "%s", sort_stage);
    rips_sort_progress sp = {r, 0, n, RIPS_REPORT_SORT};
    if (n > 0 && !report(r, 0, n)) /* nothing to sort: no stage, no total of 0 */
        return false;
    sort_columns_reporting(a, n, &sp);
    memcpy(r->stage, stage, sizeof stage);
    return r->status == TOPOML_OK;
}

/* Heapsort of one neighbour list by vertex (SPARSE input arrives in any
 * order); in place, so that no list needs a second copy. */
static void sort_neighbours(uint32_t *v, double *d, uint64_t n)
{
    if (n < 2)
        return;
    /* build a max-heap, then move the maximum to the back */
    for (uint64_t start = n / 2, len = n;;) {
        uint64_t i;
        if (start > 0) {
            i = --start;
        } else {
            if (--len == 0)
                break;
            uint32_t tv = v[0];
            double td = d[0];
            v[0] = v[len];
            d[0] = d[len];
            v[len] = tv;
            d[len] = td;
            i = 0;
        }
        uint32_t xv = v[i];
        double xd = d[i];
        for (;;) {
            uint64_t c = 2 * i + 1;
            if (c >= len)
                break;
            if (c + 1 < len && v[c + 1] > v[c])
                c++;
            if (v[c] <= xv)
                break;
            v[i] = v[c];
            d[i] = d[c];
            i = c;
        }
        v[i] = xv;
        d[i] = xd;
    }
}

/* ------------------------------------------------------------------------
 * Pivots of one dimension
 * ---------------------------------------------------------------------- */

/* Sized once for `count` columns: a dimension never has more pivots than
 * columns, so the load stays under 0.7 and the table never grows. */
static bool pivots_init(rips_engine *r, rips_pivots *h, uint64_t count)
{
    uint64_t cap = 16;
    unsigned lg = 4;
    while (cap / 10 * 7 < count + 1) {
        cap <<= 1;
        lg++;
    }
    h->key = mem_alloc(r, cap * sizeof *h->key, "the pivot table");
    if (!h->key)
        return false;
    h->col = mem_alloc(r, cap * sizeof *h->col, "the pivot table");
    if (!h->col) {
        mem_free(r, h->key, cap * sizeof *h->key);
        h->key = NULL;
        return false;
    }
    memset(h->key, 0xff, cap * sizeof *h->key);
    h->mask = cap - 1;
    h->shift = 64 - lg;
    return true;
}

static void pivots_free(rips_engine *r, rips_pivots *h)
{
    if (h->key) {
        mem_free(r, h->key, (h->mask + 1) * sizeof *h->key);
        mem_free(r, h->col, (h->mask + 1) * sizeof *h->col);
    }
    h->key = NULL;
    h->col = NULL;
}

/* The slot holding `index`, or the empty slot where it would go. */
static inline uint64_t pivots_slot(const rips_engine *r, const rips_pivots *h, uint64_t index)
{
    uint64_t i = (index * UINT64_C(0x9E3779B97F4A7C15)) >> h->shift;
    for (;;) {
        uint64_t k = h->key[i];
        if (k == RIPS_NONE || (k >> r->cbits) == index)
            return i;
        i = (i + 1) & h->mask;
    }
}

/* ------------------------------------------------------------------------
 * Reduction of one dimension
 * ---------------------------------------------------------------------- */

/* Adds the coboundary of s (with its coefficient) to the working
 * coboundary. */
static bool push_coboundary(rips_engine *r, rips_work *w, rips_dentry s, uint32_t m)
{
    uint32_t verts[RIPS_MAX_VERTS];
    uint64_t index = entry_index(r, s.entry);
    simplex_vertices(r, index, m, verts);
    rips_cob c;
    cob_init(r, &c, verts, m, s.diam, index, r->thr, false);
    uint32_t coef = entry_coef(r, s.entry), neg = r->p - coef;
    rips_cofacet cf;
    while (cob_next(r, &c, &cf)) {
        ++*w->work;
        if (!col_push(r, &w->cob,
                      key_make(cf.diam, make_entry(r, cf.index, cf.kb & 1 ? neg : coef))))
            return false;
    }
    return true;
}

/* Adds the coboundary of s (with its coefficient) to the working coboundary,
 * and s to the working column of V. */
static bool add_simplex_coboundary(rips_engine *r, rips_work *w, rips_dentry s, uint32_t m)
{
    if (!heap_reserve(r, &w->red, 1, "the working column"))
        return false;
    heap_push(&w->red, key_make(s.diam, s.entry));
    return push_coboundary(r, w, s, m);
}

/* Adds `factor` times the reduced column `col` (R = D V: the coboundary of
 * the column's simplex and of every simplex in its column of V).
 *
 * The working column's pivot t is its first entry, and t is also the first
 * entry of the reduced column added. So the sum has no entry before t, and
 * the entries before t that the single coboundaries bring cancel out among
 * themselves: the working column drops them on the way in (col_push). */
static bool add_column(rips_engine *r, rips_work *w, uint64_t col, uint32_t factor, uint32_t m)
{
    rips_dentry s = r->cols.a[col];
    s.entry = make_entry(r, s.entry, factor);
    if (!add_simplex_coboundary(r, w, s, m))
        return false;
    for (uint64_t i = r->voff[col]; i < r->voff[col + 1]; i++) {
        rips_dentry e = r->vent.a[i];
        uint32_t coef = (uint32_t)((uint64_t)entry_coef(r, e.entry) * factor % r->p);
        e.entry = make_entry(r, entry_index(r, e.entry), coef);
        if (!add_simplex_coboundary(r, w, e, m))
            return false;
    }
    return true;
}

/* Fills the working coboundary with the coboundary of column sigma and
 * returns its pivot in *pivot, unless the column turns out to be an emergent
 * pair first.
 *
 * Emergent pair: cofacets come in decreasing index order, so the first one
 * with diam == diam(sigma) is the pivot of the unreduced column (no cofacet
 * is smaller in diameter, and among equal ones it has the largest index).
 * If no column to the left has that pivot — none recorded in the pivot
 * table, and it is not the cofacet of a zero apparent pair, whose facet's
 * column is to the left and was skipped — the column is already reduced: a
 * pair of zero persistence, found without enumerating the rest of the
 * coboundary. Cleared columns to the left are zero and have no pivot. The
 * working coboundary is then left empty: the column is never needed in
 * reduced form except through V (empty) and its own coboundary.
 * (The parallel reduction sees a table without the pivots of the columns
 * of the same batch: its phase 2 checks the pivot against them. The
 * lock-free one, `lf`, looks in its shared table, where a column to the
 * left may not have claimed its pivot yet: there the shortcut is a guess,
 * said in *shortcut, and undone when the pivot turns out to be taken.) */
struct rips_lf;
static bool lf_unowned(const struct rips_lf *L, uint64_t index);

static bool init_coboundary(rips_engine *r, rips_work *w, rips_dentry sigma, uint32_t m,
                            rips_dentry *pivot, const struct rips_lf *lf, bool *shortcut)
{
    uint32_t verts[RIPS_MAX_VERTS];
    simplex_vertices(r, sigma.entry, m, verts);
    rips_cob c;
    cob_init(r, &c, verts, m, sigma.diam, sigma.entry, r->thr, false);
    bool check = true;
    rips_cofacet cf;
    while (cob_next(r, &c, &cf)) {
        rips_dentry e = {cf.diam, make_entry(r, cf.index, cf.kb & 1 ? r->p - 1 : 1)};
        ++*w->work;
        if (!col_push(r, &w->cob, key_make(e.diam, e.entry)))
            return false;
        if (check && cf.diam == sigma.diam) {
            check = false;
            if (lf ? lf_unowned(lf, cf.index)
                   : r->piv.key[pivots_slot(r, &r->piv, cf.index)] == RIPS_NONE) {
                uint32_t tv[RIPS_MAX_VERTS], pos = m - cf.kb;
                double dw[RIPS_MAX_VERTS];
                rips_profile ps, pt;
                cob_dists(r, &c, cf.vertex, dw);
                profile_lookup(r, verts, m, sigma.diam, &ps);
                profile_insert(&ps, m, pos, dw, sigma.diam, &pt);
                for (uint32_t j = 0, k = 0; j <= m; j++)
                    tv[j] = j == pos ? cf.vertex : verts[k++];
                uint64_t f;
                int sign;
                if (!zero_apparent_facet(r, tv, m + 1, &pt, cf.diam, cf.index, &f, &sign)) {
                    col_clear(&w->cob);
                    *pivot = e;
                    if (shortcut)
                        *shortcut = true;
                    return true;
                }
            }
        }
    }
    return col_get_pivot(r, &w->cob, pivot);
}

/* How a reduction checks in while it works: the serial one reports through
 * the engine (tick NULL); a task of the parallel one through its worker's
 * tick, which only worker 0 (the calling thread) turns into a report. */
typedef struct rips_tick {
    uint64_t mark;     /* check in when the worker's count reaches it */
    bool reports;      /* worker 0 */
    atomic_bool *stop; /* set when any task fails or is cancelled */
    uint64_t done, total;
} rips_tick;

static bool check_in(rips_engine *r, const rips_work *w, rips_tick *tick, uint64_t j,
                     uint64_t ncols)
{
    if (!tick)
        return r->work < r->work_mark || report(r, j, ncols);
    if (*w->work < tick->mark)
        return true;
    tick->mark = *w->work + RIPS_REPORT_WORK;
    if (atomic_load_explicit(tick->stop, memory_order_relaxed))
        return false;
    if (!tick->reports)
        return true;
    r->pool->lock(r->pool->user);
    bool ok = report(r, tick->done, tick->total);
    r->pool->unlock(r->pool->user);
    return ok;
}

/* Reduces column j (of m-vertex simplices) from the state in w, whose pivot
 * is *pivot, against the pivots in the table: adds reduced columns to the
 * left until the column is zero (*pivot RIPS_NONE) or its pivot belongs to
 * no column to the left — none in the table, and not the cofacet of a zero
 * apparent pair. The pivot is then *pivot, not yet claimed. Reads the
 * table, never writes it. False on failure or cancel. */
/* The factor that cancels a pivot of coefficient pcoef with a column whose
 * pivot (the same simplex) has coefficient other: -pcoef / other mod p. */
static inline uint32_t cancel_factor(const rips_engine *r, uint32_t pcoef, uint32_t other)
{
    const uint32_t p = r->p;
    return p - (uint32_t)((uint64_t)pcoef * r->inv[other] % p);
}

/* A pivot no column to the left owns may still belong to a zero apparent
 * pair (f, pivot): f's column, skipped when the columns were collected, is
 * to the left (f is the last facet of the pivot, and sigma or a column to
 * its left is a facet too) and is its own coboundary, with the pivot at
 * coefficient sign. Adding -pcoef*sign times it cancels the pivot: 1 when
 * that was done, 0 when the pivot is in no such pair (it stays), -1 when
 * adding failed (out of memory). */
static int cancel_by_apparent_pair(rips_engine *r, rips_work *w, uint64_t pidx, uint32_t pcoef,
                                   double diam, uint32_t m)
{
    uint32_t tv[RIPS_MAX_VERTS];
    uint64_t f;
    int sign;
    rips_profile pt;
    simplex_vertices(r, pidx, m + 1, tv);
    profile_lookup(r, tv, m + 1, diam, &pt);
    if (!zero_apparent_facet(r, tv, m + 1, &pt, diam, pidx, &f, &sign))
        return 0;
    uint32_t coef = sign > 0 ? r->p - pcoef : pcoef;
    return add_simplex_coboundary(r, w, (rips_dentry){diam, make_entry(r, f, coef)}, m) ? 1 : -1;
}

static bool reduce_column(rips_engine *r, rips_work *w, uint64_t j, uint32_t m, rips_dentry *pivot,
                          rips_tick *tick, uint64_t ncols)
{
    while (pivot->entry != RIPS_NONE) {
        uint64_t pidx = entry_index(r, pivot->entry);
        uint32_t pcoef = entry_coef(r, pivot->entry);
        uint64_t slot = pivots_slot(r, &r->piv, pidx);
        if (r->piv.key[slot] != RIPS_NONE) {
            /* The column to the left with this pivot: cancel ours. */
            uint32_t other = entry_coef(r, r->piv.key[slot]);
            if (!add_column(r, w, r->piv.col[slot], cancel_factor(r, pcoef, other), m))
                return false;
        } else {
            int c = cancel_by_apparent_pair(r, w, pidx, pcoef, pivot->diam, m);
            if (c < 0)
                return false;
            if (c == 0)
                return true;
        }
        /* One column can take long (millions of entries added in
         * sphere_3_192's H2): check in within it too. */
        if (!check_in(r, w, tick, j, ncols))
            return false;
        if (!col_get_pivot(r, &w->cob, pivot))
            return false;
    }
    return true;
}

/* The representative cocycle of the bar that column sigma (of m-vertex
 * simplices) gives, appended to r->coc: the reduced column of V, sigma with
 * coefficient 1 and then `v` (its other entries, summed, in filtration
 * order), as Ripser's representative-cocycles output and ripser.py's
 * do_cocycles have it. Its coboundary is the reduced column R = D V, whose
 * first entry is the pivot: so it is a cocycle of every complex of the
 * filtration before the pivot's simplex, in particular at the bar's birth,
 * and it takes the value 1 on sigma, the simplex that starts the bar. */
static bool put_cocycle(rips_engine *r, uint32_t m, rips_dentry sigma, const rips_dentry *v,
                        uint64_t nv)
{
    const uint64_t words = (nv + 1) * (uint64_t)(m + 1);
    if (r->n_coc + words > r->cap_coc) {
        uint32_t *c = grow(r, r->coc, &r->cap_coc, r->n_coc + words, sizeof *c, 1024,
                           "the cocycles");
        if (!c)
            return false;
        r->coc = c;
    }
    uint32_t *w = r->coc + r->n_coc;
    simplex_vertices(r, sigma.entry, m, w); /* a column: the index alone */
    w[m] = 1;
    w += m + 1;
    for (uint64_t i = 0; i < nv; i++, w += m + 1) {
        simplex_vertices(r, entry_index(r, v[i].entry), m, w);
        w[m] = entry_coef(r, v[i].entry);
    }
    r->n_coc += words;
    return true;
}

/* Column j (simplex sigma) is reduced, with `pivot` (RIPS_NONE: zero) in no
 * column to its left: its bar, and the pivot's slot in the table. `v`: the
 * column's reduced V without sigma, summed, in filtration order (read only
 * with cocycles asked for). */
static bool claim(rips_engine *r, uint32_t k, uint64_t j, rips_dentry sigma, rips_dentry pivot,
                  const rips_dentry *v, uint64_t nv)
{
    const uint32_t m = k + 1;
    uint32_t be[2], de[2];
    if (pivot.entry == RIPS_NONE) {
        if (r->want_gens)
            diameter_edge(r, sigma.entry, m, sigma.diam, be);
        if (r->want_cocycles && !put_cocycle(r, m, sigma, v, nv))
            return false;
        return emit(r, k, sigma.diam, INFINITY, r->want_gens ? be : NULL, NULL);
    }
    uint64_t pidx = entry_index(r, pivot.entry);
    if (pivot.diam > sigma.diam) {
        if (r->want_cocycles && !put_cocycle(r, m, sigma, v, nv))
            return false;
        if (r->want_gens) {
            diameter_edge(r, sigma.entry, m, sigma.diam, be);
            diameter_edge(r, pidx, m + 1, pivot.diam, de);
        }
        if (!emit(r, k, sigma.diam, pivot.diam, r->want_gens ? be : NULL, r->want_gens ? de : NULL))
            return false;
    }
    uint64_t slot = pivots_slot(r, &r->piv, pidx);
    r->piv.key[slot] = pivot.entry;
    r->piv.col[slot] = (uint32_t)j;
    return true;
}

/* Appends the working column of V, its copies of each simplex summed, to
 * `to`. */
static bool store_v(rips_engine *r, rips_heap *red, rips_vec *to)
{
    for (;;) {
        rips_dentry e = pop_pivot(r, red);
        if (e.entry == RIPS_NONE)
            return true;
        if (!vec_reserve(r, to, 1, "the reduction matrix"))
            return false;
        to->a[to->n++] = e;
    }
}

/* The columns in r->cols from j0 on, one after the other, on the calling
 * thread. */
static bool reduce_serial(rips_engine *r, uint32_t k, uint64_t j0)
{
    const uint32_t m = k + 1;
    const uint64_t ncols = r->cols.n;
    rips_work *w = &r->w0;
    for (uint64_t j = j0; j < ncols; j++) {
        if ((j % RIPS_REPORT_COLUMNS == 0 || r->work >= r->work_mark) && !report(r, j, ncols))
            return false;
        rips_dentry sigma = r->cols.a[j], pivot;
        col_clear(&w->cob);
        heap_clear(&w->red);
        if (!init_coboundary(r, w, sigma, m, &pivot, NULL, NULL) ||
            !reduce_column(r, w, j, m, &pivot, NULL, ncols))
            return false;
        /* V of a zero column is never added to another: kept only for the
         * cocycle */
        const uint64_t v0 = r->vent.n;
        if ((pivot.entry != RIPS_NONE || r->want_cocycles) && !store_v(r, &w->red, &r->vent))
            return false;
        /* (no V stored yet: a NULL array, to which no offset is added) */
        if (!claim(r, k, j, sigma, pivot, r->vent.a ? r->vent.a + v0 : NULL, r->vent.n - v0))
            return false;
        if (pivot.entry == RIPS_NONE)
            r->vent.n = v0;
        r->voff[j + 1] = r->vent.n;
    }
    return true;
}

/* ---- The same reduction in parallel: batches in two phases ----
 *
 * The columns go in batches of consecutive columns (scalar_rips_pool.batch,
 * else a size that adapts, below). Phase 1, on the pool, one task a column: the column is
 * reduced (reduce_column) against the pivot table as it stands at the
 * start of the batch — the pivots of the batches before, whose columns are
 * finished; the table, the columns and V are only read — until it is zero
 * or its pivot is in none of them. What is kept is that pivot and the
 * column of V, summed: not the working coboundary, which can be large.
 * Phase 2, on the calling thread, in column order: a column whose pivot no
 * earlier column of the batch has claimed is finished as it is (the common
 * case); one whose pivot was claimed meanwhile — a conflict, an emergent
 * pair's pivot included — is resumed: its working coboundary is rebuilt
 * from the coboundaries of its simplex and of its V, and reduced further
 * against the whole table, as the serial reduction would.
 *
 * Why the bars are the serial ones, bit for bit: every column operation,
 * in either phase, adds a reduced column to the left to a later one, so
 * the result is a reduction R = D V of the same matrix; the pivot a column
 * has once no column to its left shares it is fixed by the ranks of the
 * lower-left submatrices of D, whatever additions led there; so the pairs
 * are the serial ones, and phase 2 emits them in the same order. */

/* Columns per batch by default: where a batch begins, and its bounds.
 * After each batch the size adapts to what phase 2 cost, in units of work
 * (cofacets enumerated) against phase 1: the serial phase more than a
 * 1/(4T) share of it (T threads) halves the size — in a dimension with few
 * columns and long reductions (H1 of a large sparse complex) most of the
 * work is in columns that collide, and their rest runs serially — and
 * less than 1/(16T) doubles it, so that a dimension of many cheap columns
 * starts the threads seldom (each batch starts and joins them). A batch
 * whose phase 1 is under RIPS_BATCH_WORK units (about a millisecond) is
 * not made smaller, and one under a quarter of that grows: starting the
 * threads would cost more than the batch's work. Either way
 * the bars are the same; only the time changes (docs/notes/bench-cpu.md,
 * "A parallel reduction"). */
/* Under a memory limit the workers' own working columns and V come on top
 * of what the serial reduction holds, and how much each worker holds at a
 * given moment depends on the scheduling. So a batch starts on the pool
 * only while the limit leaves RIPS_PAR_ROOM bytes a thread beyond what the
 * serial reduction holds (the engine's memory less the workers'); closer to
 * the limit the calling thread reduces the rest of the dimension alone, as
 * the serial engine would: whether a limit is kept then does not depend on
 * the threads. A worker that hits the limit all the same (phase 1) leads
 * to the same. */
#define RIPS_PAR_ROOM (UINT64_C(8) << 20)
#define RIPS_BATCH_FIRST 256u
#define RIPS_BATCH_MAX 65536u
#define RIPS_BATCH_WORK 65536u

typedef struct rips_pending {
    rips_dentry pivot; /* RIPS_NONE: the column is zero */
    uint64_t off, len; /* its V: vstore[worker].a[off .. off + len) */
    uint32_t worker;
} rips_pending;

typedef struct rips_red {
    rips_engine *r;
    uint32_t k;
    uint64_t b0, ncols; /* the batch starts at column b0 */
    rips_work *w;       /* one per worker */
    uint64_t *work;     /* one per worker */
    rips_tick *tick;    /* one per worker */
    rips_vec *vstore;   /* one per worker: the V of its columns of the batch */
    rips_pending *pend; /* one per column of the batch */
    atomic_bool stop;
} rips_red;

static void reduce_task(void *arg, uint32_t t, uint32_t worker)
{
    rips_red *P = arg;
    rips_engine *r = P->r;
    if (atomic_load_explicit(&P->stop, memory_order_relaxed))
        return;
    const uint64_t j = P->b0 + t;
    rips_work *w = &P->w[worker];
    rips_pending *q = &P->pend[t];
    rips_vec *v = &P->vstore[worker];
    rips_dentry pivot = {0.0, RIPS_NONE};
    col_clear(&w->cob);
    heap_clear(&w->red);
    q->worker = worker;
    q->off = v->n;
    bool ok = init_coboundary(r, w, r->cols.a[j], P->k + 1, &pivot, NULL, NULL) &&
              reduce_column(r, w, j, P->k + 1, &pivot, &P->tick[worker], P->ncols) &&
              ((pivot.entry == RIPS_NONE && !r->want_cocycles) || store_v(r, &w->red, v));
    q->pivot = pivot;
    q->len = v->n - q->off;
    if (!ok)
        atomic_store(&P->stop, true);
}

/* Phase 2 for column j = b0 + t (see above). */
static bool finish_column(rips_engine *r, rips_red *P, uint64_t t, uint64_t *resumed)
{
    const uint32_t k = P->k, m = k + 1;
    const uint64_t j = P->b0 + t;
    const rips_pending *q = &P->pend[t];
    const rips_vec *v = &P->vstore[q->worker];
    rips_dentry sigma = r->cols.a[j], pivot = q->pivot;
    if (pivot.entry == RIPS_NONE ||
        r->piv.key[pivots_slot(r, &r->piv, entry_index(r, pivot.entry))] == RIPS_NONE) {
        if (!claim(r, k, j, sigma, pivot, v->a ? v->a + q->off : NULL, q->len))
            return false;
        if (pivot.entry == RIPS_NONE || q->len == 0)
            return true;
        if (!vec_reserve(r, &r->vent, q->len, "the reduction matrix"))
            return false;
        memcpy(r->vent.a + r->vent.n, v->a + q->off, q->len * sizeof *v->a);
        r->vent.n += q->len;
        return true;
    }
    ++*resumed;
    rips_work *w = &r->w0;
    col_clear(&w->cob);
    heap_clear(&w->red);
    if (!push_coboundary(r, w, (rips_dentry){sigma.diam, make_entry(r, sigma.entry, 1)}, m))
        return false;
    for (uint64_t i = 0; i < q->len; i++)
        if (!add_simplex_coboundary(r, w, v->a[q->off + i], m))
            return false;
    rips_dentry again;
    if (!col_get_pivot(r, &w->cob, &again))
        return false;
    if (again.entry != pivot.entry)
        return fail(r, TOPOML_E_INTERNAL,
                    "rips: dimension %u, column %llu: the rebuilt column has another pivot", k,
                    (unsigned long long)j),
               false;
    if (!reduce_column(r, w, j, m, &pivot, NULL, P->ncols))
        return false;
    const uint64_t v0 = r->vent.n;
    if ((pivot.entry != RIPS_NONE || r->want_cocycles) && !store_v(r, &w->red, &r->vent))
        return false;
    if (!claim(r, k, j, sigma, pivot, r->vent.a ? r->vent.a + v0 : NULL, r->vent.n - v0))
        return false;
    if (pivot.entry == RIPS_NONE)
        r->vent.n = v0;
    return true;
}

static bool reduce_parallel(rips_engine *r, uint32_t k)
{
    const scalar_rips_pool *pool = r->pool;
    const uint32_t T = pool->n_threads;
    const uint64_t ncols = r->cols.n;
    const uint64_t B_max = pool->batch ? pool->batch : RIPS_BATCH_MAX;
    const uint64_t nb = ncols < B_max ? ncols : B_max;
    const uint64_t B_min = 8u * T < B_max ? 8u * T : B_max;
    uint64_t B = pool->batch ? pool->batch : RIPS_BATCH_FIRST;
    /* rips_work first: it holds 128-bit keys, and the host's blocks are
     * aligned for any type */
    const uint64_t bytes = (uint64_t)T * (sizeof(rips_work) + sizeof(uint64_t) + sizeof(rips_tick) +
                                          sizeof(rips_vec)) +
                           nb * sizeof(rips_pending);
    rips_red P;
    memset(&P, 0, sizeof P);
    char *mem = mem_alloc(r, bytes, "the parallel reduction");
    if (!mem)
        return false;
    memset(mem, 0, (size_t)bytes);
    P.r = r;
    P.k = k;
    P.ncols = ncols;
    P.w = (rips_work *)(void *)mem;
    P.work = (uint64_t *)(void *)(P.w + T);
    P.tick = (rips_tick *)(void *)(P.work + T);
    P.vstore = (rips_vec *)(void *)(P.tick + T);
    P.pend = (rips_pending *)(void *)(P.vstore + T);
    atomic_init(&P.stop, false);
    for (uint32_t w = 0; w < T; w++) {
        P.w[w].cob.ordmask = r->w0.cob.ordmask;
        P.w[w].work = &P.work[w];
        P.tick[w] = (rips_tick){RIPS_REPORT_WORK, w == 0, &P.stop, 0, ncols};
    }
    uint64_t counted = 0, resumed = 0, serial_from = ncols;
    bool ok = true;
    for (uint64_t b0 = 0, bn; ok && b0 < ncols; b0 += bn) {
        bn = ncols - b0 < B ? ncols - b0 : B;
        uint64_t held = 0; /* bytes the workers hold */
        for (uint32_t w = 0; w < T; w++) {
            for (unsigned i = 0; i < RIPS_BUCKETS; i++)
                held += P.w[w].cob.b[i].a ? mem_size(P.w[w].cob.b[i].cap * sizeof(rips_key)) : 0;
            held += P.w[w].red.a ? mem_size(P.w[w].red.cap * sizeof(rips_key)) : 0;
            held += P.vstore[w].a ? mem_size(P.vstore[w].cap * sizeof(rips_dentry)) : 0;
        }
        if (r->mem_limit && r->mem_limit - (r->mem_used - held) < (uint64_t)T * RIPS_PAR_ROOM) {
            serial_from = b0;
            break;
        }
        if (!report(r, b0, ncols)) {
            ok = false;
            break;
        }
        P.b0 = b0;
        for (uint32_t w = 0; w < T; w++) {
            P.vstore[w].n = 0;
            P.tick[w].done = b0;
        }
        r->par = true;
        pool->run(pool->user, (uint32_t)bn, reduce_task, &P);
        r->par = false;
        uint64_t sum = 0;
        for (uint32_t w = 0; w < T; w++)
            sum += P.work[w];
        const uint64_t work1 = sum - counted;
        r->work += work1;
        counted = sum;
        if (r->status == TOPOML_E_LIMIT) {
            /* A worker hit the memory limit (RIPS_PAR_ROOM): the batch's
             * results are dropped (none of its columns is claimed yet), and
             * the calling thread reduces it and the rest alone. */
            r->status = TOPOML_OK;
            serial_from = b0;
            break;
        }
        ok = r->status == TOPOML_OK;
        const uint64_t before = r->work;
        for (uint64_t t = 0; ok && t < bn; t++) {
            uint64_t j = b0 + t;
            if ((j % RIPS_REPORT_COLUMNS == 0 || r->work >= r->work_mark) && !report(r, j, ncols))
                ok = false;
            ok = ok && finish_column(r, &P, t, &resumed);
            r->voff[j + 1] = r->vent.n;
        }
        const uint64_t work2 = r->work - before;
        if (!pool->batch && work2 * 4 * T > work1 && work1 >= RIPS_BATCH_WORK)
            B = B / 2 > B_min ? B / 2 : B_min;
        else if (!pool->batch && (work2 * 16 * T < work1 || work1 < RIPS_BATCH_WORK / 4))
            B = 2 * B < B_max ? 2 * B : B_max;
    }
    for (uint32_t w = 0; w < T; w++) {
        col_free(r, &P.w[w].cob);
        heap_free(r, &P.w[w].red);
        vec_free(r, &P.vstore[w]);
    }
    mem_free(r, mem, bytes);
    if (pool->resumed)
        *pool->resumed += resumed;
    return ok && reduce_serial(r, k, serial_from);
}

/* ---- The same reduction lock-free (Morozov and Nigmetov) ----
 *
 * D. Morozov and A. Nigmetov, "Towards lockfree persistent homology"
 * (SPAA 2020), as giotto-ph reduces: the workers take the columns in
 * chunks of RIPS_LF_CHUNK consecutive ones, in order, and reduce each to
 * the end with no serial phase. The pivots are in a table of their own
 * (rips_lf): open addressing whose keys (pivot indices) are set once by
 * compare-and-swap and never removed, each with an atomic owner, the column
 * that has that pivot now. Column j with pivot t:
 *  - t owned by a column o < j: j adds o's reduced column, as published in
 *    records[o] (below), and goes on with its next pivot;
 *  - t owned by no column, and not the cofacet of a zero apparent pair: j
 *    publishes its reduced column (its pivot and its V) in records[j], then
 *    sets the owner from none to j by compare-and-swap;
 *  - t owned by a column o > j: the same compare-and-swap from o to j. On
 *    success, o has lost its pivot, and this worker takes o on: rebuilds
 *    o's working coboundary from o's simplex and V and reduces it further.
 * A compare-and-swap that fails (the owner changed meanwhile) is retried
 * against the new owner; one that finds a smaller column there goes back to
 * adding. So the owner of a pivot only ever decreases: the column with the
 * smaller index wins, as in the serial reduction, where the left one was
 * reduced first. When every worker is done each column is zero or owns its
 * pivot alone, and only columns to the left were ever added to a column:
 * a reduction R = D V of the same matrix, so the pairs are the serial ones
 * (the argument of "batches in two phases" above), emitted in column order
 * at the end.
 *
 * A published column is never changed or freed until the dimension ends
 * (each worker's records go to its own arena of blocks, never moved), so a
 * reader needs no lock and no reclamation scheme: it reads the owner, then
 * the owner's record, and uses it only if the record's pivot is t (else the
 * owner has lost t since and the reader reads the owner again). A record
 * whose owner lost its pivot meanwhile is still a reduced column to the
 * left with pivot t, so adding it is still right. Publishing (a release
 * store) comes before the compare-and-swap, and readers load with acquire,
 * so whoever sees a column as an owner sees its record.
 *
 * What it does not give: the serial V. A column may add a column to its
 * left that is reduced further later, so V, and the cocycles read from it,
 * can differ from the reference's; with cocycles asked for, the batched
 * reduction runs instead (its V is the reference's). So does it under a
 * memory limit too close for RIPS_PAR_ROOM a thread; a limit hit all the
 * same drops the work and the calling thread reduces the dimension alone.
 * The table is sized for twice the columns: each pivot ever claimed stays a
 * key, and columns that lose theirs claim another; should it fill all the
 * same, the batched reduction redoes the dimension. */
#define RIPS_LF_CHUNK 8u
#define RIPS_LF_BLOCK (UINT64_C(1) << 16)
#define RIPS_LF_NOBODY UINT64_MAX
#define RIPS_LF_LINE 8u /* uint64_t to a cache line */

typedef struct rips_rec {
    rips_dentry pivot; /* RIPS_NONE: the column is zero */
    uint64_t len;      /* V without the column's simplex, summed, in filtration order */
    rips_dentry v[];
} rips_rec;

typedef struct rips_block {
    struct rips_block *next;
    uint64_t bytes, used;
} rips_block;

/* The record of a column that reduced to zero (shared by all of them). */
static const rips_rec lf_zero = {.pivot = {0.0, RIPS_NONE}, .len = 0};

typedef struct rips_lf {
    rips_engine *r;
    uint32_t k;
    uint64_t ncols;
    _Atomic uint64_t *key;   /* pivot index, RIPS_NONE: empty */
    _Atomic uint64_t *owner; /* column, RIPS_LF_NOBODY: none */
    uint64_t mask;
    unsigned shift;
    atomic_uint_fast64_t keys, next, displaced;
    _Atomic(const rips_rec *) *records; /* per column: its last published one */
    rips_work *w;        /* one per worker */
    uint64_t *work;      /* one per worker, RIPS_LF_LINE apart */
    rips_tick *tick;     /* one per worker */
    rips_vec *scratch;   /* one per worker: V on its way to a record */
    rips_block **blocks; /* one per worker: its arena */
    atomic_bool stop, full;
} rips_lf;

static inline uint64_t lf_hash(const rips_lf *L, uint64_t index)
{
    return (index * UINT64_C(0x9E3779B97F4A7C15)) >> L->shift;
}

/* The slot of pivot `index`, or -1 when it was never claimed. */
static int64_t lf_find(const rips_lf *L, uint64_t index)
{
    for (uint64_t i = lf_hash(L, index);; i = (i + 1) & L->mask) {
        uint64_t k = atomic_load_explicit(&L->key[i], memory_order_acquire);
        if (k == index)
            return (int64_t)i;
        if (k == RIPS_NONE)
            return -1;
    }
}

static bool lf_unowned(const rips_lf *L, uint64_t index)
{
    int64_t s = lf_find(L, index);
    return s < 0 || atomic_load_explicit(&L->owner[s], memory_order_acquire) == RIPS_LF_NOBODY;
}

/* The slot of pivot `index`, made if need be; -1 when the table is full. */
static int64_t lf_insert(rips_lf *L, uint64_t index)
{
    for (uint64_t i = lf_hash(L, index);; i = (i + 1) & L->mask) {
        uint64_t k = atomic_load_explicit(&L->key[i], memory_order_acquire);
        if (k == RIPS_NONE) {
            if (atomic_fetch_add(&L->keys, 1) >= L->mask / 10 * 8)
                return -1;
            uint64_t none = RIPS_NONE;
            if (atomic_compare_exchange_strong(&L->key[i], &none, index))
                return (int64_t)i;
            atomic_fetch_sub(&L->keys, 1);
            k = none;
        }
        if (k == index)
            return (int64_t)i;
    }
}

/* Room for a record of `len` entries in the worker's arena (blocks are
 * never moved or freed before the dimension ends). */
static rips_rec *lf_record(rips_lf *L, uint32_t worker, uint64_t len)
{
    rips_engine *r = L->r;
    const uint64_t need = sizeof(rips_rec) + len * sizeof(rips_dentry);
    rips_block *b = L->blocks[worker];
    if (!b || b->bytes - b->used < need) {
        uint64_t bytes = sizeof(rips_block) + (need > RIPS_LF_BLOCK ? need : RIPS_LF_BLOCK);
        r->pool->lock(r->pool->user);
        rips_block *nb = mem_alloc(r, bytes, "the published columns");
        r->pool->unlock(r->pool->user);
        if (!nb)
            return NULL;
        *nb = (rips_block){b, bytes - sizeof(rips_block), 0};
        L->blocks[worker] = b = nb;
    }
    rips_rec *rec = (rips_rec *)(void *)((char *)(b + 1) + b->used);
    b->used += need;
    return rec;
}

/* Adds `factor` times the published column `rec` of column `col`. */
static bool lf_add(rips_engine *r, rips_work *w, uint64_t col, const rips_rec *rec,
                   uint32_t factor, uint32_t m)
{
    rips_dentry s = r->cols.a[col];
    s.entry = make_entry(r, s.entry, factor);
    if (!add_simplex_coboundary(r, w, s, m))
        return false;
    for (uint64_t i = 0; i < rec->len; i++) {
        rips_dentry e = rec->v[i];
        uint32_t coef = (uint32_t)((uint64_t)entry_coef(r, e.entry) * factor % r->p);
        e.entry = make_entry(r, entry_index(r, e.entry), coef);
        if (!add_simplex_coboundary(r, w, e, m))
            return false;
    }
    return true;
}

/* The working columns of column j rebuilt from its simplex and V (`rec`,
 * or none): its pivot in *pivot. */
static bool lf_rebuild(rips_engine *r, rips_work *w, uint64_t j, const rips_rec *rec, uint32_t m,
                       rips_dentry *pivot)
{
    col_clear(&w->cob);
    heap_clear(&w->red);
    rips_dentry sigma = r->cols.a[j];
    if (!push_coboundary(r, w, (rips_dentry){sigma.diam, make_entry(r, sigma.entry, 1)}, m))
        return false;
    for (uint64_t i = 0; rec && i < rec->len; i++)
        if (!add_simplex_coboundary(r, w, rec->v[i], m))
            return false;
    return col_get_pivot(r, &w->cob, pivot);
}

static bool lf_internal(rips_lf *L, uint64_t j, const char *what)
{
    rips_engine *r = L->r;
    r->pool->lock(r->pool->user);
    fail(r, TOPOML_E_INTERNAL, "rips: dimension %u, column %llu: %s", L->k,
         (unsigned long long)j, what);
    r->pool->unlock(r->pool->user);
    return false;
}

/* Column j reduced until it is zero or owns its pivot, and with it every
 * column it takes a pivot from (see above). */
static bool lf_column(rips_lf *L, uint32_t worker, uint64_t j)
{
    rips_engine *r = L->r;
    const uint32_t m = L->k + 1;
    rips_work *w = &L->w[worker];
    rips_vec *sv = &L->scratch[worker];
    rips_dentry pivot;
    bool partial = false; /* the emergent-pair shortcut left the coboundary out */
    col_clear(&w->cob);
    heap_clear(&w->red);
    if (!init_coboundary(r, w, r->cols.a[j], m, &pivot, L, &partial))
        return false;
    for (;;) {
        while (pivot.entry != RIPS_NONE) {
            const uint64_t pidx = entry_index(r, pivot.entry);
            const uint32_t pcoef = entry_coef(r, pivot.entry);
            int64_t s = lf_find(L, pidx);
            uint64_t o = s < 0 ? RIPS_LF_NOBODY
                               : atomic_load_explicit(&L->owner[s], memory_order_acquire);
            /* j takes it: from a column to its right, or from nobody when
             * the emergent-pair shortcut (which has made the apparent-pair
             * test) found it */
            if (o != RIPS_LF_NOBODY ? o > j : partial)
                break;
            if (partial) {
                if (!lf_rebuild(r, w, j, NULL, m, &pivot))
                    return false;
                partial = false;
                continue;
            }
            if (o != RIPS_LF_NOBODY) {
                const rips_rec *rec = atomic_load_explicit(&L->records[o], memory_order_acquire);
                if (!rec || rec->pivot.entry == RIPS_NONE ||
                    entry_index(r, rec->pivot.entry) != pidx)
                    continue; /* o lost t meanwhile: read the owner again */
                uint32_t other = entry_coef(r, rec->pivot.entry);
                if (!lf_add(r, w, o, rec, cancel_factor(r, pcoef, other), m))
                    return false;
            } else {
                int c = cancel_by_apparent_pair(r, w, pidx, pcoef, pivot.diam, m);
                if (c < 0)
                    return false;
                if (c == 0)
                    break; /* nobody's: j takes it */
            }
            if (!check_in(r, w, &L->tick[worker], j, L->ncols))
                return false;
            if (!col_get_pivot(r, &w->cob, &pivot))
                return false;
        }
        if (pivot.entry == RIPS_NONE) {
            atomic_store_explicit(&L->records[j], &lf_zero, memory_order_release);
            return true;
        }
        /* Publish j's reduced column, then claim its pivot. */
        sv->n = 0;
        if (!store_v(r, &w->red, sv))
            return false;
        rips_rec *rec = lf_record(L, worker, sv->n);
        if (!rec)
            return false;
        rec->pivot = pivot;
        rec->len = sv->n;
        if (sv->n)
            memcpy(rec->v, sv->a, sv->n * sizeof *sv->a);
        atomic_store_explicit(&L->records[j], rec, memory_order_release);
        int64_t s = lf_insert(L, entry_index(r, pivot.entry));
        if (s < 0) {
            atomic_store(&L->full, true);
            atomic_store(&L->stop, true);
            return false;
        }
        uint64_t cur = atomic_load_explicit(&L->owner[s], memory_order_acquire);
        while ((cur == RIPS_LF_NOBODY || cur > j) &&
               !atomic_compare_exchange_weak_explicit(&L->owner[s], &cur, j,
                                                      memory_order_acq_rel,
                                                      memory_order_acquire))
            ;
        if (cur == RIPS_LF_NOBODY)
            return true;
        if (cur < j) {
            /* A column to the left took t first: go on adding. */
            if (!heap_reserve(r, &w->red, rec->len, "the working column"))
                return false;
            for (uint64_t i = 0; i < rec->len; i++)
                heap_push(&w->red, key_make(rec->v[i].diam, rec->v[i].entry));
            continue;
        }
        /* j took t from cur, which now has to be reduced further. */
        atomic_fetch_add_explicit(&L->displaced, 1, memory_order_relaxed);
        j = cur;
        const rips_rec *old = atomic_load_explicit(&L->records[j], memory_order_acquire);
        if (!lf_rebuild(r, w, j, old, m, &pivot))
            return false;
        if (pivot.entry != old->pivot.entry)
            return lf_internal(L, j, "the rebuilt column has another pivot");
        partial = false;
    }
}

static void lf_task(void *arg, uint32_t t, uint32_t worker)
{
    (void)t;
    rips_lf *L = arg;
    for (;;) {
        if (atomic_load_explicit(&L->stop, memory_order_relaxed))
            return;
        uint64_t j0 = atomic_fetch_add_explicit(&L->next, RIPS_LF_CHUNK, memory_order_relaxed);
        if (j0 >= L->ncols)
            return;
        L->tick[worker].done = j0;
        uint64_t j1 = j0 + RIPS_LF_CHUNK < L->ncols ? j0 + RIPS_LF_CHUNK : L->ncols;
        for (uint64_t j = j0; j < j1; j++)
            if (!lf_column(L, worker, j)) {
                atomic_store(&L->stop, true);
                return;
            }
    }
}

/* The lock-free reduction of dimension k. *fallback set (and true
 * returned) when it gave up before emitting anything: the table filled
 * (RIPS_LF_FULL), or a worker hit the memory limit (RIPS_LF_LIMIT); r is
 * then as it was. */
enum { RIPS_LF_FULL = 1, RIPS_LF_LIMIT = 2 };
static bool reduce_lockfree(rips_engine *r, uint32_t k, int *fallback)
{
    const scalar_rips_pool *pool = r->pool;
    const uint32_t T = pool->n_threads;
    const uint64_t ncols = r->cols.n;
    uint64_t cap = 16;
    unsigned lg = 4;
    while (cap / 10 * 7 < 2 * ncols + 1) {
        cap <<= 1;
        lg++;
    }
    /* each worker's count of work on a cache line of its own: it is
     * written for every cofacet */
    const uint64_t bytes = (uint64_t)T * (sizeof(rips_work) + RIPS_LF_LINE * sizeof(uint64_t) +
                                          sizeof(rips_tick) + sizeof(rips_vec) +
                                          sizeof(rips_block *)) +
                           2 * cap * sizeof(uint64_t) + ncols * sizeof(void *);
    char *mem = mem_alloc(r, bytes, "the lock-free reduction");
    if (!mem)
        return false;
    memset(mem, 0, (size_t)bytes);
    rips_lf L;
    memset(&L, 0, sizeof L);
    L.r = r;
    L.k = k;
    L.ncols = ncols;
    L.w = (rips_work *)(void *)mem;
    L.work = (uint64_t *)(void *)(L.w + T);
    L.tick = (rips_tick *)(void *)(L.work + RIPS_LF_LINE * T);
    L.scratch = (rips_vec *)(void *)(L.tick + T);
    L.blocks = (rips_block **)(void *)(L.scratch + T);
    L.key = (_Atomic uint64_t *)(void *)(L.blocks + T);
    L.owner = L.key + cap;
    L.records = (_Atomic(const rips_rec *) *)(void *)(L.owner + cap);
    L.mask = cap - 1;
    L.shift = 64 - lg;
    for (uint64_t i = 0; i < cap; i++) {
        atomic_init(&L.key[i], RIPS_NONE);
        atomic_init(&L.owner[i], RIPS_LF_NOBODY);
    }
    for (uint64_t j = 0; j < ncols; j++)
        atomic_init(&L.records[j], NULL);
    atomic_init(&L.keys, 0);
    atomic_init(&L.next, 0);
    atomic_init(&L.displaced, 0);
    atomic_init(&L.stop, false);
    atomic_init(&L.full, false);
    for (uint32_t w = 0; w < T; w++) {
        L.w[w].cob.ordmask = r->w0.cob.ordmask;
        L.w[w].work = &L.work[RIPS_LF_LINE * w];
        L.tick[w] = (rips_tick){RIPS_REPORT_WORK, w == 0, &L.stop, 0, ncols};
    }
    bool ok = report(r, 0, ncols);
    if (ok) {
        r->par = true;
        pool->run(pool->user, T, lf_task, &L);
        r->par = false;
        for (uint32_t w = 0; w < T; w++)
            r->work += L.work[RIPS_LF_LINE * w];
        *fallback = atomic_load(&L.full)              ? RIPS_LF_FULL
                    : r->status == TOPOML_E_LIMIT ? RIPS_LF_LIMIT
                                                  : 0;
        if (*fallback)
            r->status = TOPOML_OK;
        ok = r->status == TOPOML_OK;
    }
    /* Every column is zero or owns its pivot alone: the bars, in column
     * order, and the pivots for clearing the next dimension. (Progress:
     * every column is reduced by now, and what was reported must not go
     * back.) */
    for (uint64_t j = 0; ok && *fallback == 0 && j < ncols; j++) {
        if ((j % RIPS_REPORT_COLUMNS == 0 || r->work >= r->work_mark) &&
            !report(r, ncols, ncols)) {
            ok = false;
            break;
        }
        const rips_rec *rec = atomic_load(&L.records[j]);
        int64_t s = rec && rec->pivot.entry != RIPS_NONE
                        ? lf_find(&L, entry_index(r, rec->pivot.entry))
                        : -1;
        if (!rec || (rec->pivot.entry != RIPS_NONE && (s < 0 || atomic_load(&L.owner[s]) != j))) {
            ok = lf_internal(&L, j, "not reduced, or its pivot owned by another column");
            break;
        }
        ok = claim(r, k, j, r->cols.a[j], rec->pivot, NULL, 0);
        r->voff[j + 1] = 0;
    }
    for (uint32_t w = 0; w < T; w++) {
        col_free(r, &L.w[w].cob);
        heap_free(r, &L.w[w].red);
        vec_free(r, &L.scratch[w]);
        for (rips_block *b = L.blocks[w], *nx; b; b = nx) {
            nx = b->next;
            mem_free(r, b, sizeof(rips_block) + b->bytes);
        }
    }
    mem_free(r, mem, bytes);
    if (pool->displaced)
        *pool->displaced += atomic_load(&L.displaced);
    return ok;
}

/* Which parallel reduction dimension k gets (scalar_rips_pool.scheme). The
 * lock-free one never with cocycles (its V is not the reference's), nor
 * under a memory limit that leaves less than RIPS_PAR_ROOM a thread. */
static bool use_lockfree(const rips_engine *r, uint64_t ncols)
{
    const scalar_rips_pool *pool = r->pool;
    (void)ncols;
    if (r->want_cocycles || pool->scheme == SCALAR_RIPS_SCHEME_BATCHED)
        return false;
    if (r->mem_limit && r->mem_limit - r->mem_used < (uint64_t)pool->n_threads * RIPS_PAR_ROOM)
        return false;
    return true;
}

/* Reduces the columns in r->cols (dimension k, in reduction order), reports
 * the pairs and records the pivots in r->piv for clearing dimension k+1. */
static bool reduce_dimension(rips_engine *r, uint32_t k)
{
    const uint64_t ncols = r->cols.n;
    if (!pivots_init(r, &r->piv, ncols))
        return false;
    r->voff = mem_alloc(r, (ncols + 1) * sizeof *r->voff, "the reduction matrix");
    if (!r->voff)
        return false;
    r->voff[0] = 0;
    r->vent.n = 0;
    if (!r->pool || ncols < 2)
        return reduce_serial(r, k, 0);
    if (!use_lockfree(r, ncols))
        return reduce_parallel(r, k);
    int fallback = 0;
    if (!reduce_lockfree(r, k, &fallback))
        return false;
    /* the batched reduction when the table filled; the calling thread
     * alone when the memory limit was hit */
    return fallback == RIPS_LF_FULL    ? reduce_parallel(r, k)
           : fallback == RIPS_LF_LIMIT ? reduce_serial(r, k, 0)
                                       : true;
}

/* ------------------------------------------------------------------------
 * Columns to reduce
 * ---------------------------------------------------------------------- */

static inline uint32_t edge_top(uint64_t index)
{
    uint64_t i = (uint64_t)((1.0 + sqrt(1.0 + 8.0 * (double)index)) / 2.0);
    while (i > 1 && tri(i) > index)
        i--;
    while (tri(i + 1) <= index)
        i++;
    return (uint32_t)i;
}

static uint32_t uf_find(uint32_t *parent, uint32_t x)
{
    while (parent[x] != x) {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    return x;
}

/* H0 by union-find over the edges in filtration order, leaving in r->cols
 * the columns of dimension 1. An edge that joins two components is the
 * pivot of a vertex column in the cohomology of dimension 0, so its own
 * column is cleared; the others are the columns of dimension 1, less those
 * in a zero apparent pair. */
static bool compute_h0(rips_engine *r)
{
    const uint64_t n = r->n;
    uint64_t m = 0;
    if (r->sparse) {
        m = r->nb_start[n] / 2;
    } else {
        for (uint64_t q = 0; q < n * (n - 1) / 2; q++)
            m += r->dist[q] <= r->thr;
    }
    r->cols.n = 0;
    if (!vec_reserve(r, &r->cols, m, "the edges"))
        return false;
    rips_dentry *e = r->cols.a;
    if (r->sparse) {
        for (uint64_t i = 0; i < n; i++)
            for (uint64_t q = r->nb_start[i]; q < r->nb_start[i + 1] && r->nb_v[q] < i; q++)
                *e++ = (rips_dentry){r->nb_d[q], tri(i) + r->nb_v[q]};
    } else {
        for (uint64_t q = 0; q < n * (n - 1) / 2; q++)
            if (r->dist[q] <= r->thr)
                *e++ = (rips_dentry){r->dist[q], q};
    }
    r->cols.n = m;
    e = r->cols.a;
    if (!sort_columns_staged(r, e, m, "edges"))
        return false;
    r->work += m;

    uint32_t *parent = mem_alloc(r, n * sizeof *parent, "the union-find forest");
    if (!parent)
        return false;
    for (uint64_t v = 0; v < n; v++)
        parent[v] = (uint32_t)v;
    /* Linking under the smaller root with path halving: O(log n) amortized
     * per find (Tarjan and van Leeuwen), no rank array needed. */
    uint8_t ok = 1;
    for (uint64_t q = m; q-- > 0;) {
        /* done/total: edges joined so far, of all m */
        if (((m - 1 - q) & (RIPS_REPORT_COLUMNS - 1)) == 0 && !report(r, m - 1 - q, m)) {
            ok = 0;
            break;
        }
        uint32_t i = edge_top(e[q].entry), j = (uint32_t)(e[q].entry - tri(i));
        uint32_t a = uf_find(parent, i), b = uf_find(parent, j);
        if (a == b)
            continue;
        if (a < b)
            parent[b] = a;
        else
            parent[a] = b;
        const uint32_t de[2] = {j, i}; /* j < i */
        if (e[q].diam > 0.0 && !emit(r, 0, 0.0, e[q].diam, NULL, de))
            ok = 0;
        e[q].entry = RIPS_NONE;
        if (!ok)
            break;
    }
    for (uint64_t v = 0; v < n && ok; v++)
        if (parent[v] == v && !emit(r, 0, 0.0, INFINITY, NULL, NULL))
            ok = 0;
    mem_free(r, parent, n * sizeof *parent);
    if (!ok)
        return false;
    if (r->dim_max == 0) {
        r->cols.n = 0;
        return true;
    }
    uint64_t kept = 0;
    for (uint64_t q = 0; q < m; q++) {
        if (e[q].entry == RIPS_NONE)
            continue;
        uint32_t verts[2] = {edge_top(e[q].entry), 0};
        verts[1] = (uint32_t)(e[q].entry - tri(verts[0]));
        rips_profile pe = {1, {1, 1}};
        if (!zero_apparent_cofacet(r, verts, 2, &pe, e[q].diam, e[q].entry))
            e[kept++] = e[q];
    }
    r->cols.n = kept;
    if (kept >= UINT32_MAX)
        return fail(r, TOPOML_E_LIMIT, "rips: more than 2^32 - 1 columns in dimension 1"), false;
    return true;
}

/* Where one enumeration of the k-simplices puts its columns and counts its
 * work. The engine's own (serial) enumeration uses r->cols and r->work and
 * reports progress; a task of the parallel one (below) has its own vector
 * and counter, and reports only on the calling thread. */
typedef struct rips_sink {
    rips_vec *cols;      /* NULL: only count the columns (estimate_memory) */
    uint64_t *work;
    uint64_t mark;       /* report when *work reaches it */
    bool reports;
    atomic_bool *stop;   /* parallel: set when any task fails or is cancelled */
    /* Progress: first vertices finished (shared by the tasks), of `total`. */
    atomic_uint_fast64_t *vdone;
    uint64_t total;
    uint64_t counted; /* counting: the columns found, */
    uint64_t cap;     /* ... and where to stop counting */
} rips_sink;

/* With a pool, the engine's shared state (status, memory count, the host's
 * allocator and callbacks) is touched under its lock. */
static void pool_lock(rips_engine *r)
{
    if (r->pool)
        r->pool->lock(r->pool->user);
}

static void pool_unlock(rips_engine *r)
{
    if (r->pool)
        r->pool->unlock(r->pool->user);
}

static bool sink_put(rips_engine *r, rips_sink *o, rips_dentry d, uint32_t k)
{
    if (o->cols->n == o->cols->cap) {
        pool_lock(r);
        bool ok = o->cols->n < UINT32_MAX;
        if (!ok)
            fail(r, TOPOML_E_LIMIT, "rips: more than 2^32 - 1 columns in dimension %u", k);
        ok = ok && vec_reserve(r, o->cols, 1, "the columns to reduce");
        pool_unlock(r);
        if (!ok)
            return false;
    }
    o->cols->a[o->cols->n++] = d;
    return true;
}

/* Called when *o->work reaches o->mark: every RIPS_REPORT_WORK cofacets
 * enumerated, at any level, so also where few of them are k-simplices. */
static bool sink_report(rips_engine *r, rips_sink *o)
{
    o->mark = *o->work + RIPS_REPORT_WORK;
    if (o->stop && atomic_load_explicit(o->stop, memory_order_relaxed))
        return false;
    if (!o->reports)
        return true;
    pool_lock(r);
    bool ok = report(r, atomic_load_explicit(o->vdone, memory_order_relaxed), o->total);
    pool_unlock(r);
    return ok;
}

/* The columns of dimension k whose first vertex is v0 = first, first +
 * stride, ... < n, unsorted, into o (see assemble_columns). `stack` has room
 * for k enumerators and (k+1)^2 distances. Reads the engine, never writes it
 * except through o's locked paths. */
static bool assemble_some(rips_engine *r, uint32_t k, uint64_t first, uint64_t stride,
                          rips_cob *stack, rips_sink *o)
{
    /* The chain of simplices being extended, one enumerator per level, and
     * the distances among its vertices in the order they were added
     * (ascending): dm[a * K + b], a > b, as the enumerators saw them, so
     * that no distance is looked up twice. */
    const uint32_t K = k + 1;
    double *dm = (double *)(stack + k);
    for (uint64_t v0 = first; v0 < r->n; v0 += stride) {
        uint32_t base = (uint32_t)v0;
        cob_init(r, &stack[0], &base, 1, 0.0, v0, r->thr, true);
        int lvl = 0;
        while (lvl >= 0) {
            rips_cofacet cf;
            rips_cob *c = &stack[lvl];
            if (!cob_next(r, c, &cf)) {
                lvl--;
                continue;
            }
            if (++*o->work >= o->mark && !sink_report(r, o))
                return false;
            uint32_t m = (uint32_t)lvl + 2, tv[RIPS_MAX_VERTS];
            double dw[RIPS_MAX_VERTS];
            tv[0] = cf.vertex; /* the new top vertex */
            memcpy(tv + 1, c->verts, (m - 1) * sizeof *tv);
            cob_dists(r, c, cf.vertex, dw);
            for (uint32_t i = 0; i < m - 1; i++)
                dm[(m - 1) * K + (m - 2 - i)] = dw[i];
            if (m < K) {
                cob_init(r, &stack[lvl + 1], tv, m, cf.diam, cf.index, r->thr, true);
                lvl++;
                continue;
            }
            uint64_t f;
            if (o->cols && r->piv.key[pivots_slot(r, &r->piv, cf.index)] != RIPS_NONE)
                continue;
            rips_profile pt;
            pt.total = 0;
            memset(pt.cnt, 0, m);
            for (uint32_t a = 1; a < m; a++)
                for (uint32_t b = 0; b < a; b++)
                    if (dm[a * K + b] == cf.diam) {
                        pt.cnt[m - 1 - a]++;
                        pt.cnt[m - 1 - b]++;
                        pt.total++;
                    }
            /* Most simplices are the facet of a zero apparent pair (87% of
             * the tetrahedra of o3_4096 at 1.3): test that first. */
            int sign;
            if (zero_apparent_cofacet(r, tv, m, &pt, cf.diam, cf.index) ||
                zero_apparent_facet(r, tv, m, &pt, cf.diam, cf.index, &f, &sign))
                continue;
            if (!o->cols) {
                if (++o->counted > o->cap)
                    return false;
            } else if (!sink_put(r, o, (rips_dentry){cf.diam, cf.index}, k)) {
                return false;
            }
        }
        atomic_fetch_add_explicit(o->vdone, 1, memory_order_relaxed);
    }
    return true;
}

/* ---- The same enumeration in parallel, on the pool's threads ----
 *
 * Task t takes the first vertices t, t + T, t + 2T, ... (T tasks, several per
 * thread: the low vertices have the most simplices above them, and the
 * stride spreads them), sorts its columns, and the sorted runs are merged
 * pairwise, each round in parallel. The set of columns does not depend on
 * how it was split, and the order is the total reduction order, so the
 * answer is exactly the serial one. */
typedef struct rips_par {
    rips_engine *r;
    uint32_t k, n_tasks;
    rips_vec *part;  /* one per task */
    uint64_t *work;  /* one per task */
    rips_cob **stack; /* one per worker */
    atomic_bool stop;
    atomic_uint_fast64_t vdone;
    /* merging */
    const rips_dentry *src;
    rips_dentry *dst;
    const uint64_t *off; /* run q is [off[q], off[q+1]) */
    uint32_t runs;
} rips_par;

static void assemble_task(void *arg, uint32_t t, uint32_t worker)
{
    rips_par *P = arg;
    rips_engine *r = P->r;
    if (atomic_load_explicit(&P->stop, memory_order_relaxed))
        return;
    rips_sink o = {&P->part[t], &P->work[t], P->work[t] + RIPS_REPORT_WORK, worker == 0, &P->stop,
                   &P->vdone, r->n, 0, 0};
    if (!assemble_some(r, P->k, t, P->n_tasks, P->stack[worker], &o)) {
        atomic_store(&P->stop, true);
        return;
    }
    sort_columns(P->part[t].a, P->part[t].n);
}

static void merge_task(void *arg, uint32_t t, uint32_t worker)
{
    (void)worker;
    rips_par *P = arg;
    uint32_t a = 2 * t, b = 2 * t + 1;
    uint64_t i = P->off[a], ie = P->off[a + 1];
    uint64_t j = b < P->runs ? P->off[b] : ie, je = b < P->runs ? P->off[b + 1] : ie;
    uint64_t w = P->off[a];
    while (i < ie && j < je)
        P->dst[w++] = col_before(P->src[j], P->src[i]) ? P->src[j++] : P->src[i++];
    while (i < ie)
        P->dst[w++] = P->src[i++];
    while (j < je)
        P->dst[w++] = P->src[j++];
}

static bool assemble_parallel(rips_engine *r, uint32_t k)
{
    const scalar_rips_pool *pool = r->pool;
    const uint32_t T = pool->n_threads;
    const uint32_t n_tasks = (uint32_t)(r->n < 8u * T ? r->n : 8u * T);
    const uint64_t stack_bytes =
        (uint64_t)k * sizeof(rips_cob) + (uint64_t)(k + 1) * (k + 1) * sizeof(double);
    const uint64_t bytes = (uint64_t)n_tasks * sizeof(rips_vec) +
                           (2 * (uint64_t)n_tasks + 1) * sizeof(uint64_t) +
                           (uint64_t)T * sizeof(rips_cob *);
    rips_par P;
    memset(&P, 0, sizeof P);
    P.r = r;
    P.k = k;
    P.n_tasks = n_tasks;
    atomic_init(&P.stop, false);
    atomic_init(&P.vdone, 0);
    char *mem = mem_alloc(r, bytes, "the parallel enumeration");
    if (!mem)
        return false;
    memset(mem, 0, (size_t)bytes);
    P.part = (rips_vec *)(void *)mem;
    P.work = (uint64_t *)(void *)(P.part + n_tasks);
    uint64_t *off = P.work + n_tasks;
    P.stack = (rips_cob **)(void *)(off + n_tasks + 1);
    bool ok = true;
    for (uint32_t w = 0; w < T && ok; w++)
        ok = (P.stack[w] = mem_alloc(r, stack_bytes, "the simplex enumeration")) != NULL;
    if (ok) {
        pool->run(pool->user, n_tasks, assemble_task, &P);
        ok = r->status == TOPOML_OK;
    }
    uint64_t total = 0;
    for (uint32_t t = 0; t < n_tasks; t++) {
        r->work += P.work[t];
        total += P.part[t].n;
    }
    /* The runs side by side in r->cols, then merged through a second
     * buffer of the same size, round by round. */
    r->cols.n = 0;
    ok = ok && vec_reserve(r, &r->cols, total ? total : 1, "the columns to reduce");
    rips_vec tmp = {NULL, 0, 0};
    uint32_t runs = 0;
    if (ok) {
        for (uint32_t t = 0; t < n_tasks; t++) {
            if (P.part[t].n == 0)
                continue;
            off[runs++] = r->cols.n;
            memcpy(r->cols.a + r->cols.n, P.part[t].a, P.part[t].n * sizeof(rips_dentry));
            r->cols.n += P.part[t].n;
        }
        off[runs] = r->cols.n;
    }
    for (uint32_t t = 0; t < n_tasks; t++)
        vec_free(r, &P.part[t]);
    if (ok && runs > 1)
        ok = vec_reserve(r, &tmp, total, "the columns to reduce");
    while (ok && runs > 1) {
        P.src = r->cols.a;
        P.dst = tmp.a;
        P.off = off;
        P.runs = runs;
        pool->run(pool->user, (runs + 1) / 2, merge_task, &P);
        rips_dentry *x = r->cols.a;
        uint64_t xc = r->cols.cap;
        r->cols.a = tmp.a;
        r->cols.cap = tmp.cap;
        tmp.a = x;
        tmp.cap = xc;
        uint32_t next = 0;
        for (uint32_t q = 0; q < runs; q += 2)
            off[next++] = off[q];
        off[next] = r->cols.n;
        runs = next;
    }
    vec_free(r, &tmp);
    for (uint32_t w = 0; w < T; w++)
        mem_free(r, P.stack[w], stack_bytes);
    mem_free(r, mem, bytes);
    return ok && report(r, r->n, r->n);
}

/* Collects the columns of dimension k >= 2: every k-simplex under the
 * threshold, enumerated depth-first from its vertices so that the simplices
 * of lower dimension need not be stored, less
 *  - the pivots of dimension k-1 (clearing: such a column reduces to zero),
 *  - the cofacets of zero apparent pairs (pivots of dimension k-1 whose
 *    columns were skipped, so not in the table: cleared likewise),
 *  - the facets of zero apparent pairs (already reduced, zero persistence;
 *    their coboundary is recomputed when a column needs it).
 * r->piv holds the pivots of dimension k-1. With a pool of more than one
 * thread the enumeration is split among them (assemble_parallel). */
static bool assemble_columns(rips_engine *r, uint32_t k)
{
    r->cols.n = 0;
    snprintf(r->stage, sizeof r->stage, "dim %u enumeration", k);
    if (!report(r, 0, r->n))
        return false;
    if (r->pool && r->pool->n_threads > 1 && r->n >= 2 * r->pool->n_threads)
        return assemble_parallel(r, k);
    const uint64_t bytes =
        (uint64_t)k * sizeof(rips_cob) + (uint64_t)(k + 1) * (k + 1) * sizeof(double);
    rips_cob *stack = mem_alloc(r, bytes, "the simplex enumeration");
    if (!stack)
        return false;
    atomic_uint_fast64_t vdone;
    atomic_init(&vdone, 0);
    rips_sink o = {&r->cols, &r->work, r->work_mark, true, NULL, &vdone, r->n, 0, 0};
    bool ok = assemble_some(r, k, 0, 1, stack, &o);
    mem_free(r, stack, bytes);
    if (!ok)
        return false;
    char sort_stage[sizeof r->stage];
    snprintf(sort_stage, sizeof sort_stage, "dim %u sort", k);
    return sort_columns_staged(r, r->cols.a, r->cols.n, sort_stage);
}

/* The hook's storage: r->cols, grown to `count` entries. */
_Static_assert(sizeof(scalar_rips_column) == sizeof(rips_dentry) &&
                   offsetof(scalar_rips_column, diam) == offsetof(rips_dentry, diam) &&
                   offsetof(scalar_rips_column, index) == offsetof(rips_dentry, entry),
               "scalar_rips_column and rips_dentry share a layout");

static scalar_rips_column *hook_reserve(scalar_rips_columns_query *q, uint64_t count)
{
    rips_engine *r = q->engine;
    if (count >= UINT32_MAX) {
        fail(r, TOPOML_E_LIMIT, "rips: more than 2^32 - 1 columns in dimension %u", q->k);
        return NULL;
    }
    r->cols.n = 0;
    if (!vec_reserve(r, &r->cols, count ? count : 1, "the columns to reduce"))
        return NULL;
    return (scalar_rips_column *)(void *)r->cols.a;
}

/* The columns of dimension k >= 2 from the hook; false with *declined when
 * it would rather not (the caller then collects them itself). The answer is
 * checked: in reduction order, no index twice, every index a k-simplex. */
static bool hook_columns(rips_engine *r, uint32_t k, bool *declined)
{
    *declined = false;
    uint64_t count = 0;
    for (uint64_t s = 0; s <= r->piv.mask && r->piv.key; s++)
        count += r->piv.key[s] != RIPS_NONE;
    rips_dentry *tmp = count ? mem_alloc(r, count * sizeof *tmp, "the cleared simplices") : NULL;
    if (count && !tmp)
        return false;
    uint64_t c = 0;
    for (uint64_t s = 0; s <= r->piv.mask && r->piv.key; s++)
        if (r->piv.key[s] != RIPS_NONE)
            tmp[c++] = (rips_dentry){0.0, entry_index(r, r->piv.key[s])};
    sort_columns(tmp, count); /* equal diameters: index ascending */
    uint64_t *cleared = (uint64_t *)(void *)tmp; /* packed in place, in order */
    for (uint64_t i = 0; i < count; i++)
        cleared[i] = tmp[i].entry;

    scalar_rips_columns_query q = {k, r->n, r->thr, cleared, count, hook_reserve, r, 0};
    r->cols.n = 0;
    int rc = r->hook->columns(r->hook->user, &q);
    mem_free(r, tmp, count * sizeof *tmp);
    if (rc == SCALAR_RIPS_HOOK_DECLINED && r->status == TOPOML_OK) {
        *declined = true;
        return false;
    }
    if (r->status != TOPOML_OK)
        return false;
    if (rc != TOPOML_OK) {
        /* the hook wrote its message into call->error */
        r->status = rc > 0 ? TOPOML_E_INTERNAL : rc;
        return false;
    }
    if (q.n_columns > r->cols.cap)
        return fail(r, TOPOML_E_INTERNAL, "rips: the column hook wrote past its storage"), false;
    r->cols.n = q.n_columns;
    const uint64_t top = B(r, r->n, k + 1); /* C(n, k+1): indices below it */
    for (uint64_t j = 0; j < r->cols.n; j++) {
        rips_dentry e = r->cols.a[j];
        if (e.entry >= top || !(e.diam <= r->thr) ||
            (j > 0 && !col_before(r->cols.a[j - 1], e)))
            return fail(r, TOPOML_E_INTERNAL,
                        "rips: the column hook gave a bad column %llu in dimension %u",
                        (unsigned long long)j, k),
                   false;
    }
    r->work += r->cols.n;
    return true;
}

/* The columns of dimension k >= 2: from the hook if there is one and it
 * takes the dimension, else collected here. */
static bool collect_columns(rips_engine *r, uint32_t k)
{
    if (r->hook && r->hook->columns) {
        bool declined;
        if (hook_columns(r, k, &declined))
            return true;
        if (!declined)
            return false;
    }
    return assemble_columns(r, k);
}

/* ------------------------------------------------------------------------
 * Set-up: distances and threshold
 * ---------------------------------------------------------------------- */

/* The distances d(i, j), j < i, of row i of a CONDENSED or POINTS input,
 * widened to double: the matrix's own row, or the row computed into `buf`.
 * For points they are metric_rows.h's, which are scalar_point_dist's bit
 * for bit (tests/test_metric_rows.c), computed side by side across j. */
static inline const double *row_dists(const rips_engine *r, const topoml_input_v1 *in, uint64_t i,
                                      double *buf)
{
    if (in->kind == TOPOML_INPUT_POINTS) {
        scalar_panels_row(&r->pan, i, i, buf);
        return buf;
    }
    if (in->dtype == TOPOML_F64)
        return (const double *)in->data + tri(i);
    const float *f = (const float *)in->data + tri(i);
    for (uint64_t j = 0; j < i; j++)
        buf[j] = (double)f[j];
    return buf;
}

/* Drops the kept pairs: from here on a pass over the pairs recomputes them. */
static void keep_stop(rips_engine *r)
{
    mem_free(r, r->kept, r->cap_kept * sizeof *r->kept);
    mem_free(r, r->kept_row, (r->n + 1) * sizeof *r->kept_row);
    r->kept = NULL;
    r->kept_row = NULL;
    r->n_kept = r->cap_kept = 0;
    r->keep = false;
}

/* Room for `want` kept pairs. Keeping is an optimisation: past max_kept or
 * over the memory limit the pairs are dropped (keep_stop) and the caller
 * goes on without them. false then, and also when the host is out of
 * memory, which is an error (status set) like any other allocation's. */
static bool keep_reserve(rips_engine *r, uint64_t want)
{
    if (want <= r->cap_kept)
        return true;
    uint64_t c = r->cap_kept ? r->cap_kept : 1024;
    while (c < want)
        c += c / 2 + 1;
    c = c > r->max_kept ? r->max_kept : c;
    const uint64_t more = (c - r->cap_kept) * sizeof *r->kept;
    if (want > r->max_kept || (r->mem_limit && more > r->mem_limit - r->mem_used)) {
        keep_stop(r);
        return false;
    }
    rips_kept *k = r->kept ? r->call->realloc(r->call->host_data, r->kept, (size_t)(c * sizeof *k))
                           : r->call->alloc(r->call->host_data, (size_t)(c * sizeof *k));
    if (!k) {
        fail(r, TOPOML_E_NOMEM, "rips: out of memory keeping %llu pairs within the threshold",
             (unsigned long long)want);
        return false;
    }
    r->mem_used += more;
    r->kept = k;
    r->cap_kept = c;
    return true;
}

/* ---- The distances of a point cloud on the pool ----
 *
 * With threads lent (scalar_rips_pooled), the rows of distances are
 * computed by the pool's tasks, a round of about RIPS_ROWS_ROUND pairs at
 * a time, into the distance matrix or a buffer of the round; the calling
 * thread then checks and files them row by row exactly as without threads
 * (scan_rows), so that everything but the arithmetic, which is
 * metric_rows.h's either way, is the serial code: the same distances, the
 * same error for the same pair, the same kept pairs in the same order.
 * Computing is most of the work: dim operations a pair, against a few to
 * file it. Only where the pairs times the coordinates reach
 * SCALAR_RIPS_POOL_MIN_PAIR_WORK; below, starting the threads costs more. */
#define RIPS_ROWS_ROUND (1u << 18)

typedef struct rips_rows_par {
    const rips_engine *r;
    double *store;    /* the distance matrix, or NULL: */
    double *buf;      /* row i of the round at buf + tri(i) - tri(i0) */
    uint64_t i0, end; /* the round's rows: [i0, end) */
    uint32_t n_tasks;
    uint64_t first[4 * 256 + 1]; /* task t: rows [first[t], first[t + 1]) */
} rips_rows_par;

static void rows_task(void *arg, uint32_t t, uint32_t worker)
{
    (void)worker;
    rips_rows_par *P = arg;
    for (uint64_t i = P->first[t]; i < P->first[t + 1]; i++)
        scalar_panels_row(&P->r->pan, i, i,
                          P->store ? P->store + tri(i) : P->buf + (tri(i) - tri(P->i0)));
}

/* Computes the rows from i0 on that fit a round (at least one), in tasks
 * of about equal numbers of pairs (row i has i). */
static void rows_round(rips_engine *r, rips_rows_par *P, uint64_t i0)
{
    const uint64_t cap = RIPS_ROWS_ROUND > r->n ? RIPS_ROWS_ROUND : r->n;
    uint64_t e = i0 + 1;
    while (e < r->n && tri(e + 1) - tri(i0) <= cap)
        e++;
    const uint64_t pairs = tri(e) - tri(i0);
    uint64_t tasks = 4u * r->rows_pool->n_threads;
    tasks = tasks > 4 * 256 ? 4 * 256 : tasks;
    tasks = tasks > e - i0 ? e - i0 : tasks;
    P->i0 = i0;
    P->end = e;
    P->first[0] = i0;
    uint64_t i = i0;
    for (uint64_t t = 1; t < tasks; t++) {
        while (i < e && tri(i) - tri(i0) < pairs / tasks * t)
            i++;
        P->first[t] = i;
    }
    P->first[tasks] = e;
    P->n_tasks = (uint32_t)tasks;
    r->rows_pool->run(r->rows_pool->user, P->n_tasks, rows_task, P);
}

/* One pass over the pairs i > j: checks every distance and, as asked, keeps
 * each point's largest distance (rmax), stores the distances in Ripser's
 * order (store), counts the neighbours within `cut` into nb_start[v + 1]
 * (count) and, while r->keep, keeps those pairs (r->kept), so that the
 * lists can be filled without computing the distances again. */
static bool scan_rows(rips_engine *r, const topoml_input_v1 *in, double *rmax, double *store,
                      bool count, double cut, rips_rows_par *P)
{
    const uint64_t n = r->n;
    uint64_t *deg = r->nb_start;
    if (count && r->keep)
        r->kept_row[0] = r->kept_row[1] = 0;
    for (uint64_t i = 1; i < n; i++) {
        if (r->work >= r->work_mark && !report(r, i, n))
            return false;
        r->work += i;
        const double *row;
        if (P) {
            if (i == P->end)
                rows_round(r, P, i);
            row = store ? store + tri(i) : P->buf + (tri(i) - tri(P->i0));
        } else {
            row = row_dists(r, in, i, store ? store + tri(i) : r->row);
        }
        double ri = 0.0;
        for (uint64_t j = 0; j < i; j++) {
            const double d = row[j];
            if (!(d >= 0.0)) {
                fail(r, TOPOML_E_INVALID, "rips: the distance between points %llu and %llu is %g",
                     (unsigned long long)j, (unsigned long long)i, d);
                return false;
            }
            /* Between points of finite coordinates, an infinite distance is
             * one beyond the dtype's range (metric.h scales, so it is never
             * an intermediate overflow): not an absent edge. */
            if (isinf(d) && in->kind == TOPOML_INPUT_POINTS) {
                fail(r, TOPOML_E_OVERFLOW,
                     "rips: the distance between points %llu and %llu is beyond the range of %s "
                     "(scale the coordinates)",
                     (unsigned long long)j, (unsigned long long)i,
                     in->dtype == TOPOML_F32 ? "float32" : "float64");
                return false;
            }
            if (rmax) {
                ri = d > ri ? d : ri;
                rmax[j] = d > rmax[j] ? d : rmax[j];
            }
            if (count && d <= cut) {
                deg[i + 1]++;
                deg[j + 1]++;
                if (r->keep && r->n_kept == r->cap_kept && !keep_reserve(r, r->n_kept + 1) &&
                    r->status != TOPOML_OK)
                    return false;
                if (r->keep)
                    r->kept[r->n_kept++] = (rips_kept){d, (uint32_t)j};
            }
        }
        if (r->keep)
            r->kept_row[i + 1] = r->n_kept;
        if (rmax)
            rmax[i] = ri > rmax[i] ? ri : rmax[i];
    }
    return true;
}

/* scan_rows with the rows computed on the pool where that pays (above),
 * else one by one on this thread. */
static bool scan_pairs(rips_engine *r, const topoml_input_v1 *in, double *rmax, double *store,
                       bool count, double cut)
{
    const uint64_t n = r->n;
    const double work = (double)tri(n) * (double)(in->dim ? in->dim : 1);
    if (!r->rows_pool || in->kind != TOPOML_INPUT_POINTS ||
        work < (double)SCALAR_RIPS_POOL_MIN_PAIR_WORK)
        return scan_rows(r, in, rmax, store, count, cut, NULL);
    rips_rows_par P;
    memset(&P, 0, sizeof P);
    P.r = r;
    P.store = store;
    P.end = 1;
    const uint64_t bytes = (RIPS_ROWS_ROUND > n ? RIPS_ROWS_ROUND : n) * sizeof *P.buf;
    if (!store) {
        /* the buffer is a speed-up, never a reason to fail a memory limit */
        if (r->mem_limit && bytes > r->mem_limit - r->mem_used)
            return scan_rows(r, in, rmax, store, count, cut, NULL);
        P.buf = mem_alloc(r, bytes, "the rows of distances");
        if (!P.buf)
            return false;
    }
    bool ok = scan_rows(r, in, rmax, store, count, cut, &P);
    mem_free(r, P.buf, bytes);
    return ok;
}

/* Turns the degrees in nb_start[v + 1] into list offsets and allocates the
 * lists. */
static bool lists_alloc(rips_engine *r)
{
    for (uint64_t v = 0; v < r->n; v++)
        r->nb_start[v + 1] += r->nb_start[v];
    uint64_t nnz = r->nb_start[r->n];
    r->nb_v = mem_alloc(r, nnz * sizeof *r->nb_v, "the neighbour lists");
    if (!r->nb_v)
        return false;
    r->nb_d = mem_alloc(r, nnz * sizeof *r->nb_d, "the neighbour lists");
    return r->nb_d != NULL;
}

/* Fills the lists with the pairs within the threshold, from the kept pairs
 * or else computed again. Pairs come with i ascending and j ascending, so
 * each list fills in vertex order: first the j < v when i == v, then the
 * i > v. */
static bool lists_fill_pairs(rips_engine *r, const topoml_input_v1 *in)
{
    const uint64_t n = r->n;
    uint64_t *cur = mem_alloc(r, n * sizeof *cur, "the neighbour lists");
    if (!cur)
        return false;
    memcpy(cur, r->nb_start, n * sizeof *cur);
    bool ok = true;
    for (uint64_t i = 1; i < n && ok; i++) {
        if (r->keep) {
            /* work: the kept pairs, not the pairs, so that a report is rare */
            r->work += r->kept_row[i + 1] - r->kept_row[i];
            if (r->work >= r->work_mark && !report(r, i, n))
                ok = false;
            for (uint64_t q = r->kept_row[i]; q < r->kept_row[i + 1]; q++) {
                const double d = r->kept[q].d;
                const uint32_t j = r->kept[q].j;
                if (d <= r->thr) {
                    r->nb_v[cur[i]] = j;
                    r->nb_d[cur[i]++] = d;
                    r->nb_v[cur[j]] = (uint32_t)i;
                    r->nb_d[cur[j]++] = d;
                }
            }
            continue;
        }
        if (r->work >= r->work_mark && !report(r, i, n))
            ok = false;
        r->work += i;
        const double *row = row_dists(r, in, i, r->row);
        for (uint64_t j = 0; j < i && ok; j++) {
            const double d = row[j];
            if (d <= r->thr) {
                r->nb_v[cur[i]] = (uint32_t)j;
                r->nb_d[cur[i]++] = d;
                r->nb_v[cur[j]] = (uint32_t)i;
                r->nb_d[cur[j]++] = d;
            }
        }
    }
    mem_free(r, cur, n * sizeof *cur);
    return ok;
}

/* The degrees within r->thr from the kept pairs, into nb_start[v + 1]. */
static void count_kept(rips_engine *r)
{
    uint64_t *deg = r->nb_start;
    for (uint64_t i = 1; i < r->n; i++)
        for (uint64_t q = r->kept_row[i]; q < r->kept_row[i + 1]; q++)
            if (r->kept[q].d <= r->thr) {
                deg[i + 1]++;
                deg[r->kept[q].j + 1]++;
            }
}

static double min_of(const double *x, uint64_t n)
{
    double m = INFINITY;
    for (uint64_t i = 0; i < n; i++)
        m = x[i] < m ? x[i] : m;
    return m;
}

/* The enclosing radius caps the threshold: at r = min_i max_j d(i,j) the
 * complex is a cone from the point attaining it (every simplex plus that
 * point stays within r), so it is contractible at every value >= r; no class
 * of positive dimension is born or alive there and H0 is one component.
 * Infinite distances are absent edges: the threshold then never admits
 * them. */
static double effective_threshold(double t, double radius)
{
    double thr = t < radius ? t : radius;
    return thr == INFINITY ? DBL_MAX : thr;
}

/* Frees what only the set-up of a CONDENSED or POINTS input uses. */
static void setup_release(rips_engine *r)
{
    keep_stop(r);
    mem_free(r, r->pan.panel, r->pan_bytes);
    mem_free(r, r->row, r->n * sizeof *r->row);
    memset(&r->pan, 0, sizeof r->pan);
    r->row = NULL;
}

static bool setup_pairs_run(rips_engine *r, const topoml_input_v1 *in, double t)
{
    const uint64_t n = r->n, npairs = n * (n - 1) / 2;
    const bool points = in->kind == TOPOML_INPUT_POINTS;
    if (points && in->dim > 0) {
        for (uint64_t q = 0; q < n * in->dim; q++) {
            double x = in->dtype == TOPOML_F32 ? (double)((const float *)in->data)[q]
                                               : ((const double *)in->data)[q];
            if (!isfinite(x)) {
                fail(r, TOPOML_E_INVALID, "rips: coordinate %llu of point %llu is %g",
                     (unsigned long long)(q % in->dim), (unsigned long long)(q / in->dim), x);
                return false;
            }
        }
    }
    r->row = mem_alloc(r, n * sizeof *r->row, "a row of distances");
    if (!r->row)
        return false;
    if (points) {
        const bool wide = scalar_rows_wide();
        r->pan_bytes =
            scalar_panels_bytes(in->dtype, (topoml_metric)in->metric, n, in->dim, wide);
        if (r->pan_bytes == 0 && in->dim > 0)
            return fail(r, TOPOML_E_OVERFLOW, "rips: n * dim overflows"), false;
        void *mem = mem_alloc(r, r->pan_bytes, "the points' panels");
        if (!mem)
            return false;
        scalar_panels_fill(&r->pan, in->dtype, (topoml_metric)in->metric, in->data, n, in->dim,
                           wide, mem);
    }
    /* A point cloud with a threshold goes straight to neighbour lists; one
     * without, to a distance matrix. A distance matrix goes to lists only
     * when the threshold cuts below the enclosing radius. */
    const bool may_be_sparse = t < INFINITY;
    double *rmax = mem_alloc(r, n * sizeof *rmax, "the enclosing radius");
    if (!rmax)
        return false;
    memset(rmax, 0, n * sizeof *rmax);
    if (may_be_sparse) {
        r->nb_start = mem_alloc(r, (n + 1) * sizeof *r->nb_start, "the neighbour lists");
        if (!r->nb_start) {
            mem_free(r, rmax, n * sizeof *rmax);
            return false;
        }
        memset(r->nb_start, 0, (n + 1) * sizeof *r->nb_start);
        /* One pass instead of two: the pairs within the threshold are kept
         * as the scan finds them, up to a quarter of all pairs (about half
         * the memory of the distance matrix); a threshold that keeps more
         * falls back to computing them again for the lists. */
        r->max_kept = npairs / 4;
        r->kept_row = mem_alloc(r, (n + 1) * sizeof *r->kept_row, "the pairs within the threshold");
        if (!r->kept_row) {
            mem_free(r, rmax, n * sizeof *rmax);
            return false;
        }
        r->keep = true;
    }
    const bool store = !may_be_sparse && (points || in->dtype != TOPOML_F64);
    if (store) {
        r->dist_own = mem_alloc(r, npairs * sizeof(double), "the distance matrix");
        if (!r->dist_own) {
            mem_free(r, rmax, n * sizeof *rmax);
            return false;
        }
    }
    bool ok = scan_pairs(r, in, rmax, r->dist_own, may_be_sparse, t);
    double radius = min_of(rmax, n);
    mem_free(r, rmax, n * sizeof *rmax);
    if (!ok)
        return false;
    r->thr = effective_threshold(t, radius);
    r->sparse = may_be_sparse && (points || t < radius);
    if (!r->sparse) {
        mem_free(r, r->nb_start, (n + 1) * sizeof *r->nb_start);
        r->nb_start = NULL;
        if (r->dist_own) {
            r->dist = r->dist_own;
            return true;
        }
        if (in->dtype == TOPOML_F64) {
            r->dist = in->data;
            return true;
        }
        /* f32 matrix with a threshold at or above the enclosing radius */
        r->dist_own = mem_alloc(r, npairs * sizeof(double), "the distance matrix");
        if (!r->dist_own)
            return false;
        for (uint64_t q = 0; q < npairs; q++)
            r->dist_own[q] = (double)((const float *)in->data)[q];
        r->dist = r->dist_own;
        return true;
    }
    /* Each pass its own stage, so that done/total rises within a stage. */
    if (r->thr < t) {
        snprintf(r->stage, sizeof r->stage, "distances within the radius");
        memset(r->nb_start, 0, (n + 1) * sizeof *r->nb_start);
        if (r->keep)
            count_kept(r);
        else if (!scan_pairs(r, in, NULL, NULL, true, r->thr))
            return false;
    }
    snprintf(r->stage, sizeof r->stage, "neighbours");
    return lists_alloc(r) && lists_fill_pairs(r, in);
}

static bool setup_pairs(rips_engine *r, const topoml_input_v1 *in, double t)
{
    bool ok = setup_pairs_run(r, in, t);
    setup_release(r);
    return ok;
}

/* SPARSE input: the edge list becomes sorted neighbour lists. The enclosing
 * radius is finite only if some vertex has an edge to every other one. */
static bool setup_edges(rips_engine *r, const topoml_input_v1 *in, double t)
{
    const uint64_t n = r->n;
    const topoml_edge *E = in->edges;
    r->nb_start = mem_alloc(r, (n + 1) * sizeof *r->nb_start, "the neighbour lists");
    if (!r->nb_start)
        return false;
    memset(r->nb_start, 0, (n + 1) * sizeof *r->nb_start);
    double *rmax = mem_alloc(r, n * sizeof *rmax, "the enclosing radius");
    if (!rmax)
        return false;
    memset(rmax, 0, n * sizeof *rmax);
    uint64_t *deg = r->nb_start;
    for (uint64_t q = 0; q < in->n_edges; q++) {
        if (!(E[q].i < E[q].j && E[q].j < n) || !(E[q].d >= 0.0)) {
            fail(r, TOPOML_E_INVALID,
                 "rips: edge %llu (%u, %u, %g) is not i < j < n = %llu with a distance >= 0",
                 (unsigned long long)q, E[q].i, E[q].j, E[q].d, (unsigned long long)n);
            mem_free(r, rmax, n * sizeof *rmax);
            return false;
        }
        if (E[q].d < INFINITY) {
            deg[E[q].i + 1]++;
            deg[E[q].j + 1]++;
            rmax[E[q].i] = E[q].d > rmax[E[q].i] ? E[q].d : rmax[E[q].i];
            rmax[E[q].j] = E[q].d > rmax[E[q].j] ? E[q].d : rmax[E[q].j];
        }
    }
    double radius = INFINITY;
    for (uint64_t v = 0; v < n; v++)
        if (deg[v + 1] >= n - 1 && rmax[v] < radius)
            radius = rmax[v];
    mem_free(r, rmax, n * sizeof *rmax);
    r->thr = effective_threshold(t, radius);
    r->sparse = true;
    memset(deg, 0, (n + 1) * sizeof *deg);
    for (uint64_t q = 0; q < in->n_edges; q++)
        if (E[q].d <= r->thr) {
            deg[E[q].i + 1]++;
            deg[E[q].j + 1]++;
        }
    if (!lists_alloc(r))
        return false;
    uint64_t *cur = mem_alloc(r, n * sizeof *cur, "the neighbour lists");
    if (!cur)
        return false;
    memcpy(cur, r->nb_start, n * sizeof *cur);
    for (uint64_t q = 0; q < in->n_edges; q++)
        if (E[q].d <= r->thr) {
            r->nb_v[cur[E[q].i]] = E[q].j;
            r->nb_d[cur[E[q].i]++] = E[q].d;
            r->nb_v[cur[E[q].j]] = E[q].i;
            r->nb_d[cur[E[q].j]++] = E[q].d;
        }
    mem_free(r, cur, n * sizeof *cur);
    for (uint64_t v = 0; v < n; v++) {
        uint64_t lo = r->nb_start[v], hi = r->nb_start[v + 1];
        sort_neighbours(r->nb_v + lo, r->nb_d + lo, hi - lo);
        for (uint64_t q = lo + 1; q < hi; q++)
            if (r->nb_v[q] == r->nb_v[q - 1]) {
                fail(r, TOPOML_E_INVALID,
                     "rips: the edge between vertices %llu and %u is given twice",
                     (unsigned long long)v, r->nb_v[q]);
                return false;
            }
    }
    return true;
}

/* ------------------------------------------------------------------------
 * Set-up: coefficients and the binomial table
 * ---------------------------------------------------------------------- */

static bool is_prime(uint32_t p)
{
    if (p < 2)
        return false;
    for (uint32_t d = 2; (uint64_t)d * d <= p; d++)
        if (p % d == 0)
            return false;
    return true;
}

static bool setup_coefficients(rips_engine *r, uint32_t p)
{
    if (p > SCALAR_RIPS_MAX_MODULUS) {
        fail(r, TOPOML_E_INVALID,
             "rips: the modulus %u is larger than the largest supported prime, %u", p,
             SCALAR_RIPS_MAX_MODULUS);
        return false;
    }
    if (!is_prime(p)) {
        fail(r, TOPOML_E_INVALID, "rips: the modulus %u is not a prime", p);
        return false;
    }
    r->p = p;
    r->cbits = 0;
    while ((1u << r->cbits) <= p - 1)
        r->cbits++;
    r->cmask = (UINT64_C(1) << r->cbits) - 1;
    r->w0.cob.ordmask = ~(rips_key)r->cmask;
    r->inv = mem_alloc(r, (uint64_t)p * sizeof *r->inv, "the coefficient inverses");
    if (!r->inv)
        return false;
    /* inv(i) = -(p / i) * inv(p mod i), from p = (p / i) i + p mod i. */
    r->inv[0] = 0;
    r->inv[1] = 1;
    for (uint32_t i = 2; i < p; i++)
        r->inv[i] = (uint32_t)((p - (uint64_t)(p / i) * r->inv[p % i] % p) % p);
    return true;
}

/* Simplices up to dimension dim_max + 1 (the cofacets of the last columns)
 * have indices below C(n, dim_max + 2), and every C(n, j), j <= dim_max + 2,
 * must stay below 2^(64 - cbits) - 1 so that an entry never reaches
 * RIPS_NONE. Checked on C(n, j) alone, before anything is allocated: C(v, j)
 * grows with v, so the whole table then fits. */
static bool check_index_range(rips_engine *r)
{
    const uint64_t n = r->n;
    const unsigned K = r->dim_max + 2;
    const uint64_t limit = UINT64_MAX >> r->cbits;
    /* Past RIPS_MAX_VERTS some C(n, j) always overflows first (see there),
     * so the loop below also keeps every vertex array in bounds. */
    for (unsigned j = 1; j <= K; j++) {
        unsigned __int128 c = 1;
        for (unsigned i = 1; i <= j && c < limit; i++)
            c = c * (n - j + i) / i; /* C(n - j + i, i), exact */
        if (c >= limit || j > RIPS_MAX_VERTS) {
            fail(r, TOPOML_E_OVERFLOW,
                 "rips: simplex indices overflow: n = %llu points up to dimension k = %u need "
                 "C(n, %u) indices, more than the %u bits left by %u coefficient bits",
                 (unsigned long long)n, r->dim_max, j, 64 - r->cbits, r->cbits);
            return false;
        }
    }
    return true;
}

static bool setup_binomials(rips_engine *r)
{
    const uint64_t n = r->n;
    const unsigned K = r->dim_max + 2;
    r->bstride = n + 1;
    r->bk = K;
    r->binom = mem_alloc(r, (uint64_t)(K + 1) * (n + 1) * sizeof *r->binom, "the binomial table");
    if (!r->binom)
        return false;
    for (unsigned k = 0; k <= K; k++)
        for (uint64_t v = 0; v <= n; v++) {
            uint64_t *b = r->binom + k * r->bstride;
            if (k == 0)
                b[v] = 1;
            else if (v == 0)
                b[v] = 0;
            else
                b[v] = b[v - 1] + r->binom[(k - 1) * r->bstride + v - 1];
        }
    return true;
}

/* ------------------------------------------------------------------------
 * The memory estimate, before any dimension is computed
 *
 * What a dimension k >= 1 holds while it is reduced grows with its columns:
 * each has its offset into V (8 bytes) and its share of the pivot table (12
 * bytes a slot, at a load of at most 0.7: 17), RIPS_COLUMN_BYTES together;
 * and the column list (16 bytes an entry), which keeps the edges' room from
 * H0 on and grows by half again beyond it. While dimension k is enumerated,
 * the pivot table of k - 1 is still there. The V matrix, the working
 * columns and the intervals come on top; they are small where apparent
 * pairs are plentiful, as in most Rips complexes, so the estimate is close
 * but can be low (sphere_3_192's H2: 3032 columns, tens of MiB of working
 * column), and a run it lets through may still stop at the limit (the
 * finished dimensions then come back, see scalar_rips_pooled).
 *
 * The columns of dimension k are the k-simplices less apparent pairs and
 * cleared ones. The k-simplices whose lowest vertex is v are at most
 * C(d+(v), k), d+(v) the neighbours of v above it within the threshold, so
 * W = sum_v C(d+(v), k) bounds them (for k = 1, the edges). Where W
 * columns would fit, nothing more is done. Else the columns are counted
 * exactly for a systematic sample of lowest vertices (every 64th, or fewer:
 * at most 32; without clearing, which only removes a few) and scaled by W
 * over the sample's share of it: a ratio estimate, at 1/64 of the
 * enumeration's cost or less, paid only by work that is near or over the
 * limit.
 * ---------------------------------------------------------------------- */

#define RIPS_COLUMN_BYTES 25u
#define RIPS_PIVOT_BYTES 17u

/* C(d, k) as a double, saturating near the top of its range. */
static double choose_d(uint64_t d, uint32_t k)
{
    if (k > d)
        return 0.0;
    double c = 1.0;
    for (uint32_t i = 1; i <= k && c < 1e300; i++)
        c = c * (double)(d - k + i) / (double)i;
    return c;
}

/* Columns of dimension k >= 1, estimated from a sample (see above). The
 * sample alone may show that they cannot fit: more than `cap` columns
 * counted, less the clearing (at most `prev` of them), is more than the
 * budget, and the count stops there (*at_least set), so that work far over
 * the limit is not enumerated for long before it is refused. */
static bool estimate_columns(rips_engine *r, uint32_t k, const uint64_t *up, double bound,
                             uint64_t cap, double *out, bool *at_least)
{
    const uint64_t n = r->n;
    /* every 64th vertex (n/16-th below 1024 points), and no more than 32 */
    const uint64_t few = n >= 1024 ? 64 : n >= 32 ? n / 16 : 1;
    const uint64_t stride = n / 32 > few ? n / 32 : few, first = stride / 2;
    const uint64_t bytes =
        (uint64_t)k * sizeof(rips_cob) + (uint64_t)(k + 1) * (k + 1) * sizeof(double);
    rips_cob *stack = mem_alloc(r, bytes, "the simplex enumeration");
    if (!stack)
        return false;
    snprintf(r->stage, sizeof r->stage, "dim %u estimate", k);
    atomic_uint_fast64_t vdone;
    atomic_init(&vdone, 0);
    rips_sink o = {NULL, &r->work, r->work_mark, true, NULL, &vdone,
                   (n - first + stride - 1) / stride, 0, cap};
    double share = 0.0;
    bool ok = true;
    for (uint64_t v = first; v < n && ok; v += stride) {
        share += choose_d(up[v], k);
        ok = assemble_some(r, k, v, n, stack, &o);
    }
    mem_free(r, stack, bytes);
    *at_least = o.counted > cap && r->status == TOPOML_OK;
    if (*at_least) {
        *out = (double)o.counted;
        return true;
    }
    *out = share > 0.0 ? (double)o.counted * (bound / share) : bound;
    return ok;
}

/* Bytes dimension k holds with `cols` columns (k >= 1; see above), `edges`
 * edges and `prev` columns in dimension k - 1. */
static double dimension_bytes(double cols, double edges, double prev)
{
    return fmax(edges, 1.5 * cols) * sizeof(rips_dentry) + cols * RIPS_COLUMN_BYTES +
           prev * RIPS_PIVOT_BYTES;
}

static bool estimate_memory(rips_engine *r)
{
    const uint64_t n = r->n;
    if (!r->mem_limit || n < 2)
        return true;
    const double budget = (double)(r->mem_limit - r->mem_used);
    /* Where even a complete graph fits (C(n, k+1) k-simplices), no pass
     * over the edges is needed: the common case of a small input. */
    {
        const double all = choose_d(n, 2);
        bool fits = all * sizeof(rips_dentry) + (double)n * sizeof(uint32_t) <= budget;
        for (uint32_t k = 1; k <= r->dim_max && fits; k++)
            fits = dimension_bytes(choose_d(n, k + 1), all, k > 1 ? choose_d(n, k) : 0.0) <=
                   budget;
        if (fits)
            return true;
    }
    uint64_t *up = mem_alloc(r, n * sizeof *up, "the memory estimate");
    if (!up)
        return false;
    memset(up, 0, n * sizeof *up);
    if (r->sparse) {
        for (uint64_t v = 0; v < n; v++)
            for (uint64_t q = r->nb_start[v + 1]; q-- > r->nb_start[v] && r->nb_v[q] > v;)
                up[v]++;
    } else {
        for (uint64_t i = 1; i < n; i++)
            for (uint64_t j = 0; j < i; j++)
                up[j] += r->dist[tri(i) + j] <= r->thr;
    }
    uint64_t edges = 0;
    for (uint64_t v = 0; v < n; v++)
        edges += up[v];
    double prev = 0.0; /* columns of dimension k - 1 */
    bool ok = true;
    for (uint32_t k = 0; k <= r->dim_max && ok; k++) {
        double cols, bytes;
        bool at_least = false;
        if (k == 0) {
            cols = (double)edges; /* the sorted edge list and the union-find forest */
            bytes = (double)edges * sizeof(rips_dentry) + (double)n * sizeof(uint32_t);
        } else {
            double bound = 0.0;
            for (uint64_t v = 0; v < n; v++)
                bound += choose_d(up[v], k);
            cols = bound;
            /* columns that would not fit even alone, plus what clearing
             * could take away */
            const double cap = budget / RIPS_COLUMN_BYTES + prev;
            if (dimension_bytes(bound, (double)edges, prev) > budget)
                ok = estimate_columns(r, k, up, bound, cap < 1e18 ? (uint64_t)cap : UINT64_MAX,
                                      &cols, &at_least);
            bytes = dimension_bytes(at_least ? cols - prev : cols, (double)edges, prev);
            prev = cols;
        }
        if (ok && bytes > budget) {
            char need[32], lim[32];
            fail(r, TOPOML_E_LIMIT,
                 "rips: dimension %u would need %s %.3g %s, %s %s (%.0f bytes) with %llu "
                 "bytes in use for the distances; the memory limit is %s (%llu bytes); lower the "
                 "dimension or the threshold, or raise the memory limit",
                 k, at_least ? "more than" : "about", at_least ? cols - prev : cols,
                 k == 0 ? "edges" : "simplices to reduce", at_least ? "more than" : "about",
                 human_bytes(bytes + (double)r->mem_used, need, sizeof need),
                 bytes + (double)r->mem_used, (unsigned long long)r->mem_used,
                 human_bytes((double)r->mem_limit, lim, sizeof lim),
                 (unsigned long long)r->mem_limit);
            ok = false;
        }
    }
    mem_free(r, up, n * sizeof *up);
    return ok;
}

/* ------------------------------------------------------------------------
 * The op
 * ---------------------------------------------------------------------- */

static void release(rips_engine *r)
{
    const uint64_t n = r->n;
    setup_release(r);
    mem_free(r, r->dist_own, n * (n - (n > 0)) / 2 * sizeof(double));
    if (r->nb_start) {
        uint64_t nnz = r->nb_v ? r->nb_start[n] : 0;
        mem_free(r, r->nb_v, nnz * sizeof *r->nb_v);
        mem_free(r, r->nb_d, nnz * sizeof *r->nb_d);
        mem_free(r, r->nb_start, (n + 1) * sizeof *r->nb_start);
    }
    mem_free(r, r->binom, (uint64_t)(r->bk + 1) * r->bstride * sizeof *r->binom);
    mem_free(r, r->inv, (uint64_t)r->p * sizeof *r->inv);
    mem_free(r, r->voff, (r->cols.n + 1) * sizeof *r->voff);
    vec_free(r, &r->cols);
    vec_free(r, &r->vent);
    col_free(r, &r->w0.cob);
    heap_free(r, &r->w0.red);
    pivots_free(r, &r->piv);
    r->dist_own = NULL;
    r->nb_start = NULL;
    r->binom = NULL;
    r->inv = NULL;
    r->voff = NULL;
}

static bool check_input(rips_engine *r, const topoml_input_v1 *in)
{
    const char *bad = NULL;
    if (in->n > UINT32_MAX) {
        /* vertices are 32-bit numbers, and one value is kept as a sentinel */
        fail(r, TOPOML_E_OVERFLOW,
             "rips: n = %llu points, more than the 2^32 - 1 vertices a simplex can name",
             (unsigned long long)in->n);
        return false;
    }
    if (in->kind == TOPOML_INPUT_POINTS) {
        if (in->dtype != TOPOML_F32 && in->dtype != TOPOML_F64)
            bad = "unknown dtype";
        else if (in->metric >= TOPOML_METRIC_COUNT)
            bad = "unknown metric";
        else if (in->dim > 0 && in->n > UINT64_MAX / in->dim)
            bad = "n * dim overflows";
        else if (!in->data && in->n > 0 && in->dim > 0)
            bad = "no data";
    } else if (in->kind == TOPOML_INPUT_CONDENSED) {
        if (in->dtype != TOPOML_F32 && in->dtype != TOPOML_F64)
            bad = "unknown dtype";
        else if (!in->data && in->n > 1)
            bad = "no data";
    } else if (in->kind == TOPOML_INPUT_SPARSE) {
        if (!in->edges && in->n_edges > 0)
            bad = "no edges";
    } else {
        bad = "unknown input kind";
    }
    if (bad)
        fail(r, TOPOML_E_INVALID, "rips: bad input: %s", bad);
    return bad == NULL;
}

int scalar_rips(const topoml_call_v1 *call, const topoml_input_v1 *in,
                const topoml_rips_params_v1 *params, topoml_barcode_v1 *out)
{
    return scalar_rips_pooled(call, in, params, NULL, NULL, out);
}

int scalar_rips_hooked(const topoml_call_v1 *call, const topoml_input_v1 *in,
                       const topoml_rips_params_v1 *params, const scalar_rips_hook *hook,
                       topoml_barcode_v1 *out)
{
    return scalar_rips_pooled(call, in, params, hook, NULL, out);
}

static int rips_run(const topoml_call_v1 *call, const topoml_input_v1 *in,
                    const topoml_rips_params_v1 *params, const scalar_rips_hook *hook,
                    const scalar_rips_pool *pool, bool distances_only, topoml_barcode_v1 *out);

int scalar_rips_pooled(const topoml_call_v1 *call, const topoml_input_v1 *in,
                       const topoml_rips_params_v1 *params, const scalar_rips_hook *hook,
                       const scalar_rips_pool *pool, topoml_barcode_v1 *out)
{
    return rips_run(call, in, params, hook, pool, false, out);
}

int scalar_rips_pooled_distances(const topoml_call_v1 *call, const topoml_input_v1 *in,
                                 const topoml_rips_params_v1 *params,
                                 const scalar_rips_hook *hook, const scalar_rips_pool *pool,
                                 topoml_barcode_v1 *out)
{
    return rips_run(call, in, params, hook, pool, true, out);
}

static int rips_run(const topoml_call_v1 *call, const topoml_input_v1 *in,
                    const topoml_rips_params_v1 *params, const scalar_rips_hook *hook,
                    const scalar_rips_pool *pool, bool distances_only, topoml_barcode_v1 *out)
{
    if (!call || call->struct_size < offsetof(topoml_call_v1, error_size) + sizeof(size_t) ||
        !call->alloc || !call->realloc || !call->free)
        return TOPOML_E_INVALID;
    rips_engine eng;
    memset(&eng, 0, sizeof eng);
    rips_engine *r = &eng;
    r->call = call;
    r->mem_limit = call->max_memory;
    r->work_mark = RIPS_REPORT_WORK;
    r->w0.work = &r->work;
    r->cur_dim = -1;
    r->hook = hook;
    r->rows_pool =
        pool && pool->n_threads > 1 && pool->run && pool->lock && pool->unlock ? pool : NULL;
    r->pool = distances_only ? NULL : r->rows_pool;
    if (!in || !params || !out)
        return fail(r, TOPOML_E_INVALID, "rips: NULL input, parameters or barcode");
    if (in->struct_size < offsetof(topoml_input_v1, edges) + sizeof in->edges ||
        params->struct_size < offsetof(topoml_rips_params_v1, modulus) + sizeof params->modulus ||
        out->struct_size < offsetof(topoml_barcode_v1, complete) + sizeof out->complete)
        return fail(r, TOPOML_E_INVALID, "rips: a struct is shorter than ABI v1 says");
    out->max_dim = 0;
    out->n_intervals = 0;
    out->intervals = NULL;
    out->complete = 0;
    /* Generators: asked for in the parameters, and room for them in out. */
    const bool gens_out = out->struct_size >= offsetof(topoml_barcode_v1, generators) +
                                                   sizeof out->generators;
    if (gens_out)
        out->generators = NULL;
    r->want_gens = gens_out &&
                   params->struct_size >= offsetof(topoml_rips_params_v1, flags) +
                                              sizeof params->flags &&
                   (params->flags & TOPOML_RIPS_PARAM_GENERATORS);
    const bool coc_out = out->struct_size >= offsetof(topoml_barcode_v1, cocycles) +
                                                  sizeof out->cocycles;
    if (coc_out) {
        out->cocycle_offsets = NULL;
        out->cocycles = NULL;
    }
    r->want_cocycles = coc_out &&
                       params->struct_size >= offsetof(topoml_rips_params_v1, flags) +
                                                  sizeof params->flags &&
                       (params->flags & TOPOML_RIPS_PARAM_COCYCLES);
    if (isnan(params->threshold))
        return fail(r, TOPOML_E_INVALID, "rips: the threshold is NaN");
    if (!check_input(r, in) || !setup_coefficients(r, params->modulus)) {
        release(r);
        return r->status;
    }

    r->n = in->n;
    int done_dim = -1;
    uint64_t bars_done = 0;
    bool ok = true;
    if (r->n > 0) {
        /* H_k of a complex on n points is zero for k > n - 2. */
        r->dim_max = r->n >= 2 && params->max_dim > r->n - 2 ? (uint32_t)(r->n - 2)
                     : r->n >= 2                             ? params->max_dim
                                                             : 0;
        snprintf(r->stage, sizeof r->stage, "distances");
        /* The distance matrix a run without threshold stores is the first
         * large block: refuse it with its size before the index check (whose
         * overflow says nothing of memory) and before any O(n^2) scan. */
        const bool dense = !(params->threshold < INFINITY) && in->kind != TOPOML_INPUT_SPARSE &&
                           (in->kind == TOPOML_INPUT_POINTS || in->dtype != TOPOML_F64);
        const uint64_t npairs = r->n * (r->n - 1) / 2; /* n < 2^32 (check_input) */
        ok = !dense || mem_admit(r,
                                 npairs > UINT64_MAX / sizeof(double) ? UINT64_MAX
                                                                      : mem_size(npairs * 8),
                                 "the distance matrix");
        ok = ok && check_index_range(r);
        ok = ok && (in->kind == TOPOML_INPUT_SPARSE ? setup_edges(r, in, params->threshold)
                                                    : setup_pairs(r, in, params->threshold));
        ok = ok && setup_binomials(r);
        ok = ok && estimate_memory(r);
        snprintf(r->stage, sizeof r->stage, "dim 0");
        r->cur_dim = 0;
        ok = ok && compute_h0(r);
        if (ok) {
            done_dim = 0;
            bars_done = r->n_bars;
        }
        for (uint32_t k = 1; ok && k <= r->dim_max; k++) {
            snprintf(r->stage, sizeof r->stage, "dim %u", k);
            r->cur_dim = (int)k;
            if (k >= 2) {
                ok = collect_columns(r, k);
                pivots_free(r, &r->piv);
                snprintf(r->stage, sizeof r->stage, "dim %u", k);
            }
            ok = ok && reduce_dimension(r, k);
            mem_free(r, r->voff, (r->cols.n + 1) * sizeof *r->voff);
            r->voff = NULL;
            vec_free(r, &r->vent);
            if (ok) {
                done_dim = (int)k;
                bars_done = r->n_bars;
            }
        }
    }
    release(r);

    /* Stopped by a cancel or by the memory limit after some dimensions were
     * finished: those come back (plugin.h, topoml_barcode_v1.complete). */
    if (ok || ((r->status == TOPOML_E_CANCELLED || r->status == TOPOML_E_LIMIT) &&
               done_dim >= 0)) {
        out->intervals = r->bars;
        if (r->want_gens)
            out->generators = r->gens;
        out->n_intervals = ok ? r->n_bars : bars_done;
        if (r->want_cocycles) {
            /* no bar at all (no points): the offsets are the one 0 */
            if (!r->coc_off &&
                !(r->coc_off = grow(r, NULL, &r->cap_coc_off, 1, sizeof *r->coc_off, 1,
                                    "the cocycles"))) {
                mem_free(r, r->bars, r->cap_bars * sizeof *r->bars);
                mem_free(r, r->gens, r->cap_gens * sizeof *r->gens);
                mem_free(r, r->coc, r->cap_coc * sizeof *r->coc);
                out->intervals = NULL;
                out->generators = NULL;
                out->n_intervals = 0;
                return r->status;
            }
            r->coc_off[0] = 0;
            out->cocycle_offsets = r->coc_off;
            out->cocycles = r->coc;
        }
        out->n_intervals = ok ? r->n_bars : bars_done;
        out->max_dim = ok ? params->max_dim : (uint32_t)done_dim;
        out->complete = ok;
        return ok ? TOPOML_OK : r->status;
    }
    mem_free(r, r->bars, r->cap_bars * sizeof *r->bars);
    mem_free(r, r->gens, r->cap_gens * sizeof *r->gens);
    mem_free(r, r->coc_off, r->cap_coc_off * sizeof *r->coc_off);
    mem_free(r, r->coc, r->cap_coc * sizeof *r->coc);
    return r->status;
}
