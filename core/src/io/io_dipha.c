/*
 * io_dipha.c — DIPHA distance matrices: little-endian int64 magic
 * 8067171840, int64 file type 7, int64 n, then the full n x n matrix as
 * float64, row by row. The header is checked against the file size when the
 * input is a regular file (before anything is allocated) and against the
 * bytes that actually come when it is a stream. The entries must be finite,
 * >= 0, 0 on the diagonal and symmetric (io.c, tm_matrix_entry). The result
 * is a CONDENSED data set.
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "io/io.h"

#define DIPHA_MAGIC 8067171840
#define DIPHA_DISTANCE_MATRIX 7
#define DIPHA_HEADER 24

static uint64_t le64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int k = 7; k >= 0; k--)
        v = (v << 8) | p[k];
    return v;
}

int tm_read_dipha(tm_reader *r, struct topoml_data *out)
{
    unsigned char h[DIPHA_HEADER];
    size_t got;
    int st;

    if ((st = tm_read_bytes(r, h, sizeof h, &got)))
        return st;
    if (got == 0) {
        r->offset = 0;
        return tm_fail(r, TOPOML_E_PARSE, "empty input");
    }
    if (got < sizeof h) {
        r->offset = got;
        return tm_fail(r, TOPOML_E_PARSE, "the input ends inside the 24-byte DIPHA header");
    }
    int64_t magic = (int64_t)le64(h), type = (int64_t)le64(h + 8), sn = (int64_t)le64(h + 16);
    if (magic != DIPHA_MAGIC) {
        r->offset = 0;
        return tm_fail(r, TOPOML_E_PARSE,
                       "magic number %" PRId64 "; a DIPHA file starts with %" PRId64, magic,
                       (int64_t)DIPHA_MAGIC);
    }
    if (type != DIPHA_DISTANCE_MATRIX) {
        r->offset = 8;
        return tm_fail(r, TOPOML_E_PARSE,
                       "DIPHA file type %" PRId64 "; a distance matrix has type %d", type,
                       DIPHA_DISTANCE_MATRIX);
    }
    r->offset = 16;
    if (sn < 0)
        return tm_fail(r, TOPOML_E_PARSE, "the header says n = %" PRId64 ", which is negative", sn);
    uint64_t n = (uint64_t)sn, cells, body, total, count, row_bytes;
    if (!tm_mul_u64(n, n, &cells) || !tm_mul_u64(cells, sizeof(double), &body) ||
        !tm_add_u64(body, DIPHA_HEADER, &total))
        return tm_fail(r, TOPOML_E_OVERFLOW,
                       "the header says n = %" PRIu64 "; 24 + 8n^2 bytes does not fit in 64 bits",
                       n);
    if (r->size_known && r->remaining != total)
        return tm_fail(r, TOPOML_E_PARSE,
                       "the header says n = %" PRIu64 ", so the file has 24 + 8n^2 = %" PRIu64
                       " bytes, but it has %" PRIu64,
                       n, total, r->remaining);
    tm_condensed_count(n, &count); /* <= n^2, which fits */
    row_bytes = n * sizeof(double);

    double *cond = NULL;
    unsigned char *row = NULL;
    if (count > 0 &&
        (st = tm_reader_alloc(r, count * sizeof(double), "the distance matrix", (void **)&cond)))
        return st;
    if (n > 0 && (st = tm_reader_alloc(r, row_bytes, "the row buffer", (void **)&row)))
        goto done;

    for (uint64_t i = 0; i < n; i++) {
        uint64_t row_start = DIPHA_HEADER + i * row_bytes;
        if ((st = tm_read_bytes(r, row, (size_t)row_bytes, &got)))
            goto done;
        if (got < row_bytes) {
            r->offset = row_start + got;
            st = tm_fail(r, TOPOML_E_PARSE,
                         "the input ends after %" PRIu64 " bytes; the header says n = %" PRIu64
                         ", so it has 24 + 8n^2 = %" PRIu64,
                         r->offset, n, total);
            goto done;
        }
        for (uint64_t j = 0; j < n; j++) {
            uint64_t bits = le64(row + j * sizeof(double));
            double x;
            memcpy(&x, &bits, sizeof x);
            r->offset = row_start + j * sizeof(double);
            if (!isfinite(x) || x < 0) {
                char a[32];
                tm_fmt_double(a, sizeof a, x);
                st = tm_fail(r, TOPOML_E_INVALID, "d(%" PRIu64 ",%" PRIu64 ") is %s%s", i, j,
                             isnan(x)   ? "NaN"
                             : isinf(x) ? "Inf"
                                        : a,
                             isfinite(x) ? ", a negative distance" : "");
                goto done;
            }
            if (x == 0)
                x = 0.0; /* -0 reads as 0 */
            if ((st = tm_matrix_entry(r, cond, i, j, x)))
                goto done;
        }
    }

    unsigned char extra;
    if ((st = tm_read_bytes(r, &extra, 1, &got)))
        goto done;
    if (got) {
        r->offset = total;
        st = tm_fail(r, TOPOML_E_PARSE,
                     "trailing data after the %" PRIu64 "x%" PRIu64 " matrix the header announces",
                     n, n);
        goto done;
    }

    out->kind = TOPOML_INPUT_CONDENSED;
    out->n = n;
    out->values = cond;
    cond = NULL;

done:
    tm_reader_free(r, row, row_bytes);
    tm_reader_free(r, cond, count * sizeof(double));
    return st;
}
