/*
 * sort_edges.c — what sorting the edges costs the edge collapse
 * (tm_collapse_sort_edges in core/src/compute/collapse.c) at 1, 2, ... threads, and
 * "0": the C library's qsort on the calling thread, what the stage used
 * before and still uses when the merge sort's buffer does not fit: the
 * edges of a data set within a threshold (topoml_edges), put in an order of
 * a fixed seed's shuffle, are sorted again and again, every thread count on
 * the same order in turn (0, 1, 2, ..., then again), wall seconds of each sort;
 * every result is compared with the sorted list, element for element. The
 * medians go to a table, every time to --json as a bench/results artifact
 * (the schema of bench/make_tables.py).
 *
 *   sort_edges FILE FORMAT THRESHOLD [--threads 0,1,2] [--reps 5] [--json OUT]
 *
 * e.g. the 50 000-point Clifford torus of bench/bench_rips.py --torus
 * 50000 at 0.15 (4.49 million edges). The shuffle is harder on qsort than
 * the order the collapse gets the edges in (cell by cell of a grid, or row
 * by row), so the figures are an upper bound on the stage's sort. A
 * benchmark, not a test: it prints numbers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "compute/compute.h" /* internal: tm_collapse_sort_edges, what is timed */
#include "topoml/topoml.h"

#include "bench_time.h"

static double now(void)
{
    return clock_s(CLOCK_MONOTONIC);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: sort_edges FILE FORMAT THRESHOLD [--threads 1,2] [--reps 5] "
                        "[--json OUT]\n");
        return 2;
    }
    const char *file = argv[1], *format_name = argv[2], *json = NULL, *list = "1,2";
    const double threshold = strtod(argv[3], NULL);
    int reps = 5;
    if ((argc - 4) % 2) {
        fprintf(stderr, "sort_edges: %s needs a value\n", argv[argc - 1]);
        return 2;
    }
    for (int k = 4; k + 1 < argc; k += 2) {
        if (!strcmp(argv[k], "--threads"))
            list = argv[k + 1];
        else if (!strcmp(argv[k], "--reps"))
            reps = atoi(argv[k + 1]);
        else if (!strcmp(argv[k], "--json"))
            json = argv[k + 1];
        else {
            fprintf(stderr, "sort_edges: unknown option %s\n", argv[k]);
            return 2;
        }
    }
    unsigned threads[16];
    int n_threads = 0;
    for (const char *p = list; *p;) {
        char *end;
        unsigned long t = strtoul(p, &end, 10);
        if (end == p || (*end && *end != ',') || t > 1024 || n_threads == 16) {
            fprintf(stderr, "sort_edges: --threads %s: up to 16 thread counts, comma-separated, "
                            "0 (qsort) to 1024\n", list);
            return 2;
        }
        threads[n_threads++] = (unsigned)t;
        p = *end ? end + 1 : end;
    }
    if (reps < 1 || reps > 64 || n_threads < 1) {
        fprintf(stderr, "sort_edges: --reps takes 1 to 64, --threads at least one count\n");
        return 2;
    }
    topoml_format format;
    topoml_context *ctx = NULL;
    topoml_data *d = NULL;
    topoml_edge *sorted = NULL;
    uint64_t m = 0;
    if (topoml_format_from_name(format_name, &format) != TOPOML_OK ||
        topoml_context_new(&ctx, NULL) != TOPOML_OK ||
        topoml_data_read(ctx, &d, file, format) != TOPOML_OK ||
        topoml_edges(ctx, d, TOPOML_METRIC_EUCLIDEAN, threshold, &sorted, &m) != TOPOML_OK) {
        fprintf(stderr, "sort_edges: %s\n", ctx ? topoml_errmsg(ctx) : "no context");
        return 1;
    }
    topoml_edge *shuffled = malloc(m * sizeof *shuffled), *work = malloc(m * sizeof *work);
    double *times = malloc((size_t)reps * (size_t)n_threads * sizeof *times);
    if (!shuffled || !work || !times) {
        fprintf(stderr, "sort_edges: out of memory for %llu edges\n", (unsigned long long)m);
        return 1;
    }
    memcpy(shuffled, sorted, m * sizeof *sorted);
    uint64_t s = 20261204u;
    for (uint64_t q = m; q > 1; q--) {
        s = s * 6364136223846793005u + 1442695040888963407u;
        uint64_t r = (s >> 33) % q;
        topoml_edge t = shuffled[q - 1];
        shuffled[q - 1] = shuffled[r];
        shuffled[r] = t;
    }
    for (int rep = 0; rep < reps; rep++)
        for (int k = 0; k < n_threads; k++) {
            memcpy(work, shuffled, m * sizeof *work);
            double t0 = now();
            if (threads[k] == 0) /* what the stage did before: one qsort */
                qsort(work, (size_t)m, sizeof *work, tm_collapse_edge_cmp);
            else
                tm_collapse_sort_edges(ctx, work, m, threads[k]);
            times[k * reps + rep] = now() - t0;
            if (memcmp(work, sorted, m * sizeof *work) != 0) {
                fprintf(stderr, "sort_edges: %u threads sorted differently\n", threads[k]);
                return 1;
            }
        }
    FILE *j = json ? fopen(json, "w") : NULL;
    if (json && !j) {
        perror(json);
        return 1;
    }
    char names[16][48];
    for (int k = 0; k < n_threads; k++) {
        if (threads[k] == 0)
            snprintf(names[k], sizeof names[k], "qsort, 1 thread");
        else
            snprintf(names[k], sizeof names[k], "merge sort, %u thread%s", threads[k],
                     threads[k] == 1 ? "" : "s");
    }
    if (j)
        fprintf(j, "{\"title\": \"The edge collapse's sort of the edges, on threads "
                   "(bench/sort_edges.c)\",\n \"machine\": \"%ld CPUs online\",\n"
                   " \"versions\": {\"topoml\": \"%s\"},\n \"commands\": [\"sort_edges %s %s %g "
                   "--threads %s --reps %d\"],\n \"baseline\": \"%s\",\n \"cases\": [",
                sysconf(_SC_NPROCESSORS_ONLN), topoml_version(), file, format_name,
                threshold, list, reps, names[0]);
    printf("| edges | sort | median s | min s | vs %s |\n| ---: | --- | ---: | ---: | ---: |\n",
           names[0]);
    double base = 0.0;
    for (int k = 0; k < n_threads; k++) {
        double *t = times + k * reps, sorted_t[64];
        int nt = reps;
        memcpy(sorted_t, t, (size_t)nt * sizeof *t);
        double med = bench_median(sorted_t, nt);
        if (k == 0)
            base = med;
        printf("| %llu | %s | %.3f | %.3f | %.2f |\n", (unsigned long long)m, names[k], med,
               sorted_t[0], med / base);
        if (j) {
            fprintf(j, "%s\n  {\"name\": \"%llu edges\", \"program\": \"%s\", \"threads\": %u, "
                       "\"times\": [", k ? "," : "", (unsigned long long)m, names[k],
                    threads[k] ? threads[k] : 1);
            for (int r = 0; r < reps; r++)
                fprintf(j, "%s%.6f", r ? ", " : "", t[r]);
            fprintf(j, "], \"median\": %.6f}", med);
        }
    }
    if (j) {
        fprintf(j, "\n ]}\n");
        fclose(j);
    }
    free(shuffled);
    free(work);
    free(times);
    topoml_free(ctx, sorted);
    topoml_data_free(ctx, d);
    topoml_context_free(ctx);
    return 0;
}
