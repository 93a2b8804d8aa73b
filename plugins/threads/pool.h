/*
 * pool.h — the threads of topoml-backend-threads: how many this process may
 * use, and a pool that runs independent tasks on them (the
 * scalar_rips_pool of plugins/scalar/rips.h). Nothing here knows about
 * homology.
 */
#ifndef TOPOML_THREADS_POOL_H
#define TOPOML_THREADS_POOL_H

#include <pthread.h>
#include <stdint.h>

/* The CPUs this process may run on (sched_getaffinity), at least 1. */
uint32_t threads_available(void);

/* Threads for a call that asks for `wanted` (0: as many as available):
 * never more than are available, so the pool never oversubscribes. */
uint32_t threads_for(uint32_t wanted);

typedef struct threads_pool {
    uint32_t n_threads;
    pthread_mutex_t lock;
} threads_pool;

/* A pool of n_threads workers (1 to 256; outside, the nearest), the calling
 * thread one of them. The
 * threads themselves are started by each run and joined before it returns,
 * so an idle pool holds none. */
int threads_pool_init(threads_pool *p, uint32_t n_threads);
void threads_pool_destroy(threads_pool *p);

/* scalar_rips_pool's run, lock and unlock, with user = the threads_pool.
 * run hands out the tasks in order, each to the next free worker; if a
 * thread cannot be started, the workers there are take its share. */
void threads_pool_run(void *user, uint32_t n_tasks,
                      void (*task)(void *arg, uint32_t t, uint32_t worker), void *arg);
void threads_pool_lock(void *user);
void threads_pool_unlock(void *user);

#endif /* TOPOML_THREADS_POOL_H */
