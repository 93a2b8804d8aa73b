"""Representative cocycles against ripser.py, run for real:
topoml.ripser(X, do_cocycles=True) gives ripser.py's layout (cocycles[d] a
list parallel to dgms[d] of (k, d + 2) int64 arrays: vertices descending,
then the value in 0..coeff-1; cocycles[0] empty) and, on inputs whose
distances have no ties in float32 (ripser.py computes in float32), the same
arrays, row for row, in Z/2, Z/3, Z/5 and Z/7, H1 and H2. With ties any
representative may come back: every one is checked to be a cocycle of the
complex at its bar's birth, with value 1 on a simplex born there.
topoml.barcodes(..., cocycles=True) gives the same in its ``cocycles``, and
`topoml barcode --cocycles` in its JSON and in Ripser's text form
(Debian's ripser prints no cocycles: ripser.py is the reference)."""
import itertools
import json
import math
import os
import re
import subprocess

import numpy as np
import pytest
from scipy.spatial.distance import pdist, squareform

import topoml
from conftest import cloud

ripser_py = pytest.importorskip("ripser")


def untied_matrix(rng, n, dim):
    """A float32-exact distance matrix of a seeded cloud whose pairwise
    distances all differ in float32, so ripser.py's filtration is topoml's."""
    for _ in range(100):
        X = rng.standard_normal((n, dim))
        d = pdist(X).astype(np.float32)
        if len(np.unique(d)) == len(d):
            return squareform(d).astype(np.float64)
    raise AssertionError("no cloud without float32 ties")


def by_bar(dgm, cocycles):
    """{(birth, death): rows as a tuple} (bars are distinct without ties)."""
    return {(float(b), float(d)): tuple(map(tuple, c.tolist())) for (b, d), c in
            zip(dgm, cocycles)}


@pytest.mark.parametrize("seed", range(8))
def test_equal_to_ripser_py_without_ties(seed):
    rng = np.random.default_rng(seed)
    n, dim = int(rng.integers(10, 28)), 2 + seed % 2
    D = untied_matrix(rng, n, dim)
    coeff = [2, 3, 5, 7][seed % 4]
    maxdim = 2 if n <= 20 else 1
    want = ripser_py.ripser(D, distance_matrix=True, do_cocycles=True, coeff=coeff,
                            maxdim=maxdim)
    got = topoml.ripser(D, distance_matrix=True, do_cocycles=True, coeff=coeff, maxdim=maxdim)
    assert len(got["cocycles"]) == maxdim + 1 and got["cocycles"][0] == []
    compared = 0
    for d in range(1, maxdim + 1):
        assert len(got["cocycles"][d]) == len(got["dgms"][d])
        for c in got["cocycles"][d]:
            assert c.dtype == np.int64 and c.ndim == 2 and c.shape[1] == d + 2
        g = by_bar(got["dgms"][d].astype(np.float32), got["cocycles"][d])
        w = by_bar(want["dgms"][d], want["cocycles"][d])
        assert g.keys() == w.keys()
        for bar in w:
            assert g[bar] == w[bar], (d, bar)
            compared += 1
    assert compared > 0
    r = topoml.barcodes(D, maxdim=maxdim, modulus=coeff, distance_matrix=True, cocycles=True)
    for d in range(1, maxdim + 1):
        assert by_bar(r.diagrams[d].astype(np.float32), r.cocycles[d]) == \
            by_bar(got["dgms"][d].astype(np.float32), got["cocycles"][d])


def assert_cocycles(D, dgms, cocycles, p):
    """Each cocycle is one of the complex at its bar's birth (its coboundary
    is 0 mod p on every simplex of diameter <= birth) and has value 1 on a
    simplex of diameter equal to the birth (its first row)."""
    n = len(D)

    def diam(v):
        return max((D[a, b] for a, b in itertools.combinations(v, 2)), default=0.0)

    for d in range(1, len(dgms)):
        for (birth, _), c in zip(dgms[d], cocycles[d]):
            z = {tuple(r[:-1]): int(r[-1]) for r in c}
            assert all(0 < v < p for v in z.values())
            first = tuple(c[0, :-1])
            assert np.isclose(diam(first), birth) and z[first] == 1
            for tau in itertools.combinations(range(n - 1, -1, -1), d + 2):
                if diam(tau) > birth:
                    continue
                s = sum((-1) ** i * z.get(tau[:i] + tau[i + 1:], 0) for i in range(d + 2))
                assert s % p == 0, (d, birth, tau)


@pytest.mark.parametrize("seed", range(4))
def test_with_ties_they_are_cocycles(seed):
    # integer coordinates: many equal distances
    X = np.random.default_rng(seed).integers(0, 4, size=(14, 2)).astype(float)
    X = np.unique(X, axis=0)
    D = squareform(pdist(X))
    p = [2, 3, 5, 3][seed]
    got = topoml.ripser(X, do_cocycles=True, coeff=p, maxdim=2)
    want = ripser_py.ripser(X, do_cocycles=True, coeff=p, maxdim=2)
    for d in range(3):
        assert len(got["dgms"][d]) == len(want["dgms"][d])
    assert_cocycles(D, got["dgms"], got["cocycles"], p)


def test_circle_cocycle_is_the_circle():
    t = np.linspace(0, 2 * np.pi, 20, endpoint=False)
    X = np.c_[np.cos(t), 1.3 * np.sin(t)]
    for p in (2, 3, 5):
        r = topoml.ripser(X, do_cocycles=True, coeff=p)
        (c,) = r["cocycles"][1]
        z = {(int(a), int(b)): int(v) for a, b, v in c}
        # the cocycle summed around the circle, each edge with its orientation
        around = sum(z.get((i + 1, i), 0) for i in range(19)) - z.get((19, 0), 0)
        assert around % p != 0


def test_not_asked():
    X = cloud(np.random.default_rng(1), "circle", 20)
    assert topoml.ripser(X)["cocycles"] == [[], []]
    assert topoml.barcodes(X).cocycles is None


def run_cli(build_dir, D, p, maxdim, output, tmp_path):
    """`topoml barcode --cocycles` on D's lower triangle, written with every
    float32 digit (the values ripser.py computes with)."""
    path = tmp_path / "lower.txt"
    path.write_text("".join(",".join(repr(float(np.float32(D[i, j]))) for j in range(i)) + "\n"
                            for i in range(1, len(D))))
    r = subprocess.run([os.path.join(build_dir, "tools", "topoml"), "barcode", "--quiet",
                        "--format", "lower-distance", "--cocycles", "--modulus", str(p), "--dim",
                        str(maxdim), "--output", output, str(path)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.mark.parametrize("seed", range(4))
def test_cli_json_and_text_equal_ripser_py(build_dir, tmp_path, seed):
    rng = np.random.default_rng(50 + seed)
    D = untied_matrix(rng, 16 + seed, 3)
    p, maxdim = [2, 3, 5, 7][seed], 2
    want = ripser_py.ripser(D, distance_matrix=True, do_cocycles=True, coeff=p, maxdim=maxdim)
    got = json.loads(run_cli(build_dir, D, p, maxdim, "json", tmp_path))
    text = run_cli(build_dir, D, p, maxdim, "ripser", tmp_path)
    # Ripser's text: " [b,d)  {[v1,v0]:c,...}", values normalised to (-p/2, p/2]
    printed = {}
    dim = None
    for line in text.splitlines():
        m = re.match(r"persistence intervals in dim (\d+):", line)
        if m:
            dim = int(m.group(1))
            continue
        m = re.match(r" \[([^,]+),([^)]*)\)  \{(.*)\}$", line)
        if m and dim >= 1:
            rows = tuple(tuple(int(v) for v in s.split(",")) + (int(c) % p,)
                         for s, c in re.findall(r"\[([\d,]+)\]:(-?\d+)", m.group(3)))
            printed.setdefault(dim, []).append(rows)
    for d in range(1, maxdim + 1):
        intervals = [(b, math.inf if e is None else e) for b, e in got["dims"][d]["intervals"]]
        cocycles = [np.array(c, dtype=np.int64).reshape(-1, d + 2)
                    for c in got["dims"][d]["cocycles"]]
        g = by_bar(np.array(intervals, dtype=np.float32).reshape(-1, 2), cocycles)
        w = by_bar(want["dgms"][d], want["cocycles"][d])
        assert g == w
        assert sorted(printed.get(d, [])) == sorted(w.values())


def test_with_n_perm_the_vertices_are_the_inputs_points():
    # ripser.py maps a subsample's cocycles back through idx_perm
    D = untied_matrix(np.random.default_rng(5), 60, 2)
    want = ripser_py.ripser(D, distance_matrix=True, do_cocycles=True, n_perm=30)
    got = topoml.ripser(D, distance_matrix=True, do_cocycles=True, n_perm=30)
    np.testing.assert_array_equal(got["idx_perm"], want["idx_perm"])
    g = by_bar(got["dgms"][1].astype(np.float32), got["cocycles"][1])
    w = by_bar(want["dgms"][1], want["cocycles"][1])
    assert g == w and len(w) > 0
