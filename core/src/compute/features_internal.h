/*
 * features_internal.h — helpers shared by the core's diagram files
 * (features.c, diagram_distance.c, diagram_io.c, image.c); never installed.
 */
#ifndef TOPOML_FEATURES_INTERNAL_H
#define TOPOML_FEATURES_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "api/api.h"
#include "topoml/features.h"

/* Check one dimension's pairs: pairs non-NULL when n > 0, no NaN,
 * birth <= death. `what` names the caller in the message. */
int tm_check_pairs(topoml_context *ctx, const char *what, const topoml_pair *pairs, uint64_t n);

/* Check image parameters (and, when offsets is not NULL, the diagrams) with
 * the scalar reference's rules, so that every backend is handed only what
 * the reference accepts; the message goes to the context. */
int tm_image_params_validate(topoml_context *ctx, const topoml_image_params_v1 *params,
                             uint64_t n_diagrams, const uint64_t *offsets,
                             const topoml_pair *pairs);

/* Write x into buf with the fewest significant digits (up to 17) that read
 * back to the same double; "inf", "-inf", "nan" otherwise. buf has at least
 * TM_DOUBLE_BUF bytes. Returns buf. */
#define TM_DOUBLE_BUF 32
char *tm_format_double(char *buf, double x);

#endif /* TOPOML_FEATURES_INTERNAL_H */
