/*
 * compare.c — how close is close enough: the tolerances of the suite and
 * the comparison of each op's answer with the reference.
 *
 * docs/conformance.md states every rule written here and why; in short:
 *  - a distance may differ from the reference by rel*|d| + abs, with
 *    rel = ulps * (dim + 2) * eps(dtype), the worst-case rounding error of a
 *    sum of dim non-negative terms plus a square root, for any summation
 *    order, taken twice (reference and plugin) with room to spare;
 *  - threshold edges are the reference's, except that a pair whose
 *    reference distance lies within that bound of the threshold may be in
 *    or out; given the distances themselves (condensed, sparse input) the
 *    list must be identical;
 *  - barcodes are persistence diagrams: per dimension, the bottleneck
 *    distance to the reference must not exceed the largest distance error
 *    allowed (the stability theorem: filtrations within delta of each other
 *    have diagrams within delta), and both must have the same number of
 *    bars longer than twice that (a shorter bar can be matched to the
 *    diagonal at a cost within the bound, so it may come or go).
 * The one comparison of diagrams is the core's (tm_compare_dimension,
 * core/src/diagrams/diagram_compare.c, which run-time verification uses too, over
 * topoml_bottleneck_distance): this file words the verdict.
 */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "conformance.h"
#include "diagrams/diagram_compare.h" /* internal: the one comparison of diagrams,
                                         shared with run-time verification */
#include "topoml/features.h"

static const char *result_names[TC_RESULT_COUNT] = {"PASS", "NOT_SUPPORTED", "QUALITY_WARNING",
                                                    "FAIL", "CRASH",         "TIMEOUT"};

const char *tc_result_name(tc_result r)
{
    return (unsigned)r < TC_RESULT_COUNT ? result_names[r] : "?";
}

bool tc_result_ok(tc_result r)
{
    return r == TC_PASS || r == TC_NOT_SUPPORTED || r == TC_QUALITY_WARNING;
}

static double eps_of(uint32_t dtype)
{
    return dtype == TOPOML_F32 ? (double)FLT_EPSILON : DBL_EPSILON;
}

tc_tolerance tc_distance_tolerance(const tc_case *c, uint64_t dim)
{
    tc_tolerance t = {0, 0};
    if (c->as != TOPOML_INPUT_POINTS)
        return t; /* the plugin is given the distances themselves */
    t.rel = c->tol_ulps * (double)(dim + 2) * eps_of(c->dtype);
    t.abs = c->metric == TOPOML_METRIC_COSINE ? t.rel : 0;
    return t;
}

double tc_barcode_tolerance(const tc_case *c, uint64_t dim, double max_dist)
{
    tc_tolerance t = tc_distance_tolerance(c, dim);
    double delta = t.rel * max_dist + t.abs;
    double floor = c->tol_ulps * eps_of(c->dtype) * max_dist;
    return delta > floor ? delta : floor;
}

double tc_image_tolerance(const tc_case *c, const topoml_image_params_v1 *p, uint64_t n_pairs)
{
    /* Each pair adds w * (Phi difference) * (Phi difference); each
     * difference of two erf values is off by a few eps absolute, so a pixel
     * may be off by about 4 eps * w per pair. */
    double w_max = 1;
    if (p->weight == TOPOML_WEIGHT_POWER)
        w_max = pow(p->pers_max, p->weight_power);
    return c->tol_ulps * (double)(n_pairs + 2) * eps_of(c->dtype) * (w_max > 1 ? w_max : 1);
}

double tc_ulp(double x, uint32_t dtype)
{
    x = fabs(x);
    if (!isfinite(x))
        return 0;
    if (dtype == TOPOML_F32) {
        float f = (float)x;
        return (double)nextafterf(f, INFINITY) - (double)f;
    }
    return nextafter(x, INFINITY) - x;
}

static double ratio_of(double err, double bound)
{
    return bound > 0 ? err / bound : (err > 0 ? INFINITY : 0);
}

void tc_grade(tc_verdict *v)
{
    if (isnan(v->error) || ratio_of(v->error, v->bound) > 1)
        v->result = TC_FAIL;
    else if (v->quality > TC_QUALITY_SHARE)
        v->result = TC_QUALITY_WARNING;
    else
        v->result = TC_PASS;
}

static void fail(tc_verdict *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(tc_verdict *v, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->detail, sizeof v->detail, fmt, ap);
    va_end(ap);
    v->result = TC_FAIL;
}

/* (i, j), i > j, of condensed index k. */
static void pair_of(uint64_t k, uint64_t *i, uint64_t *j)
{
    uint64_t r = (uint64_t)((1.0 + sqrt(1.0 + 8.0 * (double)k)) / 2.0);
    while (r * (r - 1) / 2 > k)
        r--;
    while ((r + 1) * r / 2 <= k)
        r++;
    *i = r;
    *j = k - r * (r - 1) / 2;
}

void tc_compare_distances(const double *ref, const void *got, uint32_t dtype, uint64_t count,
                          tc_tolerance tol, tc_verdict *v)
{
    double worst = -1;
    uint64_t at = 0;
    v->error = 0;
    v->bound = tol.rel + tol.abs;
    v->quality = 0;
    for (uint64_t k = 0; k < count; k++) {
        double g = dtype == TOPOML_F32 ? (double)((const float *)got)[k] : ((const double *)got)[k];
        double bound = tol.rel * fabs(ref[k]) + tol.abs;
        double err = fabs(g - ref[k]);
        if (isnan(g) || (isinf(g) && g != ref[k]))
            err = INFINITY;
        else if (g == ref[k])
            err = 0;
        double ratio = ratio_of(err, bound);
        if (err > tc_ulp(ref[k], dtype) && ratio > v->quality)
            v->quality = ratio;
        if (ratio > worst) {
            worst = ratio;
            at = k;
            v->error = err;
            v->bound = bound;
        }
    }
    tc_grade(v);
    if (count == 0) {
        snprintf(v->detail, sizeof v->detail, "no pairs");
        return;
    }
    uint64_t i, j;
    pair_of(at, &i, &j);
    double g = dtype == TOPOML_F32 ? (double)((const float *)got)[at] : ((const double *)got)[at];
    snprintf(v->detail, sizeof v->detail,
             "%s: worst d(%llu,%llu) = %.17g, reference %.17g, error %.3g, bound %.3g",
             v->result == TC_FAIL ? "distance out of bound" : "max error", (unsigned long long)i,
             (unsigned long long)j, g, ref[at], v->error, v->bound);
}

static bool edge_before(const topoml_edge *a, const topoml_edge *b)
{
    return a->d < b->d || (a->d == b->d && (a->i < b->i || (a->i == b->i && a->j < b->j)));
}

void tc_compare_edges(const double *ref_dist, uint64_t n, const topoml_edge *ref_edges,
                      uint64_t n_ref, const topoml_edge *got, uint64_t n_got, double threshold,
                      tc_tolerance tol, uint32_t dtype, tc_verdict *v)
{
    v->error = 0;
    v->bound = 0;
    v->quality = 0;
    for (uint64_t k = 0; k < n_got; k++) {
        const topoml_edge *e = &got[k];
        if (!(e->i < e->j) || e->j >= n || isnan(e->d) || !(e->d <= threshold))
            return fail(v,
                        "edge %llu (%u-%u at %.17g) is not a pair i < j < %llu within the "
                        "threshold %g",
                        (unsigned long long)k, e->i, e->j, e->d, (unsigned long long)n, threshold);
        if (k > 0 && !edge_before(&got[k - 1], e))
            return fail(v,
                        "edges %llu and %llu are out of (d, i, j) order: (%.17g, %u, %u) then "
                        "(%.17g, %u, %u)",
                        (unsigned long long)k - 1, (unsigned long long)k, got[k - 1].d,
                        got[k - 1].i, got[k - 1].j, e->d, e->i, e->j);
    }
    if (!ref_dist || (tol.rel == 0 && tol.abs == 0)) {
        /* Same distances in, so the same list out, to the bit. */
        for (uint64_t k = 0; k < n_got && k < n_ref; k++)
            if (got[k].d != ref_edges[k].d || got[k].i != ref_edges[k].i ||
                got[k].j != ref_edges[k].j)
                return fail(v, "edge %llu is (%.17g, %u, %u), reference (%.17g, %u, %u)",
                            (unsigned long long)k, got[k].d, got[k].i, got[k].j, ref_edges[k].d,
                            ref_edges[k].i, ref_edges[k].j);
        if (n_got != n_ref)
            return fail(v, "%llu edges, reference %llu", (unsigned long long)n_got,
                        (unsigned long long)n_ref);
        v->result = TC_PASS;
        snprintf(v->detail, sizeof v->detail, "%llu edges, identical", (unsigned long long)n_got);
        return;
    }
    uint64_t pairs = n * (n ? n - 1 : 0) / 2;
    unsigned char *seen = calloc(pairs / 8 + 1, 1);
    if (!seen)
        return fail(v, "the test harness ran out of memory");
    uint64_t borderline = 0;
    double worst = -1;
    for (uint64_t k = 0; k < n_got; k++) {
        const topoml_edge *e = &got[k];
        uint64_t idx = (uint64_t)e->j * (e->j - 1) / 2 + e->i;
        if (seen[idx / 8] & (1u << (idx % 8))) {
            free(seen);
            return fail(v, "pair %u-%u listed twice", e->i, e->j);
        }
        seen[idx / 8] |= (unsigned char)(1u << (idx % 8));
        double dref = ref_dist[idx], bound = tol.rel * fabs(dref) + tol.abs;
        double err = e->d == dref ? 0 : fabs(e->d - dref);
        double ratio = ratio_of(err, bound);
        if (err > tc_ulp(dref, dtype) && ratio > v->quality)
            v->quality = ratio;
        if (ratio > 1) {
            free(seen);
            return fail(v, "edge %u-%u at %.17g, reference distance %.17g, error %.3g > bound %.3g",
                        e->i, e->j, e->d, dref, err, bound);
        }
        if (ratio > worst) {
            worst = ratio;
            v->error = err;
            v->bound = bound;
        }
        if (dref > threshold) {
            if (dref - threshold > bound) {
                free(seen);
                return fail(v,
                            "edge %u-%u listed, but its reference distance %.17g is beyond "
                            "the threshold %.17g",
                            e->i, e->j, dref, threshold);
            }
            borderline++;
        }
    }
    for (uint64_t idx = 0; idx < pairs; idx++) {
        if (seen[idx / 8] & (1u << (idx % 8)) || !(ref_dist[idx] <= threshold))
            continue;
        double bound = tol.rel * fabs(ref_dist[idx]) + tol.abs;
        uint64_t i, j;
        pair_of(idx, &i, &j);
        if (threshold - ref_dist[idx] > bound) {
            free(seen);
            return fail(v,
                        "edge %llu-%llu at reference distance %.17g is missing (threshold "
                        "%.17g)",
                        (unsigned long long)j, (unsigned long long)i, ref_dist[idx], threshold);
        }
        borderline++;
    }
    free(seen);
    tc_grade(v);
    /* In or out by the tie rule is allowed, but worth a look. */
    if (borderline && v->result == TC_PASS)
        v->result = TC_QUALITY_WARNING;
    snprintf(v->detail, sizeof v->detail,
             "%llu edges (reference %llu), %llu decided differently within the bound of the "
             "threshold; max distance error %.3g, bound %.3g",
             (unsigned long long)n_got, (unsigned long long)n_ref, (unsigned long long)borderline,
             v->error, v->bound);
}

void tc_compare_barcodes(topoml_context *ctx, const topoml_interval *ref, uint64_t n_ref,
                         const topoml_interval *got, uint64_t n_got, uint32_t max_dim, double tol,
                         double last_bit, tc_verdict *v)
{
    v->error = 0;
    v->bound = tol;
    v->quality = 0;
    uint32_t last = 0;
    for (uint64_t k = 0; k < n_got; k++) {
        const topoml_interval *b = &got[k];
        if (b->dim < last || b->dim > max_dim)
            return fail(v,
                        "interval %llu has dimension %u: intervals must be grouped by "
                        "dimension ascending, within 0..%u",
                        (unsigned long long)k, b->dim, max_dim);
        last = b->dim;
        if (isnan(b->birth) || isnan(b->death) || !isfinite(b->birth) || b->death < b->birth)
            return fail(v, "interval %llu of H%u is [%g, %g): not an interval",
                        (unsigned long long)k, b->dim, b->birth, b->death);
        if (b->death == b->birth)
            return fail(v,
                        "interval %llu of H%u has zero length at %g: such bars are not "
                        "reported",
                        (unsigned long long)k, b->dim, b->birth);
    }
    uint32_t worst_dim = 0;
    for (uint32_t d = 0; d <= max_dim; d++) {
        tm_dim_comparison c;
        int rc = tm_compare_dimension(ctx, ref, n_ref, got, n_got, d, tol, &c);
        if (c.essential_got != c.essential_ref)
            return fail(v, "H%u: %llu essential classes (infinite bars), reference %llu", d,
                        (unsigned long long)c.essential_got, (unsigned long long)c.essential_ref);
        if (rc != TOPOML_OK)
            return fail(v, "H%u: bottleneck distance failed: %s", d, topoml_errmsg(ctx));
        if (c.long_got != c.long_ref)
            return fail(v,
                        "H%u: %llu bars longer than %.3g, reference %llu (bottleneck distance "
                        "%.3g)",
                        d, (unsigned long long)c.long_got, 2 * tol,
                        (unsigned long long)c.long_ref, c.bottleneck);
        if (!tm_dimension_matches(&c, tol))
            return fail(v,
                        "H%u: bottleneck distance %.6g to the reference exceeds the tolerance "
                        "%.3g",
                        d, c.bottleneck, tol);
        if (c.bottleneck > v->error) {
            v->error = c.bottleneck;
            worst_dim = d;
        }
    }
    if (v->error > last_bit)
        v->quality = ratio_of(v->error, tol);
    tc_grade(v);
    snprintf(v->detail, sizeof v->detail,
             "%llu bars (reference %llu); max bottleneck %.3g (H%u), "
             "tolerance %.3g",
             (unsigned long long)n_got, (unsigned long long)n_ref, v->error, worst_dim, tol);
}

void tc_compare_images(const double *ref, const double *got, uint64_t count, double tol,
                       tc_verdict *v)
{
    v->error = 0;
    v->bound = tol;
    v->quality = 0;
    uint64_t at = 0;
    for (uint64_t k = 0; k < count; k++) {
        double err = isnan(got[k]) ? INFINITY : fabs(got[k] - ref[k]);
        if (err > tc_ulp(ref[k], TOPOML_F64) && ratio_of(err, tol) > v->quality)
            v->quality = ratio_of(err, tol);
        if (err > v->error) {
            v->error = err;
            at = k;
        }
    }
    tc_grade(v);
    snprintf(v->detail, sizeof v->detail, "%s: pixel %llu = %.17g, reference %.17g, bound %.3g",
             v->result == TC_FAIL ? "pixel out of bound" : "max pixel error",
             (unsigned long long)at, count ? got[at] : 0.0, count ? ref[at] : 0.0, tol);
}

/* ---- generators ---- */

typedef struct gen_row {
    uint32_t dim, b0, b1, d0, d1;
} gen_row;

static int gen_row_cmp(const void *a, const void *b)
{
    const gen_row *x = a, *y = b;
    const uint32_t kx[5] = {x->dim, x->b0, x->b1, x->d0, x->d1};
    const uint32_t ky[5] = {y->dim, y->b0, y->b1, y->d0, y->d1};
    for (int t = 0; t < 5; t++)
        if (kx[t] != ky[t])
            return kx[t] < ky[t] ? -1 : 1;
    return 0;
}

static int double_cmp(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Does one edge (e[0], e[1]) of the input have length exactly `value`?
 * Distances as the plugin sees them: ref->dist, or a SPARSE input's edges. */
static bool edge_has_length(const tc_reference *ref, const tc_input *in, const uint32_t *e,
                            double value)
{
    if (!(e[0] < e[1] && e[1] < in->n))
        return false;
    if (in->kind == TOPOML_INPUT_SPARSE) {
        for (uint64_t k = 0; k < in->n_edges; k++)
            if (in->edges[k].i == e[0] && in->edges[k].j == e[1])
                return in->edges[k].d == value;
        return false;
    }
    const uint64_t hi = e[1], lo = e[0];
    return ref->dist[hi * (hi - 1) / 2 + lo] == value;
}

/* No two finite distances of the input are equal. */
static bool no_ties(const tc_reference *ref, const tc_input *in, bool *oom)
{
    const bool sparse = in->kind == TOPOML_INPUT_SPARSE;
    const uint64_t count = sparse ? in->n_edges : ref->n_pairs;
    double *d = malloc((count ? count : 1) * sizeof *d);
    if (!d) {
        *oom = true;
        return false;
    }
    uint64_t m = 0;
    for (uint64_t k = 0; k < count; k++) {
        const double x = sparse ? in->edges[k].d : ref->dist[k];
        if (isfinite(x))
            d[m++] = x;
    }
    qsort(d, m, sizeof *d, double_cmp);
    bool unique = true;
    for (uint64_t k = 1; k < m && unique; k++)
        unique = d[k] != d[k - 1];
    free(d);
    return unique;
}

void tc_compare_generators(const tc_reference *ref, const tc_input *in, const topoml_interval *bars,
                           const topoml_generator *gens, uint64_t n_bars, tc_verdict *v)
{
    uint64_t kept = 0;
    for (uint64_t k = 0; k < n_bars; k++) {
        const topoml_interval *b = &bars[k];
        const topoml_generator *g = &gens[k];
        if (!(b->death > b->birth))
            continue; /* zero length: not a bar */
        kept++;
        const bool birth_ok = b->dim == 0 ? g->birth[0] == TOPOML_NO_VERTEX &&
                                                g->birth[1] == TOPOML_NO_VERTEX
                                          : edge_has_length(ref, in, g->birth, b->birth);
        const bool death_ok = isinf(b->death) ? g->death[0] == TOPOML_NO_VERTEX &&
                                                    g->death[1] == TOPOML_NO_VERTEX
                                              : edge_has_length(ref, in, g->death, b->death);
        if (!birth_ok || !death_ok) {
            v->result = TC_FAIL;
            snprintf(v->detail, sizeof v->detail,
                     "generators: interval %llu (dim %u, [%.17g, %.17g)) has %s edge (%u, %u), "
                     "which is not an edge of that length",
                     (unsigned long long)k, b->dim, b->birth, b->death,
                     birth_ok ? "death" : "birth", birth_ok ? g->death[0] : g->birth[0],
                     birth_ok ? g->death[1] : g->birth[1]);
            return;
        }
    }
    if (!ref->gens)
        return;
    bool oom = false;
    if (!no_ties(ref, in, &oom)) {
        if (oom) {
            v->result = TC_FAIL;
            snprintf(v->detail, sizeof v->detail, "the test harness ran out of memory");
        }
        return; /* with ties, another edge of the same length is as right */
    }
    gen_row *got = malloc((kept ? kept : 1) * sizeof *got);
    gen_row *want = malloc((ref->n_bars ? ref->n_bars : 1) * sizeof *want);
    if (!got || !want) {
        free(got);
        free(want);
        v->result = TC_FAIL;
        snprintf(v->detail, sizeof v->detail, "the test harness ran out of memory");
        return;
    }
    uint64_t m = 0;
    for (uint64_t k = 0; k < n_bars; k++)
        if (bars[k].death > bars[k].birth)
            got[m++] = (gen_row){bars[k].dim, gens[k].birth[0], gens[k].birth[1],
                                 gens[k].death[0], gens[k].death[1]};
    for (uint64_t k = 0; k < ref->n_bars; k++)
        want[k] = (gen_row){ref->bars[k].dim, ref->gens[k].birth[0], ref->gens[k].birth[1],
                            ref->gens[k].death[0], ref->gens[k].death[1]};
    qsort(got, m, sizeof *got, gen_row_cmp);
    qsort(want, ref->n_bars, sizeof *want, gen_row_cmp);
    uint64_t k = 0;
    while (k < m && k < ref->n_bars && gen_row_cmp(&got[k], &want[k]) == 0)
        k++;
    if (k < m || k < ref->n_bars) {
        v->result = TC_FAIL;
        const gen_row *x = k < m ? &got[k] : &want[k];
        snprintf(v->detail, sizeof v->detail,
                 "generators differ from the reference's on an input without ties "
                 "(%llu and %llu bars); first difference: %s dim %u birth (%u, %u) death (%u, %u)",
                 (unsigned long long)m, (unsigned long long)ref->n_bars,
                 k < m ? "plugin's" : "reference's", x->dim, x->b0, x->b1, x->d0, x->d1);
    }
    free(got);
    free(want);
}
