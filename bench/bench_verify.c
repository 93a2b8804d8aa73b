/*
 * bench_verify.c — what run-time verification (config `verify`, verify.c)
 * costs over a process's calls: on Ripser's benchmark inputs, one context
 * per mode (off, auto, always) makes the same barcode call --calls times on
 * the backend named, and the table gives the CPU seconds per call (user +
 * system of the whole process, every thread) and the overhead of auto and
 * always over off; the wall seconds are kept beside them. The three
 * contexts are open at once and take the calls in turn (off, auto, always,
 * then always, auto, off, ...), so that a change of load on a shared machine
 * falls on every mode alike. The figure is the mean of the calls, not their
 * median: auto re-runs only some calls on the reference, and the cost over a
 * context's calls is what it promises. The same figures, with every call's
 * times and the load average at the start and the end, go to --json as a
 * bench/results artifact (the schema of bench/make_tables.py).
 *
 *   bench_verify --data shared/data/ripser-examples --backend threads \
 *       [--calls 20] [--json out.json]
 *
 * The backend is certified on first use before anything is timed (one
 * untimed call per context). A benchmark, not a test: it prints numbers.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "topoml/topoml.h"

typedef struct bench_case {
    const char *name, *file;
    topoml_format format;
    uint32_t max_dim;
    double threshold;
} bench_case;

static const bench_case cases[] = {
    {"sphere_3_192 H<=2", "sphere_3_192.lower_distance_matrix", TOPOML_FORMAT_LOWER_DISTANCE, 2,
     INFINITY},
    {"o3_1024 H<=3 t1.8", "o3_1024.txt", TOPOML_FORMAT_POINT_CLOUD, 3, 1.8},
    {"o3_2048 H<=2 t1.6", "o3_2048.txt", TOPOML_FORMAT_POINT_CLOUD, 2, 1.6},
    {"random16 H<=7", "random16.lower_distance_matrix", TOPOML_FORMAT_LOWER_DISTANCE, 7, INFINITY},
};
#define N_CASES (sizeof cases / sizeof cases[0])
static const char *modes[] = {"off", "auto", "always"};

enum { N_MODES = 3 };

static double now(clockid_t clock)
{
    struct timespec t;
    clock_gettime(clock, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* One mode's context, its input and what its calls took. */
typedef struct mode_run {
    topoml_context *ctx;
    topoml_data *data;
    double *cpu, *wall; /* each timed call's seconds */
    double cpu_mean, wall_mean;
    char used[64]; /* the backend that answered */
} mode_run;

/* A context configured with `verify: mode`, the backend chosen and the
 * case's input read; TOPOML_OK or an error status (the context, if made,
 * in r->ctx for its message). */
static int open_mode(mode_run *r, const char *data_dir, const bench_case *c, const char *mode,
                     const char *backend)
{
    char cfg[] = "/tmp/topoml-bench-verify-XXXXXX";
    int fd = mkstemp(cfg);
    if (fd < 0)
        return TOPOML_E_IO;
    dprintf(fd, "verify: %s\n", mode);
    close(fd);
    topoml_context_options o = {0};
    o.struct_size = sizeof o;
    o.config_path = cfg;
    int rc = topoml_context_new(&r->ctx, &o);
    unlink(cfg);
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", data_dir, c->file);
    if (rc == TOPOML_OK)
        rc = topoml_use_backend(r->ctx, backend);
    if (rc == TOPOML_OK)
        rc = topoml_data_read(r->ctx, &r->data, path, c->format);
    return rc;
}

/* One barcode call; its CPU and wall seconds in *cpu and *wall. */
static int one_call(mode_run *r, const topoml_rips_options *ro, double *cpu, double *wall)
{
    topoml_barcode *bc = NULL;
    double c0 = now(CLOCK_PROCESS_CPUTIME_ID), w0 = now(CLOCK_MONOTONIC);
    int rc = topoml_barcode_compute(r->ctx, &bc, r->data, ro);
    *wall = now(CLOCK_MONOTONIC) - w0;
    *cpu = now(CLOCK_PROCESS_CPUTIME_ID) - c0;
    topoml_barcode_free(bc);
    return rc;
}

/* The case in every mode, the calls taken in turn: 0 or -1 on error. */
static int run_case(const char *data_dir, const bench_case *c, const char *backend, int calls,
                    mode_run *runs)
{
    topoml_rips_options ro;
    topoml_rips_options_init(&ro);
    ro.max_dim = c->max_dim;
    ro.threshold = c->threshold;
    int rc = TOPOML_OK, m = 0;
    double cpu, wall;
    /* Open every context and make its first call, which certifies the
     * backend: not timed. */
    for (m = 0; m < N_MODES && rc == TOPOML_OK; m++) {
        rc = open_mode(&runs[m], data_dir, c, modes[m], backend);
        if (rc == TOPOML_OK)
            rc = one_call(&runs[m], &ro, &cpu, &wall);
    }
    m--;
    for (int k = 0; k < calls && rc == TOPOML_OK; k++)
        for (int j = 0; j < N_MODES && rc == TOPOML_OK; j++) {
            m = k % 2 ? N_MODES - 1 - j : j;
            rc = one_call(&runs[m], &ro, &runs[m].cpu[k], &runs[m].wall[k]);
        }
    if (rc != TOPOML_OK) {
        fprintf(stderr, "bench_verify: %s (%s): %s\n", c->name, modes[m],
                runs[m].ctx ? topoml_errmsg(runs[m].ctx) : "no context");
        return -1;
    }
    for (m = 0; m < N_MODES; m++) {
        runs[m].cpu_mean = runs[m].wall_mean = 0;
        for (int k = 0; k < calls; k++) {
            runs[m].cpu_mean += runs[m].cpu[k] / calls;
            runs[m].wall_mean += runs[m].wall[k] / calls;
        }
        snprintf(runs[m].used, sizeof runs[m].used, "%s", topoml_last_backend(runs[m].ctx));
    }
    return 0;
}

static void close_case(mode_run *runs)
{
    for (int m = 0; m < N_MODES; m++) {
        topoml_data_free(runs[m].ctx, runs[m].data);
        topoml_context_free(runs[m].ctx);
        runs[m].ctx = NULL;
        runs[m].data = NULL;
    }
}

static void print_row(const char *name, const char *used, const double *cpu, const double *wall)
{
    printf("%-20s %-8s %9.4f %9.4f %9.4f %+7.1f%% %+7.1f%% %9.4f %9.4f %9.4f\n", name, used, cpu[0],
           cpu[1], cpu[2], 100 * (cpu[1] / cpu[0] - 1), 100 * (cpu[2] / cpu[0] - 1), wall[0],
           wall[1], wall[2]);
}

static void json_times(FILE *f, const double *t, int n)
{
    fputc('[', f);
    for (int k = 0; k < n; k++)
        fprintf(f, "%s%.6f", k ? ", " : "", t[k]);
    fputc(']', f);
}

/* The command line as one JSON string's contents. */
static void json_command(FILE *f, int argc, char **argv)
{
    for (int i = 0; i < argc; i++) {
        if (i)
            fputc(' ', f);
        for (const char *p = argv[i]; *p; p++)
            if (*p == '"' || *p == '\\')
                fprintf(f, "\\%c", *p);
            else if ((unsigned char)*p >= 0x20)
                fputc(*p, f);
    }
}

int main(int argc, char **argv)
{
    const char *data = NULL, *backend = "threads", *json = NULL;
    int calls = 20;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--data"))
            data = argv[i + 1];
        else if (!strcmp(argv[i], "--backend"))
            backend = argv[i + 1];
        else if (!strcmp(argv[i], "--calls"))
            calls = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--json"))
            json = argv[i + 1];
        else {
            fprintf(stderr, "bench_verify: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (!data || calls < 1 || argc % 2 == 0) {
        fprintf(stderr, "usage: bench_verify --data DIR [--backend NAME] [--calls N] "
                        "[--json FILE]\n");
        return 2;
    }
    double load_start[3] = {0, 0, 0}, load_end[3] = {0, 0, 0};
    getloadavg(load_start, 3);
    mode_run runs[N_CASES][N_MODES];
    memset(runs, 0, sizeof runs);
    double *times = calloc(N_CASES * N_MODES * 2 * (size_t)calls, sizeof *times);
    if (!times)
        return 1;
    for (size_t c = 0; c < N_CASES; c++)
        for (int m = 0; m < N_MODES; m++) {
            runs[c][m].cpu = times + ((c * N_MODES + (size_t)m) * 2) * (size_t)calls;
            runs[c][m].wall = runs[c][m].cpu + calls;
        }
    printf("CPU seconds per call (user + system, every thread), mean of %d calls; wall beside\n",
           calls);
    printf("%-20s %-8s %9s %9s %9s %8s %8s %9s %9s %9s\n", "case", "backend", "off", "auto",
           "always", "auto", "always", "wall off", "auto", "always");
    double sum_cpu[N_MODES] = {0}, sum_wall[N_MODES] = {0};
    for (size_t c = 0; c < N_CASES; c++) {
        int bad = run_case(data, &cases[c], backend, calls, runs[c]);
        close_case(runs[c]);
        if (bad || runs[c][0].cpu_mean <= 0) {
            free(times);
            return 1;
        }
        double cpu[N_MODES], wall[N_MODES];
        for (int m = 0; m < N_MODES; m++) {
            cpu[m] = runs[c][m].cpu_mean;
            wall[m] = runs[c][m].wall_mean;
            sum_cpu[m] += cpu[m];
            sum_wall[m] += wall[m];
        }
        print_row(cases[c].name, runs[c][1].used, cpu, wall);
    }
    print_row("all", "", sum_cpu, sum_wall);
    getloadavg(load_end, 3);
    printf("load average %.1f/%.1f/%.1f at the start, %.1f/%.1f/%.1f at the end\n", load_start[0],
           load_start[1], load_start[2], load_end[0], load_end[1], load_end[2]);
    int rc = 0;
    if (json) {
        /* An artifact in the schema of bench/make_tables.py. */
        FILE *f = fopen(json, "w");
        if (!f) {
            free(times);
            return 1;
        }
        char host[256] = "?", cpu[256] = "?", line[512];
        gethostname(host, sizeof host - 1);
        FILE *ci = fopen("/proc/cpuinfo", "r");
        while (ci && fgets(line, sizeof line, ci))
            if (strncmp(line, "model name", 10) == 0 && strchr(line, ':')) {
                snprintf(cpu, sizeof cpu, "%s", strchr(line, ':') + 2);
                cpu[strcspn(cpu, "\n\"\\")] = '\0';
                break;
            }
        if (ci)
            fclose(ci);
        fprintf(f,
                "{\"title\": \"Run-time verification: CPU seconds per barcode call, verify "
                "off, auto and always\",\n \"machine\": {\"host\": \"%s\", \"cpu\": \"%s\", "
                "\"cpus\": %ld, \"load_average_start\": [%.2f, %.2f, %.2f], "
                "\"load_average\": [%.2f, %.2f, %.2f]},\n \"versions\": {\"topoml\": "
                "\"%s\"},\n \"commands\": [\"",
                host, cpu, sysconf(_SC_NPROCESSORS_ONLN), load_start[0], load_start[1],
                load_start[2], load_end[0], load_end[1], load_end[2], topoml_version());
        json_command(f, argc, argv);
        fprintf(f,
                "\"],\n \"baseline\": \"verify: off\",\n \"statistic\": \"mean CPU "
                "seconds (user + system, every thread of the process) per call of %d calls "
                "in one context, after an untimed first call; the three modes' contexts "
                "take the calls in turn; wall seconds in each case's wall_times and "
                "wall_mean\",\n \"cases\": [",
                calls);
        for (size_t c = 0; c < N_CASES; c++)
            for (int m = 0; m < N_MODES; m++) {
                const mode_run *r = &runs[c][m];
                fprintf(f,
                        "%s\n  {\"name\": \"%s\", \"program\": \"verify: %s\", "
                        "\"answered_by\": \"%s\", \"median\": %.6f, \"wall_mean\": %.6f, "
                        "\"times\": ",
                        c || m ? "," : "", cases[c].name, modes[m], r->used, r->cpu_mean,
                        r->wall_mean);
                json_times(f, r->cpu, calls);
                fprintf(f, ", \"wall_times\": ");
                json_times(f, r->wall, calls);
                fprintf(f, "}");
            }
        fprintf(f,
                "\n ],\n \"overhead_auto\": %.4f, \"overhead_always\": %.4f, "
                "\"overhead_auto_wall\": %.4f, \"overhead_always_wall\": %.4f}\n",
                sum_cpu[1] / sum_cpu[0] - 1, sum_cpu[2] / sum_cpu[0] - 1,
                sum_wall[1] / sum_wall[0] - 1, sum_wall[2] / sum_wall[0] - 1);
        rc = fclose(f) == 0 ? 0 : 1;
    }
    free(times);
    return rc;
}
