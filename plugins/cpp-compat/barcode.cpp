/*
 * barcode.cpp — filling a caller's topoml_barcode_v1 (barcode.hpp).
 */
#include "barcode.hpp"

#include <algorithm>
#include <cstring>

namespace cppcompat
{

void check_barcode_out(topoml_barcode_v1 *out)
{
    if (!out || out->struct_size < sizeof(topoml_barcode_v1))
        fail(TOPOML_E_INVALID, "barcode struct missing or shorter than topoml_barcode_v1");
    out->max_dim = 0;
    out->n_intervals = 0;
    out->intervals = nullptr;
    out->complete = 0;
}

void emit_barcode(Call &call, Vec<topoml_interval> &bars, uint32_t max_dim, topoml_barcode_v1 *out)
{
    std::sort(bars.begin(), bars.end(), [](const topoml_interval &a, const topoml_interval &b) {
        if (a.dim != b.dim)
            return a.dim < b.dim;
        if (a.death != b.death)
            return a.death < b.death;
        return a.birth < b.birth;
    });
    Result<topoml_interval> result(call, bars.size());
    if (!bars.empty())
        std::memcpy(result.get(), bars.data(), bars.size() * sizeof(topoml_interval));
    out->max_dim = max_dim;
    out->n_intervals = bars.size();
    out->intervals = result.release();
    out->complete = 1;
}

} // namespace cppcompat
