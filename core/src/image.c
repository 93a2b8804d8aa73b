/*
 * image.c — topoml_persistence_images, the public entry of the `image` op:
 * checks the parameters with the reference's rules, then runs the op.
 *
 * For now the op always runs on the built-in scalar backend; choosing among
 * backends is the selection code's job, which replaces the direct call below
 * with its own dispatch (and fills the call's progress and logging).
 */
#include <string.h>

#include "features_internal.h"
#include "../../plugins/scalar/image.h"

static void *call_alloc(void *host_data, size_t size)
{
    return tm_alloc((topoml_context *)host_data, size);
}

static void *call_realloc(void *host_data, void *ptr, size_t size)
{
    return tm_realloc((topoml_context *)host_data, ptr, size);
}

static void call_free(void *host_data, void *ptr)
{
    tm_free((topoml_context *)host_data, ptr);
}

int topoml_persistence_images(topoml_context *ctx, const topoml_image_params_v1 *params,
                              uint64_t n_diagrams, const uint64_t *offsets,
                              const topoml_pair *pairs, double *out)
{
    if (ctx == NULL)
        return TOPOML_E_INVALID;
    if (n_diagrams > 0 && (offsets == NULL || out == NULL))
        return tm_error(ctx, TOPOML_E_INVALID, "image: no offsets or no output array");
    int st = tm_image_params_validate(ctx, params, n_diagrams, offsets, pairs);
    if (st)
        return st;

    char msg[512];
    msg[0] = '\0';
    topoml_call_v1 call;
    memset(&call, 0, sizeof call);
    call.struct_size = sizeof call;
    call.host_data = ctx;
    call.alloc = call_alloc;
    call.realloc = call_realloc;
    call.free = call_free;
    call.max_memory = tm_max_memory(ctx);
    call.error = msg;
    call.error_size = sizeof msg;
    call.device = -1;
    st = scalar_image(&call, params, n_diagrams, offsets, pairs, out);
    if (st)
        return tm_error(ctx, st, "%s", msg[0] ? msg : topoml_strerror(st));
    return TOPOML_OK;
}
