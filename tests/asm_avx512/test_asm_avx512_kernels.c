/*
 * test_kernels.c — the AVX-512 kernels of kernels.S against the C stand-in,
 * bit for bit, on random tiles (any mask pattern, unaligned rows and
 * outputs, every dimension up to 70), at the edge of unmapped memory, and
 * through the glue for whole ops. Needs a processor and OS the gate accepts;
 * elsewhere it exits with 77, which CTest reports as skipped.
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include <check.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "gate.h"
#include "opcheck.h"
#include "standin.h"
#include "testutil.h"

static const avx512_kernels kernels_avx512 = {
    topoml_avx512_dist_f32,
    topoml_avx512_dist_f64,
    topoml_avx512_edges_f32,
    topoml_avx512_edges_f64,
};

#define MAX_DIM 70
#define COLS_MAX TILE_F32_COLS
#define CAND_CAP (TILE_ROWS * COLS_MAX + TILE_CAND_SLACK)

/* One random tile with everything it points at. */
typedef struct tile_case {
    struct avx512_tile t;
    _Alignas(64) double panel[MAX_DIM * TILE_F32_COLS];
    double rows[TILE_ROWS][MAX_DIM + 1];
    unsigned char out[TILE_ROWS][COLS_MAX * 8 + 16];
    double cand_d[CAND_CAP];
    uint32_t cand_col[CAND_CAP];
    /* Rows a previous call left pending, sums to be rooted in place. */
    unsigned char pend[TILE_ROWS][COLS_MAX * 8 + 16];
} tile_case;

static void random_tile(tile_case *c, uint64_t *seed, int f64)
{
    uint64_t dim = rng_next(seed) % (MAX_DIM + 1);
    unsigned cols = f64 ? TILE_F64_COLS : TILE_F32_COLS;

    memset(&c->t, 0, sizeof c->t);
    for (uint64_t k = 0; k < dim * cols; k++) {
        if (f64)
            c->panel[k] = rng_uniform(seed, -3, 3);
        else
            ((float *)c->panel)[k] = (float)rng_uniform(seed, -3, 3);
    }
    for (unsigned r = 0; r < TILE_ROWS; r++) {
        /* Rows start one element in, so they are only element-aligned. */
        for (uint64_t k = 0; k <= dim; k++) {
            if (f64)
                c->rows[r][k] = rng_uniform(seed, -3, 3);
            else
                ((float *)c->rows[r])[k] = (float)rng_uniform(seed, -3, 3);
        }
        c->t.x[r] = f64 ? (const void *)(c->rows[r] + 1) : (const void *)((float *)c->rows[r] + 1);
        c->t.out[r] = c->out[r] + (f64 ? 8 : 4) * (rng_next(seed) % 3);
    }
    for (unsigned m = 0; m < TILE_ROWS * TILE_VECS; m++) {
        uint64_t r = rng_next(seed);
        /* Mostly the glue's patterns (all, none, a prefix), some arbitrary. */
        c->t.mask[m] = r % 4 == 0   ? 0xffff
                       : r % 4 == 1 ? 0
                       : r % 4 == 2 ? (uint16_t)((1u << (r >> 60)) - 1)
                                    : (uint16_t)(r >> 16);
        if (f64)
            c->t.mask[m] &= 0xff;
    }
    for (unsigned r = 0; r < TILE_ROWS; r++) {
        for (unsigned k = 0; k < COLS_MAX; k++) {
            if (f64)
                ((double *)c->pend[r])[k] = rng_uniform(seed, 0, 100);
            else
                ((float *)c->pend[r])[k] = (float)rng_uniform(seed, 0, 100);
        }
        c->t.pend_out[r] = c->pend[r] + (f64 ? 8 : 4) * (rng_next(seed) % 3);
    }
    for (unsigned m = 0; m < TILE_ROWS * TILE_VECS; m++)
        c->t.pend_mask[m] = (uint16_t)(rng_next(seed) >> 16) & (f64 ? 0xff : 0xffff);
    c->t.panel = c->panel;
    c->t.dim = dim;
    c->t.sqrt = rng_next(seed) & 1;
    if (f64)
        c->t.limit.limit_f64 = rng_uniform(seed, 0, 2.5 * (double)dim);
    else
        c->t.limit.limit_f32 = (float)rng_uniform(seed, 0, 2.5 * (double)dim);
    c->t.cand_d = c->cand_d;
    c->t.cand_col = c->cand_col;
}

START_TEST(test_kernel_dist_tiles_equal_standin_bit_for_bit)
{
    static tile_case a, b;
    uint64_t seed = 42;

    for (int q = 0; q < 3000; q++) {
        int f64 = q & 1;
        uint64_t s = seed;
        random_tile(&a, &s, f64);
        s = seed;
        random_tile(&b, &s, f64);
        seed = s;
        /* The same seed gives b the same values and offsets in its own
         * buffers. */
        memset(a.out, 0x5a, sizeof a.out);
        memset(b.out, 0x5a, sizeof b.out);
        (f64 ? topoml_avx512_dist_f64 : topoml_avx512_dist_f32)(&a.t);
        (f64 ? standin_kernels.dist_f64 : standin_kernels.dist_f32)(&b.t);
        EXPECT(memcmp(a.pend, b.pend, sizeof a.pend) == 0, "case %d: pending roots differ", q);
        EXPECT(memcmp(a.out, b.out, sizeof a.out) == 0, "case %d (f64 %d, dim %llu)", q, f64,
               (unsigned long long)a.t.dim);
    }
}
END_TEST

START_TEST(test_kernel_edge_tiles_equal_standin_bit_for_bit)
{
    static tile_case a, b;
    uint64_t seed = 43;
    uint64_t emitted = 0;

    for (int q = 0; q < 3000; q++) {
        int f64 = q & 1;
        uint64_t s = seed;
        random_tile(&a, &s, f64);
        s = seed;
        random_tile(&b, &s, f64);
        seed = s;
        uint32_t ma = (f64 ? topoml_avx512_edges_f64 : topoml_avx512_edges_f32)(&a.t);
        uint32_t mb = (f64 ? standin_kernels.edges_f64 : standin_kernels.edges_f32)(&b.t);
        EXPECT(ma == mb, "case %d: %u candidates, stand-in %u", q, ma, mb);
        EXPECT(memcmp(a.t.count, b.t.count, sizeof a.t.count) == 0, "line %d", __LINE__);
        EXPECT(memcmp(a.cand_d, b.cand_d, ma * (f64 ? 8 : 4)) == 0, "line %d", __LINE__);
        EXPECT(memcmp(a.cand_col, b.cand_col, ma * 4) == 0, "line %d", __LINE__);
        emitted += ma;
    }
    ck_assert_uint_gt(emitted, 5000);
}
END_TEST

/* Two pages, the second unmapped: whatever ends at `edge` is followed by
 * memory that faults. */
static unsigned char *guarded(size_t *page)
{
    *page = (size_t)sysconf(_SC_PAGESIZE);
    unsigned char *p =
        mmap(NULL, 2 * *page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ck_assert(p != MAP_FAILED);
    ck_assert_int_eq(mprotect(p + *page, *page, PROT_NONE), 0);
    return p;
}

START_TEST(test_kernel_touches_nothing_past_what_the_masks_and_sizes_allow)
{
    size_t page;
    unsigned char *g = guarded(&page), *edge;
    static tile_case c;
    uint64_t seed = 44;

    for (int f64 = 0; f64 < 2; f64++) {
        size_t elem = f64 ? 8 : 4;
        unsigned cols = f64 ? TILE_F64_COLS : TILE_F32_COLS;
        random_tile(&c, &seed, f64);
        c.t.dim = 5;
        edge = g + page;
        /* Output row 0 keeps 3 lanes, which end at the unmapped page; the
         * rest of its 48 (24) lanes would fault if written. */
        c.t.mask[0] = 0x7;
        c.t.mask[1] = c.t.mask[2] = 0;
        c.t.out[0] = edge - 3 * elem;
        /* Pending roots: two lanes that end at the page, and a row on the
         * unmapped page itself with masks 0. */
        c.t.sqrt = 1;
        memset(c.t.pend_mask, 0, sizeof c.t.pend_mask);
        c.t.pend_out[1] = edge - 2 * elem;
        c.t.pend_mask[3] = 0x3;
        c.t.pend_out[2] = edge;
        (f64 ? topoml_avx512_dist_f64 : topoml_avx512_dist_f32)(&c.t);
        c.t.pend_out[1] = c.pend[1];
        c.t.pend_out[2] = c.pend[2];
        /* A row of exactly dim coordinates ending at the page. */
        memcpy(edge - 5 * elem, c.t.x[1], 5 * elem);
        c.t.x[1] = edge - 5 * elem;
        (f64 ? topoml_avx512_dist_f64 : topoml_avx512_dist_f32)(&c.t);
        /* A panel of exactly dim * 192 bytes ending at the page. */
        c.t.panel = edge - 5 * TILE_PANEL_STRIDE;
        memcpy(edge - 5 * TILE_PANEL_STRIDE, c.panel, 5 * TILE_PANEL_STRIDE);
        (f64 ? topoml_avx512_dist_f64 : topoml_avx512_dist_f32)(&c.t);
        /* Candidate buffers of exactly the size tile.h asks for, every lane
         * emitted. */
        for (unsigned m = 0; m < TILE_ROWS * TILE_VECS; m++)
            c.t.mask[m] = f64 ? 0xff : 0xffff;
        c.t.out[0] = c.out[0];
        c.t.panel = c.panel;
        c.t.x[1] = c.t.x[2];
        size_t cap = TILE_ROWS * cols + TILE_CAND_SLACK;
        c.t.cand_d = edge - cap * elem;
        c.t.cand_col = (uint32_t *)(edge - cap * elem - cap * 4 - 64);
        if (f64)
            c.t.limit.limit_f64 = INFINITY;
        else
            c.t.limit.limit_f32 = INFINITY;
        uint32_t m = (f64 ? topoml_avx512_edges_f64 : topoml_avx512_edges_f32)(&c.t);
        ck_assert_uint_eq(m, TILE_ROWS * cols);
        c.t.cand_d = edge - cap * 4 - 64 - cap * elem;
        c.t.cand_col = (uint32_t *)(edge - cap * 4);
        m = (f64 ? topoml_avx512_edges_f64 : topoml_avx512_edges_f32)(&c.t);
        ck_assert_uint_eq(m, TILE_ROWS * cols);
    }
    munmap(g, 2 * page);
}
END_TEST

START_TEST(test_kernel_ops_match_reference_through_the_glue)
{
    static const uint64_t ns[] = {0, 1, 2, 3, 5, 7, 24, 25, 48, 49, 97, 300};
    static const uint64_t dims[] = {0, 1, 2, 3, 16, 17, 64, 65};
    uint64_t seed = 45;

    for (uint32_t t = 0; t < 2; t++)
        for (uint32_t m = 0; m < 2; m++)
            for (size_t a = 0; a < sizeof ns / sizeof ns[0]; a++)
                for (size_t b = 0; b < sizeof dims / sizeof dims[0]; b++) {
                    uint32_t metric = m ? TOPOML_METRIC_EUCLIDEAN : TOPOML_METRIC_SQEUCLIDEAN;
                    opcheck_distances(&kernels_avx512, t, metric, ns[a], dims[b], seed++);
                    void *p = random_points(&seed, t, ns[a], dims[b], -1, 1);
                    double thr = rng_uniform(&seed, 0, 0.7 * (double)dims[b]);
                    opcheck_edges(&kernels_avx512, t, metric, ns[a], dims[b], p, thr);
                    free(p);
                }
}
END_TEST

int main(void)
{
    avx512_cpu_regs regs;
    char why[128];

    avx512_gate_read(&avx512_cpu_hardware, &regs);
    if (avx512_gate_decode(&regs, NULL, why, sizeof why) != TOPOML_OK) {
        fprintf(stderr, "skipped: %s\n", why);
        return 77;
    }
    Suite *s = suite_create("asm-avx512 kernels");
    TCase *tc = tcase_create("kernels");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_kernel_dist_tiles_equal_standin_bit_for_bit);
    tcase_add_test(tc, test_kernel_edge_tiles_equal_standin_bit_for_bit);
    tcase_add_test(tc, test_kernel_touches_nothing_past_what_the_masks_and_sizes_allow);
    tcase_add_test(tc, test_kernel_ops_match_reference_through_the_glue);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
