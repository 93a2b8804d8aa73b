/*
 * bench_time.h — the clock and the median of the C benchmarks in
 * bench/ (sort_edges.c, hash_file.c, and through engine_host.h the
 * standalone engine ones).
 */
#ifndef TOPOML_BENCH_TIME_H
#define TOPOML_BENCH_TIME_H

#include <stdlib.h>
#include <time.h>

/* Seconds on clock `id` (CLOCK_MONOTONIC, CLOCK_THREAD_CPUTIME_ID, ...). */
static inline double clock_s(clockid_t id)
{
    struct timespec t;
    clock_gettime(id, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts v[0..n) and returns its median (n >= 1). */
static inline double bench_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#endif
