/*
 * image.h — the scalar backend's persistence image op (the reference that
 * other backends' `image` ops are compared with), and the check of its
 * parameters that the core also uses so that "valid parameters" has one
 * definition.
 *
 * Part of the scalar plugin: it includes topoml/plugin.h and nothing else of
 * the project.
 */
#ifndef TOPOML_SCALAR_IMAGE_H
#define TOPOML_SCALAR_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "topoml/plugin.h"

/* Check the parameters and the input of an image op without computing
 * anything: TOPOML_OK, or TOPOML_E_INVALID / TOPOML_E_OVERFLOW with a
 * message in `error` (NUL-terminated, truncated to error_size; error may be
 * NULL). `offsets` and `pairs` may be NULL, in which case only the
 * parameters and the output size are checked. */
int scalar_image_check(const topoml_image_params_v1 *params, uint64_t n_diagrams,
                       const uint64_t *offsets, const topoml_pair *pairs, char *error,
                       size_t error_size);

/* The `image` op of the vtable, without the state argument (the scalar
 * backend keeps no state for it): n_diagrams persistence images, image k
 * from pairs[offsets[k] .. offsets[k+1]), into out + k*height*width,
 * row-major, row 0 the lowest persistence. See topoml_image_params_v1. */
int scalar_image(const topoml_call_v1 *call, const topoml_image_params_v1 *params,
                 uint64_t n_diagrams, const uint64_t *offsets, const topoml_pair *pairs,
                 double *out);

#endif /* TOPOML_SCALAR_IMAGE_H */
