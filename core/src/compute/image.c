/*
 * image.c — topoml_persistence_images, the public entry of the `image` op:
 * check the parameters with the reference's rules, pick a backend
 * (registry.c), run it through the ABI, and check what comes back.
 *
 * The computation itself is the backends' (plugins/scalar/image.c is the
 * reference); this file is only the core's side of the op, as ops.c is for
 * the others.
 */
#include <math.h>
#include <string.h>

#include "compute/features_internal.h"
#include "image.h"
#include "api/api.h"
#include "gate/gate.h"

int topoml_persistence_images(topoml_context *ctx, const topoml_image_params_v1 *params,
                              uint64_t n_diagrams, const uint64_t *offsets,
                              const topoml_pair *pairs, double *out)
{
    if (ctx == NULL)
        return TOPOML_E_INVALID;
    if (n_diagrams > 0 && (offsets == NULL || out == NULL))
        return tm_error(ctx, TOPOML_E_INVALID, "image: no offsets or no output array");
    /* Every backend is handed only what the reference accepts, so a
     * plugin's own checks are never the last line. */
    int rc = tm_image_params_validate(ctx, params, n_diagrams, offsets, pairs);
    if (rc != TOPOML_OK || n_diagrams == 0)
        return rc;

    tm_backend *b;
    if ((rc = tm_select(ctx, TOPOML_OP_IMAGE, NULL, 0, 0, &b)) != TOPOML_OK)
        return rc;
    char msg[512];
    topoml_call_v1 call;
    tm_call_init(ctx, &call, msg, sizeof msg);
    tm_verify_call vc;
    tm_verify_image_begin(b, n_diagrams, offsets, pairs, &vc);
    rc = b->vt->image(b->state, &call, params, n_diagrams, offsets, pairs, out);
    tm_backend *ref = tm_fallback_after_failure(ctx, b, TOPOML_OP_IMAGE, rc, msg);
    if (ref) {
        b = ref;
        tm_call_init(ctx, &call, msg, sizeof msg);
        rc = b->vt->image(b->state, &call, params, n_diagrams, offsets, pairs, out);
    }
    if (rc > 0 || rc < TOPOML_E_INTERNAL)
        return tm_error(ctx, TOPOML_E_PLUGIN, "backend '%s' returned unknown status %d: %s",
                        b->name, rc, msg[0] ? msg : "(no message)");
    if (rc != TOPOML_OK && b->path != NULL)
        return tm_error(ctx, rc, "%s [backend %s]", msg[0] ? msg : topoml_strerror(rc), b->name);
    if (rc != TOPOML_OK)
        return tm_error(ctx, rc, "%s", msg[0] ? msg : topoml_strerror(rc));

    /* A plugin's answer is checked as verify.c checks every op's: a wrong
     * one is replaced by the reference's and the plugin disabled. */
    if ((rc = tm_verify_image(ctx, &b, params, n_diagrams, offsets, pairs, &vc, out)) !=
        TOPOML_OK)
        return rc;
    /* A pixel is an integral of a non-negative function: NaN or infinity
     * can only be a backend's bug. Tiny negative values are rounding. */
    const uint64_t cells = (uint64_t)params->width * params->height * n_diagrams;
    for (uint64_t i = 0; i < cells; i++)
        if (!isfinite(out[i]))
            return tm_error(ctx, TOPOML_E_PLUGIN,
                            "backend '%s' returned a non-finite pixel (%g at %llu)", b->name,
                            out[i], (unsigned long long)i);
    return TOPOML_OK;
}
