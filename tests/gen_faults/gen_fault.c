/*
 * gen_fault.c — plugins for the tests of generators (TOPOML_CAP_GENERATORS):
 * the scalar reference's code under another name, claiming generators and
 * getting them wrong in one way, or not claiming them (-DGEN_<KIND>):
 *   WRONG_LENGTH  the death edge of the longest finite bar of dimension >= 1
 *                 is replaced by its birth edge: a real edge, of the wrong
 *                 length;
 *   MISSING       asked for generators, it returns none;
 *   SWAPPED       that death edge has its vertices the wrong way round;
 *   NO_CLAIM      right, but its capability record does not claim them (the
 *                 core must not ask it, and runs the reference instead).
 * Each is built into its own folder by tests/CMakeLists.txt.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "scalar.h"
#include "topoml/plugin.h"

#ifndef GEN_NAME
#error "GEN_NAME must name the backend"
#endif

static topoml_backend_v1 vt;
static const topoml_backend_v1 *ref;

#if !defined(GEN_MISSING) && !defined(GEN_NO_CLAIM)
/* The longest finite bar of dimension >= 1, or -1. */
static int64_t pick_bar(const topoml_barcode_v1 *out)
{
    int64_t pick = -1;
    for (uint64_t k = 0; k < out->n_intervals; k++) {
        const topoml_interval *v = &out->intervals[k];
        if (v->dim >= 1 && isfinite(v->death) && v->death > v->birth &&
            (pick < 0 || v->death - v->birth > out->intervals[pick].death -
                                                    out->intervals[pick].birth))
            pick = (int64_t)k;
    }
    return pick;
}
#endif

#ifdef GEN_NO_CLAIM
/* The scalar records without TOPOML_CAP_GENERATORS. */
static topoml_capability_v1 claimed[8];
static int capabilities(void *state, const topoml_capability_v1 **caps, uint32_t *n_caps)
{
    const topoml_capability_v1 *c;
    uint32_t n;
    int rc = ref->capabilities(state, &c, &n);
    if (rc != TOPOML_OK || n > 8)
        return rc != TOPOML_OK ? rc : TOPOML_E_INTERNAL;
    for (uint32_t i = 0; i < n; i++) {
        claimed[i] = c[i];
        claimed[i].features &= ~TOPOML_CAP_GENERATORS;
    }
    *caps = claimed;
    *n_caps = n;
    return TOPOML_OK;
}
#endif

static int rips(void *state, const topoml_call_v1 *call, const topoml_input_v1 *in,
                const topoml_rips_params_v1 *params, topoml_barcode_v1 *out)
{
    int rc = ref->rips(state, call, in, params, out);
    if (rc != TOPOML_OK || !out->generators)
        return rc;
#if defined(GEN_NO_CLAIM)
    /* Never asked: whatever it would give is not looked at. */
#elif defined(GEN_MISSING)
    call->free(call->host_data, out->generators);
    out->generators = NULL;
#else
    int64_t k = pick_bar(out);
    if (k >= 0) {
        topoml_generator *g = &out->generators[k];
#if defined(GEN_WRONG_LENGTH)
        g->death[0] = g->birth[0];
        g->death[1] = g->birth[1];
#else /* GEN_SWAPPED: the right edge, its vertices the wrong way round */
        uint32_t t = g->death[0];
        g->death[0] = g->death[1];
        g->death[1] = t;
#endif
    }
#endif
    return rc;
}

TOPOML_PLUGIN_EXPORT int topoml_backend_negotiate(uint32_t *abi_version, const topoml_host_v1 *host,
                                                  const topoml_backend_v1 **backend)
{
    (void)host;
    if (!abi_version || !backend || *abi_version < 1)
        return TOPOML_E_ABI;
    ref = topoml_scalar_backend();
    vt = *ref;
    vt.name = GEN_NAME;
    vt.version = "0.0.1";
    vt.vendor = "topoml tests";
    vt.description = "a copy of the scalar reference with wrong generators, for the tests";
    vt.rips = rips;
#ifdef GEN_NO_CLAIM
    vt.capabilities = capabilities;
#endif
    *abi_version = 1;
    *backend = &vt;
    return TOPOML_OK;
}
