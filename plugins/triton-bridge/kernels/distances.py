"""topoml triton-bridge kernel: pairwise distances in Ripser's condensed order.

One program computes one BLOCK x BLOCK tile of the lower triangle, BLOCK =
MT * TW (see tiles.py for the tile numbering and the register tiling), and
writes the entries with row i > column j to out[i*(i-1)/2 + j - out0]. A
launch covers the tiles numbered tile0 .. tile0 + grid - 1; with tile0 =
bi0*(bi0+1)/2 and out0 = r0*(r0-1)/2 for r0 = bi0*BLOCK, `out` holds just
the band of rows the launch covers, so the host can produce a condensed
matrix larger than device memory band by band.
"""

import triton
import triton.language as tl

from tiles import program_tile, store_tile


@triton.jit
def pairwise_distances(xt, out, n, dim, root, tile0, out0, MT: tl.constexpr, TW: tl.constexpr,
                       UNROLL: tl.constexpr, PTX_STORE: tl.constexpr):
    d, i0, lr, r, c = program_tile(xt, n, dim, root, tile0, MT, TW, UNROLL)
    # Row i0 + l starts l*i0 + l*(l-1)/2 entries after row i0 does.
    row = out + (((i0 * (i0 - 1)) >> 1) - out0) + (lr.to(tl.int64) * i0 + ((lr * (lr - 1)) >> 1))
    store_tile(row + c, d, (r < n) & (c < r), PTX_STORE)
