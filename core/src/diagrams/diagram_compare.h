/*
 * diagram_compare.h — the one comparison of two barcodes, dimension by
 * dimension, by the conformance rule (docs/conformance.md, "Barcodes"): the
 * same number of essential classes, the same number of bars longer than
 * twice the tolerance, and a bottleneck distance within the tolerance.
 * Run-time verification (verify.c) and the conformance suite
 * (conformance/compare.c) both judge a plugin's barcode with it; each
 * derives its own tolerance and words its own verdict.
 */
#ifndef TOPOML_DIAGRAM_COMPARE_H
#define TOPOML_DIAGRAM_COMPARE_H

#include <stdbool.h>
#include <stdint.h>

#include "topoml/topoml.h"

typedef struct tm_dim_comparison {
    uint64_t n_ref, n_got;                 /* bars of positive length */
    uint64_t essential_ref, essential_got; /* infinite bars */
    uint64_t long_ref, long_got;           /* bars longer than 2 * tol */
    double bottleneck; /* 0 for identical diagrams (no matching needed);
                          INFINITY when not computed (essential counts differ,
                          or an error) */
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

#endif
