/*
 * cli.h — what the files of the `topoml` command line share: error and
 * usage reporting (exit 1 and 2), option value parsing, opening a context.
 */
#ifndef TOPOML_CLI_H
#define TOPOML_CLI_H

#include <stdbool.h>
#include <stdint.h>

#include "topoml/topoml.h"

/* Every message of a command on stderr starts "topoml CMD: ", then, when
 * it is about a file, "FILE:" (and "LINE:" where the library knows it),
 * then the reason (tests/cli/test_error_prefix.py checks it). */

/* Print "topoml CMD: message" and a hint to stderr; returns 2. */
int cli_usage_error(const char *cmd, const char *fmt, const char *arg);
/* A getopt_long result that is no option of the command ('?', or ':' for a
 * missing value: optstrings start with ':'): reported as a usage error. */
int cli_bad_option(const char *cmd, int c, int argc, char **argv);
/* Print the context's last error (or the status text) after the running
 * command's prefix; returns 1. */
int cli_error(topoml_context *ctx, int rc);
/* Print "topoml CMD: PATH: message" (cmd NULL: the running command; path
 * NULL: none); returns 1. */
int cli_file_error(const char *cmd, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The command whose name prefixes cli_error's messages. */
void cli_set_command(const char *cmd);

bool cli_parse_double(const char *s, double *out);
bool cli_parse_uint(const char *s, uint32_t *out);

/* The options every command that opens a context shares. */
typedef struct cli_common {
    const char *config;
    const char *backend;
    uint64_t max_memory;
    bool max_memory_set;
    bool quiet;
    int verbose;
} cli_common;

enum { CLI_OPT_CONFIG = 1000, CLI_OPT_BACKEND, CLI_OPT_MAX_MEMORY, CLI_OPT_QUIET, CLI_OPT_VERBOSE };

/* Their getopt_long entries (--quiet, where a command shows progress, is
 * added by that command). */
#define CLI_CONTEXT_LONG_OPTS                                                                  \
    {"config", required_argument, NULL, CLI_OPT_CONFIG},                                       \
        {"backend", required_argument, NULL, CLI_OPT_BACKEND},                                 \
        {"max-memory", required_argument, NULL, CLI_OPT_MAX_MEMORY},                           \
        {"verbose", no_argument, NULL, CLI_OPT_VERBOSE}, {"help", no_argument, NULL, 'h'}

/* 1: `opt` was a shared option, handled; 0: it is not one; 2: a bad value
 * (reported as a usage error). */
int cli_common_opt(cli_common *c, int opt, const char *cmd);

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
