/*
 * topoml.c — the `topoml` command line: barcodes (a drop-in for Ripser:
 * same option names, same text output), distances, threshold edges, and the
 * list of backends. Exit status: 0 success, 1 error, 2 bad usage.
 *
 * Everything here is a thin layer over the public API (topoml/topoml.h); the
 * command-specific feature commands live in their own files.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cli_help.h"
#include "topoml/topoml.h"

static const char *prog = "topoml";

/* The subcommand running, for the prefix of its messages (set by main). */
static const char *cli_command = NULL;

void cli_set_command(const char *cmd)
{
    cli_command = cmd;
}

/* "topoml CMD: " (or "topoml: " outside a command) on stderr. */
static void error_prefix(const char *cmd)
{
    if (cmd == NULL)
        cmd = cli_command;
    if (cmd != NULL)
        fprintf(stderr, "%s %s: ", prog, cmd);
    else
        fprintf(stderr, "%s: ", prog);
}

int cli_usage_error(const char *cmd, const char *fmt, const char *arg)
{
    error_prefix(cmd);
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nTry '%s %s --help'.\n", prog, cmd);
    return 2;
}

int cli_bad_option(const char *cmd, int c, int argc, char **argv)
{
    char name[64];
    snprintf(name, sizeof name, "%s %s", prog, cmd);
    return cli_help_bad_option(name, c, argc, argv);
}

int cli_error(topoml_context *ctx, int rc)
{
    const char *msg = ctx ? topoml_errmsg(ctx) : "";
    error_prefix(NULL);
    fprintf(stderr, "%s\n", msg && *msg ? msg : topoml_strerror(rc));
    return 1;
}

int cli_file_error(const char *cmd, const char *path, const char *fmt, ...)
{
    error_prefix(cmd);
    if (path != NULL)
        fprintf(stderr, "%s: ", path);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return 1;
}

/* ---- shared option parsing ---- */

bool cli_parse_double(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno || isnan(v))
        return false;
    *out = v;
    return true;
}

bool cli_parse_uint(const char *s, uint32_t *out)
{
    char *end;
    errno = 0;
    if (*s == '-' || *s == '\0')
        return false;
    unsigned long v = strtoul(s, &end, 10);
    if (*end || errno || v > UINT32_MAX)
        return false;
    *out = (uint32_t)v;
    return true;
}

static bool parse_metric(const char *s, topoml_metric *m)
{
    static const char *names[] = {"euclidean", "sqeuclidean", "manhattan", "chebyshev",
                                  "cosine"};
    for (int i = 0; i < TOPOML_METRIC_COUNT; i++)
        if (!strcmp(s, names[i])) {
            *m = (topoml_metric)i;
            return true;
        }
    return false;
}

/* Progress on stderr: a line that updates itself, only when stderr is a
 * terminal and --quiet was not given (at most ten updates a second; the
 * library reports every few tens of milliseconds of work, with a total, so
 * a long phase updates it about that often); and
 * with --verbose a timeline: one line each time a stage starts or learns
 * how much work it has (for Rips, "dim k enumeration" collecting its
 * columns, then "dim k" reducing them), with the seconds since the command
 * began. */
typedef struct progress_state {
    struct timespec start, last;
    bool shown;    /* the self-updating line is on the screen */
    bool bar;      /* show that line */
    bool timeline; /* log stage changes */
    bool counting; /* the current stage knows its total */
    char stage[64];
} progress_state;

static double seconds_since(const struct timespec *t0, const struct timespec *t)
{
    return (double)(t->tv_sec - t0->tv_sec) + (double)(t->tv_nsec - t0->tv_nsec) * 1e-9;
}

static int show_progress(void *user, const char *stage, uint64_t done, uint64_t total)
{
    progress_state *ps = user;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (ps->timeline && (strcmp(stage, ps->stage) != 0 || ps->counting != (total > 0))) {
        snprintf(ps->stage, sizeof ps->stage, "%s", stage);
        ps->counting = total > 0;
        if (ps->shown)
            fprintf(stderr, "\r\033[K");
        if (total)
            fprintf(stderr, "topoml info: %8.3f s: %s: %llu to do\n",
                    seconds_since(&ps->start, &now), stage, (unsigned long long)total);
        else
            fprintf(stderr, "topoml info: %8.3f s: %s\n", seconds_since(&ps->start, &now),
                    stage);
    }
    if (!ps->bar || seconds_since(&ps->last, &now) < 0.1)
        return 0;
    ps->last = now;
    ps->shown = true;
    /* \033[K: a shorter line (another stage) leaves nothing of the last */
    if (total)
        fprintf(stderr, "\r\033[K%s: %llu/%llu (%.0f%%)", stage, (unsigned long long)done,
                (unsigned long long)total, 100.0 * (double)done / (double)total);
    else if (done)
        fprintf(stderr, "\r\033[K%s: %llu", stage, (unsigned long long)done);
    else /* a stage that says it begins, with nothing to count yet */
        fprintf(stderr, "\r\033[K%s...", stage);
    return 0;
}

static void log_to_stderr(void *user, int level, const char *message)
{
    (void)user;
    static const char *names[] = {"error", "warning", "info", "debug"};
    fprintf(stderr, "topoml %s: %s\n", level >= 0 && level < 4 ? names[level] : "log", message);
}

/* What a command of this file keeps of the shared options. */
typedef struct common_opts {
    cli_common c;
    progress_state progress;
} common_opts;

int cli_common_opt(cli_common *co, int c, const char *cmd)
{
    switch (c) {
    case CLI_OPT_CONFIG: co->config = optarg; return 1;
    case CLI_OPT_BACKEND: co->backend = optarg; return 1;
    case CLI_OPT_MAX_MEMORY:
        if (topoml_parse_size(optarg, &co->max_memory) != TOPOML_OK)
            return cli_usage_error(cmd, "bad --max-memory '%s' (e.g. 512M, 4G)", optarg), 2;
        co->max_memory_set = true;
        return 1;
    case CLI_OPT_QUIET: co->quiet = true; return 1;
    case CLI_OPT_VERBOSE: co->verbose++; return 1;
    }
    return 0;
}

/* The shared options' help (cli_help.h), at the end of each command's. */
#define COMMON_HELP_OPTS                                                                    \
    CLI_HELP_BACKEND, CLI_HELP_CONFIG, CLI_HELP_MAX_MEMORY,                                 \
        {"--quiet", "no progress on stderr", CLI_OPT_QUIET},                                \
        {"--verbose",                                                                       \
         "log what the library does, and when each stage starts, on stderr (twice: "        \
         "more); at the end, the backend that ran and why",                                 \
         CLI_OPT_VERBOSE},                                                                  \
        CLI_HELP_HELP

int cli_open_context(topoml_context **out, const char *config, const char *backend,
                     int verbose)
{
    topoml_context_options o = {0};
    o.struct_size = sizeof o;
    o.config_path = config;
    topoml_context *ctx = NULL;
    int rc = topoml_context_new(&ctx, &o);
    if (rc != TOPOML_OK) {
        cli_error(ctx, rc);
        topoml_context_free(ctx);
        return rc;
    }
    if (verbose)
        topoml_set_log(ctx, log_to_stderr, NULL,
                       verbose > 1 ? TOPOML_LOG_DEBUG : TOPOML_LOG_INFO);
    else
        topoml_set_log(ctx, log_to_stderr, NULL, TOPOML_LOG_WARN);
    if (backend && (rc = topoml_use_backend(ctx, backend)) != TOPOML_OK) {
        cli_error(ctx, rc);
        topoml_context_free(ctx);
        return rc;
    }
    *out = ctx;
    return TOPOML_OK;
}

void cli_report_backend(topoml_context *ctx, int verbose)
{
    if (verbose && topoml_last_backend(ctx)[0])
        fprintf(stderr, "topoml: ran on backend '%s' (%s)\n", topoml_last_backend(ctx),
                topoml_last_selection_reason(ctx));
}

static int open_context(common_opts *co, topoml_context **out)
{
    int rc = cli_open_context(out, co->c.config, co->c.backend, co->c.verbose);
    if (rc != TOPOML_OK)
        return rc;
    if (co->c.max_memory_set)
        topoml_set_max_memory(*out, co->c.max_memory);
    co->progress.bar = !co->c.quiet && isatty(STDERR_FILENO);
    co->progress.timeline = co->c.verbose > 0;
    clock_gettime(CLOCK_MONOTONIC, &co->progress.start);
    if (co->progress.bar || co->progress.timeline)
        topoml_set_progress(*out, show_progress, &co->progress);
    return TOPOML_OK;
}

static void end_progress(common_opts *co)
{
    if (co->progress.shown)
        fprintf(stderr, "\r\033[K");
    if (co->progress.timeline) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        fprintf(stderr, "topoml info: %8.3f s: done\n", seconds_since(&co->progress.start, &now));
    }
}

static int read_input(topoml_context *ctx, const char *cmd, int argc, char **argv,
                      topoml_format fmt, topoml_data **data)
{
    if (argc > 1)
        return cli_usage_error(cmd, "more than one input file given ('%s')", argv[1]);
    const char *path = argc == 1 ? argv[0] : "-";
    int rc = topoml_data_read(ctx, data, path, fmt);
    if (rc != TOPOML_OK)
        return cli_error(ctx, rc);
    return 0;
}

/* ---- topoml barcode ---- */

static const cli_opt_help barcode_opts[] = {
    {"--format F", "auto (default: a square matrix, a lower or an upper triangle, or DIPHA, told "
                   "by the input), lower-distance, upper-distance, distance, point-cloud, dipha, "
                   "sparse, binary; Ripser's prefixes too (lower, dist, point)", 'f'},
    {"--dim K", "compute homology up to dimension K (default 1)", 'd'},
    {"--threshold T", "only simplices of diameter <= T (default: the enclosing radius, beyond "
                      "which homology is trivial)", 't'},
    {"--ratio R", "only print bars of dimension >= 1 with death/birth > R", 'r'},
    {"--modulus P", "coefficients in Z/P, P prime (default 2)", 'p'},
    {"--metric M", "for point clouds: euclidean (default), sqeuclidean, manhattan, chebyshev, "
                   "cosine", 'm'},
    {"--output O", "ripser (default: Ripser's text), json, csv", 'u'},
    {"--dtype T", "f64 (default), or f32: distances and threshold rounded to float as Ripser "
                  "keeps them, for Ripser's output to the bit", 'y'},
    {"-o, --output-file FILE", "write the barcode to FILE, not to standard output", 'o'},
    {"--strict-symmetry", "refuse a full matrix whose triangles differ or whose diagonal is not 0 "
                          "(default: read its lower triangle, as Ripser does, with a warning)", 'S'},
    {"--collapse C", "edge collapse before the reduction: auto (default), on, off; the barcode "
                     "is the same either way", 'C'},
    {"--threads N", "threads of the edge collapse and of a multi-threaded backend (default: "
                    "the configuration's threads:, else every core available)", 'T'},
    {"--cocycles", "also a representative cocycle of every bar of dimension >= 1, as Ripser's "
                   "representative-cocycles output ({[v2,v1,v0]:c,...} after the bar; JSON: "
                   "a \"cocycles\" list per dimension, [v...,c] rows as ripser.py gives them); "
                   "turns the edge collapse off", 'K'},
    {"--weights W", "a weighted Rips filtration (giotto-ph's weights): W is a file of one "
                    "weight >= 0 per vertex (whitespace or commas between them; vertex i enters "
                    "at its weight), or dtm for the distance to measure of the --dtm-neighbors "
                    "nearest vertices; edges enter by the rule of --weight-p", 'W'},
    {"--weight-p P", "the edge rule of --weights: 1 (default), 2 or inf", 'P'},
    {"--dtm-neighbors K", "--weights dtm: the K nearest other vertices (default 3)", 'N'},
    {"--dtm-r R", "--weights dtm: the power r of the distances (default 2)", 'R'},
    COMMON_HELP_OPTS};
static const cli_help barcode_help =
    CLI_HELP("topoml barcode [options] [FILE|-]",
             "Vietoris-Rips persistence barcodes, with Ripser's options and output.", barcode_opts,
             NULL);

static void print_ripser_header(topoml_context *ctx, const topoml_data *data, topoml_format fmt,
                                uint64_t dim, topoml_metric metric, double threshold, FILE *out)
{
    uint64_t n = topoml_data_count(data);
    if (fmt == TOPOML_FORMAT_POINT_CLOUD || fmt == TOPOML_FORMAT_NPY) {
        fprintf(out, "point cloud with %llu points in dimension %llu\n", (unsigned long long)n,
               (unsigned long long)dim);
        if (!isinf(threshold))
            return; /* Ripser goes straight to the sparse matrix here */
    }
    topoml_stats st;
    if (topoml_data_stats(ctx, data, metric, threshold, &st) != TOPOML_OK)
        return;
    unsigned long long pairs = n ? (unsigned long long)(n * (n - 1) / 2) : 0;
    if (fmt == TOPOML_FORMAT_SPARSE) {
        fprintf(out, "sparse distance matrix with %llu points and %llu/%llu entries\n",
               (unsigned long long)n, (unsigned long long)st.edges_within, pairs);
        return;
    }
    fprintf(out, "value range: [%g,%g]\n", st.min, st.max_finite);
    if (isinf(threshold))
        fprintf(out, "distance matrix with %llu points, using threshold at enclosing radius %g\n",
               (unsigned long long)n, st.enclosing_radius);
    else
        fprintf(out, "sparse distance matrix with %llu points and %llu/%llu entries\n",
               (unsigned long long)n, (unsigned long long)st.edges_within, pairs);
}

/* Ripser keeps every distance as a float: point-cloud distances computed in
 * float, matrix entries and the threshold rounded to float. Replace *data by
 * a data set whose distances are exactly those floats (widened), so that
 * the barcode is Ripser's to the last bit. */
static int round_to_f32(topoml_context *ctx, topoml_data **data, topoml_metric metric,
                        const char *backend)
{
    uint64_t n = topoml_data_count(*data);
    topoml_data *rounded = NULL;
    int rc;
    if (topoml_data_kind(*data) == TOPOML_INPUT_SPARSE) {
        topoml_edge *e = NULL;
        uint64_t m = 0;
        if ((rc = topoml_edges(ctx, *data, metric, INFINITY, &e, &m)) != TOPOML_OK)
            return rc;
        for (uint64_t k = 0; k < m; k++)
            e[k].d = (double)(float)e[k].d;
        rc = topoml_data_from_edges(ctx, &rounded, n, m, e);
        topoml_free(ctx, e);
    } else {
        void *d = NULL;
        uint64_t count = 0;
        double *wide = NULL;
        if (topoml_data_kind(*data) == TOPOML_INPUT_POINTS) {
            /* Ripser sums the squares left to right in float; the scalar
             * reference does exactly that, while an accelerated backend may
             * sum in another order (within its certified ulp bound). */
            rc = topoml_use_backend(ctx, "scalar");
            if (rc == TOPOML_OK)
                rc = topoml_distances(ctx, *data, metric, TOPOML_F32, &d, &count);
            int rc2 = topoml_use_backend(ctx, backend);
            if (rc == TOPOML_OK)
                rc = rc2;
        } else {
            /* A matrix: its entries, rounded. */
            rc = topoml_edges(ctx, *data, metric, INFINITY, (topoml_edge **)&d, &count);
        }
        if (rc != TOPOML_OK)
            return rc;
        uint64_t pairs = n ? n * (n - 1) / 2 : 0;
        wide = malloc(pairs ? pairs * sizeof *wide : 1);
        if (!wide) {
            topoml_free(ctx, d);
            cli_file_error(NULL, NULL, "out of memory for %llu distances",
                    (unsigned long long)pairs);
            return TOPOML_E_NOMEM;
        }
        if (topoml_data_kind(*data) == TOPOML_INPUT_POINTS) {
            for (uint64_t k = 0; k < pairs; k++)
                wide[k] = (double)((float *)d)[k];
        } else {
            const topoml_edge *e = d;
            for (uint64_t k = 0; k < count; k++) {
                uint64_t i = e[k].i > e[k].j ? e[k].i : e[k].j, j = e[k].i + e[k].j - i;
                wide[i * (i - 1) / 2 + j] = (double)(float)e[k].d;
            }
        }
        topoml_free(ctx, d);
        rc = topoml_data_from_condensed(ctx, &rounded, n, wide);
        free(wide);
    }
    if (rc != TOPOML_OK)
        return rc;
    topoml_data_free(ctx, *data);
    *data = rounded;
    return TOPOML_OK;
}

/* A file of vertex weights: numbers separated by whitespace or commas, as
 * many as the data set has vertices. */
static int read_weights(const char *path, uint64_t n, double **out)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return cli_file_error("barcode", path, "%s", strerror(errno)), 1;
    double *w = malloc((n ? n : 1) * sizeof *w);
    if (!w) {
        fclose(f);
        return cli_file_error("barcode", path, "out of memory for %llu weights",
                              (unsigned long long)n), 1;
    }
    uint64_t k = 0, line = 1;
    char tok[128];
    size_t len = 0;
    int ch, status = 0;
    do {
        ch = fgetc(f);
        if (ch != EOF && !isspace(ch) && ch != ',') {
            if (len + 1 < sizeof tok)
                tok[len++] = (char)ch;
            continue;
        }
        if (len) {
            tok[len] = 0;
            len = 0;
            double v;
            if (!cli_parse_double(tok, &v)) {
                cli_file_error("barcode", path, "line %llu: '%s' is not a number",
                               (unsigned long long)line, tok);
                status = 1;
                break;
            }
            if (k == n) {
                cli_file_error("barcode", path,
                               "line %llu: more weights than the %llu vertices of the input",
                               (unsigned long long)line, (unsigned long long)n);
                status = 1;
                break;
            }
            w[k++] = v;
        }
        if (ch == '\n')
            line++;
    } while (ch != EOF);
    fclose(f);
    if (!status && k != n) {
        cli_file_error("barcode", path, "%llu weights for the %llu vertices of the input",
                       (unsigned long long)k, (unsigned long long)n);
        status = 1;
    }
    if (status) {
        free(w);
        return status;
    }
    *out = w;
    return 0;
}

static int cmd_barcode(int argc, char **argv)
{
    common_opts co = {0};
    topoml_format fmt = TOPOML_FORMAT_AUTO;
    bool f32 = false;
    const char *out_path = NULL;
    topoml_rips_options ro;
    topoml_rips_options_init(&ro);
    double ratio = 1.0;
    topoml_output out_style = TOPOML_OUTPUT_RIPSER;
    bool strict = false;
    const char *weights_file = NULL;
    double *weights = NULL;
    int c, r;
    optind = 1;
    while ((c = cli_getopt(argc, argv, &barcode_help)) != -1) {
        if ((r = cli_common_opt(&co.c, c, "barcode")) == 1)
            continue;
        if (r == 2)
            return 2;
        switch (c) {
        case 'h': cli_print_help(stdout, &barcode_help); return 0;
        case 'f':
            if (topoml_format_from_name(optarg, &fmt) != TOPOML_OK)
                return cli_usage_error("barcode", "unknown --format '%s'", optarg);
            break;
        case 'd':
            if (!cli_parse_uint(optarg, &ro.max_dim))
                return cli_usage_error("barcode", "--dim needs a whole number >= 0, not '%s'",
                                       optarg);
            break;
        case 't':
            if (!cli_parse_double(optarg, &ro.threshold) || ro.threshold < 0)
                return cli_usage_error("barcode", "--threshold needs a number >= 0, not '%s'",
                                       optarg);
            break;
        case 'r':
            if (!cli_parse_double(optarg, &ratio) || ratio < 0)
                return cli_usage_error("barcode", "--ratio needs a number >= 0, not '%s'",
                                       optarg);
            break;
        case 'p':
            if (!cli_parse_uint(optarg, &ro.modulus) || ro.modulus < 2)
                return cli_usage_error("barcode", "--modulus needs a prime, not '%s'", optarg);
            break;
        case 'm': {
            topoml_metric m;
            if (!parse_metric(optarg, &m))
                return cli_usage_error("barcode", "unknown --metric '%s'", optarg);
            ro.metric = m;
            break;
        }
        case 'o': out_path = optarg; break;
        case 'u':
            if (!strcmp(optarg, "ripser"))
                out_style = TOPOML_OUTPUT_RIPSER;
            else if (!strcmp(optarg, "json"))
                out_style = TOPOML_OUTPUT_JSON;
            else if (!strcmp(optarg, "csv"))
                out_style = TOPOML_OUTPUT_CSV;
            else
                return cli_usage_error("barcode", "unknown --output '%s' (ripser, json, csv)",
                                       optarg);
            break;
        case 'S': strict = true; break;
        case 'y':
            if (strcmp(optarg, "f32") && strcmp(optarg, "f64"))
                return cli_usage_error("barcode", "--dtype is f32 or f64, not '%s'", optarg);
            f32 = !strcmp(optarg, "f32");
            break;
        case 'O': out_path = optarg; break;
        case 'C':
            if (!strcmp(optarg, "auto"))
                ro.collapse = TOPOML_COLLAPSE_AUTO;
            else if (!strcmp(optarg, "on"))
                ro.collapse = TOPOML_COLLAPSE_ON;
            else if (!strcmp(optarg, "off"))
                ro.collapse = TOPOML_COLLAPSE_OFF;
            else
                return cli_usage_error("barcode", "unknown --collapse '%s' (auto, on, off)",
                                       optarg);
            break;
        case 'T':
            if (!cli_parse_uint(optarg, &ro.n_threads) || ro.n_threads < 1 ||
                ro.n_threads > 4096)
                return cli_usage_error("barcode",
                                       "--threads needs a whole number from 1 to 4096, not '%s'",
                                       optarg);
            break;
        case 'K': ro.flags |= TOPOML_RIPS_COCYCLES; break;
        case 'W':
            weights_file = strcmp(optarg, "dtm") && strcmp(optarg, "DTM") ? optarg : NULL;
            ro.weights = weights_file ? TOPOML_WEIGHTS_GIVEN : TOPOML_WEIGHTS_DTM;
            break;
        case 'P':
            if (!cli_parse_double(optarg, &ro.weight_p) ||
                !(ro.weight_p == 1 || ro.weight_p == 2 || ro.weight_p == INFINITY))
                return cli_usage_error("barcode", "--weight-p is 1, 2 or inf, not '%s'", optarg);
            break;
        case 'N':
            if (!cli_parse_uint(optarg, &ro.dtm_neighbors) || ro.dtm_neighbors < 1)
                return cli_usage_error("barcode",
                                       "--dtm-neighbors needs a whole number >= 1, not '%s'",
                                       optarg);
            break;
        case 'R':
            if (!cli_parse_double(optarg, &ro.dtm_r) || !(ro.dtm_r > 0) || isinf(ro.dtm_r))
                return cli_usage_error("barcode", "--dtm-r needs a number > 0, not '%s'",
                                       optarg);
            break;
        default: return cli_bad_option("barcode", c, argc, argv);
        }
    }
    topoml_context *ctx;
    if (open_context(&co, &ctx) != TOPOML_OK)
        return 1;
    if (strict)
        topoml_set_read_flags(ctx, TOPOML_READ_STRICT_SYMMETRY);
    topoml_data *data = NULL;
    int status = read_input(ctx, "barcode", argc - optind, argv + optind, fmt, &data);
    if (status) {
        topoml_context_free(ctx);
        return status;
    }
    topoml_format read_as = topoml_data_format(data);
    uint64_t coords = topoml_data_dim(data);
    if (f32) {
        int frc = round_to_f32(ctx, &data, (topoml_metric)ro.metric, co.c.backend);
        if (frc != TOPOML_OK) {
            status = cli_error(ctx, frc);
            topoml_data_free(ctx, data);
            topoml_context_free(ctx);
            return status;
        }
        if (!isinf(ro.threshold))
            ro.threshold = (double)(float)ro.threshold;
    }
    /* As Ripser: no homology above dimension n - 2 is computed or printed. */
    uint64_t n_points = topoml_data_count(data);
    uint32_t top = n_points >= 2 ? (uint32_t)(n_points - 2 < UINT32_MAX ? n_points - 2 : UINT32_MAX)
                                 : 0;
    if (ro.max_dim > top) {
        if (co.c.verbose)
            fprintf(stderr, "topoml info: --dim %u lowered to %u: %llu points have no homology "
                            "above dimension n - 2\n",
                    ro.max_dim, top, (unsigned long long)n_points);
        ro.max_dim = top;
    }
    if (weights_file) {
        if (read_weights(weights_file, n_points, &weights)) {
            topoml_data_free(ctx, data);
            topoml_context_free(ctx);
            return 1;
        }
        ro.vertex_weights = weights;
    }
    FILE *out = stdout;
    if (out_path && strcmp(out_path, "-") != 0) {
        out = fopen(out_path, "w");
        if (!out) {
            cli_file_error("barcode", out_path, "%s", strerror(errno));
            free(weights);
            topoml_data_free(ctx, data);
            topoml_context_free(ctx);
            return 1;
        }
    }
    /* The header's value range is O(n^2): printed after the barcode, so
     * that work refused for its size is refused at once. */
    topoml_barcode *bc = NULL;
    int rc = topoml_barcode_compute(ctx, &bc, data, &ro);
    end_progress(&co);
    if (bc && out_style == TOPOML_OUTPUT_RIPSER)
        print_ripser_header(ctx, data, read_as, coords, (topoml_metric)ro.metric, ro.threshold,
                            out);
    if (bc) /* after a cancel too: the finished dimensions are not lost */
        topoml_barcode_write(ctx, bc, out, out_style, ratio);
    if (rc != TOPOML_OK)
        status = cli_error(ctx, rc);
    else
        cli_report_backend(ctx, co.c.verbose);
    if ((fflush(out) != 0 || ferror(out)) && !status) {
        cli_file_error("barcode", out == stdout ? "<stdout>" : out_path, "write error: %s",
                       strerror(errno));
        status = 1;
    }
    if (out != stdout && fclose(out) != 0 && !status) {
        cli_file_error("barcode", out_path, "write error: %s", strerror(errno));
        status = 1;
    }
    topoml_barcode_free(bc);
    free(weights);
    topoml_data_free(ctx, data);
    topoml_context_free(ctx);
    return status;
}

/* ---- NPY output (NumPy's .npy format 1.0) ---- */

/* The header for an array of `descr` (a numpy dtype literal) and `shape` (a
 * Python tuple literal): magic, version 1.0, length, then the dict padded
 * with spaces so that the data starts at a multiple of 64 bytes. */
static void write_npy_header(FILE *f, const char *descr, const char *shape)
{
    char dict[256];
    int len = snprintf(dict, sizeof dict, "{'descr': %s, 'fortran_order': False, 'shape': %s, }",
                       descr, shape);
    int total = 10 + len + 1;
    int pad = (64 - total % 64) % 64;
    unsigned hlen = (unsigned)(len + pad + 1);
    fwrite("\x93NUMPY\x01\x00", 1, 8, f);
    fputc((int)(hlen & 0xff), f);
    fputc((int)(hlen >> 8), f);
    fputs(dict, f);
    for (int k = 0; k < pad; k++)
        fputc(' ', f);
    fputc('\n', f);
}

/* -o FILE, or standard output; NULL after an error (reported). */
static FILE *open_output(const char *path)
{
    if (!path || !strcmp(path, "-"))
        return stdout;
    FILE *f = fopen(path, "wb");
    if (!f)
        cli_file_error(NULL, path, "%s", strerror(errno));
    return f;
}

/* Flush and close what open_output gave; 1 (reported) on a write error. */
static int close_output(FILE *f, const char *path, int status)
{
    const char *name = f == stdout ? "<stdout>" : path;
    if ((fflush(f) != 0 || ferror(f)) && !status) {
        cli_file_error(NULL, name, "write error: %s", strerror(errno));
        status = 1;
    }
    if (f != stdout && fclose(f) != 0 && !status) {
        cli_file_error(NULL, name, "write error: %s", strerror(errno));
        status = 1;
    }
    return status;
}

/* ---- topoml distance ---- */

static const cli_opt_help distance_opts[] = {
    {"--format F", "point-cloud (default: `distance` reads points only) or npy", 'f'},
    {"--metric M", "euclidean (default), sqeuclidean, manhattan, chebyshev, cosine", 'm'},
    {"--dtype T", "f64 (default) or f32", 'y'},
    {"--output O", "text (default) or npy: a 1-D NumPy array of the n(n-1)/2 distances in the "
                   "same order (numpy: D[np.tril_indices(n, -1)] = a)", 'u'},
    {"-o, --output-file FILE", "write to FILE, not to standard output", 'o'},
    COMMON_HELP_OPTS};
static const cli_help distance_help =
    CLI_HELP("topoml distance [options] [FILE|-]",
             "Pairwise distances of a point cloud, written as a lower-triangular matrix\n"
             "(Ripser's lower-distance format, one row per line).",
             distance_opts, NULL);

static int cmd_distance(int argc, char **argv)
{
    common_opts co = {0};
    topoml_format fmt = TOPOML_FORMAT_POINT_CLOUD;
    topoml_metric metric = TOPOML_METRIC_EUCLIDEAN;
    topoml_dtype dtype = TOPOML_F64;
    bool npy = false;
    const char *out_path = NULL;
    int c, r;
    optind = 1;
    while ((c = cli_getopt(argc, argv, &distance_help)) != -1) {
        if ((r = cli_common_opt(&co.c, c, "distance")) == 1)
            continue;
        if (r == 2)
            return 2;
        switch (c) {
        case 'h': cli_print_help(stdout, &distance_help); return 0;
        case 'f':
            if (topoml_format_from_name(optarg, &fmt) != TOPOML_OK)
                return cli_usage_error("distance", "unknown --format '%s'", optarg);
            break;
        case 'm':
            if (!parse_metric(optarg, &metric))
                return cli_usage_error("distance", "unknown --metric '%s'", optarg);
            break;
        case 'y':
            if (!strcmp(optarg, "f32"))
                dtype = TOPOML_F32;
            else if (!strcmp(optarg, "f64"))
                dtype = TOPOML_F64;
            else
                return cli_usage_error("distance", "--dtype is f32 or f64, not '%s'", optarg);
            break;
        case 'u':
            if (strcmp(optarg, "text") && strcmp(optarg, "npy"))
                return cli_usage_error("distance", "--output is text or npy, not '%s'", optarg);
            npy = !strcmp(optarg, "npy");
            break;
        case 'o': out_path = optarg; break;
        default: return cli_bad_option("distance", c, argc, argv);
        }
    }
    topoml_context *ctx;
    if (open_context(&co, &ctx) != TOPOML_OK)
        return 1;
    topoml_data *data = NULL;
    int status = read_input(ctx, "distance", argc - optind, argv + optind, fmt, &data);
    void *d = NULL;
    uint64_t count = 0;
    FILE *out = NULL;
    if (!status) {
        int rc = topoml_distances(ctx, data, metric, dtype, &d, &count);
        end_progress(&co);
        if (rc == TOPOML_OK)
            cli_report_backend(ctx, co.c.verbose);
        if (rc != TOPOML_OK) {
            status = cli_error(ctx, rc);
        } else if ((out = open_output(out_path)) == NULL) {
            status = 1;
        } else if (npy) {
            char shape[32];
            snprintf(shape, sizeof shape, "(%llu,)", (unsigned long long)count);
            write_npy_header(out, dtype == TOPOML_F32 ? "'<f4'" : "'<f8'", shape);
            fwrite(d, dtype == TOPOML_F32 ? sizeof(float) : sizeof(double), (size_t)count, out);
        } else {
            uint64_t n = topoml_data_count(data), k = 0;
            fputc('\n', out); /* row 0 of a lower triangle is empty, as in Ripser's files */
            for (uint64_t i = 1; i < n; i++) {
                for (uint64_t j = 0; j < i; j++, k++) {
                    if (dtype == TOPOML_F32)
                        fprintf(out, j ? ",%.9g" : "%.9g", (double)((float *)d)[k]);
                    else
                        fprintf(out, j ? ",%.17g" : "%.17g", ((double *)d)[k]);
                }
                fputc('\n', out);
            }
        }
    }
    if (out)
        status = close_output(out, out_path, status);
    topoml_free(ctx, d);
    topoml_data_free(ctx, data);
    topoml_context_free(ctx);
    return status;
}

/* ---- topoml edges ---- */

static const cli_opt_help edges_opts[] = {
    {"--threshold T", "largest distance kept (required)", 't'},
    {"--format F", "input format, as for `topoml barcode`: auto (default) tells a distance "
                   "matrix or DIPHA by the input; a point cloud is never guessed (a square one "
                   "reads as a matrix): name it, --format point-cloud", 'f'},
    {"--metric M", "for point clouds (default euclidean)", 'm'},
    {"--strict-symmetry", "refuse an asymmetric full matrix (see `barcode --help`)", 'S'},
    {"--output O", "text (default) or npy: a NumPy structured array with fields i, j (uint32) "
                   "and d (float64)", 'u'},
    {"-o, --output-file FILE", "write to FILE, not to standard output", 'o'},
    COMMON_HELP_OPTS};
static const cli_help edges_help =
    CLI_HELP("topoml edges --threshold T [options] [FILE|-]",
             "Every pair i < j with d(i,j) <= T, sorted by (d, i, j), one \"i j d\" per line\n"
             "(Ripser's sparse format, so the output is an input of `topoml barcode\n"
             "--format sparse`).",
             edges_opts, NULL);

static int cmd_edges(int argc, char **argv)
{
    common_opts co = {0};
    bool strict = false, npy = false;
    const char *out_path = NULL;
    topoml_format fmt = TOPOML_FORMAT_AUTO;
    topoml_metric metric = TOPOML_METRIC_EUCLIDEAN;
    double threshold = NAN;
    int c, r;
    optind = 1;
    while ((c = cli_getopt(argc, argv, &edges_help)) != -1) {
        if ((r = cli_common_opt(&co.c, c, "edges")) == 1)
            continue;
        if (r == 2)
            return 2;
        switch (c) {
        case 'h': cli_print_help(stdout, &edges_help); return 0;
        case 'f':
            if (topoml_format_from_name(optarg, &fmt) != TOPOML_OK)
                return cli_usage_error("edges", "unknown --format '%s'", optarg);
            break;
        case 'm':
            if (!parse_metric(optarg, &metric))
                return cli_usage_error("edges", "unknown --metric '%s'", optarg);
            break;
        case 't':
            if (!cli_parse_double(optarg, &threshold) || threshold < 0)
                return cli_usage_error("edges", "--threshold needs a number >= 0, not '%s'",
                                       optarg);
            break;
        case 'S': strict = true; break;
        case 'u':
            if (strcmp(optarg, "text") && strcmp(optarg, "npy"))
                return cli_usage_error("edges", "--output is text or npy, not '%s'", optarg);
            npy = !strcmp(optarg, "npy");
            break;
        case 'o': out_path = optarg; break;
        default: return cli_bad_option("edges", c, argc, argv);
        }
    }
    if (isnan(threshold))
        return cli_usage_error("edges", "%s", "--threshold is required");
    topoml_context *ctx;
    if (open_context(&co, &ctx) != TOPOML_OK)
        return 1;
    if (strict)
        topoml_set_read_flags(ctx, TOPOML_READ_STRICT_SYMMETRY);
    topoml_data *data = NULL;
    int status = read_input(ctx, "edges", argc - optind, argv + optind, fmt, &data);
    topoml_edge *e = NULL;
    uint64_t n = 0;
    FILE *out = NULL;
    if (!status) {
        int rc = topoml_edges(ctx, data, metric, threshold, &e, &n);
        end_progress(&co);
        if (rc == TOPOML_OK)
            cli_report_backend(ctx, co.c.verbose);
        if (rc != TOPOML_OK) {
            status = cli_error(ctx, rc);
        } else if ((out = open_output(out_path)) == NULL) {
            status = 1;
        } else if (npy) {
            /* topoml_edge's own layout: i, j (uint32), d (float64). */
            char shape[32];
            snprintf(shape, sizeof shape, "(%llu,)", (unsigned long long)n);
            write_npy_header(out, "[('i', '<u4'), ('j', '<u4'), ('d', '<f8')]", shape);
            for (uint64_t k = 0; k < n; k++) {
                fwrite(&e[k].i, 4, 1, out);
                fwrite(&e[k].j, 4, 1, out);
                fwrite(&e[k].d, 8, 1, out);
            }
        } else {
            for (uint64_t k = 0; k < n; k++)
                fprintf(out, "%u %u %.17g\n", e[k].i, e[k].j, e[k].d);
        }
    }
    if (out)
        status = close_output(out, out_path, status);
    topoml_free(ctx, e);
    topoml_data_free(ctx, data);
    topoml_context_free(ctx);
    return status;
}

/* ---- topoml backends ---- */

/* No --backend, --max-memory or --quiet: it lists every backend and runs
 * no op. */
static const cli_opt_help backends_opts[] = {
    {"--json", "as a JSON array, capabilities by name", 'j'},
    CLI_HELP_CONFIG,
    CLI_HELP_VERBOSE,
    CLI_HELP_HELP};
static const cli_help backends_help =
    CLI_HELP("topoml backends [options]",
             "Every backend found: where it came from, identity, ABI, capabilities, probe\n"
             "result and gate state, with the reasons.",
             backends_opts, NULL);

static const char *gate_names[] = {"enabled", "disabled", "unsupported", "rejected"};
static const char *op_names[] = {"distances", "edges", "h0", "rips", "image"};
static const char *metric_names[] = {"euclidean", "sqeuclidean", "manhattan", "chebyshev",
                                     "cosine"};
static const char *input_names[] = {"points", "condensed", "sparse"};

static void json_str(const char *s)
{
    putchar('"');
    for (; s && *s; s++) {
        if (*s == '"' || *s == '\\')
            printf("\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            printf("\\u%04x", *s);
        else
            putchar(*s);
    }
    putchar('"');
}

/* A bit mask as a JSON array of the names of its bits. */
static void json_names(uint32_t bits, const char **names, int count)
{
    bool first = true;
    putchar('[');
    for (int i = 0; i < count; i++)
        if (bits & (1u << i)) {
            printf("%s\"%s\"", first ? "" : ",", names[i]);
            first = false;
        }
    putchar(']');
}

static void print_bits(uint32_t bits, const char **names, int count)
{
    bool first = true;
    for (int i = 0; i < count; i++)
        if (bits & (1u << i)) {
            printf("%s%s", first ? "" : ",", names[i]);
            first = false;
        }
    if (first)
        printf("-");
}

static int cmd_backends(int argc, char **argv)
{
    common_opts co = {0};
    bool json = false;
    int c, r;
    optind = 1;
    while ((c = cli_getopt(argc, argv, &backends_help)) != -1) {
        if ((r = cli_common_opt(&co.c, c, "backends")) == 1)
            continue;
        if (r == 2)
            return 2;
        if (c == 'h') {
            cli_print_help(stdout, &backends_help);
            return 0;
        }
        if (c == 'j')
            json = true;
        else
            return cli_bad_option("backends", c, argc, argv);
    }
    if (optind < argc)
        return cli_usage_error("backends", "unexpected argument '%s'", argv[optind]);
    topoml_context *ctx;
    if (open_context(&co, &ctx) != TOPOML_OK)
        return 1;
    uint32_t n = topoml_backend_count(ctx);
    if (json)
        printf("[");
    for (uint32_t i = 0; i < n; i++) {
        topoml_backend_info b = {.struct_size = sizeof b};
        if (topoml_backend_get(ctx, i, &b) != TOPOML_OK)
            continue;
        const char *gate = b.gate_state < 4 ? gate_names[b.gate_state] : "?";
        if (json) {
            printf("%s{\"name\":", i ? "," : "");
            json_str(b.name);
            printf(",\"path\":");
            if (b.path)
                json_str(b.path);
            else
                printf("null");
            printf(",\"version\":");
            json_str(b.version);
            printf(",\"vendor\":");
            json_str(b.vendor);
            printf(",\"abi\":%u,\"probe\":", b.abi_version);
            json_str(b.probe_status == TOPOML_OK ? "ok" : topoml_strerror(b.probe_status));
            printf(",\"probe_message\":");
            json_str(b.probe_message);
            printf(",\"gate\":\"%s\",\"gate_reason\":", gate);
            json_str(b.gate_reason);
            printf(",\"isolation\":");
            json_str(b.isolation);
            printf(",\"sandbox\":");
            if (b.sandbox)
                json_str(b.sandbox);
            else
                printf("null");
            printf(",\"capabilities\":[");
            for (uint32_t k = 0; k < b.n_caps; k++) {
                const topoml_capability_v1 *cp = &b.caps[k];
                static const char *dt[] = {"f32", "f64"};
                printf("%s{\"op\":\"%s\",\"dtypes\":", k ? "," : "",
                       cp->op < 5 ? op_names[cp->op] : "?");
                json_names(cp->dtypes, dt, 2);
                printf(",\"metrics\":");
                json_names(cp->metrics, metric_names, 5);
                printf(",\"inputs\":");
                json_names(cp->inputs, input_names, 3);
                printf(",\"max_dim\":%u,\"max_modulus\":%u,\"max_points\":%llu,"
                       "\"device_input\":%s,\"device\":",
                       cp->max_dim, cp->max_modulus, (unsigned long long)cp->max_points,
                       cp->features & TOPOML_CAP_DEVICE_INPUT ? "true" : "false");
                json_str(cp->device);
                printf(",\"schedule\":");
                if (cp->schedule)
                    json_str(cp->schedule);
                else
                    printf("null");
                printf("}");
            }
            printf("]}");
            continue;
        }
        printf("%s%s\n", b.name[0] ? b.name : "(unknown)", b.path ? "" : " (built in)");
        printf("  path:     %s\n", b.path ? b.path : "libtopoml");
        if (b.abi_version)
            printf("  identity: %s %s by %s, ABI v%u — %s\n", b.name, b.version, b.vendor,
                   b.abi_version, b.description);
        if (b.abi_version)
            printf("  probe:    %s%s%s\n",
                   b.probe_status == TOPOML_OK ? "ok" : topoml_strerror(b.probe_status),
                   b.probe_message[0] ? ": " : "", b.probe_message);
        printf("  gate:     %s (%s)\n", gate, b.gate_reason);
        printf("  runs in:  %s\n", strcmp(b.isolation, "process") == 0
                                       ? "a helper process (isolation)"
                                       : "the host process");
        if (b.sandbox)
            printf("  sandbox:  %s\n", b.sandbox);
        if (b.selection == TOPOML_SELECT_BY_NAME)
            printf("  choice:   by name only (--backend, or `prefer` in the configuration)\n");
        for (uint32_t k = 0; k < b.n_caps; k++) {
            const topoml_capability_v1 *cp = &b.caps[k];
            printf("  op %-9s dtypes=", cp->op < 5 ? op_names[cp->op] : "?");
            static const char *dt[] = {"f32", "f64"};
            print_bits(cp->dtypes, dt, 2);
            printf(" inputs=");
            print_bits(cp->inputs, input_names, 3);
            if (cp->op == TOPOML_OP_DISTANCES || cp->op == TOPOML_OP_EDGES) {
                printf(" metrics=");
                print_bits(cp->metrics, metric_names, 5);
            }
            if (cp->op == TOPOML_OP_RIPS)
                printf(" max_dim=%u max_modulus=%u", cp->max_dim, cp->max_modulus);
            if (cp->features & TOPOML_CAP_DEVICE_INPUT)
                printf(" device-input"); /* takes the inputs above in device memory */
            printf(" device=%s", cp->device ? cp->device : "?");
            if (cp->schedule)
                printf(" [%s]", cp->schedule);
            printf("\n");
        }
    }
    if (json)
        printf("]\n");
    topoml_context_free(ctx);
    return 0;
}

/* ---- dispatch ---- */

static const cli_opt_help main_opts[] = {
    CLI_HELP_HELP,
    {"--version", "print the version and exit", 'V'}};
static const cli_help main_help =
    CLI_HELP("topoml COMMAND [options]",
             "Persistent homology of point clouds and distance matrices.", main_opts,
             "Commands:\n"
             "  barcode    Vietoris-Rips barcodes (Ripser's options and output)\n"
             "  distance   pairwise distances of a point cloud\n"
             "  edges      pairs within a threshold, sorted\n"
             "  backends   the backends found, their capabilities and gate state\n" CLI_EXTRA_HELP
             "\n`topoml help COMMAND` (or `topoml COMMAND --help`) describes each.\n");

int main(int argc, char **argv)
{
    if (argc < 2) {
        cli_print_help(stderr, &main_help);
        return 2;
    }
    const char *cmd = argv[1];
    /* `topoml help CMD` runs `topoml CMD --help`. */
    static char help_arg[] = "--help";
    char *help_argv[] = {argc > 2 ? argv[2] : NULL, help_arg, NULL};
    bool help_of = !strcmp(cmd, "help") && argc > 2 && strcmp(argv[2], "help") != 0;
    if (help_of) {
        cmd = argv[2];
        argc = 2;
        argv = help_argv;
    } else if (cmd[0] == '-') {
        /* Options of `topoml` itself, parsed from its own table. */
        opterr = 0;
        optind = 1;
        int c = cli_getopt(argc, argv, &main_help);
        if (c == 'h') {
            cli_print_help(stdout, &main_help);
            return 0;
        }
        if (c == 'V') {
            printf("topoml %s (plugin ABI v%u)\n", topoml_version(), TOPOML_ABI_VERSION);
            return 0;
        }
        if (c != -1) /* ("-" and "--" are no options: unknown commands, below) */
            return cli_help_bad_option(prog, c, argc, argv);
        argc--;
        argv++;
    } else {
        argc--;
        argv++;
    }
    if (!strcmp(cmd, "help")) {
        cli_print_help(stdout, &main_help);
        return 0;
    }
    if (!strcmp(cmd, "version")) {
        printf("topoml %s (plugin ABI v%u)\n", topoml_version(), TOPOML_ABI_VERSION);
        return 0;
    }
    static const struct {
        const char *name;
        int (*fn)(int, char **);
    } cmds[] = {{"barcode", cmd_barcode},
                {"distance", cmd_distance},
                {"edges", cmd_edges},
                {"backends", cmd_backends} CLI_EXTRA_COMMANDS};
    /* The commands report bad options themselves, with their prefix. */
    opterr = 0;
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
        if (!strcmp(cmd, cmds[i].name)) {
            cli_set_command(cmds[i].name);
            return cmds[i].fn(argc, argv);
        }
    fprintf(stderr, "%s: unknown command '%s'\nTry '%s --help'.\n", prog, cmd, prog);
    return 2;
}
