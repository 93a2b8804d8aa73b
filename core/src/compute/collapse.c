/*
 * collapse.c — edge collapse of a flag filtration (Boissonnat and Pritam,
 * "Edge collapse and persistence of flag complexes", SoCG 2020), in the
 * backward form of Glisse and Pritam ("Swap, shift and trim to edge collapse
 * a filtration", SoCG 2022): a core stage before the Rips op that hands the
 * backend a smaller graph whose flag filtration has the same barcode in every
 * dimension. It is not a Rips engine and computes no homology.
 *
 * The rule. Let G_s be the graph of the edges whose (current) value is <= s.
 * An edge uv of G_s is dominated there by a vertex w (w != u, v) when w is a
 * neighbour of u and v and of every other common neighbour of u and v in G_s:
 * N[u] ∩ N[v] ⊆ N[w] (closed neighbourhoods). Removing a dominated edge from
 * the flag complex of G_s is a strong collapse, so the inclusion of the flag
 * complex of G_s \ uv into that of G_s is a homotopy equivalence. If uv, of
 * value t, is dominated in G_s for every s in [t, t'), moving it to t' leaves
 * every complex of the filtration homotopy equivalent to the one before, by
 * inclusions that commute with those of the filtration: the persistence
 * modules are isomorphic in every dimension, H0 and the classes still alive at
 * the end included. If it stays dominated up to the end, it is dropped.
 *
 * Each step is exact on the filtration as it is at that moment, so the order
 * of the steps changes how much is removed, never the answer. As Glisse and
 * Pritam do, edges are taken from the largest value down: the edges above
 * have their final values by then and those below are where they started.
 * Whenever finding a dominator gets expensive the search may give up: the
 * edge then keeps its value, which is exact too (see find_dominator).
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/api.h"
#include "compute/compute.h"
#include "metric.h"
#include "metric_rows.h"

/* Times. Every value an edge ever has is the value of some input edge, so
 * a value is kept as its rank: the position in the sorted list of the first
 * edge with that value. Ranks compare as the values do, ties included, in
 * 32 bits; CL_NEVER is an edge that is gone. */
#define CL_NEVER UINT32_MAX

/* Adjacency: the neighbours of v are nb[start[v] .. end[v]), ascending by
 * vertex, each with the current time of the edge that joins them (kept in
 * both lists, so that merging two lists reads no other memory). An edge
 * that is dropped leaves both lists (end[v] moves down): going from the
 * longest edge down, most of the longer edges are gone by the time an edge
 * is looked at, and every scan below reads only what is still there —
 * about half of each list on a dense cloud, instead of all of it. */
typedef struct cl_adj {
    uint32_t v;
    uint32_t time;
} cl_adj;

/* A common neighbour k of the edge being moved, present from `time` on:
 * the later of its two edges to the ends. */
typedef struct cl_common {
    uint32_t time;
    uint32_t k;
} cl_common;

typedef struct cl_graph {
    uint64_t n;
    const uint64_t *start;
    uint64_t *end;
    cl_adj *nb;
    uint32_t *time;  /* current time of each edge, by input position */
    uint32_t *dense; /* NULL, or time of uv at dense[u * n + v] (CL_NEVER: none) */
    uint32_t *mark;  /* per vertex: == stamp when in the set being tested */
    uint32_t stamp;
    uint64_t *umark; /* per vertex: ustamp << 32 | time of its edge to u */
    uint32_t ustamp;
    /* While a worker looks ahead (see "In parallel" below): the vertices
     * whose edges delay() has read, n_read of them (more than CL_READS:
     * too many to keep, the result is taken as stale). NULL otherwise. */
    uint32_t *read;
    uint32_t n_read;
} cl_graph;

/* Candidates one dominator search tries before it gives up (the edge then
 * stays where it is: exact, just less reduced). Bounds the worst case, a
 * large neighbourhood where nothing dominates, to O(limit * |common|)
 * look-ups per arrival. */
#define CL_CANDIDATES 48

/* The n x n table of times is used when it is no larger than this many
 * times the adjacency lists, or than CL_DENSE_BYTES: look-ups are then one
 * load instead of a binary search. */
#define CL_DENSE_FACTOR 4
#define CL_DENSE_BYTES (UINT64_C(64) << 20)

/* The edges a collapse with a minimum share to remove (TOPOML_COLLAPSE_AUTO)
 * judges whether to go on by: the longest tenth, at least this many (all of
 * them, when there are fewer). */
#define CL_PROBE 1000
/* The probe is read in this many blocks; from CL_PROBE_BLOCK_MIN edges a
 * block, one that removes too few of its edges may end it early. */
#define CL_PROBE_BLOCKS 8
#define CL_PROBE_BLOCK_MIN 64

/* Progress and cancel from inside the collapse, as the Rips engine reports
 * (docs/embedding.md, "Progress"): a stage is told as it begins, then at
 * most every CL_REPORT_SECONDS, the clock read every CL_REPORT_WORK units
 * of work (pairs measured, edges looked at), and always at its end. A
 * non-zero answer stops the collapse at once with TOPOML_E_CANCELLED. */
#define CL_REPORT_WORK 4096
#define CL_REPORT_SECONDS 0.05

typedef struct cl_progress {
    topoml_context *ctx;
    const char *stage;
    uint64_t work; /* units since the clock was last read */
    struct timespec last;
    bool begun; /* the stage has been told */
} cl_progress;

static void cl_stage(cl_progress *p, const char *stage)
{
    p->stage = stage;
    p->work = 0;
    p->begun = false;
}

/* `work` more units done, `done` of `total` in the stage; false when the
 * caller's function asked to stop (the context's error is then set). */
static bool cl_tick(cl_progress *p, uint64_t work, uint64_t done, uint64_t total)
{
    if (!p || !p->ctx->progress_fn || total == 0)
        return true;
    p->work += work;
    const bool end = done >= total;
    if (p->begun && !end && p->work < CL_REPORT_WORK)
        return true;
    p->work = 0;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (p->begun && !end &&
        (double)(now.tv_sec - p->last.tv_sec) + (double)(now.tv_nsec - p->last.tv_nsec) * 1e-9 <
            CL_REPORT_SECONDS)
        return true;
    p->begun = true;
    p->last = now;
    if (p->ctx->progress_fn(p->ctx->progress_user, p->stage, done > total ? total : done,
                            total) == 0)
        return true;
    tm_error(p->ctx, TOPOML_E_CANCELLED, "cancelled during the edge collapse (%s)", p->stage);
    return false;
}

/* Vertices one look-ahead can note (the two ends and the dominators
 * tried); an edge whose search tried more is done again in order. */
#define CL_READS 64

static inline void note_read(cl_graph *g, uint32_t w)
{
    if (g->read) {
        if (g->n_read < CL_READS)
            g->read[g->n_read] = w;
        g->n_read++;
    }
}

/* Where k is in w's list, or end[w] if it is not. */
static uint64_t slot_of(const cl_graph *g, uint32_t w, uint32_t k)
{
    uint64_t lo = g->start[w], hi = g->end[w], end = hi;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (g->nb[mid].v < k)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < end && g->nb[lo].v == k ? lo : end;
}

/* Time of the edge wk, CL_NEVER if there is none. */
static inline __attribute__((always_inline)) uint32_t edge_time(const cl_graph *g, uint32_t w,
                                                            uint32_t k)
{
    if (g->dense)
        return g->dense[(uint64_t)w * g->n + k];
    if (g->end[k] - g->start[k] < g->end[w] - g->start[w]) {
        uint32_t x = w;
        w = k;
        k = x;
    }
    uint64_t q = slot_of(g, w, k);
    return q < g->end[w] ? g->nb[q].time : CL_NEVER;
}

/* Takes k out of w's list, which stays sorted. */
static void unlink_neighbour(cl_graph *g, uint32_t w, uint32_t k)
{
    uint64_t q = slot_of(g, w, k);
    memmove(&g->nb[q], &g->nb[q + 1], (size_t)(g->end[w] - q - 1) * sizeof *g->nb);
    g->end[w]--;
}

static void set_time(cl_graph *g, uint64_t e, uint32_t u, uint32_t v, uint32_t t)
{
    g->time[e] = t;
    if (t == CL_NEVER) {
        unlink_neighbour(g, u, v);
        unlink_neighbour(g, v, u);
    } else {
        g->nb[slot_of(g, u, v)].time = t;
        g->nb[slot_of(g, v, u)].time = t;
    }
    if (g->dense) {
        g->dense[(uint64_t)u * g->n + v] = t;
        g->dense[(uint64_t)v * g->n + u] = t;
    }
}

/* Is w adjacent at time s to every one of c[from .. to) other than itself? */
static bool covers(const cl_graph *g, uint32_t w, const cl_common *c, uint64_t from, uint64_t to,
                   uint32_t s)
{
    for (uint64_t q = from; q < to; q++)
        if (c[q].k != w && edge_time(g, w, c[q].k) > s)
            return false;
    return true;
}

/* covers(g, w, c, 0, present, s) for a marked set: one pass over w's list,
 * cheaper than a search per member when the list is not much longer. */
static bool covers_marked(const cl_graph *g, uint32_t w, uint64_t present, uint32_t s)
{
    uint64_t hit = 0, lo = g->start[w], hi = g->end[w];
    if (hi - lo < present - 1)
        return false;
    /* & rather than &&: no branch, which would mispredict half the time */
    for (uint64_t q = lo; q < hi; q++)
        hit += (uint64_t)((g->mark[g->nb[q].v] == g->stamp) & (g->nb[q].time <= s));
    return hit == present - 1;
}

static bool try_dominator(const cl_graph *g, uint32_t w, const cl_common *c, uint64_t present,
                          uint32_t s)
{
    if (!g->dense && g->end[w] - g->start[w] <= 8 * present)
        return covers_marked(g, w, present, s);
    return covers(g, w, c, 0, present, s);
}

/* A vertex among c[0 .. present) adjacent at time s to all the others, or
 * UINT32_MAX. The common neighbour that arrived first (nearest to both
 * ends, in a metric space) is tried first: it is the usual dominator. Gives
 * up after CL_CANDIDATES candidates: that only means the edge is not moved
 * (see the top of the file). */
static uint32_t find_dominator(cl_graph *g, const cl_common *c, uint64_t present, uint32_t s)
{
    if (++g->stamp == 0) {
        memset(g->mark, 0, (size_t)g->n * sizeof *g->mark);
        g->stamp = 1;
    }
    uint64_t first = 0;
    for (uint64_t q = 0; q < present; q++) {
        g->mark[c[q].k] = g->stamp;
        if (c[q].time < c[first].time)
            first = q;
    }
    note_read(g, c[first].k);
    if (try_dominator(g, c[first].k, c, present, s))
        return c[first].k;
    uint64_t tries = present < CL_CANDIDATES ? present : CL_CANDIDATES;
    for (uint64_t q = 0; q < tries; q++) {
        if (q == first)
            continue;
        note_read(g, c[q].k);
        if (try_dominator(g, c[q].k, c, present, s))
            return c[q].k;
    }
    return UINT32_MAX;
}

static int common_cmp(const void *a, const void *b)
{
    const cl_common *x = a, *y = b;
    if (x->time != y->time)
        return x->time < y->time ? -1 : 1;
    return x->k < y->k ? -1 : x->k > y->k;
}

/* The time edge uv (current time t) can be moved to: the first time >= t at
 * which it is not dominated, CL_NEVER if it is dominated to the end. `c` has
 * room for deg v entries. */
static inline __attribute__((always_inline)) uint32_t delay(cl_graph *g, uint32_t u, uint32_t v,
                                                        uint32_t t, cl_common *c)
{
    /* every edge read below has u, v or a dominator tried as an end */
    g->n_read = 0;
    note_read(g, u);
    note_read(g, v);
    /* Common neighbours with the time each becomes one: u's neighbours are
     * stamped with their edge's time, then v's list is read against the
     * stamps, without a branch per neighbour (a merge of the two sorted
     * lists mispredicts on nearly every step). */
    if (++g->ustamp == 0) {
        memset(g->umark, 0, (size_t)g->n * sizeof *g->umark);
        g->ustamp = 1;
    }
    const uint64_t tag = (uint64_t)g->ustamp << 32;
    for (uint64_t a = g->start[u]; a < g->end[u]; a++)
        g->umark[g->nb[a].v] = tag | g->nb[a].time;
    uint64_t m = 0;
    for (uint64_t b = g->start[v]; b < g->end[v]; b++) {
        uint32_t k = g->nb[b].v;
        uint64_t x = g->umark[k];
        uint32_t tu = (uint32_t)x, tv = g->nb[b].time;
        c[m] = (cl_common){tu > tv ? tu : tv, k};
        m += (x >> 32) == g->ustamp && tu != CL_NEVER && tv != CL_NEVER;
    }
    if (m == 0)
        return t;
    /* The common neighbours at time t first: most edges that stay where
     * they are fail there, before the later ones need sorting. */
    uint64_t present = 0;
    for (uint64_t q = 0; q < m; q++)
        if (c[q].time <= t) {
            cl_common x = c[present];
            c[present++] = c[q];
            c[q] = x;
        }
    if (present == 0)
        return t;
    uint32_t w = find_dominator(g, c, present, t);
    if (w == UINT32_MAX)
        return t;
    if (present == m)
        return CL_NEVER;
    qsort(c + present, (size_t)(m - present), sizeof *c, common_cmp);

    /* Between two arrivals of common neighbours only edges are added, so a
     * dominator stays one: domination needs checking only at arrivals. */
    uint32_t s = c[present].time;
    for (;;) {
        uint64_t before = present;
        while (present < m && c[present].time <= s)
            present++;
        if (present == 0)
            return s;
        if (w == UINT32_MAX || !covers(g, w, c, before, present, s))
            w = find_dominator(g, c, present, s);
        if (w == UINT32_MAX)
            return s;
        if (present == m)
            return CL_NEVER;
        s = c[present].time;
    }
}

/* ---- In parallel ----
 *
 * The steps go one edge at a time, longest first, each on the graph the
 * steps before it left. With threads the same steps are taken, with the
 * same results, in batches: the workers first compute delay() for every
 * edge of the batch on the graph as it is at the batch's start (nothing
 * changes it meanwhile), each noting the two ends u, v and the dominators
 * it tried. What delay() computes depends only on the edges that join u or
 * v to a common neighbour of both, and those that join a dominator tried to
 * a common neighbour. Then the calling thread takes the batch in order and
 * keeps a result unless an edge moved earlier in the batch may be one of
 * those: it joins u or v to a vertex adjacent to the other end (now, or
 * before a move in the batch), or joins a dominator tried to a vertex
 * adjacent to both u and v (when no edge from u or v to a common neighbour
 * has moved, the common neighbours are the ones the look-ahead saw). A
 * kept result was computed on exactly the edges the serial step would
 * read, so it is that step's result; any other is computed again there, on
 * the graph as it is then. So the collapse is the serial one, edge for edge, whatever the
 * thread count (tests/test_collapse.c compares them), and the parallel part
 * is the search, nearly all of the stage's time. The batch grows while few
 * results are stale and shrinks when many are. */

/* Below this many edges the collapse runs on the calling thread alone. */
#define CL_PARALLEL_MIN 20000
/* The fewest threads tm_collapse_input runs the collapse on in parallel. */
#define CL_MIN_THREADS 4
#define CL_BATCH_MIN 64
#define CL_BATCH_MAX 16384

typedef struct cl_worker {
    cl_graph g; /* the shared graph, with this worker's marks and reads */
    cl_common *c;
    struct cl_pool *pool;
    unsigned index;
} cl_worker;

typedef struct cl_pool {
    pthread_mutex_t lock;
    pthread_cond_t go, done;
    uint64_t round; /* bumped to start a round */
    unsigned busy;  /* workers still in the round */
    unsigned n;     /* workers, the calling thread (index 0) included */
    bool quit;
    cl_worker *w;
    pthread_t *tid;
    unsigned started; /* threads running (workers 1 .. started) */
    /* the round: edges [lo, hi), taken from hi - 1 down */
    const topoml_edge *edges;
    const uint32_t *label;
    uint64_t lo, hi;
    uint32_t *res;   /* res[hi - 1 - e]: delay() of edge e */
    uint32_t *reads; /* CL_READS per edge */
    uint32_t *n_reads;
    /* the edges moved so far in the batch, by end: moved[first[a]] is the
     * latest at a (when stamp[a] is the batch's), .next the one before */
    uint32_t *stamp, *first, batch_stamp;
    struct cl_moved {
        uint32_t other, next;
    } *moved;
    uint32_t n_moved;
} cl_pool;

#define CL_NONE UINT32_MAX

/* Edge uv moved in this batch. */
static void note_moved(cl_pool *p, uint32_t u, uint32_t v)
{
    const uint32_t ends[2][2] = {{u, v}, {v, u}};
    for (int k = 0; k < 2; k++) {
        const uint32_t a = ends[k][0];
        if (p->stamp[a] != p->batch_stamp) {
            p->stamp[a] = p->batch_stamp;
            p->first[a] = CL_NONE;
        }
        p->moved[p->n_moved] = (struct cl_moved){ends[k][1], p->first[a]};
        p->first[a] = p->n_moved++;
    }
}

/* Was a, with an edge to v now or moved in this batch, an end of an edge
 * moved at u in this batch? */
static bool moved_to_common(const cl_pool *p, const cl_graph *g, uint32_t u, uint32_t v)
{
    if (p->stamp[u] != p->batch_stamp)
        return false;
    for (uint32_t m = p->first[u]; m != CL_NONE; m = p->moved[m].next) {
        const uint32_t a = p->moved[m].other;
        if (a == v || edge_time(g, v, a) != CL_NEVER)
            return true;
        if (p->stamp[v] == p->batch_stamp)
            for (uint32_t q = p->first[v]; q != CL_NONE; q = p->moved[q].next)
                if (p->moved[q].other == a)
                    return true;
    }
    return false;
}

/* Is the look-ahead of edge uv (result x of the batch) what the serial step
 * would compute on the graph g as it is now? (See "In parallel".) The
 * edges moved at u or v do not matter unless their other end was a common
 * neighbour, and then the common neighbours are those of the look-ahead. */
static bool still_good(const cl_pool *p, const cl_graph *g, uint64_t x, uint32_t u, uint32_t v)
{
    const uint32_t n_read = p->n_reads[x], *read = p->reads + x * CL_READS;
    if (n_read > CL_READS || moved_to_common(p, g, u, v) || moved_to_common(p, g, v, u))
        return false;
    for (uint32_t r = 2; r < n_read; r++) {
        const uint32_t w = read[r];
        if (p->stamp[w] != p->batch_stamp)
            continue;
        for (uint32_t m = p->first[w]; m != CL_NONE; m = p->moved[m].next) {
            const uint32_t b = p->moved[m].other;
            if (edge_time(g, u, b) != CL_NEVER && edge_time(g, v, b) != CL_NEVER)
                return false;
        }
    }
    return true;
}

static void look_ahead(cl_worker *w)
{
    cl_pool *p = w->pool;
    for (uint64_t x = w->index; x < p->hi - p->lo; x += p->n) {
        const uint64_t e = p->hi - 1 - x;
        w->g.read = p->reads + x * CL_READS;
        p->res[x] = delay(&w->g, p->label[p->edges[e].i], p->label[p->edges[e].j],
                          w->g.time[e], w->c);
        p->n_reads[x] = w->g.n_read;
    }
    w->g.read = NULL;
}

static void *worker_main(void *arg)
{
    cl_worker *w = arg;
    cl_pool *p = w->pool;
    uint64_t seen = 0;
    for (;;) {
        pthread_mutex_lock(&p->lock);
        while (p->round == seen && !p->quit)
            pthread_cond_wait(&p->go, &p->lock);
        if (p->quit) {
            pthread_mutex_unlock(&p->lock);
            return NULL;
        }
        seen = p->round;
        pthread_mutex_unlock(&p->lock);
        look_ahead(w);
        pthread_mutex_lock(&p->lock);
        if (--p->busy == 0)
            pthread_cond_signal(&p->done);
        pthread_mutex_unlock(&p->lock);
    }
}

/* One round of look-ahead on every worker, the calling thread's included. */
static void pool_round(cl_pool *p)
{
    pthread_mutex_lock(&p->lock);
    p->busy = p->n - 1;
    p->round++;
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->lock);
    look_ahead(&p->w[0]);
    pthread_mutex_lock(&p->lock);
    while (p->busy)
        pthread_cond_wait(&p->done, &p->lock);
    pthread_mutex_unlock(&p->lock);
}

/* Starts up to want - 1 threads (fewer if the system gives fewer); p->n is
 * the workers there are, the calling thread included. */
static void pool_start(cl_pool *p, unsigned want)
{
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->go, NULL);
    pthread_cond_init(&p->done, NULL);
    p->n = 1;
    for (unsigned k = 1; k < want; k++) {
        p->w[k].index = k;
        if (pthread_create(&p->tid[k], NULL, worker_main, &p->w[k]) != 0)
            break;
        p->started = k;
    }
    /* the workers read n only in rounds, after the lock below */
    pthread_mutex_lock(&p->lock);
    p->n = p->started + 1;
    pthread_mutex_unlock(&p->lock);
}

static void pool_stop(cl_pool *p)
{
    pthread_mutex_lock(&p->lock);
    p->quit = true;
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->lock);
    for (unsigned k = 1; k <= p->started; k++)
        pthread_join(p->tid[k], NULL);
    pthread_cond_destroy(&p->go);
    pthread_cond_destroy(&p->done);
    pthread_mutex_destroy(&p->lock);
}

/* TOPOML_COLLAPSE_AUTO's probe (see tm_collapse_edges), told the steps in
 * order: false once it declines. */
typedef struct cl_decide {
    bool deciding;
    uint64_t n_edges, size, block, removed, block_removed;
    double need;
} cl_decide;

static inline bool probe_goes_on(cl_decide *d, tm_collapse_probe *probe, uint64_t e, bool gone)
{
    d->removed += gone;
    if (!d->deciding)
        return true;
    const uint64_t seen = d->n_edges - e;
    probe->examined = seen;
    probe->removed = d->removed;
    if ((double)d->removed >= d->need) {
        d->deciding = false; /* goes on */
        return true;
    }
    bool hopeless = seen == d->size;
    if (!hopeless && d->block >= CL_PROBE_BLOCK_MIN && seen % d->block == 0) {
        const double rate = (double)(d->removed - d->block_removed) / (double)d->block;
        hopeless = (double)d->removed + rate * (double)(d->size - seen) < d->need;
        d->block_removed = d->removed;
    }
    if (hopeless)
        probe->declined = true;
    return !hopeless;
}

int tm_collapse_edges(topoml_context *ctx, uint64_t n, topoml_edge *edges, uint64_t n_edges,
                      double min_removed, unsigned threads, uint64_t *n_out,
                      tm_collapse_probe *probe)
{
    *n_out = n_edges;
    memset(probe, 0, sizeof *probe);
    if (n_edges < 3)
        return TOPOML_OK;
    if (n_edges >= UINT32_MAX || n >= UINT32_MAX)
        return TOPOML_OK; /* times are 32-bit: leave the graph as it is */
    bool dense = n * n <= CL_DENSE_FACTOR * 2 * n_edges ||
                 n * n * sizeof(uint32_t) <= CL_DENSE_BYTES;
    if (threads > 64)
        threads = 64;
    if (n_edges < CL_PARALLEL_MIN || threads < 2)
        threads = 1;
    /* each worker past the first: its marks and common neighbours; with
     * any: the batch's results and the moved ends */
    const uint64_t per_worker = n * (sizeof(cl_common) + 12) + sizeof(cl_worker) + sizeof(pthread_t);
    uint64_t bytes = (n + 1) * sizeof(uint64_t) * 3 + 4 * n_edges * sizeof(cl_adj) +
                     n * 2 * sizeof(uint32_t) +
                     n_edges * sizeof(uint32_t) + n * (sizeof(cl_common) + 12) +
                     (dense ? n * n * sizeof(uint32_t) : 0) +
                     (threads > 1 ? (threads - 1) * per_worker + 2 * n * sizeof(uint32_t) +
                                        CL_BATCH_MAX * (CL_READS + 6) * sizeof(uint32_t) +
                                        sizeof(cl_worker) + sizeof(pthread_t)
                                  : 0);
    int rc = tm_check_memory(ctx, bytes, "the edge collapse");
    if (rc != TOPOML_OK)
        return rc;
    cl_pool pool_mem;
    memset(&pool_mem, 0, sizeof pool_mem);
    cl_pool *pool = NULL;
    uint64_t *start = tm_calloc(ctx, (size_t)n + 1, sizeof *start);
    uint64_t *fill = tm_alloc(ctx, ((size_t)n + 1) * sizeof *fill);
    uint64_t *vstart = tm_calloc(ctx, (size_t)n + 1, sizeof *vstart);
    uint32_t *label = tm_alloc(ctx, (size_t)n * sizeof *label);
    uint32_t *order = tm_alloc(ctx, (size_t)n * sizeof *order);
    cl_adj *raw = tm_alloc(ctx, (size_t)(2 * n_edges) * sizeof *raw);
    cl_adj *nb = tm_alloc(ctx, (size_t)(2 * n_edges) * sizeof *nb);
    uint32_t *time = tm_alloc(ctx, (size_t)n_edges * sizeof *time);
    cl_common *c = tm_alloc(ctx, (size_t)n * sizeof *c);
    uint32_t *mark = tm_calloc(ctx, (size_t)n, sizeof *mark);
    uint64_t *umark = tm_calloc(ctx, (size_t)n, sizeof *umark);
    uint32_t *table = dense ? tm_alloc(ctx, (size_t)(n * n) * sizeof *table) : NULL;
    if (!start || !fill || !vstart || !label || !order || !raw || !nb || !time || !c ||
        !mark || !umark || (dense && !table)) {
        rc = tm_nomem(ctx, (size_t)bytes);
        goto out;
    }
    for (uint64_t e = 0; e < n_edges; e++) {
        start[edges[e].i + 1]++;
        start[edges[e].j + 1]++;
        time[e] = e > 0 && edges[e].d == edges[e - 1].d ? time[e - 1] : (uint32_t)e;
    }
    for (uint64_t v = 0; v < n; v++)
        start[v + 1] += start[v];
    /* Lists in edge order first, then transposed: walking u ascending and
     * appending u to each neighbour's list leaves every list sorted. */
    memcpy(fill, start, (size_t)n * sizeof *fill);
    for (uint64_t e = 0; e < n_edges; e++) {
        raw[fill[edges[e].i]++] = (cl_adj){edges[e].j, time[e]};
        raw[fill[edges[e].j]++] = (cl_adj){edges[e].i, time[e]};
    }
    /* The vertices are numbered anew in breadth-first order, so that the
     * neighbours of a vertex have nearby labels: the per-vertex stamps that
     * every test below reads (mark, umark) and the lists of a vertex's
     * neighbours then sit in a few cache lines instead of all over the
     * arrays. label[v] is v's new number, order[x] the vertex numbered x;
     * everything inside the collapse works on labels, edges[] keeps the
     * input's numbers. */
    for (uint64_t v = 0; v < n; v++)
        label[v] = UINT32_MAX;
    uint64_t next = 0;
    for (uint64_t root = 0; root < n; root++) {
        if (label[root] != UINT32_MAX)
            continue;
        label[root] = (uint32_t)next;
        order[next++] = (uint32_t)root;
        for (uint64_t head = next - 1; head < next; head++) {
            uint32_t x = order[head];
            for (uint64_t q = start[x]; q < start[x + 1]; q++)
                if (label[raw[q].v] == UINT32_MAX) {
                    label[raw[q].v] = (uint32_t)next;
                    order[next++] = raw[q].v;
                }
        }
    }
    for (uint64_t v = 0; v < n; v++)
        vstart[label[v] + 1] = start[v + 1] - start[v];
    for (uint64_t x = 0; x < n; x++)
        vstart[x + 1] += vstart[x];
    memcpy(fill, vstart, (size_t)n * sizeof *fill);
    for (uint64_t x = 0; x < n; x++)
        for (uint64_t q = start[order[x]]; q < start[order[x] + 1]; q++)
            nb[fill[label[raw[q].v]]++] = (cl_adj){(uint32_t)x, raw[q].time};
    tm_free(ctx, raw);
    raw = NULL;
    tm_free(ctx, start);
    start = vstart;
    vstart = NULL;
    /* A repeated edge is bad input: leave it to the backend to say so. */
    for (uint64_t v = 0; v < n; v++)
        for (uint64_t q = start[v] + 1; q < start[v + 1]; q++)
            if (nb[q].v == nb[q - 1].v) {
                rc = TOPOML_OK;
                goto out;
            }

    memcpy(fill, start + 1, (size_t)n * sizeof *fill); /* the ends of the lists */
    cl_graph g = {n, start, fill, nb, time, table, mark, 0, umark, 0, NULL, 0};
    if (table) {
        for (uint64_t q = 0; q < n * n; q++)
            table[q] = CL_NEVER;
        for (uint64_t e = 0; e < n_edges; e++) {
            uint64_t i = label[edges[e].i], j = label[edges[e].j];
            table[i * n + j] = time[e];
            table[j * n + i] = time[e];
        }
    }
    /* The probe: the longest tenth of the edges (at least CL_PROBE). If
     * less than min_removed of them go, the collapse is not worth its cost
     * here and the edge list is left as it is. The decision is made as soon
     * as it is clear: the collapse goes on once that many are gone, and the
     * probe stops at the end of a block (an eighth of it) when even the
     * share of that block, kept up over the rest of the probe, would not
     * reach min_removed. Where little is dominated, the longest edges are
     * the likeliest to be (sphere_3_192: a sixth of the first eighth, a
     * twentieth of the second, none after), so that block overestimates
     * what the rest removes and the probe ends after a quarter of its cost. */
    uint64_t size = n_edges / 10 > CL_PROBE ? n_edges / 10 : CL_PROBE;
    size = size < n_edges ? size : n_edges;
    cl_decide dec = {min_removed > 0.0, n_edges, size, size / CL_PROBE_BLOCKS, 0, 0,
                     min_removed * (double)size};
    probe->size = size;
    if (threads > 1) {
        pool = &pool_mem;
        pool->w = tm_calloc(ctx, threads, sizeof *pool->w);
        pool->tid = tm_calloc(ctx, threads, sizeof *pool->tid);
        pool->res = tm_alloc(ctx, CL_BATCH_MAX * sizeof *pool->res);
        pool->n_reads = tm_alloc(ctx, CL_BATCH_MAX * sizeof *pool->n_reads);
        pool->reads = tm_alloc(ctx, (size_t)CL_BATCH_MAX * CL_READS * sizeof *pool->reads);
        pool->stamp = tm_calloc(ctx, (size_t)n, sizeof *pool->stamp);
        pool->first = tm_alloc(ctx, (size_t)n * sizeof *pool->first);
        pool->moved = tm_alloc(ctx, 2 * CL_BATCH_MAX * sizeof *pool->moved);
        bool ok = pool->w && pool->tid && pool->res && pool->n_reads && pool->reads &&
                  pool->stamp && pool->first && pool->moved;
        unsigned want = 1;
        for (; ok && want < threads; want++) {
            cl_worker *w = &pool->w[want];
            w->g = g;
            w->g.stamp = w->g.ustamp = 0;
            w->g.mark = tm_calloc(ctx, (size_t)n, sizeof *w->g.mark);
            w->g.umark = tm_calloc(ctx, (size_t)n, sizeof *w->g.umark);
            w->c = tm_alloc(ctx, (size_t)n * sizeof *w->c);
            w->pool = pool;
            if (!w->g.mark || !w->g.umark || !w->c)
                ok = false;
        }
        if (!ok) {
            rc = tm_nomem(ctx, (size_t)bytes);
            goto out;
        }
        pool->w[0].g = g;
        pool->w[0].c = c;
        pool->w[0].pool = pool;
        pool->edges = edges;
        pool->label = label;
        pool_start(pool, threads);
    }
    probe->threads = pool ? pool->n : 1;
    /* stage "collapse": the edges looked at, longest first */
    cl_progress pr = {ctx, "collapse", 0, {0, 0}, false};
    if (!cl_tick(&pr, 0, 0, n_edges)) {
        rc = TOPOML_E_CANCELLED;
        goto out;
    }
    /* The steps, longest edge first: all on this thread, or in batches
     * looked ahead on the pool (see "In parallel"). */
    if (!pool) {
        for (uint64_t e = n_edges; e-- > 0;) {
            uint32_t i = label[edges[e].i], j = label[edges[e].j];
            uint32_t t = delay(&g, i, j, time[e], c);
            if (t != time[e])
                set_time(&g, e, i, j, t);
            if (!probe_goes_on(&dec, probe, e, t == CL_NEVER)) {
                /* the list stays as it is; the stage ends here */
                rc = cl_tick(&pr, 0, n_edges, n_edges) ? TOPOML_OK : TOPOML_E_CANCELLED;
                goto out;
            }
            if (!cl_tick(&pr, 1, n_edges - e, n_edges)) {
                rc = TOPOML_E_CANCELLED;
                goto out;
            }
        }
    }
    cl_graph *sg = pool ? &pool->w[0].g : &g;
    uint64_t batch = pool ? 32u * pool->n : 0;
    batch = batch < CL_BATCH_MIN ? CL_BATCH_MIN : batch > CL_BATCH_MAX ? CL_BATCH_MAX : batch;
    /* the look-ahead, until batches of the smallest size keep being mostly
     * redone: then the rest goes on this thread alone */
    bool ahead = true;
    unsigned poor = 0;
    for (uint64_t hi = pool ? n_edges : 0; hi > 0;) {
        const uint64_t lo = hi > batch ? hi - batch : 0;
        if (ahead) {
            pool->lo = lo;
            pool->hi = hi;
            pool_round(pool);
            pool->n_moved = 0;
            if (++pool->batch_stamp == 0) {
                memset(pool->stamp, 0, (size_t)n * sizeof *pool->stamp);
                pool->batch_stamp = 1;
            }
        }
        uint64_t stale = 0;
        for (uint64_t e = hi; e-- > lo;) {
            uint32_t i = label[edges[e].i], j = label[edges[e].j], t;
            if (ahead && still_good(pool, sg, hi - 1 - e, i, j)) {
                t = pool->res[hi - 1 - e];
            } else {
                t = delay(sg, i, j, time[e], pool->w[0].c);
                stale++;
            }
            if (t != time[e]) {
                set_time(sg, e, i, j, t);
                if (ahead)
                    note_moved(pool, i, j);
            }
            if (!probe_goes_on(&dec, probe, e, t == CL_NEVER)) {
                /* the list stays as it is; the stage ends here */
                rc = cl_tick(&pr, 0, n_edges, n_edges) ? TOPOML_OK : TOPOML_E_CANCELLED;
                goto out;
            }
            if (!cl_tick(&pr, 1, n_edges - e, n_edges)) {
                rc = TOPOML_E_CANCELLED;
                goto out;
            }
        }
        /* a batch whose results were mostly still good can be larger */
        if (ahead) {
            probe->batches++;
            probe->redone += stale;
            if (stale * 20 < hi - lo && batch < CL_BATCH_MAX)
                batch *= 2;
            else if (stale * 4 > hi - lo && batch > CL_BATCH_MIN)
                batch = batch / 2 > CL_BATCH_MIN ? batch / 2 : CL_BATCH_MIN;
            poor = batch == CL_BATCH_MIN && stale * 2 > hi - lo ? poor + 1 : 0;
            if (poor == 4) {
                ahead = false;
                batch = hi;
                probe->alone = lo;
            }
        }
        hi = lo;
    }

    /* The value of time t is edges[t].d. Edge e's time is its own rank
     * (<= e) or later than e, and the compaction below has only written
     * entries < e when it reaches e: edges[t] is still the input's. */
    uint64_t kept = 0;
    for (uint64_t e = 0; e < n_edges; e++)
        if (time[e] != CL_NEVER) {
            double d = time[e] > e ? edges[time[e]].d : edges[e].d;
            edges[kept++] = (topoml_edge){d, edges[e].i, edges[e].j};
        }
    *n_out = kept;
    rc = TOPOML_OK;
out:
    if (pool) {
        if (pool->n)
            pool_stop(pool);
        for (unsigned k = 1; pool->w && k < threads; k++) {
            tm_free(ctx, pool->w[k].g.mark);
            tm_free(ctx, pool->w[k].g.umark);
            tm_free(ctx, pool->w[k].c);
        }
        tm_free(ctx, pool->w);
        tm_free(ctx, pool->tid);
        tm_free(ctx, pool->res);
        tm_free(ctx, pool->n_reads);
        tm_free(ctx, pool->reads);
        tm_free(ctx, pool->stamp);
        tm_free(ctx, pool->first);
        tm_free(ctx, pool->moved);
    }
    tm_free(ctx, start);
    tm_free(ctx, fill);
    tm_free(ctx, vstart);
    tm_free(ctx, label);
    tm_free(ctx, order);
    tm_free(ctx, raw);
    tm_free(ctx, nb);
    tm_free(ctx, time);
    tm_free(ctx, c);
    tm_free(ctx, mark);
    tm_free(ctx, umark);
    tm_free(ctx, table);
    return rc;
}

int tm_collapse_edge_cmp(const void *a, const void *b)
{
    const topoml_edge *x = a, *y = b;
    if (x->d != y->d)
        return x->d < y->d ? -1 : 1;
    if (x->i != y->i)
        return x->i < y->i ? -1 : 1;
    return (x->j > y->j) - (x->j < y->j);
}

/* Sorting the edges, on threads. With a second buffer of the edges' size
 * (when it fits under the memory limit) each of k threads merge-sorts a
 * slice, the comparison inlined (about twice as fast as qsort's calls
 * through a pointer), then the slices are merged two by two, a round of
 * merges on threads at a time. Without one, qsort sorts them on the calling
 * thread. The order is a total one (d, then i, then j; a repeated pair is
 * bad input the backend reports, and equal edges stay equal whatever their
 * order), so the result is qsort's, whatever the way and the thread count. */
#define CL_SORT_PARALLEL_MIN (UINT64_C(1) << 16)
#define CL_SORT_RUN 16 /* runs sorted by insertion before the merges */

static inline bool edge_before(const topoml_edge *x, const topoml_edge *y)
{
    if (x->d != y->d)
        return x->d < y->d;
    return x->i != y->i ? x->i < y->i : x->j < y->j;
}

/* src[lo, mid) and src[mid, hi), each sorted, merged into dst[lo, hi). */
static void merge_runs(const topoml_edge *src, topoml_edge *dst, uint64_t lo, uint64_t mid,
                       uint64_t hi)
{
    uint64_t a = lo, b = mid, o = lo;
    while (a < mid && b < hi)
        dst[o++] = edge_before(&src[b], &src[a]) ? src[b++] : src[a++];
    memcpy(dst + o, src + a, (size_t)(mid - a) * sizeof *src);
    o += mid - a;
    memcpy(dst + o, src + b, (size_t)(hi - b) * sizeof *src);
}

/* Sorts e[lo, hi), with tmp[lo, hi) as scratch: runs of CL_SORT_RUN by
 * insertion, then bottom-up merges between the two, the result in e. */
static void merge_sort(topoml_edge *e, topoml_edge *tmp, uint64_t lo, uint64_t hi)
{
    for (uint64_t r = lo; r < hi; r += CL_SORT_RUN) {
        uint64_t end = r + CL_SORT_RUN < hi ? r + CL_SORT_RUN : hi;
        for (uint64_t q = r + 1; q < end; q++) {
            topoml_edge x = e[q];
            uint64_t p = q;
            for (; p > r && edge_before(&x, &e[p - 1]); p--)
                e[p] = e[p - 1];
            e[p] = x;
        }
    }
    topoml_edge *src = e, *dst = tmp;
    for (uint64_t width = CL_SORT_RUN; width < hi - lo; width *= 2) {
        for (uint64_t a = lo; a < hi; a += 2 * width) {
            uint64_t mid = a + width < hi ? a + width : hi;
            uint64_t end = a + 2 * width < hi ? a + 2 * width : hi;
            merge_runs(src, dst, a, mid, end);
        }
        topoml_edge *t = src;
        src = dst;
        dst = t;
    }
    if (src != e)
        memcpy(e + lo, src + lo, (size_t)(hi - lo) * sizeof *e);
}

typedef struct cl_sort_job {
    topoml_edge *src, *dst;
    uint64_t lo, mid, hi; /* sort [lo, hi) of src (dst scratch) when mid == hi, else merge */
} cl_sort_job;

static void *sort_job(void *arg)
{
    cl_sort_job *j = arg;
    if (j->mid == j->hi)
        merge_sort(j->src, j->dst, j->lo, j->hi);
    else
        merge_runs(j->src, j->dst, j->lo, j->mid, j->hi);
    return NULL;
}

/* Runs jobs[0 .. n) on threads, the calling thread taking the first; a
 * thread that cannot be started leaves its job to the calling thread. */
static void run_sort_jobs(cl_sort_job *jobs, unsigned n)
{
    pthread_t tid[64];
    bool started[64] = {false};
    for (unsigned k = 1; k < n; k++)
        started[k] = pthread_create(&tid[k], NULL, sort_job, &jobs[k]) == 0;
    sort_job(&jobs[0]);
    for (unsigned k = 1; k < n; k++) {
        if (started[k])
            pthread_join(tid[k], NULL);
        else
            sort_job(&jobs[k]);
    }
}

void tm_collapse_sort_edges(topoml_context *ctx, topoml_edge *edges, uint64_t m, unsigned threads)
{
    if (threads > 64)
        threads = 64;
    if (m < CL_SORT_PARALLEL_MIN)
        threads = 1;
    /* the edges and their second buffer, held at once */
    const uint64_t limit = tm_max_memory(ctx);
    topoml_edge *tmp = NULL;
    if (m >= 2 && (!limit || 2 * m * sizeof *edges <= limit))
        tmp = tm_alloc(ctx, (size_t)m * sizeof *edges);
    if (!tmp) {
        qsort(edges, (size_t)m, sizeof *edges, tm_collapse_edge_cmp);
        return;
    }
    /* slices: `threads` of them, rounded down to a power of two so that
     * every merge round halves them */
    unsigned k = 1;
    while (k * 2 <= threads)
        k *= 2;
    uint64_t bound[65];
    for (unsigned q = 0; q <= k; q++)
        bound[q] = m * q / k;
    cl_sort_job jobs[64];
    for (unsigned q = 0; q < k; q++)
        jobs[q] = (cl_sort_job){edges, tmp, bound[q], bound[q + 1], bound[q + 1]};
    run_sort_jobs(jobs, k);
    topoml_edge *src = edges, *dst = tmp;
    for (unsigned width = 1; width < k; width *= 2) {
        unsigned n = 0;
        for (unsigned q = 0; q < k; q += 2 * width)
            jobs[n++] = (cl_sort_job){src, dst, bound[q], bound[q + width], bound[q + 2 * width]};
        run_sort_jobs(jobs, n);
        topoml_edge *t = src;
        src = dst;
        dst = t;
    }
    if (src != edges)
        memcpy(edges, src, (size_t)m * sizeof *edges);
    tm_free(ctx, tmp);
}

/* d(i, j), i > j, of a POINTS or CONDENSED data set: the value the Rips
 * engine computes for it (plugins/scalar/rips.c, pair_dist). */
static inline double data_dist(const struct topoml_data *d, uint32_t metric, uint64_t i,
                               uint64_t j)
{
    if (d->kind == TOPOML_INPUT_CONDENSED)
        return d->values[i * (i - 1) / 2 + j];
    return scalar_point_dist(TOPOML_F64, (topoml_metric)metric, d->values, d->dim, i, j);
}

/* One pass over the pairs: the largest distance of each point (rmax) and,
 * when `edges` is not NULL, the pairs within `cut`. false on a distance the
 * engine refuses (NaN, negative). A point cloud's pairs are read a row at a
 * time through `pan` (metric_rows.h: the engine's own distances, bit for
 * bit, several pairs at once) when the caller could lay the points out, else
 * pair by pair; `row` has room for n distances then. */
/* Reported as `pr`'s stage, rows of n: CL_SCAN_CANCELLED when the caller
 * asked to stop. */
#define CL_SCAN_REFUSED 0
#define CL_SCAN_OK 1
#define CL_SCAN_CANCELLED 2
static int scan(const struct topoml_data *d, uint32_t metric, double cut, double *rmax,
                topoml_edge *edges, uint64_t *count, const scalar_panels *pan, double *row,
                cl_progress *pr)
{
    uint64_t m = 0;
    if (!cl_tick(pr, 0, 0, d->n))
        return CL_SCAN_CANCELLED;
    for (uint64_t i = 1; i < d->n; i++) {
        if (!cl_tick(pr, i, i, d->n))
            return CL_SCAN_CANCELLED;
        double ri = rmax[i];
        if (pan)
            scalar_panels_row(pan, i, i, row);
        for (uint64_t j = 0; j < i; j++) {
            double x = pan ? row[j] : data_dist(d, metric, i, j);
            /* Between points, inf is a distance beyond double (metric.h
             * scales, so never an intermediate overflow), not an absent
             * edge: the engine refuses it. */
            if (!(x >= 0.0) || (d->kind == TOPOML_INPUT_POINTS && isinf(x)))
                return CL_SCAN_REFUSED;
            ri = x > ri ? x : ri;
            rmax[j] = x > rmax[j] ? x : rmax[j];
            if (x <= cut && x < INFINITY) {
                if (edges)
                    edges[m] = (topoml_edge){x, (uint32_t)j, (uint32_t)i};
                m++;
            }
        }
        rmax[i] = ri;
    }
    *count = m;
    return cl_tick(pr, 0, d->n, d->n) ? CL_SCAN_OK : CL_SCAN_CANCELLED;
}

/* ---- The edges of a point cloud under a threshold that cuts it ----
 *
 * For the euclidean, manhattan and chebyshev metrics every coordinate
 * differs by at most d(x, y), and d obeys the triangle inequality, so
 *  - the enclosing radius is at least half the diameter, which is at least
 *    the widest extent of one coordinate: a threshold below half of that is
 *    the engine's threshold as it is, no pass over all pairs needed;
 *  - two points within the threshold t lie in the same or adjacent cells of
 *    a grid of side >= t over (up to) three coordinates.
 * Only the pairs of adjacent cells are measured, with the engine's own
 * distance function, so the edges are exactly those of the full scan. The
 * sides carry a relative margin of 1e-9, far above the rounding of a
 * distance (a few ulps), so no pair at a computed distance <= t is missed. */
#define CL_GRID_AXES 3
#define CL_MARGIN 1e-9

static bool grid_applies(const struct topoml_data *d, uint32_t metric, double t, double *span,
                         uint32_t *axes)
{
    if (d->kind != TOPOML_INPUT_POINTS || !(t > 0.0) || !(t < INFINITY) || d->dim == 0 ||
        (metric != TOPOML_METRIC_EUCLIDEAN && metric != TOPOML_METRIC_MANHATTAN &&
         metric != TOPOML_METRIC_CHEBYSHEV))
        return false;
    const uint64_t n = d->n, dim = d->dim;
    double widest = 0.0;
    for (uint64_t c = 0; c < dim; c++) {
        double lo = INFINITY, hi = -INFINITY;
        for (uint64_t i = 0; i < n; i++) {
            double x = d->values[i * dim + c];
            lo = x < lo ? x : lo;
            hi = x > hi ? x : hi;
        }
        span[c] = hi - lo;
        widest = span[c] > widest ? span[c] : widest;
    }
    if (!(t < 0.5 * widest * (1.0 - CL_MARGIN)))
        return false;
    /* The grid's axes: the coordinates of widest extent. */
    uint32_t g = dim < CL_GRID_AXES ? (uint32_t)dim : CL_GRID_AXES;
    for (uint32_t a = 0; a < g; a++) {
        uint32_t best = UINT32_MAX;
        for (uint32_t c = 0; c < dim; c++) {
            bool used = false;
            for (uint32_t b = 0; b < a; b++)
                used = used || axes[b] == c;
            if (!used && (best == UINT32_MAX || span[c] > span[best]))
                best = c;
        }
        axes[a] = best;
    }
    return true;
}

typedef struct cl_cell {
    uint64_t key;
    uint32_t point;
} cl_cell;

static int cell_cmp(const void *a, const void *b)
{
    const cl_cell *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->point < y->point ? -1 : x->point > y->point;
}

/* The edges within t of a point cloud for which grid_applies, into *out
 * (tm_alloc'd, grown as needed; the memory limit is checked as it grows). */
static int grid_edges(topoml_context *ctx, const struct topoml_data *d, uint32_t metric,
                      double t, const uint32_t *axes, topoml_edge **out, uint64_t *count,
                      cl_progress *pr)
{
    const uint64_t n = d->n, dim = d->dim;
    const uint32_t g = dim < CL_GRID_AXES ? (uint32_t)dim : CL_GRID_AXES;
    double side = t * (1.0 + CL_MARGIN), lo[CL_GRID_AXES];
    uint64_t cells[CL_GRID_AXES];
    for (uint32_t a = 0; a < g; a++) {
        lo[a] = INFINITY;
        double hi = -INFINITY;
        for (uint64_t i = 0; i < n; i++) {
            double x = d->values[i * dim + axes[a]];
            lo[a] = x < lo[a] ? x : lo[a];
            hi = x > hi ? x : hi;
        }
        cells[a] = (uint64_t)((hi - lo[a]) / side) + 1;
        if (cells[a] > (1u << 20)) /* keys stay within 64 bits: wider cells are as good */
            cells[a] = 1u << 20;
    }
    double width[CL_GRID_AXES];
    for (uint32_t a = 0; a < g; a++) {
        double hi = lo[a];
        for (uint64_t i = 0; i < n; i++)
            hi = d->values[i * dim + axes[a]] > hi ? d->values[i * dim + axes[a]] : hi;
        width[a] = (hi - lo[a]) / (double)cells[a];
        if (width[a] < side)
            width[a] = side;
    }
    cl_cell *pt = tm_alloc(ctx, (size_t)n * sizeof *pt);
    if (!pt)
        return tm_nomem(ctx, (size_t)n * sizeof *pt);
    for (uint64_t i = 0; i < n; i++) {
        uint64_t key = 0;
        for (uint32_t a = 0; a < g; a++) {
            uint64_t q = (uint64_t)((d->values[i * dim + axes[a]] - lo[a]) / width[a]);
            key = key * cells[a] + (q < cells[a] ? q : cells[a] - 1);
        }
        pt[i] = (cl_cell){key, (uint32_t)i};
    }
    qsort(pt, (size_t)n, sizeof *pt, cell_cmp);

    uint64_t cap = 0, m = 0;
    topoml_edge *e = NULL;
    int rc = TOPOML_OK;
    if (!cl_tick(pr, 0, 0, n))
        rc = TOPOML_E_CANCELLED;
    for (uint64_t p = 0; p < n && rc == TOPOML_OK;) {
        /* points of the cells done, of n; the clock read at every cell */
        if (!cl_tick(pr, CL_REPORT_WORK, p, n)) {
            rc = TOPOML_E_CANCELLED;
            break;
        }
        uint64_t pe = p;
        while (pe < n && pt[pe].key == pt[p].key)
            pe++;
        /* This cell's coordinates, and every neighbour cell with a larger key
         * (each pair of cells once; pairs within the cell once). */
        uint64_t coord[CL_GRID_AXES], rest = pt[p].key;
        for (uint32_t a = g; a-- > 0;) {
            coord[a] = rest % cells[a];
            rest /= cells[a];
        }
        uint32_t n_off = 1;
        for (uint32_t a = 0; a < g; a++)
            n_off *= 3;
        for (uint32_t o = 0; o < n_off && rc == TOPOML_OK; o++) {
            uint64_t key = 0;
            bool inside = true;
            uint32_t code = o;
            for (uint32_t a = 0; a < g; a++) {
                int64_t c = (int64_t)coord[a] + (int64_t)(code % 3) - 1;
                code /= 3;
                inside = inside && c >= 0 && (uint64_t)c < cells[a];
                key = key * cells[a] + (uint64_t)(inside ? c : 0);
            }
            if (!inside || key < pt[p].key)
                continue;
            uint64_t q0 = pe, q1 = pe;
            if (key == pt[p].key) {
                q0 = p;
                q1 = pe;
            } else {
                uint64_t lo_i = pe, hi_i = n;
                while (lo_i < hi_i) {
                    uint64_t mid = lo_i + (hi_i - lo_i) / 2;
                    if (pt[mid].key < key)
                        lo_i = mid + 1;
                    else
                        hi_i = mid;
                }
                q0 = q1 = lo_i;
                while (q1 < n && pt[q1].key == key)
                    q1++;
            }
            for (uint64_t x = p; x < pe && rc == TOPOML_OK; x++)
                for (uint64_t y = key == pt[p].key ? x + 1 : q0; y < q1; y++) {
                    uint32_t i = pt[x].point, j = pt[y].point;
                    if (i < j) {
                        uint32_t z = i;
                        i = j;
                        j = z;
                    }
                    double dist = data_dist(d, metric, i, j);
                    if (!(dist <= t))
                        continue;
                    if (m == cap) {
                        uint64_t nc = cap ? cap + cap / 2 : 4096;
                        rc = tm_check_memory(ctx, nc * sizeof *e, "the edges to collapse");
                        topoml_edge *ne = rc == TOPOML_OK
                                              ? tm_realloc(ctx, e, (size_t)nc * sizeof *e)
                                              : NULL;
                        if (!ne) {
                            if (rc == TOPOML_OK)
                                rc = tm_nomem(ctx, (size_t)nc * sizeof *e);
                            break;
                        }
                        e = ne;
                        cap = nc;
                    }
                    e[m++] = (topoml_edge){dist, j, i};
                }
        }
        p = pe;
    }
    tm_free(ctx, pt);
    if (rc == TOPOML_OK && !cl_tick(pr, 0, n, n))
        rc = TOPOML_E_CANCELLED;
    if (rc != TOPOML_OK) {
        tm_free(ctx, e);
        return rc;
    }
    *out = e;
    *count = m;
    return TOPOML_OK;
}

/* The working memory tm_collapse_edges checks for m edges of n vertices,
 * at least (its adjacency, twice, the edges' times, its per-vertex arrays
 * and the n x n table when it takes one; the threads' arrays come on top
 * where they are used). Checked, as the edge list is, before the edges are listed, so
 * that a collapse that cannot fit is never begun: each buffer against the
 * limit, as every check of the library does. */
static uint64_t cl_bytes(uint64_t n, uint64_t m)
{
    const uint64_t per_edge = 4 * sizeof(cl_adj) + sizeof(uint32_t);
    const uint64_t per_vertex =
        4 * sizeof(uint64_t) + 2 * sizeof(uint32_t) + sizeof(cl_common) + 12;
    if (m > UINT64_MAX / 2 / per_edge || n > UINT32_MAX)
        return UINT64_MAX;
    /* the n x n table of times, when tm_collapse_edges takes it */
    const bool dense =
        n * n <= CL_DENSE_FACTOR * 2 * m || n * n * sizeof(uint32_t) <= CL_DENSE_BYTES;
    return m * per_edge + n * per_vertex + (dense ? n * n * sizeof(uint32_t) : 0);
}

uint64_t tm_edges_estimate(const struct topoml_data *d, uint32_t metric, double threshold)
{
    const uint64_t n = d->n, pairs = n > 1 ? n * (n - 1) / 2 : 0;
    if (d->kind == TOPOML_INPUT_SPARSE)
        return d->n_edges;
    if (!(threshold < INFINITY) || pairs == 0 || d->memory != TOPOML_MEMORY_HOST ||
        (d->kind != TOPOML_INPUT_POINTS && d->kind != TOPOML_INPUT_CONDENSED))
        return pairs;
    /* 4096 pairs drawn by a fixed generator: the share within the threshold */
    const uint64_t draws = pairs < 4096 ? pairs : 4096;
    uint64_t s = 0x2545f4914f6cdd1du, within = 0;
    for (uint64_t k = 0; k < draws; k++) {
        uint64_t i, j;
        if (draws == pairs) {
            /* every pair, in order */
            i = 1;
            uint64_t q = k;
            while (q >= i)
                q -= i++;
            j = q;
        } else {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            i = 1 + s % (n - 1);
            j = (s >> 32) % i;
        }
        within += data_dist(d, metric, i, j) <= threshold;
    }
    return (uint64_t)((double)pairs * (double)within / (double)draws + 0.5);
}

/* The size rule of TOPOML_COLLAPSE_AUTO. The probe (tm_collapse_edges)
 * says whether the collapse removes enough; it cannot say whether removing
 * it pays, and on the everyday input — a few hundred to a few thousand
 * points, H1, no threshold, so the complex is nearly every pair — it does
 * not: the collapse costs 3 to 11 times the reduction there (a 300-point
 * circle: 0.58 s of collapse for a 0.14 s reduction, CPU, loaded 2-core
 * machine; docs/notes/bench-cpu.md, "Round 12").
 *
 * The collapse's cost: each step merges the lists of its edge's two ends,
 * so the stage reads about sum deg(v)^2 entries, CL_NS_DEG2 each (the
 * well-sampled clouds measured take 4-6 ns an entry; a circle, whose
 * dominators are hard to find, 25: the least is taken, so that the rule
 * errs towards collapsing).
 * The reduction's: H1 takes each edge as a column, most in an apparent pair
 * found among its first cofacets: CL_NS_EDGE + CL_NS_EDGE_DEG * deg a column
 * (fitted on uniform clouds at the enclosing radius; a circle's columns cost
 * more). From H2 on the columns are the triangles, about sum deg^2 / 12 of
 * them (a vertex's pairs of neighbours, half of them adjacent in a
 * well-sampled cloud, each triangle seen from its 3 vertices), each with
 * cofacets among its vertices' common neighbours: CL_NS_TRI (1 + deg /
 * CL_TRI_DEG) a column, and each dimension above multiplies the count by
 * about deg / 4. The collapse is worth trying when its cost is below the
 * reduction's: it can save no more than that. */
#define CL_NS_DEG2 4.0
#define CL_NS_EDGE 200.0
#define CL_NS_EDGE_DEG 1.0
#define CL_NS_TRI 40.0
#define CL_TRI_DEG 16.0

tm_collapse_plan tm_collapse_plan_for(const tm_collapse_sizes *s)
{
    tm_collapse_plan p = {true, 0.0, 0.0};
    if (s->n == 0 || s->m == 0 || s->max_dim == 0)
        return p;
    const double n = (double)s->n, m = (double)s->m;
    const double least = 4.0 * m * m / n;
    const double deg2 = s->sum_deg2 > least ? s->sum_deg2 : least;
    const double deg = 2.0 * m / n;
    p.collapse_s = CL_NS_DEG2 * deg2 * 1e-9;
    if (s->max_dim == 1) {
        p.reduction_s = m * (CL_NS_EDGE + CL_NS_EDGE_DEG * deg) * 1e-9;
    } else {
        double cols = deg2 / 12.0;
        for (uint32_t k = 2; k < s->max_dim && cols < 1e30; k++)
            cols *= deg / 4.0 > 1.0 ? deg / 4.0 : 1.0;
        p.reduction_s = cols * CL_NS_TRI * (1.0 + deg / CL_TRI_DEG) * 1e-9;
    }
    p.worth = p.collapse_s < p.reduction_s;
    return p;
}

/* The size rule, for tm_collapse_input: false (and out->plan says why) when
 * the collapse is not worth running. */
static bool plan_says_go(tm_collapsed *out, uint64_t n, uint64_t m, double sum_deg2,
                         double min_removed, uint32_t max_dim)
{
    if (!(min_removed > 0.0) || max_dim == 0)
        return true;
    const tm_collapse_sizes s = {n, m, sum_deg2, max_dim};
    out->planned = true;
    out->plan = tm_collapse_plan_for(&s);
    return out->plan.worth;
}

int tm_collapse_input(topoml_context *ctx, const struct topoml_data *d, uint32_t metric,
                      double threshold, double min_removed, uint32_t max_dim, unsigned threads,
                      tm_collapsed *out)
{
    memset(out, 0, sizeof *out);
    out->threshold = threshold;
    const uint64_t n = d->n;
    if (n < 3 || n >= UINT32_MAX)
        return TOPOML_OK;
    double radius = INFINITY;
    uint64_t m = 0;
    topoml_edge *edges = NULL;
    cl_progress pr = {ctx, NULL, 0, {0, 0}, false};
    if (d->kind == TOPOML_INPUT_SPARSE) {
        uint64_t *deg = tm_calloc(ctx, (size_t)n, sizeof *deg);
        double *rmax = tm_calloc(ctx, (size_t)n, sizeof *rmax);
        if (!deg || !rmax) {
            tm_free(ctx, deg);
            tm_free(ctx, rmax);
            return tm_nomem(ctx, (size_t)n * 16);
        }
        bool ok = true;
        for (uint64_t q = 0; q < d->n_edges && ok; q++) {
            const topoml_edge *x = &d->edges[q];
            ok = x->i < x->j && x->j < n && x->d >= 0.0;
            if (ok && x->d < INFINITY) {
                deg[x->i]++;
                deg[x->j]++;
                rmax[x->i] = x->d > rmax[x->i] ? x->d : rmax[x->i];
                rmax[x->j] = x->d > rmax[x->j] ? x->d : rmax[x->j];
            }
        }
        for (uint64_t v = 0; v < n && ok; v++)
            if (deg[v] >= n - 1 && rmax[v] < radius)
                radius = rmax[v];
        tm_free(ctx, deg);
        tm_free(ctx, rmax);
        if (!ok)
            return TOPOML_OK; /* the backend names the bad edge */
        double t = threshold < radius ? threshold : radius;
        for (uint64_t q = 0; q < d->n_edges; q++)
            m += d->edges[q].d <= t && d->edges[q].d < INFINITY;
        int rc = tm_check_memory(ctx, m * sizeof *edges, "the edges to collapse");
        if (rc == TOPOML_OK)
            rc = tm_check_memory(ctx, cl_bytes(n, m), "the edge collapse");
        if (rc != TOPOML_OK)
            return rc;
        edges = tm_alloc(ctx, (size_t)(m ? m : 1) * sizeof *edges);
        if (!edges)
            return tm_nomem(ctx, (size_t)m * sizeof *edges);
        m = 0;
        for (uint64_t q = 0; q < d->n_edges; q++)
            if (d->edges[q].d <= t && d->edges[q].d < INFINITY)
                edges[m++] = d->edges[q];
        out->threshold = t;
    } else {
        if (d->kind == TOPOML_INPUT_POINTS)
            for (uint64_t q = 0; q < n * d->dim; q++)
                if (!isfinite(d->values[q]))
                    return TOPOML_OK; /* the backend names the coordinate */
        double *span = tm_alloc(ctx, (size_t)(d->dim ? d->dim : 1) * sizeof *span);
        if (!span)
            return tm_nomem(ctx, (size_t)d->dim * sizeof *span);
        uint32_t axes[CL_GRID_AXES];
        bool grid = grid_applies(d, metric, threshold, span, axes);
        tm_free(ctx, span);
        if (grid) {
            cl_stage(&pr, "collapse edges");
            int rc = grid_edges(ctx, d, metric, threshold, axes, &edges, &m, &pr);
            if (rc != TOPOML_OK)
                return rc;
            out->threshold = threshold;
            goto collapse;
        }
        /* With no threshold the edges may be all the pairs: if they and the
         * collapse's working memory cannot fit, leave the input to the
         * backend (it refuses what it cannot do up front, before any pass
         * over the pairs), rather than scanning and listing them. */
        if (!(threshold < INFINITY)) {
            uint64_t pairs = n * (n - 1) / 2;
            const uint64_t limit = tm_max_memory(ctx);
            if (limit && (pairs > UINT64_MAX / sizeof *edges || pairs * sizeof *edges > limit)) {
                tm_log(ctx, TOPOML_LOG_INFO,
                       "edge collapse: not done; the list of its %llu pairs needs about %.1f "
                       "MiB, above the memory limit",
                       (unsigned long long)pairs, (double)pairs * sizeof *edges / 1048576.0);
                return TOPOML_OK;
            }
        }
        /* The size rule from a sample, before any pass over the pairs: the
         * farthest point of 16 vertices bounds the enclosing radius from
         * above, and 4096 pairs drawn by a fixed generator give the share
         * within it. Too many edges make the collapse look dearer (it grows
         * as their square, the reduction about linearly), so only a clear
         * verdict, twice over, is taken from here; the passes below count. */
        if (min_removed > 0.0 && max_dim > 0) {
            double bound = threshold;
            for (uint64_t k = 0; k < 16 && k < n; k++) {
                const uint64_t i = k * n / 16;
                double far = 0.0;
                for (uint64_t j = 0; j < n; j++) {
                    const double x = j == i ? 0.0 : j < i ? data_dist(d, metric, i, j)
                                                          : data_dist(d, metric, j, i);
                    far = x > far ? x : far;
                }
                bound = far < bound ? far : bound;
            }
            const uint64_t guess = tm_edges_estimate(d, metric, bound);
            if (!plan_says_go(out, n, guess, 0.0, min_removed, max_dim) &&
                out->plan.collapse_s > 2.0 * out->plan.reduction_s) {
                out->n_before = guess;
                return TOPOML_OK;
            }
        }
        double *rmax = tm_calloc(ctx, (size_t)n, sizeof *rmax);
        if (!rmax)
            return tm_nomem(ctx, (size_t)n * sizeof *rmax);
        /* A point cloud's rows through metric_rows.h, when its panels (a
         * copy of the points) and a row fit under the memory limit; pair
         * by pair otherwise. */
        scalar_panels panels, *pan = NULL;
        void *pan_mem = NULL;
        double *row = NULL;
        const bool wide = scalar_rows_wide();
        const uint64_t pan_bytes = d->kind == TOPOML_INPUT_POINTS
                                       ? scalar_panels_bytes(TOPOML_F64, (topoml_metric)metric,
                                                             n, d->dim, wide)
                                       : 0;
        if (pan_bytes > 0 &&
            tm_check_memory(ctx, pan_bytes + n * sizeof *row, "the edge collapse") == TOPOML_OK) {
            pan_mem = tm_alloc(ctx, (size_t)pan_bytes);
            row = tm_alloc(ctx, (size_t)n * sizeof *row);
            if (pan_mem && row) {
                scalar_panels_fill(&panels, TOPOML_F64, (topoml_metric)metric, d->values, n,
                                   d->dim, wide, pan_mem);
                pan = &panels;
            }
        }
        /* Count first (the threshold may be the enclosing radius, known only
         * after a pass), then fill: the memory check sees the exact size. A
         * distance the engine refuses leaves the input as it is: the backend
         * names it. */
        int rc = TOPOML_OK;
        double t = threshold;
        /* stages "collapse distances" (and "... within the radius"), then
         * "collapse edges": rows of n, each pass */
        cl_stage(&pr, "collapse distances");
        int sc = scan(d, metric, threshold, rmax, NULL, &m, pan, row, &pr);
        const bool refused = sc == CL_SCAN_REFUSED;
        if (sc == CL_SCAN_CANCELLED)
            rc = TOPOML_E_CANCELLED;
        if (sc == CL_SCAN_OK) {
            for (uint64_t v = 0; v < n; v++)
                radius = rmax[v] < radius ? rmax[v] : radius;
            t = threshold < radius ? threshold : radius;
            if (t < threshold) {
                memset(rmax, 0, (size_t)n * sizeof *rmax);
                cl_stage(&pr, "collapse distances within the radius");
                if (scan(d, metric, t, rmax, NULL, &m, pan, row, &pr) == CL_SCAN_CANCELLED)
                    rc = TOPOML_E_CANCELLED;
            }
            /* The count alone may settle the size rule (with the least
             * sum of squared degrees): then no edge is stored or sorted. */
            if (rc == TOPOML_OK && !plan_says_go(out, n, m, 0.0, min_removed, max_dim)) {
                out->n_before = m;
                out->threshold = t;
                tm_free(ctx, rmax);
                tm_free(ctx, pan_mem);
                tm_free(ctx, row);
                return TOPOML_OK;
            }
            if (rc == TOPOML_OK)
                rc = tm_check_memory(ctx, m * sizeof *edges, "the edges to collapse");
            if (rc == TOPOML_OK)
                rc = tm_check_memory(ctx, cl_bytes(n, m), "the edge collapse");
            if (rc == TOPOML_OK) {
                edges = tm_alloc(ctx, (size_t)(m ? m : 1) * sizeof *edges);
                rc = edges ? TOPOML_OK : tm_nomem(ctx, (size_t)m * sizeof *edges);
            }
            if (rc == TOPOML_OK) {
                memset(rmax, 0, (size_t)n * sizeof *rmax);
                cl_stage(&pr, "collapse edges");
                if (scan(d, metric, t, rmax, edges, &m, pan, row, &pr) == CL_SCAN_CANCELLED)
                    rc = TOPOML_E_CANCELLED;
            }
        }
        tm_free(ctx, rmax);
        tm_free(ctx, pan_mem);
        tm_free(ctx, row);
        if (rc == TOPOML_E_CANCELLED) {
            tm_free(ctx, edges);
            return rc;
        }
        if (refused)
            return TOPOML_OK;
        if (rc != TOPOML_OK) {
            tm_free(ctx, edges);
            return rc;
        }
        out->threshold = t;
    }
collapse:
    out->n_before = m;
    if (min_removed > 0.0 && max_dim > 0 && m > 0) {
        /* the size rule again, on the degrees themselves */
        uint32_t *deg = tm_calloc(ctx, (size_t)n, sizeof *deg);
        if (deg) {
            for (uint64_t e = 0; e < m; e++) {
                deg[edges[e].i]++;
                deg[edges[e].j]++;
            }
            double sum = 0.0;
            for (uint64_t v = 0; v < n; v++)
                sum += (double)deg[v] * (double)deg[v];
            tm_free(ctx, deg);
            if (!plan_says_go(out, n, m, sum, min_removed, max_dim)) {
                tm_free(ctx, edges);
                return TOPOML_OK;
            }
        }
    }
    /* stage "collapse sort": told as it begins and as it ends (a cancel
     * takes effect at the end) */
    cl_stage(&pr, "collapse sort");
    if (!cl_tick(&pr, 0, 0, m)) {
        tm_free(ctx, edges);
        return TOPOML_E_CANCELLED;
    }
    if (m > 0) /* no edges: `edges` may be NULL */
        tm_collapse_sort_edges(ctx, edges, m, threads);
    if (!cl_tick(&pr, 0, m, m)) {
        tm_free(ctx, edges);
        return TOPOML_E_CANCELLED;
    }
    /* The moves themselves stay in order on one thread, about a quarter of
     * the stage: on 2 or 3 threads the rest gains too little to pay for
     * handing batches over (the 50k torus on a 2-core machine with other
     * work: 14.1 s on 2 threads against 11.0 s on one). The sort above
     * gains from 2 on. */
    if (threads < CL_MIN_THREADS)
        threads = 1;
    /* On a dense graph nearly every move touches every later step's common
     * neighbours, so the look-ahead would mostly be redone in order
     * (celegans, 94% of all pairs: 0.18 s on 16 threads in process against
     * 0.08 s before the collapse had threads). */
    if (m > n * n / 4)
        threads = 1;
    int rc = tm_collapse_edges(ctx, n, edges, m, min_removed, threads, &out->n_edges, &out->probe);
    if (rc != TOPOML_OK || out->probe.declined) {
        tm_free(ctx, edges);
        return rc;
    }
    out->edges = edges;
    out->done = true;
    return TOPOML_OK;
}
