"""Plots (drawn with matplotlib's Agg backend and read back from the
artists), import discipline in a fresh interpreter (what is imported; the
import time is measured by bench/python_overhead.py), and the
docstrings' examples run as doctests."""
import doctest
import importlib
import os
import subprocess
import sys

import numpy as np
import pytest

import topoml

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

HEAVY = ["torch", "tensorflow", "triton", "matplotlib", "sklearn", "scipy", "gudhi", "ripser",
         "persim", "gph", "pandas", "joblib"]


def test_plot_diagrams_draws_every_point_and_the_infinity_line():
    t = np.linspace(0, 2 * np.pi, 30, endpoint=False)
    r = topoml.ripser(np.c_[np.cos(t), np.sin(t)])
    fig, ax = plt.subplots()
    topoml.plot_diagrams(r, ax=ax, title="circle")
    scatters = [c for c in ax.collections if hasattr(c, "get_offsets")]
    assert [len(s.get_offsets()) for s in scatters] == [len(d) for d in r["dgms"]]
    inf_y = scatters[0].get_offsets()[np.isinf(r["dgms"][0][:, 1])][:, 1]
    finite_max = max(d[np.isfinite(d[:, 1])][:, 1].max() for d in r["dgms"] if len(d))
    assert len(inf_y) == 1 and inf_y[0] > finite_max
    assert ax.get_title() == "circle" and ax.get_xlabel() == "Birth"
    ax2 = topoml.plot_diagrams(r["dgms"], plot_only=[1], lifetime=True, ax=plt.subplots()[1])
    assert ax2.get_ylabel() == "Lifetime"
    plt.close("all")


def test_plot_barcode_has_one_segment_per_bar():
    r = topoml.barcodes(np.random.default_rng(0).uniform(size=(20, 2)), maxdim=1)
    fig, ax = plt.subplots()
    topoml.plot_barcode(r, ax=ax)
    segs = ax.collections[0].get_segments()
    assert len(segs) == sum(len(d) for d in r.diagrams)
    lengths = sorted(s[1][0] - s[0][0] for s in segs[:len(r.diagrams[0])])
    assert lengths[-1] == pytest.approx(ax.get_xlim()[1] / 1.02)  # the essential bar
    plt.close("all")


def fresh(code):
    env = dict(os.environ)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, check=True).stdout


def test_import_topoml_imports_nothing_heavy():
    out = fresh("import sys, topoml; topoml.barcodes([[0.0], [1.0]]); topoml.backends(); "
                "print(' '.join(sorted(m for m in %r if m in sys.modules)))" % HEAVY)
    assert out.strip() == ""


def test_plotting_and_sklearn_load_lazily():
    out = fresh("import sys, topoml; a = 'matplotlib' in sys.modules; topoml.plot_diagrams; "
                "b = 'matplotlib' in sys.modules; c = 'sklearn' in sys.modules; "
                "topoml.VietorisRipsPersistence; print(a, b, c, 'sklearn' in sys.modules)")
    assert out.split() == ["False", "False", "False", "True"]
    with pytest.raises(AttributeError):
        topoml.no_such_thing


@pytest.mark.parametrize("module", ["topoml._rips", "topoml.features", "topoml._backends",
                                    "topoml.plotting", "topoml.sklearn"])
def test_docstring_examples(module):
    pytest.importorskip("sklearn")
    m = importlib.import_module(module)
    result = doctest.testmod(m, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
