/*
 * cmd_features.h — the `topoml` subcommands that work on persistence
 * diagrams: image, features, compare, plot. tools/topoml.c dispatches to
 * them; each parses its own options (getopt_long, argv[0] is the
 * subcommand's name), prints its --help, and returns the exit status:
 * 0 success, 1 an error (the message on stderr), 2 a usage error.
 */
#ifndef TOPOML_CMD_FEATURES_H
#define TOPOML_CMD_FEATURES_H

#include "topoml/topoml.h"

/* topoml image [options] DIAGRAM...: persistence images (CSV, JSON, PGM). */
int topoml_cmd_image(topoml_context *ctx, int argc, char **argv);

/* topoml features [options] DIAGRAM: Betti curves, landscapes, entropy,
 * total persistence (JSON, CSV). */
int topoml_cmd_features(topoml_context *ctx, int argc, char **argv);

/* topoml compare [options] A B: bottleneck and Wasserstein distances per
 * dimension (text, JSON, CSV). */
int topoml_cmd_compare(topoml_context *ctx, int argc, char **argv);

/* topoml plot [options] DIAGRAM: an SVG persistence diagram or barcode. */
int topoml_cmd_plot(topoml_context *ctx, int argc, char **argv);

#endif /* TOPOML_CMD_FEATURES_H */
