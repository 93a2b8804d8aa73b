/*
 * plan.h — the arithmetic that maps a point-cloud op onto kernel launches:
 * lower-triangular tile counts, bands of block rows that fit a device
 * buffer, and the single-precision threshold that selects exactly the pairs
 * a double threshold does. Pure functions, no driver, unit-tested in
 * tests/test_plan.c.
 */
#ifndef TB_PLAN_H
#define TB_PLAN_H

#include <stdint.h>

/* Number of tiles (bi, bj), bj <= bi < rows, of the lower triangle. */
static inline uint64_t tb_tiles_below(uint64_t rows)
{
    return rows * (rows + 1) / 2;
}

/* Condensed (Ripser) index of the entry for points i > j. */
static inline uint64_t tb_condensed_index(uint64_t i, uint64_t j)
{
    return i * (i - 1) / 2 + j;
}

/* Condensed entries in rows [0, r) of an n-point matrix, rows clamped to n. */
static inline uint64_t tb_entries_before_row(uint64_t r, uint64_t n)
{
    if (r > n)
        r = n;
    return r == 0 ? 0 : r * (r - 1) / 2;
}

/* One band of block rows [bi0, bi1): the launch numbers tiles from tile0,
 * `tiles` of them, and writes condensed entries [out0, out0 + entries). */
typedef struct tb_band {
    uint64_t bi0, bi1;
    uint64_t tile0, tiles;
    uint64_t out0, entries;
} tb_band;

/* The band that starts at block row bi0 of an n-point matrix tiled by
 * `block`: as many block rows as keep entries * elem_size <= max_bytes, but
 * at least one. Returns 0 when bi0 is past the end. (A band may hold more
 * tiles than one grid: the caller launches it in pieces, all with the
 * band's out0.) */
int tb_next_band(uint64_t n, uint64_t block, uint64_t bi0, uint64_t elem_size, uint64_t max_bytes,
                 tb_band *band);

/* The largest float f with (double)f <= t (t not NaN): comparing a float
 * distance d with f selects the same pairs as comparing (double)d with t.
 * -INFINITY when t is below every float, +INFINITY when t is +INFINITY. */
float tb_float_at_most(double t);

/* ceil(a / b) for b > 0. */
static inline uint64_t tb_cdiv(uint64_t a, uint64_t b)
{
    return a / b + (a % b != 0);
}

#endif /* TB_PLAN_H */
