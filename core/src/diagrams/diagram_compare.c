/*
 * diagram_compare.c — the bounds on a plugin's answers and the comparison
 * of two barcodes (diagram_compare.h), one for the conformance suite and
 * run-time verification alike: the counts that must be equal, the first bar
 * that differs and the bottleneck distance (how far apart). Identical
 * diagrams, the usual case when a plugin is right, are recognised without a
 * matching.
 *
 * Not here: the matching itself (diagram_distance.c), and what is done
 * with a mismatch.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diagrams/diagram_compare.h"
#include "api/api.h"
#include "topoml/features.h"

tm_tolerance tm_distance_bound(uint32_t kind, uint32_t dtype, uint32_t metric, uint64_t dim,
                               double ulps)
{
    tm_tolerance t = {0, 0};
    if (kind != TOPOML_INPUT_POINTS)
        return t; /* the distances themselves: used as they are */
    const double eps = dtype == TOPOML_F32 ? (double)FLT_EPSILON : DBL_EPSILON;
    t.rel = ulps * ((double)dim + 2) * eps;
    t.abs = metric == TOPOML_METRIC_COSINE ? t.rel : 0;
    return t;
}

bool tm_within_bound(double got, double want, tm_tolerance t)
{
    if (isinf(want) || isinf(got))
        return got == want;
    return fabs(got - want) <= t.rel * fabs(want) + t.abs;
}

bool tm_edge_must_be_listed(double d_ref, double threshold, tm_tolerance t)
{
    return d_ref <= threshold &&
           (d_ref == threshold || threshold - d_ref > t.rel * fabs(d_ref) + t.abs);
}

bool tm_edge_may_be_listed(double d_ref, double threshold, tm_tolerance t)
{
    return d_ref <= threshold || d_ref - threshold <= t.rel * fabs(d_ref) + t.abs;
}

double tm_image_bound(const topoml_image_params_v1 *p, uint64_t n_pairs, uint32_t dtype,
                      double ulps)
{
    double w_max = 1;
    if (p->weight == TOPOML_WEIGHT_POWER) /* LINEAR's and CONSTANT's are at most 1 */
        w_max = pow(p->pers_max, p->weight_power);
    const double eps = dtype == TOPOML_F32 ? (double)FLT_EPSILON : DBL_EPSILON;
    return ulps * (double)(n_pairs + 2) * eps * (w_max > 1 ? w_max : 1);
}

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
    uint64_t k = 0;
    while (k < out->n_ref && k < out->n_got && pair_order(&r[k], &g[k]) == 0)
        k++;
    out->has_first_ref = k < out->n_ref;
    out->has_first_got = k < out->n_got;
    if (out->has_first_ref)
        out->first_ref = r[k];
    if (out->has_first_got)
        out->first_got = g[k];
    if (!out->has_first_ref && !out->has_first_got)
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

int tm_compare_barcodes(topoml_context *ctx, const topoml_interval *ref, uint64_t n_ref,
                        const topoml_interval *got, uint64_t n_got, uint32_t max_dim,
                        bool *differs, uint32_t *dim, tm_dim_comparison *c)
{
    *differs = false;
    for (uint32_t d = 0; d <= max_dim; d++) {
        int rc = tm_compare_dimension(ctx, ref, n_ref, got, n_got, d, 0, c);
        if (rc != TOPOML_OK && c->n_ref == 0 && c->n_got == 0 && !c->has_first_ref &&
            !c->has_first_got)
            return rc; /* no memory for the pairs */
        /* the bottleneck distance may have failed: the bars decide */
        if (c->has_first_ref || c->has_first_got) {
            *differs = true;
            *dim = d;
            return TOPOML_OK;
        }
    }
    return TOPOML_OK;
}

static void describe_bar(char *out, size_t size, bool has, topoml_pair p)
{
    if (has)
        snprintf(out, size, "[%.17g, %.17g)", p.birth, p.death);
    else
        snprintf(out, size, "no bar");
}

void tm_describe_difference(uint32_t dim, const tm_dim_comparison *c, char *out, size_t size)
{
    char got[96], want[96];
    describe_bar(got, sizeof got, c->has_first_got, c->first_got);
    describe_bar(want, sizeof want, c->has_first_ref, c->first_ref);
    snprintf(out, size,
             "H%u: %llu bars (%llu essential), the reference's %llu (%llu); first difference: %s "
             "where the reference has %s (bottleneck distance %.3g)",
             dim, (unsigned long long)c->n_got, (unsigned long long)c->essential_got,
             (unsigned long long)c->n_ref, (unsigned long long)c->essential_ref, got, want,
             c->bottleneck);
}
