"""`topoml barcode` against GUDHI (python3-gudhi), a second reference written
independently of Ripser: its Rips complex is a simplex tree reduced by its
own persistent cohomology, over Z/p for any prime. Random clouds of several
shapes, grids with ties, and the small Ripser examples, in dimensions 0..3,
with and without thresholds, over Z/2, Z/3, Z/5, Z/7 and Z/11. Diagrams are
compared as multisets with relative tolerance 1e-5."""
import math
import os
import random
import sys

sys.path.insert(0, os.path.dirname(__file__))
import clitest as ct

try:
    import gudhi
except ImportError:
    raise SystemExit("FAILED: python3-gudhi is not installed")

a = ct.args()
rep = ct.Report()
D = a.data
tmp = []


def gudhi_bars(dim, threshold, modulus, points=None, matrix=None):
    t = math.inf if threshold is None else threshold
    if points is not None:
        rc = gudhi.RipsComplex(points=points, max_edge_length=t)
    else:
        rc = gudhi.RipsComplex(distance_matrix=matrix, max_edge_length=t)
    st = rc.create_simplex_tree(max_dimension=dim + 1)
    # GUDHI skips the top dimension of the complex unless told: when no
    # (dim+1)-simplex is under the threshold, that is H_dim itself.
    st.compute_persistence(homology_coeff_field=modulus, persistence_dim_max=True)
    return {k: [(float(b), float(d)) for b, d in st.persistence_intervals_in_dimension(k)]
            for k in range(dim + 1)}


def check(what, path, fmt, dim, threshold, modulus, **data):
    cmd = [a.topoml, "barcode", "--quiet", "--format", fmt, "--dim", str(dim),
           "--modulus", str(modulus)]
    if threshold is not None:
        cmd += ["--threshold", repr(threshold)]
    ours, _ = ct.parse_ripser(ct.run(cmd + [path]).stdout)
    theirs = gudhi_bars(dim, threshold, modulus, **data)
    for k in range(dim + 1):
        rep.check(ct.same_diagram(ours.get(k, []), theirs[k]),
                  "%s dim %d Z/%d threshold %r: %d vs %d bars\n  topoml %s\n  gudhi  %s" %
                  (what, k, modulus, threshold, len(ours.get(k, [])), len(theirs[k]),
                   sorted(ours.get(k, []))[:6], sorted(theirs[k])[:6]))


def read_lower(path):
    with open(path) as f:
        vals = [float(x) for x in f.read().replace(",", " ").split()]
    n = int(round((1 + math.sqrt(1 + 8 * len(vals))) / 2))
    rows, k = [[]], 0
    for i in range(1, n):
        rows.append(vals[k:k + i])
        k += i
    return rows


# The small examples, as distance matrices.
for name, dims in (("projective_plane", 2), ("random16", 3), ("random20", 3)):
    path = os.path.join(D, name + ".lower_distance_matrix")
    m = read_lower(path)
    for modulus in (2, 3, 5):
        check(name, path, "lower-distance", dims, None, modulus, matrix=m)
    check(name, path, "lower-distance", dims, sorted(x for r in m for x in r)[len(m) * 2], 7,
          matrix=m)

# Random clouds; coordinates go through the file so both read the same
# numbers.
rng = random.Random(20261204)
shapes = (  # kind, points, coordinates, homology up to
    ("uniform", 25, 3, 3), ("uniform", 14, 4, 3), ("circle", 30, 2, 2), ("grid", 16, 2, 2),
    ("grid", 27, 3, 3), ("sphere", 30, 3, 2), ("uniform", 35, 3, 3), ("circle", 60, 2, 1))
for modulus in (2, 3, 5, 7, 11, 13):
    for kind, n, coords, dim in shapes:
        if kind == "sphere":
            pts = []
            for _ in range(n):
                v = [rng.gauss(0, 1) for _ in range(coords)]
                r = math.sqrt(sum(x * x for x in v)) or 1.0
                pts.append([x / r for x in v])
        else:
            pts = ct.random_cloud(rng, n, coords, kind)
        path = ct.write_cloud(pts)
        tmp.append(path)
        with open(path) as f:
            read = [[float(x) for x in line.split(",")] for line in f]
        check(kind, path, "point-cloud", dim, None, modulus, points=read)
        d = sorted(math.dist(p, q) for i, p in enumerate(read) for q in read[:i])
        check(kind, path, "point-cloud", dim, round(d[len(d) // 3], 6), modulus, points=read)

for p in tmp:
    os.unlink(p)
rep.finish()
