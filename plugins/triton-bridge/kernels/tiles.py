"""Tile helpers shared by the topoml triton-bridge point-cloud kernels.

The pairwise kernels cover the strictly lower triangle of the n x n distance
matrix with square BLOCK x BLOCK tiles. Tiles are numbered row by row over the
lower triangle (tile (bi, bj) with bj <= bi has number bi*(bi+1)/2 + bj), so a
one-dimensional grid of T*(T+1)/2 programs covers it with no idle programs and
no grid-dimension limit short of 2**31 - 1 tiles. A launch may start at any
tile number (`tile0`), which lets the host split the triangle into bands of
block rows.

Distances are accumulated one coordinate at a time, left to right, in the
points' own precision, exactly as the scalar reference (plugins/scalar/
metric.h) does; the kernels are compiled without floating-point contraction
and take the square root with IEEE rounding, so each distance is the
correctly rounded result of the same operations the reference performs.
"""

import triton
import triton.language as tl


@triton.jit
def lower_tile(t):
    """(bi, bj) of lower-triangular tile number t (int64), bj <= bi."""
    # The float square root gives the block row to within one; the two integer
    # checks make it exact for every t < 2**52.
    bi = ((tl.sqrt((8 * t + 1).to(tl.float64)) - 1.0) * 0.5).to(tl.int64)
    bi = tl.where(((bi * (bi + 1)) >> 1) > t, bi - 1, bi)
    bi = tl.where((((bi + 1) * (bi + 2)) >> 1) <= t, bi + 1, bi)
    bj = t - ((bi * (bi + 1)) >> 1)
    return bi, bj


@triton.jit
def tile_lanes(MT: tl.constexpr, TW: tl.constexpr):
    """Row and column offsets within a tile, as 4-d index tensors.

    A tile of BLOCK = MT * TW rows and columns is held as a [MT, MT, TW, TW]
    tensor: element [a, b, y, x] is row a*TW + y, column b*TW + x of the
    tile. Triton gives such a tensor a layout in which each thread holds an
    MT x MT block (all of dims 0 and 1) and the lanes run over y and x, so a
    thread loads MT row and MT column coordinates per step for MT*MT
    distances, where a [BLOCK, BLOCK] tensor gives each thread one column
    and BLOCK/warps rows, one load per distance (the register tiling of
    plugins/cuda/pairs.cuh, written as a tensor shape). Returns lr
    ([MT, 1, TW, 1]) and lc ([1, MT, 1, TW]), int32.
    """
    lr = tl.arange(0, MT)[:, None, None, None] * TW + tl.arange(0, TW)[None, None, :, None]
    lc = tl.arange(0, MT)[None, :, None, None] * TW + tl.arange(0, TW)[None, None, None, :]
    return lr, lc


@triton.jit
def program_tile(xt, n, dim, root, tile0, MT: tl.constexpr, TW: tl.constexpr,
                 UNROLL: tl.constexpr):
    """The tile of this program (number tile0 + program id): its distances
    (distance_tile, its loop unrolled UNROLL times), its first row i0, the
    row offsets lr (tile_lanes), and the row and column of every entry, r and
    c (int64)."""
    BLOCK: tl.constexpr = MT * TW
    bi, bj = lower_tile(tl.program_id(0).to(tl.int64) + tile0)
    i0 = bi * BLOCK
    j0 = bj * BLOCK
    lr, lc = tile_lanes(MT, TW)
    d = distance_tile(xt, n, dim, root, i0, j0, lr, lc, MT, TW, UNROLL)
    return d, i0, lr, i0 + lr, j0 + lc


@triton.jit
def store_tile(ptr, val, mask, PTX_STORE: tl.constexpr):
    """Store val at ptr where mask holds, each thread its own elements.

    With PTX_STORE the stores are one predicated st.global per element in
    inline PTX, from the registers the tile was computed in. tl.store would do
    the same work, but Triton (3.6) first converts the tile to the layout it
    prefers for a store (lanes along the contiguous columns, four per
    thread), through 64 KiB of shared memory for a 128 x 128 f32 tile; the
    tile's own layout already writes each warp's 32 elements as two runs of
    16 consecutive columns, which is what plugins/cuda/pairs.cuh does. The
    interpreter (TRITON_INTERPRET=1) runs no PTX: there PTX_STORE must be 0.
    """
    if PTX_STORE:
        # The value goes in as its bits: b64 in an "l" register, b32 in "r".
        if val.dtype == tl.float64:
            bits = val.to(tl.int64, bitcast=True)
            width: tl.constexpr = "64"
            reg: tl.constexpr = "l"
        else:
            bits = val.to(tl.int32, bitcast=True)
            width: tl.constexpr = "32"
            reg: tl.constexpr = "r"
        tl.inline_asm_elementwise(
            "{ .reg .pred p; setp.ne.b32 p, $3, 0; @p st.global.b" + width
            + " [$1], $2; mov.b32 $0, 0; }",
            "=r,l," + reg + ",r", [ptr, bits, mask.to(tl.int32)],
            dtype=tl.int32, is_pure=False, pack=1)
    else:
        tl.store(ptr, val, mask=mask)


@triton.jit
def distance_tile(xt, n, dim, root, i0, j0, lr, lc, MT: tl.constexpr, TW: tl.constexpr,
                  UNROLL: tl.constexpr):
    """Distances between points i0 + lr and points j0 + lc (tile_lanes),
    j0 <= i0 (a tile of the lower triangle).

    xt holds the coordinates transposed, coordinate k of point p at
    xt[k*n + p], so that each load below reads consecutive points. root != 0
    selects euclidean, root == 0 squared euclidean; it is a run-time argument
    (one uniform branch per tile) so that one binary serves both metrics.
    Returns a [MT, MT, TW, TW] tensor; a row or column past the last point
    repeats point n - 1.
    """
    if i0 + MT * TW <= n:
        # Every point of the tile exists (j0 <= i0): the offsets are the
        # constants of tile_lanes, which the loads take as immediates.
        acc = sum_of_squares(xt, n, dim, i0, j0, lr, lc, MT, TW, UNROLL)
    else:
        # The last block row: offsets clamped once to point n - 1, so that
        # the loads in the loop need no mask.
        lr = (tl.minimum(i0 + lr, n - 1) - i0).to(tl.int32)
        lc = (tl.minimum(j0 + lc, n - 1) - j0).to(tl.int32)
        acc = sum_of_squares(xt, n, dim, i0, j0, lr, lc, MT, TW, UNROLL)
    if root != 0:
        if acc.dtype == tl.float64:
            acc = tl.sqrt(acc)  # sqrt.rn.f64: IEEE rounding already
        else:
            acc = tl.sqrt_rn(acc)  # tl.sqrt would be the approximate sqrt.approx.f32
    return acc


@triton.jit
def sum_of_squares(xt, n, dim, i0, j0, lr, lc, MT: tl.constexpr, TW: tl.constexpr,
                   UNROLL: tl.constexpr):
    """sum_k (x[i0 + lr, k] - x[j0 + lc, k])^2, k = 0 .. dim-1 in order, as
    the scalar reference accumulates it. The two pointers step by n per
    coordinate; the offsets within the tile stay 32-bit. UNROLL > 1 unrolls
    the loop (the rest of dim / UNROLL in a loop of its own), so that a
    thread issues the loads of UNROLL coordinates before it waits for the
    first; the order of the additions stays the same."""
    pr = xt + i0
    pc = xt + j0
    acc = tl.zeros([MT, MT, TW, TW], dtype=xt.dtype.element_ty)
    for k in tl.range(0, dim, loop_unroll_factor=UNROLL):
        xr = tl.load(pr + lr)
        xc = tl.load(pc + lc)
        diff = xr - xc
        acc += diff * diff
        pr += n
        pc += n
    return acc
