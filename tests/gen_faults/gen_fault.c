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
 * and the same for representative cocycles (TOPOML_CAP_COCYCLES), on the
 * of a CONDENSED f64 input:
 *   COC_NOT_COCYCLE  on the first bar of dimension 1 that has one, a row is
 *                    added: value 1 on an edge shorter than the birth that
 *                    is a side of a triangle of diameter <= the birth, which
 *                    the cocycle did not name: its coboundary on that
 *                    triangle is then 1 (it was 0);
 * and on the longest finite bar of dimension 1:
 *   COC_UNBORN       the bar's first row (its birth edge) is dropped: the
 *                    rest is zero on every edge of the birth's length.
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

#if !defined(GEN_MISSING) && !defined(GEN_NO_CLAIM) && !defined(GEN_COC)
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

#ifdef GEN_COC
#include <string.h>

#ifndef GEN_COC_UNBORN
static double cdist(const topoml_input_v1 *in, uint32_t i, uint32_t j)
{
    if (i < j) {
        uint32_t t = i;
        i = j;
        j = t;
    }
    return ((const double *)in->data)[(uint64_t)i * (i - 1) / 2 + j];
}
#endif

/* Bar k's rows replaced: `drop` rows from its first, and `add` (one row of
 * d + 2 words, or NULL) put first. New arrays from call->alloc. */
static int splice(const topoml_call_v1 *call, topoml_barcode_v1 *out, uint64_t k, uint64_t drop,
                  const uint32_t *add)
{
    const uint32_t w = out->intervals[k].dim + 2;
    const uint64_t *off = out->cocycle_offsets, total = off[out->n_intervals];
    const uint64_t delta_add = add ? w : 0, delta_drop = drop * w;
    const uint64_t words = total + delta_add - delta_drop;
    uint64_t *no = call->alloc(call->host_data, (out->n_intervals + 1) * sizeof *no);
    uint32_t *nc = call->alloc(call->host_data, (words ? words : 1) * sizeof *nc);
    if (!no || !nc)
        return TOPOML_E_NOMEM;
    memcpy(nc, out->cocycles, off[k] * sizeof *nc);
    uint64_t at = off[k];
    if (add) {
        memcpy(nc + at, add, w * sizeof *nc);
        at += w;
    }
    memcpy(nc + at, out->cocycles + off[k] + delta_drop, (total - off[k] - delta_drop) * sizeof *nc);
    for (uint64_t j = 0; j <= out->n_intervals; j++)
        no[j] = j <= k ? off[j] : off[j] + delta_add - delta_drop;
    call->free(call->host_data, out->cocycle_offsets);
    call->free(call->host_data, out->cocycles);
    out->cocycle_offsets = no;
    out->cocycles = nc;
    return TOPOML_OK;
}

static int spoil_cocycle(const topoml_call_v1 *call, const topoml_input_v1 *in,
                         topoml_barcode_v1 *out)
{
    int64_t k = -1;
    for (uint64_t j = 0; j < out->n_intervals; j++) {
        const topoml_interval *v = &out->intervals[j];
        if (v->dim == 1 && isfinite(v->death) &&
            (k < 0 || v->death - v->birth > out->intervals[k].death - out->intervals[k].birth))
            k = (int64_t)j;
    }
    if (k < 0 || in->kind != TOPOML_INPUT_CONDENSED || in->dtype != TOPOML_F64)
        return TOPOML_OK;
#ifdef GEN_COC_UNBORN
    return splice(call, out, (uint64_t)k, 1, NULL);
#else
    /* the first bar of dimension 1 with such a triangle */
    for (k = 0; k < (int64_t)out->n_intervals; k++) {
    if (out->intervals[k].dim != 1)
        continue;
    const double b = out->intervals[k].birth;
    const uint64_t a = out->cocycle_offsets[k], e = out->cocycle_offsets[k + 1];
    for (uint32_t x = 2; x < in->n; x++)
        for (uint32_t y = 1; y < x; y++)
            for (uint32_t z = 0; z < y; z++) {
                if (cdist(in, x, y) > b || cdist(in, x, z) > b || cdist(in, y, z) > b)
                    continue;
                const uint32_t side[3][2] = {{x, y}, {x, z}, {y, z}};
                for (int t = 0; t < 3; t++) {
                    bool named = false;
                    for (uint64_t r = a; r < e; r += 3)
                        named = named || (out->cocycles[r] == side[t][0] &&
                                          out->cocycles[r + 1] == side[t][1]);
                    if (!named && cdist(in, side[t][0], side[t][1]) < b) {
                        const uint32_t row[3] = {side[t][0], side[t][1], 1};
                        return splice(call, out, (uint64_t)k, 0, row);
                    }
                }
            }
    }
    return TOPOML_OK;
#endif
}
#endif

static int rips(void *state, const topoml_call_v1 *call, const topoml_input_v1 *in,
                const topoml_rips_params_v1 *params, topoml_barcode_v1 *out)
{
    int rc = ref->rips(state, call, in, params, out);
#ifdef GEN_COC
    if (rc != TOPOML_OK || !out->cocycle_offsets)
        return rc;
    return spoil_cocycle(call, in, out);
#endif
    if (rc != TOPOML_OK || !out->generators)
        return rc;
#if defined(GEN_COC)
#elif defined(GEN_NO_CLAIM)
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
