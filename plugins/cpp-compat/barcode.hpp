/*
 * barcode.hpp — handing a barcode to the caller: checking the caller's
 * topoml_barcode_v1 and filling it from a list of intervals.
 */
#ifndef TOPOML_CPP_COMPAT_BARCODE_HPP
#define TOPOML_CPP_COMPAT_BARCODE_HPP

#include "call.hpp"
#include "topoml/plugin.h"

namespace cppcompat
{

/* Throws TOPOML_E_INVALID unless `out` is a zeroed-enough v1 barcode (the
 * fields of core 0.1 at least). */
void check_barcode_out(topoml_barcode_v1 *out);

/* Sort `bars` by (dim, death, birth) into an array from call->alloc and give
 * it to `out`, marked complete for dimensions 0..max_dim. */
void emit_barcode(Call &call, Vec<topoml_interval> &bars, uint32_t max_dim, topoml_barcode_v1 *out);
/* The same with generators: gens[k] belongs to bars[k] and goes with it into
 * out->generators (which check_barcode_out found room for). */
void emit_barcode(Call &call, Vec<topoml_interval> &bars, Vec<topoml_generator> &gens,
                  uint32_t max_dim, topoml_barcode_v1 *out);
/* Does `out` have room for generators (core 0.3's topoml_barcode_v1)? */
bool barcode_has_generators(const topoml_barcode_v1 *out);

} // namespace cppcompat

#endif
