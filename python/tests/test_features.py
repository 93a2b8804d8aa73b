"""Diagram tools against persim and GUDHI on random diagrams (with ties,
empty diagrams, zero-length and infinite points): bottleneck and Wasserstein
distances (and the Wasserstein matching), Betti curves, landscapes, entropy,
persistence images."""
import math

import numpy as np
import pytest

import topoml
from topoml import features

persim = pytest.importorskip("persim")
gudhi = pytest.importorskip("gudhi")
from gudhi.representations import BettiCurve, Entropy, Landscape  # noqa: E402

INF = math.inf


def random_diagram(rng, n, lattice=False, n_inf=0):
    if lattice:
        b = rng.integers(0, 8, n) * 0.25
        d = b + rng.integers(0, 6, n) * 0.25
    else:
        b = rng.uniform(0, 3, n)
        d = b + rng.exponential(0.7, n)
    D = np.c_[b, d]
    if n_inf:
        D = np.r_[D, np.c_[rng.uniform(0, 3, n_inf), np.full(n_inf, INF)]]
    return D


def diagram_pairs(seed_count=12):
    rng = np.random.default_rng(20240917)
    for k in range(seed_count):
        lattice = k % 2 == 1
        yield (random_diagram(rng, int(rng.integers(0, 15)), lattice),
               random_diagram(rng, int(rng.integers(0, 15)), lattice))


def test_bottleneck_equals_persim_and_gudhi():
    for a, b in diagram_pairs():
        got = topoml.bottleneck(a, b)
        assert got == pytest.approx(persim.bottleneck(a, b), abs=1e-12)
        assert got == pytest.approx(gudhi.bottleneck_distance(a, b, 0), abs=1e-12)
    rng = np.random.default_rng(1)
    a, b = random_diagram(rng, 8, n_inf=2), random_diagram(rng, 6, n_inf=2)
    assert topoml.bottleneck(a, b) == pytest.approx(gudhi.bottleneck_distance(a, b, 0))
    assert topoml.bottleneck(a, b[:-1]) == INF


def test_wasserstein_equals_gudhi():
    """GUDHI's definition. persim's wasserstein mixes two ground metrics
    (L-infinity between points, Euclidean to the diagonal), so it is not
    one of these and is not compared."""
    wd = pytest.importorskip("gudhi.wasserstein")
    pytest.importorskip("ot")
    for a, b in diagram_pairs():
        for order, p in [(1, INF), (2, 2), (2, INF), (1, 1)]:
            assert topoml.wasserstein(a, b, order=order, internal_p=p) == pytest.approx(
                wd.wasserstein_distance(a, b, order=order, internal_p=p), rel=1e-9, abs=1e-12)


def matching_cost(a, b, m, order, p):
    total = 0.0
    for i, j in m:
        if i >= 0 and j >= 0:
            with np.errstate(invalid="ignore"):
                diff = np.abs(a[i] - b[j])
            diff = diff[np.isfinite(diff)]
            c = diff.max(initial=0) if math.isinf(p) else (diff ** p).sum() ** (1 / p)
        else:
            x = a[i] if i >= 0 else b[j]
            c = (x[1] - x[0]) * 2 ** ((0 if math.isinf(p) else 1 / p) - 1)
        total += c ** order
    return total ** (1 / order)


def test_wasserstein_matching_is_optimal_and_complete():
    wd = pytest.importorskip("gudhi.wasserstein")
    pytest.importorskip("ot")
    rng = np.random.default_rng(4)
    for k, (a, b) in enumerate(diagram_pairs(8)):
        if k % 3 == 0 and len(a) and len(b):
            a = np.r_[a, [[0.5, INF]]]
            b = np.r_[b, [[0.7, INF]]]
        order, p = [(1, INF), (2, 2)][k % 2]
        d, m = topoml.wasserstein(a, b, matching=True, order=order, internal_p=p)
        assert d == pytest.approx(wd.wasserstein_distance(a, b, order=order, internal_p=p),
                                  rel=1e-9, abs=1e-12)
        assert sorted(i for i in m[:, 0] if i >= 0) == list(range(len(a)))
        assert sorted(j for j in m[:, 1] if j >= 0) == list(range(len(b)))
        assert matching_cost(a, b, m, order, p) == pytest.approx(d, rel=1e-9, abs=1e-12)


def test_betti_curve_equals_gudhi():
    rng = np.random.default_rng(2)
    for lattice in (False, True):
        D = random_diagram(rng, 20, lattice, n_inf=2)
        grid = np.linspace(0, 4, 41)
        want = BettiCurve(predefined_grid=grid).fit_transform([D])[0]
        np.testing.assert_array_equal(topoml.betti_curve(D, grid), want)


def test_landscapes_equal_gudhi():
    rng = np.random.default_rng(3)
    for lattice in (False, True):
        D = random_diagram(rng, 15, lattice)
        L = Landscape(num_landscapes=4, resolution=50, sample_range=[0, 4])
        want = L.fit_transform([D])[0].reshape(4, 50) / math.sqrt(2)
        grid = np.linspace(0, 4, 50)
        np.testing.assert_allclose(topoml.landscapes(D, grid, levels=4), want, atol=1e-12)


def test_entropy_equals_gudhi_and_drops_infinite_points():
    rng = np.random.default_rng(5)
    for n in (0, 1, 10):
        D = random_diagram(rng, n)
        want = Entropy(mode="scalar").fit_transform([D])[0][0] if n else 0.0
        assert topoml.entropy(D) == pytest.approx(want, abs=1e-12)
        assert topoml.entropy(np.r_[D, [[0.1, INF]]]) == pytest.approx(want, abs=1e-12)
    clipped = topoml.entropy([[0, 1], [0, INF]], infinite=3.0)
    assert clipped == pytest.approx(Entropy(mode="scalar").fit_transform(
        [np.array([[0, 1], [0, 3.0]])])[0][0])


def test_total_persistence():
    D = np.array([[0, 1], [1, 3.0]])
    assert topoml.total_persistence(D, 2) == pytest.approx(5.0)
    assert topoml.total_persistence(np.r_[D, [[0, INF]]]) == INF


def test_persistence_images_equal_persim():
    from persim import PersistenceImager
    rng = np.random.default_rng(6)
    dgms = [random_diagram(rng, int(n)) for n in (0, 5, 12)]
    sigma = 0.3
    pimgr = PersistenceImager(birth_range=(0, 3), pers_range=(0, 2), pixel_size=0.25,
                              weight="persistence", weight_params={"n": 1.0},
                              kernel_params={"sigma": [[sigma ** 2, 0], [0, sigma ** 2]]})
    want = [np.asarray(im).T for im in pimgr.transform(dgms, skew=True)]
    got = topoml.persistence_images(dgms, birth_range=(0, 3), pers_range=(0, 2),
                                    resolution=(12, 8), sigma=sigma, weight="power",
                                    weight_power=1.0)
    assert got.shape == (3, 8, 12)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, atol=1e-10)
    one = topoml.persistence_images(dgms[1], (0, 3), (0, 2), resolution=(12, 8), sigma=sigma,
                                    weight="power")
    np.testing.assert_allclose(one, got[1])


def test_bad_diagrams_raise_with_message():
    with pytest.raises(ValueError, match="birth|death"):
        topoml.bottleneck([[2.0, 1.0]], [[0, 1]])
    with pytest.raises(ValueError, match="NaN|nan"):
        topoml.betti_curve([[np.nan, 1.0]], [0, 1])
    with pytest.raises(ValueError, match=r"\(k, 2\)"):
        topoml.entropy(np.zeros((3, 1)))
    with pytest.raises(ValueError, match="weight"):
        topoml.persistence_images([[0, 1]], (0, 1), (0, 1), weight="heavy")
    with pytest.raises(ValueError):
        topoml.persistence_images([[0, 1]], (1, 0), (0, 1))


def test_distances_equal_scipy():
    from scipy.spatial.distance import pdist
    X = np.random.default_rng(0).normal(size=(25, 4))
    for m in ("euclidean", "sqeuclidean", "cityblock", "chebyshev", "cosine"):
        np.testing.assert_allclose(topoml.distances(X, m), pdist(X, m), rtol=1e-12, atol=1e-12)
    D = features.squareform(topoml.distances(X))
    np.testing.assert_allclose(features.squareform(D), pdist(X), rtol=1e-12)
