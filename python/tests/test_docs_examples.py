"""The Python blocks of the docs run as they are written: each block of
docs/ml.md in a fresh interpreter, with nothing
defined before it. A block that imports a framework that is not installed
is skipped with that reason; any other failure fails with the page, the
line and the error."""
import importlib.util
import os
import re
import subprocess
import sys

import pytest

SOURCE = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
PAGES = ["docs/ml.md"]
FENCE = re.compile(r"^```python\n(.*?)^```$", re.S | re.M)
OPTIONAL = {"torch": "PyTorch", "tensorflow": "TensorFlow", "matplotlib": "matplotlib",
            "sklearn": "scikit-learn", "pandas": "pandas", "scipy": "SciPy"}


def blocks():
    for page in PAGES:
        text = open(os.path.join(SOURCE, page), encoding="utf-8").read()
        for m in FENCE.finditer(text):
            line = text.count("\n", 0, m.start()) + 2
            yield pytest.param(page, line, m.group(1), id="%s:%d" % (page, line))


def test_the_pages_have_blocks():
    assert len(list(blocks())) >= 4


@pytest.mark.parametrize("page, line, code", list(blocks()))
def test_block_runs_as_written(page, line, code):
    for name in re.findall(r"^\s*(?:import|from)\s+([\w.]+)", code, re.M):
        # topoml.torch needs torch, topoml.tensorflow tensorflow
        name = name.split(".")[1] if name.startswith("topoml.") else name.split(".")[0]
        if name in OPTIONAL and importlib.util.find_spec(name) is None:
            pytest.skip("%s is not installed" % OPTIONAL[name])
    env = dict(os.environ, MPLBACKEND="Agg", TF_CPP_MIN_LOG_LEVEL="2")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=600, env=env)
    assert p.returncode == 0, "%s:%d: the block fails:\n%s\n%s" % (page, line, code, p.stderr)
