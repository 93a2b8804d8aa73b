/*
 * diagram_compare.h — the one comparison of two barcodes and the one set of
 * bounds on a plugin's answers (docs/conformance.md, "Tolerances, and why"),
 * which run-time verification (verify.c) and the conformance suite
 * (conformance/compare.c) both judge a plugin by; each words its own
 * verdict.
 *
 * Barcodes are compared exactly: every value of a bar is the length of an
 * edge of the input as the reference computes it (a plugin computes its
 * distances the way plugins/scalar/metric.h does), so two right barcodes of
 * one input are the same multiset of bars in every dimension, to the bit; a
 * death moved by an ulp or an extra bar an ulp long is a different barcode.
 * Distances, threshold edges and images have bounds (tm_distance_bound,
 * tm_image_bound); a pair at exactly the threshold is always an edge.
 */
#ifndef TOPOML_DIAGRAM_COMPARE_H
#define TOPOML_DIAGRAM_COMPARE_H

#include <stdbool.h>
#include <stdint.h>

#include "topoml/plugin.h"
#include "topoml/topoml.h"

/* ---- bounds ---- */

/* The ulps of the bounds, unless a case of the suite says otherwise. */
#define TM_TOLERANCE_ULPS 4.0

/* |got - want| <= rel * |want| + abs for one distance. */
typedef struct tm_tolerance {
    double rel, abs;
} tm_tolerance;

/* The bound on one distance of an input of `kind` (topoml_input_kind) in
 * `dim` coordinates: rel = ulps * (dim + 2) * eps(dtype), abs = rel for
 * cosine (its error is relative to 1), else 0. Distances given as data
 * (condensed, sparse) are used as they are: rel = abs = 0. */
tm_tolerance tm_distance_bound(uint32_t kind, uint32_t dtype, uint32_t metric, uint64_t dim,
                               double ulps);
/* Is `got` within the bound `t` of `want`? Infinities only equal. */
bool tm_within_bound(double got, double want, tm_tolerance t);

/* The tie rule of threshold edges, for a pair whose reference distance is
 * d_ref: it must be listed when d_ref is exactly the threshold or below it
 * by more than the bound; it may be listed when d_ref is at most the bound
 * above the threshold (rounding may put it on either side, but a pair at
 * exactly the threshold is always in: the contract is d <= t). */
bool tm_edge_must_be_listed(double d_ref, double threshold, tm_tolerance t);
bool tm_edge_may_be_listed(double d_ref, double threshold, tm_tolerance t);

/* The bound on one pixel of a persistence image: ulps * (pairs + 2) *
 * eps(dtype) times the largest weight (each pair adds a weight times a
 * product of two erf differences, each off by a few eps). */
double tm_image_bound(const topoml_image_params_v1 *p, uint64_t n_pairs, uint32_t dtype,
                      double ulps);

/* ---- barcodes ---- */

typedef struct tm_dim_comparison {
    uint64_t n_ref, n_got;                 /* bars of positive length */
    uint64_t essential_ref, essential_got; /* infinite bars */
    uint64_t long_ref, long_got;           /* bars longer than 2 * tol */
    double bottleneck; /* 0 for identical diagrams (no matching needed);
                          INFINITY when not computed (essential counts differ,
                          or an error) */
    /* The first bar, in (birth, death) order, where the two differ: the
     * reference's and the plugin's (has_*: whether there is one). */
    topoml_pair first_ref, first_got;
    bool has_first_ref, has_first_got;
} tm_dim_comparison;

/* Compare the bars of dimension `dim` of `got` with those of `ref` (arrays of
 * intervals in any order; bars of zero length are left out). Fills *out and
 * returns TOPOML_OK, or the status of what failed (no memory for the pairs:
 * *out all zero; the bottleneck distance: the counts are filled) with the
 * context's error message. */
int tm_compare_dimension(topoml_context *ctx, const topoml_interval *ref, uint64_t n_ref,
                         const topoml_interval *got, uint64_t n_got, uint32_t dim, double tol,
                         tm_dim_comparison *out);

/* Does the comparison pass the rule with tolerance `tol`? */
bool tm_dimension_matches(const tm_dim_comparison *c, double tol);

/* The rule: dimensions 0..max_dim of `got` are those of `ref`, exactly
 * (tolerance 0: the same bars of positive length, to the bit). Returns
 * TOPOML_OK with *differs false, or *differs true and the first dimension
 * that differs in *dim and its comparison in *c; or the status of what
 * failed (memory). */
int tm_compare_barcodes(topoml_context *ctx, const topoml_interval *ref, uint64_t n_ref,
                        const topoml_interval *got, uint64_t n_got, uint32_t max_dim,
                        bool *differs, uint32_t *dim, tm_dim_comparison *c);
/* A sentence saying how dimension `dim` differs: "H1: 12 bars (1
 * essential), the reference's 12 (1); first difference: [0.5, 0.75) where
 * the reference has [0.5, 0.7500000000000001)". */
void tm_describe_difference(uint32_t dim, const tm_dim_comparison *c, char *out, size_t size);

#endif
