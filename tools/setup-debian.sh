#!/bin/sh
# Install what building and testing topoml needs on Debian, if it is missing.
# Run as root (or with sudo). Safe to run again: it installs nothing that is
# already there.
set -eu
# Build: compiler, CMake, libyaml, Check. Tests: Valgrind; clang with its
# sanitizer and fuzzer runtime; the external references the tests run for
# real (ripser and ripser-coeff, GUDHI with scikit-learn and POT, PHAT,
# numpy and scipy). The ABI guard's abidiff (abigail-tools); the docs site
# (mkdocs); groff to render the man pages in their test.
pkgs="build-essential cmake pkg-config libyaml-dev check libsubunit-dev valgrind
      clang libclang-rt-14-dev
      python3 python3-numpy python3-scipy python3-sklearn python3-pot
      python3-dev python3-venv
      ripser python3-gudhi gudhi-utils phat-utils
      abigail-tools mkdocs groff-base"
missing=""
for p in $pkgs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
        missing="$missing $p"
done
if [ -n "$missing" ]; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "setup-debian: missing packages:$missing; run this script as root" >&2
        exit 1
    fi
    echo "setup-debian: installing$missing" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # shellcheck disable=SC2086
    apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
# The Python package (python/, docs/python.md) is built and tested in a
# virtual environment, .venv at the top of the checkout (ignored by git), on
# Debian's python3 and seeing Debian's numpy, scipy, scikit-learn and GUDHI;
# the build tools and the libraries the tests compare with come from PyPI,
# only those that are not importable yet.
venv="$(cd "$(dirname "$0")/.." && pwd)/.venv"
[ -x "$venv/bin/python" ] || /usr/bin/python3 -m venv --system-site-packages "$venv"
need=$("$venv/bin/python" - <<'PY'
import importlib.util
wanted = {"nanobind": "nanobind", "scikit_build_core": "scikit-build-core", "pytest": "pytest",
          "numpy": "numpy", "scipy": "scipy", "sklearn": "scikit-learn", "gudhi": "gudhi",
          "matplotlib": "matplotlib", "ripser": "ripser", "gph": "giotto-ph", "persim": "persim"}
# a real Jupyter kernel for the Ctrl-C test (python/tests/test_jupyter.py), ~70 MB
# Dask and distributed for topoml.dask (python/tests/test_dask.py, docs/distributed.md)
wanted.update({"dask": "dask", "distributed": "distributed"})
wanted.update({"jupyter_client": "jupyter_client", "ipykernel": "ipykernel"})
print(" ".join(d for m, d in wanted.items() if importlib.util.find_spec(m) is None))
PY
)
if [ -n "$need" ]; then
    echo "setup-debian: installing $need into $venv" >&2
    # shellcheck disable=SC2086
    "$venv/bin/pip" install -q --disable-pip-version-check $need
fi
# topoml.torch and topoml.tensorflow (docs/ml.md) are tested against PyTorch
# and the CPU build of TensorFlow from PyPI, installed when not importable.
# PyPI's torch for Linux links the CUDA libraries (cufile, cusparseLt,
# nvshmem, cudart, ...), so `import torch` fails without its nvidia-*
# dependencies even on a machine without a GPU: it is installed with them.
# numpy stays below 2: Debian's scipy, scikit-learn and GUDHI in the venv are
# built against numpy 1 (tensorflow-cpu would otherwise pull numpy 2).
ml_need=$("$venv/bin/python" - <<'PY'
import importlib.util
wanted = {"torch": "torch", "tensorflow": "tensorflow-cpu"}
print(" ".join(d for m, d in wanted.items() if importlib.util.find_spec(m) is None))
PY
)
if [ -n "$ml_need" ]; then
    echo "setup-debian: installing $ml_need into $venv" >&2
    # shellcheck disable=SC2086
    "$venv/bin/pip" install -q --disable-pip-version-check $ml_need "numpy<2"
fi
# Ripser built from its current source, the drop-in test's second reference
# (tests/CMakeLists.txt looks for `ripser-current` on the PATH; without it the
# test compares with Debian's Ripser 1.2.1 only and says so). Debian packages
# 1.2.1 only, so the source is not fetched here: set TOPOML_RIPSER_SOURCE to
# a checkout of Ripser's repository to build it as Ripser's Makefile does.
if [ -n "${TOPOML_RIPSER_SOURCE:-}" ] && ! command -v ripser-current >/dev/null 2>&1; then
    echo "setup-debian: building ripser-current from $TOPOML_RIPSER_SOURCE" >&2
    c++ -std=c++11 -Wall -O3 -D NDEBUG -o /usr/local/bin/ripser-current \
        "$TOPOML_RIPSER_SOURCE/ripser.cpp"
fi
# Two more environments, from PyPI only (Debian's packages not seen: a venv
# without --system-site-packages), in which CTest runs the Python suite again
# (python_pytest_latest, python_pytest_oldest; python/CMakeLists.txt) with the
# module the build makes for .venv's Python, the same python3 (nanobind's
# module reads arrays through the buffer protocol and DLPack, built against
# no numpy):
#  - .venv-latest: the newest releases, what `pip install topoml` users get
#    (numpy 2, the newest scikit-learn), with the test references and
#    tensorflow-cpu; PyTorch is left out (PyPI's Linux torch brings the CUDA
#    libraries, about 5 GB: its tests run in .venv and are skipped here with
#    that reason);
#  - .venv-oldest: the oldest versions pyproject.toml declares (numpy,
#    scikit-learn, matplotlib), the floor that installs from wheels on
#    Debian 12's Python 3.11; pip picks what goes with them.
# Set TOPOML_SETUP_ONE_VENV=1 to make .venv alone. Timed once each on the
# 2-core development machine under load average 10 to 19 from other work:
# 173 s for .venv-latest without tensorflow-cpu, 199 s more for it, 71 s for
# GUDHI and POT; 276 s for .venv-oldest (docs/python.md, "Test environments").
top="$(cd "$(dirname "$0")/.." && pwd)"
if [ -z "${TOPOML_SETUP_ONE_VENV:-}" ]; then
    if [ ! -x "$top/.venv-latest/bin/python" ] ||
       ! "$top/.venv-latest/bin/python" -c "import numpy, sklearn, scipy, pandas, pytest, ripser, gph, persim, gudhi, tensorflow" 2>/dev/null; then
        echo "setup-debian: making $top/.venv-latest (newest releases from PyPI)" >&2
        [ -x "$top/.venv-latest/bin/python" ] || /usr/bin/python3 -m venv "$top/.venv-latest"
        "$top/.venv-latest/bin/pip" install -q --disable-pip-version-check --upgrade \
            numpy scipy scikit-learn pandas matplotlib pytest ripser giotto-ph persim gudhi POT \
            tensorflow-cpu
    fi
    if [ ! -x "$top/.venv-oldest/bin/python" ] ||
       ! "$top/.venv-oldest/bin/python" -c "import numpy, sklearn, matplotlib, pandas, pytest" 2>/dev/null; then
        echo "setup-debian: making $top/.venv-oldest (the oldest versions pyproject.toml declares)" >&2
        [ -x "$top/.venv-oldest/bin/python" ] || /usr/bin/python3 -m venv "$top/.venv-oldest"
        "$top/.venv-oldest/bin/pip" install -q --disable-pip-version-check --only-binary=:all: \
            "numpy==1.23.2" "scikit-learn==1.2.0" "matplotlib==3.6.1" scipy pandas pytest
    fi
fi
