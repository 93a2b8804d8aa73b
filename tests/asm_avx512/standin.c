/*
 * standin.c — the tile kernels of tile.h in plain C, for tests only. Each
 * lane's sum is computed exactly as kernels.S computes it (fma of the
 * difference with itself onto the running sum, coordinates in order), so
 * the results agree bit for bit; masked-off lanes are never touched.
 */
#include "standin.h"

#include <math.h>

float standin_sum_f32(const float *x, const float *y, uint64_t dim)
{
    float acc = 0.0f;
    for (uint64_t k = 0; k < dim; k++) {
        float t = y[k] - x[k];
        acc = fmaf(t, t, acc);
    }
    return acc;
}

double standin_sum_f64(const double *x, const double *y, uint64_t dim)
{
    double acc = 0.0;
    for (uint64_t k = 0; k < dim; k++) {
        double t = y[k] - x[k];
        acc = fma(t, t, acc);
    }
    return acc;
}

/* Sum of row r against panel column c. */
static float tile_f32(const struct avx512_tile *t, unsigned r, unsigned c)
{
    const float *x = t->x[r], *p = t->panel;
    float acc = 0.0f;
    for (uint64_t k = 0; k < t->dim; k++) {
        float d = p[k * TILE_F32_COLS + c] - x[k];
        acc = fmaf(d, d, acc);
    }
    return acc;
}

static double tile_f64(const struct avx512_tile *t, unsigned r, unsigned c)
{
    const double *x = t->x[r], *p = t->panel;
    double acc = 0.0;
    for (uint64_t k = 0; k < t->dim; k++) {
        double d = p[k * TILE_F64_COLS + c] - x[k];
        acc = fma(d, d, acc);
    }
    return acc;
}

static int lane_on(const struct avx512_tile *t, unsigned r, unsigned c, unsigned lanes)
{
    return (t->mask[r * TILE_VECS + c / lanes] >> (c % lanes)) & 1u;
}

/* Square roots of the previous call's values, in place (tile.h). */
static void root_pending(const struct avx512_tile *t, unsigned lanes)
{
    if (!t->sqrt)
        return;
    for (unsigned m = 0; m < TILE_ROWS * TILE_VECS; m++)
        for (unsigned l = 0; l < lanes; l++) {
            if (!((t->pend_mask[m] >> l) & 1u))
                continue;
            unsigned c = (m % TILE_VECS) * lanes + l;
            if (lanes == TILE_F32_LANES)
                ((float *)t->pend_out[m / TILE_VECS])[c] =
                    sqrtf(((float *)t->pend_out[m / TILE_VECS])[c]);
            else
                ((double *)t->pend_out[m / TILE_VECS])[c] =
                    sqrt(((double *)t->pend_out[m / TILE_VECS])[c]);
        }
}

static void dist_f32(const struct avx512_tile *t)
{
    root_pending(t, TILE_F32_LANES);
    for (unsigned r = 0; r < TILE_ROWS; r++)
        for (unsigned c = 0; c < TILE_F32_COLS; c++)
            if (lane_on(t, r, c, TILE_F32_LANES))
                ((float *)t->out[r])[c] = tile_f32(t, r, c);
}

static void dist_f64(const struct avx512_tile *t)
{
    root_pending(t, TILE_F64_LANES);
    for (unsigned r = 0; r < TILE_ROWS; r++)
        for (unsigned c = 0; c < TILE_F64_COLS; c++)
            if (lane_on(t, r, c, TILE_F64_LANES))
                ((double *)t->out[r])[c] = tile_f64(t, r, c);
}

static uint32_t edges_f32(struct avx512_tile *t)
{
    uint32_t n = 0;
    for (unsigned r = 0; r < TILE_ROWS; r++) {
        t->count[r] = 0;
        for (unsigned c = 0; c < TILE_F32_COLS; c++) {
            if (!lane_on(t, r, c, TILE_F32_LANES))
                continue;
            float s = tile_f32(t, r, c);
            if (!(s <= t->limit.limit_f32))
                continue;
            ((float *)t->cand_d)[n] = t->sqrt ? sqrtf(s) : s;
            t->cand_col[n++] = c;
            t->count[r]++;
        }
    }
    return n;
}

static uint32_t edges_f64(struct avx512_tile *t)
{
    uint32_t n = 0;
    for (unsigned r = 0; r < TILE_ROWS; r++) {
        t->count[r] = 0;
        for (unsigned c = 0; c < TILE_F64_COLS; c++) {
            if (!lane_on(t, r, c, TILE_F64_LANES))
                continue;
            double s = tile_f64(t, r, c);
            if (!(s <= t->limit.limit_f64))
                continue;
            ((double *)t->cand_d)[n] = t->sqrt ? sqrt(s) : s;
            t->cand_col[n++] = c;
            t->count[r]++;
        }
    }
    return n;
}

const avx512_kernels standin_kernels = {dist_f32, dist_f64, edges_f32, edges_f64};
