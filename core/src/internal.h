/*
 * internal.h — declarations shared by the core's own files (never installed).
 *
 * The context (context.c) owns the allocator, the error text, the log and
 * the limits; every other core file goes through the helpers declared here
 * so that fault injection, memory accounting and error reporting are the
 * same everywhere.
 */
#ifndef TOPOML_INTERNAL_H
#define TOPOML_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#include "topoml/plugin.h"
#include "topoml/topoml.h"

/* ---- context services (context.c) ---- */

/* Allocate through the context's allocator. NULL on failure; the caller then
 * reports TOPOML_E_NOMEM (tm_nomem does that). Sizes of 0 are allowed. */
void *tm_alloc(topoml_context *ctx, size_t size);
void *tm_calloc(topoml_context *ctx, size_t count, size_t size);
void *tm_realloc(topoml_context *ctx, void *ptr, size_t size);
void tm_free(topoml_context *ctx, void *ptr);
char *tm_strdup(topoml_context *ctx, const char *s);

/* Record an error message for the context and return `status`, so that a
 * failing path reads `return tm_error(ctx, TOPOML_E_PARSE, "%s:%zu: ...", ...)`. */
int tm_error(topoml_context *ctx, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int tm_nomem(topoml_context *ctx, size_t size);

/* Log through the context's log callback (never stdout). */
void tm_log(topoml_context *ctx, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The context's memory limit in bytes (0: none). Checked before allocating
 * anything that grows with the input: tm_check_memory reports TOPOML_E_LIMIT
 * with the estimate when `bytes` exceeds it. `what` names the allocation. */
uint64_t tm_max_memory(const topoml_context *ctx);
int tm_check_memory(topoml_context *ctx, uint64_t bytes, const char *what);

/* Overflow-checked arithmetic: true when the result fits. */
static inline bool tm_mul_u64(uint64_t a, uint64_t b, uint64_t *out)
{
    return !__builtin_mul_overflow(a, b, out);
}
static inline bool tm_add_u64(uint64_t a, uint64_t b, uint64_t *out)
{
    return !__builtin_add_overflow(a, b, out);
}

/* ---- data sets (data.c, io_*.c) ---- */

/* The opaque topoml_data of the public API. Exactly one of the layouts is
 * used, as `kind` (topoml_input_kind) says; every array is owned. */
struct topoml_data {
    uint32_t kind;     /* TOPOML_INPUT_POINTS / _CONDENSED / _SPARSE */
    uint64_t n;        /* points or vertices */
    uint64_t dim;      /* POINTS: coordinates per point */
    double *values;    /* POINTS: n*dim row-major; CONDENSED: n(n-1)/2 */
    topoml_edge *edges; /* SPARSE: n_edges edges, i < j, no duplicates */
    uint64_t n_edges;
};

/* Read one data set in `format` from `f`; `name` is used in messages
 * ("name:line: reason"). On success *out is filled (arrays from tm_alloc); on
 * failure nothing is left allocated and the context holds the message. */
int tm_read_data(topoml_context *ctx, FILE *f, const char *name, topoml_format format,
                 struct topoml_data *out);

#endif /* TOPOML_INTERNAL_H */
