/*
 * ops.hpp — the ops of the cpp-compat backend as C++ functions. They throw
 * Failure (call.hpp) or std::bad_alloc; entry.cpp wraps each in the extern
 * "C" function of the vtable that turns those into a topoml_status.
 */
#ifndef TOPOML_CPP_COMPAT_OPS_HPP
#define TOPOML_CPP_COMPAT_OPS_HPP

#include "call.hpp"
#include "topoml/plugin.h"

namespace cppcompat
{

/* The highest homology dimension and the largest prime modulus the rips op
 * accepts; the capability record says the same. */
constexpr uint32_t rips_max_dim = 7;
constexpr uint32_t rips_max_modulus = 251;

void op_distances(Call &call, const topoml_input_v1 *in, void *out);
void op_edges(Call &call, const topoml_input_v1 *in, double threshold, topoml_edge **out,
              uint64_t *n_out);
void op_h0(Call &call, const topoml_input_v1 *in, double threshold, topoml_barcode_v1 *out);
/* The H_0 bars of the filtration of `edges` (sorted by (d, i, j)) on n
 * vertices, by union-find; the h0 op, and what a cancelled rips op still
 * returns. With `joins`, the positions of the edges that join two
 * components (the spanning forest, ascending) are appended to it: the rips
 * op clears those columns of dimension 1. With `gens`, each bar's generator
 * (the joining edge as death edge) is appended to it. */
void h0_bars(Call &call, const Vec<topoml_edge> &edges, uint32_t n, Vec<topoml_interval> &bars,
             Vec<uint32_t> *joins = nullptr, Vec<topoml_generator> *gens = nullptr);

void op_rips(Call &call, const topoml_input_v1 *in, const topoml_rips_params_v1 *params,
             topoml_barcode_v1 *out);

} // namespace cppcompat

#endif
