#!/bin/sh
# Make the ABI guard's baseline (abi/) from a release: run it on the tree
# and build of the release that the next ones must stay compatible with,
# after a documented version bump or when a release is made.
#
#   abi/update_baseline.sh SOURCE BUILD     (BUILD: RelWithDebInfo or Debug)
#
# It writes abi/libtopoml.abi (libtopoml's exported functions and the types
# of the public headers), abi/plugin-abi.abi (the plugin ABI's types, through
# abi/plugin_abi_anchor.c), abi/include/topoml/ (that release's plugin
# headers, which the tests build a plugin from) and abi/baseline.json, in
# the SOURCE tree. Review the diff and commit it.
set -eu
src=$(cd "$1" && pwd)
build=$(cd "$2" && pwd)
out=$src/abi
lib=$(readlink -f "$build/core/libtopoml.so")
version=$(basename "$lib" | sed 's/^libtopoml\.so\.//')
soversion=$(readelf -d "$lib" | sed -n 's/.*Library soname: \[libtopoml\.so\.\([0-9]*\)\].*/\1/p')
abi=$(sed -n 's/^#define TOPOML_ABI_VERSION \([0-9]*\)u\{0,1\}.*/\1/p' \
      "$src/plugin-api/include/topoml/plugin.h")
commit=$(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown)
[ -n "$soversion" ] && [ -n "$abi" ] || { echo "update_baseline: cannot read versions" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
abidw --headers-dir "$src/core/include/topoml" --headers-dir "$src/plugin-api/include/topoml" \
    --drop-private-types --short-locs --no-comp-dir-path --no-corpus-path \
    --out-file "$out/libtopoml.abi" "$lib"
sel=
grep -q 'typedef enum topoml_selection' "$src/plugin-api/include/topoml/plugin.h" &&
    sel=-DTOPOML_ANCHOR_SELECTION
# shellcheck disable=SC2086
${CC:-cc} -g -O0 -shared -fPIC -I "$src/plugin-api/include" $sel -o "$tmp/anchor.so" \
    "$out/plugin_abi_anchor.c"
abidw --short-locs --no-comp-dir-path --no-corpus-path --out-file "$out/plugin-abi.abi" \
    "$tmp/anchor.so"
mkdir -p "$out/include/topoml"
cp "$src/plugin-api/include/topoml/plugin.h" "$src/plugin-api/include/topoml/types.h" \
    "$out/include/topoml/"
cat >"$out/baseline.json" <<JSON
{
  "release": "$version",
  "soversion": $soversion,
  "plugin_abi": $abi,
  "source": "topoml $version, commit $commit, made by abi/update_baseline.sh",
  "files": {
    "libtopoml.abi": "abidw --headers-dir core/include/topoml --headers-dir plugin-api/include/topoml --drop-private-types --short-locs --no-comp-dir-path --no-corpus-path core/libtopoml.so.$version",
    "plugin-abi.abi": "abidw --short-locs --no-comp-dir-path --no-corpus-path of abi/plugin_abi_anchor.c compiled with cc -g -O0 -shared -fPIC against abi/include",
    "include/topoml": "that release's plugin headers, for the plugin the tests build from them"
  }
}
JSON
echo "update_baseline: abi/ now holds topoml $version (libtopoml.so.$soversion, plugin ABI v$abi)"
