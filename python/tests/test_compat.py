"""topoml.ripser / topoml.ripser_parallel against ripser.py, giotto-ph and
GUDHI, run for real: Ripser's shipped examples and seeded random clouds of
every input kind (points, dense, condensed, sparse), float32 and float64,
C-ordered, Fortran-ordered and strided arrays."""
import math
import os

import numpy as np
import pytest
import scipy.sparse
from scipy.spatial.distance import pdist, squareform

import topoml
from conftest import assert_same_dgms, cloud, read_lower, same

ripser_py = pytest.importorskip("ripser")
gph = pytest.importorskip("gph")
gudhi = pytest.importorskip("gudhi")

KINDS = ["uniform", "circle", "clusters", "grid"]


def layouts(X):
    """The same values as C, Fortran and strided arrays."""
    yield "C", np.ascontiguousarray(X)
    yield "F", np.asfortranarray(X)
    big = np.zeros((X.shape[0] * 2, X.shape[1] * 3), dtype=X.dtype)
    big[::2, ::3] = X
    yield "strided", big[::2, ::3]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_points_equal_ripser_py(kind, dtype):
    rng = np.random.default_rng(sum(map(ord, kind)))
    X = cloud(rng, kind, 40, 3 if kind != "circle" else 2).astype(dtype)
    want = ripser_py.ripser(X, maxdim=2)
    for name, A in layouts(X):
        got = topoml.ripser(A, maxdim=2)
        assert_same_dgms(got["dgms"], want["dgms"])
        assert got["num_edges"] == want["num_edges"], name


@pytest.mark.parametrize("kind", KINDS)
def test_distance_inputs_equal_ripser_py(kind):
    rng = np.random.default_rng(7 + len(kind))
    X = cloud(rng, kind, 35, 3 if kind != "circle" else 2)
    D = squareform(pdist(X))
    want = ripser_py.ripser(D, maxdim=2, distance_matrix=True)
    for dtype in (np.float64, np.float32):
        for name, A in layouts(D.astype(dtype)):
            got = topoml.ripser(A, maxdim=2, distance_matrix=True)
            assert_same_dgms(got["dgms"], want["dgms"])
    # condensed, as scipy's pdist gives it
    assert_same_dgms(topoml.ripser(pdist(X), maxdim=2, distance_matrix=True)["dgms"],
                     want["dgms"])
    assert_same_dgms(topoml.barcodes(pdist(X), maxdim=2).diagrams, want["dgms"])


@pytest.mark.parametrize("thresh", [0.4, 0.8, math.inf])
def test_sparse_and_threshold_equal_ripser_py(thresh):
    rng = np.random.default_rng(3)
    X = cloud(rng, "uniform", 50, 2)
    D = squareform(pdist(X))
    cut = 0.9
    S = scipy.sparse.coo_matrix(np.where(D <= cut, D, 0))  # only upper-left? both triangles
    S = scipy.sparse.triu(S, 1).tocoo()
    want = ripser_py.ripser(S, maxdim=1, distance_matrix=True, thresh=thresh)
    got = topoml.ripser(S, maxdim=1, distance_matrix=True, thresh=thresh)
    assert_same_dgms(got["dgms"], want["dgms"])
    assert got["num_edges"] == want["num_edges"]
    # both triangles stored, as csr
    got2 = topoml.ripser(scipy.sparse.csr_matrix(S + S.T), maxdim=1, distance_matrix=True,
                         thresh=thresh)
    assert_same_dgms(got2["dgms"], want["dgms"])
    # a threshold on points
    assert_same_dgms(topoml.ripser(X, thresh=thresh)["dgms"],
                     ripser_py.ripser(X, thresh=thresh)["dgms"])


@pytest.mark.parametrize("metric", ["manhattan", "chebyshev", "cosine", "sqeuclidean",
                                    "braycurtis"])
def test_metrics_equal_ripser_py(metric):
    rng = np.random.default_rng(11)
    X = rng.uniform(0.1, 1, size=(30, 4))
    want = ripser_py.ripser(X, maxdim=1, metric=metric)
    got = topoml.ripser(X, maxdim=1, metric=metric)
    assert_same_dgms(got["dgms"], want["dgms"])


def test_result_dict_has_ripser_py_keys():
    X = cloud(np.random.default_rng(0), "circle", 30)
    got, want = topoml.ripser(X), ripser_py.ripser(X)
    assert set(want) == set(got)
    np.testing.assert_allclose(got["dperm2all"], want["dperm2all"], rtol=1e-6, atol=1e-6)
    assert got["cocycles"] == [[], []]
    np.testing.assert_array_equal(got["idx_perm"], want["idx_perm"])
    assert got["r_cover"] == want["r_cover"]
    with pytest.raises(ValueError, match="greater than number of points"):
        topoml.ripser(X, n_perm=31)


@pytest.mark.parametrize("example,maxdim", [("projective_plane.lower_distance_matrix", 2),
                                            ("random16.lower_distance_matrix", 4),
                                            ("random20.lower_distance_matrix", 3)])
@pytest.mark.parametrize("coeff", [2, 3])
def test_shipped_examples_equal_ripser_py(data_dir, example, maxdim, coeff):
    D = read_lower(os.path.join(data_dir, example))
    want = ripser_py.ripser(D, maxdim=maxdim, coeff=coeff, distance_matrix=True)
    got = topoml.ripser(D, maxdim=maxdim, coeff=coeff, distance_matrix=True)
    assert_same_dgms(got["dgms"], want["dgms"])
    assert got["num_edges"] == want["num_edges"]


def test_shipped_point_cloud_equal_ripser_py(data_dir, source_dir):
    X = np.loadtxt(os.path.join(source_dir, "docs", "examples", "circle60.csv"), delimiter=",")
    assert_same_dgms(topoml.ripser(X)["dgms"], ripser_py.ripser(X)["dgms"])
    O = np.loadtxt(os.path.join(data_dir, "o3_1024.txt"))[:200]
    assert_same_dgms(topoml.ripser(O, maxdim=2, thresh=1.6)["dgms"],
                     ripser_py.ripser(O, maxdim=2, thresh=1.6)["dgms"])


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("n_threads", [1, 2, -1])
def test_ripser_parallel_equals_giotto_ph(kind, n_threads):
    rng = np.random.default_rng(5 + len(kind))
    X = cloud(rng, kind, 40, 3 if kind != "circle" else 2)
    want = gph.ripser_parallel(X, maxdim=2, n_threads=n_threads if n_threads > 0 else 2)
    got = topoml.ripser_parallel(X, maxdim=2, n_threads=n_threads)
    assert set(got) == set(want)
    assert_same_dgms(got["dgms"], want["dgms"])
    D = squareform(pdist(X))
    assert_same_dgms(topoml.ripser_parallel(D, metric="precomputed", maxdim=2)["dgms"],
                     gph.ripser_parallel(D, metric="precomputed", maxdim=2)["dgms"])
    S = scipy.sparse.csr_matrix(np.triu(np.where(D <= 1.0, D, 0), 1))
    assert_same_dgms(topoml.ripser_parallel(S, metric="precomputed", thresh=0.8)["dgms"],
                     gph.ripser_parallel(S, metric="precomputed", thresh=0.8)["dgms"])


@pytest.mark.parametrize("collapse", [True, False])
def test_collapse_edges_equals_giotto_ph(collapse):
    rng = np.random.default_rng(17)
    X = cloud(rng, "clusters", 60, 3)
    want = gph.ripser_parallel(X, maxdim=2, collapse_edges=collapse)
    assert_same_dgms(topoml.ripser_parallel(X, maxdim=2, collapse_edges=collapse)["dgms"],
                     want["dgms"])
    for c in ("auto", True, False):
        assert_same_dgms(topoml.barcodes(X, maxdim=2, collapse=c).diagrams, want["dgms"])
    with pytest.raises(ValueError, match="collapse"):
        topoml.barcodes(X, collapse="sometimes")


def test_ripser_parallel_refuses_what_it_cannot_do():
    X = cloud(np.random.default_rng(0), "uniform", 10)
    for kw, word in [({"weights": "DTM", "return_generators": True}, "weights")]:
        with pytest.raises(NotImplementedError, match=word):
            topoml.ripser_parallel(X, **kw)
    for bad in (0, -2, 1.5, True):
        with pytest.raises(ValueError, match="n_threads"):
            topoml.ripser_parallel(X, n_threads=bad)


@pytest.mark.parametrize("p", [2, 3, 5])
def test_coefficients_equal_gudhi(data_dir, p):
    D = read_lower(os.path.join(data_dir, "projective_plane.lower_distance_matrix"))
    st = gudhi.RipsComplex(distance_matrix=D).create_simplex_tree(max_dimension=3)
    st.compute_persistence(homology_coeff_field=p, min_persistence=0)
    want = [st.persistence_intervals_in_dimension(k) for k in range(3)]
    got = topoml.barcodes(D, maxdim=2, modulus=p, distance_matrix=True).diagrams
    assert_same_dgms(got, [w.reshape(-1, 2) for w in want])
    rng = np.random.default_rng(p)
    X = cloud(rng, "uniform", 25, 3)
    st = gudhi.RipsComplex(points=X).create_simplex_tree(max_dimension=3)
    st.compute_persistence(homology_coeff_field=p, min_persistence=0)
    got = topoml.barcodes(X, maxdim=2, modulus=p).diagrams
    for k in range(3):
        w = st.persistence_intervals_in_dimension(k).reshape(-1, 2)
        assert same(got[k], w[w[:, 1] > w[:, 0]]), k


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("gens", [False, True])
def test_ripser_parallel_gives_giotto_phs_float32_diagrams(dtype, gens):
    X = np.random.default_rng(21).random((40, 3)).astype(dtype)
    want = gph.ripser_parallel(X, maxdim=2, return_generators=gens)["dgms"]
    got = topoml.ripser_parallel(X, maxdim=2, return_generators=gens)["dgms"]
    assert [d.dtype for d in got] == [d.dtype for d in want] == [np.dtype(np.float32)] * 3
    assert_same_dgms(got, want)


def test_ripser_parallel_leaves_out_bars_that_are_empty_in_float32():
    # 1 and 1 + 2**-40 are one float32: the bar between them is empty there
    e = 2.0 ** -40
    # a 4-cycle of sides 1 whose diagonals are 1 + e: H1 is [1, 1 + e) in double
    D = np.array([[0, 1, 1 + e, 1], [1, 0, 1, 1 + e], [1 + e, 1, 0, 1],
                  [1, 1 + e, 1, 0]], dtype=float)
    assert topoml.barcodes(D, maxdim=1, distance_matrix=True).diagrams[1].shape == (1, 2)
    got = topoml.ripser_parallel(D, metric="precomputed", maxdim=1)["dgms"]
    want = gph.ripser_parallel(D, metric="precomputed", maxdim=1)["dgms"]
    assert got[1].shape == want[1].shape == (0, 2)
    assert_same_dgms(got, want)
