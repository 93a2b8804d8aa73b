/*
 * pool.c — the worker threads of topoml-backend-threads (see pool.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "pool.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>

uint32_t threads_available(void)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return 1;
    int n = CPU_COUNT(&set);
    return n > 0 ? (uint32_t)n : 1;
}

uint32_t threads_for(uint32_t wanted)
{
    uint32_t have = threads_available();
    return wanted == 0 || wanted > have ? have : wanted;
}

/* The most threads one run starts (their ids live on its stack). */
#define POOL_MAX_THREADS 256

int threads_pool_init(threads_pool *p, uint32_t n_threads)
{
    p->n_threads = n_threads == 0 ? 1 : n_threads > POOL_MAX_THREADS ? POOL_MAX_THREADS : n_threads;
    return pthread_mutex_init(&p->lock, NULL);
}

void threads_pool_destroy(threads_pool *p)
{
    pthread_mutex_destroy(&p->lock);
}

typedef struct pool_job {
    uint32_t n_tasks;
    atomic_uint next;
    void (*task)(void *arg, uint32_t t, uint32_t worker);
    void *arg;
} pool_job;

typedef struct pool_worker {
    pool_job *job;
    uint32_t id;
} pool_worker;

static void work(pool_job *job, uint32_t worker)
{
    for (;;) {
        uint32_t t = atomic_fetch_add_explicit(&job->next, 1, memory_order_relaxed);
        if (t >= job->n_tasks)
            return;
        job->task(job->arg, t, worker);
    }
}

static void *worker_main(void *arg)
{
    pool_worker *w = arg;
    work(w->job, w->id);
    return NULL;
}

void threads_pool_run(void *user, uint32_t n_tasks,
                      void (*task)(void *arg, uint32_t t, uint32_t worker), void *arg)
{
    threads_pool *p = user;
    pool_job job = {n_tasks, 0, task, arg};
    atomic_init(&job.next, 0);
    uint32_t extra = p->n_threads - 1;
    if (extra > n_tasks - (n_tasks > 0))
        extra = n_tasks - (n_tasks > 0);
    pthread_t tid[POOL_MAX_THREADS];
    pool_worker w[POOL_MAX_THREADS];
    uint32_t started = 0;
    for (uint32_t k = 0; k < extra; k++) {
        w[started] = (pool_worker){&job, started + 1};
        if (pthread_create(&tid[started], NULL, worker_main, &w[started]) != 0)
            break; /* the workers that did start take its share */
        started++;
    }
    work(&job, 0);
    for (uint32_t k = 0; k < started; k++)
        pthread_join(tid[k], NULL);
}

void threads_pool_lock(void *user)
{
    pthread_mutex_lock(&((threads_pool *)user)->lock);
}

void threads_pool_unlock(void *user)
{
    pthread_mutex_unlock(&((threads_pool *)user)->lock);
}
