/*
 * io_detect.c — which layout an input has when the caller names none
 * (TOPOML_FORMAT_AUTO): a DIPHA or NumPy .npy file by its magic number, and a text
 * distance matrix by the lengths of its first two rows — a square matrix
 * (rows of n values), a lower triangle (rows of 1, 2, 3, ... values, or an
 * empty first row as Ripser writes it) or an upper triangle (rows of n-1,
 * n-2, ... values). A point cloud, a sparse edge list and Ripser's binary
 * format are never guessed: they look like a square matrix (or like noise)
 * and are read only when named. docs/formats.md has the rule.
 *
 * This file only chooses. The chosen parser then reads the input from its
 * start (nothing is consumed here) and checks all of it as it always does.
 */
#include <inttypes.h>
#include <string.h>

#include "io/io.h"

/* How far to look: the first two rows of a matrix of thousands of points fit
 * many times over; blank and comment lines before them are skipped. */
#define DETECT_LINES 256
#define DETECT_BYTES ((uint64_t)16 << 20)

/* One line of the peeked text, measured as the text parsers would read it. */
typedef struct row_shape {
    uint64_t values; /* tokens before any '#' */
    bool blank;      /* nothing at all but whitespace (a comment is not blank) */
    bool numeric;    /* its first token is a number */
    char first[48];  /* its first token, for messages */
} row_shape;

static bool sep(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\v' || ch == '\f' || ch == ',';
}

static void measure(const char *p, const char *end, row_shape *s)
{
    memset(s, 0, sizeof *s);
    s->blank = true;
    for (const char *q = p; q < end; q++)
        if (!sep(*q) || *q == ',')
            s->blank = false;
    while (p < end) {
        while (p < end && sep(*p))
            p++;
        if (p == end || *p == '#')
            break;
        const char *t = p;
        while (p < end && !sep(*p))
            p++;
        if (s->values == 0) {
            s->numeric = tm_is_number(t, (size_t)(p - t));
            tm_quote(s->first, sizeof s->first, t, (size_t)(p - t));
        }
        s->values++;
    }
}

int tm_detect_format(tm_reader *r, topoml_format *out, char *why, size_t why_size, bool quiet)
{
    const char *text;
    size_t len;
    row_shape rows[2];
    uint64_t lines_of[2] = {0, 0};
    int found = 0;
    bool blank_first = false;
    /* Look at as few lines as it takes: a few rows of a large matrix are
     * what its parser holds anyway. */
    for (uint64_t want = 2;; want *= 4) {
        int st = tm_text_peek(r, want, DETECT_BYTES, &text, &len);
        if (st)
            return st;
        if (memchr(text, '\0', len))
            break;
        found = 0;
        blank_first = false;
        uint64_t line = 0;
        const char *p = text, *end = text + len;
        while (p < end && found < 2) {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            if (!nl && !r->eof)
                break; /* a line cut off by the look-ahead: not measured */
            const char *stop = nl ? nl : end;
            row_shape s;
            measure(p, stop, &s);
            line++;
            if (line == 1 && s.blank)
                blank_first = true;
            if (s.values > 0) {
                rows[found] = s;
                lines_of[found] = line;
                found++;
            }
            p = nl ? nl + 1 : end;
        }
        if (found == 2 || blank_first || r->eof || want >= DETECT_LINES || len >= DETECT_BYTES)
            break;
    }
    r->detect_rows = blank_first ? 2 : (uint64_t)found;

    static const unsigned char dipha_magic[8] = {0x00, 0x46, 0xd7, 0xe0, 0x01, 0, 0, 0};
    if (len >= 8 && memcmp(text, dipha_magic, 8) == 0) {
        *out = TOPOML_FORMAT_DIPHA;
        snprintf(why, why_size, "DIPHA's magic number 8067171840 in the first 8 bytes");
        return TOPOML_OK;
    }
    if (len >= 6 && memcmp(text, "\x93NUMPY", 6) == 0) {
        *out = TOPOML_FORMAT_NPY;
        snprintf(why, why_size, "the .npy magic \\x93NUMPY in the first 6 bytes");
        return TOPOML_OK;
    }
    const char *nul = memchr(text, '\0', len);
    if (nul && quiet)
        return TOPOML_E_PARSE;
    if (nul) {
        r->line = 1;
        const char *line_start = text;
        for (const char *q = text; q < nul; q++)
            if (*q == '\n') {
                r->line++;
                line_start = q + 1;
            }
        /* Worded as the text readers word a NUL (io.c), then why no format fits. */
        return tm_fail(r, TOPOML_E_PARSE,
                       "NUL byte in column %zu: binary data and no DIPHA header: the format "
                       "cannot be told; Ripser's binary format is read only when it is named "
                       "(binary)",
                       (size_t)(nul - line_start) + 1);
    }

    if (found > 0 && !rows[0].numeric) {
        if (quiet)
            return TOPOML_E_PARSE;
        r->line = lines_of[0];
        return tm_fail(r, TOPOML_E_PARSE,
                       "'%s' is not a number: with a header line this is not a distance "
                       "matrix; point clouds (CSV with a header too) are read only when the "
                       "format is named (point-cloud)",
                       rows[0].first);
    }
    if (blank_first) {
        *out = TOPOML_FORMAT_LOWER_DISTANCE;
        snprintf(why, why_size, "line 1 is empty, as row 0 of Ripser's lower triangle");
        return TOPOML_OK;
    }
    if (found < 2) {
        /* One row (or none): a triangle written on one line, or an empty
         * input, which the lower-distance reader reports as Ripser would. */
        *out = TOPOML_FORMAT_LOWER_DISTANCE;
        if (found == 1)
            snprintf(why, why_size, "a single row of %" PRIu64 " value%s (line %" PRIu64 ")",
                     rows[0].values, rows[0].values == 1 ? "" : "s", lines_of[0]);
        else
            snprintf(why, why_size, "no values");
        return TOPOML_OK;
    }
    uint64_t a = rows[0].values, b = rows[1].values;
    if (a >= 2 && b == a) {
        *out = TOPOML_FORMAT_DISTANCE;
        snprintf(why, why_size,
                 "lines %" PRIu64 " and %" PRIu64 " hold %" PRIu64 " values each: a square matrix",
                 lines_of[0], lines_of[1], a);
    } else if (b == a + 1 || (a == 1 && b == 1)) {
        *out = TOPOML_FORMAT_LOWER_DISTANCE;
        snprintf(why, why_size,
                 "lines %" PRIu64 " and %" PRIu64 " hold %" PRIu64 " and %" PRIu64
                 " values: a lower triangle",
                 lines_of[0], lines_of[1], a, b);
    } else if (a >= 2 && b == a - 1) {
        *out = TOPOML_FORMAT_UPPER_DISTANCE;
        snprintf(why, why_size,
                 "lines %" PRIu64 " and %" PRIu64 " hold %" PRIu64 " and %" PRIu64
                 " values: an upper triangle",
                 lines_of[0], lines_of[1], a, b);
    } else {
        if (quiet)
            return TOPOML_E_PARSE;
        r->line = lines_of[1];
        return tm_fail(r, TOPOML_E_PARSE,
                       "the layout cannot be told: line %" PRIu64 " holds %" PRIu64
                       " value%s and line %" PRIu64 " holds %" PRIu64
                       "; a square matrix has rows of equal length, a lower triangle rows of 1, "
                       "2, 3, ... values, an upper triangle rows of n-1, n-2, ... values; name "
                       "the format",
                       lines_of[0], a, a == 1 ? "" : "s", lines_of[1], b);
    }
    return TOPOML_OK;
}
