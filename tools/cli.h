/*
 * cli.h — what the files of the `topoml` command line share: error and
 * usage reporting (exit 1 and 2), option value parsing, opening a context.
 */
#ifndef TOPOML_CLI_H
#define TOPOML_CLI_H

#include <stdbool.h>
#include <stdint.h>

#include "topoml/topoml.h"

/* Print "topoml CMD: message" and a hint to stderr; returns 2. */
int cli_usage_error(const char *cmd, const char *fmt, const char *arg);
/* Print the context's last error (or the status text); returns 1. */
int cli_error(topoml_context *ctx, int rc);

bool cli_parse_double(const char *s, double *out);
bool cli_parse_uint(const char *s, uint32_t *out);

/* A context with the CLI's log on stderr (warnings; more with verbose). */
int cli_open_context(topoml_context **out, const char *config, const char *backend,
                     int verbose);

/* Further commands, defined in their own files. */
#include "cmd_features.h"
#define CLI_EXTRA_HELP                                                              \
    "  image      persistence images of diagram files (CSV, JSON, PGM)\n"           \
    "  features   Betti curves, landscapes, entropy, total persistence of a diagram\n" \
    "  compare    bottleneck and Wasserstein distances between two diagrams\n"      \
    "  plot       a persistence diagram or barcode as SVG\n"
#define CLI_EXTRA_COMMANDS                                                          \
    , {"image", cli_cmd_image}, {"features", cli_cmd_features},                   \
        {"compare", cli_cmd_compare}, {"plot", cli_cmd_plot}

#endif
