/*
 * plugin.c — topoml-backend-cuda as the core sees it: the ABI entry symbol,
 * the vtable, per-context state, the probe and the capability records, and
 * one thin wrapper per op that validates, picks the device (tmc_begin) and
 * hands over to the op's own file.
 *
 * Loading this file never needs a GPU: the CUDA runtime is linked in
 * statically and only looks for the driver when the probe asks, so on a
 * machine without one the plugin loads, negotiates and answers the probe with
 * TOPOML_E_UNSUPPORTED and the reason.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "backend.h"
#ifdef TMC_HAVE_RIPS
#include "rips.h" /* the scalar reference's, compiled into this plugin */
#endif

#define ALL_METRICS ((1u << TOPOML_METRIC_COUNT) - 1u)
#define BOTH_DTYPES ((1u << TOPOML_F32) | (1u << TOPOML_F64))
#define ALL_INPUTS ((1u << TOPOML_INPUT_KIND_COUNT) - 1u)

static int cuda_create(const topoml_host_v1 *host, void **state)
{
    if (!state)
        return TOPOML_E_INVALID;
    tmc_state *st = NULL;
    if (host && host->struct_size >= TOPOML_HOST_V1_MIN_SIZE && host->alloc)
        st = host->alloc(host->host_data, sizeof *st);
    if (!st)
        return TOPOML_E_NOMEM;
    memset(st, 0, sizeof *st);
    st->host = host;
    st->probe_status = TOPOML_E_UNSUPPORTED;
    snprintf(st->probe_why, sizeof st->probe_why, "not probed yet");
    *state = st;
    return TOPOML_OK;
}

static void cuda_destroy(void *state)
{
    tmc_state *st = state;
    if (!st)
        return;
    tmc_state_release(st);
    st->host->free(st->host->host_data, st);
}

static int cuda_probe(void *state, char *why, size_t why_size)
{
    tmc_state *st = state;
    char text[TMC_TEXT];
    int status = tmc_probe_device(-1, text, sizeof text, NULL, NULL, NULL);
    if (st) {
        st->probe_status = status;
        snprintf(st->probe_why, sizeof st->probe_why, "%s", text);
    }
    if (why && why_size)
        snprintf(why, why_size, "%s", text);
    return status;
}

/* "NVIDIA H200 (sm_90, 139 GiB)" for device 0, or why there is none. */
static void describe_device(tmc_state *st)
{
    if (st->probe_status != TOPOML_OK) {
        snprintf(st->device_text, sizeof st->device_text, "cuda (unavailable: %.200s)",
                 st->probe_why);
        return;
    }
    struct cudaDeviceProp prop;
    int count = 0;
    if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess ||
        cudaGetDeviceCount(&count) != cudaSuccess) {
        snprintf(st->device_text, sizeof st->device_text, "cuda device 0 (properties unknown)");
        return;
    }
    snprintf(st->device_text, sizeof st->device_text, "%.120s (sm_%d%d, %.0f GiB, %d SMs%s)",
             prop.name, prop.major, prop.minor, (double)prop.totalGlobalMem / (1u << 30),
             prop.multiProcessorCount, count > 1 ? ", device 0 of several" : "");
}

static topoml_capability_v1 *add_cap(tmc_state *st, uint32_t op, uint32_t dtypes,
                                     uint32_t metrics, uint32_t inputs, uint32_t max_dim,
                                     uint32_t max_modulus)
{
    topoml_capability_v1 *c = &st->caps[st->n_caps++];
    memset(c, 0, sizeof *c);
    c->struct_size = sizeof *c;
    c->op = op;
    c->dtypes = dtypes;
    c->metrics = metrics;
    c->inputs = inputs;
    c->max_dim = max_dim;
    c->max_modulus = max_modulus;
    c->device = st->device_text;
    c->schedule = st->schedule_text[op];
    c->features = TOPOML_CAP_NVIDIA_DRIVER; /* its device files, in a sandboxed helper */
    return c;
}

static int cuda_capabilities(void *state, const topoml_capability_v1 **caps, uint32_t *n_caps)
{
    tmc_state *st = state;
    if (!st || !caps || !n_caps)
        return TOPOML_E_INVALID;
    describe_device(st);
    /* The kernels' attributes (registers, shared memory) can only be read
     * with a device; without one the schedule says what is fixed at build. */
    int previous = 0;
    int have_device = st->probe_status == TOPOML_OK && cudaGetDevice(&previous) == cudaSuccess &&
                      cudaSetDevice(0) == cudaSuccess;
    for (int op = 0; op < TOPOML_OP_COUNT; op++)
        st->schedule_text[op][0] = '\0';
    tmc_distances_schedule(st->schedule_text[TOPOML_OP_DISTANCES], TMC_SCHEDULE, have_device);
    tmc_edges_schedule(st->schedule_text[TOPOML_OP_EDGES], TMC_SCHEDULE);
    snprintf(st->schedule_text[TOPOML_OP_H0], TMC_SCHEDULE,
             "edges=device(as-edges) union-find=host");
#ifdef TMC_HAVE_RIPS
    snprintf(st->schedule_text[TOPOML_OP_RIPS], TMC_SCHEDULE,
             "distances=device(as-distances) threshold-edges=device(as-edges) "
             "columns(dim>=2)=device clearing(dim>=2)=device apparent-pairs(dim>=2)=device "
             "columns(dim1)=host reduction=host(scalar-engine,threads) "
             "sparse-input(collapsed,threshold,n<=16384)=columns(dim>=2)=device "
             "sparse-input(other)=host");
#endif
#ifdef TMC_HAVE_IMAGE
    tmc_image_schedule(st->schedule_text[TOPOML_OP_IMAGE], TMC_SCHEDULE);
#endif
    /* Put the caller's device back. Failing here means the CUDA context is
     * broken; the records are complete anyway, and the next op's tmc_begin
     * reports the error. */
    if (have_device)
        (void)cudaSetDevice(previous);
    for (int op = 0; op < TOPOML_OP_COUNT; op++) {
        size_t used = strlen(st->schedule_text[op]);
        snprintf(st->schedule_text[op] + used, TMC_SCHEDULE - used, " archs=%s", TMC_ARCHS);
    }

    st->n_caps = 0;
    add_cap(st, TOPOML_OP_DISTANCES, BOTH_DTYPES, ALL_METRICS, 1u << TOPOML_INPUT_POINTS, 0, 0);
    add_cap(st, TOPOML_OP_EDGES, BOTH_DTYPES, ALL_METRICS, ALL_INPUTS, 0, 0);
    add_cap(st, TOPOML_OP_H0, BOTH_DTYPES, ALL_METRICS, ALL_INPUTS, 0, 0);
#ifdef TMC_HAVE_RIPS
    /* Every Rips call ends in the scalar engine's reduction, which gives
     * the generators when asked (TOPOML_RIPS_PARAM_GENERATORS): so on
     * points in device memory too. */
    add_cap(st, TOPOML_OP_RIPS, BOTH_DTYPES, ALL_METRICS, ALL_INPUTS, SCALAR_RIPS_MAX_DIM,
            SCALAR_RIPS_MAX_MODULUS)
        ->features |= TOPOML_CAP_GENERATORS;
    /* Points in device memory are read where they are (device_input.cu);
     * a matrix there is not (the engine reads it on the host): the core
     * copies it through input_to_host. */
    snprintf(st->device_input_schedule, TMC_SCHEDULE,
             "input=device(points, read in place; checked and f32 widened on the device) %.400s",
             st->schedule_text[TOPOML_OP_RIPS]);
    add_cap(st, TOPOML_OP_RIPS, BOTH_DTYPES, ALL_METRICS, 1u << TOPOML_INPUT_POINTS,
            SCALAR_RIPS_MAX_DIM, SCALAR_RIPS_MAX_MODULUS)
        ->features |= TOPOML_CAP_DEVICE_INPUT | TOPOML_CAP_GENERATORS;
    st->caps[st->n_caps - 1].schedule = st->device_input_schedule;
#endif
#ifdef TMC_HAVE_IMAGE
    add_cap(st, TOPOML_OP_IMAGE, 1u << TOPOML_F64, 0, 0, 0, 0);
#endif
    *caps = st->caps;
    *n_caps = st->n_caps;
    return TOPOML_OK;
}

static int cuda_distances(void *state, const topoml_call_v1 *call, const topoml_input_v1 *in,
                          void *out)
{
    tmc_ctx ctx;
    int status = tmc_begin(&ctx, state, call, in, 1u << TOPOML_INPUT_POINTS);
    if (status == TOPOML_OK)
        status = tmc_distances(&ctx, in, out);
    return tmc_end(&ctx, status);
}

static int cuda_edges(void *state, const topoml_call_v1 *call, const topoml_input_v1 *in,
                      double threshold, topoml_edge **out, uint64_t *n_out)
{
    if (!out || !n_out)
        return tmc_fail(call, TOPOML_E_INVALID, "no output for the edges");
    *out = NULL;
    *n_out = 0;
    tmc_ctx ctx;
    int status = tmc_begin(&ctx, state, call, in, ALL_INPUTS);
    if (status == TOPOML_OK)
        status = tmc_edges(&ctx, in, threshold, out, n_out);
    return tmc_end(&ctx, status);
}

static int cuda_h0(void *state, const topoml_call_v1 *call, const topoml_input_v1 *in,
                   double threshold, topoml_barcode_v1 *out)
{
    if (!out || out->struct_size < TOPOML_BARCODE_V1_MIN_SIZE)
        return tmc_fail(call, TOPOML_E_INVALID, "barcode struct missing or too short");
    tmc_ctx ctx;
    int status = tmc_begin(&ctx, state, call, in, ALL_INPUTS);
    topoml_edge *edges = NULL;
    uint64_t n_edges = 0;
    if (status == TOPOML_OK)
        status = tmc_edges(&ctx, in, threshold, &edges, &n_edges);
    if (status == TOPOML_OK)
        status = tmc_h0_from_edges(&ctx, in->n, edges, n_edges, out);
    tmc_host_free(&ctx, edges);
    return tmc_end(&ctx, status);
}

#ifdef TMC_HAVE_RIPS
static int cuda_rips(void *state, const topoml_call_v1 *call, const topoml_input_v1 *in,
                     const topoml_rips_params_v1 *params, topoml_barcode_v1 *out)
{
    tmc_ctx ctx;
    int status = tmc_begin(&ctx, state, call, in, ALL_INPUTS);
    if (status == TOPOML_OK)
        status = tmc_rips(&ctx, in, params, out);
    if (status == TOPOML_OK && call->log) {
        /* GPU memory, reported (`topoml barcode --verbose`). */
        char line[192];
        snprintf(line, sizeof line,
                 "cuda: rips: device memory high-water %.1f MiB (sampled after each large "
                 "allocation; %.1f MiB were free on device %d)",
                 ctx.st->device_high / 1048576.0, ctx.st->free_at_begin / 1048576.0, ctx.device);
        call->log(call->host_data, TOPOML_LOG_INFO, line);
    }
    if (status == TOPOML_OK && tmc_on_device(in) && call->log) {
        /* The no-copy check of the tests reads this line. */
        char line[192];
        snprintf(line, sizeof line,
                 "cuda: rips read its input on CUDA device %d: %llu host copies of the input",
                 in->device, (unsigned long long)ctx.input_copies);
        call->log(call->host_data, TOPOML_LOG_INFO, line);
    }
    return tmc_end(&ctx, status);
}
#endif

static int cuda_input_to_host(void *state, const topoml_call_v1 *call, const topoml_input_v1 *in,
                              void *out)
{
    if (!in || !tmc_on_device(in) || (!out && in->n > 1))
        return tmc_fail(call, TOPOML_E_INVALID, "input_to_host: no input in device memory");
    tmc_ctx ctx;
    int status = tmc_begin(&ctx, state, call, in, (1u << TOPOML_INPUT_POINTS) |
                                                      (1u << TOPOML_INPUT_CONDENSED));
    if (status == TOPOML_OK)
        status = tmc_input_to_host(&ctx, in, out);
    return tmc_end(&ctx, status);
}

#ifdef TMC_HAVE_IMAGE
static int cuda_image(void *state, const topoml_call_v1 *call, const topoml_image_params_v1 *params,
                      uint64_t n_diagrams, const uint64_t *offsets, const topoml_pair *pairs,
                      double *out)
{
    tmc_ctx ctx;
    int status = tmc_begin(&ctx, state, call, NULL, 0);
    if (status == TOPOML_OK)
        status = tmc_image(&ctx, params, n_diagrams, offsets, pairs, out);
    return tmc_end(&ctx, status);
}
#endif

static const topoml_backend_v1 cuda_vtable = {
    .struct_size = sizeof(topoml_backend_v1),
    .abi_version = 1,
    .name = "cuda",
    .version = "0.1.0",
    .vendor = "topoml",
    .description = "NVIDIA GPUs through CUDA: distances, threshold edges, H0, persistence "
                   "images; Vietoris-Rips with distances on the device",
    .create = cuda_create,
    .destroy = cuda_destroy,
    .probe = cuda_probe,
    .capabilities = cuda_capabilities,
    .distances = cuda_distances,
    .edges = cuda_edges,
    .h0 = cuda_h0,
#ifdef TMC_HAVE_RIPS
    .rips = cuda_rips,
#endif
#ifdef TMC_HAVE_IMAGE
    .image = cuda_image,
#endif
    .input_to_host = cuda_input_to_host,
};

TOPOML_PLUGIN_EXPORT int topoml_backend_negotiate(uint32_t *abi_version, const topoml_host_v1 *host,
                                                  const topoml_backend_v1 **backend)
{
    (void)host;
    if (!abi_version || !backend || *abi_version < 1)
        return TOPOML_E_ABI;
    *abi_version = 1;
    *backend = &cuda_vtable;
    return TOPOML_OK;
}
