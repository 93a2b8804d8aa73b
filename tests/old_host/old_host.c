/*
 * old_host.c — a host built against the baseline release's plugin header
 * (abi/include: the first ABI-v1 layout, core 0.1) that loads every plugin
 * built in this tree (the plugins-out folder) and calls it as such a host
 * would: with the shorter tables of that layout (no call.n_threads, no
 * rips_params.flags, no barcode.generators, no input.memory), each in a heap
 * block of exactly that layout's size (TOPOML_*_V1_MIN_SIZE), so that
 * Valgrind and ASan see a read past one. The tables keep that size when the
 * baseline moves to a later release: the test keeps testing the oldest host.
 *
 * For each plugin: negotiate, create, probe (a failed probe — hardware that
 * is not there — skips the plugin; nothing else may fail), then every op
 * that each capability record claims, in every input kind, dtype and metric
 * the record names, on small seeded inputs. Every call must answer OK, with
 * the answer the scalar plugin gives through the same old tables, and the
 * answer the plugin itself gives through tables of today's sizes.
 *
 * Not what the core does (it always sends today's sizes): what a plugin
 * must accept from any host (docs/plugin-abi.md, "What a plugin must
 * accept").
 */
#include <topoml/plugin.h>

#include <check.h>
#include <dirent.h>
#include <dlfcn.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check_run.h"
#include "today_sizes.h"

#define N_POINTS 11
#define DIM 3
#define N_PAIRS (N_POINTS * (N_POINTS - 1) / 2)
#define SPARSE_THRESHOLD 0.7
#define MAX_PLUGINS 32

static char plugin_names[MAX_PLUGINS][256];
static int n_plugins;
static old_host_sizes today; /* sizeof in today's header */
static old_host_sizes least; /* the first ABI-v1 layout's ends */

/* ---- the host's services ---- */

static long live_blocks; /* allocations handed out and not yet freed */

static void *host_alloc(void *host_data, size_t size)
{
    (void)host_data;
    void *p = malloc(size ? size : 1);
    if (p)
        live_blocks++;
    return p;
}

static void *host_realloc(void *host_data, void *ptr, size_t size)
{
    (void)host_data;
    void *p = realloc(ptr, size ? size : 1);
    if (p && !ptr)
        live_blocks++;
    return p;
}

static void host_free(void *host_data, void *ptr)
{
    (void)host_data;
    if (ptr)
        live_blocks--;
    free(ptr);
}

static void host_log(void *host_data, int level, const char *message)
{
    (void)host_data;
    (void)level;
    (void)message;
}

/* A table, zeroed, with struct_size set: `old_size` bytes (the first ABI-v1
 * layout's end) or today's size. Only fields of that layout are written. */
static void *table(size_t old_size, size_t today_size, bool today_layout)
{
    size_t size = today_layout ? today_size : old_size;
    ck_assert_uint_le(old_size, today_size);
    uint32_t *t = calloc(1, size);
    ck_assert_ptr_nonnull(t);
    t[0] = (uint32_t)size;
    return t;
}

/* ---- a loaded plugin ---- */

typedef struct plugin {
    void *dl;
    topoml_host_v1 *host;
    const topoml_backend_v1 *be;
    void *state;
    int probe_status;
    char why[256];
    const topoml_capability_v1 *caps;
    uint32_t n_caps;
} plugin;

static void plugin_open(plugin *p, const char *file)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", TOPOML_PLUGIN_DIR, file);
    memset(p, 0, sizeof *p);
    p->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    ck_assert_msg(p->dl != NULL, "%s: %s", file, dlerror());
    topoml_backend_negotiate_fn negotiate;
    *(void **)&negotiate = dlsym(p->dl, "topoml_backend_negotiate");
    ck_assert_msg(negotiate != NULL, "%s: no entry symbol", file);

    p->host = table(least.host, today.host, false);
    p->host->abi_version = 1;
    p->host->alloc = host_alloc;
    p->host->realloc = host_realloc;
    p->host->free = host_free;
    p->host->log = host_log;
    p->host->core_version = "0.1.0";
    uint32_t abi = 1;
    int st = negotiate(&abi, p->host, &p->be);
    ck_assert_msg(st == TOPOML_OK, "%s: negotiate: status %d", file, st);
    ck_assert_uint_eq(abi, 1);
    ck_assert_ptr_nonnull(p->be);
    ck_assert_uint_ge(p->be->struct_size,
                      offsetof(topoml_backend_v1, capabilities) + sizeof p->be->capabilities);
    ck_assert_ptr_nonnull(p->be->probe);
    ck_assert_ptr_nonnull(p->be->capabilities);
    if (p->be->create) {
        st = p->be->create(p->host, &p->state);
        ck_assert_msg(st == TOPOML_OK, "%s: create: status %d", file, st);
    }
    p->probe_status = p->be->probe(p->state, p->why, sizeof p->why);
    if (p->probe_status != TOPOML_OK)
        return;
    st = p->be->capabilities(p->state, &p->caps, &p->n_caps);
    ck_assert_msg(st == TOPOML_OK, "%s: capabilities: status %d", file, st);
}

static void plugin_close(plugin *p)
{
    if (p->be && p->be->destroy && p->state)
        p->be->destroy(p->state);
    free(p->host);
    /* The plugins are not dlclose'd: some keep thread-local storage whose
     * destructors would run after the code is gone. */
    memset(p, 0, sizeof *p);
}

/* ---- inputs ---- */

static double points64[N_POINTS * DIM];
static float points32[N_POINTS * DIM];
static double condensed64[N_PAIRS];
static float condensed32[N_PAIRS];
static topoml_edge sparse[N_PAIRS];
static uint64_t n_sparse;
/* The edges op's threshold for the case at hand (edge_threshold). */
static double edges_threshold;

static void make_inputs(uint64_t seed)
{
    uint64_t s = seed;
    for (int k = 0; k < N_POINTS * DIM; k++) {
        s = s * 6364136223846793005u + 1442695040888963407u;
        points64[k] = (double)(s >> 11) / 9007199254740992.0;
        points32[k] = (float)points64[k];
    }
    n_sparse = 0;
    for (uint32_t i = 1; i < N_POINTS; i++)
        for (uint32_t j = 0; j < i; j++) {
            double d = 0;
            for (int c = 0; c < DIM; c++)
                d = hypot(d, points64[i * DIM + c] - points64[j * DIM + c]);
            condensed64[i * (i - 1) / 2 + j] = d;
            condensed32[i * (i - 1) / 2 + j] = (float)d;
            if (d <= SPARSE_THRESHOLD)
                sparse[n_sparse++] = (topoml_edge){d, j, i};
        }
}

/* One input in the baseline layout or today's. */
static topoml_input_v1 *input(bool today_layout, uint32_t kind, uint32_t dtype, uint32_t metric)
{
    topoml_input_v1 *in = table(least.input, today.input, today_layout);
    in->kind = kind;
    in->n = N_POINTS;
    in->dtype = dtype;
    in->metric = metric;
    if (kind == TOPOML_INPUT_POINTS) {
        in->dim = DIM;
        in->data = dtype == TOPOML_F32 ? (const void *)points32 : (const void *)points64;
    } else if (kind == TOPOML_INPUT_CONDENSED) {
        in->data = dtype == TOPOML_F32 ? (const void *)condensed32 : (const void *)condensed64;
    } else {
        in->dtype = TOPOML_F64;
        in->n_edges = n_sparse;
        in->edges = sparse;
    }
    return in;
}

static char error_text[512];

static topoml_call_v1 *call_table(bool today_layout)
{
    topoml_call_v1 *c = table(least.call, today.call, today_layout);
    c->alloc = host_alloc;
    c->realloc = host_realloc;
    c->free = host_free;
    c->log = host_log;
    c->error = error_text;
    c->error_size = sizeof error_text;
    c->device = -1;
    error_text[0] = '\0';
    return c;
}

/* ---- one op, its answer, and comparing answers ---- */

typedef struct answer {
    int status;
    double *values; /* distances, edge lengths, image pixels; bars' births and deaths */
    uint32_t *ints; /* edges' vertices; bars' dimensions */
    uint64_t n;
    char error[512];
} answer;

typedef struct op_case {
    uint32_t op, kind, dtype, metric;
    uint32_t max_dim, modulus;
} op_case;

static int interval_order(const void *a, const void *b)
{
    const topoml_interval *x = a, *y = b;
    if (x->dim != y->dim)
        return x->dim < y->dim ? -1 : 1;
    if (x->birth != y->birth)
        return x->birth < y->birth ? -1 : 1;
    if (x->death != y->death)
        return x->death < y->death ? -1 : 1;
    return 0;
}

/* A barcode as sorted (dim, birth, death), so that two backends' orders
 * within a dimension do not matter. */
static void take_barcode(answer *a, topoml_barcode_v1 *bc, uint32_t max_dim)
{
    if (a->status == TOPOML_OK) {
        ck_assert_uint_eq(bc->complete, 1);
        ck_assert_uint_eq(bc->max_dim, max_dim);
        qsort(bc->intervals, bc->n_intervals, sizeof *bc->intervals, interval_order);
        a->n = bc->n_intervals;
        a->values = malloc(2 * (a->n ? a->n : 1) * sizeof *a->values);
        a->ints = malloc((a->n ? a->n : 1) * sizeof *a->ints);
        for (uint64_t k = 0; k < a->n; k++) {
            a->values[2 * k] = bc->intervals[k].birth;
            a->values[2 * k + 1] = bc->intervals[k].death;
            a->ints[k] = bc->intervals[k].dim;
        }
    }
    host_free(NULL, bc->intervals);
}

static const topoml_pair image_pairs[] = {{0.0, 0.3},  {0.1, 0.8},  {0.2, INFINITY},
                                          {0.05, 0.5}, {0.4, 0.45}, {0.3, 0.9}};
static const uint64_t image_offsets[] = {0, 4, 6};
#define IMAGE_W 5
#define IMAGE_H 4

static answer run_op(plugin *p, const op_case *oc, bool today_layout)
{
    answer a;
    memset(&a, 0, sizeof a);
    topoml_call_v1 *call = call_table(today_layout);
    topoml_input_v1 *in = input(today_layout, oc->kind, oc->dtype, oc->metric);
    const topoml_backend_v1 *be = p->be;
    switch (oc->op) {
    case TOPOML_OP_DISTANCES: {
        size_t elem = oc->dtype == TOPOML_F32 ? sizeof(float) : sizeof(double);
        void *out = malloc(N_PAIRS * elem);
        a.status = be->distances(p->state, call, in, out);
        a.n = N_PAIRS;
        a.values = malloc(N_PAIRS * sizeof *a.values);
        for (int k = 0; k < N_PAIRS; k++)
            a.values[k] = oc->dtype == TOPOML_F32 ? ((float *)out)[k] : ((double *)out)[k];
        free(out);
        break;
    }
    case TOPOML_OP_EDGES: {
        topoml_edge *edges = NULL;
        uint64_t n = 0;
        a.status = be->edges(p->state, call, in, edges_threshold, &edges, &n);
        if (a.status == TOPOML_OK) {
            a.n = n;
            a.values = malloc((n ? n : 1) * sizeof *a.values);
            a.ints = malloc(2 * (n ? n : 1) * sizeof *a.ints);
            for (uint64_t k = 0; k < n; k++) {
                a.values[k] = edges[k].d;
                a.ints[2 * k] = edges[k].i;
                a.ints[2 * k + 1] = edges[k].j;
            }
        }
        host_free(NULL, edges);
        break;
    }
    case TOPOML_OP_H0: {
        topoml_barcode_v1 *bc = table(least.barcode, today.barcode, today_layout);
        a.status = be->h0(p->state, call, in, INFINITY, bc);
        take_barcode(&a, bc, 0);
        free(bc);
        break;
    }
    case TOPOML_OP_RIPS: {
        topoml_rips_params_v1 *params = table(least.rips_params, today.rips_params, today_layout);
        params->max_dim = oc->max_dim;
        params->threshold = INFINITY;
        params->modulus = oc->modulus;
        topoml_barcode_v1 *bc = table(least.barcode, today.barcode, today_layout);
        a.status = be->rips(p->state, call, in, params, bc);
        take_barcode(&a, bc, oc->max_dim);
        free(bc);
        free(params);
        break;
    }
    case TOPOML_OP_IMAGE: {
        topoml_image_params_v1 *ip = table(least.image_params, today.image_params, today_layout);
        ip->weight = TOPOML_WEIGHT_LINEAR;
        ip->weight_max = 0.5;
        ip->sigma = 0.1;
        ip->birth_min = 0.0;
        ip->birth_max = 0.5;
        ip->pers_min = 0.0;
        ip->pers_max = 1.0;
        ip->width = IMAGE_W;
        ip->height = IMAGE_H;
        ip->infinite = TOPOML_INFINITE_CLIP;
        ip->clip_death = 1.0;
        a.n = 2 * IMAGE_W * IMAGE_H;
        a.values = calloc(a.n, sizeof *a.values);
        a.status = be->image(p->state, call, ip, 2, image_offsets, image_pairs, a.values);
        free(ip);
        break;
    }
    default: ck_abort_msg("op %u", oc->op);
    }
    snprintf(a.error, sizeof a.error, "%s", error_text);
    free(in);
    free(call);
    return a;
}

static void answer_free(answer *a)
{
    free(a->values);
    free(a->ints);
}

static bool close_to(double x, double y, double rel)
{
    if (x == y)
        return true; /* also both +inf */
    return fabs(x - y) <= rel * fmax(fabs(x), fabs(y)) + 1e-12;
}

static void describe(char *buf, size_t size, const char *file, const op_case *oc)
{
    static const char *ops[] = {"distances", "edges", "h0", "rips", "image"};
    static const char *kinds[] = {"points", "condensed", "sparse"};
    snprintf(buf, size, "%s %s (%s, %s, metric %u, max_dim %u, Z/%u)", file, ops[oc->op],
             oc->op == TOPOML_OP_IMAGE ? "-" : kinds[oc->kind],
             oc->dtype == TOPOML_F32 ? "f32" : "f64", oc->metric, oc->max_dim, oc->modulus);
}

/* The values and integers of two answers of one op agree. */
static void compare(const answer *x, const answer *y, uint32_t op, double rel, const char *what,
                    const char *against)
{
    ck_assert_msg(x->n == y->n, "%s: %llu results, %s gives %llu", what, (unsigned long long)x->n,
                  against, (unsigned long long)y->n);
    uint64_t n_values = op == TOPOML_OP_H0 || op == TOPOML_OP_RIPS ? 2 * x->n : x->n;
    uint64_t n_ints = op == TOPOML_OP_EDGES                        ? 2 * x->n
                      : op == TOPOML_OP_H0 || op == TOPOML_OP_RIPS ? x->n
                                                                   : 0;
    for (uint64_t k = 0; k < n_values; k++)
        ck_assert_msg(close_to(x->values[k], y->values[k], rel),
                      "%s: value %llu is %.17g, %s gives %.17g", what, (unsigned long long)k,
                      x->values[k], against, y->values[k]);
    for (uint64_t k = 0; k < n_ints; k++)
        ck_assert_msg(x->ints[k] == y->ints[k], "%s: entry %llu is %u, %s gives %u", what,
                      (unsigned long long)k, x->ints[k], against, y->ints[k]);
}

static int double_order(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* A threshold for the edges op that no rounding can move a pair across: the
 * middle of the widest gap in the middle third of the case's distances (the
 * scalar plugin's, in the case's dtype and metric). */
static void edge_threshold(plugin *ref, const op_case *oc)
{
    double *d = malloc(N_PAIRS * sizeof *d);
    ck_assert_ptr_nonnull(d);
    if (oc->kind == TOPOML_INPUT_POINTS) {
        op_case dc = *oc;
        dc.op = TOPOML_OP_DISTANCES;
        answer a = run_op(ref, &dc, false);
        ck_assert_msg(a.status == TOPOML_OK, "the scalar plugin's distances: %s", a.error);
        memcpy(d, a.values, N_PAIRS * sizeof *d);
        answer_free(&a);
    } else {
        for (int k = 0; k < N_PAIRS; k++)
            d[k] = oc->dtype == TOPOML_F32 ? condensed32[k] : condensed64[k];
    }
    qsort(d, N_PAIRS, sizeof *d, double_order);
    int best = N_PAIRS / 3;
    for (int k = N_PAIRS / 3; k < 2 * N_PAIRS / 3; k++)
        if (d[k + 1] - d[k] > d[best + 1] - d[best])
            best = k;
    edges_threshold = (d[best] + d[best + 1]) / 2;
    free(d);
}

/* Run one case on `p` through old and today's tables, and on the scalar
 * plugin through old tables; all three must agree. */
static void check_case(plugin *p, plugin *ref, const char *file, const op_case *oc)
{
    char what[512];
    describe(what, sizeof what, file, oc);
    if (oc->op == TOPOML_OP_EDGES)
        edge_threshold(ref, oc);
    answer old = run_op(p, oc, false);
    ck_assert_msg(old.status == TOPOML_OK, "%s, baseline-size tables: status %d: %s", what,
                  old.status, old.error);
    answer now = run_op(p, oc, true);
    ck_assert_msg(now.status == TOPOML_OK, "%s, today's tables: status %d: %s", what, now.status,
                  now.error);
    answer want = run_op(ref, oc, false);
    ck_assert_msg(want.status == TOPOML_OK, "%s, the scalar plugin: status %d: %s", what,
                  want.status, want.error);
    /* f32: the reference computes in float, another plugin may be more
     * exact (docs/plugin-abi.md, "Precision"); well inside its bound. */
    double rel = oc->dtype == TOPOML_F32 && oc->op != TOPOML_OP_IMAGE ? 1e-5 : 1e-9;
    compare(&old, &now, oc->op, 1e-12, what, "today's tables");
    compare(&old, &want, oc->op, rel, what, "the scalar plugin");
    answer_free(&old);
    answer_free(&now);
    answer_free(&want);
}

/* Every op of every record, in each input kind, dtype and metric it names. */
static int check_plugin(plugin *p, plugin *ref, const char *file)
{
    int cases = 0;
    for (uint32_t r = 0; r < p->n_caps; r++) {
        const topoml_capability_v1 *cap = &p->caps[r];
        ck_assert_uint_eq(cap->struct_size, sizeof *cap);
        ck_assert_uint_lt(cap->op, TOPOML_OP_COUNT);
        void *fn = cap->op == TOPOML_OP_DISTANCES ? (void *)p->be->distances
                   : cap->op == TOPOML_OP_EDGES   ? (void *)p->be->edges
                   : cap->op == TOPOML_OP_H0      ? (void *)p->be->h0
                   : cap->op == TOPOML_OP_RIPS    ? (void *)p->be->rips
                                                  : (void *)p->be->image;
        ck_assert_msg(fn != NULL, "%s: a record claims op %u, whose entry is NULL", file, cap->op);
        if (cap->op == TOPOML_OP_IMAGE) {
            op_case oc = {TOPOML_OP_IMAGE, 0, TOPOML_F64, 0, 0, 0};
            check_case(p, ref, file, &oc);
            cases++;
            continue;
        }
        for (uint32_t kind = 0; kind < TOPOML_INPUT_KIND_COUNT; kind++) {
            if (!(cap->inputs & (1u << kind)))
                continue;
            for (uint32_t dtype = 0; dtype < TOPOML_DTYPE_COUNT; dtype++) {
                if (kind != TOPOML_INPUT_SPARSE && !(cap->dtypes & (1u << dtype)))
                    continue;
                if (kind == TOPOML_INPUT_SPARSE && dtype != TOPOML_F64)
                    continue;
                for (uint32_t metric = 0; metric < TOPOML_METRIC_COUNT; metric++) {
                    if (kind == TOPOML_INPUT_POINTS ? !(cap->metrics & (1u << metric))
                                                    : metric != 0)
                        continue;
                    op_case oc = {cap->op, kind, dtype, metric, 0, 2};
                    if (cap->op == TOPOML_OP_RIPS) {
                        oc.max_dim = cap->max_dim < 2 ? cap->max_dim : 2;
                        for (uint32_t m = 2; m <= 3 && m <= cap->max_modulus; m++) {
                            oc.modulus = m;
                            check_case(p, ref, file, &oc);
                            cases++;
                        }
                    } else {
                        check_case(p, ref, file, &oc);
                        cases++;
                    }
                }
            }
        }
    }
    return cases;
}

/* Today's minimum sizes are the ends of the first layout's last fields, no
 * longer than the baseline header's tables, and shorter than today's tables
 * in every table that grew: the tables sent are really the short ones. */
START_TEST(baseline_tables_are_the_short_ones)
{
    const old_host_sizes min = least;
    ck_assert_uint_lt(min.call, today.call);
    ck_assert_uint_lt(min.input, today.input);
    ck_assert_uint_lt(min.rips_params, today.rips_params);
    ck_assert_uint_lt(min.barcode, today.barcode);
    ck_assert_uint_le(min.host, sizeof(topoml_host_v1));
    ck_assert_uint_le(min.call, sizeof(topoml_call_v1));
    ck_assert_uint_le(min.input, sizeof(topoml_input_v1));
    ck_assert_uint_le(min.rips_params, sizeof(topoml_rips_params_v1));
    ck_assert_uint_le(min.barcode, sizeof(topoml_barcode_v1));
    ck_assert_uint_eq(min.host, offsetof(topoml_host_v1, core_version) + sizeof(const char *));
    ck_assert_uint_eq(min.call, offsetof(topoml_call_v1, reserved2) + sizeof(uint32_t));
    ck_assert_uint_eq(min.input, offsetof(topoml_input_v1, edges) + sizeof(void *));
    ck_assert_uint_eq(min.rips_params,
                      offsetof(topoml_rips_params_v1, reserved) + sizeof(uint32_t));
    ck_assert_uint_eq(min.barcode, offsetof(topoml_barcode_v1, reserved) + sizeof(uint32_t));
    ck_assert_uint_eq(min.image_params,
                      offsetof(topoml_image_params_v1, clip_death) + sizeof(double));
}
END_TEST

START_TEST(plugin_serves_an_old_host)
{
    const char *file = plugin_names[_i];
    plugin ref, p;
    make_inputs(0x5eed0001u);
    plugin_open(&ref, "topoml-backend-scalar.so");
    ck_assert_msg(ref.probe_status == TOPOML_OK, "the scalar plugin's probe: %s", ref.why);
    plugin_open(&p, file);
    if (p.probe_status != TOPOML_OK) {
        fprintf(stderr, "%s: skipped, its probe fails: %s\n", file, p.why);
    } else {
        ck_assert_msg(p.n_caps > 0, "%s: no capability records", file);
        int cases = check_plugin(&p, &ref, file);
        fprintf(stderr, "%s: %d cases through baseline-size tables agree\n", file, cases);
        ck_assert_int_gt(cases, 0);
    }
    plugin_close(&p);
    plugin_close(&ref);
    ck_assert_msg(live_blocks == 0, "%s: %ld blocks of the host allocator not returned", file,
                  live_blocks);
}
END_TEST

static int name_order(const void *a, const void *b)
{
    return strcmp(a, b);
}

int main(void)
{
    old_host_today_sizes(&today);
    old_host_min_sizes(&least);
    DIR *d = opendir(TOPOML_PLUGIN_DIR);
    if (!d) {
        fprintf(stderr, "old_host: cannot open %s\n", TOPOML_PLUGIN_DIR);
        return EXIT_FAILURE;
    }
    bool scalar = false;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        size_t len = strlen(e->d_name);
        if (strncmp(e->d_name, "topoml-backend-", 15) != 0 || len < 4 ||
            strcmp(e->d_name + len - 3, ".so") != 0 || len >= sizeof plugin_names[0])
            continue;
        if (n_plugins == MAX_PLUGINS)
            break;
        scalar = scalar || strcmp(e->d_name, "topoml-backend-scalar.so") == 0;
        snprintf(plugin_names[n_plugins++], sizeof plugin_names[0], "%s", e->d_name);
    }
    closedir(d);
    if (!scalar) {
        fprintf(stderr, "old_host: no topoml-backend-scalar.so in %s\n", TOPOML_PLUGIN_DIR);
        return EXIT_FAILURE;
    }
    qsort(plugin_names, (size_t)n_plugins, sizeof plugin_names[0], name_order);

    Suite *s = suite_create("old_host");
    TCase *tc = tcase_create("old_host");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, baseline_tables_are_the_short_ones);
    tcase_add_loop_test(tc, plugin_serves_an_old_host, 0, n_plugins);
    suite_add_tcase(s, tc);
    return topoml_check_run(s);
}
