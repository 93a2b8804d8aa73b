/*
 * topoml/features.h — what topoml computes from persistence diagrams:
 * Betti curves, persistence landscapes, persistent entropy, total
 * persistence, bottleneck and Wasserstein distances, persistence images; and
 * reading and writing diagrams in topoml's JSON, Ripser's text, GUDHI's text
 * and CSV. docs/features.md gives the definitions and the file formats.
 *
 * Conventions are those of topoml/topoml.h: a topoml_status is returned, on
 * failure topoml_errmsg(ctx) says why; ctx must not be NULL.
 *
 * A diagram of one dimension is a plain array of topoml_pair. Every function
 * taking one checks it: no NaN, birth <= death. Deaths may be +INFINITY
 * (essential classes); each function says what it does with them.
 */
#ifndef TOPOML_FEATURES_H
#define TOPOML_FEATURES_H

#include <stdint.h>
#include <stdio.h>

#include "topoml/plugin.h"
#include "topoml/topoml.h"
#include "topoml/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * Grids and infinite points
 * ---------------------------------------------------------------------- */

/* n evenly spaced values from lo to hi inclusive (n == 1: just lo) into
 * out[0..n). lo and hi finite, lo <= hi, n >= 1. */
TOPOML_API int topoml_grid(topoml_context *ctx, double lo, double hi, uint64_t n, double *out);

/* Copy the pairs, dropping those with infinite death (mode
 * TOPOML_INFINITE_DROP) or replacing their death by clip_death (mode
 * TOPOML_INFINITE_CLIP; clip_death finite and >= the birth of each clipped
 * pair). `out` has room for n pairs and may equal `in`; *n_out gets the
 * count written. The same rule as the image op's `infinite` parameter. */
TOPOML_API int topoml_pairs_finite(topoml_context *ctx, const topoml_pair *in, uint64_t n,
                                   uint32_t mode, double clip_death, topoml_pair *out,
                                   uint64_t *n_out);

/* ------------------------------------------------------------------------
 * Features of one diagram
 * ---------------------------------------------------------------------- */

/* Betti curve: out[i] = number of pairs with birth <= grid[i] < death (a
 * class is alive from its birth, included, to its death, excluded; infinite
 * deaths never end). The grid needs no order; values must not be NaN. */
TOPOML_API int topoml_betti_curve(topoml_context *ctx, const topoml_pair *pairs, uint64_t n,
                                  const double *grid, uint64_t n_grid, uint64_t *out);

/* Persistence landscapes (Bubenik 2015): out[k*n_grid + i] = lambda_{k+1}(
 * grid[i]) for k < levels, where lambda_k(t) is the k-th largest of
 * max(0, min(t - birth, death - t)) over the pairs (0 when fewer than k are
 * positive). An infinite death gives the unbounded ramp t - birth. */
TOPOML_API int topoml_landscapes(topoml_context *ctx, const topoml_pair *pairs, uint64_t n,
                                 uint32_t levels, const double *grid, uint64_t n_grid, double *out);

/* Persistent entropy: -sum (l_i/L) ln(l_i/L) over the pairs, l_i = death -
 * birth, L = sum l_i; pairs of zero length contribute nothing; 0 when L is
 * 0. Computed from scaled lengths, so lengths or sums beyond double (pairs
 * near +-1e308) or below it (subnormal) give the right value. Natural logarithm, not normalised. Infinite deaths are an error
 * (TOPOML_E_INVALID): drop or clip them first with topoml_pairs_finite. */
TOPOML_API int topoml_persistent_entropy(topoml_context *ctx, const topoml_pair *pairs, uint64_t n,
                                         double *out);

/* Total persistence of degree q > 0: sum (death - birth)^q. +INFINITY when a
 * death is infinite; TOPOML_E_OVERFLOW when finite pairs sum beyond double. */
TOPOML_API int topoml_total_persistence(topoml_context *ctx, const topoml_pair *pairs, uint64_t n,
                                        double q, double *out);

/* ------------------------------------------------------------------------
 * Distances between two diagrams
 *
 * Both are exact. Points on the diagonal may match the diagonal. Points with
 * an infinite coordinate are matched as GUDHI does: (b, +inf) only with
 * (b', +inf), (-inf, d) only with (-inf, d'), (-inf, +inf) only with
 * (-inf, +inf); if the two diagrams have different numbers of any of these
 * kinds the distance is +INFINITY; otherwise each kind is matched in the
 * order of its finite coordinate. Points (-inf, -inf) and (+inf, +inf) lie on
 * the diagonal and cost nothing.
 * ---------------------------------------------------------------------- */

/* Bottleneck distance with the L-infinity ground metric:
 * min over matchings of the largest L-infinity distance between matched
 * points (a point matched to the diagonal: (death - birth)/2). */
TOPOML_API int topoml_bottleneck_distance(topoml_context *ctx, const topoml_pair *a, uint64_t n_a,
                                          const topoml_pair *b, uint64_t n_b, double *out);

/* Wasserstein distance of order q (1 <= q < inf) with the L^internal_p
 * ground metric (1 <= internal_p <= +INFINITY; GUDHI's default is
 * +INFINITY): (min over matchings of the sum of distance^q)^(1/q); a point's
 * distance to the diagonal is (death - birth) * 2^(1/internal_p - 1). Solved
 * as an assignment problem on the (n_a + n_b)-square matrix with the
 * diagonal: O((n_a + n_b)^3) time, n_a * n_b doubles of memory. */
TOPOML_API int topoml_wasserstein_distance(topoml_context *ctx, const topoml_pair *a, uint64_t n_a,
                                           const topoml_pair *b, uint64_t n_b, double order,
                                           double internal_p, double *out);

/* ------------------------------------------------------------------------
 * Persistence images
 * ---------------------------------------------------------------------- */

/* Fill `params` with defaults: struct_size set, constant weight
 * (weight_max 1, weight_power 1), sigma 0.1, birth and persistence ranges
 * [0, 1], 20 x 20 pixels, infinite points dropped. The ranges and sigma
 * should then be set for the data at hand. */
TOPOML_API void topoml_image_params_init(topoml_image_params_v1 *params);

/* Persistence images of n_diagrams diagrams through the context's backend
 * selection (the `image` op): diagram k is pairs[offsets[k] ..
 * offsets[k+1]) (offsets has n_diagrams + 1 entries), image k is written to
 * out + k*height*width, row-major, row 0 the lowest persistence, column 0
 * the lowest birth. See topoml_image_params_v1 in topoml/plugin.h for the
 * definition of a pixel. */
TOPOML_API int topoml_persistence_images(topoml_context *ctx, const topoml_image_params_v1 *params,
                                         uint64_t n_diagrams, const uint64_t *offsets,
                                         const topoml_pair *pairs, double *out);

/* ------------------------------------------------------------------------
 * Diagrams of several dimensions, and their files
 * ---------------------------------------------------------------------- */

/* A persistence diagram with one array of pairs per dimension 0 .. n-1 (a
 * dimension may be present and empty). It keeps a pointer to the context it
 * was made with, which must outlive it. */
typedef struct topoml_diagram topoml_diagram;

/* Highest dimension a diagram file may name; larger ones are refused as
 * malformed input rather than allocated. */
#define TOPOML_DIAGRAM_MAX_DIM 1023u

typedef enum topoml_diagram_format {
    TOPOML_DIAGRAM_AUTO = 0,   /* reading only: decided from the content */
    TOPOML_DIAGRAM_JSON = 1,   /* {"dims":[{"dim":0,"intervals":[[b,d],[b,null]]}]} */
    TOPOML_DIAGRAM_RIPSER = 2, /* "persistence intervals in dim k:" then " [b,d)" / " [b, )" */
    TOPOML_DIAGRAM_GUDHI = 3,  /* "dim b d" per line, "inf" for infinity */
    TOPOML_DIAGRAM_CSV = 4     /* "dim,birth,death" header and rows, "inf" (or "cut") for infinity */
} topoml_diagram_format;

/* "auto", "json", "ripser", "gudhi", "csv". */
TOPOML_API int topoml_diagram_format_from_name(const char *name, topoml_diagram_format *out);
TOPOML_API const char *topoml_diagram_format_name(topoml_diagram_format format);

/* An empty diagram (no dimensions). */
TOPOML_API int topoml_diagram_new(topoml_context *ctx, topoml_diagram **out);

/* A diagram holding the intervals of a barcode (topoml_barcode_intervals);
 * every dimension up to the largest one named is present. */
TOPOML_API int topoml_diagram_from_intervals(topoml_context *ctx, topoml_diagram **out,
                                             const topoml_interval *intervals, uint64_t n);

/* A diagram holding a barcode's intervals (every dimension up to its
 * max_dim present), with its threshold and which intervals the threshold cut
 * off (topoml_barcode_threshold, topoml_barcode_cut_off). */
TOPOML_API int topoml_diagram_from_barcode(topoml_context *ctx, topoml_diagram **out,
                                           const topoml_barcode *barcode);

/* Append pairs to dimension `dim` (dimensions up to it become present). */
TOPOML_API int topoml_diagram_add(topoml_diagram *diagram, uint32_t dim, const topoml_pair *pairs,
                                  uint64_t n);

TOPOML_API void topoml_diagram_free(topoml_diagram *diagram);

/* Number of dimensions present: 0 .. count-1. */
TOPOML_API uint32_t topoml_diagram_dim_count(const topoml_diagram *diagram);

/* The pairs of one dimension in the order they were read or added; *n gets
 * the count (0 and NULL for an absent dimension). Valid until the diagram
 * changes or is freed. */
TOPOML_API const topoml_pair *topoml_diagram_pairs(const topoml_diagram *diagram, uint32_t dim,
                                                   uint64_t *n);

/* The threshold of the barcode the diagram came from: "threshold" in
 * topoml's JSON, "# threshold T" in its CSV, topoml_diagram_from_barcode;
 * +INFINITY when none is known, NaN for a NULL diagram. */
TOPOML_API double topoml_diagram_threshold(const topoml_diagram *diagram);

/* Is pair k of dimension `dim` cut off by the threshold — alive at it, its
 * death beyond it and unknown, written as an infinite death — rather than
 * essential? 1 or 0 (0 for a NULL diagram or an index out of range). Read
 * from "cut" deaths in topoml's CSV and the "cut_off" count of each
 * dimension in its JSON (the last that many null deaths), kept by
 * topoml_diagram_from_barcode, written back by topoml_diagram_write (JSON,
 * CSV; Ripser's and GUDHI's text have no way to say it). */
TOPOML_API int topoml_diagram_cut_off(const topoml_diagram *diagram, uint32_t dim, uint64_t k);

/* Read a diagram file ("-" is standard input). Errors name the file, the
 * line and the reason ("name:line: reason"; JSON adds the column). Births
 * must be finite, deaths >= births; infinite deaths are written as null
 * (JSON), " [b, )" (Ripser) or inf (GUDHI, CSV). */
TOPOML_API int topoml_diagram_read(topoml_context *ctx, topoml_diagram **out, const char *path,
                                   topoml_diagram_format format);
TOPOML_API int topoml_diagram_read_stream(topoml_context *ctx, topoml_diagram **out, FILE *f,
                                          const char *name, topoml_diagram_format format);

/* Write a diagram (not AUTO). Numbers are written with the fewest digits
 * that read back to the same double. */
TOPOML_API int topoml_diagram_write(topoml_context *ctx, const topoml_diagram *diagram, FILE *f,
                                    topoml_diagram_format format);

#ifdef __cplusplus
}
#endif
#endif /* TOPOML_FEATURES_H */
