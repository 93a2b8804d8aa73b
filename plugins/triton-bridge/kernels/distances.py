"""topoml triton-bridge kernel: pairwise distances in Ripser's condensed order.

One program computes one BLOCK x BLOCK tile of the lower triangle (see
tiles.py) and writes the entries with row i > column j to
out[i*(i-1)/2 + j - out0]. A launch covers the tiles numbered tile0 ..
tile0 + grid - 1; with tile0 = bi0*(bi0+1)/2 and out0 = r0*(r0-1)/2 for
r0 = bi0*BLOCK, `out` holds just the band of rows the launch covers, so the
host can produce a condensed matrix larger than device memory band by band.
"""

import triton
import triton.language as tl

from tiles import distance_tile, lower_tile


@triton.jit
def pairwise_distances(xt, out, n, dim, root, tile0, out0, BLOCK: tl.constexpr):
    bi, bj = lower_tile(tl.program_id(0).to(tl.int64) + tile0)
    rows = bi * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    cols = bj * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    d = distance_tile(xt, n, dim, root, rows, cols, BLOCK)
    r = rows[:, None]
    c = cols[None, :]
    tl.store(out + (((r * (r - 1)) >> 1) + c - out0), d, mask=(r < n) & (c < r))
