/*
 * generated.c — the cases the suite derives from the plugins' own capability
 * records, on top of the fixed list in cases.yaml.
 *
 * The fixed list is the same for every plugin and small enough for a first
 * use; a plugin that is wrong only in a corner it claims (Z/3, more than 200
 * points, duplicate points in Rips, dimension 4 of a claimed 10) slips
 * through it. These cases walk what the plugin says it does: every claimed
 * op, input kind, dtype and metric; every dimension up to its max_dim (a
 * k-sphere for each k, and the claimed max_dim itself); moduli across its
 * range (2, 3, 5, 7 and the largest prime it claims); sizes on both sides of
 * 64, 100, 200 and 1000 points; duplicate points, ties, empty, one and two
 * points. The inputs are drawn from a seed chosen afresh for every
 * certification (and written into the certificate), so a plugin cannot be
 * tuned to one fixed set of inputs; --seed repeats a run.
 *
 * What it is not: the cases' names and parameters are fixed by the records
 * alone, so a report can be compared across runs; only the points change.
 */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "conformance.h"
#include "gate/gate.h" /* internal: tm_op_name, the ops' names as the core says them */

/* Spheres S^1 .. S^GEN_SPHERE_MAX are computed exactly (the cross-polytope
 * boundary); a claim beyond it is exercised at its edge on a small input. */
#define GEN_SPHERE_MAX 8u

/* What the plugins under test claim for one op, all records together. */
typedef struct claim {
    bool any;
    uint32_t dtypes, metrics, inputs, max_dim, max_modulus;
} claim;

typedef struct gen_list {
    tc_case *cases;
    size_t n, cap;
    uint64_t seed;
    double ulps;
    bool failed;
} gen_list;

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static const char *metric_names[TOPOML_METRIC_COUNT] = {"euclidean", "sqeuclidean", "manhattan",
                                                        "chebyshev", "cosine"};
static const char *dtype_names[TOPOML_DTYPE_COUNT] = {"f32", "f64"};
static const char *input_names[TOPOML_INPUT_KIND_COUNT] = {"points", "condensed", "sparse"};

/* A case with the defaults of cases.yaml, for op, drawn from the list's
 * seed and its position. */
static tc_case base(gen_list *g, uint32_t op, const char *generator, uint64_t n, uint64_t dim)
{
    tc_case c;
    tc_case_init(&c);
    c.tier = TC_TIER_QUICK;
    c.op = op;
    snprintf(c.generator, sizeof c.generator, "%s", generator);
    c.seed = mix(g->seed ^ mix(g->n + 1));
    c.n = n;
    c.dim = dim;
    c.max_dim = op == TOPOML_OP_RIPS ? 1 : 0;
    c.tol_ulps = g->ulps;
    return c;
}

static void add(gen_list *g, tc_case *c, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void add(gen_list *g, tc_case *c, const char *fmt, ...)
{
    if (g->failed)
        return;
    if (g->n == g->cap) {
        size_t cap = g->cap ? 2 * g->cap : 128;
        tc_case *grown = realloc(g->cases, cap * sizeof *grown);
        if (!grown) {
            g->failed = true;
            return;
        }
        g->cases = grown;
        g->cap = cap;
    }
    va_list ap;
    va_start(ap, fmt);
    int len = snprintf(c->name, sizeof c->name, "gen/%s/", tm_op_name(c->op));
    vsnprintf(c->name + len, sizeof c->name - (size_t)len, fmt, ap);
    va_end(ap);
    g->cases[g->n++] = *c;
}

static uint32_t first_bit(uint32_t mask)
{
    for (uint32_t k = 0; k < 32; k++)
        if (mask & (1u << k))
            return k;
    return 0;
}

static bool is_prime(uint32_t p)
{
    if (p < 2)
        return false;
    for (uint32_t q = 2; q * q <= p; q++)
        if (p % q == 0)
            return false;
    return true;
}

/* Points, or the same points given as a condensed or sparse matrix. */
static void set_input(tc_case *c, uint32_t kind, double sparse_threshold)
{
    c->as = kind;
    if (kind == TOPOML_INPUT_SPARSE)
        c->sparse_threshold = sparse_threshold;
}

static const uint64_t sizes[] = {0, 1, 2, 63, 64, 65, 99, 100, 101, 199, 200, 201, 999, 1001};
#define N_SIZES (sizeof sizes / sizeof sizes[0])

static void gen_distances(gen_list *g, const claim *cl)
{
    if (!(cl->inputs & (1u << TOPOML_INPUT_POINTS)))
        return;
    uint32_t m0 = cl->metrics & (1u << TOPOML_METRIC_EUCLIDEAN) ? TOPOML_METRIC_EUCLIDEAN
                                                                 : first_bit(cl->metrics);
    for (uint32_t dt = 0; dt < TOPOML_DTYPE_COUNT; dt++) {
        if (!(cl->dtypes & (1u << dt)))
            continue;
        for (size_t s = 0; s < N_SIZES; s++) {
            tc_case c = base(g, TOPOML_OP_DISTANCES, "uniform", sizes[s], 5);
            c.dtype = dt;
            c.metric = m0;
            add(g, &c, "uniform-n%llu/%s", (unsigned long long)sizes[s], dtype_names[dt]);
        }
        for (uint32_t m = 0; m < TOPOML_METRIC_COUNT; m++) {
            if (!(cl->metrics & (1u << m)))
                continue;
            tc_case c = base(g, TOPOML_OP_DISTANCES, "gaussian", 65, 7);
            c.dtype = dt;
            c.metric = m;
            add(g, &c, "gaussian-n65-d7/%s/%s", metric_names[m], dtype_names[dt]);
            c = base(g, TOPOML_OP_DISTANCES, "duplicates", 101, 3);
            c.k = 3;
            c.dtype = dt;
            c.metric = m;
            add(g, &c, "duplicates-n101/%s/%s", metric_names[m], dtype_names[dt]);
        }
    }
}

static void gen_edges_h0(gen_list *g, const claim *cl, uint32_t op)
{
    static const uint64_t op_sizes[] = {0, 1, 2, 65, 101, 201, 1001};
    const double cut = 0.35;
    uint32_t m0 = cl->metrics & (1u << TOPOML_METRIC_EUCLIDEAN) ? TOPOML_METRIC_EUCLIDEAN
                                                                 : first_bit(cl->metrics);
    for (uint32_t kind = 0; kind < TOPOML_INPUT_KIND_COUNT; kind++) {
        if (!(cl->inputs & (1u << kind)))
            continue;
        for (uint32_t dt = 0; dt < TOPOML_DTYPE_COUNT; dt++) {
            if (!(cl->dtypes & (1u << dt)) && kind != TOPOML_INPUT_SPARSE)
                continue;
            for (size_t s = 0; s < sizeof op_sizes / sizeof op_sizes[0]; s++) {
                tc_case c = base(g, op, "uniform", op_sizes[s], 3);
                c.dtype = dt;
                c.metric = m0;
                /* H0 of 1001 points uncut sorts half a million edges on both
                 * sides: cut it, as the edges op always is. */
                c.threshold = op == TOPOML_OP_EDGES || op_sizes[s] > 1000 ? cut : INFINITY;
                set_input(&c, kind, 0.5);
                add(g, &c, "uniform-n%llu/%s/%s", (unsigned long long)op_sizes[s],
                    input_names[kind], dtype_names[dt]);
            }
            tc_case c = base(g, op, "duplicates", 60, 3);
            c.k = 3;
            c.dtype = dt;
            c.metric = m0;
            c.threshold = op == TOPOML_OP_EDGES ? cut : INFINITY;
            set_input(&c, kind, 0.5);
            add(g, &c, "duplicates-n60/%s/%s", input_names[kind], dtype_names[dt]);
            /* Integer coordinates: distances tie, and the threshold sits on
             * the tied value. */
            c = base(g, op, "grid", 0, 3);
            c.side = 4;
            c.dtype = dt;
            c.metric = m0;
            c.threshold = 1.0;
            set_input(&c, kind, 1.5);
            add(g, &c, "grid-ties/%s/%s", input_names[kind], dtype_names[dt]);
            if (kind == TOPOML_INPUT_SPARSE)
                break; /* sparse input has no dtype */
        }
    }
    if (cl->inputs & (1u << TOPOML_INPUT_POINTS))
        for (uint32_t m = 0; m < TOPOML_METRIC_COUNT; m++) {
            if (!(cl->metrics & (1u << m)))
                continue;
            tc_case c = base(g, op, "uniform", 101, 4);
            c.dtype = cl->dtypes & (1u << TOPOML_F64) ? TOPOML_F64 : TOPOML_F32;
            c.metric = m;
            c.threshold = cut;
            add(g, &c, "uniform-n101-d4-cut/%s", metric_names[m]);
        }
}

static void gen_rips(gen_list *g, const claim *cl)
{
    uint32_t m0 = cl->metrics & (1u << TOPOML_METRIC_EUCLIDEAN) ? TOPOML_METRIC_EUCLIDEAN
                                                                 : first_bit(cl->metrics);
    uint32_t dt0 = cl->dtypes & (1u << TOPOML_F64) ? TOPOML_F64 : TOPOML_F32;
    uint32_t kind0 = cl->inputs & (1u << TOPOML_INPUT_POINTS) ? TOPOML_INPUT_POINTS
                                                               : first_bit(cl->inputs);
    /* Every dimension up to the claim: H_k of a k-sphere. */
    uint32_t top = cl->max_dim < GEN_SPHERE_MAX ? cl->max_dim : GEN_SPHERE_MAX;
    for (uint32_t k = 1; k <= top; k++) {
        tc_case c = base(g, TOPOML_OP_RIPS, "crosspolytope", 2 * (k + 1), k + 1);
        c.k = k;
        c.max_dim = k;
        c.threshold = 1.9;
        c.dtype = dt0;
        c.metric = m0;
        set_input(&c, kind0, 1.9);
        add(g, &c, "sphere-S%u", k);
    }
    /* The claim's edge itself, on an input small enough for any dimension. */
    if (cl->max_dim > top) {
        tc_case c = base(g, TOPOML_OP_RIPS, "uniform", 10, 3);
        c.max_dim = cl->max_dim;
        c.dtype = dt0;
        c.metric = m0;
        set_input(&c, kind0, 2.0);
        add(g, &c, "claimed-max-dim-%u", cl->max_dim);
    }
    /* Moduli across the range. */
    uint32_t primes[6], n_primes = 0;
    static const uint32_t small[] = {2, 3, 5, 7};
    for (size_t i = 0; i < 4; i++)
        if (small[i] <= cl->max_modulus)
            primes[n_primes++] = small[i];
    if (cl->max_modulus > 257)
        primes[n_primes++] = 257;
    for (uint32_t p = cl->max_modulus; p > 7 && p != 257; p--)
        if (is_prime(p)) {
            primes[n_primes++] = p;
            break;
        }
    for (uint32_t i = 0; i < n_primes; i++) {
        tc_case c = base(g, TOPOML_OP_RIPS, "sphere", 36, 3);
        c.k = 2;
        c.noise = 0.05;
        c.max_dim = cl->max_dim < 2 ? cl->max_dim : 2;
        c.modulus = primes[i];
        c.dtype = dt0;
        c.metric = m0;
        set_input(&c, kind0, 2.5);
        add(g, &c, "sphere-noisy/Z%u", primes[i]);
        if (cl->max_dim >= 2) {
            c = base(g, TOPOML_OP_RIPS, "crosspolytope", 6, 3);
            c.k = 2;
            c.max_dim = 2;
            c.threshold = 1.9;
            c.modulus = primes[i];
            c.dtype = dt0;
            c.metric = m0;
            set_input(&c, kind0, 1.9);
            add(g, &c, "sphere-S2/Z%u", primes[i]);
        }
    }
    /* Sizes on both sides of 64, 100, 200 and 1000 points. */
    static const uint64_t rips_sizes[] = {0, 1, 2, 63, 65, 99, 101, 199, 201};
    for (size_t s = 0; s < sizeof rips_sizes / sizeof rips_sizes[0]; s++) {
        tc_case c = base(g, TOPOML_OP_RIPS, "uniform", rips_sizes[s], 2);
        c.dtype = dt0;
        c.metric = m0;
        set_input(&c, kind0, 2.0);
        add(g, &c, "uniform-n%llu", (unsigned long long)rips_sizes[s]);
    }
    static const uint64_t large[] = {999, 1001};
    for (size_t s = 0; s < 2; s++) {
        tc_case c = base(g, TOPOML_OP_RIPS, "uniform", large[s], 2);
        c.threshold = 0.06;
        c.dtype = dt0;
        c.metric = m0;
        set_input(&c, kind0, 0.06);
        add(g, &c, "uniform-n%llu-cut", (unsigned long long)large[s]);
    }
    /* Every input kind and dtype; duplicate points; ties. */
    for (uint32_t kind = 0; kind < TOPOML_INPUT_KIND_COUNT; kind++) {
        if (!(cl->inputs & (1u << kind)))
            continue;
        for (uint32_t dt = 0; dt < TOPOML_DTYPE_COUNT; dt++) {
            if (!(cl->dtypes & (1u << dt)) && kind != TOPOML_INPUT_SPARSE)
                continue;
            tc_case c = base(g, TOPOML_OP_RIPS, "circle", 40, 2);
            c.noise = 0.03;
            c.dtype = dt;
            c.metric = m0;
            set_input(&c, kind, 1.0);
            add(g, &c, "circle/%s/%s", input_names[kind], dtype_names[dt]);
            c = base(g, TOPOML_OP_RIPS, "duplicates", 60, 3);
            c.k = 2;
            c.max_dim = cl->max_dim < 2 ? cl->max_dim : 2;
            c.dtype = dt;
            c.metric = m0;
            set_input(&c, kind, 0.6);
            add(g, &c, "duplicates-n60/%s/%s", input_names[kind], dtype_names[dt]);
            c = base(g, TOPOML_OP_RIPS, "grid", 0, 3);
            c.side = 4;
            c.max_dim = cl->max_dim < 2 ? cl->max_dim : 2;
            c.dtype = dt;
            c.metric = m0;
            set_input(&c, kind, 1.5);
            add(g, &c, "grid-ties/%s/%s", input_names[kind], dtype_names[dt]);
            if (kind == TOPOML_INPUT_SPARSE)
                break;
        }
    }
    if (cl->inputs & (1u << TOPOML_INPUT_POINTS))
        for (uint32_t m = 0; m < TOPOML_METRIC_COUNT; m++) {
            if (!(cl->metrics & (1u << m)))
                continue;
            tc_case c = base(g, TOPOML_OP_RIPS, "circle", 30, 3);
            c.noise = 0.05;
            c.dtype = dt0;
            c.metric = m;
            add(g, &c, "circle-d3/%s", metric_names[m]);
        }
}

static void gen_image(gen_list *g, const claim *cl)
{
    for (uint32_t dt = 0; dt < TOPOML_DTYPE_COUNT; dt++) {
        if (!(cl->dtypes & (1u << dt)))
            continue;
        for (uint32_t w = 0; w < 3; w++) {
            tc_case c = base(g, TOPOML_OP_IMAGE, "circle", 40, 2);
            c.noise = 0.05;
            c.max_dim = 1;
            c.dtype = dt;
            c.width = 9;
            c.height = 7;
            c.sigma = 0.1;
            c.weight = w;
            add(g, &c, "circle/w%u/%s", w, dtype_names[dt]);
        }
        tc_case c = base(g, TOPOML_OP_IMAGE, "duplicates", 30, 2);
        c.k = 3;
        c.max_dim = 1;
        c.dtype = dt;
        c.width = 5;
        c.height = 5;
        c.sigma = 0.2;
        add(g, &c, "duplicates/%s", dtype_names[dt]);
    }
}

bool tc_generate_cases(const tc_plugin *plugins, size_t n_plugins, uint64_t seed, double ulps,
                       tc_case **out, size_t *n_out)
{
    claim cl[TOPOML_OP_COUNT];
    memset(cl, 0, sizeof cl);
    for (size_t i = 0; i < n_plugins; i++) {
        const tc_plugin *p = &plugins[i];
        if (!p->loaded || p->probe_status != TOPOML_OK)
            continue;
        for (uint32_t k = 0; k < p->n_caps; k++) {
            const topoml_capability_v1 *cp = &p->caps[k];
            if (cp->op >= TOPOML_OP_COUNT)
                continue;
            claim *c = &cl[cp->op];
            c->any = true;
            c->dtypes |= cp->dtypes;
            c->metrics |= cp->metrics;
            c->inputs |= cp->inputs;
            c->max_dim = cp->max_dim > c->max_dim ? cp->max_dim : c->max_dim;
            c->max_modulus = cp->max_modulus > c->max_modulus ? cp->max_modulus : c->max_modulus;
        }
    }
    gen_list g = {.seed = seed, .ulps = ulps};
    if (cl[TOPOML_OP_DISTANCES].any)
        gen_distances(&g, &cl[TOPOML_OP_DISTANCES]);
    if (cl[TOPOML_OP_EDGES].any)
        gen_edges_h0(&g, &cl[TOPOML_OP_EDGES], TOPOML_OP_EDGES);
    if (cl[TOPOML_OP_H0].any)
        gen_edges_h0(&g, &cl[TOPOML_OP_H0], TOPOML_OP_H0);
    if (cl[TOPOML_OP_RIPS].any)
        gen_rips(&g, &cl[TOPOML_OP_RIPS]);
    if (cl[TOPOML_OP_IMAGE].any)
        gen_image(&g, &cl[TOPOML_OP_IMAGE]);
    if (g.failed) {
        free(g.cases);
        return false;
    }
    *out = g.cases;
    *n_out = g.n;
    return true;
}
