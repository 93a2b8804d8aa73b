/*
 * rips.cpp — the rips op: Vietoris–Rips persistence by persistent
 * cohomology with clearing over an explicit filtration, written
 * independently of the scalar reference so that the two check each other.
 *
 *  1. The 1-skeleton: every edge with diameter <= the threshold, sorted by
 *     (d, i, j). An edge's position in that order is its rank.
 *  2. The filtration. A k-simplex (k >= 1) is named by its sorted vertices,
 *     or by its colex index c = sum_t C(v_t, t+1) (one to one for a fixed
 *     k), and has a longest edge, the one of highest rank r. The simplices
 *     of one dimension are ordered by the key (r, c); across dimensions by
 *     (r, dimension, c). That order sorts them by diameter and puts every
 *     face before its cofaces, so it is a filtration; how ties of equal
 *     diameter are broken changes only which pairs of zero length appear,
 *     never the barcode.
 *  3. Dimension 0 by union-find (h0.cpp). The edges that join two
 *     components are the pivots of the coboundary of the vertices, so
 *     their columns are cleared in dimension 1.
 *  4. Dimension k = 1 .. max_dim: the columns are the k-simplices that the
 *     reduction of dimension k-1 did not pair (clearing, Chen–Kerber),
 *     listed explicitly with their keys and sorted. They are reduced in
 *     decreasing key order; the pivot of a column is its coface of smallest
 *     key (the coboundary matrix read anti-transposed). A column whose
 *     pivot is new pairs (sigma, tau): the interval [d(sigma), d(tau)).
 *     A column that reduces to zero is an essential class [d(sigma), inf).
 *  5. Cofaces are never stored: a coface of sigma is sigma plus one vertex
 *     joined to all of sigma, found from the neighbours of sigma's vertex
 *     of lowest degree, in increasing vertex order, which is increasing
 *     colex order. The first coface whose longest edge is sigma's own is
 *     the smallest key there can be; if no earlier column has it as pivot,
 *     the column is reduced as it stands (an emergent pair, found without
 *     enumerating the rest). Otherwise the column is reduced in a heap of
 *     (key, coefficient) entries, adding the columns that own its pivot;
 *     what a column was made of (its column of the reduction matrix V) is
 *     kept only when it is not the simplex alone, and its coboundary is
 *     enumerated again when it is added.
 *
 * Over a cone (a vertex within the threshold of every other one, as at the
 * enclosing radius) the complex is contractible: no essential class exists
 * above dimension 0, and one would be a bug, reported as TOPOML_E_INTERNAL
 * rather than as a wrong barcode.
 *
 * Not here: anything shared with the other ops (input.cpp, barcode.cpp).
 */
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <optional>
#include <type_traits>

#include "barcode.hpp"
#include "input.hpp"
#include "ops.hpp"

namespace cppcompat
{

namespace
{

constexpr uint32_t none = UINT32_MAX;
/* Vertices of the largest simplex the op meets (a coface in dimension
 * max_dim + 1). */
constexpr uint32_t max_vertices = rips_max_dim + 2;
/* Up to this many vertices the rank of every pair is kept in an n x n
 * table (16 MiB at most); above it a lookup is a binary search. */
constexpr uint32_t dense_max_n = 2048;

struct Neighbor {
    uint32_t v;
    uint32_t rank; /* of the edge to v */
};

/* The 1-skeleton under the threshold: edges by rank, each vertex's
 * neighbours sorted by vertex number, and for small n the rank of every
 * pair. */
class Graph
{
  public:
    Graph(Call &call, uint32_t n, Vec<topoml_edge> &&sorted_edges)
        : n(n), edges(std::move(sorted_edges)), first_(make_vec<uint64_t>(call)),
          adj_(make_vec<Neighbor>(call)), dense_(make_vec<uint32_t>(call))
    {
        first_.assign(uint64_t(n) + 1, 0);
        for (const topoml_edge &e : edges) {
            first_[e.i + 1]++;
            first_[e.j + 1]++;
        }
        for (uint32_t v = 0; v < n; v++)
            first_[v + 1] += first_[v];
        adj_.resize(2 * edges.size());
        auto fill = make_vec<uint64_t>(call);
        fill.assign(first_.begin(), first_.end() - 1);
        for (uint32_t r = 0; r < edges.size(); r++) {
            adj_[fill[edges[r].i]++] = Neighbor{edges[r].j, r};
            adj_[fill[edges[r].j]++] = Neighbor{edges[r].i, r};
        }
        for (uint32_t v = 0; v < n; v++)
            std::sort(adj_.begin() + first_[v], adj_.begin() + first_[v + 1],
                      [](const Neighbor &a, const Neighbor &b) { return a.v < b.v; });
        if (n <= dense_max_n) {
            dense_.assign(uint64_t(n) * n, none);
            for (uint32_t r = 0; r < edges.size(); r++) {
                dense_[uint64_t(edges[r].i) * n + edges[r].j] = r;
                dense_[uint64_t(edges[r].j) * n + edges[r].i] = r;
            }
        }
    }

    static uint64_t bytes_for(uint64_t n, uint64_t m)
    {
        return (n + 1) * 8 + 2 * m * sizeof(Neighbor) + (n <= dense_max_n ? n * n * 4 : 0);
    }

    const Neighbor *begin(uint32_t v) const
    {
        return adj_.data() + first_[v];
    }
    const Neighbor *end(uint32_t v) const
    {
        return adj_.data() + first_[v + 1];
    }
    uint64_t degree(uint32_t v) const
    {
        return first_[v + 1] - first_[v];
    }

    /* Rank of the edge {a, b}, or `none`. */
    uint32_t rank(uint32_t a, uint32_t b) const
    {
        if (!dense_.empty())
            return dense_[uint64_t(a) * n + b];
        const Neighbor *lo = begin(a), *hi = end(a);
        const Neighbor *p =
            std::lower_bound(lo, hi, b, [](const Neighbor &x, uint32_t v) { return x.v < v; });
        return p != hi && p->v == b ? p->rank : none;
    }

    /* Is some vertex joined to every other? Then the complex is a cone over
     * it, contractible. */
    bool cone() const
    {
        for (uint32_t v = 0; v < n; v++)
            if (degree(v) == uint64_t(n) - 1)
                return true;
        return false;
    }

    const uint32_t n;
    const Vec<topoml_edge> edges;

  private:
    Vec<uint64_t> first_;
    Vec<Neighbor> adj_;
    Vec<uint32_t> dense_;
};

/* The k-simplices (k >= 2) with their longest edge, by enumerating cliques:
 * for each edge e = (i, j), the (k-1)-cliques among the common neighbours
 * of i and j that are joined to both, and to each other, by edges of lower
 * rank. */
class Cliques
{
  public:
    Cliques(Call &call, const Graph &g, uint32_t k)
        : call_(call), g_(g), k_(k), cand_(CallAllocator<Vec<uint32_t>>(call))
    {
        cand_.reserve(k);
        for (uint32_t d = 0; d < k; d++)
            cand_.emplace_back(CallAllocator<uint32_t>(call));
    }

    /* visit(rank of the longest edge, sorted vertices) for each simplex. */
    template <class F> void run(const char *stage, F &&visit)
    {
        stage_ = stage;
        const uint32_t m = uint32_t(g_.edges.size());
        for (e_ = 0; e_ < m; e_++) {
            const uint32_t i = g_.edges[e_].i, j = g_.edges[e_].j;
            Vec<uint32_t> &c = cand_[0];
            c.clear();
            const Neighbor *a = g_.begin(i), *ae = g_.end(i), *b = g_.begin(j), *be = g_.end(j);
            call_.tick(stage, e_, m, uint64_t(ae - a) + uint64_t(be - b));
            while (a != ae && b != be) {
                if (a->v < b->v)
                    ++a;
                else if (b->v < a->v)
                    ++b;
                else {
                    if (a->rank < e_ && b->rank < e_)
                        c.push_back(a->v);
                    ++a;
                    ++b;
                }
            }
            extend(0, visit);
        }
    }

  private:
    template <class F> void extend(uint32_t depth, F &visit)
    {
        if (depth == k_ - 1) {
            uint32_t v[max_vertices];
            uint32_t ij[2] = {g_.edges[e_].i, g_.edges[e_].j};
            std::merge(ij, ij + 2, s_, s_ + (k_ - 1), v);
            visit(e_, static_cast<const uint32_t *>(v));
            return;
        }
        const Vec<uint32_t> &c = cand_[depth];
        Vec<uint32_t> &next = cand_[depth + 1];
        for (size_t x = 0; x < c.size(); x++) {
            const uint32_t s = c[x];
            s_[depth] = s;
            if (depth + 1 < k_ - 1) {
                next.clear();
                const Neighbor *a = g_.begin(s), *ae = g_.end(s);
                call_.tick(stage_, e_, g_.edges.size(), uint64_t(ae - a) + c.size() - x);
                for (size_t y = x + 1; y < c.size() && a != ae;) {
                    if (a->v < c[y])
                        ++a;
                    else if (c[y] < a->v)
                        ++y;
                    else {
                        if (a->rank < e_)
                            next.push_back(c[y]);
                        ++a;
                        ++y;
                    }
                }
            }
            extend(depth + 1, visit);
        }
    }

    Call &call_;
    const Graph &g_;
    const uint32_t k_;
    const char *stage_ = "";
    uint32_t e_ = 0;
    uint32_t s_[max_vertices] = {};
    Vec<Vec<uint32_t>> cand_;
};

/* Binomial coefficients C(v, t) for v < n and t <= max_t, saturating at
 * UINT64_MAX: the combinatorial number system. */
class Binomials
{
  public:
    Binomials(Call &call, uint32_t n, uint32_t max_t)
        : n_(n), max_t_(max_t), table_(make_vec<uint64_t>(call))
    {
        table_.assign(uint64_t(max_t + 1) * (n + 1), 0);
        for (uint32_t v = 0; v <= n; v++) {
            at(v, 0) = 1;
            for (uint32_t t = 1; t <= max_t && v > 0; t++)
                at(v, t) = add(at(v - 1, t - 1), at(v - 1, t));
        }
    }

    /* C(n, t), saturating. */
    uint64_t of_n(uint32_t t) const
    {
        return (*this)(n_, t);
    }

    uint64_t operator()(uint32_t v, uint32_t t) const
    {
        return table_[uint64_t(t) * (n_ + 1) + v];
    }

    /* Colex index of the sorted vertices v[0 .. k]. */
    uint64_t colex(const uint32_t *v, uint32_t k) const
    {
        uint64_t c = 0;
        for (uint32_t t = 0; t <= k; t++)
            c += (*this)(v[t], t + 1);
        return c;
    }

    /* The sorted vertices of the k-simplex with colex index c. */
    void vertices(uint64_t c, uint32_t k, uint32_t *v) const
    {
        uint32_t hi = n_;
        for (uint32_t t = k + 1; t-- > 0;) {
            /* the largest x < hi with C(x, t+1) <= c */
            const uint64_t *row = table_.data() + uint64_t(t + 1) * (n_ + 1);
            const uint64_t *p = std::upper_bound(row + t, row + hi, c);
            const uint32_t x = uint32_t(p - row) - 1;
            v[t] = x;
            c -= row[x];
            hi = x;
        }
    }

    uint32_t max_t() const
    {
        return max_t_;
    }

  private:
    static uint64_t add(uint64_t a, uint64_t b)
    {
        return a > UINT64_MAX - b ? UINT64_MAX : a + b;
    }
    uint64_t &at(uint32_t v, uint32_t t)
    {
        return table_[uint64_t(t) * (n_ + 1) + v];
    }

    uint32_t n_, max_t_;
    Vec<uint64_t> table_; /* by t, then v = 0 .. n */
};

/* Coefficients in Z/2: every coefficient is 1. */
struct Z2 {
    static constexpr bool binary = true;
    uint32_t sign(uint32_t) const
    {
        return 1;
    }
    uint32_t sum(uint32_t a, uint32_t b) const
    {
        return a ^ b;
    }
    uint32_t product(uint32_t, uint32_t) const
    {
        return 1;
    }
    /* f with a + f b = 0 */
    uint32_t cancel(uint32_t, uint32_t) const
    {
        return 1;
    }
};

/* Coefficients in Z/p for an odd prime p <= 251. */
struct Zp {
    static constexpr bool binary = false;
    explicit Zp(uint32_t p) : p(p)
    {
        inverse[1] = 1;
        for (uint32_t a = 2; a < p; a++) /* a^-1 = -(p/a) * (p mod a)^-1 */
            inverse[a] = (p - (p / a) * inverse[p % a] % p) % p;
    }
    /* The coface with the new vertex at position t has sign (-1)^t. */
    uint32_t sign(uint32_t t) const
    {
        return t % 2 ? p - 1 : 1;
    }
    uint32_t sum(uint32_t a, uint32_t b) const
    {
        return (a + b) % p;
    }
    uint32_t product(uint32_t a, uint32_t b) const
    {
        return a * b % p;
    }
    uint32_t cancel(uint32_t a, uint32_t b) const
    {
        return (p - a) * inverse[b] % p;
    }
    uint32_t p;
    uint32_t inverse[256] = {};
};

/* A k-simplex as a column: its key, in filtration order by (r, c). */
struct Column {
    uint64_t c;
    uint32_t r;
    uint32_t pad;
};

static bool key_less(uint32_t r1, uint64_t c1, uint32_t r2, uint64_t c2)
{
    return r1 != r2 ? r1 < r2 : c1 < c2;
}

/* An entry of a coboundary: the coface's key and its coefficient. */
struct Entry {
    uint64_t c;
    uint32_t r;
    uint32_t coeff;
};

/* The reduced columns of one dimension that have a pivot, found by the
 * pivot's colex index (unique among the (k+1)-simplices): open addressing,
 * the key in the slot. It is also the set of (k+1)-simplices that the next
 * dimension clears. */
class Pivots
{
  public:
    struct Slot {
        uint64_t key;    /* colex index of the pivot, or `empty` */
        uint32_t column; /* position in the column list */
        uint32_t coeff;  /* of the pivot in the reduced column */
    };

    explicit Pivots(Call &call) : slots_(make_vec<Slot>(call))
    {
        slots_.assign(16, Slot{empty, 0, 0});
    }

    static uint64_t bytes_per_pivot()
    {
        return 3 * sizeof(Slot); /* load at least 1/3 */
    }

    const Slot *find(uint64_t key) const
    {
        const uint64_t mask = slots_.size() - 1;
        for (uint64_t h = spread(key) & mask;; h = (h + 1) & mask) {
            if (slots_[h].key == key)
                return &slots_[h];
            if (slots_[h].key == empty)
                return nullptr;
        }
    }

    /* Room for `count` pivots without growing (load at most 2/3). */
    void reserve(uint64_t count)
    {
        uint64_t want = slots_.size();
        while (3 * count > 2 * want)
            want *= 2;
        if (want != slots_.size())
            rehash(want);
    }

    void insert(const Slot &s)
    {
        if (3 * (size_ + 1) > 2 * slots_.size())
            rehash(2 * slots_.size());
        place(slots_, s);
        size_++;
    }

    uint64_t size() const
    {
        return size_;
    }

    /* No colex index is this: op_rips checks C(n, max_dim+2) < UINT64_MAX. */
    static constexpr uint64_t empty = UINT64_MAX;

  private:
    static uint64_t spread(uint64_t key)
    {
        key *= 0x9e3779b97f4a7c15u;
        return key ^ (key >> 29);
    }
    static void place(Vec<Slot> &slots, const Slot &s)
    {
        const uint64_t mask = slots.size() - 1;
        uint64_t h = spread(s.key) & mask;
        while (slots[h].key != empty)
            h = (h + 1) & mask;
        slots[h] = s;
    }
    void rehash(uint64_t count)
    {
        Vec<Slot> bigger(slots_.get_allocator());
        bigger.assign(count, Slot{empty, 0, 0});
        for (const Slot &s : slots_)
            if (s.key != empty)
                place(bigger, s);
        slots_.swap(bigger);
    }

    Vec<Slot> slots_;
    uint64_t size_ = 0;
};

/* The pivots of the columns whose longest edge is r, the one being reduced
 * now. A coface with the same longest edge r can only be the pivot of such
 * a column (columns of a greater key come first and have longer edges, and
 * a pivot's longest edge is at least its column's), so the emergent pair
 * test asks this small set, not the whole table. Slots are stamped with the
 * group, so starting a new one clears nothing. */
class Group
{
  public:
    explicit Group(Call &call) : keys_(make_vec<uint64_t>(call)), stamps_(make_vec<uint32_t>(call))
    {
        keys_.assign(64, 0);
        stamps_.assign(64, 0);
    }

    void start(uint32_t rank)
    {
        r = rank;
        size_ = 0;
        if (++stamp_ == 0) { /* wrapped: clear the stamps once */
            std::fill(stamps_.begin(), stamps_.end(), 0);
            stamp_ = 1;
        }
    }

    bool has(uint64_t key) const
    {
        const uint64_t mask = keys_.size() - 1;
        for (uint64_t h = (key * 0x9e3779b97f4a7c15u >> 20) & mask; stamps_[h] == stamp_;
             h = (h + 1) & mask)
            if (keys_[h] == key)
                return true;
        return false;
    }

    void add(uint64_t key)
    {
        if (2 * (size_ + 1) > keys_.size()) {
            /* Grow, keeping this group's keys. */
            auto old_keys = make_vec<uint64_t>(*keys_.get_allocator().call);
            auto old_stamps = make_vec<uint32_t>(*keys_.get_allocator().call);
            old_keys.swap(keys_);
            old_stamps.swap(stamps_);
            keys_.assign(old_keys.size() * 2, 0);
            stamps_.assign(old_keys.size() * 2, 0);
            for (size_t h = 0; h < old_keys.size(); h++)
                if (old_stamps[h] == stamp_)
                    place(old_keys[h]);
        }
        place(key);
        size_++;
    }

    uint32_t r = none;

  private:
    void place(uint64_t key)
    {
        const uint64_t mask = keys_.size() - 1;
        uint64_t h = (key * 0x9e3779b97f4a7c15u >> 20) & mask;
        while (stamps_[h] == stamp_)
            h = (h + 1) & mask;
        keys_[h] = key;
        stamps_[h] = stamp_;
    }

    Vec<uint64_t> keys_;
    Vec<uint32_t> stamps_;
    uint32_t stamp_ = 1;
    uint64_t size_ = 0;
};

/* The reduction of one dimension. */
template <class Field> class Reduction
{
  public:
    Reduction(Call &call, const Field &field, const Graph &g, const Binomials &binomials,
              uint32_t k, Vec<Column> &columns)
        : pivots(call), call_(call), field_(field), g_(g), binomials_(binomials), k_(k),
          columns_(columns), group_(call), runs_buf_(make_vec<Entry>(call)), runs_(make_vec<Run>(call)),
          heap_(make_vec<Head>(call)), v_pool_(make_vec<uint32_t>(call)),
          v_coeff_(make_vec<uint32_t>(call)), v_ranges_(make_vec<VRange>(call)),
          work_(make_vec<uint32_t>(call)), work_coeff_(make_vec<uint32_t>(call)),
          order_(make_vec<uint32_t>(call))
    {
    }

    /* Reduce every column, last first; bars go to `bars`. */
    /* gens: NULL, or the generators of the bars, kept alongside. */
    void run(Vec<topoml_interval> &bars, Vec<topoml_generator> *gens, uint64_t &essential)
    {
        pivots.reserve(columns_.size());
        char *stage = stage_;
        std::snprintf(stage, sizeof stage_, "rips: reducing dimension %u", k_);
        const uint64_t total = columns_.size();
        for (uint64_t done = 0; done < total; done++) {
            done_ = done;
            const uint32_t x = uint32_t(total - 1 - done);
            const Column &col = columns_[x];
            uint32_t v[max_vertices];
            binomials_.vertices(col.c, k_, v);
            call_.tick(stage, done, total, g_.degree(v[0])); /* about the coface scan */
            const double birth = g_.edges[col.r].d;

            /* The emergent pair: the first coface that keeps the column's
             * diameter is its smallest, so if it is nobody's pivot the
             * column is reduced as it is. */
            if (col.r != group_.r)
                group_.start(col.r);
            bool emergent = false;
            Entry first{};
            cofaces(v, col.r, [&](const Entry &e) {
                if (e.r != col.r)
                    return true;
                first = e;
                emergent = !group_.has(e.c);
                return false;
            });
            if (emergent) {
                pivots.insert(Pivots::Slot{first.c, x, first.coeff});
                group_.add(first.c);
                continue; /* d(tau) == d(sigma): no bar */
            }

            /* A simplex's longest edge is the one of rank r: its length is
             * the value it gives a bar (the generator of that value). */
            const std::optional<Entry> pivot = reduce(x);
            const topoml_edge &be = g_.edges[col.r];
            if (pivot) {
                const topoml_edge &de = g_.edges[pivot->r];
                if (de.d > birth) {
                    bars.push_back(topoml_interval{birth, de.d, k_, 0});
                    if (gens)
                        gens->push_back(topoml_generator{{be.i, be.j}, {de.i, de.j}});
                }
            } else {
                bars.push_back(topoml_interval{birth, INFINITY, k_, 0});
                if (gens)
                    gens->push_back(
                        topoml_generator{{be.i, be.j}, {TOPOML_NO_VERTEX, TOPOML_NO_VERTEX}});
                essential++;
            }
        }
    }

    Pivots pivots;

  private:
    /* visit(entry) for each coface of the simplex with sorted vertices
     * v[0 .. k] and longest edge r, in increasing colex order, while visit
     * returns true. */
    template <class F> void cofaces(const uint32_t *v, uint32_t r, F &&visit) const
    {
        const uint32_t k = k_;
        /* Neighbours of the vertex of lowest degree are the candidates. */
        uint32_t base = 0;
        for (uint32_t t = 1; t <= k; t++)
            if (g_.degree(v[t]) < g_.degree(v[base]))
                base = t;
        /* c(sigma + w) with w at position p: low[p] + C(w, p+1) + high[p]. */
        uint64_t low[max_vertices + 1], high[max_vertices + 1];
        low[0] = 0;
        for (uint32_t t = 0; t <= k; t++)
            low[t + 1] = low[t] + binomials_(v[t], t + 1);
        high[k + 1] = 0;
        for (uint32_t t = k + 1; t-- > 0;)
            high[t] = high[t + 1] + binomials_(v[t], t + 2);
        uint32_t p = 0;
        for (const Neighbor *a = g_.begin(v[base]), *ae = g_.end(v[base]); a != ae; ++a) {
            const uint32_t w = a->v;
            while (p <= k && v[p] < w)
                p++;
            if (p <= k && v[p] == w)
                continue;
            uint32_t rr = std::max(r, a->rank);
            bool joined = true;
            for (uint32_t t = 0; t <= k; t++) {
                if (t == base)
                    continue;
                const uint32_t q = g_.rank(v[t], w);
                if (q == none) {
                    joined = false;
                    break;
                }
                rr = std::max(rr, q);
            }
            if (!joined)
                continue;
            const Entry e{low[p] + binomials_(w, p + 1) + high[p], rr, field_.sign(p)};
            if (!visit(e))
                return;
        }
    }

    /* The working column is a sum of sorted runs, merged lazily: each run
     * is one coboundary (sorted by key) times a factor, in runs_buf_, and a
     * min-heap of runs by their first unread entry says where the pivot
     * is. An addition adds runs; only the entries down to the next pivot
     * are ever read. */
    struct Run {
        uint64_t pos, end;
        uint32_t factor;
    };

    /* A run in the heap, with the key of its first unread entry. */
    struct Head {
        uint64_t c;
        uint32_t r;
        uint32_t run;
    };

    static bool run_after(const Head &x, const Head &y)
    {
        return key_less(y.r, y.c, x.r, x.c);
    }

    /* The heap is 4-ary: children of i are 4i+1 .. 4i+4, one cache line
     * of heads. */
    void sift_down(size_t i)
    {
        const size_t m = heap_.size();
        const Head h = heap_[i];
        for (;;) {
            const size_t first = 4 * i + 1;
            if (first >= m)
                break;
            size_t least = first;
            const size_t last = std::min(first + 4, m);
            for (size_t j = first + 1; j < last; j++)
                if (run_after(heap_[least], heap_[j]))
                    least = j;
            if (!run_after(h, heap_[least]))
                break;
            heap_[i] = heap_[least];
            i = least;
        }
        heap_[i] = h;
    }

    void add_run(uint64_t begin, uint32_t factor)
    {
        if (begin == runs_buf_.size())
            return;
        runs_.push_back(Run{begin, runs_buf_.size(), factor});
        const Entry &e = runs_buf_[begin];
        heap_.push_back(Head{e.c, e.r, uint32_t(runs_.size() - 1)});
        for (size_t i = heap_.size() - 1; i > 0;) {
            const size_t parent = (i - 1) / 4;
            if (!run_after(heap_[parent], heap_[i]))
                break;
            std::swap(heap_[parent], heap_[i]);
            i = parent;
        }
    }

    /* Add factor times the coboundary of column x as a run. */
    void add_coboundary(uint32_t x, uint32_t factor)
    {
        uint32_t v[max_vertices];
        binomials_.vertices(columns_[x].c, k_, v);
        const uint64_t begin = runs_buf_.size();
        cofaces(v, columns_[x].r, [&](const Entry &e) {
            runs_buf_.push_back(e);
            return true;
        });
        std::sort(runs_buf_.begin() + begin, runs_buf_.end(),
                  [](const Entry &a, const Entry &b) { return key_less(a.r, a.c, b.r, b.c); });
        add_run(begin, factor);
    }

    /* Take the smallest entry from the runs. */
    Entry take()
    {
        Run &run = runs_[heap_[0].run];
        Entry e = runs_buf_[run.pos++];
        e.coeff = field_.product(run.factor, e.coeff);
        if (run.pos == run.end) {
            heap_[0] = heap_.back();
            heap_.pop_back();
        } else {
            heap_[0].c = runs_buf_[run.pos].c;
            heap_[0].r = runs_buf_[run.pos].r;
        }
        if (!heap_.empty())
            sift_down(0);
        return e;
    }

    /* The pivot of the working column (its smallest entry with a non-zero
     * sum), or none. It stays in the column, as a run of its own. */
    std::optional<Entry> pivot()
    {
        while (!heap_.empty()) {
            Entry top = take();
            while (!heap_.empty() && heap_[0].c == top.c)
                top.coeff = field_.sum(top.coeff, take().coeff);
            if (top.coeff != 0) {
                runs_buf_.push_back(top);
                add_run(runs_buf_.size() - 1, 1);
                return top;
            }
        }
        return std::nullopt;
    }

    /* Where column x's V (beyond x itself) is in v_pool_: [begin, end). */
    std::pair<uint64_t, uint64_t> v_range(uint32_t x) const
    {
        /* v_ranges_ is by decreasing column, as the columns are reduced. */
        auto it = std::lower_bound(v_ranges_.begin(), v_ranges_.end(), x,
                                   [](const VRange &r, uint32_t c) { return r.column > c; });
        if (it == v_ranges_.end() || it->column != x)
            return {0, 0};
        return {it->begin, it->end};
    }

    /* Reduce column x, whose coboundary is the first run; returns its
     * pivot, or none if it reduced to zero. */
    std::optional<Entry> reduce(uint32_t x)
    {
        runs_buf_.clear();
        runs_.clear();
        heap_.clear();
        work_.clear();
        work_coeff_.clear();
        add_coboundary(x, 1);
        for (;;) {
            const std::optional<Entry> p = pivot();
            if (!p)
                return std::nullopt;
            const Pivots::Slot *owner = pivots.find(p->c);
            if (!owner) {
                record(x, *p);
                return p;
            }
            /* Add f times the owner's column: its simplex and its V. */
            const uint32_t f = field_.cancel(p->coeff, owner->coeff);
            const uint32_t column = owner->column; /* the table may move below */
            const std::pair<uint64_t, uint64_t> range = v_range(column);
            work_.push_back(column);
            work_coeff_.push_back(f);
            add_coboundary(column, f);
            for (uint64_t y = range.first; y < range.second; y++) {
                const uint32_t fy = field_.product(f, v_coeff_[y]);
                work_.push_back(v_pool_[y]);
                work_coeff_.push_back(fy);
                add_coboundary(v_pool_[y], fy);
            }
            call_.tick(stage_, done_, columns_.size(), range.second - range.first + 1);
        }
    }

    /* Pair column x with its pivot, keeping what was added to it (V),
     * summed per column, zero sums dropped. */
    void record(uint32_t x, const Entry &pivot)
    {
        const uint64_t begin = v_pool_.size();
        if (!work_.empty()) {
            const size_t m = work_.size();
            order_.resize(m);
            for (uint32_t t = 0; t < m; t++)
                order_[t] = t;
            std::sort(order_.begin(), order_.end(),
                      [&](uint32_t a, uint32_t b) { return work_[a] < work_[b]; });
            for (size_t t = 0; t < m;) {
                const uint32_t col = work_[order_[t]];
                uint32_t sum = 0;
                for (; t < m && work_[order_[t]] == col; t++)
                    sum = field_.sum(sum, work_coeff_[order_[t]]);
                if (sum != 0) {
                    v_pool_.push_back(col);
                    v_coeff_.push_back(sum);
                }
            }
            if (v_pool_.size() > begin)
                v_ranges_.push_back(VRange{x, begin, v_pool_.size()});
        }
        pivots.insert(Pivots::Slot{pivot.c, x, pivot.coeff});
        if (pivot.r == columns_[x].r)
            group_.add(pivot.c);
    }

    struct VRange {
        uint32_t column;
        uint64_t begin, end;
    };

    Call &call_;
    const Field &field_;
    const Graph &g_;
    const Binomials &binomials_;
    const uint32_t k_;
    const Vec<Column> &columns_;
    char stage_[64] = {};
    uint64_t done_ = 0;

    Group group_;
    Vec<Entry> runs_buf_;
    Vec<Run> runs_;
    Vec<Head> heap_; /* of runs */
    Vec<uint32_t> v_pool_, v_coeff_; /* columns of V, without the diagonal */
    Vec<VRange> v_ranges_;
    Vec<uint32_t> work_, work_coeff_, order_; /* the column of V being built */
};

static void check_params(const topoml_rips_params_v1 *params)
{
    if (!params ||
        params->struct_size < offsetof(topoml_rips_params_v1, modulus) + sizeof params->modulus)
        fail(TOPOML_E_INVALID, "rips params missing or shorter than topoml_rips_params_v1");
    if (params->max_dim > rips_max_dim)
        fail(TOPOML_E_UNSUPPORTED, "max_dim %u: cpp-compat computes up to dimension %u",
             params->max_dim, rips_max_dim);
    if (std::isnan(params->threshold))
        fail(TOPOML_E_INVALID, "threshold is NaN");
    const uint32_t p = params->modulus;
    bool prime = p >= 2;
    for (uint64_t d = 2; prime && d * d <= p; d++) /* 64 bits: d*d must not wrap */
        prime = p % d != 0;
    if (!prime)
        fail(TOPOML_E_INVALID, "modulus %u is not a prime", p);
    if (p > rips_max_modulus)
        fail(TOPOML_E_UNSUPPORTED, "modulus %u: cpp-compat supports primes up to %u", p,
             rips_max_modulus);
}

/* The columns of dimension k: the k-simplices that `cleared` (the pivots of
 * dimension k-1) does not hold, sorted by key. */
static void make_columns(Call &call, const Graph &g, const Binomials &binomials, uint32_t k,
                         const Pivots &cleared, const Vec<uint32_t> &tree, uint64_t count,
                         Vec<Column> &columns)
{
    columns.clear();
    if (k == 1) {
        columns.reserve(g.edges.size() - tree.size());
        size_t t = 0;
        for (uint32_t r = 0; r < g.edges.size(); r++) {
            if (t < tree.size() && tree[t] == r) {
                t++;
                continue;
            }
            const uint32_t v[2] = {g.edges[r].i, g.edges[r].j};
            columns.push_back(Column{binomials.colex(v, 1), r, 0});
        }
        return; /* ranks are unique: already sorted */
    }
    columns.reserve(count - cleared.size());
    char stage[64];
    std::snprintf(stage, sizeof stage, "rips: listing %u-simplices", k);
    Cliques(call, g, k).run(stage, [&](uint32_t r, const uint32_t *v) {
        const uint64_t c = binomials.colex(v, k);
        if (!cleared.find(c))
            columns.push_back(Column{c, r, 0});
    });
    /* Cliques come by longest edge already; sort each run by colex. */
    for (size_t a = 0; a < columns.size();) {
        size_t b = a + 1;
        while (b < columns.size() && columns[b].r == columns[a].r)
            b++;
        std::sort(columns.begin() + a, columns.begin() + b,
                  [](const Column &x, const Column &y) { return x.c < y.c; });
        a = b;
    }
}

template <class Field>
static void reduce_all(Call &call, const Field &field, const Graph &g, const Binomials &binomials,
                       uint32_t max_dim, const uint64_t *count, const Vec<uint32_t> &tree,
                       Vec<topoml_interval> &bars, Vec<topoml_generator> *gens)
{
    const bool cone = g.cone();
    Pivots cleared(call); /* empty for dimension 1: the tree clears it */
    auto columns = make_vec<Column>(call);
    for (uint32_t k = 1; k <= max_dim; k++) {
        make_columns(call, g, binomials, k, cleared, tree, count[k], columns);
        Reduction<Field> red(call, field, g, binomials, k, columns);
        uint64_t essential = 0;
        red.run(bars, gens, essential);
        if (cone && essential != 0)
            fail(TOPOML_E_INTERNAL,
                 "rips: %llu essential classes in dimension %u of a contractible complex",
                 (unsigned long long)essential, k);
        std::swap(cleared, red.pivots);
    }
}

/* Everything after the graph and H_0: count, list, reduce, emit. */
void persistence(Call &call, const Graph &g, const topoml_rips_params_v1 &p, double threshold,
                 const Vec<uint32_t> &tree, Vec<topoml_interval> &bars,
                 Vec<topoml_generator> *gens, topoml_barcode_v1 *out)
{
    /* Colex indices up to the cofaces of dimension max_dim+1 must fit in 64
     * bits, below the hash table's empty marker. */
    const uint32_t top = p.max_dim + 1;
    std::optional<Binomials> binomials;
    if (p.max_dim >= 1 && g.n > 0) {
        call.check_estimate(uint64_t(top + 2) * (g.n + 1) * 8, "rips: binomial table");
        binomials.emplace(call, g.n, top + 1);
        if (binomials->of_n(top + 1) >= UINT64_MAX)
            fail(TOPOML_E_OVERFLOW,
                 "%u points: C(n, %u) overflows the 64-bit index of a %u-simplex", g.n, top + 1,
                 top);
    }

    /* Count the columns exactly before listing any, so that the memory
     * limit refuses the work before it is done. */
    uint64_t count[max_vertices] = {};
    count[0] = g.n;
    count[1] = g.edges.size();
    uint64_t simplices = g.n + g.edges.size(), bytes = 0;
    for (uint32_t k = 2; k <= p.max_dim; k++) {
        char stage[64];
        std::snprintf(stage, sizeof stage, "rips: counting %u-simplices", k);
        Cliques(call, g, k).run(stage, [&](uint32_t, const uint32_t *) { count[k]++; });
        if (count[k] >= none)
            fail(TOPOML_E_OVERFLOW, "%llu simplices of dimension %u: at most 2^32-2 are supported",
                 (unsigned long long)count[k], k);
        simplices += count[k];
    }
    /* Per dimension: its columns, the pivots of it and of the one below,
     * and a bar per column at most. */
    for (uint32_t k = 1; k <= p.max_dim; k++) {
        const uint64_t b = count[k] * (sizeof(Column) + sizeof(topoml_interval)) +
                           (count[k] + count[k - 1]) * Pivots::bytes_per_pivot();
        bytes = std::max(bytes, b);
    }
    char what[160];
    std::snprintf(what, sizeof what,
                  "rips to dimension %u: %llu simplices up to dimension %u under threshold %g",
                  p.max_dim, (unsigned long long)simplices, p.max_dim, threshold);
    call.check_estimate(bytes, what);

    if (p.max_dim >= 1 && g.n > 0) {
        if (p.modulus == 2)
            reduce_all(call, Z2(), g, *binomials, p.max_dim, count, tree, bars, gens);
        else
            reduce_all(call, Zp(p.modulus), g, *binomials, p.max_dim, count, tree, bars, gens);
    }
    if (gens)
        emit_barcode(call, bars, *gens, p.max_dim, out);
    else
        emit_barcode(call, bars, p.max_dim, out);
}

} // namespace

void op_rips(Call &call, const topoml_input_v1 *in, const topoml_rips_params_v1 *params,
             topoml_barcode_v1 *out)
{
    check_barcode_out(out);
    check_input(in, all_input_kinds);
    check_params(params);

    /* Beyond the enclosing radius the complex is a cone: nothing changes any
     * more but the death of classes that all die by then, so cutting there
     * gives the same barcode with fewer simplices. */
    const double threshold = std::min(params->threshold, enclosing_radius(call, in));
    Vec<topoml_edge> edges = collect_edges(call, in, threshold);
    if (edges.size() >= none)
        fail(TOPOML_E_OVERFLOW, "%llu edges: at most 2^32-2 are supported",
             (unsigned long long)edges.size());
    call.check_estimate(Graph::bytes_for(in->n, edges.size()), "rips: the 1-skeleton");
    Graph g(call, uint32_t(in->n), std::move(edges));

    /* H_0 by union-find comes first: it is what a cancelled call returns
     * (as dimension 0, complete), and its joining edges clear dimension 1. */
    auto h0 = make_vec<topoml_interval>(call);
    auto tree = make_vec<uint32_t>(call);
    /* Generators: asked for, and room for them in out. */
    const bool want_gens =
        barcode_has_generators(out) &&
        params->struct_size >= offsetof(topoml_rips_params_v1, flags) + sizeof params->flags &&
        (params->flags & TOPOML_RIPS_PARAM_GENERATORS);
    auto h0_gens = make_vec<topoml_generator>(call);
    h0_bars(call, g.edges, g.n, h0, &tree, want_gens ? &h0_gens : nullptr);
    auto bars = make_vec<topoml_interval>(call);
    bars.assign(h0.begin(), h0.end());
    auto gens = make_vec<topoml_generator>(call);
    gens.assign(h0_gens.begin(), h0_gens.end());
    try {
        persistence(call, g, *params, threshold, tree, bars, want_gens ? &gens : nullptr, out);
    } catch (const Failure &f) {
        if (f.status != TOPOML_E_CANCELLED)
            throw;
        if (want_gens)
            emit_barcode(call, h0, h0_gens, 0, out);
        else
            emit_barcode(call, h0, 0, out);
        out->complete = 0;
        throw;
    }
}

} // namespace cppcompat
