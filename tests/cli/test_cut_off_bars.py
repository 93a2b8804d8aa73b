"""Bars cut off by the threshold of `topoml barcode` (alive at it, their
death unknown) are told apart from essential classes by `topoml plot` and
`topoml compare`, from the JSON and the CSV that `barcode` writes:

- plot: a cut-off bar ends on a dashed line at the threshold, labelled with
  its value (a diagram: an open marker on that line); essential bars still
  end at +inf; without a threshold there is no such line;
- plot --dim K for a dimension the file does not have is an error naming
  the file, with a non-zero status;
- compare: cut-off bars are matched with cut-off bars, essential with
  essential; a cut-off bar against an essential one gives inf and a note."""
import json
import math
import os
import re
import sys
import tempfile
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(__file__))
import clitest as ct

a = ct.args()
rep = ct.Report()
tmp = tempfile.mkdtemp()
NS = "{http://www.w3.org/2000/svg}"
data = os.path.join(a.data, "random16.lower_distance_matrix")


def write(name, text):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def barcode(fmt, threshold, dim=1, src=data, extra=()):
    args = [a.topoml, "barcode", "--output", fmt, "--dim", str(dim)] + list(extra)
    if threshold is not None:
        args += ["--threshold", repr(threshold)]
    return ct.run(args + [src]).stdout


def svg(args):
    r = ct.run([a.topoml, "plot"] + args)
    return ET.fromstring(r.stdout)


def lines(root, cls=None, dashed=None):
    out = []
    for ln in root.iter(NS + "line"):
        if cls is not None and ln.get("class") != cls:
            continue
        if dashed is not None and ln.get("stroke-dasharray") != dashed:
            continue
        out.append(ln)
    return out


def texts(root):
    return " ".join("".join(t.itertext()) for t in root.iter(NS + "text"))


# A random point cloud (sparse under a threshold) and a distance matrix
# (dense: all H0 classes but one cut), thresholds from below the first
# merge to beyond the largest distance.
rng = ct.random.Random(17)
cloud = ct.write_cloud(ct.random_cloud(rng, 30, 2))
for src, fmt_args in ((data, []), (cloud, ["--format", "point-cloud"])):
    for threshold in (0.05, 0.3, 1.0, 3.0, 9.0, None):
        j = json.loads(barcode("json", threshold, src=src, extra=fmt_args))
        n_cut = sum(d["cut_off"] for d in j["dims"])
        n_null = sum(1 for d in j["dims"] for iv in d["intervals"] if iv[1] is None)
        jpath = write("b.json", json.dumps(j))
        cpath = write("b.csv", barcode("csv", threshold, src=src, extra=fmt_args))
        what = "%s t=%s" % (os.path.basename(src), threshold)
        for path in (jpath, cpath):
            kind = os.path.splitext(path)[1]
            # Barcode: cut-off bars end at the threshold line, the rest of
            # the infinite ones at the +inf line.
            root = svg(["--kind", "barcode", path])
            thr = lines(root, cls="threshold")
            cut = lines(root, cls="cut")
            rep.check(len(cut) == n_cut, "%s %s: %d cut-off bars drawn, %d in the file"
                      % (what, kind, len(cut), n_cut))
            rep.check(len(thr) == (1 if n_cut else 0),
                      "%s %s: a threshold line only where bars are cut off" % (what, kind))
            if n_cut:
                x = float(thr[0].get("x1"))
                rep.check(all(abs(float(c.get("x2")) - x) < 0.01 for c in cut),
                          "%s %s: cut-off bars end at the threshold line" % (what, kind))
                label = "threshold %g" % threshold
                rep.check(label in texts(root), "%s %s: the line is labelled %r: %r"
                          % (what, kind, label, texts(root)[:200]))
            inf = lines(root, dashed="5,3")
            if n_null > n_cut:
                xi = float(inf[0].get("x1"))
                ends = [float(ln.get("x2")) for ln in root.iter(NS + "line")
                        if ln.get("class") is None and ln.get("stroke") is None and
                        ln.get("x2") and abs(float(ln.get("x2")) - xi) < 0.01]
                rep.check(len(inf) == 1 and len(ends) == n_null - n_cut,
                          "%s %s: %d essential bars end at +inf (%d)" %
                          (what, kind, n_null - n_cut, len(ends)))
            else:
                rep.check(not inf, "%s %s: no +inf line without essential bars" % (what, kind))
            # Diagram: open markers on the threshold line.
            root = svg([path])
            circles = [c for c in root.iter(NS + "circle") if c.get("class") == "cut"]
            rep.check(len(circles) == n_cut, "%s %s diagram: %d cut-off markers, want %d"
                      % (what, kind, len(circles), n_cut))
            if n_cut:
                y = float(lines(root, cls="threshold")[0].get("y1"))
                rep.check(all(abs(float(c.get("cy")) - y) < 0.01 for c in circles),
                          "%s %s diagram: cut-off markers on the threshold line" % (what, kind))

# ---- plot --dim K: a dimension the file does not have -----------------------

path = write("two.json", barcode("json", 2.0, dim=1))
for dims in ("2", "5", "0,3", "1023"):
    r = ct.run([a.topoml, "plot", "--dim", dims, path], check=False)
    rep.check(r.returncode == 1 and re.match(r"topoml plot: .*two\.json: no dimension \d+ ",
                                              r.stderr) and not r.stdout,
              "plot --dim %s of a file with dims 0..1: %d %r" % (dims, r.returncode, r.stderr))
for dims in ("0", "1", "0,1"):
    r = ct.run([a.topoml, "plot", "--dim", dims, path], check=False)
    rep.check(r.returncode == 0 and r.stdout.startswith("<?xml"), "plot --dim %s is drawn" % dims)
empty = write("empty.csv", "dim,birth,death\n")
r = ct.run([a.topoml, "plot", "--dim", "0", empty], check=False)
rep.check(r.returncode == 1 and "no dimension 0" in r.stderr and "(it has none)" in r.stderr,
          "plot --dim 0 of an empty diagram: %r" % r.stderr)

# ---- compare ----------------------------------------------------------------

# Two thresholds of the same data: cut-off bars are matched with cut-off
# bars by birth, so the same data at the same threshold is at distance 0
# in every format, and different thresholds are finite apart.
j1 = write("t1.json", barcode("json", 1.0))
c1 = write("t1.csv", barcode("csv", 1.0))
for x, y in ((j1, c1), (c1, j1), (j1, j1)):
    got = json.loads(ct.run([a.topoml, "compare", "-O", "json", x, y]).stdout)
    rep.check(all(d["bottleneck"] == 0 and d["wasserstein"] == 0 and "note" not in d
                  for d in got["dims"]), "the same cut-off barcode is at 0: %r" % got)
    d0 = got["dims"][0]
    rep.check(d0["cut_off"][0] == d0["cut_off"][1] > 0 and d0["essential"] == [1, 1],
              "counts of cut-off and essential bars: %r" % d0)

# The same bars with the cut-off ones turned essential ("cut" -> "inf", the
# threshold comment removed): the counts of infinite deaths agree, the kinds
# do not. Without telling them apart the distance would be 0.
text = open(c1).read()
ess = write("ess.csv", "\n".join(ln.replace(",cut", ",inf") for ln in text.splitlines()
                                 if not ln.startswith("#")) + "\n")
got = json.loads(ct.run([a.topoml, "compare", "-O", "json", c1, ess]).stdout)["dims"][0]
rep.check(got["bottleneck"] is None and got["wasserstein"] is None and "note" in got and
          "cut off" in got["note"], "cut-off against essential: inf and a note: %r" % got)
r = ct.run([a.topoml, "compare", c1, ess])
rep.check(re.search(r"^dim 0: .*cut off.*essential.*inf$", r.stdout, re.M) is not None,
          "the text output says why: %r" % r.stdout)
r = ct.run([a.topoml, "compare", "-O", "csv", c1, ess])
rep.check(r.stdout.splitlines()[1] == "0,inf,inf" and
          re.match(r"topoml compare: dim 0: .*cut off", r.stderr),
          "CSV: inf, the note on stderr: %r %r" % (r.stdout, r.stderr))

# Cut-off against cut-off at another birth: matched, the distance is the
# difference of births (bottleneck) — finite, where a cut-off bar against an
# essential one is inf.
p = write("p.csv", "# threshold 4\ndim,birth,death\n1,0.5,cut\n1,1,2\n")
q = write("q.csv", "# threshold 5\ndim,birth,death\n1,0.75,cut\n1,1,2\n")
e = write("e.csv", "dim,birth,death\n1,0.75,inf\n1,1,2\n")
got = json.loads(ct.run([a.topoml, "compare", "-O", "json", "--dim", "1", p, q]).stdout)["dims"][0]
rep.check(math.isclose(got["bottleneck"], 0.25) and math.isclose(got["wasserstein"], 0.25),
          "cut-off bars matched by birth: %r" % got)
got = json.loads(ct.run([a.topoml, "compare", "-O", "json", "--dim", "1", p, e]).stdout)["dims"][0]
rep.check(got["bottleneck"] is None and "note" in got, "cut-off vs essential: %r" % got)
# A finite part and a cut-off part: the parts combine (max, and the q-th
# root of the sum of q-th powers).
q2 = write("q2.csv", "# threshold 5\ndim,birth,death\n1,0.75,cut\n1,1,2.5\n")
got = json.loads(ct.run([a.topoml, "compare", "-O", "json", "--dim", "1", "--order", "2", p,
                         q2]).stdout)["dims"][0]
rep.check(math.isclose(got["bottleneck"], 0.5) and
          math.isclose(got["wasserstein"], math.sqrt(0.25 ** 2 + 0.5 ** 2)),
          "finite and cut-off parts combined: %r" % got)

for f in os.listdir(tmp):
    os.unlink(os.path.join(tmp, f))
os.rmdir(tmp)
os.unlink(cloud)
rep.finish()
