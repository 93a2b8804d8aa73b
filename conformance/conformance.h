/*
 * conformance.h — the conformance suite's own declarations (prefix tc_):
 * the case list (cases.c), input generators (generate.c), the reference
 * (reference.c), running a plugin in a child process (isolate.c,
 * subject.c), comparing its answers (compare.c), and reports (report.c).
 * tools/cli/topoml_conformance.c puts them together.
 *
 * The suite sits on the core: it computes every reference answer through
 * the public API with the built-in scalar backend, and reaches the plugin
 * under test through the ABI alone, in a child process per case, so that
 * the plugin needs no permission from the gate and cannot take the runner
 * down with it.
 */
#ifndef TOPOML_CONFORMANCE_H
#define TOPOML_CONFORMANCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* internal: the one comparison of barcodes and its bounds, which run-time
 * verification uses too */
#include "diagrams/diagram_compare.h"
#include "topoml/plugin.h"
#include "topoml/topoml.h"

/* ---- results ---- */

/* Ordered from good to bad: a plugin's verdict is its worst case. */
typedef enum tc_result {
    TC_PASS = 0,
    TC_NOT_SUPPORTED = 1,   /* the plugin does not claim it, or its probe fails */
    TC_QUALITY_WARNING = 2, /* within the bound, but using more than a tenth of it */
    TC_FAIL = 3,
    TC_CRASH = 4,
    TC_TIMEOUT = 5
} tc_result;
#define TC_RESULT_COUNT 6

const char *tc_result_name(tc_result r);
/* PASS, NOT_SUPPORTED and QUALITY_WARNING keep the exit status 0. */
bool tc_result_ok(tc_result r);

/* A case's verdict: the result, the worst error seen against its bound
 * (error/bound is the "quality ratio"), and a line for people. */
typedef struct tc_verdict {
    tc_result result;
    double error;
    double bound;
    double quality; /* largest error/bound among errors of more than one
                       unit in the last place of their value */
    double seconds;
    char detail[512];
} tc_verdict;

/* QUALITY_WARNING starts where an error exceeds this share of its bound;
 * a difference in the last bit only never warns. */
#define TC_QUALITY_SHARE 0.1

/* ---- the case list (cases.c) ---- */

typedef enum tc_tier { TC_TIER_QUICK = 0, TC_TIER_FULL = 1 } tc_tier;
const char *tc_tier_name(tc_tier t);

typedef struct tc_case {
    char name[192];
    unsigned line; /* in the case file, for messages */
    tc_tier tier;
    uint32_t op; /* topoml_op */
    /* input */
    char generator[24]; /* uniform gaussian circle sphere torus clusters grid duplicates file */
    uint64_t seed, n, dim;
    uint32_t k;              /* sphere: its dimension; clusters: how many; duplicates: copies */
    uint32_t side;           /* grid: points per axis */
    double radius;           /* circle, sphere, torus (major) */
    double radius2;          /* torus (minor) */
    double noise;            /* gaussian noise added to manifold samples */
    double spread;           /* clusters: standard deviation around each centre */
    double scale;            /* every coordinate multiplied by it */
    char file[256];          /* generator file: a name in the data folder */
    uint32_t file_format;    /* topoml_format */
    uint32_t as;             /* topoml_input_kind the plugin receives */
    double sparse_threshold; /* as sparse: the edges kept */
    /* A weighted Rips filtration (topoml.h, "Weighted Rips filtrations"):
     * the plugin is given the weighted edge values, as the library gives
     * them to a backend. weights: topoml_weights; GIVEN draws the weights
     * uniformly from [0, a quarter of the largest distance). */
    uint32_t weights;
    double weight_p;
    uint32_t dtm_neighbors;
    double dtm_r;
    /* parameters */
    uint32_t metric, dtype, max_dim, modulus;
    double threshold; /* INFINITY: none */
    /* image op: the diagrams are the reference barcode of the input */
    uint32_t image_dim, width, height, weight;
    double sigma;
    /* tolerance, in units of the dtype's epsilon per coordinate */
    double tol_ulps;
} tc_case;

/* A case with the defaults of cases.yaml that every case shares (f64
 * euclidean points, no threshold, Z/2, the generators' default shapes);
 * the case list and the generated cases set the rest. */
void tc_case_init(tc_case *c);

typedef struct tc_suite {
    char version[32];
    char path[1024];     /* the case file */
    char data_dir[1024]; /* where `file` inputs live */
    tc_case *cases;
    size_t n_cases;
} tc_suite;

/* Parse a case file (YAML, libyaml). Lists given for metric, dtype,
 * modulus, threshold, max_dim, weight, sigma, or the input's as, n, dim or
 * seed expand into one case per combination, named
 * "<name>/<value>...". On error returns false with "file:line:col: reason". */
bool tc_suite_load(tc_suite *s, const char *path, char *err, size_t err_size);
void tc_suite_free(tc_suite *s);
/* Is the case in the tier (quick cases are also in full) and does its name
 * match one of the globs (none given: all)? */
bool tc_case_selected(const tc_case *c, tc_tier tier, char *const *globs, size_t n_globs);

/* ---- cases derived from capability records (generated.c) ---- */

typedef struct tc_plugin tc_plugin; /* below */

/* The cases the plugins' capability records call for (their union: a case
 * one plugin does not claim is NOT_SUPPORTED for it), named "gen/<op>/...",
 * tier quick, inputs drawn from `seed`. false only when out of memory. */
bool tc_generate_cases(const tc_plugin *plugins, size_t n_plugins, uint64_t seed,
                       double ulps, tc_case **out, size_t *n_out);

/* The name of the case that stands for the long-lived checks
 * (tc_plugin_soak); its op is TOPOML_OP_COUNT ("all"). */
#define TC_LONGLIVED_CASE "longlived/repeated-calls"
/* Calls the long-lived process makes, cycling through its cases. */
#define TC_LONGLIVED_CALLS 64

/* ---- inputs (generate.c) ---- */

/* What a case works on. `points` / `condensed` are always f64; the f32
 * copies are what the plugin sees when the case's dtype is f32, and the
 * reference then works on those same values widened. */
typedef struct tc_input {
    uint32_t kind; /* topoml_input_kind given to the plugin */
    uint64_t n, dim;
    double *points; /* n*dim, for POINTS and as the source of the rest */
    float *points32;
    double *condensed; /* CONDENSED input (the f64 values, or f32 widened) */
    float *condensed32;
    topoml_edge *edges; /* SPARSE input */
    uint64_t n_edges;
} tc_input;

/* Build the input of a case. The reference context reads data files and
 * computes the distances of derived (condensed, sparse) inputs. */
bool tc_input_make(topoml_context *ref, const tc_suite *s, const tc_case *c, tc_input *in,
                   char *err, size_t err_size);
void tc_input_free(tc_input *in);
/* The ABI view of it, for dtype `dtype` and the case's metric. */
void tc_input_view(const tc_input *in, const tc_case *c, topoml_input_v1 *v);

/* ---- the reference (reference.c) ---- */

typedef struct tc_reference {
    double *dist; /* every pair, condensed, as the plugin should see it */
    uint64_t n_pairs;
    double max_dist;    /* largest finite distance */
    topoml_edge *edges; /* edges op */
    uint64_t n_edges;
    topoml_interval *bars; /* h0, rips, and the image op's diagrams */
    uint64_t n_bars;
    double *image; /* image op */
    uint64_t image_size;
    topoml_generator *gens; /* rips: the reference's generators, one per bar */
} tc_reference;

bool tc_reference_make(topoml_context *ref, const tc_case *c, const tc_input *in, tc_reference *out,
                       char *err, size_t err_size);
void tc_reference_free(topoml_context *ref, tc_reference *r);

/* Image op parameters of a case (ranges from the reference diagram). */
void tc_image_params(const tc_case *c, const tc_reference *r, topoml_image_params_v1 *p);
/* The finite pairs of dimension `dim` of a barcode, for the image op. */
uint64_t tc_diagram_pairs(const topoml_interval *bars, uint64_t n, uint32_t dim, topoml_pair *out);

/* ---- tolerances and comparison (compare.c) ---- */

/* |got - ref| <= rel*|ref| + abs for one distance (the core's bound,
 * core/src/diagrams/diagram_compare.h). */
typedef tm_tolerance tc_tolerance;

/* The bound on one distance of a case: rel = ulps * (dim + 2) * eps(dtype),
 * abs = rel for cosine (its error is relative to 1, not to the distance),
 * else 0. Inputs the plugin receives as distances (condensed, sparse) are
 * exact: rel = abs = 0. */
tc_tolerance tc_distance_tolerance(const tc_case *c, uint64_t dim);

/* The bound on one pixel of the image op: ulps * (pairs + 2) * eps(dtype)
 * times the largest weight; every pair is the same on both sides, so only
 * the arithmetic (the erf differences) may differ. */
double tc_image_tolerance(const tc_case *c, const topoml_image_params_v1 *p, uint64_t n_pairs);

void tc_compare_distances(const double *ref, const void *got, uint32_t dtype, uint64_t count,
                          tc_tolerance tol, tc_verdict *v);
/* `ref_dist` holds every pair's reference distance (condensed), in `dtype`. */
void tc_compare_edges(const double *ref_dist, uint64_t n, const topoml_edge *ref_edges,
                      uint64_t n_ref, const topoml_edge *got, uint64_t n_got, double threshold,
                      tc_tolerance tol, uint32_t dtype, tc_verdict *v);
/* Barcodes, per dimension 0..max_dim: well formed, and exactly the
 * reference's bars (tm_compare_barcodes); the detail names the first bar
 * that differs. */
/* The generators a plugin returned with its barcode (one per interval),
 * checked against the reference: every edge has vertices i < j < n and
 * distance (as the plugin sees it: ref->dist, or a SPARSE input's edge) exactly the interval's birth or
 * death; dimension 0 has no birth edge and an infinite death no death edge;
 * and when no two distances in the input are equal, the (dimension, birth
 * edge, death edge) of the bars equal the reference's. A failure sets
 * v->result to TC_FAIL with the reason. */
void tc_compare_generators(const tc_reference *ref, const tc_input *in, const topoml_interval *bars,
                           const topoml_generator *gens, uint64_t n_bars, tc_verdict *v);
void tc_compare_barcodes(topoml_context *ctx, const topoml_interval *ref, uint64_t n_ref,
                         const topoml_interval *got, uint64_t n_got, uint32_t max_dim,
                         tc_verdict *v);
/* One unit in the last place of |x| in `dtype`. */
double tc_ulp(double x, uint32_t dtype);
void tc_compare_images(const double *ref, const double *got, uint64_t count, double tol,
                       tc_verdict *v);
/* Set v->result from error, bound and quality (PASS / QUALITY_WARNING /
 * FAIL). */
void tc_grade(tc_verdict *v);

/* ---- the plugin under test (subject.c) ---- */

struct tc_plugin {
    char path[4096]; /* canonical */
    char file_sha256[65];
    bool loaded;     /* negotiated, created, probed, capabilities read */
    tc_verdict load; /* when not loaded: what happened (FAIL, CRASH, TIMEOUT) */
    char name[64], version[64], vendor[128], description[256];
    uint32_t abi_version;
    int probe_status;
    char probe_message[256];
    bool has_op[TOPOML_OP_COUNT];
    topoml_capability_v1 *caps; /* device and schedule point into the arrays below */
    char (*devices)[256];
    char (*schedules)[256];
    uint32_t n_caps;
    tc_verdict *verdicts; /* one per selected case */
    size_t n_run;         /* verdicts[0 .. n_run) are results */
    bool stopped;         /* --fail-fast stopped it after a bad result */
    /* Its session (tc_plugin_run_session): the child that has the plugin
     * loaded and runs case after case; pid 0 when none. */
    int session_pid;
    int session_cmd; /* write end: the cases, one pointer each */
    int session_ans; /* read end: the answers */
    unsigned session_starts; /* processes started for it, for the report */
};

/* Negotiate, create, probe and read the capabilities of a plugin file in a
 * child process. Always fills `p` (loaded false with p->load on failure). */
/* The cache folder the runner writes certificates to (NULL: only the
 * defaults): the plugin's children, sandboxed, cannot read it. */
void tc_subject_cache_dir(const char *dir);
void tc_plugin_identify(tc_plugin *p, const char *path, double timeout_s, bool verbose);
void tc_plugin_free(tc_plugin *p);

/* Run one case's op on the plugin in a child process and grade it. */
void tc_plugin_run(const tc_plugin *p, topoml_context *ref, const tc_case *c, const tc_input *in,
                   const tc_reference *r, double timeout_s, bool verbose, tc_verdict *v);

/* The same in the plugin's session: ONE child process loads the plugin
 * once and runs every case given to it, one after another (a GPU runtime
 * starts once, not once per case). A case that crashes, exits or runs past
 * its deadline is graded as tc_plugin_run grades it, and the next case
 * starts a new process. `suite` is the suite the cases come from (the
 * child makes each case's input itself, as the parent did). */
void tc_plugin_run_session(tc_plugin *p, topoml_context *ref, const tc_suite *suite,
                           const tc_case *c, const tc_input *in, const tc_reference *r,
                           double timeout_s, bool verbose, tc_verdict *v);
/* End the plugin's session, if any. */
void tc_plugin_end_session(tc_plugin *p);

/* The long-lived checks: ONE child process loads the plugin once and makes
 * TC_LONGLIVED_CALLS calls, cycling through `cases` (those it claims), and
 * fails the plugin at the first call whose answer is not the reference's
 * (a plugin that turns wrong on its 51st call), that changes its input,
 * writes to stdout or stderr, leaves allocations from the host allocator
 * outstanding, grows the process by more than a leak allowance, or writes
 * past an output array. v->detail names the call and the check, and gives
 * the time per call. */
void tc_plugin_soak(const tc_plugin *p, topoml_context *ref, const tc_case *const *cases,
                    const tc_input *inputs, const tc_reference *refs, size_t n_cases,
                    double timeout_s, bool verbose, tc_verdict *v);

/* ---- a child process with a deadline (isolate.c) ---- */

typedef enum tc_child_end { TC_CHILD_EXITED, TC_CHILD_SIGNALED, TC_CHILD_TIMED_OUT } tc_child_end;

typedef struct tc_child {
    tc_child_end end;
    int code;            /* exit status or signal number */
    unsigned char *data; /* everything the child wrote to its pipe (malloc) */
    size_t len;
    double seconds;
} tc_child;

/* Fork; the child runs fn(fd, arg) with its answer written to fd, then
 * exits. The parent collects the bytes and kills the child's process group
 * when the deadline passes. false only if no child could be started. */
typedef int (*tc_child_fn)(int fd, void *arg);
bool tc_isolate(tc_child_fn fn, void *arg, double timeout_s, tc_child *out, char *err,
                size_t err_size);
/* Fork a child that runs fn(fd, arg) (set up as tc_isolate's: its own
 * process group, no core, default crash signals, stdout on stderr) and
 * return at once with its pid and the read end of its pipe; the child
 * closes `close_in_child` first (-1: none). The caller reads the pipe. */
bool tc_spawn(tc_child_fn fn, void *arg, int close_in_child, pid_t *pid, int *fd, char *err,
              size_t err_size);
/* End a child of tc_spawn: wait up to grace_s for it to end, then kill its
 * process group and reap it; out->end and out->code say how it ended
 * (TIMED_OUT: it had not ended by itself). */
void tc_end_child(pid_t pid, double grace_s, tc_child *out);

/* ---- reports (report.c) ---- */

typedef struct tc_run {
    const tc_suite *suite;
    tc_tier tier;
    const tc_case **cases; /* the selected ones */
    size_t n_cases;
    tc_plugin *plugins;
    size_t n_plugins;
    char cpu_model[160];
    char cpu_sha256[65];
    char date[32];
    char **certificates; /* per plugin: the certificate written, or NULL */
    uint64_t seed;       /* of the generated cases */
    size_t n_generated;  /* how many of the cases are generated */
} tc_run;

/* The worst result of a plugin's cases, and counts per result. */
tc_result tc_plugin_verdict(const tc_run *run, const tc_plugin *p, size_t counts[TC_RESULT_COUNT]);
void tc_summary(const size_t counts[TC_RESULT_COUNT], char *out, size_t size);

void tc_report_table(const tc_run *run, FILE *f);
bool tc_report_json(const tc_run *run, const char *path);
bool tc_report_junit(const tc_run *run, const char *path);

#endif
