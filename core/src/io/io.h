/*
 * io.h — what the input parsers share: the reader (a block-buffered line
 * scanner for the text formats, byte offsets for the binary ones), the
 * number grammar, memory-limited growth of arrays, triangular-count helpers
 * and the check of one entry of a square distance matrix.
 *
 * Only io.c, io_*.c and data.c include it. The public entry points are in
 * topoml.h; tm_read_data (at the end) is the one door into the parsers.
 *
 * Every error goes through tm_fail, which puts the location in front of the
 * reason: "NAME:LINE: reason" for text, "NAME: byte OFFSET: reason" for the
 * binary formats. A parser sets r->offset before it reports a binary error.
 */
#ifndef TOPOML_IO_H
#define TOPOML_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "api/api.h"

typedef struct tm_reader {
    topoml_context *ctx;
    FILE *f;
    const char *name;
    bool binary;        /* locations are byte offsets, not lines */
    bool size_known;    /* f is a regular file: `remaining` is exact */
    uint64_t remaining; /* bytes between the start position and the end */
    uint64_t held;      /* bytes this read holds now, checked against the limit */

    /* text */
    char *buf; /* [pos, end) not yet returned; buf[cap] is never used */
    size_t cap, pos, end;
    bool eof;
    uint64_t line;  /* 1-based number of the line last returned */
    uint64_t bytes; /* bytes read so far */

    /* binary */
    uint64_t offset; /* where the item being checked starts */

    /* set by a parser, logged by tm_read_data once the read is done */
    bool read_diagonal;
    uint64_t header_line; /* point cloud: a header line skipped (0: none) */

    /* full matrices: what differed from a symmetric matrix with a zero
     * diagonal (ignored, as Ripser does, unless strict) */
    bool strict;              /* TOPOML_READ_STRICT_SYMMETRY */
    uint64_t asym_count;      /* pairs whose triangles differ */
    double asym_diff;         /* the largest difference ... */
    uint64_t asym_i, asym_j;  /* ... at d(i,j), i > j ... */
    double asym_low, asym_up; /* ... with these values */
    uint64_t diag_count;      /* non-zero diagonal entries */
    uint64_t diag_i;          /* the first of them */
    double diag_x;
    bool upper_empty;         /* distance read as its lower triangle */
    uint64_t detect_rows;     /* rows tm_detect_format measured (2: enough to tell) */
} tm_reader;

/* Report an error at the reader's location. Returns `status`. */
int tm_fail(tm_reader *r, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ---- memory: everything a read holds is counted in r->held ---- */

/* Would holding `more` further bytes stay within the context's limit?
 * TOPOML_OK, or TOPOML_E_LIMIT / TOPOML_E_OVERFLOW reported at the reader's
 * location with `what` named (a singular noun: "the distance matrix"). The
 * figure reported is all the read holds, which is what the limit is for. */
int tm_reader_check(tm_reader *r, uint64_t more, const char *what);

/* Allocate `bytes` after checking them; counted in r->held. */
int tm_reader_alloc(tm_reader *r, uint64_t bytes, const char *what, void **out);
void tm_reader_free(tm_reader *r, void *p, uint64_t bytes);

/* A growing array of `elem`-byte items. Growth is geometric, but never past
 * what the memory limit leaves, so the read is refused exactly when the items
 * themselves do not fit, before the allocation that would exceed it. */
typedef struct tm_vec {
    unsigned char *p;
    uint64_t len, cap; /* in items */
    size_t elem;
} tm_vec;

int tm_vec_grow(tm_reader *r, tm_vec *v, uint64_t need, const char *what);
void tm_vec_free(tm_reader *r, tm_vec *v);
/* Hand the array over (shrunk to len items) and forget it; NULL when empty.
 * The bytes stay counted in r->held: the data set holds them now. */
void *tm_vec_take(tm_reader *r, tm_vec *v);

static inline int tm_vec_push_double(tm_reader *r, tm_vec *v, double x)
{
    if (v->len == v->cap) {
        int st = tm_vec_grow(r, v, v->len + 1, "the array of values");
        if (st)
            return st;
    }
    ((double *)(void *)v->p)[v->len++] = x;
    return TOPOML_OK;
}

/* ---- text ---- */

/* The next line, NUL-terminated in place, without its "\n" or "\r\n".
 * 1: a line; 0: end of input; < 0: an error (reported). */
int tm_text_line(tm_reader *r, char **line, size_t *len);

/* Look ahead without consuming: make the buffer hold at least `lines`
 * complete lines (or the rest of the input, or `max_bytes`, whichever comes
 * first, or a NUL byte, which it lets in and stops at) and point *text at
 * what is not yet returned. The next tm_text_line or tm_read_bytes starts
 * at *text. */
int tm_text_peek(tm_reader *r, uint64_t lines, uint64_t max_bytes, const char **text,
                 size_t *len);

/* Is tok[0..len) a decimal number of the grammar the text formats read? */
bool tm_is_number(const char *tok, size_t len);

/* A walk over the values of one line. Values are separated by whitespace,
 * or by one comma with optional whitespace around it; a line may end in a
 * comma (Ripser's own files do). */
typedef struct tm_cursor {
    const char *start, *p, *end;
    uint64_t count; /* values returned so far */
    bool comment;   /* the line had a '#' comment after its values (or none) */
} tm_cursor;

static inline void tm_cursor_init(tm_cursor *c, const char *line, size_t len)
{
    c->start = line;
    c->p = line;
    c->end = line + len;
    c->count = 0;
    c->comment = false;
}

/* The next token of the line: 1 with *tok / *len set, 0 at the end of the
 * line, < 0 on a misplaced comma (reported). A token that starts with '#'
 * begins a comment, which ends the line. */
int tm_next_token(tm_reader *r, tm_cursor *c, const char **tok, size_t *len);

/* Kinds of value tm_next_value accepts. */
enum tm_value_kind {
    TM_COORDINATE, /* any finite number */
    TM_DISTANCE    /* a finite number >= 0 (-0 is read as 0) */
};

/* The next number of the line (decimal only, see docs/formats.md): 1 with
 * *x set, 0 at the end of the line, < 0 on an error (reported). */
int tm_next_value(tm_reader *r, tm_cursor *c, enum tm_value_kind kind, double *x);

/* Read one token as a number; `nth` (1-based) is its place on the line, for
 * messages. */
int tm_parse_number(tm_reader *r, const char *tok, size_t len, uint64_t nth,
                    enum tm_value_kind kind, double *x);

/* Read a token as a vertex index (decimal digits only). */
int tm_parse_index(tm_reader *r, const char *tok, size_t len, uint64_t *out);

/* Write a token into `out` for a message: quoted-safe, shortened. */
void tm_quote(char *out, size_t size, const char *tok, size_t len);

/* The shortest "%.*g" that reads back as x (up to 17 digits). */
void tm_fmt_double(char *out, size_t size, double x);

/* ---- binary ---- */

/* Read up to `size` bytes; *got is how many came (fewer only at the end).
 * Reports TOPOML_E_IO on a read error. */
int tm_read_bytes(tm_reader *r, void *dst, size_t size, size_t *got);

/* ---- triangles and matrices ---- */

/* n(n-1)/2, false when it does not fit in 64 bits. */
bool tm_condensed_count(uint64_t n, uint64_t *count);

/* The largest n with n(n-1)/2 <= count (n >= 1); true when equal. */
bool tm_triangular_n(uint64_t count, uint64_t *n);

/* Row and column (i > j) of entry k of a condensed matrix; the order does
 * not depend on n. */
void tm_condensed_pair(uint64_t k, uint64_t *i, uint64_t *j);

/* Index of d(i, j), i > j, in Ripser's condensed order. */
static inline uint64_t tm_condensed_index(uint64_t i, uint64_t j)
{
    return i * (i - 1) / 2 + j;
}

/* "N values is not n(n-1)/2 for any n (nearest: ...)" into out. */
void tm_count_reason(char *out, size_t size, uint64_t count);

/* Entries of a full square matrix (row i, column j, value x, already checked
 * finite and >= 0) arrive row by row. The upper entry (j > i) is parked in
 * the slot of its pair; the lower one (j < i) replaces it, so that the
 * matrix Ripser would read (its lower triangle) is what is kept. A non-zero
 * diagonal, or a pair that differs by more than a relative 1e-12, is
 * recorded in the reader (warned about once the read is done) or, when
 * r->strict, refused. */
int tm_matrix_entry(tm_reader *r, double *cond, uint64_t i, uint64_t j, double x);

/* ---- which layout, when no format is named (io_detect.c) ---- */

/* Look at the start of the input (without consuming it) and choose the
 * format: DIPHA by its magic number; text by the lengths of its first rows
 * (a square matrix, a lower or an upper triangle). `why` gets what was
 * seen, for messages. TOPOML_E_PARSE when no layout fits: reported, or
 * when `quiet` only returned. */
int tm_detect_format(tm_reader *r, topoml_format *out, char *why, size_t why_size, bool quiet);

/* ---- the parsers (one per file) ---- */

int tm_read_point_cloud(tm_reader *r, struct topoml_data *out);
int tm_read_lower_distance(tm_reader *r, struct topoml_data *out);
int tm_read_upper_distance(tm_reader *r, struct topoml_data *out);
int tm_read_distance(tm_reader *r, struct topoml_data *out);
int tm_read_sparse(tm_reader *r, struct topoml_data *out);
int tm_read_dipha(tm_reader *r, struct topoml_data *out);
int tm_read_binary(tm_reader *r, struct topoml_data *out);
int tm_read_npy(tm_reader *r, struct topoml_data *out);

/* ---- edges (data.c), shared by the sparse parser and topoml_data_from_edges ---- */

/* An edge as read, with where it came from (a line, or an array index). */
typedef struct tm_edge_rec {
    double d;
    uint32_t i, j; /* i < j */
    uint64_t where;
} tm_edge_rec;

/* Sort recs by (i, j, where), merge duplicates of equal value and compact
 * the array in place into topoml_edge (which is smaller), returning the new
 * count in *n_edges. When one pair comes twice with different values,
 * returns TOPOML_E_INVALID without reporting it, with the two records in
 * *first / *second, and leaves the array sorted but otherwise unchanged. */
int tm_edges_normalize(tm_edge_rec *recs, uint64_t count, uint64_t *n_edges, tm_edge_rec *first,
                       tm_edge_rec *second);

/* ---- the one door into the parsers (io.c; data.c calls it) ---- */

/* Read one data set in `format` from `f`; `name` is used in messages
 * ("name:line: reason"). On success *out is filled (arrays from tm_alloc); on
 * failure nothing is left allocated and the context holds the message. */
int tm_read_data(topoml_context *ctx, FILE *f, const char *name, topoml_format format,
                 struct topoml_data *out);

#endif /* TOPOML_IO_H */
