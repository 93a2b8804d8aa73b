/*
 * tiling.c — cuts the lower triangle of a point cloud's distance matrix into
 * tiles for the kernels (tile.h) and turns what they produce into the
 * distances op's condensed array or the edges op's sorted edge list. It
 * checks the op's arguments and owns every allocation; it does no arithmetic
 * on coordinates (that is the kernels' alone; coordinates outside their
 * range go to the reference's plugins/scalar/exact_pairs.h).
 *
 * Order of work. The smaller index j of a pair (i > j) is taken a panel of
 * 48 (f32) or 24 (f64) points at a time, packed coordinate-major so that the
 * kernel loads 16 or 8 of them with one instruction; all panels are packed
 * once, up front (a copy of the input, 192 * dim bytes per panel). The
 * larger index i is read in place from the row-major input, six rows per
 * kernel call, in blocks of rows that pass every panel in turn (sweep_run
 * says why). Tiles that cross the diagonal, the rows past a block or past
 * the last point, and the last panel's missing columns are handled by the
 * masks alone: the kernels have no remainder code.
 *
 * Euclidean distances are stored as sums and rooted in place by a later
 * kernel call (tile.h says why); the last call's are rooted here.
 *
 * Accuracy, against the scalar reference (plugins/scalar/metric.h). Both
 * compute the same differences t_k = x_k - y_k (one IEEE subtraction; the
 * sign does not matter, fl(a - b) = -fl(b - a)) and add their squares in the
 * same order, k = 0 .. dim-1; the reference rounds t*t and then the sum, the
 * kernels round the fused t*t + acc once. With u = eps/2 and all terms >= 0,
 * each result is within gamma_dim = dim*u/(1 - dim*u) of the exact sum S
 * relative to S, so the two differ by at most 2*gamma_dim*S, which is at
 * most 4*dim*u = 2*dim*eps relative to the reference for dim*eps <= 1/2:
 *
 *     sqeuclidean: |ours - reference| <= 2 * dim * eps * reference
 *     euclidean:   |ours - reference| <= 2 * dim * eps * reference
 *                  (both square roots are correctly rounded; holds for
 *                  dim >= 2 and dim*eps <= 1/16; dim <= 1 gives equal values)
 *
 * eps = 2^-23 (f32) or 2^-52 (f64). When squares or sums fall below the
 * normal range, add dim times the smallest subnormal in absolute terms. The
 * sum is also bit-for-bit what sequential fmaf()/fma() give, which is how the
 * tests check the kernels exactly.
 */
#include "tiling.h"

#include "exact_pairs.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

_Static_assert(offsetof(struct avx512_tile, x) == TILE_X, "tile.h: x");
_Static_assert(offsetof(struct avx512_tile, panel) == TILE_PANEL, "tile.h: panel");
_Static_assert(offsetof(struct avx512_tile, dim) == TILE_DIM, "tile.h: dim");
_Static_assert(offsetof(struct avx512_tile, out) == TILE_OUT, "tile.h: out");
_Static_assert(offsetof(struct avx512_tile, mask) == TILE_MASK, "tile.h: mask");
_Static_assert(offsetof(struct avx512_tile, sqrt) == TILE_SQRT, "tile.h: sqrt");
_Static_assert(offsetof(struct avx512_tile, limit) == TILE_LIMIT, "tile.h: limit");
_Static_assert(offsetof(struct avx512_tile, cand_d) == TILE_CAND_D, "tile.h: cand_d");
_Static_assert(offsetof(struct avx512_tile, cand_col) == TILE_CAND_COL, "tile.h: cand_col");
_Static_assert(offsetof(struct avx512_tile, count) == TILE_COUNT, "tile.h: count");
_Static_assert(offsetof(struct avx512_tile, pend_out) == TILE_PEND_OUT, "tile.h: pend_out");
_Static_assert(offsetof(struct avx512_tile, pend_mask) == TILE_PEND_MASK, "tile.h: pend_mask");
_Static_assert(sizeof(struct avx512_tile) == TILE_SIZE, "tile.h: size");
_Static_assert(TILE_F32_COLS * 4 == TILE_PANEL_STRIDE && TILE_F64_COLS * 8 == TILE_PANEL_STRIDE,
               "tile.h: one coordinate of a panel is 192 bytes in both dtypes");
_Static_assert(sizeof(topoml_edge) == 16, "edges are 16 bytes");

/* Progress is reported after roughly this many lane-coordinates of kernel
 * work (a few milliseconds), so a few hundred times a second at most. */
#define PROGRESS_STEP (1ull << 27)

/* Rows of the triangle per block of the sweep (a multiple of TILE_ROWS;
 * 48 rows write 48 pages at a time, within the first-level TLB). */
#define ROW_BLOCK 48

/* One op in progress: the call it reports through and the bytes it holds. */
typedef struct op {
    const topoml_call_v1 *call;
    const char *name;
    uint64_t held;
} op;

static int fail(const topoml_call_v1 *call, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(const topoml_call_v1 *call, int status, const char *fmt, ...)
{
    if (call && call->error && call->error_size > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(call->error, call->error_size, fmt, ap);
        va_end(ap);
    }
    return status;
}

/* A call the op can allocate and report through. */
static int check_call(const topoml_call_v1 *call)
{
    if (!call || call->struct_size < TOPOML_CALL_V1_MIN_SIZE || !call->alloc || !call->realloc ||
        !call->free)
        return fail(call, TOPOML_E_INVALID, "asm-avx512: the call lacks its allocator");
    return TOPOML_OK;
}

/* Count `bytes` more against call->max_memory. */
static int take(op *o, uint64_t bytes, const char *what)
{
    uint64_t max = o->call->max_memory;

    if (max != 0 && (bytes > max || o->held > max - bytes))
        return fail(o->call, TOPOML_E_LIMIT,
                    "asm-avx512 %s: %s needs %llu bytes more than the %llu held, over the "
                    "memory limit of %llu",
                    o->name, what, (unsigned long long)bytes, (unsigned long long)o->held,
                    (unsigned long long)max);
    if (bytes > SIZE_MAX)
        return fail(o->call, TOPOML_E_OVERFLOW, "asm-avx512 %s: %s is too large", o->name, what);
    o->held += bytes;
    return TOPOML_OK;
}

static void give(op *o, uint64_t bytes)
{
    o->held -= bytes;
}

/* Check a POINTS input and that the sizes derived from it fit. */
static int check_points(op *o, const topoml_input_v1 *in)
{
    uint64_t elem, cells, pairs, bytes;

    if (!in || in->struct_size < TOPOML_INPUT_V1_MIN_SIZE)
        return fail(o->call, TOPOML_E_INVALID, "asm-avx512 %s: no input, or its struct is short",
                    o->name);
    if (in->kind != TOPOML_INPUT_POINTS)
        return fail(o->call, TOPOML_E_UNSUPPORTED,
                    "asm-avx512 %s: only POINTS input is supported (kind %u)", o->name,
                    (unsigned)in->kind);
    if (in->dtype != TOPOML_F32 && in->dtype != TOPOML_F64)
        return fail(o->call, TOPOML_E_UNSUPPORTED, "asm-avx512 %s: dtype %u is not supported",
                    o->name, (unsigned)in->dtype);
    if (in->metric != TOPOML_METRIC_EUCLIDEAN && in->metric != TOPOML_METRIC_SQEUCLIDEAN)
        return fail(o->call, TOPOML_E_UNSUPPORTED,
                    "asm-avx512 %s: metric %u is not supported (euclidean and sqeuclidean only)",
                    o->name, (unsigned)in->metric);
    elem = in->dtype == TOPOML_F32 ? 4 : 8;
    if (__builtin_mul_overflow(in->n, in->dim, &cells) ||
        __builtin_mul_overflow(cells, elem, &bytes) || bytes > SIZE_MAX)
        return fail(o->call, TOPOML_E_OVERFLOW, "asm-avx512 %s: %llu points of dimension %llu",
                    o->name, (unsigned long long)in->n, (unsigned long long)in->dim);
    /* n(n-1)/2 without overflowing first: halve whichever factor is even. */
    uint64_t a = in->n, b = in->n > 0 ? in->n - 1 : 0;
    if (a % 2 == 0)
        a /= 2;
    else
        b /= 2;
    if (__builtin_mul_overflow(a, b, &pairs) || __builtin_mul_overflow(pairs, elem, &bytes) ||
        bytes > SIZE_MAX)
        return fail(o->call, TOPOML_E_OVERFLOW, "asm-avx512 %s: %llu points have too many pairs",
                    o->name, (unsigned long long)in->n);
    if (cells > 0 && !in->data)
        return fail(o->call, TOPOML_E_INVALID, "asm-avx512 %s: input data is NULL", o->name);
    return TOPOML_OK;
}

/* One input cut into panels: all of them packed up front, since every row
 * block (see sweep_run) passes over them again. */
typedef struct sweep {
    const topoml_input_v1 *in;
    uint64_t elem;   /* bytes per coordinate */
    unsigned cols;   /* panel width */
    unsigned lanes;  /* columns per vector */
    uint64_t panels; /* panels holding a smaller index j = 0 .. n-2 */
    void *raw;       /* the allocation, and the 64-byte aligned panels in it */
    unsigned char *packed;
    uint64_t packed_bytes;
} sweep;

static unsigned char *panel_at(const sweep *s, uint64_t p)
{
    return s->packed + p * s->in->dim * TILE_PANEL_STRIDE;
}

/* Copy points j0 .. j0+cols-1 into panel p, coordinate-major; columns past
 * the last point are zero (masked off, and zero keeps them from slowing the
 * arithmetic with NaNs or subnormals). */
static void pack_panel(const sweep *s, uint64_t p)
{
    uint64_t n = s->in->n, dim = s->in->dim, j0 = p * s->cols;

    for (unsigned c = 0; c < s->cols; c++) {
        uint64_t j = j0 + c;
        if (s->elem == 4) {
            float *dst = (float *)panel_at(s, p) + c;
            const float *x = j < n ? (const float *)s->in->data + j * dim : NULL;
            for (uint64_t k = 0; k < dim; k++)
                dst[k * TILE_F32_COLS] = x ? x[k] : 0.0f;
        } else {
            double *dst = (double *)panel_at(s, p) + c;
            const double *x = j < n ? (const double *)s->in->data + j * dim : NULL;
            for (uint64_t k = 0; k < dim; k++)
                dst[k * TILE_F64_COLS] = x ? x[k] : 0.0;
        }
    }
}

/* Requires n >= 2. */
static int sweep_start(op *o, sweep *s, const topoml_input_v1 *in)
{
    s->in = in;
    s->elem = in->dtype == TOPOML_F32 ? 4 : 8;
    s->cols = in->dtype == TOPOML_F32 ? TILE_F32_COLS : TILE_F64_COLS;
    s->lanes = in->dtype == TOPOML_F32 ? TILE_F32_LANES : TILE_F64_LANES;
    s->panels = (in->n - 1 + s->cols - 1) / s->cols;
    /* 64 bytes extra to align the panels for whole-cache-line loads. */
    if (__builtin_mul_overflow(s->panels * in->dim, (uint64_t)TILE_PANEL_STRIDE,
                               &s->packed_bytes) ||
        __builtin_add_overflow(s->packed_bytes, 64, &s->packed_bytes))
        return fail(o->call, TOPOML_E_OVERFLOW, "asm-avx512 %s: dimension %llu", o->name,
                    (unsigned long long)in->dim);
    int status = take(o, s->packed_bytes, "the packed panels");
    if (status != TOPOML_OK)
        return status;
    s->raw = o->call->alloc(o->call->host_data, (size_t)s->packed_bytes);
    if (!s->raw) {
        give(o, s->packed_bytes);
        return fail(o->call, TOPOML_E_NOMEM, "asm-avx512 %s: out of memory for the panels",
                    o->name);
    }
    s->packed = (unsigned char *)(((uintptr_t)s->raw + 63) & ~(uintptr_t)63);
    for (uint64_t p = 0; p < s->panels; p++)
        pack_panel(s, p);
    return TOPOML_OK;
}

static void sweep_end(op *o, sweep *s)
{
    o->call->free(o->call->host_data, s->raw);
    give(o, s->packed_bytes);
}

/* Set up the tile of rows i0 .. i0+5 against the panel at j0: the row
 * pointers, the output rows (when `out` is not NULL) and the masks that keep
 * exactly the pairs j < i, j < n, i < row_end (<= n). Requires j0 < i0 <
 * row_end. Called once per tile, so the common case (all six rows real, all
 * columns below the diagonal) takes a short path: pointers stepped, masks
 * all ones. */
static void fill_tile(struct avx512_tile *t, const sweep *s, uint64_t i0, uint64_t j0,
                      uint64_t row_end, unsigned char *out)
{
    static const uint16_t all_lanes[TILE_ROWS * TILE_VECS] = {
        0xffff, 0xffff, 0xffff, 0xffff, 0xffff, 0xffff, 0xffff, 0xffff, 0xffff,
        0xffff, 0xffff, 0xffff, 0xffff, 0xffff, 0xffff, 0xffff, 0xffff, 0xffff};
    uint64_t row_bytes = s->in->dim * s->elem;
    /* With dim == 0 nothing is loaded; the panels are a valid address to
     * point at instead of offsetting a possibly NULL input. */
    const unsigned char *x =
        row_bytes > 0 ? (const unsigned char *)s->in->data + i0 * row_bytes : s->packed;
    /* Row i of the condensed output starts at i(i-1)/2, so row i+1 starts i
     * elements after row i. Without an output, every row points at the
     * panel (mapped, never written). */
    unsigned char *o = out ? out + (i0 * (i0 - 1) / 2 + j0) * s->elem : s->packed;
    uint64_t o_step = out ? i0 * s->elem : 0, o_grow = out ? s->elem : 0;

    if (i0 + TILE_ROWS <= row_end && i0 - j0 >= s->cols) {
        for (unsigned r = 0; r < TILE_ROWS; r++) {
            t->x[r] = x;
            t->out[r] = o;
            x += row_bytes;
            o += o_step;
            o_step += o_grow;
        }
        memcpy(t->mask, all_lanes, sizeof t->mask);
        return;
    }
    for (unsigned r = 0; r < TILE_ROWS; r++) {
        uint64_t i = i0 + r, valid;
        if (i < row_end) {
            t->x[r] = x;
            t->out[r] = o;
            x += row_bytes;
            o += o_step;
            o_step += o_grow;
            /* Columns j0 .. i-1 of row i are pairs; j < i < n also keeps
             * the panel's zero padding out. */
            valid = i - j0 < s->cols ? i - j0 : s->cols;
        } else {
            /* Past the block: a real row to point at, nothing kept. */
            t->x[r] = t->x[0];
            t->out[r] = t->out[0];
            valid = 0;
        }
        for (unsigned v = 0; v < TILE_VECS; v++) {
            uint64_t lo = (uint64_t)v * s->lanes, m;
            m = valid <= lo ? 0 : valid - lo >= s->lanes ? s->lanes : valid - lo;
            t->mask[r * TILE_VECS + v] = (uint16_t)((1u << m) - 1u);
        }
    }
}

/* The tile just computed stored its euclidean sums unrooted: they become
 * the next call's pending values (tile.h). */
static void defer_roots(struct avx512_tile *t)
{
    memcpy(t->pend_out, t->out, sizeof t->pend_out);
    memcpy(t->pend_mask, t->mask, sizeof t->pend_mask);
}

/* Root what the last call left pending, as the kernels would have:
 * sqrtf and sqrt are correctly rounded, like vsqrtps and vsqrtpd. */
static void finish_roots(struct avx512_tile *t, const sweep *s)
{
    for (unsigned m = 0; m < TILE_ROWS * TILE_VECS; m++) {
        unsigned char *v = (unsigned char *)t->pend_out[m / TILE_VECS] +
                           (uint64_t)(m % TILE_VECS) * s->lanes * s->elem;
        for (unsigned l = 0; l < s->lanes; l++) {
            if (!((t->pend_mask[m] >> l) & 1u))
                continue;
            if (s->elem == 4) {
                float *p = (float *)v + l;
                *p = sqrtf(*p);
            } else {
                double *p = (double *)v + l;
                *p = sqrt(*p);
            }
        }
        t->pend_mask[m] = 0;
    }
}

/* What an op does with each tile once it is set up: run the kernel and use
 * what it produced. Non-zero stops the sweep with that status. */
typedef int (*tile_fn)(void *ctx, struct avx512_tile *t, uint64_t i0, uint64_t j0);

/* Report progress after enough work; non-zero: stop. */
static int progress(op *o, uint64_t *pending, uint64_t work, uint64_t done, uint64_t total)
{
    *pending += work;
    if (!o->call->progress || (*pending < PROGRESS_STEP && done < total))
        return 0;
    *pending = 0;
    return o->call->progress(o->call->host_data, o->name, done, total);
}

/* Every tile of the lower triangle, once. Rows i = 1 .. n-1 are taken
 * ROW_BLOCK at a time; every panel with a column left of the block's last
 * row passes the block, six rows per tile. Blocking the rows keeps the
 * output local: a block's rows continue from one panel to the next, so the
 * cache lines and pages they write (one page per row, rows being i elements
 * apart) stay in the caches and the TLB, where a whole-triangle sweep per
 * panel misses both on every row once n is in the thousands. A panel is
 * reused by the ROW_BLOCK / 6 tiles of a block, far more than the 18 cycles
 * per 192 bytes its loads need from the L2. */
static int sweep_run(op *o, const sweep *s, struct avx512_tile *t, unsigned char *out, tile_fn fn,
                     void *ctx)
{
    uint64_t n = s->in->n, pending = 0;
    int status;

    for (uint64_t ib = 1; ib < n; ib += ROW_BLOCK) {
        uint64_t ie = ib + ROW_BLOCK < n ? ib + ROW_BLOCK : n;
        /* Panels with some j <= ie - 2, which row ie - 1 pairs with. */
        for (uint64_t j0 = 0; j0 + 1 < ie; j0 += s->cols) {
            t->panel = panel_at(s, j0 / s->cols);
            for (uint64_t i0 = j0 + 1 > ib ? j0 + 1 : ib; i0 < ie; i0 += TILE_ROWS) {
                fill_tile(t, s, i0, j0, ie, out);
                if ((status = fn(ctx, t, i0, j0)) != TOPOML_OK)
                    return status;
            }
        }
        if (progress(o, &pending, (ie - ib) * ie * (s->in->dim + 1), ie - 1, n - 1))
            return fail(o->call, TOPOML_E_CANCELLED, "asm-avx512 %s: cancelled", o->name);
    }
    return TOPOML_OK;
}

typedef struct dist_ctx {
    void (*kernel)(const struct avx512_tile *t);
} dist_ctx;

static int dist_tile(void *ctx, struct avx512_tile *t, uint64_t i0, uint64_t j0)
{
    (void)i0;
    (void)j0;
    ((dist_ctx *)ctx)->kernel(t);
    if (t->sqrt)
        defer_roots(t);
    return TOPOML_OK;
}

int avx512_distances(const avx512_kernels *k, const topoml_call_v1 *call, const topoml_input_v1 *in,
                     void *out)
{
    op o = {call, "distances", 0};
    sweep s;
    struct avx512_tile t;
    uint64_t n;
    int status;

    if ((status = check_call(call)) != TOPOML_OK || (status = check_points(&o, in)) != TOPOML_OK)
        return status;
    n = in->n;
    if (n < 2)
        return TOPOML_OK;
    if (!out)
        return fail(call, TOPOML_E_INVALID, "asm-avx512 distances: output is NULL");
    if (!scalar_in_plain_range(in))
        return scalar_exact_distances(call, in, out, in->dtype == TOPOML_F64, "asm-avx512");
    if ((status = sweep_start(&o, &s, in)) != TOPOML_OK)
        return status;

    dist_ctx c = {in->dtype == TOPOML_F32 ? k->dist_f32 : k->dist_f64};
    memset(&t, 0, sizeof t);
    t.dim = in->dim;
    t.sqrt = in->metric == TOPOML_METRIC_EUCLIDEAN;
    /* Nothing pending yet: masks 0, and pointers that are mapped anyway. */
    for (unsigned r = 0; r < TILE_ROWS; r++)
        t.pend_out[r] = s.packed;
    status = sweep_run(&o, &s, &t, out, dist_tile, &c);
    /* Also when cancelled: every value written is then a distance. */
    finish_roots(&t, &s);
    sweep_end(&o, &s);
    return status;
}

float avx512_edge_limit_f32(int euclidean, double threshold)
{
    /* The largest float t with (double)t <= threshold: a float distance d
     * widened to double is <= threshold exactly when d <= t. */
    float t = (float)threshold, s;

    if ((double)t > threshold)
        t = nextafterf(t, -INFINITY);
    if (!euclidean)
        return t;
    /* Sums are +0, positive or +inf, and their square roots >= +0, so a
     * negative t admits none (-0 still admits 0: 0 <= -0). */
    if (t < 0.0f)
        return -1.0f;
    if (isinf(t))
        return INFINITY;
    /* The largest s with sqrtf(s) <= t. sqrtf is correctly rounded, hence
     * monotone, so such s form an interval from 0; t*t is within an ulp or
     * two of its end and the steps below find it exactly. */
    s = t * t;
    if (isinf(s))
        s = FLT_MAX;
    while (sqrtf(s) > t)
        s = nextafterf(s, -INFINITY);
    while (sqrtf(nextafterf(s, INFINITY)) <= t)
        s = nextafterf(s, INFINITY);
    return s;
}

double avx512_edge_limit_f64(int euclidean, double threshold)
{
    double t = threshold, s;

    if (!euclidean)
        return t;
    if (t < 0.0)
        return -1.0;
    if (isinf(t))
        return INFINITY;
    s = t * t;
    if (isinf(s))
        s = DBL_MAX;
    while (sqrt(s) > t)
        s = nextafter(s, -INFINITY);
    while (sqrt(nextafter(s, INFINITY)) <= t)
        s = nextafter(s, INFINITY);
    return s;
}

/* The growing edge list of one edges op. */
typedef struct edge_list {
    topoml_edge *e;
    uint64_t len, cap;
} edge_list;

static int edges_reserve(op *o, edge_list *l, uint64_t more)
{
    uint64_t cap = l->cap, need = l->len + more;
    topoml_edge *e;
    int status;

    if (need <= cap)
        return TOPOML_OK;
    cap = cap < 1024 ? 1024 : cap;
    while (cap < need)
        cap *= 2;
    if (cap > SIZE_MAX / sizeof(topoml_edge))
        return fail(o->call, TOPOML_E_OVERFLOW, "asm-avx512 edges: too many edges");
    if ((status = take(o, (cap - l->cap) * sizeof(topoml_edge), "the edge list")) != TOPOML_OK)
        return status;
    e = o->call->realloc(o->call->host_data, l->e, (size_t)cap * sizeof(topoml_edge));
    if (!e) {
        give(o, (cap - l->cap) * sizeof(topoml_edge));
        return fail(o->call, TOPOML_E_NOMEM, "asm-avx512 edges: out of memory for %llu edges",
                    (unsigned long long)cap);
    }
    l->e = e;
    l->cap = cap;
    return TOPOML_OK;
}

/* Turn one tile's candidates into edges (i = the panel's point, the smaller
 * index; j = the row's point). */
static int edges_append(op *o, edge_list *l, const struct avx512_tile *t, uint32_t emitted,
                        const sweep *s, uint64_t i0, uint64_t j0)
{
    uint64_t total = 0, pos = 0;

    for (unsigned r = 0; r < TILE_ROWS; r++)
        total += t->count[r];
    if (total != emitted || total > (uint64_t)TILE_ROWS * s->cols)
        return fail(o->call, TOPOML_E_INTERNAL,
                    "asm-avx512 edges: kernel emitted %u candidates, counted %llu", emitted,
                    (unsigned long long)total);
    for (unsigned r = 0; r < TILE_ROWS; r++) {
        for (uint32_t q = 0; q < t->count[r]; q++, pos++) {
            topoml_edge *e = &l->e[l->len++];
            uint32_t col = t->cand_col[pos];
            e->d = s->elem == 4 ? (double)((const float *)t->cand_d)[pos]
                                : ((const double *)t->cand_d)[pos];
            e->i = (uint32_t)(j0 + col);
            e->j = (uint32_t)(i0 + r);
            if (col >= s->cols || j0 + col >= i0 + r)
                return fail(o->call, TOPOML_E_INTERNAL,
                            "asm-avx512 edges: kernel emitted column %u of row %llu", col,
                            (unsigned long long)(i0 + r));
        }
    }
    return TOPOML_OK;
}

typedef struct edges_ctx {
    op *o;
    edge_list *l;
    const sweep *s;
    uint32_t (*kernel)(struct avx512_tile *t);
} edges_ctx;

static int edges_tile(void *ctx, struct avx512_tile *t, uint64_t i0, uint64_t j0)
{
    edges_ctx *c = ctx;
    uint32_t emitted = c->kernel(t);
    int status;

    if (emitted == 0)
        return TOPOML_OK;
    if ((status = edges_reserve(c->o, c->l, emitted)) != TOPOML_OK)
        return status;
    return edges_append(c->o, c->l, t, emitted, c->s, i0, j0);
}

int avx512_edges(const avx512_kernels *k, const topoml_call_v1 *call, const topoml_input_v1 *in,
                 double threshold, topoml_edge **out, uint64_t *n_out)
{
    op o = {call, "edges", 0};
    sweep s;
    struct avx512_tile t;
    edge_list l = {NULL, 0, 0};
    void *cand_d = NULL, *cand_col = NULL, *tmp = NULL;
    uint64_t n, cand_bytes = 0;
    int status;

    if ((status = check_call(call)) != TOPOML_OK)
        return status;
    if (!out || !n_out)
        return fail(call, TOPOML_E_INVALID, "asm-avx512 edges: output is NULL");
    *out = NULL;
    *n_out = 0;
    if ((status = check_points(&o, in)) != TOPOML_OK)
        return status;
    if (isnan(threshold))
        return fail(call, TOPOML_E_INVALID, "asm-avx512 edges: threshold is NaN");
    n = in->n;
    if (n > (uint64_t)UINT32_MAX + 1)
        return fail(call, TOPOML_E_OVERFLOW,
                    "asm-avx512 edges: %llu points do not fit 32-bit edge indices",
                    (unsigned long long)n);
    if (n < 2)
        return TOPOML_OK;
    if (!scalar_in_plain_range(in))
        return scalar_exact_edges(call, in, threshold, out, n_out, "asm-avx512");
    if ((status = sweep_start(&o, &s, in)) != TOPOML_OK)
        return status;

    uint64_t per_tile = (uint64_t)TILE_ROWS * s.cols + TILE_CAND_SLACK;
    cand_bytes = per_tile * (s.elem + 4);
    if ((status = take(&o, cand_bytes, "the candidate buffers")) != TOPOML_OK) {
        cand_bytes = 0;
        goto done;
    }
    cand_d = call->alloc(call->host_data, (size_t)(per_tile * s.elem));
    cand_col = call->alloc(call->host_data, (size_t)(per_tile * 4));
    if (!cand_d || !cand_col) {
        status = fail(call, TOPOML_E_NOMEM, "asm-avx512 edges: out of memory for candidates");
        goto done;
    }

    edges_ctx c = {&o, &l, &s, in->dtype == TOPOML_F32 ? k->edges_f32 : k->edges_f64};
    memset(&t, 0, sizeof t);
    t.dim = in->dim;
    t.sqrt = in->metric == TOPOML_METRIC_EUCLIDEAN;
    if (in->dtype == TOPOML_F32)
        t.limit.limit_f32 = avx512_edge_limit_f32(t.sqrt, threshold);
    else
        t.limit.limit_f64 = avx512_edge_limit_f64(t.sqrt, threshold);
    t.cand_d = cand_d;
    t.cand_col = cand_col;
    if ((status = sweep_run(&o, &s, &t, NULL, edges_tile, &c)) != TOPOML_OK)
        goto done;

    if (l.len > 1) {
        if ((status = take(&o, l.len * sizeof(topoml_edge), "sorting the edges")) != TOPOML_OK)
            goto done;
        tmp = call->alloc(call->host_data, (size_t)l.len * sizeof(topoml_edge));
        if (!tmp) {
            give(&o, l.len * sizeof(topoml_edge));
            status = fail(call, TOPOML_E_NOMEM, "asm-avx512 edges: out of memory for sorting");
            goto done;
        }
        avx512_sort_edges(l.e, tmp, l.len);
        call->free(call->host_data, tmp);
        give(&o, l.len * sizeof(topoml_edge));
    }
    if (l.len > 0 && l.len < l.cap) {
        /* Hand back only what is used; keeping the larger block is fine if
         * the shrink fails. */
        topoml_edge *e = call->realloc(call->host_data, l.e, (size_t)l.len * sizeof(topoml_edge));
        if (e)
            l.e = e;
    }
    *out = l.e;
    *n_out = l.len;
    l.e = NULL;
    status = TOPOML_OK;

done:
    if (l.e)
        call->free(call->host_data, l.e);
    if (cand_d)
        call->free(call->host_data, cand_d);
    if (cand_col)
        call->free(call->host_data, cand_col);
    sweep_end(&o, &s);
    return status;
}
