"""Weighted Rips filtrations (giotto-ph's ``weights`` and ``weight_params``)
compared with giotto-ph itself on seeded inputs: given weights and the DTM,
p in {1, 2, inf}, points, dense and sparse distance matrices, thresholds,
maxdim 0..2. giotto-ph computes in float32: diagrams must agree within its
rounding.

giotto-ph's thresholded paths differ from the filtration where (its points
path with a threshold drops given weights, and a vertex above the threshold
gets a bar born at 0 or at its weight): there the inputs are chosen so that
giotto-ph is exact (every weight within the threshold, every point with its
DTM neighbours within it), or topoml on points is compared with giotto-ph
on the same distances given as a matrix (docs/python.md, "Weighted Rips")."""
import numpy as np
import pytest
import scipy.sparse
from scipy.spatial.distance import cdist

import topoml
from conftest import assert_same_dgms, cloud

gph = pytest.importorskip("gph")

PS = [1, 2, np.inf]
TOL = 2e-6  # float32 rounding of giotto-ph's values


def weights_for(rng, kind, n):
    return "DTM" if kind == "DTM" else rng.uniform(0, 0.4, n)


def params(p, kind, rng):
    if kind != "DTM":
        return {"p": p}
    return {"p": p, "n_neighbors": int(rng.integers(1, 6)), "r": float(rng.choice([1, 2, 3]))}


@pytest.mark.parametrize("p", PS)
@pytest.mark.parametrize("kind", ["array", "DTM"])
@pytest.mark.parametrize("maxdim", [0, 1, 2])
def test_points_equal_giotto_ph(p, kind, maxdim):
    rng = np.random.default_rng(100 + maxdim)
    for shape in ("uniform", "circle", "clusters"):
        X = cloud(rng, shape, 30, 2 if shape == "circle" else 3)
        w, wp = weights_for(rng, kind, len(X)), params(p, kind, rng)
        got = topoml.ripser_parallel(X, maxdim=maxdim, weights=w, weight_params=wp)["dgms"]
        want = gph.ripser_parallel(X, maxdim=maxdim, weights=w, weight_params=wp)["dgms"]
        assert_same_dgms(got, want, TOL)


@pytest.mark.parametrize("p", PS)
@pytest.mark.parametrize("kind", ["array", "DTM"])
def test_dense_matrix_equals_giotto_ph(p, kind):
    rng = np.random.default_rng(7)
    X = cloud(rng, "uniform", 35, 3)
    D = cdist(X, X)
    w, wp = weights_for(rng, kind, len(X)), params(p, kind, rng)
    got = topoml.ripser_parallel(D, metric="precomputed", maxdim=2, weights=w,
                                 weight_params=wp)["dgms"]
    want = gph.ripser_parallel(D, metric="precomputed", maxdim=2, weights=w,
                               weight_params=wp)["dgms"]
    assert_same_dgms(got, want, TOL)


@pytest.mark.parametrize("p", PS)
@pytest.mark.parametrize("kind", ["array", "DTM"])
def test_dense_matrix_with_threshold_equals_giotto_ph(p, kind):
    rng = np.random.default_rng(8)
    X = cloud(rng, "uniform", 30, 2)
    D = cdist(X, X)
    w, wp = weights_for(rng, kind, len(X)), params(p, kind, rng)
    if kind == "DTM":  # giotto-ph is exact only with every weight within the threshold
        wv = topoml_weights(D, wp)
        thresh = float(np.max(wv)) + 0.1
    else:
        thresh = 0.45  # > every weight (0.4 at most)
    got = topoml.ripser_parallel(D, metric="precomputed", maxdim=2, thresh=thresh, weights=w,
                                 weight_params=wp)["dgms"]
    want = gph.ripser_parallel(D, metric="precomputed", maxdim=2, thresh=thresh, weights=w,
                               weight_params=wp)["dgms"]
    assert_same_dgms(got, want, TOL)
    # cut by the threshold: the essential H0 classes are more than one
    assert np.isinf(got[0][:, 1]).sum() == np.isinf(want[0][:, 1]).sum()


def topoml_weights(D, wp):
    """The DTM as giotto-ph defines it, from a dense matrix."""
    k, r = wp["n_neighbors"], wp["r"]
    near = np.sort(D + np.diag(np.full(len(D), np.inf)), axis=1)[:, :k]
    return 2 * ((near ** r).sum(axis=1) / (k + 1)) ** (1 / r)


@pytest.mark.parametrize("p", PS)
def test_points_with_threshold_equal_giotto_ph_on_the_matrix(p):
    """giotto-ph's thresholded points path drops given weights (every vertex
    is born at 0 there); its dense matrix path keeps them."""
    rng = np.random.default_rng(9)
    X = cloud(rng, "clusters", 40, 2)
    w = rng.uniform(0, 0.5, len(X))
    got = topoml.ripser_parallel(X, maxdim=1, thresh=0.9, weights=w,
                                 weight_params={"p": p})["dgms"]
    want = gph.ripser_parallel(cdist(X, X), metric="precomputed", maxdim=1, thresh=0.9,
                               weights=w, weight_params={"p": p})["dgms"]
    assert_same_dgms(got, want, TOL)
    assert min(got[0][:, 0]) > 0  # births are the weights, not 0


@pytest.mark.parametrize("p", PS)
def test_points_dtm_with_threshold_equal_giotto_ph(p):
    rng = np.random.default_rng(10)
    X = cloud(rng, "circle", 40)
    wp = {"p": p, "n_neighbors": 3, "r": 2}
    thresh = float(np.max(topoml_weights(cdist(X, X), wp))) + 0.2
    got = topoml.ripser_parallel(X, maxdim=1, thresh=thresh, weights="DTM",
                                 weight_params=wp)["dgms"]
    want = gph.ripser_parallel(X, maxdim=1, thresh=thresh, weights="DTM",
                               weight_params=wp)["dgms"]
    assert_same_dgms(got, want, TOL)


def sparse_of(D, keep, rng):
    """The pairs with D <= keep as an upper-triangular COO matrix, shuffled."""
    i, j = np.nonzero(np.triu(D <= keep, 1))
    order = rng.permutation(len(i))
    i, j = i[order], j[order]
    return scipy.sparse.coo_matrix((D[i, j], (i, j)), shape=D.shape)


@pytest.mark.parametrize("p", PS)
@pytest.mark.parametrize("cut", [False, True])
def test_sparse_dtm_equals_giotto_ph(p, cut):
    rng = np.random.default_rng(11)
    X = cloud(rng, "uniform", 40, 2)
    D = cdist(X, X)
    S = sparse_of(D, 1.2, rng)
    wp = {"p": p, "n_neighbors": 4, "r": 2}
    # a threshold above every weight, below the longest edge
    thresh = float(np.max(topoml_weights(np.where(D <= 1.2, D, np.inf), wp))) + 0.05 \
        if cut else np.inf
    assert not cut or thresh < 1.2
    got = topoml.ripser_parallel(S, metric="precomputed", maxdim=2, thresh=thresh,
                                 weights="DTM", weight_params=wp)["dgms"]
    want = gph.ripser_parallel(S, metric="precomputed", maxdim=2, thresh=thresh,
                               weights="DTM", weight_params=wp)["dgms"]
    assert_same_dgms(got, want, TOL)


@pytest.mark.parametrize("p", PS)
def test_sparse_given_weights_equal_giotto_ph(p):
    """giotto-ph takes a sparse input's vertex births from its stored
    diagonal: it is stored here (0, which every rule turns into w_i)."""
    rng = np.random.default_rng(12)
    X = cloud(rng, "uniform", 40, 2)
    S = sparse_of(cdist(X, X), 0.7, rng)
    n = len(X)
    w = rng.uniform(0, 0.3, n)
    withdiag = scipy.sparse.coo_matrix(
        (np.r_[S.data, np.zeros(n)], (np.r_[S.row, np.arange(n)], np.r_[S.col, np.arange(n)])),
        shape=S.shape)
    got = topoml.ripser_parallel(S, metric="precomputed", maxdim=1, weights=w,
                                 weight_params={"p": p})["dgms"]
    want = gph.ripser_parallel(withdiag, metric="precomputed", maxdim=1, weights=w,
                               weight_params={"p": p})["dgms"]
    assert_same_dgms(got, want, TOL)


def test_vertex_above_threshold_is_not_in_the_complex():
    D = np.array([[0, 1, 3], [1, 0, 2], [3, 2, 0]], dtype=float)
    w = np.array([0.2, 0.5, 5.0])
    got = topoml.ripser_parallel(D, metric="precomputed", maxdim=0, thresh=4, weights=w,
                                 weight_params={"p": np.inf})["dgms"][0]
    # vertex 2 (weight 5) is absent; 0 and 1 join at max(1, 0.2, 0.5) = 1
    assert sorted(map(tuple, got.tolist())) == [(np.float32(0.2), np.inf), (0.5, 1.0)]
    full = topoml.ripser_parallel(D, metric="precomputed", maxdim=0, weights=w,
                                  weight_params={"p": np.inf})["dgms"][0]
    # 5 joins at 5: 0
    assert sorted(map(tuple, full.tolist())) == [(np.float32(0.2), np.inf), (0.5, 1.0)]


def test_weights_are_checked_as_giotto_ph_checks_them():
    X = cloud(np.random.default_rng(0), "uniform", 10)
    with pytest.raises(ValueError, match="non-negative"):
        topoml.ripser_parallel(X, weights=-np.ones(10))
    with pytest.raises(ValueError, match="DTM"):
        topoml.ripser_parallel(X, weights="dtm")
    with pytest.raises(NotImplementedError, match="p = 3"):
        topoml.ripser_parallel(X, weights="DTM", weight_params={"p": 3})
    with pytest.raises(ValueError, match="weights"):
        topoml.ripser_parallel(X, weights=np.ones(9))
    with pytest.raises(ValueError, match="neighbours"):
        topoml.ripser_parallel(X, weights="DTM", weight_params={"n_neighbors": 10})


def cli_dgms(build_dir, args, maxdim):
    import json
    import os
    import subprocess
    out = subprocess.run([os.path.join(build_dir, "tools", "topoml"), "barcode", "--output",
                          "json", "--dim", str(maxdim)] + args, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    dims = json.loads(out.stdout)["dims"]
    got = [np.zeros((0, 2)) for _ in range(maxdim + 1)]
    for d in dims:
        got[d["dim"]] = np.array([[b, np.inf if e is None else e] for b, e in d["intervals"]],
                                 dtype=float).reshape(-1, 2)
    return got


@pytest.mark.parametrize("p", ["1", "2", "inf"])
def test_cli_weights_equal_giotto_ph(build_dir, tmp_path, p):
    rng = np.random.default_rng(20)
    X = cloud(rng, "circle", 30)
    w = rng.uniform(0, 0.3, len(X))
    np.savetxt(tmp_path / "X.csv", X, delimiter=",")
    np.savetxt(tmp_path / "w.txt", w)
    wp = {"p": float(p)}
    got = cli_dgms(build_dir, ["--format", "point-cloud", "--weights", str(tmp_path / "w.txt"),
                               "--weight-p", p, str(tmp_path / "X.csv")], 2)
    assert_same_dgms(got, gph.ripser_parallel(X, maxdim=2, weights=w, weight_params=wp)["dgms"],
                     TOL)
    D = cdist(X, X)
    np.savetxt(tmp_path / "D.txt", D)
    got = cli_dgms(build_dir, ["--format", "distance", "--weights", "dtm", "--weight-p", p,
                               "--dtm-neighbors", "4", "--dtm-r", "1", str(tmp_path / "D.txt")],
                   1)
    want = gph.ripser_parallel(D, metric="precomputed", maxdim=1, weights="DTM",
                               weight_params={"p": float(p), "n_neighbors": 4, "r": 1})["dgms"]
    assert_same_dgms(got, want, TOL)


def test_cli_weights_file_errors(build_dir, tmp_path):
    import os
    import subprocess
    X = np.arange(8.0).reshape(4, 2)
    np.savetxt(tmp_path / "X.csv", X, delimiter=",")
    exe = os.path.join(build_dir, "tools", "topoml")
    for text, word in [("0 1\n2 x\n", "line 2: 'x' is not a number"),
                       ("0 1 2", "3 weights for the 4 vertices"),
                       ("0 1 2 3 4", "more weights than the 4 vertices"),
                       ("0 -1 2 3", "vertex 1")]:
        (tmp_path / "w.txt").write_text(text)
        out = subprocess.run([exe, "barcode", "--format", "point-cloud", "--weights",
                              str(tmp_path / "w.txt"), str(tmp_path / "X.csv")],
                             capture_output=True, text=True)
        assert out.returncode != 0 and word in out.stderr, out.stderr
    out = subprocess.run([exe, "barcode", "--weight-p", "3", str(tmp_path / "X.csv")],
                         capture_output=True, text=True)
    assert out.returncode != 0 and "--weight-p" in out.stderr


@pytest.mark.parametrize("weights", ["DTM", lambda c: np.linalg.norm(c, axis=1) / 4])
def test_sklearn_transformer_takes_weights(weights):
    from topoml.sklearn import VietorisRipsPersistence
    rng = np.random.default_rng(30)
    clouds = [cloud(rng, "circle", 30) for _ in range(3)]
    wp = {"p": 2, "n_neighbors": 4}
    out = VietorisRipsPersistence(maxdim=1, weights=weights, weight_params=wp,
                                  reduced_homology=False).fit_transform(clouds)
    for c, got in zip(clouds, out):
        w = weights if isinstance(weights, str) else weights(c)
        want = gph.ripser_parallel(c, maxdim=1, weights=w, weight_params=wp)["dgms"]
        for d in range(2):
            mine = got[(got[:, 2] == d) & (got[:, 1] > got[:, 0])][:, :2]
            assert_same_dgms([mine], [want[d]], TOL)
