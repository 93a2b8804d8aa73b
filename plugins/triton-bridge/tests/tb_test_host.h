/*
 * tb_test_host.h — a host for the triton-bridge tests: an allocator that
 * counts (so tests can see leaks and inject failures), a log that keeps the
 * last message, and a progress callback that can cancel. Header-only; each
 * test program has one host.
 */
#ifndef TB_TEST_HOST_H
#define TB_TEST_HOST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topoml/plugin.h"

typedef struct tb_test_host {
    long live;       /* allocations not yet freed */
    long fail_after; /* fail the allocation after this many more (-1: never) */
    char last_log[1024];
    int cancel_after; /* progress returns 1 after this many calls (-1: never) */
    int progress_calls;
} tb_test_host;

static tb_test_host tb_host_data = {0, -1, "", -1, 0};

static void *tb_test_alloc(void *data, size_t size)
{
    tb_test_host *h = data;
    if (h->fail_after == 0)
        return NULL;
    if (h->fail_after > 0)
        h->fail_after--;
    void *p = malloc(size);
    if (p != NULL)
        h->live++;
    return p;
}

static void *tb_test_realloc(void *data, void *ptr, size_t size)
{
    tb_test_host *h = data;
    void *p = realloc(ptr, size);
    if (ptr == NULL && p != NULL)
        h->live++;
    return p;
}

static void tb_test_free(void *data, void *ptr)
{
    tb_test_host *h = data;
    if (ptr != NULL)
        h->live--;
    free(ptr);
}

static void tb_test_log(void *data, int level, const char *message)
{
    tb_test_host *h = data;
    snprintf(h->last_log, sizeof h->last_log, "%s", message);
    if (getenv("TB_TEST_VERBOSE") != NULL)
        fprintf(stderr, "     log %d: %s\n", level, message);
}

static int tb_test_progress(void *data, const char *stage, uint64_t done, uint64_t total)
{
    tb_test_host *h = data;
    (void)stage;
    (void)done;
    (void)total;
    h->progress_calls++;
    return h->cancel_after >= 0 && h->progress_calls > h->cancel_after;
}

static const topoml_host_v1 tb_test_host_table = {
    sizeof(topoml_host_v1), 1,           &tb_host_data, tb_test_alloc, tb_test_realloc,
    tb_test_free,           tb_test_log, "0.0.0",
};

static char tb_test_error[512];

/* A call with every service, no memory limit, the default device. */
static topoml_call_v1 tb_test_call(void)
{
    topoml_call_v1 c;
    memset(&c, 0, sizeof c);
    c.struct_size = sizeof c;
    c.host_data = &tb_host_data;
    c.alloc = tb_test_alloc;
    c.realloc = tb_test_realloc;
    c.free = tb_test_free;
    c.log = tb_test_log;
    c.progress = tb_test_progress;
    c.error = tb_test_error;
    c.error_size = sizeof tb_test_error;
    c.device = -1;
    tb_test_error[0] = '\0';
    return c;
}

#endif /* TB_TEST_HOST_H */
