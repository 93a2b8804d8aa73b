/*
 * gate/gate.h — what the gate offers the rest of the core (never
 * installed): the record of a backend, the registry that discovers, probes
 * and loads plugins, the choice of a backend for a call (tm_select), and
 * run-time verification of a plugin's answers (verify.c). The gate's own
 * machinery (loader, child processes, probe cache, isolation) is in
 * gate_internal.h; certificates in certificate.h; hashing in sha256.h.
 *
 * Included by api/ (context.c, device_data.c), compute/ (ops.c, image.c) and
 * the gate's own files. Outside core/: the tests, and conformance/
 * (subject.c starts a plugin outside any gate and reads its records;
 * generated.c names the ops as the core does, tm_op_name).
 */
#ifndef TOPOML_GATE_H
#define TOPOML_GATE_H

#include <stdbool.h>
#include <stdint.h>

#include "api/api.h"

/* One backend the context knows (registry.c). */
typedef struct tm_backend {
    char *name, *version, *vendor, *description;
    char *path;                    /* NULL: built in */
    void *dl;                      /* dlopen handle, NULL: built in */
    const topoml_backend_v1 *vt;   /* NULL when rejected before negotiation;
                                      else &vt_copy */
    topoml_backend_v1 vt_copy;     /* the plugin's vtable, zero past its
                                      struct_size, so absent ops read NULL */
    void *state;
    uint32_t abi_version;
    bool created;
    bool duplicate;                /* same name as an earlier backend */
    int probe_status;
    char probe_message[256];
    uint32_t gate_state;           /* topoml_gate_state */
    char gate_reason[640];
    bool gate_pending;             /* DISABLED until certified on first use
                                      (gate: auto); see gate.c */
    const topoml_capability_v1 *caps;
    uint32_t n_caps;
    /* Loading (loader.c, isolate_probe.c, registry.c). */
    int fd;                        /* the plugin file, opened and checked once;
                                      -1 for the built-in backend */
    char file_sha256[65];          /* read from fd before the first probe
                                      (tm_loader_hash): what certificates bind */
    uint32_t op_mask;              /* 1u << op for every op pointer present */
    uint32_t selection;            /* topoml_selection of the vtable */
    void *probed;                  /* what the probe process reported:
                                      capability records and their strings,
                                      one allocation; caps points here until
                                      the plugin is loaded in this process */
    bool in_default_folder;        /* found in topoml's own plugin folder */
    bool isolated;                 /* vt is a proxy, state a tm_isolated:
                                      its ops run in a helper process */
    bool probe_queued;             /* to be probed by the next tm_probe_all */
    bool probed_here;              /* its probe has run (or it was rejected
                                      before one could) */
    bool brought_up;               /* given its gate state (registry.c) */
    char *cached_report;           /* the probe report it was given from the
                                      cache (probe_cache.c), kept until it is
                                      loaded in this process; NULL when a
                                      probe process reported */
    size_t cached_report_len;
    /* Run-time verification (verify.c): the largest input each kind of call
     * has been checked on against the reference, for this file and
     * certificate; loaded from the certificate cache on first need. */
    struct tm_envelope *envelope;
    uint32_t n_envelope;
    bool envelope_loaded;
    char cert_stamp[64];           /* the certificate's date and seed, "" if none */
    struct tm_cost_model *cost;    /* its Rips cost model (calibrate.c), NULL
                                      until selection by cost first needs it */
} tm_backend;

/* ---- registry and selection (registry.c, gate.c) ---- */

/* Register the built-in scalar backend, then discover plugin files: checked
 * (loader.c), not probed. */
int tm_registry_init(topoml_context *ctx);
/* Probe every plugin file found (each in a child process, all at once),
 * give each its gate state and load what the gate enables; once per
 * context, on the first need: listing the backends (topoml_backend_get),
 * an automatic selection that looks past the entries of `prefer`, data in
 * device memory. */
void tm_registry_probe(topoml_context *ctx);
/* What a call that names backend `name` needs (topoml_use_backend, an
 * entry of `prefer`): nothing for the built-in reference; else the files
 * named topoml-backend-<name>.so are probed first, and every other one only
 * if none of them turns out to be `name`. */
void tm_registry_probe_name(topoml_context *ctx, const char *name);
/* The largest prime modulus a backend that may run (enabled, or certified
 * on first use) claims for Rips: over the backends brought up so far when
 * one of them takes `modulus`, else over every plugin (probed here, so a
 * modulus the reference takes starts no probe); 0 when none claims Rips
 * (registry.c). */
uint32_t tm_largest_modulus(topoml_context *ctx, uint32_t modulus);
void tm_registry_free(topoml_context *ctx);
/* "distances", "edges", "h0", "rips", "image". */
const char *tm_op_name(uint32_t op);
/* Does one of these capability records cover `op` for this input (NULL:
 * any) and, for rips, this dimension and modulus? */
bool tm_caps_cover(const topoml_capability_v1 *caps, uint32_t n_caps, uint32_t op,
                   const topoml_input_v1 *in, uint32_t max_dim, uint32_t modulus);
/* ... by a record that also says every TOPOML_CAP_* bit of `features`. */
bool tm_caps_cover_features(const topoml_capability_v1 *caps, uint32_t n_caps, uint32_t op,
                            const topoml_input_v1 *in, uint32_t max_dim, uint32_t modulus,
                            uint32_t features);
/* Does a RIPS capability record among `caps` say TOPOML_CAP_GENERATORS? */
bool tm_caps_generators(const topoml_capability_v1 *caps, uint32_t n_caps);

/* ---- representative cocycles (verify.c) ---- */
/* Is the cocycle part of a rips answer malformed? Asked (`asked`): offsets
 * present, n_intervals + 1 of them from 0, non-decreasing, each bar's rows
 * whole rows of dim + 2 words, none in dimension 0 and at least one in
 * dimension >= 1, vertices < n strictly descending, values in 1..p-1. Not
 * asked: both arrays NULL. True with the reason in `why`. */
bool tm_cocycles_malformed(const topoml_barcode_v1 *res, bool asked, uint64_t n, uint32_t p,
                           char *why, size_t why_size);
/* Are the cocycles of a rips answer (asked for) malformed, or is one of a
 * bar of dimension >= 1 not a cocycle of the complex at its birth, or zero
 * on every simplex of the birth's diameter? The run-time check of every
 * plugin's answer (verify.c) and the conformance suite's. */
bool tm_cocycles_wrong(topoml_context *ctx, const topoml_input_v1 *in, uint32_t p,
                       const topoml_barcode_v1 *res, char *why, size_t why_size);
/* ---- end representative cocycles ---- */
/* tm_select is about to use a backend whose gate decision was left for
 * first use: certify it now (gate: auto). true when it is now ENABLED;
 * otherwise its state and reason say why not. */
bool tm_gate_first_use(topoml_context *ctx, tm_backend *b);
/* Choose the backend for `op` (registry.c): TOPOML_OK and *out, or the
 * error (TOPOML_E_GATE, _UNSUPPORTED, _NOT_FOUND) with its message set. */
int tm_select(topoml_context *ctx, uint32_t op, const topoml_input_v1 *in, uint32_t max_dim,
              uint32_t modulus, tm_backend **out);
/* Barcodes of dimension 0 on a backend's h0 op (registry.c, ops.c):
 * TM_SELECT_OR_H0, or'ed into tm_select's TOPOML_OP_RIPS for a barcode of
 * dimension 0 only, lets a backend whose h0 op takes the input count as
 * capable as well, in the same order of choice (a name, `prefer`,
 * accelerators, plugins, the reference). tm_select_capable then says
 * whether the chosen one runs rips (it can) or h0 (it cannot): the bars are
 * the same. */
#define TM_SELECT_OR_H0 0x10000u
bool tm_select_capable(const tm_backend *b, uint32_t op, const topoml_input_v1 *in,
                       uint32_t max_dim, uint32_t modulus);
/* Load an enabled plugin in this process (registry.c): dlopen through its
 * descriptor, negotiate, create, probe, capabilities. false when that
 * failed (the backend is then rejected with the reason). */
bool tm_backend_load(topoml_context *ctx, tm_backend *b);

/* ---- run-time verification: the checks of a barcode that need no
 * history (gate/verify_exact.c, called by verify.c) ---- */

/* The truncated re-run's input, gathered by the pass over the pairs. */
typedef struct tm_exact_cut {
    double scale;       /* in: the scale s of the cut (NAN: gather nothing) */
    topoml_edge *edges; /* out: the input's pairs of length <= s, i < j (tm_alloc'd) */
    uint64_t n_edges;
    bool complete;      /* out: a dense input all of whose pairs are within the threshold */
} tm_exact_cut;

/* The next number of the context's generator, seeded by getrandom in the
 * host (verify.c): which calls are re-run and which pairs are sampled. */
uint64_t tm_verify_random(topoml_context *ctx);
/* Is `in` small enough for the pass (dense: at most 5e7 pairs)? */
bool tm_exact_pass_fits(const topoml_input_v1 *in);
/* The pass: H0 exactly, every bar value a length of the input, essential
 * classes only where the threshold allows them; gathers cut->edges. Sets
 * *wrong (and why); returns TOPOML_OK, or the status that kept it from
 * checking (memory, too large: nothing is checked, the error cleared). */
int tm_exact_barcode_wrong(topoml_context *ctx, const topoml_input_v1 *in, double threshold,
                           const topoml_barcode_v1 *res, tm_exact_cut *cut, bool *wrong,
                           char *why, size_t why_size);
/* The reference's work on m edges of n points up to dimension max_dim, in
 * units (an estimate that errs large). */
double tm_truncation_units(uint64_t n, double m, uint32_t max_dim);
/* The largest scale s whose cut costs at most budget_units, from a sample
 * of the pairs within the threshold (NAN: none); *all_fits when the whole
 * call does. */
double tm_truncation_scale(topoml_context *ctx, const topoml_input_v1 *in, double threshold,
                           uint32_t max_dim, double budget_units, bool *all_fits);
/* After the pass, on the cut's exact edge count: when the cut the sample
 * chose costs more than budget_units, keep its shortest pairs up to the
 * largest length that fits (cut->scale lowered; NAN: none fits). True
 * when it trimmed. */
bool tm_truncation_trim(const topoml_input_v1 *in, uint32_t max_dim, double budget_units,
                        tm_exact_cut *cut);

/* ---- run-time verification (verify.c) ---- */

/* What the core notes before a plugin's call: when it started and a hash of
 * the input (which the plugin must leave alone). */
typedef struct tm_verify_call {
    double start;
    uint64_t input_hash;
    uint32_t threads; /* the threads the call lets the plugin use (0 asked: every CPU) */
    int32_t device;   /* the accelerator the call names (-1: the plugin's default) */
} tm_verify_call;

void tm_verify_begin(topoml_context *ctx, const tm_backend *b, const topoml_input_v1 *in,
                     const topoml_call_v1 *call, tm_verify_call *vc);
/* After backend `b` answered an op with TOPOML_OK: check the answer and, as
 * the policy says, re-run it on the built-in reference. A plugin's wrong
 * answer is replaced by the reference's (the caller sees TOPOML_OK and the
 * right answer), `b` is rejected for the context, its certificate revoked
 * and a warning logged. Errors: TOPOML_E_PLUGIN when the plugin changed its
 * input (nothing right can be computed from it any more), or the
 * reference's own error. The built-in reference itself is never checked. */
int tm_verify_distances(topoml_context *ctx, tm_backend **b, const topoml_input_v1 *in,
                        const tm_verify_call *vc, void *out, uint64_t count, bool guard_ok);
int tm_verify_edges(topoml_context *ctx, tm_backend **b, const topoml_input_v1 *in,
                    const tm_verify_call *vc, double threshold, topoml_edge **edges,
                    uint64_t *n_edges);
/* Under automatic choice (no backend named), a plugin whose op failed —
 * any status but a cancel or the memory limit — does not end the call: the
 * reference computes it instead, and the failure is logged as a warning
 * (ops.c). Returns the reference to run, or NULL when the failure is the
 * caller's to see (a backend named, the reference's own, a cancel, the
 * limit). */
tm_backend *tm_fallback_after_failure(topoml_context *ctx, const tm_backend *b, uint32_t op,
                                      int rc, const char *msg);
/* The same for the finished dimensions 0..res->max_dim of a call that
 * stopped early (the memory limit; a cancel: no re-run then). */
int tm_verify_partial_barcode(topoml_context *ctx, tm_backend **b, uint32_t op,
                              const topoml_input_v1 *in, const tm_verify_call *vc,
                              const topoml_rips_params_v1 *params, topoml_barcode_v1 *res,
                              bool cancelled);
/* Persistence images (image.c): the diagrams' hash before the call, and
 * the same checks after it (finite, non-negative pixels; re-runs as above,
 * pixel by pixel within the suite's bound). */
void tm_verify_image_begin(const tm_backend *b, uint64_t n_diagrams, const uint64_t *offsets,
                           const topoml_pair *pairs, tm_verify_call *vc);
int tm_verify_image(topoml_context *ctx, tm_backend **b, const topoml_image_params_v1 *p,
                    uint64_t n_diagrams, const uint64_t *offsets, const topoml_pair *pairs,
                    const tm_verify_call *vc, double *out);
/* op TOPOML_OP_RIPS (params) or TOPOML_OP_H0 (params->threshold only). */
int tm_verify_barcode(topoml_context *ctx, tm_backend **b, uint32_t op, const topoml_input_v1 *in,
                      const tm_verify_call *vc, const topoml_rips_params_v1 *params,
                      topoml_barcode_v1 *res);

/* Progress while the reference re-runs a plugin's call (verify.c): on, a
 * stage "verifying on the reference" is reported and the reference's own
 * stages are prefixed with it; off (rerun_done) ends that. A caller that
 * says stop at that stage leaves ctx->progress_rerun_cancelled set: the
 * re-run is then cancelled (verify.c reads it after each re-run). */
void tm_progress_rerun(topoml_context *ctx, bool on);

/* ---- Selection by cost (calibrate.c; registry.c's tm_select) ---- */
/* seconds = a + b * work */
typedef struct tm_cost_fit {
    double a, b;
} tm_cost_fit;
/* A backend's Rips model on this machine: fitted on one thread and on
 * `threads` (what calls may use: tm_threads_allowed of the configuration). */
typedef struct tm_cost_model {
    unsigned threads;
    tm_cost_fit one, all;
    char source[32]; /* "calibrated now" or "calibration record" */
} tm_cost_model;

/* What the cost model is fed: the reduction's estimated cost (the collapse's
 * size rule, tm_collapse_plan_for) plus the edges' and points' own. */
double tm_rips_work(uint64_t n, uint64_t m, uint32_t max_dim);
/* b's model: from its record in the cache folder when that still holds
 * (same plugin file, core, CPU and thread count), else calibrated now (a
 * few timed Rips calls) and the record written. NULL when a calibration
 * call fails or memory runs out: b is then left out of the comparison. */
const tm_cost_model *tm_cost_model_of(topoml_context *ctx, tm_backend *b);
/* Predicted seconds of a call of `work` on `threads` (0: all). */
double tm_cost_predict(const tm_cost_model *m, double work, unsigned threads);
/* Parse a calibration record for b and `threads`: false, with why, when it
 * is damaged or bound to another plugin file, core, CPU or thread count. */
bool tm_calibration_parse(const tm_backend *b, unsigned threads, const char *text, size_t len,
                          tm_cost_model *m, char *why, size_t why_size);

#endif /* TOPOML_GATE_H */
