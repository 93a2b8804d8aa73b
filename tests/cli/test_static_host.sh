#!/bin/bash
# The static recipes of docs/embedding.md ("Linking statically"), against
# the installed package (cmake --install into a temporary prefix): a small
# host (tests/cli/static_host.c) linked with libtopoml.a three ways —
#   pkg-config topoml-static: libtopoml.a in an otherwise dynamic program;
#   pkg-config --static topoml with cc -static: a fully static program;
#   CMake find_package(topoml) and topoml::topoml_static —
# needs no libtopoml.so, runs with no plugin file anywhere (an empty plugin
# path, a prefix without plugins) on the built-in scalar reference, and
# prints the barcodes of shipped examples exactly as `topoml barcode` does.
# Wrapping `pkg-config --static --libs topoml` in -Wl,-Bstatic, which the
# docs advise against, picked libm.a and did not link: topoml.pc now says
# what it needs through Requires.private (libyaml) and Libs.private.
set -u
topoml=$1 data=$2 build=$4
src=$(cd "$(dirname "$0")/../.." && pwd)
pass=0 fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
check() { if eval "$2"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $1"; fi; }
unset TOPOML_CONFIG TOPOML_PLUGIN_PATH
export XDG_CACHE_HOME=$tmp/cache

p=$tmp/prefix
cmake --install "$build" --prefix "$p" >"$tmp/install.log" 2>&1
check "install runs" '[ $? -eq 0 ]'
# No plugin file at all: the host must not lean on one.
rm -rf "$p/lib/topoml/plugins"
export PKG_CONFIG_PATH=$p/lib/pkgconfig
host=$src/tests/cli/static_host.c
flags="-O2 -Wall -Wextra -Werror -std=c11"

check "topoml.pc asks for libyaml through its module" \
    "pkg-config --print-requires-private topoml | grep -q '^yaml-0.1'"
check "topoml-static.pc names the archive" \
    "pkg-config --libs topoml-static | grep -q -- '/libtopoml.a'"

cc $flags -o "$tmp/host-pc" "$host" $(pkg-config --cflags --libs topoml-static) >"$tmp/pc.log" 2>&1
check "pkg-config topoml-static: the host links" '[ $? -eq 0 ]'
cc $flags -static -o "$tmp/host-full" "$host" $(pkg-config --cflags --static --libs topoml) \
    >"$tmp/full.log" 2>&1
check "pkg-config --static topoml, cc -static: the host links" '[ $? -eq 0 ]'
check "... and has no dynamic section" "! readelf -d '$tmp/host-full' 2>/dev/null | grep -q NEEDED"

mkdir -p "$tmp/cm"
cat >"$tmp/cm/CMakeLists.txt" <<CM
cmake_minimum_required(VERSION 3.25)
project(static_host C)
find_package(topoml 0.4 REQUIRED)
add_executable(host-cmake $host)
target_link_libraries(host-cmake PRIVATE topoml::topoml_static)
CM
cmake -S "$tmp/cm" -B "$tmp/cm/b" -DCMAKE_PREFIX_PATH="$p" -DCMAKE_C_FLAGS="$flags" \
    >"$tmp/cm.log" 2>&1 && cmake --build "$tmp/cm/b" >>"$tmp/cm.log" 2>&1
check "find_package: the host links topoml::topoml_static" '[ $? -eq 0 ]'
cp "$tmp/cm/b/host-cmake" "$tmp/host-cmake" 2>/dev/null

for h in host-pc host-full host-cmake; do
    [ -x "$tmp/$h" ] || continue
    check "$h needs no libtopoml.so" "! readelf -d '$tmp/$h' | grep NEEDED | grep -q topoml"
    for ex in "projective_plane.lower_distance_matrix lower-distance 2" \
        "sphere_3_192.lower_distance_matrix lower-distance 1" "o3_1024.txt point-cloud 0"; do
        set -- $ex
        TOPOML_PLUGIN_PATH= "$tmp/$h" "$data/$1" "$2" "$3" >"$tmp/out.txt" 2>"$tmp/err.txt"
        check "$h $1: runs on the built-in scalar reference" \
            "[ $? -eq 0 ] && grep -qx 'backend: scalar' '$tmp/err.txt'"
        "$topoml" barcode --backend scalar --format "$2" --dim "$3" "$data/$1" |
            sed -n '/^persistence intervals/,$p' >"$tmp/want.txt"
        check "$h $1: the barcode of topoml barcode" \
            "[ -s '$tmp/want.txt' ] && cmp -s '$tmp/want.txt' '$tmp/out.txt'"
    done
done
[ $fail -eq 0 ] || tail -5 "$tmp/pc.log" "$tmp/full.log" "$tmp/cm.log" "$tmp/err.txt"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
