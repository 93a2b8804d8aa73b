/*
 * cpu.S — the two instructions the gate needs to read the processor:
 * CPUID and XGETBV, wrapped as plain functions so that no C file of the
 * plugin needs inline assembly. Deciding what the values mean is gate.c's
 * business, not this file's.
 *
 *   void topoml_avx512_cpuid(uint32_t leaf, uint32_t subleaf, uint32_t out[4]);
 *       out = { EAX, EBX, ECX, EDX } of CPUID(leaf, subleaf). CPUID exists on
 *       every x86-64 processor.
 *   uint64_t topoml_avx512_xgetbv(uint32_t index);
 *       XCR[index] as EDX:EAX. Raises #UD unless CPUID.1:ECX.OSXSAVE is set:
 *       gate.c calls it only after checking that bit.
 *   const avx512_cpu_access avx512_cpu_hardware = { cpuid, xgetbv };
 *       the table gate.h reads the processor through (defined here so that
 *       tests can link the C files against a recorded processor instead).
 */
    .intel_syntax noprefix
    .text

    .globl  topoml_avx512_cpuid
    .hidden topoml_avx512_cpuid
    .type   topoml_avx512_cpuid, @function
    .p2align 4
topoml_avx512_cpuid:
    push    rbx                 /* CPUID writes rbx, which is callee-saved */
    mov     r8, rdx
    mov     eax, edi
    mov     ecx, esi
    cpuid
    mov     dword ptr [r8], eax
    mov     dword ptr [r8 + 4], ebx
    mov     dword ptr [r8 + 8], ecx
    mov     dword ptr [r8 + 12], edx
    pop     rbx
    ret
    .size   topoml_avx512_cpuid, . - topoml_avx512_cpuid

    .globl  topoml_avx512_xgetbv
    .hidden topoml_avx512_xgetbv
    .type   topoml_avx512_xgetbv, @function
    .p2align 4
topoml_avx512_xgetbv:
    mov     ecx, edi
    xgetbv
    shl     rdx, 32
    mov     eax, eax
    or      rax, rdx
    ret
    .size   topoml_avx512_xgetbv, . - topoml_avx512_xgetbv

    .section .data.rel.ro, "aw"
    .globl  avx512_cpu_hardware
    .hidden avx512_cpu_hardware
    .type   avx512_cpu_hardware, @object
    .p2align 3
avx512_cpu_hardware:
    .quad   topoml_avx512_cpuid
    .quad   topoml_avx512_xgetbv
    .size   avx512_cpu_hardware, . - avx512_cpu_hardware

    .section .note.GNU-stack, "", @progbits
