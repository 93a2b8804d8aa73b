/*
 * input.cpp — checking inputs and turning them into sorted edge lists
 * (input.hpp).
 */
#include "input.hpp"

#include <algorithm>
#include <cmath>

#include "metric.hpp"

namespace cppcompat
{

void check_input(const topoml_input_v1 *in, uint32_t kinds)
{
    if (!in || in->struct_size < TOPOML_INPUT_V1_MIN_SIZE)
        fail(TOPOML_E_INVALID, "input struct missing or shorter than the first topoml_input_v1");
    if (in->kind >= TOPOML_INPUT_KIND_COUNT)
        fail(TOPOML_E_INVALID, "unknown input kind %u", in->kind);
    if (!(kinds & (1u << in->kind)))
        fail(TOPOML_E_UNSUPPORTED, "input kind %u is not supported by this op", in->kind);
    /* Vertices are numbered with uint32_t, and n itself must stay free as
     * "no vertex". */
    if (in->n >= UINT32_MAX)
        fail(TOPOML_E_OVERFLOW, "%llu points: at most 2^32-2 are supported",
             (unsigned long long)in->n);
    uint64_t values = 0;
    switch (in->kind) {
    case TOPOML_INPUT_POINTS:
        if (in->metric >= TOPOML_METRIC_COUNT)
            fail(TOPOML_E_INVALID, "unknown metric %u", in->metric);
        values = checked_mul(in->n, in->dim, "number of coordinates");
        break;
    case TOPOML_INPUT_CONDENSED:
        values = in->n ? in->n * (in->n - 1) / 2 : 0; /* n < 2^32: no overflow */
        break;
    case TOPOML_INPUT_SPARSE:
        if (in->n_edges && !in->edges)
            fail(TOPOML_E_INVALID, "sparse input has %llu edges but no edge array",
                 (unsigned long long)in->n_edges);
        return;
    }
    if (in->dtype >= TOPOML_DTYPE_COUNT)
        fail(TOPOML_E_INVALID, "unknown dtype %u", in->dtype);
    uint64_t elem = in->dtype == TOPOML_F32 ? sizeof(float) : sizeof(double);
    if (checked_mul(values, elem, "input size") > SIZE_MAX)
        fail(TOPOML_E_OVERFLOW, "input of %llu values does not fit in memory",
             (unsigned long long)values);
    if (values && !in->data)
        fail(TOPOML_E_INVALID, "input has no data");
}

double pair_distance(const topoml_input_v1 *in, uint64_t i, uint64_t j)
{
    if (in->kind == TOPOML_INPUT_POINTS) {
        topoml_metric m = static_cast<topoml_metric>(in->metric);
        double d;
        if (in->dtype == TOPOML_F32) {
            const float *p = static_cast<const float *>(in->data);
            d = distance(m, p + i * in->dim, p + j * in->dim, in->dim);
        } else {
            const double *p = static_cast<const double *>(in->data);
            d = distance(m, p + i * in->dim, p + j * in->dim, in->dim);
        }
        if (beyond_range(d))
            fail(TOPOML_E_OVERFLOW,
                 "the distance between points %llu and %llu is beyond the range of %s",
                 (unsigned long long)j, (unsigned long long)i,
                 in->dtype == TOPOML_F32 ? "float32" : "float64");
        return d;
    }
    uint64_t k = i * (i - 1) / 2 + j;
    if (in->dtype == TOPOML_F32)
        return static_cast<const float *>(in->data)[k];
    return static_cast<const double *>(in->data)[k];
}

static void check_distance(double d, uint64_t i, uint64_t j)
{
    if (std::isnan(d) || d < 0)
        fail(TOPOML_E_INVALID, "distance d(%llu,%llu) is %g: not a distance", (unsigned long long)i,
             (unsigned long long)j, d);
}

static void check_sparse(Call &call, const topoml_input_v1 *in)
{
    auto keys = make_vec<uint64_t>(call);
    keys.reserve(in->n_edges);
    for (uint64_t e = 0; e < in->n_edges; e++) {
        const topoml_edge &x = in->edges[e];
        if (x.i >= x.j || x.j >= in->n)
            fail(TOPOML_E_INVALID, "sparse edge %llu is (%u,%u): needs i < j < n = %llu",
                 (unsigned long long)e, x.i, x.j, (unsigned long long)in->n);
        check_distance(x.d, x.i, x.j);
        keys.push_back(uint64_t(x.i) << 32 | x.j);
    }
    std::sort(keys.begin(), keys.end());
    auto dup = std::adjacent_find(keys.begin(), keys.end());
    if (dup != keys.end())
        fail(TOPOML_E_INVALID, "sparse edge (%u,%u) is given twice", unsigned(*dup >> 32),
             unsigned(*dup & 0xffffffffu));
}

double enclosing_radius(Call &call, const topoml_input_v1 *in)
{
    uint64_t n = in->n;
    if (n < 2)
        return 0.0;
    auto far = make_vec<double>(call); /* max distance from each vertex so far */
    far.assign(n, 0.0);
    if (in->kind == TOPOML_INPUT_SPARSE) {
        auto degree = make_vec<uint64_t>(call);
        degree.assign(n, 0);
        for (uint64_t e = 0; e < in->n_edges; e++) {
            const topoml_edge &x = in->edges[e];
            degree[x.i]++;
            degree[x.j]++;
            far[x.i] = std::max(far[x.i], x.d);
            far[x.j] = std::max(far[x.j], x.d);
        }
        double r = INFINITY;
        for (uint64_t v = 0; v < n; v++)
            if (degree[v] == n - 1)
                r = std::min(r, far[v]);
        return r;
    }
    for (uint64_t i = 1; i < n; i++) {
        call.tick("enclosing radius", i, n, i * (in->kind == TOPOML_INPUT_POINTS ? in->dim : 1));
        for (uint64_t j = 0; j < i; j++) {
            double d = pair_distance(in, i, j);
            check_distance(d, i, j);
            far[i] = std::max(far[i], d);
            far[j] = std::max(far[j], d);
        }
    }
    return *std::min_element(far.begin(), far.end());
}

static bool edge_less(const topoml_edge &a, const topoml_edge &b)
{
    if (a.d != b.d)
        return a.d < b.d;
    if (a.i != b.i)
        return a.i < b.i;
    return a.j < b.j;
}

Vec<topoml_edge> collect_edges(Call &call, const topoml_input_v1 *in, double threshold)
{
    if (std::isnan(threshold))
        fail(TOPOML_E_INVALID, "threshold is NaN");
    uint64_t n = in->n, count = 0;
    uint64_t row_work = in->kind == TOPOML_INPUT_POINTS ? in->dim + 1 : 1;
    if (in->kind == TOPOML_INPUT_SPARSE) {
        check_sparse(call, in);
        for (uint64_t e = 0; e < in->n_edges; e++)
            count += in->edges[e].d <= threshold;
    } else {
        for (uint64_t i = 1; i < n; i++) {
            call.tick("edges: counting", i, n, i * row_work);
            for (uint64_t j = 0; j < i; j++) {
                double d = pair_distance(in, i, j);
                check_distance(d, i, j);
                count += d <= threshold;
            }
        }
    }
    call.check_estimate(checked_mul(count, sizeof(topoml_edge), "edge list size"), "edge list");
    auto edges = make_vec<topoml_edge>(call);
    edges.reserve(count);
    if (in->kind == TOPOML_INPUT_SPARSE) {
        for (uint64_t e = 0; e < in->n_edges; e++)
            if (in->edges[e].d <= threshold)
                edges.push_back(in->edges[e]);
    } else {
        for (uint64_t i = 1; i < n; i++) {
            call.tick("edges: collecting", i, n, i * row_work);
            for (uint64_t j = 0; j < i; j++) {
                double d = pair_distance(in, i, j);
                if (d <= threshold)
                    edges.push_back(topoml_edge{d, uint32_t(j), uint32_t(i)});
            }
        }
    }
    std::sort(edges.begin(), edges.end(), edge_less);
    return edges;
}

} // namespace cppcompat
