/*
 * generate.c — the inputs of the cases: seeded point clouds (uniform,
 * gaussian, circle, sphere, torus, clusters, grids full of ties, duplicate
 * points) and the data files shipped in conformance/data, turned into what
 * the plugin receives (points, a condensed matrix or an edge list, in f64 or
 * f32).
 *
 * The generator is xoshiro256** seeded by splitmix64, so a case's points do
 * not depend on the C library's rand(). Manifold samples go through libm
 * (sin, cos, log); a different libm may move a coordinate by an ulp, which
 * never changes a verdict because the reference is always computed from the
 * very bytes the plugin is given.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "conformance.h"
#include "api/api.h" /* internal: struct topoml_data, the parsed file's values */
#include "compute/compute.h" /* internal: the weighted filtration's edge values */

typedef struct rng {
    uint64_t s[4];
} rng;

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void rng_seed(rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&seed);
}

static inline uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static uint64_t next_u64(rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

/* Uniform in [0, 1), 53 random bits. */
static double uniform(rng *r)
{
    return (double)(next_u64(r) >> 11) * 0x1.0p-53;
}

/* Standard normal by Box–Muller (one value per call; simple over fast). */
static double normal(rng *r)
{
    double u = 1.0 - uniform(r), v = uniform(r);
    return sqrt(-2.0 * log(u)) * cos(2.0 * M_PI * v);
}

static bool gen_fail(char *err, size_t err_size, const tc_case *c, const char *msg)
{
    snprintf(err, err_size, "case %s: %s", c->name, msg);
    return false;
}

/* The point cloud of a generator case, n*dim f64 into in->points. */
static bool generate_points(const tc_case *c, tc_input *in, char *err, size_t err_size)
{
    uint64_t n = c->n, dim = c->dim;
    if (!strcmp(c->generator, "grid")) {
        n = 1;
        for (uint64_t d = 0; d < dim; d++) {
            if (n > 100000 / c->side)
                return gen_fail(err, err_size, c, "grid too large");
            n *= c->side;
        }
    }
    if (dim > 0 && n > (1ull << 26) / dim)
        return gen_fail(err, err_size, c, "too many coordinates");
    in->n = n;
    in->dim = dim;
    in->points = calloc(n * dim > 0 ? n * dim : 1, sizeof *in->points);
    if (!in->points)
        return gen_fail(err, err_size, c, "out of memory");
    double *p = in->points;
    rng r;
    rng_seed(&r, c->seed);
    const char *g = c->generator;
    if (!strcmp(g, "uniform")) {
        for (uint64_t k = 0; k < n * dim; k++)
            p[k] = uniform(&r);
    } else if (!strcmp(g, "gaussian")) {
        for (uint64_t k = 0; k < n * dim; k++)
            p[k] = normal(&r);
    } else if (!strcmp(g, "circle")) {
        if (dim < 2)
            return gen_fail(err, err_size, c, "circle needs dim >= 2");
        for (uint64_t i = 0; i < n; i++) {
            double t = 2.0 * M_PI * uniform(&r);
            p[i * dim] = c->radius * cos(t);
            p[i * dim + 1] = c->radius * sin(t);
        }
    } else if (!strcmp(g, "sphere")) {
        if (c->k < 1 || dim < (uint64_t)c->k + 1)
            return gen_fail(err, err_size, c,
                            "sphere needs sphere_dim >= 1 and dim >= sphere_dim+1");
        for (uint64_t i = 0; i < n; i++) {
            double norm = 0;
            for (uint32_t d = 0; d <= c->k; d++) {
                p[i * dim + d] = normal(&r);
                norm += p[i * dim + d] * p[i * dim + d];
            }
            norm = sqrt(norm);
            for (uint32_t d = 0; d <= c->k; d++)
                p[i * dim + d] = norm > 0 ? c->radius * p[i * dim + d] / norm : c->radius;
        }
    } else if (!strcmp(g, "torus")) {
        if (dim < 3)
            return gen_fail(err, err_size, c, "torus needs dim >= 3");
        for (uint64_t i = 0; i < n; i++) {
            double a = 2.0 * M_PI * uniform(&r), b = 2.0 * M_PI * uniform(&r);
            p[i * dim] = (c->radius + c->radius2 * cos(b)) * cos(a);
            p[i * dim + 1] = (c->radius + c->radius2 * cos(b)) * sin(a);
            p[i * dim + 2] = c->radius2 * sin(b);
        }
    } else if (!strcmp(g, "clusters")) {
        uint32_t k = c->k ? c->k : 1;
        double *centre = malloc(k * dim * sizeof *centre);
        if (!centre)
            return gen_fail(err, err_size, c, "out of memory");
        for (uint64_t q = 0; q < k * dim; q++)
            centre[q] = uniform(&r);
        for (uint64_t i = 0; i < n; i++)
            for (uint64_t d = 0; d < dim; d++)
                p[i * dim + d] = centre[(i % k) * dim + d] + c->spread * normal(&r);
        free(centre);
    } else if (!strcmp(g, "grid")) {
        /* Integer coordinates: every distance is exact and most are tied. */
        for (uint64_t i = 0; i < n; i++) {
            uint64_t rest = i;
            for (uint64_t d = 0; d < dim; d++) {
                p[i * dim + d] = (double)(rest % c->side);
                rest /= c->side;
            }
        }
    } else if (!strcmp(g, "crosspolytope")) {
        /* The vertices +-e_i of the cross-polytope in k+1 dimensions: its
         * Rips complex between sqrt(2) and 2 is the boundary, a k-sphere, so
         * H_k has a class there; every distance is sqrt(2) or 2 (ties). */
        if (dim < (uint64_t)c->k + 1 || n != 2 * ((uint64_t)c->k + 1))
            return gen_fail(err, err_size, c, "crosspolytope needs dim > k and n = 2(k+1)");
        for (uint64_t i = 0; i < n; i++)
            p[i * dim + i / 2] = i % 2 ? -c->radius : c->radius;
    } else if (!strcmp(g, "duplicates")) {
        uint64_t copies = c->k ? c->k : 2, distinct = (n + copies - 1) / copies;
        for (uint64_t k = 0; k < distinct * dim && k < n * dim; k++)
            p[k] = uniform(&r);
        for (uint64_t i = distinct; i < n; i++)
            memcpy(p + i * dim, p + (i % distinct) * dim, dim * sizeof *p);
    }
    if (c->noise > 0)
        for (uint64_t k = 0; k < n * dim; k++)
            p[k] += c->noise * normal(&r);
    for (uint64_t k = 0; k < n * dim; k++)
        p[k] *= c->scale;
    return true;
}

/* A data file through the core's own parsers (one parser per format). */
static bool read_file(topoml_context *ref, const tc_suite *s, const tc_case *c, tc_input *in,
                      char *err, size_t err_size)
{
    char path[1400];
    snprintf(path, sizeof path, "%s/%s", s->data_dir, c->file);
    topoml_data *d = NULL;
    if (topoml_data_read(ref, &d, path, (topoml_format)c->file_format) != TOPOML_OK)
        return gen_fail(err, err_size, c, topoml_errmsg(ref));
    bool ok = true;
    in->n = d->n;
    in->dim = d->dim;
    if (d->kind == TOPOML_INPUT_POINTS) {
        size_t count = (size_t)(d->n * d->dim);
        in->points = malloc((count ? count : 1) * sizeof(double));
        if (in->points)
            if (count)
                memcpy(in->points, d->values, count * sizeof(double));
        ok = in->points != NULL;
    } else if (d->kind == TOPOML_INPUT_CONDENSED) {
        size_t count = (size_t)(d->n * (d->n ? d->n - 1 : 0) / 2);
        in->condensed = malloc((count ? count : 1) * sizeof(double));
        if (in->condensed)
            if (count)
                memcpy(in->condensed, d->values, count * sizeof(double));
        ok = in->condensed != NULL;
    } else {
        topoml_data_free(ref, d);
        return gen_fail(err, err_size, c, "sparse files are not used by the suite");
    }
    topoml_data_free(ref, d);
    return ok || gen_fail(err, err_size, c, "out of memory");
}

/* Pairwise f64 distances of in->points into in->condensed, by the reference. */
static bool points_to_condensed(topoml_context *ref, const tc_case *c, tc_input *in, char *err,
                                size_t err_size)
{
    topoml_data *d = NULL;
    void *dist = NULL;
    uint64_t count = 0;
    if (in->n == 0) { /* no distances (and no data set: n = 0 is refused) */
        in->condensed = malloc(sizeof(double));
        return in->condensed != NULL || gen_fail(err, err_size, c, "out of memory");
    }
    if (topoml_data_from_points(ref, &d, in->n, in->dim, in->points) != TOPOML_OK ||
        topoml_distances(ref, d, (topoml_metric)c->metric, TOPOML_F64, &dist, &count) !=
            TOPOML_OK) {
        topoml_data_free(ref, d);
        return gen_fail(err, err_size, c, topoml_errmsg(ref));
    }
    topoml_data_free(ref, d);
    in->condensed = malloc((count ? count : 1) * sizeof(double));
    if (in->condensed && count)
        memcpy(in->condensed, dist, count * sizeof(double));
    topoml_free(ref, dist);
    return in->condensed != NULL || gen_fail(err, err_size, c, "out of memory");
}

/* Replace the condensed distances by the weighted filtration's edge
 * values, computed by the library's own code (weights.c). */
static bool weigh(topoml_context *ref, const tc_case *c, tc_input *in, char *err, size_t err_size)
{
    const uint64_t pairs = in->n * (in->n ? in->n - 1 : 0) / 2;
    topoml_rips_options o;
    topoml_rips_options_init(&o);
    o.weights = c->weights;
    o.weight_p = c->weight_p;
    o.dtm_neighbors = c->dtm_neighbors;
    o.dtm_r = c->dtm_r;
    double *given = NULL;
    if (c->weights == TOPOML_WEIGHTS_GIVEN) {
        double top = 0;
        for (uint64_t k = 0; k < pairs; k++)
            top = fmax(top, in->condensed[k]);
        given = malloc((in->n ? in->n : 1) * sizeof *given);
        if (!given)
            return gen_fail(err, err_size, c, "out of memory");
        rng r;
        rng_seed(&r, c->seed ^ 0x5765696768747321ull);
        for (uint64_t i = 0; i < in->n; i++)
            given[i] = uniform(&r) * top / 4;
        o.vertex_weights = given;
    }
    topoml_data *d = NULL, *w = NULL;
    double *vw = NULL;
    bool ok = topoml_data_from_condensed(ref, &d, in->n, in->condensed) == TOPOML_OK &&
              tm_weighted_data(ref, d, &o, &w, &vw) == TOPOML_OK;
    if (ok)
        memcpy(in->condensed, w->values, pairs * sizeof(double));
    else
        gen_fail(err, err_size, c, topoml_errmsg(ref));
    tm_free(ref, vw);
    topoml_data_free(ref, w);
    topoml_data_free(ref, d);
    free(given);
    return ok;
}

bool tc_input_make(topoml_context *ref, const tc_suite *s, const tc_case *c, tc_input *in,
                   char *err, size_t err_size)
{
    memset(in, 0, sizeof *in);
    in->kind = c->as;
    bool ok = !strcmp(c->generator, "file") ? read_file(ref, s, c, in, err, err_size)
                                            : generate_points(c, in, err, err_size);
    if (!ok)
        goto fail;
    if (c->as == TOPOML_INPUT_POINTS && !in->points) {
        gen_fail(err, err_size, c, "a distance matrix cannot be given as points");
        goto fail;
    }
    if (c->as != TOPOML_INPUT_POINTS && !in->condensed &&
        !points_to_condensed(ref, c, in, err, err_size))
        goto fail;
    if (c->weights && in->n > 1 && !weigh(ref, c, in, err, err_size))
        goto fail;
    uint64_t pairs = in->n * (in->n ? in->n - 1 : 0) / 2;
    if (c->as == TOPOML_INPUT_SPARSE) {
        uint64_t m = 0;
        for (uint64_t k = 0; k < pairs; k++)
            m += in->condensed[k] <= c->sparse_threshold;
        in->edges = malloc((m ? m : 1) * sizeof *in->edges);
        if (!in->edges) {
            gen_fail(err, err_size, c, "out of memory");
            goto fail;
        }
        /* Listed in an order that is neither sorted by distance nor by
         * vertex (rows from the last), since the ABI promises any order. */
        for (uint64_t i = in->n; i-- > 1;)
            for (uint64_t j = 0; j < i; j++) {
                double d = in->condensed[i * (i - 1) / 2 + j];
                if (d <= c->sparse_threshold)
                    in->edges[in->n_edges++] = (topoml_edge){d, (uint32_t)j, (uint32_t)i};
            }
    }
    if (c->dtype == TOPOML_F32) {
        if (in->points) {
            in->points32 = malloc((in->n * in->dim > 0 ? in->n * in->dim : 1) * sizeof(float));
            if (!in->points32) {
                gen_fail(err, err_size, c, "out of memory");
                goto fail;
            }
            for (uint64_t k = 0; k < in->n * in->dim; k++)
                in->points32[k] = (float)in->points[k];
        }
        if (c->as == TOPOML_INPUT_CONDENSED) {
            /* The plugin gets floats; the reference the same floats widened. */
            in->condensed32 = malloc((pairs ? pairs : 1) * sizeof(float));
            if (!in->condensed32) {
                gen_fail(err, err_size, c, "out of memory");
                goto fail;
            }
            for (uint64_t k = 0; k < pairs; k++) {
                in->condensed32[k] = (float)in->condensed[k];
                in->condensed[k] = (double)in->condensed32[k];
            }
        }
    }
    return true;
fail:
    tc_input_free(in);
    return false;
}

void tc_input_free(tc_input *in)
{
    free(in->points);
    free(in->points32);
    free(in->condensed);
    free(in->condensed32);
    free(in->edges);
    memset(in, 0, sizeof *in);
}

void tc_input_view(const tc_input *in, const tc_case *c, topoml_input_v1 *v)
{
    memset(v, 0, sizeof *v);
    v->struct_size = sizeof *v;
    v->kind = in->kind;
    v->n = in->n;
    v->dim = in->kind == TOPOML_INPUT_POINTS ? in->dim : 0;
    v->dtype = c->dtype;
    v->metric = c->metric;
    if (in->kind == TOPOML_INPUT_POINTS)
        v->data = c->dtype == TOPOML_F32 ? (const void *)in->points32 : (const void *)in->points;
    else if (in->kind == TOPOML_INPUT_CONDENSED)
        v->data =
            c->dtype == TOPOML_F32 ? (const void *)in->condensed32 : (const void *)in->condensed;
    v->n_edges = in->n_edges;
    v->edges = in->edges;
}
