/*
 * data.c — the topoml_data object of the public API: reading one from a file
 * or stream (the parsers are io*.c), making one from memory, its shape, and
 * freeing it; plus format names, and the one routine that turns a list of
 * edges into SPARSE form (sorted, i < j, duplicates merged), which the sparse
 * parser uses too.
 *
 * Everything made from memory is checked as strictly as what is read from
 * a file: finite, non-negative distances, edges inside 0..n-1.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "io/io.h"

/* ---- formats ---- */

/* Indexed by topoml_format; the names are Ripser's. */
static const char *const format_names[] = {
    [TOPOML_FORMAT_LOWER_DISTANCE] = "lower-distance",
    [TOPOML_FORMAT_UPPER_DISTANCE] = "upper-distance",
    [TOPOML_FORMAT_DISTANCE] = "distance",
    [TOPOML_FORMAT_POINT_CLOUD] = "point-cloud",
    [TOPOML_FORMAT_DIPHA] = "dipha",
    [TOPOML_FORMAT_SPARSE] = "sparse",
    [TOPOML_FORMAT_BINARY] = "binary",
    [TOPOML_FORMAT_AUTO] = "auto",
    [TOPOML_FORMAT_NPY] = "npy",
};
#define FORMAT_COUNT (sizeof format_names / sizeof format_names[0])

int topoml_format_from_name(const char *name, topoml_format *out)
{
    if (!name || !out)
        return TOPOML_E_INVALID;
    for (size_t k = 0; k < FORMAT_COUNT; k++)
        if (strcmp(name, format_names[k]) == 0) {
            *out = (topoml_format)k;
            return TOPOML_OK;
        }
    /* Ripser's own matching: a prefix decides for the four text formats. */
    static const struct {
        const char *prefix;
        topoml_format format;
    } prefixes[] = {{"lower", TOPOML_FORMAT_LOWER_DISTANCE},
                    {"upper", TOPOML_FORMAT_UPPER_DISTANCE},
                    {"dist", TOPOML_FORMAT_DISTANCE},
                    {"point", TOPOML_FORMAT_POINT_CLOUD}};
    for (size_t k = 0; k < sizeof prefixes / sizeof prefixes[0]; k++)
        if (strncmp(name, prefixes[k].prefix, strlen(prefixes[k].prefix)) == 0) {
            *out = prefixes[k].format;
            return TOPOML_OK;
        }
    return TOPOML_E_INVALID;
}

const char *topoml_format_name(topoml_format format)
{
    if ((unsigned)format >= FORMAT_COUNT)
        return NULL;
    return format_names[format];
}

/* ---- edges ---- */

static int rec_cmp(const void *pa, const void *pb)
{
    const tm_edge_rec *a = pa, *b = pb;
    if (a->i != b->i)
        return a->i < b->i ? -1 : 1;
    if (a->j != b->j)
        return a->j < b->j ? -1 : 1;
    if (a->where != b->where)
        return a->where < b->where ? -1 : 1;
    return 0;
}

int tm_edges_normalize(tm_edge_rec *recs, uint64_t count, uint64_t *n_edges, tm_edge_rec *first,
                       tm_edge_rec *second)
{
    if (count > 1)
        qsort(recs, (size_t)count, sizeof *recs, rec_cmp);
    for (uint64_t k = 1; k < count; k++)
        if (recs[k].i == recs[k - 1].i && recs[k].j == recs[k - 1].j &&
            recs[k].d != recs[k - 1].d) {
            *first = recs[k - 1];
            *second = recs[k];
            return TOPOML_E_INVALID;
        }

    /* Compact in place: edge m (16 bytes at 16m) never reaches past record
     * k >= m (24 bytes at 24k), so no record is overwritten before it is
     * read; bytes are copied with memcpy because the two layouts overlap. */
    unsigned char *base = (unsigned char *)recs;
    uint64_t m = 0;
    uint32_t pi = 0, pj = 0;
    for (uint64_t k = 0; k < count; k++) {
        tm_edge_rec cur;
        memcpy(&cur, base + k * sizeof cur, sizeof cur);
        if (m > 0 && cur.i == pi && cur.j == pj)
            continue;
        topoml_edge e = {.d = cur.d, .i = cur.i, .j = cur.j};
        memcpy(base + m * sizeof e, &e, sizeof e);
        m++;
        pi = cur.i;
        pj = cur.j;
    }
    *n_edges = m;
    return TOPOML_OK;
}

/* ---- reading ---- */

int topoml_data_read_stream(topoml_context *ctx, topoml_data **out, FILE *f, const char *name,
                            topoml_format format)
{
    if (!ctx)
        return TOPOML_E_INVALID;
    if (!out || !f)
        return tm_error(ctx, TOPOML_E_INVALID, "topoml_data_read_stream: NULL argument");
    *out = NULL;
    struct topoml_data *data = tm_calloc(ctx, 1, sizeof *data);
    if (!data)
        return tm_nomem(ctx, sizeof *data);
    int st = tm_read_data(ctx, f, name, format, data);
    if (st != TOPOML_OK) {
        tm_free(ctx, data);
        return st;
    }
    *out = data;
    return TOPOML_OK;
}

int topoml_data_read(topoml_context *ctx, topoml_data **out, const char *path, topoml_format format)
{
    if (!ctx)
        return TOPOML_E_INVALID;
    if (!out || !path)
        return tm_error(ctx, TOPOML_E_INVALID, "topoml_data_read: NULL argument");
    *out = NULL;
    if (strcmp(path, "-") == 0)
        return topoml_data_read_stream(ctx, out, stdin, "<stdin>", format);
    FILE *f = fopen(path, "rb");
    if (!f) {
        int err = errno;
        char name[TM_NAME_BUF];
        return tm_error(ctx, err == ENOENT ? TOPOML_E_NOT_FOUND : TOPOML_E_IO, "%s: %s",
                        tm_escape_name(name, sizeof name, path), strerror(err));
    }
    int st = topoml_data_read_stream(ctx, out, f, path, format);
    fclose(f);
    return st;
}

int topoml_set_read_flags(topoml_context *ctx, uint32_t flags)
{
    if (!ctx)
        return TOPOML_E_INVALID;
    if (flags & ~TOPOML_READ_STRICT_SYMMETRY)
        return tm_error(ctx, TOPOML_E_INVALID, "topoml_set_read_flags: unknown flags 0x%x",
                        (unsigned)(flags & ~TOPOML_READ_STRICT_SYMMETRY));
    ctx->read_flags = flags;
    return TOPOML_OK;
}

/* ---- from memory ---- */

/* Allocate the object and an array of `bytes` (none when 0), after checking
 * the memory limit. */
static int new_data(topoml_context *ctx, uint64_t bytes, const char *what, struct topoml_data **out,
                    void **array)
{
    uint64_t total;
    *out = NULL;
    *array = NULL;
    if (!tm_add_u64(bytes, sizeof **out, &total) || total > SIZE_MAX)
        return tm_error(ctx, TOPOML_E_OVERFLOW, "%s: %" PRIu64 " bytes cannot be addressed", what,
                        bytes);
    int st = tm_check_memory(ctx, total, what);
    if (st)
        return st;
    struct topoml_data *d = tm_calloc(ctx, 1, sizeof *d);
    if (!d)
        return tm_nomem(ctx, sizeof *d);
    d->format = TOPOML_FORMAT_AUTO;
    if (bytes) {
        *array = tm_alloc(ctx, (size_t)bytes);
        if (!*array) {
            tm_free(ctx, d);
            return tm_nomem(ctx, (size_t)bytes);
        }
    }
    *out = d;
    return TOPOML_OK;
}

/* A data set of no points is refused, as an empty file is: there is
 * nothing to compute, and an empty barcode would hide the mistake. */
static int no_points(topoml_context *ctx, const char *fn)
{
    return tm_error(ctx, TOPOML_E_INVALID, "%s: no points (n = 0)", fn);
}

int topoml_data_from_points(topoml_context *ctx, topoml_data **out, uint64_t n, uint64_t dim,
                            const double *coords)
{
    static const char fn[] = "topoml_data_from_points";
    uint64_t count, bytes;
    if (!ctx)
        return TOPOML_E_INVALID;
    if (!out)
        return tm_error(ctx, TOPOML_E_INVALID, "%s: out is NULL", fn);
    *out = NULL;
    if (n == 0)
        return no_points(ctx, fn);
    if (dim == 0)
        return tm_error(ctx, TOPOML_E_INVALID, "%s: points need at least one coordinate", fn);
    if (!tm_mul_u64(n, dim, &count) || !tm_mul_u64(count, sizeof(double), &bytes))
        return tm_error(ctx, TOPOML_E_OVERFLOW,
                        "%s: %" PRIu64 " points of %" PRIu64 " coordinates overflow", fn, n, dim);
    if (count > 0 && !coords)
        return tm_error(ctx, TOPOML_E_INVALID, "%s: coords is NULL", fn);
    for (uint64_t k = 0; k < count; k++)
        if (!isfinite(coords[k]))
            return tm_error(ctx, TOPOML_E_INVALID,
                            "%s: coordinate %" PRIu64 " of point %" PRIu64 " is %s", fn, k % dim,
                            k / dim, isnan(coords[k]) ? "NaN" : "Inf");
    struct topoml_data *d;
    void *values;
    int st = new_data(ctx, bytes, fn, &d, &values);
    if (st)
        return st;
    if (bytes)
        memcpy(values, coords, (size_t)bytes);
    d->kind = TOPOML_INPUT_POINTS;
    d->n = n;
    d->dim = dim;
    d->values = values;
    *out = d;
    return TOPOML_OK;
}

int topoml_data_from_points_strided(topoml_context *ctx, topoml_data **out, uint64_t n,
                                    uint64_t dim, topoml_dtype dtype, const void *coords,
                                    uint64_t row_stride, uint64_t col_stride)
{
    static const char fn[] = "topoml_data_from_points_strided";
    if (!ctx)
        return TOPOML_E_INVALID;
    if (!out)
        return tm_error(ctx, TOPOML_E_INVALID, "%s: out is NULL", fn);
    *out = NULL;
    if (n == 0)
        return no_points(ctx, fn);
    if (dtype != TOPOML_F32 && dtype != TOPOML_F64)
        return tm_error(ctx, TOPOML_E_INVALID, "%s: dtype %d is neither F32 nor F64", fn,
                        (int)dtype);
    uint64_t size = dtype == TOPOML_F32 ? sizeof(float) : sizeof(double), count, bytes;
    if (row_stride % size || col_stride % size)
        return tm_error(ctx, TOPOML_E_INVALID,
                        "%s: strides %" PRIu64 " and %" PRIu64 " are not multiples of the element "
                        "size %" PRIu64,
                        fn, row_stride, col_stride, size);
    if (!tm_mul_u64(n, dim, &count) || !tm_mul_u64(count, sizeof(double), &bytes))
        return tm_error(ctx, TOPOML_E_OVERFLOW,
                        "%s: %" PRIu64 " points of %" PRIu64 " coordinates overflow", fn, n, dim);
    if (count > 0 && !coords)
        return tm_error(ctx, TOPOML_E_INVALID, "%s: coords is NULL", fn);
    /* Gather into a C-ordered double array (checked against the memory
     * limit), then build the data set as from_points does. */
    int st = tm_check_memory(ctx, bytes, fn);
    if (st)
        return st;
    double *dense = bytes ? tm_alloc(ctx, (size_t)bytes) : NULL;
    if (bytes && !dense)
        return tm_nomem(ctx, (size_t)bytes);
    const unsigned char *base = coords;
    for (uint64_t i = 0; i < n; i++)
        for (uint64_t k = 0; k < dim; k++) {
            const unsigned char *p = base + i * row_stride + k * col_stride;
            if (dtype == TOPOML_F32) {
                float x;
                memcpy(&x, p, sizeof x);
                dense[i * dim + k] = (double)x;
            } else {
                memcpy(&dense[i * dim + k], p, sizeof(double));
            }
        }
    st = topoml_data_from_points(ctx, out, n, dim, dense);
    tm_free(ctx, dense);
    return st;
}

/* A condensed matrix with +INFINITY entries: its finite entries as edges. */
static int condensed_with_gaps(topoml_context *ctx, topoml_data **out, uint64_t n,
                               const double *condensed, uint64_t count)
{
    uint64_t m = 0, bytes;
    for (uint64_t k = 0; k < count; k++)
        m += !isinf(condensed[k]);
    if (!tm_mul_u64(m, sizeof(topoml_edge), &bytes))
        return tm_error(ctx, TOPOML_E_OVERFLOW, "topoml_data_from_condensed: too many edges");
    int st = tm_check_memory(ctx, bytes, "topoml_data_from_condensed");
    if (st)
        return st;
    topoml_edge *e = m ? tm_alloc(ctx, (size_t)bytes) : NULL;
    if (m && !e)
        return tm_nomem(ctx, (size_t)bytes);
    uint64_t q = 0;
    for (uint64_t k = 0; k < count; k++)
        if (!isinf(condensed[k])) {
            uint64_t i, j;
            tm_condensed_pair(k, &i, &j);
            e[q++] = (topoml_edge){.d = condensed[k], .i = (uint32_t)j, .j = (uint32_t)i};
        }
    st = topoml_data_from_edges(ctx, out, n, m, e);
    tm_free(ctx, e);
    return st;
}

int topoml_data_from_condensed(topoml_context *ctx, topoml_data **out, uint64_t n,
                               const double *condensed)
{
    static const char fn[] = "topoml_data_from_condensed";
    uint64_t count, bytes;
    if (!ctx)
        return TOPOML_E_INVALID;
    if (!out)
        return tm_error(ctx, TOPOML_E_INVALID, "%s: out is NULL", fn);
    *out = NULL;
    if (n == 0)
        return no_points(ctx, fn);
    if (!tm_condensed_count(n, &count) || !tm_mul_u64(count, sizeof(double), &bytes))
        return tm_error(ctx, TOPOML_E_OVERFLOW, "%s: n = %" PRIu64 " overflows n(n-1)/2", fn, n);
    if (count > 0 && !condensed)
        return tm_error(ctx, TOPOML_E_INVALID, "%s: condensed is NULL", fn);
    bool gaps = false;
    for (uint64_t k = 0; k < count; k++) {
        double x = condensed[k];
        if (x == INFINITY) {
            gaps = true;
            continue;
        }
        if (!isfinite(x) || x < 0) {
            uint64_t i, j;
            tm_condensed_pair(k, &i, &j);
            return tm_error(ctx, TOPOML_E_INVALID, "%s: d(%" PRIu64 ",%" PRIu64 ") is %s", fn, i, j,
                            isnan(x)   ? "NaN"
                            : isinf(x) ? "Inf"
                                       : "negative");
        }
    }
    if (gaps) {
        if (n > (uint64_t)UINT32_MAX)
            return tm_error(ctx, TOPOML_E_OVERFLOW,
                            "%s: n = %" PRIu64 " is more vertices than an edge can name", fn, n);
        return condensed_with_gaps(ctx, out, n, condensed, count);
    }
    struct topoml_data *d;
    void *values;
    int st = new_data(ctx, bytes, fn, &d, &values);
    if (st)
        return st;
    double *v = values;
    for (uint64_t k = 0; k < count; k++)
        v[k] = condensed[k] == 0 ? 0.0 : condensed[k]; /* -0 is stored as 0 */
    d->kind = TOPOML_INPUT_CONDENSED;
    d->n = n;
    d->values = v;
    *out = d;
    return TOPOML_OK;
}

int topoml_data_from_edges(topoml_context *ctx, topoml_data **out, uint64_t n, uint64_t n_edges,
                           const topoml_edge *edges)
{
    static const char fn[] = "topoml_data_from_edges";
    uint64_t bytes;
    if (!ctx)
        return TOPOML_E_INVALID;
    if (!out)
        return tm_error(ctx, TOPOML_E_INVALID, "%s: out is NULL", fn);
    *out = NULL;
    if (n == 0)
        return no_points(ctx, fn);
    /* Vertices are uint32_t in topoml_edge. */
    if (n > (uint64_t)UINT32_MAX)
        return tm_error(ctx, TOPOML_E_OVERFLOW,
                        "%s: n = %" PRIu64 " is more vertices than an edge can name (%" PRIu32 ")",
                        fn, n, UINT32_MAX);
    if (!tm_mul_u64(n_edges, sizeof(tm_edge_rec), &bytes))
        return tm_error(ctx, TOPOML_E_OVERFLOW, "%s: %" PRIu64 " edges overflow", fn, n_edges);
    if (n_edges > 0 && !edges)
        return tm_error(ctx, TOPOML_E_INVALID, "%s: edges is NULL", fn);
    for (uint64_t k = 0; k < n_edges; k++) {
        const topoml_edge *e = &edges[k];
        if (e->i >= n || e->j >= n)
            return tm_error(ctx, TOPOML_E_INVALID,
                            "%s: edge %" PRIu64 " joins %" PRIu32 " and %" PRIu32
                            ", but there are %" PRIu64 " vertices",
                            fn, k, e->i, e->j, n);
        if (e->i == e->j)
            return tm_error(ctx, TOPOML_E_INVALID,
                            "%s: edge %" PRIu64 " joins %" PRIu32 " to itself", fn, k, e->i);
        if (!isfinite(e->d) || e->d < 0)
            return tm_error(ctx, TOPOML_E_INVALID, "%s: edge %" PRIu64 " has distance %s", fn, k,
                            isnan(e->d)   ? "NaN"
                            : isinf(e->d) ? "Inf"
                                          : "< 0");
    }

    /* The records are the working copy; they shrink into the edges. */
    struct topoml_data *d;
    void *array;
    int st = new_data(ctx, bytes, fn, &d, &array);
    if (st)
        return st;
    tm_edge_rec *recs = array;
    for (uint64_t k = 0; k < n_edges; k++) {
        const topoml_edge *e = &edges[k];
        uint32_t i = e->i < e->j ? e->i : e->j, j = e->i < e->j ? e->j : e->i;
        recs[k] = (tm_edge_rec){.d = e->d == 0 ? 0.0 : e->d, .i = i, .j = j, .where = k};
    }
    uint64_t m;
    tm_edge_rec a, b;
    if (tm_edges_normalize(recs, n_edges, &m, &a, &b) != TOPOML_OK) {
        char x[32], y[32];
        tm_fmt_double(x, sizeof x, a.d);
        tm_fmt_double(y, sizeof y, b.d);
        tm_free(ctx, array);
        tm_free(ctx, d);
        return tm_error(ctx, TOPOML_E_INVALID,
                        "%s: edges %" PRIu64 " and %" PRIu64 " both join %" PRIu32 " and %" PRIu32
                        ", at different distances (%s and %s)",
                        fn, a.where, b.where, a.i, a.j, x, y);
    }
    topoml_edge *kept = array;
    if (m > 0) {
        topoml_edge *shrunk = tm_realloc(ctx, array, (size_t)(m * sizeof *kept));
        if (shrunk) /* a failed shrink keeps the larger block */
            kept = shrunk;
    } else {
        tm_free(ctx, array);
        kept = NULL;
    }
    d->kind = TOPOML_INPUT_SPARSE;
    d->n = n;
    d->edges = kept;
    d->n_edges = m;
    *out = d;
    return TOPOML_OK;
}

/* ---- shape and freeing ---- */

void topoml_data_free(topoml_context *ctx, topoml_data *data)
{
    /* The arrays came from ctx's allocator; without it they cannot be
     * given back. */
    if (!ctx || !data)
        return;
    tm_free(ctx, data->values);
    tm_free(ctx, data->edges);
    tm_free(ctx, data);
}

uint32_t topoml_data_kind(const topoml_data *data)
{
    return data ? data->kind : UINT32_MAX;
}

topoml_format topoml_data_format(const topoml_data *data)
{
    return data ? (topoml_format)data->format : TOPOML_FORMAT_AUTO;
}

uint64_t topoml_data_count(const topoml_data *data)
{
    return data ? data->n : 0;
}

uint64_t topoml_data_dim(const topoml_data *data)
{
    return data && data->kind == TOPOML_INPUT_POINTS ? data->dim : 0;
}
