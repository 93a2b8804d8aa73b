"""`pip wheel .` builds a wheel that installs into a fresh virtual
environment and runs there with no build tree present: the module, the
library, the plugins (found with no configuration), the gate's
certification on first use (it needs topoml-conformance from the package)
and the packaged programs."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap

import numpy as np
import pytest

import topoml

SCRIPT = textwrap.dedent("""
    import json, os, subprocess, sys
    import numpy as np
    import topoml
    want = json.load(sys.stdin)
    here = os.path.dirname(topoml.__file__)
    assert here.startswith(sys.prefix), (here, sys.prefix)
    X = np.array(want["X"])
    got = topoml.ripser(X, maxdim=1)["dgms"]
    assert [np.sort(d, 0).tolist() for d in got] == want["dgms"], got
    names = {b.name: b for b in topoml.backends()}
    for b in names.values():
        assert b.path is None or b.path.startswith(here), b.path
    assert "cpp-compat" in names, sorted(names)
    # naming a plugin certifies it on first use: topoml-conformance is found
    # in the package, beside the library
    r = topoml.barcodes(X, maxdim=1, backend="cpp-compat")
    assert r.backend == "cpp-compat", (r.backend, r.selection_reason)
    assert [np.sort(d, 0).round(9).tolist() for d in r.diagrams] == want["rounded"]
    cli = os.path.join(here, "bin", "topoml")
    out = subprocess.run([cli, "backends"], capture_output=True, text=True, check=True).stdout
    assert "cpp-compat" in out and here in out, out
    print("ok")
""")


@pytest.fixture(scope="module")
def wheel(source_dir, tmp_path_factory):
    """The wheel, built by pip in a build folder that is deleted at once."""
    pytest.importorskip("scikit_build_core")
    pytest.importorskip("nanobind")
    out = tmp_path_factory.mktemp("wheel")
    build = tempfile.mkdtemp(prefix="topoml-wheel-build-")
    env = dict(os.environ, CMAKE_BUILD_PARALLEL_LEVEL="2")
    try:
        subprocess.run([sys.executable, "-m", "pip", "wheel", source_dir, "--no-build-isolation",
                        "--no-deps", "--no-index", "-q", "-w", str(out),
                        "--config-settings=build-dir=" + build,
                        "--config-settings=cmake.define.TOPOML_GPU_PLUGINS=OFF"],
                       check=True, env=env, timeout=1200)
    finally:
        shutil.rmtree(build, ignore_errors=True)
    wheels = list(out.glob("topoml-*.whl"))
    assert len(wheels) == 1
    return wheels[0]


def test_wheel_installs_and_runs_in_a_fresh_venv(wheel, tmp_path):
    import zipfile
    names = zipfile.ZipFile(wheel).namelist()
    assert "topoml/lib/libtopoml.so.0" in names
    assert any(n.startswith("topoml/lib/topoml/plugins/topoml-backend-") for n in names)
    assert "topoml/bin/topoml" in names and "topoml/bin/topoml-conformance" in names
    # topoml.triton's kernels: the triton-bridge sources themselves
    assert {"topoml/_triton_kernels/distances.py", "topoml/_triton_kernels/tiles.py"} <= set(names)
    assert not any(n.endswith(".a") or n.startswith("topoml/include/") for n in names)
    venv = tmp_path / "venv"
    # Debian's numpy from the system site; nothing of this checkout
    subprocess.run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", str(venv)],
                   check=True)
    py = str(venv / "bin" / "python")
    subprocess.run([py, "-m", "pip", "install", "-q", "--no-index", "--no-deps", str(wheel)],
                   check=True)
    t = np.linspace(0, 2 * np.pi, 24, endpoint=False)
    X = np.c_[np.cos(t), 0.7 * np.sin(t)]
    want = [np.sort(d, 0) for d in topoml.ripser(X)["dgms"]]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "TOPOML_"))}
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    r = subprocess.run([py, "-c", SCRIPT], cwd=str(tmp_path), env=env, capture_output=True,
                       text=True, timeout=600,
                       input=json.dumps({"X": X.tolist(), "dgms": [d.tolist() for d in want],
                                         "rounded": [d.round(9).tolist() for d in want]}))
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stdout + r.stderr
