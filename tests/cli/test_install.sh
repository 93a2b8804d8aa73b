#!/bin/bash
# `cmake --install` lays out bin/, lib/, lib/topoml/plugins/, include/topoml/,
# pkg-config and CMake package files; the installed topoml finds its
# installed plugins with no configuration, also after the tree is moved; a
# host program builds against the install with pkg-config and with
# find_package(topoml).
set -u
build=$4
pass=0 fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
check() { if eval "$2"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $1"; fi; }

cmake --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log" 2>&1
check "install runs" '[ $? -eq 0 ]'
p=$tmp/prefix
for f in bin/topoml lib/libtopoml.so lib/libtopoml.a lib/topoml/plugins/topoml-backend-scalar.so \
         include/topoml/topoml.h include/topoml/plugin.h include/topoml/types.h \
         lib/pkgconfig/topoml.pc lib/cmake/topoml/topomlConfig.cmake; do
    check "installed $f" "[ -e '$p/$f' ]"
done
env -u TOPOML_PLUGIN_PATH -u TOPOML_CONFIG "$p/bin/topoml" backends >"$tmp/b.txt" 2>&1
check "installed topoml finds its plugins" "grep -q '$p/lib/topoml/plugins/topoml-backend-scalar.so' '$tmp/b.txt'"
mv "$p" "$tmp/moved"
env -u TOPOML_PLUGIN_PATH -u TOPOML_CONFIG "$tmp/moved/bin/topoml" backends >"$tmp/b2.txt" 2>&1
check "a moved install still finds its plugins" "grep -q '$tmp/moved/lib/topoml/plugins/topoml-backend-scalar.so' '$tmp/b2.txt'"
mv "$tmp/moved" "$p"

cat >"$tmp/host.c" <<'C'
#include <topoml/topoml.h>
#include <stdio.h>
int main(void)
{
    topoml_context *ctx = NULL;
    if (topoml_context_new(&ctx, NULL) != TOPOML_OK)
        return 1;
    double xy[] = {0, 0, 3, 4};
    topoml_data *d = NULL;
    topoml_barcode *bc = NULL;
    topoml_rips_options o;
    topoml_rips_options_init(&o);
    o.max_dim = 0;
    int rc = topoml_data_from_points(ctx, &d, 2, 2, xy);
    if (rc == TOPOML_OK)
        rc = topoml_barcode_compute(ctx, &bc, d, &o);
    if (rc == TOPOML_OK)
        topoml_barcode_write(ctx, bc, stdout, TOPOML_OUTPUT_RIPSER, 0);
    topoml_barcode_free(bc);
    topoml_data_free(ctx, d);
    topoml_context_free(ctx);
    return rc == TOPOML_OK ? 0 : 1;
}
C
PKG_CONFIG_PATH=$p/lib/pkgconfig cc -std=c11 -Wall -Wextra -Werror -o "$tmp/host" "$tmp/host.c" \
    $(PKG_CONFIG_PATH=$p/lib/pkgconfig pkg-config --cflags --libs topoml) -Wl,-rpath,"$p/lib"
check "host builds with pkg-config" '[ $? -eq 0 ]'
"$tmp/host" >"$tmp/h.txt" 2>&1
check "host runs" "grep -q '\[0,5)' '$tmp/h.txt'"

# A host linked with a run path relative to itself ($ORIGIN, as
# docs/embedding.md says), in a folder of the prefix that is not bin/, runs
# after the prefix is moved: it finds libtopoml, the moved plugins, and the
# helper that probes them, from where libtopoml is.
cat >"$tmp/lister.c" <<'C'
#include <topoml/topoml.h>
#include <stdio.h>
int main(void)
{
    topoml_context *ctx = NULL;
    if (topoml_context_new(&ctx, NULL) != TOPOML_OK)
        return 1;
    for (uint32_t i = 0; i < topoml_backend_count(ctx); i++) {
        topoml_backend_info b = {.struct_size = sizeof b};
        if (topoml_backend_get(ctx, i, &b) == TOPOML_OK && b.path)
            printf("%s %s\n", b.path, b.probe_status == TOPOML_OK ? "probed" : b.probe_message);
    }
    topoml_context_free(ctx);
    return 0;
}
C
mkdir -p "$p/app"
cc -std=c11 -Wall -Wextra -Werror -o "$p/app/lister" "$tmp/lister.c" \
    $(PKG_CONFIG_PATH=$p/lib/pkgconfig pkg-config --cflags --libs topoml) \
    -Wl,-rpath,'$ORIGIN/../lib'
check "host builds with an \$ORIGIN run path" '[ $? -eq 0 ]'
mv "$p" "$tmp/moved"
env -u TOPOML_PLUGIN_PATH -u TOPOML_CONFIG -u LD_LIBRARY_PATH "$tmp/moved/app/lister" \
    >"$tmp/l.txt" 2>&1
check "a moved host finds libtopoml, its plugins and its helper" \
    "grep -q '^$tmp/moved/lib/topoml/plugins/topoml-backend-scalar.so probed$' '$tmp/l.txt'"
[ $fail -eq 0 ] || cat "$tmp/l.txt"
mv "$tmp/moved" "$p"
rm -rf "$p/app"

# A statically linked host (libtopoml.a) has no libtopoml.so to find the
# helper from: in a folder of the prefix it finds it in the prefix's bin/,
# also after the prefix is moved; outside any prefix it says at warning
# level that the helper is missing (instead of silently losing every
# plugin), and finds it where TOPOML_PLUGIN_HOST or plugin_host say.
cat >"$tmp/slister.c" <<'C'
#include <topoml/topoml.h>
#include <stdio.h>
static void to_stderr(void *user, int level, const char *message)
{
    (void)user;
    fprintf(stderr, "topoml: %s: %s\n", level == TOPOML_LOG_WARN ? "warning" : "log", message);
}
int main(void)
{
    topoml_context *ctx = NULL;
    if (topoml_context_new(&ctx, NULL) != TOPOML_OK)
        return 1;
    topoml_set_log(ctx, to_stderr, NULL, TOPOML_LOG_WARN);
    for (uint32_t i = 0; i < topoml_backend_count(ctx); i++) {
        topoml_backend_info b = {.struct_size = sizeof b};
        if (topoml_backend_get(ctx, i, &b) == TOPOML_OK && b.path)
            printf("%s %s\n", b.path, b.probe_status == TOPOML_OK ? "probed" : b.gate_reason);
    }
    topoml_context_free(ctx);
    return 0;
}
C
mkdir -p "$p/app"
cc -std=c11 -Wall -Wextra -Werror -o "$p/app/slister" "$tmp/slister.c" -I"$p/include" \
    "$p/lib/libtopoml.a" $(pkg-config --libs yaml-0.1) -ldl -lm -lpthread
check "a static host builds" '[ $? -eq 0 ]'
mv "$p" "$tmp/moved"
m=$tmp/moved
env -u TOPOML_PLUGIN_PATH -u TOPOML_CONFIG -u TOPOML_PLUGIN_HOST "$m/app/slister" \
    >"$tmp/s.txt" 2>&1
check "a moved static host finds its plugins and the helper in its prefix" \
    "grep -q '^$m/lib/topoml/plugins/topoml-backend-scalar.so probed$' '$tmp/s.txt'"
mkdir -p "$tmp/elsewhere"
cp "$m/app/slister" "$tmp/elsewhere/slister"
env -u TOPOML_CONFIG -u TOPOML_PLUGIN_HOST TOPOML_PLUGIN_PATH="$m/lib/topoml/plugins" \
    "$tmp/elsewhere/slister" >"$tmp/s2.txt" 2>&1
check "a static host without the helper warns" \
    "grep -q 'topoml: warning: topoml-plugin-host not found' '$tmp/s2.txt' &&
     grep -q 'topoml-backend-scalar.so .*not found' '$tmp/s2.txt'"
env -u TOPOML_CONFIG TOPOML_PLUGIN_HOST="$m/bin/topoml-plugin-host" \
    TOPOML_PLUGIN_PATH="$m/lib/topoml/plugins" "$tmp/elsewhere/slister" >"$tmp/s3.txt" 2>&1
check "TOPOML_PLUGIN_HOST names the helper" \
    "grep -q 'topoml-backend-scalar.so probed$' '$tmp/s3.txt' && ! grep -q 'plugin-host not found' '$tmp/s3.txt'"
printf 'plugin_host: %s\n' "$m/bin/topoml-plugin-host" >"$tmp/ph.yaml"
env -u TOPOML_PLUGIN_HOST TOPOML_CONFIG="$tmp/ph.yaml" TOPOML_PLUGIN_PATH="$m/lib/topoml/plugins" \
    "$tmp/elsewhere/slister" >"$tmp/s4.txt" 2>&1
check "the plugin_host key names the helper" \
    "grep -q 'topoml-backend-scalar.so probed$' '$tmp/s4.txt' && ! grep -q 'plugin-host not found' '$tmp/s4.txt'"
[ $fail -eq 0 ] || cat "$tmp/s.txt" "$tmp/s2.txt" "$tmp/s3.txt" "$tmp/s4.txt"

# The moved topoml-conformance, started by its bare name through PATH,
# finds the plugins of its own prefix.
(cd "$tmp" && env -u TOPOML_PLUGIN_PATH -u TOPOML_CONFIG PATH="$m/bin:$PATH" \
    XDG_CACHE_HOME="$tmp/cache" topoml-conformance --backend scalar --tier quick \
    --case 'distances/*' --quiet >"$tmp/c.txt" 2>&1)
check "a moved topoml-conformance finds its prefix's plugins" '[ $? -eq 0 ]'
[ $fail -eq 0 ] || cat "$tmp/c.txt"
mv "$m" "$p"
rm -rf "$p/app"

mkdir -p "$tmp/cm"
cat >"$tmp/cm/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.25)
project(host C)
find_package(topoml 0.1 REQUIRED)
add_executable(host ../host.c)
target_link_libraries(host PRIVATE topoml::topoml)
CM
cmake -S "$tmp/cm" -B "$tmp/cm/b" -DCMAKE_PREFIX_PATH="$p" >"$tmp/cm.log" 2>&1 &&
    cmake --build "$tmp/cm/b" >>"$tmp/cm.log" 2>&1
check "host builds with find_package(topoml)" '[ $? -eq 0 ]'
[ $fail -eq 0 ] || cat "$tmp/cm.log" | tail -20
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
