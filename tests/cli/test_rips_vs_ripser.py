"""`topoml barcode` against Debian's ripser and ripser-coeff (Ripser 1.2.1),
run for real: the expected outputs shipped with Ripser's examples, every
example file in every dimension it answers quickly, and random clouds,
circles, spheres, tori, grids full of equal distances and clouds with
duplicated points, in dimensions 0..3, with and without thresholds, from
point clouds, lower-distance matrices and sparse edge lists, over Z/2, Z/3
and Z/5. Diagrams are compared as multisets with relative tolerance 1e-5
(Ripser prints 6 significant digits).

Ripser 1.2.1 aborts on --dim 0 and on a single point: H0 then comes from a
--dim 1 run, and one point is checked on its own. Ripser computes point
distances in float, topoml in double: a bar shorter than the tolerance may
exist on one side only, so such bars are left out on both."""
import math
import os
import random
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import clitest as ct

a = ct.args()
ripser = ct.ripser_bin("ripser")
ripser_coeff = ct.ripser_bin("ripser-coeff")
rep = ct.Report()
D = a.data
tmp = []


def long_enough(bar):
    b, d = bar
    return math.isinf(d) or d - b > ct.REL_TOL * max(1.0, abs(b), abs(d))


def compare(what, ours, theirs, dims):
    for k in dims:
        x = [b for b in ours.get(k, []) if long_enough(b)]
        y = [b for b in theirs.get(k, []) if long_enough(b)]
        rep.check(ct.same_diagram(x, y),
                  "%s: dim %d differs (%d vs %d bars)\n  topoml %s\n  ripser %s" %
                  (what, k, len(x), len(y), sorted(x)[:6], sorted(y)[:6]))


def both(path, fmt, dim, threshold=None, modulus=2):
    """Runs topoml and the matching ripser on one input; compares dims 0..dim."""
    extra = ["--format", fmt]
    if threshold is not None:
        extra += ["--threshold", repr(threshold)]
    mod = [] if modulus == 2 else ["--modulus", str(modulus)]
    ours = ct.run([a.topoml, "barcode", "--quiet", "--dim", str(dim)] + extra + mod + [path])
    ref = ripser if modulus == 2 else ripser_coeff
    theirs = ct.run([ref, "--dim", str(max(dim, 1))] + extra + mod + [path])
    ob, _ = ct.parse_ripser(ours.stdout)
    tb, _ = ct.parse_ripser(theirs.stdout)
    rep.check(sorted(ob.keys()) == list(range(dim + 1)),
              "%s: topoml printed dims %s" % (path, sorted(ob.keys())))
    what = "%s --format %s --dim %d%s Z/%d" % (
        os.path.basename(path), fmt, dim, "" if threshold is None else " --threshold %r" % threshold,
        modulus)
    compare(what, ob, tb, range(dim + 1))


# 1. The expected outputs kept with the examples (README.md there names the
# command of each).
expected = [
    ("projective_plane.dim2.mod2.txt", "projective_plane.lower_distance_matrix",
     ["--format", "lower-distance", "--dim", "2"]),
    ("projective_plane.dim2.mod3.txt", "projective_plane.lower_distance_matrix",
     ["--format", "lower-distance", "--dim", "2", "--modulus", "3"]),
    ("random16.dim7.txt", "random16.lower_distance_matrix",
     ["--format", "lower-distance", "--dim", "7"]),
    ("random20.dim2.txt", "random20.lower_distance_matrix",
     ["--format", "lower-distance", "--dim", "2"]),
    ("sphere_3_192.dim2.txt", "sphere_3_192.lower_distance_matrix",
     ["--format", "lower-distance", "--dim", "2"]),
    ("o3_1024.dim3.t1.8.txt", "o3_1024.txt",
     ["--format", "point-cloud", "--dim", "3", "--threshold", "1.8"]),
    ("o3_2048.dim2.t1.6.txt", "o3_2048.txt",
     ["--format", "point-cloud", "--dim", "2", "--threshold", "1.6"]),
]
for out, inp, args in expected:
    ours = ct.run([a.topoml, "barcode", "--quiet"] + args + [os.path.join(D, inp)])
    with open(os.path.join(D, "expected", out)) as f:
        want, _ = ct.parse_ripser(f.read())
    got, _ = ct.parse_ripser(ours.stdout)
    rep.check(sorted(got.keys()) == sorted(want.keys()), out + ": dimensions differ")
    compare("expected/" + out, got, want, sorted(want.keys()))

# 2. Every example file, run through ripser for real.
pp = "projective_plane"
for modulus in (2, 3, 5):
    for dim in (0, 1, 2, 3):
        both(os.path.join(D, pp + ".lower_distance_matrix"), "lower-distance", dim, None, modulus)
    both(os.path.join(D, pp + ".csv"), "distance", 2, None, modulus)
    both(os.path.join(D, pp + ".dipha"), "dipha", 2, None, modulus)
    both(os.path.join(D, pp + ".lower_distance_matrix"), "lower-distance", 2, 1.5, modulus)
for name in ("random16", "random20"):
    path = os.path.join(D, name + ".lower_distance_matrix")
    for dim in (0, 1, 2, 3):
        both(path, "lower-distance", dim)
        both(path, "lower-distance", dim, 50)
    both(path, "lower-distance", 3, None, 3)
    both(path, "lower-distance", 2, 60, 5)
sphere = os.path.join(D, "sphere_3_192.lower_distance_matrix")
for dim in (0, 1, 2):
    both(sphere, "lower-distance", dim)
both(sphere, "lower-distance", 2, 0.5)
both(sphere, "lower-distance", 2, None, 3)
both(sphere, "lower-distance", 3, 0.6)
o3 = lambda n: os.path.join(D, "o3_%d.txt" % n)
both(o3(1024), "point-cloud", 0)
both(o3(1024), "point-cloud", 1, 1.8)
both(o3(1024), "point-cloud", 2, 1.5, 3)
both(o3(1024), "point-cloud", 3, 1.8)
both(o3(2048), "point-cloud", 2, 1.6)
both(o3(2048), "point-cloud", 3, 1.2, 5)
both(o3(4096), "point-cloud", 1, 1.4)
both(o3(4096), "point-cloud", 2, 1.2)


# 3. Random clouds of many shapes.
def cloud(rng, n, kind):
    if kind in ("uniform", "circle", "grid2", "grid3"):
        base = {"uniform": ("uniform", 3), "circle": ("circle", 2), "grid2": ("grid", 2),
                "grid3": ("grid", 3)}[kind]
        return ct.random_cloud(rng, n, base[1], base[0])
    pts = []
    for _ in range(n):
        if kind == "sphere":
            v = [rng.gauss(0, 1) for _ in range(3)]
            r = math.sqrt(sum(x * x for x in v)) or 1.0
            pts.append([x / r for x in v])
        elif kind == "torus":
            s, t = 2 * math.pi * rng.random(), 2 * math.pi * rng.random()
            pts.append([(2 + math.cos(s)) * math.cos(t), (2 + math.cos(s)) * math.sin(t),
                        math.sin(s)])
        elif kind == "duplicates":
            pts.append([float(rng.randrange(4)), float(rng.randrange(4))])
    if kind == "duplicates":  # and a few exact copies of random points
        pts += [list(pts[rng.randrange(len(pts))]) for _ in range(n // 4)]
    return pts


def distances(pts):
    return [[math.dist(p, q) for q in pts] for p in pts]


def write_lower(pts):
    d = distances(pts)
    f = tempfile.NamedTemporaryFile("w", suffix=".ldm", delete=False)
    for i in range(1, len(pts)):
        f.write(",".join("%.17g" % d[i][j] for j in range(i)) + "\n")
    f.close()
    tmp.append(f.name)
    return f.name


def write_sparse(pts, cut):
    d = distances(pts)
    f = tempfile.NamedTemporaryFile("w", suffix=".sparse", delete=False)
    for i in range(len(pts)):
        for j in range(i):
            if d[i][j] <= cut:
                f.write("%d %d %.17g\n" % (i, j, d[i][j]))
    f.close()
    tmp.append(f.name)
    return f.name


def quantile(pts, q):
    d = sorted(x for i, row in enumerate(distances(pts)) for x in row[:i])
    return d[int(q * (len(d) - 1))]


rng = random.Random(20261203)
kinds = ["uniform", "circle", "sphere", "torus", "grid2", "grid3", "duplicates"]
for round_ in range(3):
    for kind in kinds:
        n = rng.choice([12, 20, 30, 45])
        pts = cloud(rng, n, kind)
        path = ct.write_cloud(pts)
        tmp.append(path)
        dim = rng.choice([0, 1, 2, 3]) if len(pts) <= 30 else rng.choice([0, 1, 2])
        modulus = [2, 3, 5][round_]
        t = quantile(pts, rng.choice([0.2, 0.5]))
        both(path, "point-cloud", dim, None, modulus)
        both(path, "point-cloud", dim, round(t, 6), modulus)
        lower = write_lower(pts)
        both(lower, "lower-distance", dim, None, modulus)
        both(lower, "lower-distance", dim, round(t, 6), modulus)
        both(write_sparse(pts, t), "sparse", dim, None, modulus)

# 4. Ripser aborts on one point; the answer is one infinite bar in H0.
one = ct.write_cloud([[0.25, 0.5]])
tmp.append(one)
for dim in (0, 2):
    r = ct.run([a.topoml, "barcode", "--quiet", "--format", "point-cloud", "--dim", str(dim), one])
    bars, _ = ct.parse_ripser(r.stdout)
    # --dim is capped at n - 2 as Ripser caps it (at 0 for one point).
    want = {0: [(0.0, math.inf)]}
    rep.check(bars == want, "one point, dim %d: %r" % (dim, bars))

for p in tmp:
    os.unlink(p)
rep.finish()
