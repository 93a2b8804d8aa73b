#!/usr/bin/env bash
# device-run.sh OUTDIR [PART...] — build, test and benchmark topoml on a
# machine with an NVIDIA GPU and an AVX-512 CPU (the only place the cuda,
# triton-bridge and asm-avx512 fast paths run), in one go.
#
# PARTS (default: all, in this order):
#   tree     build the whole tree (CUDA for sm_90) and run its test suite
#   conf     topoml-conformance --tier full on every plugin (JSON + JUnit)
#   asm      plugins/asm-avx512/run-on-avx512.sh (tests + benchmark)
#   triton   plugins/triton-bridge/run-on-gpu.sh (tests + benchmark)
#   cuda     plugins/cuda/run-on-gpu.sh (tests, sanitizers, benchmark)
#   rips     bench/bench_rips_gpu.py: barcodes on the cuda backend (as a
#            CLI process and, when the tree part built the Python package,
#            in process like giotto-ph) vs
#            the scalar one, Ripser++ (.gpudata/ripser++ when present: built
#            from its public source, never part of this tree) and Ripser
#   collapse plugins/cuda/bench/bench_cuda_collapse.py (collapse off/on/auto
#            in front of the cuda backend)
#   scale    the threads backend's scaling on this machine's cores, with
#            its JSON artifacts: bench/bench_reduce.py (the Rips
#            reduction, serial and pooled, SCALE_THREADS, default
#            0,1,2,4,8,16) and bench/bench_edges.py (a point cloud's
#            distances and edges at the same thread counts but 0; this
#            tree as both builds it compares)
#   py       the Python package on this machine's python3 itself (its torch,
#            numpy, ...: a venv would not see them), run under its own path,
#            with the wheels of .whl/ (nanobind, pytest, ...; installed for
#            every part, see below): the CUDA cases of the torch tests with
#            the cuda plugin enabled in-process, then bench/ml_adapters.py
#            --device cuda (ML_SIZES, ML_TRANSFER_SIZES)
#   gate     bench/gate/cuda_sandbox.py: the cuda plugin behind the gate,
#            in the host and in a sandboxed helper (first use, call times
#            with verify auto and off, the conformance tiers) (GATE_REPS,
#            GATE_CONF: the tiers, default full,quick)
#   attention topoml.triton on the GPU: python/tests/test_triton_attention.py
#            (the kernels against torch.cdist, masked SDPA and FlexAttention,
#            bf16 included), then bench/attention.py over ATTN_SEQ (default
#            1024,4096,16384) and, with the time left, ATTN_LONG (default
#            65536) in a second artifact (docs/triton-attention.md)
#
# TREE_CMAKE_ARGS: more options for the tree's configure (e.g.
# -DTOPOML_PYTHON_VENV=... to build the Python package with that Python).
#
# Dependencies that such a machine may lack (libyaml, Check, OpenBLAS) are
# taken from Debian packages in .devdeps/ when present; Ripser's examples
# from .gpudata/ripser-examples when present. Everything each part writes
# goes to OUTDIR/<part>/; OUTDIR/summary.txt has one line per part, and
# OUTDIR/results.tar.gz all of it. DEVICE_SECONDS bounds the whole run.
# DEVICE_TAR_ONLY=1 leaves only those two files in OUTDIR. Other knobs: TREE_TESTS (ctest -R of the tree part), CONF_ARGS (the tier),
# CONF_PLUGINS (one conformance run per named plugin), RIPS_SECONDS,
# RIPS_REPS, RIPS_ONLY, RIPS_RIPSER, RIPS_THREADS; giotto-ph joins the rips
# part when python3 can import gph.
set -u
out=$(realpath -m "${1:?usage: device-run.sh OUTDIR [PART...]}")
shift
parts=${*:-tree conf asm triton cuda}
repo=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
summary=$out/summary.txt
: >"$summary"
start=$(date +%s)
deadline=$((start + ${DEVICE_SECONDS:-560}))
left() { echo $((deadline - $(date +%s))); }
note() { echo "$*" | tee -a "$summary"; }

# Debian packages from .devdeps/: libyaml and Check (with subunit) go where
# the compiler and loader look by default, as a system install would put
# them; OpenBLAS, its Fortran runtime and Ripser go into a private prefix so
# they never shadow a library of the system's own.
deps=/tmp/topoml-devdeps
if ls "$repo"/.devdeps/*.deb >/dev/null 2>&1; then
    mkdir -p "$deps"
    for f in "$repo"/.devdeps/*.deb; do
        case $(basename "$f") in
        libyaml* | check_* | libsubunit*) dpkg -x "$f" / ;;
        *) dpkg -x "$f" "$deps" ;;
        esac
    done
    ldconfig
    multi=$deps/usr/lib/x86_64-linux-gnu
    export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$multi:$multi/openblas-pthread
    export PATH=$PATH:$deps/usr/bin
fi
# Python wheels from .whl/ (nanobind, pytest, giotto-ph, ...) go into a
# folder on PYTHONPATH for every part (the rips part finds giotto-ph there):
# this machine's python3 keeps its own packages (torch, numpy).
pysite=/tmp/topoml-device-py/site
if ls "$repo"/.whl/*.whl >/dev/null 2>&1; then
    python3 -m pip install -q --no-index --no-deps --no-compile --upgrade --target "$pysite" \
        "$repo"/.whl/*.whl >/dev/null 2>&1
    export PYTHONPATH=$pysite${PYTHONPATH:+:$PYTHONPATH}
fi
# TOPOML_PYTHON_VENV needs VENV/bin/python: this python3, by a script that
# runs it under its own path (a link would hide the virtual environment that
# python3 may be, and with it numpy and torch). The tree part builds the
# Python package with it; the rips and py parts use it.
venv=/tmp/topoml-device-py
mkdir -p "$venv/bin"
printf '#!/bin/sh\nexec %s "$@"\n' "$(command -v python3)" >"$venv/bin/python"
chmod +x "$venv/bin/python"
data=$repo/.gpudata/ripser-examples
[ -d "$data" ] || data=$repo/../shared/data/ripser-examples
{
    echo "date: $(date -u)"
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -2
    grep -m1 "model name" /proc/cpuinfo
    grep -m1 -o 'avx512[a-z_0-9]*' /proc/cpuinfo | sort -u | tr '\n' ' '
    echo
    gcc --version | head -1
    cmake --version | head -1
    nvcc --version | tail -1
    "$venv/bin/python" -c "import sys, numpy, torch; print(sys.executable, 'numpy', numpy.__version__, 'torch', torch.__version__)"
} >"$out/machine.txt" 2>&1

build=/tmp/topoml-device-build
for part in $parts; do
    t0=$(date +%s)
    if [ "$(left)" -lt 30 ]; then
        note "$part: skipped (no time left)"
        continue
    fi
    mkdir -p "$out/$part"
    case $part in
    tree)
        (cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
            -DCMAKE_CUDA_ARCHITECTURES=90 -DTOPOML_SUBBUILD_TESTS=OFF \
            -DTOPOML_VALGRIND_TESTS=OFF -DTOPOML_SHARED_DATA="$data" \
            -DTOPOML_PYTHON_VENV="$venv" ${TREE_CMAKE_ARGS:-} &&
            cmake --build "$build" -j"$(nproc)") >"$out/tree/build.log" 2>&1
        rc=$?
        if [ $rc -eq 0 ]; then
            # The accelerated plugins' own tests; the rest of the suite is
            # the same on every machine and runs in CI.
            timeout "$(left)" ctest --test-dir "$build" -j8 --output-on-failure \
                --timeout 300 -R "${TREE_TESTS:-cuda|triton|asm|core|scalar_ops}" \
                >"$out/tree/tests.log" 2>&1
            rc=$?
            "$build/tools/topoml" backends >"$out/tree/backends.txt" 2>&1
        fi
        ;;
    conf)
        conf=$build/tools/topoml-conformance
        if [ -x "$conf" ] && [ -n "${CONF_PLUGINS:-}" ]; then
            # One run per plugin (CONF_PLUGINS="cuda triton-bridge asm-avx512"),
            # each with its own JSON and wall time, so a slow one does not
            # hide the others' verdicts.
            rc=0
            for p in $CONF_PLUGINS; do
                t1=$(date +%s)
                # shellcheck disable=SC2086
                timeout "$(left)" "$conf" --plugin "$build/plugins-out/topoml-backend-$p.so" \
                    ${CONF_ARGS:---tier full} --json "$out/conf/conformance-$p.json" \
                    >"$out/conf/conformance-$p.txt" 2>&1
                r=$?
                echo "$p: exit $r in $(($(date +%s) - t1)) s" >>"$out/conf/summary.txt"
                [ $r -ne 0 ] && rc=$r
            done
        elif [ -x "$conf" ]; then
            # shellcheck disable=SC2086
            timeout "$(left)" "$conf" ${CONF_ARGS:---tier full} --json "$out/conf/conformance.json" \
                --junit "$out/conf/conformance.xml" >"$out/conf/conformance.txt" 2>&1
            rc=$?
        else
            echo "no $conf (run the tree part first)" >"$out/conf/conformance.txt"
            rc=127
        fi
        ;;
    asm)
        # OpenBLAS 0.3.21 does not recognise a CPU that hides its model
        # (it falls back to Prescott kernels): name the AVX-512 ones, so the
        # BLAS route is measured at its best.
        BENCH_OPENBLAS_CORETYPE=${BENCH_OPENBLAS_CORETYPE:-SKYLAKEX} BENCH_ARGS=${ASM_BENCH_ARGS:-} \
            timeout "$(left)" \
            sh "$repo/plugins/asm-avx512/run-on-avx512.sh" "$out/asm" >"$out/asm/run.log" 2>&1
        rc=$?
        rm -rf "$out/asm/build"
        ;;
    triton)
        TB_BUDGET=$(($(left) - 20)) timeout "$(left)" \
            bash "$repo/plugins/triton-bridge/run-on-gpu.sh" "$out/triton" >"$out/triton/run.log" 2>&1
        rc=$?
        ;;
    cuda)
        # the tree part's build when there is one (same options; its
        # targets are then up to date); CUDA_SKIP_SANITIZERS=1 leaves out
        # compute-sanitizer
        [ -d "$build/plugins-out" ] && export TOPOML_GPU_BUILD=$build
        TOPOML_GPU_SECONDS=$(($(left) - 20)) timeout "$(left)" \
            bash "$repo/plugins/cuda/run-on-gpu.sh" "$out/cuda" >"$out/cuda/run.log" 2>&1
        rc=$?
        ;;
    rips)
        rpp=$repo/.gpudata/ripser++
        args=""
        [ -x "$rpp" ] && args="--ripserpp $rpp"
        [ -n "${RIPS_RIPSER:-}" ] && command -v ripser >/dev/null &&
            args="$args --ripser $(command -v ripser)"
        # giotto-ph at the same thread count, when this Python has it (a
        # wheel installed beside, e.g. on PYTHONPATH)
        python3 -c "import gph" 2>/dev/null && args="$args --python python3"
        [ -n "${RIPS_THREADS:-}" ] && args="$args --threads $RIPS_THREADS"
        # topoml's own package in process (built by the tree part), timed as
        # giotto-ph is
        [ -d "$build/python/topoml" ] &&
            PYTHONPATH=$build/python:$pysite python3 -c "import topoml" 2>/dev/null &&
            args="$args --topoml-python $venv/bin/python"
        # shellcheck disable=SC2086
        PYTHONPATH=$build/python:$pysite XDG_CACHE_HOME=/tmp/topoml-device-cache \
            timeout "$(left)" python3 "$repo/bench/bench_rips_gpu.py" --topoml "$build/tools/topoml" \
            --data "$data" --budget $(($(left) - 15 < ${RIPS_SECONDS:-600} ? $(left) - 15 : ${RIPS_SECONDS:-600})) --reps "${RIPS_REPS:-3}" $args \
            --json "$out/rips/bench_rips_gpu.json" ${RIPS_ONLY:+--only "$RIPS_ONLY"} \
            >"$out/rips/bench_rips_gpu.txt" 2>&1
        rc=$?
        ;;
    collapse)
        # shellcheck disable=SC2086
        timeout "$(left)" python3 "$repo/plugins/cuda/bench/bench_cuda_collapse.py" \
            --topoml "$build/tools/topoml" --data "$data" --reps "${RIPS_REPS:-3}" \
            --budget $(($(left) - 15 < ${COLLAPSE_SECONDS:-240} ? $(left) - 15 : ${COLLAPSE_SECONDS:-240})) \
            --json "$out/collapse/bench_cuda_collapse.json" >"$out/collapse/bench_cuda_collapse.txt" 2>&1
        rc=$?
        ;;
    scale)
        threads=${SCALE_THREADS:-0,1,2,4,8,16}
        rc=0
        gcc -O2 -g -std=c11 -D_GNU_SOURCE -I"$repo/plugin-api/include" -I"$repo/plugins/scalar" \
            -I"$repo/plugins/threads" "$repo/bench/reduce_stages.c" \
            "$repo/plugins/threads/pool.c" "$repo/plugins/scalar/rips.c" -lm -lpthread \
            -o /tmp/topoml-reduce-stages >"$out/scale/build.log" 2>&1 || rc=$?
        if [ $rc -eq 0 ]; then
            # shellcheck disable=SC2086
            timeout $(($(left) - 5 < ${SCALE_SECONDS:-300} ? $(left) - 5 : ${SCALE_SECONDS:-300})) \
                python3 "$repo/bench/bench_reduce.py" --bin /tmp/topoml-reduce-stages \
                --data "$data" --threads "$threads" --reps "${SCALE_REPS:-3}" ${SCALE_ONLY:-} \
                --json "$out/scale/reduce.json" >"$out/scale/reduce.txt" 2>&1 || rc=$?
            timeout $(($(left) - 5 < ${SCALE_SECONDS:-300} ? $(left) - 5 : ${SCALE_SECONDS:-300})) \
                python3 "$repo/bench/bench_edges.py" --base-tree "$repo" --base this-tree \
                --threads "${threads#0,}" --rounds "${SCALE_REPS:-3}" \
                --json "$out/scale/edges.json" >"$out/scale/edges.txt" 2>&1 || rc=$?
        fi
        ;;
    py)
        {
            cmake -S "$repo" -B "$build" -DTOPOML_PYTHON_VENV="$venv" &&
                cmake --build "$build" -j"$(nproc)"
        } >"$out/py/build.log" 2>&1
        rc=$?
        if [ $rc -eq 0 ]; then
            # The cuda plugin in this process (device pointers are only
            # valid here), enabled by configuration: its certificate is the
            # conformance part's business.
            printf 'enable: [cuda]\nisolation: none\n' >"$out/py/cuda.yaml"
            export TOPOML_CONFIG=$out/py/cuda.yaml XDG_CACHE_HOME=/tmp/topoml-device-cache \
                PYTHONPATH=$build/python:$pysite PYTHONDONTWRITEBYTECODE=1
            timeout "$(left)" "$venv/bin/python" -m pytest -q -rs -p no:cacheprovider \
                "$repo/python/tests/torch_cases.py" -k cuda --topoml-build "$build" \
                --topoml-data "$data" --topoml-source "$repo" >"$out/py/torch_cuda.log" 2>&1
            rc=$?
            timeout "$(left)" "$venv/bin/python" "$repo/bench/ml_adapters.py" --device cuda \
                --sizes "${ML_SIZES:-256,512,1024,4096}" --exact-sizes "" --repeat 5 \
                --transfer-sizes "${ML_TRANSFER_SIZES:-4096,16384,65536}" \
                --json "$out/py/ml_adapters_cuda.json" >"$out/py/ml_adapters_cuda.txt" 2>&1
            r=$?
            [ $rc -eq 0 ] && rc=$r
            unset TOPOML_CONFIG
            export PYTHONPATH=$pysite
        fi
        ;;
    gate)
        # the cuda plugin behind the gate and in the sandbox: first use,
        # call times with verify auto/off against the reference, under
        # isolation auto and process; the conformance suite's full tier and
        # the quick tier a first use runs (bench/gate/cuda_sandbox.py)
        XDG_CACHE_HOME=/tmp/topoml-device-cache timeout $(($(left) - 5)) \
            python3 "$repo/bench/gate/cuda_sandbox.py" --build "$build" --data "$data" \
            --repeat "${GATE_REPS:-3}" --conformance "${GATE_CONF-full,quick}" \
            --json "$out/gate/cuda-sandbox-h200.json" \
            >"$out/gate/cuda-sandbox.txt" 2>&1
        rc=$?
        ;;
    attention)
        {
            cmake -S "$repo" -B "$build" -DTOPOML_PYTHON_VENV="$venv" &&
                cmake --build "$build" -j"$(nproc)" --target topoml_py
        } >"$out/attention/build.log" 2>&1
        rc=$?
        if [ $rc -eq 0 ]; then
            export XDG_CACHE_HOME=/tmp/topoml-device-cache PYTHONPATH=$build/python:$pysite \
                PYTHONDONTWRITEBYTECODE=1
            timeout "$(left)" "$venv/bin/python" -m pytest -q -rs -p no:cacheprovider \
                "$repo/python/tests/test_triton_attention.py" --topoml-build "$build" \
                --topoml-data "$data" --topoml-source "$repo" >"$out/attention/tests.log" 2>&1
            rc=$?
            timeout $(($(left) - 5)) "$venv/bin/python" "$repo/bench/attention.py" \
                --seq "${ATTN_SEQ:-1024,4096,16384}" --json "$out/attention/attention-h200.json" \
                >"$out/attention/attention.txt" 2>&1
            r=$?
            [ $rc -eq 0 ] && rc=$r
            if [ -n "${ATTN_LONG-65536}" ] && [ "$(left)" -gt 60 ]; then
                timeout $(($(left) - 5)) "$venv/bin/python" "$repo/bench/attention.py" \
                    --seq "${ATTN_LONG:-65536}" --reps 5 \
                    --json "$out/attention/attention-h200-long.json" \
                    >"$out/attention/attention-long.txt" 2>&1
                r=$?
                [ $rc -eq 0 ] && rc=$r
            fi
            export PYTHONPATH=$pysite
        fi
        ;;
    *)
        note "$part: unknown part"
        continue
        ;;
    esac
    note "$part: exit $rc in $(($(date +%s) - t0)) s"
done
find "$out" -name '*.so' -delete
tar -C "$out" -czf "/tmp/results.tar.gz" --exclude=results.tar.gz . && mv /tmp/results.tar.gz "$out/"
# DEVICE_TAR_ONLY=1: OUTDIR keeps only results.tar.gz and summary.txt (for a
# transfer that limits how many files come back)
if [ -n "${DEVICE_TAR_ONLY:-}" ] && [ -f "$out/results.tar.gz" ]; then
    find "$out" -mindepth 1 -maxdepth 1 ! -name results.tar.gz ! -name summary.txt -exec rm -rf {} +
fi
cat "$summary"
