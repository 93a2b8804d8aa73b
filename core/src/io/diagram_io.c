/*
 * diagram_io.c — persistence diagrams of several dimensions
 * (topoml_diagram) and their files: topoml's JSON, Ripser's text output,
 * GUDHI's "dim birth death" lines and CSV; one reader and one writer each.
 *
 * A file is read whole into memory and parsed from there, which keeps line
 * and column numbers for messages simple. Every parse error is
 * "name:line: reason" (JSON: "name:line:column: reason"). The point cloud and
 * distance matrix readers are elsewhere (io_*.c); this file only knows
 * diagrams. docs/features.md describes the formats.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compute/features_internal.h"

typedef struct dim_pairs {
    topoml_pair *pairs;
    unsigned char *cut; /* cut[i]: pair i is cut off by the threshold */
    uint64_t n, cap;
} dim_pairs;

struct topoml_diagram {
    topoml_context *ctx;
    uint32_t n_dims;
    dim_pairs *dims;
    double threshold; /* of the barcode it came from; +INFINITY: none known */
};

/* ------------------------------------------------------------------------
 * The diagram object
 * ---------------------------------------------------------------------- */

int topoml_diagram_new(topoml_context *ctx, topoml_diagram **out)
{
    if (ctx == NULL)
        return TOPOML_E_INVALID;
    if (out == NULL)
        return tm_error(ctx, TOPOML_E_INVALID, "diagram_new: no output");
    *out = tm_calloc(ctx, 1, sizeof(topoml_diagram));
    if (*out == NULL)
        return tm_nomem(ctx, sizeof(topoml_diagram));
    (*out)->ctx = ctx;
    (*out)->threshold = INFINITY;
    return TOPOML_OK;
}

void topoml_diagram_free(topoml_diagram *d)
{
    if (d == NULL)
        return;
    for (uint32_t k = 0; k < d->n_dims; k++) {
        tm_free(d->ctx, d->dims[k].pairs);
        tm_free(d->ctx, d->dims[k].cut);
    }
    tm_free(d->ctx, d->dims);
    tm_free(d->ctx, d);
}

uint32_t topoml_diagram_dim_count(const topoml_diagram *d)
{
    return d != NULL ? d->n_dims : 0;
}

const topoml_pair *topoml_diagram_pairs(const topoml_diagram *d, uint32_t dim, uint64_t *n)
{
    if (d == NULL || dim >= d->n_dims) {
        if (n != NULL)
            *n = 0;
        return NULL;
    }
    if (n != NULL)
        *n = d->dims[dim].n;
    return d->dims[dim].pairs;
}

double topoml_diagram_threshold(const topoml_diagram *d)
{
    return d != NULL ? d->threshold : NAN;
}

int topoml_diagram_cut_off(const topoml_diagram *d, uint32_t dim, uint64_t k)
{
    if (d == NULL || dim >= d->n_dims || k >= d->dims[dim].n)
        return 0;
    return d->dims[dim].cut[k] != 0;
}

/* Make dimensions 0..dim present. */
static int ensure_dim(topoml_diagram *d, uint32_t dim)
{
    if (dim > TOPOML_DIAGRAM_MAX_DIM)
        return tm_error(d->ctx, TOPOML_E_INVALID, "diagram: dimension %u is above the limit %u",
                        dim, TOPOML_DIAGRAM_MAX_DIM);
    if (dim < d->n_dims)
        return TOPOML_OK;
    dim_pairs *dims = tm_realloc(d->ctx, d->dims, ((size_t)dim + 1) * sizeof(dim_pairs));
    if (dims == NULL)
        return tm_nomem(d->ctx, ((size_t)dim + 1) * sizeof(dim_pairs));
    memset(dims + d->n_dims, 0, ((size_t)dim + 1 - d->n_dims) * sizeof(dim_pairs));
    d->dims = dims;
    d->n_dims = dim + 1;
    return TOPOML_OK;
}

/* Append n pairs, all cut off by the threshold (cut) or none. */
static int append_marked(topoml_diagram *d, uint32_t dim, const topoml_pair *pairs, uint64_t n,
                         bool cut)
{
    int st = ensure_dim(d, dim);
    if (st)
        return st;
    dim_pairs *dp = &d->dims[dim];
    if (n > UINT64_MAX - dp->n || dp->n + n > SIZE_MAX / sizeof(topoml_pair))
        return tm_error(d->ctx, TOPOML_E_OVERFLOW, "diagram: too many pairs");
    if (dp->n + n > dp->cap) {
        uint64_t cap = dp->cap < 16 ? 16 : dp->cap;
        while (cap < dp->n + n)
            cap = cap > SIZE_MAX / sizeof(topoml_pair) / 2 ? dp->n + n : cap * 2;
        if ((st = tm_check_memory(d->ctx, cap * (sizeof(topoml_pair) + 1), "diagram pairs")))
            return st;
        topoml_pair *p = tm_realloc(d->ctx, dp->pairs, cap * sizeof(topoml_pair));
        if (p == NULL)
            return tm_nomem(d->ctx, cap * sizeof(topoml_pair));
        dp->pairs = p;
        unsigned char *c = tm_realloc(d->ctx, dp->cut, cap);
        if (c == NULL)
            return tm_nomem(d->ctx, cap);
        dp->cut = c;
        dp->cap = cap;
    }
    if (n > 0) {
        memcpy(dp->pairs + dp->n, pairs, n * sizeof(topoml_pair));
        memset(dp->cut + dp->n, cut ? 1 : 0, n);
    }
    dp->n += n;
    return TOPOML_OK;
}

static int append(topoml_diagram *d, uint32_t dim, const topoml_pair *pairs, uint64_t n)
{
    return append_marked(d, dim, pairs, n, false);
}

int topoml_diagram_add(topoml_diagram *d, uint32_t dim, const topoml_pair *pairs, uint64_t n)
{
    if (d == NULL)
        return TOPOML_E_INVALID;
    int st = tm_check_pairs(d->ctx, "diagram_add", pairs, n);
    return st ? st : append(d, dim, pairs, n);
}

int topoml_diagram_from_intervals(topoml_context *ctx, topoml_diagram **out,
                                  const topoml_interval *iv, uint64_t n)
{
    if (ctx == NULL)
        return TOPOML_E_INVALID;
    if (out == NULL || (n > 0 && iv == NULL))
        return tm_error(ctx, TOPOML_E_INVALID, "diagram_from_intervals: no input or output");
    topoml_diagram *d;
    int st = topoml_diagram_new(ctx, &d);
    if (st)
        return st;
    for (uint64_t i = 0; st == TOPOML_OK && i < n; i++) {
        topoml_pair p = {iv[i].birth, iv[i].death};
        st = tm_check_pairs(ctx, "diagram_from_intervals", &p, 1);
        if (st == TOPOML_OK)
            st = append(d, iv[i].dim, &p, 1);
    }
    if (st) {
        topoml_diagram_free(d);
        return st;
    }
    *out = d;
    return TOPOML_OK;
}

int topoml_diagram_from_barcode(topoml_context *ctx, topoml_diagram **out,
                                const topoml_barcode *bc)
{
    if (ctx == NULL)
        return TOPOML_E_INVALID;
    if (out == NULL || bc == NULL)
        return tm_error(ctx, TOPOML_E_INVALID, "diagram_from_barcode: NULL argument");
    uint64_t n = 0;
    const topoml_interval *iv = topoml_barcode_intervals(bc, &n);
    topoml_diagram *d;
    int st = topoml_diagram_new(ctx, &d);
    if (st)
        return st;
    for (uint64_t i = 0; st == TOPOML_OK && i < n; i++) {
        topoml_pair p = {iv[i].birth, iv[i].death};
        st = append_marked(d, iv[i].dim, &p, 1, topoml_barcode_cut_off(bc, i) == 1);
    }
    if (st) {
        topoml_diagram_free(d);
        return st;
    }
    d->threshold = topoml_barcode_threshold(bc);
    *out = d;
    return TOPOML_OK;
}

/* ------------------------------------------------------------------------
 * Formats by name
 * ---------------------------------------------------------------------- */

static const char *const format_names[] = {"auto", "json", "ripser", "gudhi", "csv"};

int topoml_diagram_format_from_name(const char *name, topoml_diagram_format *out)
{
    if (name == NULL || out == NULL)
        return TOPOML_E_INVALID;
    for (size_t i = 0; i < sizeof format_names / sizeof format_names[0]; i++)
        if (strcmp(name, format_names[i]) == 0) {
            *out = (topoml_diagram_format)i;
            return TOPOML_OK;
        }
    return TOPOML_E_NOT_FOUND;
}

const char *topoml_diagram_format_name(topoml_diagram_format format)
{
    if ((unsigned)format < sizeof format_names / sizeof format_names[0])
        return format_names[format];
    return "unknown";
}

/* ------------------------------------------------------------------------
 * Reading: shared
 * ---------------------------------------------------------------------- */

typedef struct reader {
    topoml_context *ctx;
    topoml_diagram *d;
    const char *name;
    const char *s; /* the whole input, NUL-terminated */
    size_t len;
    size_t pos;
    size_t line;       /* 1-based */
    size_t line_start; /* offset of the current line's first byte */
} reader;

static int slurp(topoml_context *ctx, FILE *f, const char *name, char **out, size_t *len)
{
    size_t cap = 4096, n = 0;
    char *buf = tm_alloc(ctx, cap);
    if (buf == NULL)
        return tm_nomem(ctx, cap);
    for (;;) {
        if (n + 1 >= cap) {
            if (cap > SIZE_MAX / 2) {
                tm_free(ctx, buf);
                return tm_error(ctx, TOPOML_E_OVERFLOW, "%s: file too large", name);
            }
            int st = tm_check_memory(ctx, cap * 2, "diagram file");
            char *nb = st ? NULL : tm_realloc(ctx, buf, cap * 2);
            if (nb == NULL) {
                tm_free(ctx, buf);
                return st ? st : tm_nomem(ctx, cap * 2);
            }
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - 1 - n, f);
        /* A NUL is refused as soon as it is read: binary data (/dev/zero)
         * must not grow the buffer to the memory limit first. */
        const char *nul = memchr(buf + n, '\0', got);
        if (nul != NULL) {
            size_t line = 1;
            for (const char *c = buf; c < nul; c++)
                line += *c == '\n';
            tm_free(ctx, buf);
            return tm_error(ctx, TOPOML_E_PARSE, "%s:%zu: NUL byte in a text file", name, line);
        }
        n += got;
        if (got == 0)
            break;
    }
    if (ferror(f)) {
        tm_free(ctx, buf);
        return tm_error(ctx, TOPOML_E_IO, "%s: read error", name);
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return TOPOML_OK;
}

static int parse_error(reader *r, const char *reason)
{
    return tm_error(r->ctx, TOPOML_E_PARSE, "%s:%zu: %s", r->name, r->line, reason);
}

/* A pair as read from a file: births finite, deaths >= births; `cut`: its
 * death is beyond the threshold (infinite), not essential. */
static int add_read_pair_marked(reader *r, long dim, double b, double d, bool cut)
{
    char msg[128];
    if (dim < 0 || dim > (long)TOPOML_DIAGRAM_MAX_DIM) {
        snprintf(msg, sizeof msg, "dimension %ld is not in 0..%u", dim, TOPOML_DIAGRAM_MAX_DIM);
        return parse_error(r, msg);
    }
    if (!isfinite(b)) {
        snprintf(msg, sizeof msg, "birth %g is not finite", b);
        return parse_error(r, msg);
    }
    if (isnan(d) || d < b) {
        snprintf(msg, sizeof msg, "death %g is below birth %g", d, b);
        return parse_error(r, msg);
    }
    topoml_pair p = {b, d};
    return append_marked(r->d, (uint32_t)dim, &p, 1, cut);
}

static int add_read_pair(reader *r, long dim, double b, double d)
{
    return add_read_pair_marked(r, dim, b, d, false);
}

/* Parse the whole of [s, s+n) as a double (strtod's syntax, which includes
 * "inf" and "infinity"); NaN is refused. */
static bool parse_double(const char *s, size_t n, double *out)
{
    char buf[64];
    if (n == 0 || n >= sizeof buf)
        return false;
    memcpy(buf, s, n);
    buf[n] = '\0';
    char *end;
    errno = 0;
    double v = strtod(buf, &end);
    if (end != buf + n || isnan(v))
        return false;
    /* Overflow to infinity is refused (a typo, not an infinite death), but
     * underflow to a tiny value or zero is as exact as a double gets. */
    if (errno == ERANGE && isinf(v) && !strchr(buf, 'i') && !strchr(buf, 'I'))
        return false;
    *out = v;
    return true;
}

static bool parse_dim(const char *s, size_t n, long *out)
{
    if (n == 0 || n > 9)
        return false;
    long v = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isdigit((unsigned char)s[i]))
            return false;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return true;
}

/* The next line as [*start, *end) without its newline or '\r'; false at the
 * end of the input. Advances r->line. */
static bool next_line(reader *r, const char **start, const char **end)
{
    if (r->pos >= r->len)
        return false;
    if (r->pos > 0)
        r->line++;
    const char *p = r->s + r->pos;
    const char *nl = memchr(p, '\n', r->len - r->pos);
    const char *e = nl != NULL ? nl : r->s + r->len;
    r->line_start = r->pos;
    r->pos = (size_t)(e - r->s) + (nl != NULL);
    if (e > p && e[-1] == '\r')
        e--;
    *start = p;
    *end = e;
    return true;
}

static const char *skip_space(const char *p, const char *e)
{
    while (p < e && isspace((unsigned char)*p))
        p++;
    return p;
}

static const char *trim_end(const char *p, const char *e)
{
    while (e > p && isspace((unsigned char)e[-1]))
        e--;
    return e;
}

/* ------------------------------------------------------------------------
 * Ripser's text
 * ---------------------------------------------------------------------- */

static const char ripser_header[] = "persistence intervals in dim ";

/* "persistence intervals in dim k:" (after leading space); true and *dim
 * if the line is one. */
static bool ripser_is_header(const char *p, const char *e, long *dim)
{
    size_t hl = sizeof ripser_header - 1;
    if ((size_t)(e - p) < hl || memcmp(p, ripser_header, hl) != 0)
        return false;
    p += hl;
    const char *q = p;
    while (q < e && isdigit((unsigned char)*q))
        q++;
    if (q == p || q >= e || *q != ':' || skip_space(q + 1, e) != e)
        return false;
    return parse_dim(p, (size_t)(q - p), dim);
}

static int read_ripser(reader *r)
{
    const char *p, *e;
    long dim = -1;
    while (next_line(r, &p, &e)) {
        p = skip_space(p, e);
        e = trim_end(p, e);
        long hd;
        if (ripser_is_header(p, e, &hd)) {
            if (hd > (long)TOPOML_DIAGRAM_MAX_DIM)
                return parse_error(r, "dimension above the limit");
            dim = hd;
            int st = ensure_dim(r->d, (uint32_t)dim);
            if (st)
                return st;
            continue;
        }
        /* Ripser prints what it read ("value range: ...", "distance matrix
         * with ...") before the first header; that is not part of the
         * diagram. */
        if (dim < 0 || p == e)
            continue;
        if (*p != '[' || e[-1] != ')')
            return parse_error(r, "expected an interval \" [birth,death)\" or \" [birth, )\"");
        const char *comma = memchr(p, ',', (size_t)(e - p));
        if (comma == NULL)
            return parse_error(r, "expected ',' in the interval");
        double b, d;
        if (!parse_double(p + 1, (size_t)(comma - p - 1), &b))
            return parse_error(r, "the birth is not a number");
        const char *q = skip_space(comma + 1, e - 1);
        if (q == e - 1)
            d = INFINITY;
        else if (!parse_double(q, (size_t)(e - 1 - q), &d))
            return parse_error(r, "the death is not a number");
        int st = add_read_pair(r, dim, b, d);
        if (st)
            return st;
    }
    /* An empty file is an empty diagram (what the writer makes of one);
     * text without a single header is not Ripser's output. */
    if (dim < 0 && skip_space(r->s, r->s + r->len) != r->s + r->len)
        return tm_error(r->ctx, TOPOML_E_PARSE,
                        "%s:%zu: no \"persistence intervals in dim k:\" line", r->name, r->line);
    return TOPOML_OK;
}

/* ------------------------------------------------------------------------
 * GUDHI's lines: [[field] dim] birth death, '#' comments
 * ---------------------------------------------------------------------- */

static int read_gudhi(reader *r)
{
    const char *p, *e;
    while (next_line(r, &p, &e)) {
        const char *tok[5], *tend[5];
        int nt = 0;
        p = skip_space(p, e);
        if (p == e || *p == '#')
            continue;
        while (p < e && nt < 5) {
            tok[nt] = p;
            while (p < e && !isspace((unsigned char)*p))
                p++;
            tend[nt++] = p;
            p = skip_space(p, e);
        }
        if (nt < 2 || nt > 4 || p < e)
            return parse_error(r, "expected \"dim birth death\" (2 to 4 fields)");
        long dim = 0, field;
        double b, d;
        if (nt == 4 && !parse_dim(tok[0], (size_t)(tend[0] - tok[0]), &field))
            return parse_error(r, "the coefficient field is not an integer");
        if (nt >= 3 && !parse_dim(tok[nt - 3], (size_t)(tend[nt - 3] - tok[nt - 3]), &dim))
            return parse_error(r, "the dimension is not a non-negative integer");
        if (!parse_double(tok[nt - 2], (size_t)(tend[nt - 2] - tok[nt - 2]), &b))
            return parse_error(r, "the birth is not a number");
        if (!parse_double(tok[nt - 1], (size_t)(tend[nt - 1] - tok[nt - 1]), &d))
            return parse_error(r, "the death is not a number");
        int st = add_read_pair(r, dim, b, d);
        if (st)
            return st;
    }
    return TOPOML_OK;
}

/* ------------------------------------------------------------------------
 * CSV: dim,birth,death
 * ---------------------------------------------------------------------- */

static int read_csv(reader *r)
{
    const char *p, *e;
    bool first = true;
    while (next_line(r, &p, &e)) {
        p = skip_space(p, e);
        e = trim_end(p, e);
        /* "# threshold T", as `topoml barcode --output csv` writes it. */
        static const char thr[] = "# threshold ";
        if ((size_t)(e - p) > sizeof thr - 1 && memcmp(p, thr, sizeof thr - 1) == 0) {
            double t;
            const char *v = skip_space(p + sizeof thr - 1, e);
            if (!parse_double(v, (size_t)(e - v), &t) || !(t >= 0))
                return parse_error(r, "the threshold is not a number >= 0");
            r->d->threshold = t;
            continue;
        }
        if (p == e || *p == '#')
            continue;
        const char *f[3], *fe[3];
        int nf = 0;
        const char *q = p;
        for (;;) {
            const char *c = memchr(q, ',', (size_t)(e - q));
            const char *end = c != NULL ? c : e;
            if (nf == 3)
                return parse_error(r, "expected 3 fields \"dim,birth,death\"");
            f[nf] = skip_space(q, end);
            fe[nf] = trim_end(f[nf], end);
            nf++;
            if (c == NULL)
                break;
            q = c + 1;
        }
        if (nf != 3)
            return parse_error(r, "expected 3 fields \"dim,birth,death\"");
        long dim;
        bool numeric = parse_dim(f[0], (size_t)(fe[0] - f[0]), &dim);
        if (first && !numeric) {
            first = false;
            if (fe[0] - f[0] == 3 && strncmp(f[0], "dim", 3) == 0 && fe[1] - f[1] == 5 &&
                strncmp(f[1], "birth", 5) == 0 && fe[2] - f[2] == 5 &&
                strncmp(f[2], "death", 5) == 0)
                continue;
            return parse_error(r, "expected the header \"dim,birth,death\" or a row");
        }
        first = false;
        double b, d;
        if (!numeric)
            return parse_error(r, "the dimension is not a non-negative integer");
        if (!parse_double(f[1], (size_t)(fe[1] - f[1]), &b))
            return parse_error(r, "the birth is not a number");
        /* "cut": alive at the threshold of `topoml barcode`, death unknown */
        bool cut = fe[2] - f[2] == 3 && strncmp(f[2], "cut", 3) == 0;
        if (fe[2] == f[2] || cut)
            d = INFINITY;
        else if (!parse_double(f[2], (size_t)(fe[2] - f[2]), &d))
            return parse_error(r, "the death is not a number");
        int st = add_read_pair_marked(r, dim, b, d, cut);
        if (st)
            return st;
    }
    return TOPOML_OK;
}

/* ------------------------------------------------------------------------
 * JSON: {"dims":[{"dim":0,"intervals":[[b,d],[b,null],...]},...]}
 *
 * A small recursive-descent parser for RFC 8259 JSON that understands this
 * schema and skips any other member, so that files carrying more (a
 * version, the backend that computed them) still read. Python's bare
 * Infinity is accepted for a death, since json.dumps writes it.
 * ---------------------------------------------------------------------- */

#define JSON_MAX_DEPTH 64

static int json_error(reader *r, const char *reason)
{
    return tm_error(r->ctx, TOPOML_E_PARSE, "%s:%zu:%zu: %s", r->name, r->line,
                    r->pos - r->line_start + 1, reason);
}

static void json_ws(reader *r)
{
    for (; r->pos < r->len; r->pos++) {
        char c = r->s[r->pos];
        if (c == '\n') {
            r->line++;
            r->line_start = r->pos + 1;
        } else if (c != ' ' && c != '\t' && c != '\r') {
            break;
        }
    }
}

static bool json_peek(reader *r, char c)
{
    json_ws(r);
    return r->pos < r->len && r->s[r->pos] == c;
}

static int json_expect(reader *r, char c)
{
    char msg[32];
    if (!json_peek(r, c)) {
        snprintf(msg, sizeof msg, "expected '%c'", c);
        return json_error(r, msg);
    }
    r->pos++;
    return TOPOML_OK;
}

/* A string; its decoded text goes to key (truncated; *fits false if it did
 * not fit), key may be NULL to skip. \u escapes are checked, not decoded:
 * the keys this reader looks for are plain ASCII. */
static int json_string(reader *r, char *key, size_t key_size, bool *fits)
{
    int st = json_expect(r, '"');
    if (st)
        return st;
    size_t k = 0;
    if (fits != NULL)
        *fits = true;
    for (;;) {
        if (r->pos >= r->len)
            return json_error(r, "unterminated string");
        unsigned char c = (unsigned char)r->s[r->pos++];
        if (c == '"')
            break;
        if (c < 0x20)
            return json_error(r, "control character in a string");
        if (c == '\\') {
            if (r->pos >= r->len)
                return json_error(r, "unterminated string");
            char esc = r->s[r->pos++];
            if (esc == 'u') {
                for (int i = 0; i < 4; i++, r->pos++)
                    if (r->pos >= r->len || !isxdigit((unsigned char)r->s[r->pos]))
                        return json_error(r, "bad \\u escape");
                c = '?';
            } else if (strchr("\"\\/bfnrt", esc) != NULL && esc != '\0') {
                c = (unsigned char)esc;
            } else {
                return json_error(r, "bad escape in a string");
            }
        }
        if (key != NULL) {
            if (k + 1 < key_size)
                key[k++] = (char)c;
            else if (fits != NULL)
                *fits = false;
        }
    }
    if (key != NULL && key_size > 0)
        key[k] = '\0';
    return TOPOML_OK;
}

/* A number by JSON's grammar, or (when allow_inf) Infinity / -Infinity. */
static int json_number(reader *r, double *out, bool allow_inf)
{
    json_ws(r);
    size_t start = r->pos, p = r->pos;
    const char *s = r->s;
    if (p < r->len && s[p] == '-')
        p++;
    if (allow_inf && r->len - p >= 8 && strncmp(s + p, "Infinity", 8) == 0) {
        *out = s[start] == '-' ? -INFINITY : INFINITY;
        r->pos = p + 8;
        return TOPOML_OK;
    }
    if (p < r->len && s[p] == '0') {
        p++;
    } else if (p < r->len && s[p] >= '1' && s[p] <= '9') {
        while (p < r->len && isdigit((unsigned char)s[p]))
            p++;
    } else {
        return json_error(r, "expected a number");
    }
    if (p < r->len && s[p] == '.') {
        p++;
        if (p >= r->len || !isdigit((unsigned char)s[p]))
            return json_error(r, "expected a digit after '.'");
        while (p < r->len && isdigit((unsigned char)s[p]))
            p++;
    }
    if (p < r->len && (s[p] == 'e' || s[p] == 'E')) {
        p++;
        if (p < r->len && (s[p] == '+' || s[p] == '-'))
            p++;
        if (p >= r->len || !isdigit((unsigned char)s[p]))
            return json_error(r, "expected a digit in the exponent");
        while (p < r->len && isdigit((unsigned char)s[p]))
            p++;
    }
    if (!parse_double(s + start, p - start, out))
        return json_error(r, "number out of range");
    r->pos = p;
    return TOPOML_OK;
}

static bool json_literal(reader *r, const char *word)
{
    size_t n = strlen(word);
    json_ws(r);
    if (r->len - r->pos >= n && strncmp(r->s + r->pos, word, n) == 0) {
        r->pos += n;
        return true;
    }
    return false;
}

static int json_skip(reader *r, int depth)
{
    if (depth > JSON_MAX_DEPTH)
        return json_error(r, "nested too deeply");
    json_ws(r);
    if (r->pos >= r->len)
        return json_error(r, "expected a value");
    char c = r->s[r->pos];
    int st;
    double v;
    if (c == '"')
        return json_string(r, NULL, 0, NULL);
    if (c == '{' || c == '[') {
        char close = c == '{' ? '}' : ']';
        r->pos++;
        if (json_peek(r, close)) {
            r->pos++;
            return TOPOML_OK;
        }
        for (;;) {
            if (c == '{') {
                if ((st = json_string(r, NULL, 0, NULL)) || (st = json_expect(r, ':')))
                    return st;
            }
            if ((st = json_skip(r, depth + 1)))
                return st;
            if (json_peek(r, ',')) {
                r->pos++;
                continue;
            }
            return json_expect(r, close);
        }
    }
    if (json_literal(r, "true") || json_literal(r, "false") || json_literal(r, "null"))
        return TOPOML_OK;
    return json_number(r, &v, true);
}

/* Iterate over the members of an object: *more is false after '}'. */
static int json_member(reader *r, bool first, char *key, size_t key_size, bool *fits, bool *more)
{
    int st;
    if (first) {
        if ((st = json_expect(r, '{')))
            return st;
        if (json_peek(r, '}')) {
            r->pos++;
            *more = false;
            return TOPOML_OK;
        }
    } else {
        if (json_peek(r, '}')) {
            r->pos++;
            *more = false;
            return TOPOML_OK;
        }
        if ((st = json_expect(r, ',')))
            return st;
    }
    *more = true;
    if ((st = json_string(r, key, key_size, fits)))
        return st;
    return json_expect(r, ':');
}

/* Same for the elements of an array: *more is false after ']'. */
static int json_element(reader *r, bool first, bool *more)
{
    int st;
    if (first) {
        if ((st = json_expect(r, '[')))
            return st;
    } else if (!json_peek(r, ']')) {
        if ((st = json_expect(r, ',')))
            return st;
        *more = true;
        return TOPOML_OK;
    }
    if (json_peek(r, ']')) {
        r->pos++;
        *more = false;
        return TOPOML_OK;
    }
    *more = true;
    return TOPOML_OK;
}

/* One {"dim": k, "intervals": [...]} object. The intervals may come before
 * "dim", so they are collected in `tmp` and added at the end. */
static int json_dim_object(reader *r, topoml_diagram *tmp)
{
    char key[16];
    bool fits, more, have_dim = false, have_intervals = false;
    long dim = 0;
    double cut_off = 0;
    size_t obj_line = r->line;
    int st = json_member(r, true, key, sizeof key, &fits, &more);
    tmp->dims[0].n = 0;
    while (st == TOPOML_OK && more) {
        if (fits && strcmp(key, "dim") == 0) {
            double v;
            if ((st = json_number(r, &v, false)))
                return st;
            if (v != floor(v) || v < 0 || v > TOPOML_DIAGRAM_MAX_DIM)
                return json_error(r, "\"dim\" must be an integer in 0..1023");
            dim = (long)v;
            have_dim = true;
        } else if (fits && strcmp(key, "cut_off") == 0) {
            if ((st = json_number(r, &cut_off, false)))
                return st;
            if (cut_off != floor(cut_off) || cut_off < 0)
                return json_error(r, "\"cut_off\" must be a whole number >= 0");
        } else if (fits && strcmp(key, "intervals") == 0) {
            have_intervals = true;
            bool emore;
            st = json_element(r, true, &emore);
            while (st == TOPOML_OK && emore) {
                double b, d;
                if ((st = json_expect(r, '[')) || (st = json_number(r, &b, false)) ||
                    (st = json_expect(r, ',')))
                    return st;
                if (json_literal(r, "null"))
                    d = INFINITY;
                else if ((st = json_number(r, &d, true)))
                    return st;
                if ((st = json_expect(r, ']')))
                    return st;
                if (!(d >= b)) {
                    char msg[96];
                    snprintf(msg, sizeof msg, "death %g is below birth %g", d, b);
                    return json_error(r, msg);
                }
                topoml_pair p = {b, d};
                if ((st = append(tmp, 0, &p, 1)))
                    return st;
                st = json_element(r, false, &emore);
            }
        } else {
            st = json_skip(r, 2);
        }
        if (st == TOPOML_OK)
            st = json_member(r, false, key, sizeof key, &fits, &more);
    }
    if (st)
        return st;
    if (!have_dim || !have_intervals)
        return tm_error(r->ctx, TOPOML_E_PARSE,
                        "%s:%zu: an entry of \"dims\" needs \"dim\" and \"intervals\"", r->name,
                        obj_line);
    /* "cut_off": c of the null deaths are cut off by the threshold, the
     * rest essential. `topoml barcode` counts them so: all null deaths of a
     * dimension are cut off, or all but one of H0 (born at 0 like the
     * others, so which one does not matter): the last c are marked. */
    const dim_pairs *t = &tmp->dims[0];
    uint64_t n_inf = 0;
    for (uint64_t i = 0; i < t->n; i++)
        n_inf += isinf(t->pairs[i].death) != 0;
    if (cut_off > (double)n_inf) {
        char msg[128];
        snprintf(msg, sizeof msg, "\"cut_off\" is %.0f but only %llu intervals have no death",
                 cut_off, (unsigned long long)n_inf);
        return tm_error(r->ctx, TOPOML_E_PARSE, "%s:%zu: %s", r->name, obj_line, msg);
    }
    uint64_t uncut = n_inf - (uint64_t)cut_off, seen = 0;
    int st2 = ensure_dim(r->d, (uint32_t)dim);
    for (uint64_t i = 0; st2 == TOPOML_OK && i < t->n; i++) {
        bool inf = isinf(t->pairs[i].death) != 0;
        st2 = append_marked(r->d, (uint32_t)dim, &t->pairs[i], 1, inf && seen++ >= uncut);
    }
    return st2;
}

static int read_json(reader *r)
{
    char key[16];
    bool fits, more, have_dims = false;
    topoml_diagram *tmp;
    int st = topoml_diagram_new(r->ctx, &tmp);
    if (st)
        return st;
    if ((st = ensure_dim(tmp, 0))) {
        topoml_diagram_free(tmp);
        return st;
    }
    st = json_member(r, true, key, sizeof key, &fits, &more);
    while (st == TOPOML_OK && more) {
        if (fits && strcmp(key, "threshold") == 0) {
            double t = INFINITY;
            if (!json_literal(r, "null")) {
                if ((st = json_number(r, &t, true)))
                    break;
                if (!(t >= 0)) {
                    st = json_error(r, "\"threshold\" must be a number >= 0 or null");
                    break;
                }
            }
            r->d->threshold = t;
        } else if (fits && strcmp(key, "dims") == 0) {
            have_dims = true;
            bool emore;
            st = json_element(r, true, &emore);
            while (st == TOPOML_OK && emore) {
                if ((st = json_dim_object(r, tmp)))
                    break;
                st = json_element(r, false, &emore);
            }
        } else {
            st = json_skip(r, 1);
        }
        if (st == TOPOML_OK)
            st = json_member(r, false, key, sizeof key, &fits, &more);
    }
    topoml_diagram_free(tmp);
    if (st)
        return st;
    json_ws(r);
    if (r->pos < r->len)
        return json_error(r, "unexpected text after the JSON object");
    if (!have_dims)
        return tm_error(r->ctx, TOPOML_E_PARSE, "%s:%zu: no \"dims\" member", r->name, r->line);
    return TOPOML_OK;
}

/* ------------------------------------------------------------------------
 * Reading: entry points
 * ---------------------------------------------------------------------- */

/* AUTO: JSON starts with '{'; Ripser's output has its header line; a
 * first data line with a comma is CSV; anything else is GUDHI's lines. */
static topoml_diagram_format detect(const char *s, size_t len)
{
    size_t i = 0;
    while (i < len && isspace((unsigned char)s[i]))
        i++;
    if (i < len && s[i] == '{')
        return TOPOML_DIAGRAM_JSON;
    if (strstr(s, ripser_header) != NULL)
        return TOPOML_DIAGRAM_RIPSER;
    while (i < len) {
        const char *nl = memchr(s + i, '\n', len - i);
        size_t end = nl != NULL ? (size_t)(nl - s) : len;
        size_t j = i;
        while (j < end && isspace((unsigned char)s[j]))
            j++;
        if (j < end && s[j] != '#')
            return memchr(s + j, ',', end - j) != NULL ? TOPOML_DIAGRAM_CSV : TOPOML_DIAGRAM_GUDHI;
        i = end + 1;
    }
    return TOPOML_DIAGRAM_GUDHI;
}

int topoml_diagram_read_stream(topoml_context *ctx, topoml_diagram **out, FILE *f, const char *name,
                               topoml_diagram_format format)
{
    if (ctx == NULL)
        return TOPOML_E_INVALID;
    if (out == NULL || f == NULL)
        return tm_error(ctx, TOPOML_E_INVALID, "diagram_read: no stream or no output");
    char escaped[TM_NAME_BUF];
    name = tm_escape_name(escaped, sizeof escaped, name == NULL ? "<stream>" : name);
    if ((unsigned)format > TOPOML_DIAGRAM_CSV)
        return tm_error(ctx, TOPOML_E_INVALID, "diagram_read: unknown format %d", (int)format);
    char *buf = NULL;
    size_t len = 0;
    int st = slurp(ctx, f, name, &buf, &len);
    if (st)
        return st;
    topoml_diagram *d;
    if ((st = topoml_diagram_new(ctx, &d))) {
        tm_free(ctx, buf);
        return st;
    }
    if (format == TOPOML_DIAGRAM_AUTO)
        format = detect(buf, len);
    reader r = {ctx, d, name, buf, len, 0, 1, 0};
    switch (format) {
    case TOPOML_DIAGRAM_JSON: st = read_json(&r); break;
    case TOPOML_DIAGRAM_RIPSER: st = read_ripser(&r); break;
    case TOPOML_DIAGRAM_CSV: st = read_csv(&r); break;
    default: st = read_gudhi(&r); break;
    }
    tm_free(ctx, buf);
    if (st) {
        topoml_diagram_free(d);
        return st;
    }
    *out = d;
    return TOPOML_OK;
}

int topoml_diagram_read(topoml_context *ctx, topoml_diagram **out, const char *path,
                        topoml_diagram_format format)
{
    if (ctx == NULL)
        return TOPOML_E_INVALID;
    if (path == NULL || out == NULL)
        return tm_error(ctx, TOPOML_E_INVALID, "diagram_read: NULL argument");
    if (strcmp(path, "-") == 0)
        return topoml_diagram_read_stream(ctx, out, stdin, "<stdin>", format);
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        int err = errno;
        char name[TM_NAME_BUF];
        return tm_error(ctx, err == ENOENT ? TOPOML_E_NOT_FOUND : TOPOML_E_IO, "%s: %s",
                        tm_escape_name(name, sizeof name, path), strerror(err));
    }
    int st = topoml_diagram_read_stream(ctx, out, f, path, format);
    fclose(f);
    return st;
}

/* ------------------------------------------------------------------------
 * Writing
 * ---------------------------------------------------------------------- */

int topoml_diagram_write(topoml_context *ctx, const topoml_diagram *d, FILE *f,
                         topoml_diagram_format format)
{
    if (ctx == NULL)
        return TOPOML_E_INVALID;
    if (d == NULL || f == NULL)
        return tm_error(ctx, TOPOML_E_INVALID, "diagram_write: no diagram or no stream");
    char b[TM_DOUBLE_BUF], e[TM_DOUBLE_BUF];
    switch (format) {
    case TOPOML_DIAGRAM_JSON:
        /* The threshold and the cut-off counts only where there are some,
         * so that a plain diagram's file stays as it was. */
        fputs("{", f);
        if (!isinf(d->threshold))
            fprintf(f, "\"threshold\":%s,", tm_format_double(b, d->threshold));
        fputs("\"dims\":[", f);
        for (uint32_t k = 0; k < d->n_dims; k++) {
            uint64_t cut = 0;
            fprintf(f, "%s\n  {\"dim\":%u,\"intervals\":[", k ? "," : "", k);
            for (uint64_t i = 0; i < d->dims[k].n; i++) {
                topoml_pair p = d->dims[k].pairs[i];
                fprintf(f, "%s[%s,%s]", i ? "," : "", tm_format_double(b, p.birth),
                        isinf(p.death) ? "null" : tm_format_double(e, p.death));
                cut += d->dims[k].cut[i];
            }
            fputs("]", f);
            if (cut > 0)
                fprintf(f, ",\"cut_off\":%llu", (unsigned long long)cut);
            fputs("}", f);
        }
        fputs(d->n_dims ? "\n]}\n" : "]}\n", f);
        break;
    case TOPOML_DIAGRAM_RIPSER:
        for (uint32_t k = 0; k < d->n_dims; k++) {
            fprintf(f, "persistence intervals in dim %u:\n", k);
            for (uint64_t i = 0; i < d->dims[k].n; i++) {
                topoml_pair p = d->dims[k].pairs[i];
                if (isinf(p.death))
                    fprintf(f, " [%s, )\n", tm_format_double(b, p.birth));
                else
                    fprintf(f, " [%s,%s)\n", tm_format_double(b, p.birth),
                            tm_format_double(e, p.death));
            }
        }
        break;
    case TOPOML_DIAGRAM_GUDHI:
    case TOPOML_DIAGRAM_CSV: {
        const bool csv = format == TOPOML_DIAGRAM_CSV;
        const char *sep = csv ? "," : " ";
        if (csv && !isinf(d->threshold))
            fprintf(f, "# threshold %s\n", tm_format_double(b, d->threshold));
        if (csv)
            fputs("dim,birth,death\n", f);
        for (uint32_t k = 0; k < d->n_dims; k++)
            for (uint64_t i = 0; i < d->dims[k].n; i++) {
                topoml_pair p = d->dims[k].pairs[i];
                fprintf(f, "%u%s%s%s%s\n", k, sep, tm_format_double(b, p.birth), sep,
                        csv && d->dims[k].cut[i] ? "cut" : tm_format_double(e, p.death));
            }
        break;
    }
    default:
        return tm_error(ctx, TOPOML_E_INVALID, "diagram_write: cannot write format %s",
                        topoml_diagram_format_name(format));
    }
    if (fflush(f) != 0 || ferror(f))
        return tm_error(ctx, TOPOML_E_IO, "diagram_write: %s", strerror(errno));
    return TOPOML_OK;
}
