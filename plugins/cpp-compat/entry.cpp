/*
 * entry.cpp — the ABI boundary of topoml-backend-cpp-compat.so: the entry
 * symbol, the vtable, the capability records, and one extern "C" function
 * per op that runs the C++ op and turns whatever it throws into a
 * topoml_status and a message in call->error. Nothing thrown gets past
 * these functions.
 */
#include <cstdio>
#include <exception>
#include <new>

#include "ops.hpp"

using namespace cppcompat;

namespace
{

void write_error(const topoml_call_v1 *call, const char *fmt, const char *text)
{
    if (call->error && call->error_size)
        std::snprintf(call->error, call->error_size, fmt, text);
}

/* Run `op` with a Call made from `call`; every failure becomes a status. */
template <class Op> int guarded(const topoml_call_v1 *call, Op &&op) noexcept
{
    if (!call)
        return TOPOML_E_INVALID;
    if (call->struct_size < TOPOML_CALL_V1_MIN_SIZE)
        return TOPOML_E_INVALID; /* call->error may lie beyond what the host passed */
    if (!call->alloc || !call->free) {
        write_error(call, "%s", "call has no allocator");
        return TOPOML_E_INVALID;
    }
    try {
        Call c(call);
        op(c);
        return TOPOML_OK;
    } catch (const Failure &f) {
        write_error(call, "%s", f.message);
        return f.status;
    } catch (const std::bad_alloc &) {
        write_error(call, "%s", "out of memory");
        return TOPOML_E_NOMEM;
    } catch (const std::exception &e) {
        write_error(call, "cpp-compat internal error: %s", e.what());
        return TOPOML_E_INTERNAL;
    } catch (...) {
        write_error(call, "%s", "cpp-compat internal error: unknown exception");
        return TOPOML_E_INTERNAL;
    }
}

int cc_probe(void *, char *why, size_t why_size)
{
    if (why && why_size)
        std::snprintf(why, why_size, "always available (portable C++17)");
    return TOPOML_OK;
}

constexpr uint32_t all_metrics = (1u << TOPOML_METRIC_COUNT) - 1u;
constexpr uint32_t both_dtypes = (1u << TOPOML_F32) | (1u << TOPOML_F64);
constexpr uint32_t all_inputs = (1u << TOPOML_INPUT_KIND_COUNT) - 1u;

const topoml_capability_v1 caps[] = {
    {sizeof(topoml_capability_v1), TOPOML_OP_DISTANCES, both_dtypes, all_metrics,
     1u << TOPOML_INPUT_POINTS, 0, 0, 0, 0, "cpu", "threads=1"},
    {sizeof(topoml_capability_v1), TOPOML_OP_EDGES, both_dtypes, all_metrics, all_inputs, 0, 0, 0,
     0, "cpu", "threads=1"},
    {sizeof(topoml_capability_v1), TOPOML_OP_H0, both_dtypes, all_metrics, all_inputs, 0, 0, 0, 0,
     "cpu", "threads=1 algorithm=union-find"},
    {sizeof(topoml_capability_v1), TOPOML_OP_RIPS, both_dtypes, all_metrics, all_inputs,
     rips_max_dim, rips_max_modulus, TOPOML_CAP_GENERATORS, 0, "cpu",
     "threads=1 algorithm=cohomology filtration=explicit clearing=yes pairs=emergent "
     "reduction=lazy-merge"},
};

int cc_capabilities(void *, const topoml_capability_v1 **out, uint32_t *n)
{
    if (!out || !n)
        return TOPOML_E_INVALID;
    *out = caps;
    *n = uint32_t(sizeof caps / sizeof caps[0]);
    return TOPOML_OK;
}

int cc_distances(void *, const topoml_call_v1 *call, const topoml_input_v1 *in, void *out)
{
    return guarded(call, [&](Call &c) { op_distances(c, in, out); });
}

int cc_edges(void *, const topoml_call_v1 *call, const topoml_input_v1 *in, double threshold,
             topoml_edge **out, uint64_t *n_out)
{
    return guarded(call, [&](Call &c) { op_edges(c, in, threshold, out, n_out); });
}

int cc_h0(void *, const topoml_call_v1 *call, const topoml_input_v1 *in, double threshold,
          topoml_barcode_v1 *out)
{
    return guarded(call, [&](Call &c) { op_h0(c, in, threshold, out); });
}

int cc_rips(void *, const topoml_call_v1 *call, const topoml_input_v1 *in,
            const topoml_rips_params_v1 *params, topoml_barcode_v1 *out)
{
    return guarded(call, [&](Call &c) { op_rips(c, in, params, out); });
}

/* Positional, in the order of topoml_backend_v1 (C++17 has no designated
 * initialisers), so that the table is constant-initialised. */
const topoml_backend_v1 vtable = {
    sizeof(topoml_backend_v1),
    1, /* abi_version */
    "cpp-compat",
    "0.1.0",
    "topoml",
    "portable C++17 backend: persistent cohomology with clearing over an explicit "
    "Rips filtration",
    nullptr, /* create */
    nullptr, /* destroy */
    cc_probe,
    cc_capabilities,
    cc_distances,
    cc_edges,
    cc_h0,
    cc_rips,
    nullptr, /* image */
    /* A second implementation, for cross-checking: never the automatic
     * choice (its Rips is far slower than the reference's on dense input). */
    TOPOML_SELECT_BY_NAME,
    nullptr, /* input_to_host: reads no device memory */
};

} // namespace

extern "C" TOPOML_PLUGIN_EXPORT int topoml_backend_negotiate(uint32_t *abi_version,
                                                             const topoml_host_v1 *host,
                                                             const topoml_backend_v1 **backend)
{
    (void)host;
    if (!abi_version || !backend || *abi_version < 1)
        return TOPOML_E_ABI;
    *abi_version = 1;
    *backend = &vtable;
    return TOPOML_OK;
}
