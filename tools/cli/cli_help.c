/*
 * cli_help.c — a command's options from its table (cli_help.h): the help
 * printed from it, the parser built from it. The layout lives here once,
 * the words in each command's file.
 */
#include <getopt.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cli_help.h"

/* `text` from column `col` of a line already `at` characters long, wrapped
 * at spaces so that no line passes CLI_HELP_WIDTH (a word longer than a line
 * gets a line of its own). */
static void wrap(FILE *f, const char *text, int col, int at)
{
    const char *p = text;
    int x = at;
    for (; x < col; x++)
        fputc(' ', f);
    bool first = true;
    while (*p) {
        while (*p == ' ')
            p++;
        const char *e = p;
        while (*e && *e != ' ')
            e++;
        int len = (int)(e - p);
        if (len == 0)
            break;
        if (!first && x + 1 + len > CLI_HELP_WIDTH) {
            fputc('\n', f);
            for (x = 0; x < col; x++)
                fputc(' ', f);
        } else if (!first) {
            fputc(' ', f);
            x++;
        }
        fwrite(p, 1, (size_t)len, f);
        x += len;
        first = false;
        p = e;
    }
    fputc('\n', f);
}

void cli_print_help(FILE *f, const cli_help *h)
{
    fprintf(f, "Usage: %s\n%s\n\n", h->usage, h->summary);
    for (unsigned i = 0; i < h->n_opts; i++) {
        const cli_opt_help *o = &h->opts[i];
        int at = fprintf(f, "  %s", o->flags);
        /* Flags that reach the column: what they do starts on the next
         * line, at the column. */
        if (at + 2 > CLI_HELP_COLUMN) {
            fputc('\n', f);
            at = 0;
        }
        wrap(f, o->text, CLI_HELP_COLUMN, at);
    }
    if (h->notes != NULL)
        fprintf(f, "\n%s", h->notes);
}

/* The getopt_long tables of the last cli_help parsed. */
enum { MAX_OPTS = 64, MAX_NAME = 40 };
static const cli_help *parsed;
static struct option longs[MAX_OPTS + 1];
static char names[MAX_OPTS][MAX_NAME];
static char shorts[2 + 2 * MAX_OPTS + 1];

/* One entry of the table: its long name, whether it takes a value, its
 * short letter (0: none). False when the flags do not say (a table
 * mistake, caught by the tests of every command's --help). */
static bool read_flags(const char *flags, char *name, bool *value, int *letter)
{
    *name = '\0';
    *value = false;
    *letter = 0;
    const char *p = flags;
    while (*p) {
        while (*p == ' ' || *p == ',')
            p++;
        const char *e = p;
        while (*e && *e != ' ' && *e != ',')
            e++;
        size_t len = (size_t)(e - p);
        if (len == 2 && p[0] == '-' && p[1] != '-' && !*name)
            *letter = (unsigned char)p[1];
        else if (len > 2 && p[0] == '-' && p[1] == '-' && !*name && len - 2 < MAX_NAME)
            memcpy(name, p + 2, len - 2), name[len - 2] = '\0';
        else if (len && *name)
            *value = true;
        p = e;
    }
    return *name != '\0';
}

int cli_getopt(int argc, char **argv, const cli_help *h)
{
    if (parsed != h) {
        unsigned n = 0;
        size_t k = 0;
        shorts[k++] = ':'; /* a missing value is ':', told from an unknown option */
        for (unsigned i = 0; i < h->n_opts && n < MAX_OPTS; i++) {
            bool value;
            int letter;
            if (!read_flags(h->opts[i].flags, names[n], &value, &letter))
                continue;
            longs[n] = (struct option){names[n], value ? required_argument : no_argument, NULL,
                                       h->opts[i].val};
            n++;
            if (letter) {
                shorts[k++] = (char)letter;
                if (value)
                    shorts[k++] = ':';
            }
        }
        longs[n] = (struct option){NULL, 0, NULL, 0};
        shorts[k] = '\0';
        parsed = h;
    }
    return getopt_long(argc, argv, shorts, longs, NULL);
}

int cli_help_bad_option(const char *prog, int c, int argc, char **argv)
{
    const char *arg = optind > 0 && optind <= argc ? argv[optind - 1] : "?";
    char shortopt[3] = {'-', (char)optopt, '\0'};
    /* A bad short option inside a group ("-xq"): argv names the group. */
    if (c == '?' && optopt && optopt < 256 && arg[0] == '-' && arg[1] != '-')
        arg = shortopt;
    if (c == ':')
        fprintf(stderr, "%s: option '%s' needs a value\n", prog, arg);
    else
        fprintf(stderr, "%s: unknown option '%s'\n", prog, arg);
    fprintf(stderr, "Try '%s --help'.\n", prog);
    return 2;
}
