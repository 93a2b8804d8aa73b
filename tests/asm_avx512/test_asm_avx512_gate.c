/*
 * test_gate.c — the AVX-512 gate decides from recorded CPUID/XGETBV values,
 * reads the processor in a safe order, and agrees with probe on this machine.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "gate.h"
#include "topoml/types.h"

/* Register values of a processor and OS with everything the kernels use:
 * CPUID leaf 1 ECX with POPCNT, OSXSAVE and AVX; leaf 7 EBX with F, DQ, BW,
 * VL; XCR0 with x87, SSE, AVX, opmask, ZMM_Hi256, Hi16_ZMM (0xE7), as on a
 * Xeon with Linux. */
static avx512_cpu_regs all_present(void)
{
    avx512_cpu_regs r;
    memset(&r, 0, sizeof r);
    r.max_leaf = 0x1b;
    r.leaf1_ecx = AVX512_CPUID1_ECX_POPCNT | AVX512_CPUID1_ECX_OSXSAVE | AVX512_CPUID1_ECX_AVX |
                  0x1u /* SSE3 */;
    r.leaf7_ebx = AVX512_CPUID7_EBX_AVX512F | AVX512_CPUID7_EBX_AVX512DQ |
                  AVX512_CPUID7_EBX_AVX512BW | AVX512_CPUID7_EBX_AVX512VL | (1u << 5) /* AVX2 */;
    r.leaf7_ecx = AVX512_CPUID7_ECX_AVX512VNNI;
    r.leaf7_edx = AVX512_CPUID7_EDX_AVX512FP16;
    r.xcr0 = 0xE7;
    return r;
}

START_TEST(test_gate_accepts_all_features_present)
{
    avx512_cpu_regs r = all_present();
    uint32_t f = 0;
    char why[128];

    ck_assert_int_eq(avx512_gate_decode(&r, &f, why, sizeof why), TOPOML_OK);
    ck_assert_uint_eq(f, AVX512_FEAT_F | AVX512_FEAT_DQ | AVX512_FEAT_BW | AVX512_FEAT_VL |
                             AVX512_FEAT_VNNI | AVX512_FEAT_FP16);
    ck_assert_str_eq(why, "AVX512F reported, OS saves ZMM state (XCR0=0xe7)");
}
END_TEST

START_TEST(test_gate_rejects_missing_osxsave)
{
    avx512_cpu_regs r = all_present();
    char why[128];

    r.leaf1_ecx &= ~AVX512_CPUID1_ECX_OSXSAVE;
    /* XCR0 would not have been read; whatever the field holds is ignored. */
    ck_assert_int_eq(avx512_gate_decode(&r, NULL, why, sizeof why), TOPOML_E_UNSUPPORTED);
    ck_assert_str_eq(why, "OS has not enabled XSAVE (CPUID.1:ECX.OSXSAVE clear)");
}
END_TEST

START_TEST(test_gate_rejects_os_without_zmm_state)
{
    avx512_cpu_regs r = all_present();
    char why[128];

    r.xcr0 = 0x7; /* x87, SSE, AVX: a kernel that saves no opmask or zmm state */
    ck_assert_int_eq(avx512_gate_decode(&r, NULL, why, sizeof why), TOPOML_E_UNSUPPORTED);
    ck_assert_str_eq(why, "OS has not enabled ZMM state (XCR0=0x7)");

    r.xcr0 = 0x67; /* opmask and ZMM_Hi256 but not Hi16_ZMM */
    ck_assert_int_eq(avx512_gate_decode(&r, NULL, why, sizeof why), TOPOML_E_UNSUPPORTED);
    ck_assert_str_eq(why, "OS has not enabled ZMM state (XCR0=0x67)");
}
END_TEST

START_TEST(test_gate_accepts_avx512f_without_vl)
{
    avx512_cpu_regs r = all_present();
    uint32_t f = 0;

    /* The kernels use zmm only, so VL (and DQ, BW) are reported, not
     * required. */
    r.leaf7_ebx &=
        ~(AVX512_CPUID7_EBX_AVX512VL | AVX512_CPUID7_EBX_AVX512DQ | AVX512_CPUID7_EBX_AVX512BW);
    ck_assert_int_eq(avx512_gate_decode(&r, &f, NULL, 0), TOPOML_OK);
    ck_assert_uint_eq(f & AVX512_FEAT_VL, 0);
    ck_assert_uint_ne(f & AVX512_FEAT_F, 0);
}
END_TEST

START_TEST(test_gate_rejects_max_leaf_below_7)
{
    avx512_cpu_regs r = all_present();
    char why[128];
    uint32_t f = 123;

    /* Leaf 7 would not have been read: its recorded bits must not count. */
    r.max_leaf = 6;
    ck_assert_int_eq(avx512_gate_decode(&r, &f, why, sizeof why), TOPOML_E_UNSUPPORTED);
    ck_assert_str_eq(why, "AVX512F not reported by CPUID (max leaf 6 < 7)");
    ck_assert_uint_eq(f, 0);
}
END_TEST

START_TEST(test_gate_rejects_missing_avx512f)
{
    avx512_cpu_regs r = all_present();
    char why[128];

    /* An AVX2 processor: the OS saves no zmm state either, but the processor
     * is named first. */
    r.leaf7_ebx = 1u << 5;
    r.leaf7_ecx = r.leaf7_edx = 0;
    r.xcr0 = 0x7;
    ck_assert_int_eq(avx512_gate_decode(&r, NULL, why, sizeof why), TOPOML_E_UNSUPPORTED);
    ck_assert_str_eq(why, "AVX512F not reported by CPUID");
}
END_TEST

START_TEST(test_gate_rejects_missing_avx_and_popcnt)
{
    avx512_cpu_regs r = all_present();
    char why[128];

    r.leaf1_ecx &= ~AVX512_CPUID1_ECX_AVX;
    ck_assert_int_eq(avx512_gate_decode(&r, NULL, why, sizeof why), TOPOML_E_UNSUPPORTED);
    ck_assert_str_eq(why, "AVX not reported by CPUID");
    r = all_present();
    r.leaf1_ecx &= ~AVX512_CPUID1_ECX_POPCNT;
    ck_assert_int_eq(avx512_gate_decode(&r, NULL, why, sizeof why), TOPOML_E_UNSUPPORTED);
    ck_assert_str_eq(why, "POPCNT not reported by CPUID");
}
END_TEST

START_TEST(test_gate_truncates_reason_to_buffer)
{
    avx512_cpu_regs r = all_present();
    char why[8];

    r.xcr0 = 0x7;
    ck_assert_int_eq(avx512_gate_decode(&r, NULL, why, sizeof why), TOPOML_E_UNSUPPORTED);
    ck_assert_str_eq(why, "OS has ");
    ck_assert_int_eq(avx512_gate_decode(&r, NULL, NULL, 0), TOPOML_E_UNSUPPORTED);
}
END_TEST

/* A fake processor for the reader: answers from recorded values and notes
 * which leaves were asked for and whether XGETBV ran. */
static struct fake_cpu {
    avx512_cpu_regs regs;
    int asked[8];
    int xgetbv_calls;
} fake;

static void fake_cpuid(uint32_t leaf, uint32_t subleaf, uint32_t out[4])
{
    memset(out, 0, 4 * sizeof out[0]);
    ck_assert_uint_eq(subleaf, 0);
    if (leaf < 8)
        fake.asked[leaf]++;
    if (leaf == 0)
        out[0] = fake.regs.max_leaf;
    else if (leaf == 1)
        out[2] = fake.regs.leaf1_ecx;
    else if (leaf == 7) {
        out[1] = fake.regs.leaf7_ebx;
        out[2] = fake.regs.leaf7_ecx;
        out[3] = fake.regs.leaf7_edx;
    } else if (leaf == 0x80000000u)
        out[0] = 0x80000004u;
    else if (leaf >= 0x80000002u && leaf <= 0x80000004u) {
        static const char brand[49] = "   Example(R) Processor 9000                    ";
        memcpy(out, brand + 16 * (leaf - 0x80000002u), 16);
    }
}

static uint64_t fake_xgetbv(uint32_t index)
{
    ck_assert_uint_eq(index, 0);
    /* Executing XGETBV without OSXSAVE is #UD on real hardware. */
    ck_assert_msg(fake.regs.leaf1_ecx & AVX512_CPUID1_ECX_OSXSAVE, "XGETBV without OSXSAVE");
    fake.xgetbv_calls++;
    return fake.regs.xcr0;
}

static const avx512_cpu_access fake_access = {fake_cpuid, fake_xgetbv};

START_TEST(test_gate_reader_never_runs_xgetbv_without_osxsave)
{
    avx512_cpu_regs got;

    memset(&fake, 0, sizeof fake);
    fake.regs = all_present();
    fake.regs.leaf1_ecx &= ~AVX512_CPUID1_ECX_OSXSAVE;
    avx512_gate_read(&fake_access, &got);
    ck_assert_int_eq(fake.xgetbv_calls, 0);
    ck_assert_int_eq(avx512_gate_decode(&got, NULL, NULL, 0), TOPOML_E_UNSUPPORTED);

    memset(&fake, 0, sizeof fake);
    fake.regs = all_present();
    avx512_gate_read(&fake_access, &got);
    ck_assert_int_eq(fake.xgetbv_calls, 1);
    ck_assert_uint_eq(got.xcr0, 0xE7);
    ck_assert_int_eq(avx512_gate_decode(&got, NULL, NULL, 0), TOPOML_OK);
}
END_TEST

START_TEST(test_gate_reader_never_reads_leaf7_above_max_leaf)
{
    avx512_cpu_regs got;

    memset(&fake, 0, sizeof fake);
    fake.regs = all_present();
    fake.regs.max_leaf = 5;
    avx512_gate_read(&fake_access, &got);
    ck_assert_int_eq(fake.asked[7], 0);
    ck_assert_uint_eq(got.leaf7_ebx, 0);
    ck_assert_int_eq(avx512_gate_decode(&got, NULL, NULL, 0), TOPOML_E_UNSUPPORTED);

    memset(&fake, 0, sizeof fake);
    fake.regs = all_present();
    avx512_gate_read(&fake_access, &got);
    ck_assert_int_eq(fake.asked[7], 1);
    ck_assert_uint_eq(got.leaf7_ebx, fake.regs.leaf7_ebx);
}
END_TEST

START_TEST(test_gate_device_string_names_brand_and_features)
{
    char brand[64], dev[192];

    memset(&fake, 0, sizeof fake);
    fake.regs = all_present();
    avx512_cpu_brand(&fake_access, brand, sizeof brand);
    ck_assert_str_eq(brand, "Example(R) Processor 9000");
    avx512_device_string(brand, AVX512_FEAT_F | AVX512_FEAT_VL | AVX512_FEAT_FP16, dev, sizeof dev);
    ck_assert_str_eq(dev, "cpu: Example(R) Processor 9000 (avx512f avx512vl avx512fp16)");
    avx512_device_string(brand, 0, dev, sizeof dev);
    ck_assert_str_eq(dev, "cpu: Example(R) Processor 9000 (no avx512f)");
}
END_TEST

START_TEST(test_gate_live_read_decodes_without_crashing)
{
    avx512_cpu_regs regs;
    char why[128] = "";
    char brand[64];

    /* On any x86-64 machine: either usable, or a named reason. */
    avx512_gate_read(&avx512_cpu_hardware, &regs);
    int status = avx512_gate_decode(&regs, NULL, why, sizeof why);
    ck_assert(status == TOPOML_OK || status == TOPOML_E_UNSUPPORTED);
    if (status == TOPOML_E_UNSUPPORTED)
        ck_assert_msg(strstr(why, "not reported by CPUID") || strstr(why, "OS has not enabled"),
                      "reason: %s", why);
    avx512_cpu_brand(&avx512_cpu_hardware, brand, sizeof brand);
    ck_assert_uint_gt(strlen(brand), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("asm-avx512 gate");
    TCase *tc = tcase_create("gate");
    tcase_add_test(tc, test_gate_accepts_all_features_present);
    tcase_add_test(tc, test_gate_rejects_missing_osxsave);
    tcase_add_test(tc, test_gate_rejects_os_without_zmm_state);
    tcase_add_test(tc, test_gate_accepts_avx512f_without_vl);
    tcase_add_test(tc, test_gate_rejects_max_leaf_below_7);
    tcase_add_test(tc, test_gate_rejects_missing_avx512f);
    tcase_add_test(tc, test_gate_rejects_missing_avx_and_popcnt);
    tcase_add_test(tc, test_gate_truncates_reason_to_buffer);
    tcase_add_test(tc, test_gate_reader_never_runs_xgetbv_without_osxsave);
    tcase_add_test(tc, test_gate_reader_never_reads_leaf7_above_max_leaf);
    tcase_add_test(tc, test_gate_device_string_names_brand_and_features);
    tcase_add_test(tc, test_gate_live_read_decodes_without_crashing);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
