/*
 * op_image.c — the persistence image op (plugin.h, topoml_image_params_v1)
 * on the device: the diagrams' pairs and offsets are copied over once, the
 * persistence_image kernel (kernels/image.py) computes the images a chunk of
 * diagrams at a time, and each chunk is copied straight into the caller's
 * array.
 *
 * The host checks the parameters and the pairs; the kernel applies the
 * weights and the treatment of infinite deaths itself.
 */
#include <math.h>
#include <string.h>

#include "plan.h"
#include "tb.h"

/* The largest device buffer one chunk of images gets. */
#define TB_IMAGE_CHUNK_BYTES ((uint64_t)1 << 30)

static int check_params(const topoml_call_v1 *call, const topoml_image_params_v1 *p)
{
    if (p == NULL || p->struct_size < offsetof(topoml_image_params_v1, clip_death) + sizeof(double))
        return tb_fail(call, TOPOML_E_INVALID,
                       "triton-bridge: image: no parameters, or short ones");
    if (!(p->sigma > 0.0) || !isfinite(p->sigma))
        return tb_fail(call, TOPOML_E_INVALID, "triton-bridge: image: sigma %g is not positive",
                       p->sigma);
    if (p->width == 0 || p->height == 0 || p->width > INT32_MAX || p->height > INT32_MAX)
        return tb_fail(call, TOPOML_E_INVALID, "triton-bridge: image: %u x %u pixels", p->width,
                       p->height);
    if (!isfinite(p->birth_min) || !isfinite(p->birth_max) || !(p->birth_max > p->birth_min) ||
        !isfinite(p->pers_min) || !isfinite(p->pers_max) || !(p->pers_max > p->pers_min))
        return tb_fail(call, TOPOML_E_INVALID,
                       "triton-bridge: image: the ranges [%g, %g] x [%g, %g] are empty or not "
                       "finite",
                       p->birth_min, p->birth_max, p->pers_min, p->pers_max);
    switch (p->weight) {
    case TOPOML_WEIGHT_CONSTANT: break;
    case TOPOML_WEIGHT_LINEAR:
        if (!(p->weight_max > 0.0) || !isfinite(p->weight_max))
            return tb_fail(call, TOPOML_E_INVALID,
                           "triton-bridge: image: weight_max %g is not positive", p->weight_max);
        break;
    case TOPOML_WEIGHT_POWER:
        if (!isfinite(p->weight_power))
            return tb_fail(call, TOPOML_E_INVALID, "triton-bridge: image: weight_power %g",
                           p->weight_power);
        break;
    default:
        return tb_fail(call, TOPOML_E_UNSUPPORTED, "triton-bridge: image: weight %u", p->weight);
    }
    if (p->infinite != TOPOML_INFINITE_DROP && p->infinite != TOPOML_INFINITE_CLIP)
        return tb_fail(call, TOPOML_E_UNSUPPORTED, "triton-bridge: image: infinite mode %u",
                       p->infinite);
    if (p->infinite == TOPOML_INFINITE_CLIP && !isfinite(p->clip_death))
        return tb_fail(call, TOPOML_E_INVALID, "triton-bridge: image: clip_death %g",
                       p->clip_death);
    return TOPOML_OK;
}

int tb_op_image(void *state, const topoml_call_v1 *call, const topoml_image_params_v1 *params,
                uint64_t n_diagrams, const uint64_t *offsets, const topoml_pair *pairs, double *out)
{
    tb_state *st = state;
    int status = check_params(call, params);
    if (status != TOPOML_OK || n_diagrams == 0)
        return status;
    if (offsets == NULL || out == NULL)
        return tb_fail(call, TOPOML_E_INVALID, "triton-bridge: image: no offsets or no output");
    for (uint64_t k = 0; k < n_diagrams; k++)
        if (offsets[k] > offsets[k + 1])
            return tb_fail(call, TOPOML_E_INVALID,
                           "triton-bridge: image: offsets[%llu] > offsets[%llu]",
                           (unsigned long long)k, (unsigned long long)k + 1);
    uint64_t first = offsets[0], n_pairs = offsets[n_diagrams] - first;
    if (n_pairs > 0 && pairs == NULL)
        return tb_fail(call, TOPOML_E_INVALID, "triton-bridge: image: no pairs");
    for (uint64_t x = first; x < first + n_pairs; x++)
        if (!isfinite(pairs[x].birth) || isnan(pairs[x].death) || pairs[x].death == -INFINITY)
            return tb_fail(call, TOPOML_E_INVALID, "triton-bridge: image: pair %llu is (%g, %g)",
                           (unsigned long long)x, pairs[x].birth, pairs[x].death);
    uint64_t pixels = (uint64_t)params->width * params->height;
    uint64_t image_bytes = pixels * sizeof(double);

    tb_device *d;
    if ((status = tb_device_for_call(st, call, &d)) != TOPOML_OK)
        return status;
    if ((status = tb_enter(st, call, d)) != TOPOML_OK)
        return status;
    /* The buffers the distances op keeps are for repeated distances calls;
     * this op sizes its own from the free memory, which they would take. */
    tb_device_buffers_drop(st, d);

    tb_budget budget = {call, 0};
    tb_cudeviceptr dpairs = 0, doffsets = 0, dout = 0;
    uint64_t *shifted = NULL;
    uint64_t offsets_bytes = (n_diagrams + 1) * sizeof(uint64_t);
    double t0 = tb_now(), t_kernel = 0, t_copy = 0;

    /* The kernel indexes pairs from the start of the copy, so the offsets
     * are shifted by offsets[0]. */
    status = tb_budget_alloc(&budget, offsets_bytes, "the diagram offsets", (void **)&shifted);
    if (status == TOPOML_OK) {
        for (uint64_t k = 0; k <= n_diagrams; k++)
            shifted[k] = offsets[k] - first;
        status = tb_check(st, call, st->cu.cuMemAlloc(&doffsets, offsets_bytes), TOPOML_E_NOMEM,
                          "device memory for the diagram offsets");
    }
    if (status == TOPOML_OK)
        status = tb_check(st, call, st->cu.cuMemcpyHtoD(doffsets, shifted, offsets_bytes),
                          TOPOML_E_DEVICE, "copying the diagram offsets");
    tb_budget_free(&budget, shifted, offsets_bytes);
    /* At least one pair's worth, even for diagrams that are all empty. */
    uint64_t pair_bytes = (n_pairs > 0 ? n_pairs : 1) * sizeof(topoml_pair);
    if (status == TOPOML_OK)
        status = tb_check(st, call, st->cu.cuMemAlloc(&dpairs, pair_bytes), TOPOML_E_NOMEM,
                          "device memory for the pairs");
    if (status == TOPOML_OK && n_pairs > 0)
        status = tb_check(st, call,
                          st->cu.cuMemcpyHtoD(dpairs, pairs + first, n_pairs * sizeof(topoml_pair)),
                          TOPOML_E_DEVICE, "copying the pairs");
    double t_upload = tb_now() - t0;

    /* Diagrams per launch: grid y is at most max_grid_y, and the chunk's
     * images fit the chunk buffer (at least one image, or E_LIMIT). */
    uint64_t cap = TB_IMAGE_CHUNK_BYTES, free_half = tb_free_device_memory(st) / 2;
    if (cap > free_half)
        cap = free_half;
    uint64_t per_chunk = cap / image_bytes;
    if (per_chunk > (uint64_t)d->max_grid_y)
        per_chunk = (uint64_t)d->max_grid_y;
    if (per_chunk > n_diagrams)
        per_chunk = n_diagrams;
    if (status == TOPOML_OK && per_chunk == 0)
        status = tb_fail(call, TOPOML_E_LIMIT,
                         "triton-bridge: image: one %u x %u image needs %llu bytes of device "
                         "memory, %llu usable",
                         params->width, params->height, (unsigned long long)image_bytes,
                         (unsigned long long)cap);
    if (status == TOPOML_OK)
        status = tb_check(st, call, st->cu.cuMemAlloc(&dout, per_chunk * image_bytes),
                          TOPOML_E_NOMEM, "device memory for the images");

    uint64_t tiles = tb_cdiv(params->height, TB_IMAGE_F64_BLOCK_R) *
                     tb_cdiv(params->width, TB_IMAGE_F64_BLOCK_C);
    uint64_t per_launch = (uint64_t)d->max_grid_x;
    if (status == TOPOML_OK && tiles > INT32_MAX)
        status = tb_fail(call, TOPOML_E_LIMIT, "triton-bridge: image: %u x %u pixels",
                         params->width, params->height);
    double db = (params->birth_max - params->birth_min) / params->width;
    double dp = (params->pers_max - params->pers_min) / params->height;
    double s = 1.0 / (params->sigma * sqrt(2.0));
    /* The kernels multiply by s: for a subnormal sigma it overflows, and
     * inf * 0 would be NaN pixels. */
    if (status == TOPOML_OK && !isfinite(s))
        status = tb_fail(call, TOPOML_E_UNSUPPORTED,
                         "triton-bridge: image: sigma %g is too small (1/sigma overflows); the "
                         "scalar backend computes it",
                         params->sigma);
    for (uint64_t k0 = 0; status == TOPOML_OK && k0 < n_diagrams; k0 += per_chunk) {
        uint64_t m = n_diagrams - k0 < per_chunk ? n_diagrams - k0 : per_chunk;
        double t = tb_now();
        /* Pixel tiles past one grid's x limit go in pieces. */
        for (uint64_t t0 = 0; status == TOPOML_OK && t0 < tiles; t0 += per_launch) {
            unsigned grid = (unsigned)(tiles - t0 < per_launch ? tiles - t0 : per_launch);
            tb_curesult r = tb_launch_image_f64(
                &st->cu, d->functions, NULL, grid, (unsigned)m, 1, NULL, dpairs,
                doffsets, dout, (int64_t)k0, (int32_t)t0, (int32_t)params->width,
                (int32_t)params->height, params->birth_min, db, params->pers_min, dp, s,
                (int32_t)params->weight, params->weight_max, params->weight_power,
                (int32_t)params->infinite, params->clip_death);
            status = tb_check(st, call, r, TOPOML_E_DEVICE, "launching persistence_image");
        }
        if (status != TOPOML_OK)
            break;
        if ((status = tb_check(st, call, st->cu.cuCtxSynchronize(), TOPOML_E_DEVICE,
                               "running persistence_image")))
            break;
        double t2 = tb_now();
        t_kernel += t2 - t;
        status = tb_check(st, call, st->cu.cuMemcpyDtoH(out + k0 * pixels, dout, m * image_bytes),
                          TOPOML_E_DEVICE, "copying images from the device");
        t_copy += tb_now() - t2;
        if (status == TOPOML_OK && tb_cancelled(call, "image", k0 + m, n_diagrams))
            status = TOPOML_E_CANCELLED;
    }
    tb_device_free(st, call, &dout, &status);
    tb_device_free(st, call, &dpairs, &status);
    tb_device_free(st, call, &doffsets, &status);
    tb_leave(st);
    if (status == TOPOML_OK)
        tb_debug(call,
                 "triton-bridge: image %llu diagrams, %llu pairs, %ux%u: upload %.3f ms, kernels "
                 "%.3f ms, download %.3f ms",
                 (unsigned long long)n_diagrams, (unsigned long long)n_pairs, params->width,
                 params->height, 1e3 * t_upload, 1e3 * t_kernel, 1e3 * t_copy);
    return status;
}
