/*
 * gate.c — which plugins may run user work.
 *
 * The built-in scalar backend is the reference and always runs. A plugin
 * runs only when the gate lets it: today that is `gate: off` (plugin
 * development, said in every log line) or the configuration's `enable`
 * list; certificates from topoml-conformance are the seam this file grows
 * into. Everything else is listed, probed, and kept DISABLED with the reason.
 */
#include <string.h>

#include "internal.h"

void tm_gate_apply(topoml_context *ctx, tm_backend *b)
{
    if (!b->path) {
        b->gate_state = TOPOML_GATE_ENABLED;
        snprintf(b->gate_reason, sizeof b->gate_reason, "built-in reference");
        return;
    }
    if (b->probe_status != TOPOML_OK) {
        b->gate_state = TOPOML_GATE_UNSUPPORTED;
        snprintf(b->gate_reason, sizeof b->gate_reason, "probe: %.240s", b->probe_message);
        return;
    }
    if (tm_strlist_has(&ctx->config.disable, b->name)) {
        b->gate_state = TOPOML_GATE_DISABLED;
        snprintf(b->gate_reason, sizeof b->gate_reason, "disabled by configuration");
        return;
    }
    if (ctx->config.gate == TM_GATE_OFF) {
        b->gate_state = TOPOML_GATE_ENABLED;
        snprintf(b->gate_reason, sizeof b->gate_reason,
                 "GATE OFF: not certified, for plugin development only");
        tm_log(ctx, TOPOML_LOG_WARN, "gate is off: backend '%s' runs without a certificate",
               b->name);
        return;
    }
    if (tm_strlist_has(&ctx->config.enable, b->name)) {
        b->gate_state = TOPOML_GATE_ENABLED;
        snprintf(b->gate_reason, sizeof b->gate_reason,
                 "enabled by configuration (`enable`), not certified");
        return;
    }
    b->gate_state = TOPOML_GATE_DISABLED;
    snprintf(b->gate_reason, sizeof b->gate_reason,
             "not certified (run topoml-conformance --certify, or list it under `enable`)");
}
