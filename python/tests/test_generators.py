"""ripser_parallel(..., return_generators=True) against giotto-ph, run for
real: with no ties in the distances the generators are giotto-ph's arrays,
entry for entry (the H0 birth vertex included); with ties, every edge is an
edge of the complex whose length is its bar's birth or death value."""
import math

import numpy as np
import pytest
import scipy.sparse
from scipy.spatial.distance import pdist, squareform

import topoml
from conftest import assert_same_dgms, cloud

gph = pytest.importorskip("gph")


def untied_cloud(kind, n, dim, seed):
    """A seeded cloud whose pairwise distances differ even in float32
    (giotto-ph computes in float32): the first seed from `seed` on that
    gives one."""
    for s in range(seed, seed + 100):
        X = cloud(np.random.default_rng(s), kind, n, dim)
        d = pdist(X).astype(np.float32)
        if len(np.unique(d)) == len(d):
            return X
    raise AssertionError("no cloud without float32 ties from seed %d" % seed)


def assert_gens_equal(got, want):
    assert isinstance(got, tuple) and len(got) == 4
    f0, fh, e0, eh = got
    assert f0.dtype == np.int64 and f0.shape[1:] == (3,)
    np.testing.assert_array_equal(f0, want[0])
    np.testing.assert_array_equal(e0, want[2])
    assert len(fh) == len(want[1]) and len(eh) == len(want[3])
    for g, w in zip(fh, want[1]):
        assert g.shape[1:] == (4,)
        np.testing.assert_array_equal(g, w)
    for g, w in zip(eh, want[3]):
        assert g.shape[1:] == (2,)
        np.testing.assert_array_equal(g, w)


def inputs(X, thresh):
    """(topoml/giotto-ph input, metric) of every kind for cloud X: points,
    a dense distance matrix, a sparse one holding the pairs within thresh."""
    yield X, "euclidean"
    D = squareform(pdist(X))
    yield D, "precomputed"
    if math.isfinite(thresh):
        yield scipy.sparse.coo_matrix(np.triu(np.where(D <= thresh, D, 0), 1)), "precomputed"


@pytest.mark.parametrize("kind", ["uniform", "circle", "clusters"])
@pytest.mark.parametrize("cut", [False, True])
def test_generators_equal_giotto_ph_without_ties(kind, cut):
    for seed, (n, dim, maxdim) in enumerate([(8, 2, 1), (30, 2, 2), (45, 3, 2)]):
        X = untied_cloud(kind, n, dim, 100 * seed + len(kind))
        thresh = float(np.quantile(pdist(X), 0.3)) if cut else math.inf
        for A, metric in inputs(X, thresh):
            want = gph.ripser_parallel(A, maxdim=maxdim, thresh=thresh, metric=metric,
                                       return_generators=True)
            got = topoml.ripser_parallel(A, maxdim=maxdim, thresh=thresh, metric=metric,
                                         return_generators=True)
            assert set(got) == {"dgms", "gens"}
            assert_gens_equal(got["gens"], want["gens"])
            # the same bars in the same order (giotto-ph's are float32)
            for g, w in zip(got["dgms"], want["dgms"]):
                np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-7)


def check_edges(X, D, res, maxdim, thresh):
    """Each generator is an edge of the complex with the right length, and
    the H0 rows build a spanning forest whose merges name a vertex of one
    of the two components they join."""
    n = len(D)
    dgms, (f0, fh, e0, eh) = res["dgms"], res["gens"]
    D = D.astype(dgms[0].dtype)  # giotto-ph's diagrams are float32: lengths as they round
    assert len(dgms) == maxdim + 1 and len(fh) == len(eh) == maxdim
    fin0 = dgms[0][np.isfinite(dgms[0][:, 1])]
    assert len(f0) == len(fin0) and len(e0) == len(dgms[0]) - len(fin0)
    comp = np.arange(n)
    for i, j in zip(*np.nonzero(np.tril(D == 0, -1))):  # duplicates: merged at 0, no bar
        comp[comp == comp[i]] = comp[j]
    for (v, i, j), (birth, death) in zip(f0, fin0):
        assert i > j and D[i, j] == death and birth == 0 and death <= thresh
        assert comp[i] != comp[j], "H0 death edge (%d, %d) closes a cycle" % (i, j)
        assert comp[v] in (comp[i], comp[j])
        comp[comp == comp[i]] = comp[j]
    assert sorted(comp[e0]) == sorted(set(comp)), "one essential vertex per component"
    for d in range(1, maxdim + 1):
        fin = dgms[d][np.isfinite(dgms[d][:, 1])]
        ess = dgms[d][~np.isfinite(dgms[d][:, 1])]
        assert len(fh[d - 1]) == len(fin) and len(eh[d - 1]) == len(ess)
        for (a, b, c, e), (birth, death) in zip(fh[d - 1], fin):
            assert a > b and c > e
            assert D[a, b] == birth and D[c, e] == death and death <= thresh
        for (a, b), (birth, _) in zip(eh[d - 1], ess):
            assert a > b and D[a, b] == birth


@pytest.mark.parametrize("maxdim", [1, 2])
@pytest.mark.parametrize("thresh", [math.inf, 2.0])
def test_generators_with_ties_are_edges_of_the_right_length(maxdim, thresh):
    rng = np.random.default_rng(3 + maxdim)
    grid = cloud(rng, "grid", 36, 2)
    lattice = rng.integers(0, 4, size=(40, 3)).astype(np.float64)  # ties and duplicates
    for X in (grid, lattice):
        D = squareform(pdist(X))  # integer coordinates: exact lengths on both sides
        plain = topoml.ripser_parallel(X, maxdim=maxdim, thresh=thresh)
        for A, metric in ((X, "euclidean"), (D, "precomputed")):
            res = topoml.ripser_parallel(A, maxdim=maxdim, thresh=thresh, metric=metric,
                                         return_generators=True)
            check_edges(X, D, res, maxdim, thresh)
            assert_same_dgms(res["dgms"], plain["dgms"])
            assert_same_dgms(res["dgms"], gph.ripser_parallel(
                A, maxdim=maxdim, thresh=thresh, metric=metric)["dgms"])


def test_generators_of_tiny_inputs():
    # No points is refused, as giotto-ph refuses it (ValueError).
    with pytest.raises(ValueError, match="no points"):
        topoml.ripser_parallel(np.zeros((0, 2)), maxdim=1, return_generators=True)
    for n in (1, 2):
        X = np.arange(2.0 * n).reshape(n, 2)
        res = topoml.ripser_parallel(X, maxdim=1, return_generators=True)
        f0, fh, e0, eh = res["gens"]
        assert f0.shape == (max(n - 1, 0), 3) and e0.shape == (min(n, 1),)
        assert [a.shape for a in fh] == [(0, 4)] and [a.shape for a in eh] == [(0, 2)]
    assert topoml.ripser_parallel(np.zeros((2, 2)), return_generators=True)["gens"][2].tolist() \
        in ([0], [1])


def test_generators_skip_the_collapse_without_changing_bars():
    X = untied_cloud("clusters", 40, 3, 1)
    want = gph.ripser_parallel(X, maxdim=2, return_generators=True)
    got = topoml.ripser_parallel(X, maxdim=2, collapse_edges=True, return_generators=True)
    assert_gens_equal(got["gens"], want["gens"])


def without_merges_of_copies(gens, Y):
    """giotto-ph's generators less the finite H0 rows whose death edge joins
    two copies of one point. giotto-ph computes a point cloud's distances in
    float32 by a route that can leave two identical points at a distance of
    a few 1e-8 (seen on some CPUs and not on others): such a merge is then a
    bar of that length in its diagram, where the exact distance 0 gives none
    (topoml's answer, and giotto-ph's own on the distance matrix)."""
    f0 = gens[0]
    keep = [i for i, (_, a, b) in enumerate(f0) if not np.array_equal(Y[a], Y[b])]
    return (f0[keep],) + tuple(gens[1:])


def test_generators_with_duplicate_points_equal_giotto_ph():
    """Duplicates merge at length 0 and give no bar; the birth vertices
    giotto-ph names depend on those merges too."""
    for seed in range(5):
        rng = np.random.default_rng(seed)
        X = untied_cloud("uniform", 25, 2, 10 * seed)
        Y = np.concatenate([X, X[rng.integers(0, len(X), 6)]])
        rng.shuffle(Y)
        for A, metric in ((Y, "euclidean"), (squareform(pdist(Y)), "precomputed")):
            want = gph.ripser_parallel(A, maxdim=1, metric=metric, return_generators=True)
            got = topoml.ripser_parallel(A, maxdim=1, metric=metric, return_generators=True)
            f0 = got["gens"][0]
            assert not any(np.array_equal(Y[a], Y[b]) for _, a, b in f0)
            assert_gens_equal(got["gens"], without_merges_of_copies(want["gens"], Y))
