/*
 * plugin.c — the face of topoml-backend-asm-avx512: the entry symbol, the
 * vtable, the per-context state (gate verdict, device string, capability
 * records) and the two ops, which check the gate and hand the work to
 * tiling.c with the AVX-512 kernels of kernels.S.
 *
 * No AVX-512 instruction runs unless the gate (gate.c) passed when the state
 * was made: probe reports its verdict, and every op refuses with
 * TOPOML_E_UNSUPPORTED, the same reason in call->error, when it failed.
 */
#include <stdio.h>
#include <string.h>

#include "gate.h"
#include "tiling.h"
#include "topoml/plugin.h"

#define PLUGIN_NAME "asm-avx512"
#define PLUGIN_VERSION "0.1.0"

static const avx512_kernels kernels_avx512 = {
    topoml_avx512_dist_f32,
    topoml_avx512_dist_f64,
    topoml_avx512_edges_f32,
    topoml_avx512_edges_f64,
};

/* Tile sizes and loop order of kernels.S and tiling.c, for `topoml
 * backends` and the conformance report. */
static const char schedule[] =
    "isa=avx512f tile_f32=6x48 tile_f64=6x24 rows=6 vectors=3 panel=coordinate-major "
    "k_unroll=2 sum=sequential-fma threads=1";

typedef struct plugin_state {
    const topoml_host_v1 *host;
    int gate; /* TOPOML_OK, or TOPOML_E_UNSUPPORTED with `why` */
    char why[128];
    char device[192];
    topoml_capability_v1 caps[2];
} plugin_state;

static int refuse(const topoml_call_v1 *call, int status, const char *message)
{
    if (call && call->error && call->error_size > 0)
        snprintf(call->error, call->error_size, "asm-avx512: %s", message);
    return status;
}

static int plugin_create(const topoml_host_v1 *host, void **state)
{
    avx512_cpu_regs regs;
    uint32_t features = 0;
    char brand[64];
    plugin_state *s;

    if (!state)
        return TOPOML_E_INVALID;
    *state = NULL;
    if (!host || host->struct_size < TOPOML_HOST_V1_MIN_SIZE || !host->alloc || !host->free)
        return TOPOML_E_INVALID;
    s = host->alloc(host->host_data, sizeof *s);
    if (!s)
        return TOPOML_E_NOMEM;
    memset(s, 0, sizeof *s);
    s->host = host;

    avx512_gate_read(&avx512_cpu_hardware, &regs);
    s->gate = avx512_gate_decode(&regs, &features, s->why, sizeof s->why);
    avx512_cpu_brand(&avx512_cpu_hardware, brand, sizeof brand);
    avx512_device_string(brand, features, s->device, sizeof s->device);

    for (unsigned c = 0; c < 2; c++) {
        topoml_capability_v1 *cap = &s->caps[c];
        cap->struct_size = sizeof *cap;
        cap->op = c == 0 ? TOPOML_OP_DISTANCES : TOPOML_OP_EDGES;
        cap->dtypes = (1u << TOPOML_F32) | (1u << TOPOML_F64);
        cap->metrics = (1u << TOPOML_METRIC_EUCLIDEAN) | (1u << TOPOML_METRIC_SQEUCLIDEAN);
        cap->inputs = 1u << TOPOML_INPUT_POINTS;
        /* Edge indices are 32-bit. */
        cap->max_points = c == 0 ? 0 : (uint64_t)UINT32_MAX + 1;
        cap->device = s->device;
        cap->schedule = schedule;
    }

    if (host->log) {
        char line[384];
        snprintf(line, sizeof line, PLUGIN_NAME ": %s; %s%s", s->device,
                 s->gate == TOPOML_OK ? "kernels enabled: " : "kernels disabled: ", s->why);
        host->log(host->host_data, TOPOML_LOG_DEBUG, line);
    }
    *state = s;
    return TOPOML_OK;
}

static void plugin_destroy(void *state)
{
    plugin_state *s = state;

    if (s)
        s->host->free(s->host->host_data, s);
}

static int plugin_probe(void *state, char *why, size_t why_size)
{
    plugin_state *s = state;
    avx512_cpu_regs regs;

    if (s) {
        if (why && why_size > 0)
            snprintf(why, why_size, "%s", s->why);
        return s->gate;
    }
    avx512_gate_read(&avx512_cpu_hardware, &regs);
    return avx512_gate_decode(&regs, NULL, why, why_size);
}

static int plugin_capabilities(void *state, const topoml_capability_v1 **caps, uint32_t *n_caps)
{
    plugin_state *s = state;

    if (!s || !caps || !n_caps)
        return TOPOML_E_INVALID;
    *caps = s->caps;
    *n_caps = 2;
    return TOPOML_OK;
}

/* The kernels, or NULL with the refusal in call->error. */
static const avx512_kernels *kernels_for(const plugin_state *s, const topoml_call_v1 *call,
                                         int *status)
{
    if (!s) {
        *status = refuse(call, TOPOML_E_INVALID, "no state: create() was not called");
        return NULL;
    }
    if (s->gate != TOPOML_OK) {
        *status = refuse(call, s->gate, s->why);
        return NULL;
    }
    return &kernels_avx512;
}

static int plugin_distances(void *state, const topoml_call_v1 *call, const topoml_input_v1 *in,
                            void *out)
{
    int status;
    const avx512_kernels *k = kernels_for(state, call, &status);

    return k ? avx512_distances(k, call, in, out) : status;
}

static int plugin_edges(void *state, const topoml_call_v1 *call, const topoml_input_v1 *in,
                        double threshold, topoml_edge **out, uint64_t *n_out)
{
    int status;
    const avx512_kernels *k = kernels_for(state, call, &status);

    if (out)
        *out = NULL;
    if (n_out)
        *n_out = 0;
    return k ? avx512_edges(k, call, in, threshold, out, n_out) : status;
}

static const topoml_backend_v1 backend = {
    .struct_size = sizeof(topoml_backend_v1),
    .abi_version = TOPOML_ABI_VERSION,
    .name = PLUGIN_NAME,
    .version = PLUGIN_VERSION,
    .vendor = "topoml",
    .description = "AVX-512 assembly kernels: pairwise distances and threshold edges of point "
                   "clouds (f32/f64, euclidean and squared euclidean)",
    .create = plugin_create,
    .destroy = plugin_destroy,
    .probe = plugin_probe,
    .capabilities = plugin_capabilities,
    .distances = plugin_distances,
    .edges = plugin_edges,
    .h0 = NULL,
    .rips = NULL,
    .image = NULL,
};

TOPOML_PLUGIN_EXPORT int topoml_backend_negotiate(uint32_t *abi_version, const topoml_host_v1 *host,
                                                  const topoml_backend_v1 **out)
{
    (void)host;
    if (!abi_version || !out)
        return TOPOML_E_INVALID;
    /* Version 1 is the only one this plugin speaks; any core that speaks it
     * (offers >= 1) gets it. */
    if (*abi_version < TOPOML_ABI_VERSION)
        return TOPOML_E_ABI;
    *abi_version = TOPOML_ABI_VERSION;
    *out = &backend;
    return TOPOML_OK;
}
