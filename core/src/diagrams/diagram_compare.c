/*
 * diagram_compare.c — two barcodes compared dimension by dimension by the
 * conformance rule (diagram_compare.h): the counts that must be equal and
 * the bottleneck distance. Identical diagrams, the usual case when a
 * plugin is right, are recognised without a matching.
 *
 * Not here: the tolerance (verify.c and conformance/compare.c derive their
 * own from the input), the matching itself (diagram_distance.c), and what
 * is done with a mismatch.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diagrams/diagram_compare.h"
#include "api/api.h"
#include "topoml/features.h"

static int pair_order(const void *a, const void *b)
{
    const topoml_pair *x = a, *y = b;
    if (x->birth != y->birth)
        return x->birth < y->birth ? -1 : 1;
    return x->death < y->death ? -1 : x->death > y->death;
}

/* The bars of dimension d with positive length, sorted, into out. */
static uint64_t dim_pairs(const topoml_interval *iv, uint64_t n, uint32_t d, topoml_pair *out)
{
    uint64_t m = 0;
    for (uint64_t k = 0; k < n; k++)
        if (iv[k].dim == d && iv[k].death > iv[k].birth)
            out[m++] = (topoml_pair){iv[k].birth, iv[k].death};
    if (m > 1)
        qsort(out, (size_t)m, sizeof *out, pair_order);
    return m;
}

static void count(const topoml_pair *p, uint64_t n, double tol, uint64_t *essential,
                  uint64_t *longer)
{
    for (uint64_t k = 0; k < n; k++) {
        *essential += isinf(p[k].death);
        *longer += p[k].death - p[k].birth > 2 * tol;
    }
}

int tm_compare_dimension(topoml_context *ctx, const topoml_interval *ref, uint64_t n_ref,
                         const topoml_interval *got, uint64_t n_got, uint32_t dim, double tol,
                         tm_dim_comparison *out)
{
    memset(out, 0, sizeof *out);
    out->bottleneck = INFINITY;
    size_t bytes = (size_t)(n_ref + n_got + 1) * sizeof(topoml_pair);
    topoml_pair *r = tm_alloc(ctx, bytes);
    if (!r)
        return tm_nomem(ctx, bytes);
    out->n_ref = dim_pairs(ref, n_ref, dim, r);
    topoml_pair *g = r + out->n_ref;
    out->n_got = dim_pairs(got, n_got, dim, g);
    count(r, out->n_ref, tol, &out->essential_ref, &out->long_ref);
    count(g, out->n_got, tol, &out->essential_got, &out->long_got);
    int rc = TOPOML_OK;
    if (out->n_ref == out->n_got &&
        (out->n_ref == 0 || memcmp(r, g, (size_t)out->n_ref * sizeof *r) == 0))
        out->bottleneck = 0;
    else if (out->essential_ref == out->essential_got &&
             (rc = topoml_bottleneck_distance(ctx, r, out->n_ref, g, out->n_got,
                                              &out->bottleneck)) != TOPOML_OK)
        out->bottleneck = INFINITY;
    tm_free(ctx, r);
    return rc;
}

bool tm_dimension_matches(const tm_dim_comparison *c, double tol)
{
    return c->essential_ref == c->essential_got && c->long_ref == c->long_got &&
           c->bottleneck <= tol;
}
