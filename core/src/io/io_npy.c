/*
 * io_npy.c — a point cloud as a NumPy .npy file (numpy.save): a 2-D array
 * of n points by d coordinates, float64 or float32, little-endian, C or
 * Fortran order. The header is the NPY format (versions 1.0, 2.0, 3.0):
 * "\x93NUMPY", two version bytes, the header length (2 bytes in 1.0, 4
 * after), then a Python dict literal with 'descr', 'fortran_order' and
 * 'shape'. Only what numpy.save writes for such an array is read; anything
 * else (another dtype, big-endian, a pickled object, a 1-D or 3-D shape) is
 * refused naming what was found. The result is a POINTS data set (double).
 *
 * Not here: writing .npy (the CLI's `distance` and `edges` do, tools/).
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "io/io.h"

/* A header longer than this is not one numpy writes for a 2-D array. */
#define NPY_MAX_HEADER 65536

/* The value of 'key' in the header dict: *v at its first character. */
static const char *dict_value(const char *h, const char *key)
{
    const char *p = strstr(h, key);
    if (!p)
        return NULL;
    p += strlen(key);
    while (*p == ' ')
        p++;
    if (*p != ':')
        return NULL;
    p++;
    while (*p == ' ')
        p++;
    return p;
}

static bool parse_u64(const char **p, uint64_t *out)
{
    const char *s = *p;
    uint64_t v = 0;
    if (*s < '0' || *s > '9')
        return false;
    for (; *s >= '0' && *s <= '9'; s++)
        if (!tm_mul_u64(v, 10, &v) || !tm_add_u64(v, (uint64_t)(*s - '0'), &v))
            return false;
    *p = s;
    *out = v;
    return true;
}

int tm_read_npy(tm_reader *r, struct topoml_data *out)
{
    unsigned char pre[12];
    size_t got;
    int st;
    r->offset = 0;
    if ((st = tm_read_bytes(r, pre, 10, &got)))
        return st;
    if (got == 0)
        return tm_fail(r, TOPOML_E_PARSE, "empty input");
    if (got < 10 || memcmp(pre, "\x93NUMPY", 6) != 0)
        return tm_fail(r, TOPOML_E_PARSE, "not a .npy file (no \\x93NUMPY magic)");
    unsigned major = pre[6];
    uint64_t hlen, start;
    if (major == 1) {
        hlen = (uint64_t)pre[8] | (uint64_t)pre[9] << 8;
        start = 10;
    } else if (major == 2 || major == 3) {
        r->offset = 10;
        if ((st = tm_read_bytes(r, pre + 10, 2, &got)))
            return st;
        if (got < 2)
            return tm_fail(r, TOPOML_E_PARSE, "the input ends inside the header length");
        hlen = (uint64_t)pre[8] | (uint64_t)pre[9] << 8 | (uint64_t)pre[10] << 16 |
               (uint64_t)pre[11] << 24;
        start = 12;
    } else {
        r->offset = 6;
        return tm_fail(r, TOPOML_E_PARSE, "NPY format version %u.%u is not one topoml reads", major,
                       pre[7]);
    }
    r->offset = start;
    if (hlen == 0 || hlen > NPY_MAX_HEADER)
        return tm_fail(r, TOPOML_E_PARSE, "a header of %" PRIu64 " bytes", hlen);
    char *h;
    if ((st = tm_reader_alloc(r, hlen + 1, "the NPY header", (void **)&h)))
        return st;
    if ((st = tm_read_bytes(r, h, (size_t)hlen, &got)))
        goto done;
    h[got] = '\0';
    if (got < hlen) {
        st = tm_fail(r, TOPOML_E_PARSE, "the input ends inside the header");
        goto done;
    }
    if (memchr(h, '\0', (size_t)hlen)) {
        st = tm_fail(r, TOPOML_E_PARSE, "a NUL byte in the header");
        goto done;
    }

    /* 'descr': '<f8' or '<f4' ('|' and '=' are not written for floats by
     * numpy on a little-endian machine; '>' is big-endian). */
    const char *d = dict_value(h, "'descr'");
    size_t elem;
    if (d && (strncmp(d, "'<f8'", 5) == 0))
        elem = 8;
    else if (d && (strncmp(d, "'<f4'", 5) == 0))
        elem = 4;
    else {
        char q[48];
        tm_quote(q, sizeof q, d ? d : "(none)", d ? strcspn(d, ",}") : 6);
        st = tm_fail(r, TOPOML_E_PARSE,
                     "dtype %s: a point cloud is float64 ('<f8') or float32 ('<f4'), "
                     "little-endian",
                     q);
        goto done;
    }
    const char *fo = dict_value(h, "'fortran_order'");
    bool fortran;
    if (fo && strncmp(fo, "False", 5) == 0)
        fortran = false;
    else if (fo && strncmp(fo, "True", 4) == 0)
        fortran = true;
    else {
        st = tm_fail(r, TOPOML_E_PARSE, "the header has no 'fortran_order': True or False");
        goto done;
    }
    const char *sh = dict_value(h, "'shape'");
    uint64_t n = 0, dim = 0;
    if (!sh || *sh != '(') {
        st = tm_fail(r, TOPOML_E_PARSE, "the header has no 'shape'");
        goto done;
    }
    sh++;
    while (*sh == ' ')
        sh++;
    bool two = parse_u64(&sh, &n);
    while (two && (*sh == ' ' || *sh == ','))
        sh++;
    two = two && parse_u64(&sh, &dim);
    while (two && (*sh == ' ' || *sh == ','))
        sh++;
    if (!two || *sh != ')') {
        char q[48];
        const char *s0 = dict_value(h, "'shape'");
        tm_quote(q, sizeof q, s0, strcspn(s0, ")") + 1);
        st = tm_fail(r, TOPOML_E_PARSE,
                     "shape %s: a point cloud is a 2-D array (points, coordinates)", q);
        goto done;
    }
    if (n == 0 || dim == 0) {
        st = tm_fail(r, TOPOML_E_PARSE, "shape (%" PRIu64 ", %" PRIu64 "): no points", n, dim);
        goto done;
    }
    uint64_t count, bytes, data_bytes;
    if (!tm_mul_u64(n, dim, &count) || !tm_mul_u64(count, sizeof(double), &bytes) ||
        !tm_mul_u64(count, elem, &data_bytes)) {
        st = tm_fail(r, TOPOML_E_OVERFLOW, "shape (%" PRIu64 ", %" PRIu64 ") overflows", n, dim);
        goto done;
    }
    r->offset = start + hlen;
    if (r->size_known && r->remaining != r->offset + data_bytes) {
        st = tm_fail(r, TOPOML_E_PARSE,
                     "the header says %" PRIu64 " x %" PRIu64 " values of %zu bytes, so the file "
                     "has %" PRIu64 " bytes, but it has %" PRIu64,
                     n, dim, elem, r->offset + data_bytes, r->remaining);
        goto done;
    }
    double *v;
    if ((st = tm_reader_alloc(r, bytes, "the point cloud", (void **)&v)))
        goto done;
    /* Read value by value in file order; a Fortran-ordered array is stored
     * column by column. */
    unsigned char buf[8192];
    uint64_t k = 0;
    while (k < count) {
        size_t want = (size_t)((count - k) * elem < sizeof buf ? (count - k) * elem : sizeof buf);
        if ((st = tm_read_bytes(r, buf, want, &got)))
            break;
        if (got < want) {
            r->offset = start + hlen + k * elem + got;
            st =
                tm_fail(r, TOPOML_E_PARSE, "the input ends after %" PRIu64 " of %" PRIu64 " values",
                        k + got / elem, count);
            break;
        }
        for (size_t b = 0; b < got; b += elem, k++) {
            double x;
            if (elem == 8) {
                memcpy(&x, buf + b, 8);
            } else {
                float f;
                memcpy(&f, buf + b, 4);
                x = (double)f;
            }
            uint64_t i = fortran ? k % n : k / dim, j = fortran ? k / n : k % dim;
            if (!isfinite(x)) {
                r->offset = start + hlen + k * elem;
                st = tm_fail(r, TOPOML_E_INVALID,
                             "coordinate %" PRIu64 " of point %" PRIu64 " is %s", j, i,
                             isnan(x) ? "NaN" : "Inf");
                break;
            }
            v[i * dim + j] = x;
        }
        if (st)
            break;
    }
    if (st == TOPOML_OK) {
        unsigned char extra;
        r->offset = start + hlen + data_bytes;
        if ((st = tm_read_bytes(r, &extra, 1, &got)) == TOPOML_OK && got)
            st = tm_fail(r, TOPOML_E_PARSE, "trailing data after the array");
    }
    if (st) {
        tm_reader_free(r, v, bytes);
        goto done;
    }
    out->kind = TOPOML_INPUT_POINTS;
    out->n = n;
    out->dim = dim;
    out->values = v;
done:
    tm_reader_free(r, h, hlen + 1);
    return st;
}
