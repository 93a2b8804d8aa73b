/*
 * verify_exact.c — the checks of a plugin's barcode that need no history:
 * they hold on the first call of every process, whatever was checked
 * before, and each is exact.
 *
 * One pass over the input's pairs (every pair of a point cloud or matrix
 * once, through metric_rows.h: the reference's distances bit for bit; every
 * edge of an edge list) gives:
 *  - H0 exactly: the minimum spanning forest of the pairs within the
 *    threshold (Prim's algorithm on a dense input, which needs no sort;
 *    Kruskal's over the sorted edges of an edge list): its positive weights
 *    are the finite H0 deaths and its trees the essential H0 classes;
 *  - the bar values: every finite birth and death of every bar of positive
 *    length, in every dimension, must be the length of a pair of the input
 *    within the threshold, to the bit (an open-addressing set of the
 *    barcode's values, each pair's length looked up in it);
 *  - where infinite bars may be: when every pair is within the threshold
 *    the complex is a full simplex, acyclic, so no class of dimension >= 1
 *    is essential;
 *  - the edges of the truncated re-run: the pairs of length <= s, for a
 *    scale s chosen beforehand from a sample of the pairs so that the
 *    reference's run on them costs a bounded share of the plugin's time
 *    (tm_truncation_scale), cut back on their exact count where the sample
 *    misjudged them (tm_truncation_trim); verify.c makes the run and
 *    compares.
 * Cost: one distance per pair (n (n - 1) / 2 for a dense input, plus the
 * rows' other half through the vectorised row code), one hash look-up per
 * pair within the threshold, O(n) memory besides the set and the edges of
 * the cut; an edge list's sort by length. Inputs of more than
 * TM_EXACT_PAIRS_MAX pairs, or whose pass does not fit under the memory
 * limit, go without (said at info level).
 *
 * Not here: what a failed check leads to (verify.c), the invariants
 * (verify.c, barcode_wrong), the comparison of barcodes
 * (diagram_compare.c).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "gate/gate.h"
#include "metric.h"
#include "metric_rows.h"

/* Dense inputs of more pairs than this go without the pass (the pass is
 * about the cost of reading every pair once; n = 10 000 points). */
#define TM_EXACT_PAIRS_MAX 5e7
/* Pairs sampled to choose the scale of the truncated re-run. */
#define TM_SCALE_SAMPLE 2048u

/* ---- the barcode's values, as a set ---- */

#define EMPTY_KEY UINT64_MAX /* a NaN's bits: never a value (invariants) */

typedef struct value_set {
    uint64_t *keys;
    unsigned char *found;
    uint64_t mask;
    double lo, hi; /* the smallest and largest value */
    uint64_t n, left;
} value_set;

static uint64_t bits_of(double x)
{
    x += 0.0; /* -0 is +0 */
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

static uint64_t slot_of(uint64_t b, uint64_t mask)
{
    b ^= b >> 33;
    b *= 0xff51afd7ed558ccdull;
    b ^= b >> 33;
    return b & mask;
}

static void set_add(value_set *s, double v)
{
    const uint64_t b = bits_of(v);
    uint64_t k = slot_of(b, s->mask);
    while (s->keys[k] != EMPTY_KEY) {
        if (s->keys[k] == b)
            return;
        k = (k + 1) & s->mask;
    }
    s->keys[k] = b;
    s->n++;
    s->left++;
    s->lo = s->n == 1 || v < s->lo ? v : s->lo;
    s->hi = s->n == 1 || v > s->hi ? v : s->hi;
}

static inline void set_mark(value_set *s, double d)
{
    if (!(d >= s->lo && d <= s->hi))
        return;
    const uint64_t b = bits_of(d);
    for (uint64_t k = slot_of(b, s->mask);; k = (k + 1) & s->mask) {
        if (s->keys[k] == EMPTY_KEY)
            return;
        if (s->keys[k] == b) {
            if (!s->found[k]) {
                s->found[k] = 1;
                s->left--;
            }
            return;
        }
    }
}

static bool set_has_found(const value_set *s, double v)
{
    const uint64_t b = bits_of(v);
    for (uint64_t k = slot_of(b, s->mask);; k = (k + 1) & s->mask) {
        if (s->keys[k] == EMPTY_KEY)
            return false;
        if (s->keys[k] == b)
            return s->found[k];
    }
}

/* The values of res's bars of positive length: finite births of dimension
 * >= 1 (H0 is born at 0, an invariant) and finite deaths. */
static int set_build(topoml_context *ctx, const topoml_barcode_v1 *res, value_set *s)
{
    memset(s, 0, sizeof *s);
    const uint64_t k = 2 * res->n_intervals;
    uint64_t size = 16;
    while (size < 2 * k + 16)
        size *= 2;
    s->keys = tm_alloc(ctx, (size_t)size * sizeof *s->keys);
    s->found = tm_calloc(ctx, (size_t)size, 1);
    if (!s->keys || !s->found)
        return TOPOML_E_NOMEM;
    memset(s->keys, 0xff, (size_t)size * sizeof *s->keys);
    s->mask = size - 1;
    for (uint64_t i = 0; i < res->n_intervals; i++) {
        const topoml_interval *v = &res->intervals[i];
        if (!(v->death > v->birth))
            continue;
        if (v->dim > 0)
            set_add(s, v->birth);
        if (isfinite(v->death))
            set_add(s, v->death);
    }
    return TOPOML_OK;
}

static void set_free(topoml_context *ctx, value_set *s)
{
    tm_free(ctx, s->keys);
    tm_free(ctx, s->found);
}

/* ---- the edges of the cut ---- */

static bool cut_push(topoml_context *ctx, tm_exact_cut *cut, uint64_t *cap, uint64_t a,
                     uint64_t b, double d)
{
    if (cut->n_edges == *cap) {
        const uint64_t want = *cap ? 2 * *cap : 1024;
        topoml_edge *e = tm_realloc(ctx, cut->edges, (size_t)want * sizeof *e);
        if (!e)
            return false;
        cut->edges = e;
        *cap = want;
    }
    cut->edges[cut->n_edges++] =
        (topoml_edge){.i = (uint32_t)(a < b ? a : b), .j = (uint32_t)(a < b ? b : a), .d = d};
    return true;
}

/* ---- the pass ---- */

typedef struct forest {
    double *weights; /* positive weights of the spanning forest */
    uint64_t n_weights, trees;
    uint64_t pairs_within; /* pairs of length <= the threshold */
} forest;

static double condensed_at(const topoml_input_v1 *in, uint64_t i, uint64_t j)
{
    if (i < j) {
        uint64_t t = i;
        i = j;
        j = t;
    }
    const uint64_t k = i * (i - 1) / 2 + j;
    return in->dtype == TOPOML_F32 ? (double)((const float *)in->data)[k]
                                   : ((const double *)in->data)[k];
}

/* Prim's algorithm over every pair of a point cloud or matrix: each pair is
 * read once, when the first of its two points joins the forest. */
static int dense_pass(topoml_context *ctx, const topoml_input_v1 *in, double t, value_set *set,
                      tm_exact_cut *cut, forest *f)
{
    const uint64_t n = in->n;
    const bool points = in->kind == TOPOML_INPUT_POINTS;
    scalar_panels panels;
    void *pan_mem = NULL;
    const bool wide = points && scalar_rows_wide();
    const uint64_t pan_bytes =
        points ? scalar_panels_bytes(in->dtype, (topoml_metric)in->metric, n, in->dim, wide) : 0;
    const uint64_t bytes = n * (sizeof(double) * 3 + sizeof(uint32_t)) + pan_bytes;
    if (tm_check_memory(ctx, bytes, "the exact checks of a barcode") != TOPOML_OK)
        return TOPOML_E_LIMIT;
    double *key = tm_alloc(ctx, (size_t)n * sizeof *key);
    double *row = tm_alloc(ctx, (size_t)n * sizeof *row);
    uint32_t *rest = tm_alloc(ctx, (size_t)n * sizeof *rest);
    f->weights = tm_alloc(ctx, (size_t)n * sizeof *f->weights);
    if (points && pan_bytes) {
        pan_mem = tm_alloc(ctx, (size_t)pan_bytes);
        if (pan_mem)
            scalar_panels_fill(&panels, in->dtype, (topoml_metric)in->metric, in->data, n,
                               in->dim, wide, pan_mem);
    }
    int rc = TOPOML_OK;
    if (!key || !row || !rest || !f->weights || (points && pan_bytes && !pan_mem)) {
        rc = TOPOML_E_NOMEM;
        goto done;
    }
    uint64_t cap = cut->n_edges;
    const double s = cut->scale;
    for (uint64_t v = 0; v < n; v++) {
        key[v] = INFINITY;
        rest[v] = (uint32_t)v;
    }
    for (uint64_t left = n; left > 0;) {
        /* the point nearest the forest, among those not in it */
        uint64_t at = 0;
        for (uint64_t r = 1; r < left; r++)
            if (key[rest[r]] < key[rest[at]])
                at = r;
        const uint64_t u = rest[at];
        rest[at] = rest[--left];
        if (isinf(key[u]) || !(key[u] <= t))
            f->trees++; /* no pair within the threshold: a new tree */
        else if (key[u] > 0)
            f->weights[f->n_weights++] = key[u];
        if (points && left)
            scalar_panels_row(&panels, u, n, row);
        for (uint64_t r = 0; r < left; r++) {
            const uint64_t v = rest[r];
            const double d = points ? row[v] : condensed_at(in, u, v);
            if (!(d <= t))
                continue;
            f->pairs_within++;
            set_mark(set, d);
            if (d <= s && !cut_push(ctx, cut, &cap, u, v, d)) {
                rc = TOPOML_E_NOMEM;
                goto done;
            }
            if (d < key[v])
                key[v] = d;
        }
    }
done:
    tm_free(ctx, key);
    tm_free(ctx, row);
    tm_free(ctx, rest);
    tm_free(ctx, pan_mem);
    return rc;
}

/* The edges the comparator reads: one per thread, since contexts in other
 * threads check their calls at the same time. */
static _Thread_local const topoml_edge *sort_base;

static int by_length(const void *a, const void *b)
{
    const double x = sort_base[*(const uint64_t *)a].d, y = sort_base[*(const uint64_t *)b].d;
    return x < y ? -1 : x > y;
}

static uint64_t find_root(uint64_t *parent, uint64_t x)
{
    while (parent[x] != x) {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    return x;
}

/* Kruskal's algorithm over an edge list's edges within the threshold. */
static int sparse_pass(topoml_context *ctx, const topoml_input_v1 *in, double t, value_set *set,
                       tm_exact_cut *cut, forest *f)
{
    const uint64_t n = in->n, m = in->n_edges;
    if (tm_check_memory(ctx, m * sizeof(uint64_t) + n * 2 * sizeof(uint64_t),
                        "the exact checks of a barcode") != TOPOML_OK)
        return TOPOML_E_LIMIT;
    uint64_t *order = tm_alloc(ctx, (size_t)(m ? m : 1) * sizeof *order);
    uint64_t *parent = tm_alloc(ctx, (size_t)(n ? n : 1) * sizeof *parent);
    f->weights = tm_alloc(ctx, (size_t)(n ? n : 1) * sizeof *f->weights);
    int rc = TOPOML_OK;
    if (!order || !parent || !f->weights) {
        rc = TOPOML_E_NOMEM;
        goto done;
    }
    uint64_t k = 0, cap = cut->n_edges;
    for (uint64_t e = 0; e < m; e++) {
        const topoml_edge *x = &in->edges[e];
        if (!(x->d <= t) || x->i == x->j || x->i >= n || x->j >= n)
            continue;
        f->pairs_within++;
        set_mark(set, x->d);
        if (x->d <= cut->scale && !cut_push(ctx, cut, &cap, x->i, x->j, x->d)) {
            rc = TOPOML_E_NOMEM;
            goto done;
        }
        order[k++] = e;
    }
    sort_base = in->edges;
    qsort(order, (size_t)k, sizeof *order, by_length);
    for (uint64_t v = 0; v < n; v++)
        parent[v] = v;
    f->trees = n;
    for (uint64_t e = 0; e < k; e++) {
        const topoml_edge *x = &in->edges[order[e]];
        const uint64_t a = find_root(parent, x->i), b = find_root(parent, x->j);
        if (a == b)
            continue;
        parent[a] = b;
        f->trees--;
        if (x->d > 0)
            f->weights[f->n_weights++] = x->d;
    }
done:
    tm_free(ctx, order);
    tm_free(ctx, parent);
    return rc;
}

static int double_order(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* H0 of res against the forest: the same finite deaths, the same number of
 * essential classes. */
static bool h0_differs(topoml_context *ctx, const topoml_barcode_v1 *res, forest *f, char *why,
                       size_t why_size)
{
    uint64_t finite = 0, essential = 0;
    for (uint64_t k = 0; k < res->n_intervals; k++) {
        const topoml_interval *v = &res->intervals[k];
        if (v->dim == 0 && v->death > v->birth) {
            finite += isfinite(v->death);
            essential += isinf(v->death);
        }
    }
    double *got = tm_alloc(ctx, (size_t)(finite ? finite : 1) * sizeof *got);
    if (!got) {
        ctx->errmsg[0] = '\0';
        return false; /* no memory to compare: the other checks stand */
    }
    uint64_t m = 0;
    for (uint64_t k = 0; k < res->n_intervals; k++) {
        const topoml_interval *v = &res->intervals[k];
        if (v->dim == 0 && v->death > v->birth && isfinite(v->death))
            got[m++] = v->death;
    }
    qsort(got, (size_t)m, sizeof *got, double_order);
    qsort(f->weights, (size_t)f->n_weights, sizeof *f->weights, double_order);
    bool differ = m != f->n_weights || essential != f->trees;
    uint64_t k = 0;
    while (!differ && k < m && got[k] == f->weights[k])
        k++;
    differ = differ || k < m;
    if (differ) {
        while (k < m && k < f->n_weights && got[k] == f->weights[k])
            k++;
        char a[48], b[48];
        snprintf(a, sizeof a, k < m ? "%.17g" : "none", k < m ? got[k] : 0.0);
        snprintf(b, sizeof b, k < f->n_weights ? "%.17g" : "none",
                 k < f->n_weights ? f->weights[k] : 0.0);
        snprintf(why, why_size,
                 "H0 is not the input's: %llu finite bars and %llu essential, the minimum "
                 "spanning forest within the threshold has %llu and %llu; first difference: a "
                 "death at %s where the forest has %s",
                 (unsigned long long)m, (unsigned long long)essential,
                 (unsigned long long)f->n_weights, (unsigned long long)f->trees, a, b);
    }
    tm_free(ctx, got);
    return differ;
}

bool tm_exact_pass_fits(const topoml_input_v1 *in)
{
    if (in->kind == TOPOML_INPUT_SPARSE)
        return in->edges != NULL || in->n_edges == 0;
    return in->data != NULL &&
           (double)in->n * (double)(in->n ? in->n - 1 : 0) / 2 <= TM_EXACT_PAIRS_MAX;
}

int tm_exact_barcode_wrong(topoml_context *ctx, const topoml_input_v1 *in, double threshold,
                           const topoml_barcode_v1 *res, tm_exact_cut *cut, bool *wrong,
                           char *why, size_t why_size)
{
    *wrong = false;
    if (!tm_exact_pass_fits(in))
        return TOPOML_E_LIMIT;
    if (in->n == 0) {
        for (uint64_t k = 0; k < res->n_intervals && !*wrong; k++)
            *wrong = res->intervals[k].death > res->intervals[k].birth;
        if (*wrong)
            snprintf(why, why_size, "it returned bars for an input of no points");
        return TOPOML_OK;
    }
    value_set set;
    forest f;
    memset(&f, 0, sizeof f);
    int rc = set_build(ctx, res, &set);
    if (rc == TOPOML_OK)
        rc = in->kind == TOPOML_INPUT_SPARSE ? sparse_pass(ctx, in, threshold, &set, cut, &f)
                                             : dense_pass(ctx, in, threshold, &set, cut, &f);
    if (rc != TOPOML_OK) {
        ctx->errmsg[0] = '\0';
        set_free(ctx, &set);
        tm_free(ctx, f.weights);
        return rc;
    }
    /* every value a length of the input */
    for (uint64_t k = 0; set.left && k < res->n_intervals && !*wrong; k++) {
        const topoml_interval *v = &res->intervals[k];
        if (!(v->death > v->birth))
            continue;
        const bool birth_ok = v->dim == 0 || set_has_found(&set, v->birth);
        if (!birth_ok || (isfinite(v->death) && !set_has_found(&set, v->death))) {
            snprintf(why, why_size,
                     "H%u bar %llu [%.17g, %.17g) %s at %.17g, which is no distance of the input "
                     "within the threshold",
                     v->dim, (unsigned long long)k, v->birth, v->death,
                     birth_ok ? "dies" : "is born", birth_ok ? v->death : v->birth);
            *wrong = true;
        }
    }
    /* H0 exactly */
    if (!*wrong)
        *wrong = h0_differs(ctx, res, &f, why, why_size);
    /* essential classes of dimension >= 1 only where the threshold cuts */
    const double all = (double)in->n * (double)(in->n ? in->n - 1 : 0) / 2;
    cut->complete = in->kind != TOPOML_INPUT_SPARSE && in->n >= 2 && (double)f.pairs_within == all;
    for (uint64_t k = 0; cut->complete && k < res->n_intervals && !*wrong; k++) {
        const topoml_interval *v = &res->intervals[k];
        if (v->dim > 0 && isinf(v->death)) {
            snprintf(why, why_size,
                     "H%u bar %llu [%.17g, inf) is essential, but every pair is within the "
                     "threshold (a full simplex has no such class)",
                     v->dim, (unsigned long long)k, v->birth);
            *wrong = true;
        }
    }
    set_free(ctx, &set);
    tm_free(ctx, f.weights);
    return TOPOML_OK;
}

/* ---- the scale of the truncated re-run ---- */

/* The reference's work on m edges of n points up to dimension max_dim, in
 * units: the edges, and the (max_dim + 1)-simplices of a flag complex of
 * that density as a geometric graph has them (n (2m / n)^(k+1) / (k+2)!,
 * above what a random graph of that density has: an overestimate, so the
 * scale errs small). */
double tm_truncation_units(uint64_t n, double m, uint32_t max_dim)
{
    if (n == 0)
        return 0;
    double deg = 2 * m / (double)n, top = (double)n, fact = 1;
    for (uint32_t k = 0; k <= max_dim; k++) {
        top *= deg;
        fact *= (double)(k + 2);
    }
    return m + top / fact;
}

static void sample_pair(topoml_context *ctx, uint64_t n, uint64_t *i, uint64_t *j)
{
    *i = 1 + tm_verify_random(ctx) % (n - 1);
    *j = tm_verify_random(ctx) % *i;
}

/* The pairs a cut may always take, its budget aside: about n / 2 (a forest:
 * next to nothing beside reading the input), or those one sampled length
 * stands for (the smallest cut the sample can tell). */
static double truncation_floor_pairs(const topoml_input_v1 *in)
{
    const double total = in->kind == TOPOML_INPUT_SPARSE
                             ? (double)in->n_edges
                             : (double)in->n * (double)(in->n ? in->n - 1 : 0) / 2;
    return fmax((double)in->n / 2, total / TM_SCALE_SAMPLE);
}

static int edge_by_length(const void *a, const void *b)
{
    const double x = ((const topoml_edge *)a)->d, y = ((const topoml_edge *)b)->d;
    return x < y ? -1 : x > y;
}

bool tm_truncation_trim(const topoml_input_v1 *in, uint32_t max_dim, double budget_units,
                        tm_exact_cut *cut)
{
    const double floor_pairs = truncation_floor_pairs(in);
    if (isnan(cut->scale) || (double)cut->n_edges <= floor_pairs ||
        tm_truncation_units(in->n, (double)cut->n_edges, max_dim) <= budget_units)
        return false;
    /* the largest prefix by length that fits and ends where the length
     * changes (a cut at s takes every pair of length <= s) */
    qsort(cut->edges, (size_t)cut->n_edges, sizeof *cut->edges, edge_by_length);
    uint64_t keep = 0;
    for (uint64_t end = 1; end <= cut->n_edges; end++) {
        if (end < cut->n_edges && cut->edges[end].d == cut->edges[end - 1].d)
            continue;
        if (!(tm_truncation_units(in->n, (double)end, max_dim) <= budget_units) &&
            (double)end > floor_pairs)
            break;
        keep = end;
    }
    cut->n_edges = keep;
    cut->scale = keep ? cut->edges[keep - 1].d : NAN;
    return true;
}

/* The pairs at or below the c-th smallest of the sampled lengths, bounded
 * above: c samples stand for per * c pairs, give or take per * sqrt(c)
 * (the count of a binomial draw); 4 of those and 4 samples more keep a cut
 * of a few dozen sampled lengths — misjudged by tens of percent, squared
 * or cubed in the units of dimensions 1 and 2 — within its budget but for
 * about one draw in 10^4 (tm_truncation_trim bounds it exactly after the
 * pass). */
static double sampled_pairs_high(double per, unsigned c)
{
    return per * ((double)c + 4 * sqrt((double)c) + 4);
}

double tm_truncation_scale(topoml_context *ctx, const topoml_input_v1 *in, double threshold,
                           uint32_t max_dim, double budget_units, bool *all_fits)
{
    *all_fits = false;
    const bool sparse = in->kind == TOPOML_INPUT_SPARSE;
    const double total = sparse ? (double)in->n_edges
                                : (double)in->n * (double)(in->n ? in->n - 1 : 0) / 2;
    if (in->n < 2 || total < 1 || !tm_exact_pass_fits(in))
        return NAN;
    double sample[TM_SCALE_SAMPLE];
    unsigned k = 0;
    for (unsigned r = 0; r < TM_SCALE_SAMPLE; r++) {
        double d;
        if (sparse) {
            d = in->edges[tm_verify_random(ctx) % in->n_edges].d;
        } else {
            uint64_t i, j;
            sample_pair(ctx, in->n, &i, &j);
            d = in->kind == TOPOML_INPUT_POINTS
                    ? scalar_point_dist(in->dtype, (topoml_metric)in->metric, in->data, in->dim,
                                        i, j)
                    : condensed_at(in, i, j);
        }
        if (d <= threshold)
            sample[k++] = d;
    }
    if (k == 0)
        return NAN;
    qsort(sample, k, sizeof *sample, double_order);
    const double per = total / TM_SCALE_SAMPLE; /* pairs one sampled value stands for */
    if (tm_truncation_units(in->n, sampled_pairs_high(per, k), max_dim) <= budget_units) {
        *all_fits = true;
        return threshold;
    }
    /* The largest sampled length whose cut fits; at least the one at which
     * about max(n / 2, per) pairs are in (a forest: next to nothing). A cut
     * at sample[i] takes every pair of that length, so what it counts is the
     * samples up to the last one equal to sample[i] (with many ties, one
     * value stands for a large share of the pairs: 0 for duplicated points,
     * the grid's spacing; counting i + 1 there put a clique of thousands of
     * points into a cut budgeted for a few thousand edges). None fits (a
     * tie class alone over both): NAN, no cut. */
    const double floor_pairs = truncation_floor_pairs(in);
    double best = NAN;
    for (unsigned i = 0; i < k;) {
        unsigned end = i + 1; /* samples <= sample[i] */
        while (end < k && sample[end] == sample[i])
            end++;
        if (!(tm_truncation_units(in->n, sampled_pairs_high(per, end), max_dim) <=
              budget_units) &&
            per * end > floor_pairs)
            break; /* and every larger one */
        best = sample[i];
        i = end;
    }
    return best;
}
