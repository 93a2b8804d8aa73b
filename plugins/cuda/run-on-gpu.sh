#!/usr/bin/env bash
# run-on-gpu.sh OUTDIR — everything the CUDA backend needs checked on a
# machine with an NVIDIA GPU, in one run of under 10 minutes:
#
#   1. build (CMake, CMAKE_CUDA_ARCHITECTURES=90) the CUDA and scalar
#      plugins, their tests, the benchmark and the topoml CLI; if the full
#      tree cannot be configured there (a dependency of the core missing),
#      the same targets are compiled directly with nvcc and gcc instead;
#   2. the tests: loading and probe (a device is required), the host-side
#      helpers, the tile kernels emulated on the host, every op against the
#      scalar reference on the device (test_cuda_gpu);
#   3. the benchmark (bench_cuda + torch.cdist, bench/bench_cuda.py);
#   4. test_cuda_gpu --small under compute-sanitizer memcheck and racecheck.
#
# Each step has a time limit and the whole run a deadline; a step that
# does not fit in what is left is recorded as skipped. Logs, JSON and a
# summary (summary.txt; one line per step with its exit status) go to
# OUTDIR. Exit status: 0 when every step passed.
set -u
out=$(realpath -m "${1:?usage: run-on-gpu.sh OUTDIR}")
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
build=${TOPOML_GPU_BUILD:-/tmp/topoml-build-gpu}
jobs=$(nproc 2>/dev/null || echo 4)
# The toolkit may be installed without being on PATH.
command -v nvcc >/dev/null || PATH=$PATH:${CUDA_HOME:-/usr/local/cuda}/bin
export PATH
start=$(date +%s)
deadline=$((start + ${TOPOML_GPU_SECONDS:-570}))
summary="$out/summary.txt"
: >"$summary"
failed=0

# step NAME LIMIT CMD...: run CMD with its output in OUTDIR/NAME.log, within
# LIMIT seconds and the deadline; record the outcome.
step() {
    local name=$1 limit=$2
    shift 2
    local left=$((deadline - $(date +%s)))
    if [ "$left" -lt 15 ]; then
        echo "$name: skipped (no time left)" | tee -a "$summary"
        failed=1
        return 1
    fi
    [ "$limit" -gt "$left" ] && limit=$left
    local t0 rc
    t0=$(date +%s)
    timeout --kill-after=10 "$limit" "$@" >"$out/$name.log" 2>&1
    rc=$?
    local verdict=ok
    case $rc in
    0) ;;
    77) verdict="skipped (no device)" ;;
    124 | 137) verdict="TIMEOUT after ${limit}s" ;;
    *) verdict="FAILED (exit $rc)" ;;
    esac
    [ "$rc" -ne 0 ] && failed=1
    echo "$name: $verdict, $(($(date +%s) - t0)) s" | tee -a "$summary"
    return $rc
}

{
    echo "date: $(date -u +%FT%TZ)"
    echo "repo: $repo ($(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo no git))"
    nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv 2>&1
    nvcc --version 2>&1 | tail -2
    cmake --version 2>&1 | head -1
    gcc --version 2>&1 | head -1
    python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)' 2>&1
} >"$out/environment.txt"

# ---- 1. build ----
targets="topoml_backend_cuda topoml_backend_scalar test_cuda_load test_cuda_emulated test_cuda_gpu bench_cuda"
plugin=$build/plugins-out/topoml-backend-cuda.so
scalar_plugin=$build/plugins-out/topoml-backend-scalar.so
bin=$build/plugins/cuda
if step configure 150 cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DTOPOML_SUBBUILD_TESTS=OFF -DTOPOML_VALGRIND_TESTS=OFF; then
    extra=""
    known=$(cmake --build "$build" --target help 2>/dev/null)
    for t in test_cuda_host topoml_cli; do
        grep -qw "$t" <<<"$known" && extra="$extra $t"
    done
    # shellcheck disable=SC2086
    step build 300 cmake --build "$build" -j "$jobs" --target $targets $extra
    test_bin=$bin/tests
else
    # The core's dependencies (libyaml, Check, pkg-config) may be missing on
    # a machine set up for GPU work: compile what the GPU run needs directly.
    step build-direct 300 bash "$here/build-direct.sh" "$repo" "$build/direct"
    plugin=$build/direct/topoml-backend-cuda.so
    scalar_plugin=$build/direct/topoml-backend-scalar.so
    bin=$build/direct
    test_bin=$build/direct
fi

# ---- 2. tests ----
export TOPOML_CUDA_EXPECT_DEVICE=1
step test-load 60 "$test_bin/test_cuda_load" "$plugin"
[ -x "$test_bin/test_cuda_host" ] && step test-host 60 "$test_bin/test_cuda_host"
step test-emulated 60 "$test_bin/test_cuda_emulated"
step test-gpu 200 "$test_bin/test_cuda_gpu" "$plugin" "$here/test-data" --json "$out/test-gpu.json"
if [ -x "$build/tools/topoml" ]; then
    step topoml-backends 30 "$build/tools/topoml" backends
fi

# ---- 3. benchmark ----
if [ -n "${CUDA_SKIP_BENCH:-}" ]; then
    echo "bench: skipped (CUDA_SKIP_BENCH)" | tee -a "$summary"
elif command -v python3 >/dev/null; then
    step bench 170 python3 "$here/bench/bench_cuda.py" --bench "$bin/bench_cuda" \
        --cuda-plugin "$plugin" --scalar-plugin "$scalar_plugin" --out "$out/bench"
else
    mkdir -p "$out/bench"
    step bench 170 "$bin/bench_cuda" "$plugin" "$scalar_plugin" "$out/bench/bench_cuda.json"
fi

# ---- 4. compute-sanitizer ----
sanitizer=$(command -v compute-sanitizer || true)
for c in /usr/local/cuda/bin/compute-sanitizer /usr/local/cuda/compute-sanitizer/compute-sanitizer; do
    [ -z "$sanitizer" ] && [ -x "$c" ] && sanitizer=$c
done
if [ -n "${CUDA_SKIP_SANITIZERS:-}" ]; then
    echo "compute-sanitizer: skipped (CUDA_SKIP_SANITIZERS)" | tee -a "$summary"
elif [ -n "$sanitizer" ]; then
    step memcheck 120 "$sanitizer" --tool memcheck --leak-check full --error-exitcode 86 \
        "$test_bin/test_cuda_gpu" "$plugin" "$here/test-data" --small ${MEMCHECK_ONLY:+--only "$MEMCHECK_ONLY"}
    step racecheck "${RACECHECK_SECONDS:-120}" "$sanitizer" --tool racecheck --racecheck-report all --error-exitcode 86 \
        "$test_bin/test_cuda_gpu" "$plugin" "$here/test-data" --small ${RACECHECK_ONLY:+--only "$RACECHECK_ONLY"}
else
    echo "compute-sanitizer: not found, memcheck and racecheck not run" | tee -a "$summary"
    failed=1
fi

echo "total: $(($(date +%s) - start)) s, $([ $failed = 0 ] && echo all passed || echo FAILURES)" |
    tee -a "$summary"
exit $failed
