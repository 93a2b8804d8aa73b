/*
 * plugin_abi_anchor.c — the plugin ABI's types (topoml/plugin.h,
 * topoml/types.h) as abidw and abidiff can see them. The structs and enums
 * that cross the plugin boundary are not all reachable from libtopoml's
 * exported functions, so this one function takes each of them; compiled
 * with -g into a small shared library, its debug information is the plugin
 * ABI's layout. Built from the baseline headers it gives
 * abi/plugin-abi.abi; built from the current ones it is what the ABI guard
 * (abi/check_abi.py) compares with that. Nothing links it.
 */
#include "topoml/plugin.h"

TOPOML_PLUGIN_EXPORT void topoml_abi_anchor(
    const topoml_host_v1 *host, const topoml_call_v1 *call, const topoml_input_v1 *input,
    const topoml_rips_params_v1 *rips, const topoml_barcode_v1 *barcode,
    const topoml_image_params_v1 *image, const topoml_capability_v1 *capability,
    const topoml_backend_v1 *backend, const topoml_interval *interval, const topoml_edge *edge,
    const topoml_pair *pair, topoml_backend_negotiate_fn negotiate, topoml_status status,
    topoml_dtype dtype, topoml_metric metric, topoml_input_kind kind, topoml_op op,
    topoml_log_level level, topoml_image_weight weight, topoml_image_infinite infinite);

void topoml_abi_anchor(const topoml_host_v1 *host, const topoml_call_v1 *call,
                       const topoml_input_v1 *input, const topoml_rips_params_v1 *rips,
                       const topoml_barcode_v1 *barcode, const topoml_image_params_v1 *image,
                       const topoml_capability_v1 *capability, const topoml_backend_v1 *backend,
                       const topoml_interval *interval, const topoml_edge *edge,
                       const topoml_pair *pair, topoml_backend_negotiate_fn negotiate,
                       topoml_status status, topoml_dtype dtype, topoml_metric metric,
                       topoml_input_kind kind, topoml_op op, topoml_log_level level,
                       topoml_image_weight weight, topoml_image_infinite infinite)
{
    (void)host, (void)call, (void)input, (void)rips, (void)barcode, (void)image;
    (void)capability, (void)backend, (void)interval, (void)edge, (void)pair, (void)negotiate;
    (void)status, (void)dtype, (void)metric, (void)kind, (void)op, (void)level, (void)weight;
    (void)infinite;
}

/* Enums added to the headers after the baseline get an anchor of their own
 * (an added function, which is compatible); abi/check_abi.py defines
 * the macro when the headers it compiles declare the enum. */
#ifdef TOPOML_ANCHOR_SELECTION
TOPOML_PLUGIN_EXPORT void topoml_abi_anchor_selection(topoml_selection selection);
void topoml_abi_anchor_selection(topoml_selection selection)
{
    (void)selection;
}
#endif
