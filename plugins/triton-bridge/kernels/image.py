"""topoml triton-bridge kernel: persistence images (Adams et al., JMLR 2017).

Pixel (row r, column c) of diagram k is

    sum over pairs (b, d) of k:  w(p) * Ix(c; b) * Iy(r; p),   p = d - b,

the exact integral over the pixel of a Gaussian of standard deviation sigma
centred at (b, p), which factors because the Gaussian is isotropic:

    Ix(c; b) = (erf((x1 - b) * s) - erf((x0 - b) * s)) / 2,   s = 1/(sigma*sqrt(2)),

with [x0, x1) the pixel's birth interval, and Iy likewise over persistence.
The weight w is 1 (mode 0), min(p / weight_max, 1) (mode 1) or p^weight_power
(mode 2). A pair with infinite death is dropped (infinite = 0) or has its death
replaced by clip_death (infinite = 1).

One program owns a BLOCK_R x BLOCK_C tile of pixels (tiles numbered row by
row from tile0 + program_id(0), so that a launch may cover some of them) of
one diagram,
diag0 + program_id(1), whose image it writes at out + program_id(1)*height*width
(`out` holds the images of the launch's diagrams only), and walks the diagram's pairs BLOCK_P at a time: the
erf factors are computed once per pair and pixel row or column, and the tile
accumulates their weighted outer products. Everything is float64.
"""

import triton
import triton.language as tl
from triton.language.extra.cuda import libdevice


@triton.jit
def persistence_image(pairs, offsets, out, diag0, tile0, width, height, birth_min, db, pers_min,
                      dp, s, weight_mode, weight_max, weight_power, infinite_mode, clip_death,
                      BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr, BLOCK_P: tl.constexpr):
    local = tl.program_id(1).to(tl.int64)
    k = local + diag0
    tiles_c = tl.cdiv(width, BLOCK_C)
    tile = tl.program_id(0) + tile0
    tr = tile // tiles_c
    tc = tile % tiles_c
    r = tr * BLOCK_R + tl.arange(0, BLOCK_R)
    c = tc * BLOCK_C + tl.arange(0, BLOCK_C)
    # Pixel edges, computed as the reference computes them: min + index * step.
    x0 = birth_min + c.to(tl.float64) * db
    x1 = birth_min + (c + 1).to(tl.float64) * db
    y0 = pers_min + r.to(tl.float64) * dp
    y1 = pers_min + (r + 1).to(tl.float64) * dp
    start = tl.load(offsets + k).to(tl.int64)
    end = tl.load(offsets + k + 1).to(tl.int64)
    acc = tl.zeros([BLOCK_R, BLOCK_C], dtype=tl.float64)
    for p0 in range(start, end, BLOCK_P):
        idx = p0 + tl.arange(0, BLOCK_P).to(tl.int64)
        m = idx < end
        b = tl.load(pairs + 2 * idx, mask=m, other=0.0)
        d = tl.load(pairs + 2 * idx + 1, mask=m, other=0.0)
        infinite = d == float("inf")
        d = tl.where(infinite & (infinite_mode == 1), clip_death, d)
        use = m & ((~infinite) | (infinite_mode == 1))
        p = d - b
        w = tl.where(weight_mode == 1, tl.minimum(p / weight_max, 1.0), 1.0)
        w = tl.where(weight_mode == 2, libdevice.pow(p, weight_power), w)
        # Unused lanes get weight 0 and a finite centre, so they add exact zeros.
        w = tl.where(use, w, 0.0)
        b = tl.where(use, b, 0.0)
        p = tl.where(use, p, 0.0)
        fx = 0.5 * (tl.math.erf((x1[None, :] - b[:, None]) * s) -
                    tl.math.erf((x0[None, :] - b[:, None]) * s))
        fy = (0.5 * w)[:, None] * (tl.math.erf((y1[None, :] - p[:, None]) * s) -
                                   tl.math.erf((y0[None, :] - p[:, None]) * s))
        acc += tl.sum(fy[:, :, None] * fx[:, None, :], axis=0)
    hw = height.to(tl.int64) * width
    mask = (r[:, None] < height) & (c[None, :] < width)
    tl.store(out + local * hw + r[:, None].to(tl.int64) * width + c[None, :], acc, mask=mask)
