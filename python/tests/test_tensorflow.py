"""Runs the topoml.tensorflow tests (tensorflow_cases.py) in a pytest of
their own: with TensorFlow loaded, PyTorch's first use of torch.compile or
torch.optim imports triton, which aborts the process (both bring their own
LLVM), so the two frameworks are not tested in one interpreter."""
import importlib.util
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))


def test_tensorflow_cases():
    if importlib.util.find_spec("tensorflow") is None:
        pytest.skip("TensorFlow is not installed (tools/setup-debian.sh installs tensorflow-cpu)")
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider",
                        os.path.join(HERE, "tensorflow_cases.py")],
                       env=env, capture_output=True, text=True, cwd=HERE)
    report = r.stdout[-6000:] + r.stderr[-3000:]
    assert r.returncode == 0, report
    assert " passed" in r.stdout and "skipped" not in r.stdout and "failed" not in r.stdout, report
