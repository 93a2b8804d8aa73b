"""`topoml plot` at the edges of double: values near the largest and the
smallest (subnormal) doubles, and ranges narrower than the values' precision
(1e15 and the next double). Each plot, diagram and barcode, ends within a few
seconds with well-formed SVG whose every coordinate is a finite number inside
the picture, one marker or bar per interval."""
import math
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(__file__))
import clitest as ct

a = ct.args()
rep = ct.Report()
tmp = tempfile.mkdtemp()
NS = "{http://www.w3.org/2000/svg}"
COORDS = ("x", "y", "x1", "y1", "x2", "y2", "cx", "cy", "width", "height")


def cases():
    """(name, [(dim, birth, death)]) over magnitudes from subnormal to near
    DBL_MAX, each alone, with its next double, and with its negative."""
    for e in (-323, -310, -300, -200, -15, 0, 15, 100, 200, 300, 307, 308):
        v = 10.0 ** e if e > -308 else float("1e%d" % e)
        big = min(v * 1.7, 1.7976931348623157e308)
        yield "one %g" % v, [(1, v, big)]
        yield "next %g" % v, [(1, v, math.nextafter(v, math.inf))]
        yield "zero to %g" % v, [(1, 0.0, v), (0, 0.0, math.inf)]
        yield "minus %g" % v, [(0, -v, v), (1, -v, math.inf)]
    yield "full range", [(0, -1.7976931348623157e308, 1.7976931348623157e308),
                         (1, 5e-324, 1e308), (1, 0.0, math.inf)]


def check_svg(name, kind, text, n_pairs):
    try:
        root = ET.fromstring(text)
    except ET.ParseError as e:
        rep.check(False, "%s %s: not XML (%s)" % (name, kind, e))
        return
    w, h = float(root.get("width")), float(root.get("height"))
    bad = []
    for el in root.iter():
        for k in COORDS:
            v = el.get(k)
            if v is None or v.endswith("%"):
                continue
            x = float(v)
            if not math.isfinite(x) or x < -1 or x > max(w, h) + 1:
                bad.append("%s=%s" % (k, v))
        pts = el.get("points")
        if pts:
            for x in re.split("[ ,]+", pts.strip()):
                if not math.isfinite(float(x)):
                    bad.append("points=" + pts)
    rep.check(not bad, "%s %s: coordinates outside the picture: %s" % (name, kind, bad[:4]))
    rep.check(not re.search(r"\b(nan|inf)\b", text.replace("&#8734;", "")),
              "%s %s: 'nan' or 'inf' in the SVG" % (name, kind))
    if kind == "diagram":
        marks = [c for g in root.iter(NS + "g") if g.get("fill-opacity")
                 for c in g.iter(NS + "circle")]
    else:
        marks = [l for g in root.iter(NS + "g") if g.get("stroke") and g.get("stroke-width")
                 and g.get("stroke") not in ("black", "#e6e6e6") for l in g.iter(NS + "line")]
    rep.check(len(marks) == n_pairs, "%s %s: %d marks for %d intervals" %
              (name, kind, len(marks), n_pairs))


for name, pairs in cases():
    path = os.path.join(tmp, "d.txt")
    with open(path, "w") as f:
        for d, b, e in pairs:
            f.write("%d %r %s\n" % (d, b, "inf" if math.isinf(e) else repr(e)))
    for kind in ("diagram", "barcode"):
        try:
            r = ct.run([a.topoml, "plot", "--kind", kind, path], check=False, timeout=10)
        except subprocess.TimeoutExpired:
            rep.check(False, "%s %s: plot did not finish in 10 s" % (name, kind))
            continue
        rep.check(r.returncode == 0, "%s %s: exit %d: %s" % (name, kind, r.returncode, r.stderr))
        if r.returncode == 0:
            check_svg(name, kind, r.stdout, len(pairs))

# Tick labels of values beyond everyday magnitudes still name the values.
path = os.path.join(tmp, "big.txt")
with open(path, "w") as f:
    f.write("1 0 1e308\n")
r = ct.run([a.topoml, "plot", path])
labels = re.findall(r">([-+0-9.e]+)</text>", r.stdout)
rep.check(any(re.fullmatch(r"1e\+308", x) for x in labels), "a tick labelled 1e+308: %s" % labels)

rep.finish()
