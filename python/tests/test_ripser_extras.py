"""ripser.py's greedy subsampling (n_perm), dperm2all as a real key of the
result, and ripser.py's input warnings, against the real ripser.py."""
import copy
import pickle
import warnings

import numpy as np
import pytest

import topoml
from topoml._rips import RipserResult, greedy_permutation
from conftest import assert_same_dgms, cloud

ripser_py = pytest.importorskip("ripser")


@pytest.mark.parametrize("kind,n,n_perm,dim", [("uniform", 200, 40, 3), ("circle", 300, 60, 2),
                                                ("clusters", 150, 30, 2)])
def test_n_perm_equals_ripser_py_on_points(kind, n, n_perm, dim):
    X = cloud(np.random.default_rng(n), kind, n, dim)
    want = ripser_py.ripser(X, maxdim=1, n_perm=n_perm)
    got = topoml.ripser(X, maxdim=1, n_perm=n_perm)
    np.testing.assert_array_equal(got["idx_perm"], want["idx_perm"])
    assert got["r_cover"] == pytest.approx(want["r_cover"], rel=1e-12)
    assert got["dperm2all"].shape == (n_perm, n)
    np.testing.assert_allclose(got["dperm2all"], want["dperm2all"], rtol=1e-10, atol=1e-12)
    assert_same_dgms(got["dgms"], want["dgms"])
    assert got["num_edges"] == want["num_edges"]


def test_n_perm_on_a_distance_matrix_with_ties_is_ripser_pys_exactly():
    # A grid: the distances are full of exact ties, so the tie rule decides.
    g = np.array([(i, j) for i in range(7) for j in range(7)], dtype=float)
    D = np.sqrt(((g[:, None, :] - g[None, :, :]) ** 2).sum(-1))
    want = ripser_py.ripser(D, maxdim=1, distance_matrix=True, n_perm=20)
    got = topoml.ripser(D, maxdim=1, distance_matrix=True, n_perm=20)
    np.testing.assert_array_equal(got["idx_perm"], want["idx_perm"])
    assert got["r_cover"] == want["r_cover"]
    np.testing.assert_array_equal(got["dperm2all"], want["dperm2all"])
    assert_same_dgms(got["dgms"], want["dgms"])


@pytest.mark.parametrize("metric", ["euclidean", "sqeuclidean", "manhattan", "chebyshev",
                                    "cosine"])
def test_one_to_all_distances_are_topomls(metric):
    X = np.random.default_rng(5).normal(size=(40, 5))
    idx, lambdas, d2all = greedy_permutation(X, 10, metric=metric)
    full = topoml.features.squareform(topoml.distances(X, metric=metric))
    np.testing.assert_array_equal(d2all, full[idx])
    assert lambdas[-1] == full[idx][:, :].min(0).max()


def test_n_perm_with_another_metric_goes_through_scikit_learn():
    X = np.random.default_rng(6).normal(size=(60, 3))
    want = ripser_py.ripser(X, maxdim=1, n_perm=15, metric="braycurtis")
    got = topoml.ripser(X, maxdim=1, n_perm=15, metric="braycurtis")
    np.testing.assert_array_equal(got["idx_perm"], want["idx_perm"])
    assert_same_dgms(got["dgms"], want["dgms"])


def test_n_perm_equal_to_n_or_none_is_the_full_computation():
    X = cloud(np.random.default_rng(7), "uniform", 30, 2)
    full = topoml.ripser(X)
    for n_perm in (None, 0, 30):
        r = topoml.ripser(X, n_perm=n_perm)
        np.testing.assert_array_equal(r["idx_perm"], np.arange(30))
        assert r["r_cover"] == 0.0
        assert_same_dgms(r["dgms"], full["dgms"], tol=0)


def test_bad_n_perm_is_refused_as_ripser_py_does():
    X = cloud(np.random.default_rng(8), "uniform", 20, 2)
    with pytest.raises(ValueError, match="greater than number of points"):
        topoml.ripser(X, n_perm=21)
    with pytest.raises(ValueError, match="strictly positive"):
        topoml.ripser(X, n_perm=-3)
    with pytest.raises(ValueError, match="integer"):
        topoml.ripser(X, n_perm=2.5)
    sparse = pytest.importorskip("scipy.sparse")
    D = sparse.coo_matrix(topoml.features.squareform(topoml.distances(X)))
    with pytest.raises(ValueError, match="sparse distance matrices"):
        topoml.ripser(D, distance_matrix=True, n_perm=5)


def test_dperm2all_is_a_real_key_made_when_first_read():
    X = cloud(np.random.default_rng(9), "uniform", 25, 2)
    D = topoml.features.squareform(topoml.distances(X))
    for r in (topoml.ripser(X), topoml.ripser(X.tolist())):  # compiled and Python paths
        assert isinstance(r, RipserResult)
        assert not dict.__contains__(r, "dperm2all")  # not made yet
        assert "dperm2all" in r and len(r) == 6
        assert not dict.__contains__(r, "dperm2all")  # `in` and len do not make it
        assert set(r.keys()) == {"dgms", "cocycles", "num_edges", "dperm2all", "idx_perm",
                                 "r_cover"}
        np.testing.assert_array_equal(r["dperm2all"], D)
    for read in (dict, copy.copy, copy.deepcopy, lambda r: pickle.loads(pickle.dumps(r)),
                 lambda r: r.copy(), lambda r: dict(r.items())):
        r = topoml.ripser(X)
        out = read(r)
        np.testing.assert_array_equal(out["dperm2all"], D)
        assert set(out) == set(ripser_py.ripser(X))
    r = topoml.ripser(X)
    back = pickle.loads(pickle.dumps(r))
    assert back.backend == r.backend and len(back) == 6 and "dperm2all" in back
    assert r.get("dperm2all") is r["dperm2all"] and r.get("nope", 1) == 1
    with pytest.raises(KeyError):
        r["nope"]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_ripser_pys_warnings(dtype):
    rng = np.random.default_rng(10)
    with pytest.warns(UserWarning, match="The input matrix is square, but the distance_matrix"):
        topoml.ripser(rng.random((6, 6)).astype(dtype))
    with pytest.warns(UserWarning, match="more columns than rows; did you mean to transpose"):
        topoml.ripser(rng.random((4, 9)).astype(dtype))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        topoml.ripser(rng.random((9, 4)).astype(dtype))
        D = topoml.features.squareform(topoml.distances(rng.random((6, 2))))
        topoml.ripser(D.astype(dtype), distance_matrix=True)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dperm2all_has_ripser_pys_type_and_format(dtype):
    sparse = pytest.importorskip("scipy.sparse")
    rng = np.random.default_rng(11)
    X = rng.random((30, 2)).astype(dtype)
    D = topoml.features.squareform(topoml.distances(X)).astype(dtype)
    S = sparse.coo_matrix(np.triu(D) * (D < 0.3))
    cases = [((X,), {}), ((D,), {"distance_matrix": True}),
             ((S,), {"distance_matrix": True}), ((S.tocsr(),), {"distance_matrix": True}),
             ((X,), {"n_perm": 10}), ((D,), {"distance_matrix": True, "n_perm": 10})]
    for args, kw in cases:
        got, want = topoml.ripser(*args, **kw)["dperm2all"], ripser_py.ripser(*args, **kw)["dperm2all"]
        what = "%s %s" % (type(args[0]).__name__, kw)
        assert type(got) is type(want), what
        assert got.dtype == want.dtype, what
        if sparse.issparse(want):
            assert got is args[0], what  # the matrix given, in its own format
        else:
            np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=what)
