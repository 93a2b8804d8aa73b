/*
 * opcheck.h — op-level checks of tiling.c run with any kernel table: the
 * C stand-in (test_tiling.c, any machine) or the AVX-512 kernels
 * (test_kernels.c, where the gate passes). They fail the running Check test.
 */
#ifndef TOPOML_ASM_AVX512_OPCHECK_H
#define TOPOML_ASM_AVX512_OPCHECK_H

#include "tiling.h"

/* distances on n random points of dimension dim: every entry bit-for-bit the
 * sequential-fma sum (or its root), within the stated bound of metric.h,
 * nothing written past the end, nothing leaked. */
void opcheck_distances(const avx512_kernels *k, uint32_t dtype, uint32_t metric, uint64_t n,
                       uint64_t dim, uint64_t seed);

/* edges on the given points (dtype coordinates) equal the pairs whose
 * distances-op value is <= threshold, sorted by (d, i, j). Returns the
 * number of edges. */
uint64_t opcheck_edges(const avx512_kernels *k, uint32_t dtype, uint32_t metric, uint64_t n,
                       uint64_t dim, const void *data, double threshold);

#endif
