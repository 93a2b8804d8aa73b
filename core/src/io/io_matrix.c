/*
 * io_matrix.c — distance matrices as text: lower-distance, upper-distance
 * (a triangle without its diagonal) and distance (the full square matrix),
 * as Ripser reads them. All three become a CONDENSED data set in Ripser's
 * order d(1,0), d(2,0), d(2,1), d(3,0), ...
 *
 * Ripser reads a triangle as one stream of numbers, whatever the lines; so
 * do we, and n follows from the count. The lines are looked at only to say
 * more when something is wrong (which row is ragged) and to recognise a
 * triangle written with its zero diagonal (docs/formats.md, "Diagonal").
 */
#include <inttypes.h>
#include <string.h>

#include "io/io.h"

/* What the lines of a triangle looked like, for messages and the diagonal. */
typedef struct shape {
    uint64_t rows;                                 /* non-blank lines */
    uint64_t first_count;                          /* values on the first of them */
    bool all_first_count;                          /* every line had first_count values */
    bool diagonal_zero;                            /* every line's diagonal place held 0 */
    bool blank_first;                              /* the input starts with a blank line */
    uint64_t bad_line, bad_got, bad_want, bad_row; /* first line off the pattern */
    uint64_t fitting;                              /* lines that hold their row's count */
    uint64_t last_line;
} shape;

/* Remove the diagonal from values read with it: row k of the lines holds
 * k+1 values, diagonal last (lower); or m-k values, diagonal first (upper).
 * Every destination is at or before its source, so one forward pass works. */
static uint64_t drop_diagonal(double *v, uint64_t m, bool upper)
{
    uint64_t src = 0, dst = 0;
    for (uint64_t k = 0; k < m; k++) {
        uint64_t len = upper ? m - k : k + 1;
        memmove(v + dst, v + src + (upper ? 1 : 0), (len - 1) * sizeof *v);
        src += len;
        dst += len - 1;
    }
    return dst;
}

/* Upper-triangle order d(0,1), d(0,2), ..., d(1,2), ... into Ripser's
 * lower order. Needs a second array: the permutation has no simple cycles. */
static int upper_to_lower(tm_reader *r, tm_vec *v, uint64_t n, double **cond)
{
    uint64_t count = v->len;
    double *up = (double *)(void *)v->p;
    double *low;
    int st = tm_reader_alloc(r, count * sizeof(double), "the reordered matrix", (void **)&low);
    if (st)
        return st;
    uint64_t k = 0;
    for (uint64_t i = 0; i < n; i++)
        for (uint64_t j = i + 1; j < n; j++)
            low[tm_condensed_index(j, i)] = up[k++];
    tm_vec_free(r, v);
    *cond = low;
    return TOPOML_OK;
}

static int read_triangle(tm_reader *r, struct topoml_data *out, bool upper)
{
    const char *which = upper ? "upper" : "lower";
    tm_vec v = {.elem = sizeof(double)};
    shape s = {.all_first_count = true, .diagonal_zero = true};
    char *line;
    size_t len;
    int st;

    while ((st = tm_text_line(r, &line, &len)) == 1) {
        tm_cursor c;
        double x;
        uint64_t start = v.len;
        tm_cursor_init(&c, line, len);
        while ((st = tm_next_value(r, &c, TM_DISTANCE, &x)) == 1)
            if ((st = tm_vec_push_double(r, &v, x)) != TOPOML_OK)
                goto fail;
        if (st < 0)
            goto fail;
        uint64_t k = c.count;
        if (k == 0) {
            if (r->line == 1 && !c.comment)
                s.blank_first = true;
            continue;
        }
        if (s.rows == 0)
            s.first_count = k;
        /* Ripser's rows: line k holds row k+1 of a lower triangle (k+1
         * values), or row k of an upper one (first_count - k values). */
        uint64_t want = upper ? (s.first_count > s.rows ? s.first_count - s.rows : 0) : s.rows + 1;
        if (k == want)
            s.fitting++;
        else if (s.bad_line == 0) {
            s.bad_line = r->line;
            s.bad_got = k;
            s.bad_want = want;
            s.bad_row = upper ? s.rows : s.rows + 1;
        }
        if (k != s.first_count)
            s.all_first_count = false;
        const double *row = (const double *)(void *)v.p + start;
        if ((upper ? row[0] : row[k - 1]) != 0)
            s.diagonal_zero = false;
        s.rows++;
        s.last_line = r->line;
    }
    if (st < 0)
        goto fail;
    if (r->bytes == 0) {
        st = tm_fail(r, TOPOML_E_PARSE, "empty input");
        goto fail;
    }
    if (s.last_line)
        r->line = s.last_line;

    uint64_t n;
    if (s.bad_line == 0 && s.rows >= 2 && s.diagonal_zero &&
        (upper ? s.rows == s.first_count : !s.blank_first)) {
        /* Rows of 1, 2, ..., m values each ending in 0 (upper: m, ..., 1,
         * each starting with 0): the triangle with its zero diagonal. Read
         * Ripser's way it would say d(i,i-1) = 0 for every i, i.e. (under
         * the triangle inequality) that all points coincide; then both
         * readings have the same barcode. A lower triangle that starts
         * with a blank line is Ripser's layout (row 0 empty), never this.
         * docs/formats.md has the rule. */
        n = s.rows;
        v.len = drop_diagonal((double *)(void *)v.p, n, upper);
        r->read_diagonal = true;
    } else if (!tm_triangular_n(v.len, &n)) {
        char reason[256], hint[256] = "";
        tm_count_reason(reason, sizeof reason, v.len);
        if (s.all_first_count && s.rows == s.first_count && s.rows > 1)
            snprintf(hint, sizeof hint,
                     "; the %" PRIu64 " lines of %" PRIu64
                     " values look like a full matrix (format distance)",
                     s.rows, s.first_count);
        else if (s.bad_line)
            snprintf(hint, sizeof hint,
                     "; line %" PRIu64 " is the first that does not fit the %s triangle (%" PRIu64
                     " values, expected %" PRIu64 ")",
                     s.bad_line, which, s.bad_got, s.bad_want);
        st = tm_fail(r, TOPOML_E_PARSE, "%s%s", reason, hint);
        goto fail;
    } else if (s.bad_line && s.rows == n - 1 && 2 * s.fitting >= s.rows) {
        /* As many lines as rows and most of them the right length, yet one
         * is off: values were moved between rows. Any other layout (one
         * line, wrapped at a fixed width) is read by count, as Ripser does. */
        r->line = s.bad_line;
        st = tm_fail(r, TOPOML_E_PARSE,
                     "%" PRIu64 " values, expected %" PRIu64 " (row %" PRIu64
                     " of the %s triangle of a %" PRIu64 "-point matrix)",
                     s.bad_got, s.bad_want, s.bad_row, which, n);
        goto fail;
    }

    double *cond;
    if (upper && v.len > 0) {
        if ((st = upper_to_lower(r, &v, n, &cond)) != TOPOML_OK)
            goto fail;
    } else {
        cond = tm_vec_take(r, &v);
    }
    out->kind = TOPOML_INPUT_CONDENSED;
    out->n = n;
    out->values = cond;
    return TOPOML_OK;

fail:
    tm_vec_free(r, &v);
    return st;
}

int tm_read_lower_distance(tm_reader *r, struct topoml_data *out)
{
    return read_triangle(r, out, false);
}

int tm_read_upper_distance(tm_reader *r, struct topoml_data *out)
{
    return read_triangle(r, out, true);
}

/* The full matrix: the first non-blank line fixes n; then n rows of n
 * values. Each row is read whole before its entries are checked, so a
 * ragged row is reported as ragged, not as the asymmetry it causes. */
int tm_read_distance(tm_reader *r, struct topoml_data *out)
{
    /* Rows of 1, 2, 3, ... values (or an empty first row): a lower triangle
     * given as a full matrix, which Ripser's reader takes, since it reads
     * only the first i values of row i. Read it so, with a warning. */
    topoml_format layout;
    char why[256];
    if (tm_detect_format(r, &layout, why, sizeof why, true) == TOPOML_OK &&
        layout == TOPOML_FORMAT_LOWER_DISTANCE && r->detect_rows == 2) {
        if (r->strict)
            return tm_fail(r, TOPOML_E_INVALID,
                           "the upper triangle of the matrix is empty (%s)", why);
        r->upper_empty = true;
        return read_triangle(r, out, false);
    }

    tm_vec row = {.elem = sizeof(double)};
    double *cond = NULL;
    uint64_t n = 0, rows = 0, count = 0, first_line = 0, last_line = 0;
    char *line;
    size_t len;
    int st;

    while ((st = tm_text_line(r, &line, &len)) == 1) {
        tm_cursor c;
        double x;
        tm_cursor_init(&c, line, len);
        row.len = 0;
        while ((st = tm_next_value(r, &c, TM_DISTANCE, &x)) == 1)
            if ((st = tm_vec_push_double(r, &row, x)) != TOPOML_OK)
                goto fail;
        if (st < 0)
            goto fail;
        if (c.count == 0)
            continue;
        last_line = r->line;

        if (rows == 0) {
            n = c.count;
            first_line = r->line;
            uint64_t cells, bytes;
            if (!tm_mul_u64(n, n, &cells) || !tm_condensed_count(n, &count) ||
                !tm_mul_u64(count, sizeof(double), &bytes)) {
                st = tm_fail(r, TOPOML_E_OVERFLOW,
                             "the first row has %" PRIu64 " values; an n x n matrix of that "
                             "size does not fit in 64 bits",
                             n);
                goto fail;
            }
            /* Each entry takes at least one byte: a first row that promises
             * more than the file can hold is refused before allocating. */
            if (r->size_known && r->remaining < cells) {
                st = tm_fail(r, TOPOML_E_PARSE,
                             "the first row has %" PRIu64 " values, so the matrix has %" PRIu64
                             " entries, more than the %" PRIu64 " bytes of the input can hold",
                             n, cells, r->remaining);
                goto fail;
            }
            if ((st = tm_reader_alloc(r, bytes, "the distance matrix", (void **)&cond)))
                goto fail;
        } else if (rows >= n) {
            st = tm_fail(r, TOPOML_E_PARSE,
                         "one row too many: the first row (line %" PRIu64 ") has %" PRIu64
                         " values, so the matrix has %" PRIu64 " rows",
                         first_line, n, n);
            goto fail;
        } else if (c.count != n) {
            st = tm_fail(r, TOPOML_E_PARSE,
                         "%" PRIu64 " values, expected %" PRIu64 " as on line %" PRIu64
                         " (row %" PRIu64 " of a %" PRIu64 "x%" PRIu64 " matrix)",
                         c.count, n, first_line, rows, n, n);
            goto fail;
        }
        const double *x_row = (const double *)(void *)row.p;
        for (uint64_t j = 0; j < n; j++)
            if ((st = tm_matrix_entry(r, cond, rows, j, x_row[j])) != TOPOML_OK)
                goto fail;
        rows++;
    }
    if (st < 0)
        goto fail;
    if (rows == 0) {
        st = tm_fail(r, TOPOML_E_PARSE,
                     r->bytes ? "empty input: no values, only blank lines" : "empty input");
        goto fail;
    }
    if (rows < n) {
        r->line = last_line;
        st = tm_fail(r, TOPOML_E_PARSE,
                     "the matrix ends after %" PRIu64 " rows; the first row (line %" PRIu64
                     ") has %" PRIu64 " values, so %" PRIu64 " rows are expected",
                     rows, first_line, n, n);
        goto fail;
    }

    tm_vec_free(r, &row);
    if (count == 0) {
        tm_reader_free(r, cond, 0);
        cond = NULL;
    }
    out->kind = TOPOML_INPUT_CONDENSED;
    out->n = n;
    out->values = cond;
    return TOPOML_OK;

fail:
    tm_vec_free(r, &row);
    tm_reader_free(r, cond, count * sizeof(double));
    return st;
}
