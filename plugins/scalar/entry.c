/*
 * entry.c — the ABI entry symbol of topoml-backend-scalar.so. Only the
 * plugin build has it: inside libtopoml the core calls topoml_scalar_backend()
 * directly, so the library never exports an entry symbol that a loaded
 * plugin's own could be confused with.
 */
#include "scalar.h"

TOPOML_PLUGIN_EXPORT int topoml_backend_negotiate(uint32_t *abi_version,
                                                  const topoml_host_v1 *host,
                                                  const topoml_backend_v1 **backend)
{
    (void)host;
    if (!abi_version || !backend || *abi_version < 1)
        return TOPOML_E_ABI;
    *abi_version = 1;
    *backend = topoml_scalar_backend();
    return TOPOML_OK;
}
