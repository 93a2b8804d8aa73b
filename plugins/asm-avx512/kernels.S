/*
 * kernels.S — the AVX-512 tile kernels of topoml-backend-asm-avx512:
 * squared euclidean / euclidean distance tiles in f32 and f64, each in two
 * flavours: `dist` stores the tile into the condensed output, `edges` keeps
 * only the pairs under a limit and emits them compactly, so the edges op never
 * writes the distance matrix. The contract (what a tile is, the order of the
 * sum, the struct layout) is in tile.h; the glue that cuts the triangle into
 * tiles is tiling.c. This file does no index arithmetic beyond one tile.
 *
 * Instruction set: AVX512F only (plus POPCNT in the edge kernels), all on zmm
 * registers and k masks, so the gate needs no DQ, BW or VL. vpxord zeroes
 * registers because vxorps on zmm would need DQ.
 *
 * Register plan (both dtypes):
 *   zmm0..zmm17   accumulators, row r and vector v in zmm(3r + v)
 *   zmm18..zmm20  the panel's three vectors at coordinate k
 *   zmm21..zmm26  row r's coordinate k broadcast to every lane
 *   zmm27..zmm30  differences (renamed by the core; four keep the text short)
 *   zmm31, k5..k7 the deferred square roots under way (see tile.h)
 *   r8 r9 r10 r11 rbx r12   row pointers x[0..5]
 *   rsi  the panel at coordinate k, rax  k times the element size,
 *   rcx  coordinates left, r13  the next pending row to root (6: none),
 *   r14  6 * r13, that row's masks in pend_mask
 * Per coordinate: 3 loads and 6 broadcasts (load ports only), then 18
 * subtractions and 18 FMAs, which is the whole FP work: 2 ops per pair and
 * coordinate, against 3 flops (sub, mul, add) of useful work.
 *
 * System V ABI: rdi holds the tile; rbx, r12, r13 and r14 are
 * callee-saved and pushed; no stack is used otherwise and nothing is called.
 */
#include "tile.h"

    .intel_syntax noprefix

/* ---- one coordinate of the accumulation ------------------------------- */

/* acc += (y - b)^2 with the difference in register t. */
.macro SUBSQ sub, fma, acc, y, b, t
    \sub    zmm\t, zmm\y, zmm\b
    \fma    zmm\acc, zmm\t, zmm\t
.endm

/* Replace the values of pending row r13 (three vectors, masks from byte
 * r14 = 6 * r13 of pend_mask) by their square roots, in place, and move to
 * the next row. The masked loads and stores touch only those lanes (and
 * fault on no other), so neighbours that belong to other tiles are left
 * alone. */
.macro ROOT_ROW sqrt, movu
    mov     rdx, [rdi + r13 * 8 + TILE_PEND_OUT]
    kmovw   k5, word ptr [rdi + r14 + TILE_PEND_MASK]
    kmovw   k6, word ptr [rdi + r14 + TILE_PEND_MASK + 2]
    kmovw   k7, word ptr [rdi + r14 + TILE_PEND_MASK + 4]
    \sqrt   zmm31{k5}{z}, zmmword ptr [rdx]
    \movu   zmmword ptr [rdx]{k5}, zmm31
    \sqrt   zmm31{k6}{z}, zmmword ptr [rdx + 64]
    \movu   zmmword ptr [rdx + 64]{k6}, zmm31
    \sqrt   zmm31{k7}{z}, zmmword ptr [rdx + 128]
    \movu   zmmword ptr [rdx + 128]{k7}, zmm31
    inc     r13d
    add     r14d, 6
.endm

/* Coordinate k + off of all 18 accumulators; `xo` is off times the element
 * size, `po` off times the panel stride. */
.macro STEP bcast, esz, movu, sub, fma, xo, po
    \movu   zmm18, [rsi + \po]
    \movu   zmm19, [rsi + \po + 64]
    \movu   zmm20, [rsi + \po + 128]
    \bcast  zmm21, \esz ptr [r8  + rax + \xo]
    \bcast  zmm22, \esz ptr [r9  + rax + \xo]
    \bcast  zmm23, \esz ptr [r10 + rax + \xo]
    \bcast  zmm24, \esz ptr [r11 + rax + \xo]
    \bcast  zmm25, \esz ptr [rbx + rax + \xo]
    \bcast  zmm26, \esz ptr [r12 + rax + \xo]
    SUBSQ \sub, \fma,  0, 18, 21, 27
    SUBSQ \sub, \fma,  1, 19, 21, 28
    SUBSQ \sub, \fma,  2, 20, 21, 29
    SUBSQ \sub, \fma,  3, 18, 22, 30
    SUBSQ \sub, \fma,  4, 19, 22, 27
    SUBSQ \sub, \fma,  5, 20, 22, 28
    SUBSQ \sub, \fma,  6, 18, 23, 29
    SUBSQ \sub, \fma,  7, 19, 23, 30
    SUBSQ \sub, \fma,  8, 20, 23, 27
    SUBSQ \sub, \fma,  9, 18, 24, 28
    SUBSQ \sub, \fma, 10, 19, 24, 29
    SUBSQ \sub, \fma, 11, 20, 24, 30
    SUBSQ \sub, \fma, 12, 18, 25, 27
    SUBSQ \sub, \fma, 13, 19, 25, 28
    SUBSQ \sub, \fma, 14, 20, 25, 29
    SUBSQ \sub, \fma, 15, 18, 26, 30
    SUBSQ \sub, \fma, 16, 19, 26, 27
    SUBSQ \sub, \fma, 17, 20, 26, 28
.endm

/* Prologue and the k loop shared by both flavours: leaves the 18 sums in
 * zmm0..zmm17, with rdi still pointing at the tile, and roots the pending
 * rows when `roots` is 1 and the tile asks for square roots (all six: those
 * the loop had no room for are taken after it). The loop takes two
 * coordinates per trip to halve its bookkeeping; an odd last one is taken
 * alone. k runs upward, so every lane adds its terms in the reference's
 * order. */
.macro ACCUMULATE bcast, esz, esize, movu, sub, fma, sqrt, roots
    push    rbx
    push    r12
    push    r13
    push    r14
    mov     r13d, TILE_ROWS
    xor     r14d, r14d
.if \roots
    cmp     dword ptr [rdi + TILE_SQRT], 0
    je      .Lnoroots\@
    xor     r13d, r13d
.Lnoroots\@:
.endif
    mov     r8,  [rdi + TILE_X + 0]
    mov     r9,  [rdi + TILE_X + 8]
    mov     r10, [rdi + TILE_X + 16]
    mov     r11, [rdi + TILE_X + 24]
    mov     rbx, [rdi + TILE_X + 32]
    mov     r12, [rdi + TILE_X + 40]
    mov     rsi, [rdi + TILE_PANEL]
    mov     rcx, [rdi + TILE_DIM]
    xor     eax, eax
    vpxord  zmm0,  zmm0,  zmm0
    vpxord  zmm1,  zmm1,  zmm1
    vpxord  zmm2,  zmm2,  zmm2
    vpxord  zmm3,  zmm3,  zmm3
    vpxord  zmm4,  zmm4,  zmm4
    vpxord  zmm5,  zmm5,  zmm5
    vpxord  zmm6,  zmm6,  zmm6
    vpxord  zmm7,  zmm7,  zmm7
    vpxord  zmm8,  zmm8,  zmm8
    vpxord  zmm9,  zmm9,  zmm9
    vpxord  zmm10, zmm10, zmm10
    vpxord  zmm11, zmm11, zmm11
    vpxord  zmm12, zmm12, zmm12
    vpxord  zmm13, zmm13, zmm13
    vpxord  zmm14, zmm14, zmm14
    vpxord  zmm15, zmm15, zmm15
    vpxord  zmm16, zmm16, zmm16
    vpxord  zmm17, zmm17, zmm17
    cmp     rcx, 2
    jb      .Lodd\@
.Lpair\@:
    /* One pending row of roots per two coordinates while any are left: the
     * divider then works beside the FMAs instead of after them. */
    cmp     r13d, TILE_ROWS
    jae     .Lrooted\@
    ROOT_ROW \sqrt, \movu
.Lrooted\@:
    STEP \bcast, \esz, \movu, \sub, \fma, 0, 0
    STEP \bcast, \esz, \movu, \sub, \fma, \esize, TILE_PANEL_STRIDE
    add     rsi, 2 * TILE_PANEL_STRIDE
    add     rax, 2 * \esize
    sub     rcx, 2
    cmp     rcx, 2
    jae     .Lpair\@
.Lodd\@:
    test    rcx, rcx
    jz      .Ldone\@
    STEP \bcast, \esz, \movu, \sub, \fma, 0, 0
.Ldone\@:
    cmp     r13d, TILE_ROWS
    jae     .Lallrooted\@
    ROOT_ROW \sqrt, \movu
    jmp     .Ldone\@
.Lallrooted\@:
.endm

/* ---- dist: masked stores into the condensed output -------------------- */

.macro STORE_ROW movu, r, a0, a1, a2
    mov     rdx, [rdi + TILE_OUT + 8 * \r]
    kmovw   k1, word ptr [rdi + TILE_MASK + 2 * (3 * \r + 0)]
    kmovw   k2, word ptr [rdi + TILE_MASK + 2 * (3 * \r + 1)]
    kmovw   k3, word ptr [rdi + TILE_MASK + 2 * (3 * \r + 2)]
    \movu   [rdx]{k1}, zmm\a0
    \movu   [rdx + 64]{k2}, zmm\a1
    \movu   [rdx + 128]{k3}, zmm\a2
.endm

.macro DIST_KERNEL name, bcast, esz, esize, movu, sub, fma, sqrt
    .globl  \name
    .hidden \name
    .type   \name, @function
    .p2align 5
\name:
    ACCUMULATE \bcast, \esz, \esize, \movu, \sub, \fma, \sqrt, 1
    /* Masked-off lanes are neither written nor faulted on, which is what
     * lets the glue point a row past the triangle's end. */
    STORE_ROW \movu, 0,  0,  1,  2
    STORE_ROW \movu, 1,  3,  4,  5
    STORE_ROW \movu, 2,  6,  7,  8
    STORE_ROW \movu, 3,  9, 10, 11
    STORE_ROW \movu, 4, 12, 13, 14
    STORE_ROW \movu, 5, 15, 16, 17
    pop     r14
    pop     r13
    pop     r12
    pop     rbx
    vzeroupper
    ret
    .size   \name, . - \name
.endm

/* ---- edges: compare, compress, emit ----------------------------------- */

/* Emit the lanes of accumulator `acc` (mask word `m`, column numbers in
 * zmm`iota`) whose sum is <= the limit in zmm18. Register use: rsi / rdx the
 * candidate arrays, rcx the number emitted so far, r9d the sqrt flag.
 * Compressing into a register and storing the whole vector is much faster
 * than the memory form of vcompress; the slack in tile.h pays for it. */
.macro EMIT cmp, sqrt, compress, movu, esize, acc, m, iota
    kmovw   k1, word ptr [rdi + TILE_MASK + 2 * \m]
    \cmp    k1{k1}, zmm\acc, zmm18, 0x12    /* LE_OQ: false for NaN */
    kortestw k1, k1
    jz      .Lnone\@
    test    r9d, r9d
    jz      .Lsquared\@
    /* The square root is monotone and correctly rounded, so the glue's
     * limit on the sum decides "sqrt(s) <= threshold" exactly; it is taken
     * here only for lanes that are emitted. */
    \sqrt   zmm\acc, zmm\acc
.Lsquared\@:
    \compress zmm22{k1}{z}, zmm\acc
    \movu   [rsi + rcx * \esize], zmm22
    vpcompressd zmm23{k1}{z}, zmm\iota
    vmovdqu32 [rdx + rcx * 4], zmm23
    kmovw   eax, k1
    popcnt  eax, eax
    add     rcx, rax
.Lnone\@:
.endm

/* Row r, whose accumulators are zmm a0, a1, a2 (= 3r, 3r+1, 3r+2). */
.macro EMIT_ROW cmp, sqrt, compress, movu, esize, r, a0, a1, a2
    mov     r8, rcx
    EMIT \cmp, \sqrt, \compress, \movu, \esize, \a0, (3 * \r + 0), 19
    EMIT \cmp, \sqrt, \compress, \movu, \esize, \a1, (3 * \r + 1), 20
    EMIT \cmp, \sqrt, \compress, \movu, \esize, \a2, (3 * \r + 2), 21
    mov     r10, rcx
    sub     r10, r8
    mov     dword ptr [rdi + TILE_COUNT + 4 * \r], r10d
.endm

.macro EDGES_KERNEL name, bcast, esz, esize, movu, sub, fma, sqrt, cmp, compress, iota
    .globl  \name
    .hidden \name
    .type   \name, @function
    .p2align 5
\name:
    ACCUMULATE \bcast, \esz, \esize, \movu, \sub, \fma, \sqrt, 0
    \bcast  zmm18, \esz ptr [rdi + TILE_LIMIT]
    vmovdqu32 zmm19, [rip + \iota]
    vmovdqu32 zmm20, [rip + \iota + 64]
    vmovdqu32 zmm21, [rip + \iota + 128]
    mov     rsi, [rdi + TILE_CAND_D]
    mov     rdx, [rdi + TILE_CAND_COL]
    mov     r9d, dword ptr [rdi + TILE_SQRT]
    xor     ecx, ecx
    EMIT_ROW \cmp, \sqrt, \compress, \movu, \esize, 0, 0, 1, 2
    EMIT_ROW \cmp, \sqrt, \compress, \movu, \esize, 1, 3, 4, 5
    EMIT_ROW \cmp, \sqrt, \compress, \movu, \esize, 2, 6, 7, 8
    EMIT_ROW \cmp, \sqrt, \compress, \movu, \esize, 3, 9, 10, 11
    EMIT_ROW \cmp, \sqrt, \compress, \movu, \esize, 4, 12, 13, 14
    EMIT_ROW \cmp, \sqrt, \compress, \movu, \esize, 5, 15, 16, 17
    mov     eax, ecx
    pop     r14
    pop     r13
    pop     r12
    pop     rbx
    vzeroupper
    ret
    .size   \name, . - \name
.endm

/* ---- the four kernels -------------------------------------------------- */

    .text
    DIST_KERNEL topoml_avx512_dist_f32, vbroadcastss, dword, 4, vmovups, vsubps, vfmadd231ps, vsqrtps
    DIST_KERNEL topoml_avx512_dist_f64, vbroadcastsd, qword, 8, vmovupd, vsubpd, vfmadd231pd, vsqrtpd
    EDGES_KERNEL topoml_avx512_edges_f32, vbroadcastss, dword, 4, vmovups, vsubps, vfmadd231ps, vsqrtps, vcmpps, vcompressps, iota_f32
    EDGES_KERNEL topoml_avx512_edges_f64, vbroadcastsd, qword, 8, vmovupd, vsubpd, vfmadd231pd, vsqrtpd, vcmppd, vcompresspd, iota_f64

/* Panel column numbers of each vector's lanes, as dwords. f64 vectors have
 * 8 lanes; their upper 8 dwords are never selected by a mask. */
    .section .rodata
    .p2align 6
iota_f32:
    .long  0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14, 15
    .long 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31
    .long 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47
iota_f64:
    .long  0,  1,  2,  3,  4,  5,  6,  7,  0,  0,  0,  0,  0,  0,  0,  0
    .long  8,  9, 10, 11, 12, 13, 14, 15,  0,  0,  0,  0,  0,  0,  0,  0
    .long 16, 17, 18, 19, 20, 21, 22, 23,  0,  0,  0,  0,  0,  0,  0,  0

    .section .note.GNU-stack, "", @progbits
