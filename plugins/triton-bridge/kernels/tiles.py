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
def distance_tile(xt, n, dim, root, rows, cols, BLOCK: tl.constexpr):
    """Distances between points `rows` and points `cols` (BLOCK each).

    xt holds the coordinates transposed, coordinate k of point p at
    xt[k*n + p], so that each load below reads consecutive points. root != 0
    selects euclidean, root == 0 squared euclidean; it is a run-time argument
    (one uniform branch per tile) so that one binary serves both metrics.
    """
    rmask = rows < n
    cmask = cols < n
    acc = tl.zeros([BLOCK, BLOCK], dtype=xt.dtype.element_ty)
    for k in range(0, dim):
        xr = tl.load(xt + k * n + rows, mask=rmask, other=0.0)
        xc = tl.load(xt + k * n + cols, mask=cmask, other=0.0)
        diff = xr[:, None] - xc[None, :]
        acc += diff * diff
    if root != 0:
        if acc.dtype == tl.float64:
            acc = tl.sqrt(acc)  # sqrt.rn.f64: IEEE rounding already
        else:
            acc = tl.sqrt_rn(acc)  # tl.sqrt would be the approximate sqrt.approx.f32
    return acc
