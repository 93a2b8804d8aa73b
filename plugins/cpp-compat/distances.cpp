/*
 * distances.cpp — the distances op (condensed pairwise distances of a point
 * cloud) and the edges op (every pair under a threshold, sorted).
 */
#include <cstring>

#include "input.hpp"
#include "metric.hpp"
#include "ops.hpp"

namespace cppcompat
{

template <class T> static void condensed(Call &call, const topoml_input_v1 *in, T *out)
{
    const T *p = static_cast<const T *>(in->data);
    const topoml_metric metric = static_cast<topoml_metric>(in->metric);
    const uint64_t n = in->n, dim = in->dim;
    uint64_t k = 0; /* == i*(i-1)/2 + j: Ripser's lower-triangular order */
    for (uint64_t i = 1; i < n; i++) {
        call.tick("distances", i, n, i * (dim + 1));
        for (uint64_t j = 0; j < i; j++) {
            out[k++] = distance(metric, p + i * dim, p + j * dim, dim);
            if (beyond_range(out[k - 1]))
                fail(TOPOML_E_OVERFLOW,
                     "the distance between points %llu and %llu is beyond the range of %s",
                     (unsigned long long)j, (unsigned long long)i,
                     sizeof(T) == sizeof(float) ? "float32" : "float64");
        }
    }
}

void op_distances(Call &call, const topoml_input_v1 *in, void *out)
{
    check_input(in, 1u << TOPOML_INPUT_POINTS);
    if (in->n >= 2 && !out)
        fail(TOPOML_E_INVALID, "no output buffer");
    if (in->dtype == TOPOML_F32)
        condensed(call, in, static_cast<float *>(out));
    else
        condensed(call, in, static_cast<double *>(out));
}

void op_edges(Call &call, const topoml_input_v1 *in, double threshold, topoml_edge **out,
              uint64_t *n_out)
{
    if (!out || !n_out)
        fail(TOPOML_E_INVALID, "no output pointers");
    *out = nullptr;
    *n_out = 0;
    check_input(in, all_input_kinds);
    Vec<topoml_edge> edges = collect_edges(call, in, threshold);
    Result<topoml_edge> result(call, edges.size());
    if (!edges.empty())
        std::memcpy(result.get(), edges.data(), edges.size() * sizeof(topoml_edge));
    *n_out = edges.size();
    *out = result.release();
}

} // namespace cppcompat
