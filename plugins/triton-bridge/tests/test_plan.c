/*
 * test_plan.c — the launch arithmetic of plan.h: tile numbering, bands that
 * cover every condensed entry exactly once within their limits, and the
 * float threshold that selects exactly what the double one does.
 */
#include <check.h>
#include <float.h>
#include <math.h>

#include "plan.h"

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

int main(void)
{
    Suite *s = suite_create("triton_bridge_plan");
    TCase *tc = tcase_create("plan");
    tcase_add_test(tc, test_condensed_index_is_ripser_order);
    tcase_add_test(tc, test_bands_cover_the_triangle_once);
    tcase_add_test(tc, test_one_band_when_everything_fits);
    tcase_add_test(tc, test_float_threshold_selects_same_pairs);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
