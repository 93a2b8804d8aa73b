"""Memory bounded by default, through the real CLI: work too large for the
limit is refused with an estimate before any O(n^2) pass (200 000 points,
H1 and H2, under the machine's default limit and under --max-memory); the
CLI's own buffers (the features grid, the images) count against
--max-memory; every subcommand reads --max-memory strictly; binary zeros
where text is expected are refused at once; file names in messages are
escaped like other untrusted bytes."""
import os
import random
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import clitest as ct

a = ct.args()
rep = ct.Report()
tmp = tempfile.mkdtemp()


def run(args, timeout=30, **kw):
    try:
        return ct.run([a.topoml] + args, check=False, timeout=timeout, **kw)
    except subprocess.TimeoutExpired:
        return None


# 200 000 points in the plane: the distance matrix alone is 160 GB. The
# bound is generous (it used to take 60-90 s before refusing, or failing).
cloud = os.path.join(tmp, "cloud.txt")
rnd = random.Random(7)
with open(cloud, "w") as f:
    for _ in range(200000):
        f.write("%.6f %.6f\n" % (rnd.random(), rnd.random()))
for dim in ("1", "2"):
    for extra in ([], ["--max-memory", "1G"]):
        r = run(["barcode", "--format", "point-cloud", "--dim", dim] + extra + [cloud], timeout=20)
        what = "200k points --dim %s %s" % (dim, extra)
        rep.check(r is not None, what + ": not refused within 20 s")
        if r is None:
            continue
        rep.check(r.returncode == 1, what + ": exit %d" % r.returncode)
        rep.check("159999200000" in r.stderr and "memory limit" in r.stderr,
                  what + ": no estimate and limit: %r" % r.stderr)
        source = "set by the caller" if extra else "the default: "
        rep.check(source in r.stderr, what + ": the limit's source missing: %r" % r.stderr)
        rep.check(r.stdout == "", what + ": wrote %r" % r.stdout[:80])
r = run(["distance", cloud], timeout=20)
rep.check(r is not None and r.returncode == 1 and "the default: " in r.stderr,
          "distance of 200k points refused under the default limit: %r" % (r and r.stderr))

# The CLI's own buffers.
diag = os.path.join(tmp, "d.txt")
with open(diag, "w") as f:
    f.write("0 0 1\n1 0.2 0.5\n1 0.3 0.9\n")
for args in (["features", "--grid", "0:2:1000000"], ["features", "--grid", "0:2:5000000", "-k", "20"],
             ["image", "--width", "10000", "--height", "10000"],
             ["image", "--width", "1048576", "--height", "1048576"]):
    r = run(args + ["--max-memory", "10M", diag])
    rep.check(r is not None and r.returncode == 1 and "memory limit" in r.stderr,
              "%s under 10M: %r" % (args, r and (r.returncode, r.stderr)))
    r = run(args[:1] + ["--max-memory", "10M", diag])
    rep.check(r is not None and r.returncode == 0, "%s defaults under 10M: %r" %
              (args[:1], r and r.stderr))

# --max-memory is one grammar for every subcommand.
other = os.path.join(tmp, "e.txt")
with open(other, "w") as f:
    f.write("0 0 2\n")
points = os.path.join(tmp, "p.txt")
with open(points, "w") as f:
    f.write("0 0\n1 0\n0 1\n")
commands = {
    "barcode": ["barcode", "--format", "point-cloud", points],
    "distance": ["distance", points],
    "edges": ["edges", "--threshold", "2", "--format", "point-cloud", points],
    "image": ["image", diag],
    "features": ["features", diag],
    "compare": ["compare", diag, other],
    "plot": ["plot", diag],
}
for name, args in commands.items():
    for bad in ("0.5", "1e-300", "-0", "0.3", "0x10", "1.1K", "inf", "nan", "", "1e3M"):
        r = run(args[:1] + ["--max-memory", bad] + args[1:])
        rep.check(r is not None and r.returncode == 2 and "--max-memory" in r.stderr,
                  "%s --max-memory %r: %r" % (name, bad, r and (r.returncode, r.stderr)))
    for good in ("64M", "1.5G", "unlimited", "0.5M", "10000000"):
        r = run(args[:1] + ["--max-memory", good] + args[1:])
        rep.check(r is not None and r.returncode == 0,
                  "%s --max-memory %s: %r" % (name, good, r and (r.returncode, r.stderr)))

# Binary zeros where text is expected: refused on line 1 at once.
for args in (["barcode", "--format", "point-cloud"], ["barcode"], ["barcode", "--format", "sparse"],
             ["distance"], ["features"], ["plot"], ["image"]):
    r = run(args + ["/dev/zero"], timeout=20)
    # Named formats read lines; the default one (format detection) says so
    # its own way: both on line 1, naming the NUL byte.
    rep.check(r is not None and r.returncode == 1 and "/dev/zero:1: " in r.stderr and
              "NUL byte" in r.stderr,
              "%s /dev/zero: %r" % (args, r and (r.returncode, r.stderr)))

# File names are untrusted bytes: escaped in messages, never written raw.
weird = os.path.join(tmp, "x\x1b[31mred\nline\x7f.txt")
with open(weird, "w") as f:
    f.write("1 2\nnan 3\n")
for args in (["barcode", "--format", "point-cloud", weird], ["barcode", weird + ".missing"],
             ["plot", weird], ["features", weird + ".missing"]):
    r = run(args)
    rep.check(r is not None and r.returncode == 1, "%r: exit %r" % (args, r and r.returncode))
    if r is not None:
        rep.check("\x1b" not in r.stderr and "\x7f" not in r.stderr and
                  "x\\x1b[31mred\\x0aline\\x7f.txt" in r.stderr,
                  "%r: name not escaped: %r" % (args, r.stderr))

rep.finish()
