"""`topoml barcode --collapse auto|on|off`, run for real: on Ripser's
examples and on seeded random clouds, circles and grids (ties), with and
without thresholds, the three settings print exactly the same text; a bad
value is a usage error (exit 2) that names the option."""
import os
import random
import sys

sys.path.insert(0, os.path.dirname(__file__))
import clitest as ct

a = ct.args()
rep = ct.Report()
D = a.data


def outputs(args):
    got = {}
    for c in ("off", "on", "auto"):
        r = ct.run([a.topoml, "barcode", "--collapse", c] + args)
        got[c] = r.stdout
    return got


def same(what, args):
    got = outputs(args)
    rep.check(got["on"] == got["off"] and got["auto"] == got["off"],
              "%s: --collapse on/auto print other bars than off" % what)


# Ripser's examples, in the dimensions the expected outputs use.
for name, args in [
        ("projective_plane.lower_distance_matrix", ["--format", "lower-distance", "--dim", "2"]),
        ("random16.lower_distance_matrix", ["--format", "lower-distance", "--dim", "4"]),
        ("random20.lower_distance_matrix", ["--format", "lower-distance", "--dim", "2",
                                            "--modulus", "3"]),
        ("sphere_3_192.lower_distance_matrix", ["--format", "lower-distance", "--dim", "2",
                                                "--threshold", "1.3"]),
        ("o3_1024.txt", ["--format", "point-cloud", "--dim", "3", "--threshold", "1.8"])]:
    same(name, args + [os.path.join(D, name)])

# Random inputs: uniform clouds, noisy circles (the collapse removes most
# edges there) and grids (many equal distances), some points repeated.
rng = random.Random(19)
files = []
for k in range(12):
    kind = ("uniform", "circle", "grid")[k % 3]
    n = rng.randint(20, 90)
    dim = 2 if kind == "circle" else rng.randint(2, 4)
    pts = ct.random_cloud(rng, n, dim, kind)
    pts += [list(pts[rng.randrange(n)]) for _ in range(3)]
    path = ct.write_cloud(pts)
    files.append(path)
    thr = [] if k % 2 else ["--threshold", "%.3f" % rng.uniform(0.3, 1.5)]
    same("%s cloud %d" % (kind, k),
         ["--format", "point-cloud", "--dim", "2"] + thr + [path])

r = ct.run([a.topoml, "barcode", "--collapse", "sometimes",
            os.path.join(D, "random16.lower_distance_matrix")], check=False)
rep.check(r.returncode == 2 and "--collapse" in r.stderr,
          "--collapse sometimes: exit %d, stderr %r" % (r.returncode, r.stderr))

for f in files:
    os.unlink(f)
rep.finish()
