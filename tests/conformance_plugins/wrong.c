/*
 * wrong.c — plugins for the conformance and gate tests: the scalar
 * reference's own code under another name, each copy wrong in exactly one
 * subtle way (-DWRONG_<KIND>), or not at all (-DWRONG_NOTHING: a correct
 * copy that must pass and be enabled). Each is built into its own folder by
 * tests/CMakeLists.txt.
 *
 * The faults are the kind a real port makes: a bar off by more than the
 * tolerance, a lost H1 class, an off-by-one in the edge sort, a loop bound
 * one short in one metric, a crash, a hang, and a capability record that
 * promises more than the code does.
 *
 * -DWRONG_H0_ONLY is right too: the reference with every op but h0 taken
 * away (and its capability records with them), the plugin that a
 * dimension-0 barcode may be routed to (test_h0_only_routing.py).
 */
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scalar.h"
#include "topoml/plugin.h"

#ifndef WRONG_NAME
#error "WRONG_NAME must name the backend"
#endif

static topoml_backend_v1 vt;
static const topoml_backend_v1 *ref;

#ifdef WRONG_SHIFTED_BAR
/* The longest finite H1 bar (else H0 bar) dies 10% of its length late. */
static int rips(void *state, const topoml_call_v1 *call, const topoml_input_v1 *in,
                const topoml_rips_params_v1 *params, topoml_barcode_v1 *out)
{
    int rc = ref->rips(state, call, in, params, out);
    if (rc != TOPOML_OK)
        return rc;
    topoml_interval *pick = NULL;
    for (uint32_t want = 1; want <= 2 && !pick; want++)
        for (uint64_t k = 0; k < out->n_intervals; k++) {
            topoml_interval *v = &out->intervals[k];
            if (v->dim == (want == 1 ? 1u : 0u) && isfinite(v->death) &&
                (!pick || v->death - v->birth > pick->death - pick->birth))
                pick = v;
        }
    if (pick)
        pick->death += 0.1 * (pick->death - pick->birth);
    return rc;
}
#endif

#ifdef WRONG_MISSING_H1
/* The most persistent H1 class is lost. */
static int rips(void *state, const topoml_call_v1 *call, const topoml_input_v1 *in,
                const topoml_rips_params_v1 *params, topoml_barcode_v1 *out)
{
    int rc = ref->rips(state, call, in, params, out);
    if (rc != TOPOML_OK)
        return rc;
    uint64_t pick = UINT64_MAX;
    for (uint64_t k = 0; k < out->n_intervals; k++) {
        const topoml_interval *v = &out->intervals[k];
        if (v->dim == 1 &&
            (pick == UINT64_MAX ||
             v->death - v->birth > out->intervals[pick].death - out->intervals[pick].birth))
            pick = k;
    }
    if (pick != UINT64_MAX) {
        memmove(out->intervals + pick, out->intervals + pick + 1,
                (out->n_intervals - pick - 1) * sizeof *out->intervals);
        out->n_intervals--;
    }
    return rc;
}
#endif

#ifdef WRONG_EDGE_ORDER
/* An off-by-one in the sort: the last two edges come out swapped. */
static int edges(void *state, const topoml_call_v1 *call, const topoml_input_v1 *in,
                 double threshold, topoml_edge **out, uint64_t *n_out)
{
    int rc = ref->edges(state, call, in, threshold, out, n_out);
    if (rc == TOPOML_OK && *n_out >= 2) {
        topoml_edge t = (*out)[*n_out - 1];
        (*out)[*n_out - 1] = (*out)[*n_out - 2];
        (*out)[*n_out - 2] = t;
    }
    return rc;
}
#endif

#ifdef WRONG_METRIC
/* Chebyshev with the loop one coordinate short; every other metric right. */
static int distances(void *state, const topoml_call_v1 *call, const topoml_input_v1 *in, void *out)
{
    if (in->kind != TOPOML_INPUT_POINTS || in->metric != TOPOML_METRIC_CHEBYSHEV)
        return ref->distances(state, call, in, out);
    uint64_t k = 0;
    for (uint64_t i = 1; i < in->n; i++)
        for (uint64_t j = 0; j < i; j++, k++) {
            double m = 0;
            for (uint64_t d = 0; d + 1 < in->dim; d++) {
                double x = in->dtype == TOPOML_F32
                               ? (double)((const float *)in->data)[i * in->dim + d] -
                                     (double)((const float *)in->data)[j * in->dim + d]
                               : ((const double *)in->data)[i * in->dim + d] -
                                     ((const double *)in->data)[j * in->dim + d];
                m = fabs(x) > m ? fabs(x) : m;
            }
            if (in->dtype == TOPOML_F32)
                ((float *)out)[k] = (float)m;
            else
                ((double *)out)[k] = m;
        }
    return TOPOML_OK;
}
#endif

#ifdef WRONG_CRASH
/* A wild write in the H0 op. */
static int h0(void *state, const topoml_call_v1 *call, const topoml_input_v1 *in, double threshold,
              topoml_barcode_v1 *out)
{
    volatile int *nowhere = NULL;
    if (in->n > 1)
        *nowhere = 1;
    return ref->h0(state, call, in, threshold, out);
}
#endif

#ifdef WRONG_HANG
/* The edges op never returns once there is work to do. */
static int edges(void *state, const topoml_call_v1 *call, const topoml_input_v1 *in,
                 double threshold, topoml_edge **out, uint64_t *n_out)
{
    while (in->n > 1)
        sleep(1);
    return ref->edges(state, call, in, threshold, out, n_out);
}
#endif

#ifdef WRONG_LIAR
/* Claims Vietoris-Rips (see the capability records) but cannot do it. */
static int rips(void *state, const topoml_call_v1 *call, const topoml_input_v1 *in,
                const topoml_rips_params_v1 *params, topoml_barcode_v1 *out)
{
    (void)state;
    (void)in;
    (void)params;
    (void)out;
    return scalar_fail(call, TOPOML_E_UNSUPPORTED, "Vietoris-Rips is not implemented yet");
}
#endif

#ifdef WRONG_H0_ONLY
/* The reference's records of the h0 op only. */
static int capabilities(void *state, const topoml_capability_v1 **c, uint32_t *n)
{
    static topoml_capability_v1 kept[16];
    const topoml_capability_v1 *all;
    uint32_t count, k = 0;
    int rc = ref->capabilities(state, &all, &count);
    if (rc != TOPOML_OK)
        return rc;
    for (uint32_t i = 0; i < count && k < 16; i++)
        if (all[i].op == TOPOML_OP_H0)
            kept[k++] = all[i];
    *c = kept;
    *n = k;
    return TOPOML_OK;
}
#endif

TOPOML_PLUGIN_EXPORT int topoml_backend_negotiate(uint32_t *abi_version, const topoml_host_v1 *host,
                                                  const topoml_backend_v1 **backend)
{
    (void)host;
    if (!abi_version || !backend || *abi_version < 1)
        return TOPOML_E_ABI;
    ref = topoml_scalar_backend();
    vt = *ref;
    vt.name = WRONG_NAME;
    vt.version = "0.0.1";
    vt.vendor = "topoml tests";
    vt.description = "a copy of the scalar reference for the conformance tests";
#if defined(WRONG_SHIFTED_BAR) || defined(WRONG_MISSING_H1) || defined(WRONG_LIAR)
    vt.rips = rips;
#endif
#if defined(WRONG_EDGE_ORDER) || defined(WRONG_HANG)
    vt.edges = edges;
#endif
#ifdef WRONG_METRIC
    vt.distances = distances;
#endif
#ifdef WRONG_CRASH
    vt.h0 = h0;
#endif
#ifdef WRONG_H0_ONLY
    vt.capabilities = capabilities;
    vt.distances = NULL;
    vt.edges = NULL;
    vt.rips = NULL;
    vt.image = NULL;
    vt.description = "the scalar reference's h0 op alone, for the tests";
#endif
    *abi_version = 1;
    *backend = &vt;
    return TOPOML_OK;
}
