/*
 * io.c — reading data sets: tm_read_data picks the parser for a format, and
 * this file holds what every parser shares: the block-buffered line scanner,
 * the number grammar, memory-limited growth, byte reads for the binary
 * formats, triangular-count arithmetic and the check of one full-matrix
 * entry. The formats themselves live in io_<format>.c; docs/formats.md is
 * the user's description of all of them.
 *
 * Not here: data-set construction from memory and the public wrappers
 * (data.c), writing barcodes (barcode output is elsewhere).
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <inttypes.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "io/io.h"

/* Text is read in blocks of this size; a longer line grows the buffer. */
#define TM_BLOCK ((size_t)64 * 1024)

/* Relative tolerance between d(i,j) and d(j,i) of a full matrix. Matrices
 * computed entry by entry can differ in the last bits when the two halves
 * were summed in a different order; 1e-12 is thousands of ulps, far below
 * any difference that could change a barcode printed to 6 digits, and far
 * above rounding noise. */
#define TM_SYMMETRY_RTOL 1e-12

int tm_fail(tm_reader *r, int status, const char *fmt, ...)
{
    char reason[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    if (r->binary)
        return tm_error(r->ctx, status, "%s: byte %" PRIu64 ": %s", r->name, r->offset, reason);
    /* Errors found before the first line (an empty input) still name line 1. */
    return tm_error(r->ctx, status, "%s:%" PRIu64 ": %s", r->name, r->line ? r->line : 1, reason);
}

/* ---- memory ---- */

int tm_reader_check(tm_reader *r, uint64_t more, const char *what)
{
    uint64_t total;
    if (!tm_add_u64(r->held, more, &total) || total > SIZE_MAX)
        return tm_fail(r, TOPOML_E_OVERFLOW, "%s would need more memory than can be addressed",
                       what);
    int st = tm_check_memory(r->ctx, total, what);
    if (st != TOPOML_OK) {
        /* Keep the context's wording of the limit and add where it happened. */
        char why[512];
        snprintf(why, sizeof why, "%s", topoml_errmsg(r->ctx));
        return tm_fail(r, st, "%s", why);
    }
    return TOPOML_OK;
}

int tm_reader_alloc(tm_reader *r, uint64_t bytes, const char *what, void **out)
{
    *out = NULL;
    int st = tm_reader_check(r, bytes, what);
    if (st)
        return st;
    void *p = tm_alloc(r->ctx, (size_t)bytes);
    if (!p && bytes)
        return tm_fail(r, TOPOML_E_NOMEM, "out of memory: %" PRIu64 " bytes for %s", bytes, what);
    r->held += bytes;
    *out = p;
    return TOPOML_OK;
}

void tm_reader_free(tm_reader *r, void *p, uint64_t bytes)
{
    if (!p)
        return;
    tm_free(r->ctx, p);
    r->held -= bytes;
}

int tm_vec_grow(tm_reader *r, tm_vec *v, uint64_t need, const char *what)
{
    if (need <= v->cap)
        return TOPOML_OK;
    uint64_t cap = v->cap ? v->cap : 256;
    while (cap < need)
        if (!tm_mul_u64(cap, 2, &cap)) {
            cap = need;
            break;
        }
    uint64_t old_bytes = v->cap * v->elem;
    uint64_t limit = tm_max_memory(r->ctx);
    if (limit) {
        /* Grow no further than the limit leaves room for; if even `need`
         * does not fit, tm_reader_check below says so. */
        uint64_t others = r->held - old_bytes;
        uint64_t room = limit > others ? (limit - others) / v->elem : 0;
        if (cap > room)
            cap = room > need ? room : need;
    }
    uint64_t bytes;
    if (!tm_mul_u64(cap, v->elem, &bytes))
        return tm_fail(r, TOPOML_E_OVERFLOW, "%s would need more than 2^64 bytes", what);
    int st = tm_reader_check(r, bytes - old_bytes, what);
    if (st)
        return st;
    void *p = tm_realloc(r->ctx, v->p, (size_t)bytes);
    if (!p)
        return tm_fail(r, TOPOML_E_NOMEM, "out of memory: %" PRIu64 " bytes for %s", bytes, what);
    v->p = p;
    v->cap = cap;
    r->held += bytes - old_bytes;
    return TOPOML_OK;
}

void tm_vec_free(tm_reader *r, tm_vec *v)
{
    tm_reader_free(r, v->p, v->cap * v->elem);
    v->p = NULL;
    v->len = v->cap = 0;
}

void *tm_vec_take(tm_reader *r, tm_vec *v)
{
    void *p = v->p;
    if (v->len == 0) {
        tm_vec_free(r, v);
        return NULL;
    }
    if (v->len < v->cap) {
        void *q = tm_realloc(r->ctx, p, (size_t)(v->len * v->elem));
        if (q) { /* a failed shrink keeps the larger block, which is fine */
            p = q;
            r->held -= (v->cap - v->len) * v->elem;
        }
    }
    v->p = NULL;
    v->len = v->cap = 0;
    return p;
}

/* ---- text lines ---- */

static int finish_line(tm_reader *r, char *start, size_t n, char **line, size_t *len)
{
    r->line++;
    start[n] = '\0';
    if (n && start[n - 1] == '\r')
        start[--n] = '\0';
    const char *nul = memchr(start, '\0', n);
    if (nul)
        return tm_fail(r, TOPOML_E_PARSE,
                       "NUL byte in column %zu (binary data where text is expected?)",
                       (size_t)(nul - start) + 1);
    *line = start;
    *len = n;
    return 1;
}

/* The first buffer: a block, but no more than a small input needs, nor a
 * large share of a small memory limit (longer lines grow it, checked). */
static size_t first_block(const tm_reader *r)
{
    uint64_t cap = TM_BLOCK, limit = tm_max_memory(r->ctx);
    if (r->size_known && r->remaining + 2 < cap)
        cap = r->remaining + 2;
    if (limit) {
        uint64_t share = limit / 8 > 1024 ? limit / 8 : 1024;
        if (share < cap)
            cap = share;
    }
    return (size_t)cap;
}

/* Read more of the input into the buffer, after moving what is not yet
 * returned to its start and growing it when full. 1: something was read or
 * the end was reached just now; 0: the input had already ended; < 0: an
 * error (reported). */
static int fill_buffer(tm_reader *r)
{
    if (r->eof)
        return 0;
    if (r->pos > 0) {
        memmove(r->buf, r->buf + r->pos, r->end - r->pos);
        r->end -= r->pos;
        r->pos = 0;
    }
    if (r->cap - r->end < 2) {
        /* The first block, or a line longer than the buffer. */
        size_t cap = r->cap ? r->cap * 2 : first_block(r);
        int st = tm_reader_check(r, cap - r->cap, "the line buffer");
        if (st)
            return st;
        char *p = tm_realloc(r->ctx, r->buf, cap);
        if (!p)
            return tm_fail(r, TOPOML_E_NOMEM, "out of memory for a line of %zu bytes", r->end);
        r->held += cap - r->cap;
        r->buf = p;
        r->cap = cap;
    }
    size_t want = r->cap - 1 - r->end;
    size_t got = fread(r->buf + r->end, 1, want, r->f);
    r->end += got;
    r->bytes += got;
    if (got < want) {
        if (ferror(r->f))
            return tm_fail(r, TOPOML_E_IO, "read error: %s", strerror(errno));
        r->eof = true;
    }
    return 1;
}

/* A NUL is refused as soon as a text line's bytes are read, on the line it
 * is on: binary data without a newline (/dev/zero) must not grow the line
 * buffer to the memory limit first. `fresh` holds the `n` bytes just read;
 * the bytes before it, from r->pos, were read earlier (peeked, not refused:
 * format detection looks at binary headers). */
static int refuse_nul(tm_reader *r, const char *fresh, size_t n)
{
    const char *nul = memchr(fresh, '\0', n);
    if (!nul)
        return 0;
    const char *line_start = r->buf + r->pos;
    for (const char *c = line_start; c < nul; c++)
        if (*c == '\n') {
            r->line++;
            line_start = c + 1;
        }
    r->line++;
    return tm_fail(r, TOPOML_E_PARSE, "NUL byte in column %zu (binary data where text is expected?)",
                   (size_t)(nul - line_start) + 1);
}

int tm_text_line(tm_reader *r, char **line, size_t *len)
{
    for (;;) {
        char *start = r->buf ? r->buf + r->pos : NULL; /* no buffer before the first read */
        if (r->end > r->pos) {
            char *nl = memchr(start, '\n', r->end - r->pos);
            if (nl) {
                size_t n = (size_t)(nl - start);
                r->pos += n + 1;
                return finish_line(r, start, n, line, len);
            }
        }
        if (r->eof) {
            if (r->pos == r->end)
                return 0;
            /* The last line has no "\n"; buf[end] is free for its NUL
             * because a read never fills the last byte of the buffer. */
            size_t n = r->end - r->pos;
            r->pos = r->end;
            return finish_line(r, start, n, line, len);
        }
        size_t unread = r->end - r->pos;
        int st = fill_buffer(r);
        if (st < 0)
            return st;
        st = refuse_nul(r, r->buf + r->pos + unread, r->end - r->pos - unread);
        if (st < 0)
            return st;
    }
}

int tm_text_peek(tm_reader *r, uint64_t lines, uint64_t max_bytes, const char **text,
                 size_t *len)
{
    for (;;) {
        const char *start = r->buf ? r->buf + r->pos : NULL;
        size_t have = r->end - r->pos;
        uint64_t seen = 0;
        for (size_t k = 0; k < have && seen < lines; k++)
            if (start[k] == '\n')
                seen++;
        if (seen >= lines || r->eof || have >= max_bytes || (have && memchr(start, '\0', have))) {
            *text = start ? start : "";
            *len = have;
            return TOPOML_OK;
        }
        int st = fill_buffer(r);
        if (st < 0)
            return st;
    }
}

/* ---- tokens and numbers ---- */

static inline bool is_space(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\v' || ch == '\f';
}

static inline bool is_digit(char ch)
{
    return ch >= '0' && ch <= '9';
}

int tm_next_token(tm_reader *r, tm_cursor *c, const char **tok, size_t *len)
{
    const char *p = c->p, *end = c->end;
    while (p < end && is_space(*p))
        p++;
    if (p < end && *p == '#') {
        c->comment = true;
        p = end;
    }
    if (p < end && *p == ',') {
        if (c->count == 0)
            return tm_fail(r, TOPOML_E_PARSE, "empty value before the comma in column %zu",
                           (size_t)(p - c->start) + 1);
        p++;
        while (p < end && is_space(*p))
            p++;
        if (p < end && *p == ',')
            return tm_fail(r, TOPOML_E_PARSE, "empty value between two commas (column %zu)",
                           (size_t)(p - c->start) + 1);
        if (p < end && *p == '#') {
            c->comment = true;
            p = end;
        }
    }
    if (p == end) {
        c->p = p;
        return 0;
    }
    const char *t = p;
    while (p < end && !is_space(*p) && *p != ',')
        p++;
    *tok = t;
    *len = (size_t)(p - t);
    c->p = p;
    c->count++;
    return 1;
}

void tm_quote(char *out, size_t size, const char *tok, size_t len)
{
    const size_t max = 40;
    size_t k = 0;
    /* Messages are text: a byte outside printable ASCII (binary data read
     * as text) is written as \xHH. */
    for (size_t i = 0; i < len && i < max && k + 1 < size; i++) {
        unsigned char ch = (unsigned char)tok[i];
        if (ch >= 0x20 && ch < 0x7f) {
            out[k++] = (char)ch;
        } else if (k + 5 < size) {
            snprintf(out + k, size - k, "\\x%02x", ch);
            k += 4;
        } else {
            break;
        }
    }
    if (len > max)
        for (int i = 0; i < 3 && k + 1 < size; i++)
            out[k++] = '.';
    out[k] = '\0';
}

void tm_fmt_double(char *out, size_t size, double x)
{
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(out, size, "%.*g", prec, x);
        if (strtod(out, NULL) == x)
            return;
    }
}

/* [+-]? (digits [. digits*] | . digits) ([eE] [+-]? digits)? — what
 * Ripser's `stream >> value` reads, and a subset of strtod's grammar, so
 * strtod then consumes exactly the token. */
static bool is_decimal(const char *s, size_t n)
{
    size_t i = 0, digits = 0;
    if (i < n && (s[i] == '+' || s[i] == '-'))
        i++;
    for (; i < n && is_digit(s[i]); i++)
        digits++;
    if (i < n && s[i] == '.')
        for (i++; i < n && is_digit(s[i]); i++)
            digits++;
    if (digits == 0)
        return false;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        size_t exp_digits = 0;
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-'))
            i++;
        for (; i < n && is_digit(s[i]); i++)
            exp_digits++;
        if (exp_digits == 0)
            return false;
    }
    return i == n;
}

bool tm_is_number(const char *tok, size_t len)
{
    return is_decimal(tok, len);
}

/* Case-insensitive: does s[0..n) equal the lower-case word w? */
static bool word_is(const char *s, size_t n, const char *w)
{
    size_t k = 0;
    for (; k < n && w[k]; k++) {
        char ch = s[k];
        if (ch >= 'A' && ch <= 'Z')
            ch = (char)(ch - 'A' + 'a');
        if (ch != w[k])
            return false;
    }
    return k == n && !w[k];
}

int tm_parse_number(tm_reader *r, const char *tok, size_t len, uint64_t nth,
                    enum tm_value_kind kind, double *x)
{
    char q[48];
    if (!is_decimal(tok, len)) {
        tm_quote(q, sizeof q, tok, len);
        const char *s = tok;
        size_t n = len;
        if (n && (*s == '+' || *s == '-'))
            s++, n--;
        if (word_is(s, n, "nan") || (n > 4 && word_is(s, 4, "nan(") && s[n - 1] == ')'))
            return tm_fail(r, TOPOML_E_INVALID, "value %" PRIu64 " of the line is NaN ('%s')", nth,
                           q);
        if (word_is(s, n, "inf") || word_is(s, n, "infinity"))
            return tm_fail(r, TOPOML_E_INVALID, "value %" PRIu64 " of the line is Inf ('%s')", nth,
                           q);
        if (n > 1 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
            return tm_fail(r, TOPOML_E_PARSE,
                           "'%s' is a hexadecimal number; only decimal numbers are read "
                           "(value %" PRIu64 " of the line)",
                           q, nth);
        return tm_fail(r, TOPOML_E_PARSE, "'%s' is not a number (value %" PRIu64 " of the line)", q,
                       nth);
    }
    char *e;
    double v = strtod(tok, &e);
    if (e != tok + len) {
        tm_quote(q, sizeof q, tok, len);
        return tm_fail(r, TOPOML_E_INTERNAL, "strtod stopped inside '%s'", q);
    }
    if (isinf(v)) {
        tm_quote(q, sizeof q, tok, len);
        return tm_fail(r, TOPOML_E_INVALID,
                       "value %" PRIu64 " of the line ('%s') is too large for a double (Inf)", nth,
                       q);
    }
    if (kind == TM_DISTANCE) {
        if (v < 0) {
            tm_quote(q, sizeof q, tok, len);
            return tm_fail(r, TOPOML_E_INVALID,
                           "negative distance '%s' (value %" PRIu64 " of the line)", q, nth);
        }
        if (v == 0)
            v = 0.0; /* -0 reads as 0 */
    }
    *x = v;
    return TOPOML_OK;
}

int tm_next_value(tm_reader *r, tm_cursor *c, enum tm_value_kind kind, double *x)
{
    const char *tok;
    size_t len;
    int st = tm_next_token(r, c, &tok, &len);
    if (st <= 0)
        return st;
    st = tm_parse_number(r, tok, len, c->count, kind, x);
    return st ? st : 1;
}

int tm_parse_index(tm_reader *r, const char *tok, size_t len, uint64_t *out)
{
    char q[48];
    uint64_t v = 0;
    size_t i = 0;
    if (len > 1 && tok[0] == '-') {
        bool digits = true;
        for (size_t k = 1; k < len; k++)
            digits = digits && is_digit(tok[k]);
        if (digits) {
            tm_quote(q, sizeof q, tok, len);
            return tm_fail(r, TOPOML_E_INVALID, "negative vertex index '%s'", q);
        }
    }
    for (; i < len && is_digit(tok[i]); i++)
        if (!tm_mul_u64(v, 10, &v) || !tm_add_u64(v, (uint64_t)(tok[i] - '0'), &v)) {
            tm_quote(q, sizeof q, tok, len);
            return tm_fail(r, TOPOML_E_OVERFLOW, "vertex index '%s' does not fit in 64 bits", q);
        }
    if (i == 0 || i != len) {
        tm_quote(q, sizeof q, tok, len);
        return tm_fail(r, TOPOML_E_PARSE, "'%s' is not a vertex index (a non-negative integer)", q);
    }
    *out = v;
    return TOPOML_OK;
}

/* ---- binary ---- */

int tm_read_bytes(tm_reader *r, void *dst, size_t size, size_t *got)
{
    /* Bytes the format detection looked at are in the text buffer first. */
    size_t buffered = r->end - r->pos < size ? r->end - r->pos : size;
    if (buffered) {
        memcpy(dst, r->buf + r->pos, buffered);
        r->pos += buffered;
    }
    *got = buffered + fread((char *)dst + buffered, 1, size - buffered, r->f);
    r->bytes += *got;
    if (*got < size && ferror(r->f)) {
        r->offset = r->bytes;
        return tm_fail(r, TOPOML_E_IO, "read error: %s", strerror(errno));
    }
    return TOPOML_OK;
}

/* ---- triangles ---- */

bool tm_condensed_count(uint64_t n, uint64_t *count)
{
    if (n == 0) {
        *count = 0;
        return true;
    }
    uint64_t a = n, b = n - 1;
    if (a % 2 == 0)
        a /= 2;
    else
        b /= 2;
    return tm_mul_u64(a, b, count);
}

bool tm_triangular_n(uint64_t count, uint64_t *n)
{
    /* The double estimate is within a few units of the answer even for
     * counts near 2^64; the loops make it exact. */
    uint64_t k = (uint64_t)((1.0 + sqrt(1.0 + 8.0 * (double)count)) / 2.0);
    uint64_t t;
    if (k < 1)
        k = 1;
    while (k > 1 && (!tm_condensed_count(k, &t) || t > count))
        k--;
    while (tm_condensed_count(k + 1, &t) && t <= count)
        k++;
    tm_condensed_count(k, &t);
    *n = k;
    return t == count;
}

void tm_condensed_pair(uint64_t k, uint64_t *i, uint64_t *j)
{
    uint64_t row, start;
    tm_triangular_n(k, &row);
    tm_condensed_count(row, &start);
    *i = row;
    *j = k - start;
}

void tm_count_reason(char *out, size_t size, uint64_t count)
{
    uint64_t lo, lo_count, hi_count;
    tm_triangular_n(count, &lo);
    tm_condensed_count(lo, &lo_count);
    if (!tm_condensed_count(lo + 1, &hi_count))
        hi_count = UINT64_MAX;
    snprintf(out, size,
             "%" PRIu64 " value%s, which is not n(n-1)/2 for any n; the nearest are n = %" PRIu64
             " (%" PRIu64 " value%s) and n = %" PRIu64 " (%" PRIu64 " values)",
             count, count == 1 ? "" : "s", lo, lo_count, lo_count == 1 ? "" : "s", lo + 1,
             hi_count);
}

int tm_matrix_entry(tm_reader *r, double *cond, uint64_t i, uint64_t j, double x)
{
    char a[32], b[32];
    if (i == j) {
        if (x != 0) {
            if (r->strict) {
                tm_fmt_double(a, sizeof a, x);
                return tm_fail(r, TOPOML_E_INVALID,
                               "diagonal entry d(%" PRIu64 ",%" PRIu64 ") is %s, not 0", i, j, a);
            }
            if (r->diag_count++ == 0) {
                r->diag_i = i;
                r->diag_x = x;
            }
        }
        return TOPOML_OK;
    }
    if (j > i) {
        cond[tm_condensed_index(j, i)] = x;
        return TOPOML_OK;
    }
    double *slot = &cond[tm_condensed_index(i, j)];
    double y = *slot;
    if (x != y && fabs(x - y) > TM_SYMMETRY_RTOL * fmax(fabs(x), fabs(y))) {
        if (r->strict) {
            tm_fmt_double(a, sizeof a, x);
            tm_fmt_double(b, sizeof b, y);
            return tm_fail(r, TOPOML_E_INVALID,
                           "the matrix is not symmetric: d(%" PRIu64 ",%" PRIu64
                           ") = %s but d(%" PRIu64 ",%" PRIu64 ") = %s",
                           i, j, a, j, i, b);
        }
        if (r->asym_count++ == 0 || fabs(x - y) > r->asym_diff) {
            r->asym_diff = fabs(x - y);
            r->asym_i = i;
            r->asym_j = j;
            r->asym_low = x;
            r->asym_up = y;
        }
    }
    *slot = x;
    return TOPOML_OK;
}

/* One warning for everything a full matrix had that Ripser ignores. */
static void warn_matrix(tm_reader *r)
{
    char a[32], b[32], c[32];
    if (r->upper_empty)
        tm_log(r->ctx, TOPOML_LOG_WARN,
               "%s: the upper triangle is empty; read as the lower triangle, as Ripser reads a "
               "full matrix",
               r->name);
    if (r->asym_count) {
        tm_fmt_double(a, sizeof a, r->asym_low);
        tm_fmt_double(b, sizeof b, r->asym_up);
        snprintf(c, sizeof c, "%.3g", r->asym_diff);
        tm_log(r->ctx, TOPOML_LOG_WARN,
               "%s: the matrix is not symmetric (%" PRIu64 " pair%s; the largest "
               "difference is %s, at d(%" PRIu64 ",%" PRIu64 ") = %s but d(%" PRIu64 ",%" PRIu64
               ") = %s); the lower triangle is read, as Ripser reads it",
               r->name, r->asym_count, r->asym_count == 1 ? " differs" : "s differ", c, r->asym_i,
               r->asym_j, a,
               r->asym_j, r->asym_i, b);
    }
    if (r->diag_count) {
        tm_fmt_double(a, sizeof a, r->diag_x);
        tm_log(r->ctx, TOPOML_LOG_WARN,
               "%s: %" PRIu64 " diagonal entr%s not 0 (the first: d(%" PRIu64 ",%" PRIu64
               ") = %s); the diagonal is ignored, as Ripser ignores it",
               r->name, r->diag_count, r->diag_count == 1 ? "y is" : "ies are", r->diag_i,
               r->diag_i, a);
    }
}

/* ---- dispatch ---- */

typedef int (*tm_parser)(tm_reader *r, struct topoml_data *out);

/* When f is a regular file, how many bytes are left in it: the binary
 * formats then check their sizes before reading, and the text formats size
 * their first buffer. Pipes and terminals are read without it. */
static void size_hint(tm_reader *r)
{
    struct stat st;
    int fd = fileno(r->f);
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        return;
    off_t pos = ftello(r->f);
    if (pos < 0 || pos > st.st_size)
        return;
    r->size_known = true;
    r->remaining = (uint64_t)(st.st_size - pos);
}

static int read_as(tm_reader *r, topoml_format format, struct topoml_data *out);

int tm_read_data(topoml_context *ctx, FILE *f, const char *name, topoml_format format,
                 struct topoml_data *out)
{
    if (!ctx)
        return TOPOML_E_INVALID;
    if (!f || !out)
        return tm_error(ctx, TOPOML_E_INVALID, "reading a data set: no stream or no output");
    memset(out, 0, sizeof *out);
    char escaped[TM_NAME_BUF];
    name = tm_escape_name(escaped, sizeof escaped, name ? name : "<stream>");

    tm_reader r = {.ctx = ctx, .f = f, .name = name,
                   .strict = (ctx->read_flags & TOPOML_READ_STRICT_SYMMETRY) != 0};
    size_hint(&r);

    /* Numbers are written with '.', whatever LC_NUMERIC the host program
     * chose; strtod follows the thread's locale, so read in "C". */
    locale_t c_numeric = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    if (c_numeric == (locale_t)0)
        return tm_error(ctx, TOPOML_E_NOMEM, "%s: cannot make the C locale to read numbers", name);
    locale_t previous = uselocale(c_numeric);

    char why[256] = "";
    bool detected = false;
    int st = TOPOML_OK;
    if (format == TOPOML_FORMAT_AUTO) {
        st = tm_detect_format(&r, &format, why, sizeof why, false);
        detected = st == TOPOML_OK;
        r.line = 0;
    }
    if (st == TOPOML_OK)
        st = read_as(&r, format, out);
    uselocale(previous);
    freelocale(c_numeric);

    tm_reader_free(&r, r.buf, r.cap);
    if (st == TOPOML_OK) {
        out->format = (uint32_t)format;
        warn_matrix(&r);
        if (detected)
            tm_log(ctx, TOPOML_LOG_INFO, "%s: read as %s (%s)", name, topoml_format_name(format),
                   why);
        if (r.read_diagonal)
            tm_log(ctx, TOPOML_LOG_INFO,
                   "%s: the rows include the zero diagonal; read as %" PRIu64 " points", name,
                   out->n);
        if (r.header_line)
            tm_log(ctx, TOPOML_LOG_INFO, "%s:%" PRIu64 ": a header line, skipped", name,
                   r.header_line);
    } else if (detected) {
        /* Say which layout the message is about, and why it was chosen. */
        char msg[sizeof ctx->errmsg];
        snprintf(msg, sizeof msg, "%s", topoml_errmsg(ctx));
        tm_error(ctx, st,
                 "%s (read as %s, the layout detected: %s; point clouds and sparse edge lists "
                 "are read only when their format is named)",
                 msg, topoml_format_name(format), why);
    }
    return st;
}

static int read_as(tm_reader *r, topoml_format format, struct topoml_data *out)
{
    tm_parser parse;
    bool binary = false;
    switch (format) {
    case TOPOML_FORMAT_LOWER_DISTANCE: parse = tm_read_lower_distance; break;
    case TOPOML_FORMAT_UPPER_DISTANCE: parse = tm_read_upper_distance; break;
    case TOPOML_FORMAT_DISTANCE: parse = tm_read_distance; break;
    case TOPOML_FORMAT_POINT_CLOUD: parse = tm_read_point_cloud; break;
    case TOPOML_FORMAT_SPARSE: parse = tm_read_sparse; break;
    case TOPOML_FORMAT_DIPHA:
        parse = tm_read_dipha;
        binary = true;
        break;
    case TOPOML_FORMAT_BINARY:
        parse = tm_read_binary;
        binary = true;
        break;
    case TOPOML_FORMAT_NPY:
        parse = tm_read_npy;
        binary = true;
        break;
    default:
        return tm_error(r->ctx, TOPOML_E_INVALID, "%s: unknown input format %d", r->name,
                        (int)format);
    }
    if (binary) {
        r->binary = true;
        r->bytes = 0; /* offsets count from the start; peeked bytes are read again */
    }
    return parse(r, out);
}
