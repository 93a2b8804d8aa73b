/*
 * h0.c — H0 of the Rips filtration from the sorted edge list (Kruskal with
 * union-find), on the host. The device's part of H0 is producing the sorted
 * edges (edges.cu); what remains is a linear pass that a GPU would not speed
 * up. Same rules as the scalar reference: processing edges by increasing
 * (d, i, j), an edge joining two components kills the younger one, giving
 * the bar [0, d); d == 0 gives a bar of zero length, which is not reported;
 * each component left gives [0, +inf).
 */
#include <math.h>

#include "backend.h"

static uint32_t find_root(uint32_t *parent, uint32_t x)
{
    while (parent[x] != x) {
        parent[x] = parent[parent[x]]; /* path halving */
        x = parent[x];
    }
    return x;
}

int tmc_h0_from_edges(const tmc_ctx *ctx, uint64_t n, const topoml_edge *edges, uint64_t n_edges,
                      topoml_barcode_v1 *out)
{
    int status;
    uint32_t *parent = tmc_host_alloc(ctx, (n ? n : 1) * sizeof *parent, "union-find", &status);
    if (!parent)
        return status;
    topoml_interval *bars =
        tmc_host_alloc(ctx, (n ? n : 1) * sizeof *bars, "H0 intervals", &status);
    if (!bars) {
        tmc_host_free(ctx, parent);
        return status;
    }
    for (uint64_t v = 0; v < n; v++)
        parent[v] = (uint32_t)v;
    uint64_t n_bars = 0, components = n;
    for (uint64_t e = 0; e < n_edges && components > 1; e++) {
        uint32_t a = find_root(parent, edges[e].i), b = find_root(parent, edges[e].j);
        if (a == b)
            continue;
        parent[a < b ? b : a] = a < b ? a : b;
        components--;
        if (edges[e].d > 0)
            bars[n_bars++] = (topoml_interval){0.0, edges[e].d, 0, 0};
    }
    for (uint64_t c = 0; c < components; c++)
        bars[n_bars++] = (topoml_interval){0.0, INFINITY, 0, 0};
    tmc_host_free(ctx, parent);
    out->max_dim = 0;
    out->n_intervals = n_bars;
    out->intervals = bars;
    out->complete = 1;
    return TOPOML_OK;
}
