/*
 * topoml/types.h — the plain data types shared by the public API (topoml.h)
 * and the plugin ABI (plugin.h): status codes, enums, intervals, edges.
 *
 * Nothing in here allocates or has behaviour; it is included by both sides of
 * the plugin boundary, so every struct is laid out for a stable C ABI:
 * fixed-width integers, doubles, no bitfields, no enums stored in structs
 * (enum values travel as uint32_t).
 */
#ifndef TOPOML_TYPES_H
#define TOPOML_TYPES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Status codes. 0 is success, every error is negative; topoml_strerror()
 * (topoml.h) turns one into text. Plugins return these too. */
typedef enum topoml_status {
    TOPOML_OK = 0,
    TOPOML_E_INVALID = -1,     /* a bad argument or bad input data */
    TOPOML_E_NOMEM = -2,       /* an allocation failed */
    TOPOML_E_UNSUPPORTED = -3, /* the backend cannot do this op / parameter */
    TOPOML_E_OVERFLOW = -4,    /* a size or simplex index would overflow */
    TOPOML_E_LIMIT = -5,       /* the memory (or another) limit would be exceeded */
    TOPOML_E_CANCELLED = -6,   /* the progress callback asked to stop */
    TOPOML_E_IO = -7,          /* a file could not be opened, read or written */
    TOPOML_E_PARSE = -8,       /* input text or binary does not parse */
    TOPOML_E_ABI = -9,         /* a plugin speaks no ABI version the core speaks */
    TOPOML_E_PLUGIN = -10,     /* a plugin misbehaved (bad struct, bad result) */
    TOPOML_E_DEVICE = -11,     /* the device failed or is absent */
    TOPOML_E_NOT_FOUND = -12,  /* no such backend, file or key */
    TOPOML_E_CONFIG = -13,     /* the configuration is wrong */
    TOPOML_E_GATE = -14,       /* the gate does not let this backend run */
    TOPOML_E_INTERNAL = -15    /* a bug in topoml; please report it */
} topoml_status;

/* Element type of point coordinates and of distance output. */
typedef enum topoml_dtype {
    TOPOML_F32 = 0,
    TOPOML_F64 = 1
} topoml_dtype;
#define TOPOML_DTYPE_COUNT 2

/* Metrics for point clouds. */
typedef enum topoml_metric {
    TOPOML_METRIC_EUCLIDEAN = 0,
    TOPOML_METRIC_SQEUCLIDEAN = 1,
    TOPOML_METRIC_MANHATTAN = 2,
    TOPOML_METRIC_CHEBYSHEV = 3,
    TOPOML_METRIC_COSINE = 4 /* 1 - <x,y>/(|x||y|); 1 when either is zero */
} topoml_metric;
#define TOPOML_METRIC_COUNT 5

/* One persistence interval. death == +INFINITY for an essential class (or a
 * class still alive at the threshold). */
typedef struct topoml_interval {
    double birth;
    double death;
    uint32_t dim;
    uint32_t reserved; /* zero */
} topoml_interval;

/* One edge of a filtration: vertices i < j at distance d. */
typedef struct topoml_edge {
    double d;
    uint32_t i;
    uint32_t j;
} topoml_edge;

/* A birth/death pair of a persistence diagram (input of images and
 * features; dimension is the caller's business). */
typedef struct topoml_pair {
    double birth;
    double death;
} topoml_pair;

/* The edges that give one interval its values (giotto-ph's
 * `return_generators`): the vertices of an edge whose length is the birth
 * value and of one whose length is the death value, each pair ascending.
 * TOPOML_NO_VERTEX in both slots where there is no such edge: the birth in
 * dimension 0 (every vertex is born at 0) and an infinite death. */
#define TOPOML_NO_VERTEX UINT32_MAX
typedef struct topoml_generator {
    uint32_t birth[2];
    uint32_t death[2];
} topoml_generator;

#ifdef __cplusplus
}
#endif
#endif /* TOPOML_TYPES_H */
