/*
 * cmd_features.c — the `topoml image`, `topoml features`, `topoml compare`
 * and `topoml plot` subcommands: option parsing, reading diagram files and
 * writing results. The computations are libtopoml's (topoml/features.h);
 * the SVG drawing is plot_svg.c.
 *
 * Every subcommand returns 0 on success, 1 on an error (message on stderr,
 * the library's text where it has one), 2 on a usage error.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_help.h"
#include "cmd_features.h"
#include "plot_svg.h"
#include "topoml/features.h"

#define MAX_DIMS_LISTED 64

/* ------------------------------------------------------------------------
 * Shared helpers
 * ---------------------------------------------------------------------- */

/* getopt keeps global state; every subcommand starts a fresh scan (glibc
 * reinitialises fully when optind is 0). */
static void reset_getopt(void)
{
#ifdef __GLIBC__
    optind = 0;
#else
    optind = 1;
#endif
    opterr = 0; /* bad options are reported by cli_bad_option */
}

static bool parse_u32(const char *s, uint32_t lo, uint32_t hi, uint32_t *out)
{
    uint32_t v;
    if (!cli_parse_uint(s, &v) || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

/* "A:B" with finite A < B. */
static bool parse_range(const char *s, double *lo, double *hi)
{
    const char *colon = strchr(s, ':');
    if (colon == NULL || (size_t)(colon - s) >= 64)
        return false;
    char a[64];
    memcpy(a, s, (size_t)(colon - s));
    a[colon - s] = '\0';
    return cli_parse_double(a, lo) && cli_parse_double(colon + 1, hi) && isfinite(*lo) &&
           isfinite(*hi) && *lo < *hi;
}

/* "0,1,2" into dims[]. */
static bool parse_dims(const char *s, uint32_t *dims, uint32_t *n)
{
    char buf[256];
    if (strlen(s) >= sizeof buf)
        return false;
    strcpy(buf, s);
    *n = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok != NULL;
         tok = strtok_r(NULL, ",", &save)) {
        if (*n == MAX_DIMS_LISTED || !parse_u32(tok, 0, TOPOML_DIAGRAM_MAX_DIM, &dims[(*n)++]))
            return false;
    }
    return *n > 0;
}

/* "drop", "keep" (when allowed) or "clip:V". */
static bool parse_infinite(const char *s, bool allow_keep, int *mode, double *clip)
{
    if (strcmp(s, "drop") == 0) {
        *mode = TOPOML_INFINITE_DROP;
        return true;
    }
    if (allow_keep && strcmp(s, "keep") == 0) {
        *mode = -1;
        return true;
    }
    if (strncmp(s, "clip:", 5) == 0 && cli_parse_double(s + 5, clip) && isfinite(*clip)) {
        *mode = TOPOML_INFINITE_CLIP;
        return true;
    }
    return false;
}

static int read_diagram(topoml_context *ctx, const char *path, topoml_diagram_format fmt,
                        topoml_diagram **out)
{
    int st = topoml_diagram_read(ctx, out, path, fmt);
    return st ? cli_error(ctx, st) : 0;
}

static FILE *open_output(const char *cmd, const char *path, bool binary)
{
    if (path == NULL || strcmp(path, "-") == 0)
        return stdout;
    FILE *f = fopen(path, binary ? "wb" : "w");
    if (f == NULL)
        cli_file_error(cmd, path, "%s", strerror(errno));
    return f;
}

static int close_output(const char *cmd, FILE *f, const char *path)
{
    bool bad = ferror(f) != 0;
    if (f != stdout)
        bad |= fclose(f) != 0;
    else
        bad |= fflush(f) != 0;
    if (bad)
        return cli_file_error(cmd, f == stdout ? "<stdout>" : path, "write error: %s",
                              strerror(errno));
    return 0;
}

/* The fewest digits that read back to the same double; JSON gets null for
 * infinities (as in topoml's diagram JSON), CSV and text get "inf". */
static const char *fmt_num(char *buf, double x, bool json)
{
    if (isnan(x))
        return json ? "null" : "nan";
    if (isinf(x))
        return json ? "null" : x > 0 ? "inf" : "-inf";
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, 32, "%.*g", prec, x);
        if (strtod(buf, NULL) == x)
            break;
    }
    return buf;
}

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

/* Help entries every diagram command has (cli_help.h): the diagram file
 * format, and the shared options (cli.h: which configuration and backend,
 * the memory limit, logging). */
#define FORMAT_HELP \
    {"-f, --format FMT", "diagram file format: auto (default), json, ripser, gudhi, csv"}
#define COMMON_HELP_OPTS \
    CLI_HELP_BACKEND, CLI_HELP_CONFIG, CLI_HELP_MAX_MEMORY, CLI_HELP_VERBOSE, CLI_HELP_HELP

/* The context a command runs with: the caller's, or one opened from the
 * common options (and then freed by env_close). */
typedef struct cmd_env {
    topoml_context *ctx;
    bool owned;
    cli_common c;
} cmd_env;

static int env_open(cmd_env *env, topoml_context *given, const char *cmd)
{
    int rc;
    if (given != NULL) {
        if (env->c.config != NULL)
            return cli_usage_error(cmd, "%s", "--config cannot change a context already open");
        env->ctx = given;
        if (env->c.backend && (rc = topoml_use_backend(given, env->c.backend)) != TOPOML_OK)
            return cli_error(given, rc);
    } else {
        if (cli_open_context(&env->ctx, env->c.config, env->c.backend, env->c.verbose) != TOPOML_OK)
            return 1;
        env->owned = true;
    }
    if (env->c.max_memory_set)
        topoml_set_max_memory(env->ctx, env->c.max_memory);
    return 0;
}

static void env_close(cmd_env *env)
{
    if (env->owned)
        topoml_context_free(env->ctx);
    env->ctx = NULL;
    env->owned = false;
}

/* The command's own buffers count against the memory limit as the
 * library's do: `bytes` is an estimate in double (it may exceed 2^64). */
static int check_buffers(topoml_context *ctx, double bytes, const char *what)
{
    uint64_t b = bytes >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)bytes;
    int st = topoml_check_memory(ctx, b, what);
    return st ? cli_error(ctx, st) : 0;
}

static bool parse_format(const char *s, topoml_diagram_format *fmt)
{
    return topoml_diagram_format_from_name(s, fmt) == TOPOML_OK;
}

/* ------------------------------------------------------------------------
 * topoml image
 * ---------------------------------------------------------------------- */

static const cli_opt_help image_opts[] = {
    {"-d, --dim K", "homology dimension (default 1)"},
    FORMAT_HELP,
    {"-s, --sigma S", "standard deviation of the Gaussians (default: the larger of the birth "
                      "span and the largest persistence, over 20)"},
    {"-W, --width N", "pixels along birth (default 20)"},
    {"-H, --height N", "pixels along persistence (default 20)"},
    {"-b, --birth-range A:B", "birth range (default: the births, widened by 3 sigma)"},
    {"-p, --pers-range A:B", "persistence range (default: 0 to the largest persistence + 3 "
                             "sigma)"},
    {"-w, --weight W", "constant, linear[:MAX] (ramp reaching 1 at MAX, default the largest "
                       "persistence), power:P (persistence^P); default constant"},
    {"-i, --infinite M", "drop (default) or clip:V (infinite deaths become V)"},
    {"-O, --output STYLE", "csv (default: one line per image, row-major, row 0 the lowest "
                           "persistence), json, pgm (8-bit, highest persistence at the top, "
                           "each image scaled to its max)"},
    {"-o, --output-file FILE", "write there instead of standard output"},
    COMMON_HELP_OPTS};
static const cli_help image_help =
    CLI_HELP("topoml image [options] DIAGRAM...",
             "Persistence images (Adams et al. 2017) of one dimension of each diagram file;\n"
             "one image per file, all with the same parameters.",
             image_opts, NULL);

typedef enum { OUT_CSV, OUT_JSON, OUT_PGM, OUT_TEXT } out_style;

static void write_image_json(FILE *f, const topoml_image_params_v1 *p, uint32_t dim, char **files,
                             uint64_t n_images, const double *img)
{
    static const char *const weights[] = {"constant", "linear", "power"};
    char a[32], b[32];
    fprintf(f, "{\"dim\":%u,\"width\":%u,\"height\":%u,\"sigma\":%s,", dim, p->width, p->height,
            fmt_num(a, p->sigma, true));
    fprintf(f, "\"birth_range\":[%s,", fmt_num(a, p->birth_min, true));
    fprintf(f, "%s],", fmt_num(b, p->birth_max, true));
    fprintf(f, "\"pers_range\":[%s,", fmt_num(a, p->pers_min, true));
    fprintf(f, "%s],", fmt_num(b, p->pers_max, true));
    fprintf(f, "\"weight\":\"%s\"", weights[p->weight]);
    if (p->weight == TOPOML_WEIGHT_LINEAR)
        fprintf(f, ",\"weight_max\":%s", fmt_num(a, p->weight_max, true));
    if (p->weight == TOPOML_WEIGHT_POWER)
        fprintf(f, ",\"weight_power\":%s", fmt_num(a, p->weight_power, true));
    if (p->infinite == TOPOML_INFINITE_CLIP)
        fprintf(f, ",\"infinite\":\"clip\",\"clip_death\":%s", fmt_num(a, p->clip_death, true));
    else
        fputs(",\"infinite\":\"drop\"", f);
    fputs(",\"images\":[", f);
    const size_t pixels = (size_t)p->width * p->height;
    for (uint64_t k = 0; k < n_images; k++) {
        fputs(k ? ",\n{\"source\":" : "\n{\"source\":", f);
        json_string(f, files[k]);
        fputs(",\"pixels\":[", f);
        for (uint32_t r = 0; r < p->height; r++) {
            fputs(r ? ",\n  [" : "\n  [", f);
            for (uint32_t c = 0; c < p->width; c++)
                fprintf(f, "%s%s", c ? "," : "",
                        fmt_num(a, img[k * pixels + (size_t)r * p->width + c], true));
            fputc(']', f);
        }
        fputs("]}", f);
    }
    fputs("\n]}\n", f);
}

static void write_image_pgm(FILE *f, const topoml_image_params_v1 *p, uint64_t n_images,
                            const double *img)
{
    const size_t pixels = (size_t)p->width * p->height;
    for (uint64_t k = 0; k < n_images; k++) {
        const double *im = img + k * pixels;
        double max = 0.0;
        for (size_t i = 0; i < pixels; i++)
            max = fmax(max, im[i]);
        fprintf(f, "P5\n%u %u\n255\n", p->width, p->height);
        /* PGM's first row is the top of the picture: the highest persistence,
         * so the picture looks like the diagram it came from. */
        for (uint32_t r = p->height; r-- > 0;)
            for (uint32_t c = 0; c < p->width; c++) {
                double v = max > 0.0 ? im[(size_t)r * p->width + c] / max : 0.0;
                fputc((int)lround(fmin(fmax(v, 0.0), 1.0) * 255.0), f);
            }
    }
}

int topoml_cmd_image(topoml_context *given, int argc, char **argv)
{
    const char *cmd = "image";
    cli_set_command(cmd);
    static const struct option opts[] = {
        {"dim", required_argument, NULL, 'd'},
        {"format", required_argument, NULL, 'f'},
        {"sigma", required_argument, NULL, 's'},
        {"width", required_argument, NULL, 'W'},
        {"height", required_argument, NULL, 'H'},
        {"birth-range", required_argument, NULL, 'b'},
        {"pers-range", required_argument, NULL, 'p'},
        {"weight", required_argument, NULL, 'w'},
        {"infinite", required_argument, NULL, 'i'},
        {"output", required_argument, NULL, 'O'},
        {"output-file", required_argument, NULL, 'o'},
        CLI_CONTEXT_LONG_OPTS,
        {NULL, 0, NULL, 0},
    };
    topoml_image_params_v1 prm;
    topoml_image_params_init(&prm);
    uint32_t dim = 1;
    topoml_diagram_format fmt = TOPOML_DIAGRAM_AUTO;
    bool have_sigma = false, have_brange = false, have_prange = false, linear_auto = false;
    int infinite = TOPOML_INFINITE_DROP;
    out_style style = OUT_CSV;
    const char *out_path = NULL;
    cmd_env env = {0};
    int c;
    reset_getopt();
    while ((c = getopt_long(argc, argv, ":d:f:s:W:H:b:p:w:i:O:o:h", opts, NULL)) != -1) {
        int r = cli_common_opt(&env.c, c, cmd);
        if (r == 1)
            continue;
        if (r == 2)
            return 2;
        switch (c) {
        case 'd':
            if (!parse_u32(optarg, 0, TOPOML_DIAGRAM_MAX_DIM, &dim))
                return cli_usage_error(cmd, "bad --dim '%s'", optarg);
            break;
        case 'f':
            if (!parse_format(optarg, &fmt))
                return cli_usage_error(cmd, "unknown --format '%s'", optarg);
            break;
        case 's':
            if (!cli_parse_double(optarg, &prm.sigma) || !(prm.sigma > 0.0) || isinf(prm.sigma))
                return cli_usage_error(cmd, "--sigma needs a number > 0, got '%s'", optarg);
            have_sigma = true;
            break;
        case 'W':
        case 'H':
            if (!parse_u32(optarg, 1, 1u << 20, c == 'W' ? &prm.width : &prm.height))
                return cli_usage_error(cmd,
                                       "--width and --height need an integer in "
                                       "1..1048576, got '%s'",
                                       optarg);
            break;
        case 'b':
            if (!parse_range(optarg, &prm.birth_min, &prm.birth_max))
                return cli_usage_error(cmd, "--birth-range needs A:B with A < B, got '%s'", optarg);
            have_brange = true;
            break;
        case 'p':
            if (!parse_range(optarg, &prm.pers_min, &prm.pers_max))
                return cli_usage_error(cmd, "--pers-range needs A:B with A < B, got '%s'", optarg);
            have_prange = true;
            break;
        case 'w':
            if (strcmp(optarg, "constant") == 0) {
                prm.weight = TOPOML_WEIGHT_CONSTANT;
            } else if (strcmp(optarg, "linear") == 0) {
                prm.weight = TOPOML_WEIGHT_LINEAR;
                linear_auto = true;
            } else if (strncmp(optarg, "linear:", 7) == 0 &&
                       cli_parse_double(optarg + 7, &prm.weight_max) && prm.weight_max > 0.0 &&
                       isfinite(prm.weight_max)) {
                prm.weight = TOPOML_WEIGHT_LINEAR;
                linear_auto = false;
            } else if (strncmp(optarg, "power:", 6) == 0 &&
                       cli_parse_double(optarg + 6, &prm.weight_power) && prm.weight_power >= 0.0 &&
                       isfinite(prm.weight_power)) {
                prm.weight = TOPOML_WEIGHT_POWER;
            } else {
                return cli_usage_error(cmd, "bad --weight '%s'", optarg);
            }
            break;
        case 'i':
            if (!parse_infinite(optarg, false, &infinite, &prm.clip_death))
                return cli_usage_error(cmd, "--infinite needs drop or clip:V, got '%s'", optarg);
            prm.infinite = (uint32_t)infinite;
            break;
        case 'O':
            if (strcmp(optarg, "csv") == 0)
                style = OUT_CSV;
            else if (strcmp(optarg, "json") == 0)
                style = OUT_JSON;
            else if (strcmp(optarg, "pgm") == 0)
                style = OUT_PGM;
            else
                return cli_usage_error(cmd, "--output needs csv, json or pgm, got '%s'", optarg);
            break;
        case 'o': out_path = optarg; break;
        case 'h': cli_print_help(stdout, &image_help); return 0;
        default: return cli_bad_option(cmd, c, argc, argv);
        }
    }
    if (optind >= argc)
        return cli_usage_error(cmd, "%s", "no diagram file given");
    int rc = env_open(&env, given, cmd);
    if (rc != 0)
        return rc;
    topoml_context *ctx = env.ctx;

    char **files = argv + optind;
    const uint64_t n_images = (uint64_t)(argc - optind);
    rc = 1;
    topoml_diagram **diagrams = calloc(n_images, sizeof(*diagrams));
    uint64_t *offsets = calloc(n_images + 1, sizeof(*offsets));
    topoml_pair *pairs = NULL;
    double *img = NULL;
    FILE *out = NULL;
    if (diagrams == NULL || offsets == NULL) {
        fprintf(stderr, "topoml %s: out of memory\n", cmd);
        goto done;
    }
    for (uint64_t k = 0; k < n_images; k++) {
        if (read_diagram(ctx, files[k], fmt, &diagrams[k]))
            goto done;
        uint64_t n;
        topoml_diagram_pairs(diagrams[k], dim, &n);
        offsets[k + 1] = offsets[k] + n;
    }
    pairs = malloc((offsets[n_images] + 1) * sizeof(*pairs));
    if (pairs == NULL) {
        fprintf(stderr, "topoml %s: out of memory\n", cmd);
        goto done;
    }
    /* The data's extent, after the treatment of infinite deaths, sets the
     * default ranges, sigma and linear ramp. */
    double bmin = INFINITY, bmax = -INFINITY, pmax = 0.0;
    for (uint64_t k = 0; k < n_images; k++) {
        uint64_t n;
        const topoml_pair *p = topoml_diagram_pairs(diagrams[k], dim, &n);
        if (n > 0)
            memcpy(pairs + offsets[k], p, n * sizeof(*p));
        for (uint64_t i = 0; i < n; i++) {
            double d = p[i].death;
            if (isinf(d)) {
                if (prm.infinite == TOPOML_INFINITE_DROP)
                    continue;
                d = prm.clip_death;
            }
            bmin = fmin(bmin, p[i].birth);
            bmax = fmax(bmax, p[i].birth);
            pmax = fmax(pmax, d - p[i].birth);
        }
    }
    if (bmin > bmax)
        bmin = bmax = 0.0;
    if (!have_sigma) {
        double span = fmax(bmax - bmin, pmax);
        prm.sigma = (span > 0.0 ? span : 1.0) / 20.0;
    }
    if (!have_brange) {
        prm.birth_min = bmin - 3.0 * prm.sigma;
        prm.birth_max = bmax + 3.0 * prm.sigma;
    }
    if (!have_prange) {
        prm.pers_min = 0.0;
        prm.pers_max = pmax + 3.0 * prm.sigma;
    }
    if (prm.weight == TOPOML_WEIGHT_LINEAR && linear_auto)
        prm.weight_max = pmax > 0.0 ? pmax : 1.0;

    const size_t pixels = (size_t)prm.width * prm.height;
    if (check_buffers(ctx, (double)pixels * (double)n_images * sizeof(double), "the image buffer"))
        goto done;
    if (pixels > SIZE_MAX / sizeof(double) / n_images) {
        fprintf(stderr, "topoml %s: %llu images of %u x %u pixels are too large\n", cmd,
                (unsigned long long)n_images, prm.width, prm.height);
        goto done;
    }
    img = malloc(pixels * n_images * sizeof(double));
    if (img == NULL) {
        fprintf(stderr, "topoml %s: out of memory for the images\n", cmd);
        goto done;
    }
    int st = topoml_persistence_images(ctx, &prm, n_images, offsets, pairs, img);
    if (st) {
        cli_error(ctx, st);
        goto done;
    }
    if ((out = open_output(cmd, out_path, style == OUT_PGM)) == NULL)
        goto done;
    char a[32];
    switch (style) {
    case OUT_JSON: write_image_json(out, &prm, dim, files, n_images, img); break;
    case OUT_PGM: write_image_pgm(out, &prm, n_images, img); break;
    default:
        for (uint64_t k = 0; k < n_images; k++) {
            for (size_t i = 0; i < pixels; i++)
                fprintf(out, "%s%s", i ? "," : "", fmt_num(a, img[k * pixels + i], false));
            fputc('\n', out);
        }
        break;
    }
    rc = close_output(cmd, out, out_path);
done:
    if (diagrams != NULL)
        for (uint64_t k = 0; k < n_images; k++)
            topoml_diagram_free(diagrams[k]);
    free(diagrams);
    free(offsets);
    free(pairs);
    free(img);
    env_close(&env);
    return rc;
}

/* ------------------------------------------------------------------------
 * topoml features
 * ---------------------------------------------------------------------- */

static const cli_opt_help features_opts[] = {
    {"-d, --dim LIST", "dimensions, e.g. 1 or 0,1 (default: every one in the file)"},
    FORMAT_HELP,
    {"-g, --grid LO:HI:N", "the grid of the curves (default: smallest birth to the largest "
                           "finite value, 100 points)"},
    {"-k, --levels K", "landscape levels (default 3)"},
    {"-q, --degree Q", "degree of total persistence, sum of (death-birth)^Q (default 1)"},
    {"-i, --infinite M", "keep (default), drop, or clip:V. Betti curves and landscapes use "
                         "infinite deaths as they are under keep; entropy and total persistence "
                         "always use only finite pairs, and report how many were left out"},
    {"-O, --output STYLE", "json (default) or csv (dim,feature,level,t,value)"},
    {"-o, --output-file FILE", "write there instead of standard output"},
    COMMON_HELP_OPTS};
static const cli_help features_help =
    CLI_HELP("topoml features [options] DIAGRAM",
             "Betti curves, persistence landscapes, persistent entropy and total persistence\n"
             "of each dimension of a diagram file.",
             features_opts, NULL);

typedef struct dim_features {
    uint32_t dim;
    uint64_t n_pairs, n_infinite;
    uint64_t *betti;
    double *land;
    double entropy, total;
} dim_features;

/* Grid "LO:HI:N". */
static bool parse_grid(const char *s, double *lo, double *hi, uint64_t *n)
{
    char buf[128];
    if (strlen(s) >= sizeof buf)
        return false;
    strcpy(buf, s);
    char *c1 = strchr(buf, ':');
    char *c2 = c1 != NULL ? strchr(c1 + 1, ':') : NULL;
    if (c2 == NULL)
        return false;
    *c1 = *c2 = '\0';
    uint32_t nn;
    if (!cli_parse_double(buf, lo) || !cli_parse_double(c1 + 1, hi) ||
        !parse_u32(c2 + 1, 1, 10000000, &nn) || !isfinite(*lo) || !isfinite(*hi) || *lo > *hi)
        return false;
    *n = nn;
    return true;
}

int topoml_cmd_features(topoml_context *given, int argc, char **argv)
{
    const char *cmd = "features";
    cli_set_command(cmd);
    static const struct option opts[] = {
        {"dim", required_argument, NULL, 'd'},
        {"format", required_argument, NULL, 'f'},
        {"grid", required_argument, NULL, 'g'},
        {"levels", required_argument, NULL, 'k'},
        {"degree", required_argument, NULL, 'q'},
        {"infinite", required_argument, NULL, 'i'},
        {"output", required_argument, NULL, 'O'},
        {"output-file", required_argument, NULL, 'o'},
        CLI_CONTEXT_LONG_OPTS,
        {NULL, 0, NULL, 0},
    };
    uint32_t dims[MAX_DIMS_LISTED], n_dims = 0, levels = 3;
    topoml_diagram_format fmt = TOPOML_DIAGRAM_AUTO;
    bool have_grid = false;
    double glo = 0, ghi = 0, q = 1.0, clip = 0.0;
    uint64_t gn = 100;
    int infinite = -1;
    out_style style = OUT_JSON;
    const char *out_path = NULL;
    cmd_env env = {0};
    int c;
    reset_getopt();
    while ((c = getopt_long(argc, argv, ":d:f:g:k:q:i:O:o:h", opts, NULL)) != -1) {
        int r = cli_common_opt(&env.c, c, cmd);
        if (r == 1)
            continue;
        if (r == 2)
            return 2;
        switch (c) {
        case 'd':
            if (!parse_dims(optarg, dims, &n_dims))
                return cli_usage_error(cmd, "bad --dim '%s'", optarg);
            break;
        case 'f':
            if (!parse_format(optarg, &fmt))
                return cli_usage_error(cmd, "unknown --format '%s'", optarg);
            break;
        case 'g':
            if (!parse_grid(optarg, &glo, &ghi, &gn))
                return cli_usage_error(cmd, "--grid needs LO:HI:N with LO <= HI, N >= 1, got '%s'",
                                       optarg);
            have_grid = true;
            break;
        case 'k':
            if (!parse_u32(optarg, 1, 1000, &levels))
                return cli_usage_error(cmd, "--levels needs an integer in 1..1000, got '%s'",
                                       optarg);
            break;
        case 'q':
            if (!cli_parse_double(optarg, &q) || !(q > 0.0) || isinf(q))
                return cli_usage_error(cmd, "--degree needs a number > 0, got '%s'", optarg);
            break;
        case 'i':
            if (!parse_infinite(optarg, true, &infinite, &clip))
                return cli_usage_error(cmd, "--infinite needs keep, drop or clip:V, got '%s'",
                                       optarg);
            break;
        case 'O':
            if (strcmp(optarg, "json") == 0)
                style = OUT_JSON;
            else if (strcmp(optarg, "csv") == 0)
                style = OUT_CSV;
            else
                return cli_usage_error(cmd, "--output needs json or csv, got '%s'", optarg);
            break;
        case 'o': out_path = optarg; break;
        case 'h': cli_print_help(stdout, &features_help); return 0;
        default: return cli_bad_option(cmd, c, argc, argv);
        }
    }
    if (argc - optind != 1)
        return cli_usage_error(cmd, "%s", "need exactly one diagram file");
    int rc = env_open(&env, given, cmd);
    if (rc != 0)
        return rc;
    topoml_context *ctx = env.ctx;

    topoml_diagram *dg = NULL;
    if (read_diagram(ctx, argv[optind], fmt, &dg)) {
        env_close(&env);
        return 1;
    }
    if (n_dims == 0) {
        n_dims = topoml_diagram_dim_count(dg);
        if (n_dims > MAX_DIMS_LISTED)
            n_dims = MAX_DIMS_LISTED;
        for (uint32_t k = 0; k < n_dims; k++)
            dims[k] = k;
    }

    int st = TOPOML_OK;
    rc = 1;
    double *grid = NULL;
    topoml_pair *work = NULL, *fin = NULL;
    dim_features *res = calloc(n_dims ? n_dims : 1, sizeof(*res));
    FILE *out = NULL;

    /* The default grid spans the selected dimensions' finite values. */
    if (!have_grid) {
        double lo = INFINITY, hi = -INFINITY;
        for (uint32_t k = 0; k < n_dims; k++) {
            uint64_t n;
            const topoml_pair *p = topoml_diagram_pairs(dg, dims[k], &n);
            for (uint64_t i = 0; i < n; i++) {
                lo = fmin(lo, p[i].birth);
                hi = fmax(hi, isinf(p[i].death) ? p[i].birth : p[i].death);
            }
        }
        if (infinite == TOPOML_INFINITE_CLIP && lo <= hi)
            hi = fmax(hi, clip);
        if (lo > hi)
            lo = 0.0, hi = 1.0;
        if (lo == hi)
            hi = lo + 1.0;
        glo = lo;
        ghi = hi;
    }
    /* The grid, and per dimension its Betti curve and landscapes. */
    if (check_buffers(ctx, (double)gn * sizeof(double) * (1.0 + n_dims * (1.0 + levels)),
                      "the buffer of the grid, Betti curves and landscapes"))
        goto done;
    grid = malloc(gn * sizeof(double));
    if (res == NULL || grid == NULL) {
        fprintf(stderr, "topoml %s: out of memory\n", cmd);
        goto done;
    }
    if ((st = topoml_grid(ctx, glo, ghi, gn, grid)))
        goto lib_fail;

    for (uint32_t k = 0; k < n_dims; k++) {
        dim_features *r = &res[k];
        uint64_t n, n_work, n_fin;
        const topoml_pair *p = topoml_diagram_pairs(dg, dims[k], &n);
        r->dim = dims[k];
        r->n_pairs = n;
        free(work);
        free(fin);
        work = malloc((n + 1) * sizeof(*work));
        fin = malloc((n + 1) * sizeof(*fin));
        r->betti = malloc(gn * sizeof(uint64_t));
        r->land = malloc((size_t)levels * gn * sizeof(double));
        if (work == NULL || fin == NULL || r->betti == NULL || r->land == NULL) {
            fprintf(stderr, "topoml %s: out of memory\n", cmd);
            goto done;
        }
        if (infinite < 0) {
            if (n > 0)
                memcpy(work, p, n * sizeof(*p));
            n_work = n;
        } else if ((st = topoml_pairs_finite(ctx, p, n, (uint32_t)infinite, clip, work, &n_work))) {
            goto lib_fail;
        }
        if ((st = topoml_pairs_finite(ctx, work, n_work, TOPOML_INFINITE_DROP, 0.0, fin, &n_fin)))
            goto lib_fail;
        r->n_infinite = n_work - n_fin;
        if ((st = topoml_betti_curve(ctx, work, n_work, grid, gn, r->betti)) ||
            (st = topoml_landscapes(ctx, work, n_work, levels, grid, gn, r->land)) ||
            (st = topoml_persistent_entropy(ctx, fin, n_fin, &r->entropy)) ||
            (st = topoml_total_persistence(ctx, fin, n_fin, q, &r->total)))
            goto lib_fail;
    }

    if ((out = open_output(cmd, out_path, false)) == NULL)
        goto done;
    char a[32], b[32];
    if (style == OUT_JSON) {
        fprintf(out, "{\"levels\":%u,\"degree\":%s,\"grid\":[", levels, fmt_num(a, q, true));
        for (uint64_t i = 0; i < gn; i++)
            fprintf(out, "%s%s", i ? "," : "", fmt_num(a, grid[i], true));
        fputs("],\"dims\":[", out);
        for (uint32_t k = 0; k < n_dims; k++) {
            dim_features *r = &res[k];
            fprintf(out, "%s\n{\"dim\":%u,\"n_pairs\":%llu,\"n_infinite\":%llu,", k ? "," : "",
                    r->dim, (unsigned long long)r->n_pairs, (unsigned long long)r->n_infinite);
            fprintf(out, "\"entropy\":%s,\"total_persistence\":%s,\n \"betti\":[",
                    fmt_num(a, r->entropy, true), fmt_num(b, r->total, true));
            for (uint64_t i = 0; i < gn; i++)
                fprintf(out, "%s%llu", i ? "," : "", (unsigned long long)r->betti[i]);
            fputs("],\n \"landscapes\":[", out);
            for (uint32_t l = 0; l < levels; l++) {
                fputs(l ? ",\n  [" : "\n  [", out);
                for (uint64_t i = 0; i < gn; i++)
                    fprintf(out, "%s%s", i ? "," : "", fmt_num(a, r->land[l * gn + i], true));
                fputc(']', out);
            }
            fputs("]}", out);
        }
        fputs("\n]}\n", out);
    } else {
        fputs("dim,feature,level,t,value\n", out);
        for (uint32_t k = 0; k < n_dims; k++) {
            dim_features *r = &res[k];
            for (uint64_t i = 0; i < gn; i++)
                fprintf(out, "%u,betti,,%s,%llu\n", r->dim, fmt_num(a, grid[i], false),
                        (unsigned long long)r->betti[i]);
            for (uint32_t l = 0; l < levels; l++)
                for (uint64_t i = 0; i < gn; i++)
                    fprintf(out, "%u,landscape,%u,%s,%s\n", r->dim, l + 1,
                            fmt_num(a, grid[i], false), fmt_num(b, r->land[l * gn + i], false));
            fprintf(out, "%u,entropy,,,%s\n", r->dim, fmt_num(a, r->entropy, false));
            fprintf(out, "%u,total_persistence,,,%s\n", r->dim, fmt_num(a, r->total, false));
        }
    }
    rc = close_output(cmd, out, out_path);
    goto done;
lib_fail:
    cli_error(ctx, st);
done:
    if (res != NULL)
        for (uint32_t k = 0; k < n_dims; k++) {
            free(res[k].betti);
            free(res[k].land);
        }
    free(res);
    free(grid);
    free(work);
    free(fin);
    topoml_diagram_free(dg);
    env_close(&env);
    return rc;
}

/* ------------------------------------------------------------------------
 * topoml compare
 * ---------------------------------------------------------------------- */

static const cli_opt_help compare_opts[] = {
    {"-d, --dim LIST", "dimensions, e.g. 1 or 0,1 (default: every one in either file)"},
    FORMAT_HELP,
    {"-m, --metric M", "bottleneck, wasserstein or both (default both)"},
    {"-p, --order Q", "Wasserstein order, 1 <= Q < inf (default 1)"},
    {"-P, --internal-p P", "Wasserstein ground metric L^P, P >= 1 or inf (default inf, as "
                           "GUDHI)"},
    {"-O, --output STYLE", "text (default), json or csv"},
    {"-o, --output-file FILE", "write there instead of standard output"},
    COMMON_HELP_OPTS};
static const cli_help compare_help = CLI_HELP(
    "topoml compare [options] A B",
    "Bottleneck and Wasserstein distances between the diagrams in files A and B,\n"
    "dimension by dimension (a dimension missing from one file counts as empty).",
    compare_opts,
    "Infinite points match only infinite points; when their numbers differ the\n"
    "distance is inf (null in JSON). Bars cut off by the threshold of `topoml\n"
    "barcode` (\"cut\" in its CSV, \"cut_off\" in its JSON) match only cut-off bars,\n"
    "essential bars only essential ones; where a cut-off bar meets an essential one\n"
    "a note says so (JSON: \"note\"; CSV: on stderr).\n");

/* The infinite deaths of one dimension of the two diagrams: cut off by the
 * threshold (alive at it) or essential. */
typedef struct infinite_counts {
    uint64_t cut[2], ess[2];
} infinite_counts;

/* A cut-off bar has no partner of its kind on the other side: it would
 * have been matched with an essential one before they were told apart. */
static bool cut_against_essential(const infinite_counts *c)
{
    return (c->cut[0] != c->cut[1] || c->ess[0] != c->ess[1]) &&
           c->cut[0] + c->ess[0] == c->cut[1] + c->ess[1];
}

static const char *cut_note(char *buf, size_t size, const infinite_counts *c,
                            const topoml_diagram *da, const topoml_diagram *db)
{
    char ta[32], tb[32];
    snprintf(buf, size,
             "bars cut off by the threshold: A %llu (threshold %s), B %llu (threshold %s); "
             "essential bars: A %llu, B %llu; a cut-off bar is not matched with an essential "
             "one, so the distance is inf",
             (unsigned long long)c->cut[0], fmt_num(ta, topoml_diagram_threshold(da), false),
             (unsigned long long)c->cut[1], fmt_num(tb, topoml_diagram_threshold(db), false),
             (unsigned long long)c->ess[0], (unsigned long long)c->ess[1]);
    return buf;
}

/* The distances of one dimension. Infinite points are matched only with
 * their own kind (features.h): cut-off bars with cut-off bars, essential
 * with essential. So the diagram is split: the finite and cut-off pairs are
 * compared together (cut-off ones as infinite points, matched by birth),
 * the essential ones apart, and the two parts combined as the distances
 * combine over disjoint parts of a matching: the larger bottleneck, the
 * q-th root of the sum of the q-th powers. Without cut-off bars the
 * diagrams are compared whole, as before. */
static int compare_dim(topoml_context *ctx, const topoml_diagram *da, const topoml_diagram *db,
                       uint32_t dim, bool do_b, bool do_w, double order, double internal_p,
                       double *bott, double *wass, infinite_counts *cnt)
{
    const topoml_diagram *dg[2] = {da, db};
    const topoml_pair *p[2];
    uint64_t n[2];
    memset(cnt, 0, sizeof *cnt);
    for (int s = 0; s < 2; s++) {
        p[s] = topoml_diagram_pairs(dg[s], dim, &n[s]);
        for (uint64_t i = 0; i < n[s]; i++)
            if (topoml_diagram_cut_off(dg[s], dim, i) == 1)
                cnt->cut[s]++;
            else if (isinf(p[s][i].death))
                cnt->ess[s]++;
    }
    int st = TOPOML_OK;
    if (cnt->cut[0] + cnt->cut[1] == 0) {
        if (do_b)
            st = topoml_bottleneck_distance(ctx, p[0], n[0], p[1], n[1], bott);
        if (do_w && st == TOPOML_OK)
            st = topoml_wasserstein_distance(ctx, p[0], n[0], p[1], n[1], order, internal_p, wass);
        return st;
    }
    topoml_pair *part[2][2] = {{NULL, NULL}, {NULL, NULL}}; /* [side][0 rest, 1 essential] */
    uint64_t m[2][2] = {{0, 0}, {0, 0}};
    for (int s = 0; s < 2 && st == TOPOML_OK; s++) {
        part[s][0] = malloc((n[s] + 1) * sizeof(topoml_pair));
        part[s][1] = malloc((n[s] + 1) * sizeof(topoml_pair));
        if (part[s][0] == NULL || part[s][1] == NULL) {
            st = TOPOML_E_NOMEM;
            break;
        }
        for (uint64_t i = 0; i < n[s]; i++) {
            int e = isinf(p[s][i].death) && topoml_diagram_cut_off(dg[s], dim, i) != 1;
            part[s][e][m[s][e]++] = p[s][i];
        }
    }
    double b[2] = {0, 0}, w[2] = {0, 0};
    for (int e = 0; e < 2 && st == TOPOML_OK; e++) {
        if (do_b)
            st = topoml_bottleneck_distance(ctx, part[0][e], m[0][e], part[1][e], m[1][e], &b[e]);
        if (do_w && st == TOPOML_OK)
            st = topoml_wasserstein_distance(ctx, part[0][e], m[0][e], part[1][e], m[1][e], order,
                                             internal_p, &w[e]);
    }
    if (st == TOPOML_OK) {
        *bott = fmax(b[0], b[1]);
        *wass = isinf(w[0]) || isinf(w[1]) ? INFINITY
                                           : pow(pow(w[0], order) + pow(w[1], order), 1.0 / order);
        if (w[1] == 0.0)
            *wass = w[0];
    }
    for (int s = 0; s < 2; s++) {
        free(part[s][0]);
        free(part[s][1]);
    }
    return st;
}

int topoml_cmd_compare(topoml_context *given, int argc, char **argv)
{
    const char *cmd = "compare";
    cli_set_command(cmd);
    static const struct option opts[] = {
        {"dim", required_argument, NULL, 'd'},
        {"format", required_argument, NULL, 'f'},
        {"metric", required_argument, NULL, 'm'},
        {"order", required_argument, NULL, 'p'},
        {"internal-p", required_argument, NULL, 'P'},
        {"output", required_argument, NULL, 'O'},
        {"output-file", required_argument, NULL, 'o'},
        CLI_CONTEXT_LONG_OPTS,
        {NULL, 0, NULL, 0},
    };
    uint32_t dims[MAX_DIMS_LISTED], n_dims = 0;
    topoml_diagram_format fmt = TOPOML_DIAGRAM_AUTO;
    bool do_b = true, do_w = true;
    double order = 1.0, internal_p = INFINITY;
    out_style style = OUT_TEXT;
    const char *out_path = NULL;
    cmd_env env = {0};
    int c;
    reset_getopt();
    while ((c = getopt_long(argc, argv, ":d:f:m:p:P:O:o:h", opts, NULL)) != -1) {
        int r = cli_common_opt(&env.c, c, cmd);
        if (r == 1)
            continue;
        if (r == 2)
            return 2;
        switch (c) {
        case 'd':
            if (!parse_dims(optarg, dims, &n_dims))
                return cli_usage_error(cmd, "bad --dim '%s'", optarg);
            break;
        case 'f':
            if (!parse_format(optarg, &fmt))
                return cli_usage_error(cmd, "unknown --format '%s'", optarg);
            break;
        case 'm':
            do_b = strcmp(optarg, "bottleneck") == 0 || strcmp(optarg, "both") == 0;
            do_w = strcmp(optarg, "wasserstein") == 0 || strcmp(optarg, "both") == 0;
            if (!do_b && !do_w)
                return cli_usage_error(cmd, "%s", "--metric needs bottleneck, wasserstein or both");
            break;
        case 'p':
            if (!cli_parse_double(optarg, &order) || !(order >= 1.0) || isinf(order))
                return cli_usage_error(cmd, "--order needs a number >= 1, got '%s'", optarg);
            break;
        case 'P':
            if (!cli_parse_double(optarg, &internal_p) || !(internal_p >= 1.0))
                return cli_usage_error(cmd, "--internal-p needs a number >= 1 or inf, got '%s'",
                                       optarg);
            break;
        case 'O':
            if (strcmp(optarg, "text") == 0)
                style = OUT_TEXT;
            else if (strcmp(optarg, "json") == 0)
                style = OUT_JSON;
            else if (strcmp(optarg, "csv") == 0)
                style = OUT_CSV;
            else
                return cli_usage_error(cmd, "--output needs text, json or csv, got '%s'", optarg);
            break;
        case 'o': out_path = optarg; break;
        case 'h': cli_print_help(stdout, &compare_help); return 0;
        default: return cli_bad_option(cmd, c, argc, argv);
        }
    }
    if (argc - optind != 2)
        return cli_usage_error(cmd, "%s", "need two diagram files");
    int rc = env_open(&env, given, cmd);
    if (rc != 0)
        return rc;
    topoml_context *ctx = env.ctx;

    topoml_diagram *da = NULL, *db = NULL;
    if (read_diagram(ctx, argv[optind], fmt, &da) ||
        read_diagram(ctx, argv[optind + 1], fmt, &db)) {
        topoml_diagram_free(da);
        env_close(&env);
        return 1;
    }
    if (n_dims == 0) {
        uint32_t na = topoml_diagram_dim_count(da), nb = topoml_diagram_dim_count(db);
        n_dims = na > nb ? na : nb;
        if (n_dims > MAX_DIMS_LISTED)
            n_dims = MAX_DIMS_LISTED;
        for (uint32_t k = 0; k < n_dims; k++)
            dims[k] = k;
    }
    double bott[MAX_DIMS_LISTED], wass[MAX_DIMS_LISTED];
    infinite_counts cnt[MAX_DIMS_LISTED];
    int st = TOPOML_OK;
    rc = 1;
    for (uint32_t k = 0; k < n_dims && st == TOPOML_OK; k++)
        st = compare_dim(ctx, da, db, dims[k], do_b, do_w, order, internal_p, &bott[k], &wass[k],
                         &cnt[k]);
    FILE *out = NULL;
    if (st) {
        cli_error(ctx, st);
    } else if ((out = open_output(cmd, out_path, false)) != NULL) {
        char a[32], b[32];
        if (style == OUT_JSON) {
            fprintf(out, "{\"order\":%s,", fmt_num(a, order, true));
            fprintf(out, "\"internal_p\":%s,\"dims\":[", fmt_num(a, internal_p, true));
            for (uint32_t k = 0; k < n_dims; k++) {
                const infinite_counts *ic = &cnt[k];
                fprintf(out, "%s\n{\"dim\":%u", k ? "," : "", dims[k]);
                if (do_b)
                    fprintf(out, ",\"bottleneck\":%s", fmt_num(a, bott[k], true));
                if (do_w)
                    fprintf(out, ",\"wasserstein\":%s", fmt_num(a, wass[k], true));
                fprintf(out, ",\"cut_off\":[%llu,%llu],\"essential\":[%llu,%llu]",
                        (unsigned long long)ic->cut[0], (unsigned long long)ic->cut[1],
                        (unsigned long long)ic->ess[0], (unsigned long long)ic->ess[1]);
                if (cut_against_essential(ic)) {
                    char note[256];
                    fputs(",\"note\":", out);
                    json_string(out, cut_note(note, sizeof note, ic, da, db));
                }
                fputc('}', out);
            }
            fputs("\n]}\n", out);
        } else if (style == OUT_CSV) {
            fprintf(out, "dim%s%s\n", do_b ? ",bottleneck" : "", do_w ? ",wasserstein" : "");
            for (uint32_t k = 0; k < n_dims; k++) {
                fprintf(out, "%u", dims[k]);
                if (do_b)
                    fprintf(out, ",%s", fmt_num(a, bott[k], false));
                if (do_w)
                    fprintf(out, ",%s", fmt_num(a, wass[k], false));
                fputc('\n', out);
            }
        } else {
            fprintf(out, "%-5s", "dim");
            if (do_b)
                fprintf(out, " %-24s", "bottleneck");
            if (do_w) {
                char head[64];
                snprintf(head, sizeof head, "wasserstein(q=%s,p=%s)", fmt_num(a, order, false),
                         fmt_num(b, internal_p, false));
                fprintf(out, " %s", head);
            }
            fputc('\n', out);
            for (uint32_t k = 0; k < n_dims; k++) {
                fprintf(out, "%-5u", dims[k]);
                if (do_b)
                    fprintf(out, " %-24s", fmt_num(a, bott[k], false));
                if (do_w)
                    fprintf(out, " %s", fmt_num(a, wass[k], false));
                fputc('\n', out);
            }
        }
        /* Text and CSV: what a cut-off bar met, said under the table
         * (text) or on stderr (CSV, whose rows stay plain). */
        for (uint32_t k = 0; k < n_dims; k++)
            if (cut_against_essential(&cnt[k])) {
                char note[256];
                cut_note(note, sizeof note, &cnt[k], da, db);
                if (style == OUT_TEXT)
                    fprintf(out, "dim %u: %s\n", dims[k], note);
                else if (style == OUT_CSV)
                    fprintf(stderr, "topoml %s: dim %u: %s\n", cmd, dims[k], note);
            }
        rc = close_output(cmd, out, out_path);
    }
    topoml_diagram_free(da);
    topoml_diagram_free(db);
    env_close(&env);
    return rc;
}

/* ------------------------------------------------------------------------
 * topoml plot
 * ---------------------------------------------------------------------- */

static const cli_opt_help plot_opts[] = {
    {"-k, --kind K", "diagram (default) or barcode"},
    {"-d, --dim LIST", "dimensions, e.g. 1 or 0,1 (default: every non-empty one); a dimension "
                       "the file does not have is an error"},
    FORMAT_HELP,
    {"-t, --title TEXT", "a title above the plot"},
    {"-s, --size WxH", "size in pixels (default 440x440 for a diagram; 640 wide and as tall as "
                       "the bars need for a barcode)"},
    {"-o, --output-file FILE", "write there instead of standard output"},
    COMMON_HELP_OPTS};
static const cli_help plot_help = CLI_HELP(
    "topoml plot [options] DIAGRAM",
    "Draw a persistence diagram or a barcode as SVG: one colour per dimension with\n"
    "a legend, the diagonal, infinite deaths on a line marked inf at the top, bars\n"
    "cut off by the threshold of `topoml barcode` on a line at the threshold.",
    plot_opts, NULL);

int topoml_cmd_plot(topoml_context *given, int argc, char **argv)
{
    const char *cmd = "plot";
    cli_set_command(cmd);
    static const struct option opts[] = {
        {"kind", required_argument, NULL, 'k'},
        {"dim", required_argument, NULL, 'd'},
        {"format", required_argument, NULL, 'f'},
        {"title", required_argument, NULL, 't'},
        {"size", required_argument, NULL, 's'},
        {"output-file", required_argument, NULL, 'o'},
        CLI_CONTEXT_LONG_OPTS,
        {NULL, 0, NULL, 0},
    };
    uint32_t dims[MAX_DIMS_LISTED], n_dims = 0;
    topoml_diagram_format fmt = TOPOML_DIAGRAM_AUTO;
    plot_spec spec = {PLOT_DIAGRAM, NULL, 0, NULL, 0, 0, INFINITY};
    const char *out_path = NULL;
    cmd_env env = {0};
    int c;
    reset_getopt();
    while ((c = getopt_long(argc, argv, ":k:d:f:t:s:o:h", opts, NULL)) != -1) {
        int r = cli_common_opt(&env.c, c, cmd);
        if (r == 1)
            continue;
        if (r == 2)
            return 2;
        switch (c) {
        case 'k':
            if (strcmp(optarg, "diagram") == 0)
                spec.kind = PLOT_DIAGRAM;
            else if (strcmp(optarg, "barcode") == 0)
                spec.kind = PLOT_BARCODE;
            else
                return cli_usage_error(cmd, "--kind needs diagram or barcode, got '%s'", optarg);
            break;
        case 'd':
            if (!parse_dims(optarg, dims, &n_dims))
                return cli_usage_error(cmd, "bad --dim '%s'", optarg);
            break;
        case 'f':
            if (!parse_format(optarg, &fmt))
                return cli_usage_error(cmd, "unknown --format '%s'", optarg);
            break;
        case 't': spec.title = optarg; break;
        case 's': {
            uint32_t w, h;
            char buf[64];
            char *x = strchr(optarg, 'x');
            if (x == NULL || (size_t)(x - optarg) >= sizeof buf)
                return cli_usage_error(cmd, "--size needs WxH, got '%s'", optarg);
            memcpy(buf, optarg, (size_t)(x - optarg));
            buf[x - optarg] = '\0';
            if (!parse_u32(buf, 100, 10000, &w) || !parse_u32(x + 1, 100, 10000, &h))
                return cli_usage_error(cmd, "--size needs WxH, each in 100..10000, got '%s'",
                                       optarg);
            spec.width = w;
            spec.height = h;
            break;
        }
        case 'o': out_path = optarg; break;
        case 'h': cli_print_help(stdout, &plot_help); return 0;
        default: return cli_bad_option(cmd, c, argc, argv);
        }
    }
    if (argc - optind != 1)
        return cli_usage_error(cmd, "%s", "need exactly one diagram file");
    int rc = env_open(&env, given, cmd);
    if (rc != 0)
        return rc;

    topoml_diagram *dg = NULL;
    if (read_diagram(env.ctx, argv[optind], fmt, &dg)) {
        env_close(&env);
        return 1;
    }
    const uint32_t present = topoml_diagram_dim_count(dg);
    if (n_dims == 0) {
        /* By default every dimension that has something to draw. */
        for (uint32_t k = 0; k < present && n_dims < MAX_DIMS_LISTED; k++) {
            uint64_t n;
            topoml_diagram_pairs(dg, k, &n);
            if (n > 0)
                dims[n_dims++] = k;
        }
    }
    /* A dimension the file does not have is a mistake (a typo, the wrong
     * file), not an empty plot. */
    for (uint32_t k = 0; k < n_dims; k++)
        if (dims[k] >= present) {
            char have[48] = "none";
            if (present > 0)
                snprintf(have, sizeof have, "%s%u", present > 1 ? "0.." : "", present - 1);
            cli_file_error(cmd, argv[optind], "no dimension %u in this diagram (it has %s)",
                           dims[k], have);
            topoml_diagram_free(dg);
            env_close(&env);
            return 1;
        }
    plot_series series[MAX_DIMS_LISTED];
    bool *cut = NULL;
    uint64_t n_all = 0;
    for (uint32_t k = 0; k < n_dims; k++) {
        series[k].dim = dims[k];
        series[k].pairs = topoml_diagram_pairs(dg, dims[k], &series[k].n);
        series[k].cut = NULL;
        n_all += series[k].n;
    }
    rc = 1;
    /* Which pairs the threshold cut off (topoml barcode's JSON and CSV say). */
    FILE *out = NULL;
    if (n_all > 0 && (cut = malloc(n_all * sizeof(*cut))) == NULL) {
        cli_file_error(cmd, NULL, "%s", "out of memory");
    } else {
        uint64_t at = 0;
        for (uint32_t k = 0; k < n_dims; k++) {
            series[k].cut = series[k].n > 0 ? cut + at : NULL;
            for (uint64_t i = 0; i < series[k].n; i++)
                cut[at++] = topoml_diagram_cut_off(dg, dims[k], i) == 1;
        }
        spec.threshold = topoml_diagram_threshold(dg);
        spec.series = series;
        spec.n_series = n_dims;
        out = open_output(cmd, out_path, false);
    }
    if (out != NULL) {
        plot_svg_write(out, &spec);
        rc = close_output(cmd, out, out_path);
    }
    free(cut);
    topoml_diagram_free(dg);
    env_close(&env);
    return rc;
}

/* Entries of the `topoml` dispatch table (tools/cli/cli.h): each command opens
 * its own context from its options. */
int cli_cmd_image(int argc, char **argv)
{
    return topoml_cmd_image(NULL, argc, argv);
}

int cli_cmd_features(int argc, char **argv)
{
    return topoml_cmd_features(NULL, argc, argv);
}

int cli_cmd_compare(int argc, char **argv)
{
    return topoml_cmd_compare(NULL, argc, argv);
}

int cli_cmd_plot(int argc, char **argv)
{
    return topoml_cmd_plot(NULL, argc, argv);
}
