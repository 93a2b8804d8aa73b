/*
 * diagram_distance.c — the bottleneck and Wasserstein distances between two
 * persistence diagrams of one dimension, both exact.
 *
 * A diagram is split first. Points with an infinite coordinate (the
 * "essential part") can only be matched with points of the same kind, and
 * are matched in the order of their finite coordinate, which is optimal for
 * any cost that grows with |u - v| (one-dimensional transport). Points on
 * the diagonal are dropped: matching them to the diagonal costs nothing, and
 * a point matched to one could be matched to the diagonal for no more. What
 * remains is a problem between finite points and the diagonal:
 *
 *  - bottleneck: the answer is one of the candidate values (a distance
 *    between two points, or a point's distance to the diagonal); a value r
 *    is large enough when the bipartite graph of pairs at distance <= r has a
 *    perfect matching (Hopcroft–Karp). The candidates are searched as in a
 *    binary search, without storing all n*m of them (see
 *    bottleneck_finite).
 *  - Wasserstein: an assignment problem on the (n+m)-square matrix in which
 *    each diagram is completed by diagonal copies of the other's points,
 *    solved by shortest augmenting paths (Jonker–Volgenant).
 *
 * This follows GUDHI (gudhi.bottleneck_distance with e = 0,
 * gudhi.wasserstein.wasserstein_distance) in definitions and in the handling
 * of infinite points, and is tested against it.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compute/features_internal.h"

/* ------------------------------------------------------------------------
 * Splitting a diagram
 * ---------------------------------------------------------------------- */

/* The kinds of essential points, as GUDHI names them; (-inf,-inf) and
 * (+inf,+inf) are on the diagonal and dropped. */
enum { ESS_NEG_BIRTH = 0, ESS_POS_DEATH = 1, ESS_BOTH = 2, ESS_KINDS = 3 };

typedef struct split {
    topoml_pair *finite; /* off the diagonal, both coordinates finite */
    uint64_t n_finite;
    double *ess[2]; /* finite coordinate of ESS_NEG_BIRTH, ESS_POS_DEATH points */
    uint64_t n_ess[ESS_KINDS];
} split;

static void split_free(topoml_context *ctx, split *s)
{
    tm_free(ctx, s->finite);
    tm_free(ctx, s->ess[0]);
    tm_free(ctx, s->ess[1]);
    memset(s, 0, sizeof(*s));
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int split_diagram(topoml_context *ctx, const char *what, const topoml_pair *p, uint64_t n,
                         split *s)
{
    memset(s, 0, sizeof(*s));
    int st = tm_check_pairs(ctx, what, p, n);
    if (st)
        return st;
    uint64_t counts[2] = {0, 0}, n_finite = 0;
    for (uint64_t i = 0; i < n; i++) {
        double b = p[i].birth, d = p[i].death;
        if (isfinite(b) && isfinite(d))
            n_finite += b < d;
        else if (b == -INFINITY && isfinite(d))
            counts[ESS_NEG_BIRTH]++;
        else if (isfinite(b) && d == INFINITY)
            counts[ESS_POS_DEATH]++;
        else if (b == -INFINITY && d == INFINITY)
            s->n_ess[ESS_BOTH]++;
    }
    if ((st = tm_check_memory(ctx, n * sizeof(topoml_pair), "diagram copy")))
        return st;
    s->finite = tm_alloc(ctx, n_finite * sizeof(topoml_pair));
    s->ess[0] = tm_alloc(ctx, counts[0] * sizeof(double));
    s->ess[1] = tm_alloc(ctx, counts[1] * sizeof(double));
    if ((s->finite == NULL && n_finite > 0) || (s->ess[0] == NULL && counts[0] > 0) ||
        (s->ess[1] == NULL && counts[1] > 0)) {
        split_free(ctx, s);
        return tm_nomem(ctx, n * sizeof(topoml_pair));
    }
    for (uint64_t i = 0; i < n; i++) {
        double b = p[i].birth, d = p[i].death;
        if (isfinite(b) && isfinite(d)) {
            if (b < d)
                s->finite[s->n_finite++] = p[i];
        } else if (b == -INFINITY && isfinite(d)) {
            s->ess[ESS_NEG_BIRTH][s->n_ess[ESS_NEG_BIRTH]++] = d;
        } else if (isfinite(b) && d == INFINITY) {
            s->ess[ESS_POS_DEATH][s->n_ess[ESS_POS_DEATH]++] = b;
        }
    }
    for (int k = 0; k < 2; k++)
        qsort(s->ess[k], s->n_ess[k], sizeof(double), cmp_double);
    return TOPOML_OK;
}

/* Cost of the essential parts: max |u_i - v_i| (q == INFINITY) or
 * sum |u_i - v_i|^q over the sorted finite coordinates; +INFINITY when the
 * numbers of points of some kind differ. */
static double essential_cost(const split *x, const split *y, double q)
{
    for (int k = 0; k < ESS_KINDS; k++)
        if (x->n_ess[k] != y->n_ess[k])
            return INFINITY;
    double c = 0.0;
    for (int k = 0; k < 2; k++)
        for (uint64_t i = 0; i < x->n_ess[k]; i++) {
            double t = fabs(x->ess[k][i] - y->ess[k][i]);
            c = isinf(q) ? fmax(c, t) : c + pow(t, q);
        }
    return c;
}

/* ------------------------------------------------------------------------
 * Bottleneck
 * ---------------------------------------------------------------------- */

static inline double linf(topoml_pair a, topoml_pair b)
{
    return fmax(fabs(a.birth - b.birth), fabs(a.death - b.death));
}

static inline double half_pers(topoml_pair a)
{
    return (a.death - a.birth) / 2.0;
}

/* The matching graph at threshold r, with X = x[0..n), Y = y[0..m).
 * Left vertices: u < n is x_u, u = n + v is the diagonal copy of y_v.
 * Right vertices: w < m is y_w, w = m + i is the diagonal copy of x_i.
 * Edges (each of cost <= r):
 *   x_u - y_w         when linf(x_u, y_w) <= r
 *   x_u - diag(x_u)   when half_pers(x_u) <= r
 *   diag(y_v) - y_v   when half_pers(y_v) <= r
 *   diag(y_v) - diag(x_i) always (the diagonal to itself costs nothing).
 * A perfect matching of it is a matching of the diagrams of cost <= r, and
 * the converse holds because sending a point to another point's diagonal
 * copy never beats sending it to its own. Neighbours are enumerated by an
 * index t = 0 .. degree_bound(u) - 1, so that no adjacency is stored. */
typedef struct graph {
    const topoml_pair *x, *y;
    uint64_t n, m;
    double r;
    int64_t *match_l, *match_r; /* partner or -1 */
    uint64_t *dist, *queue, *iter, *stack;
} graph;

#define NIL UINT64_MAX

static inline uint64_t degree_bound(const graph *g, uint64_t u)
{
    return u < g->n ? g->m + 1 : g->n + 1;
}

/* The right vertex behind index t of left vertex u, or NIL if that edge is
 * not in the graph at threshold r. */
static inline uint64_t neighbour(const graph *g, uint64_t u, uint64_t t)
{
    if (u < g->n) {
        if (t < g->m)
            return linf(g->x[u], g->y[t]) <= g->r ? t : NIL;
        return half_pers(g->x[u]) <= g->r ? g->m + u : NIL;
    }
    uint64_t v = u - g->n;
    if (t == 0)
        return half_pers(g->y[v]) <= g->r ? v : NIL;
    return g->m + (t - 1);
}

static inline double edge_cost(const graph *g, uint64_t u, uint64_t w)
{
    if (u < g->n)
        return w < g->m ? linf(g->x[u], g->y[w]) : half_pers(g->x[u]);
    return w < g->m ? half_pers(g->y[w]) : 0.0;
}

/* Hopcroft–Karp BFS: layer the left vertices from the free ones; true when
 * a free right vertex is reachable (an augmenting path exists). */
static bool hk_bfs(graph *g, uint64_t *limit)
{
    const uint64_t L = g->n + g->m;
    uint64_t head = 0, tail = 0;
    *limit = NIL;
    for (uint64_t u = 0; u < L; u++) {
        if (g->match_l[u] < 0) {
            g->dist[u] = 0;
            g->queue[tail++] = u;
        } else {
            g->dist[u] = NIL;
        }
    }
    while (head < tail) {
        uint64_t u = g->queue[head++];
        if (g->dist[u] >= *limit)
            continue;
        uint64_t deg = degree_bound(g, u);
        for (uint64_t t = 0; t < deg; t++) {
            uint64_t w = neighbour(g, u, t);
            if (w == NIL)
                continue;
            int64_t u2 = g->match_r[w];
            if (u2 < 0) {
                if (*limit == NIL)
                    *limit = g->dist[u] + 1;
            } else if (g->dist[u2] == NIL) {
                g->dist[u2] = g->dist[u] + 1;
                g->queue[tail++] = (uint64_t)u2;
            }
        }
    }
    return *limit != NIL;
}

/* Hopcroft–Karp DFS from free left vertex `root` along the BFS layers,
 * iterative so that long augmenting paths cannot overflow the C stack.
 * iter[u] remembers where u's neighbour scan stopped, so each edge is
 * looked at once per phase. */
static bool hk_dfs(graph *g, uint64_t root, uint64_t limit)
{
    uint64_t depth = 0;
    g->stack[depth++] = root;
    while (depth > 0) {
        uint64_t u = g->stack[depth - 1];
        uint64_t deg = degree_bound(g, u);
        bool advanced = false;
        while (g->iter[u] < deg) {
            uint64_t w = neighbour(g, u, g->iter[u]);
            if (w == NIL) {
                g->iter[u]++;
                continue;
            }
            int64_t u2 = g->match_r[w];
            if (u2 < 0 && g->dist[u] + 1 == limit) {
                /* Augment along the stack: each vertex on it takes the
                 * right vertex its scan stopped at. */
                for (uint64_t k = depth; k-- > 0;) {
                    uint64_t a = g->stack[k];
                    uint64_t b = neighbour(g, a, g->iter[a]);
                    g->match_l[a] = (int64_t)b;
                    g->match_r[b] = (int64_t)a;
                    g->iter[a]++;
                }
                return true;
            }
            if (u2 >= 0 && g->dist[u2] == g->dist[u] + 1 && g->dist[u2] < limit) {
                g->stack[depth++] = (uint64_t)u2;
                advanced = true;
                break;
            }
            g->iter[u]++;
        }
        if (!advanced) {
            /* Dead end: no augmenting path through u in this phase. */
            g->dist[u] = NIL;
            depth--;
            if (depth > 0)
                g->iter[g->stack[depth - 1]]++;
        }
    }
    return false;
}

/* Is there a perfect matching at threshold r? The matching of the previous
 * call is kept: after dropping its edges that cost more than r it is still
 * a matching, and usually a large one, so few phases remain. */
static bool feasible(graph *g, double r)
{
    const uint64_t L = g->n + g->m;
    g->r = r;
    uint64_t size = 0;
    for (uint64_t u = 0; u < L; u++) {
        int64_t w = g->match_l[u];
        if (w < 0)
            continue;
        if (edge_cost(g, u, (uint64_t)w) > r) {
            g->match_r[w] = -1;
            g->match_l[u] = -1;
        } else {
            size++;
        }
    }
    uint64_t limit;
    while (size < L && hk_bfs(g, &limit)) {
        memset(g->iter, 0, L * sizeof(uint64_t));
        for (uint64_t u = 0; u < L; u++)
            if (g->match_l[u] < 0 && g->dist[u] == 0 && hk_dfs(g, u, limit))
                size++;
    }
    return size == L;
}

/* The candidate values: linf(x_i, y_j) for all i, j, then half_pers of each
 * x_i and each y_j. Calls f(value) for each value in (lo, hi) in a fixed
 * order, stopping when f returns true. */
typedef struct scan {
    double lo, hi;
    uint64_t count, target;
    double found;
} scan;

static bool visit(scan *s, double v)
{
    if (v > s->lo && v < s->hi) {
        if (s->count == s->target) {
            s->found = v;
            return true;
        }
        s->count++;
    }
    return false;
}

static void scan_candidates(const graph *g, scan *s)
{
    for (uint64_t i = 0; i < g->n; i++)
        for (uint64_t j = 0; j < g->m; j++)
            if (visit(s, linf(g->x[i], g->y[j])))
                return;
    for (uint64_t i = 0; i < g->n; i++)
        if (visit(s, half_pers(g->x[i])))
            return;
    for (uint64_t j = 0; j < g->m; j++)
        if (visit(s, half_pers(g->y[j])))
            return;
}

/* The smallest candidate r with a perfect matching. hi starts at the
 * largest half-persistence, where everything can go to the diagonal, so it
 * is feasible; lo is below every candidate. Each round picks a uniformly
 * random candidate strictly between lo and hi (a count, then a scan to the
 * chosen one) and tests it, which halves the candidates in expectation, as
 * quickselect does, while using O(n + m) memory instead of the n*m of a
 * sorted candidate list. The generator has a fixed seed so that the work,
 * not only the answer, is reproducible. */
static double bottleneck_finite(graph *g)
{
    double hi = 0.0;
    for (uint64_t i = 0; i < g->n; i++)
        hi = fmax(hi, half_pers(g->x[i]));
    for (uint64_t j = 0; j < g->m; j++)
        hi = fmax(hi, half_pers(g->y[j]));
    double lo = -INFINITY;
    uint64_t rng = 0x9e3779b97f4a7c15ull;
    for (;;) {
        scan s = {lo, hi, 0, NIL, 0.0};
        scan_candidates(g, &s);
        if (s.count == 0)
            return hi;
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        scan pick = {lo, hi, 0, rng % s.count, 0.0};
        scan_candidates(g, &pick);
        if (feasible(g, pick.found))
            hi = pick.found;
        else
            lo = pick.found;
    }
}

int topoml_bottleneck_distance(topoml_context *ctx, const topoml_pair *a, uint64_t n_a,
                               const topoml_pair *b, uint64_t n_b, double *out)
{
    if (ctx == NULL)
        return TOPOML_E_INVALID;
    if (out == NULL)
        return tm_error(ctx, TOPOML_E_INVALID, "bottleneck: no output");
    split x, y;
    int st = split_diagram(ctx, "bottleneck: first diagram", a, n_a, &x);
    if (st)
        return st;
    if ((st = split_diagram(ctx, "bottleneck: second diagram", b, n_b, &y))) {
        split_free(ctx, &x);
        return st;
    }
    double ess = essential_cost(&x, &y, INFINITY);
    if (isinf(ess)) {
        *out = INFINITY;
        goto done;
    }
    graph g = {.x = x.finite, .y = y.finite, .n = x.n_finite, .m = y.n_finite};
    const uint64_t L = g.n + g.m;
    if (L == 0) {
        *out = ess;
        goto done;
    }
    const uint64_t per_vertex = 2 * sizeof(int64_t) + 4 * sizeof(uint64_t);
    if ((st = tm_check_memory(ctx, L * per_vertex, "bottleneck matching")))
        goto done;
    g.match_l = tm_alloc(ctx, L * sizeof(int64_t));
    g.match_r = tm_alloc(ctx, L * sizeof(int64_t));
    g.dist = tm_alloc(ctx, L * sizeof(uint64_t));
    g.queue = tm_alloc(ctx, L * sizeof(uint64_t));
    g.iter = tm_alloc(ctx, L * sizeof(uint64_t));
    g.stack = tm_alloc(ctx, (L + 1) * sizeof(uint64_t));
    if (!g.match_l || !g.match_r || !g.dist || !g.queue || !g.iter || !g.stack) {
        st = tm_nomem(ctx, L * per_vertex);
    } else {
        for (uint64_t u = 0; u < L; u++)
            g.match_l[u] = g.match_r[u] = -1;
        *out = fmax(ess, bottleneck_finite(&g));
    }
    tm_free(ctx, g.match_l);
    tm_free(ctx, g.match_r);
    tm_free(ctx, g.dist);
    tm_free(ctx, g.queue);
    tm_free(ctx, g.iter);
    tm_free(ctx, g.stack);
done:
    split_free(ctx, &x);
    split_free(ctx, &y);
    return st;
}

/* ------------------------------------------------------------------------
 * Wasserstein
 * ---------------------------------------------------------------------- */

static double ground(double db, double dd, double p)
{
    db = fabs(db);
    dd = fabs(dd);
    if (isinf(p))
        return fmax(db, dd);
    if (p == 1.0)
        return db + dd;
    if (p == 2.0)
        return hypot(db, dd);
    return pow(pow(db, p) + pow(dd, p), 1.0 / p);
}

static double power(double v, double q)
{
    return q == 1.0 ? v : q == 2.0 ? v * v : pow(v, q);
}

/* The assignment problem: rows 0..n-1 are X's points, rows n..n+m-1
 * diagonal slots for Y's; columns 0..m-1 are Y's points, m..m+n-1 diagonal
 * slots for X's. cost(x_i, y_j) = dist^q (the n x m block `xy`), a point to
 * any diagonal slot costs its distance to the diagonal ^q (all its slots
 * are alike, so letting it use any one changes nothing), diagonal to
 * diagonal costs 0. */
typedef struct assignment {
    uint64_t n, m;
    const double *xy, *dx, *dy;
} assignment;

static inline double assign_cost(const assignment *a, uint64_t i, uint64_t j)
{
    if (i < a->n)
        return j < a->m ? a->xy[i * a->m + j] : a->dx[i];
    return j < a->m ? a->dy[j] : 0.0;
}

/* The assignment problem by shortest augmenting paths with potentials
 * (Jonker–Volgenant's augmentation, in the form of Crouse, "On implementing
 * 2D rectangular assignment algorithms", IEEE TAES 2016, which is also
 * scipy's linear_sum_assignment): rows are added one at a time, each by a
 * Dijkstra search over reduced costs c(i,j) - u[i] - v[j] >= 0 to the
 * nearest free column. O(N^3) in the worst case.
 *
 * Two details matter here. The search only scans columns it has not
 * reached yet (`remaining` shrinks), and among columns at equal distance it
 * takes a free one: the diagonal slots are many identical columns, and
 * without that preference each search wanders through the assigned ones
 * before stopping.
 *
 * Returns the total cost, summed from the costs of the final assignment
 * (not read off the potentials, which carry rounding). */
typedef struct lap_work {
    double *u, *v, *dist;
    uint64_t *path, *col_of, *row_of, *remaining;
    unsigned char *row_seen, *col_seen;
} lap_work;

static double solve_assignment(const assignment *a, const lap_work *w)
{
    const uint64_t N = a->n + a->m;
    for (uint64_t k = 0; k < N; k++) {
        w->u[k] = w->v[k] = 0.0;
        w->col_of[k] = w->row_of[k] = NIL;
    }
    for (uint64_t row = 0; row < N; row++) {
        uint64_t n_remaining = N, i = row, sink = NIL;
        double min_val = 0.0;
        for (uint64_t k = 0; k < N; k++) {
            w->remaining[k] = N - 1 - k;
            w->row_seen[k] = w->col_seen[k] = 0;
            w->dist[k] = INFINITY;
        }
        while (sink == NIL) {
            uint64_t index = NIL;
            double lowest = INFINITY;
            w->row_seen[i] = 1;
            for (uint64_t it = 0; it < n_remaining; it++) {
                uint64_t j = w->remaining[it];
                double r = min_val + assign_cost(a, i, j) - w->u[i] - w->v[j];
                if (r < w->dist[j]) {
                    w->path[j] = i;
                    w->dist[j] = r;
                }
                if (w->dist[j] < lowest || (w->dist[j] == lowest && w->row_of[j] == NIL)) {
                    lowest = w->dist[j];
                    index = it;
                }
            }
            /* Costs are finite and bounded (wasserstein_finite checks), and
             * a free column always remains, so `index` is set; the test is
             * a guard against a broken invariant, not a normal path. */
            if (index == NIL)
                return NAN;
            min_val = lowest;
            uint64_t j = w->remaining[index];
            if (w->row_of[j] == NIL)
                sink = j;
            else
                i = w->row_of[j];
            w->col_seen[j] = 1;
            w->remaining[index] = w->remaining[--n_remaining];
        }
        /* Update the potentials so that reduced costs stay >= 0 and are 0
         * along the new assignment, then flip the augmenting path. */
        w->u[row] += min_val;
        for (uint64_t r = 0; r < N; r++)
            if (w->row_seen[r] && r != row)
                w->u[r] += min_val - w->dist[w->col_of[r]];
        for (uint64_t c = 0; c < N; c++)
            if (w->col_seen[c])
                w->v[c] -= min_val - w->dist[c];
        for (uint64_t j = sink;;) {
            uint64_t r = w->path[j];
            w->row_of[j] = r;
            uint64_t prev = w->col_of[r];
            w->col_of[r] = j;
            j = prev;
            if (r == row)
                break;
        }
    }
    double total = 0.0;
    for (uint64_t r = 0; r < N; r++)
        total += assign_cost(a, r, w->col_of[r]);
    return total;
}

static int wasserstein_finite(topoml_context *ctx, const split *x, const split *y, double q,
                              double p, double *out)
{
    const uint64_t n = x->n_finite, m = y->n_finite, N = n + m;
    *out = 0.0;
    if (N == 0)
        return TOPOML_OK;
    /* A point's distance to the diagonal in L^p: to its orthogonal
     * projection ((b+d)/2, (b+d)/2), i.e. ((d-b)/2) * 2^(1/p). */
    const double diag_factor = isinf(p) ? 0.5 : pow(2.0, 1.0 / p - 1.0);
    uint64_t cells, bytes, vec_bytes;
    if (!tm_mul_u64(n, m, &cells) || !tm_mul_u64(cells, sizeof(double), &bytes) ||
        !tm_mul_u64(N, 8 * sizeof(double), &vec_bytes) || bytes > SIZE_MAX ||
        bytes + vec_bytes < bytes)
        return tm_error(ctx, TOPOML_E_OVERFLOW,
                        "wasserstein: %llu x %llu points overflow the size type",
                        (unsigned long long)n, (unsigned long long)m);
    int st = tm_check_memory(ctx, bytes + vec_bytes + N * 2 * sizeof(double), "wasserstein");
    if (st)
        return st;
    double *xy = tm_alloc(ctx, (size_t)bytes);
    double *dx = tm_alloc(ctx, (n + 1) * sizeof(double));
    double *dy = tm_alloc(ctx, (m + 1) * sizeof(double));
    lap_work w = {
        .u = tm_alloc(ctx, N * sizeof(double)),
        .v = tm_alloc(ctx, N * sizeof(double)),
        .dist = tm_alloc(ctx, N * sizeof(double)),
        .path = tm_alloc(ctx, N * sizeof(uint64_t)),
        .col_of = tm_alloc(ctx, N * sizeof(uint64_t)),
        .row_of = tm_alloc(ctx, N * sizeof(uint64_t)),
        .remaining = tm_alloc(ctx, N * sizeof(uint64_t)),
        .row_seen = tm_alloc(ctx, N),
        .col_seen = tm_alloc(ctx, N),
    };
    if ((xy == NULL && bytes > 0) || !dx || !dy || !w.u || !w.v || !w.dist || !w.path ||
        !w.col_of || !w.row_of || !w.remaining || !w.row_seen || !w.col_seen) {
        st = tm_nomem(ctx, (size_t)(bytes + vec_bytes));
    } else {
        for (uint64_t i = 0; i < n; i++) {
            const topoml_pair a = x->finite[i];
            dx[i] = power((a.death - a.birth) * diag_factor, q);
            for (uint64_t j = 0; j < m; j++) {
                const topoml_pair b = y->finite[j];
                xy[i * m + j] = power(ground(a.birth - b.birth, a.death - b.death, p), q);
            }
        }
        for (uint64_t j = 0; j < m; j++)
            dy[j] = power((y->finite[j].death - y->finite[j].birth) * diag_factor, q);
        /* The potentials are sums and differences of costs; keep every
         * cost far enough below the largest double that none of them can
         * overflow (N times the largest cost stays finite). */
        double c_max = 0.0;
        for (uint64_t k = 0; k < cells; k++)
            c_max = fmax(c_max, isnan(xy[k]) ? INFINITY : xy[k]);
        for (uint64_t i = 0; i < n; i++)
            c_max = fmax(c_max, dx[i]);
        for (uint64_t j = 0; j < m; j++)
            c_max = fmax(c_max, dy[j]);
        assignment as = {n, m, xy, dx, dy};
        if (!(c_max * 4.0 * (double)N < DBL_MAX))
            st = tm_error(ctx, TOPOML_E_OVERFLOW,
                          "wasserstein: distances^%g up to %g are too large for the solver", q,
                          c_max);
        else if (isnan(*out = solve_assignment(&as, &w)))
            st = tm_error(ctx, TOPOML_E_INTERNAL, "wasserstein: the assignment solver failed");
    }
    tm_free(ctx, xy);
    tm_free(ctx, dx);
    tm_free(ctx, dy);
    tm_free(ctx, w.u);
    tm_free(ctx, w.v);
    tm_free(ctx, w.dist);
    tm_free(ctx, w.path);
    tm_free(ctx, w.col_of);
    tm_free(ctx, w.row_of);
    tm_free(ctx, w.remaining);
    tm_free(ctx, w.row_seen);
    tm_free(ctx, w.col_seen);
    return st;
}

int topoml_wasserstein_distance(topoml_context *ctx, const topoml_pair *a, uint64_t n_a,
                                const topoml_pair *b, uint64_t n_b, double order, double internal_p,
                                double *out)
{
    if (ctx == NULL)
        return TOPOML_E_INVALID;
    if (out == NULL)
        return tm_error(ctx, TOPOML_E_INVALID, "wasserstein: no output");
    if (!isfinite(order) || !(order >= 1.0))
        return tm_error(ctx, TOPOML_E_INVALID,
                        "wasserstein: order must be finite and >= 1, got %g (the order "
                        "infinity is the bottleneck distance)",
                        order);
    if (isnan(internal_p) || !(internal_p >= 1.0))
        return tm_error(ctx, TOPOML_E_INVALID,
                        "wasserstein: internal_p must be >= 1 or infinity, got %g", internal_p);
    split x, y;
    int st = split_diagram(ctx, "wasserstein: first diagram", a, n_a, &x);
    if (st)
        return st;
    if ((st = split_diagram(ctx, "wasserstein: second diagram", b, n_b, &y))) {
        split_free(ctx, &x);
        return st;
    }
    double ess = essential_cost(&x, &y, order), fin = 0.0;
    if (isinf(ess))
        *out = INFINITY;
    else if ((st = wasserstein_finite(ctx, &x, &y, order, internal_p, &fin)) == TOPOML_OK)
        *out = pow(fin + ess, 1.0 / order);
    split_free(ctx, &x);
    split_free(ctx, &y);
    return st;
}
