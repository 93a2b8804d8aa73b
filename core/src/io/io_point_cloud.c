/*
 * io_point_cloud.c — the point-cloud format: one point per line, its
 * coordinates separated by whitespace or commas (Ripser's --format
 * point-cloud). Blank lines, '#' comments and a header line (column names)
 * before the first point are skipped; every other line must have as many
 * coordinates as the first. The result is a POINTS data set; distances are
 * the ops' business, not the reader's.
 */
#include <inttypes.h>

#include "io/io.h"

/* A header (CSV column names) is a first line none of whose values is a
 * number. Ripser skips every line that does not start with a number; only
 * this one is skipped here, since a later one is more likely a mistake. */
static bool is_header(tm_reader *r, const char *line, size_t len)
{
    tm_cursor c;
    const char *tok;
    size_t n;
    tm_cursor_init(&c, line, len);
    int st;
    while ((st = tm_next_token(r, &c, &tok, &n)) == 1)
        if (tm_is_number(tok, n))
            return false;
    return st == 0 && c.count > 0;
}

int tm_read_point_cloud(tm_reader *r, struct topoml_data *out)
{
    tm_vec v = {.elem = sizeof(double)};
    uint64_t n = 0, dim = 0, first_line = 0;
    char *line;
    size_t len;
    int st;

    while ((st = tm_text_line(r, &line, &len)) == 1) {
        tm_cursor c;
        double x;
        if (n == 0 && r->header_line == 0 && is_header(r, line, len)) {
            r->header_line = r->line;
            continue;
        }
        tm_cursor_init(&c, line, len);
        while ((st = tm_next_value(r, &c, TM_COORDINATE, &x)) == 1)
            if ((st = tm_vec_push_double(r, &v, x)) != TOPOML_OK)
                goto fail;
        if (st < 0)
            goto fail;
        if (c.count == 0)
            continue;
        if (n == 0) {
            dim = c.count;
            first_line = r->line;
        } else if (c.count != dim) {
            st = tm_fail(r, TOPOML_E_PARSE,
                         "%" PRIu64 " coordinates, expected %" PRIu64 " as on line %" PRIu64,
                         c.count, dim, first_line);
            goto fail;
        }
        n++;
    }
    if (st < 0)
        goto fail;
    if (n == 0) {
        st = tm_fail(r, TOPOML_E_PARSE,
                     r->bytes ? "empty input: no points, only blank lines" : "empty input");
        goto fail;
    }

    out->kind = TOPOML_INPUT_POINTS;
    out->n = n;
    out->dim = dim;
    out->values = tm_vec_take(r, &v);
    return TOPOML_OK;

fail:
    tm_vec_free(r, &v);
    return st;
}
