/*
 * io_sparse.c — the sparse format: one edge per line, "i j d" with 0-based
 * vertex indices (Ripser's --format sparse). A pair may be written either
 * way round and is stored with i < j; the same pair twice with the same
 * value is one edge, with different values an error. Lines "i i 0" are
 * skipped as Ripser skips them (they do not make vertex i exist). n is the
 * largest index + 1. The result is a SPARSE data set.
 */
#include <inttypes.h>

#include "io/io.h"

int tm_read_sparse(tm_reader *r, struct topoml_data *out)
{
    tm_vec recs = {.elem = sizeof(tm_edge_rec)};
    uint64_t max_index = 0;
    bool any_value = false;
    char *line;
    size_t len;
    int st;

    while ((st = tm_text_line(r, &line, &len)) == 1) {
        tm_cursor c;
        const char *tok[3];
        size_t tok_len[3];
        const char *t;
        size_t t_len;
        tm_cursor_init(&c, line, len);
        while ((st = tm_next_token(r, &c, &t, &t_len)) == 1)
            if (c.count <= 3) {
                tok[c.count - 1] = t;
                tok_len[c.count - 1] = t_len;
            }
        if (st < 0)
            goto fail;
        if (c.count == 0)
            continue;
        any_value = true;
        if (c.count != 3) {
            st = tm_fail(r, TOPOML_E_PARSE, "%" PRIu64 " values, expected 3: \"i j d\"", c.count);
            goto fail;
        }

        uint64_t i, j;
        double d;
        if ((st = tm_parse_index(r, tok[0], tok_len[0], &i)) ||
            (st = tm_parse_index(r, tok[1], tok_len[1], &j)) ||
            (st = tm_parse_number(r, tok[2], tok_len[2], 3, TM_DISTANCE, &d)))
            goto fail;
        /* topoml_edge stores vertices as uint32_t, and n = index + 1 must
         * fit as well. */
        if (i >= UINT32_MAX || j >= UINT32_MAX) {
            st = tm_fail(r, TOPOML_E_OVERFLOW,
                         "vertex index %" PRIu64 " is larger than %" PRIu32
                         ", the largest topoml stores",
                         i > j ? i : j, (uint32_t)(UINT32_MAX - 1));
            goto fail;
        }
        if (i == j) {
            if (d != 0) {
                char a[32];
                tm_fmt_double(a, sizeof a, d);
                st = tm_fail(r, TOPOML_E_INVALID,
                             "d(%" PRIu64 ",%" PRIu64 ") = %s: a vertex is at distance 0 "
                             "from itself",
                             i, j, a);
                goto fail;
            }
            continue;
        }
        if (i > j) {
            uint64_t t_swap = i;
            i = j;
            j = t_swap;
        }
        if (recs.len == recs.cap &&
            (st = tm_vec_grow(r, &recs, recs.len + 1, "the edge list")) != TOPOML_OK)
            goto fail;
        ((tm_edge_rec *)(void *)recs.p)[recs.len++] =
            (tm_edge_rec){.d = d, .i = (uint32_t)i, .j = (uint32_t)j, .where = r->line};
        if (j > max_index)
            max_index = j;
    }
    if (st < 0)
        goto fail;
    if (!any_value) {
        st = tm_fail(r, TOPOML_E_PARSE,
                     r->bytes ? "empty input: no edges, only blank lines" : "empty input");
        goto fail;
    }

    uint64_t n_edges;
    tm_edge_rec first, second;
    if (tm_edges_normalize((tm_edge_rec *)(void *)recs.p, recs.len, &n_edges, &first, &second) !=
        TOPOML_OK) {
        char a[32], b[32];
        tm_fmt_double(a, sizeof a, second.d);
        tm_fmt_double(b, sizeof b, first.d);
        r->line = second.where;
        st = tm_fail(r, TOPOML_E_INVALID,
                     "d(%" PRIu32 ",%" PRIu32 ") = %s here but %s on line %" PRIu64, second.i,
                     second.j, a, b, first.where);
        goto fail;
    }

    /* The records became n_edges topoml_edge at the front of the array;
     * give back the rest. A failed shrink keeps the larger block. */
    topoml_edge *edges = NULL;
    if (n_edges > 0) {
        edges = (topoml_edge *)(void *)recs.p;
        topoml_edge *shrunk = tm_realloc(r->ctx, edges, (size_t)(n_edges * sizeof *edges));
        if (shrunk)
            edges = shrunk;
        recs.p = NULL;
    } else {
        tm_vec_free(r, &recs);
    }
    out->kind = TOPOML_INPUT_SPARSE;
    out->n = n_edges ? max_index + 1 : 0;
    out->n_edges = n_edges;
    out->edges = edges;
    return TOPOML_OK;

fail:
    tm_vec_free(r, &recs);
    return st;
}
