"""topoml triton-bridge kernel: pairwise distances through a matrix product.

Same tiles, bands and output as distances.py (one BLOCK x BLOCK tile of the
lower triangle per program, condensed order, `tile0`/`out0` for bands), but
each squared distance is first formed as

    s = |x|^2 + |y|^2 - 2 <x, y>

with the inner products of a whole tile taken by tl.dot (IEEE float32
multiply-adds, no TF32), which does about a third of the arithmetic of the
difference form. The points come in twice, both transposed: `xs` shifted by
a common vector c (the host subtracts the rounded column means, so that the
norms are as small as the cloud allows) and `xt` as given.

Why the result stays within the conformance bound (docs/conformance.md:
|d - d_ref| <= 4 (dim + 2) eps d_ref, eps = 2^-23 = 2u). Write x', y' for the
shifted points, N = |x'|^2 + |y'|^2, S = |x - y|^2 the exact squared
distance. In float32 with unit roundoff u and any summation order (Higham
3.1), the norms and the inner product are each within dim*u of their
exact values relative to |x'|^2, |y'|^2 and |x'||y'| <= N/2, and the final
addition and subtraction add 2u*N, so the computed s obeys

    |s - |x' - y'|^2| <= (2 dim + 4) u N                          (1)

to first order. The shift was rounded: x'_k - y'_k differs from x_k - y_k by
at most u (|x'_k| + |y'_k|), so | |x' - y'|^2 - S | <= 2u sqrt(2 S N) + O(u^2).
An entry is kept only where s >= N/2; then S >= N/2 (1 - O(dim u)) and the
total error relative to S is at most

    (2 dim + 4) u * 2 + 2u sqrt(2 * 2) = (4 (dim + 2) + 4) u,

a little over half of the bound's 8 (dim + 2) u for any dim >= 2 (and the
square root of the euclidean metric halves a relative error). Every other
entry (s < N/2: points close next to their norms, where the product form
cancels) is recomputed exactly as distances.py computes it, from `xt`,
coordinate by coordinate: bit-identical to the scalar reference.
Duplicates therefore come out as exactly 0. The recomputation goes row by
row, only over the rows of the tile that hold such an entry.

The worst case above is what the guard guarantees; rounding errors that do
not all push the same way leave typical errors near sqrt(dim) u.
"""

import triton
import triton.language as tl

from tiles import lower_tile


@triton.jit
def pairwise_distances_dot(xt, xs, out, n, dim, root, tile0, out0, BLOCK: tl.constexpr,
                           BLOCK_K: tl.constexpr):
    bi, bj = lower_tile(tl.program_id(0).to(tl.int64) + tile0)
    lane = tl.arange(0, BLOCK)
    rows = bi * BLOCK + lane.to(tl.int64)
    cols = bj * BLOCK + lane.to(tl.int64)
    rmask = rows < n
    cmask = cols < n
    g = tl.zeros([BLOCK, BLOCK], dtype=tl.float32)
    nr = tl.zeros([BLOCK], dtype=tl.float32)
    nc = tl.zeros([BLOCK], dtype=tl.float32)
    for k0 in range(0, dim, BLOCK_K):
        ks = k0 + tl.arange(0, BLOCK_K)
        kmask = ks < dim
        a = tl.load(xs + ks[None, :] * n + rows[:, None], mask=rmask[:, None] & kmask[None, :],
                    other=0.0)
        b = tl.load(xs + ks[:, None] * n + cols[None, :], mask=kmask[:, None] & cmask[None, :],
                    other=0.0)
        g = tl.dot(a, b, g, input_precision="ieee")
        nr += tl.sum(a * a, axis=1)
        nc += tl.sum(b * b, axis=0)
    norms = nr[:, None] + nc[None, :]
    s = tl.maximum(norms - 2.0 * g, 0.0)
    r = rows[:, None]
    c = cols[None, :]
    inside = (r < n) & (c < r)
    exact = inside & (s < 0.5 * norms)
    if root != 0:
        s = tl.sqrt_rn(s)
    tl.store(out + (((r * (r - 1)) >> 1) + c - out0), s, mask=inside & ~exact)
    if tl.sum(exact.to(tl.int32)) > 0:
        row_has = tl.sum(exact.to(tl.int32), axis=1)
        for q in range(0, BLOCK):
            if tl.sum(tl.where(lane == q, row_has, 0)) > 0:
                # Row q of the tile, the entries flagged in it, the difference form.
                want = tl.sum(tl.where(lane[:, None] == q, exact.to(tl.int32), 0), axis=0) > 0
                i = bi * BLOCK + q
                acc = tl.zeros([BLOCK], dtype=tl.float32)
                for k in range(0, dim):
                    xi = tl.load(xt + k * n + i)
                    xc = tl.load(xt + k * n + cols, mask=cmask, other=0.0)
                    diff = xi - xc
                    acc += diff * diff
                if root != 0:
                    acc = tl.sqrt_rn(acc)
                tl.store(out + (((i * (i - 1)) >> 1) + cols - out0), acc, mask=want)
