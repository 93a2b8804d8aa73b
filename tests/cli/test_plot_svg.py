"""`topoml plot`: the SVG it writes is well-formed XML with what a figure
needs — one marker or bar per interval, in the dimension's colour, the axis
labels, the legend with counts, the dashed infinity line when there are
infinite deaths, an escaped title — for diagrams and barcodes; and the same
diagram gives the same bytes whatever the order of its pairs (backends and
files list them in different orders; committed pictures are compared with
fresh ones byte for byte)."""
import os
import sys
import tempfile
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(__file__))
import clitest as ct

a = ct.args()
rep = ct.Report()
tmp = tempfile.mkdtemp()
NS = "{http://www.w3.org/2000/svg}"

path = os.path.join(tmp, "d.txt")
with open(path, "w") as f:
    f.write("0 0 inf\n0 0 0.5\n0 0 0.75\n1 0.4 1.1\n1 0.6 0.9\n1 0.7 0.8\n2 1 1.2\n")
counts = {0: 3, 1: 3, 2: 1}


def svg(args):
    r = ct.run([a.topoml, "plot"] + args + [path])
    try:
        return ET.fromstring(r.stdout)
    except ET.ParseError as e:
        rep.check(False, "%s: not XML (%s)" % (args, e))
        return None


def texts(root):
    return " ".join("".join(t.itertext()) for t in root.iter(NS + "text"))


root = svg(["--title", "A & B <1>"])
if root is not None:
    circles = [c for g in root.iter(NS + "g") if g.get("fill-opacity")
               for c in g.iter(NS + "circle")]
    rep.check(len(circles) == 7, "one marker per interval: %d" % len(circles))
    groups = [g for g in root.iter(NS + "g") if g.get("fill-opacity")]
    rep.check(len({g.get("fill") for g in groups}) == 3, "one colour per dimension")
    t = texts(root)
    for want in ("Birth", "Death", "A & B <1>", "(3)", "(1)", "+\u221e"):
        rep.check(want in t, "diagram text has %r" % want)
    dashed = [l for l in root.iter(NS + "line") if l.get("stroke-dasharray")]
    rep.check(len(dashed) == 1, "a dashed infinity line")

root = svg(["--kind", "barcode", "--dim", "1,2"])
if root is not None:
    bars = [l for g in root.iter(NS + "g") if g.get("stroke") and g.get("stroke-width") and
            g.get("stroke") not in ("black", "#e6e6e6") for l in g.iter(NS + "line")]
    rep.check(len(bars) == 4, "one bar per interval of dims 1 and 2: %d" % len(bars))
    t = texts(root)
    rep.check("Filtration value" in t and "H1" in t and "H2" in t and "H0" not in t,
              "barcode labels only the dimensions asked for: %r" % t)
    rep.check(not [l for l in root.iter(NS + "line") if l.get("stroke-dasharray")],
              "no infinity line without infinite bars")

root = svg(["--kind", "barcode", "--size", "800x600"])
if root is not None:
    rep.check(root.get("width") == "800" and root.get("height") == "600", "--size is honoured")

out = os.path.join(tmp, "p.svg")
ct.run([a.topoml, "plot", "--output-file", out, path])
rep.check(ET.parse(out).getroot().tag == NS + "svg", "--output-file writes the SVG")

# A narrow barcode: the infinity mark under the axis stays clear of the
# last tick's label (at 380 wide they ran into each other).
for size in ("300x300", "380x380", "640x400"):
    root = svg(["--kind", "barcode", "--size", size])
    if root is None:
        continue
    ticks, inf_x = [], None
    for t in root.iter(NS + "text"):
        text = "".join(t.itertext())
        if text == "+\u221e":
            inf_x = float(t.get("x"))
        else:
            try:
                float(text)
                ticks.append(float(t.get("x")))
            except ValueError:
                pass
    rep.check(inf_x is not None and ticks and inf_x - max(ticks) >= 24,
              "%s: the infinity mark is %s px from the last tick label" %
              (size, inf_x - max(ticks) if inf_x is not None and ticks else None))

# The same pairs in other orders: the same bytes, for both kinds, the title
# and size too; and the same command twice gives the same bytes.
lines = open(path).read().splitlines(keepends=True)
orders = {"reversed": lines[::-1], "interleaved": lines[1::2] + lines[0::2]}
for kind in ("diagram", "barcode"):
    opts = ["--kind", kind, "--title", "t", "--size", "300x300"]
    first = ct.run([a.topoml, "plot"] + opts + [path]).stdout
    rep.check(first == ct.run([a.topoml, "plot"] + opts + [path]).stdout,
              "%s: the same command twice, the same bytes" % kind)
    for name, order in orders.items():
        other = os.path.join(tmp, "%s.txt" % name)
        with open(other, "w") as f:
            f.write("".join(order))
        rep.check(ct.run([a.topoml, "plot"] + opts + [other]).stdout == first,
                  "%s: pairs %s, the same bytes" % (kind, name))

r = ct.run([a.topoml, "plot", "--kind", "pie", path], check=False)
rep.check(r.returncode == 2, "bad --kind is a usage error")
r = ct.run([a.topoml, "plot", "--size", "10x10", path], check=False)
rep.check(r.returncode == 2, "tiny --size is a usage error")
rep.finish()
