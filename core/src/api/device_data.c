/*
 * device_data.c — data sets whose values live in device memory (a CUDA
 * device pointer from PyTorch, CuPy, TensorFlow, ... through DLPack):
 * making one (topoml_data_from_device), and the host copy that every op
 * needs whose backend cannot read device memory.
 *
 * The core does not link CUDA and never touches device memory itself. An op
 * whose chosen backend claims TOPOML_CAP_DEVICE_INPUT for it gets the device
 * pointer as it is (ops.c); any other gets a host copy, made here through the
 * input_to_host entry of the enabled backend that reads such memory — the
 * plugin that owns the device. Not here: choosing the backend of an op
 * (registry.c), the ops themselves (ops.c).
 */
#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include "api/api.h"
#include "gate/gate.h"

int topoml_data_from_device(topoml_context *ctx, topoml_data **out, topoml_memory memory,
                            topoml_input_kind kind, topoml_dtype dtype, uint64_t n, uint64_t dim,
                            const void *device_values, int32_t device, void *stream)
{
    if (!ctx)
        return TOPOML_E_INVALID;
    if (!out)
        return tm_error(ctx, TOPOML_E_INVALID, "topoml_data_from_device: NULL argument");
    *out = NULL;
    if (memory != TOPOML_MEMORY_CUDA)
        return tm_error(ctx, TOPOML_E_INVALID,
                        "topoml_data_from_device: memory kind %u is not a device's (host memory "
                        "goes through topoml_data_from_points or _from_condensed)",
                        (unsigned)memory);
    if (kind != TOPOML_INPUT_POINTS && kind != TOPOML_INPUT_CONDENSED)
        return tm_error(ctx, TOPOML_E_INVALID,
                        "topoml_data_from_device: input kind %u: points or a condensed matrix only",
                        (unsigned)kind);
    if (dtype != TOPOML_F32 && dtype != TOPOML_F64)
        return tm_error(ctx, TOPOML_E_INVALID, "topoml_data_from_device: dtype %u is not f32 or f64",
                        (unsigned)dtype);
    if (device < 0)
        return tm_error(ctx, TOPOML_E_INVALID, "topoml_data_from_device: device index %d < 0",
                        (int)device);
    if (n == 0) /* as every data constructor: nothing to compute */
        return tm_error(ctx, TOPOML_E_INVALID, "topoml_data_from_device: no points (n = 0)");
    if (kind == TOPOML_INPUT_POINTS && dim == 0)
        return tm_error(ctx, TOPOML_E_INVALID,
                        "topoml_data_from_device: points need at least one coordinate");
    uint64_t count = 0, bytes = 0;
    if (kind == TOPOML_INPUT_POINTS ? !tm_mul_u64(n, dim, &count)
                                    : !tm_mul_u64(n, n ? n - 1 : 0, &count))
        return tm_error(ctx, TOPOML_E_OVERFLOW, "topoml_data_from_device: %llu points overflow",
                        (unsigned long long)n);
    if (kind == TOPOML_INPUT_CONDENSED)
        count /= 2;
    if (!tm_mul_u64(count, dtype == TOPOML_F32 ? 4 : 8, &bytes) || bytes > SIZE_MAX / 2)
        return tm_error(ctx, TOPOML_E_OVERFLOW, "topoml_data_from_device: %llu values overflow",
                        (unsigned long long)count);
    if (count > 0 && !device_values)
        return tm_error(ctx, TOPOML_E_INVALID, "topoml_data_from_device: NULL device pointer");
    struct topoml_data *d = tm_calloc(ctx, 1, sizeof *d);
    if (!d)
        return tm_nomem(ctx, sizeof *d);
    d->kind = kind;
    d->n = n;
    d->dim = kind == TOPOML_INPUT_POINTS ? dim : 0;
    d->format = TOPOML_FORMAT_AUTO;
    d->memory = memory;
    d->device = device;
    d->stream = stream;
    d->device_values = device_values;
    d->device_dtype = dtype;
    atomic_init(&d->host_copies, 0);
    *out = d;
    return TOPOML_OK;
}

topoml_memory topoml_data_memory(const topoml_data *data)
{
    return data ? (topoml_memory)data->memory : TOPOML_MEMORY_HOST;
}

uint64_t topoml_data_host_copies(const topoml_data *data)
{
    return data ? atomic_load(&((struct topoml_data *)data)->host_copies) : 0;
}

/* The enabled backend that reads `memory`: one that claims
 * TOPOML_CAP_DEVICE_INPUT for an op, has an input_to_host entry and runs in
 * this process. A plugin left for certification on first use is certified
 * now (gate: auto), as tm_select would. NULL, with the error set, if none. */
static tm_backend *device_owner(topoml_context *ctx, uint32_t memory)
{
    tm_registry_probe(ctx);
    for (uint32_t i = 1; i < ctx->n_backends; i++) {
        tm_backend *b = &ctx->backends[i];
        if (!b->name || b->duplicate || b->isolated ||
            (b->gate_state != TOPOML_GATE_ENABLED && !b->gate_pending))
            continue;
        bool claims = false;
        for (uint32_t k = 0; k < b->n_caps; k++)
            claims |= (b->caps[k].features & TOPOML_CAP_DEVICE_INPUT) != 0;
        if (!claims)
            continue;
        if (b->gate_pending && !(tm_gate_first_use(ctx, b) && tm_backend_load(ctx, b)))
            continue;
        if (b->vt && b->vt->input_to_host && !b->isolated)
            return b;
    }
    tm_error(ctx, TOPOML_E_UNSUPPORTED,
             "the data set is in device memory (kind %u) and no enabled backend in this process "
             "reads such memory (see `topoml backends`: a plugin whose records say device-input)",
             (unsigned)memory);
    return NULL;
}

int tm_data_host_copy(topoml_context *ctx, const struct topoml_data *d, struct topoml_data *host)
{
    memset(host, 0, sizeof *host);
    host->kind = d->kind;
    host->n = d->n;
    host->dim = d->dim;
    host->format = d->format;
    uint64_t count = d->kind == TOPOML_INPUT_POINTS ? d->n * d->dim
                                                    : d->n * (d->n ? d->n - 1 : 0) / 2;
    const size_t elem = d->device_dtype == TOPOML_F32 ? sizeof(float) : sizeof(double);
    uint64_t bytes;
    if (!tm_mul_u64(count, sizeof(double) + elem, &bytes) || bytes > SIZE_MAX / 2)
        return tm_error(ctx, TOPOML_E_OVERFLOW,
                        "the host copy of %llu values does not fit in this machine's memory",
                        (unsigned long long)count);
    int rc = tm_check_memory(ctx, bytes, "the host copy of a data set in device memory");
    if (rc != TOPOML_OK)
        return rc;
    tm_backend *b = device_owner(ctx, d->memory);
    if (!b)
        return TOPOML_E_UNSUPPORTED;
    double *values = tm_alloc(ctx, (size_t)(count ? count : 1) * sizeof *values);
    float *narrow = d->device_dtype == TOPOML_F32
                        ? tm_alloc(ctx, (size_t)(count ? count : 1) * sizeof *narrow)
                        : NULL;
    if (!values || (d->device_dtype == TOPOML_F32 && !narrow)) {
        tm_free(ctx, values);
        tm_free(ctx, narrow);
        return tm_nomem(ctx, (size_t)count * sizeof *values);
    }
    topoml_input_v1 in;
    memset(&in, 0, sizeof in);
    in.struct_size = sizeof in;
    in.kind = d->kind;
    in.n = d->n;
    in.dim = d->dim;
    in.dtype = d->device_dtype;
    in.data = d->device_values;
    in.memory = d->memory;
    in.device = d->device;
    in.stream = d->stream;
    char msg[512] = "";
    topoml_call_v1 call;
    tm_call_init(ctx, &call, msg, sizeof msg);
    rc = count ? b->vt->input_to_host(b->state, &call, &in, narrow ? (void *)narrow : values)
               : TOPOML_OK;
    if (rc != TOPOML_OK) {
        tm_free(ctx, values);
        tm_free(ctx, narrow);
        if (rc > 0 || rc < TOPOML_E_INTERNAL)
            rc = TOPOML_E_PLUGIN;
        return tm_error(ctx, rc, "copying the data set from device %d to the host: %s [backend %s]",
                        (int)d->device, msg[0] ? msg : topoml_strerror(rc), b->name);
    }
    atomic_fetch_add(&((struct topoml_data *)d)->host_copies, 1);
    if (narrow) {
        for (uint64_t k = 0; k < count; k++)
            values[k] = (double)narrow[k];
        tm_free(ctx, narrow);
    }
    /* Checked as strictly as data made from host memory. */
    for (uint64_t k = 0; k < count; k++) {
        double v = values[k];
        bool bad = d->kind == TOPOML_INPUT_POINTS ? !isfinite(v) : (isnan(v) || v < 0);
        if (bad) {
            tm_free(ctx, values);
            if (d->kind == TOPOML_INPUT_POINTS)
                return tm_error(ctx, TOPOML_E_INVALID,
                                "data set on device %d: point %llu, coordinate %llu is %g: not "
                                "finite",
                                (int)d->device, (unsigned long long)(k / d->dim),
                                (unsigned long long)(k % d->dim), v);
            return tm_error(ctx, TOPOML_E_INVALID,
                            "data set on device %d: condensed entry %llu is %g: not a distance",
                            (int)d->device, (unsigned long long)k, v);
        }
    }
    tm_log(ctx, TOPOML_LOG_INFO, "data set copied from device %d to the host by backend '%s'",
           (int)d->device, b->name);
    host->values = values;
    return TOPOML_OK;
}

void tm_data_host_release(topoml_context *ctx, struct topoml_data *host)
{
    tm_free(ctx, host->values);
    host->values = NULL;
}
