"""`topoml compare` and `topoml features` against GUDHI on random diagrams:
bottleneck distance (gudhi.bottleneck_distance, exact with e=0), Wasserstein
distance (gudhi.wasserstein, POT; with scipy's linear_sum_assignment on the
augmented matrix as a second reference), Betti curves, landscapes and
persistent entropy (gudhi.representations). The diagrams include empty ones,
infinite points in equal and unequal numbers, points on the diagonal, and
coordinates on a coarse lattice so that ties are everywhere. Every file
format topoml reads is used for the inputs."""
import json
import math
import os
import random
import sys
import tempfile
import warnings

import numpy as np
from scipy.optimize import linear_sum_assignment

sys.path.insert(0, os.path.dirname(__file__))
import clitest as ct

import gudhi
from gudhi.representations import BettiCurve, Entropy, Landscape

try:
    from gudhi.wasserstein import wasserstein_distance as gudhi_wasserstein
    import ot  # noqa: F401  (gudhi.wasserstein needs POT)
except ImportError:
    gudhi_wasserstein = None

warnings.simplefilter("ignore")
INF = math.inf
a = ct.args()
rep = ct.Report()
rng = random.Random(20240917)
tmp = tempfile.mkdtemp()


def fmt(v):
    return repr(float(v))


def write(diagram, style, name):
    """diagram: {dim: [(b, d)]} written in one of topoml's input formats."""
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        dims = sorted(diagram)
        if style == "json":
            f.write(json.dumps({"dims": [{"dim": k, "intervals": [
                [b, None if math.isinf(d) else d] for b, d in diagram[k]]} for k in dims]}))
        elif style == "ripser":
            f.write("distance matrix with 0 points\n")
            for k in dims:
                f.write("persistence intervals in dim %d:\n" % k)
                for b, d in diagram[k]:
                    f.write(" [%s, )\n" % fmt(b) if math.isinf(d) else " [%s,%s)\n" % (fmt(b), fmt(d)))
        elif style == "gudhi":
            f.write("# dim birth death\n")
            for k in dims:
                for b, d in diagram[k]:
                    f.write("%d %s %s\n" % (k, fmt(b), "inf" if math.isinf(d) else fmt(d)))
        else:
            f.write("dim,birth,death\n")
            for k in dims:
                for b, d in diagram[k]:
                    f.write("%d,%s,%s\n" % (k, fmt(b), "inf" if math.isinf(d) else fmt(d)))
    return path


def random_pairs(n, lattice, n_inf):
    out = []
    for _ in range(n):
        if lattice:
            b = rng.randrange(8) * 0.25
            d = b + rng.randrange(6) * 0.25  # zero length now and then
        else:
            b = rng.uniform(0, 3)
            d = b + rng.expovariate(1.5)
        out.append((b, d))
    for _ in range(n_inf):
        out.append(((rng.randrange(4) * 0.5) if lattice else rng.uniform(0, 2), INF))
    rng.shuffle(out)
    return out


def arr(pairs):
    return np.array(pairs, dtype=float).reshape(-1, 2)


def lsa_wasserstein(x, y, q, p):
    """The augmented (n+m)-square assignment, solved by scipy; infinite
    points handled as GUDHI does."""
    fx = [t for t in x if not math.isinf(t[1])]
    fy = [t for t in y if not math.isinf(t[1])]
    ix = sorted(t[0] for t in x if math.isinf(t[1]))
    iy = sorted(t[0] for t in y if math.isinf(t[1]))
    if len(ix) != len(iy):
        return INF
    ess = sum(abs(u - v) ** q for u, v in zip(ix, iy))
    n, m = len(fx), len(fy)
    if n + m == 0:
        return ess ** (1.0 / q)
    fac = 0.5 if math.isinf(p) else 2 ** (1.0 / p - 1)
    c = np.zeros((n + m, n + m))
    for i, (b, d) in enumerate(fx):
        for j, (b2, d2) in enumerate(fy):
            u, v = abs(b - b2), abs(d - d2)
            c[i, j] = (max(u, v) if math.isinf(p) else (u ** p + v ** p) ** (1.0 / p)) ** q
        c[i, m:] = ((d - b) * fac) ** q
    for j, (b, d) in enumerate(fy):
        c[n:, j] = ((d - b) * fac) ** q
    r, k = linear_sum_assignment(c)
    return (c[r, k].sum() + ess) ** (1.0 / q)


def close(got, want, tol=1e-9):
    if got is None:
        got = INF
    if math.isinf(want) or math.isinf(got):
        return got == want
    return abs(got - want) <= tol * max(1.0, abs(want))


# ---- distances ----------------------------------------------------------

styles = ["json", "ripser", "gudhi", "csv"]
cases = []
for trial in range(60):
    lattice = trial % 2 == 0
    n, m = rng.randrange(0, 25), rng.randrange(0, 25)
    if trial % 10 == 0:
        n = 0
    if trial % 10 == 5:
        n = m = 0
    kx = rng.randrange(3)
    ky = kx if trial % 7 else rng.randrange(3)  # now and then a different count
    cases.append((random_pairs(n, lattice, kx), random_pairs(m, lattice, ky)))
# Hand-picked ties: identical diagrams, and equidistant choices everywhere.
cases.append(([(0, 1), (0, 1), (1, 2)], [(0, 1), (1, 2), (0, 1)]))
cases.append(([(0, 2), (2, 4)], [(1, 3), (1, 3)]))
cases.append(([(0, INF), (0, INF)], [(0, INF), (1, INF)]))

orders = [(1.0, INF), (2.0, INF), (1.0, 2.0), (3.0, 1.0)]
for idx, (x, y) in enumerate(cases):
    sx, sy = styles[idx % 4], styles[(idx + 1) % 4]
    fa = write({1: x}, sx, "a%d.%s" % (idx, sx))
    fb = write({1: y}, sy, "b%d.%s" % (idx, sy))
    q, p = orders[idx % len(orders)]
    r = ct.run([a.topoml, "compare", "--dim", "1", "--order", repr(q), "--internal-p",
                "inf" if math.isinf(p) else repr(p), "--output", "json", fa, fb])
    got = json.loads(r.stdout)["dims"][0]
    want_b = gudhi.bottleneck_distance(arr(x), arr(y), 0)
    rep.check(close(got["bottleneck"], want_b, 1e-12),
              "case %d bottleneck: topoml %s, gudhi %s" % (idx, got["bottleneck"], want_b))
    want_w = lsa_wasserstein(x, y, q, p)
    rep.check(close(got["wasserstein"], want_w),
              "case %d wasserstein q=%g p=%g: topoml %s, scipy %s" % (idx, q, p, got["wasserstein"], want_w))
    if gudhi_wasserstein is not None:
        want_g = gudhi_wasserstein(arr(x), arr(y), order=q, internal_p=p)
        rep.check(close(got["wasserstein"], float(want_g)),
                  "case %d wasserstein q=%g p=%g: topoml %s, gudhi %s" % (idx, q, p, got["wasserstein"], want_g))

# A larger pair of diagrams, where the search and the solver do real work.
x = random_pairs(300, False, 1)
y = random_pairs(280, True, 1)
fa, fb = write({0: x}, "json", "big_a.json"), write({0: y}, "gudhi", "big_b.txt")
got = json.loads(ct.run([a.topoml, "compare", "-O", "json", fa, fb]).stdout)["dims"][0]
rep.check(close(got["bottleneck"], gudhi.bottleneck_distance(arr(x), arr(y), 0), 1e-12),
          "300-point bottleneck")
rep.check(close(got["wasserstein"], lsa_wasserstein(x, y, 1.0, INF)), "300-point wasserstein")

# Every dimension of two files, a dimension missing from one being empty.
fa = write({0: [(0, 1), (0, INF)], 2: [(1, 2)]}, "ripser", "m_a.txt")
fb = write({0: [(0, 1.5), (0, INF)]}, "gudhi", "m_b.txt")
out = ct.run([a.topoml, "compare", "-O", "csv", fa, fb]).stdout.splitlines()
rep.check(out == ["dim,bottleneck,wasserstein", "0,0.5,0.5", "1,0,0", "2,0.5,0.5"],
          "per-dimension CSV: %r" % out)

# ---- features -----------------------------------------------------------

for trial in range(20):
    pairs = random_pairs(rng.randrange(0, 40), trial % 2 == 0, 0)
    path = write({1: pairs}, styles[trial % 4], "f%d.%s" % (trial, styles[trial % 4]))
    r = ct.run([a.topoml, "features", "--dim", "1", "--grid", "-0.5:5:57", "--levels", "4",
                "--degree", "2", path])
    res = json.loads(r.stdout)
    grid = np.array(res["grid"])
    d = res["dims"][0]
    pd = arr(pairs)
    want_betti = BettiCurve(predefined_grid=grid)(pd) if len(pairs) else np.zeros(len(grid))
    rep.check(list(map(int, want_betti)) == d["betti"], "trial %d betti curve" % trial)
    # GUDHI's landscapes are those of the diagram rotated by 45 degrees:
    # sqrt(2) times Bubenik's, which topoml computes.
    if len(pairs):
        lg = Landscape(num_landscapes=4, resolution=57, sample_range=[-0.5, 5],
                       keep_endpoints=True)(pd).reshape(4, 57) / math.sqrt(2)
    else:
        lg = np.zeros((4, 57))
    lt = np.array(d["landscapes"])
    rep.check(np.allclose(lt, lg, rtol=1e-9, atol=1e-9),
              "trial %d landscapes (max diff %g)" % (trial, np.abs(lt - lg).max()))
    finite = [(b, e) for b, e in pairs if e > b]
    want_e = float(Entropy(mode="scalar")(arr(finite))[0]) if finite else 0.0
    rep.check(close(d["entropy"], want_e), "trial %d entropy %s vs %s" % (trial, d["entropy"], want_e))
    want_t = sum((e - b) ** 2 for b, e in pairs)
    rep.check(close(d["total_persistence"], want_t), "trial %d total persistence" % trial)

# Infinite bars: the Betti curve counts them to the end, entropy and total
# persistence leave them out and say how many there were.
path = write({0: [(0, 1), (0, 2), (0, INF)]}, "json", "inf.json")
res = json.loads(ct.run([a.topoml, "features", "--grid", "0:4:5", path]).stdout)["dims"][0]
rep.check(res["betti"] == [3, 2, 1, 1, 1] and res["n_infinite"] == 1, "infinite bar kept: %r" % res)
rep.check(close(res["entropy"], math.log(3) - 2 * math.log(2) / 3), "entropy of the finite bars")
res = json.loads(ct.run([a.topoml, "features", "--grid", "0:4:5", "--infinite", "clip:3",
                         path]).stdout)["dims"][0]
rep.check(res["betti"] == [3, 2, 1, 0, 0] and res["n_infinite"] == 0, "infinite bar clipped: %r" % res)

# ---- errors -------------------------------------------------------------

bad = os.path.join(tmp, "bad.txt")
with open(bad, "w") as f:
    f.write("0 0 1\n0 2 1\n")
r = ct.run([a.topoml, "compare", bad, bad], check=False)
rep.check(r.returncode == 1 and "bad.txt:2: death 1 is below birth 2" in r.stderr,
          "a bad diagram names file and line: %r" % r.stderr)
r = ct.run([a.topoml, "compare", "--order", "0.5", bad, bad], check=False)
rep.check(r.returncode == 2, "bad --order is a usage error")
r = ct.run([a.topoml, "compare", bad], check=False)
rep.check(r.returncode == 2, "one file is a usage error")
r = ct.run([a.topoml, "features", "--grid", "3:1:5", bad], check=False)
rep.check(r.returncode == 2, "bad --grid is a usage error")
for cmd in ("compare", "features", "image", "plot"):
    r = ct.run([a.topoml, cmd, "--help"], check=False)
    rep.check(r.returncode == 0 and r.stdout.startswith("Usage: topoml " + cmd), cmd + " --help")
rep.finish()
