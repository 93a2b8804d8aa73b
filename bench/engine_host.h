/*
 * engine_host.h — what the standalone engine benchmarks (edge_stage.c,
 * reduce_stages.c, threads_small.c) need from a host: the call's allocator
 * (plain malloc) and a clock. They call plugins/scalar/rips.c directly,
 * without libtopoml, so they have no context to take these from.
 */
#ifndef TOPOML_BENCH_ENGINE_HOST_H
#define TOPOML_BENCH_ENGINE_HOST_H

#include <stdlib.h>

#include "bench_time.h" /* clock_s */

static void *h_alloc(void *u, size_t n)
{
    (void)u;
    return malloc(n);
}
static void *h_realloc(void *u, void *p, size_t n)
{
    (void)u;
    return realloc(p, n);
}
static void h_free(void *u, void *p)
{
    (void)u;
    free(p);
}

#endif
