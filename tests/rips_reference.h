/*
 * rips_reference.h — an explicit Vietoris–Rips persistence computation for
 * the tests: every simplex listed, the whole boundary matrix built, the
 * standard column reduction over Z/p. Slow and obviously correct, for the
 * small inputs (n <= 12) that test_rips compares scalar_rips with.
 */
#ifndef TOPOML_TESTS_RIPS_REFERENCE_H
#define TOPOML_TESTS_RIPS_REFERENCE_H

#include <stddef.h>
#include <stdint.h>

typedef struct ref_bar {
    uint32_t dim;
    double birth, death; /* death INFINITY: alive at the end */
} ref_bar;

/* Barcodes in dimensions 0..max_dim of the Rips complex of n points with the
 * full symmetric n*n distance matrix `d` (+INFINITY: no edge), keeping the
 * simplices of diameter <= threshold, over Z/p (p prime). Bars of zero
 * length are left out; *bars (malloc'd) is sorted by (dim, birth, death).
 * Returns 0, or -1 when n > 12 or memory runs out. */
int ref_rips(uint32_t n, const double *d, uint32_t max_dim, double threshold, uint32_t p,
             ref_bar **bars, size_t *n_bars);

/* The order ref_rips sorts by; for qsort. */
int ref_bar_cmp(const void *a, const void *b);

#endif
