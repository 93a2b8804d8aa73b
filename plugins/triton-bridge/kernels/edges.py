"""topoml triton-bridge kernel: the fused threshold-edge filter.

Each program computes one lower-triangular tile of distances (tiles.py) and
emits every pair (i, j), i < j, with d(i, j) <= thr (tiles numbered from
tile0, as in distances.py, so that a triangle of more tiles than one grid
holds is covered by several launches that share the counter) into the arrays ei, ej,
ed, without ever writing the distance matrix. Slots come from one atomic add
per tile on a 64-bit counter; inside the tile the slots are an exclusive
prefix sum of the keep mask over the tile tensor. An edge whose slot is >= capacity is
not stored, but it is still counted, so after the launch the counter holds
the exact number of edges: when it exceeds capacity the host allocates that
many slots and launches again (which then cannot overflow).

The order of the emitted edges depends on the order in which tiles take
their slots and is not deterministic; the host sorts them by (d, i, j).
"""

import triton
import triton.language as tl

from tiles import program_tile


@triton.jit
def threshold_edges(xt, n, dim, root, thr, tile0, ei, ej, ed, counter, capacity,
                    MT: tl.constexpr, TW: tl.constexpr, UNROLL: tl.constexpr):
    BLOCK: tl.constexpr = MT * TW
    d, i0, lr, r, c = program_tile(xt, n, dim, root, tile0, MT, TW, UNROLL)
    keep = ((r < n) & (c < r) & (d <= thr)).to(tl.int32)
    count = tl.sum(tl.reshape(keep, [BLOCK * BLOCK]), axis=0)
    if count > 0:
        base = tl.atomic_add(counter, count.to(tl.int64))
        # Slots: an exclusive prefix sum of the keep mask in the tile
        # tensor's row-major order (any order would do: the host sorts).
        flat = tl.reshape(keep, [BLOCK * BLOCK])
        before = tl.reshape(tl.cumsum(flat, axis=0) - flat, [MT, MT, TW, TW])
        slot = base + before.to(tl.int64)
        ok = (keep != 0) & (slot < capacity)
        # Edges are (i, j) with i < j: the column is the smaller vertex.
        tl.store(ei + slot, (c + 0 * r).to(tl.uint32), mask=ok)
        tl.store(ej + slot, (r + 0 * c).to(tl.uint32), mask=ok)
        tl.store(ed + slot, d, mask=ok)
