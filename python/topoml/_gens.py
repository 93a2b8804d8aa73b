"""giotto-ph's layout of the generators (``ripser_parallel(...,
return_generators=True)``) from what the engine gives.

The engine gives, for every interval, the edge that gives its birth value
and the edge that gives its death value (``-1`` where there is none: births
in dimension 0, infinite deaths), one ``(k, 4)`` array per dimension in the
order of the diagrams. giotto-ph's ``gens`` is a tuple of four entries:

0. ``(k0, 3)``: the finite bars of H0 as (birth vertex, death edge);
1. a list of ``(k, 4)`` arrays, H1..H_maxdim: (birth edge, death edge);
2. ``(e0,)``: the vertex that gives each essential bar of H0 its birth;
3. a list of ``(e, 2)`` arrays, H1..H_maxdim: the birth edge of each
   essential bar.

Every edge is written as (larger vertex, smaller vertex), as giotto-ph does.

The birth vertex of H0. In a Rips filtration every vertex is born at 0, so
any vertex of the dying component would give the birth value; giotto-ph
names one chosen by its union-find. ``h0`` replays that union-find (union by
rank; the surviving root inherits the birth vertex of the root it absorbs;
Kruskal's order: ascending length, among equal lengths the larger edge index
first) over the death edges the engine found, so that the vertex is the one
giotto-ph gives whenever the two agree on the spanning tree, which they do
when no two edges have the same length. Merges at length 0 (duplicate
points) give no bar; the binding hands over the edges of length 0 when
there are any (``zero``), and they are replayed first, as in Kruskal's
order.

The diagrams are put in the matching order: H0's finite bars in Kruskal's
order then the essential ones by vertex, H1 and up sorted by (birth, death)
descending, then the essential ones by birth descending, like giotto-ph's.

Not here: the computation (``_rips``) and the C binding (``_core``).
"""
import numpy as np


def _edges_max_min(e):
    """(k, 2) edges as (larger vertex, smaller vertex)."""
    e = np.asarray(e, dtype=np.int64).reshape(-1, 2)
    return np.stack([e.max(axis=1), e.min(axis=1)], axis=1) if len(e) else e.copy()


def _edge_index(e):
    """Ripser's index of edges given as (larger, smaller) vertex."""
    return e[:, 0] * (e[:, 0] - 1) // 2 + e[:, 1]


def h0(dgm, gen, n, zero=None):
    """(finite (k, 3), essential (e,), order) for H0: the diagram rows in
    ``order`` are the finite bars in Kruskal's order, then the essential
    ones; `gen` is the engine's (k, 4) array for H0, `n` the point count,
    `zero` the (k, 2) edges of length 0 (or None)."""
    finite = np.flatnonzero(np.isfinite(dgm[:, 1]))
    essential = np.flatnonzero(~np.isfinite(dgm[:, 1]))
    death = _edges_max_min(gen[finite, 2:4])
    kruskal = np.lexsort((-_edge_index(death), dgm[finite, 1]))
    parent = list(range(n))
    rank = [0] * n
    born = list(range(n))  # born[root]: the birth vertex the root's component names

    def find(x):
        root = x
        while parent[root] != root:
            root = parent[root]
        while parent[x] != root:
            parent[x], x = root, parent[x]
        return root

    def link(hi, lo):
        """Merge the components of hi and lo; the birth vertex it names."""
        x, y = find(lo), find(hi)
        vertex = born[y]
        if rank[x] < rank[y]:
            parent[x] = y
            born[y] = born[x]
        elif x != y:
            parent[y] = x
            if rank[x] == rank[y]:
                rank[x] += 1
        return vertex

    if zero is not None and len(zero):
        zero = _edges_max_min(zero)
        for hi, lo in zero[np.argsort(-_edge_index(zero), kind="stable")].tolist():
            link(hi, lo)
    rows = np.empty((len(finite), 3), dtype=np.int64)
    for r, k in enumerate(kruskal):
        hi, lo = int(death[k, 0]), int(death[k, 1])
        rows[r] = (link(hi, lo), hi, lo)
    roots = np.array([born[i] for i in range(n) if find(i) == i], dtype=np.int64)
    if len(roots) != len(essential):
        raise RuntimeError("topoml: %d components but %d essential bars in H0"
                           % (len(roots), len(essential)))
    return rows, roots, np.concatenate([finite[kruskal], essential])


def higher(dgm, gen):
    """(finite (k, 4), essential (e, 2), order) for one dimension >= 1."""
    finite = np.flatnonzero(np.isfinite(dgm[:, 1]))
    essential = np.flatnonzero(~np.isfinite(dgm[:, 1]))
    finite = finite[np.lexsort((-dgm[finite, 1], -dgm[finite, 0]))]
    essential = essential[np.argsort(-dgm[essential, 0], kind="stable")]
    rows = np.concatenate([_edges_max_min(gen[finite, 0:2]), _edges_max_min(gen[finite, 2:4])],
                          axis=1) if len(finite) else np.empty((0, 4), dtype=np.int64)
    return rows, _edges_max_min(gen[essential, 0:2]), np.concatenate([finite, essential])


def giotto(dgms, gens, n, zero=None):
    """(diagrams reordered, giotto-ph's gens tuple) from the engine's
    diagrams and generators (lists indexed by dimension) and the edges of
    length 0."""
    f0, e0, order = h0(dgms[0], gens[0], n, zero)
    out = [dgms[0][order]]
    finite, essential = [], []
    for d in range(1, len(dgms)):
        f, e, order = higher(dgms[d], gens[d])
        out.append(dgms[d][order])
        finite.append(f)
        essential.append(e)
    return out, (f0, finite, e0, essential)
