/*
 * rips.cpp — the rips op: Vietoris–Rips persistence by the textbook route,
 * written independently of the scalar reference so that the two check each
 * other.
 *
 *  1. The 1-skeleton: every edge with diameter <= the threshold, sorted by
 *     (d, i, j). An edge's position in that order is its rank.
 *  2. The filtration, explicitly. A k-simplex (k >= 1) has a longest edge,
 *     the one of highest rank; the simplices of one dimension are ordered by
 *     the rank of their longest edge, then lexicographically by their other
 *     vertices. That order sorts them by diameter, and across dimensions the
 *     order (diameter, dimension, the above) puts every face before its
 *     cofaces, so it is a filtration. How ties of equal diameter are broken
 *     changes only which pairs of zero length appear, never the barcode.
 *     Enumerating the k-simplices whose longest edge is e = (i, j) means
 *     finding the (k-1)-cliques among the common neighbours of i and j that
 *     are joined to both, and to each other, by edges of lower rank.
 *  3. The boundary matrix, one block per dimension (the boundary of a
 *     k-simplex only has (k-1)-simplices in it), reduced by the standard
 *     algorithm: left to right, add the earlier column with the same pivot
 *     (lowest nonzero) until the pivot is new or the column is zero.
 *  4. Twist (clearing, Chen–Kerber): blocks are reduced from the highest
 *     dimension down. A pivot found in dimension k+1 is a positive
 *     k-simplex, whose column must reduce to zero; it is skipped.
 *
 *  5. Over a cone (a vertex within the threshold of every other one, as at
 *     the enclosing radius) the complex is contractible, so the rank of each
 *     boundary map follows from the simplex counts (cone_rank). The top block
 *     stops once that many of its columns have a pivot, and every block
 *     checks its count: a bug shows as TOPOML_E_INTERNAL, not as a wrong
 *     barcode.
 *
 * The top block (dimension max_dim+1) is streamed: its columns are made from
 * the simplices as they are enumerated, and only the ones that do not reduce
 * to zero are kept. Lower dimensions are stored, with a hash table to find a
 * face's position from its colex index.
 *
 * Cost: this is homology, so every simplex of the top dimension is a column,
 * and the positive ones (nearly all of them) must be reduced to zero through
 * chains of additions that clearing cannot skip. Cohomology, as the scalar
 * reference computes it, never builds those columns; on dense problems this
 * backend is two orders of magnitude slower, by design of the check.
 *
 * Not here: anything shared with the other ops (input.cpp, barcode.cpp).
 */
#include <algorithm>
#include <cmath>
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
/* Vertices of the largest simplex the op enumerates (dimension max_dim+1). */
constexpr uint32_t max_vertices = rips_max_dim + 2;

struct Neighbor {
    uint32_t v;
    uint32_t rank; /* of the edge to v */
};

/* The 1-skeleton under the threshold: edges by rank, and each vertex's
 * neighbours sorted by vertex number. */
class Graph
{
  public:
    Graph(Call &call, uint32_t n, Vec<topoml_edge> &&sorted_edges)
        : n(n), edges(std::move(sorted_edges)), first_(make_vec<uint64_t>(call)),
          adj_(make_vec<Neighbor>(call))
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
    }

    const Neighbor *begin(uint32_t v) const
    {
        return adj_.data() + first_[v];
    }
    const Neighbor *end(uint32_t v) const
    {
        return adj_.data() + first_[v + 1];
    }

    /* Rank of the edge {a, b}, or `none`. */
    uint32_t rank(uint32_t a, uint32_t b) const
    {
        const Neighbor *lo = begin(a), *hi = end(a);
        const Neighbor *p =
            std::lower_bound(lo, hi, b, [](const Neighbor &x, uint32_t v) { return x.v < v; });
        return p != hi && p->v == b ? p->rank : none;
    }

    /* Is some vertex joined to every other? Then the complex is a cone over
     * it, contractible, and its Betti numbers are known (see reduce_top). */
    bool cone() const
    {
        for (uint32_t v = 0; v < n; v++)
            if (first_[v + 1] - first_[v] == uint64_t(n) - 1)
                return true;
        return false;
    }

    const uint32_t n;
    const Vec<topoml_edge> edges;

  private:
    Vec<uint64_t> first_;
    Vec<Neighbor> adj_;
};

/* The k-simplices (k >= 1) in filtration order, as sorted vertex lists. */
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

    /* visit(rank of the longest edge, vertices) for each simplex in order;
     * visit returns false to stop early. */
    template <class F> void run(const char *stage, F &&visit)
    {
        stage_ = stage;
        const uint32_t m = uint32_t(g_.edges.size());
        for (e_ = 0; e_ < m; e_++) {
            const uint32_t i = g_.edges[e_].i, j = g_.edges[e_].j;
            if (k_ == 1) {
                call_.tick(stage, e_, m);
                uint32_t v[2] = {i, j};
                if (!visit(e_, v))
                    return;
                continue;
            }
            /* Common neighbours of i and j through edges older than e. */
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
            if (!extend(0, visit))
                return;
        }
    }

  private:
    /* s_[0 .. depth) is chosen; cand_[depth] holds the vertices that could
     * come next (greater than s_[depth-1], joined to all chosen ones and to
     * i, j by edges older than e). */
    template <class F> bool extend(uint32_t depth, F &visit)
    {
        if (depth == k_ - 1) {
            uint32_t v[max_vertices];
            merge_vertices(v);
            return visit(e_, static_cast<const uint32_t *>(v));
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
            if (!extend(depth + 1, visit))
                return false;
        }
        return true;
    }

    /* {i, j} and s_[0 .. k-1), sorted. */
    void merge_vertices(uint32_t *v) const
    {
        uint32_t ij[2] = {g_.edges[e_].i, g_.edges[e_].j};
        std::merge(ij, ij + 2, s_, s_ + (k_ - 1), v);
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
 * UINT64_MAX: the combinatorial number system that numbers the k-simplices
 * {v_0 < ... < v_k} of n vertices one to one by sum_t C(v_t, t+1) < C(n, k+1)
 * (the "colex index"). */
class Binomials
{
  public:
    Binomials(Call &call, uint32_t n, uint32_t max_t) : n_(n), table_(make_vec<uint64_t>(call))
    {
        table_.assign(uint64_t(max_t + 1) * n, 0);
        for (uint32_t v = 0; v < n; v++) {
            at(v, 0) = 1;
            for (uint32_t t = 1; t <= max_t && v > 0; t++)
                at(v, t) = add(at(v - 1, t - 1), at(v - 1, t));
        }
    }

    /* C(n, t), saturating. */
    uint64_t of_n(uint32_t t) const
    {
        return n_ == 0 ? t == 0 : add(at(n_ - 1, t - 1), at(n_ - 1, t));
    }

    uint64_t operator()(uint32_t v, uint32_t t) const
    {
        return table_[uint64_t(t) * n_ + v];
    }

  private:
    static uint64_t add(uint64_t a, uint64_t b)
    {
        return a > UINT64_MAX - b ? UINT64_MAX : a + b;
    }
    uint64_t &at(uint32_t v, uint32_t t)
    {
        return table_[uint64_t(t) * n_ + v];
    }
    uint64_t at(uint32_t v, uint32_t t) const
    {
        return table_[uint64_t(t) * n_ + v];
    }

    uint32_t n_;
    Vec<uint64_t> table_; /* by t, then v */
};

/* The simplices of one dimension, stored in filtration order: positions
 * are row and column numbers of the boundary matrix blocks. Dimensions 0
 * and 1 are the vertices and the graph's edges; from 2 on the vertex lists
 * are kept, with an open-addressing hash table from colex index to
 * position (the key is in the slot, so a lookup is one probe). */
class Level
{
  public:
    Level(Call &call, const Graph &g, const Binomials *binomials, uint32_t k)
        : g_(g), binomials_(binomials), k_(k), verts_(make_vec<uint32_t>(call)),
          longest_(make_vec<uint32_t>(call)), slots_(make_vec<Slot>(call))
    {
    }

    /* Bytes that storing `count` simplices of dimension k takes. */
    static uint64_t bytes_for(uint32_t k, uint64_t count)
    {
        if (k < 2)
            return 0;
        return count * ((k + 1) * 4 + 4) + slot_count(count) * sizeof(Slot);
    }

    void store(Call &call, uint64_t count)
    {
        if (k_ < 2)
            return;
        verts_.reserve(count * (k_ + 1));
        longest_.reserve(count);
        Cliques(call, g_, k_).run("rips: storing simplices", [&](uint32_t e, const uint32_t *v) {
            verts_.insert(verts_.end(), v, v + k_ + 1);
            longest_.push_back(e);
            return true;
        });
        slots_.assign(slot_count(count), Slot{empty, 0});
        const uint64_t mask = slots_.size() - 1;
        for (uint32_t x = 0; x < longest_.size(); x++) {
            const uint64_t key = colex(verts_.data() + uint64_t(x) * (k_ + 1));
            uint64_t h = spread(key) & mask;
            while (slots_[h].key != empty)
                h = (h + 1) & mask;
            slots_[h] = Slot{key, x};
        }
    }

    uint64_t size() const
    {
        return k_ == 0 ? g_.n : k_ == 1 ? g_.edges.size() : longest_.size();
    }

    double diameter(uint32_t x) const
    {
        return k_ == 0 ? 0.0 : g_.edges[k_ == 1 ? x : longest_[x]].d;
    }

    /* The position of the simplex with these sorted vertices, which must be
     * in the complex. */
    uint32_t find(const uint32_t *v) const
    {
        if (k_ == 0)
            return v[0];
        if (k_ == 1)
            return g_.rank(v[0], v[1]);
        const uint64_t key = colex(v), mask = slots_.size() - 1;
        for (uint64_t h = spread(key) & mask; slots_[h].key != empty; h = (h + 1) & mask)
            if (slots_[h].key == key)
                return slots_[h].position;
        return none;
    }

    /* Sorted vertices of simplex x, into v[0 .. k]. */
    void vertices(uint32_t x, uint32_t *v) const
    {
        if (k_ == 0) {
            v[0] = x;
        } else if (k_ == 1) {
            v[0] = g_.edges[x].i;
            v[1] = g_.edges[x].j;
        } else {
            std::memcpy(v, verts_.data() + uint64_t(x) * (k_ + 1), (k_ + 1) * sizeof *v);
        }
    }

  private:
    struct Slot {
        uint64_t key; /* colex index, or `empty` */
        uint32_t position;
    };
    /* op_rips checks that C(n, k+1) < UINT64_MAX, so no index is this. */
    static constexpr uint64_t empty = UINT64_MAX;

    uint64_t colex(const uint32_t *v) const
    {
        uint64_t key = 0;
        for (uint32_t t = 0; t <= k_; t++)
            key += (*binomials_)(v[t], t + 1);
        return key;
    }

    /* A power of two at least twice the count, so probes stay short. */
    static uint64_t slot_count(uint64_t count)
    {
        uint64_t s = 16;
        while (s < 2 * count)
            s *= 2;
        return s;
    }

    /* Colex indices of one edge's cofaces are close together; mix the bits
     * so that they do not fill one run of slots. */
    static uint64_t spread(uint64_t key)
    {
        key *= 0x9e3779b97f4a7c15u;
        return key ^ (key >> 29);
    }

    const Graph &g_;
    const Binomials *binomials_; /* for k >= 2 */
    const uint32_t k_;
    Vec<uint32_t> verts_;
    Vec<uint32_t> longest_; /* rank of each simplex's longest edge */
    Vec<Slot> slots_;
};

/* Coefficients in Z/2: an entry is just its row. */
struct Z2 {
    using Entry = uint32_t;
    static uint32_t row(Entry e)
    {
        return e;
    }
    static uint32_t coeff(Entry)
    {
        return 1;
    }
    static Entry entry(uint32_t row, uint32_t)
    {
        return row;
    }
    static uint32_t face_coeff(uint32_t)
    {
        return 1;
    }
    /* f with a + f b = 0 */
    static uint32_t cancel(uint32_t, uint32_t)
    {
        return 1;
    }
    static uint32_t sum(uint32_t a, uint32_t b)
    {
        return a ^ b;
    }
    static uint32_t product(uint32_t, uint32_t)
    {
        return 1;
    }
};

/* Coefficients in Z/p for an odd prime p <= 251. */
struct Zp {
    struct Entry {
        uint32_t row;
        uint32_t coeff; /* 1 .. p-1 */
    };
    static uint32_t row(const Entry &e)
    {
        return e.row;
    }
    static uint32_t coeff(const Entry &e)
    {
        return e.coeff;
    }
    static Entry entry(uint32_t row, uint32_t coeff)
    {
        return Entry{row, coeff};
    }

    explicit Zp(uint32_t p) : p(p)
    {
        inverse[1] = 1;
        for (uint32_t a = 2; a < p; a++) /* a^-1 = -(p/a) * (p mod a)^-1 */
            inverse[a] = (p - (p / a) * inverse[p % a] % p) % p;
    }

    /* Face t of a simplex (vertex t left out) has sign (-1)^t. */
    uint32_t face_coeff(uint32_t t) const
    {
        return t % 2 ? p - 1 : 1;
    }
    uint32_t cancel(uint32_t a, uint32_t b) const
    {
        return (p - a) * inverse[b] % p;
    }
    uint32_t sum(uint32_t a, uint32_t b) const
    {
        return (a + b) % p;
    }
    uint32_t product(uint32_t a, uint32_t b) const
    {
        return a * b % p;
    }

    uint32_t p;
    uint32_t inverse[256] = {};
};

/* A set of rows with fast insert, erase and maximum: a 64-ary tree of bit
 * words, where a bit of an upper level says "this word below is not zero"
 * (PHAT's bit-tree pivot column). Each operation touches one word per
 * level, about four for a million rows. */
class BitTree
{
  public:
    BitTree(Call &call, uint64_t size) : words_(make_vec<uint64_t>(call))
    {
        uint64_t total = 0, n = size;
        do {
            n = (n + 63) / 64;
            first_[levels_++] = total;
            total += n;
        } while (n > 1);
        words_.assign(total, 0);
    }

    void flip(uint32_t i)
    {
        uint64_t x = i;
        for (uint32_t l = 0; l < levels_; l++) {
            uint64_t &w = words_[first_[l] + (x >> 6)];
            const bool was_zero = w == 0;
            w ^= uint64_t(1) << (x & 63);
            if (was_zero == (w == 0))
                return; /* the levels above only record zero or not */
            x >>= 6;
        }
    }

    /* The largest element, or `none`. */
    uint32_t max() const
    {
        if (words_[first_[levels_ - 1]] == 0)
            return none;
        uint64_t x = 0;
        for (uint32_t l = levels_; l-- > 0;)
            x = x * 64 + uint64_t(63 - __builtin_clzll(words_[first_[l] + x]));
        return uint32_t(x);
    }

  private:
    Vec<uint64_t> words_;
    uint64_t first_[8] = {}; /* where each level starts; 64^6 > 2^32 rows */
    uint32_t levels_ = 0;
};

constexpr uint64_t no_column = UINT64_MAX;

/* One block of the boundary matrix under reduction: the reduced columns
 * that have a pivot, appended to one pool, and for each row the column that
 * has it as pivot. Columns that reduce to zero are not kept. A kept column
 * is a header entry whose row field is its length, then its entries by
 * ascending row; owner[row] is where the header is, so an addition costs one
 * lookup and one contiguous read. The column being reduced is dense
 * (coefficients by row, and a BitTree of the non-zero rows), so that adding
 * a kept column costs that column's length only. */
template <class Field> class Block
{
  public:
    using Entry = typename Field::Entry;

    Block(Call &call, const Field &field, uint64_t rows)
        : field_(field), owner(make_vec<uint64_t>(call)), pool_(make_vec<Entry>(call)),
          nonzero_(call, rows), coeff_(make_vec<uint8_t>(call))
    {
        owner.assign(rows, no_column);
        if (!std::is_same<Field, Z2>::value)
            coeff_.assign(rows, 0);
    }

    /* Reduce the boundary of the simplex with sorted vertices v[0 .. k]
     * (rows: the positions of its faces in `faces`). Returns the pivot row,
     * or `none` if the column reduced to zero. */
    uint32_t reduce(Call &call, const char *stage, uint64_t done, uint64_t total,
                    const Level &faces, uint32_t k, const uint32_t *v)
    {
        uint32_t face[max_vertices];
        for (uint32_t t = 0; t <= k; t++) {
            std::copy(v, v + t, face);
            std::copy(v + t + 1, v + k + 1, face + t);
            uint32_t r = faces.find(face);
            if (r == none)
                fail(TOPOML_E_INTERNAL, "rips: a face of a %u-simplex is missing", k);
            add(r, field_.face_coeff(t));
        }
        for (;;) {
            const uint32_t pivot = nonzero_.max();
            if (pivot == none)
                return none;
            const uint64_t col = owner[pivot];
            if (col == no_column) {
                keep(pivot);
                return pivot;
            }
            const Entry *b = pool_.data() + col + 1, *e = b + Field::row(pool_[col]);
            call.tick(stage, done, total, uint64_t(e - b));
            const uint32_t f = field_.cancel(coeff(pivot), Field::coeff(e[-1]));
            for (; b != e; ++b)
                add(Field::row(*b), field_.product(f, Field::coeff(*b)));
        }
    }

    uint64_t pivots() const
    {
        return kept_;
    }

  private:
    uint32_t coeff(uint32_t row) const
    {
        return std::is_same<Field, Z2>::value ? 1 : coeff_[row];
    }

    void add(uint32_t row, uint32_t c)
    {
        if (std::is_same<Field, Z2>::value) {
            nonzero_.flip(row);
            return;
        }
        const uint32_t old = coeff_[row], now = field_.sum(old, c);
        coeff_[row] = uint8_t(now);
        if ((old == 0) != (now == 0))
            nonzero_.flip(row);
    }

    /* Move the column into the pool (ascending rows), leaving it zero. */
    void keep(uint32_t pivot)
    {
        owner[pivot] = pool_.size();
        pool_.push_back(Field::entry(0, 0));
        const size_t begin = pool_.size();
        for (uint32_t r = pivot; r != none; r = nonzero_.max()) {
            pool_.push_back(Field::entry(r, coeff(r)));
            add(r, field_.cancel(coeff(r), 1));
        }
        std::reverse(pool_.begin() + begin, pool_.end());
        pool_[begin - 1] = Field::entry(uint32_t(pool_.size() - begin), 0);
        kept_++;
    }

    const Field &field_;

  public:
    /* owner[row]: the kept column whose pivot is `row`, or `no_column`.
     * After the block is reduced, owner[x] != no_column says that face x is
     * positive
     * and paired; its own column is cleared. */
    Vec<uint64_t> owner;

  private:
    Vec<Entry> pool_;
    uint64_t kept_ = 0;
    BitTree nonzero_;
    Vec<uint8_t> coeff_; /* Z/p only */
};

struct Plan {
    uint32_t max_dim; /* homology dimensions 0 .. max_dim */
    uint32_t top;     /* max_dim + 1: the streamed block */
    bool cone;
    uint64_t count[max_vertices]; /* simplices per stored dimension < top */
};

/* Rank of the boundary map d_k of a contractible complex with count[d]
 * d-simplices: Betti numbers 1, 0, 0, ... give rank d_1 = n - 1 and
 * rank d_{k+1} = count[k] - rank d_k. */
static uint64_t cone_rank(const Plan &plan, uint32_t k)
{
    uint64_t r = plan.count[0] - 1;
    for (uint32_t d = 1; d < k; d++)
        r = plan.count[d] - r;
    return r;
}

template <class Field>
static void reduce_all(Call &call, const Field &field, const Graph &g, const Plan &plan,
                       Vec<Level> &levels, Vec<topoml_interval> &bars)
{
    char stage[64];
    Vec<uint64_t> paired = make_vec<uint64_t>(call); /* owner of the block above */

    /* The top block: its columns come straight from the enumeration. Over a
     * cone, rank d_top is known in advance (cone_rank); once that many
     * columns have a pivot, every later one reduces to zero, so the
     * enumeration stops there. Otherwise every top simplex is visited. */
    {
        const uint32_t k = plan.top;
        const Level &faces = levels[k - 1];
        Block<Field> block(call, field, faces.size());
        const uint64_t target = plan.cone ? cone_rank(plan, k) : UINT64_MAX;
        const uint64_t total = plan.cone ? target : 0;
        std::snprintf(stage, sizeof stage, "rips: reducing dimension %u", k);
        if (target > 0) {
            Cliques(call, g, k).run(stage, [&](uint32_t e, const uint32_t *v) {
                const uint32_t pivot =
                    block.reduce(call, stage, block.pivots(), total, faces, k, v);
                if (pivot != none) {
                    const double birth = faces.diameter(pivot), death = g.edges[e].d;
                    if (death > birth)
                        bars.push_back(topoml_interval{birth, death, k - 1, 0});
                }
                return block.pivots() < target;
            });
        }
        if (plan.cone && block.pivots() != target)
            fail(TOPOML_E_INTERNAL, "rips: %llu pivots in dimension %u, the cone needs %llu",
                 (unsigned long long)block.pivots(), k, (unsigned long long)target);
        paired.swap(block.owner);
    }

    /* Stored blocks, top-1 down to 1, with clearing. */
    for (uint32_t k = plan.top - 1; k >= 1; k--) {
        const Level &self = levels[k], &faces = levels[k - 1];
        Block<Field> block(call, field, faces.size());
        std::snprintf(stage, sizeof stage, "rips: reducing dimension %u", k);
        uint32_t v[max_vertices];
        for (uint32_t x = 0; x < self.size(); x++) {
            if (paired[x] != no_column)
                continue; /* positive: reduces to zero (twist) */
            self.vertices(x, v);
            const uint32_t pivot = block.reduce(call, stage, x, self.size(), faces, k, v);
            if (pivot != none) {
                const double birth = faces.diameter(pivot), death = self.diameter(x);
                if (death > birth)
                    bars.push_back(topoml_interval{birth, death, k - 1, 0});
            } else if (k <= plan.max_dim) {
                bars.push_back(topoml_interval{self.diameter(x), INFINITY, k, 0});
            }
        }
        if (plan.cone && block.pivots() != cone_rank(plan, k))
            fail(TOPOML_E_INTERNAL, "rips: %llu pivots in dimension %u, the cone needs %llu",
                 (unsigned long long)block.pivots(), k, (unsigned long long)cone_rank(plan, k));
        paired.swap(block.owner);
    }

    /* Vertices: every column is zero; the unpaired ones are components. */
    for (uint32_t x = 0; x < g.n; x++)
        if (paired[x] == no_column)
            bars.push_back(topoml_interval{0.0, INFINITY, 0, 0});
}

static void check_params(const topoml_rips_params_v1 *params)
{
    if (!params || params->struct_size < sizeof(topoml_rips_params_v1))
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

/* Everything after the graph: count, store, reduce, emit. */
void persistence(Call &call, const Graph &g, const topoml_rips_params_v1 &p, double threshold,
                 topoml_barcode_v1 *out)
{
    Plan plan;
    plan.max_dim = p.max_dim;
    plan.top = p.max_dim + 1;
    plan.cone = g.cone();
    plan.count[0] = g.n;
    plan.count[1] = g.edges.size();

    /* Count the stored simplices exactly before storing any, so that the
     * memory limit refuses the work before it is done. */
    const size_t entry = p.modulus == 2 ? sizeof(Z2::Entry) : sizeof(Zp::Entry);
    uint64_t bytes = 0, simplices = g.n + g.edges.size();
    for (uint32_t k = 2; k < plan.top; k++) {
        uint64_t count = 0;
        char stage[64];
        std::snprintf(stage, sizeof stage, "rips: counting %u-simplices", k);
        Cliques(call, g, k).run(stage, [&](uint32_t, const uint32_t *) {
            count++;
            return true;
        });
        if (count >= none)
            fail(TOPOML_E_OVERFLOW, "%llu simplices of dimension %u: at most 2^32-2 are supported",
                 (unsigned long long)count, k);
        plan.count[k] = count;
        simplices += count;
        bytes = checked_add(bytes, Level::bytes_for(k, count), "memory estimate");
    }
    /* Per block, per row: its owner, the owner array of the block above,
     * the dense column (a coefficient and a bit), and at most one kept
     * column with at least a header and k+1 entries (fill-in only adds);
     * then the bars. */
    uint64_t block_bytes = 0;
    for (uint32_t k = 1; k <= plan.top; k++) {
        const uint64_t rows = plan.count[k - 1];
        block_bytes = std::max(block_bytes, rows * (8 + 8 + 2 + (k + 2) * uint64_t(entry)));
    }
    bytes = checked_add(bytes, block_bytes, "memory estimate");
    if (plan.top > 2) /* the binomial table */
        bytes = checked_add(bytes, uint64_t(plan.top + 1) * g.n * 8, "memory estimate");
    bytes = checked_add(bytes, simplices * 2 * sizeof(topoml_interval), "memory estimate");
    char what[160];
    std::snprintf(what, sizeof what,
                  "rips to dimension %u: %llu simplices below dimension %u under threshold %g",
                  plan.max_dim, (unsigned long long)simplices, plan.top, threshold);
    call.check_estimate(bytes, what);

    /* Colex indices of the stored simplices (dimensions 2 .. top-1) must fit
     * in 64 bits, below the hash table's empty marker. */
    std::optional<Binomials> binomials;
    if (plan.top > 2) {
        binomials.emplace(call, g.n, plan.top);
        if (binomials->of_n(plan.top) >= UINT64_MAX)
            fail(TOPOML_E_OVERFLOW,
                 "%u points: C(n, %u) overflows the 64-bit index of a %u-simplex", g.n, plan.top,
                 plan.top - 1);
    }
    auto levels = make_vec<Level>(call);
    levels.reserve(plan.top);
    for (uint32_t k = 0; k < plan.top; k++) {
        levels.emplace_back(call, g, binomials ? &*binomials : nullptr, k);
        levels.back().store(call, plan.count[k]);
    }

    auto bars = make_vec<topoml_interval>(call);
    if (g.n > 0) {
        if (p.modulus == 2)
            reduce_all(call, Z2(), g, plan, levels, bars);
        else
            reduce_all(call, Zp(p.modulus), g, plan, levels, bars);
    }
    emit_barcode(call, bars, plan.max_dim, out);
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
    Graph g(call, uint32_t(in->n), std::move(edges));

    /* Twist reduces the highest dimension first, so no dimension is known
     * before the end; H_0 by union-find is cheap and is what a cancelled
     * call returns (as dimension 0, complete). */
    auto h0 = make_vec<topoml_interval>(call);
    h0_bars(call, g.edges, g.n, h0);
    try {
        persistence(call, g, *params, threshold, out);
    } catch (const Failure &f) {
        if (f.status != TOPOML_E_CANCELLED)
            throw;
        emit_barcode(call, h0, 0, out);
        out->complete = 0;
        throw;
    }
}

} // namespace cppcompat
