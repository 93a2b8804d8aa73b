/*
 * call.c — what every op does with its topoml_call_v1: error messages,
 * debug logging, host scratch memory counted against max_memory, progress
 * and cancellation. No driver calls except to describe a driver error.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "tb.h"

/* A reader uses a field only if struct_size covers it (plugin.h,
 * TOPOML_STRUCT_HAS). */
#define TB_CALL_HAS(call, field) TOPOML_STRUCT_HAS(call, topoml_call_v1, field)

int tb_fail(const topoml_call_v1 *call, int status, const char *fmt, ...)
{
    if (call != NULL && TB_CALL_HAS(call, error_size) && call->error != NULL &&
        call->error_size > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(call->error, call->error_size, fmt, ap);
        va_end(ap);
    }
    return status;
}

int tb_check(tb_state *st, const topoml_call_v1 *call, tb_curesult r, int status, const char *what)
{
    if (r == TB_CUDA_SUCCESS)
        return TOPOML_OK;
    char text[160];
    return tb_fail(call, status, "triton-bridge: %s: %s", what,
                   tb_cuda_describe(&st->cu, r, text, sizeof text));
}

void tb_debug(const topoml_call_v1 *call, const char *fmt, ...)
{
    if (call == NULL || !TB_CALL_HAS(call, log) || call->log == NULL)
        return;
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    call->log(call->host_data, TOPOML_LOG_DEBUG, text);
}

int tb_budget_alloc(tb_budget *b, uint64_t size, const char *what, void **out)
{
    const topoml_call_v1 *call = b->call;
    *out = NULL;
    uint64_t limit = TB_CALL_HAS(call, max_memory) ? call->max_memory : 0;
    if (size > SIZE_MAX || (limit != 0 && (size > limit || b->used > limit - size)))
        return tb_fail(call, TOPOML_E_LIMIT,
                       "triton-bridge: %s needs %llu bytes of host memory, over the limit of "
                       "%llu (%llu already in use)",
                       what, (unsigned long long)size, (unsigned long long)limit,
                       (unsigned long long)b->used);
    void *p = call->alloc(call->host_data, size == 0 ? 1 : (size_t)size);
    if (p == NULL)
        return tb_fail(call, TOPOML_E_NOMEM, "triton-bridge: %s: cannot allocate %llu bytes", what,
                       (unsigned long long)size);
    b->used += size;
    *out = p;
    return TOPOML_OK;
}

void tb_budget_free(tb_budget *b, void *ptr, uint64_t size)
{
    if (ptr == NULL)
        return;
    b->call->free(b->call->host_data, ptr);
    b->used -= size;
}

int tb_cancelled(const topoml_call_v1 *call, const char *stage, uint64_t done, uint64_t total)
{
    if (!TB_CALL_HAS(call, progress) || call->progress == NULL)
        return 0;
    if (call->progress(call->host_data, stage, done, total) == 0)
        return 0;
    tb_fail(call, TOPOML_E_CANCELLED, "triton-bridge: %s cancelled", stage);
    return 1;
}

double tb_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
