/*
 * reference.c — the answer every plugin is held to, computed by the scalar
 * reference through the public API (a context made with
 * TOPOML_CTX_NO_PLUGINS, so nothing but the built-in reference can run).
 *
 * Everything is computed on the values the plugin is given: for f32 inputs
 * the reference sees the same floats widened to double, and for point
 * clouds the threshold edges and barcodes are computed from the reference's
 * own distances in the case's dtype. So "the same answer" has one meaning
 * whatever the dtype, and a plugin's only licence to differ is the distance
 * error the tolerance allows.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "conformance.h"
#include "topoml/features.h"

static bool ref_fail(topoml_context *ref, const tc_case *c, const char *what, char *err,
                     size_t err_size)
{
    snprintf(err, err_size, "case %s: reference %s failed: %s", c->name, what, topoml_errmsg(ref));
    return false;
}

/* Every pair's distance as the plugin should see it. */
static bool reference_distances(topoml_context *ref, const tc_case *c, const tc_input *in,
                                tc_reference *r, char *err, size_t err_size)
{
    r->n_pairs = in->n * (in->n ? in->n - 1 : 0) / 2;
    if (in->kind == TOPOML_INPUT_SPARSE) {
        r->max_dist = 0;
        for (uint64_t e = 0; e < in->n_edges; e++)
            if (isfinite(in->edges[e].d) && in->edges[e].d > r->max_dist)
                r->max_dist = in->edges[e].d;
        return true;
    }
    r->dist = malloc((r->n_pairs ? r->n_pairs : 1) * sizeof *r->dist);
    if (!r->dist) {
        snprintf(err, err_size, "case %s: out of memory", c->name);
        return false;
    }
    if (in->kind == TOPOML_INPUT_CONDENSED) {
        if (r->n_pairs)
            memcpy(r->dist, in->condensed, r->n_pairs * sizeof *r->dist);
    } else {
        topoml_data *d = NULL;
        void *out = NULL;
        uint64_t count = 0;
        int rc = topoml_data_from_points(ref, &d, in->n, in->dim, in->points);
        if (rc == TOPOML_OK)
            rc = topoml_distances(ref, d, (topoml_metric)c->metric, (topoml_dtype)c->dtype, &out,
                                  &count);
        topoml_data_free(ref, d);
        if (rc != TOPOML_OK)
            return ref_fail(ref, c, "distances", err, err_size);
        for (uint64_t k = 0; k < count; k++)
            r->dist[k] =
                c->dtype == TOPOML_F32 ? (double)((const float *)out)[k] : ((const double *)out)[k];
        topoml_free(ref, out);
    }
    r->max_dist = 0;
    for (uint64_t k = 0; k < r->n_pairs; k++)
        if (isfinite(r->dist[k]) && r->dist[k] > r->max_dist)
            r->max_dist = r->dist[k];
    return true;
}

/* The data set the reference's edges and barcodes run on: the distances
 * above (for points and matrices), or the edge list. */
static int reference_data(topoml_context *ref, const tc_input *in, const tc_reference *r,
                          topoml_data **out)
{
    if (in->kind == TOPOML_INPUT_SPARSE)
        return topoml_data_from_edges(ref, out, in->n, in->n_edges, in->edges);
    return topoml_data_from_condensed(ref, out, in->n, r->dist);
}

static int bar_cmp(const void *a, const void *b)
{
    const topoml_interval *x = a, *y = b;
    if (x->dim != y->dim)
        return x->dim < y->dim ? -1 : 1;
    if (x->birth != y->birth)
        return x->birth < y->birth ? -1 : 1;
    return x->death < y->death ? -1 : x->death > y->death;
}

/* The core's edge collapse must not change the reference's barcode: the
 * same case with the collapse on gives the same bars, exactly. */
static bool collapse_agrees(topoml_context *ref, const tc_case *c, topoml_data *d,
                            const topoml_rips_options *off, const tc_reference *r, char *err,
                            size_t err_size)
{
    topoml_rips_options o = *off;
    o.collapse = TOPOML_COLLAPSE_ON;
    topoml_barcode *bc = NULL;
    if (topoml_barcode_compute(ref, &bc, d, &o) != TOPOML_OK)
        return ref_fail(ref, c, "barcode with the edge collapse", err, err_size);
    uint64_t n = 0;
    const topoml_interval *iv = topoml_barcode_intervals(bc, &n);
    topoml_interval *a = malloc((n + r->n_bars + 1) * sizeof *a);
    bool same = a != NULL && n == r->n_bars;
    if (same && n > 0) { /* with no bars, iv and r->bars may be NULL */
        memcpy(a, iv, n * sizeof *a);
        memcpy(a + n, r->bars, n * sizeof *a);
        qsort(a, n, sizeof *a, bar_cmp);
        qsort(a + n, n, sizeof *a, bar_cmp);
        for (uint64_t k = 0; k < n && same; k++)
            same = bar_cmp(&a[k], &a[n + k]) == 0;
    }
    free(a);
    topoml_barcode_free(bc);
    if (!same)
        snprintf(err, err_size,
                 "case %s: the reference's barcode with the edge collapse differs from the one "
                 "without (%llu bars against %llu)",
                 c->name, (unsigned long long)n, (unsigned long long)r->n_bars);
    return same;
}

static bool reference_barcode(topoml_context *ref, const tc_case *c, topoml_data *d,
                              uint32_t max_dim, tc_reference *r, char *err, size_t err_size)
{
    topoml_rips_options o;
    topoml_rips_options_init(&o);
    o.max_dim = max_dim;
    o.threshold = c->threshold;
    o.modulus = c->modulus;
    o.collapse = TOPOML_COLLAPSE_OFF;
    if (c->op == TOPOML_OP_RIPS)
        o.flags = TOPOML_RIPS_GENERATORS; /* to check the plugins that give them */
    topoml_barcode *bc = NULL;
    if (topoml_barcode_compute(ref, &bc, d, &o) != TOPOML_OK)
        return ref_fail(ref, c, "barcode", err, err_size);
    uint64_t n = 0;
    const topoml_interval *iv = topoml_barcode_intervals(bc, &n);
    r->bars = malloc((n ? n : 1) * sizeof *r->bars);
    if (r->bars && n)
        memcpy(r->bars, iv, n * sizeof *iv);
    r->n_bars = n;
    const topoml_generator *g = topoml_barcode_generators(bc, NULL);
    if (g) {
        r->gens = malloc((n ? n : 1) * sizeof *r->gens);
        if (r->gens && n)
            memcpy(r->gens, g, n * sizeof *g);
    }
    topoml_barcode_free(bc);
    if (!r->bars || (g && !r->gens)) {
        snprintf(err, err_size, "case %s: out of memory", c->name);
        return false;
    }
    if (c->op == TOPOML_OP_RIPS && max_dim >= 1)
        return collapse_agrees(ref, c, d, &o, r, err, err_size);
    return true;
}

uint64_t tc_diagram_pairs(const topoml_interval *bars, uint64_t n, uint32_t dim, topoml_pair *out)
{
    uint64_t m = 0;
    for (uint64_t k = 0; k < n; k++)
        if (bars[k].dim == dim) {
            if (out)
                out[m] = (topoml_pair){bars[k].birth, bars[k].death};
            m++;
        }
    return m;
}

void tc_image_params(const tc_case *c, const tc_reference *r, topoml_image_params_v1 *p)
{
    topoml_image_params_init(p);
    /* Ranges from the diagrams, so every case has bars inside its image;
     * sigma is given as a share of the persistence range. */
    double bmax = 0, pmax = 0;
    for (uint64_t k = 0; k < r->n_bars; k++) {
        const topoml_interval *v = &r->bars[k];
        if (isinf(v->death))
            continue;
        bmax = v->birth > bmax ? v->birth : bmax;
        pmax = v->death - v->birth > pmax ? v->death - v->birth : pmax;
    }
    if (!(pmax > 0))
        pmax = 1;
    p->birth_min = 0;
    p->birth_max = bmax > 0 ? bmax * 1.05 : 1;
    p->pers_min = 0;
    p->pers_max = pmax * 1.05;
    p->sigma = c->sigma * pmax;
    p->width = c->width;
    p->height = c->height;
    p->weight = c->weight;
    p->weight_max = pmax;
    p->weight_power = 1.5;
    p->infinite = TOPOML_INFINITE_DROP;
}

/* One image per dimension 0..max_dim of the reference barcode. */
static bool reference_image(topoml_context *ref, const tc_case *c, tc_reference *r, char *err,
                            size_t err_size)
{
    uint32_t k = c->max_dim + 1;
    uint64_t *offsets = calloc(k + 1, sizeof *offsets);
    topoml_pair *pairs = malloc((r->n_bars ? r->n_bars : 1) * sizeof *pairs);
    r->image_size = (uint64_t)k * c->width * c->height;
    r->image = malloc(r->image_size * sizeof *r->image);
    bool ok = offsets && pairs && r->image;
    if (ok) {
        for (uint32_t d = 0; d < k; d++)
            offsets[d + 1] =
                offsets[d] + tc_diagram_pairs(r->bars, r->n_bars, d, pairs + offsets[d]);
        topoml_image_params_v1 p;
        tc_image_params(c, r, &p);
        if (topoml_persistence_images(ref, &p, k, offsets, pairs, r->image) != TOPOML_OK)
            ok = ref_fail(ref, c, "image", err, err_size);
    } else {
        snprintf(err, err_size, "case %s: out of memory", c->name);
    }
    free(offsets);
    free(pairs);
    return ok;
}

bool tc_reference_make(topoml_context *ref, const tc_case *c, const tc_input *in, tc_reference *r,
                       char *err, size_t err_size)
{
    memset(r, 0, sizeof *r);
    if (in->n == 0) {
        /* No points: every answer is empty. The public constructors refuse
         * such a data set; the plugin under test still gets one through the
         * ABI, and must answer with nothing. */
        r->dist = malloc(sizeof *r->dist);
        r->edges = malloc(sizeof *r->edges);
        r->bars = malloc(sizeof *r->bars);
        if (!r->dist || !r->edges || !r->bars) {
            snprintf(err, err_size, "case %s: out of memory", c->name);
            goto fail;
        }
        if (c->op == TOPOML_OP_IMAGE && !reference_image(ref, c, r, err, err_size))
            goto fail;
        return true;
    }
    if (!reference_distances(ref, c, in, r, err, err_size))
        goto fail;
    if (c->op == TOPOML_OP_DISTANCES)
        return true;
    topoml_data *d = NULL;
    if (reference_data(ref, in, r, &d) != TOPOML_OK) {
        ref_fail(ref, c, "data set", err, err_size);
        goto fail;
    }
    bool ok = true;
    if (c->op == TOPOML_OP_EDGES) {
        topoml_edge *e = NULL;
        if (topoml_edges(ref, d, (topoml_metric)c->metric, c->threshold, &e, &r->n_edges) !=
            TOPOML_OK) {
            ok = ref_fail(ref, c, "edges", err, err_size);
        } else {
            r->edges = malloc((r->n_edges ? r->n_edges : 1) * sizeof *r->edges);
            if (!r->edges) {
                snprintf(err, err_size, "case %s: out of memory", c->name);
                ok = false;
            } else if (r->n_edges) {
                memcpy(r->edges, e, r->n_edges * sizeof *e);
            }
            topoml_free(ref, e);
        }
    } else {
        ok = reference_barcode(ref, c, d, c->op == TOPOML_OP_H0 ? 0 : c->max_dim, r, err, err_size);
        if (ok && c->op == TOPOML_OP_IMAGE)
            ok = reference_image(ref, c, r, err, err_size);
    }
    topoml_data_free(ref, d);
    if (ok)
        return true;
fail:
    tc_reference_free(ref, r);
    return false;
}

void tc_reference_free(topoml_context *ref, tc_reference *r)
{
    (void)ref;
    free(r->dist);
    free(r->edges);
    free(r->bars);
    free(r->image);
    free(r->gens);
    memset(r, 0, sizeof *r);
}
