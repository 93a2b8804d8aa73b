/*
 * topoml_conformance.c — `topoml-conformance`: runs the conformance suite
 * (conformance/cases.yaml) on backend plugins and says, per plugin and per
 * case, whether its answers match the scalar reference; with --certify it
 * writes the certificates the gate reads.
 *
 * Exit status: 0 when every case of every plugin is PASS, NOT_SUPPORTED or
 * QUALITY_WARNING; 1 otherwise (or when the run cannot be made); 2 on bad
 * usage. docs/conformance.md is the manual.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "cli_help.h"
#include "conformance.h"
/* Internal (core/src/): the runner writes the certificates the gate reads
 * (gate/certificate.h, bound to the plugin file's SHA-256) and lists plugin
 * files as the loader would, without loading them (gate_internal.h). */
#include "api/api.h"
#include "gate/certificate.h"
#include "gate/gate_internal.h"
#include "gate/sha256.h"

/* The options, their help and their parsing in one table (cli_help.h, the
 * layout `topoml` uses too). */
enum {
    O_BACKEND = 256,
    O_PLUGIN,
    O_TIER,
    O_CASE,
    O_LIST,
    O_JSON,
    O_JUNIT,
    O_CERTIFY,
    O_CACHE,
    O_TIMEOUT,
    O_FAILFAST,
    O_CASES,
    O_CONFIG,
    O_QUIET,
    O_VERBOSE,
    O_VERSION,
    O_SEED,
    O_PROGRESS,
    O_PER_CASE
};

static const cli_opt_help options[] = {
    {"--backend NAME", "a plugin found in the search path, by backend name", O_BACKEND},
    {"--plugin PATH", "a plugin file (need not be in the search path)", O_PLUGIN},
    {"--tier T", "quick (seconds per plugin, the default) or full (minutes)", O_TIER},
    {"--case GLOB", "only cases whose name matches (repeatable; not with --certify)", O_CASE},
    {"--list", "list the selected cases and exit", O_LIST},
    {"--json FILE", "write the results as JSON ('-' for stdout)", O_JSON},
    {"--junit FILE", "write the results as JUnit XML", O_JUNIT},
    {"--certify", "write a certificate per plugin into the cache folder", O_CERTIFY},
    {"--cache-dir DIR", "the cache folder (default: config cache_dir, else "
                        "$XDG_CACHE_HOME/topoml, else ~/.cache/topoml)", O_CACHE},
    {"--timeout S", "seconds each case may take (default 10 in the quick tier, 60 in the full "
                    "tier)", O_TIMEOUT},
    {"--fail-fast", "stop testing a plugin at its first failing case", O_FAILFAST},
    {"--seed N", "the seed of the cases generated from the plugins' capability records "
                 "(default: a fresh one each run, shown in the report)", O_SEED},
    {"--cases FILE", "another case list (not with --certify)", O_CASES},
    {"--config FILE", "topoml configuration (plugin_paths, cache_dir)", O_CONFIG},
    {"--quiet", "no table on stdout", O_QUIET},
    {"--progress", "a line 'progress DONE TOTAL CASE' on stderr per case (for the gate, "
                   "which logs them while a host waits)", O_PROGRESS},
    {"--process-per-case", "a new process for each case (default: one process per plugin runs "
                           "its cases one after another, a new one after a case that crashes "
                           "or times out)", O_PER_CASE},
    {"--verbose", "show the plugins' log messages on stderr", O_VERBOSE},
    {"--version", "print the version and exit", O_VERSION},
    CLI_HELP_HELP};
static const cli_help help = CLI_HELP(
    "topoml-conformance [--backend NAME | --plugin PATH]... [options]",
    "Run the conformance suite on backend plugins and compare every answer with the\n"
    "scalar reference. Without --backend/--plugin: every plugin topoml finds.",
    options,
    "Exit status: 0 every case PASS, NOT_SUPPORTED or QUALITY_WARNING; 1 otherwise;\n"
    "2 bad usage.\n");

/* A report file (--json, --junit) must be writable before the suite runs,
 * not after minutes of work: its folder must exist and take new files. "-"
 * is standard output. Returns 0, or 2 (bad usage) after saying why. */
static int check_report_path(const char *option, const char *path)
{
    if (!path || !strcmp(path, "-"))
        return 0;
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if ((size_t)(slash - path) >= sizeof dir) {
        fprintf(stderr, "topoml-conformance: %s %s: path too long\n", option, path);
        return 2;
    } else
        snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    if (access(dir, W_OK | X_OK) != 0) {
        fprintf(stderr, "topoml-conformance: %s %s: cannot write into folder %s: %s\n", option,
                path, dir, strerror(errno));
        return 2;
    }
    return 0;
}

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "topoml-conformance: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nTry 'topoml-conformance --help'.\n");
    return 2;
}

typedef struct strvec {
    char **items;
    size_t count;
} strvec;

static bool push(strvec *v, const char *s)
{
    char **g = realloc(v->items, (v->count + 1) * sizeof *g);
    if (!g)
        return false;
    v->items = g;
    v->items[v->count] = strdup(s);
    return v->items[v->count++] != NULL;
}

static void strvec_free(strvec *v)
{
    for (size_t i = 0; i < v->count; i++)
        free(v->items[i]);
    free(v->items);
}

static void found_file(topoml_context *ctx, const char *path, void *user)
{
    (void)ctx;
    push(user, path);
}

/* The case list this binary was built with: the source tree's when it runs
 * from the build tree, else the installed one next to it, else the
 * configured install prefix's. */
static bool default_cases(char *out, size_t size)
{
    if (tm_in_build_tree() &&
        (size_t)snprintf(out, size, "%s/cases.yaml", TOPOML_CONFORMANCE_SOURCE_DIR) < size &&
        access(out, R_OK) == 0)
        return true;
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        if (slash) {
            *slash = '\0';
            if ((size_t)snprintf(out, size, "%s/../share/topoml/conformance/cases.yaml", self) <
                    size &&
                access(out, R_OK) == 0)
                return true;
        }
    }
    return (size_t)snprintf(out, size, "%s/cases.yaml", TOPOML_CONFORMANCE_INSTALL_DIR) < size &&
           access(out, R_OK) == 0;
}

/* Write the certificate of one plugin; returns its path (malloc) or NULL
 * with the reason on stderr. */
static char *certify(topoml_context *cfg, const tc_run *run, const tc_plugin *p,
                     const char *json_path)
{
    if (!p->loaded) {
        fprintf(stderr, "topoml-conformance: %s: not certified: it could not be loaded\n", p->path);
        return NULL;
    }
    if (p->probe_status != TOPOML_OK) {
        fprintf(stderr, "topoml-conformance: %s: not certified: hardware absent (%s)\n", p->path,
                p->probe_message);
        return NULL;
    }
    char dir[4096], file[4400], why[512];
    if (tm_cache_dir(cfg, true, dir, sizeof dir) != TOPOML_OK) {
        fprintf(stderr, "topoml-conformance: not certified: %s\n", topoml_errmsg(cfg));
        return NULL;
    }
    tm_cert c;
    if (tm_cert_describe(&c, p->path, p->name, p->abi_version, p->caps, p->n_caps) != 0) {
        fprintf(stderr, "topoml-conformance: %s: not certified: cannot read it\n", p->path);
        return NULL;
    }
    if (strcmp(c.file_sha256, p->file_sha256) != 0) {
        fprintf(stderr, "topoml-conformance: %s: not certified: the file changed during the run\n",
                p->path);
        return NULL;
    }
    size_t counts[TC_RESULT_COUNT];
    tc_result worst = tc_plugin_verdict(run, p, counts);
    snprintf(c.tier, sizeof c.tier, "%s", tc_tier_name(run->tier));
    snprintf(c.verdict, sizeof c.verdict, "%s", tc_result_ok(worst) ? "pass" : "fail");
    tc_summary(counts, c.summary, sizeof c.summary);
    if (p->n_run < run->n_cases) {
        size_t len = strlen(c.summary);
        snprintf(c.summary + len, sizeof c.summary - len, " (stopped at the first failure)");
    }
    /* A refusal names the first case that failed and how (the gate shows
     * the summary as its reason). */
    for (size_t k = 0; k < p->n_run && k < run->n_cases; k++) {
        const tc_verdict *v = &p->verdicts[k];
        if (tc_result_ok(v->result))
            continue;
        size_t len = strlen(c.summary);
        char detail[sizeof v->detail];
        snprintf(detail, sizeof detail, "%s", v->detail);
        for (char *q = detail; *q; q++)
            if (*q == '\n' || *q == '\r')
                *q = ' ';
        snprintf(c.summary + len, sizeof c.summary - len, "; first failing case %s (%s): %s",
                 run->cases[k]->name, tc_result_name(v->result), detail);
        break;
    }
    snprintf(c.date, sizeof c.date, "%s", run->date);
    snprintf(c.seed, sizeof c.seed, "%llu", (unsigned long long)run->seed);
    if (json_path && strcmp(json_path, "-") != 0) {
        char real[PATH_MAX];
        snprintf(c.report, sizeof c.report, "%.1000s",
                 realpath(json_path, real) ? real : json_path);
    }
    if (!tm_cert_file_for(dir, p->path, p->file_sha256, ".cert", file, sizeof file) ||
        tm_cert_store(file, &c, why, sizeof why) != TOPOML_OK) {
        fprintf(stderr, "topoml-conformance: %s: not certified: %s\n", p->path, why);
        return NULL;
    }
    return strdup(file);
}

/* The long-lived checks (run.cases[k]): one process per plugin making
 * repeated calls over a few small cases of every op: quick cases (fixed,
 * then generated) whose inputs a generator makes with 2 to 70 points, two
 * per op. */
static void long_lived(tc_run *run, size_t k, topoml_context *ref, const tc_suite *suite,
                       const tc_case *generated, size_t n_generated, double timeout,
                       bool verbose, bool fail_fast)
{
    enum { PER_OP = 2 };
    const tc_case *pick[TOPOML_OP_COUNT * PER_OP];
    tc_input inputs[TOPOML_OP_COUNT * PER_OP];
    tc_reference refs[TOPOML_OP_COUNT * PER_OP];
    size_t n = 0, per_op[TOPOML_OP_COUNT] = {0};
    char err[1024];
    err[0] = '\0';
    (void)k;
    for (size_t q = 0; q < suite->n_cases + n_generated; q++) {
        const tc_case *c = q < suite->n_cases ? &suite->cases[q] : &generated[q - suite->n_cases];
        if (c->tier != TC_TIER_QUICK || c->op >= TOPOML_OP_COUNT || per_op[c->op] == PER_OP || c->n < 2 || c->n > 70 ||
            !strcmp(c->generator, "file") || c->max_dim > 2)
            continue;
        if (!tc_input_make(ref, suite, c, &inputs[n], err, sizeof err))
            break;
        if (!tc_reference_make(ref, c, &inputs[n], &refs[n], err, sizeof err)) {
            tc_input_free(&inputs[n]);
            break;
        }
        pick[n++] = c;
        per_op[c->op]++;
    }
    for (size_t i = 0; i < run->n_plugins; i++) {
        tc_plugin *p = &run->plugins[i];
        tc_verdict *v = &p->verdicts[k];
        if (p->stopped)
            continue;
        if (err[0]) {
            v->result = TC_FAIL;
            snprintf(v->detail, sizeof v->detail, "%.500s", err);
        } else {
            /* The whole process gets the time of a few cases. */
            tc_plugin_soak(p, ref, pick, inputs, refs, n, 3 * timeout, verbose, v);
        }
        p->n_run = k + 1;
        p->stopped = fail_fast && !tc_result_ok(v->result);
    }
    for (size_t q = 0; q < n; q++) {
        tc_reference_free(ref, &refs[q]);
        tc_input_free(&inputs[q]);
    }
}

int main(int argc, char **argv)
{
    strvec backends = {0}, plugins = {0}, globs = {0};
    int status = 1;
    char path[4096], err[1024];
    tc_suite suite = {0};
    tc_run run = {.suite = &suite};
    topoml_context *ref = NULL, *cfg = NULL;
    tc_tier tier = TC_TIER_QUICK;
    const char *json = NULL, *junit = NULL, *cache = NULL, *cases_file = NULL, *config = NULL;
    bool list = false, do_certify = false, fail_fast = false, quiet = false, verbose = false;
    double timeout = 0; /* 0: by tier */
    uint64_t seed = 0;
    bool seed_given = false, progress_lines = false, per_case = false;
    tc_case *generated = NULL;
    size_t n_generated = 0;
    int c;
    opterr = 0; /* bad options are reported as usage errors, below */
    while ((c = cli_getopt(argc, argv, &help)) != -1) {
        switch (c) {
        case O_BACKEND: push(&backends, optarg); break;
        case O_PLUGIN: push(&plugins, optarg); break;
        case O_CASE: push(&globs, optarg); break;
        case O_TIER:
            if (!strcmp(optarg, "quick"))
                tier = TC_TIER_QUICK;
            else if (!strcmp(optarg, "full"))
                tier = TC_TIER_FULL;
            else {
                status = usage_error("--tier must be quick or full, not '%s'", optarg);
                goto done;
            }
            break;
        case O_LIST: list = true; break;
        case O_JSON: json = optarg; break;
        case O_JUNIT: junit = optarg; break;
        case O_CERTIFY: do_certify = true; break;
        case O_CACHE: cache = optarg; break;
        case O_TIMEOUT: {
            char *end;
            errno = 0;
            timeout = strtod(optarg, &end);
            if (end == optarg || *end || errno || !(timeout > 0) || timeout > 86400) {
                status = usage_error("--timeout must be a number of seconds, not '%s'", optarg);
                goto done;
            }
            break;
        }
        case O_FAILFAST: fail_fast = true; break;
        case O_SEED: {
            char *end;
            errno = 0;
            seed = strtoull(optarg, &end, 10);
            if (end == optarg || *end || errno || *optarg == '-') {
                status = usage_error("--seed must be a non-negative integer, not '%s'", optarg);
                goto done;
            }
            seed_given = true;
            break;
        }
        case O_CASES: cases_file = optarg; break;
        case O_CONFIG: config = optarg; break;
        case O_QUIET: quiet = true; break;
        case O_VERBOSE: verbose = true; break;
        case O_PROGRESS: progress_lines = true; break;
        case O_PER_CASE: per_case = true; break;
        case O_VERSION:
            printf("topoml-conformance %s (plugin ABI v%u, suite %s)\n", topoml_version(),
                   TOPOML_ABI_VERSION, TOPOML_SUITE_VERSION);
            status = 0;
            goto done;
        case 'h':
            cli_print_help(stdout, &help);
            status = 0;
            goto done;
        default: status = cli_help_bad_option("topoml-conformance", c, argc, argv); goto done;
        }
    }
    if (optind < argc) {
        status = usage_error("unexpected argument '%s'", argv[optind]);
        goto done;
    }
    if (timeout == 0)
        timeout = tier == TC_TIER_QUICK ? 10 : 60;
    if (do_certify && globs.count) {
        status =
            usage_error("%s", "--certify runs a whole tier: it cannot be combined with --case");
        goto done;
    }
    if (do_certify && cases_file) {
        status =
            usage_error("%s", "--certify uses the case list topoml was built with, not --cases");
        goto done;
    }
    if (json && junit && !strcmp(json, "-") && !strcmp(junit, "-")) {
        status = usage_error("%s", "only one of --json and --junit can be '-'");
        goto done;
    }
    if ((json && !strcmp(json, "-")) || (junit && !strcmp(junit, "-")))
        quiet = true;
    if ((status = check_report_path("--json", json)) != 0 ||
        (status = check_report_path("--junit", junit)) != 0)
        goto done;
    status = 1;

    run.tier = tier;
    bool custom_cases = cases_file != NULL;
    if (!cases_file) {
        if (!default_cases(path, sizeof path)) {
            fprintf(stderr, "topoml-conformance: cannot find the case list (cases.yaml); give "
                            "--cases FILE\n");
            goto done;
        }
        cases_file = path;
    }
    if (!tc_suite_load(&suite, cases_file, err, sizeof err)) {
        fprintf(stderr, "topoml-conformance: %s\n", err);
        goto done;
    }
    if (do_certify && strcmp(suite.version, TOPOML_SUITE_VERSION) != 0) {
        fprintf(stderr, "topoml-conformance: %s is suite %s; this topoml certifies with suite %s\n",
                cases_file, suite.version, TOPOML_SUITE_VERSION);
        goto done;
    }
    run.cases = calloc(suite.n_cases ? suite.n_cases : 1, sizeof *run.cases);
    for (size_t k = 0; run.cases && k < suite.n_cases; k++)
        if (tc_case_selected(&suite.cases[k], tier, globs.items, globs.count))
            run.cases[run.n_cases++] = &suite.cases[k];
    if (!run.cases) {
        fprintf(stderr, "topoml-conformance: out of memory\n");
        goto done;
    }
    if (run.n_cases == 0 && (custom_cases || list)) {
        status = usage_error("no case of tier %s matches the --case patterns", tc_tier_name(tier));
        goto done;
    }
    if (list) {
        for (size_t k = 0; k < run.n_cases; k++)
            printf("%s\n", run.cases[k]->name);
        status = 0;
        goto done;
    }

    /* The configuration context: plugin search path and cache folder, and
     * nothing loaded. The reference context: the built-in scalar alone. */
    topoml_context_options co = {
        .struct_size = sizeof co, .flags = TOPOML_CTX_NO_PLUGINS, .config_path = config};
    if (topoml_context_new(&cfg, &co) != TOPOML_OK) {
        fprintf(stderr, "topoml-conformance: %s\n", cfg ? topoml_errmsg(cfg) : "out of memory");
        goto done;
    }
    if (cache) {
        tm_free(cfg, cfg->config.cache_dir);
        cfg->config.cache_dir = tm_strdup(cfg, cache);
    }
    /* The plugin's sandboxed children cannot read the cache folder. */
    tc_subject_cache_dir(cfg->config.cache_dir);
    topoml_context_options ro = {.struct_size = sizeof ro,
                                 .flags = TOPOML_CTX_NO_ENV | TOPOML_CTX_NO_PLUGINS};
    if (topoml_context_new(&ref, &ro) != TOPOML_OK) {
        fprintf(stderr, "topoml-conformance: cannot make the reference context\n");
        goto done;
    }

    /* Which plugin files: given, or found (without loading them here). */
    strvec files = {0};
    for (size_t i = 0; i < plugins.count; i++) {
        if (access(plugins.items[i], R_OK) != 0) {
            status = usage_error("cannot read plugin file '%s'", plugins.items[i]);
            strvec_free(&files);
            goto done;
        }
        push(&files, plugins.items[i]);
    }
    strvec found = {0};
    if (backends.count || !plugins.count)
        tm_loader_each_file(cfg, found_file, &found);
    run.plugins = calloc(files.count + found.count + 1, sizeof *run.plugins);
    if (!run.plugins) {
        strvec_free(&files);
        strvec_free(&found);
        goto done;
    }
    for (size_t i = 0; i < files.count; i++)
        tc_plugin_identify(&run.plugins[run.n_plugins++], files.items[i], timeout, verbose);
    bool bad_backend = false;
    for (size_t i = 0; i < found.count; i++) {
        tc_plugin p;
        tc_plugin_identify(&p, found.items[i], timeout, verbose);
        bool wanted = !backends.count;
        for (size_t b = 0; b < backends.count; b++)
            wanted |= p.loaded && !strcmp(p.name, backends.items[b]);
        if (wanted)
            run.plugins[run.n_plugins++] = p;
        else
            tc_plugin_free(&p);
    }
    for (size_t b = 0; b < backends.count; b++) {
        bool have = false;
        for (size_t i = 0; i < run.n_plugins; i++)
            have |= !strcmp(run.plugins[i].name, backends.items[b]);
        if (!have) {
            usage_error("no plugin named '%s' in the search path (see `topoml backends`)",
                        backends.items[b]);
            bad_backend = true;
        }
    }
    strvec_free(&files);
    strvec_free(&found);
    if (bad_backend) {
        status = 2;
        goto done;
    }
    if (run.n_plugins == 0) {
        fprintf(stderr, "topoml-conformance: no plugins found\n");
        goto done;
    }
    /* The cases the plugins' own capability records call for, drawn from a
     * fresh seed (the case list given with --cases is run as it is), and
     * the long-lived checks. */
    if (!seed_given && getrandom(&seed, sizeof seed, 0) != (ssize_t)sizeof seed)
        seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
    run.seed = seed;
    static tc_case longlived = {.name = TC_LONGLIVED_CASE, .tier = TC_TIER_QUICK,
                                .op = TOPOML_OP_COUNT, .generator = "none"};
    if (!custom_cases) {
        if (!tc_generate_cases(run.plugins, run.n_plugins, seed,
                               suite.n_cases ? suite.cases[0].tol_ulps : 4, &generated,
                               &n_generated)) {
            fprintf(stderr, "topoml-conformance: out of memory\n");
            goto done;
        }
        const tc_case **grown =
            realloc(run.cases, (run.n_cases + n_generated + 1) * sizeof *grown);
        if (!grown) {
            fprintf(stderr, "topoml-conformance: out of memory\n");
            goto done;
        }
        run.cases = grown;
        for (size_t k = 0; k < n_generated; k++)
            if (tc_case_selected(&generated[k], tier, globs.items, globs.count)) {
                run.cases[run.n_cases++] = &generated[k];
                run.n_generated++;
            }
        /* The long-lived checks first: they take a fraction of a second and
         * catch what no single case can, so --fail-fast stops early. */
        if (tc_case_selected(&longlived, tier, globs.items, globs.count)) {
            memmove(run.cases + 1, run.cases, run.n_cases * sizeof *run.cases);
            run.cases[0] = &longlived;
            run.n_cases++;
        }
    }

    if (run.n_cases == 0) {
        status = usage_error("no case of tier %s matches the --case patterns", tc_tier_name(tier));
        goto done;
    }

    tm_cert hw;
    tm_cert_cpu(hw.cpu_model, hw.cpu_sha256);
    snprintf(run.cpu_model, sizeof run.cpu_model, "%s", hw.cpu_model);
    snprintf(run.cpu_sha256, sizeof run.cpu_sha256, "%s", hw.cpu_sha256);
    tm_cert_stamp(&hw);
    snprintf(run.date, sizeof run.date, "%s", hw.date);
    for (size_t i = 0; i < run.n_plugins; i++) {
        tc_plugin *p = &run.plugins[i];
        if (tm_sha256_file(p->path, p->file_sha256) != 0)
            snprintf(p->file_sha256, sizeof p->file_sha256, "unreadable");
        p->verdicts = calloc(run.n_cases, sizeof *p->verdicts);
        if (!p->verdicts)
            goto done;
    }

    /* Cases outside, plugins inside: each reference is computed once. With
     * --fail-fast a plugin stops at its first bad result and its report
     * shows the cases up to there (p->n_run). */
    bool progress = isatty(2) && !quiet;
    for (size_t k = 0; k < run.n_cases; k++) {
        const tc_case *tc = run.cases[k];
        if (progress_lines) {
            fprintf(stderr, "progress %zu %zu %s\n", k, run.n_cases, tc->name);
            fflush(stderr);
        }
        if (tc == &longlived) {
            if (progress)
                fprintf(stderr, "\r[%zu/%zu] %-60.60s", k + 1, run.n_cases, tc->name);
            long_lived(&run, k, ref, &suite, generated, n_generated, timeout, verbose, fail_fast);
            continue;
        }
        bool anyone = false;
        for (size_t i = 0; i < run.n_plugins; i++)
            anyone |= !run.plugins[i].stopped;
        if (!anyone)
            break;
        if (progress)
            fprintf(stderr, "\r[%zu/%zu] %-60.60s", k + 1, run.n_cases, tc->name);
        tc_input in;
        tc_reference r;
        bool ok = tc_input_make(ref, &suite, tc, &in, err, sizeof err) &&
                  tc_reference_make(ref, tc, &in, &r, err, sizeof err);
        for (size_t i = 0; i < run.n_plugins; i++) {
            tc_plugin *p = &run.plugins[i];
            tc_verdict *v = &p->verdicts[k];
            if (p->stopped)
                continue;
            if (!ok) {
                /* A case the reference cannot answer is a broken suite: it
                 * fails every plugin rather than pass one unchecked. */
                v->result = TC_FAIL;
                snprintf(v->detail, sizeof v->detail, "%.500s", err);
            } else if (per_case) {
                tc_plugin_run(p, ref, tc, &in, &r, timeout, verbose, v);
            } else {
                tc_plugin_run_session(p, ref, &suite, tc, &in, &r, timeout, verbose, v);
            }
            p->n_run = k + 1;
            p->stopped = fail_fast && !tc_result_ok(v->result);
            if (p->stopped)
                tc_plugin_end_session(p);
        }
        if (ok) {
            tc_reference_free(ref, &r);
            tc_input_free(&in);
        }
    }
    for (size_t i = 0; i < run.n_plugins; i++)
        tc_plugin_end_session(&run.plugins[i]);
    if (progress)
        fprintf(stderr, "\r%-80s\r", "");

    if (do_certify) {
        run.certificates = calloc(run.n_plugins, sizeof *run.certificates);
        for (size_t i = 0; run.certificates && i < run.n_plugins; i++)
            run.certificates[i] = certify(cfg, &run, &run.plugins[i], json);
    }
    status = 0;
    for (size_t i = 0; i < run.n_plugins; i++) {
        size_t counts[TC_RESULT_COUNT];
        if (!tc_result_ok(tc_plugin_verdict(&run, &run.plugins[i], counts)) ||
            !run.plugins[i].loaded)
            status = 1;
    }
    if (!quiet)
        tc_report_table(&run, stdout);
    if (json && !tc_report_json(&run, json)) {
        fprintf(stderr, "topoml-conformance: cannot write %s: %s\n", json, strerror(errno));
        status = 1;
    }
    if (junit && !tc_report_junit(&run, junit)) {
        fprintf(stderr, "topoml-conformance: cannot write %s: %s\n", junit, strerror(errno));
        status = 1;
    }

done:
    for (size_t i = 0; i < run.n_plugins; i++) {
        tc_plugin_end_session(&run.plugins[i]);
        tc_plugin_free(&run.plugins[i]);
        if (run.certificates)
            free(run.certificates[i]);
    }
    free(run.certificates);
    free(run.plugins);
    free(run.cases);
    free(generated);
    tc_suite_free(&suite);
    topoml_context_free(ref);
    topoml_context_free(cfg);
    strvec_free(&backends);
    strvec_free(&plugins);
    strvec_free(&globs);
    return status;
}
