# check_generated.cmake — are the committed generated/ sources built from the
# kernels in the tree? kernels.json records the SHA-256 of every input of
# aot/build_kernels.py (kernels/*.py and the script itself); this compares
# them with the files as they are now. Cheap: no Triton, no GPU. A mismatch
# means: run `python3 aot/build_kernels.py` (Triton 3.6) and commit generated/.
#
#   cmake -DTB_DIR=<plugins/triton-bridge> -P check_generated.cmake
cmake_minimum_required(VERSION 3.20)

file(READ "${TB_DIR}/generated/kernels.json" meta)
string(JSON inputs GET "${meta}" inputs)
string(JSON n LENGTH "${inputs}")
math(EXPR last "${n} - 1")
set(recorded "")
set(stale "")
foreach(k RANGE ${last})
  string(JSON name MEMBER "${inputs}" ${k})
  string(JSON want GET "${inputs}" "${name}")
  list(APPEND recorded "${name}")
  if(NOT EXISTS "${TB_DIR}/${name}")
    list(APPEND stale "${name} (gone)")
    continue()
  endif()
  file(SHA256 "${TB_DIR}/${name}" have)
  if(NOT have STREQUAL want)
    list(APPEND stale "${name} (changed)")
  endif()
endforeach()

file(GLOB kernels RELATIVE "${TB_DIR}" "${TB_DIR}/kernels/*.py")
foreach(name ${kernels})
  if(NOT name IN_LIST recorded)
    list(APPEND stale "${name} (new)")
  endif()
endforeach()

# Every cubin in generated/ is the one kernels.json describes.
string(JSON kernel_list GET "${meta}" kernels)
string(JSON nk LENGTH "${kernel_list}")
math(EXPR lastk "${nk} - 1")
foreach(k RANGE ${lastk})
  string(JSON kname GET "${kernel_list}" ${k} name)
  string(JSON ksha GET "${kernel_list}" ${k} cubin_sha256)
  file(STRINGS "${TB_DIR}/generated/tb_cubin_${kname}.c" line REGEX "sha256 [0-9a-f]+")
  if(NOT line MATCHES "sha256 ${ksha}")
    list(APPEND stale "generated/tb_cubin_${kname}.c (not the cubin kernels.json names)")
  endif()
endforeach()

if(stale)
  list(JOIN stale ", " text)
  message(FATAL_ERROR "generated/ is out of date with: ${text}\n"
                      "Regenerate: python3 plugins/triton-bridge/aot/build_kernels.py")
endif()
message(STATUS "generated/ matches kernels/ and aot/build_kernels.py (${n} inputs)")
