"""pytest set-up for the topoml package's tests: where the build tree, the
Ripser examples and the sources are (CTest passes them; run by hand,
they default to this checkout's build/ and ../shared), and the helpers the
tests share: the CLI tests' diagram comparison and Ripser text parser (one
of each in the project), readers for the example files."""
import math
import os
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.abspath(os.path.join(HERE, "..", ".."))


def pytest_addoption(parser):
    parser.addoption("--topoml-build", default=os.path.join(SOURCE, "build"))
    parser.addoption("--topoml-data",
                     default=os.path.join(SOURCE, "..", "shared", "data", "ripser-examples"))
    parser.addoption("--topoml-source", default=SOURCE)


def pytest_configure(config):
    sys.path.insert(0, os.path.join(config.getoption("--topoml-source"), "tests", "cli"))


def _certificates():
    """{certificate file: (verdict, summary)} in the cache the tests use."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    folder = os.path.join(base, "topoml")
    out = {}
    if not os.path.isdir(folder):
        return out
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".cert"):
            continue
        fields = {}
        try:
            with open(os.path.join(folder, name)) as f:
                for line in f:
                    k, _, v = line.rstrip("\n").partition("=")
                    fields[k] = v
        except OSError:
            continue
        out[name] = (fields.get("verdict", "?"), fields.get("summary", ""))
    return out


_certs_at_start = {}


def pytest_sessionstart(session):
    _certs_at_start.update(_certificates())


def pytest_terminal_summary(terminalreporter):
    """A plugin the core disabled at run time (a wrong answer found by the
    verification, docs/conformance.md) revokes its certificate; the tests do
    not see it (the reference answers instead). Say so here, with the
    reason, so that it is not silent."""
    changed = [(name, now) for name, now in _certificates().items()
               if now[0] != "pass" and _certs_at_start.get(name, ("pass",))[0] == "pass"]
    if changed:
        terminalreporter.section("certificates revoked during the tests")
        for name, (verdict, summary) in changed:
            terminalreporter.write_line("%s: %s: %s" % (name, verdict, summary))


@pytest.fixture(scope="session")
def build_dir(pytestconfig):
    return pytestconfig.getoption("--topoml-build")


@pytest.fixture(scope="session")
def source_dir(pytestconfig):
    return pytestconfig.getoption("--topoml-source")


@pytest.fixture(scope="session")
def data_dir(pytestconfig):
    d = pytestconfig.getoption("--topoml-data")
    if not os.path.isdir(d):
        pytest.fail("Ripser's examples are not at %s (--topoml-data)" % d)
    return d


def same(a, b, tol=1e-5):
    """Diagrams (arrays or lists of (birth, death)) equal as multisets up to
    a relative tolerance: tests/cli/clitest.py's comparison."""
    import clitest
    return clitest.same_diagram([tuple(map(float, p)) for p in np.asarray(a).reshape(-1, 2)],
                                [tuple(map(float, p)) for p in np.asarray(b).reshape(-1, 2)], tol)


def assert_same_dgms(got, want, tol=1e-5):
    assert len(got) == len(want), (len(got), len(want))
    for k, (g, w) in enumerate(zip(got, want)):
        assert same(g, w, tol), "H%d differs:\n%s\n%s" % (k, np.sort(g, 0), np.sort(w, 0))


def read_lower(path):
    """A lower-distance-matrix file as a square matrix."""
    with open(path) as f:
        v = np.array(f.read().replace(",", " ").split(), dtype=np.float64)
    n = int(round((1 + math.sqrt(1 + 8 * len(v))) / 2))
    D = np.zeros((n, n))
    i, j = np.tril_indices(n, -1)
    D[i, j] = v
    D[j, i] = v
    return D


def cloud(rng, kind, n, dim=2):
    """Seeded random clouds of the kinds the conformance suite uses."""
    if kind == "uniform":
        return rng.uniform(-1, 1, size=(n, dim))
    if kind == "circle":
        t = rng.uniform(0, 2 * np.pi, n)
        return np.c_[np.cos(t), np.sin(t)] + rng.normal(0, 0.05, (n, 2))
    if kind == "clusters":
        centres = rng.uniform(-5, 5, size=(3, dim))
        return centres[rng.integers(0, 3, n)] + rng.normal(0, 0.3, (n, dim))
    if kind == "grid":  # full of ties
        side = int(math.ceil(n ** (1 / dim)))
        g = np.stack(np.meshgrid(*[np.arange(side)] * dim), -1).reshape(-1, dim)
        return g[:n].astype(np.float64)
    raise ValueError(kind)
