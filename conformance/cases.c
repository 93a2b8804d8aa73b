/*
 * cases.c — reading the case list (conformance/cases.yaml) with libyaml.
 *
 * The file is the suite's "mustpass" list: a suite_version, a default
 * tolerance, and cases, each naming an op, an input (a seeded generator or a
 * data file), parameters and a tier. A parameter given as a list expands
 * into one case per value (the product over all listed keys), so that
 * "every metric in both dtypes" is one entry that still yields one named
 * result per combination. Unknown keys and bad values are errors naming
 * file:line:column: a typo must never shrink the suite silently.
 */
#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "conformance.h"

static const char *op_names[TOPOML_OP_COUNT] = {"distances", "edges", "h0", "rips", "image"};
static const char *metric_names[TOPOML_METRIC_COUNT] = {"euclidean", "sqeuclidean", "manhattan",
                                                        "chebyshev", "cosine"};
static const char *dtype_names[TOPOML_DTYPE_COUNT] = {"f32", "f64"};
static const char *input_names[TOPOML_INPUT_KIND_COUNT] = {"points", "condensed", "sparse"};
static const char *weight_names[] = {"constant", "linear", "power"};
static const char *generators[] = {"uniform",  "gaussian", "circle",     "sphere", "torus",
                                   "clusters", "grid",     "duplicates", "file"};

const char *tc_tier_name(tc_tier t)
{
    return t == TC_TIER_QUICK ? "quick" : "full";
}

typedef struct parser {
    const char *path;
    yaml_document_t *doc;
    char *err;
    size_t err_size;
} parser;

static bool fail(parser *p, const yaml_node_t *n, const char *fmt, const char *arg)
{
    char msg[384];
    snprintf(msg, sizeof msg, fmt, arg);
    snprintf(p->err, p->err_size, "%s:%zu:%zu: %s", p->path, n ? n->start_mark.line + 1 : 0,
             n ? n->start_mark.column + 1 : 0, msg);
    return false;
}

static int find_name(const char *const *names, int count, const char *s)
{
    for (int i = 0; i < count; i++)
        if (strcmp(names[i], s) == 0)
            return i;
    return -1;
}

static bool to_u64(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    if (*s == '-' || !*s)
        return false;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end || errno)
        return false;
    *out = v;
    return true;
}

static bool to_double(const char *s, double *out)
{
    if (strcmp(s, "inf") == 0 || strcmp(s, "none") == 0) {
        *out = INFINITY;
        return true;
    }
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno || isnan(v))
        return false;
    *out = v;
    return true;
}

/* Set one key of a case from its text. `section` is "input", "params" or
 * "tolerance". */
static bool set_key(parser *p, const yaml_node_t *n, tc_case *c, const char *section,
                    const char *key, const char *v)
{
    uint64_t u;
    double d;
    int i;
#define U64(field)                                                                                 \
    do {                                                                                           \
        if (!to_u64(v, &u))                                                                        \
            return fail(p, n, "'%s' must be a non-negative integer", key);                         \
        c->field = u;                                                                              \
        return true;                                                                               \
    } while (0)
#define U32(field)                                                                                 \
    do {                                                                                           \
        if (!to_u64(v, &u) || u > UINT32_MAX)                                                      \
            return fail(p, n, "'%s' must be a non-negative integer", key);                         \
        c->field = (uint32_t)u;                                                                    \
        return true;                                                                               \
    } while (0)
#define DBL(field)                                                                                 \
    do {                                                                                           \
        if (!to_double(v, &d))                                                                     \
            return fail(p, n, "'%s' must be a number", key);                                       \
        c->field = d;                                                                              \
        return true;                                                                               \
    } while (0)
#define NAMED(field, names, count)                                                                 \
    do {                                                                                           \
        if ((i = find_name(names, count, v)) < 0)                                                  \
            return fail(p, n, "unknown value '%s'", v);                                            \
        c->field = (uint32_t)i;                                                                    \
        return true;                                                                               \
    } while (0)
    if (strcmp(section, "input") == 0) {
        if (!strcmp(key, "generator")) {
            if (find_name(generators, (int)(sizeof generators / sizeof generators[0]), v) < 0)
                return fail(p, n, "unknown generator '%s'", v);
            snprintf(c->generator, sizeof c->generator, "%s", v);
            return true;
        }
        if (!strcmp(key, "seed"))
            U64(seed);
        if (!strcmp(key, "n"))
            U64(n);
        if (!strcmp(key, "dim"))
            U64(dim);
        if (!strcmp(key, "sphere_dim") || !strcmp(key, "clusters") || !strcmp(key, "copies"))
            U32(k);
        if (!strcmp(key, "side"))
            U32(side);
        if (!strcmp(key, "radius"))
            DBL(radius);
        if (!strcmp(key, "radius2"))
            DBL(radius2);
        if (!strcmp(key, "noise"))
            DBL(noise);
        if (!strcmp(key, "spread"))
            DBL(spread);
        if (!strcmp(key, "scale"))
            DBL(scale);
        if (!strcmp(key, "sparse_threshold"))
            DBL(sparse_threshold);
        if (!strcmp(key, "as"))
            NAMED(as, input_names, TOPOML_INPUT_KIND_COUNT);
        if (!strcmp(key, "weights")) {
            if (strcmp(v, "dtm") && strcmp(v, "random"))
                return fail(p, n, "unknown weights '%s' (dtm, random)", v);
            c->weights = !strcmp(v, "dtm") ? TOPOML_WEIGHTS_DTM : TOPOML_WEIGHTS_GIVEN;
            return true;
        }
        if (!strcmp(key, "weight_p"))
            DBL(weight_p);
        if (!strcmp(key, "dtm_neighbors"))
            U32(dtm_neighbors);
        if (!strcmp(key, "dtm_r"))
            DBL(dtm_r);
        if (!strcmp(key, "file")) {
            if (strchr(v, '/') || strlen(v) >= sizeof c->file)
                return fail(p, n, "'%s' must be a file name in the data folder", key);
            snprintf(c->file, sizeof c->file, "%s", v);
            return true;
        }
        if (!strcmp(key, "format")) {
            topoml_format f;
            if (topoml_format_from_name(v, &f) != TOPOML_OK)
                return fail(p, n, "unknown format '%s'", v);
            c->file_format = (uint32_t)f;
            return true;
        }
    } else if (strcmp(section, "params") == 0) {
        if (!strcmp(key, "metric"))
            NAMED(metric, metric_names, TOPOML_METRIC_COUNT);
        if (!strcmp(key, "dtype"))
            NAMED(dtype, dtype_names, TOPOML_DTYPE_COUNT);
        if (!strcmp(key, "threshold"))
            DBL(threshold);
        if (!strcmp(key, "max_dim"))
            U32(max_dim);
        if (!strcmp(key, "modulus"))
            U32(modulus);
        if (!strcmp(key, "image_dim"))
            U32(image_dim);
        if (!strcmp(key, "width"))
            U32(width);
        if (!strcmp(key, "height"))
            U32(height);
        if (!strcmp(key, "sigma"))
            DBL(sigma);
        if (!strcmp(key, "weight"))
            NAMED(weight, weight_names, 3);
    } else if (strcmp(section, "tolerance") == 0) {
        if (!strcmp(key, "ulps"))
            DBL(tol_ulps);
    }
#undef U64
#undef U32
#undef DBL
#undef NAMED
    return fail(p, n, "unknown key '%s'", key);
}

/* Keys whose value may be a list that expands into several cases. */
static bool expandable(const char *section, const char *key)
{
    static const char *keys[] = {"params.metric",    "params.dtype",   "params.modulus",
                                 "params.threshold", "params.max_dim", "input.as",
                                 "input.n",          "input.dim",      "input.seed",
                                 "params.weight",    "params.sigma"};
    char full[64];
    snprintf(full, sizeof full, "%s.%s", section, key);
    return find_name(keys, (int)(sizeof keys / sizeof keys[0]), full) >= 0;
}

typedef struct axis {
    const char *section, *key;
    const yaml_node_t *list;
} axis;

static const char *scalar(const yaml_node_t *n)
{
    return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* Apply one mapping section to the base case, recording list axes. */
static bool apply_section(parser *p, const yaml_node_t *map, const char *section, tc_case *c,
                          axis *axes, size_t *n_axes)
{
    if (map->type != YAML_MAPPING_NODE)
        return fail(p, map, "'%s' must be a mapping", section);
    for (yaml_node_pair_t *kv = map->data.mapping.pairs.start; kv < map->data.mapping.pairs.top;
         kv++) {
        yaml_node_t *k = yaml_document_get_node(p->doc, kv->key);
        yaml_node_t *v = yaml_document_get_node(p->doc, kv->value);
        const char *key = scalar(k);
        if (!key || !v)
            return fail(p, k, "%s", "keys must be plain strings");
        if (v->type == YAML_SEQUENCE_NODE) {
            if (!expandable(section, key))
                return fail(p, v, "'%s' cannot be a list", key);
            if (v->data.sequence.items.top == v->data.sequence.items.start)
                return fail(p, v, "'%s' is an empty list", key);
            if (*n_axes == 8)
                return fail(p, v, "%s", "too many list parameters in one case");
            axes[(*n_axes)++] = (axis){section, key, v};
            continue;
        }
        const char *val = scalar(v);
        if (!val)
            return fail(p, v, "'%s' must be a single value", key);
        if (!set_key(p, v, c, section, key, val))
            return false;
    }
    return true;
}

static bool add_case(parser *p, tc_suite *s, const tc_case *c, const yaml_node_t *at)
{
    for (size_t i = 0; i < s->n_cases; i++)
        if (strcmp(s->cases[i].name, c->name) == 0)
            return fail(p, at, "case name '%s' used twice", c->name);
    tc_case *grown = realloc(s->cases, (s->n_cases + 1) * sizeof *grown);
    if (!grown)
        return fail(p, at, "%s", "out of memory");
    s->cases = grown;
    s->cases[s->n_cases++] = *c;
    return true;
}

/* Expand axes[k..] over the base case, appending "/value" to the name. */
static bool expand(parser *p, tc_suite *s, const tc_case *base, const axis *axes, size_t n_axes,
                   size_t k, const yaml_node_t *at)
{
    if (k == n_axes)
        return add_case(p, s, base, at);
    const yaml_node_t *list = axes[k].list;
    for (yaml_node_item_t *it = list->data.sequence.items.start; it < list->data.sequence.items.top;
         it++) {
        yaml_node_t *item = yaml_document_get_node(p->doc, *it);
        const char *val = scalar(item);
        if (!val)
            return fail(p, item, "items of '%s' must be single values", axes[k].key);
        tc_case c = *base;
        if (!set_key(p, item, &c, axes[k].section, axes[k].key, val))
            return false;
        size_t len = strlen(c.name);
        if (snprintf(c.name + len, sizeof c.name - len, "/%s", val) >= (int)(sizeof c.name - len))
            return fail(p, item, "%s", "case name too long");
        if (!expand(p, s, &c, axes, n_axes, k + 1, at))
            return false;
    }
    return true;
}

/* Checks that need the whole case. */
static bool check_case(parser *p, const yaml_node_t *at, const tc_case *c)
{
    if (!c->generator[0])
        return fail(p, at, "case '%s' has no input generator", c->name);
    if (!strcmp(c->generator, "file") && !c->file[0])
        return fail(p, at, "case '%s': generator file needs 'file'", c->name);
    if (strcmp(c->generator, "file") && strcmp(c->generator, "grid") && c->dim == 0 && c->n > 0)
        return fail(p, at, "case '%s' needs 'dim'", c->name);
    if (!strcmp(c->generator, "grid") && (c->side == 0 || c->dim == 0))
        return fail(p, at, "case '%s': grid needs 'side' and 'dim'", c->name);
    if (c->op == TOPOML_OP_IMAGE && (c->width == 0 || c->height == 0 || !(c->sigma > 0)))
        return fail(p, at, "case '%s': image needs width, height and sigma", c->name);
    if (c->weights && c->as == TOPOML_INPUT_POINTS)
        return fail(p, at, "case '%s': a weighted input is a matrix (as: condensed or sparse)",
                    c->name);
    if (c->as == TOPOML_INPUT_SPARSE && !(c->sparse_threshold >= 0))
        return fail(p, at, "case '%s': sparse input needs sparse_threshold", c->name);
    if (c->op == TOPOML_OP_RIPS && c->modulus < 2)
        return fail(p, at, "case '%s': modulus must be a prime >= 2", c->name);
    if (!(c->tol_ulps > 0))
        return fail(p, at, "case '%s': tolerance ulps must be > 0", c->name);
    return true;
}

void tc_case_init(tc_case *c)
{
    memset(c, 0, sizeof *c);
    c->dtype = TOPOML_F64;
    c->metric = TOPOML_METRIC_EUCLIDEAN;
    c->threshold = INFINITY;
    c->modulus = 2;
    c->as = TOPOML_INPUT_POINTS;
    c->radius = 1.0;
    c->radius2 = 0.3;
    c->spread = 0.05;
    c->scale = 1.0;
    c->sparse_threshold = -1;
    c->weight_p = 1;
    c->dtm_neighbors = 3;
    c->dtm_r = 2;
}

static bool parse_case(parser *p, tc_suite *s, const yaml_node_t *node, double default_ulps)
{
    if (node->type != YAML_MAPPING_NODE)
        return fail(p, node, "%s", "each case must be a mapping");
    tc_case c;
    tc_case_init(&c);
    c.line = (unsigned)node->start_mark.line + 1;
    c.tier = TC_TIER_FULL;
    c.op = TOPOML_OP_COUNT;
    c.max_dim = 1;
    c.file_format = TOPOML_FORMAT_LOWER_DISTANCE;
    c.tol_ulps = default_ulps;
    axis axes[8];
    size_t n_axes = 0;
    for (yaml_node_pair_t *kv = node->data.mapping.pairs.start; kv < node->data.mapping.pairs.top;
         kv++) {
        yaml_node_t *k = yaml_document_get_node(p->doc, kv->key);
        yaml_node_t *v = yaml_document_get_node(p->doc, kv->value);
        const char *key = scalar(k), *val = scalar(v);
        if (!key || !v)
            return fail(p, k, "%s", "keys must be plain strings");
        if (!strcmp(key, "input") || !strcmp(key, "params") || !strcmp(key, "tolerance")) {
            if (!apply_section(p, v, key, &c, axes, &n_axes))
                return false;
            continue;
        }
        if (!val)
            return fail(p, v, "'%s' must be a single value", key);
        if (!strcmp(key, "name")) {
            if (strlen(val) >= sizeof c.name - 64 || strchr(val, ' '))
                return fail(p, v, "%s", "case names have no spaces and fewer than 128 characters");
            snprintf(c.name, sizeof c.name, "%s", val);
        } else if (!strcmp(key, "tier")) {
            if (!strcmp(val, "quick"))
                c.tier = TC_TIER_QUICK;
            else if (!strcmp(val, "full"))
                c.tier = TC_TIER_FULL;
            else
                return fail(p, v, "tier must be quick or full, not '%s'", val);
        } else if (!strcmp(key, "op")) {
            int i = find_name(op_names, TOPOML_OP_COUNT, val);
            if (i < 0)
                return fail(p, v, "unknown op '%s'", val);
            c.op = (uint32_t)i;
        } else {
            return fail(p, k, "unknown key '%s'", key);
        }
    }
    if (!c.name[0])
        return fail(p, node, "%s", "case without a name");
    if (c.op == TOPOML_OP_COUNT)
        return fail(p, node, "case '%s' has no op", c.name);
    /* Checks run on every expanded case, so check the base with the first
     * value of each axis by expanding into a scratch suite first. */
    tc_suite scratch = {0};
    bool ok = expand(p, &scratch, &c, axes, n_axes, 0, node);
    for (size_t i = 0; ok && i < scratch.n_cases; i++)
        ok = check_case(p, node, &scratch.cases[i]) && add_case(p, s, &scratch.cases[i], node);
    free(scratch.cases);
    return ok;
}

bool tc_suite_load(tc_suite *s, const char *path, char *err, size_t err_size)
{
    memset(s, 0, sizeof *s);
    snprintf(s->path, sizeof s->path, "%s", path);
    const char *slash = strrchr(path, '/');
    snprintf(s->data_dir, sizeof s->data_dir, "%.*s/data", slash ? (int)(slash - path) : 1,
             slash ? path : ".");
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, err_size, "%s: %s", path, strerror(errno));
        return false;
    }
    yaml_parser_t yp;
    yaml_document_t doc;
    if (!yaml_parser_initialize(&yp)) {
        fclose(f);
        snprintf(err, err_size, "out of memory");
        return false;
    }
    yaml_parser_set_input_file(&yp, f);
    if (!yaml_parser_load(&yp, &doc)) {
        snprintf(err, err_size, "%s:%zu:%zu: %s", path, yp.problem_mark.line + 1,
                 yp.problem_mark.column + 1, yp.problem ? yp.problem : "YAML syntax error");
        yaml_parser_delete(&yp);
        fclose(f);
        return false;
    }
    parser p = {path, &doc, err, err_size};
    bool ok = true;
    double ulps = 4;
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    const yaml_node_t *cases = NULL;
    if (!root || root->type != YAML_MAPPING_NODE) {
        ok = fail(&p, root, "%s", "the case file must be a mapping");
    } else {
        for (yaml_node_pair_t *kv = root->data.mapping.pairs.start;
             ok && kv < root->data.mapping.pairs.top; kv++) {
            yaml_node_t *k = yaml_document_get_node(&doc, kv->key);
            yaml_node_t *v = yaml_document_get_node(&doc, kv->value);
            const char *key = scalar(k);
            if (!key || !v) {
                ok = fail(&p, k, "%s", "keys must be plain strings");
            } else if (!strcmp(key, "suite_version") && scalar(v) &&
                       strlen(scalar(v)) < sizeof s->version) {
                snprintf(s->version, sizeof s->version, "%s", scalar(v));
            } else if (!strcmp(key, "tolerance") && v->type == YAML_MAPPING_NODE) {
                tc_case t = {.tol_ulps = ulps};
                size_t n_axes = 0;
                ok = apply_section(&p, v, "tolerance", &t, NULL, &n_axes) && n_axes == 0;
                ulps = t.tol_ulps;
            } else if (!strcmp(key, "cases") && v->type == YAML_SEQUENCE_NODE) {
                cases = v;
            } else {
                ok = fail(&p, k,
                          "unknown or malformed top-level key '%s' (known: suite_version, "
                          "tolerance, cases)",
                          key);
            }
        }
        if (ok && !s->version[0])
            ok = fail(&p, root, "%s", "no suite_version");
        if (ok && !cases)
            ok = fail(&p, root, "%s", "no cases");
        for (yaml_node_item_t *it = cases ? cases->data.sequence.items.start : NULL;
             ok && it < cases->data.sequence.items.top; it++)
            ok = parse_case(&p, s, yaml_document_get_node(&doc, *it), ulps);
    }
    yaml_document_delete(&doc);
    yaml_parser_delete(&yp);
    fclose(f);
    if (!ok)
        tc_suite_free(s);
    return ok;
}

void tc_suite_free(tc_suite *s)
{
    free(s->cases);
    s->cases = NULL;
    s->n_cases = 0;
}

bool tc_case_selected(const tc_case *c, tc_tier tier, char *const *globs, size_t n_globs)
{
    if (c->tier > tier)
        return false;
    if (n_globs == 0)
        return true;
    for (size_t i = 0; i < n_globs; i++)
        if (fnmatch(globs[i], c->name, 0) == 0)
            return true;
    return false;
}
