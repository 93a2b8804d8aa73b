/*
 * tiling.h — the distances and edges ops of topoml-backend-asm-avx512, in
 * terms of a table of tile kernels (tile.h). plugin.c hands them the AVX-512
 * kernels once the gate has passed; tests hand them plain C kernels with the
 * same contract, so that everything here is tested on any machine.
 */
#ifndef TOPOML_ASM_AVX512_TILING_H
#define TOPOML_ASM_AVX512_TILING_H

#include "tile.h"
#include "topoml/plugin.h"

/* The distances op: checks the call and the input, then fills `out` with the
 * n(n-1)/2 condensed distances in in->dtype. */
int avx512_distances(const avx512_kernels *k, const topoml_call_v1 *call, const topoml_input_v1 *in,
                     void *out);

/* The edges op on POINTS input: every pair i < j with d(i,j) <= threshold,
 * d being exactly what avx512_distances gives, widened to double; sorted by
 * (d, i, j); the array comes from call->alloc (NULL when there are none). */
int avx512_edges(const avx512_kernels *k, const topoml_call_v1 *call, const topoml_input_v1 *in,
                 double threshold, topoml_edge **out, uint64_t *n_out);

/* The limit on a sum of squares s such that s <= limit exactly when the
 * distance (s, or its correctly rounded square root when `euclidean`)
 * widened to double is <= threshold. threshold must not be NaN. */
float avx512_edge_limit_f32(int euclidean, double threshold);
double avx512_edge_limit_f64(int euclidean, double threshold);

/* Sort edges by (d, i, j); tmp has room for n edges. Every d must be +0, a
 * positive number or +infinity (true of any distance the kernels emit). */
void avx512_sort_edges(topoml_edge *edges, topoml_edge *tmp, uint64_t n);

#endif /* TOPOML_ASM_AVX512_TILING_H */
