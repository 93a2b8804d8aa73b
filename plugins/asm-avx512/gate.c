/*
 * gate.c — decides from CPUID and XGETBV whether the AVX-512 kernels may run,
 * and names the processor for the capability records.
 *
 * The kernels (kernels.S) use AVX512F instructions on zmm registers only,
 * VEX-encoded opmask moves, VZEROUPPER and POPCNT. So they need: the CPU to
 * report AVX512F, AVX and POPCNT, and the OS to save the opmask and the full
 * zmm state on context switches (XCR0 bits 1, 2, 5, 6, 7), which XGETBV may
 * only be asked about when CPUID reports OSXSAVE. DQ, BW and VL are reported
 * in the device string but not required: no kernel uses them.
 */
#include "gate.h"

#include <stdio.h>
#include <string.h>

#include "topoml/types.h"

static int unsupported(char *why, size_t why_size, const char *reason)
{
    if (why && why_size > 0)
        snprintf(why, why_size, "%s", reason);
    return TOPOML_E_UNSUPPORTED;
}

void avx512_gate_read(const avx512_cpu_access *cpu, avx512_cpu_regs *regs)
{
    uint32_t r[4];

    memset(regs, 0, sizeof *regs);
    cpu->cpuid(0, 0, r);
    regs->max_leaf = r[0];
    if (regs->max_leaf >= 1) {
        cpu->cpuid(1, 0, r);
        regs->leaf1_ecx = r[2];
    }
    /* Above the maximum leaf, CPUID answers with the data of the highest
     * basic leaf (Intel) or zeros: never a meaningful leaf 7. */
    if (regs->max_leaf >= 7) {
        cpu->cpuid(7, 0, r);
        regs->leaf7_ebx = r[1];
        regs->leaf7_ecx = r[2];
        regs->leaf7_edx = r[3];
    }
    /* XGETBV is #UD unless the OS has set CR4.OSXSAVE, which OSXSAVE
     * mirrors. */
    if (regs->leaf1_ecx & AVX512_CPUID1_ECX_OSXSAVE)
        regs->xcr0 = cpu->xgetbv(0);
}

int avx512_gate_decode(const avx512_cpu_regs *regs, uint32_t *features, char *why, size_t why_size)
{
    uint32_t f = 0;
    int has_leaf7 = regs->max_leaf >= 7;
    int has_osxsave = (regs->leaf1_ecx & AVX512_CPUID1_ECX_OSXSAVE) != 0;
    char reason[96];

    if (has_leaf7) {
        if (regs->leaf7_ebx & AVX512_CPUID7_EBX_AVX512F)
            f |= AVX512_FEAT_F;
        if (regs->leaf7_ebx & AVX512_CPUID7_EBX_AVX512DQ)
            f |= AVX512_FEAT_DQ;
        if (regs->leaf7_ebx & AVX512_CPUID7_EBX_AVX512BW)
            f |= AVX512_FEAT_BW;
        if (regs->leaf7_ebx & AVX512_CPUID7_EBX_AVX512VL)
            f |= AVX512_FEAT_VL;
        if (regs->leaf7_ecx & AVX512_CPUID7_ECX_AVX512VNNI)
            f |= AVX512_FEAT_VNNI;
        if (regs->leaf7_edx & AVX512_CPUID7_EDX_AVX512FP16)
            f |= AVX512_FEAT_FP16;
    }
    if (features)
        *features = f;

    /* What the processor lacks is named before what the OS has not enabled:
     * on a processor without AVX-512 the OS is not at fault. */
    if (!has_leaf7) {
        snprintf(reason, sizeof reason, "AVX512F not reported by CPUID (max leaf %u < 7)",
                 (unsigned)regs->max_leaf);
        return unsupported(why, why_size, reason);
    }
    if (!(f & AVX512_FEAT_F))
        return unsupported(why, why_size, "AVX512F not reported by CPUID");
    if (!(regs->leaf1_ecx & AVX512_CPUID1_ECX_AVX))
        return unsupported(why, why_size, "AVX not reported by CPUID");
    if (!(regs->leaf1_ecx & AVX512_CPUID1_ECX_POPCNT))
        return unsupported(why, why_size, "POPCNT not reported by CPUID");
    if (!has_osxsave)
        return unsupported(why, why_size, "OS has not enabled XSAVE (CPUID.1:ECX.OSXSAVE clear)");
    if ((regs->xcr0 & AVX512_XCR0_ZMM_STATE) != AVX512_XCR0_ZMM_STATE) {
        snprintf(reason, sizeof reason, "OS has not enabled ZMM state (XCR0=0x%llx)",
                 (unsigned long long)regs->xcr0);
        return unsupported(why, why_size, reason);
    }
    if (why && why_size > 0)
        snprintf(why, why_size, "AVX512F reported, OS saves ZMM state (XCR0=0x%llx)",
                 (unsigned long long)regs->xcr0);
    return TOPOML_OK;
}

void avx512_cpu_brand(const avx512_cpu_access *cpu, char *buf, size_t size)
{
    uint32_t r[4];
    char brand[49];
    const char *start;
    size_t len;

    if (size == 0)
        return;
    cpu->cpuid(0x80000000u, 0, r);
    if (r[0] < 0x80000004u) {
        snprintf(buf, size, "unknown x86-64 processor");
        return;
    }
    for (uint32_t leaf = 0; leaf < 3; leaf++) {
        cpu->cpuid(0x80000002u + leaf, 0, r);
        memcpy(brand + 16 * leaf, r, 16);
    }
    brand[48] = '\0';
    start = brand;
    while (*start == ' ')
        start++;
    len = strlen(start);
    while (len > 0 && start[len - 1] == ' ')
        len--;
    if (len == 0) {
        snprintf(buf, size, "unknown x86-64 processor");
        return;
    }
    snprintf(buf, size, "%.*s", (int)len, start);
}

void avx512_device_string(const char *brand, uint32_t features, char *buf, size_t size)
{
    static const struct {
        uint32_t bit;
        const char *name;
    } names[] = {
        {AVX512_FEAT_F, "avx512f"},       {AVX512_FEAT_DQ, "avx512dq"},
        {AVX512_FEAT_BW, "avx512bw"},     {AVX512_FEAT_VL, "avx512vl"},
        {AVX512_FEAT_VNNI, "avx512vnni"}, {AVX512_FEAT_FP16, "avx512fp16"},
    };
    char list[96] = "";
    size_t used = 0;

    if (size == 0)
        return;
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        if (!(features & names[k].bit))
            continue;
        int w = snprintf(list + used, sizeof list - used, "%s%s", used ? " " : "", names[k].name);
        if (w > 0 && (size_t)w < sizeof list - used)
            used += (size_t)w;
    }
    if (!(features & AVX512_FEAT_F))
        snprintf(buf, size, "cpu: %s (no avx512f)", brand);
    else
        snprintf(buf, size, "cpu: %s (%s)", brand, list);
}
