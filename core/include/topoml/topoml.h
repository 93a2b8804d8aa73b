/*
 * topoml/topoml.h — the public C API of libtopoml.
 *
 * libtopoml computes Vietoris–Rips persistence barcodes, pairwise distances,
 * threshold edges and (through topoml/features.h) persistence images and
 * diagram features. Work runs on backends: the scalar reference built into
 * the library, and plugins (topoml-backend-*.so) that the context discovers
 * and that the gate enables only once they match the reference.
 *
 * Conventions (as in libgit2 and libuv):
 *  - every public name starts with topoml_ / TOPOML_;
 *  - functions return a topoml_status (0 or a negative code); outputs come
 *    first; on failure topoml_errmsg(ctx) has the text of the last error;
 *  - everything a function allocates has a matching _free;
 *  - the library never prints to stdout, never calls exit or abort.
 *
 * Thread safety: a context and everything made from it may be used by one
 * thread at a time. Different contexts are independent and may be used from
 * different threads at once. topoml_version() and topoml_strerror() may be
 * called from any thread. A barcode or data set may be read (not freed) from
 * several threads at once.
 */
#ifndef TOPOML_TOPOML_H
#define TOPOML_TOPOML_H

#include <stdint.h>
#include <stdio.h>

#include "topoml/plugin.h"
#include "topoml/types.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define TOPOML_API __attribute__((visibility("default")))
#else
#define TOPOML_API
#endif

/* TOPOML_VERSION_MAJOR, _MINOR, _PATCH and _STRING, generated from the
 * version in CMakeLists.txt. */
#include "topoml/version.h"

/* "MAJOR.MINOR.PATCH" of the library actually linked. */
TOPOML_API const char *topoml_version(void);

/* A static English description of a topoml_status. Never NULL. */
TOPOML_API const char *topoml_strerror(int status);

/* ------------------------------------------------------------------------
 * Contexts
 * ---------------------------------------------------------------------- */

typedef struct topoml_context topoml_context;

/* A custom allocator. All three functions are required; `user` is passed
 * back. realloc(user, NULL, n) must behave as alloc. */
typedef struct topoml_allocator {
    void *(*alloc)(void *user, size_t size);
    void *(*realloc)(void *user, void *ptr, size_t size);
    void (*free)(void *user, void *ptr);
    void *user;
} topoml_allocator;

/* Flags of topoml_context_options. */
#define TOPOML_CTX_NO_ENV 0x1u     /* ignore TOPOML_CONFIG and TOPOML_PLUGIN_PATH */
#define TOPOML_CTX_NO_PLUGINS 0x2u /* do not look for plugin files at all */

typedef struct topoml_context_options {
    uint32_t struct_size;          /* sizeof(topoml_context_options) */
    uint32_t flags;                /* TOPOML_CTX_* */
    const char *config_path;       /* NULL: $TOPOML_CONFIG if set, else no file */
    const topoml_allocator *allocator; /* NULL: malloc/realloc/free */
    const char *plugin_path;       /* extra colon-separated plugin folders, or NULL */
} topoml_context_options;

/* Make a context: read the configuration and discover plugin files (each
 * opened and checked; none is read, no plugin code runs). The plugins are
 * hashed and probed (each in a child process, all at once) and given their
 * gate state on the
 * first call that needs them: listing (topoml_backend_get), an automatic
 * choice that does not stop at "scalar" first in `prefer`, data in device
 * memory; naming a backend (topoml_use_backend, an entry of `prefer`)
 * probes only the file named for it, topoml-backend-NAME.so, unless that
 * file turns out not to hold it. A context used only
 * with the scalar reference starts no probe at all. `opts` may be NULL.
 * When the configuration
 * is wrong this fails (TOPOML_E_CONFIG) and, if `out` is not NULL, *out is a
 * context whose topoml_errmsg() says why ("file:line:column: reason"); free
 * it with topoml_context_free. A bad plugin file never fails it: the plugin
 * is listed as rejected with its reason. */
TOPOML_API int topoml_context_new(topoml_context **out, const topoml_context_options *opts);
TOPOML_API void topoml_context_free(topoml_context *ctx);

/* Text of the last error recorded in the context ("" if none). Valid until
 * the next call that takes the context. */
TOPOML_API const char *topoml_errmsg(const topoml_context *ctx);

/* Log messages of level <= max_level go to fn (default: none are shown).
 * Levels are topoml_log_level (plugin.h). Messages of level info or worse
 * logged while no callback was set (while topoml_context_new ran: refused
 * plugin folders and files, "gate is off") are kept, at most 16, and given
 * to the first callback set, those of level <= max_level, once. */
typedef void (*topoml_log_fn)(void *user, int level, const char *message);
TOPOML_API void topoml_set_log(topoml_context *ctx, topoml_log_fn fn, void *user, int max_level);

/* Progress of long work; return non-zero to cancel (the op then returns
 * TOPOML_E_CANCELLED). */
typedef int (*topoml_progress_fn)(void *user, const char *stage, uint64_t done, uint64_t total);
TOPOML_API void topoml_set_progress(topoml_context *ctx, topoml_progress_fn fn, void *user);

/* Limit on the memory one op may allocate, in bytes (0: none). Overrides the
 * configuration's max_memory. Work whose estimate exceeds it is refused with
 * TOPOML_E_LIMIT before anything large is allocated; the message names the
 * limit and where it came from. With neither set, the limit is the machine's:
 * the smallest of physical memory, RLIMIT_AS and the cgroup's memory limit
 * (topoml_get_max_memory shows it). */
TOPOML_API void topoml_set_max_memory(topoml_context *ctx, uint64_t bytes);
TOPOML_API uint64_t topoml_get_max_memory(const topoml_context *ctx);

/* Read a size such as "123", "512M", "4GiB" or "1.5GB" into bytes: a single
 * letter (K, M, G, T) and KiB, MiB, GiB, TiB are powers of 1024; KB, MB, GB,
 * TB powers of 1000. Decimal digits only (no sign, exponent or hexadecimal);
 * a fraction needs a unit and must give whole bytes. "unlimited" (and "0")
 * read as 0, no limit. TOPOML_E_INVALID for anything else, TOPOML_E_OVERFLOW
 * past 2^64 - 1. The configuration's max_memory and the CLI's --max-memory
 * are read with it. */
TOPOML_API int topoml_parse_size(const char *s, uint64_t *out);

/* Check `bytes` that the caller is about to allocate for `what` against the
 * context's memory limit: TOPOML_OK, or TOPOML_E_LIMIT with the library's
 * message (topoml_errmsg: the estimate, the limit and where it came from).
 * For a host's own buffers that grow with its input. */
TOPOML_API int topoml_check_memory(topoml_context *ctx, uint64_t bytes, const char *what);

/* Free memory that an op returned (distances, edge lists). */
TOPOML_API void topoml_free(topoml_context *ctx, void *ptr);

/* ------------------------------------------------------------------------
 * Backends
 * ---------------------------------------------------------------------- */

/* Gate states. Only ENABLED backends run work. */
typedef enum topoml_gate_state {
    TOPOML_GATE_ENABLED = 0,  /* certified, built in, or gate off */
    TOPOML_GATE_DISABLED = 1, /* loaded and probed, but not (yet) allowed to run */
    TOPOML_GATE_UNSUPPORTED = 2, /* probe says the hardware is not there */
    TOPOML_GATE_REJECTED = 3  /* could not be loaded or negotiated, or failed conformance */
} topoml_gate_state;

typedef struct topoml_backend_info {
    uint32_t struct_size; /* set by the caller: sizeof(topoml_backend_info) */
    uint32_t abi_version; /* negotiated ABI version (0 if none) */
    const char *name;
    const char *version;
    const char *vendor;
    const char *description;
    const char *path;     /* file it came from; NULL for the built-in scalar */
    int probe_status;     /* topoml_status of probe */
    const char *probe_message;
    uint32_t gate_state;  /* topoml_gate_state */
    const char *gate_reason;
    uint32_t n_caps;
    const topoml_capability_v1 *caps;
    /* Appended in 0.2 (filled when struct_size covers it): the backend's
     * topoml_selection; TOPOML_SELECT_BY_NAME: never chosen unless named. */
    uint32_t selection;
    /* Appended in 0.4: where the backend's ops run (config `isolation`,
     * docs/security.md): "host" (in this process: the built-in reference, a
     * plugin shipped with topoml in its own folder, or `isolation: none`) or
     * "process" (in a topoml-plugin-host helper process). A static string. */
    const char *isolation;
    /* Appended in 0.4: for a backend whose ops run in a helper process, the
     * walls of its sandbox this kernel offers (docs/security.md, "The
     * sandbox"): "seccomp, landlock (ABI 7), no new privileges, memory
     * limit", or "partial: ...; no landlock (kernel ABI 0)". NULL for a
     * backend that runs in the host. A static string. */
    const char *sandbox;
} topoml_backend_info;

/* Every backend the context knows, the built-in scalar first, then plugin
 * files in discovery order (rejected ones too). Strings stay valid until the
 * context is freed. The first topoml_backend_get probes the plugins not
 * probed yet (topoml_context_new), so every one is listed as probed. */
TOPOML_API uint32_t topoml_backend_count(const topoml_context *ctx);
TOPOML_API int topoml_backend_get(const topoml_context *ctx, uint32_t index,
                                  topoml_backend_info *info);

/* Since 0.4: the backend that a call naming `name` would get (the one that
 * runs under that name, not a duplicate), without listing every backend:
 * only what naming it probes is probed (the plugin file named for it,
 * topoml-backend-<name>.so, unless that file holds another backend;
 * docs/architecture.md, "Loading a plugin"); if every plugin of that name
 * was rejected, the first of them (its gate_reason says why).
 * TOPOML_E_NOT_FOUND, with a message naming every backend found, when no
 * backend has that name. */
TOPOML_API int topoml_backend_find(topoml_context *ctx, const char *name,
                                   topoml_backend_info *info);

/* Ask for a backend by name for the ops that follow (NULL: choose
 * automatically, the default). A named backend that is not enabled or lacks
 * the capability makes the op fail with TOPOML_E_GATE / TOPOML_E_UNSUPPORTED;
 * it never silently runs elsewhere. */
TOPOML_API int topoml_use_backend(topoml_context *ctx, const char *name);

/* Which backend ran the last op and why it was chosen. */
TOPOML_API const char *topoml_last_backend(const topoml_context *ctx);
TOPOML_API const char *topoml_last_selection_reason(const topoml_context *ctx);

/* ------------------------------------------------------------------------
 * Data sets
 * ---------------------------------------------------------------------- */

typedef struct topoml_data topoml_data;

/* Input formats, named as Ripser names them. */
typedef enum topoml_format {
    TOPOML_FORMAT_LOWER_DISTANCE = 0, /* lower-triangular matrix (Ripser's default) */
    TOPOML_FORMAT_UPPER_DISTANCE = 1,
    TOPOML_FORMAT_DISTANCE = 2,       /* full square matrix */
    TOPOML_FORMAT_POINT_CLOUD = 3,    /* one point per line */
    TOPOML_FORMAT_DIPHA = 4,          /* DIPHA distance matrix */
    TOPOML_FORMAT_SPARSE = 5,         /* "i j d" per line */
    TOPOML_FORMAT_BINARY = 6,         /* lower-triangular float32, native order */
    TOPOML_FORMAT_AUTO = 7,           /* detect: DIPHA, NPY, or a square/lower/upper text matrix */
    TOPOML_FORMAT_NPY = 8             /* points: a 2-D float64/float32 NumPy .npy array */
} topoml_format;

/* Parse a format name ("lower-distance", "point-cloud", "auto", ...). As
 * Ripser, a name that starts with "lower", "upper", "dist" or "point" is
 * that format ("lower", "dist", "point-cloud-csv"). */
TOPOML_API int topoml_format_from_name(const char *name, topoml_format *out);
TOPOML_API const char *topoml_format_name(topoml_format format);

/* Read a data set from a file ("-" is standard input). Errors name the file,
 * the line and the reason. */
TOPOML_API int topoml_data_read(topoml_context *ctx, topoml_data **out, const char *path,
                                topoml_format format);
TOPOML_API int topoml_data_read_stream(topoml_context *ctx, topoml_data **out, FILE *f,
                                       const char *name, topoml_format format);

/* The format a data set was read as: the one named, or with
 * TOPOML_FORMAT_AUTO the one detected (docs/formats.md, "No format named").
 * TOPOML_FORMAT_AUTO for a data set made from memory or a NULL one. */
TOPOML_API topoml_format topoml_data_format(const topoml_data *data);

/* How strictly full matrices (distance, dipha) are read. By default they
 * are read as Ripser reads them: the lower triangle is kept, and an upper
 * triangle that differs from it, or a non-zero diagonal, is ignored with
 * one warning (the largest difference and where) through the log. With
 * TOPOML_READ_STRICT_SYMMETRY such a matrix is refused (TOPOML_E_INVALID).
 * Flags hold for the reads that follow on this context. */
#define TOPOML_READ_STRICT_SYMMETRY 0x1u
TOPOML_API int topoml_set_read_flags(topoml_context *ctx, uint32_t flags);

/* Make a data set from memory (copied). Every constructor here refuses n = 0
 * (TOPOML_E_INVALID, "no points"), as reading an empty file does. */
TOPOML_API int topoml_data_from_points(topoml_context *ctx, topoml_data **out, uint64_t n,
                                       uint64_t dim, const double *coords);
/* A condensed matrix (Ripser's order, n(n-1)/2 values). An entry of
 * +INFINITY means "no edge" between its two points: a matrix with such
 * entries becomes a sparse data set of its finite entries (kind SPARSE). */
TOPOML_API int topoml_data_from_condensed(topoml_context *ctx, topoml_data **out, uint64_t n,
                                          const double *condensed);
TOPOML_API int topoml_data_from_edges(topoml_context *ctx, topoml_data **out, uint64_t n,
                                      uint64_t n_edges, const topoml_edge *edges);
TOPOML_API void topoml_data_free(topoml_context *ctx, topoml_data *data);

/* Points from memory in any layout and precision: n points of `dim`
 * coordinates of `dtype` (TOPOML_F32 or TOPOML_F64); coordinate k of point i
 * is at (const char *)coords + i * row_stride + k * col_stride, in bytes (a
 * C-ordered array: row_stride = dim * size, col_stride = size; a Fortran-
 * ordered one: row_stride = size, col_stride = n * size). Strides must be
 * multiples of the element size. Copied, widened to double. */
TOPOML_API int topoml_data_from_points_strided(topoml_context *ctx, topoml_data **out, uint64_t n,
                                               uint64_t dim, topoml_dtype dtype,
                                               const void *coords, uint64_t row_stride,
                                               uint64_t col_stride);

/* Shape: kind is a topoml_input_kind (POINTS, CONDENSED or SPARSE). */
TOPOML_API uint32_t topoml_data_kind(const topoml_data *data);
TOPOML_API uint64_t topoml_data_count(const topoml_data *data); /* points / vertices */
TOPOML_API uint64_t topoml_data_dim(const topoml_data *data);   /* coordinates (points) */

/* Summary of a data set as Ripser reports it: smallest distance, largest
 * finite distance, the enclosing radius (min over i of max over j of d(i,j);
 * homology is trivial beyond it) and the number of pairs within `threshold`.
 * For sparse input the enclosing radius is +INFINITY. O(n^2) for points and
 * matrices, O(edges) for sparse input; stores nothing of size n^2. */
typedef struct topoml_stats {
    double min;
    double max_finite;
    double enclosing_radius;
    uint64_t edges_within;
} topoml_stats;
TOPOML_API int topoml_data_stats(topoml_context *ctx, const topoml_data *data,
                                 topoml_metric metric, double threshold, topoml_stats *out);

/* ------------------------------------------------------------------------
 * Ops
 * ---------------------------------------------------------------------- */

/* Pairwise distances of a point cloud, condensed lower-triangular in
 * Ripser's order (n(n-1)/2 values of `dtype`), in *out, freed with
 * topoml_free. With F32 the coordinates are rounded to float first (one
 * beyond float's range is TOPOML_E_OVERFLOW). Right at any magnitude:
 * computed with scaling where squares would overflow or underflow (as hypot
 * does); a distance beyond the dtype's range (sqeuclidean of points 1e200
 * apart) is TOPOML_E_OVERFLOW here and in every op on points, never inf. */
TOPOML_API int topoml_distances(topoml_context *ctx, const topoml_data *points,
                                topoml_metric metric, topoml_dtype dtype, void **out,
                                uint64_t *count);

/* Every pair i < j with d(i,j) <= threshold, sorted by (d, i, j). Points
 * use `metric` (in f64); distance matrices use their entries. */
TOPOML_API int topoml_edges(topoml_context *ctx, const topoml_data *data, topoml_metric metric,
                            double threshold, topoml_edge **out, uint64_t *n_out);

typedef struct topoml_barcode topoml_barcode;

typedef struct topoml_rips_options {
    uint32_t struct_size; /* sizeof(topoml_rips_options) */
    uint32_t max_dim;     /* H_0 .. H_max_dim (default 1) */
    double threshold;     /* +INFINITY: none (the enclosing radius is used) */
    uint32_t modulus;     /* prime coefficient field Z/p (default 2) */
    uint32_t metric;      /* topoml_metric for point clouds (default euclidean) */
    /* Appended in 0.3 (read only when struct_size covers them): */
    uint32_t collapse;    /* topoml_collapse: edge collapse before the reduction */
    uint32_t n_threads;   /* threads the edge collapse and a multi-threaded
                             backend may use; 0: the configuration's
                             `threads:`, else every core this process may run
                             on (sched_getaffinity); never more than those */
    uint32_t flags;       /* TOPOML_RIPS_* bits (default 0) */
    /* Appended in 0.4: a weighted Rips filtration (read only when
     * struct_size covers them; below, "Weighted Rips filtrations"). */
    uint32_t weights;            /* topoml_weights (default NONE) */
    const double *vertex_weights; /* WEIGHTS_GIVEN: n values >= 0, not copied */
    double weight_p;             /* 1, 2 or +INFINITY (default 1) */
    uint32_t dtm_neighbors;      /* WEIGHTS_DTM: k >= 1 (default 3) */
    double dtm_r;                /* WEIGHTS_DTM: r > 0 (default 2) */
} topoml_rips_options;

/* topoml_rips_options.weights: weighted Rips filtrations (Anai et al.,
 * "DTM-based filtrations", 2020), as giotto-ph's ripser_parallel computes
 * them with `weights` and `weight_params`.
 *
 * Every vertex i gets a weight w_i >= 0 and enters the filtration at w_i;
 * the edge {i, j} of length d (the input's distance) enters at
 *   p = +INFINITY: max(d, w_i, w_j);
 *   p = 1: max(w_i, w_j) if d <= |w_i - w_j| / 2, else d + (w_i + w_j) / 2;
 *   p = 2: max(w_i, w_j) if d <= sqrt(|w_i^2 - w_j^2|) / 2, else
 *          sqrt((d^2 + ((w_i + w_j)/2)^2) (d^2 + ((w_i - w_j)/2)^2)) / d;
 * (the root t of 2d = (t^p - w_i^p)^(1/p) + (t^p - w_j^p)^(1/p)), computed
 * in double in giotto-ph's order of operations. GIVEN takes the weights
 * from vertex_weights (n of them, each finite and >= 0); DTM computes the
 * empirical distance to measure
 *   w_i = 2 ((1 / (k + 1)) sum over the k nearest other vertices x of d(i, x)^r)^(1/r)
 * (k = dtm_neighbors; ties and duplicates count as giotto-ph counts them:
 * the k smallest distances to other vertices; on a sparse input the stored
 * edges only, and a vertex with fewer than k is refused).
 *
 * Since every edge value is >= the weights of its ends, the complex of each
 * scale is the flag complex of the edges whose value is within it: every
 * bar of dimension >= 1 is that of the Rips filtration of the edge values,
 * which the chosen backend computes (and the gate checks) as an ordinary
 * Rips call. H0 is computed by the library: a class is born at its vertex's
 * weight and the younger of two classes (the larger birth) dies at the edge
 * that merges them; bars of length zero are dropped. With a threshold,
 * vertices whose weight is above it are not in the complex (no bar); the
 * threshold is applied to the edge values. Not with TOPOML_RIPS_GENERATORS
 * or TOPOML_RIPS_COCYCLES, nor with data in device memory
 * (TOPOML_E_UNSUPPORTED). */
typedef enum topoml_weights {
    TOPOML_WEIGHTS_NONE = 0,
    TOPOML_WEIGHTS_GIVEN = 1,
    TOPOML_WEIGHTS_DTM = 2
} topoml_weights;

/* topoml_rips_options.flags. GENERATORS: also compute, for every interval,
 * the edges whose lengths are its birth and death values (giotto-ph's
 * return_generators; topoml_barcode_generators). If the chosen backend
 * cannot (its capability record lacks TOPOML_CAP_GENERATORS), the built-in
 * scalar reference computes the barcode instead, and says so in the log. */
#define TOPOML_RIPS_GENERATORS 1u
/* topoml_rips_options.flags (0.4). COCYCLES: also compute, for every
 * interval of dimension >= 1, a representative cocycle, as Ripser's
 * representative-cocycles output and ripser.py's do_cocycles give it
 * (topoml_barcode_cocycle). If the chosen backend cannot (its capability
 * record lacks TOPOML_CAP_COCYCLES, or it runs in its own process), the
 * built-in scalar reference computes the barcode instead, and says so in the
 * log. Like GENERATORS, it turns the edge collapse off: the collapsed complex
 * has other simplices. */
#define TOPOML_RIPS_COCYCLES 2u

/* topoml_rips_options.collapse. The edge collapse (Boissonnat and Pritam,
 * SoCG 2020) shrinks the flag complex before the backend reduces it; the
 * barcode is the same in every dimension (docs/architecture.md, "Edge
 * collapse"). AUTO collapses when max_dim >= 1 and goes on only if the
 * first tenth of the work removes at least 10% of the edges it looks at
 * (docs/architecture.md says why, with the measurements). */
typedef enum topoml_collapse {
    TOPOML_COLLAPSE_AUTO = 0,
    TOPOML_COLLAPSE_ON = 1,
    TOPOML_COLLAPSE_OFF = 2
} topoml_collapse;

/* Fill `opts` with the defaults: max_dim 1, no threshold, Z/2, euclidean,
 * no weights (weight_p 1, dtm_neighbors 3, dtm_r 2 for when they are set). */
TOPOML_API void topoml_rips_options_init(topoml_rips_options *opts);

/* Vietoris–Rips persistence barcodes. Bars of zero length are not reported;
 * essential classes, and with a threshold the classes still alive at it,
 * have death +INFINITY. After TOPOML_E_CANCELLED, *out (if not NULL) holds
 * the dimensions that were finished.
 *
 * Memory: before any dimension is computed, the work of each is estimated
 * (docs/embedding.md, "Limits") and refused with TOPOML_E_LIMIT, *out NULL,
 * if it would not fit the memory limit. If the limit is reached mid-way all
 * the same, the status is TOPOML_E_LIMIT and *out (if not NULL) holds the
 * dimensions that were finished, as after a cancel: a partial barcode
 * (topoml_barcode_complete 0, topoml_barcode_max_dim the last finished one,
 * topoml_barcode_stop_status TOPOML_E_LIMIT); free it either way.
 *
 * Backend: as for every op (docs/embedding.md, "Choosing a backend"); with
 * max_dim 0 and no generators, a backend that offers the h0 op but not rips
 * is a candidate too, and runs its h0 op (the same bars). */
TOPOML_API int topoml_barcode_compute(topoml_context *ctx, topoml_barcode **out,
                                      const topoml_data *data, const topoml_rips_options *opts);
TOPOML_API void topoml_barcode_free(topoml_barcode *barcode);

TOPOML_API uint32_t topoml_barcode_max_dim(const topoml_barcode *barcode);
TOPOML_API int topoml_barcode_complete(const topoml_barcode *barcode);
/* What stopped a partial barcode: TOPOML_OK for a complete one, else
 * TOPOML_E_CANCELLED or TOPOML_E_LIMIT; dimensions 0..topoml_barcode_max_dim
 * are finished and the next one was not. TOPOML_E_INVALID for NULL. */
TOPOML_API int topoml_barcode_stop_status(const topoml_barcode *barcode);
/* All intervals, grouped by dimension ascending; *n gets the count. */
TOPOML_API const topoml_interval *topoml_barcode_intervals(const topoml_barcode *barcode,
                                                           uint64_t *n);
/* The generators of the intervals (topoml_generator, types.h): entry k
 * belongs to interval k of topoml_barcode_intervals, *n gets the same
 * count. NULL (and *n = 0) unless the barcode was computed with
 * TOPOML_RIPS_GENERATORS. Dimension 0 has no birth edge; an infinite death
 * has no death edge (TOPOML_NO_VERTEX). */
TOPOML_API const topoml_generator *topoml_barcode_generators(const topoml_barcode *barcode,
                                                             uint64_t *n);

/* The representative cocycle of interval k (an index into
 * topoml_barcode_intervals), for a barcode computed with
 * TOPOML_RIPS_COCYCLES: *rows gets its number of rows, each of d + 2 words
 * for an interval of dimension d — the d + 1 vertices of a d-simplex of the
 * input, descending, then the cocycle's value on it in 1..p-1 (Z/p, the
 * modulus the barcode was computed in); the simplices the cocycle does not
 * name have value 0. The rows come in filtration order (diameter ascending,
 * then Ripser's simplex index descending), the first row the simplex that
 * starts the bar, with value 1. Its coboundary is zero on every (d+1)-simplex
 * of diameter <= the bar's birth: a cocycle of the complex at the birth.
 * Dimension 0 has none (*rows 0, a non-NULL pointer). NULL (and *rows 0)
 * for a barcode without cocycles, NULL barcode or k out of range. The
 * pointer lives as long as the barcode. */
TOPOML_API const uint32_t *topoml_barcode_cocycle(const topoml_barcode *barcode, uint64_t k,
                                                  uint64_t *rows);

/* The threshold the barcode was computed with (+INFINITY: none; NaN for a
 * NULL barcode). */
TOPOML_API double topoml_barcode_threshold(const topoml_barcode *barcode);

/* Is interval k (an index into topoml_barcode_intervals) cut off by the
 * threshold — alive at it, its death unknown — rather than essential? 1 or
 * 0; TOPOML_E_INVALID for a NULL barcode or k out of range. Only infinite
 * intervals can be: all of them when the threshold is below the largest
 * distance of a sparse input; for points and matrices with a threshold,
 * all but one of dimension 0 (their full complex has one class, in H0). */
TOPOML_API int topoml_barcode_cut_off(const topoml_barcode *barcode, uint64_t k);

/* Output styles of topoml_barcode_write. */
typedef enum topoml_output {
    TOPOML_OUTPUT_RIPSER = 0, /* Ripser's text: "persistence intervals in dim k:" */
    TOPOML_OUTPUT_JSON = 1,
    TOPOML_OUTPUT_CSV = 2     /* "dim,birth,death" */
} topoml_output;

/* Write a barcode; `ratio` > 1 keeps only bars with death/birth > ratio (as
 * Ripser's --ratio), 0 keeps all; a NaN or negative ratio is refused
 * (TOPOML_E_INVALID). JSON and CSV record the threshold and tell bars cut
 * off by it from essential ones (docs/formats.md, "Output"). */
TOPOML_API int topoml_barcode_write(topoml_context *ctx, const topoml_barcode *barcode,
                                    FILE *f, topoml_output style, double ratio);

/* topoml_barcode_write into memory: *out gets the text (NUL-terminated,
 * *len bytes without the NUL), freed with topoml_free(ctx, *out). */
TOPOML_API int topoml_barcode_write_mem(topoml_context *ctx, const topoml_barcode *barcode,
                                        topoml_output style, double ratio, char **out,
                                        size_t *len);

/* ------------------------------------------------------------------------
 * Data in device memory (0.4)
 * ---------------------------------------------------------------------- */

/* A data set whose values stay in device memory: `device_values` is a
 * device pointer (memory TOPOML_MEMORY_CUDA: on CUDA device `device`) to n
 * points of `dim` coordinates, row-major (kind TOPOML_INPUT_POINTS), or to
 * the n(n-1)/2 entries of a condensed matrix in Ripser's order
 * (TOPOML_INPUT_CONDENSED), of `dtype` (TOPOML_F32 or TOPOML_F64; f32
 * values mean the same as topoml_data_from_points_strided's: widened to
 * double). `stream` is the cudaStream_t after whose work so far the values
 * are ready (NULL: the legacy default stream). Nothing is copied: the
 * memory must stay valid and unchanged until topoml_data_free.
 *
 * An op whose backend takes device input (a capability record with
 * TOPOML_CAP_DEVICE_INPUT, shown by `topoml backends` as device-input)
 * reads the values where they are (with TOPOML_RIPS_GENERATORS, only if
 * that record also says TOPOML_CAP_GENERATORS); for every other op the
 * library makes a host copy first, through that backend (the library itself does not link
 * CUDA), and counts it (topoml_data_host_copies). No enabled backend that
 * reads device memory: the op fails with TOPOML_E_UNSUPPORTED. Values are
 * checked where they are read: a NaN coordinate is TOPOML_E_INVALID from the
 * op, not from here. */
TOPOML_API int topoml_data_from_device(topoml_context *ctx, topoml_data **out,
                                       topoml_memory memory, topoml_input_kind kind,
                                       topoml_dtype dtype, uint64_t n, uint64_t dim,
                                       const void *device_values, int32_t device, void *stream);

/* Where a data set's values are: TOPOML_MEMORY_HOST for everything but
 * topoml_data_from_device's. */
TOPOML_API topoml_memory topoml_data_memory(const topoml_data *data);

/* How many host copies the library has made of a data set in device memory
 * so far (0 while every op read it on the device). */
TOPOML_API uint64_t topoml_data_host_copies(const topoml_data *data);

#ifdef __cplusplus
}
#endif
#endif /* TOPOML_TOPOML_H */
