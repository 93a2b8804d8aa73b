/*
 * input.hpp — reading a topoml_input_v1: checking it, the distance of a pair,
 * the enclosing radius, and the sorted list of edges under a threshold that
 * the edges, h0 and rips ops all start from.
 *
 * Not here: any op's output.
 */
#ifndef TOPOML_CPP_COMPAT_INPUT_HPP
#define TOPOML_CPP_COMPAT_INPUT_HPP

#include <cstdint>

#include "call.hpp"
#include "topoml/plugin.h"

namespace cppcompat
{

constexpr uint32_t all_input_kinds = (1u << TOPOML_INPUT_KIND_COUNT) - 1u;

/* Check the struct, the kind (one of `kinds`, a bit per topoml_input_kind),
 * dtype, metric, sizes and pointers; throws TOPOML_E_INVALID,
 * TOPOML_E_UNSUPPORTED or TOPOML_E_OVERFLOW. Values are checked where they
 * are read. */
void check_input(const topoml_input_v1 *in, uint32_t kinds);

/* d(i, j), i > j, of a POINTS or CONDENSED input, widened to double: for
 * POINTS the value the distances op gives for in->dtype. */
double pair_distance(const topoml_input_v1 *in, uint64_t i, uint64_t j);

/* min over i of max over j of d(i, j): from there on the Rips complex is a
 * cone, so nothing but one H0 class survives. Absent SPARSE pairs count as
 * infinitely far; +INFINITY when no vertex reaches all others. 0 for n < 2. */
double enclosing_radius(Call &call, const topoml_input_v1 *in);

/* Every pair with d <= threshold, sorted by (d, i, j), i < j. Counts first so
 * that the memory limit is checked before the list is allocated. Throws
 * TOPOML_E_INVALID on NaN or negative distances and, for SPARSE input, on
 * edges out of range, with i >= j, or given twice. */
Vec<topoml_edge> collect_edges(Call &call, const topoml_input_v1 *in, double threshold);

} // namespace cppcompat

#endif
