/*
 * scalar.h — the scalar reference backend as the core sees it when it is
 * built in: one function returning its vtable. The same vtable is exported
 * through the ABI entry symbol by entry.c in topoml-backend-scalar.so.
 */
#ifndef TOPOML_SCALAR_H
#define TOPOML_SCALAR_H

#include "topoml/plugin.h"

const topoml_backend_v1 *topoml_scalar_backend(void);

/* Write a formatted message into call->error (if there is one) and return
 * `status`. Shared by every file of the scalar backend. */
int scalar_fail(const topoml_call_v1 *call, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
