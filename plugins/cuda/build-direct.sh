#!/usr/bin/env bash
# build-direct.sh REPO OUTDIR — compile, with nvcc and gcc and no CMake, what
# run-on-gpu.sh needs: topoml-backend-cuda.so, topoml-backend-scalar.so,
# test_cuda_load, test_cuda_emulated, test_cuda_gpu and bench_cuda, into
# OUTDIR. The fallback for
# a GPU machine where the full tree cannot be configured (the core needs
# libyaml, Check and pkg-config; the plugins need none of them). Same
# sources, same flags as plugins/cuda/CMakeLists.txt, sm_90 + compute_90.
set -eu
repo=$1
o=$2
mkdir -p "$o/obj"
cuda_home=${CUDA_HOME:-$(dirname "$(dirname "$(command -v nvcc)")")}
c=$repo/plugins/cuda
s=$repo/plugins/scalar
inc=(-I"$repo/plugin-api/include" -I"$c" -I"$s" -I"$repo/plugins/threads" -I"$c/bench"
    -I"$cuda_home/include")
defs=(-D_GNU_SOURCE -DTMC_MIN_CC=90 '-DTMC_ARCHS="90"')
cuda_c=(device.c host_edges.c h0.c host_exact.c)
cuda_cu=(device_input.cu distances.cu edges.cu)
scalar_c=("$s/scalar.c")
if [ -f "$s/rips.c" ]; then
    defs+=(-DTMC_HAVE_RIPS=1 -DTOPOML_SCALAR_HAVE_RIPS=1)
    # the engine's host threads: the threads backend's pool, compiled in
    cuda_c+=(rips.c "$s/rips.c" "$repo/plugins/threads/pool.c")
    cuda_cu+=(rips_columns.cu)
    scalar_c+=("$s/rips.c")
fi
if [ -f "$s/image.c" ]; then
    defs+=(-DTMC_HAVE_IMAGE=1 -DTOPOML_SCALAR_HAVE_IMAGE=1)
    cuda_c+=("$s/image.c")
    cuda_cu+=(image.cu)
    scalar_c+=("$s/image.c")
fi
cflags=(-std=c11 -O2 -g -fPIC -fvisibility=hidden -Wall -Wextra "${defs[@]}" "${inc[@]}")
# shellcheck disable=SC2054 # the commas belong to nvcc options
nvflags=(-O3 -g -std=c++17 "-gencode=arch=compute_90,code=[sm_90,compute_90]"
    -Xcompiler=-fPIC,-fvisibility=hidden,-Wall,-Wextra "${defs[@]}" "${inc[@]}")
libs=(-L"$cuda_home/lib64" -L"$cuda_home/targets/x86_64-linux/lib" -lcudart_static -ldl -lrt
    -lpthread -lm)

objs=()
pids=()
cd "$c"
for f in "${cuda_cu[@]}" bench/ceilings.cu; do
    obj=$o/obj/$(basename "$f").o
    nvcc "${nvflags[@]}" -c "$f" -o "$obj" &
    pids+=($!)
    if [ "$f" != bench/ceilings.cu ]; then
        objs+=("$obj")
    fi
done
for f in "${cuda_c[@]}"; do
    obj=$o/obj/$(echo "$f" | tr / _).o # scalar's rips.c is not ours
    gcc "${cflags[@]}" -c "$f" -o "$obj"
    objs+=("$obj")
done
for p in "${pids[@]}"; do wait "$p"; done

gcc "${cflags[@]}" -c plugin.c -o "$o/obj/plugin.o"
g++ -shared -o "$o/topoml-backend-cuda.so" "$o/obj/plugin.o" "${objs[@]}" "${libs[@]}" \
    -Wl,--exclude-libs,ALL -Wl,-Bsymbolic -Wl,--no-undefined
gcc "${cflags[@]}" -shared -o "$o/topoml-backend-scalar.so" "${scalar_c[@]}" "$s/entry.c" -lm
gcc "${cflags[@]}" -o "$o/test_cuda_load" tests/test_cuda_load.c -ldl
emulated=(tests/test_cuda_emulated.cpp)
if [ -f "$s/image.c" ]; then
    gcc "${cflags[@]}" -ffp-contract=off -c "$s/image.c" -o "$o/obj/emulated_image.o"
    emulated+=("$o/obj/emulated_image.o")
fi
g++ -std=c++17 -O2 -ffp-contract=off -Wno-unknown-pragmas "${defs[@]}" "${inc[@]}" \
    -o "$o/test_cuda_emulated" "${emulated[@]}" -lm
gcc "${cflags[@]}" -Wno-format-truncation -o "$o/test_cuda_gpu" tests/test_cuda_gpu.c \
    "${scalar_c[@]}" "${libs[@]}"
gcc "${cflags[@]}" -c bench/bench_cuda.c -o "$o/obj/bench_cuda.o"
g++ -o "$o/bench_cuda" "$o/obj/bench_cuda.o" "$o/obj/ceilings.cu.o" "${objs[@]}" "${libs[@]}"
echo "built in $o"
