/*
 * barcode.cpp — filling a caller's topoml_barcode_v1 (barcode.hpp).
 */
#include "barcode.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>

namespace cppcompat
{

void check_barcode_out(topoml_barcode_v1 *out)
{
    if (!out || out->struct_size < offsetof(topoml_barcode_v1, reserved) + sizeof out->reserved)
        fail(TOPOML_E_INVALID, "barcode struct missing or shorter than topoml_barcode_v1");
    out->max_dim = 0;
    out->n_intervals = 0;
    out->intervals = nullptr;
    out->complete = 0;
    if (barcode_has_generators(out))
        out->generators = nullptr;
}

bool barcode_has_generators(const topoml_barcode_v1 *out)
{
    return out->struct_size >= offsetof(topoml_barcode_v1, generators) + sizeof out->generators;
}

static bool bar_before(const topoml_interval &a, const topoml_interval &b)
{
    if (a.dim != b.dim)
        return a.dim < b.dim;
    if (a.death != b.death)
        return a.death < b.death;
    return a.birth < b.birth;
}

void emit_barcode(Call &call, Vec<topoml_interval> &bars, Vec<topoml_generator> &gens,
                  uint32_t max_dim, topoml_barcode_v1 *out)
{
    if (gens.size() != bars.size())
        fail(TOPOML_E_INTERNAL, "%zu generators for %zu bars", gens.size(), bars.size());
    auto order = make_vec<uint64_t>(call);
    order.resize(bars.size());
    for (uint64_t k = 0; k < order.size(); k++)
        order[k] = k;
    std::stable_sort(order.begin(), order.end(),
                     [&](uint64_t a, uint64_t b) { return bar_before(bars[a], bars[b]); });
    Result<topoml_interval> result(call, bars.size());
    Result<topoml_generator> generators(call, bars.size());
    for (uint64_t k = 0; k < order.size(); k++) {
        result[k] = bars[order[k]];
        generators[k] = gens[order[k]];
    }
    out->max_dim = max_dim;
    out->n_intervals = bars.size();
    out->intervals = result.release();
    out->generators = generators.release();
    out->complete = 1;
}

void emit_barcode(Call &call, Vec<topoml_interval> &bars, uint32_t max_dim, topoml_barcode_v1 *out)
{
    std::sort(bars.begin(), bars.end(), bar_before);
    Result<topoml_interval> result(call, bars.size());
    if (!bars.empty())
        std::memcpy(result.get(), bars.data(), bars.size() * sizeof(topoml_interval));
    out->max_dim = max_dim;
    out->n_intervals = bars.size();
    out->intervals = result.release();
    out->complete = 1;
}

} // namespace cppcompat
