/*
 * h0.cpp — the h0 op: H_0 of the Rips filtration by Kruskal's algorithm over
 * the sorted edges, with a union-find forest.
 */
#include <cmath>

#include "barcode.hpp"
#include "input.hpp"
#include "ops.hpp"

namespace cppcompat
{

namespace
{

class Forest
{
  public:
    Forest(Call &call, uint32_t n) : parent_(make_vec<uint32_t>(call))
    {
        parent_.resize(n);
        for (uint32_t v = 0; v < n; v++)
            parent_[v] = v;
    }
    uint32_t root(uint32_t v)
    {
        while (parent_[v] != v)
            v = parent_[v] = parent_[parent_[v]]; /* path halving */
        return v;
    }
    /* Join the trees of a and b; false if they were one already. */
    bool join(uint32_t a, uint32_t b)
    {
        a = root(a);
        b = root(b);
        if (a == b)
            return false;
        if (a < b)
            parent_[b] = a;
        else
            parent_[a] = b;
        return true;
    }

  private:
    Vec<uint32_t> parent_;
};

} // namespace

void h0_bars(Call &call, const Vec<topoml_edge> &edges, uint32_t n, Vec<topoml_interval> &bars,
             Vec<uint32_t> *joins, Vec<topoml_generator> *gens)
{
    Forest forest(call, n);
    bars.reserve(n);
    uint32_t components = n;
    /* Every vertex is born at 0, so the edge that joins two components ends
     * the bar [0, d) of one of them (elder rule); d == 0 gives a bar of zero
     * length, which is not reported. */
    for (uint64_t e = 0; e < edges.size() && components > 1; e++) {
        call.tick("h0", e, edges.size());
        if (!forest.join(edges[e].i, edges[e].j))
            continue;
        components--;
        if (joins)
            joins->push_back(uint32_t(e));
        if (edges[e].d > 0) {
            bars.push_back(topoml_interval{0.0, edges[e].d, 0, 0});
            if (gens)
                gens->push_back(topoml_generator{{TOPOML_NO_VERTEX, TOPOML_NO_VERTEX},
                                                 {edges[e].i, edges[e].j}});
        }
    }
    for (uint32_t c = 0; c < components; c++) {
        bars.push_back(topoml_interval{0.0, INFINITY, 0, 0});
        if (gens)
            gens->push_back(topoml_generator{{TOPOML_NO_VERTEX, TOPOML_NO_VERTEX},
                                             {TOPOML_NO_VERTEX, TOPOML_NO_VERTEX}});
    }
}

void op_h0(Call &call, const topoml_input_v1 *in, double threshold, topoml_barcode_v1 *out)
{
    check_barcode_out(out);
    check_input(in, all_input_kinds);
    Vec<topoml_edge> edges = collect_edges(call, in, threshold);
    auto bars = make_vec<topoml_interval>(call);
    h0_bars(call, edges, uint32_t(in->n), bars);
    emit_barcode(call, bars, 0, out);
}

} // namespace cppcompat
