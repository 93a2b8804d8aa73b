/*
 * fake_device.c — a plugin for the tests of device-resident input
 * (TOPOML_CAP_DEVICE_INPUT, input_to_host) on machines without a GPU: the
 * scalar reference's code under the name "fake-device", whose "device
 * memory" (TOPOML_MEMORY_CUDA, device 0) is in fact this process's memory.
 * Its rips op claims such input for points and reads it in place; its
 * input_to_host copies it. Each says what it did through the log, so that
 * a test sees which path ran and that nothing was copied on the device path.
 * Input said to be on another device than 0 is refused, as a real device
 * plugin refuses a pointer that is not where it is said to be.
 * Built with FAKE_DEVICE_NO_GENERATORS, it is "fake-device-nogens", whose
 * device-input record does not claim generators. Built with FAKE_DEVICE_NAME
 * and FAKE_DEVICE_NS_PER_PAIR, it is a backend of that name whose rips
 * sleeps that many nanoseconds per pair of points (or per edge) after
 * computing: fake-device-slow and fake-device-swift, for the tests of
 * selection by cost (test_select_cost).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "scalar.h"
#include "topoml/plugin.h"

static topoml_backend_v1 vt;
static const topoml_backend_v1 *ref;
static topoml_capability_v1 claimed[8];

static int on_device(const topoml_input_v1 *in)
{
    return in->struct_size >= sizeof(topoml_input_v1) && in->memory != TOPOML_MEMORY_HOST;
}

static void say(const topoml_call_v1 *call, const char *what, const topoml_input_v1 *in)
{
    char line[160];
    snprintf(line, sizeof line, "fake-device: %s (memory %u, device %d, stream %p)", what,
             in->memory, in->device, in->stream);
    if (call->log)
        call->log(call->host_data, TOPOML_LOG_INFO, line);
}

static int refuse(const topoml_call_v1 *call, const topoml_input_v1 *in)
{
    if (in->memory != TOPOML_MEMORY_CUDA || in->device != 0) {
        if (call->error && call->error_size)
            snprintf(call->error, call->error_size, "fake-device: no memory %u on device %d",
                     in->memory, in->device);
        return TOPOML_E_INVALID;
    }
    return TOPOML_OK;
}

/* The scalar records, and rips on points in "device" memory besides. */
static int capabilities(void *state, const topoml_capability_v1 **caps, uint32_t *n_caps)
{
    const topoml_capability_v1 *c;
    uint32_t n;
    int rc = ref->capabilities(state, &c, &n);
    if (rc != TOPOML_OK || n + 1 > 8)
        return rc != TOPOML_OK ? rc : TOPOML_E_INTERNAL;
    memcpy(claimed, c, n * sizeof *c);
    for (uint32_t i = 0; i < n; i++) {
        claimed[i].device = "fake accelerator";
        if (c[i].op == TOPOML_OP_RIPS) {
            claimed[n] = c[i];
            claimed[n].device = "fake accelerator";
            claimed[n].inputs = 1u << TOPOML_INPUT_POINTS;
#ifdef FAKE_DEVICE_NO_GENERATORS
            claimed[n].features = TOPOML_CAP_DEVICE_INPUT;
#else
            claimed[n].features = c[i].features | TOPOML_CAP_DEVICE_INPUT;
#endif
        }
    }
    *caps = claimed;
    *n_caps = n + 1;
    return TOPOML_OK;
}

#ifndef FAKE_DEVICE_NS_PER_PAIR
#define FAKE_DEVICE_NS_PER_PAIR 0
#endif
static void take_time(const topoml_input_v1 *in)
{
    const double pairs = in->kind == TOPOML_INPUT_SPARSE ? (double)in->n_edges
                                                         : (double)in->n * (double)(in->n - 1) / 2;
    const double ns = pairs * FAKE_DEVICE_NS_PER_PAIR;
    if (ns > 0) {
        struct timespec t = {(time_t)(ns / 1e9), (long)(ns - 1e9 * (double)(time_t)(ns / 1e9))};
        nanosleep(&t, NULL);
    }
}

static int rips_now(void *state, const topoml_call_v1 *call, const topoml_input_v1 *in,
                    const topoml_rips_params_v1 *params, topoml_barcode_v1 *out);

static int rips(void *state, const topoml_call_v1 *call, const topoml_input_v1 *in,
                const topoml_rips_params_v1 *params, topoml_barcode_v1 *out)
{
    int rc = rips_now(state, call, in, params, out);
    take_time(in);
    return rc;
}

static int rips_now(void *state, const topoml_call_v1 *call, const topoml_input_v1 *in,
                    const topoml_rips_params_v1 *params, topoml_barcode_v1 *out)
{
    if (!on_device(in))
        return ref->rips(state, call, in, params, out);
    int rc = refuse(call, in);
    if (rc != TOPOML_OK)
        return rc;
    topoml_input_v1 view = *in;
    view.memory = TOPOML_MEMORY_HOST;
    /* f32 values are widened before any arithmetic (plugin.h), as a device
     * plugin widens them on its device. */
    double *wide = NULL;
    if (in->dtype == TOPOML_F32 && in->kind == TOPOML_INPUT_POINTS) {
        uint64_t count = in->n * in->dim;
        wide = call->alloc(call->host_data, (size_t)(count ? count : 1) * sizeof *wide);
        if (!wide)
            return TOPOML_E_NOMEM;
        for (uint64_t k = 0; k < count; k++)
            wide[k] = ((const float *)in->data)[k];
        view.dtype = TOPOML_F64;
        view.data = wide;
    }
    rc = ref->rips(state, call, &view, params, out);
    if (wide)
        call->free(call->host_data, wide);
    if (rc == TOPOML_OK)
        say(call, "rips read its input in place", in);
    return rc;
}

static int input_to_host(void *state, const topoml_call_v1 *call, const topoml_input_v1 *in,
                         void *out)
{
    (void)state;
    int rc = refuse(call, in);
    if (rc != TOPOML_OK)
        return rc;
    uint64_t count = in->kind == TOPOML_INPUT_POINTS ? in->n * in->dim : in->n * (in->n - 1) / 2;
    memcpy(out, in->data, count * (in->dtype == TOPOML_F32 ? sizeof(float) : sizeof(double)));
    say(call, "input copied to the host", in);
    return TOPOML_OK;
}

TOPOML_PLUGIN_EXPORT int topoml_backend_negotiate(uint32_t *abi_version, const topoml_host_v1 *host,
                                                  const topoml_backend_v1 **backend)
{
    (void)host;
    if (!abi_version || !backend || *abi_version < 1)
        return TOPOML_E_ABI;
    ref = topoml_scalar_backend();
    vt = *ref;
    vt.struct_size = sizeof vt;
#if defined(FAKE_DEVICE_NAME)
    vt.name = FAKE_DEVICE_NAME;
#elif defined(FAKE_DEVICE_NO_GENERATORS)
    vt.name = "fake-device-nogens";
#else
    vt.name = "fake-device";
#endif
    vt.version = "0.0.1";
    vt.vendor = "topoml tests";
    vt.description = "the scalar reference reading \"device\" memory that is host memory, for "
                     "the tests";
    vt.capabilities = capabilities;
    vt.rips = rips;
    vt.input_to_host = input_to_host;
    *abi_version = 1;
    *backend = &vt;
    return TOPOML_OK;
}
