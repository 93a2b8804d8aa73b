"""`topoml barcode` as a drop-in for `ripser`, byte for byte, run for real
against Debian's Ripser 1.2.1 (always) and against Ripser built from its
current source when $TOPOML_RIPSER_CURRENT names that binary (tests/
CMakeLists.txt sets it when a `ripser-current` is on the PATH).

- Every shipped example, with its format named, with Ripser's abbreviation
  of it, and with none (topoml tells the layout; Ripser must be told):
  the same bytes on stdout, and the same with -o FILE.
- The point clouds with --dtype f32: Ripser's float distances, so the same
  bytes (the default f64 differs in the 6th digit, which is why the option
  exists).
- --dim beyond n - 2 is capped as Ripser caps it.
- An asymmetric full matrix, a non-zero diagonal, a matrix with its upper
  triangle missing: read as Ripser reads them (same bytes), with a warning;
  --strict-symmetry refuses them.
- --verbose and the JSON output say which layout was read; JSON and CSV
  record the threshold and tell cut-off bars from essential ones.
"""
import json
import os
import random
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import clitest as ct

a = ct.args()
rep = ct.Report()
D = a.data
refs = [("ripser 1.2.1", ct.ripser_bin("ripser"))]
current = os.environ.get("TOPOML_RIPSER_CURRENT", "")
if current:
    refs.append(("ripser (current source)", current))
else:
    print("note: TOPOML_RIPSER_CURRENT not set; comparing with Ripser 1.2.1 only")
tmp = tempfile.mkdtemp(prefix="topoml-dropin-")


def topoml(args, check=True, stdin=None):
    return ct.run([a.topoml, "barcode", "--quiet"] + args, check=check, stdin=stdin)


def ripser_121_header(ours, theirs):
    """Ripser 1.2.1 prints the pair count of a sparse matrix as (n*n-1)/2, a
    precedence slip fixed in later versions; topoml prints n(n-1)/2. That
    line may differ, nothing else (docs/formats.md lists it)."""
    a, b = ours.splitlines(), theirs.splitlines()
    if len(a) != len(b):
        return theirs
    for k, (x, y) in enumerate(zip(a, b)):
        if x != y and x.startswith("sparse distance matrix with ") and y.startswith(
                "sparse distance matrix with "):
            n = int(y.split()[4])
            if y.replace("/%d entries" % ((n * n - 1) // 2), "/%d entries" % (n * (n - 1) // 2)) == x:
                b[k] = x
    return "\n".join(b) + ("\n" if theirs.endswith("\n") else "")


def without_zero_length(text):
    """Ripser's output less its bars of zero length, which it prints in
    dimensions >= 1 when --ratio is below 1 (topoml never keeps them)."""
    keep = []
    for line in text.splitlines(True):
        if line.startswith(" [") and not line.rstrip().endswith(", )"):
            b, d = line.strip()[1:-1].split(",")
            if b == d:
                continue
        keep.append(line)
    return "".join(keep)


def same_bytes(what, ours, ripser_args, ref, fix=None):
    name, path = ref
    theirs = ct.run([path] + ripser_args).stdout
    if fix:
        theirs = fix(theirs)
    if name == "ripser 1.2.1":
        theirs = ripser_121_header(ours, theirs)
    rep.check(ours == theirs, "%s: differs from %s\n--- topoml\n%s\n--- %s\n%s" %
              (what, name, ours[:400], name, theirs[:400]))


# 1. The distance matrices: named, abbreviated as Ripser allows, not named.
matrices = [
    ("random16.lower_distance_matrix", "lower-distance", "lower", ["--dim", "3"]),
    ("random20.lower_distance_matrix", "lower-distance", "lower", ["--dim", "2"]),
    ("sphere_3_192.lower_distance_matrix", "lower-distance", "lower", ["--dim", "2"]),
    ("projective_plane.lower_distance_matrix", "lower-distance", "lower", ["--dim", "2"]),
    ("projective_plane.csv", "distance", "dist", ["--dim", "2"]),
    ("projective_plane.csv", "distance", "dist", ["--dim", "2", "--threshold", "2"]),
]
for ref in refs:
    for f, fmt, short, opts in matrices:
        path = os.path.join(D, f)
        ripser_args = ["--format", fmt] + opts + [path]
        for ours_fmt in (["--format", fmt], ["--format", short], []):
            what = "%s %s %s" % (f, " ".join(ours_fmt) or "(no --format)", " ".join(opts))
            same_bytes(what, topoml(ours_fmt + opts + [path]).stdout, ripser_args, ref)
    # The dipha file: Ripser 1.2.1 reads it too.
    path = os.path.join(D, "projective_plane.dipha")
    same_bytes("projective_plane.dipha (no --format)", topoml(["--dim", "2", path]).stdout,
               ["--format", "dipha", "--dim", "2", path], ref)

# -o FILE writes what stdout would have.
out = os.path.join(tmp, "out.txt")
path = os.path.join(D, "random16.lower_distance_matrix")
r = topoml(["--dim", "2", "-o", out, path])
rep.check(r.stdout == "", "-o FILE: stdout not empty: %r" % r.stdout[:100])
with open(out) as fh:
    same_bytes("-o FILE", fh.read(), ["--format", "lower-distance", "--dim", "2", path], refs[0])
r = topoml(["--dim", "1", "-o", os.path.join(tmp, "no", "such", "dir"), path], check=False)
rep.check(r.returncode == 1 and "no/such/dir" in r.stderr, "-o into a missing folder: %d %r" %
          (r.returncode, r.stderr))

# 2. Point clouds with --dtype f32, byte for byte; the default f64 is not.
clouds = [
    ("o3_1024.txt", ["--dim", "3", "--threshold", "1.8"]),
    ("o3_2048.txt", ["--dim", "2", "--threshold", "1.6"]),
    ("o3_1024.txt", ["--dim", "1"]),
]
for ref in refs:
    for f, opts in clouds:
        path = os.path.join(D, f)
        ours = topoml(["--format", "point-cloud", "--dtype", "f32"] + opts + [path]).stdout
        same_bytes("%s --dtype f32 %s" % (f, " ".join(opts)), ours,
                   ["--format", "point-cloud"] + opts + [path], ref)
# Random clouds in several dimensions, with and without a threshold.
rng = random.Random(17)
for k, (n, dim, thr) in enumerate([(60, 2, None), (50, 3, 0.9), (40, 5, None), (80, 4, 1.1)]):
    pts = ct.random_cloud(rng, n, dim)
    path = ct.write_cloud(pts, sep=" " if k % 2 else ",")
    opts = ["--dim", "2"] + ([] if thr is None else ["--threshold", repr(thr)])
    for ref in refs:
        ours = topoml(["--format", "point", "--dtype", "f32"] + opts + [path]).stdout
        same_bytes("random cloud %d (n=%d, R^%d) --dtype f32 %s" % (k, n, dim, " ".join(opts)),
                   ours, ["--format", "point-cloud"] + opts + [path], ref)
    os.unlink(path)

# 3. --dim beyond n - 2: Ripser prints dimensions 0 .. n-2 only.
path = os.path.join(D, "random16.lower_distance_matrix")
for ref in refs:
    same_bytes("random16 --dim 20", topoml(["--dim", "20", path]).stdout,
               ["--format", "lower-distance", "--dim", "20", path], ref)
small = os.path.join(tmp, "three.txt")
with open(small, "w") as fh:
    fh.write("0 1 2\n1 0 1.5\n2 1.5 0\n")
for ref in refs:
    same_bytes("3 points --dim 4", topoml(["--dim", "4", small]).stdout,
               ["--format", "distance", "--dim", "4", small], ref)

# --ratio (above and below 1) and --threshold on sparse input, as Ripser.
path = os.path.join(D, "sphere_3_192.lower_distance_matrix")
for ref in refs:
    for ratio in ("0.5", "1.2"):
        ours = topoml(["--dim", "2", "--ratio", ratio, path]).stdout
        ripser_args = ["--format", "lower-distance", "--dim", "2", "--ratio", ratio, path]
        same_bytes("sphere --ratio " + ratio, ours, ripser_args, ref, without_zero_length)
        if ratio == "0.5":  # the difference is real: Ripser prints [b,b) bars
            theirs = ct.run([ref[1]] + ripser_args).stdout
            rep.check(theirs != without_zero_length(theirs), "%s printed no [b,b) bar" % ref[0])
sparse = os.path.join(tmp, "edges.txt")
within = os.path.join(tmp, "edges_within.txt")
rng = random.Random(9)
with open(sparse, "w") as fh, open(within, "w") as fw:
    for i in range(30):
        for j in range(i + 1, 30):
            if rng.random() < 0.4:
                d = rng.uniform(0.1, 2)
                fh.write("%d %d %.4f\n" % (i, j, d))
                if float("%.4f" % d) <= 1.2:
                    fw.write("%d %d %.4f\n" % (i, j, d))
for ref in refs:
    same_bytes("sparse", topoml(["--format", "sparse", "--dim", "2", sparse]).stdout,
               ["--format", "sparse", "--dim", "2", sparse], ref)
    # With a threshold Ripser keeps the longer edges in play (a class born
    # at 1.4282 > 1.2 comes out); topoml's answer is Ripser's on the edges
    # within the threshold.
    ours = topoml(["--format", "sparse", "--dim", "2", "--threshold", "1.2", sparse]).stdout
    same_bytes("sparse --threshold 1.2", ours,
               ["--format", "sparse", "--dim", "2", "--threshold", "1.2", within], ref)
    theirs = ct.run([ref[1], "--format", "sparse", "--dim", "2", "--threshold", "1.2",
                     sparse]).stdout
    born_late = [ln for ln in theirs.splitlines() if ln.startswith(" [") and
                 float(ln.strip()[1:].split(",")[0]) > 1.2]
    rep.check(born_late and ours != theirs, "%s: no bar born past the threshold" % ref[0])
# --dim 0: Ripser 1.2.1 aborts, the current one does not. A single point
# crashes both (topoml prints its one bar, [0, )).
one = os.path.join(tmp, "one.txt")
with open(one, "w") as fh:
    fh.write("0.5 0.5\n")
r = topoml(["--format", "point-cloud", one])
rep.check(r.stdout.endswith("persistence intervals in dim 0:\n [0, )\n"), "one point: %r" % r.stdout)
for ref in refs[1:]:
    same_bytes("--dim 0", topoml(["--dim", "0", small]).stdout,
               ["--format", "distance", "--dim", "0", small], ref)
# No points: Ripser reads an empty file as one point, prints its header and
# then aborts or crashes, in every format; topoml refuses it (file, line,
# reason, status 1) and prints nothing on stdout.
empty = os.path.join(tmp, "empty.txt")
open(empty, "w").close()
for fmt in ([], ["--format", "lower-distance"], ["--format", "distance"],
            ["--format", "point-cloud"]):
    r = ct.run([a.topoml, "barcode"] + fmt + [empty], check=False)
    rep.check(r.returncode == 1 and not r.stdout and
              r.stderr.startswith("topoml barcode: %s:1: empty input" % empty),
              "empty input %s refused: %d %r" % (fmt, r.returncode, r.stderr[:120]))
    for ref in refs:
        theirs = ct.run([ref[1]] + (fmt or ["--format", "distance"]) + [empty], check=False)
        rep.check(theirs.returncode != 0, "%s fails on empty input %s (status %d): the "
                  "difference docs/formats.md lists" % (ref[0], fmt, theirs.returncode))

# 4. Imperfect full matrices: read by the lower triangle, as Ripser does.
rng = random.Random(5)
n = 12
pts = ct.random_cloud(rng, n, 3)
exact = [[sum((p - q) ** 2 for p, q in zip(pts[i], pts[j])) ** 0.5 for j in range(n)]
         for i in range(n)]
imperfect = {
    # rounded differently in each triangle (like a matrix written to 6 digits)
    "asymmetric": [["%.6f" % (exact[i][j] * (1 + 1e-6 * (i < j))) for j in range(n)]
                   for i in range(n)],
    "diagonal": [["%.6f" % (exact[i][j] if i != j else 0.25) for j in range(n)]
                 for i in range(n)],
    "upper_missing": [["%.6f" % exact[i][j] for j in range(i + 1)] for i in range(n)],
}
for name, rows in sorted(imperfect.items()):
    path = os.path.join(tmp, name + ".txt")
    with open(path, "w") as fh:
        fh.write("".join(" ".join(r) + "\n" for r in rows))
    r = topoml(["--format", "distance", "--dim", "2", path])
    rep.check("warning" in r.stderr and name + ".txt" in r.stderr,
              "%s: no warning on stderr: %r" % (name, r.stderr))
    for ref in refs:
        same_bytes(name + " full matrix", r.stdout,
                   ["--format", "distance", "--dim", "2", path], ref)
    r = topoml(["--format", "distance", "--strict-symmetry", "--dim", "2", path], check=False)
    rep.check(r.returncode == 1 and name + ".txt" in r.stderr and r.stdout == "",
              "%s --strict-symmetry: %d %r" % (name, r.returncode, r.stderr))

# 5. What was read, said; the threshold and cut-off bars recorded.
path = os.path.join(D, "projective_plane.csv")
r = ct.run([a.topoml, "barcode", "--quiet", "--verbose", "--dim", "1", path])
rep.check("read as distance (lines 1 and 2 hold 13 values each" in r.stderr,
          "--verbose does not say the layout: %r" % r.stderr[:300])
r = topoml(["--output", "json", "--dim", "1", "--threshold", "1", path])
j = json.loads(r.stdout)
rep.check(j["input"] == {"format": "distance", "points": 13} and j["threshold"] == 1,
          "JSON input/threshold: %r %r" % (j.get("input"), j.get("threshold")))
nulls = [sum(1 for b in d["intervals"] if b[1] is None) for d in j["dims"]]
cut = [d["cut_off"] for d in j["dims"]]
rep.check(nulls[0] >= 1 and cut[0] == nulls[0] - 1 and cut[1:] == nulls[1:],
          "JSON cut_off %r for null deaths %r" % (cut, nulls))
r = topoml(["--output", "json", "--dim", "1", path])
j = json.loads(r.stdout)
rep.check(j["threshold"] is None and all(d["cut_off"] == 0 for d in j["dims"]),
          "JSON without a threshold: %r" % r.stdout[:200])
r = topoml(["--output", "csv", "--dim", "1", "--threshold", "1", path])
lines = r.stdout.splitlines()
rep.check(lines[0] == "# threshold 1" and lines[1] == "dim,birth,death",
          "CSV head: %r" % lines[:2])
deaths = [ln.split(",")[2] for ln in lines[2:]]
rep.check(deaths.count("inf") == 1 and deaths.count("cut") == sum(cut),
          "CSV: %d inf, %d cut" % (deaths.count("inf"), deaths.count("cut")))
# topoml reads its own CSV back (cut-off bars as alive).
csv_path = os.path.join(tmp, "bars.csv")
with open(csv_path, "w") as fh:
    fh.write(r.stdout)
r = ct.run([a.topoml, "features", "--help"], check=False)
if r.returncode == 0:
    r = ct.run([a.topoml, "compare", csv_path, csv_path], check=False)
    rep.check(r.returncode == 0, "compare cannot read the CSV: %r" % r.stderr[:200])

for f in os.listdir(tmp):
    os.unlink(os.path.join(tmp, f))
os.rmdir(tmp)
rep.finish()
