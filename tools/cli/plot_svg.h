/*
 * plot_svg.h — drawing persistence diagrams and barcodes as SVG, for
 * `topoml plot`. Only drawing: the caller reads the files and picks the
 * dimensions.
 */
#ifndef TOPOML_PLOT_SVG_H
#define TOPOML_PLOT_SVG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "topoml/types.h"

typedef enum plot_kind { PLOT_DIAGRAM = 0, PLOT_BARCODE = 1 } plot_kind;

typedef struct plot_series {
    uint32_t dim;
    const topoml_pair *pairs;
    uint64_t n;
    const bool *cut; /* cut[i]: pair i was cut off by the threshold; NULL: none */
} plot_series;

typedef struct plot_spec {
    plot_kind kind;
    const plot_series *series; /* one per dimension, in drawing order */
    uint32_t n_series;
    const char *title;    /* NULL or "": none */
    double width, height; /* pixels; 0: a default for the kind and data */
    /* The threshold the diagram was computed with (+INFINITY: none known).
     * Cut-off pairs end on a dashed line there, labelled; without a known
     * threshold they are drawn as infinite. */
    double threshold;
} plot_spec;

/* Write the SVG document; 0, or -1 when writing failed. */
int plot_svg_write(FILE *f, const plot_spec *spec);

#endif /* TOPOML_PLOT_SVG_H */
