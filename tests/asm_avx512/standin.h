/*
 * standin.h — plain C kernels with the contract of tile.h, so the glue
 * (tiling.c) can be tested on any machine, and the AVX-512 kernels compared
 * against them bit for bit where they can run.
 */
#ifndef TOPOML_ASM_AVX512_STANDIN_H
#define TOPOML_ASM_AVX512_STANDIN_H

#include "tile.h"

extern const avx512_kernels standin_kernels;

/* The sums a tile holds, computed the kernels' way: sequential fmaf/fma. */
float standin_sum_f32(const float *x, const float *y, uint64_t dim);
double standin_sum_f64(const double *x, const double *y, uint64_t dim);

#endif
