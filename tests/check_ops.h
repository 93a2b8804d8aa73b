/*
 * check_ops.h — small checks of ops that several Check test programs of
 * tests/ share.
 */
#ifndef TOPOML_TESTS_CHECK_OPS_H
#define TOPOML_TESTS_CHECK_OPS_H

#include <check.h>

#include "topoml/topoml.h"

/* Distances of three points (a 3-4-5 triangle, twice) on whatever the
 * context picks: they must be right. */
static inline void check_distances_of_three_points(topoml_context *ctx)
{
    static const double cloud[] = {0, 0, 3, 4, 6, 8};
    topoml_data *d = NULL;
    ck_assert_int_eq(topoml_data_from_points(ctx, &d, 3, 2, cloud), TOPOML_OK);
    void *out = NULL;
    uint64_t n = 0;
    int rc = topoml_distances(ctx, d, TOPOML_METRIC_EUCLIDEAN, TOPOML_F64, &out, &n);
    ck_assert_msg(rc == TOPOML_OK, "%s", topoml_errmsg(ctx));
    const double *v = out;
    ck_assert(n == 3 && v[0] == 5.0 && v[1] == 10.0 && v[2] == 5.0);
    topoml_free(ctx, out);
    topoml_data_free(ctx, d);
}

#endif
