/*
 * test_ripser_input.c — Check tests of reading what Ripser reads: the layout
 * told without a format (TOPOML_FORMAT_AUTO) and said in the log, Ripser's
 * format-name prefixes, '#' comments and a point cloud's header line, and
 * full matrices whose triangles differ or whose diagonal is not zero (read
 * as Ripser reads them, with one warning; refused under
 * TOPOML_READ_STRICT_SYMMETRY). docs/formats.md describes each rule.
 */
#define _POSIX_C_SOURCE 200809L

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/api.h" /* struct topoml_data, to compare the arrays read */
#include "topoml/topoml.h"

#include "check_run.h"

/* ---- helpers ---- */

/* Every log message of a context, one per line. */
typedef struct log_record {
    char text[8192];
    int warnings, infos;
} log_record;

static void record_log(void *user, int level, const char *message)
{
    log_record *l = user;
    size_t k = strlen(l->text);
    snprintf(l->text + k, sizeof l->text - k, "%s\n", message);
    l->warnings += level == TOPOML_LOG_WARN;
    l->infos += level == TOPOML_LOG_INFO;
}

static topoml_context *ctx_new(log_record *log)
{
    topoml_context_options o = {.struct_size = sizeof o,
                                .flags = TOPOML_CTX_NO_ENV | TOPOML_CTX_NO_PLUGINS};
    topoml_context *ctx = NULL;
    ck_assert_int_eq(topoml_context_new(&ctx, &o), TOPOML_OK);
    if (log) {
        memset(log, 0, sizeof *log);
        topoml_set_log(ctx, record_log, log, TOPOML_LOG_INFO);
    }
    return ctx;
}

/* The text as a stream: a temporary file, or a pipe (no size, no seeking). */
static FILE *stream_of(const void *bytes, size_t len, int pipe_it)
{
    if (pipe_it) {
        int fd[2];
        ck_assert_int_eq(pipe(fd), 0);
        ck_assert_uint_lt(len, 60000); /* fits in the pipe's buffer */
        ck_assert_int_eq((int)write(fd[1], bytes, len), (int)len);
        close(fd[1]);
        return fdopen(fd[0], "rb");
    }
    FILE *f = tmpfile();
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(bytes, 1, len, f), len);
    rewind(f);
    return f;
}

static int read_mem(topoml_context *ctx, topoml_data **d, const void *bytes, size_t len,
                    const char *name, topoml_format format, int pipe_it)
{
    FILE *f = stream_of(bytes, len, pipe_it);
    int st = topoml_data_read_stream(ctx, d, f, name, format);
    fclose(f);
    return st;
}

static int read_str(topoml_context *ctx, topoml_data **d, const char *text, topoml_format format)
{
    return read_mem(ctx, d, text, strlen(text), "m.txt", format, 0);
}

static const char *example(const char *file)
{
    static char path[1024];
    snprintf(path, sizeof path, "%s/%s", TOPOML_SHARED_DATA, file);
    return path;
}

/* Read `text` with no format named, from a file and from a pipe: it must be
 * read as `want`, with n points and the condensed values `cond`. */
static void expect_detected(const char *text, topoml_format want, uint64_t n, const double *cond)
{
    for (int pipe_it = 0; pipe_it < 2; pipe_it++) {
        log_record log;
        topoml_context *ctx = ctx_new(&log);
        topoml_data *d = NULL;
        int st = read_mem(ctx, &d, text, strlen(text), "m.txt", TOPOML_FORMAT_AUTO, pipe_it);
        ck_assert_msg(st == TOPOML_OK, "%s: %s", text, topoml_errmsg(ctx));
        ck_assert_msg(topoml_data_format(d) == want, "'%s' read as %s, not %s", text,
                      topoml_format_name(topoml_data_format(d)), topoml_format_name(want));
        ck_assert_uint_eq(topoml_data_count(d), n);
        for (uint64_t k = 0; k < n * (n - 1) / 2; k++)
            ck_assert_double_eq(d->values[k], cond[k]);
        char said[128];
        snprintf(said, sizeof said, "m.txt: read as %s (", topoml_format_name(want));
        ck_assert_msg(strstr(log.text, said), "the log does not say '%s': %s", said, log.text);
        topoml_data_free(ctx, d);
        topoml_context_free(ctx);
    }
}

static void expect_refused(const char *text, topoml_format format, uint32_t flags, int status,
                           const char *fragment)
{
    topoml_context *ctx = ctx_new(NULL);
    ck_assert_int_eq(topoml_set_read_flags(ctx, flags), TOPOML_OK);
    topoml_data *d = (topoml_data *)1;
    int st = read_str(ctx, &d, text, format);
    ck_assert_msg(st == status, "'%s': status %d, expected %d (%s)", text, st, status,
                  topoml_errmsg(ctx));
    ck_assert_ptr_null(d);
    ck_assert_msg(strstr(topoml_errmsg(ctx), fragment), "message lacks '%s': %s", fragment,
                  topoml_errmsg(ctx));
    topoml_context_free(ctx);
}

/* ---- the layout told without a format ---- */

/* d(1,0)=1, d(2,0)=2, d(2,1)=3 in every layout. */
static const double three[] = {1, 2, 3};

START_TEST(test_detect_square_matrix_as_distance)
{
    expect_detected("0 1 2\n1 0 3\n2 3 0\n", TOPOML_FORMAT_DISTANCE, 3, three);
    expect_detected("0,1,2\r\n1,0,3\r\n2,3,0\r\n", TOPOML_FORMAT_DISTANCE, 3, three);
    expect_detected("0 1\n1 0\n", TOPOML_FORMAT_DISTANCE, 2, three);
}
END_TEST

START_TEST(test_detect_lower_triangle_with_and_without_diagonal)
{
    expect_detected("\n1\n2 3\n", TOPOML_FORMAT_LOWER_DISTANCE, 3, three);      /* Ripser's files */
    expect_detected("1\n2 3\n", TOPOML_FORMAT_LOWER_DISTANCE, 3, three);        /* row 0 left out */
    expect_detected("0\n1 0\n2 3 0\n", TOPOML_FORMAT_LOWER_DISTANCE, 3, three); /* diagonal */
    expect_detected("1 2 3\n", TOPOML_FORMAT_LOWER_DISTANCE, 3, three);         /* one line */
    expect_detected("1\n2\n3\n", TOPOML_FORMAT_LOWER_DISTANCE, 3, three);       /* one a line */
}
END_TEST

START_TEST(test_detect_upper_triangle_with_and_without_diagonal)
{
    /* upper order: d(0,1)=1, d(0,2)=2, d(1,2)=3 */
    expect_detected("1 2\n3\n", TOPOML_FORMAT_UPPER_DISTANCE, 3, three);
    expect_detected("0 1 2\n0 3\n0\n", TOPOML_FORMAT_UPPER_DISTANCE, 3, three);
}
END_TEST

START_TEST(test_detect_skips_comments_before_the_rows)
{
    expect_detected("# a comment\n\n# another\n0 1 2 # row 0\n1 0 3\n2 3 0\n",
                    TOPOML_FORMAT_DISTANCE, 3, three);
    /* A comment on line 1 is not Ripser's empty row 0: the diagonal is seen. */
    expect_detected("# distances\n0\n1 0\n2 3 0\n", TOPOML_FORMAT_LOWER_DISTANCE, 3, three);
}
END_TEST

START_TEST(test_detect_dipha_by_magic_from_file_and_pipe)
{
    FILE *f = fopen(example("projective_plane.dipha"), "rb");
    ck_assert_ptr_nonnull(f);
    static unsigned char bytes[8192];
    size_t len = fread(bytes, 1, sizeof bytes, f);
    fclose(f);
    ck_assert_uint_gt(len, 24);
    for (int pipe_it = 0; pipe_it < 2; pipe_it++) {
        topoml_context *ctx = ctx_new(NULL);
        topoml_data *a, *b;
        ck_assert_int_eq(read_mem(ctx, &a, bytes, len, "pp", TOPOML_FORMAT_AUTO, pipe_it),
                         TOPOML_OK);
        ck_assert_int_eq(read_mem(ctx, &b, bytes, len, "pp", TOPOML_FORMAT_DIPHA, pipe_it),
                         TOPOML_OK);
        ck_assert_int_eq(topoml_data_format(a), TOPOML_FORMAT_DIPHA);
        ck_assert_uint_eq(topoml_data_count(a), 13);
        ck_assert_mem_eq(a->values, b->values, 78 * sizeof(double));
        topoml_data_free(ctx, a);
        topoml_data_free(ctx, b);
        topoml_context_free(ctx);
    }
}
END_TEST

/* Every shipped example reads to the same matrix with and without its
 * format named, except the point clouds, which must be named. */
START_TEST(test_detect_reads_ripser_examples_as_named)
{
    static const struct {
        const char *file;
        topoml_format format;
    } files[] = {{"random16.lower_distance_matrix", TOPOML_FORMAT_LOWER_DISTANCE},
                 {"random20.lower_distance_matrix", TOPOML_FORMAT_LOWER_DISTANCE},
                 {"sphere_3_192.lower_distance_matrix", TOPOML_FORMAT_LOWER_DISTANCE},
                 {"projective_plane.lower_distance_matrix", TOPOML_FORMAT_LOWER_DISTANCE},
                 {"projective_plane.csv", TOPOML_FORMAT_DISTANCE},
                 {"projective_plane.dipha", TOPOML_FORMAT_DIPHA}};
    for (size_t k = 0; k < sizeof files / sizeof files[0]; k++) {
        topoml_context *ctx = ctx_new(NULL);
        topoml_data *a, *b;
        ck_assert_int_eq(topoml_data_read(ctx, &a, example(files[k].file), TOPOML_FORMAT_AUTO),
                         TOPOML_OK);
        ck_assert_int_eq(topoml_data_read(ctx, &b, example(files[k].file), files[k].format),
                         TOPOML_OK);
        ck_assert_msg(topoml_data_format(a) == files[k].format, "%s read as %s", files[k].file,
                      topoml_format_name(topoml_data_format(a)));
        ck_assert_uint_eq(a->n, b->n);
        ck_assert_mem_eq(a->values, b->values, a->n * (a->n - 1) / 2 * sizeof(double));
        topoml_data_free(ctx, a);
        topoml_data_free(ctx, b);
        topoml_context_free(ctx);
    }
    /* A point cloud looks like a square matrix that is not one. */
    topoml_context *ctx = ctx_new(NULL);
    topoml_data *d;
    ck_assert_int_eq(topoml_data_read(ctx, &d, example("o3_1024.txt"), TOPOML_FORMAT_AUTO),
                     TOPOML_E_INVALID);
    ck_assert_ptr_nonnull(strstr(topoml_errmsg(ctx), "read as distance"));
    ck_assert_ptr_nonnull(strstr(topoml_errmsg(ctx), "point clouds"));
    topoml_context_free(ctx);
}
END_TEST

START_TEST(test_detect_refuses_what_fits_no_layout_saying_what_was_seen)
{
    expect_refused("# c\n1 2 3\n\n4 5 6 7 8\n", TOPOML_FORMAT_AUTO, 0, TOPOML_E_PARSE,
                   "m.txt:4: the layout cannot be told: line 2 holds 3 values and line 4 holds 5");
    expect_refused("1 2 3\n4\n", TOPOML_FORMAT_AUTO, 0, TOPOML_E_PARSE,
                   "line 1 holds 3 values and line 2 holds 1");
    expect_refused("x,y\n1,2\n", TOPOML_FORMAT_AUTO, 0, TOPOML_E_PARSE,
                   "m.txt:1: 'x' is not a number");
    expect_refused("x,y\n1,2\n", TOPOML_FORMAT_AUTO, 0, TOPOML_E_PARSE, "(point-cloud)");
    topoml_context *ctx = ctx_new(NULL);
    topoml_data *d = NULL;
    ck_assert_int_eq(read_mem(ctx, &d, "\x01\x02\x00\x03\n", 5, "m.bin", TOPOML_FORMAT_AUTO, 0),
                     TOPOML_E_PARSE);
    ck_assert_ptr_nonnull(
        strstr(topoml_errmsg(ctx), "m.bin:1: NUL byte in column 3: binary data and no DIPHA"));
    topoml_context_free(ctx);
    /* What the chosen parser finds is said with the layout and why. */
    expect_refused("0 1 2\n1 0 3\n", TOPOML_FORMAT_AUTO, 0, TOPOML_E_PARSE,
                   "(read as distance, the layout detected: lines 1 and 2 hold 3 values each");
    expect_refused("", TOPOML_FORMAT_AUTO, 0, TOPOML_E_PARSE, "empty input");
}
END_TEST

/* ---- names, comments, headers ---- */

START_TEST(test_format_names_take_ripser_prefixes_and_auto)
{
    static const struct {
        const char *name;
        topoml_format format;
    } names[] = {{"lower", TOPOML_FORMAT_LOWER_DISTANCE},
                 {"lower-distance-matrix", TOPOML_FORMAT_LOWER_DISTANCE},
                 {"upper", TOPOML_FORMAT_UPPER_DISTANCE},
                 {"dist", TOPOML_FORMAT_DISTANCE},
                 {"distance", TOPOML_FORMAT_DISTANCE},
                 {"point", TOPOML_FORMAT_POINT_CLOUD},
                 {"point-cloud", TOPOML_FORMAT_POINT_CLOUD},
                 {"auto", TOPOML_FORMAT_AUTO},
                 {"dipha", TOPOML_FORMAT_DIPHA}};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        topoml_format f = (topoml_format)99;
        ck_assert_int_eq(topoml_format_from_name(names[k].name, &f), TOPOML_OK);
        ck_assert_int_eq(f, names[k].format);
    }
    /* dipha, sparse and binary are matched whole, as Ripser does. */
    static const char *refused[] = {"dip", "sparse-matrix", "bin", "lowe",
                                    "dis", "poin",          "",    "DISTANCE"};
    for (size_t k = 0; k < sizeof refused / sizeof refused[0]; k++) {
        topoml_format f;
        ck_assert_msg(topoml_format_from_name(refused[k], &f) == TOPOML_E_INVALID, "'%s'",
                      refused[k]);
    }
    ck_assert_str_eq(topoml_format_name(TOPOML_FORMAT_AUTO), "auto");
}
END_TEST

START_TEST(test_comments_are_skipped_in_every_text_format)
{
    static const struct {
        const char *text;
        topoml_format format;
        uint64_t n;
    } cases[] = {
        {"# points\n0 0 # origin\n1 0\n#\n0 1,# last\n", TOPOML_FORMAT_POINT_CLOUD, 3},
        {"# lower\n\n1 # d(1,0)\n2 3\n", TOPOML_FORMAT_LOWER_DISTANCE, 3},
        {"1 2 # row 0\n3\n", TOPOML_FORMAT_UPPER_DISTANCE, 3},
        {"0 1 2\n# between\n1 0 3 #\n2 3 0\n", TOPOML_FORMAT_DISTANCE, 3},
        {"# edges\n0 1 1 # first\n1 2 3\n", TOPOML_FORMAT_SPARSE, 3},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        topoml_context *ctx = ctx_new(NULL);
        topoml_data *d;
        ck_assert_msg(read_str(ctx, &d, cases[k].text, cases[k].format) == TOPOML_OK, "%s: %s",
                      cases[k].text, topoml_errmsg(ctx));
        ck_assert_uint_eq(topoml_data_count(d), cases[k].n);
        topoml_data_free(ctx, d);
        topoml_context_free(ctx);
    }
    /* A '#' inside a value is not a comment. */
    expect_refused("0 1#2\n", TOPOML_FORMAT_POINT_CLOUD, 0, TOPOML_E_PARSE,
                   "'1#2' is not a number");
}
END_TEST

START_TEST(test_point_cloud_skips_one_header_line)
{
    log_record log;
    topoml_context *ctx = ctx_new(&log);
    topoml_data *d;
    ck_assert_int_eq(read_str(ctx, &d, "\n\"x\",\"y\"\n1,2\n3,4.5\n", TOPOML_FORMAT_POINT_CLOUD),
                     TOPOML_OK);
    ck_assert_uint_eq(topoml_data_count(d), 2);
    ck_assert_uint_eq(topoml_data_dim(d), 2);
    ck_assert_double_eq(d->values[3], 4.5);
    ck_assert_ptr_nonnull(strstr(log.text, "m.txt:2: a header line, skipped"));
    topoml_data_free(ctx, d);
    topoml_context_free(ctx);
    /* Only before the first point, and only when nothing on it is a number. */
    expect_refused("x,y\n1,2\nx,y\n", TOPOML_FORMAT_POINT_CLOUD, 0, TOPOML_E_PARSE, "m.txt:3: 'x'");
    expect_refused("x,y\nx,y\n1,2\n", TOPOML_FORMAT_POINT_CLOUD, 0, TOPOML_E_PARSE, "m.txt:2: 'x'");
    expect_refused("x,2\n1,2\n", TOPOML_FORMAT_POINT_CLOUD, 0, TOPOML_E_PARSE, "m.txt:1: 'x'");
}
END_TEST

/* ---- full matrices that are not symmetric ---- */

START_TEST(test_asymmetric_matrix_reads_lower_triangle_with_one_warning)
{
    /* Three pairs differ; the largest difference is at d(2,1). */
    const char *text = "0 1.000001 2\n1 0 3\n2.5 3.000001 0\n";
    log_record log;
    topoml_context *ctx = ctx_new(&log);
    topoml_data *d;
    ck_assert_int_eq(read_str(ctx, &d, text, TOPOML_FORMAT_DISTANCE), TOPOML_OK);
    ck_assert_double_eq(d->values[0], 1);   /* d(1,0), lower */
    ck_assert_double_eq(d->values[1], 2.5); /* d(2,0), lower */
    ck_assert_double_eq(d->values[2], 3.000001);
    ck_assert_int_eq(log.warnings, 1);
    ck_assert_msg(strstr(log.text, "m.txt: the matrix is not symmetric (3 pairs differ; the "
                                   "largest difference is 0.5, at d(2,0) = 2.5 but d(0,2) = 2)"),
                  "%s", log.text);
    topoml_data_free(ctx, d);
    topoml_context_free(ctx);

    expect_refused(text, TOPOML_FORMAT_DISTANCE, TOPOML_READ_STRICT_SYMMETRY, TOPOML_E_INVALID,
                   "m.txt:2: the matrix is not symmetric: d(1,0) = 1 but d(0,1) = 1.000001");
}
END_TEST

START_TEST(test_nonzero_diagonal_is_ignored_with_one_warning)
{
    log_record log;
    topoml_context *ctx = ctx_new(&log);
    topoml_data *d;
    ck_assert_int_eq(read_str(ctx, &d, "1 1 2\n1 0 3\n2 3 7\n", TOPOML_FORMAT_DISTANCE), TOPOML_OK);
    ck_assert_mem_eq(d->values, three, sizeof three);
    ck_assert_int_eq(log.warnings, 1);
    ck_assert_msg(strstr(log.text, "2 diagonal entries are not 0 (the first: d(0,0) = 1)"), "%s",
                  log.text);
    topoml_data_free(ctx, d);
    topoml_context_free(ctx);
    expect_refused("1 1\n1 0\n", TOPOML_FORMAT_DISTANCE, TOPOML_READ_STRICT_SYMMETRY,
                   TOPOML_E_INVALID, "diagonal entry d(0,0) is 1, not 0");
}
END_TEST

START_TEST(test_full_matrix_with_empty_upper_triangle_reads_as_lower)
{
    static const char *texts[] = {"0\n1 0\n2 3 0\n", "\n1\n2 3\n"};
    for (int k = 0; k < 2; k++) {
        log_record log;
        topoml_context *ctx = ctx_new(&log);
        topoml_data *d;
        ck_assert_int_eq(read_str(ctx, &d, texts[k], TOPOML_FORMAT_DISTANCE), TOPOML_OK);
        ck_assert_uint_eq(topoml_data_count(d), 3);
        ck_assert_mem_eq(d->values, three, sizeof three);
        ck_assert_int_eq(log.warnings, 1);
        ck_assert_ptr_nonnull(strstr(log.text, "the upper triangle is empty"));
        topoml_data_free(ctx, d);
        topoml_context_free(ctx);
        expect_refused(texts[k], TOPOML_FORMAT_DISTANCE, TOPOML_READ_STRICT_SYMMETRY,
                       TOPOML_E_INVALID, "the upper triangle of the matrix is empty");
    }
    /* A single row is no triangle: the square reader says what is wrong. */
    expect_refused("0 1 2\n", TOPOML_FORMAT_DISTANCE, 0, TOPOML_E_PARSE,
                   "m.txt:1: the first row has 3 values");
}
END_TEST

START_TEST(test_symmetric_matrix_reads_without_warning)
{
    log_record log;
    topoml_context *ctx = ctx_new(&log);
    topoml_data *d;
    ck_assert_int_eq(
        topoml_data_read(ctx, &d, example("projective_plane.csv"), TOPOML_FORMAT_DISTANCE),
        TOPOML_OK);
    ck_assert_int_eq(log.warnings, 0);
    topoml_data_free(ctx, d);
    ck_assert_int_eq(topoml_set_read_flags(ctx, 0x80), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_set_read_flags(NULL, 0), TOPOML_E_INVALID);
    topoml_context_free(ctx);
}
END_TEST

/* ---- NumPy .npy point clouds ---- */

/* A version 1.0 .npy file of `header` and `data` into buf; its length. */
static size_t npy(unsigned char *buf, const char *header, const void *data, size_t size)
{
    size_t len = strlen(header), pad = (64 - (10 + len + 1) % 64) % 64, h = len + pad + 1;
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (unsigned char)(h & 0xff);
    buf[9] = (unsigned char)(h >> 8);
    memcpy(buf + 10, header, len);
    memset(buf + 10 + len, ' ', pad);
    buf[10 + h - 1] = '\n';
    memcpy(buf + 10 + h, data, size);
    return 10 + h + size;
}

START_TEST(test_npy_points_in_c_and_fortran_order_from_file_and_pipe)
{
    /* Three points in R^2: (0,1), (2,3), (4,5). */
    const float fortran[] = {0, 2, 4, 1, 3, 5};
    const double c_order[] = {0, 1, 2, 3, 4, 5};
    static unsigned char buf[512];
    const struct {
        const char *header;
        const void *data;
        size_t size;
    } files[] = {
        {"{'descr': '<f4', 'fortran_order': True, 'shape': (3, 2), }", fortran, sizeof fortran},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (3, 2), }", c_order, sizeof c_order},
    };
    for (size_t k = 0; k < 2; k++)
        for (int pipe_it = 0; pipe_it < 2; pipe_it++)
            for (int named = 0; named < 2; named++) {
                size_t len = npy(buf, files[k].header, files[k].data, files[k].size);
                topoml_context *ctx = ctx_new(NULL);
                topoml_data *d;
                ck_assert_msg(read_mem(ctx, &d, buf, len, "p.npy",
                                       named ? TOPOML_FORMAT_NPY : TOPOML_FORMAT_AUTO,
                                       pipe_it) == TOPOML_OK,
                              "%s", topoml_errmsg(ctx));
                ck_assert_int_eq(topoml_data_format(d), TOPOML_FORMAT_NPY);
                ck_assert_uint_eq(topoml_data_count(d), 3);
                ck_assert_uint_eq(topoml_data_dim(d), 2);
                ck_assert_mem_eq(d->values, c_order, sizeof c_order);
                topoml_data_free(ctx, d);
                topoml_context_free(ctx);
            }
    /* Refusals name the byte and the reason. */
    const double two[] = {0, 1, 2, 3};
    size_t len =
        npy(buf, "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 2), }", two, sizeof two);
    topoml_context *ctx = ctx_new(NULL);
    topoml_data *d = (topoml_data *)1;
    for (int pipe_it = 0; pipe_it < 2; pipe_it++) {
        ck_assert_int_eq(read_mem(ctx, &d, buf, len, "p.npy", TOPOML_FORMAT_NPY, pipe_it),
                         TOPOML_E_PARSE);
        ck_assert_ptr_null(d);
        ck_assert_msg(
            strstr(topoml_errmsg(ctx), pipe_it ? "p.npy: byte 160: the input ends after 4 of 6"
                                               : "p.npy: byte 128: the header says 3 x 2 values"),
            "%s", topoml_errmsg(ctx));
    }
    len = npy(buf, "{'descr': '<c16', 'fortran_order': False, 'shape': (2, 1), }", two, 32);
    ck_assert_int_eq(read_mem(ctx, &d, buf, len, "c.npy", TOPOML_FORMAT_NPY, 0), TOPOML_E_PARSE);
    ck_assert_ptr_nonnull(strstr(topoml_errmsg(ctx), "dtype '<c16'"));
    ck_assert_int_eq(read_mem(ctx, &d, "0 1\n1 0\n", 8, "t.txt", TOPOML_FORMAT_NPY, 0),
                     TOPOML_E_PARSE);
    ck_assert_ptr_nonnull(strstr(topoml_errmsg(ctx), "not a .npy file"));
    topoml_context_free(ctx);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("ripser_input");
    TCase *t = tcase_create("detect");
    tcase_add_test(t, test_detect_square_matrix_as_distance);
    tcase_add_test(t, test_detect_lower_triangle_with_and_without_diagonal);
    tcase_add_test(t, test_detect_upper_triangle_with_and_without_diagonal);
    tcase_add_test(t, test_detect_skips_comments_before_the_rows);
    tcase_add_test(t, test_detect_dipha_by_magic_from_file_and_pipe);
    tcase_add_test(t, test_detect_reads_ripser_examples_as_named);
    tcase_add_test(t, test_detect_refuses_what_fits_no_layout_saying_what_was_seen);
    suite_add_tcase(s, t);
    t = tcase_create("text");
    tcase_add_test(t, test_format_names_take_ripser_prefixes_and_auto);
    tcase_add_test(t, test_comments_are_skipped_in_every_text_format);
    tcase_add_test(t, test_point_cloud_skips_one_header_line);
    tcase_add_test(t, test_npy_points_in_c_and_fortran_order_from_file_and_pipe);
    suite_add_tcase(s, t);
    t = tcase_create("symmetry");
    tcase_add_test(t, test_asymmetric_matrix_reads_lower_triangle_with_one_warning);
    tcase_add_test(t, test_nonzero_diagonal_is_ignored_with_one_warning);
    tcase_add_test(t, test_full_matrix_with_empty_upper_triangle_reads_as_lower);
    tcase_add_test(t, test_symmetric_matrix_reads_without_warning);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return topoml_check_run(suite());
}
