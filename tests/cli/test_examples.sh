#!/bin/bash
# examples/ built as a plugin author and a host author build them: against
# the *installed* package (cmake --install into a temporary prefix), once
# with pkg-config (examples/Makefile: topoml-plugin.pc, topoml.pc) and once
# with find_package(topoml) (examples/CMakeLists.txt: topoml::plugin_api,
# topoml::topoml). Each time the plugin links no libtopoml and exports only
# its entry symbol, is refused by a strict host before it is certified,
# is certified on first use under gate: auto (the installed tree finding
# its helper programs from libtopoml's own place, --prefix notwithstanding), passes the
# installed topoml-conformance with --certify, and is then used by the C and
# the C++ host, whose H0 bars equal the built-in reference's. A host also
# links the installed static library through find_package.
set -u
build=$4
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
check "topoml-plugin.pc installed" "[ -f '$p/lib/pkgconfig/topoml-plugin.pc' ]"
export PKG_CONFIG_PATH=$p/lib/pkgconfig
check "topoml-plugin.pc has no library" "[ -z \"\$(pkg-config --libs topoml-plugin)\" ]"
check "topoml-plugin.pc names the installed headers" \
    "pkg-config --cflags topoml-plugin | grep -q -- '-I$p/lib/pkgconfig/../../include'"
check "topoml-plugin.pc names the plugin folder" \
    "[ \"\$(pkg-config --variable=plugindir topoml-plugin)\" -ef '$p/lib/topoml/plugins' ]"

# $1: label, $2: folder with topoml-backend-example.so, host, host-cpp
use_examples() {
    local how=$1 dir=$2 so=$2/plugins/topoml-backend-example.so
    mkdir -p "$dir/plugins"
    chmod 700 "$dir/plugins"
    mv "$dir/topoml-backend-example.so" "$so"
    check "$how: plugin needs no libtopoml" "! readelf -d '$so' | grep NEEDED | grep -q topoml"
    check "$how: plugin exports only its entry" \
        "[ \"\$(nm -D --defined-only '$so' | awk '{print \$3}' | grep -v '^_' | sort | tr '\n' ' ')\" = 'topoml_backend_negotiate ' ]"
    printf 'gate: strict\n' >"$tmp/strict.yaml"
    TOPOML_CONFIG=$tmp/strict.yaml TOPOML_PLUGIN_PATH=$dir/plugins "$dir/host" example \
        >"$tmp/before.txt" 2>&1
    check "$how: an uncertified plugin is refused by a strict host" \
        "[ $? -ne 0 ] && ! grep -q '^backend: example' '$tmp/before.txt'"
    # gate: auto certifies it on first use, with the topoml-conformance
    # installed next to this libtopoml (found from the library's place).
    XDG_CACHE_HOME=$tmp/auto-cache TOPOML_PLUGIN_PATH=$dir/plugins "$dir/host" example \
        >"$tmp/auto.txt" 2>/dev/null
    check "$how: gate: auto certifies it on first use" \
        "head -1 '$tmp/auto.txt' | grep -qx 'backend: example'"
    rm -rf "$tmp/auto-cache"
    "$p/bin/topoml-conformance" --plugin "$so" --certify >"$tmp/conf.txt" 2>&1
    check "$how: topoml-conformance certifies the plugin" \
        "[ $? -eq 0 ] && grep -q 'verdict: pass' '$tmp/conf.txt' && ! grep -Eq '^ *(FAIL|CRASH|TIMEOUT) ' '$tmp/conf.txt'"
    TOPOML_PLUGIN_PATH=$dir/plugins "$dir/host" scalar >"$tmp/ref.txt" 2>/dev/null
    check "$how: C host runs on scalar" "head -1 '$tmp/ref.txt' | grep -qx 'backend: scalar'"
    for h in host host-cpp; do
        TOPOML_PLUGIN_PATH=$dir/plugins "$dir/$h" example >"$tmp/$h.txt" 2>"$tmp/$h.err"
        check "$how: $h runs on the example plugin" "head -1 '$tmp/$h.txt' | grep -qx 'backend: example'"
        check "$how: $h's bars equal the reference's" \
            "[ \$(wc -l <'$tmp/ref.txt') -gt 30 ] && diff <(tail -n +2 '$tmp/ref.txt' | sort) <(tail -n +2 '$tmp/$h.txt' | sort) >/dev/null"
        TOPOML_PLUGIN_PATH=$dir/plugins "$dir/$h" >"$tmp/$h-auto.txt" 2>/dev/null
        check "$how: $h with no backend named runs" "head -1 '$tmp/$h-auto.txt' | grep -q '^backend: '"
    done
}

mkdir -p "$tmp/pc"
cp "$src"/examples/*.c "$src"/examples/*.cpp "$src/examples/Makefile" "$tmp/pc/"
make -C "$tmp/pc" CFLAGS="-O2 -Wall -Wextra -Werror" CXXFLAGS="-O2 -Wall -Wextra -Werror" \
    >"$tmp/make.log" 2>&1
check "pkg-config: examples build" '[ $? -eq 0 ]'
[ -f "$tmp/pc/topoml-backend-example.so" ] && use_examples pkg-config "$tmp/pc"
rm -rf "$XDG_CACHE_HOME"

cmake -S "$src/examples" -B "$tmp/cm" -DCMAKE_PREFIX_PATH="$p" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_FLAGS="-Wall -Wextra -Werror" -DCMAKE_CXX_FLAGS="-Wall -Wextra -Werror" \
    >"$tmp/cm.log" 2>&1 && cmake --build "$tmp/cm" -j2 >>"$tmp/cm.log" 2>&1
check "find_package: examples build" '[ $? -eq 0 ]'
[ -f "$tmp/cm/topoml-backend-example.so" ] && use_examples find_package "$tmp/cm"

# The package's static library links with what the package itself says
# (libyaml, libdl, libm), with no pkg-config module of the consumer's.
mkdir -p "$tmp/st"
cat >"$tmp/st/CMakeLists.txt" <<CM
cmake_minimum_required(VERSION 3.25)
project(host_static C)
find_package(topoml 0.2 REQUIRED)
add_executable(host-static $src/examples/host.c)
target_link_libraries(host-static PRIVATE topoml::topoml_static m)
CM
cmake -S "$tmp/st" -B "$tmp/st/b" -DCMAKE_PREFIX_PATH="$p" >"$tmp/st.log" 2>&1 &&
    cmake --build "$tmp/st/b" >>"$tmp/st.log" 2>&1
check "find_package: a host links topoml::topoml_static" '[ $? -eq 0 ]'
"$tmp/st/b/host-static" scalar >"$tmp/st.txt" 2>/dev/null
check "the static host runs" "head -1 '$tmp/st.txt' | grep -qx 'backend: scalar'"
check "the static host needs no libtopoml.so" "! readelf -d '$tmp/st/b/host-static' | grep NEEDED | grep -q topoml"

[ $fail -eq 0 ] || tail -20 "$tmp/st.log"
[ $fail -eq 0 ] || tail -20 "$tmp/make.log" "$tmp/cm.log" "$tmp/conf.txt"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
