/*
 * today_sizes.c — the sizes of the plugin ABI's tables in today's header
 * (plugin-api/include), for old_host.c, which is built against the baseline
 * release's header and so cannot name them itself. Only sizes cross over.
 */
#include <topoml/plugin.h>

#include "today_sizes.h"

void old_host_today_sizes(old_host_sizes *out)
{
    out->host = sizeof(topoml_host_v1);
    out->call = sizeof(topoml_call_v1);
    out->input = sizeof(topoml_input_v1);
    out->rips_params = sizeof(topoml_rips_params_v1);
    out->barcode = sizeof(topoml_barcode_v1);
    out->image_params = sizeof(topoml_image_params_v1);
}

void old_host_min_sizes(old_host_sizes *out)
{
    out->host = TOPOML_HOST_V1_MIN_SIZE;
    out->call = TOPOML_CALL_V1_MIN_SIZE;
    out->input = TOPOML_INPUT_V1_MIN_SIZE;
    out->rips_params = TOPOML_RIPS_PARAMS_V1_MIN_SIZE;
    out->barcode = TOPOML_BARCODE_V1_MIN_SIZE;
    out->image_params = TOPOML_IMAGE_PARAMS_V1_MIN_SIZE;
}
