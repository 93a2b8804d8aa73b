"""The diagrams activation signatures are made of (topoml._ml.layer_diagrams,
used by topoml.torch's and topoml.tensorflow's captures): the Rips
filtration truncated at a scale is the whole filtration's bars born up to
it, those alive there cut (death inf); the automatic scale follows the
nearest-neighbour gaps of the rows."""
import math

import numpy as np
import pytest

import topoml
from topoml import _ml
from conftest import assert_same_dgms, cloud


def truncated(dgms, t):
    """The bars of the whole filtration that a filtration truncated at t
    has: born at most at t, death inf if still alive at t."""
    out = []
    for d in dgms:
        keep = d[d[:, 0] <= t].copy()
        keep[keep[:, 1] > t, 1] = math.inf
        out.append(keep)
    return out


@pytest.mark.parametrize("kind", ["uniform", "circle", "clusters"])
@pytest.mark.parametrize("dim", [2, 5])
def test_truncated_diagrams_are_the_whole_filtrations_up_to_the_scale(kind, dim):
    rng = np.random.default_rng(dim * 10 + len(kind))
    X = cloud(rng, kind, 120, dim if kind != "circle" else 2)
    if kind == "circle" and dim == 5:  # the circle in R^5, turned
        X = np.c_[X, np.zeros((len(X), 3))] @ np.linalg.qr(rng.normal(size=(5, 5)))[0]
    whole = topoml.barcodes(X, maxdim=2).diagrams
    auto = _ml.signature_scale(X)
    for t in (auto, 0.5 * auto, 3.0 * auto):
        dgms, scale = _ml.layer_diagrams(X, maxdim=2, scale=t)
        assert scale == t
        assert_same_dgms(dgms, truncated(whole, t), tol=1e-9)
    dgms, scale = _ml.layer_diagrams(X, maxdim=2)
    assert scale == auto
    assert_same_dgms(dgms, truncated(whole, auto), tol=1e-9)
    for none in (None, math.inf):
        dgms, scale = _ml.layer_diagrams(X, maxdim=2, scale=none)
        assert scale == math.inf
        assert_same_dgms(dgms, whole, tol=1e-9)


def test_automatic_scale_follows_the_nearest_neighbour_gaps():
    h = 0.37
    g = np.stack(np.meshgrid(np.arange(12), np.arange(12)), -1).reshape(-1, 2) * h
    assert _ml.signature_scale(g) == pytest.approx(2 * h, rel=1e-9)
    X = cloud(np.random.default_rng(4), "clusters", 300, 6)
    s = _ml.signature_scale(X)
    assert _ml.signature_scale(7.5 * X) == pytest.approx(7.5 * s, rel=1e-9)
    assert _ml.signature_scale(X + 100.0) == pytest.approx(s, rel=1e-6)
    assert _ml.signature_scale(X, seed=0) == s  # seeded: the same rows every time
    D = np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1))
    assert 0 < s <= 2 * np.max(np.sort(D, axis=1)[:, 1])
    # where distances concentrate (noise in R^32), the edge budget decides:
    # about 8 edges per row, not most of the pairs
    for n in (200, 600):
        N = np.random.default_rng(n).normal(size=(n, 32))
        t = _ml.signature_scale(N)
        edges = np.count_nonzero(np.triu(np.sqrt(((N[:, None] - N[None]) ** 2).sum(-1)) <= t, 1))
        assert 4 * n <= edges <= 16 * n, (n, edges)
    assert _ml.signature_scale(X[:1]) == 0.0 and _ml.signature_scale(X[:0]) == 0.0


def test_layer_diagrams_refuse_bad_input():
    X = cloud(np.random.default_rng(0), "uniform", 10)
    for bad in ("big", -1.0, math.nan):
        with pytest.raises(ValueError, match="scale"):
            _ml.layer_diagrams(X, scale=bad)
    with pytest.raises(ValueError, match="NaN"):
        _ml.layer_diagrams(np.array([[0.0, math.nan], [1.0, 1.0]]))
    with pytest.raises(ValueError, match="2-d"):
        _ml.layer_diagrams(np.zeros(3))


def test_layer_signatures_equal_the_layers_one_after_another(monkeypatch):
    """layer_signatures (what the captures' signatures() call) computes the
    layers at once; each signature is what the layer alone gives, and with
    two CPUs or more the layers do run on several threads."""
    import threading
    rng = np.random.default_rng(5)
    layers = {"a": cloud(rng, "circle", 150, 2), "b": cloud(rng, "uniform", 200, 5),
              "c": cloud(rng, "clusters", 180, 3), "d": rng.normal(size=(120, 16))}
    seen = set()
    real = _ml.layer_diagrams

    def recording(*args, **kwargs):
        seen.add(threading.current_thread().name)
        return real(*args, **kwargs)

    monkeypatch.setattr(_ml, "layer_diagrams", recording)
    got = _ml.layer_signatures(layers, maxdim=1, n_bins=16)
    assert list(got) == list(layers)
    for name, X in layers.items():
        dgms, scale = real(X, 1, "auto")
        want = _ml.signatures(dgms, 16)
        assert got[name]["scale"] == scale and got[name]["samples"] == len(X)
        assert_same_dgms(got[name]["diagrams"], dgms, tol=0)
        assert got[name]["total_persistence"] == want["total_persistence"]
        assert got[name]["entropy"] == want["entropy"]
        for g, w in zip(got[name]["betti_curves"], want["betti_curves"]):
            assert np.array_equal(g, w)
    if _ml._cpus() >= 2:
        assert len(seen) > 1, seen
    # an error in one layer is raised to the caller
    with pytest.raises(ValueError):
        _ml.layer_signatures({"ok": layers["a"], "bad": np.full((10, 2), np.nan)})
