/*
 * compute/compute.h — the edge collapse in front of the Rips engine
 * (collapse.c) and its size rule; never installed. ops.c runs the
 * collapse; calibrate.c (gate/) fits its cost models with the size rule.
 * The rule for the threads a call may use is api/api.h's
 * (tm_threads_allowed).
 *
 * Outside core/: the tests, and bench/sort_edges.c, which times
 * tm_collapse_sort_edges on threads.
 */
#ifndef TOPOML_COMPUTE_H
#define TOPOML_COMPUTE_H

#include <stdbool.h>
#include <stdint.h>

#include "api/api.h"

/* ---- edge collapse (collapse.c) ---- */

/* What the probe of a collapse with a minimum share to remove saw. */
typedef struct tm_collapse_probe {
    bool declined;     /* the list was left as it is */
    uint64_t size;     /* the edges the rule is about: the longest tenth, at
                          least 1000 (all, when fewer) */
    uint64_t examined; /* of those, looked at before the decision */
    uint64_t removed;  /* of those, removed */
    /* how it ran: threads (1: the calling thread alone), batches of
     * look-ahead, and the edges whose look-ahead was stale and done again */
    unsigned threads;
    uint64_t batches, redone;
    uint64_t alone; /* edges left to the calling thread alone once the
                       look-ahead was mostly redone */
} tm_collapse_probe;

/* Collapse the flag filtration of `edges` (sorted by (d, i, j), i < j < n)
 * in place: on return its first *n_out entries are the edges that remain,
 * with their new values, and the flag filtration they span has the barcode
 * of the original in every dimension. probe->declined (and the list left as
 * it is) when fewer than min_removed of the longest tenth of the edges go
 * (0: never declines; decided early when that is clear: collapse.c), or an
 * edge is repeated. TOPOML_E_LIMIT / _NOMEM when the working memory cannot
 * be had. With threads > 1 (at most 64; from 20 000 edges) the dominator
 * searches run on that many threads and the result is the same, edge for
 * edge, as on one (collapse.c, "In parallel"). */
int tm_collapse_edges(topoml_context *ctx, uint64_t n, topoml_edge *edges, uint64_t n_edges,
                      double min_removed, unsigned threads, uint64_t *n_out,
                      tm_collapse_probe *probe);

/* The order tm_collapse_edges wants its edges in: by (d, i, j), for qsort. */
int tm_collapse_edge_cmp(const void *a, const void *b);

/* ---- The size rule of TOPOML_COLLAPSE_AUTO (collapse.c) ---- */
/* What the rule decides from: the complex's sizes, known before any of the
 * collapse's own work. */
typedef struct tm_collapse_sizes {
    uint64_t n;       /* vertices */
    uint64_t m;       /* edges within the threshold */
    double sum_deg2;  /* sum over the vertices of deg(v)^2 at the threshold;
                         4 m^2 / n (its least value) when not counted */
    uint32_t max_dim; /* the highest homology dimension asked for */
} tm_collapse_sizes;

/* The rule's estimates, in seconds of one core of the machines measured
 * (docs/notes/bench-cpu.md, "Round 12"): what the collapse would cost, and
 * what the reduction it could shorten costs without it. `worth`: the
 * collapse could pay (collapse_s below reduction_s); the probe then decides
 * from what it removes. */
typedef struct tm_collapse_plan {
    bool worth;
    double collapse_s, reduction_s;
} tm_collapse_plan;

tm_collapse_plan tm_collapse_plan_for(const tm_collapse_sizes *s);

/* A Rips input after the edge collapse. */
typedef struct tm_collapsed {
    bool done;         /* false: nothing collapsed, run the input as it is */
    double threshold;  /* min(threshold, enclosing radius): what the backend gets */
    topoml_edge *edges; /* tm_alloc'd, n_edges of them (unsorted) */
    uint64_t n_edges;
    uint64_t n_before; /* edges within the threshold before the collapse (a
                          sampled estimate when the size rule decided first) */
    tm_collapse_probe probe; /* what the probe saw (min_removed > 0) */
    /* With max_dim > 0 and min_removed > 0: the size rule's verdict (and
     * planned: it was asked); not worth it leaves done false and the probe
     * unrun. */
    bool planned;
    tm_collapse_plan plan;
} tm_collapsed;

/* Sorts edges[0 .. m) by tm_collapse_edge_cmp, qsort's order exactly: a
 * merge sort when a second buffer of m edges fits under the memory limit,
 * on up to `threads` threads from 2^16 edges (slices sorted, then merged
 * two by two); qsort on the calling thread otherwise. */
void tm_collapse_sort_edges(topoml_context *ctx, topoml_edge *edges, uint64_t m,
                            unsigned threads);

/* The edges of `d` within min(threshold, enclosing radius) — the complex the
 * Rips engine would build — collapsed. out->done is false (and the input is
 * to be used as it is) for fewer than 3 points, for input the engine
 * refuses, so that the backend reports it, and when the collapse declines
 * (min_removed, as tm_collapse_edges), and with min_removed > 0 and
 * max_dim > 0 when tm_collapse_plan_for says the collapse cannot pay for
 * homology up to max_dim (0: no size rule). `threads`: the op's threads; the
 * edges are sorted on them from 2, the collapse itself runs on them from 4
 * (on one below, and on one for a graph of more than a quarter of all
 * pairs). */
int tm_collapse_input(topoml_context *ctx, const struct topoml_data *d, uint32_t metric,
                      double threshold, double min_removed, uint32_t max_dim, unsigned threads,
                      tm_collapsed *out);

/* Edges of `d` within `threshold` (collapse.c): counted for sparse input,
 * every pair for no threshold or data in device memory, else estimated
 * from 4096 pairs drawn by a fixed generator (every pair when fewer). */
uint64_t tm_edges_estimate(const struct topoml_data *d, uint32_t metric, double threshold);

/* ---- weighted Rips filtrations (weights.c) ---- */

/* Check o's weight fields for a data set of n vertices. */
int tm_weights_check(topoml_context *ctx, const topoml_rips_options *o, uint64_t n);

/* The weighted filtration of `data` (host memory) as o asks: *out a data
 * set of the same vertices whose distances are the weighted edge values
 * (condensed for points and matrices, an edge list for an edge list), and
 * *weights the n vertex weights (tm_free). */
int tm_weighted_data(topoml_context *ctx, const struct topoml_data *data,
                     const topoml_rips_options *o, topoml_data **out, double **weights);

/* H0 of the weighted filtration: `weighted` from tm_weighted_data, w its
 * weights; the vertices with weight <= threshold and the edges within it,
 * each class born at its vertex's weight, the younger dying at the merging
 * edge (bars of length zero dropped). *out (tm_free) gets the finite bars
 * by (death, birth), then the essential ones. */
int tm_weighted_h0(topoml_context *ctx, const topoml_data *weighted, const double *w,
                   double threshold, topoml_interval **out, uint64_t *n_out);

#endif /* TOPOML_COMPUTE_H */
