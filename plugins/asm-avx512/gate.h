/*
 * gate.h — may the AVX-512 kernels run on this processor, under this OS?
 *
 * Split in two so that the decision can be tested on recorded register
 * values from machines we do not have: avx512_gate_read() executes CPUID and
 * XGETBV (through a table of functions, which tests replace), and
 * avx512_gate_decode() is a pure function of the values read.
 */
#ifndef TOPOML_ASM_AVX512_GATE_H
#define TOPOML_ASM_AVX512_GATE_H

#include <stddef.h>
#include <stdint.h>

/* CPUID.(EAX=1):ECX */
#define AVX512_CPUID1_ECX_POPCNT (1u << 23)
#define AVX512_CPUID1_ECX_OSXSAVE (1u << 27)
#define AVX512_CPUID1_ECX_AVX (1u << 28)
/* CPUID.(EAX=7,ECX=0):EBX, ECX, EDX */
#define AVX512_CPUID7_EBX_AVX512F (1u << 16)
#define AVX512_CPUID7_EBX_AVX512DQ (1u << 17)
#define AVX512_CPUID7_EBX_AVX512BW (1u << 30)
#define AVX512_CPUID7_EBX_AVX512VL (1u << 31)
#define AVX512_CPUID7_ECX_AVX512VNNI (1u << 11)
#define AVX512_CPUID7_EDX_AVX512FP16 (1u << 23)
/* XCR0 state components the OS must save for zmm code: SSE (bit 1), AVX
 * (bit 2), opmask (bit 5), ZMM_Hi256 (bit 6), Hi16_ZMM (bit 7). */
#define AVX512_XCR0_ZMM_STATE 0xE6u

/* Features found, for the device string (the kernels need only F). */
#define AVX512_FEAT_F (1u << 0)
#define AVX512_FEAT_DQ (1u << 1)
#define AVX512_FEAT_BW (1u << 2)
#define AVX512_FEAT_VL (1u << 3)
#define AVX512_FEAT_VNNI (1u << 4)
#define AVX512_FEAT_FP16 (1u << 5)

/* Register values as read. A field that was not read (leaf 7 when the
 * maximum leaf is below 7, XCR0 when OSXSAVE is clear) is ignored by the
 * decoder whatever it holds. */
typedef struct avx512_cpu_regs {
    uint32_t max_leaf;  /* CPUID.(EAX=0):EAX */
    uint32_t leaf1_ecx; /* CPUID.(EAX=1):ECX */
    uint32_t leaf7_ebx; /* CPUID.(EAX=7,ECX=0) */
    uint32_t leaf7_ecx;
    uint32_t leaf7_edx;
    uint64_t xcr0; /* XGETBV(0) */
} avx512_cpu_regs;

/* How the reader reaches the processor. */
typedef struct avx512_cpu_access {
    void (*cpuid)(uint32_t leaf, uint32_t subleaf, uint32_t out[4]);
    uint64_t (*xgetbv)(uint32_t index);
} avx512_cpu_access;

/* The real instructions. Defined in cpu.S next to them, so that a test can
 * link the plugin's C files against a recorded processor instead. */
extern const avx512_cpu_access avx512_cpu_hardware;

/* Read what the decoder needs. Reads leaf 7 only when the maximum leaf
 * allows it, and executes XGETBV only when OSXSAVE says it exists. */
void avx512_gate_read(const avx512_cpu_access *cpu, avx512_cpu_regs *regs);

/* TOPOML_OK when the kernels may run; otherwise TOPOML_E_UNSUPPORTED with
 * the first missing requirement named in `why` (may be NULL; on success it
 * says what was found). *features gets the AVX512_FEAT_* bits present (may
 * be NULL). */
int avx512_gate_decode(const avx512_cpu_regs *regs, uint32_t *features, char *why, size_t why_size);

/* The processor's brand string, trimmed; "unknown x86-64 processor" when
 * CPUID has none. */
void avx512_cpu_brand(const avx512_cpu_access *cpu, char *buf, size_t size);

/* "cpu: <brand> (avx512f avx512dq ...)", or "cpu: <brand> (no avx512f)". */
void avx512_device_string(const char *brand, uint32_t features, char *buf, size_t size);

#endif /* TOPOML_ASM_AVX512_GATE_H */
