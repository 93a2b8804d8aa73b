#!/bin/sh
# Install what building and testing topoml needs on Debian, if it is missing.
# Run as root (or with sudo). Safe to run again: it installs nothing that is
# already there.
set -eu
# Build: compiler, CMake, libyaml, Check. Tests: Valgrind; clang with its
# sanitizer and fuzzer runtime; the external references the tests run for
# real (ripser and ripser-coeff, GUDHI with scikit-learn and POT, PHAT,
# numpy and scipy). The ABI guard's abidiff (abigail-tools); the docs site
# (mkdocs).
pkgs="build-essential cmake pkg-config libyaml-dev check libsubunit-dev valgrind
      clang libclang-rt-14-dev
      python3 python3-numpy python3-scipy python3-sklearn python3-pot
      ripser python3-gudhi gudhi-utils phat-utils
      abigail-tools mkdocs"
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
