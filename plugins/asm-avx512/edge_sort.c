/*
 * edge_sort.c — sorts the edges op's result by (d, i, j).
 *
 * A least-significant-digit radix sort on the 16-byte key (d, i, j): one
 * stable counting pass per byte, j's bytes first and d's most significant
 * byte last, so the result is ordered by d, then i, then j. Passes whose byte
 * is the same in every edge change nothing and are skipped: the high bytes of
 * i and j when n is small, and the three low bytes of d when it came from a
 * float. Linear time matters here: a generous threshold makes the edge list
 * as long as the distance matrix, where a comparison sort would cost more
 * than computing the distances.
 *
 * Ordering by the bits of d is ordering by value because every d is +0, a
 * positive number or +infinity: sums of squares are never negative or -0, and
 * the kernels emit no NaN (their compare is ordered).
 */
#include <string.h>

#include "tiling.h"

#define KEY_BYTES 16

static unsigned key_byte(const topoml_edge *e, unsigned pass)
{
    uint64_t bits;

    if (pass < 4)
        return (e->j >> (8 * pass)) & 0xffu;
    if (pass < 8)
        return (e->i >> (8 * (pass - 4))) & 0xffu;
    memcpy(&bits, &e->d, sizeof bits);
    return (unsigned)(bits >> (8 * (pass - 8))) & 0xffu;
}

void avx512_sort_edges(topoml_edge *edges, topoml_edge *tmp, uint64_t n)
{
    uint64_t count[KEY_BYTES][256];
    topoml_edge *from = edges, *to = tmp;

    memset(count, 0, sizeof count);
    for (uint64_t e = 0; e < n; e++)
        for (unsigned pass = 0; pass < KEY_BYTES; pass++)
            count[pass][key_byte(&edges[e], pass)]++;

    for (unsigned pass = 0; pass < KEY_BYTES; pass++) {
        uint64_t *c = count[pass], start = 0;
        int constant = 0;
        for (unsigned b = 0; b < 256; b++) {
            if (c[b] == n)
                constant = 1;
            uint64_t here = c[b];
            c[b] = start;
            start += here;
        }
        if (constant)
            continue;
        for (uint64_t e = 0; e < n; e++)
            to[c[key_byte(&from[e], pass)]++] = from[e];
        topoml_edge *swap = from;
        from = to;
        to = swap;
    }
    if (from != edges)
        memcpy(edges, from, (size_t)n * sizeof *edges);
}
