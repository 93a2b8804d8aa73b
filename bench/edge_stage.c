/*
 * edge_stage.c — the time of the Rips engine's edge stage on a point cloud:
 * from the call to the neighbour lists or the distance matrix (the set-up:
 * every pair's distance, the enclosing radius, the pairs under the
 * threshold), then the sort of the edges, then the whole call, in CPU
 * seconds of the process (every thread's: meaningful on a loaded machine)
 * and wall seconds, read from the progress callback's stage changes
 * ("edges" begins the sort, "dim 0" the union-find). One JSON object on
 * stdout; bench/bench_edges.py compiles this file against the engine
 * of two source trees (before and after a change) and runs it.
 *
 *   gcc -O2 -g -std=c11 -ffp-contract=off -D_GNU_SOURCE -Iplugin-api/include \
 *       -Iplugins/scalar -Iplugins/threads bench/edge_stage.c \
 *       plugins/threads/pool.c plugins/scalar/rips.c -lm -lpthread -o /tmp/edge_stage
 *   /tmp/edge_stage N DIM f32|f64 EDGES_PER_POINT MAX_DIM THREADS RUNS [SEED]
 *
 * The cloud: N standard normal points in R^DIM (seeded), in float or
 * double. EDGES_PER_POINT k > 0: the threshold is the (k N)-th smallest
 * distance (so about k N edges); 0: no threshold. THREADS > 1: the engine
 * with a pool of that many threads as topoml-backend-threads lends it (for
 * MAX_DIM <= 1 the distances only: scalar_rips_pooled_distances, where the
 * engine has it — define TOPOML_HAVE_POOLED_DISTANCES — and otherwise the
 * serial engine, as the plugin ran such calls before). Euclidean metric.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "metric.h"
#include "pool.h"
#include "rips.h"

#include "engine_host.h"

/* Stage marks: CPU and wall time when "edges" and "dim 0" first began. */
typedef struct marks {
    double edges_cpu, edges_wall, h0_cpu, h0_wall;
    uint64_t edges; /* the sort's total: the edges under the threshold */
} marks;

static int on_progress(void *u, const char *stage, uint64_t done, uint64_t total)
{
    (void)done;
    marks *m = u;
    if (strcmp(stage, "edges") == 0 && m->edges_cpu == 0) {
        m->edges_cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID);
        m->edges_wall = clock_s(CLOCK_MONOTONIC);
        m->edges = total;
    }
    if (strcmp(stage, "dim 0") == 0 && m->h0_cpu == 0) {
        m->h0_cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID);
        m->h0_wall = clock_s(CLOCK_MONOTONIC);
    }
    return 0;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static double uniform(void)
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return ((double)((rng * 2685821657736338717ull) >> 11) + 0.5) * 0x1p-53;
}

/* The k-th smallest (0-based) of a[0..m): quickselect. */
static double select_kth(double *a, uint64_t m, uint64_t k)
{
    uint64_t lo = 0, hi = m - 1;
    while (lo < hi) {
        double p = a[lo + (hi - lo) / 2];
        uint64_t i = lo, j = hi;
        while (i <= j) {
            while (a[i] < p)
                i++;
            while (a[j] > p)
                j--;
            if (i <= j) {
                double t = a[i];
                a[i] = a[j];
                a[j] = t;
                i++;
                if (j == 0)
                    break;
                j--;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            return a[k];
    }
    return a[k];
}

int main(int argc, char **argv)
{
    if (argc < 8) {
        fprintf(stderr, "usage: %s N DIM f32|f64 EDGES_PER_POINT MAX_DIM THREADS RUNS [SEED]\n",
                argv[0]);
        return 2;
    }
    const uint64_t n = strtoull(argv[1], NULL, 10), dim = strtoull(argv[2], NULL, 10);
    const int f32 = strcmp(argv[3], "f32") == 0;
    const double per_point = atof(argv[4]);
    const uint32_t max_dim = (uint32_t)atoi(argv[5]), threads = (uint32_t)atoi(argv[6]);
    const int runs = atoi(argv[7]);
    if (argc > 8)
        rng ^= strtoull(argv[8], NULL, 10) * 0x2545f4914f6cdd1dull;
    double *x = malloc(n * dim * sizeof *x);
    float *xf = malloc(n * dim * sizeof *xf);
    if (!x || !xf)
        return 1;
    for (uint64_t q = 0; q < n * dim; q++) {
        x[q] = sqrt(-2.0 * log(uniform())) * cos(6.283185307179586 * uniform());
        xf[q] = (float)x[q];
    }
    double threshold = INFINITY;
    if (per_point > 0) {
        const uint64_t m = n * (n - 1) / 2;
        double *d = malloc(m * sizeof *d);
        if (!d)
            return 1;
        uint64_t q = 0;
        for (uint64_t i = 1; i < n; i++)
            for (uint64_t j = 0; j < i; j++)
                d[q++] = scalar_point_dist(TOPOML_F64, TOPOML_METRIC_EUCLIDEAN, x, dim, i, j);
        uint64_t k = (uint64_t)(per_point * (double)n);
        threshold = select_kth(d, m, k < m ? k : m - 1);
        free(d);
    }
    topoml_input_v1 in = {0};
    in.struct_size = sizeof in;
    in.kind = TOPOML_INPUT_POINTS;
    in.dtype = f32 ? TOPOML_F32 : TOPOML_F64;
    in.metric = TOPOML_METRIC_EUCLIDEAN;
    in.n = n;
    in.dim = dim;
    in.data = f32 ? (const void *)xf : x;
    topoml_rips_params_v1 p = {0};
    p.struct_size = sizeof p;
    p.max_dim = max_dim;
    p.threshold = threshold;
    p.modulus = 2;
    char thr[32] = "null"; /* none */
    if (threshold < INFINITY)
        snprintf(thr, sizeof thr, "%.17g", threshold);
    printf("{\"n\": %llu, \"dim\": %llu, \"dtype\": \"%s\", \"threshold\": %s, "
           "\"max_dim\": %u, \"threads\": %u, \"runs\": [",
           (unsigned long long)n, (unsigned long long)dim, f32 ? "f32" : "f64", thr, max_dim,
           threads);
    for (int run = 0; run < runs; run++) {
        marks m = {0};
        topoml_call_v1 c = {0};
        c.struct_size = sizeof c;
        c.alloc = h_alloc;
        c.realloc = h_realloc;
        c.free = h_free;
        c.progress = on_progress;
        c.host_data = &m;
        c.device = -1;
        char err[256] = "";
        c.error = err;
        c.error_size = sizeof err;
        topoml_barcode_v1 out = {0};
        out.struct_size = sizeof out;
        threads_pool pool;
        if (threads > 1 && threads_pool_init(&pool, threads) != 0)
            return 1;
        scalar_rips_pool lend = {threads, &pool, threads_pool_run, threads_pool_lock,
                                 threads_pool_unlock, 0, NULL, 0, NULL};
        const double w0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
        int rc;
        if (threads <= 1)
            rc = scalar_rips(&c, &in, &p, &out);
        else if (max_dim >= 2)
            rc = scalar_rips_pooled(&c, &in, &p, NULL, &lend, &out);
        else
#ifdef TOPOML_HAVE_POOLED_DISTANCES
            rc = scalar_rips_pooled_distances(&c, &in, &p, NULL, &lend, &out);
#else
            rc = scalar_rips(&c, &in, &p, &out);
#endif
        const double w1 = clock_s(CLOCK_MONOTONIC), c1 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
        if (threads > 1)
            threads_pool_destroy(&pool);
        if (rc != TOPOML_OK) {
            fprintf(stderr, "scalar_rips: %d %s\n", rc, err);
            return 1;
        }
        /* FNV-1a of the intervals: the same barcode, bit for bit, or not */
        uint64_t h = 1469598103934665603ull;
        const unsigned char *b = (const unsigned char *)out.intervals;
        for (size_t q = 0; q < out.n_intervals * sizeof *out.intervals; q++)
            h = (h ^ b[q]) * 1099511628211ull;
        free(out.intervals);
        printf("%s{\"setup_cpu\": %.6f, \"setup_wall\": %.6f, \"sort_cpu\": %.6f, "
               "\"sort_wall\": %.6f, \"total_cpu\": %.6f, \"total_wall\": %.6f, "
               "\"edges\": %llu, \"intervals\": %llu, \"barcode_fnv\": \"%016llx\"}",
               run ? ", " : "", m.edges_cpu - c0, m.edges_wall - w0, m.h0_cpu - m.edges_cpu,
               m.h0_wall - m.edges_wall, c1 - c0, w1 - w0, (unsigned long long)m.edges,
               (unsigned long long)out.n_intervals,
               (unsigned long long)h);
    }
    printf("]}\n");
    free(x);
    free(xf);
    return 0;
}
