/*
 * reduce_stages.c — where the time of one Rips computation goes, stage by
 * stage, in the scalar engine (scalar_rips) and in the engine lent a pool
 * of threads (scalar_rips_pooled with plugins/threads/pool.c, as the
 * threads backend lends it): wall and CPU seconds of the whole call, of the
 * reductions (the stages "dim k", k >= 1) and of the enumerations ("dim k
 * enumeration" and "dim k sort"), read from the progress callback's stage
 * changes. CPU seconds are the process's (every thread's), so they stay
 * meaningful on a loaded machine where wall times do not; "main CPU" are
 * the calling thread's alone (the callback runs there): the calling thread
 * works through the whole stage, in the pool's tasks or in the serial
 * phase, so on an idle machine with a core per thread its CPU seconds are
 * about the stage's wall time — the figure a loaded machine cannot show
 * directly. One run per
 * invocation, one JSON object on stdout; bench/bench_reduce.py runs
 * it and writes the artifact. The engine is called directly: no edge
 * collapse (that is the core's, before any backend), no CLI start-up.
 * Not built by CMake (a measurement, not a tool):
 *
 *   gcc -O2 -g -std=c11 -D_GNU_SOURCE -Iplugin-api/include -Iplugins/scalar \
 *       -Iplugins/threads bench/reduce_stages.c plugins/threads/pool.c \
 *       plugins/scalar/rips.c -lm -lpthread -o /tmp/reduce_stages
 *   /tmp/reduce_stages POINTS.txt DIM THRESHOLD THREADS [BATCH [SCHEME]]
 *
 * POINTS.txt: one point a line, coordinates separated by spaces or commas;
 * a file named *.lower_distance_matrix is read as one.
 * THRESHOLD: a number or "inf". THREADS 0: scalar_rips itself. BATCH:
 * columns per batch of the parallel reduction (0 or absent: the default).
 * SCHEME: the parallel reduction, scalar_rips_pool.scheme (0 or absent:
 * the engine's choice, 1 batched in two phases, 2 lock-free).
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pool.h"
#include "rips.h"

#include "engine_host.h"

/* Time per kind of stage, closed at each stage change. */
typedef struct stages {
    char cur[64];
    double wall0, cpu0, main0;      /* when the current stage began */
    double reduce_wall, reduce_cpu; /* "dim k", k >= 1 */
    double reduce_main;             /* ... the calling thread's CPU */
    double enum_wall, enum_cpu;     /* "dim k enumeration", "dim k sort" */
    double enum_main;
} stages;

static void close_stage(stages *s, double wall, double cpu)
{
    double main = clock_s(CLOCK_THREAD_CPUTIME_ID);
    unsigned k;
    char rest[64];
    if (sscanf(s->cur, "dim %u%63s", &k, rest) == 2) {
        if (strcmp(rest, "enumeration") == 0 || strcmp(rest, "sort") == 0) {
            s->enum_wall += wall - s->wall0;
            s->enum_cpu += cpu - s->cpu0;
            s->enum_main += main - s->main0;
        }
    } else if (sscanf(s->cur, "dim %u", &k) == 1 && k >= 1) {
        s->reduce_wall += wall - s->wall0;
        s->reduce_cpu += cpu - s->cpu0;
        s->reduce_main += main - s->main0;
    }
    s->wall0 = wall;
    s->cpu0 = cpu;
    s->main0 = main;
}

static int on_progress(void *u, const char *stage, uint64_t done, uint64_t total)
{
    (void)done;
    (void)total;
    stages *s = u;
    if (strcmp(stage, s->cur) != 0) {
        close_stage(s, clock_s(CLOCK_MONOTONIC), clock_s(CLOCK_PROCESS_CPUTIME_ID));
        snprintf(s->cur, sizeof s->cur, "%s", stage);
    }
    return 0;
}

/* x with v appended (grown when full); NULL, x freed, when memory ran out. */
static double *push(double *x, size_t *len, size_t *cap, double v)
{
    if (*len == *cap) {
        double *y = realloc(x, (*cap *= 2) * sizeof *x);
        if (!y) {
            free(x);
            return NULL;
        }
        x = y;
    }
    x[(*len)++] = v;
    return x;
}

static double *read_points(const char *path, uint64_t *n, uint64_t *dim)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, len = 0;
    double *x = malloc(cap * sizeof *x);
    char line[4096];
    *n = 0;
    *dim = 0;
    while (x && fgets(line, sizeof line, f)) {
        uint64_t d = 0;
        for (char *p = line, *end;; p = end) {
            while (*p == ' ' || *p == ',' || *p == '\t')
                p++;
            double v = strtod(p, &end);
            if (end == p)
                break;
            if (!(x = push(x, &len, &cap, v)))
                break;
            d++;
        }
        if (!x || d == 0)
            continue;
        if (*dim == 0)
            *dim = d;
        if (d != *dim) {
            free(x);
            x = NULL;
            break;
        }
        ++*n;
    }
    fclose(f);
    return x;
}

/* A lower distance matrix (Ripser's lower-distance format: row i holds
 * d(i, 0) .. d(i, i-1)), read as its n(n-1)/2 entries in that order. */
static double *read_lower(const char *path, uint64_t *n)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, len = 0;
    double *x = malloc(cap * sizeof *x);
    double v;
    int c;
    while (x && (c = fscanf(f, " %lf%*[ ,\t\r\n]", &v)) != EOF) {
        if (c != 1)
            break;
        if (!(x = push(x, &len, &cap, v)))
            break;
    }
    fclose(f);
    *n = 1;
    while (x && *n * (*n - 1) / 2 < len)
        ++*n;
    if (x && *n * (*n - 1) / 2 != len) {
        free(x);
        return NULL;
    }
    return x;
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: %s POINTS.txt DIM THRESHOLD THREADS [BATCH [SCHEME]]\n", argv[0]);
        return 2;
    }
    uint64_t n, dim = 0;
    size_t plen = strlen(argv[1]);
    const bool lower = plen > 22 && strcmp(argv[1] + plen - 22, ".lower_distance_matrix") == 0;
    double *x = lower ? read_lower(argv[1], &n) : read_points(argv[1], &n, &dim);
    if (!x) {
        fprintf(stderr, "%s: cannot read points from %s\n", argv[0], argv[1]);
        return 1;
    }
    topoml_input_v1 in;
    memset(&in, 0, sizeof in);
    in.struct_size = sizeof in;
    in.kind = lower ? TOPOML_INPUT_CONDENSED : TOPOML_INPUT_POINTS;
    in.n = n;
    in.dim = dim;
    in.dtype = TOPOML_F64;
    in.metric = TOPOML_METRIC_EUCLIDEAN;
    in.data = x;
    topoml_rips_params_v1 p;
    memset(&p, 0, sizeof p);
    p.struct_size = sizeof p;
    p.max_dim = (uint32_t)atoi(argv[2]);
    p.modulus = 2;
    p.threshold = strcmp(argv[3], "inf") == 0 ? INFINITY : atof(argv[3]);
    uint32_t threads = (uint32_t)atoi(argv[4]);
    uint32_t batch = argc > 5 ? (uint32_t)atoi(argv[5]) : 0;
    uint32_t scheme = argc > 6 ? (uint32_t)atoi(argv[6]) : SCALAR_RIPS_SCHEME_AUTO;

    static char err[512];
    stages st;
    memset(&st, 0, sizeof st);
    topoml_call_v1 c;
    memset(&c, 0, sizeof c);
    c.struct_size = sizeof c;
    c.host_data = &st;
    c.alloc = h_alloc;
    c.realloc = h_realloc;
    c.free = h_free;
    c.progress = on_progress;
    c.error = err;
    c.error_size = sizeof err;
    c.device = -1;
    topoml_barcode_v1 out;
    memset(&out, 0, sizeof out);
    out.struct_size = sizeof out;
    uint64_t resumed = 0, displaced = 0;
    threads_pool pool;
    if (threads_pool_init(&pool, threads ? threads : 1) != 0)
        return 1;
    scalar_rips_pool lend = {pool.n_threads,      &pool, threads_pool_run, threads_pool_lock,
                             threads_pool_unlock, batch, &resumed, scheme, &displaced};
    double w0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    st.wall0 = w0;
    st.cpu0 = c0;
    st.main0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
    int rc = threads ? scalar_rips_pooled(&c, &in, &p, NULL, &lend, &out)
                     : scalar_rips(&c, &in, &p, &out);
    double w1 = clock_s(CLOCK_MONOTONIC), c1 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    close_stage(&st, w1, c1);
    threads_pool_destroy(&pool);
    if (rc != TOPOML_OK) {
        fprintf(stderr, "%s: rips failed (%d): %s\n", argv[0], rc, err);
        return 1;
    }
    /* A digest of the barcode, to see that every run gave the same one. */
    uint64_t h = 1469598103934665603u;
    const unsigned char *b = (const unsigned char *)out.intervals;
    for (size_t q = 0; q < out.n_intervals * sizeof *out.intervals; q++)
        h = (h ^ b[q]) * 1099511628211u;
    printf("{\"n\": %llu, \"threads\": %u, \"batch\": %u, \"scheme\": %u, "
           "\"displaced\": %llu, \"wall\": %.6f, \"cpu\": %.6f, "
           "\"reduce_wall\": %.6f, \"reduce_cpu\": %.6f, \"reduce_main_cpu\": %.6f, "
           "\"enum_wall\": %.6f, \"enum_cpu\": %.6f, \"enum_main_cpu\": %.6f, "
           "\"resumed\": %llu, \"bars\": %llu, \"digest\": \"%016llx\"}\n",
           (unsigned long long)n, threads, batch, scheme, (unsigned long long)displaced, w1 - w0,
           c1 - c0, st.reduce_wall, st.reduce_cpu, st.reduce_main, st.enum_wall, st.enum_cpu,
           st.enum_main, (unsigned long long)resumed, (unsigned long long)out.n_intervals,
           (unsigned long long)h);
    free(out.intervals);
    free(x);
    return 0;
}
