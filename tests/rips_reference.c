/*
 * rips_reference.c — the explicit Vietoris–Rips reference of the tests (see
 * rips_reference.h). Nothing clever on purpose: a simplex is the bitmask of
 * its vertices, the filtration is every simplex up to dimension max_dim + 1
 * sorted by (diameter, dimension, bitmask), and the boundary matrix is
 * reduced column by column, left to right, each column stored dense.
 * It shares no code with plugins/scalar/rips.c.
 */
#include "rips_reference.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct ref_simplex {
    uint32_t mask;
    uint32_t dim;
    double diam;
} ref_simplex;

static int simplex_cmp(const void *pa, const void *pb)
{
    const ref_simplex *a = pa, *b = pb;
    if (a->diam != b->diam)
        return a->diam < b->diam ? -1 : 1;
    if (a->dim != b->dim)
        return a->dim < b->dim ? -1 : 1;
    return a->mask < b->mask ? -1 : a->mask > b->mask;
}

int ref_bar_cmp(const void *pa, const void *pb)
{
    const ref_bar *a = pa, *b = pb;
    if (a->dim != b->dim)
        return a->dim < b->dim ? -1 : 1;
    if (a->birth != b->birth)
        return a->birth < b->birth ? -1 : 1;
    if (a->death != b->death)
        return a->death < b->death ? -1 : 1;
    return 0;
}

static uint32_t inverse_mod(uint32_t a, uint32_t p)
{
    for (uint32_t x = 1; x < p; x++)
        if ((uint64_t)a * x % p == 1)
            return x;
    return 0;
}

static int push_bar(ref_bar **bars, size_t *n, size_t *cap, uint32_t dim, double b, double d)
{
    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 16;
        ref_bar *nb = realloc(*bars, c * sizeof *nb);
        if (!nb)
            return -1;
        *bars = nb;
        *cap = c;
    }
    (*bars)[(*n)++] = (ref_bar){dim, b, d};
    return 0;
}

int ref_rips(uint32_t n, const double *d, uint32_t max_dim, double threshold, uint32_t p,
             ref_bar **bars, size_t *n_bars)
{
    *bars = NULL;
    *n_bars = 0;
    if (n > 12)
        return -1;
    uint32_t top = max_dim + 1; /* highest simplex dimension listed */
    size_t total = (size_t)1 << n, N = 0;
    ref_simplex *s = malloc((total ? total : 1) * sizeof *s);
    int32_t *where = malloc(total * sizeof *where);
    if (!s || !where) {
        free(s);
        free(where);
        return -1;
    }
    for (uint32_t mask = 1; mask < total; mask++) {
        uint32_t dim = (uint32_t)__builtin_popcount(mask) - 1;
        if (dim > top)
            continue;
        double diam = 0.0;
        for (uint32_t i = 0; i < n; i++)
            for (uint32_t j = i + 1; j < n; j++)
                if ((mask >> i & 1) && (mask >> j & 1) && d[i * n + j] > diam)
                    diam = d[i * n + j];
        /* Vertices are always there (at 0), as in Ripser; the rest only
         * up to the threshold, and never at infinite distance. */
        if (dim > 0 && (diam > threshold || diam == INFINITY))
            continue;
        s[N++] = (ref_simplex){mask, dim, diam};
    }
    qsort(s, N, sizeof *s, simplex_cmp);
    for (size_t k = 0; k < total; k++)
        where[k] = -1;
    for (size_t k = 0; k < N; k++)
        where[s[k].mask] = (int32_t)k;

    /* R[j] is column j of the reduced boundary matrix, dense over N rows. */
    uint16_t *R = calloc(N * N + 1, sizeof *R);
    int64_t *low = malloc((N + 1) * sizeof *low);
    int64_t *owner = malloc((N + 1) * sizeof *owner); /* column whose low is this row */
    size_t cap = 0;
    int rc = 0;
    if (!R || !low || !owner) {
        rc = -1;
        goto done;
    }
    for (size_t k = 0; k < N; k++)
        owner[k] = -1;
    for (size_t j = 0; j < N; j++) {
        uint16_t *col = R + j * N;
        /* boundary: sum over the vertices v_0 < ... < v_d of (-1)^i (s - v_i) */
        uint32_t i = 0;
        for (uint32_t v = 0; v < n && s[j].dim > 0; v++) {
            if (!(s[j].mask >> v & 1))
                continue;
            int32_t f = where[s[j].mask & ~(1u << v)];
            col[f] = (uint16_t)(i % 2 ? p - 1 : 1);
            i++;
        }
        for (;;) {
            int64_t l = -1;
            for (size_t r = N; r-- > 0;)
                if (col[r]) {
                    l = (int64_t)r;
                    break;
                }
            low[j] = l;
            if (l < 0 || owner[l] < 0)
                break;
            const uint16_t *other = R + (size_t)owner[l] * N;
            uint32_t factor =
                (uint32_t)((uint64_t)col[l] * inverse_mod(other[l], p) % p); /* col -= f*other */
            for (size_t r = 0; r < N; r++)
                col[r] = (uint16_t)((col[r] + (uint64_t)(p - factor) * other[r]) % p);
        }
        if (low[j] >= 0)
            owner[low[j]] = (int64_t)j;
    }
    for (size_t j = 0; j < N && rc == 0; j++) {
        if (low[j] >= 0) {
            const ref_simplex *b = &s[low[j]];
            if (b->dim <= max_dim && s[j].diam > b->diam)
                rc = push_bar(bars, n_bars, &cap, b->dim, b->diam, s[j].diam);
        } else if (owner[j] < 0 && s[j].dim <= max_dim) {
            rc = push_bar(bars, n_bars, &cap, s[j].dim, s[j].diam, INFINITY);
        }
    }
    if (rc == 0 && *n_bars > 0)
        qsort(*bars, *n_bars, sizeof **bars, ref_bar_cmp);
done:
    if (rc) {
        free(*bars);
        *bars = NULL;
        *n_bars = 0;
    }
    free(R);
    free(low);
    free(owner);
    free(s);
    free(where);
    return rc;
}
