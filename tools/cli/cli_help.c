/*
 * cli_help.c — prints a command's help from its table (cli_help.h): the
 * layout lives here once, the words in each command's file.
 */
#include <stdbool.h>
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
