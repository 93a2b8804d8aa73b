/*
 * test_barcode_output.c — Check tests of what a barcode records and writes
 * beyond its intervals: the input format and the threshold in JSON and CSV,
 * bars cut off by the threshold told apart from essential classes (dense and
 * sparse inputs, topoml_barcode_cut_off), the CSV read back by the diagram
 * reader, and the refusals (a NaN or negative ratio, NULL barcodes).
 */
#define _POSIX_C_SOURCE 200809L

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
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

static topoml_barcode *compute(topoml_context *ctx, const topoml_data *d, uint32_t max_dim,
                               double threshold)
{
    topoml_rips_options o;
    topoml_rips_options_init(&o);
    o.max_dim = max_dim;
    o.threshold = threshold;
    topoml_barcode *bc = NULL;
    ck_assert_int_eq(topoml_barcode_compute(ctx, &bc, d, &o), TOPOML_OK);
    return bc;
}

/* Write in `style` into a string (freed by the caller). */
static char *written(topoml_context *ctx, const topoml_barcode *bc, topoml_output style)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(topoml_barcode_write(ctx, bc, f, style, 0), TOPOML_OK);
    fclose(f);
    return buf;
}

/* Count the lines of `text` that are exactly `line`. */
static int count_lines(const char *text, const char *line)
{
    int n = 0;
    size_t len = strlen(line);
    for (const char *p = text; (p = strstr(p, line)) != NULL; p += len)
        if ((p == text || p[-1] == '\n') && (p[len] == '\n' || p[len] == '\0'))
            n++;
    return n;
}

/* Four points on a square of side 1 (diagonal sqrt 2): H1 is born at 1 and
 * dies at sqrt 2. A threshold of 1.2 cuts it off; 0.5 leaves four
 * components, of which one is essential. */
static const double square[] = {0, 0, 1, 0, 1, 1, 0, 1};

START_TEST(test_json_records_input_threshold_and_cut_off_counts)
{
    topoml_context *ctx = ctx_new();
    FILE *f = tmpfile();
    fputs("0 1 1.4142135623730951 1\n1 0 1 1.4142135623730951\n"
          "1.4142135623730951 1 0 1\n1 1.4142135623730951 1 0\n",
          f);
    rewind(f);
    topoml_data *d;
    ck_assert_int_eq(topoml_data_read_stream(ctx, &d, f, "sq", TOPOML_FORMAT_AUTO), TOPOML_OK);
    fclose(f);

    topoml_barcode *bc = compute(ctx, d, 1, 1.2);
    char *json = written(ctx, bc, TOPOML_OUTPUT_JSON);
    ck_assert_msg(strstr(json, "\"input\":{\"format\":\"distance\",\"points\":4},"
                               "\"threshold\":1.2,"),
                  "%s", json);
    ck_assert_msg(strstr(json, "{\"dim\":0,\"intervals\":[[0,1],[0,1],[0,1],[0,null]],"
                               "\"cut_off\":0}"),
                  "%s", json);
    ck_assert_msg(strstr(json, "{\"dim\":1,\"intervals\":[[1,null]],\"cut_off\":1}"), "%s", json);
    free(json);
    ck_assert_double_eq(topoml_barcode_threshold(bc), 1.2);
    topoml_barcode_free(bc);

    bc = compute(ctx, d, 1, INFINITY);
    json = written(ctx, bc, TOPOML_OUTPUT_JSON);
    ck_assert_msg(strstr(json, "\"threshold\":null,"), "%s", json);
    ck_assert_ptr_null(strstr(json, "\"cut_off\":1"));
    free(json);
    ck_assert(isinf(topoml_barcode_threshold(bc)));
    topoml_barcode_free(bc);
    topoml_data_free(ctx, d);
    topoml_context_free(ctx);
}
END_TEST

START_TEST(test_dense_threshold_leaves_one_essential_h0_class)
{
    topoml_context *ctx = ctx_new();
    topoml_data *d;
    ck_assert_int_eq(topoml_data_from_points(ctx, &d, 4, 2, square), TOPOML_OK);
    topoml_barcode *bc = compute(ctx, d, 1, 0.5);
    uint64_t n;
    const topoml_interval *v = topoml_barcode_intervals(bc, &n);
    ck_assert_uint_eq(n, 4);
    int essential = 0, cut = 0;
    for (uint64_t k = 0; k < n; k++) {
        ck_assert(isinf(v[k].death));
        int c = topoml_barcode_cut_off(bc, k);
        ck_assert(c == 0 || c == 1);
        essential += c == 0;
        cut += c == 1;
    }
    ck_assert_int_eq(essential, 1);
    ck_assert_int_eq(cut, 3);
    ck_assert_int_eq(topoml_barcode_cut_off(bc, n), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_barcode_cut_off(NULL, 0), TOPOML_E_INVALID);

    char *csv = written(ctx, bc, TOPOML_OUTPUT_CSV);
    ck_assert_msg(strncmp(csv, "# threshold 0.5\ndim,birth,death\n", 32) == 0, "%s", csv);
    ck_assert_int_eq(count_lines(csv, "0,0,inf"), 1);
    ck_assert_int_eq(count_lines(csv, "0,0,cut"), 3);

    /* The diagram reader takes it back, cut-off bars as alive. */
    topoml_diagram *dg = NULL;
    FILE *in = fmemopen(csv, strlen(csv), "r");
    ck_assert_int_eq(topoml_diagram_read_stream(ctx, &dg, in, "bars.csv", TOPOML_DIAGRAM_CSV),
                     TOPOML_OK);
    fclose(in);
    free(csv);
    uint64_t m;
    const topoml_pair *p = topoml_diagram_pairs(dg, 0, &m);
    ck_assert_uint_eq(m, 4);
    for (uint64_t k = 0; k < m; k++)
        ck_assert(isinf(p[k].death));
    topoml_diagram_free(dg);

    /* Without a threshold there is nothing to cut off. */
    topoml_barcode_free(bc);
    bc = compute(ctx, d, 1, INFINITY);
    csv = written(ctx, bc, TOPOML_OUTPUT_CSV);
    ck_assert_msg(strncmp(csv, "dim,birth,death\n", 16) == 0, "%s", csv);
    ck_assert_int_eq(count_lines(csv, "0,0,cut"), 0);
    free(csv);
    topoml_barcode_free(bc);
    topoml_data_free(ctx, d);
    topoml_context_free(ctx);
}
END_TEST

START_TEST(test_sparse_bars_are_cut_off_only_below_the_longest_edge)
{
    /* Two components {0,1} and {2}; edges of length 1 and 3. */
    const topoml_edge e[] = {{.i = 0, .j = 1, .d = 1}, {.i = 1, .j = 3, .d = 3}};
    topoml_context *ctx = ctx_new();
    topoml_data *d;
    ck_assert_int_eq(topoml_data_from_edges(ctx, &d, 4, 2, e), TOPOML_OK);
    const struct {
        double threshold;
        int cut; /* infinite bars cut off */
        int inf; /* infinite bars */
    } cases[] = {{0.5, 4, 4}, {2, 3, 3}, {3, 0, 2}, {INFINITY, 0, 2}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        topoml_barcode *bc = compute(ctx, d, 1, cases[c].threshold);
        uint64_t n;
        const topoml_interval *v = topoml_barcode_intervals(bc, &n);
        int cut = 0, inf = 0;
        for (uint64_t k = 0; k < n; k++) {
            inf += isinf(v[k].death) != 0;
            cut += topoml_barcode_cut_off(bc, k);
        }
        ck_assert_msg(cut == cases[c].cut && inf == cases[c].inf,
                      "threshold %g: %d of %d infinite bars cut off", cases[c].threshold, cut, inf);
        topoml_barcode_free(bc);
    }
    topoml_data_free(ctx, d);
    topoml_context_free(ctx);
}
END_TEST

START_TEST(test_write_refuses_nan_or_negative_ratio_and_null_barcodes_are_safe)
{
    topoml_context *ctx = ctx_new();
    topoml_data *d;
    ck_assert_int_eq(topoml_data_from_points(ctx, &d, 4, 2, square), TOPOML_OK);
    topoml_barcode *bc = compute(ctx, d, 1, INFINITY);
    FILE *f = tmpfile();
    ck_assert_int_eq(topoml_barcode_write(ctx, bc, f, TOPOML_OUTPUT_RIPSER, NAN), TOPOML_E_INVALID);
    ck_assert_ptr_nonnull(strstr(topoml_errmsg(ctx), "ratio"));
    ck_assert_int_eq(topoml_barcode_write(ctx, bc, f, TOPOML_OUTPUT_RIPSER, -1), TOPOML_E_INVALID);
    ck_assert_int_eq(ftell(f), 0);
    ck_assert_int_eq(topoml_barcode_write(ctx, bc, f, TOPOML_OUTPUT_RIPSER, 1.5), TOPOML_OK);
    fclose(f);
    uint64_t n = 99;
    ck_assert_ptr_null(topoml_barcode_intervals(NULL, &n));
    ck_assert_uint_eq(n, 0);
    ck_assert_uint_eq(topoml_barcode_max_dim(NULL), 0);
    ck_assert_int_eq(topoml_barcode_complete(NULL), 0);
    ck_assert(isnan(topoml_barcode_threshold(NULL)));
    topoml_barcode_free(bc);
    topoml_data_free(ctx, d);
    topoml_context_free(ctx);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("barcode_output");
    TCase *t = tcase_create("output");
    tcase_add_test(t, test_json_records_input_threshold_and_cut_off_counts);
    tcase_add_test(t, test_dense_threshold_leaves_one_essential_h0_class);
    tcase_add_test(t, test_sparse_bars_are_cut_off_only_below_the_longest_edge);
    tcase_add_test(t, test_write_refuses_nan_or_negative_ratio_and_null_barcodes_are_safe);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return topoml_check_run(suite());
}
