/*
 * cli_help.h — the --help text of the `topoml` commands, printed from one
 * table per command, so that every command lays its options out the same
 * way: the option at column 2, what it does from column CLI_HELP_COLUMN,
 * wrapped to lines of at most CLI_HELP_WIDTH characters. `topoml help CMD`
 * prints the same text, and the man pages are made from it
 * (docs/tools/man_pages.py), so the three agree. The same table is what the
 * command parses (cli_getopt): an option is taken exactly when it is listed.
 * Both programs, `topoml` and `topoml-conformance`, use it.
 */
#ifndef TOPOML_CLI_HELP_H
#define TOPOML_CLI_HELP_H

#include <stdio.h>

#define CLI_HELP_COLUMN 26
#define CLI_HELP_WIDTH 79

/* One option: "-o, --output-file FILE", what it does (one paragraph,
 * wrapped when printed), and the value cli_getopt returns for it. The flags
 * say how it is parsed: "--name" is the long option, a word after it (FILE)
 * means it takes a value, and a leading "-x," is its short form, whose val
 * must be 'x'. */
typedef struct cli_opt_help {
    const char *flags;
    const char *text;
    int val;
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
    {"--backend NAME",                                                                    \
     "run on this backend (see `topoml backends`); default: the best enabled "            \
     "backend that can, finally the scalar reference",                                    \
     CLI_OPT_BACKEND}
#define CLI_HELP_CONFIG \
    {"--config FILE", "configuration (default: $TOPOML_CONFIG, else none)", CLI_OPT_CONFIG}
#define CLI_HELP_MAX_MEMORY                                                                \
    {"--max-memory SIZE", "refuse work that needs more memory (e.g. 512M, 4G)",            \
     CLI_OPT_MAX_MEMORY}
#define CLI_HELP_VERBOSE \
    {"--verbose", "log what the library does on stderr (twice: more)", CLI_OPT_VERBOSE}
#define CLI_HELP_HELP {"-h, --help", "show this help", 'h'}

/* The vals of the options the CLI's commands share (cli.h's parsing of
 * them, cli_common_opt, returns these). */
enum { CLI_OPT_CONFIG = 1000, CLI_OPT_BACKEND, CLI_OPT_MAX_MEMORY, CLI_OPT_QUIET, CLI_OPT_VERBOSE };

/* Print "Usage: ...", the summary, the options and the notes to f. */
void cli_print_help(FILE *f, const cli_help *h);

/* getopt_long over exactly the options of h's table (see cli_opt_help):
 * returns an option's val, -1 at the end, '?' for an option not in the
 * table and ':' for a missing value (optopt, optind as getopt_long leaves
 * them). Reset optind before the first call, as for getopt_long. */
int cli_getopt(int argc, char **argv, const cli_help *h);

/* The usage error of a bad option (cli_getopt's '?' or ':'): "PROG: unknown
 * option '--x'" (or "option '--x' needs a value") and "Try 'PROG --help'."
 * on stderr, where PROG is e.g. "topoml barcode"; returns 2. */
int cli_help_bad_option(const char *prog, int c, int argc, char **argv);

#endif
