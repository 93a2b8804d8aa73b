/*
 * fuzz_cli.c — libFuzzer target over the command line's option parsing,
 * every subcommand: the input is an argument vector (arguments separated by
 * NUL or newline bytes) handed to the real `topoml` main (tools/cli/topoml.c,
 * compiled in with main renamed). "@P", "@D", "@E" and "@L" stand for small
 * files made at start-up (a point cloud, two diagrams, a lower distance
 * matrix), so that parsing reaches the work too. It runs in a temporary
 * folder, removed at exit; arguments with a '/' are skipped, so output
 * files land nowhere else. Every run must end with
 * status 0, 1 or 2, without a crash, leak, sanitizer report or timeout.
 *
 * Work is kept small: the files are tiny, and an input whose --max-memory
 * would lift the limit above 64 MiB (the configuration's) is skipped, after
 * its value went through topoml_parse_size like the command's would.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <getopt.h>

#include "topoml/topoml.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);
int topoml_cli_main(int argc, char **argv);

#define MAX_ARGS 24

/* Every run works in a folder of its own: commands write output files
 * (-o NAME) there, and an argument naming another folder ('/') is not run. */
static char dir[64];

static void make_file(const char *name, const char *text)
{
    FILE *f = fopen(name, "w");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0)
        abort();
}

static void cleanup(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "fuzz_cli: could not remove %s\n", dir);
}

static void init(void)
{
    strcpy(dir, "/tmp/topoml-fuzz-cli-XXXXXX");
    if (!mkdtemp(dir) || chdir(dir) != 0)
        abort();
    make_file("points.txt", "0 0\n1 0\n0 1\n1 1\n0.5 0.5\n2 2\n");
    make_file("diagram.txt", "0 0 inf\n0 0 0.5\n1 0.4 1.1\n1 0.6 0.9\n2 1 1.2\n");
    make_file("other.csv", "dim,birth,death\n0,0,inf\n1,0.3,1.0\n");
    make_file("lower.txt", "1\n1.4,1\n1,1.4,1\n");
    make_file("config.yaml", "max_memory: 64MiB\n");
    setenv("TOPOML_CONFIG", "config.yaml", 1);
    /* Nothing read from a terminal, nothing written where it costs. */
    if (!freopen("/dev/null", "r", stdin) || !freopen("/dev/null", "w", stdout))
        abort();
    atexit(cleanup);
}

/* The files' stand-ins. */
static char *resolve(char *arg)
{
    if (strcmp(arg, "@P") == 0)
        return "points.txt";
    if (strcmp(arg, "@D") == 0)
        return "diagram.txt";
    if (strcmp(arg, "@E") == 0)
        return "other.csv";
    if (strcmp(arg, "@L") == 0)
        return "lower.txt";
    return arg;
}

/* Values that would lift the 64 MiB limit: "--max-memory V" or
 * "--max-memory=V" (and getopt's unambiguous prefixes of it). */
static int lifts_limit(char **argv, int argc)
{
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        if (strncmp(a, "--m", 3) != 0 || strncmp(a, "--max-memory", strcspn(a, "=")) != 0)
            continue;
        const char *eq = strchr(a, '=');
        if (eq)
            v = eq + 1;
        else if (i + 1 < argc)
            v = argv[i + 1];
        uint64_t bytes;
        if (v && topoml_parse_size(v, &bytes) == TOPOML_OK && (bytes == 0 || bytes > (64u << 20)))
            return 1;
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    static int ready;
    if (!ready) {
        init();
        ready = 1;
    }
    if (size > 4096)
        return 0;
    char *buf = malloc(size + 1);
    if (!buf)
        abort();
    memcpy(buf, data, size);
    buf[size] = '\0';
    for (size_t i = 0; i < size; i++)
        if (buf[i] == '\0')
            buf[i] = '\n';
    char *argv[MAX_ARGS + 2];
    int argc = 0;
    argv[argc++] = "topoml";
    for (char *p = buf; argc < MAX_ARGS && p < buf + size;) {
        size_t len = strcspn(p, "\n");
        p[len] = '\0';
        argv[argc++] = resolve(p);
        p += len + 1;
    }
    argv[argc] = NULL;
    bool elsewhere = false;
    for (int i = 1; i < argc; i++)
        elsewhere |= strchr(argv[i], '/') != NULL;
    if (elsewhere || lifts_limit(argv, argc)) {
        free(buf);
        return 0;
    }
    /* A parse that stopped inside a cluster of short options leaves getopt
     * pointing into this argv; start every run from a clean state. */
    char *none[] = {"topoml", NULL};
    optind = 0;
    opterr = 0;
    getopt(1, none, "");
    opterr = 1;
    int rc = topoml_cli_main(argc, argv);
    fflush(stdout);
    if (rc < 0 || rc > 2)
        abort();
    free(buf);
    return 0;
}
