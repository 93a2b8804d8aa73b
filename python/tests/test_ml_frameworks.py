"""Runs the topoml.torch tests (torch_cases.py) and the topoml.tensorflow
tests (tensorflow_cases.py) each in a pytest of its own. With TensorFlow
loaded (other tests load it indirectly, e.g. through GUDHI or persim),
PyTorch's first use of torch.compile or torch.optim imports triton, which
aborts the process (both bring their own LLVM); so neither framework is
tested in this interpreter."""
import importlib.util
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.mark.parametrize("module,cases,install", [
    ("torch", "torch_cases.py", "torch"),
    ("tensorflow", "tensorflow_cases.py", "tensorflow-cpu"),
])
def test_framework_cases(module, cases, install):
    if importlib.util.find_spec(module) is None:
        pytest.skip("%s is not installed (tools/setup-debian.sh installs %s)" % (module, install))
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider",
                        os.path.join(HERE, cases)],
                       env=env, capture_output=True, text=True, cwd=HERE)
    report = r.stdout[-6000:] + r.stderr[-3000:]
    assert r.returncode == 0, report
    assert " passed" in r.stdout and "failed" not in r.stdout, report
    # The only case allowed to skip is the CUDA one, on a machine without a GPU.
    skipped = [l for l in r.stdout.splitlines() if l.startswith("SKIPPED")]
    assert all("no CUDA device" in l for l in skipped), report
