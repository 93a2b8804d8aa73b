/*
 * weights.c — weighted Rips filtrations (topoml.h, "Weighted Rips
 * filtrations"): the vertex weights (given, or the distance to measure of
 * the k nearest neighbours), the edge values of the weighted filtration,
 * and H0 with vertices born at their weights.
 *
 * The bars of dimension >= 1 are not computed here: an edge's value is >=
 * the weights of both its ends, so at every scale the complex is the flag
 * complex of the edges within it, and ops.c hands the weighted edge values
 * to a backend as an ordinary Rips input (which the gate checks as any
 * other). Only H0 depends on when the vertices enter: tm_weighted_h0
 * replaces the backend's H0 (every vertex born at 0) by the union-find
 * below, with giotto-ph's elder rule.
 *
 * The distances of a point cloud and the edges of H0 are computed here
 * with the reference's metric code (metric.h), not through a backend's
 * distances or edges op: a backend named for the barcode need not have
 * those.
 *
 * The formulas are giotto-ph's (gph/python/ripser_interface.py,
 * _compute_dtm_weights and _weight_filtration), in double and in the same
 * order of operations, so that the values are its values before its cast
 * to float32.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "compute/compute.h"
#include "metric.h"

int tm_weights_check(topoml_context *ctx, const topoml_rips_options *o, uint64_t n)
{
    if (o->weights > TOPOML_WEIGHTS_DTM)
        return tm_error(ctx, TOPOML_E_INVALID, "unknown weights setting %u", o->weights);
    if (!(o->weight_p == 1 || o->weight_p == 2 || o->weight_p == INFINITY))
        return tm_error(ctx, TOPOML_E_INVALID,
                        "weight p must be 1, 2 or infinity (giotto-ph's choices), not %g",
                        o->weight_p);
    if (o->weights == TOPOML_WEIGHTS_GIVEN) {
        if (!o->vertex_weights)
            return tm_error(ctx, TOPOML_E_INVALID, "weights: no vertex weights given");
        for (uint64_t i = 0; i < n; i++)
            if (!(o->vertex_weights[i] >= 0) || isinf(o->vertex_weights[i]))
                return tm_error(ctx, TOPOML_E_INVALID,
                                "weights: the weight of vertex %llu is %g: weights must be "
                                "finite and >= 0",
                                (unsigned long long)i, o->vertex_weights[i]);
    }
    if (o->weights == TOPOML_WEIGHTS_DTM) {
        if (o->dtm_neighbors < 1)
            return tm_error(ctx, TOPOML_E_INVALID, "DTM: the number of neighbours must be >= 1");
        if (!(o->dtm_r > 0) || isinf(o->dtm_r))
            return tm_error(ctx, TOPOML_E_INVALID, "DTM: r must be a finite number > 0, not %g",
                            o->dtm_r);
        if (n > 0 && o->dtm_neighbors > n - 1)
            return tm_error(ctx, TOPOML_E_INVALID,
                            "DTM: %u neighbours asked for, but there are only %llu points",
                            o->dtm_neighbors, (unsigned long long)n);
    }
    return TOPOML_OK;
}

/* ---- the distance to measure ---- */

static int by_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* numpy's x ** e: its fast paths (square and square root) where it takes
 * them, pow otherwise. */
static double np_power(double x, double e)
{
    if (e == 2)
        return x * x;
    if (e == 0.5)
        return sqrt(x);
    if (e == 1)
        return x;
    return pow(x, e);
}

/* w = 2 ((sum of the k smallest of d[0..m)^r) / (k + 1))^(1/r), the
 * smallest first and summed in that order as giotto-ph's sum over the rows
 * of kneighbors_graph does; d is reordered. */
static double dtm_of(double *d, uint64_t m, uint32_t k, double r)
{
    qsort(d, (size_t)m, sizeof *d, by_double);
    double s = 0;
    for (uint32_t a = 0; a < k; a++)
        s += np_power(d[a], r);
    s /= (double)k + 1;
    s = np_power(s, 1 / r);
    return s * 2;
}

static double condensed_get(const double *c, uint64_t i, uint64_t j)
{
    if (i < j) {
        const uint64_t t = i;
        i = j;
        j = t;
    }
    return c[i * (i - 1) / 2 + j];
}

/* ---- the edge rule ---- */

static double edge_value(double d, double wx, double wy, double p)
{
    const double hi = fmax(wx, wy);
    if (p == INFINITY)
        return fmax(d, hi);
    if (p == 1)
        return d <= fabs(wx - wy) / 2 ? hi : d + (wx + wy) / 2;
    /* p == 2 */
    if (d <= sqrt(fabs(wx * wx - wy * wy)) / 2)
        return hi;
    const double s = (wx + wy) / 2, t = (wx - wy) / 2;
    return sqrt((d * d + s * s) * (d * d + t * t)) / d;
}

int tm_weighted_data(topoml_context *ctx, const struct topoml_data *data,
                     const topoml_rips_options *o, topoml_data **out, double **weights_out)
{
    *out = NULL;
    *weights_out = NULL;
    const uint64_t n = data->n;
    int rc = tm_weights_check(ctx, o, n);
    if (rc != TOPOML_OK)
        return rc;
    double *cond = NULL; /* a dense input's distances, condensed */
    uint64_t n_cond = 0;
    if (data->kind != TOPOML_INPUT_SPARSE) {
        n_cond = n * (n ? n - 1 : 0) / 2;
        if (tm_check_memory(ctx, n_cond * sizeof(double), "the weighted distance matrix") !=
            TOPOML_OK)
            return TOPOML_E_LIMIT;
        cond = tm_alloc(ctx, (size_t)(n_cond ? n_cond : 1) * sizeof *cond);
        if (!cond)
            return tm_nomem(ctx, n_cond * sizeof *cond);
        if (data->kind == TOPOML_INPUT_CONDENSED)
            memcpy(cond, data->values, (size_t)n_cond * sizeof *cond);
        else
            for (uint64_t i = 1, k = 0; i < n; i++)
                for (uint64_t j = 0; j < i; j++, k++)
                    cond[k] = scalar_point_dist(TOPOML_F64, (topoml_metric)o->metric,
                                                data->values, data->dim, i, j);
    }
    double *w = tm_alloc(ctx, (size_t)(n ? n : 1) * sizeof *w);
    if (!w) {
        tm_free(ctx, cond);
        return tm_nomem(ctx, n * sizeof *w);
    }
    if (o->weights == TOPOML_WEIGHTS_GIVEN) {
        memcpy(w, o->vertex_weights, (size_t)n * sizeof *w);
    } else if (cond) {
        double *row = tm_alloc(ctx, (size_t)(n ? n : 1) * sizeof *row);
        if (!row) {
            rc = tm_nomem(ctx, n * sizeof *row);
            goto fail;
        }
        for (uint64_t i = 0; i < n; i++) {
            uint64_t m = 0;
            for (uint64_t j = 0; j < n; j++)
                if (j != i)
                    row[m++] = condensed_get(cond, i, j);
            w[i] = dtm_of(row, m, o->dtm_neighbors, o->dtm_r);
        }
        tm_free(ctx, row);
    } else {
        /* each vertex's stored edges, gathered by vertex */
        uint64_t *start = tm_calloc(ctx, (size_t)n + 1, sizeof *start);
        double *adj = tm_alloc(ctx, (size_t)(data->n_edges ? data->n_edges : 1) * 2 * sizeof *adj);
        uint64_t *fill = tm_calloc(ctx, (size_t)(n ? n : 1), sizeof *fill);
        if (!start || !adj || !fill) {
            tm_free(ctx, start);
            tm_free(ctx, adj);
            tm_free(ctx, fill);
            rc = tm_nomem(ctx, data->n_edges * 2 * sizeof *adj);
            goto fail;
        }
        for (uint64_t e = 0; e < data->n_edges; e++) {
            start[data->edges[e].i + 1]++;
            start[data->edges[e].j + 1]++;
        }
        for (uint64_t i = 0; i < n; i++)
            start[i + 1] += start[i];
        for (uint64_t e = 0; e < data->n_edges; e++) {
            const topoml_edge *x = &data->edges[e];
            adj[start[x->i] + fill[x->i]++] = x->d;
            adj[start[x->j] + fill[x->j]++] = x->d;
        }
        for (uint64_t i = 0; i < n && rc == TOPOML_OK; i++) {
            const uint64_t m = start[i + 1] - start[i];
            if (m < o->dtm_neighbors)
                rc = tm_error(ctx, TOPOML_E_INVALID,
                              "DTM: vertex %llu has %llu edges, fewer than the %u neighbours "
                              "asked for",
                              (unsigned long long)i, (unsigned long long)m, o->dtm_neighbors);
            else
                w[i] = dtm_of(adj + start[i], m, o->dtm_neighbors, o->dtm_r);
        }
        tm_free(ctx, start);
        tm_free(ctx, adj);
        tm_free(ctx, fill);
        if (rc != TOPOML_OK)
            goto fail;
    }

    if (cond) {
        for (uint64_t i = 1, k = 0; i < n; i++)
            for (uint64_t j = 0; j < i; j++, k++)
                cond[k] = edge_value(cond[k], w[i], w[j], o->weight_p);
        rc = topoml_data_from_condensed(ctx, out, n, cond);
    } else {
        topoml_edge *e = tm_alloc(ctx, (size_t)(data->n_edges ? data->n_edges : 1) * sizeof *e);
        if (!e) {
            rc = tm_nomem(ctx, data->n_edges * sizeof *e);
            goto fail;
        }
        for (uint64_t k = 0; k < data->n_edges; k++) {
            e[k] = data->edges[k];
            e[k].d = edge_value(e[k].d, w[e[k].i], w[e[k].j], o->weight_p);
        }
        rc = topoml_data_from_edges(ctx, out, n, data->n_edges, e);
        tm_free(ctx, e);
    }
    if (rc != TOPOML_OK)
        goto fail;
    tm_free(ctx, cond);
    *weights_out = w;
    return TOPOML_OK;
fail:
    tm_free(ctx, cond);
    tm_free(ctx, w);
    return rc;
}

/* ---- H0 with vertex births ---- */

static int by_edge_value(const void *a, const void *b)
{
    const topoml_edge *x = a, *y = b;
    return x->d < y->d ? -1 : x->d > y->d;
}

static int by_death_birth(const void *a, const void *b)
{
    const topoml_interval *x = a, *y = b;
    if (x->death != y->death)
        return x->death < y->death ? -1 : 1;
    return x->birth < y->birth ? -1 : x->birth > y->birth;
}

static uint64_t root_of(uint64_t *parent, uint64_t x)
{
    while (parent[x] != x) {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    return x;
}

int tm_weighted_h0(topoml_context *ctx, const topoml_data *weighted, const double *w,
                   double threshold, topoml_interval **out, uint64_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    const uint64_t n = weighted->n;
    /* The H0 bars depend only on a minimum spanning forest of the edges
     * within the threshold (an edge that joins no two classes ends no bar,
     * and with ties every such forest joins the same classes at each
     * value): Prim's algorithm on a matrix (O(n^2) time, O(n) memory),
     * the edges of an edge list; then the union-find over them by value. */
    const bool dense = weighted->kind == TOPOML_INPUT_CONDENSED;
    const uint64_t all = dense ? (n ? n - 1 : 0) : weighted->n_edges;
    if (tm_check_memory(ctx, all * sizeof(topoml_edge) + n * 2 * sizeof(double),
                        "the edges of a weighted H0") != TOPOML_OK)
        return TOPOML_E_LIMIT;
    topoml_edge *edges = tm_alloc(ctx, (size_t)(all ? all : 1) * sizeof *edges);
    if (!edges)
        return tm_nomem(ctx, all * sizeof *edges);
    uint64_t m = 0;
    if (dense) {
        double *key = tm_alloc(ctx, (size_t)(n ? n : 1) * sizeof *key);
        uint64_t *from = tm_alloc(ctx, (size_t)(n ? n : 1) * sizeof *from);
        if (!key || !from) {
            tm_free(ctx, key);
            tm_free(ctx, from);
            tm_free(ctx, edges);
            return tm_nomem(ctx, n * (sizeof *key + sizeof *from));
        }
        for (uint64_t v = 0; v < n; v++) {
            key[v] = INFINITY;
            from[v] = UINT64_MAX;
        }
        /* done: key NaN */
        for (uint64_t step = 0; step < n; step++) {
            uint64_t u = UINT64_MAX;
            for (uint64_t v = 0; v < n; v++)
                if (!isnan(key[v]) && (u == UINT64_MAX || key[v] < key[u]))
                    u = v;
            if (from[u] != UINT64_MAX)
                edges[m++] = (topoml_edge){key[u], (uint32_t)from[u], (uint32_t)u};
            key[u] = NAN;
            for (uint64_t v = 0; v < n; v++) {
                if (isnan(key[v]))
                    continue;
                const uint64_t a = u > v ? u : v, b = u + v - a;
                const double d = weighted->values[a * (a - 1) / 2 + b];
                if (d <= threshold && d < key[v]) {
                    key[v] = d;
                    from[v] = u;
                }
            }
        }
        tm_free(ctx, key);
        tm_free(ctx, from);
    } else {
        for (uint64_t k = 0; k < all; k++)
            if (weighted->edges[k].d <= threshold)
                edges[m++] = weighted->edges[k];
    }
    qsort(edges, (size_t)m, sizeof *edges, by_edge_value);
    int rc = TOPOML_OK;
    uint64_t *parent = tm_alloc(ctx, (size_t)(n ? n : 1) * sizeof *parent);
    double *birth = tm_alloc(ctx, (size_t)(n ? n : 1) * sizeof *birth);
    topoml_interval *bars = tm_alloc(ctx, (size_t)(n ? n : 1) * sizeof *bars);
    if (!parent || !birth || !bars) {
        rc = tm_nomem(ctx, n * (sizeof *parent + sizeof *birth + sizeof *bars));
        goto done;
    }
    for (uint64_t v = 0; v < n; v++) {
        parent[v] = v;
        birth[v] = w[v];
    }
    uint64_t k = 0;
    for (uint64_t e = 0; e < m; e++) {
        uint64_t a = root_of(parent, edges[e].i), b = root_of(parent, edges[e].j);
        if (a == b)
            continue;
        /* the elder rule: the class born later dies here */
        const double younger = fmax(birth[a], birth[b]), d = edges[e].d;
        if (d > younger)
            bars[k++] = (topoml_interval){younger, d, 0, 0};
        if (birth[a] < birth[b]) {
            const uint64_t t = a;
            a = b;
            b = t;
        }
        parent[a] = b; /* b holds the elder birth */
    }
    const uint64_t finite = k;
    qsort(bars, (size_t)finite, sizeof *bars, by_death_birth);
    for (uint64_t v = 0; v < n; v++)
        if (parent[v] == v && w[v] <= threshold)
            bars[k++] = (topoml_interval){birth[v], INFINITY, 0, 0};
    /* the oldest first: of a dense input cut by the threshold, the class
     * its full complex keeps (topoml_barcode_cut_off tells it by being the
     * first infinite bar of H0) */
    qsort(bars + finite, (size_t)(k - finite), sizeof *bars, by_death_birth);
    *out = bars;
    *n_out = k;
    bars = NULL;
done:
    tm_free(ctx, edges);
    tm_free(ctx, parent);
    tm_free(ctx, birth);
    tm_free(ctx, bars);
    return rc;
}
