/*
 * test_plan.c — the launch arithmetic of plan.h: tile numbering, bands that
 * cover every condensed entry exactly once within their limits, and the
 * float threshold that selects exactly what the double one does.
 */
#include <check.h>
#include <float.h>
#include <math.h>

#include "plan.h"
#include "tb_kernels.h"

START_TEST(test_condensed_index_is_ripser_order)
{
    ck_assert_uint_eq(tb_condensed_index(1, 0), 0);
    ck_assert_uint_eq(tb_condensed_index(2, 0), 1);
    ck_assert_uint_eq(tb_condensed_index(2, 1), 2);
    ck_assert_uint_eq(tb_condensed_index(3, 0), 3);
    ck_assert_uint_eq(tb_condensed_index(65536, 65535), 65536ull * 65535 / 2 + 65535);
}
END_TEST

static void check_bands(uint64_t n, uint64_t block, uint64_t esz, uint64_t max_bytes)
{
    uint64_t rows = tb_cdiv(n, block);
    uint64_t next_entry = 0, next_tile = 0, next_row = 0;
    tb_band b;
    for (uint64_t bi = 0; tb_next_band(n, block, bi, esz, max_bytes, &b); bi = b.bi1) {
        ck_assert_uint_eq(b.bi0, next_row);
        ck_assert_uint_gt(b.bi1, b.bi0);
        ck_assert_uint_eq(b.out0, next_entry);
        ck_assert_uint_eq(b.tile0, next_tile);
        /* The limit holds unless a single block row already breaks it. */
        if (b.bi1 > b.bi0 + 1)
            ck_assert_uint_le(b.entries * esz, max_bytes);
        next_entry += b.entries;
        next_tile += b.tiles;
        next_row = b.bi1;
    }
    ck_assert_uint_eq(next_row, rows);
    ck_assert_uint_eq(next_entry, n * (n - 1) / 2);
    ck_assert_uint_eq(next_tile, tb_tiles_below(rows));
}

START_TEST(test_bands_cover_the_triangle_once)
{
    check_bands(2, 64, 4, 1u << 30);
    check_bands(64, 64, 4, 1u << 30);
    check_bands(65, 64, 4, 1u << 30);
    check_bands(1000, 64, 4, 4096);
    check_bands(1000, 64, 8, 100000);
    check_bands(4097, 16, 4, 1);
    check_bands(65536, 64, 4, 1u << 30);
}
END_TEST

START_TEST(test_one_band_when_everything_fits)
{
    tb_band b;
    ck_assert(tb_next_band(1000, 64, 0, 4, 1u << 30, &b));
    ck_assert_uint_eq(b.bi1, 16);
    ck_assert_uint_eq(b.entries, 1000 * 999 / 2);
    ck_assert(!tb_next_band(1000, 64, 16, 4, 1u << 30, &b));
}
END_TEST

START_TEST(test_float_threshold_selects_same_pairs)
{
    const double ts[] = {0.0,   1.0,  0.1,    1.0 / 3.0, 1e-40, 3.4028235677973366e38,
                         1e300, -0.1, -1e300, 16777217.0};
    for (size_t k = 0; k < sizeof ts / sizeof ts[0]; k++) {
        float f = tb_float_at_most(ts[k]);
        ck_assert((double)f <= ts[k]);
        float up = nextafterf(f, INFINITY);
        ck_assert_msg((double)up > ts[k], "t=%g f=%g", ts[k], (double)f);
    }
    ck_assert(tb_float_at_most(INFINITY) == INFINITY);
    ck_assert(tb_float_at_most(-INFINITY) == -INFINITY);
    ck_assert(tb_float_at_most(1e300) == FLT_MAX);
    ck_assert(tb_float_at_most(0.1) < 0.1f);
    ck_assert(tb_float_at_most(0.5) == 0.5f);
}
END_TEST

/* Launch arguments of pairwise_distances_dot (xt, xs, out, n, dim, root,
 * tile0, out0, two scratch pointers), at full width as the stubs receive
 * them. */
static int fits_dot(int kernel, uint64_t xt, int64_t n, int64_t dim)
{
    uint64_t xs = 8192, out = 4096, scratch = 0;
    int32_t root = 1;
    int64_t tile0 = 0, out0 = 0;
    void *args[] = {&xt, &xs, &out, &n, &dim, &root, &tile0, &out0, &scratch, &scratch};
    return tb_kernel_fits(kernel, args, 0);
}

/* The same for pairwise_distances (no xs), with root given. */
static int fits_exact(int kernel, int64_t n, int64_t dim, int32_t root)
{
    uint64_t xt = 256, out = 4096, scratch = 0;
    int64_t tile0 = 0, out0 = 0;
    void *args[] = {&xt, &out, &n, &dim, &root, &tile0, &out0, &scratch, &scratch};
    return tb_kernel_fits(kernel, args, 0);
}

START_TEST(test_variants_fit_only_their_arguments)
{
    /* The stub takes the first variant that fits: aligned and small means
     * d16n32, the JIT's own specialization on the plugin's padded layout. */
    ck_assert(fits_dot(TB_KERNEL_DISTANCES_DOT_F32_D16N32, 256, 65536, 64));
    ck_assert(fits_dot(TB_KERNEL_DISTANCES_DOT_F32_D16, 256, 65536, 64));
    ck_assert(fits_dot(TB_KERNEL_DISTANCES_DOT_F32_N32, 256, 65536, 64));
    ck_assert(fits_dot(TB_KERNEL_DISTANCES_DOT_F32, 256, 65536, 64));
    /* n not a multiple of 16, or a misaligned pointer: no d16 of any kind. */
    ck_assert(!fits_dot(TB_KERNEL_DISTANCES_DOT_F32_D16N32, 256, 65535, 64));
    ck_assert(!fits_dot(TB_KERNEL_DISTANCES_DOT_F32_D16N32, 260, 65536, 64));
    ck_assert(!fits_dot(TB_KERNEL_DISTANCES_DOT_F32_D16, 260, 65536, 64));
    ck_assert(fits_dot(TB_KERNEL_DISTANCES_DOT_F32_N32, 260, 65535, 64));
    /* n * dim at 2^31: no 32-bit variant, aligned or not. */
    ck_assert(!fits_dot(TB_KERNEL_DISTANCES_DOT_F32_D16N32, 256, 1 << 25, 64));
    ck_assert(!fits_dot(TB_KERNEL_DISTANCES_DOT_F32_N32, 256, 1 << 25, 64));
    ck_assert(fits_dot(TB_KERNEL_DISTANCES_DOT_F32_D16, 256, 1 << 25, 64));
    ck_assert(fits_dot(TB_KERNEL_DISTANCES_DOT_F32_D16N32, 256, 1 << 25, 63));

    /* root == 1 compiled in: only for root 1; n32 limits as above. */
    ck_assert(fits_exact(TB_KERNEL_DISTANCES_F32_N32R1, 65535, 3, 1));
    ck_assert(!fits_exact(TB_KERNEL_DISTANCES_F32_N32R1, 65535, 3, 0));
    ck_assert(fits_exact(TB_KERNEL_DISTANCES_F32_N32, 65535, 3, 0));
    ck_assert(!fits_exact(TB_KERNEL_DISTANCES_F32_N32R1, 65535, 3, 2));
    ck_assert(!fits_exact(TB_KERNEL_DISTANCES_F32_N32R1, 1 << 27, 16, 1));
    ck_assert(fits_exact(TB_KERNEL_DISTANCES_F32, 1 << 27, 16, 1));

    /* As launched (narrowed): n and dim are int32_t in the argument array. */
    uint64_t xt = 256, xs = 8192, out = 4096, scratch = 0;
    int32_t n32 = 4096, dim32 = 64, root = 1;
    int64_t tile0 = 0, out0 = 0;
    void *args32[] = {&xt, &xs, &out, &n32, &dim32, &root, &tile0, &out0, &scratch, &scratch};
    ck_assert(tb_kernel_fits(TB_KERNEL_DISTANCES_DOT_F32_D16N32, args32, 1));
    n32 = 4095;
    ck_assert(!tb_kernel_fits(TB_KERNEL_DISTANCES_DOT_F32_D16N32, args32, 1));
    ck_assert(tb_kernel_fits(TB_KERNEL_DISTANCES_DOT_F32_N32, args32, 1));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("triton_bridge_plan");
    TCase *tc = tcase_create("plan");
    tcase_add_test(tc, test_condensed_index_is_ripser_order);
    tcase_add_test(tc, test_bands_cover_the_triangle_once);
    tcase_add_test(tc, test_one_band_when_everything_fits);
    tcase_add_test(tc, test_float_threshold_selects_same_pairs);
    tcase_add_test(tc, test_variants_fit_only_their_arguments);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
