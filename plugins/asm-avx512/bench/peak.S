/*
 * peak.S — the single-core FMA peak for bench.c: a loop of independent
 * 512-bit FMAs, as many as the FMA units can take with their latency hidden
 * (24 chains: 2 units x 4 cycles latency needs 8; 24 also covers 6-cycle
 * parts). Nothing but FMAs and the loop counter, so its rate is the
 * processor's, not the code's. Benchmark only; not part of the plugin.
 *
 *   void topoml_bench_fma_f32(uint64_t iterations);  24 x 16 x 2 flops each
 *   void topoml_bench_fma_f64(uint64_t iterations);  24 x 8 x 2 flops each
 */
    .intel_syntax noprefix
    .text

.macro FMA_PEAK name, fma, bcast, esz, one, tiny
    .globl  \name
    .type   \name, @function
    .p2align 5
\name:
    \bcast  zmm30, \esz ptr [rip + \one]
    \bcast  zmm31, \esz ptr [rip + \tiny]
    .irp r, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23
    vpxord  zmm\r, zmm\r, zmm\r
    .endr
    test    rdi, rdi
    jz      2f
1:
    /* acc += 1 * tiny: stays normal and finite for any count we run. */
    .irp r, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23
    \fma    zmm\r, zmm30, zmm31
    .endr
    dec     rdi
    jnz     1b
2:
    vzeroupper
    ret
    .size   \name, . - \name
.endm

    FMA_PEAK topoml_bench_fma_f32, vfmadd231ps, vbroadcastss, dword, one_f32, tiny_f32
    FMA_PEAK topoml_bench_fma_f64, vfmadd231pd, vbroadcastsd, qword, one_f64, tiny_f64

    .section .rodata
    .p2align 3
one_f32:  .float 1.0
tiny_f32: .float 1.0e-7
one_f64:  .double 1.0
tiny_f64: .double 1.0e-7

    .section .note.GNU-stack, "", @progbits
