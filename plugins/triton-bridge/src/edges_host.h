/*
 * edges_host.h — the host side of the threshold-edge op, apart from the
 * device: collecting the edges a filter emits into a bounded buffer (with
 * one retry when the buffer was too small), and sorting them by (d, i, j).
 *
 * The filter is reached through tb_edge_source, so that tests can drive
 * the retry logic with a filter written in plain C (tests/test_edges_host.c)
 * and op_edges.c with the Triton kernel.
 */
#ifndef TB_EDGES_HOST_H
#define TB_EDGES_HOST_H

#include <stdint.h>

#include "topoml/plugin.h"

typedef struct tb_edge_source {
    void *ctx;
    /* Make room for `capacity` (> 0) edges, dropping any earlier room.
     * TOPOML_E_LIMIT (message in why) when the room cannot be had. */
    int (*reserve)(void *ctx, uint64_t capacity, char *why, size_t why_size);
    /* Run the filter once: store up to `capacity` edges in the room and
     * count every edge found, stored or not, in *found. */
    int (*run)(void *ctx, uint64_t capacity, uint64_t *found, char *why, size_t why_size);
    /* Copy the first `count` stored edges (count <= the last run's stored
     * edges) into out, as (d, i, j) with i < j. */
    int (*fetch)(void *ctx, uint64_t count, topoml_edge *out, char *why, size_t why_size);
} tb_edge_source;

/* Collect every edge of `src`, sorted by (d, i, j), into an array from
 * call->alloc (*out; NULL when there are none) of *n_out edges.
 *
 * The first run gets room for `initial` edges. If it finds more, the room
 * becomes exactly what it found and the filter runs once more; a filter
 * that then finds a different number is broken (TOPOML_E_DEVICE). Host
 * memory (the result and the sort's scratch, 32 bytes per edge) is counted
 * against call->max_memory. On failure *out is NULL and nothing is left
 * allocated. */
int tb_edges_collect(const tb_edge_source *src, const topoml_call_v1 *call, uint64_t initial,
                     topoml_edge **out, uint64_t *n_out);

/* Sort m edges by (d, i, j) with `scratch` room for m more; d >= 0 and not
 * NaN (an LSD radix sort on the bit patterns, which order like the values
 * for non-negative doubles). The result is in `e`. */
void tb_edges_sort(topoml_edge *e, uint64_t m, topoml_edge *scratch);

#endif /* TB_EDGES_HOST_H */
