/*
 * cmd_features.h — the `topoml` subcommands that work on persistence
 * diagrams: image, features, compare, plot. tools/cli/topoml.c dispatches to
 * them; each parses its own options (getopt_long, argv[0] is the
 * subcommand's name), prints its --help, and returns the exit status:
 * 0 success, 1 an error (the message on stderr), 2 a usage error.
 *
 * `ctx` may be NULL: the command then opens its own context from its
 * --config, --backend, --max-memory and --verbose options (as the other
 * subcommands do) and frees it. With a context given, --backend and
 * --max-memory change that context and --config is refused.
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

/* The same commands with a context of their own, as the dispatch table of
 * tools/cli/topoml.c calls them. */
int cli_cmd_image(int argc, char **argv);
int cli_cmd_features(int argc, char **argv);
int cli_cmd_compare(int argc, char **argv);
int cli_cmd_plot(int argc, char **argv);

#endif /* TOPOML_CMD_FEATURES_H */
