/*
 * collapse.c — edge collapse of a flag filtration (Boissonnat and Pritam,
 * "Edge collapse and persistence of flag complexes", SoCG 2020), in the
 * backward form of Glisse and Pritam ("Swap, shift and trim to edge collapse
 * a filtration", SoCG 2022): a core stage before the Rips op that hands the
 * backend a smaller graph whose flag filtration has the same barcode in every
 * dimension. It is not a Rips engine and computes no homology.
 *
 * The rule. Let G_s be the graph of the edges whose (current) value is <= s.
 * An edge uv of G_s is dominated there by a vertex w (w != u, v) when w is a
 * neighbour of u and v and of every other common neighbour of u and v in G_s:
 * N[u] ∩ N[v] ⊆ N[w] (closed neighbourhoods). Removing a dominated edge from
 * the flag complex of G_s is a strong collapse, so the inclusion of the flag
 * complex of G_s \ uv into that of G_s is a homotopy equivalence. If uv, of
 * value t, is dominated in G_s for every s in [t, t'), moving it to t' leaves
 * every complex of the filtration homotopy equivalent to the one before, by
 * inclusions that commute with those of the filtration: the persistence
 * modules are isomorphic in every dimension, H0 and the classes still alive at
 * the end included. If it stays dominated up to the end, it is dropped.
 *
 * Each step is exact on the filtration as it is at that moment, so the order
 * of the steps changes how much is removed, never the answer. As Glisse and
 * Pritam do, edges are taken from the largest value down: the edges above
 * have their final values by then and those below are where they started.
 * Whenever finding a dominator gets expensive the search may give up: the
 * edge then keeps its value, which is exact too (see find_dominator).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "metric.h"

/* Times. Every value an edge ever has is the value of some input edge, so
 * a value is kept as its rank: the position in the sorted list of the first
 * edge with that value. Ranks compare as the values do, ties included, in
 * 32 bits; CL_NEVER is an edge that is gone. */
#define CL_NEVER UINT32_MAX

/* Adjacency: the neighbours of v are nb[start[v] .. start[v+1]), ascending
 * by vertex, each with the number of the edge that joins them. */
typedef struct cl_adj {
    uint32_t v;
    uint32_t e;
} cl_adj;

/* A common neighbour k of the edge being moved, present from `time` on:
 * the later of its two edges to the ends. */
typedef struct cl_common {
    uint32_t time;
    uint32_t k;
} cl_common;

typedef struct cl_graph {
    uint64_t n;
    const uint64_t *start;
    const cl_adj *nb;
    uint32_t *time;  /* current time of each edge */
    uint32_t *dense; /* NULL, or time of uv at dense[u * n + v] (CL_NEVER: none) */
} cl_graph;

/* Candidates one dominator search tries before it gives up (the edge then
 * stays where it is: exact, just less reduced). Bounds the worst case, a
 * large neighbourhood where nothing dominates, to O(limit * |common|)
 * look-ups per arrival. */
#define CL_CANDIDATES 48

/* The n x n table of times is used when it is no larger than this many
 * times the adjacency lists, or than CL_DENSE_BYTES: look-ups are then one
 * load instead of a binary search, which is most of the time of the
 * collapse otherwise. */
#define CL_DENSE_FACTOR 4
#define CL_DENSE_BYTES (UINT64_C(64) << 20)

/* Time of the edge wk, CL_NEVER if there is none. */
static uint32_t edge_time(const cl_graph *g, uint32_t w, uint32_t k)
{
    if (g->dense)
        return g->dense[(uint64_t)w * g->n + k];
    if (g->start[k + 1] - g->start[k] < g->start[w + 1] - g->start[w]) {
        uint32_t x = w;
        w = k;
        k = x;
    }
    uint64_t lo = g->start[w], hi = g->start[w + 1], end = hi;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (g->nb[mid].v < k)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < end && g->nb[lo].v == k ? g->time[g->nb[lo].e] : CL_NEVER;
}

static void set_time(cl_graph *g, uint64_t e, uint32_t u, uint32_t v, uint32_t t)
{
    g->time[e] = t;
    if (g->dense) {
        g->dense[(uint64_t)u * g->n + v] = t;
        g->dense[(uint64_t)v * g->n + u] = t;
    }
}

/* Is w adjacent at time s to every one of c[from .. to) other than itself? */
static bool covers(const cl_graph *g, uint32_t w, const cl_common *c, uint64_t from, uint64_t to,
                   uint32_t s)
{
    for (uint64_t q = from; q < to; q++)
        if (c[q].k != w && edge_time(g, w, c[q].k) > s)
            return false;
    return true;
}

/* A vertex among c[0 .. present) adjacent at time s to all the others, or
 * UINT32_MAX. Gives up after CL_CANDIDATES candidates: that only means the
 * edge is not moved (see the top of the file). */
static uint32_t find_dominator(const cl_graph *g, const cl_common *c, uint64_t present, uint32_t s)
{
    uint64_t tries = present < CL_CANDIDATES ? present : CL_CANDIDATES;
    for (uint64_t q = 0; q < tries; q++)
        if (covers(g, c[q].k, c, 0, present, s))
            return c[q].k;
    return UINT32_MAX;
}

static int common_cmp(const void *a, const void *b)
{
    const cl_common *x = a, *y = b;
    if (x->time != y->time)
        return x->time < y->time ? -1 : 1;
    return x->k < y->k ? -1 : x->k > y->k;
}

/* The time edge uv (current time t) can be moved to: the first time >= t at
 * which it is not dominated, CL_NEVER if it is dominated to the end. `c` has
 * room for min(deg u, deg v) entries. */
static uint32_t delay(const cl_graph *g, uint32_t u, uint32_t v, uint32_t t, cl_common *c)
{
    /* Common neighbours with the time each becomes one. */
    uint64_t a = g->start[u], ae = g->start[u + 1], b = g->start[v], be = g->start[v + 1];
    uint64_t m = 0;
    while (a < ae && b < be) {
        if (g->nb[a].v < g->nb[b].v) {
            a++;
        } else if (g->nb[a].v > g->nb[b].v) {
            b++;
        } else {
            uint32_t x = g->time[g->nb[a].e], y = g->time[g->nb[b].e];
            uint32_t time = x > y ? x : y;
            if (time != CL_NEVER)
                c[m++] = (cl_common){time, g->nb[a].v};
            a++;
            b++;
        }
    }
    if (m == 0)
        return t;
    qsort(c, (size_t)m, sizeof *c, common_cmp);

    /* Between two arrivals of common neighbours only edges are added, so a
     * dominator stays one: domination needs checking only at arrivals. */
    uint32_t s = t;
    uint64_t present = 0;
    uint32_t w = UINT32_MAX;
    for (;;) {
        uint64_t before = present;
        while (present < m && c[present].time <= s)
            present++;
        if (present == 0)
            return s;
        if (w == UINT32_MAX || !covers(g, w, c, before, present, s))
            w = find_dominator(g, c, present, s);
        if (w == UINT32_MAX)
            return s;
        if (present == m)
            return CL_NEVER;
        s = c[present].time;
    }
}

int tm_collapse_edges(topoml_context *ctx, uint64_t n, topoml_edge *edges, uint64_t n_edges,
                      uint64_t *n_out)
{
    *n_out = n_edges;
    if (n_edges < 3)
        return TOPOML_OK;
    if (n_edges >= UINT32_MAX || n >= UINT32_MAX)
        return TOPOML_OK; /* times are 32-bit: leave the graph as it is */
    bool dense = n * n <= CL_DENSE_FACTOR * 2 * n_edges || n * n * sizeof(uint32_t) <= CL_DENSE_BYTES;
    uint64_t bytes = (n + 1) * sizeof(uint64_t) * 2 + 4 * n_edges * sizeof(cl_adj) +
                     n_edges * sizeof(uint32_t) + n * sizeof(cl_common) +
                     (dense ? n * n * sizeof(uint32_t) : 0);
    int rc = tm_check_memory(ctx, bytes, "the edge collapse");
    if (rc != TOPOML_OK)
        return rc;
    uint64_t *start = tm_calloc(ctx, (size_t)n + 1, sizeof *start);
    uint64_t *fill = tm_alloc(ctx, ((size_t)n + 1) * sizeof *fill);
    cl_adj *raw = tm_alloc(ctx, (size_t)(2 * n_edges) * sizeof *raw);
    cl_adj *nb = tm_alloc(ctx, (size_t)(2 * n_edges) * sizeof *nb);
    uint32_t *time = tm_alloc(ctx, (size_t)n_edges * sizeof *time);
    cl_common *c = tm_alloc(ctx, (size_t)n * sizeof *c);
    uint32_t *table = dense ? tm_alloc(ctx, (size_t)(n * n) * sizeof *table) : NULL;
    if (!start || !fill || !raw || !nb || !time || !c || (dense && !table)) {
        rc = tm_nomem(ctx, (size_t)bytes);
        goto out;
    }
    for (uint64_t e = 0; e < n_edges; e++) {
        start[edges[e].i + 1]++;
        start[edges[e].j + 1]++;
        time[e] = e > 0 && edges[e].d == edges[e - 1].d ? time[e - 1] : (uint32_t)e;
    }
    for (uint64_t v = 0; v < n; v++)
        start[v + 1] += start[v];
    /* Lists in edge order first, then transposed: walking u ascending and
     * appending u to each neighbour's list leaves every list sorted. */
    memcpy(fill, start, (size_t)n * sizeof *fill);
    for (uint64_t e = 0; e < n_edges; e++) {
        raw[fill[edges[e].i]++] = (cl_adj){edges[e].j, (uint32_t)e};
        raw[fill[edges[e].j]++] = (cl_adj){edges[e].i, (uint32_t)e};
    }
    memcpy(fill, start, (size_t)n * sizeof *fill);
    for (uint64_t u = 0; u < n; u++)
        for (uint64_t q = start[u]; q < start[u + 1]; q++)
            nb[fill[raw[q].v]++] = (cl_adj){(uint32_t)u, raw[q].e};
    tm_free(ctx, raw);
    raw = NULL;
    /* A repeated edge is bad input: leave it to the backend to say so. */
    for (uint64_t v = 0; v < n; v++)
        for (uint64_t q = start[v] + 1; q < start[v + 1]; q++)
            if (nb[q].v == nb[q - 1].v) {
                rc = TOPOML_OK;
                goto out;
            }

    cl_graph g = {n, start, nb, time, table};
    if (table) {
        for (uint64_t q = 0; q < n * n; q++)
            table[q] = CL_NEVER;
        for (uint64_t e = 0; e < n_edges; e++)
            set_time(&g, e, edges[e].i, edges[e].j, time[e]);
    }
    for (uint64_t e = n_edges; e-- > 0;) {
        uint32_t t = delay(&g, edges[e].i, edges[e].j, time[e], c);
        if (t != time[e])
            set_time(&g, e, edges[e].i, edges[e].j, t);
    }

    /* The value of time t is edges[t].d. Edge e's time is its own rank
     * (<= e) or later than e, and the compaction below has only written
     * entries < e when it reaches e: edges[t] is still the input's. */
    uint64_t kept = 0;
    for (uint64_t e = 0; e < n_edges; e++)
        if (time[e] != CL_NEVER) {
            double d = time[e] > e ? edges[time[e]].d : edges[e].d;
            edges[kept++] = (topoml_edge){d, edges[e].i, edges[e].j};
        }
    *n_out = kept;
    rc = TOPOML_OK;
out:
    tm_free(ctx, start);
    tm_free(ctx, fill);
    tm_free(ctx, raw);
    tm_free(ctx, nb);
    tm_free(ctx, time);
    tm_free(ctx, c);
    tm_free(ctx, table);
    return rc;
}

static int edge_cmp(const void *a, const void *b)
{
    const topoml_edge *x = a, *y = b;
    if (x->d != y->d)
        return x->d < y->d ? -1 : 1;
    if (x->i != y->i)
        return x->i < y->i ? -1 : 1;
    return (x->j > y->j) - (x->j < y->j);
}

/* d(i, j), i > j, of a POINTS or CONDENSED data set: the value the Rips
 * engine computes for it (plugins/scalar/rips.c, pair_dist). */
static inline double data_dist(const struct topoml_data *d, uint32_t metric, uint64_t i,
                               uint64_t j)
{
    if (d->kind == TOPOML_INPUT_CONDENSED)
        return d->values[i * (i - 1) / 2 + j];
    return scalar_point_dist(TOPOML_F64, (topoml_metric)metric, d->values, d->dim, i, j);
}

/* One pass over the pairs: the largest distance of each point (rmax) and,
 * when `edges` is not NULL, the pairs within `cut`. false on a distance the
 * engine refuses (NaN, negative). */
static bool scan(const struct topoml_data *d, uint32_t metric, double cut, double *rmax,
                 topoml_edge *edges, uint64_t *count)
{
    uint64_t m = 0;
    for (uint64_t i = 1; i < d->n; i++) {
        double ri = rmax[i];
        for (uint64_t j = 0; j < i; j++) {
            double x = data_dist(d, metric, i, j);
            /* Between points, inf is a distance beyond double (metric.h
             * scales, so never an intermediate overflow), not an absent
             * edge: the engine refuses it. */
            if (!(x >= 0.0) || (d->kind == TOPOML_INPUT_POINTS && isinf(x)))
                return false;
            ri = x > ri ? x : ri;
            rmax[j] = x > rmax[j] ? x : rmax[j];
            if (x <= cut && x < INFINITY) {
                if (edges)
                    edges[m] = (topoml_edge){x, (uint32_t)j, (uint32_t)i};
                m++;
            }
        }
        rmax[i] = ri;
    }
    *count = m;
    return true;
}

int tm_collapse_input(topoml_context *ctx, const struct topoml_data *d, uint32_t metric,
                      double threshold, double max_density, tm_collapsed *out)
{
    memset(out, 0, sizeof *out);
    out->threshold = threshold;
    const uint64_t n = d->n;
    if (n < 3 || n >= UINT32_MAX)
        return TOPOML_OK;
    double radius = INFINITY;
    uint64_t m = 0;
    topoml_edge *edges = NULL;
    if (d->kind == TOPOML_INPUT_SPARSE) {
        uint64_t *deg = tm_calloc(ctx, (size_t)n, sizeof *deg);
        double *rmax = tm_calloc(ctx, (size_t)n, sizeof *rmax);
        if (!deg || !rmax) {
            tm_free(ctx, deg);
            tm_free(ctx, rmax);
            return tm_nomem(ctx, (size_t)n * 16);
        }
        bool ok = true;
        for (uint64_t q = 0; q < d->n_edges && ok; q++) {
            const topoml_edge *x = &d->edges[q];
            ok = x->i < x->j && x->j < n && x->d >= 0.0;
            if (ok && x->d < INFINITY) {
                deg[x->i]++;
                deg[x->j]++;
                rmax[x->i] = x->d > rmax[x->i] ? x->d : rmax[x->i];
                rmax[x->j] = x->d > rmax[x->j] ? x->d : rmax[x->j];
            }
        }
        for (uint64_t v = 0; v < n && ok; v++)
            if (deg[v] >= n - 1 && rmax[v] < radius)
                radius = rmax[v];
        tm_free(ctx, deg);
        tm_free(ctx, rmax);
        if (!ok)
            return TOPOML_OK; /* the backend names the bad edge */
        double t = threshold < radius ? threshold : radius;
        for (uint64_t q = 0; q < d->n_edges; q++)
            m += d->edges[q].d <= t && d->edges[q].d < INFINITY;
        if ((double)m > max_density * (double)(n * (n - 1) / 2))
            return TOPOML_OK;
        int rc = tm_check_memory(ctx, m * sizeof *edges, "the edges to collapse");
        if (rc != TOPOML_OK)
            return rc;
        edges = tm_alloc(ctx, (size_t)(m ? m : 1) * sizeof *edges);
        if (!edges)
            return tm_nomem(ctx, (size_t)m * sizeof *edges);
        m = 0;
        for (uint64_t q = 0; q < d->n_edges; q++)
            if (d->edges[q].d <= t && d->edges[q].d < INFINITY)
                edges[m++] = d->edges[q];
        out->threshold = t;
    } else {
        if (d->kind == TOPOML_INPUT_POINTS)
            for (uint64_t q = 0; q < n * d->dim; q++)
                if (!isfinite(d->values[q]))
                    return TOPOML_OK; /* the backend names the coordinate */
        double *rmax = tm_calloc(ctx, (size_t)n, sizeof *rmax);
        if (!rmax)
            return tm_nomem(ctx, (size_t)n * sizeof *rmax);
        /* Count first (the threshold may be the enclosing radius, known only
         * after a pass), then fill: the memory check sees the exact size. */
        if (!scan(d, metric, threshold, rmax, NULL, &m)) {
            tm_free(ctx, rmax);
            return TOPOML_OK; /* the backend names the bad distance */
        }
        for (uint64_t v = 0; v < n; v++)
            radius = rmax[v] < radius ? rmax[v] : radius;
        double t = threshold < radius ? threshold : radius;
        if (t < threshold) {
            memset(rmax, 0, (size_t)n * sizeof *rmax);
            scan(d, metric, t, rmax, NULL, &m);
        }
        if ((double)m > max_density * (double)(n * (n - 1) / 2)) {
            tm_free(ctx, rmax);
            return TOPOML_OK;
        }
        int rc = tm_check_memory(ctx, m * sizeof *edges, "the edges to collapse");
        if (rc == TOPOML_OK) {
            edges = tm_alloc(ctx, (size_t)(m ? m : 1) * sizeof *edges);
            rc = edges ? TOPOML_OK : tm_nomem(ctx, (size_t)m * sizeof *edges);
        }
        if (rc == TOPOML_OK) {
            memset(rmax, 0, (size_t)n * sizeof *rmax);
            scan(d, metric, t, rmax, edges, &m);
        }
        tm_free(ctx, rmax);
        if (rc != TOPOML_OK)
            return rc;
        out->threshold = t;
    }
    qsort(edges, (size_t)m, sizeof *edges, edge_cmp);
    out->n_before = m;
    int rc = tm_collapse_edges(ctx, n, edges, m, &out->n_edges);
    if (rc != TOPOML_OK) {
        tm_free(ctx, edges);
        return rc;
    }
    out->edges = edges;
    out->done = true;
    return TOPOML_OK;
}
