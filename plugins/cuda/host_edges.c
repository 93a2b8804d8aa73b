/*
 * host_edges.c — threshold edges of inputs that already are distances
 * (condensed matrices, sparse edge lists): one pass on the host to count and
 * check, one to copy the edges that pass into the array the op returns. The
 * distances are in host memory already, so reading them once here costs no
 * more than copying them to the device would; the device then only sorts
 * (edges.cu).
 */
#include <math.h>

#include "backend.h"

topoml_edge *tmc_alloc_edges(const tmc_ctx *ctx, uint64_t m, int *status)
{
    uint64_t bytes;
    if (__builtin_mul_overflow(m, (uint64_t)sizeof(topoml_edge), &bytes)) {
        *status =
            tmc_fail(ctx->call, TOPOML_E_OVERFLOW, "%llu edges overflow", (unsigned long long)m);
        return NULL;
    }
    return tmc_host_alloc(ctx, bytes, "the edge list", status);
}

static double condensed_at(const topoml_input_v1 *in, uint64_t k)
{
    return in->dtype == TOPOML_F32 ? (double)((const float *)in->data)[k]
                                   : ((const double *)in->data)[k];
}

int tmc_filter_edges_host(const tmc_ctx *ctx, const topoml_input_v1 *in, double threshold,
                          topoml_edge **out, uint64_t *n_out)
{
    const uint64_t n = in->n;
    uint64_t m = 0;
    int status = TOPOML_OK;
    *out = NULL;
    *n_out = 0;
    if (in->kind == TOPOML_INPUT_SPARSE) {
        for (uint64_t e = 0; e < in->n_edges; e++) {
            const topoml_edge *x = &in->edges[e];
            if (x->i >= x->j || x->j >= n || !(x->d >= 0))
                return tmc_fail(ctx->call, TOPOML_E_INVALID,
                                "sparse edge %llu (%u, %u, %g): needs i < j < n = %llu and "
                                "d >= 0",
                                (unsigned long long)e, x->i, x->j, x->d, (unsigned long long)n);
            m += x->d <= threshold;
        }
    } else {
        const uint64_t total = tmc_row_start(n);
        for (uint64_t k = 0; k < total; k++) {
            if ((k & ((1u << 24) - 1)) == 0 && k && tmc_cancelled(ctx, "edges: counting", k, total))
                return tmc_fail(ctx->call, TOPOML_E_CANCELLED, "cancelled");
            double d = condensed_at(in, k);
            if (!(d >= 0)) {
                uint64_t i = tmc_triangular_root(k) + 1, j = k - tmc_row_start(i);
                return tmc_fail(ctx->call, TOPOML_E_INVALID,
                                "distance d(%llu,%llu) is %g: not a distance",
                                (unsigned long long)i, (unsigned long long)j, d);
            }
            m += d <= threshold;
        }
    }
    topoml_edge *edges = tmc_alloc_edges(ctx, m, &status);
    if (!edges)
        return status;
    uint64_t k = 0;
    if (in->kind == TOPOML_INPUT_SPARSE) {
        for (uint64_t e = 0; e < in->n_edges; e++)
            if (in->edges[e].d <= threshold)
                edges[k++] = in->edges[e];
    } else {
        uint64_t c = 0;
        for (uint64_t i = 1; i < n; i++)
            for (uint64_t j = 0; j < i; j++, c++) {
                double d = condensed_at(in, c);
                if (d <= threshold)
                    edges[k++] = (topoml_edge){d, (uint32_t)j, (uint32_t)i};
            }
    }
    *out = edges;
    *n_out = m;
    return TOPOML_OK;
}
