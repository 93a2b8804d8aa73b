/*
 * test_io.c — Check tests of the input parsers (core/src/io/io*.c) and of the
 * topoml_data object (core/src/api/data.c): Ripser's example files read with
 * the right shape, the same matrix read identically from every format, each
 * kind of bad input refused with its status and a message naming the file
 * and line (or byte), and the memory limit enforced before allocating.
 *
 * Inputs: tests/data/bad/ (TOPOML_TEST_DATA) and Ripser's examples
 * (TOPOML_SHARED_DATA); both paths come from tests/CMakeLists.txt.
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

/* An allocator that counts, so tests can see what a read allocated. The
 * context itself holds some memory; ctx_new takes that as the baseline, so
 * `live` and `peak` count only what was allocated after it. */
typedef struct counting {
    int64_t live, peak; /* signed: the context frees what it held before */
    size_t largest, calls;
    size_t fail_at; /* > 0: that call (counting from the baseline) fails */
} counting;

static void *c_alloc(void *user, size_t size)
{
    counting *c = user;
    if (c->fail_at && ++c->calls == c->fail_at)
        return NULL;
    size_t *p = malloc(size + 16);
    if (!p)
        return NULL;
    p[0] = size;
    c->live += (int64_t)size;
    if (c->live > c->peak)
        c->peak = c->live;
    if (size > c->largest)
        c->largest = size;
    return (char *)p + 16;
}

static void *c_realloc(void *user, void *ptr, size_t size)
{
    counting *c = user;
    if (!ptr)
        return c_alloc(user, size);
    if (c->fail_at && ++c->calls == c->fail_at)
        return NULL;
    size_t *base = (size_t *)(void *)((char *)ptr - 16);
    size_t old = base[0];
    size_t *p = realloc(base, size + 16);
    if (!p)
        return NULL;
    p[0] = size;
    c->live = c->live - (int64_t)old + (int64_t)size;
    if (c->live > c->peak)
        c->peak = c->live;
    if (size > c->largest)
        c->largest = size;
    return (char *)p + 16;
}

static void c_free(void *user, void *ptr)
{
    counting *c = user;
    if (!ptr)
        return;
    size_t *base = (size_t *)(void *)((char *)ptr - 16);
    c->live -= (int64_t)base[0];
    free(base);
}

static counting counted;
static topoml_allocator counting_allocator = {c_alloc, c_realloc, c_free, &counted};

static topoml_context *ctx_new(void)
{
    topoml_context_options o = {.struct_size = sizeof o,
                                .flags = TOPOML_CTX_NO_ENV | TOPOML_CTX_NO_PLUGINS,
                                .allocator = &counting_allocator};
    topoml_context *ctx = NULL;
    ck_assert_int_eq(topoml_context_new(&ctx, &o), TOPOML_OK);
    counted.live = counted.peak = 0;
    counted.largest = counted.calls = counted.fail_at = 0;
    return ctx;
}

static void ctx_free(topoml_context *ctx)
{
    topoml_context_free(ctx);
}

static const char *bad(const char *file)
{
    static char path[1024];
    snprintf(path, sizeof path, "%s/bad/%s", TOPOML_TEST_DATA, file);
    return path;
}

static const char *example(const char *file)
{
    static char path[1024];
    snprintf(path, sizeof path, "%s/%s", TOPOML_SHARED_DATA, file);
    return path;
}

/* Read `file` from tests/data/bad and expect `status`, with the file name,
 * the location and `fragment` in the message. */
static void expect_bad_flags(const char *file, topoml_format format, uint32_t flags, int status,
                             const char *where, const char *fragment)
{
    topoml_context *ctx = ctx_new();
    ck_assert_int_eq(topoml_set_read_flags(ctx, flags), TOPOML_OK);
    topoml_data *d = (topoml_data *)1;
    int st = topoml_data_read(ctx, &d, bad(file), format);
    const char *msg = topoml_errmsg(ctx);
    ck_assert_msg(st == status, "%s: status %d, expected %d (%s)", file, st, status, msg);
    ck_assert_ptr_null(d);
    ck_assert_msg(strstr(msg, file), "message lacks the file name: %s", msg);
    ck_assert_msg(strstr(msg, where), "message lacks '%s': %s", where, msg);
    ck_assert_msg(strstr(msg, fragment), "message lacks '%s': %s", fragment, msg);
    ck_assert_int_eq(counted.live, 0);
    ctx_free(ctx);
}

static void expect_bad(const char *file, topoml_format format, int status, const char *where,
                       const char *fragment)
{
    expect_bad_flags(file, format, 0, status, where, fragment);
}

/* Asymmetry and a non-zero diagonal are refused only when asked to be. */
static void expect_bad_strict(const char *file, topoml_format format, int status,
                              const char *where, const char *fragment)
{
    expect_bad_flags(file, format, TOPOML_READ_STRICT_SYMMETRY, status, where, fragment);
}

/* A stream holding `len` bytes of `text`: a temporary regular file, or a
 * pipe (no size, no seeking) when `pipe_it`; at most 64 KiB for a pipe. */
static FILE *stream_of(const void *text, size_t len, int pipe_it)
{
    if (!pipe_it) {
        FILE *f = tmpfile();
        ck_assert_ptr_nonnull(f);
        ck_assert_uint_eq(fwrite(text, 1, len, f), len);
        rewind(f);
        return f;
    }
    int fd[2];
    ck_assert_int_eq(pipe(fd), 0);
    ck_assert_uint_le(len, 65536);
    ck_assert_int_eq(write(fd[1], text, len), (ssize_t)len);
    close(fd[1]);
    FILE *f = fdopen(fd[0], "rb");
    ck_assert_ptr_nonnull(f);
    return f;
}

static int read_mem(topoml_context *ctx, topoml_data **d, const void *text, size_t len,
                    const char *name, topoml_format format, int pipe_it)
{
    FILE *f = stream_of(text, len, pipe_it);
    int st = topoml_data_read_stream(ctx, d, f, name, format);
    fclose(f);
    return st;
}

static int read_str(topoml_context *ctx, topoml_data **d, const char *text, const char *name,
                    topoml_format format)
{
    return read_mem(ctx, d, text, strlen(text), name, format, 0);
}

/* The data set's arrays, for comparisons (opaque in the public API). */
static const struct topoml_data *view(const topoml_data *d)
{
    return d;
}

static void expect_condensed(const topoml_data *d, uint64_t n, const double *want)
{
    ck_assert_uint_eq(topoml_data_kind(d), TOPOML_INPUT_CONDENSED);
    ck_assert_uint_eq(topoml_data_count(d), n);
    for (uint64_t k = 0; k < n * (n - 1) / 2; k++)
        ck_assert_double_eq(view(d)->values[k], want[k]);
}

/* ---- formats ---- */

START_TEST(test_io_format_names_round_trip)
{
    static const char *names[] = {"lower-distance", "upper-distance", "distance", "point-cloud",
                                  "dipha",          "sparse",         "binary"};
    for (int k = 0; k < 7; k++) {
        topoml_format f;
        ck_assert_int_eq(topoml_format_from_name(names[k], &f), TOPOML_OK);
        ck_assert_str_eq(topoml_format_name(f), names[k]);
    }
    topoml_format f;
    /* Ripser's prefixes are its names too; anything shorter is not. */
    ck_assert_int_eq(topoml_format_from_name("lower_distance", &f), TOPOML_OK);
    ck_assert_int_eq(f, TOPOML_FORMAT_LOWER_DISTANCE);
    ck_assert_int_eq(topoml_format_from_name("low", &f), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_format_from_name("Lower", &f), TOPOML_E_INVALID);
    ck_assert_int_eq(topoml_format_from_name(NULL, &f), TOPOML_E_INVALID);
    ck_assert_ptr_null(topoml_format_name((topoml_format)99));
}
END_TEST

/* ---- Ripser's examples ---- */

static void expect_shape(const char *file, topoml_format format, uint32_t kind, uint64_t n,
                         uint64_t dim)
{
    topoml_context *ctx = ctx_new();
    topoml_data *d;
    int st = topoml_data_read(ctx, &d, example(file), format);
    ck_assert_msg(st == TOPOML_OK, "%s: %s", file, topoml_errmsg(ctx));
    ck_assert_uint_eq(topoml_data_kind(d), kind);
    ck_assert_uint_eq(topoml_data_count(d), n);
    ck_assert_uint_eq(topoml_data_dim(d), dim);
    topoml_data_free(ctx, d);
    ck_assert_int_eq(counted.live, 0);
    ctx_free(ctx);
}

START_TEST(test_io_reads_ripser_point_clouds)
{
    expect_shape("o3_1024.txt", TOPOML_FORMAT_POINT_CLOUD, TOPOML_INPUT_POINTS, 1024, 9);
    expect_shape("o3_2048.txt", TOPOML_FORMAT_POINT_CLOUD, TOPOML_INPUT_POINTS, 2048, 9);
    expect_shape("o3_4096.txt", TOPOML_FORMAT_POINT_CLOUD, TOPOML_INPUT_POINTS, 4096, 9);
}
END_TEST

START_TEST(test_io_reads_ripser_lower_distance_matrices)
{
    /* random16 has no empty first line and ends its rows in commas;
     * the others start with Ripser's empty row 0. */
    expect_shape("projective_plane.lower_distance_matrix", TOPOML_FORMAT_LOWER_DISTANCE,
                 TOPOML_INPUT_CONDENSED, 13, 0);
    expect_shape("random16.lower_distance_matrix", TOPOML_FORMAT_LOWER_DISTANCE,
                 TOPOML_INPUT_CONDENSED, 16, 0);
    expect_shape("random20.lower_distance_matrix", TOPOML_FORMAT_LOWER_DISTANCE,
                 TOPOML_INPUT_CONDENSED, 20, 0);
    expect_shape("sphere_3_192.lower_distance_matrix", TOPOML_FORMAT_LOWER_DISTANCE,
                 TOPOML_INPUT_CONDENSED, 192, 0);
}
END_TEST

START_TEST(test_io_reads_projective_plane_identically_in_three_formats)
{
    topoml_context *ctx = ctx_new();
    topoml_data *lower, *full, *dipha;
    ck_assert_int_eq(topoml_data_read(ctx, &lower,
                                      example("projective_plane.lower_distance_matrix"),
                                      TOPOML_FORMAT_LOWER_DISTANCE),
                     TOPOML_OK);
    ck_assert_int_eq(
        topoml_data_read(ctx, &full, example("projective_plane.csv"), TOPOML_FORMAT_DISTANCE),
        TOPOML_OK);
    ck_assert_int_eq(
        topoml_data_read(ctx, &dipha, example("projective_plane.dipha"), TOPOML_FORMAT_DIPHA),
        TOPOML_OK);
    expect_condensed(full, 13, view(lower)->values);
    expect_condensed(dipha, 13, view(lower)->values);
    ck_assert_double_eq(view(lower)->values[0], 1);  /* d(1,0) */
    ck_assert_double_eq(view(lower)->values[77], 1); /* d(12,11) */
    topoml_data_free(ctx, lower);
    topoml_data_free(ctx, full);
    topoml_data_free(ctx, dipha);
    ctx_free(ctx);
}
END_TEST

START_TEST(test_io_reads_point_cloud_from_a_pipe)
{
    topoml_context *ctx = ctx_new();
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "cat '%s'", example("o3_4096.txt"));
    FILE *f = popen(cmd, "r");
    ck_assert_ptr_nonnull(f);
    topoml_data *d;
    int st = topoml_data_read_stream(ctx, &d, f, "<stdin>", TOPOML_FORMAT_POINT_CLOUD);
    pclose(f);
    ck_assert_msg(st == TOPOML_OK, "%s", topoml_errmsg(ctx));
    ck_assert_uint_eq(topoml_data_count(d), 4096);
    ck_assert_uint_eq(topoml_data_dim(d), 9);
    ck_assert_double_eq(view(d)->values[0], 0.5590688801286003);
    topoml_data_free(ctx, d);
    ctx_free(ctx);
}
END_TEST

/* ---- round trips ---- */

/* The same n x n matrix written in each format. Values are floats, so the
 * float32 binary format holds them exactly too. */
#define RT_N 9
static double rt_d(int i, int j)
{
    if (i == j)
        return 0;
    int a = i < j ? i : j, b = i < j ? j : i;
    return (double)(float)(0.1 * (a + 1) + 1.37 * (b - a) + 0.001 * a * b);
}

static char *rt_text(topoml_format format, int n, size_t *len)
{
    char *buf;
    FILE *f = open_memstream(&buf, len);
    for (int i = 0; i < n; i++) {
        int from = format == TOPOML_FORMAT_UPPER_DISTANCE ? i + 1 : 0;
        int to = format == TOPOML_FORMAT_LOWER_DISTANCE ? i : n;
        for (int j = from; j < to; j++)
            fprintf(f, "%s%.17g", j == from ? "" : ",", rt_d(i, j));
        fputc('\n', f);
    }
    fclose(f);
    return buf;
}

static void put_le64(unsigned char *p, uint64_t v)
{
    for (int k = 0; k < 8; k++)
        p[k] = (unsigned char)(v >> (8 * k));
}

START_TEST(test_io_round_trips_give_identical_condensed_values)
{
    topoml_context *ctx = ctx_new();
    double want[RT_N * (RT_N - 1) / 2];
    for (int i = 1, k = 0; i < RT_N; i++)
        for (int j = 0; j < i; j++)
            want[k++] = rt_d(i, j);

    static const topoml_format text[] = {TOPOML_FORMAT_LOWER_DISTANCE, TOPOML_FORMAT_UPPER_DISTANCE,
                                         TOPOML_FORMAT_DISTANCE};
    for (int t = 0; t < 3; t++)
        for (int p = 0; p < 2; p++) {
            size_t len;
            char *s = rt_text(text[t], RT_N, &len);
            topoml_data *d;
            int st = read_mem(ctx, &d, s, len, "rt", text[t], p);
            free(s);
            ck_assert_msg(st == TOPOML_OK, "%s: %s", topoml_format_name(text[t]),
                          topoml_errmsg(ctx));
            expect_condensed(d, RT_N, want);
            topoml_data_free(ctx, d);
        }

    unsigned char dipha[24 + 8 * RT_N * RT_N];
    put_le64(dipha, 8067171840u);
    put_le64(dipha + 8, 7);
    put_le64(dipha + 16, RT_N);
    for (int i = 0; i < RT_N; i++)
        for (int j = 0; j < RT_N; j++) {
            double x = rt_d(i, j);
            uint64_t bits;
            memcpy(&bits, &x, 8);
            put_le64(dipha + 24 + 8 * (i * RT_N + j), bits);
        }
    float binary[RT_N * (RT_N - 1) / 2];
    for (int k = 0; k < RT_N * (RT_N - 1) / 2; k++)
        binary[k] = (float)want[k];
    for (int p = 0; p < 2; p++) {
        topoml_data *d;
        ck_assert_int_eq(read_mem(ctx, &d, dipha, sizeof dipha, "rt", TOPOML_FORMAT_DIPHA, p),
                         TOPOML_OK);
        expect_condensed(d, RT_N, want);
        topoml_data_free(ctx, d);
        ck_assert_int_eq(read_mem(ctx, &d, binary, sizeof binary, "rt", TOPOML_FORMAT_BINARY, p),
                         TOPOML_OK);
        expect_condensed(d, RT_N, want);
        topoml_data_free(ctx, d);
    }
    ck_assert_int_eq(counted.live, 0);
    ctx_free(ctx);
}
END_TEST

/* ---- accepted variations ---- */

START_TEST(test_io_accepts_commas_spaces_crlf_and_trailing_commas)
{
    topoml_context *ctx = ctx_new();
    topoml_data *d;
    ck_assert_int_eq(
        read_str(ctx, &d, "1, 2 ,3\t4,\r\n\r\n5 6,7,8\n", "sep.csv", TOPOML_FORMAT_POINT_CLOUD),
        TOPOML_OK);
    ck_assert_uint_eq(topoml_data_count(d), 2);
    ck_assert_uint_eq(topoml_data_dim(d), 4);
    ck_assert_double_eq(view(d)->values[7], 8);
    topoml_data_free(ctx, d);
    /* No final newline; exponents, signs and a leading dot. */
    ck_assert_int_eq(read_str(ctx, &d, "+1e0 -.5 2.5E-1", "last", TOPOML_FORMAT_POINT_CLOUD),
                     TOPOML_OK);
    ck_assert_double_eq(view(d)->values[1], -0.5);
    ck_assert_double_eq(view(d)->values[2], 0.25);
    topoml_data_free(ctx, d);
    ctx_free(ctx);
}
END_TEST

START_TEST(test_io_reads_lower_triangle_on_one_line_or_wrapped)
{
    topoml_context *ctx = ctx_new();
    topoml_data *d;
    ck_assert_int_eq(read_str(ctx, &d, "1 2 3 4 5 6\n", "one-line", TOPOML_FORMAT_LOWER_DISTANCE),
                     TOPOML_OK);
    static const double want[] = {1, 2, 3, 4, 5, 6};
    expect_condensed(d, 4, want);
    topoml_data_free(ctx, d);
    /* Wrapped at two values a line: as many lines as rows, but not rows. */
    ck_assert_int_eq(read_str(ctx, &d, "1 2\n3 4\n5 6\n", "wrapped", TOPOML_FORMAT_LOWER_DISTANCE),
                     TOPOML_OK);
    expect_condensed(d, 4, want);
    topoml_data_free(ctx, d);
    ctx_free(ctx);
}
END_TEST

START_TEST(test_io_accepts_lower_triangle_with_zero_diagonal)
{
    topoml_context *ctx = ctx_new();
    topoml_data *d;
    ck_assert_int_eq(read_str(ctx, &d, "0\n1 0\n2 3 0\n", "diag", TOPOML_FORMAT_LOWER_DISTANCE),
                     TOPOML_OK);
    static const double want[] = {1, 2, 3};
    expect_condensed(d, 3, want);
    topoml_data_free(ctx, d);
    /* Ripser's layout (empty row 0) is never read as having a diagonal. */
    ck_assert_int_eq(read_str(ctx, &d, "\n0\n2 0\n", "ripser", TOPOML_FORMAT_LOWER_DISTANCE),
                     TOPOML_OK);
    static const double ripser[] = {0, 2, 0};
    expect_condensed(d, 3, ripser);
    topoml_data_free(ctx, d);
    ctx_free(ctx);
}
END_TEST

START_TEST(test_io_accepts_upper_triangle_with_zero_diagonal)
{
    topoml_context *ctx = ctx_new();
    topoml_data *d;
    ck_assert_int_eq(read_str(ctx, &d, "0 1 2\n0 3\n0\n", "diag", TOPOML_FORMAT_UPPER_DISTANCE),
                     TOPOML_OK);
    static const double want[] = {1, 2, 3};
    expect_condensed(d, 3, want);
    topoml_data_free(ctx, d);
    ck_assert_int_eq(read_str(ctx, &d, "1 2 3\n4 5\n6\n", "upper", TOPOML_FORMAT_UPPER_DISTANCE),
                     TOPOML_OK);
    /* d(0,1)=1 d(0,2)=2 d(0,3)=3 d(1,2)=4 d(1,3)=5 d(2,3)=6 */
    static const double upper[] = {1, 2, 4, 3, 5, 6};
    expect_condensed(d, 4, upper);
    topoml_data_free(ctx, d);
    ctx_free(ctx);
}
END_TEST

START_TEST(test_io_reads_blank_lower_distance_as_one_point)
{
    topoml_context *ctx = ctx_new();
    topoml_data *d;
    ck_assert_int_eq(
        topoml_data_read(ctx, &d, bad("blank_lines.txt"), TOPOML_FORMAT_LOWER_DISTANCE), TOPOML_OK);
    ck_assert_uint_eq(topoml_data_count(d), 1);
    topoml_data_free(ctx, d);
    ctx_free(ctx);
}
END_TEST

START_TEST(test_io_strict_symmetry_accepts_tiny_relative_asymmetry_keeping_lower_value)
{
    topoml_context *ctx = ctx_new();
    topoml_data *d;
    ck_assert_int_eq(read_str(ctx, &d, "0 1.0000000000001\n1 0\n", "tiny", TOPOML_FORMAT_DISTANCE),
                     TOPOML_OK);
    ck_assert_double_eq(view(d)->values[0], 1);
    topoml_data_free(ctx, d);
    topoml_set_read_flags(ctx, TOPOML_READ_STRICT_SYMMETRY);
    ck_assert_int_eq(read_str(ctx, &d, "0 1.00000000001\n1 0\n", "big", TOPOML_FORMAT_DISTANCE),
                     TOPOML_E_INVALID);
    ck_assert_ptr_nonnull(strstr(topoml_errmsg(ctx), "big:2: "));
    ck_assert_ptr_nonnull(strstr(topoml_errmsg(ctx), "d(1,0) = 1 but d(0,1) = 1.00000000001"));
    ctx_free(ctx);
}
END_TEST

START_TEST(test_io_sparse_stores_i_below_j_and_merges_equal_duplicates)
{
    topoml_context *ctx = ctx_new();
    topoml_data *d;
    ck_assert_int_eq(
        read_str(ctx, &d, "0 1 0.5\n2 1 1\n1 0 0.5\n3 3 0\n", "s", TOPOML_FORMAT_SPARSE),
        TOPOML_OK);
    ck_assert_uint_eq(topoml_data_kind(d), TOPOML_INPUT_SPARSE);
    ck_assert_uint_eq(topoml_data_count(d), 3); /* "3 3 0" is skipped, as Ripser does */
    ck_assert_uint_eq(view(d)->n_edges, 2);
    ck_assert_uint_eq(view(d)->edges[0].i, 0);
    ck_assert_uint_eq(view(d)->edges[0].j, 1);
    ck_assert_double_eq(view(d)->edges[0].d, 0.5);
    ck_assert_uint_eq(view(d)->edges[1].i, 1);
    ck_assert_uint_eq(view(d)->edges[1].j, 2);
    ck_assert_double_eq(view(d)->edges[1].d, 1);
    topoml_data_free(ctx, d);
    ck_assert_int_eq(counted.live, 0);
    ctx_free(ctx);
}
END_TEST

/* ---- bad inputs: text ---- */

START_TEST(test_io_rejects_empty_input)
{
    expect_bad("empty.txt", TOPOML_FORMAT_POINT_CLOUD, TOPOML_E_PARSE,
               "empty.txt:1: ", "empty input");
    expect_bad("empty.txt", TOPOML_FORMAT_LOWER_DISTANCE, TOPOML_E_PARSE,
               "empty.txt:1: ", "empty input");
    expect_bad("empty.txt", TOPOML_FORMAT_UPPER_DISTANCE, TOPOML_E_PARSE,
               "empty.txt:1: ", "empty input");
    expect_bad("empty.txt", TOPOML_FORMAT_DISTANCE, TOPOML_E_PARSE, "empty.txt:1: ", "empty input");
    expect_bad("empty.txt", TOPOML_FORMAT_SPARSE, TOPOML_E_PARSE, "empty.txt:1: ", "empty input");
    expect_bad("empty.txt", TOPOML_FORMAT_DIPHA, TOPOML_E_PARSE,
               "empty.txt: byte 0: ", "empty input");
    expect_bad("empty.txt", TOPOML_FORMAT_BINARY, TOPOML_E_PARSE,
               "empty.txt: byte 0: ", "empty input");
}
END_TEST

START_TEST(test_io_rejects_point_cloud_of_blank_lines)
{
    expect_bad("blank_lines.txt", TOPOML_FORMAT_POINT_CLOUD, TOPOML_E_PARSE,
               "blank_lines.txt:3: ", "no points");
}
END_TEST

START_TEST(test_io_rejects_nan_with_line)
{
    expect_bad("nan_point_cloud.txt", TOPOML_FORMAT_POINT_CLOUD, TOPOML_E_INVALID,
               "nan_point_cloud.txt:3: ", "value 2 of the line is NaN ('nan')");
}
END_TEST

START_TEST(test_io_rejects_inf_with_line)
{
    expect_bad("inf_point_cloud.txt", TOPOML_FORMAT_POINT_CLOUD, TOPOML_E_INVALID,
               "inf_point_cloud.txt:2: ", "value 1 of the line is Inf ('-inf')");
}
END_TEST

START_TEST(test_io_rejects_value_too_large_for_double_as_inf)
{
    expect_bad("huge_point_cloud.txt", TOPOML_FORMAT_POINT_CLOUD, TOPOML_E_INVALID,
               "huge_point_cloud.txt:2: ", "'1e999') is too large for a double (Inf)");
}
END_TEST

START_TEST(test_io_rejects_unparseable_token_quoting_it)
{
    expect_bad("token_point_cloud.txt", TOPOML_FORMAT_POINT_CLOUD, TOPOML_E_PARSE,
               "token_point_cloud.txt:2: ", "'1.5abc' is not a number");
}
END_TEST

START_TEST(test_io_rejects_hex_float)
{
    expect_bad("hex_point_cloud.txt", TOPOML_FORMAT_POINT_CLOUD, TOPOML_E_PARSE,
               "hex_point_cloud.txt:2: ", "'0x1p3' is a hexadecimal number");
}
END_TEST

START_TEST(test_io_rejects_empty_value_between_commas)
{
    expect_bad("double_comma_point_cloud.txt", TOPOML_FORMAT_POINT_CLOUD, TOPOML_E_PARSE,
               "double_comma_point_cloud.txt:2: ", "empty value between two commas (column 3)");
    expect_bad("leading_comma_point_cloud.txt", TOPOML_FORMAT_POINT_CLOUD, TOPOML_E_PARSE,
               "leading_comma_point_cloud.txt:2: ", "empty value before the comma in column 1");
}
END_TEST

START_TEST(test_io_rejects_nul_byte_in_text)
{
    expect_bad("nul_point_cloud.txt", TOPOML_FORMAT_POINT_CLOUD, TOPOML_E_PARSE,
               "nul_point_cloud.txt:3: ", "NUL byte in column 2");
}
END_TEST

START_TEST(test_io_rejects_ragged_point_cloud_row)
{
    expect_bad("ragged_point_cloud.txt", TOPOML_FORMAT_POINT_CLOUD, TOPOML_E_PARSE,
               "ragged_point_cloud.txt:4: ", "2 coordinates, expected 3 as on line 1");
}
END_TEST

START_TEST(test_io_rejects_negative_distance)
{
    expect_bad("negative_lower.txt", TOPOML_FORMAT_LOWER_DISTANCE, TOPOML_E_INVALID,
               "negative_lower.txt:3: ", "negative distance '-3' (value 2 of the line)");
}
END_TEST

START_TEST(test_io_rejects_non_triangular_count_naming_nearest_n)
{
    expect_bad("count_lower.txt", TOPOML_FORMAT_LOWER_DISTANCE, TOPOML_E_PARSE,
               "count_lower.txt:4: ",
               "5 values, which is not n(n-1)/2 for any n; the nearest are n = 3 (3 values) and "
               "n = 4 (6 values); line 4 is the first that does not fit");
    expect_bad("count_upper.txt", TOPOML_FORMAT_UPPER_DISTANCE, TOPOML_E_PARSE,
               "count_upper.txt:2: ", "4 values, which is not n(n-1)/2");
}
END_TEST

START_TEST(test_io_rejects_ragged_lower_triangle_row)
{
    expect_bad("ragged_lower.txt", TOPOML_FORMAT_LOWER_DISTANCE, TOPOML_E_PARSE,
               "ragged_lower.txt:3: ", "4 values, expected 3 (row 3 of the lower triangle");
}
END_TEST

START_TEST(test_io_rejects_full_matrix_read_as_lower_with_hint)
{
    expect_bad("full_as_lower.txt", TOPOML_FORMAT_LOWER_DISTANCE, TOPOML_E_PARSE,
               "full_as_lower.txt:3: ", "look like a full matrix (format distance)");
}
END_TEST

START_TEST(test_io_strict_symmetry_rejects_nonzero_diagonal)
{
    expect_bad_strict("diagonal_distance.txt", TOPOML_FORMAT_DISTANCE, TOPOML_E_INVALID,
               "diagonal_distance.txt:2: ", "diagonal entry d(1,1) is 0.5, not 0");
}
END_TEST

START_TEST(test_io_strict_symmetry_rejects_asymmetric_matrix_naming_entry)
{
    expect_bad_strict("asymmetric_distance.txt", TOPOML_FORMAT_DISTANCE, TOPOML_E_INVALID,
               "asymmetric_distance.txt:3: ", "d(2,1) = 3.5 but d(1,2) = 3");
}
END_TEST

START_TEST(test_io_rejects_ragged_full_matrix_row)
{
    expect_bad("ragged_distance.txt", TOPOML_FORMAT_DISTANCE, TOPOML_E_PARSE,
               "ragged_distance.txt:3: ", "2 values, expected 3 as on line 1");
}
END_TEST

START_TEST(test_io_rejects_full_matrix_with_missing_rows)
{
    expect_bad("short_distance.txt", TOPOML_FORMAT_DISTANCE, TOPOML_E_PARSE,
               "short_distance.txt:2: ", "the matrix ends after 2 rows");
}
END_TEST

START_TEST(test_io_rejects_full_matrix_with_extra_rows)
{
    expect_bad("long_distance.txt", TOPOML_FORMAT_DISTANCE, TOPOML_E_PARSE,
               "long_distance.txt:3: ", "one row too many");
}
END_TEST

START_TEST(test_io_rejects_first_row_longer_than_file_can_hold)
{
    /* 1000 values promise 10^6 entries; the file is far shorter. */
    char text[4000];
    size_t k = 0;
    for (int j = 0; j < 1000; j++)
        k += (size_t)snprintf(text + k, sizeof text - k, "%s1", j ? " " : "");
    text[k++] = '\n';
    topoml_context *ctx = ctx_new();
    topoml_data *d;
    ck_assert_int_eq(read_mem(ctx, &d, text, k, "wide", TOPOML_FORMAT_DISTANCE, 0), TOPOML_E_PARSE);
    ck_assert_ptr_nonnull(strstr(topoml_errmsg(ctx), "wide:1: the first row has 1000 values"));
    ck_assert_uint_lt(counted.largest, 100000);
    ctx_free(ctx);
}
END_TEST

START_TEST(test_io_rejects_sparse_line_without_three_values)
{
    expect_bad("sparse_count.txt", TOPOML_FORMAT_SPARSE, TOPOML_E_PARSE,
               "sparse_count.txt:2: ", "2 values, expected 3");
}
END_TEST

START_TEST(test_io_rejects_sparse_bad_vertex_index)
{
    expect_bad("sparse_negative_index.txt", TOPOML_FORMAT_SPARSE, TOPOML_E_INVALID,
               "sparse_negative_index.txt:2: ", "negative vertex index '-1'");
    expect_bad("sparse_bad_index.txt", TOPOML_FORMAT_SPARSE, TOPOML_E_PARSE,
               "sparse_bad_index.txt:2: ", "'1.5' is not a vertex index");
    expect_bad("sparse_index_overflow.txt", TOPOML_FORMAT_SPARSE, TOPOML_E_OVERFLOW,
               "sparse_index_overflow.txt:1: ", "vertex index 4294967295 is larger than");
}
END_TEST

START_TEST(test_io_rejects_sparse_duplicate_with_other_value_naming_both_lines)
{
    expect_bad("sparse_conflict.txt", TOPOML_FORMAT_SPARSE, TOPOML_E_INVALID,
               "sparse_conflict.txt:3: ", "d(0,1) = 0.75 here but 0.5 on line 1");
}
END_TEST

START_TEST(test_io_rejects_sparse_nonzero_self_distance)
{
    expect_bad("sparse_self.txt", TOPOML_FORMAT_SPARSE, TOPOML_E_INVALID,
               "sparse_self.txt:2: ", "d(2,2) = 0.25");
}
END_TEST

/* ---- bad inputs: binary ---- */

START_TEST(test_io_rejects_dipha_bad_magic)
{
    expect_bad("dipha_magic.bin", TOPOML_FORMAT_DIPHA, TOPOML_E_PARSE,
               "dipha_magic.bin: byte 0: ", "magic number 8067171841");
}
END_TEST

START_TEST(test_io_rejects_dipha_wrong_file_type)
{
    expect_bad("dipha_type.bin", TOPOML_FORMAT_DIPHA, TOPOML_E_PARSE,
               "dipha_type.bin: byte 8: ", "DIPHA file type 1");
}
END_TEST

START_TEST(test_io_rejects_dipha_negative_n)
{
    expect_bad("dipha_negative_n.bin", TOPOML_FORMAT_DIPHA, TOPOML_E_PARSE,
               "dipha_negative_n.bin: byte 16: ", "n = -3, which is negative");
}
END_TEST

START_TEST(test_io_rejects_dipha_short_header)
{
    expect_bad("dipha_short_header.bin", TOPOML_FORMAT_DIPHA, TOPOML_E_PARSE,
               "dipha_short_header.bin: byte 16: ", "ends inside the 24-byte DIPHA header");
}
END_TEST

START_TEST(test_io_rejects_dipha_header_that_lies_about_size)
{
    expect_bad("dipha_size_lie.bin", TOPOML_FORMAT_DIPHA, TOPOML_E_PARSE,
               "dipha_size_lie.bin: byte 16: ",
               "n = 4, so the file has 24 + 8n^2 = 152 bytes, but it has 96");
    expect_bad("dipha_trailing.bin", TOPOML_FORMAT_DIPHA, TOPOML_E_PARSE,
               "dipha_trailing.bin: byte 16: ", "but it has 100");
}
END_TEST

START_TEST(test_io_rejects_dipha_size_overflow)
{
    expect_bad("dipha_overflow.bin", TOPOML_FORMAT_DIPHA, TOPOML_E_OVERFLOW,
               "dipha_overflow.bin: byte 16: ", "does not fit in 64 bits");
}
END_TEST

START_TEST(test_io_rejects_dipha_nan_and_strictly_asymmetric_or_nonzero_diagonal)
{
    expect_bad_strict("dipha_asymmetric.bin", TOPOML_FORMAT_DIPHA, TOPOML_E_INVALID,
               "dipha_asymmetric.bin: byte 80: ", "d(2,1) = 3.25 but d(1,2) = 3");
    expect_bad_strict("dipha_diagonal.bin", TOPOML_FORMAT_DIPHA, TOPOML_E_INVALID,
               "dipha_diagonal.bin: byte 88: ", "diagonal entry d(2,2) is 0.001");
    expect_bad("dipha_nan.bin", TOPOML_FORMAT_DIPHA, TOPOML_E_INVALID,
               "dipha_nan.bin: byte 64: ", "d(1,2) is NaN");
}
END_TEST

/* Read a file of tests/data/bad through a pipe, so that its size is not
 * known in advance; only its first `keep` bytes when keep > 0. */
static void expect_bad_stream(const char *file, size_t keep, topoml_format format, int status,
                              const char *where, const char *fragment)
{
    FILE *src = fopen(bad(file), "rb");
    ck_assert_ptr_nonnull(src);
    unsigned char buf[4096];
    size_t len = fread(buf, 1, sizeof buf, src);
    fclose(src);
    if (keep && keep < len)
        len = keep;
    topoml_context *ctx = ctx_new();
    topoml_data *d;
    ck_assert_int_eq(read_mem(ctx, &d, buf, len, "<stdin>", format, 1), status);
    const char *msg = topoml_errmsg(ctx);
    ck_assert_msg(strstr(msg, where), "message lacks '%s': %s", where, msg);
    ck_assert_msg(strstr(msg, fragment), "message lacks '%s': %s", fragment, msg);
    ck_assert_int_eq(counted.live, 0);
    ctx_free(ctx);
}

START_TEST(test_io_rejects_dipha_stream_shorter_or_longer_than_header_says)
{
    expect_bad_stream("dipha_trailing.bin", 72, TOPOML_FORMAT_DIPHA, TOPOML_E_PARSE,
                      "<stdin>: byte 72: ",
                      "the input ends after 72 bytes; the header says n = 3, so it has 24 + 8n^2 "
                      "= 96");
    expect_bad_stream("dipha_trailing.bin", 0, TOPOML_FORMAT_DIPHA, TOPOML_E_PARSE,
                      "<stdin>: byte 96: ", "trailing data after the 3x3 matrix");
}
END_TEST

START_TEST(test_io_rejects_binary_size_not_multiple_of_four)
{
    expect_bad("binary_odd_size.bin", TOPOML_FORMAT_BINARY, TOPOML_E_PARSE,
               "binary_odd_size.bin: byte 12: ", "15 bytes, not a multiple of 4");
    expect_bad_stream("binary_odd_size.bin", 0, TOPOML_FORMAT_BINARY, TOPOML_E_PARSE,
                      "<stdin>: byte 12: ", "15 bytes, not a multiple of 4");
}
END_TEST

START_TEST(test_io_rejects_binary_non_triangular_count)
{
    expect_bad("binary_count.bin", TOPOML_FORMAT_BINARY, TOPOML_E_PARSE,
               "binary_count.bin: byte 8: ",
               "2 values, which is not n(n-1)/2 for any n; the nearest are n = 2 (1 value)");
    expect_bad_stream("binary_count.bin", 0, TOPOML_FORMAT_BINARY, TOPOML_E_PARSE,
                      "<stdin>: byte 8: ", "2 values, which is not n(n-1)/2");
}
END_TEST

START_TEST(test_io_rejects_binary_nan_and_negative_naming_entry)
{
    expect_bad("binary_nan.bin", TOPOML_FORMAT_BINARY, TOPOML_E_INVALID,
               "binary_nan.bin: byte 4: ", "d(2,0) is NaN");
    expect_bad("binary_negative.bin", TOPOML_FORMAT_BINARY, TOPOML_E_INVALID,
               "binary_negative.bin: byte 16: ", "d(3,1) is -5, a negative distance");
}
END_TEST

START_TEST(test_io_reports_missing_file)
{
    topoml_context *ctx = ctx_new();
    topoml_data *d;
    ck_assert_int_eq(topoml_data_read(ctx, &d, bad("no-such-file.txt"), TOPOML_FORMAT_DISTANCE),
                     TOPOML_E_NOT_FOUND);
    ck_assert_ptr_nonnull(strstr(topoml_errmsg(ctx), "no-such-file.txt: "));
    ctx_free(ctx);
}
END_TEST

/* ---- the memory limit ---- */

START_TEST(test_io_refuses_point_cloud_over_memory_limit_before_allocating)
{
    topoml_context *ctx = ctx_new();
    topoml_set_max_memory(ctx, 100000); /* the values alone are 294912 bytes */
    topoml_data *d;
    int st = topoml_data_read(ctx, &d, example("o3_4096.txt"), TOPOML_FORMAT_POINT_CLOUD);
    ck_assert_int_eq(st, TOPOML_E_LIMIT);
    ck_assert_ptr_nonnull(strstr(topoml_errmsg(ctx), "o3_4096.txt:"));
    ck_assert_int_le(counted.peak, 100000 + 256); /* + the data-set object */
    ck_assert_int_eq(counted.live, 0);
    topoml_set_max_memory(ctx, 1000000);
    ck_assert_int_eq(topoml_data_read(ctx, &d, example("o3_4096.txt"), TOPOML_FORMAT_POINT_CLOUD),
                     TOPOML_OK);
    topoml_data_free(ctx, d);
    ctx_free(ctx);
}
END_TEST

START_TEST(test_io_refuses_dipha_over_memory_limit_before_allocating)
{
    topoml_context *ctx = ctx_new();
    topoml_set_max_memory(ctx, 500); /* 13 points: 78 doubles = 624 bytes */
    topoml_data *d;
    int st = topoml_data_read(ctx, &d, example("projective_plane.dipha"), TOPOML_FORMAT_DIPHA);
    ck_assert_int_eq(st, TOPOML_E_LIMIT);
    ck_assert_ptr_nonnull(strstr(topoml_errmsg(ctx), "projective_plane.dipha: byte 16: "));
    ck_assert_uint_le(counted.largest, 256);
    ck_assert_int_eq(counted.live, 0);
    ctx_free(ctx);
}
END_TEST

START_TEST(test_io_refuses_binary_and_full_matrix_over_memory_limit_before_allocating)
{
    enum { N = 100, COUNT = N * (N - 1) / 2 };
    static float values[COUNT];
    for (int k = 0; k < COUNT; k++)
        values[k] = 1.0f + (float)k;
    for (int p = 0; p < 2; p++) {
        topoml_context *ctx = ctx_new();
        topoml_set_max_memory(ctx, 20000); /* 4950 doubles = 39600 bytes */
        topoml_data *d;
        ck_assert_int_eq(
            read_mem(ctx, &d, values, sizeof values, "big.bin", TOPOML_FORMAT_BINARY, p),
            TOPOML_E_LIMIT);
        ck_assert_ptr_nonnull(strstr(topoml_errmsg(ctx), "big.bin: byte "));
        ck_assert_int_le(counted.peak, 20000 + 256);
        ck_assert_int_eq(counted.live, 0);
        ctx_free(ctx);
    }

    topoml_context *ctx = ctx_new();
    size_t len;
    char *text = rt_text(TOPOML_FORMAT_DISTANCE, 60, &len);
    topoml_set_max_memory(ctx, 10000); /* 1770 doubles = 14160 bytes */
    topoml_data *d;
    ck_assert_int_eq(read_mem(ctx, &d, text, len, "full", TOPOML_FORMAT_DISTANCE, 0),
                     TOPOML_E_LIMIT);
    free(text);
    ck_assert_ptr_nonnull(strstr(topoml_errmsg(ctx), "full:1: "));
    ck_assert_ptr_nonnull(strstr(topoml_errmsg(ctx), "the distance matrix"));
    ck_assert_int_le(counted.peak, 10000);
    ctx_free(ctx);
}
END_TEST

/* ---- robustness ---- */

/* One small valid input per format. */
static const struct {
    topoml_format format;
    const char *text;
} every_format[] = {
    {TOPOML_FORMAT_POINT_CLOUD, "0,0\n1,0\n0,1\n"},
    {TOPOML_FORMAT_LOWER_DISTANCE, "\n1\n2,3\n"},
    {TOPOML_FORMAT_UPPER_DISTANCE, "1 2\n3\n"},
    {TOPOML_FORMAT_DISTANCE, "0 1 2\n1 0 3\n2 3 0\n"},
    {TOPOML_FORMAT_SPARSE, "0 1 1\n2 1 3\n"},
};

START_TEST(test_io_survives_every_allocation_failure)
{
    unsigned char dipha[24 + 8 * 4] = {0};
    put_le64(dipha, 8067171840u);
    put_le64(dipha + 8, 7);
    put_le64(dipha + 16, 2);
    double one = 1;
    uint64_t bits;
    memcpy(&bits, &one, 8);
    put_le64(dipha + 24 + 8, bits);
    put_le64(dipha + 24 + 16, bits);
    float binary[] = {1, 2, 3};

    for (int k = 0; k < 7; k++) {
        topoml_format format = k < 5    ? every_format[k].format
                               : k == 5 ? TOPOML_FORMAT_DIPHA
                                        : TOPOML_FORMAT_BINARY;
        const void *bytes = k < 5    ? (const void *)every_format[k].text
                            : k == 5 ? (const void *)dipha
                                     : (const void *)binary;
        size_t len = k < 5 ? strlen(every_format[k].text) : k == 5 ? sizeof dipha : sizeof binary;
        for (size_t fail = 1;; fail++) {
            topoml_context *ctx = ctx_new();
            counted.fail_at = fail;
            topoml_data *d = NULL;
            int st = read_mem(ctx, &d, bytes, len, "alloc", format, (int)(fail % 2));
            size_t calls = counted.calls;
            if (st == TOPOML_OK)
                topoml_data_free(ctx, d);
            else
                ck_assert_msg(st == TOPOML_E_NOMEM && *topoml_errmsg(ctx),
                              "%s, failing call %zu: %d %s", topoml_format_name(format), fail, st,
                              topoml_errmsg(ctx));
            ck_assert_int_eq(counted.live, 0);
            counted.fail_at = 0;
            ctx_free(ctx);
            if (calls < fail)
                break; /* no call failed: every one has been tried */
        }
    }
}
END_TEST

START_TEST(test_io_random_bytes_never_crash_or_leak)
{
    static const topoml_format formats[] = {
        TOPOML_FORMAT_LOWER_DISTANCE, TOPOML_FORMAT_UPPER_DISTANCE, TOPOML_FORMAT_DISTANCE,
        TOPOML_FORMAT_POINT_CLOUD,    TOPOML_FORMAT_DIPHA,          TOPOML_FORMAT_SPARSE,
        TOPOML_FORMAT_BINARY};
    /* Bytes drawn mostly from what the formats are made of, so that the
     * parsers get past their first checks. */
    static const char alphabet[] = "0123456789 ,.-+eE\n\n\r\tnaifx";
    unsigned state = 12345;
    topoml_context *ctx = ctx_new();
    topoml_set_max_memory(ctx, 1 << 20);
    for (int round = 0; round < 1400; round++) {
        unsigned char buf[256];
        size_t len = 0;
        state = state * 1103515245u + 12345u;
        size_t want = (state >> 16) % sizeof buf;
        for (; len < want; len++) {
            state = state * 1103515245u + 12345u;
            unsigned r = state >> 16;
            buf[len] = round % 3 == 0 ? (unsigned char)r
                                      : (unsigned char)alphabet[r % (sizeof alphabet - 1)];
        }
        topoml_format format = formats[round % 7];
        if (format == TOPOML_FORMAT_DIPHA && len >= 24 && round % 2) {
            /* A valid header over random bytes. */
            put_le64(buf, 8067171840u);
            put_le64(buf + 8, 7);
            put_le64(buf + 16, (state >> 8) % 6);
        }
        topoml_data *d = NULL;
        int st = read_mem(ctx, &d, buf, len, "random", format, round % 2);
        if (st == TOPOML_OK) {
            topoml_data_free(ctx, d);
        } else {
            ck_assert_msg(st == TOPOML_E_PARSE || st == TOPOML_E_INVALID ||
                              st == TOPOML_E_OVERFLOW || st == TOPOML_E_LIMIT,
                          "round %d: status %d: %s", round, st, topoml_errmsg(ctx));
            ck_assert_ptr_nonnull(strstr(topoml_errmsg(ctx), "random"));
        }
        ck_assert_int_eq(counted.live, 0);
    }
    ctx_free(ctx);
}
END_TEST

/* ---- data sets from memory ---- */

START_TEST(test_data_from_points_copies_and_rejects_nan)
{
    topoml_context *ctx = ctx_new();
    double pts[] = {0, 1, 2, 3, 4, 5};
    topoml_data *d;
    ck_assert_int_eq(topoml_data_from_points(ctx, &d, 3, 2, pts), TOPOML_OK);
    pts[0] = 9;
    ck_assert_uint_eq(topoml_data_kind(d), TOPOML_INPUT_POINTS);
    ck_assert_uint_eq(topoml_data_count(d), 3);
    ck_assert_uint_eq(topoml_data_dim(d), 2);
    ck_assert_double_eq(view(d)->values[0], 0);
    topoml_data_free(ctx, d);
    pts[3] = NAN;
    ck_assert_int_eq(topoml_data_from_points(ctx, &d, 3, 2, pts), TOPOML_E_INVALID);
    ck_assert_ptr_null(d);
    ck_assert_ptr_nonnull(strstr(topoml_errmsg(ctx), "coordinate 1 of point 1 is NaN"));
    ck_assert_int_eq(topoml_data_from_points(ctx, &d, UINT64_MAX, 2, pts), TOPOML_E_OVERFLOW);
    ck_assert_int_eq(counted.live, 0);
    ctx_free(ctx);
}
END_TEST

/* No points is an error like an empty file, from every constructor, with
 * or without data behind the pointer and whatever the other sizes. */
START_TEST(test_data_constructors_refuse_no_points)
{
    topoml_context *ctx = ctx_new();
    double pts[] = {0, 1, 2, 3};
    float pts32[] = {0, 1, 2, 3};
    topoml_edge e[] = {{1.0, 0, 1}};
    for (int with_data = 0; with_data < 2; with_data++)
        for (uint64_t dim = 0; dim < 3; dim++) {
            const double *p = with_data ? pts : NULL;
            int st[6];
            topoml_data *d[6] = {(topoml_data *)1, (topoml_data *)1, (topoml_data *)1,
                                 (topoml_data *)1, (topoml_data *)1, (topoml_data *)1};
            st[0] = topoml_data_from_points(ctx, &d[0], 0, dim, p);
            st[1] = topoml_data_from_condensed(ctx, &d[1], 0, p);
            st[2] = topoml_data_from_edges(ctx, &d[2], 0, with_data ? dim : 0,
                                           with_data ? e : NULL);
            st[3] = topoml_data_from_points_strided(ctx, &d[3], 0, dim, TOPOML_F64, p,
                                                    dim * sizeof(double), sizeof(double));
            st[4] = topoml_data_from_points_strided(ctx, &d[4], 0, dim, TOPOML_F32,
                                                    with_data ? (const void *)pts32 : NULL,
                                                    sizeof(float), sizeof(float));
            st[5] = topoml_data_from_condensed(ctx, &d[5], 0, NULL);
            for (int k = 0; k < 6; k++) {
                ck_assert_msg(st[k] == TOPOML_E_INVALID, "constructor %d, dim %llu: %d", k,
                              (unsigned long long)dim, st[k]);
                ck_assert_ptr_null(d[k]);
            }
            ck_assert_ptr_nonnull(strstr(topoml_errmsg(ctx), "no points"));
        }
    /* One point is a data set. */
    topoml_data *d;
    ck_assert_int_eq(topoml_data_from_points(ctx, &d, 1, 2, pts), TOPOML_OK);
    ck_assert_uint_eq(topoml_data_count(d), 1);
    topoml_data_free(ctx, d);
    ck_assert_int_eq(topoml_data_from_condensed(ctx, &d, 1, NULL), TOPOML_OK);
    topoml_data_free(ctx, d);
    ck_assert_int_eq(counted.live, 0);
    ctx_free(ctx);
}
END_TEST

START_TEST(test_data_from_condensed_rejects_negative_naming_pair)
{
    topoml_context *ctx = ctx_new();
    double c[] = {1, 2, 3, 4, -5, 6};
    topoml_data *d;
    ck_assert_int_eq(topoml_data_from_condensed(ctx, &d, 4, c), TOPOML_E_INVALID);
    ck_assert_ptr_nonnull(strstr(topoml_errmsg(ctx), "d(3,1) is negative"));
    c[4] = 5;
    ck_assert_int_eq(topoml_data_from_condensed(ctx, &d, 4, c), TOPOML_OK);
    expect_condensed(d, 4, c);
    topoml_data_free(ctx, d);
    ck_assert_int_eq(topoml_data_from_condensed(ctx, &d, UINT64_MAX, c), TOPOML_E_OVERFLOW);
    topoml_set_max_memory(ctx, 16);
    ck_assert_int_eq(topoml_data_from_condensed(ctx, &d, 4, c), TOPOML_E_LIMIT);
    ck_assert_int_eq(counted.live, 0);
    ctx_free(ctx);
}
END_TEST

START_TEST(test_data_from_edges_normalizes_and_rejects_conflicts)
{
    topoml_context *ctx = ctx_new();
    topoml_edge e[] = {{2.0, 3, 1}, {1.0, 0, 1}, {2.0, 1, 3}};
    topoml_data *d;
    ck_assert_int_eq(topoml_data_from_edges(ctx, &d, 5, 3, e), TOPOML_OK);
    ck_assert_uint_eq(topoml_data_kind(d), TOPOML_INPUT_SPARSE);
    ck_assert_uint_eq(topoml_data_count(d), 5);
    ck_assert_uint_eq(view(d)->n_edges, 2);
    ck_assert_uint_eq(view(d)->edges[1].i, 1);
    ck_assert_uint_eq(view(d)->edges[1].j, 3);
    topoml_data_free(ctx, d);
    e[2].d = 2.5;
    ck_assert_int_eq(topoml_data_from_edges(ctx, &d, 5, 3, e), TOPOML_E_INVALID);
    ck_assert_ptr_nonnull(strstr(topoml_errmsg(ctx), "edges 0 and 2 both join 1 and 3"));
    ck_assert_int_eq(topoml_data_from_edges(ctx, &d, 3, 3, e), TOPOML_E_INVALID);
    ck_assert_ptr_nonnull(strstr(topoml_errmsg(ctx), "edge 0 joins 3 and 1, but there are 3"));
    e[0].j = 3;
    ck_assert_int_eq(topoml_data_from_edges(ctx, &d, 5, 3, e), TOPOML_E_INVALID);
    ck_assert_ptr_nonnull(strstr(topoml_errmsg(ctx), "edge 0 joins 3 to itself"));
    ck_assert_int_eq(counted.live, 0);
    ctx_free(ctx);
}
END_TEST

START_TEST(test_data_accessors_accept_null)
{
    ck_assert_uint_eq(topoml_data_count(NULL), 0);
    ck_assert_uint_eq(topoml_data_dim(NULL), 0);
    ck_assert_uint_eq(topoml_data_kind(NULL), UINT32_MAX);
    topoml_data_free(NULL, NULL);
}
END_TEST

static Suite *io_suite(void)
{
    Suite *s = suite_create("io");
    TCase *good = tcase_create("good");
    tcase_set_timeout(good, 60);
    tcase_add_test(good, test_io_format_names_round_trip);
    tcase_add_test(good, test_io_reads_ripser_point_clouds);
    tcase_add_test(good, test_io_reads_ripser_lower_distance_matrices);
    tcase_add_test(good, test_io_reads_projective_plane_identically_in_three_formats);
    tcase_add_test(good, test_io_reads_point_cloud_from_a_pipe);
    tcase_add_test(good, test_io_round_trips_give_identical_condensed_values);
    tcase_add_test(good, test_io_accepts_commas_spaces_crlf_and_trailing_commas);
    tcase_add_test(good, test_io_reads_lower_triangle_on_one_line_or_wrapped);
    tcase_add_test(good, test_io_accepts_lower_triangle_with_zero_diagonal);
    tcase_add_test(good, test_io_accepts_upper_triangle_with_zero_diagonal);
    tcase_add_test(good, test_io_reads_blank_lower_distance_as_one_point);
    tcase_add_test(good, test_io_strict_symmetry_accepts_tiny_relative_asymmetry_keeping_lower_value);
    tcase_add_test(good, test_io_sparse_stores_i_below_j_and_merges_equal_duplicates);
    suite_add_tcase(s, good);

    TCase *text = tcase_create("bad_text");
    tcase_add_test(text, test_io_rejects_empty_input);
    tcase_add_test(text, test_io_rejects_point_cloud_of_blank_lines);
    tcase_add_test(text, test_io_rejects_nan_with_line);
    tcase_add_test(text, test_io_rejects_inf_with_line);
    tcase_add_test(text, test_io_rejects_value_too_large_for_double_as_inf);
    tcase_add_test(text, test_io_rejects_unparseable_token_quoting_it);
    tcase_add_test(text, test_io_rejects_hex_float);
    tcase_add_test(text, test_io_rejects_empty_value_between_commas);
    tcase_add_test(text, test_io_rejects_nul_byte_in_text);
    tcase_add_test(text, test_io_rejects_ragged_point_cloud_row);
    tcase_add_test(text, test_io_rejects_negative_distance);
    tcase_add_test(text, test_io_rejects_non_triangular_count_naming_nearest_n);
    tcase_add_test(text, test_io_rejects_ragged_lower_triangle_row);
    tcase_add_test(text, test_io_rejects_full_matrix_read_as_lower_with_hint);
    tcase_add_test(text, test_io_strict_symmetry_rejects_nonzero_diagonal);
    tcase_add_test(text, test_io_strict_symmetry_rejects_asymmetric_matrix_naming_entry);
    tcase_add_test(text, test_io_rejects_ragged_full_matrix_row);
    tcase_add_test(text, test_io_rejects_full_matrix_with_missing_rows);
    tcase_add_test(text, test_io_rejects_full_matrix_with_extra_rows);
    tcase_add_test(text, test_io_rejects_first_row_longer_than_file_can_hold);
    tcase_add_test(text, test_io_rejects_sparse_line_without_three_values);
    tcase_add_test(text, test_io_rejects_sparse_bad_vertex_index);
    tcase_add_test(text, test_io_rejects_sparse_duplicate_with_other_value_naming_both_lines);
    tcase_add_test(text, test_io_rejects_sparse_nonzero_self_distance);
    tcase_add_test(text, test_io_reports_missing_file);
    suite_add_tcase(s, text);

    TCase *bin = tcase_create("bad_binary");
    tcase_add_test(bin, test_io_rejects_dipha_bad_magic);
    tcase_add_test(bin, test_io_rejects_dipha_wrong_file_type);
    tcase_add_test(bin, test_io_rejects_dipha_negative_n);
    tcase_add_test(bin, test_io_rejects_dipha_short_header);
    tcase_add_test(bin, test_io_rejects_dipha_header_that_lies_about_size);
    tcase_add_test(bin, test_io_rejects_dipha_size_overflow);
    tcase_add_test(bin, test_io_rejects_dipha_nan_and_strictly_asymmetric_or_nonzero_diagonal);
    tcase_add_test(bin, test_io_rejects_dipha_stream_shorter_or_longer_than_header_says);
    tcase_add_test(bin, test_io_rejects_binary_size_not_multiple_of_four);
    tcase_add_test(bin, test_io_rejects_binary_non_triangular_count);
    tcase_add_test(bin, test_io_rejects_binary_nan_and_negative_naming_entry);
    suite_add_tcase(s, bin);

    TCase *mem = tcase_create("memory");
    tcase_set_timeout(mem, 60);
    tcase_add_test(mem, test_io_refuses_point_cloud_over_memory_limit_before_allocating);
    tcase_add_test(mem, test_io_refuses_dipha_over_memory_limit_before_allocating);
    tcase_add_test(mem, test_io_refuses_binary_and_full_matrix_over_memory_limit_before_allocating);
    suite_add_tcase(s, mem);

    TCase *robust = tcase_create("robustness");
    tcase_set_timeout(robust, 120);
    tcase_add_test(robust, test_io_survives_every_allocation_failure);
    tcase_add_test(robust, test_io_random_bytes_never_crash_or_leak);
    suite_add_tcase(s, robust);

    TCase *data = tcase_create("data");
    tcase_add_test(data, test_data_from_points_copies_and_rejects_nan);
    tcase_add_test(data, test_data_from_condensed_rejects_negative_naming_pair);
    tcase_add_test(data, test_data_constructors_refuse_no_points);
    tcase_add_test(data, test_data_from_edges_normalizes_and_rejects_conflicts);
    tcase_add_test(data, test_data_accessors_accept_null);
    suite_add_tcase(s, data);
    return s;
}

int main(void)
{
    return topoml_check_run(io_suite());
}
