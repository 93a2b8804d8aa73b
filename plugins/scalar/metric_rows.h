/*
 * metric_rows.h — the distances of metric.h a row at a time: d(i, j) for one
 * point i and every point j < end, bit for bit what scalar_point_dist gives
 * for each pair, several times faster. The Rips engine's set-up (rips.c,
 * scan_pairs) reads every pair of a point cloud through it.
 *
 * Why it is the same number. Each lane of a vector is one pair (i, j), and
 * in it the coordinates are combined in metric.h's order, k = 0, 1, ..., dim
 * - 1, each operation rounded to the dtype as there (float for F32, double
 * for F64): the vectors run ACROSS pairs, never along one pair's sum, which
 * is never reassociated. The plugin is compiled with -ffp-contract=off, so
 * neither metric.h's loop nor this one fuses a multiply and an add. What is
 * done per pair at the end (the range test, the square root, the cosine's
 * quotient) is metric.h's code on the lane's sums; a pair whose sums are
 * outside metric.h's plain range (its SCALED/widened path) is handed to
 * metric.h as it is. A cosine's squared norms are each point's own sum of
 * x[k] * x[k] in order, computed once (scalar_panels_fill): the same sum
 * metric.h forms per pair.
 *
 * Why it is faster. metric.h's loop is one chain of dependent additions per
 * pair, so a pair costs dim times the latency of an addition; here 16
 * (float) or 8 (double) pairs run side by side in four independent
 * vectors, and the points j come from panels: W consecutive points with
 * their coordinate k side by side, so that a lane load is one plain load.
 * The panels are a copy of the points, as large as the input; the caller
 * allocates them (scalar_panels_bytes) so that they count against its
 * memory limit.
 *
 * Header-only, GCC/Clang vector extensions (plain SSE2 on x86-64, NEON on
 * arm64, scalar code elsewhere), C11 otherwise.
 */
#ifndef TOPOML_SCALAR_METRIC_ROWS_H
#define TOPOML_SCALAR_METRIC_ROWS_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "metric.h"

/* A vector's square roots, lane by lane: IEEE's correctly rounded square
 * root, the same number as sqrt/sqrtf of each lane, in one instruction for
 * all lanes where there is one (a pair's own sqrtsd costs as much as its
 * three coordinates in R^3). */
#if defined(__SSE2__)
#include <emmintrin.h>
#define SCALAR_SQRT_V4F(v) ((scalar_v4f)_mm_sqrt_ps((__m128)(v)))
#define SCALAR_SQRT_V2D(v) ((scalar_v2d)_mm_sqrt_pd((__m128d)(v)))
#elif defined(__aarch64__)
#include <arm_neon.h>
#define SCALAR_SQRT_V4F(v) ((scalar_v4f)vsqrtq_f32((float32x4_t)(v)))
#define SCALAR_SQRT_V2D(v) ((scalar_v2d)vsqrtq_f64((float64x2_t)(v)))
#else
#define SCALAR_SQRT_V4F(v)                                                                         \
    ((scalar_v4f){sqrtf((v)[0]), sqrtf((v)[1]), sqrtf((v)[2]), sqrtf((v)[3])})
#define SCALAR_SQRT_V2D(v) ((scalar_v2d){sqrt((v)[0]), sqrt((v)[1])})
#endif

typedef float scalar_v4f __attribute__((vector_size(16)));
typedef int32_t scalar_v4i __attribute__((vector_size(16)));
typedef double scalar_v2d __attribute__((vector_size(16)));
typedef int64_t scalar_v2l __attribute__((vector_size(16)));

/* Where the CPU has AVX2 (x86-64, asked at run time), the same loops on
 * vectors of 32 bytes: twice the pairs per instruction, each lane's
 * operations unchanged. */
#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#define SCALAR_ROWS_AVX2 1
#include <immintrin.h>
typedef float scalar_v8f __attribute__((vector_size(32)));
typedef int32_t scalar_v8i __attribute__((vector_size(32)));
typedef double scalar_v4d __attribute__((vector_size(32)));
typedef int64_t scalar_v4l __attribute__((vector_size(32)));
#define SCALAR_SQRT_V8F(v) ((scalar_v8f)_mm256_sqrt_ps((__m256)(v)))
#define SCALAR_SQRT_V4D(v) ((scalar_v4d)_mm256_sqrt_pd((__m256d)(v)))
#endif

/* Whether the wide (AVX2) loops can run here. */
static inline bool scalar_rows_wide(void)
{
#ifdef SCALAR_ROWS_AVX2
    return __builtin_cpu_supports("avx2") != 0;
#else
    return false;
#endif
}

typedef struct scalar_panels {
    uint32_t dtype; /* TOPOML_F32 or TOPOML_F64 */
    topoml_metric metric;
    uint64_t n, dim;
    uint64_t w;       /* points per panel: four vectors' lanes */
    const void *data; /* the points, row-major: the row of i, and metric.h's fallback */
    void *panel;      /* panel b, coordinate k, lane w: point b * W + w (0 past n) */
    void *norm;       /* cosine only: sum of x[k] * x[k] of each point, in order */
} scalar_panels;

/* Points per panel: four vectors of 16 bytes, or of 32 (wide). */
static inline uint64_t scalar_panel_width(uint32_t dtype, bool wide)
{
    return (dtype == TOPOML_F32 ? 16u : 8u) << (wide ? 1 : 0);
}

/* Bytes of the panels (and the norms) of n points of `dim` coordinates for
 * the loops of scalar_rows_wide() or the narrow ones; 0 if that does not fit
 * 64 bits. */
static inline uint64_t scalar_panels_bytes(uint32_t dtype, topoml_metric metric, uint64_t n,
                                           uint64_t dim, bool wide)
{
    const uint64_t w = scalar_panel_width(dtype, wide), size = dtype == TOPOML_F32 ? 4 : 8;
    const uint64_t blocks = n / w + 1;
    if (dim > 0 && blocks > UINT64_MAX / 2 / w / dim / size)
        return 0;
    return blocks * w * dim * size + (metric == TOPOML_METRIC_COSINE ? n * size : 0);
}

/* Lays out n points of `data` in `mem` (scalar_panels_bytes of it, with
 * the same `wide`; wide only where scalar_rows_wide()). */
static inline void scalar_panels_fill(scalar_panels *p, uint32_t dtype, topoml_metric metric,
                                      const void *data, uint64_t n, uint64_t dim, bool wide,
                                      void *mem)
{
    const uint64_t w = scalar_panel_width(dtype, wide), blocks = n / w + 1;
    p->w = w;
    p->dtype = dtype;
    p->metric = metric;
    p->n = n;
    p->dim = dim;
    p->data = data;
    p->panel = mem;
    p->norm = NULL;
#define SCALAR_PANELS_FILL(T)                                                                      \
    do {                                                                                           \
        const T *x = (const T *)data;                                                              \
        T *q = (T *)mem;                                                                           \
        for (uint64_t b = 0; b < blocks; b++)                                                      \
            for (uint64_t k = 0; k < dim; k++)                                                     \
                for (uint64_t l = 0; l < w; l++) {                                                 \
                    const uint64_t j = b * w + l;                                                  \
                    q[(b * dim + k) * w + l] = j < n ? x[j * dim + k] : (T)0;                      \
                }                                                                                  \
        if (metric == TOPOML_METRIC_COSINE) {                                                      \
            T *nm = q + blocks * w * dim;                                                          \
            for (uint64_t j = 0; j < n; j++) {                                                     \
                T s = 0;                                                                           \
                for (uint64_t k = 0; k < dim; k++)                                                 \
                    s += x[j * dim + k] * x[j * dim + k];                                          \
                nm[j] = s;                                                                         \
            }                                                                                      \
            p->norm = nm;                                                                          \
        }                                                                                          \
    } while (0)
    if (dtype == TOPOML_F32)
        SCALAR_PANELS_FILL(float);
    else
        SCALAR_PANELS_FILL(double);
#undef SCALAR_PANELS_FILL
}

/* The loop over the coordinates of one panel: STEP(a, y, s) updates the
 * accumulator a of four lanes with their coordinate k, y, and point i's, s.
 * The steps are metric.h's operations, lane by lane. */
#define SCALAR_ROW_LOOP(T, V, L, STEP)                                                             \
    for (uint64_t k = 0; k < dim; k++) {                                                           \
        const T s = xi[k];                                                                         \
        V y;                                                                                       \
        memcpy(&y, pb + k * W, sizeof y);                                                          \
        STEP(a0, y, s);                                                                            \
        memcpy(&y, pb + k * W + (L), sizeof y);                                                    \
        STEP(a1, y, s);                                                                            \
        memcpy(&y, pb + k * W + 2 * (L), sizeof y);                                                \
        STEP(a2, y, s);                                                                            \
        memcpy(&y, pb + k * W + 3 * (L), sizeof y);                                                \
        STEP(a3, y, s);                                                                            \
    }
/* acc += t * t, t = x[k] - y[k] */
#define SCALAR_STEP_SQUARE(a, y, s) ((y) = (s) - (y), (a) += (y) * (y))
/* acc += |x[k] - y[k]|: the sign bit cleared is fabs exactly */
#define SCALAR_STEP_ABS(a, y, s) ((a) += (row_v)((row_m)((s) - (y)) & row_abs))
/* t = |x[k] - y[k]|; if (t > acc) acc = t */
#define SCALAR_STEP_MAX(a, y, s)                                                                   \
    do {                                                                                           \
        row_m t_ = (row_m)((s) - (y)) & row_abs, g_ = (row_v)t_ > (a);                             \
        (a) = (row_v)((t_ & g_) | ((row_m)(a) & ~g_));                                             \
    } while (0)
/* acc += x[k] * y[k] */
#define SCALAR_STEP_DOT(a, y, s) ((a) += (s) * (y))

/* One body for both dtypes. V is the vector type of L lanes of T, M the
 * integer vector of the same shape and I its lane, ABS the mask that clears
 * a lane's sign bit (fabs, exactly), VSQRT the square roots of V's lanes.
 * The four accumulators a0..a3 hold panel lanes 0..L-1, L..2L-1, ...; for
 * every lane the sequence of operations is metric.h's. The per-pair ends
 * are metric.h's expressions; SCALAR is metric.h's function of the dtype,
 * for sums outside its plain range. */
#define SCALAR_ROW_BODY(T, V, M, I, L, ABS, SQRT, VSQRT, LOW, HIGH, CLO, CHI, SCALAR)              \
    typedef V row_v;                                                                               \
    typedef M row_m;                                                                               \
    const I row_abs = (ABS);                                                                       \
    const uint64_t W = 4 * (L), dim = p->dim;                                                      \
    const topoml_metric metric = p->metric;                                                        \
    const T *x = (const T *)p->data, *xi = x + i * dim;                                            \
    const T *nm = (const T *)p->norm;                                                              \
    for (uint64_t b = 0; b * W < end; b++) {                                                       \
        const T *pb = (const T *)p->panel + b * dim * W;                                           \
        V a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};                                                  \
        switch (metric) {                                                                          \
        case TOPOML_METRIC_EUCLIDEAN:                                                              \
        case TOPOML_METRIC_SQEUCLIDEAN: SCALAR_ROW_LOOP(T, V, L, SCALAR_STEP_SQUARE); break;       \
        case TOPOML_METRIC_MANHATTAN: SCALAR_ROW_LOOP(T, V, L, SCALAR_STEP_ABS); break;            \
        case TOPOML_METRIC_CHEBYSHEV: SCALAR_ROW_LOOP(T, V, L, SCALAR_STEP_MAX); break;            \
        case TOPOML_METRIC_COSINE: SCALAR_ROW_LOOP(T, V, L, SCALAR_STEP_DOT); break;               \
        }                                                                                          \
        const uint64_t lanes = end - b * W < W ? end - b * W : W;                                  \
        T acc[4 * (L)];                                                                            \
        if (metric <= TOPOML_METRIC_SQEUCLIDEAN && lanes == W) {                                   \
            /* Every lane in metric.h's plain range (the usual case): the                          \
             * square roots of all of them at once. */                                             \
            I in_range[L];                                                                         \
            const M ok = (a0 >= LOW) & (a0 <= HIGH) & (a1 >= LOW) & (a1 <= HIGH) & (a2 >= LOW) &   \
                         (a2 <= HIGH) & (a3 >= LOW) & (a3 <= HIGH);                                \
            memcpy(in_range, &ok, sizeof ok);                                                      \
            bool all = true;                                                                       \
            for (uint64_t l = 0; l < (L); l++)                                                     \
                all = all && in_range[l] != 0;                                                     \
            if (all) {                                                                             \
                if (metric == TOPOML_METRIC_EUCLIDEAN)                                             \
                    a0 = VSQRT(a0), a1 = VSQRT(a1), a2 = VSQRT(a2), a3 = VSQRT(a3);                \
                memcpy(acc, &a0, sizeof a0);                                                       \
                memcpy(acc + (L), &a1, sizeof a1);                                                 \
                memcpy(acc + 2 * (L), &a2, sizeof a2);                                             \
                memcpy(acc + 3 * (L), &a3, sizeof a3);                                             \
                for (uint64_t l = 0; l < W; l++)                                                   \
                    out[b * W + l] = (double)acc[l];                                               \
                continue;                                                                          \
            }                                                                                      \
        }                                                                                          \
        memcpy(acc, &a0, sizeof a0);                                                               \
        memcpy(acc + (L), &a1, sizeof a1);                                                         \
        memcpy(acc + 2 * (L), &a2, sizeof a2);                                                     \
        memcpy(acc + 3 * (L), &a3, sizeof a3);                                                     \
        for (uint64_t l = 0; l < lanes; l++) {                                                     \
            const uint64_t j = b * W + l;                                                          \
            T a = acc[l], d;                                                                       \
            switch (metric) {                                                                      \
            case TOPOML_METRIC_EUCLIDEAN:                                                          \
            case TOPOML_METRIC_SQEUCLIDEAN:                                                        \
                d = !(a >= LOW && a <= HIGH)            ? SCALAR(metric, xi, x + j * dim, dim)     \
                    : metric == TOPOML_METRIC_EUCLIDEAN ? SQRT(a)                                  \
                                                        : a;                                       \
                break;                                                                             \
            case TOPOML_METRIC_COSINE: {                                                           \
                const T xx = nm[i], yy = nm[j];                                                    \
                if (!(xx >= CLO && xx <= CHI && yy >= CLO && yy <= CHI)) {                         \
                    d = SCALAR(metric, xi, x + j * dim, dim);                                      \
                } else {                                                                           \
                    a = 1 - a / SQRT(xx * yy);                                                     \
                    d = a < 0 ? 0 : a;                                                             \
                }                                                                                  \
                break;                                                                             \
            }                                                                                      \
            default: d = a;                                                                        \
            }                                                                                      \
            out[j] = (double)d;                                                                    \
        }                                                                                          \
    }

static inline void scalar_row_f32(const scalar_panels *p, uint64_t i, uint64_t end, double *out)
{
    SCALAR_ROW_BODY(float, scalar_v4f, scalar_v4i, int32_t, 4, 0x7fffffff, sqrtf, SCALAR_SQRT_V4F,
                    SCALAR_F32_LOW, FLT_MAX, SCALAR_F32_COS_LO, SCALAR_F32_COS_HI, scalar_dist_f32)
}

static inline void scalar_row_f64(const scalar_panels *p, uint64_t i, uint64_t end, double *out)
{
    SCALAR_ROW_BODY(double, scalar_v2d, scalar_v2l, int64_t, 2, 0x7fffffffffffffff, sqrt,
                    SCALAR_SQRT_V2D, SCALAR_F64_LOW, DBL_MAX, SCALAR_F64_COS_LO, SCALAR_F64_COS_HI,
                    scalar_dist_f64)
}

#ifdef SCALAR_ROWS_AVX2
__attribute__((target("avx2"))) static void scalar_row_f32_wide(const scalar_panels *p, uint64_t i,
                                                                uint64_t end, double *out)
{
    SCALAR_ROW_BODY(float, scalar_v8f, scalar_v8i, int32_t, 8, 0x7fffffff, sqrtf, SCALAR_SQRT_V8F,
                    SCALAR_F32_LOW, FLT_MAX, SCALAR_F32_COS_LO, SCALAR_F32_COS_HI, scalar_dist_f32)
}

__attribute__((target("avx2"))) static void scalar_row_f64_wide(const scalar_panels *p, uint64_t i,
                                                                uint64_t end, double *out)
{
    SCALAR_ROW_BODY(double, scalar_v4d, scalar_v4l, int64_t, 4, 0x7fffffffffffffff, sqrt,
                    SCALAR_SQRT_V4D, SCALAR_F64_LOW, DBL_MAX, SCALAR_F64_COS_LO, SCALAR_F64_COS_HI,
                    scalar_dist_f64)
}
#endif

/* out[j] = d(i, j) for every j < end (end <= n; j == i gives the distance of
 * i to itself), as scalar_point_dist(dtype, metric, data, dim, i, j) gives
 * it. */
static inline void scalar_panels_row(const scalar_panels *p, uint64_t i, uint64_t end, double *out)
{
#ifdef SCALAR_ROWS_AVX2
    if (p->w == scalar_panel_width(p->dtype, true)) {
        if (p->dtype == TOPOML_F32)
            scalar_row_f32_wide(p, i, end, out);
        else
            scalar_row_f64_wide(p, i, end, out);
        return;
    }
#endif
    if (p->dtype == TOPOML_F32)
        scalar_row_f32(p, i, end, out);
    else
        scalar_row_f64(p, i, end, out);
}

#undef SCALAR_ROW_BODY
#undef SCALAR_ROW_LOOP
#undef SCALAR_STEP_SQUARE
#undef SCALAR_STEP_ABS
#undef SCALAR_STEP_MAX
#undef SCALAR_STEP_DOT

#endif /* TOPOML_SCALAR_METRIC_ROWS_H */
