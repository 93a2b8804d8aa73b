"""`topoml barcode --backend cpp-compat` against Debian's ripser and
ripser-coeff, run for real, and against topoml's scalar reference: the
shipped Ripser examples, random clouds in dimensions 0..2, thresholds that
cut, sparse input, Z/3. cpp-compat is not certified yet, so the test runs it
with a test-only configuration that lists it under `enable`.

Ripser computes in float and prints 6 digits: bars are compared as multisets
with a relative tolerance of 1e-5. The scalar reference and cpp-compat both
work in double on the same parsed input, so their text output must be the
same bars exactly (in any order)."""
import os
import random
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import clitest as ct

a = ct.args()
ripser = ct.ripser_bin()
ripser_coeff = ct.ripser_bin("ripser-coeff")
rep = ct.Report()
D = a.data
tmpdir = tempfile.mkdtemp(prefix="topoml-cpp-compat-")
config = os.path.join(tmpdir, "topoml.yaml")
with open(config, "w") as f:
    f.write("# test only: run the uncertified cpp-compat plugin\nenable: [cpp-compat]\n")


def topoml(backend, fmt, dim, path, extra):
    cmd = [a.topoml, "barcode", "--quiet", "--format", fmt, "--dim", str(dim)] + extra + [path]
    if backend:
        cmd[2:2] = ["--config", config, "--backend", backend, "--verbose"]
    return ct.run(cmd)


def bars_only(text, max_dim):
    bars, _ = ct.parse_ripser(text)
    return {d: sorted(bars.get(d, [])) for d in range(max_dim + 1)}


def check(fmt, path, dim, extra=(), modulus=2, ripser_input=None, what=None):
    extra = list(extra) + (["--modulus", str(modulus)] if modulus != 2 else [])
    what = what or "%s %s --dim %d %s" % (os.path.basename(path), fmt, dim, " ".join(extra))
    ours = topoml("cpp-compat", fmt, dim, path, extra)
    rep.check("ran on backend 'cpp-compat'" in ours.stderr, what + ": did not run on cpp-compat")
    mine = bars_only(ours.stdout, dim)
    # Ripser 1.2.1 aborts on --dim 0: its dimension 0 comes from --dim 1.
    prog = ripser if modulus == 2 else ripser_coeff
    theirs = ct.run([prog, "--format", fmt, "--dim", str(max(dim, 1))] + extra +
                    [ripser_input or path])
    ref = bars_only(theirs.stdout, dim)
    for d in range(dim + 1):
        rep.check(ct.same_diagram(mine[d], ref[d]),
                  "%s: H%d differs from ripser (%d vs %d bars)" % (what, d, len(mine[d]),
                                                                    len(ref[d])))
    scalar = bars_only(topoml(None, fmt, dim, path, extra).stdout, dim)
    rep.check(mine == scalar, what + ": differs from the scalar reference")
    # Same header lines as the scalar run (the CLI prints them, not the backend).
    rep.check(ct.parse_ripser(ours.stdout)[1] ==
              ct.parse_ripser(topoml(None, fmt, dim, path, extra).stdout)[1],
              what + ": header differs")


# The shipped examples, as the issue lists them.
check("lower-distance", os.path.join(D, "random16.lower_distance_matrix"), 3)
check("lower-distance", os.path.join(D, "random20.lower_distance_matrix"), 2)
check("lower-distance", os.path.join(D, "random20.lower_distance_matrix"), 2, ["--threshold", "50"])
check("lower-distance", os.path.join(D, "projective_plane.lower_distance_matrix"), 2)
check("lower-distance", os.path.join(D, "projective_plane.lower_distance_matrix"), 2, modulus=3)
check("distance", os.path.join(D, "projective_plane.csv"), 2)
check("dipha", os.path.join(D, "projective_plane.dipha"), 2)
check("lower-distance", os.path.join(D, "sphere_3_192.lower_distance_matrix"), 1)
check("point-cloud", os.path.join(D, "o3_1024.txt"), 2, ["--threshold", "1.4"])

# Random clouds in dimensions 0..2, with and without a threshold that cuts.
rng = random.Random(20261205)
for n, dim, kind in [(40, 2, "uniform"), (60, 3, "uniform"), (50, 2, "circle"),
                     (36, 2, "grid"), (27, 3, "grid"), (2, 2, "uniform")]:
    path = ct.write_cloud(ct.random_cloud(rng, n, dim, kind))
    for max_dim in (0, 1, 2):
        check("point-cloud", path, max_dim)
        check("point-cloud", path, max_dim, ["--threshold", "0.6"])
    check("point-cloud", path, 2, modulus=3)
    os.unlink(path)

# Sparse input. Ripser 1.2.1 lets sparse edges above --threshold into the
# complex, so it gets the edges under the cut instead (the same complex).
edges = [(i, j, rng.uniform(0.1, 2.0)) for i in range(30) for j in range(i + 1, 29)
         if rng.random() < 0.6]
edges.append((28, 29, 0.05))  # Ripser counts vertices up to the largest one it sees
sparse = os.path.join(tmpdir, "graph.sparse")
under = os.path.join(tmpdir, "graph-cut.sparse")
with open(sparse, "w") as f:
    f.writelines("%d %d %.17g\n" % e for e in edges)
with open(under, "w") as f:
    f.writelines("%d %d %.17g\n" % e for e in edges if e[2] <= 1.2)
check("sparse", sparse, 2)
check("sparse", sparse, 2, ["--threshold", "1.2"], ripser_input=under)

# The memory limit: refused before the work, with the estimate, by cpp-compat.
r = ct.run([a.topoml, "barcode", "--quiet", "--config", config, "--backend", "cpp-compat",
            "--max-memory", "4M", "--dim", "2", os.path.join(D, "sphere_3_192.lower_distance_matrix")],
           check=False)
rep.check(r.returncode == 1 and "estimated" in r.stderr and "cpp-compat" in r.stderr,
          "max-memory: exit %d, %r" % (r.returncode, r.stderr))

shutil.rmtree(tmpdir)
rep.finish()
