/*
 * hash_file.c — what hashing a plugin file costs the core (core/src/gate/sha256.c,
 * step 2 of loading plugins in docs/architecture.md): the file read and
 * hashed again and again through tm_sha256_fd, on the portable compression
 * function and on the fastest this CPU has (SHA-NI where it has the SHA
 * extensions), in turn; both digests must agree. Medians to a table, every
 * time to --json as a bench/results artifact (the schema of
 * bench/make_tables.py).
 *
 *   hash_file FILE [--reps 9] [--json OUT]
 *
 * e.g. build/plugins-out/topoml-backend-cuda.so. A benchmark, not a test:
 * it prints numbers.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gate/sha256.h" /* internal: the core's hash of a plugin file, what is timed */
#include "topoml/topoml.h"

#include "bench_time.h"

static double now(void)
{
    return clock_s(CLOCK_MONOTONIC);
}

int main(int argc, char **argv)
{
    if (argc < 2 || argv[1][0] == '-') {
        fprintf(stderr, "usage: hash_file FILE [--reps 9] [--json OUT]\n");
        return 2;
    }
    const char *file = argv[1], *json = NULL;
    int reps = 9;
    for (int k = 2; k < argc; k++) {
        if (k + 1 >= argc) {
            fprintf(stderr, "hash_file: %s wants a value\n", argv[k]);
            return 2;
        }
        if (!strcmp(argv[k], "--reps")) {
            char *end;
            long r = strtol(argv[++k], &end, 10);
            if (*end || r < 1 || r > 64) {
                fprintf(stderr, "hash_file: --reps must be 1..64\n");
                return 2;
            }
            reps = (int)r;
        } else if (!strcmp(argv[k], "--json")) {
            json = argv[++k];
        } else {
            fprintf(stderr, "hash_file: unknown option %s\n", argv[k]);
            return 2;
        }
    }
    int fd = open(file, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        perror(file);
        return 1;
    }
    /* 0: portable, 1: the fastest; taken in turn, each rep. */
    double times[2][64];
    char digest[2][65];
    bool ni = false;
    for (int rep = 0; rep < reps; rep++)
        for (int p = 0; p < 2; p++) {
            bool fast = tm_sha256_use_portable(p == 0);
            if (p == 1)
                ni = fast;
            double t0 = now();
            int err = tm_sha256_fd(fd, digest[p]);
            times[p][rep] = now() - t0;
            if (err) {
                fprintf(stderr, "hash_file: %s: %s\n", file, strerror(err));
                return 1;
            }
        }
    close(fd);
    if (strcmp(digest[0], digest[1]) != 0) {
        fprintf(stderr, "hash_file: the two paths disagree: %s vs %s\n", digest[0], digest[1]);
        return 1;
    }
    const char *names[2] = {"portable", ni ? "SHA-NI" : "portable (no SHA extensions here)"};
    FILE *j = json ? fopen(json, "w") : NULL;
    if (json && !j) {
        perror(json);
        return 1;
    }
    if (j)
        fprintf(j,
                "{\"title\": \"Hashing a plugin file as loading it does (bench/hash_file.c): "
                "the portable SHA-256 and the fastest this CPU has\",\n \"machine\": \"%ld CPUs "
                "online\",\n \"versions\": {\"topoml\": \"%s\"},\n \"commands\": [\"hash_file %s "
                "--reps %d\"],\n \"baseline\": \"portable\",\n \"cases\": [",
                sysconf(_SC_NPROCESSORS_ONLN), topoml_version(), file, reps);
    printf("| bytes | SHA-256 | median s | min s | MB/s |\n| ---: | --- | ---: | ---: | ---: |\n");
    for (int p = 0; p < 2; p++) {
        double s[64];
        memcpy(s, times[p], (size_t)reps * sizeof *s);
        double med = bench_median(s, reps);
        printf("| %lld | %s | %.4f | %.4f | %.0f |\n", (long long)st.st_size, names[p], med, s[0],
               (double)st.st_size / med / 1e6);
        if (j) {
            fprintf(j,
                    "%s\n  {\"name\": \"%lld bytes\", \"program\": \"%s\", \"threads\": 1, "
                    "\"times\": [",
                    p ? "," : "", (long long)st.st_size, names[p]);
            for (int r = 0; r < reps; r++)
                fprintf(j, "%s%.6f", r ? ", " : "", times[p][r]);
            fprintf(j, "], \"median\": %.6f}", med);
        }
    }
    if (j) {
        fprintf(j, "\n ]}\n");
        fclose(j);
    }
    return 0;
}
