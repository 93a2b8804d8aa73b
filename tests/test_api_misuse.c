/*
 * test_api_misuse.c — Check tests of the public C API under misuse: every
 * public function given NULL for a context, a handle, an input array or an
 * output pointer returns TOPOML_E_INVALID (or, where it returns no status,
 * a neutral value) and never crashes; a backend name that no backend has is
 * refused when it is given. One test per public header area, so a crash
 * names its area.
 */
#define _POSIX_C_SOURCE 200809L

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "topoml/features.h"
#include "topoml/topoml.h"

#include "check_run.h"

static topoml_context *ctx_new(void)
{
    topoml_context_options o = {.struct_size = sizeof o,
                                .flags = TOPOML_CTX_NO_ENV | TOPOML_CTX_NO_PLUGINS};
    topoml_context *ctx = NULL;
    ck_assert_int_eq(topoml_context_new(&ctx, &o), TOPOML_OK);
    return ctx;
}

static const double two_points[] = {0, 0, 1, 1};

START_TEST(test_null_context_and_outputs_of_context_functions)
{
    ck_assert_int_eq(topoml_context_new(NULL, NULL), TOPOML_E_INVALID);
    topoml_context_free(NULL);
    ck_assert_ptr_nonnull(topoml_errmsg(NULL));
    topoml_set_log(NULL, NULL, NULL, 0);
    topoml_set_progress(NULL, NULL, NULL);
    topoml_set_max_memory(NULL, 1);
    ck_assert_uint_eq(topoml_get_max_memory(NULL), 0);
    uint64_t size;
    ck_assert_int_eq(topoml_parse_size(NULL, &size), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_parse_size("1K", NULL), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_check_memory(NULL, 1, "x"), TOPOML_E_INVALID);
    topoml_free(NULL, NULL);
    ck_assert_uint_eq(topoml_backend_count(NULL), 0);
    topoml_backend_info info = {.struct_size = sizeof info};
    ck_assert_int_eq(topoml_backend_get(NULL, 0, &info), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_use_backend(NULL, "scalar"), TOPOML_E_INVALID);
    ck_assert_ptr_nonnull(topoml_last_backend(NULL));
    ck_assert_ptr_nonnull(topoml_last_selection_reason(NULL));
    ck_assert_int_eq(topoml_set_read_flags(NULL, 0), TOPOML_E_INVALID);
    ck_assert_ptr_nonnull(topoml_strerror(12345));
    ck_assert_ptr_nonnull(topoml_version());

    topoml_context *ctx = ctx_new();
    ck_assert_int_eq(topoml_backend_get(ctx, 0, NULL), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_backend_get(ctx, 9999, &info), TOPOML_E_NOT_FOUND);
    topoml_context_free(ctx);
}
END_TEST

START_TEST(test_null_arguments_of_data_functions)
{
    topoml_context *ctx = ctx_new();
    topoml_data *d = NULL;
    topoml_format f;
    ck_assert_int_eq(topoml_format_from_name(NULL, &f), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_format_from_name("dist", NULL), TOPOML_E_INVALID);
    ck_assert_ptr_null(topoml_format_name((topoml_format)-1));
    ck_assert_int_eq(topoml_data_read(NULL, &d, "x", TOPOML_FORMAT_AUTO), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_data_read(ctx, NULL, "x", TOPOML_FORMAT_AUTO), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_data_read(ctx, &d, NULL, TOPOML_FORMAT_AUTO), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_data_read_stream(ctx, &d, NULL, "x", TOPOML_FORMAT_AUTO),
                     TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_data_read_stream(NULL, &d, stdin, "x", TOPOML_FORMAT_AUTO),
                     TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_data_from_points(NULL, &d, 2, 2, two_points), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_data_from_points(ctx, NULL, 2, 2, two_points), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_data_from_points(ctx, &d, 2, 2, NULL), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_data_from_condensed(NULL, &d, 2, two_points), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_data_from_condensed(ctx, NULL, 2, two_points), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_data_from_condensed(ctx, &d, 2, NULL), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_data_from_edges(NULL, &d, 2, 0, NULL), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_data_from_edges(ctx, NULL, 2, 0, NULL), TOPOML_E_INVALID);
    ck_assert_ptr_null(d);
    topoml_data_free(NULL, NULL);
    topoml_data_free(ctx, NULL);
    ck_assert_uint_eq(topoml_data_kind(NULL), UINT32_MAX);
    ck_assert_uint_eq(topoml_data_count(NULL), 0);
    ck_assert_uint_eq(topoml_data_dim(NULL), 0);
    ck_assert_int_eq(topoml_data_format(NULL), TOPOML_FORMAT_AUTO);
    topoml_stats st;
    ck_assert_int_eq(topoml_data_stats(NULL, NULL, TOPOML_METRIC_EUCLIDEAN, 1, &st),
                     TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_data_from_points(ctx, &d, 2, 2, two_points), TOPOML_OK);
    ck_assert_int_eq(topoml_data_stats(ctx, NULL, TOPOML_METRIC_EUCLIDEAN, 1, &st),
                     TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_data_stats(ctx, d, TOPOML_METRIC_EUCLIDEAN, 1, NULL), TOPOML_E_INVALID);
    topoml_data_free(ctx, d);
    topoml_context_free(ctx);
}
END_TEST

START_TEST(test_null_arguments_of_ops_and_barcodes)
{
    topoml_context *ctx = ctx_new();
    topoml_data *d;
    ck_assert_int_eq(topoml_data_from_points(ctx, &d, 2, 2, two_points), TOPOML_OK);
    void *dist = NULL;
    uint64_t count = 0;
    ck_assert_int_eq(topoml_distances(NULL, d, TOPOML_METRIC_EUCLIDEAN, TOPOML_F64, &dist, &count),
                     TOPOML_E_INVALID);
    ck_assert_int_eq(
        topoml_distances(ctx, NULL, TOPOML_METRIC_EUCLIDEAN, TOPOML_F64, &dist, &count),
        TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_distances(ctx, d, TOPOML_METRIC_EUCLIDEAN, TOPOML_F64, NULL, &count),
                     TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_distances(ctx, d, TOPOML_METRIC_EUCLIDEAN, TOPOML_F64, &dist, NULL),
                     TOPOML_E_INVALID);
    topoml_edge *e = NULL;
    ck_assert_int_eq(topoml_edges(NULL, d, TOPOML_METRIC_EUCLIDEAN, 1, &e, &count),
                     TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_edges(ctx, NULL, TOPOML_METRIC_EUCLIDEAN, 1, &e, &count),
                     TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_edges(ctx, d, TOPOML_METRIC_EUCLIDEAN, 1, NULL, &count),
                     TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_edges(ctx, d, TOPOML_METRIC_EUCLIDEAN, 1, &e, NULL), TOPOML_E_INVALID);
    topoml_rips_options_init(NULL);
    topoml_barcode *bc = NULL;
    ck_assert_int_eq(topoml_barcode_compute(NULL, &bc, d, NULL), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_barcode_compute(ctx, NULL, d, NULL), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_barcode_compute(ctx, &bc, NULL, NULL), TOPOML_E_INVALID);
    ck_assert_ptr_null(bc);
    topoml_barcode_free(NULL);
    uint64_t n = 7;
    ck_assert_ptr_null(topoml_barcode_intervals(NULL, &n));
    ck_assert_uint_eq(n, 0);
    ck_assert_int_eq(topoml_barcode_write(NULL, NULL, stdout, TOPOML_OUTPUT_JSON, 0),
                     TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_barcode_compute(ctx, &bc, d, NULL), TOPOML_OK);
    ck_assert_int_eq(topoml_barcode_write(ctx, NULL, stdout, TOPOML_OUTPUT_JSON, 0),
                     TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_barcode_write(ctx, bc, NULL, TOPOML_OUTPUT_JSON, 0), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_barcode_write(ctx, bc, stdout, (topoml_output)9, 0), TOPOML_E_INVALID);
    topoml_barcode_free(bc);
    topoml_data_free(ctx, d);
    topoml_context_free(ctx);
}
END_TEST

START_TEST(test_null_arguments_of_features_and_diagrams)
{
    topoml_context *ctx = ctx_new();
    const topoml_pair p[] = {{0, 1}, {0.5, 2}};
    const double grid[] = {0, 1, 2};
    double x;
    uint64_t u[3], m;
    topoml_pair out[2];
    ck_assert_int_eq(topoml_grid(NULL, 0, 1, 3, &x), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_grid(ctx, 0, 1, 3, NULL), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_pairs_finite(NULL, p, 2, 0, 1, out, &m), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_pairs_finite(ctx, NULL, 2, 0, 1, out, &m), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_pairs_finite(ctx, p, 2, 0, 1, NULL, &m), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_pairs_finite(ctx, p, 2, 0, 1, out, NULL), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_betti_curve(NULL, p, 2, grid, 3, u), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_betti_curve(ctx, NULL, 2, grid, 3, u), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_betti_curve(ctx, p, 2, NULL, 3, u), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_betti_curve(ctx, p, 2, grid, 3, NULL), TOPOML_E_INVALID);
    double land[6];
    ck_assert_int_eq(topoml_landscapes(NULL, p, 2, 2, grid, 3, land), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_landscapes(ctx, NULL, 2, 2, grid, 3, land), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_landscapes(ctx, p, 2, 2, NULL, 3, land), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_landscapes(ctx, p, 2, 2, grid, 3, NULL), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_persistent_entropy(NULL, p, 2, &x), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_persistent_entropy(ctx, NULL, 2, &x), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_persistent_entropy(ctx, p, 2, NULL), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_total_persistence(NULL, p, 2, 1, &x), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_total_persistence(ctx, NULL, 2, 1, &x), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_total_persistence(ctx, p, 2, 1, NULL), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_bottleneck_distance(NULL, p, 2, p, 2, &x), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_bottleneck_distance(ctx, NULL, 2, p, 2, &x), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_bottleneck_distance(ctx, p, 2, NULL, 2, &x), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_bottleneck_distance(ctx, p, 2, p, 2, NULL), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_wasserstein_distance(NULL, p, 2, p, 2, 1, 2, &x), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_wasserstein_distance(ctx, NULL, 2, p, 2, 1, 2, &x), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_wasserstein_distance(ctx, p, 2, NULL, 2, 1, 2, &x), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_wasserstein_distance(ctx, p, 2, p, 2, 1, 2, NULL), TOPOML_E_INVALID);
    topoml_image_params_init(NULL);
    topoml_image_params_v1 ip;
    topoml_image_params_init(&ip);
    const uint64_t offsets[] = {0, 2};
    double img[4096];
    ck_assert_int_eq(topoml_persistence_images(NULL, &ip, 1, offsets, p, img), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_persistence_images(ctx, NULL, 1, offsets, p, img), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_persistence_images(ctx, &ip, 1, NULL, p, img), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_persistence_images(ctx, &ip, 1, offsets, NULL, img), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_persistence_images(ctx, &ip, 1, offsets, p, NULL), TOPOML_E_INVALID);

    topoml_diagram_format df;
    ck_assert_int_eq(topoml_diagram_format_from_name(NULL, &df), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_diagram_format_from_name("csv", NULL), TOPOML_E_INVALID);
    topoml_diagram *dg = NULL;
    ck_assert_int_eq(topoml_diagram_new(NULL, &dg), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_diagram_new(ctx, NULL), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_diagram_from_intervals(NULL, &dg, NULL, 0), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_diagram_from_intervals(ctx, NULL, NULL, 0), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_diagram_from_intervals(ctx, &dg, NULL, 2), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_diagram_add(NULL, 0, p, 2), TOPOML_E_INVALID);
    topoml_diagram_free(NULL);
    ck_assert_uint_eq(topoml_diagram_dim_count(NULL), 0);
    ck_assert_ptr_null(topoml_diagram_pairs(NULL, 0, &m));
    ck_assert_uint_eq(m, 0);
    ck_assert_int_eq(topoml_diagram_read(NULL, &dg, "x", TOPOML_DIAGRAM_AUTO), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_diagram_read(ctx, NULL, "x", TOPOML_DIAGRAM_AUTO), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_diagram_read(ctx, &dg, NULL, TOPOML_DIAGRAM_AUTO), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_diagram_read_stream(ctx, &dg, NULL, "x", TOPOML_DIAGRAM_AUTO),
                     TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_diagram_write(NULL, NULL, stdout, TOPOML_DIAGRAM_CSV),
                     TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_diagram_new(ctx, &dg), TOPOML_OK);
    ck_assert_int_eq(topoml_diagram_add(dg, 0, NULL, 2), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_diagram_write(ctx, dg, NULL, TOPOML_DIAGRAM_CSV), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_diagram_write(ctx, NULL, stdout, TOPOML_DIAGRAM_CSV), TOPOML_E_INVALID);
    topoml_diagram_free(dg);
    topoml_context_free(ctx);
}
END_TEST

START_TEST(test_use_backend_refuses_an_unknown_name_at_once)
{
    topoml_context *ctx = ctx_new();
    ck_assert_int_eq(topoml_use_backend(ctx, "nosuch"), TOPOML_E_NOT_FOUND);
    ck_assert_ptr_nonnull(strstr(topoml_errmsg(ctx), "'nosuch'"));
    ck_assert_ptr_nonnull(strstr(topoml_errmsg(ctx), "scalar")); /* the names there are */
    /* The earlier choice stands: automatic, so work still runs. */
    topoml_data *d;
    ck_assert_int_eq(topoml_data_from_points(ctx, &d, 2, 2, two_points), TOPOML_OK);
    topoml_barcode *bc;
    ck_assert_int_eq(topoml_barcode_compute(ctx, &bc, d, NULL), TOPOML_OK);
    ck_assert_str_eq(topoml_last_backend(ctx), "scalar");
    topoml_barcode_free(bc);
    ck_assert_int_eq(topoml_use_backend(ctx, "scalar"), TOPOML_OK);
    ck_assert_int_eq(topoml_use_backend(ctx, NULL), TOPOML_OK);
    topoml_data_free(ctx, d);
    topoml_context_free(ctx);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("api_misuse");
    TCase *t = tcase_create("null");
    tcase_add_test(t, test_null_context_and_outputs_of_context_functions);
    tcase_add_test(t, test_null_arguments_of_data_functions);
    tcase_add_test(t, test_null_arguments_of_ops_and_barcodes);
    tcase_add_test(t, test_null_arguments_of_features_and_diagrams);
    suite_add_tcase(s, t);
    t = tcase_create("misuse");
    tcase_add_test(t, test_use_backend_refuses_an_unknown_name_at_once);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return topoml_check_run(suite());
}
