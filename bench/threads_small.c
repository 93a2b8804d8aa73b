/*
 * threads_small.c — what the threads backend's pool costs on small inputs:
 * the wall time of the scalar engine alone (scalar_rips), and of the pooled
 * engine (scalar_rips_pooled, plugins/threads/pool.c) lent 1 and 2 threads,
 * on seeded uniform clouds of n points in the unit cube of R^3 without a
 * threshold, R runs each, alternating, in one process (no start-up); the
 * table shows the medians, the JSON (bench/results schema,
 * bench/make_tables.py) every run. It chose
 * the rule of plugins/threads/threads.c (THREADS_MIN_SIMPLICES); the
 * column "simplices" is the bound that rule reads. Prints a table, writes
 * JSON. Not built by CMake (a measurement, not a tool):
 *
 *   gcc -O2 -std=c11 -D_GNU_SOURCE -Iplugin-api/include -Iplugins/scalar \
 *       -Iplugins/threads bench/threads_small.c plugins/threads/pool.c \
 *       plugins/scalar/rips.c -lm -lpthread -o /tmp/threads_small
 *   /tmp/threads_small bench/results/threads-small-2core.json [REPS]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pool.h"
#include "rips.h"

#include "engine_host.h"

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * UINT64_C(2685821657736338717);
}

static double now(void)
{
    return clock_s(CLOCK_MONOTONIC);
}

/* One run: 0 threads = scalar_rips itself. Seconds, or -1 on an error. */
static double run(const topoml_input_v1 *in, const topoml_rips_params_v1 *p, uint32_t threads)
{
    char err[256] = "";
    topoml_call_v1 c;
    memset(&c, 0, sizeof c);
    c.struct_size = sizeof c;
    c.alloc = h_alloc;
    c.realloc = h_realloc;
    c.free = h_free;
    c.error = err;
    c.error_size = sizeof err;
    c.device = -1;
    topoml_barcode_v1 out;
    memset(&out, 0, sizeof out);
    out.struct_size = sizeof out;
    double t0 = now();
    int rc;
    if (threads == 0) {
        rc = scalar_rips(&c, in, p, &out);
    } else {
        threads_pool pool;
        if (threads_pool_init(&pool, threads) != 0)
            return -1;
        scalar_rips_pool lend = {pool.n_threads, &pool, threads_pool_run, threads_pool_lock,
                                 threads_pool_unlock, 0, NULL, 0, NULL};
        rc = scalar_rips_pooled(&c, in, p, NULL, &lend, &out);
        threads_pool_destroy(&pool);
    }
    double t = now() - t0;
    free(out.intervals);
    if (rc != TOPOML_OK) {
        fprintf(stderr, "error %d: %s\n", rc, err);
        return -1;
    }
    return t;
}

#define MAX_REPS 200

static int dbl_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(const double *t, int n)
{
    double s[MAX_REPS];
    memcpy(s, t, (size_t)n * sizeof *t);
    qsort(s, (size_t)n, sizeof *s, dbl_cmp);
    return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

static double simplices(uint64_t n, uint32_t max_dim)
{
    double sum = 0.0, c = n >= 3 ? (double)n * (double)(n - 1) * (double)(n - 2) / 6.0 : 0.0;
    for (uint32_t k = 2; k <= max_dim && n >= k + 1; k++) {
        sum += c;
        c = c * (double)(n - k - 1) / (double)(k + 2);
    }
    return sum;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s OUT.json [REPS]\n", argv[0]);
        return 2;
    }
    int reps = argc > 2 ? atoi(argv[2]) : 20;
    if (reps < 1 || reps > MAX_REPS) {
        fprintf(stderr, "REPS: 1 to %d\n", MAX_REPS);
        return 2;
    }
    static const struct {
        uint64_t n;
        uint32_t dim;
    } cases[] = {{12, 2},  {16, 2},  {25, 2},  {40, 2},  {64, 2},  {84, 2},  {100, 2},
                 {150, 2}, {200, 2}, {12, 4},  {16, 4},  {20, 4},  {24, 4},
                 {16, 7},  {30, 3},  {40, 3},  {60, 3}};
    const size_t n_cases = sizeof cases / sizeof cases[0];
    FILE *js = fopen(argv[1], "w");
    if (!js) {
        perror(argv[1]);
        return 1;
    }
    double load[3] = {0, 0, 0};
    FILE *la = fopen("/proc/loadavg", "r");
    if (la) {
        if (fscanf(la, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3)
            load[0] = load[1] = load[2] = -1;
        fclose(la);
    }
    fprintf(js, "{\n \"title\": \"threads backend: pool start-up on small inputs\",\n");
    fprintf(js, " \"units\": {\"median\": \"s\"},\n");
    fprintf(js, " \"machine\": {\"cpus_available\": %u, \"load_average_start\": "
                "[%.2f, %.2f, %.2f]},\n",
            threads_available(), load[0], load[1], load[2]);
    fprintf(js, " \"versions\": {\"topoml\": \"plugins/scalar/rips.c and plugins/threads/pool.c "
                "of this tree\", \"cc\": \"%s\"},\n",
            __VERSION__);
    fprintf(js, " \"commands\": [\"%s %s %d\"],\n", argv[0], argv[1], reps);
    fprintf(js, " \"cases\": [\n");
    printf("%6s %4s %12s %11s %11s %11s %8s\n", "points", "dim", "simplices", "serial s",
           "pool 1 s", "pool 2 s", "2 / 1");
    for (size_t q = 0; q < n_cases; q++) {
        uint64_t n = cases[q].n, s = 99 + n;
        double *x = malloc(n * 3 * sizeof *x);
        if (!x)
            return 1;
        for (uint64_t i = 0; i < n * 3; i++)
            x[i] = (double)(rng_next(&s) >> 11) / 9007199254740992.0;
        topoml_input_v1 in;
        memset(&in, 0, sizeof in);
        in.struct_size = sizeof in;
        in.n = n;
        in.dtype = TOPOML_F64;
        in.kind = TOPOML_INPUT_POINTS;
        in.dim = 3;
        in.metric = TOPOML_METRIC_EUCLIDEAN;
        in.data = x;
        topoml_rips_params_v1 p;
        memset(&p, 0, sizeof p);
        p.struct_size = sizeof p;
        p.max_dim = cases[q].dim;
        p.threshold = INFINITY;
        p.modulus = 2;
        double times[3][MAX_REPS], med[3];
        for (int r = 0; r < reps; r++)
            for (uint32_t t = 0; t < 3; t++) { /* alternating */
                times[t][r] = run(&in, &p, t);
                if (times[t][r] < 0)
                    return 1;
            }
        free(x);
        double bound = simplices(n, cases[q].dim);
        for (uint32_t t = 0; t < 3; t++)
            med[t] = median(times[t], reps);
        printf("%6llu %4u %12.0f %11.6f %11.6f %11.6f %8.2f\n", (unsigned long long)n,
               cases[q].dim, bound, med[0], med[1], med[2], med[2] / med[1]);
        static const char *const prog[3] = {"scalar_rips", "pooled, 1 thread",
                                            "pooled, 2 threads"};
        for (uint32_t t = 0; t < 3; t++) {
            fprintf(js,
                    "  {\"name\": \"uniform_%llu_r3 dim %u\", \"program\": \"%s\", "
                    "\"threads\": %u, \"simplices\": %.0f, \"median\": %.7f, \"times\": [",
                    (unsigned long long)n, cases[q].dim, prog[t], t ? t : 1, bound, med[t]);
            for (int r = 0; r < reps; r++)
                fprintf(js, "%s%.7f", r ? ", " : "", times[t][r]);
            fprintf(js, "]}%s\n", q + 1 < n_cases || t < 2 ? "," : "");
        }
    }
    fprintf(js, " ]\n}\n");
    fclose(js);
    return 0;
}
