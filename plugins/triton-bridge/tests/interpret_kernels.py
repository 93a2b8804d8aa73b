#!/usr/bin/env python3
"""The triton-bridge kernels' own code, run by Triton's interpreter on the CPU.

The fake driver (tests/fake_cuda) checks the plugin against the kernels'
documented contracts; this checks the kernels against the same contracts,
by running kernels/*.py under TRITON_INTERPRET=1 with CPU tensors: tile
numbering, bands (tile0/out0), masks, the edge counter and prefix sums, an
overflowing edge buffer, the image formula with weights and infinite deaths,
and image tiles launched in pieces. What it cannot check is the compiled
code (rounding modes, no contraction): that is the GPU run's job.

Needs torch (CPU is enough), triton and numpy < 2.4. Prints one line per
case and "N passed, N failed"; exit status 0 when all passed, 77 when one of
them is missing.
"""

import math
import os
import sys
from pathlib import Path

os.environ["TRITON_INTERPRET"] = "1"
try:
    import numpy as np
    import torch
    import triton  # noqa: F401
except ImportError as e:
    print(f"skipped: {e}")
    sys.exit(77)
if tuple(int(v) for v in np.__version__.split(".")[:2]) >= (2, 4):
    # Triton 3.6's interpreter turns scalar arguments into 1-element arrays
    # and calls int() on them, which numpy 2.4 refuses.
    print(f"skipped: Triton's interpreter needs numpy < 2.4 (found {np.__version__})")
    sys.exit(77)

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "kernels"))
from distances import pairwise_distances  # noqa: E402
from distances_dot import pairwise_distances_dot  # noqa: E402
from edges import threshold_edges  # noqa: E402
import image  # noqa: E402
from image import persistence_image  # noqa: E402


def _interpreted_pow(x, y):
    """libdevice.pow for the interpreter, which runs the CUDA libdevice
    functions not at all: numpy's pow on the interpreter's arrays."""
    from triton.runtime.interpreter import TensorHandle
    import triton.language as tl
    yd = y.handle.data if hasattr(y, "handle") else y
    return tl.core.tensor(TensorHandle(np.power(x.handle.data, yd), x.handle.dtype.scalar), x.type)


image.libdevice = type("libdevice", (), {"pow": staticmethod(_interpreted_pow)})

BLOCK = 64  # the dot kernel's tile
# The exact kernels' tiles (tiles.tile_lanes, BLOCK = MT * TW): the compiled
# f32 distance schedule with its loop unrolled twice, and a small one whose
# tiles leave many partial (unrolled or not, dims odd and even test both loops).
EXACT_TILES = ({"MT": 8, "TW": 16, "UNROLL": 2}, {"MT": 2, "TW": 8, "UNROLL": 1})
passed = failed = 0


def verdict(ok, text):
    global passed, failed
    print(("PASS " if ok else "FAIL ") + text, flush=True)
    if ok:
        passed += 1
    else:
        failed += 1


def reference(x, root):
    """Distances as plugins/scalar/metric.h computes them: one coordinate at a
    time, left to right, in the points' precision."""
    n, dim = x.shape
    acc = torch.zeros((n, n), dtype=x.dtype)
    for k in range(dim):
        d = x[:, k][:, None] - x[:, k][None, :]
        acc = acc + d * d
    # numpy's sqrt is IEEE's, correctly rounded; torch's CPU float32 sqrt is
    # not always (it differs in the last bit on some inputs).
    return torch.from_numpy(np.sqrt(acc.numpy())) if root else acc


def tiles_below(rows):
    return rows * (rows + 1) // 2


def check_distances(n, dim, dtype, root, band_rows, tile=EXACT_TILES[0]):
    block = tile["MT"] * tile["TW"]
    g = torch.Generator().manual_seed(n * 31 + dim)
    x = (torch.rand((n, dim), generator=g, dtype=torch.float64) * 2 - 1).to(dtype)
    xt = x.t().contiguous() if dim else torch.zeros(1, dtype=dtype)
    ref = reference(x, root)
    m = n * (n - 1) // 2
    out = torch.full((m,), float("nan"), dtype=dtype)
    rows = -(-n // block)
    bi0 = 0
    launches = 0
    while bi0 < rows:  # bands of `band_rows` block rows, each its own buffer
        bi1 = min(rows, bi0 + band_rows)
        r0, r1 = bi0 * block, min(n, bi1 * block)
        out0 = r0 * (r0 - 1) // 2 if r0 else 0
        entries = (r1 * (r1 - 1) // 2) - out0
        band = torch.full((max(entries, 1),), float("nan"), dtype=dtype)
        grid = (tiles_below(bi1) - tiles_below(bi0),)
        pairwise_distances[grid](xt, band, n, dim, int(root), tiles_below(bi0), out0, **tile,
                                 PTX_STORE=0)  # the interpreter runs no PTX
        out[out0:out0 + entries] = band[:entries]
        bi0 = bi1
        launches += 1
    i, j = torch.tril_indices(n, n, offset=-1)
    want = ref[i, j]  # row-major over i > j: Ripser's order
    same = bool(torch.equal(out, want))
    verdict(same, f"distances n={n} dim={dim} tile {block} {str(dtype)[6:]} root={root}: {launches} bands, "
                  f"{'bit-identical' if same else 'differs'}")


def dot_points(n, dim, pattern, g):
    """float32 points; the patterns that make |x|^2 + |y|^2 - 2<x,y> cancel."""
    u = torch.rand((n, dim), generator=g, dtype=torch.float64)
    if pattern == "random":
        x = u * 2 - 1
    elif pattern == "offset":  # far from the origin: only the centring saves the product form
        x = 1000 + u
    elif pattern == "near":
        # Clusters of near-duplicates with large norms: a few far-apart
        # centres, each point a tiny step (1e-2 .. 1e-6 relative) from one.
        centres = 1000 * (torch.rand((4, dim), generator=g, dtype=torch.float64) * 2 - 1)
        which = torch.randint(0, 4, (n,), generator=g)
        step = 10.0 ** -torch.randint(2, 7, (n, 1), generator=g).double()
        x = centres[which] * (1 + step * (u * 2 - 1))
    elif pattern == "duplicates":  # every point three times, and far from the origin
        x = (100 + u[::3]).repeat_interleave(3, 0)[:n]
    return x.float()


def check_distances_dot(n, dim, root, pattern, band_rows):
    """kernels/distances_dot.py against the exact distances of the float32
    points: every entry within the conformance bound 4 (dim + 2) eps
    (docs/conformance.md), exact zeros for duplicates, and the entries the
    product form cannot keep (S < N/4, well inside the guard s < N/2)
    bit-identical to the difference form."""
    g = torch.Generator().manual_seed(n * 131 + dim)
    x = dot_points(n, dim, pattern, g)
    xt = x.t().contiguous()
    # The host's centring (src/points.c): rounded float32 means, float32 differences.
    c = xt.double().mean(dim=1).float()
    xs = (xt - c[:, None]).contiguous()
    m = n * (n - 1) // 2
    out = torch.full((m,), float("nan"), dtype=torch.float32)
    rows = -(-n // BLOCK)
    bi0 = 0
    while bi0 < rows:
        bi1 = min(rows, bi0 + band_rows)
        r0, r1 = bi0 * BLOCK, min(n, bi1 * BLOCK)
        out0 = r0 * (r0 - 1) // 2 if r0 else 0
        entries = (r1 * (r1 - 1) // 2) - out0
        band = torch.full((max(entries, 1),), float("nan"), dtype=torch.float32)
        grid = (tiles_below(bi1) - tiles_below(bi0),)
        pairwise_distances_dot[grid](xt, xs, band, n, dim, int(root), tiles_below(bi0), out0,
                                     BLOCK=BLOCK, BLOCK_K=32)
        out[out0:out0 + entries] = band[:entries]
        bi0 = bi1
    i, j = torch.tril_indices(n, n, offset=-1)
    xd = x.double()
    exact_sq = ((xd[i] - xd[j]) ** 2).sum(1)
    exact = exact_sq.sqrt() if root else exact_sq
    bound = 4 * (dim + 2) * 2.0 ** -23
    err = ((out.double() - exact).abs() / exact.clamp_min(1e-300))
    err = torch.where(exact == 0, out.double().abs(), err)
    worst = float(err.max()) / bound
    xsd = xs.t().double()
    norms = (xsd[i] ** 2).sum(1) + (xsd[j] ** 2).sum(1)
    cancels = exact_sq < norms / 4
    same = bool(torch.equal(out[cancels], reference(x, root)[i, j][cancels]))
    zeros = bool((out[exact_sq == 0] == 0).all())
    ok = worst <= 1 and same and zeros and not bool(out.isnan().any())
    verdict(ok, f"distances_dot n={n} dim={dim} {pattern} root={root}: worst {worst:.3f} of "
                f"the bound, {int(cancels.sum())} of {m} entries recomputed "
                f"{'bit-identical' if same else 'NOT bit-identical'}, "
                f"{int((exact_sq == 0).sum())} duplicates {'0' if zeros else 'NOT 0'}")


def check_edges(n, dim, dtype, root, quantile, capacity_factor, tile=EXACT_TILES[0]):
    g = torch.Generator().manual_seed(n * 7 + dim)
    x = (torch.rand((n, dim), generator=g, dtype=torch.float64) * 2 - 1).to(dtype)
    xt = x.t().contiguous()
    ref = reference(x, root)
    i, j = torch.tril_indices(n, n, offset=-1)
    d = ref[i, j]
    # A float32 value: the interpreter passes a Python float as float32, the
    # compiled f64 kernel takes it as float64; then both compare the same.
    thr = float(torch.quantile(d.double(), quantile).float())
    keep = d <= thr
    want = sorted(zip(d[keep].tolist(), j[keep].tolist(), i[keep].tolist()))
    capacity = max(1, int(len(want) * capacity_factor))
    ei = torch.zeros(capacity, dtype=torch.int32)
    ej = torch.zeros(capacity, dtype=torch.int32)
    ed = torch.zeros(capacity, dtype=dtype)
    counter = torch.zeros(1, dtype=torch.int64)
    tiles = tiles_below(-(-n // (tile["MT"] * tile["TW"])))
    half = tiles // 2  # two launches sharing the counter, as the host does
    for tile0, count in ((0, half), (half, tiles - half)):
        if count:
            threshold_edges[(count,)](xt, n, dim, int(root), thr, tile0, ei, ej, ed, counter,
                                      capacity, **tile)
    found = int(counter[0])
    stored = min(found, capacity)
    got = sorted(zip(ed[:stored].tolist(), ei[:stored].tolist(), ej[:stored].tolist()))
    if capacity >= len(want):
        ok = found == len(want) and got == want
        what = f"{found} edges, {'the reference set' if ok else 'NOT the reference set'}"
    else:
        # Overflow: every edge counted, the stored ones distinct and genuine.
        wanted = set(want)
        ok = found == len(want) and len(set(got)) == stored and all(e in wanted for e in got)
        what = f"capacity {capacity}: counted {found} of {len(want)}, stored {stored}"
    verdict(ok, f"edges n={n} dim={dim} tile {tile['MT'] * tile['TW']} {str(dtype)[6:]} root={root} q={quantile}: {what}")


def image_reference(pairs, start, end, p):
    width, height = p["width"], p["height"]
    db = (p["birth_max"] - p["birth_min"]) / width
    dp = (p["pers_max"] - p["pers_min"]) / height
    s = 1.0 / (p["sigma"] * math.sqrt(2.0))
    img = [[0.0] * width for _ in range(height)]
    for q in range(start, end):
        b, d = pairs[q]
        if d == math.inf:
            if p["infinite"] == 0:
                continue
            d = p["clip_death"]
        pers = d - b
        w = 1.0
        if p["weight"] == 1:
            w = min(pers / p["weight_max"], 1.0)
        elif p["weight"] == 2:
            w = pers ** p["weight_power"]
        for r in range(height):
            y0, y1 = p["pers_min"] + r * dp, p["pers_min"] + (r + 1) * dp
            fy = 0.5 * (math.erf((y1 - pers) * s) - math.erf((y0 - pers) * s))
            for c in range(width):
                x0, x1 = p["birth_min"] + c * db, p["birth_min"] + (c + 1) * db
                fx = 0.5 * (math.erf((x1 - b) * s) - math.erf((x0 - b) * s))
                img[r][c] += w * fy * fx
    return img


def check_image(weight, infinite, width, height, sizes, pieces):
    g = torch.Generator().manual_seed(width * 100 + height)
    offsets = [0]
    for size in sizes:
        offsets.append(offsets[-1] + size)
    total = offsets[-1]
    births = torch.rand(total, generator=g, dtype=torch.float64)
    deaths = births + torch.rand(total, generator=g, dtype=torch.float64) * 0.9
    deaths[::5] = math.inf
    pairs_t = torch.stack([births, deaths], 1).contiguous() if total else torch.zeros((1, 2),
                                                                                      dtype=torch.float64)
    p = dict(weight=weight, weight_max=0.5, weight_power=1.5, sigma=0.07, birth_min=-0.1,
             birth_max=1.1, pers_min=0.0, pers_max=1.0, width=width, height=height,
             infinite=infinite, clip_death=1.3)
    k0 = 1  # launch diagrams 1.. only, as a chunk: out holds just those
    n_diag = len(sizes) - k0
    out = torch.full((n_diag, height, width), float("nan"), dtype=torch.float64)
    off_t = torch.tensor(offsets, dtype=torch.int64)
    tiles = -(-height // 16) * -(-width // 16)
    step = -(-tiles // pieces)
    db = (p["birth_max"] - p["birth_min"]) / width
    dp = (p["pers_max"] - p["pers_min"]) / height
    s = 1.0 / (p["sigma"] * math.sqrt(2.0))
    for t0 in range(0, tiles, step):
        grid = (min(step, tiles - t0), n_diag)
        persistence_image[grid](pairs_t, off_t, out, k0, t0, width, height, p["birth_min"], db,
                                p["pers_min"], dp, s, weight, p["weight_max"],
                                p["weight_power"], infinite, p["clip_death"],
                                BLOCK_R=16, BLOCK_C=16, BLOCK_P=8)
    pairs = list(zip(births.tolist(), deaths.tolist()))
    worst = 0.0
    for k in range(n_diag):
        ref = image_reference(pairs, offsets[k0 + k], offsets[k0 + k + 1], p)
        sum_w = max(1.0, sum(abs(v) for row in ref for v in row))
        for r in range(height):
            for c in range(width):
                err = abs(out[k, r, c].item() - ref[r][c])
                worst = max(worst, err / (sum_w * 2.2e-16)) if err == err else math.inf
    verdict(worst <= 64, f"image weight={weight} infinite={infinite} {width}x{height} "
                         f"in {pieces} pieces: max |err| {worst:.2f} eps*W")


def main():
    for dtype in (torch.float32, torch.float64):
        for root in (1, 0):
            check_distances(2, 3, dtype, root, 1)
            check_distances(130, 5, dtype, root, 1)
            check_distances(200, 3, dtype, root, 2)
            check_distances(200, 3, dtype, root, 3, EXACT_TILES[1])
        check_distances(70, 0, dtype, 1, 1)
        check_distances(41, 2, dtype, 1, 1, EXACT_TILES[1])
        check_edges(150, 3, dtype, 1, 0.3, 1.0)
        check_edges(150, 3, dtype, 0, 0.3, 1.0)
        check_edges(130, 4, dtype, 1, 0.5, 0.25)
        check_edges(150, 3, dtype, 1, 0.3, 1.0, EXACT_TILES[1])
        check_edges(70, 2, dtype, 1, 0.5, 0.25, EXACT_TILES[1])
    for root in (1, 0):
        check_distances_dot(100, 70, root, "random", 1)
        check_distances_dot(100, 64, root, "near", 1)
    check_distances_dot(130, 64, 1, "offset", 2)
    check_distances_dot(90, 96, 1, "duplicates", 1)
    check_image(0, 0, 20, 20, [3, 0, 17, 40, 1], 1)
    check_image(1, 1, 33, 7, [2, 9, 0, 25], 2)
    check_image(2, 0, 16, 40, [4, 30, 6], 3)
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
