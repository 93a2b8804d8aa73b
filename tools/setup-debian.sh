#!/bin/sh
# Install what building and testing topoml needs on Debian, if it is missing.
# Run as root (or with sudo). Safe to run again: it installs nothing that is
# already there.
set -eu
pkgs="build-essential cmake pkg-config libyaml-dev check libsubunit-dev valgrind
      python3 python3-numpy python3-scipy ripser python3-gudhi gudhi-utils"
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
