#!/bin/sh
# isa_check.sh OBJDUMP ARCHIVE — fail if the assembled kernels use anything
# beyond AVX512F: the gate (gate.c) asks for F alone. Checks the machine
# code, not the source, so comments neither hide nor fake a finding. Flags
# any xmm/ymm register (the kernels are zmm-only, and EVEX forms on xmm/ymm
# need VL), the DQ/BW/VBMI instructions that kernels like these could reach
# for, and opmask moves other than kmovw.
objdump=$1 archive=$2
code=$("$objdump" -d --no-show-raw-insn "$archive") || exit 1
# The kernels are there at all: the check is not vacuous.
printf '%s\n' "$code" | grep -q 'vfmadd231ps' || { echo "no kernels in $archive"; exit 1; }
bad=$(printf '%s\n' "$code" | grep -Ei '%[xy]mm[0-9]|kmov[bdq][[:space:]]|v(xor|and|andn|or)p[sd][[:space:]]|vpmovm2|vpmov[bwdq]2m|vpcompress[bw]|vpexpand[bw]|vperm[bw][[:space:]]|vpmullq|qq[[:space:]]|vfpclass|vrange|vreduce|[fi](32|64)x[248]')
if [ -n "$bad" ]; then
    echo "instructions beyond AVX512F:"
    printf '%s\n' "$bad"
    exit 1
fi
echo "kernels use AVX512F only"
