/*
 * rips_columns.h — which k-simplices are columns of the Rips reduction: the
 * per-simplex tests that rips_columns.cu runs on the device, written once
 * for host and device so that the host tests run the very same code.
 *
 * The rule is the scalar engine's (plugins/scalar/rips.h, "Columns from
 * outside"): a k-simplex s under the threshold is a column unless it was
 * cleared, or it is the facet or the cofacet of a zero-persistence apparent
 * pair. Within a dimension the filtration orders by diameter, then by index
 * descending, so
 *  - the first cofacet of s with diam(s) adds the highest vertex w such that
 *    every d(w, v) <= diam(s), v in s;
 *  - the last facet of t with diam(t) removes the highest vertex u such that
 *    t without u keeps an edge of length diam(t) (a facet that drops a
 *    higher vertex has a smaller index).
 *
 * Simplices are vertex arrays in descending order (v[0] the highest), as in
 * the engine; a simplex's index is sum C(v[i], m - i) over its m vertices.
 * Distances are the condensed matrix of doubles (tmc_row_start order) and
 * neighbour lists of the edges under the threshold, each list in descending
 * vertex order.
 */
#ifndef TOPOML_CUDA_RIPS_COLUMNS_H
#define TOPOML_CUDA_RIPS_COLUMNS_H

#include <stdbool.h>
#include <stdint.h>

#include "backend.h"
#include "rips.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most vertices of a simplex whose columns are collected on the device
 * (dimension <= 14); higher dimensions are left to the engine. */
#define TMR_MAX_VERTS 16

typedef struct tmr_graph {
    const double *dist;        /* condensed, n(n-1)/2 */
    const uint64_t *nb_start;  /* neighbours of v: nb_v[nb_start[v] .. nb_start[v+1]) */
    const uint32_t *nb_v;      /* ... descending, only d <= threshold */
    const uint64_t *binom;     /* binom[r * (n + 1) + v] = C(v, r), r <= TMR rows */
    uint32_t n;
    double threshold;
} tmr_graph;

/* binom[r * (n + 1) + v] = C(v, r) for r < rows, v <= n (Pascal's rule;
 * exact while the values fit, which the engine checked for the rows used). */
static inline void tmr_fill_binomials(uint64_t *binom, uint32_t rows, uint64_t n)
{
    const uint64_t stride = n + 1;
    for (uint32_t r = 0; r < rows; r++)
        for (uint64_t v = 0; v < stride; v++)
            binom[r * stride + v] = r == 0   ? 1
                                    : v == 0 ? 0
                                             : binom[(r - 1) * stride + v - 1] +
                                                   binom[r * stride + v - 1];
}

static inline TMC_HD double tmr_dist(const tmr_graph *g, uint32_t a, uint32_t b)
{
    if (a < b) {
        uint32_t t = a;
        a = b;
        b = t;
    }
    return a == b ? 0.0 : g->dist[tmc_row_start(a) + b];
}

static inline TMC_HD uint64_t tmr_index(const tmr_graph *g, const uint32_t *v, uint32_t m)
{
    uint64_t idx = 0;
    for (uint32_t i = 0; i < m; i++)
        idx += g->binom[(uint64_t)(m - i) * (g->n + 1) + v[i]];
    return idx;
}

/* The vertex added by the first cofacet of s (m vertices, diameter d) with
 * diameter d, or -1. The candidates are the neighbours of the vertex of s
 * with the shortest list, from the top. */
static inline TMC_HD int64_t tmr_first_cofacet(const tmr_graph *g, const uint32_t *v, uint32_t m,
                                               double d)
{
    uint32_t p = v[0];
    uint64_t best = g->nb_start[p + 1] - g->nb_start[p];
    for (uint32_t i = 1; i < m; i++) {
        uint64_t len = g->nb_start[v[i] + 1] - g->nb_start[v[i]];
        if (len < best) {
            best = len;
            p = v[i];
        }
    }
    for (uint64_t q = g->nb_start[p], end = g->nb_start[p + 1]; q < end; q++) {
        uint32_t w = g->nb_v[q];
        bool ok = true;
        for (uint32_t i = 0; i < m && ok; i++)
            ok = w != v[i] && tmr_dist(g, w, v[i]) <= d;
        if (ok)
            return w;
    }
    return -1;
}

/* The vertex removed by the last facet of t (m vertices, diameter d) with
 * diameter d, or -1: the highest vertex u such that some edge of length d
 * misses u. */
static inline TMC_HD int64_t tmr_last_facet(const tmr_graph *g, const uint32_t *t, uint32_t m,
                                            double d)
{
    if (m == 2)
        return d == 0.0 ? (int64_t)t[0] : -1;
    uint32_t cnt[TMR_MAX_VERTS + 1], total = 0;
    for (uint32_t i = 0; i < m; i++)
        cnt[i] = 0;
    for (uint32_t a = 1; a < m; a++)
        for (uint32_t b = 0; b < a; b++)
            if (tmr_dist(g, t[a], t[b]) == d) {
                cnt[a]++;
                cnt[b]++;
                total++;
            }
    for (uint32_t i = 0; i < m; i++)
        if (total > cnt[i])
            return t[i];
    return -1;
}

/* Is s (m vertices, descending; diameter d) a column, clearing aside? Not
 * if it is the facet or the cofacet of a zero apparent pair. */
static inline TMC_HD bool tmr_is_column(const tmr_graph *g, const uint32_t *s, uint32_t m,
                                        double d)
{
    uint32_t t[TMR_MAX_VERTS + 1];
    int64_t w = tmr_first_cofacet(g, s, m, d);
    if (w >= 0) {
        /* s with w, descending */
        uint32_t j = 0;
        for (uint32_t i = 0; i < m; i++) {
            if (j == i && (uint32_t)w > s[i])
                t[j++] = (uint32_t)w;
            t[j++] = s[i];
        }
        if (j == m)
            t[j] = (uint32_t)w;
        if (tmr_last_facet(g, t, m + 1, d) == w)
            return false;
    }
    int64_t u = tmr_last_facet(g, s, m, d);
    if (u >= 0) {
        uint32_t j = 0;
        for (uint32_t i = 0; i < m; i++)
            if (s[i] != (uint32_t)u)
                t[j++] = s[i];
        if (tmr_first_cofacet(g, t, m - 1, d) == u)
            return false;
    }
    return true;
}

/* Is `index` among the sorted `cleared`? */
static inline TMC_HD bool tmr_cleared(const uint64_t *cleared, uint64_t n_cleared, uint64_t index)
{
    uint64_t lo = 0, hi = n_cleared;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (cleared[mid] < index)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n_cleared && cleared[lo] == index;
}

/* The cofaces of the simplex v (m vertices, descending, diameter d) that add
 * a vertex below all of v, under the threshold, from the highest added
 * vertex down: each (m+1)-simplex arises from exactly one such v (itself
 * without its lowest vertex). Returns how many; when `cv` is not NULL, also
 * writes each one's vertices (m + 1, descending) to cv and its diameter to
 * cd, one after the other. */
static inline TMC_HD uint64_t tmr_extend(const tmr_graph *g, const uint32_t *v, uint32_t m,
                                         double d, uint32_t *cv, double *cd)
{
    const uint32_t low = v[m - 1];
    uint64_t lo = g->nb_start[low], hi = g->nb_start[low + 1];
    /* the list is descending: skip the neighbours above `low` */
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (g->nb_v[mid] > low)
            lo = mid + 1;
        else
            hi = mid;
    }
    uint64_t count = 0;
    for (uint64_t q = lo, end = g->nb_start[low + 1]; q < end; q++) {
        uint32_t w = g->nb_v[q];
        double x = d;
        bool ok = true;
        for (uint32_t i = 0; i + 1 < m && ok; i++) { /* d(w, low) is under it */
            double e = tmr_dist(g, w, v[i]);
            ok = e <= g->threshold;
            x = e > x ? e : x;
        }
        if (!ok)
            continue;
        double e = tmr_dist(g, w, low);
        x = e > x ? e : x;
        if (cv) {
            for (uint32_t i = 0; i < m; i++)
                cv[count * (m + 1) + i] = v[i];
            cv[count * (m + 1) + m] = w;
            cd[count] = x;
        }
        count++;
    }
    return count;
}

/* ---- rips_columns.cu: the column hook of scalar_rips_hooked ---- */

typedef struct tmr_columns tmr_columns;

/* A hook state for the POINTS or CONDENSED input `in` (host memory, which
 * must outlive the state), for an engine that asks for the columns of
 * dimensions 2 .. max_dim. Nothing touches the device until the engine asks
 * for its first columns. */
int tmr_columns_open(tmc_ctx *ctx, const topoml_input_v1 *in, uint32_t max_dim,
                     tmr_columns **out);

/* scalar_rips_hook.columns, with user = the state. */
int tmr_columns_hook(void *user, scalar_rips_columns_query *q);

/* Frees the state and what it holds on the device; returns `status`, or the
 * error of freeing when status was TOPOML_OK. */
int tmr_columns_close(tmr_columns *c, int status);

#ifdef __cplusplus
}
#endif
#endif /* TOPOML_CUDA_RIPS_COLUMNS_H */
