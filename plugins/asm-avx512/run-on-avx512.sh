#!/bin/sh
# run-on-avx512.sh OUTDIR — on a machine with AVX-512: build
# topoml-backend-asm-avx512 on its own (cmake, the system gcc), run its tests
# and its benchmark, and leave everything in OUTDIR:
#
#   summary.txt       what ran and how it ended (also printed)
#   machine.txt       CPU, flags, compiler, cmake, OpenBLAS found
#   configure.log build.log   cmake output
#   tests.log         ctest --output-on-failure (when Check is installed)
#   disassembly.txt   the plugin's code as built
#   bench.txt bench.json bench.err   the benchmark (see bench/bench.c)
#
# Needs gcc, cmake, make; Check (pkg-config check) for the unit tests, else
# they are skipped and said to be; OpenBLAS (libopenblas.so.0) for the BLAS
# route, else the benchmark runs without it and says so. Needs no network.
# Exit status: 0 when everything that ran passed.
#
# Options through the environment:
#   BENCH_ARGS     extra arguments for the benchmark (e.g. "--reps 5")
#   BENCH_SECONDS  start no benchmark case after this many seconds (default
#                  240; the sizes run smallest first, so a cut run still
#                  covers every dtype and dimension of the sizes it reached)
#   BENCH_CPU      the core to pin the benchmark to (default 2, if taskset
#                  exists)
#   JOBS           parallel build and test jobs (default 4)
# Build and tests take well under a minute; the full benchmark (n up to
# 16384) about 3-5 minutes on one core, hence the budget.
set -u

out=${1:?usage: run-on-avx512.sh OUTDIR}
mkdir -p "$out" || exit 2
out=$(cd "$out" && pwd)
src=$(cd "$(dirname "$0")" && pwd)
build="$out/build"
jobs=${JOBS:-4}
status=0

say() {
    printf '%s\n' "$*" | tee -a "$out/summary.txt"
}

: > "$out/summary.txt"
say "run-on-avx512: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -n), source $src"

{
    uname -a
    lscpu 2>/dev/null || grep -m1 'model name' /proc/cpuinfo
    echo
    grep -m1 '^flags' /proc/cpuinfo
    echo
    gcc --version | head -n 1
    cmake --version | head -n 1
    ldconfig -p 2>/dev/null | grep -i openblas
} > "$out/machine.txt" 2>&1
say "cpu: $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')"
for f in avx512f avx512dq avx512bw avx512vl avx512_vnni avx512_fp16; do
    grep -m1 '^flags' /proc/cpuinfo | grep -qw "$f" && have="${have:-} $f"
done
say "cpu flags:${have:- (no avx512 flags in /proc/cpuinfo)}"

testing=OFF
if pkg-config --exists check 2>/dev/null; then
    testing=ON
fi

if ! cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=$testing \
        > "$out/configure.log" 2>&1; then
    say "configure: FAILED (configure.log)"
    exit 1
fi
if ! cmake --build "$build" -j "$jobs" > "$out/build.log" 2>&1; then
    say "build: FAILED (build.log)"
    exit 1
fi
say "build: ok ($(gcc --version | head -n 1))"
so="$build/plugins-out/topoml-backend-asm-avx512.so"
objdump -d --no-show-raw-insn "$so" > "$out/disassembly.txt" 2>&1 || true

if [ "$testing" = ON ]; then
    # The kernel test exits 77 (skipped) if the gate says no: then the
    # summary says so instead of pretending the kernels were tested.
    if ctest --test-dir "$build" --output-on-failure -j "$jobs" > "$out/tests.log" 2>&1; then
        say "tests: ok ($(grep -E 'tests passed' "$out/tests.log"))"
    else
        say "tests: FAILED ($(grep -E 'tests passed' "$out/tests.log"); tests.log)"
        status=1
    fi
    if grep -Eq ': test_asm_avx512_kernels \.+ *\**Skipped' "$out/tests.log"; then
        say "tests: the kernel test was SKIPPED: the gate refused this machine (tests.log)"
        status=1
    fi
else
    say "tests: not built: Check is not installed (pkg-config check); the benchmark still"
    say "       checks every result it times against the scalar reference"
fi

# One thread for OpenBLAS; its core type chosen by itself, not by any
# override in the environment; the benchmark pinned to one core.
pin=""
if command -v taskset > /dev/null 2>&1; then
    pin="taskset -c ${BENCH_CPU:-2}"
fi
# shellcheck disable=SC2086
# OpenBLAS may not recognise a CPU that hides its model and fall back to
# slow kernels: BENCH_OPENBLAS_CORETYPE names the ones to use.
if env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 \
        ${BENCH_OPENBLAS_CORETYPE:+OPENBLAS_CORETYPE=$BENCH_OPENBLAS_CORETYPE} \
        timeout $((${BENCH_SECONDS:-240} + 120)) $pin "$build/bench/topoml-asm-avx512-bench" \
        --json "$out/bench.json" --budget "${BENCH_SECONDS:-240}" ${BENCH_ARGS:-} \
        > "$out/bench.txt" 2> "$out/bench.err"; then
    say "bench: ok (bench.txt, bench.json)"
else
    say "bench: FAILED or timed out, exit $? (bench.err)"
    status=1
fi
[ -s "$out/bench.err" ] && say "bench says: $(tr '\n' ' ' < "$out/bench.err")"
head -n 5 "$out/bench.txt" | tee -a "$out/summary.txt"
say "done: exit $status"
exit $status
