/*
 * bench_verify.c — what run-time verification (config `verify`, verify.c)
 * costs over a process's calls: on Ripser's benchmark inputs, one context
 * per mode (off, auto, always) makes the same barcode call --calls times on
 * the backend named, and the table gives the seconds per call and the
 * overhead of auto and always over off. The same figures, with every call's
 * time, go to --json as a bench/results artifact (the schema of
 * tools/bench/make_tables.py).
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
    {"random16 H<=7", "random16.lower_distance_matrix", TOPOML_FORMAT_LOWER_DISTANCE, 7,
     INFINITY},
};
#define N_CASES (sizeof cases / sizeof cases[0])
static const char *modes[] = {"off", "auto", "always"};

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Seconds per call of `calls` calls in one context (each call's in
 * times[]), -1 on error. */
static double run(const char *data_dir, const bench_case *c, const char *mode,
                  const char *backend, int calls, double *times, char *used, size_t used_size)
{
    char cfg[] = "/tmp/topoml-bench-verify-XXXXXX";
    int fd = mkstemp(cfg);
    if (fd < 0)
        return -1;
    dprintf(fd, "verify: %s\n", mode);
    close(fd);
    topoml_context_options o = {0};
    o.struct_size = sizeof o;
    o.config_path = cfg;
    topoml_context *ctx = NULL;
    int rc = topoml_context_new(&ctx, &o);
    unlink(cfg);
    topoml_data *d = NULL;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", data_dir, c->file);
    if (rc == TOPOML_OK)
        rc = topoml_use_backend(ctx, backend);
    if (rc == TOPOML_OK)
        rc = topoml_data_read(ctx, &d, path, c->format);
    topoml_rips_options ro;
    topoml_rips_options_init(&ro);
    ro.max_dim = c->max_dim;
    ro.threshold = c->threshold;
    double total = -1;
    for (int k = 0; rc == TOPOML_OK && k <= calls; k++) {
        topoml_barcode *bc = NULL;
        double t0 = now();
        rc = topoml_barcode_compute(ctx, &bc, d, &ro);
        if (k == 0) {
            total = 0; /* the first call certifies the backend: not timed */
        } else {
            times[k - 1] = now() - t0;
            total += times[k - 1];
        }
        topoml_barcode_free(bc);
    }
    if (rc != TOPOML_OK) {
        fprintf(stderr, "bench_verify: %s (%s): %s\n", c->name, mode,
                ctx ? topoml_errmsg(ctx) : "no context");
        total = -1;
    } else {
        snprintf(used, used_size, "%s", topoml_last_backend(ctx));
        total /= calls;
    }
    topoml_data_free(ctx, d);
    topoml_context_free(ctx);
    return total;
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
    if (!data || calls < 1) {
        fprintf(stderr, "usage: bench_verify --data DIR [--backend NAME] [--calls N] "
                        "[--json FILE]\n");
        return 2;
    }
    double sec[N_CASES][3];
    char used[N_CASES][3][64];
    double *times = calloc(N_CASES * 3 * (size_t)calls, sizeof *times);
    if (!times)
        return 1;
    printf("%-20s %-10s %12s %12s %12s %9s %9s\n", "case", "backend", "off s/call",
           "auto s/call", "always s/call", "auto", "always");
    double sum[3] = {0, 0, 0};
    for (size_t c = 0; c < N_CASES; c++) {
        for (int m = 0; m < 3; m++)
            sec[c][m] = run(data, &cases[c], modes[m], backend, calls,
                            times + (c * 3 + (size_t)m) * (size_t)calls, used[c][m], 64);
        if (sec[c][0] <= 0 || sec[c][1] < 0 || sec[c][2] < 0) {
            free(times);
            return 1;
        }
        for (int m = 0; m < 3; m++)
            sum[m] += sec[c][m];
        printf("%-20s %-10s %12.4f %12.4f %12.4f %+8.1f%% %+8.1f%%\n", cases[c].name, used[c][1],
               sec[c][0], sec[c][1], sec[c][2], 100 * (sec[c][1] / sec[c][0] - 1),
               100 * (sec[c][2] / sec[c][0] - 1));
    }
    printf("%-20s %-10s %12.4f %12.4f %12.4f %+8.1f%% %+8.1f%%\n", "all", "", sum[0], sum[1],
           sum[2], 100 * (sum[1] / sum[0] - 1), 100 * (sum[2] / sum[0] - 1));
    int rc = 0;
    if (json) {
        /* An artifact in the schema of tools/bench/make_tables.py. */
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
        fprintf(f, "{\"title\": \"Run-time verification: seconds per barcode call, verify off, "
                   "auto and always\",\n \"machine\": {\"host\": \"%s\", \"cpu\": \"%s\", "
                   "\"cpus\": %ld},\n \"versions\": {\"topoml\": \"%s\"},\n \"commands\": "
                   "[\"bench_verify --data DIR --backend %s --calls %d --json FILE\"],\n "
                   "\"baseline\": \"verify: off\",\n \"statistic\": \"mean seconds per call of "
                   "%d calls in one context (after an untimed first call)\",\n \"cases\": [",
                host, cpu, sysconf(_SC_NPROCESSORS_ONLN), topoml_version(), backend, calls,
                calls);
        for (size_t c = 0; c < N_CASES; c++)
            for (int m = 0; m < 3; m++) {
                fprintf(f, "%s\n  {\"name\": \"%s\", \"program\": \"verify: %s\", "
                           "\"answered_by\": \"%s\", \"median\": %.6f, \"times\": [",
                        c || m ? "," : "", cases[c].name, modes[m], used[c][m], sec[c][m]);
                const double *t = times + (c * 3 + (size_t)m) * (size_t)calls;
                for (int k = 0; k < calls; k++)
                    fprintf(f, "%s%.6f", k ? ", " : "", t[k]);
                fprintf(f, "]}");
            }
        fprintf(f, "\n ],\n \"overhead_auto\": %.4f, \"overhead_always\": %.4f}\n",
                sum[1] / sum[0] - 1, sum[2] / sum[0] - 1);
        rc = fclose(f) == 0 ? 0 : 1;
    }
    free(times);
    return rc;
}
