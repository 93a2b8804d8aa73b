/*
 * points.c — what the point-cloud ops (distances, edges) share: checking a
 * POINTS input against what the kernels can do, and copying it to the
 * device transposed, so that a kernel's loads of one coordinate of
 * consecutive points are consecutive in memory.
 */
#include <stdio.h>
#include <string.h>

#include "tb.h"

int tb_check_points(const topoml_call_v1 *call, const topoml_input_v1 *in, const char *op)
{
    if (in == NULL || in->struct_size < offsetof(topoml_input_v1, data) + sizeof in->data)
        return tb_fail(call, TOPOML_E_INVALID, "triton-bridge: %s: no input, or a short one", op);
    if (in->kind != TOPOML_INPUT_POINTS)
        return tb_fail(call, TOPOML_E_UNSUPPORTED,
                       "triton-bridge: %s takes a point cloud only (input kind %u)", op, in->kind);
    if (in->dtype != TOPOML_F32 && in->dtype != TOPOML_F64)
        return tb_fail(call, TOPOML_E_UNSUPPORTED, "triton-bridge: %s: dtype %u", op, in->dtype);
    if (in->metric != TOPOML_METRIC_EUCLIDEAN && in->metric != TOPOML_METRIC_SQEUCLIDEAN)
        return tb_fail(call, TOPOML_E_UNSUPPORTED,
                       "triton-bridge: %s: only the euclidean and squared euclidean metrics "
                       "(metric %u)",
                       op, in->metric);
    /* Vertices of an edge are uint32_t; n*dim elements must be addressable. */
    if (in->n > ((uint64_t)1 << 32))
        return tb_fail(call, TOPOML_E_UNSUPPORTED, "triton-bridge: %s: %llu points, more than 2^32",
                       op, (unsigned long long)in->n);
    uint64_t elems;
    if (__builtin_mul_overflow(in->n, in->dim, &elems) || elems > (UINT64_MAX >> 4))
        return tb_fail(call, TOPOML_E_OVERFLOW, "triton-bridge: %s: %llu x %llu coordinates", op,
                       (unsigned long long)in->n, (unsigned long long)in->dim);
    if (in->n >= 2 && in->dim > 0 && in->data == NULL)
        return tb_fail(call, TOPOML_E_INVALID, "triton-bridge: %s: no point data", op);
    return TOPOML_OK;
}

size_t tb_free_device_memory(tb_state *st)
{
    size_t free_bytes = 0, total = 0;
    if (st->cu.cuMemGetInfo(&free_bytes, &total) != TB_CUDA_SUCCESS)
        return 0;
    return free_bytes;
}

void tb_device_free(tb_state *st, const topoml_call_v1 *call, tb_cudeviceptr *ptr, int *status)
{
    if (*ptr == 0)
        return;
    tb_curesult r = st->cu.cuMemFree(*ptr);
    *ptr = 0;
    if (*status == TOPOML_OK)
        *status = tb_check(st, call, r, TOPOML_E_DEVICE, "cuMemFree");
}

/* Subtract from each coordinate its mean over the points, rounded to the
 * points' precision (the mean is summed in double). The result is rounded
 * too; kernels/distances_dot.py accounts for that rounding. */
static void center(void *xt, uint32_t dtype, uint64_t n, uint64_t ld, uint64_t dim)
{
    for (uint64_t k = 0; k < dim; k++) {
        double sum = 0;
        if (dtype == TOPOML_F32) {
            float *x = (float *)xt + k * ld;
            for (uint64_t p = 0; p < n; p++)
                sum += x[p];
            float c = (float)(sum / (double)n);
            for (uint64_t p = 0; p < n; p++)
                x[p] -= c;
        } else {
            double *x = (double *)xt + k * ld;
            for (uint64_t p = 0; p < n; p++)
                sum += x[p];
            double c = sum / (double)n;
            for (uint64_t p = 0; p < n; p++)
                x[p] -= c;
        }
    }
}

/* cuMemAlloc with "device memory for <what>" as the message of a failure;
 * *ptr is 0 then. */
static int device_alloc(tb_state *st, const topoml_call_v1 *call, uint64_t bytes,
                        const char *what, tb_cudeviceptr *ptr)
{
    char text[96];
    snprintf(text, sizeof text, "device memory for %s", what);
    int status = tb_check(st, call, st->cu.cuMemAlloc(ptr, (size_t)bytes), TOPOML_E_NOMEM, text);
    if (status != TOPOML_OK)
        *ptr = 0;
    return status;
}

int tb_device_buffer(tb_state *st, const topoml_call_v1 *call, tb_device *d, int slot,
                     uint64_t bytes, const char *what, tb_cudeviceptr *ptr)
{
    *ptr = 0;
    if (d->buf[slot] != 0 && d->buf_size[slot] >= bytes && d->buf_size[slot] / 2 <= bytes) {
        *ptr = d->buf[slot];
        return TOPOML_OK;
    }
    int status = TOPOML_OK;
    tb_device_free(st, call, &d->buf[slot], &status);
    d->buf_size[slot] = 0;
    if (status == TOPOML_OK)
        status = device_alloc(st, call, bytes, what, &d->buf[slot]);
    if (status != TOPOML_OK)
        return status;
    d->buf_size[slot] = bytes;
    *ptr = d->buf[slot];
    return TOPOML_OK;
}

void tb_device_buffers_drop(tb_state *st, tb_device *d)
{
    for (int k = 0; k < TB_BUF_COUNT; k++) {
        if (d->buf[k] != 0)
            (void)st->cu.cuMemFree(d->buf[k]);
        d->buf[k] = 0;
        d->buf_size[k] = 0;
    }
}

/* A device buffer of `bytes` for the points: the device's cached one in
 * `slot` when cache is not NULL, else a new one. */
static int points_buffer(tb_state *st, const topoml_call_v1 *call, tb_device *cache, int slot,
                         uint64_t bytes, const char *what, tb_cudeviceptr *ptr)
{
    if (cache != NULL)
        return tb_device_buffer(st, call, cache, slot, bytes, what, ptr);
    return device_alloc(st, call, bytes, what, ptr);
}

int tb_upload_points(tb_state *st, const topoml_call_v1 *call, tb_budget *b,
                     const topoml_input_v1 *in, uint64_t ld, tb_device *cache, tb_cudeviceptr *xt,
                     tb_cudeviceptr *xs)
{
    uint64_t n = in->n, dim = in->dim;
    size_t esz = in->dtype == TOPOML_F32 ? sizeof(float) : sizeof(double);
    uint64_t bytes;
    *xt = 0;
    if (xs != NULL)
        *xs = 0;
    if (__builtin_mul_overflow(ld, dim, &bytes) || __builtin_mul_overflow(bytes, esz, &bytes))
        return tb_fail(call, TOPOML_E_OVERFLOW, "triton-bridge: %llu x %llu coordinates",
                       (unsigned long long)ld, (unsigned long long)dim);
    void *host;
    int status = tb_budget_alloc(b, bytes, "transposing the points", &host);
    if (status != TOPOML_OK)
        return status;
    if (in->dtype == TOPOML_F32) {
        const float *src = in->data;
        float *dst = host;
        for (uint64_t p = 0; p < n; p++)
            for (uint64_t k = 0; k < dim; k++)
                dst[k * ld + p] = src[p * dim + k];
        for (uint64_t k = 0; k < dim; k++)
            for (uint64_t p = n; p < ld; p++)
                dst[k * ld + p] = 0.0f;
    } else {
        const double *src = in->data;
        double *dst = host;
        for (uint64_t p = 0; p < n; p++)
            for (uint64_t k = 0; k < dim; k++)
                dst[k * ld + p] = src[p * dim + k];
        for (uint64_t k = 0; k < dim; k++)
            for (uint64_t p = n; p < ld; p++)
                dst[k * ld + p] = 0.0;
    }
    /* Points without coordinates still get a (never read) buffer: the
     * driver refuses allocations of 0 bytes. */
    uint64_t dev_bytes = bytes > 0 ? bytes : esz;
    status = points_buffer(st, call, cache, TB_BUF_XT, dev_bytes, "the points", xt);
    if (status == TOPOML_OK && bytes > 0)
        status = tb_check(st, call, st->cu.cuMemcpyHtoD(*xt, host, (size_t)bytes), TOPOML_E_DEVICE,
                          "copying the points to the device");
    if (status == TOPOML_OK && xs != NULL) {
        center(host, in->dtype, n, ld, dim);
        status = points_buffer(st, call, cache, TB_BUF_XS, dev_bytes, "the centred points", xs);
        if (status == TOPOML_OK && bytes > 0)
            status = tb_check(st, call, st->cu.cuMemcpyHtoD(*xs, host, (size_t)bytes),
                              TOPOML_E_DEVICE, "copying the centred points to the device");
    }
    if (status != TOPOML_OK && cache == NULL) {
        if (xs != NULL)
            tb_device_free(st, call, xs, &status);
        tb_device_free(st, call, xt, &status);
    }
    tb_budget_free(b, host, bytes);
    return status;
}
