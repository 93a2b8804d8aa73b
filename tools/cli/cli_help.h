/*
 * cli_help.h — the --help text of the `topoml` commands, printed from one
 * table per command, so that every command lays its options out the same
 * way: the option at column 2, what it does from column CLI_HELP_COLUMN,
 * wrapped to lines of at most CLI_HELP_WIDTH characters. `topoml help CMD`
 * prints the same text, and the man pages are made from it
 * (docs/tools/man_pages.py), so the three agree.
 */
#ifndef TOPOML_CLI_HELP_H
#define TOPOML_CLI_HELP_H

#include <stdio.h>

#define CLI_HELP_COLUMN 26
#define CLI_HELP_WIDTH 79

/* One option: "-o, --output-file FILE" and what it does (one paragraph,
 * wrapped when printed). */
typedef struct cli_opt_help {
    const char *flags;
    const char *text;
} cli_opt_help;

typedef struct cli_help {
    const char *usage;   /* after "Usage: " */
    const char *summary; /* the paragraph under it, as written */
    const cli_opt_help *opts;
    unsigned n_opts;
    const char *notes; /* a paragraph after the options, or NULL */
} cli_help;

#define CLI_HELP(usage, summary, opts, notes) \
    {(usage), (summary), (opts), sizeof(opts) / sizeof((opts)[0]), (notes)}

/* The options that every command opening a context shares. */
#define CLI_HELP_BACKEND                                                                      \
    {"--backend NAME", "run on this backend (see `topoml backends`); default: the best enabled " \
                       "backend that can, finally the scalar reference"}
#define CLI_HELP_CONFIG {"--config FILE", "configuration (default: $TOPOML_CONFIG, else none)"}
#define CLI_HELP_MAX_MEMORY \
    {"--max-memory SIZE", "refuse work that needs more memory (e.g. 512M, 4G)"}
#define CLI_HELP_VERBOSE \
    {"--verbose", "log what the library does on stderr (twice: more)"}
#define CLI_HELP_HELP {"-h, --help", "show this help"}

/* Print "Usage: ...", the summary, the options and the notes to f. */
void cli_print_help(FILE *f, const cli_help *h);

#endif
