/*
 * plugin.c — the triton-bridge backend's face to topoml: negotiation, the
 * vtable, per-context state, probe and capability records.
 *
 * The backend runs Triton kernels compiled ahead of time for one target
 * (generated/, built by aot/build_kernels.py) through the CUDA driver,
 * loaded at run time. It loads on any machine; where there is no driver, no
 * device, or a device the cubins were not built for, probe answers
 * TOPOML_E_UNSUPPORTED and says which.
 *
 * Ops: distances and edges (point clouds, f32/f64, euclidean and squared
 * euclidean) and persistence images. No H0, no Rips.
 */
#include <stdio.h>
#include <string.h>

#include "tb.h"

#define TB_VERSION "0.1.0"

static int tb_create(const topoml_host_v1 *host, void **state)
{
    *state = NULL;
    if (host == NULL || host->alloc == NULL || host->free == NULL)
        return TOPOML_E_INVALID;
    tb_state *st = host->alloc(host->host_data, sizeof *st);
    if (st == NULL)
        return TOPOML_E_NOMEM;
    memset(st, 0, sizeof *st);
    st->host = host;
    snprintf(st->device_text, sizeof st->device_text, "cuda %s (not probed)", TB_TARGET_NAME);
    *state = st;
    return TOPOML_OK;
}

static void tb_destroy(void *state)
{
    tb_state *st = state;
    if (st == NULL)
        return;
    if (st->cu.lib != NULL) {
        tb_devices_close(st);
        tb_cuda_close(&st->cu);
    }
    st->host->free(st->host->host_data, st);
}

static int tb_probe(void *state, char *why, size_t why_size)
{
    tb_state *st = state;
    char text[300] = "";
    if (st == NULL) {
        snprintf(why, why_size, "triton-bridge: no state");
        return TOPOML_E_INVALID;
    }
    /* The default device (0) is the one probe vouches for; ops on another
     * device check that one when they are called. */
    tb_device *d;
    int status = tb_device_get(st, 0, &d, text, sizeof text);
    if (status != TOPOML_OK) {
        snprintf(st->device_text, sizeof st->device_text, "cuda %s (unavailable)", TB_TARGET_NAME);
        if (why != NULL && why_size > 0)
            snprintf(why, why_size, "triton-bridge: %s", text);
        return status;
    }
    snprintf(st->device_text, sizeof st->device_text, "%s (sm_%d%d, %.0f GiB)", d->name,
             d->cc_major, d->cc_minor, (double)d->total_mem / (1024.0 * 1024.0 * 1024.0));
    if (why != NULL && why_size > 0)
        snprintf(why, why_size, "triton-bridge: %s, %d kernels loaded (Triton %s, %s)",
                 st->device_text, TB_KERNEL_COUNT, TB_TRITON_VERSION, TB_TARGET_NAME);
    return TOPOML_OK;
}

static int tb_capabilities(void *state, const topoml_capability_v1 **caps, uint32_t *n_caps)
{
    tb_state *st = state;
    const uint32_t points = 1u << TOPOML_INPUT_POINTS;
    const uint32_t metrics = (1u << TOPOML_METRIC_EUCLIDEAN) | (1u << TOPOML_METRIC_SQEUCLIDEAN);
    const uint32_t both = (1u << TOPOML_F32) | (1u << TOPOML_F64);
    const uint64_t max_points = (uint64_t)1 << 32; /* edge vertices are uint32_t */
    const struct {
        uint32_t op, dtypes, metrics, inputs;
        uint64_t max_points;
        const char *schedule;
    } table[] = {
        {TOPOML_OP_DISTANCES, both, metrics, points, max_points, tb_schedule_distances},
        {TOPOML_OP_EDGES, both, metrics, points, max_points, tb_schedule_edges},
        {TOPOML_OP_IMAGE, 1u << TOPOML_F64, 0, 0, 0, tb_schedule_image},
    };
    for (size_t k = 0; k < sizeof table / sizeof table[0]; k++) {
        topoml_capability_v1 *c = &st->caps[k];
        memset(c, 0, sizeof *c);
        c->struct_size = sizeof *c;
        c->op = table[k].op;
        c->dtypes = table[k].dtypes;
        c->metrics = table[k].metrics;
        c->inputs = table[k].inputs;
        c->max_points = table[k].max_points;
        c->device = st->device_text;
        c->schedule = table[k].schedule;
    }
    *caps = st->caps;
    *n_caps = (uint32_t)(sizeof table / sizeof table[0]);
    return TOPOML_OK;
}

static const topoml_backend_v1 tb_backend = {
    .struct_size = sizeof(topoml_backend_v1),
    .abi_version = 1,
    .name = "triton-bridge",
    .version = TB_VERSION,
    .vendor = "topoml",
    .description = "Triton kernels compiled ahead of time for " TB_TARGET_NAME
                   " (Triton " TB_TRITON_VERSION "), launched through the CUDA driver: "
                   "distances, threshold edges, persistence images",
    .create = tb_create,
    .destroy = tb_destroy,
    .probe = tb_probe,
    .capabilities = tb_capabilities,
    .distances = tb_op_distances,
    .edges = tb_op_edges,
    .h0 = NULL,
    .rips = NULL,
    .image = tb_op_image,
};

TOPOML_PLUGIN_EXPORT int topoml_backend_negotiate(uint32_t *abi_version, const topoml_host_v1 *host,
                                                  const topoml_backend_v1 **backend);

TOPOML_PLUGIN_EXPORT int topoml_backend_negotiate(uint32_t *abi_version, const topoml_host_v1 *host,
                                                  const topoml_backend_v1 **backend)
{
    (void)host;
    if (abi_version == NULL || backend == NULL)
        return TOPOML_E_INVALID;
    *backend = NULL;
    if (*abi_version < 1)
        return TOPOML_E_ABI;
    *abi_version = 1;
    *backend = &tb_backend;
    return TOPOML_OK;
}
