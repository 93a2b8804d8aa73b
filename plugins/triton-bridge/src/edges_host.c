/*
 * edges_host.c — collecting and sorting threshold edges (edges_host.h).
 */
#include <string.h>

#include "edges_host.h"
#include "tb.h"

int tb_edges_collect(const tb_edge_source *src, const topoml_call_v1 *call, uint64_t initial,
                     topoml_edge **out, uint64_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    char why[256] = "";
    uint64_t capacity = initial > 0 ? initial : 1;
    uint64_t found = 0;
    int status = src->reserve(src->ctx, capacity, why, sizeof why);
    if (status == TOPOML_OK)
        status = src->run(src->ctx, capacity, &found, why, sizeof why);
    if (status == TOPOML_OK && found > capacity) {
        /* The counter counted every edge, so one more run with exactly that
         * much room stores them all. */
        uint64_t first = found;
        capacity = found;
        status = src->reserve(src->ctx, capacity, why, sizeof why);
        if (status == TOPOML_OK)
            status = src->run(src->ctx, capacity, &found, why, sizeof why);
        if (status == TOPOML_OK && found != first)
            return tb_fail(call, TOPOML_E_DEVICE,
                           "triton-bridge: edges: the filter found %llu edges, then %llu on the "
                           "same input",
                           (unsigned long long)first, (unsigned long long)found);
    }
    if (status != TOPOML_OK)
        return tb_fail(call, status, "triton-bridge: edges: %s", why);
    if (found == 0)
        return TOPOML_OK;

    if (found > UINT64_MAX / (2 * sizeof(topoml_edge)))
        return tb_fail(call, TOPOML_E_OVERFLOW, "triton-bridge: edges: %llu edges",
                       (unsigned long long)found);
    uint64_t bytes = found * sizeof(topoml_edge);
    tb_budget budget = {call, 0};
    topoml_edge *edges = NULL, *scratch = NULL;
    if ((status = tb_budget_alloc(&budget, bytes, "the edge list", (void **)&edges)))
        return status;
    if ((status = tb_budget_alloc(&budget, bytes, "sorting the edges", (void **)&scratch))) {
        tb_budget_free(&budget, edges, bytes);
        return status;
    }
    status = src->fetch(src->ctx, found, edges, why, sizeof why);
    if (status != TOPOML_OK) {
        tb_budget_free(&budget, scratch, bytes);
        tb_budget_free(&budget, edges, bytes);
        return tb_fail(call, status, "triton-bridge: edges: %s", why);
    }
    tb_edges_sort(edges, found, scratch);
    tb_budget_free(&budget, scratch, bytes);
    *out = edges;
    *n_out = found;
    return TOPOML_OK;
}

/* Byte `k` (0 = least significant) of the 128-bit sort key d:i:j. */
static inline unsigned key_byte(const topoml_edge *e, unsigned k)
{
    if (k < 4)
        return (e->j >> (8 * k)) & 0xffu;
    if (k < 8)
        return (e->i >> (8 * (k - 4))) & 0xffu;
    uint64_t bits;
    memcpy(&bits, &e->d, sizeof bits);
    return (unsigned)(bits >> (8 * (k - 8))) & 0xffu;
}

void tb_edges_sort(topoml_edge *e, uint64_t m, topoml_edge *scratch)
{
    enum { KEY_BYTES = 16 };
    uint64_t count[KEY_BYTES][256];
    memset(count, 0, sizeof count);
    for (uint64_t x = 0; x < m; x++)
        for (unsigned k = 0; k < KEY_BYTES; k++)
            count[k][key_byte(&e[x], k)]++;

    topoml_edge *from = e, *to = scratch;
    for (unsigned k = 0; k < KEY_BYTES; k++) {
        /* A byte that is the same in every key leaves the order as it is;
         * most are (high bytes of small vertex numbers, low mantissa bytes
         * of float distances widened to double). */
        int constant = 0;
        for (unsigned v = 0; v < 256; v++)
            if (count[k][v] == m)
                constant = 1;
        if (constant)
            continue;
        uint64_t start[256], sum = 0;
        for (unsigned v = 0; v < 256; v++) {
            start[v] = sum;
            sum += count[k][v];
        }
        for (uint64_t x = 0; x < m; x++)
            to[start[key_byte(&from[x], k)]++] = from[x];
        topoml_edge *t = from;
        from = to;
        to = t;
    }
    if (from != e)
        memcpy(e, from, (size_t)m * sizeof *e);
}
