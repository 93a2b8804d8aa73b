/*
 * tile.h — the contract between the C glue (tiling.c) and the tile kernels
 * (kernels.S, and the plain C stand-in the tests use in their place).
 *
 * Included by C and by the .S files: the field offsets are #defines that the
 * assembler uses, and tiling.c checks them against the struct with
 * _Static_assert, so the two cannot drift apart. Nothing here is part of the
 * plugin ABI; it never leaves the plugin.
 *
 * One kernel call computes a tile of TILE_ROWS rows by TILE_VECS vectors of
 * columns (48 columns in f32, 24 in f64) of squared euclidean distances:
 *
 *     s[r][c] = sum over k = 0 .. dim-1, in that order, of (p[k][c] - x[r][k])^2
 *
 * with each term subtracted in the input precision and added by one fused
 * multiply-add, acc = fma(t, t, acc), starting from acc = +0. That is the
 * scalar reference's order (metric.h) with the product and the sum rounded
 * once instead of twice; the error bound this gives is stated in tiling.c.
 * For the euclidean metric the result is the correctly rounded square root
 * of s.
 *
 * Square roots in the distances kernels are deferred by one call: a call
 * stores its sums as they are, and takes the square roots of the previous
 * call's results (pend_out, pend_mask) in place while its own arithmetic
 * runs, a row of three vectors every other coordinate.
 * The divider takes longer over one 512-bit square root than the FMA ports
 * take over a coordinate of the tile, so 18 of them at the end of a tile
 * stall it (13% of the time at dim 64); spread over the next tile's loop
 * they overlap with it. The caller roots the last call's list itself.
 *
 * Rows come straight from the row-major input (x[r] points at a point's
 * coordinates). Columns come from a packed panel: coordinate k of the panel's
 * column c is at panel[k * cols + c], so one k is 192 bytes in both dtypes and
 * each vector load takes 16 (f32) or 8 (f64) columns at once.
 */
#ifndef TOPOML_ASM_AVX512_TILE_H
#define TOPOML_ASM_AVX512_TILE_H

#define TILE_ROWS 6
#define TILE_VECS 3
#define TILE_F32_LANES 16
#define TILE_F64_LANES 8
#define TILE_F32_COLS (TILE_VECS * TILE_F32_LANES) /* 48 */
#define TILE_F64_COLS (TILE_VECS * TILE_F64_LANES) /* 24 */
#define TILE_PANEL_STRIDE 192                      /* bytes per coordinate k */

/* An edge-kernel call emits at most TILE_ROWS * cols candidates; it stores
 * whole vectors past the last one, so the candidate buffers need this many
 * elements of slack after that. */
#define TILE_CAND_SLACK 16

/* Field offsets of struct avx512_tile, for the assembler. */
#define TILE_X 0           /* const void *x[6] */
#define TILE_PANEL 48      /* const void *panel */
#define TILE_DIM 56        /* uint64_t dim */
#define TILE_OUT 64        /* void *out[6] */
#define TILE_MASK 112      /* uint16_t mask[18] */
#define TILE_SQRT 148      /* uint32_t sqrt */
#define TILE_LIMIT 152     /* double limit (f64) / float limit (f32, first 4 bytes) */
#define TILE_CAND_D 160    /* void *cand_d */
#define TILE_CAND_COL 168  /* uint32_t *cand_col */
#define TILE_COUNT 176     /* uint32_t count[6] */
#define TILE_PEND_OUT 200  /* void *pend_out[6] */
#define TILE_PEND_MASK 248 /* uint16_t pend_mask[18] */
#define TILE_SIZE 288

#ifndef __ASSEMBLER__
#include <stdint.h>

struct avx512_tile {
    /* In: row r's coordinates. Rows past the end of the input repeat a real
     * row (so every load stays inside the input) and have mask 0. */
    const void *x[TILE_ROWS];
    /* In: the packed panel, dim * cols elements, 64-byte aligned. */
    const void *panel;
    uint64_t dim;
    /* distances: where row r's column 0 goes; column c goes to out[r] + c
     * elements, as the sum (see `sqrt`). Only lanes set in the mask are
     * written. */
    void *out[TILE_ROWS];
    /* Lanes that are real pairs: bit l of mask[r * TILE_VECS + v] is column
     * v * lanes + l of row r (f64 uses the low 8 bits). */
    uint16_t mask[TILE_ROWS * TILE_VECS];
    /* Non-zero: euclidean. distances: replace the values that pend_out and
     * pend_mask describe (as out and mask do) by their square roots; this
     * tile's own sums are stored unrooted. edges: emit square roots. */
    uint32_t sqrt;
    /* edges: a masked lane is a candidate when its sum s <= limit (an
     * ordered compare: a NaN sum never is). f32 kernels read limit_f32. */
    union {
        double limit_f64;
        float limit_f32;
    } limit;
    /* edges, out: candidate values (the distance, after the square root if
     * `sqrt`) and their panel column, row 0's first, columns ascending within
     * a row. count[r] is how many belong to row r. */
    void *cand_d;
    uint32_t *cand_col;
    uint32_t count[TILE_ROWS];
    /* distances, euclidean: the previous call's out and mask, whose values
     * are still to be rooted. A row whose masks are 0 is not written, but
     * its pointer should be a mapped address: a masked access to an
     * unmapped one is correct but slow (a microcode assist). */
    void *pend_out[TILE_ROWS];
    uint16_t pend_mask[TILE_ROWS * TILE_VECS];
};

/* The kernels the glue drives. The AVX-512 ones are in kernels.S; tests
 * substitute C versions with the same contract. */
typedef struct avx512_kernels {
    void (*dist_f32)(const struct avx512_tile *t);
    void (*dist_f64)(const struct avx512_tile *t);
    /* Return the number of candidates emitted (also the sum of count[]). */
    uint32_t (*edges_f32)(struct avx512_tile *t);
    uint32_t (*edges_f64)(struct avx512_tile *t);
} avx512_kernels;

void topoml_avx512_dist_f32(const struct avx512_tile *t);
void topoml_avx512_dist_f64(const struct avx512_tile *t);
uint32_t topoml_avx512_edges_f32(struct avx512_tile *t);
uint32_t topoml_avx512_edges_f64(struct avx512_tile *t);

#endif /* __ASSEMBLER__ */
#endif /* TOPOML_ASM_AVX512_TILE_H */
