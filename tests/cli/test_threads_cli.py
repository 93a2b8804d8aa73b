"""topoml-backend-threads through the real CLI: `topoml barcode --backend
threads --threads N` prints exactly what the scalar reference prints, for
N = 1, 2 and more than the machine has (then capped: the log says how many
ran), on Ripser's examples and seeded random clouds, with the collapse on and
off; an input whose complete complex is small runs on one thread whatever is
asked (the log says so); the thread count comes from --threads, else the configuration's
`threads:`, else every CPU available; bad counts are refused."""
import math
import os
import random
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import clitest as ct

a = ct.args()
rep = ct.Report()
D = a.data
plugin = os.path.join(a.build, "plugins-out", "topoml-backend-threads.so")
if not os.path.exists(plugin):
    raise SystemExit("FAILED: %s not built" % plugin)
ncpu = len(os.sched_getaffinity(0))


def barcode(extra, path, backend="scalar"):
    r = ct.run([a.topoml, "barcode", "--verbose", "--backend", backend] + extra + [path])
    return r.stdout, r.stderr


def ran_threads(log):
    m = re.search(r"threads: (\d+) threads \((\d+) asked, (\d+) available\)", log)
    return (int(m.group(1)), int(m.group(2)), int(m.group(3))) if m else None


def ran_small(log):
    return "an input this small runs on one" in log


def simplices(n, dim):
    """The simplices of dimensions 2 .. dim of the complete complex on n
    vertices: what the threads backend's rule for small inputs counts."""
    return sum(math.comb(n, k + 1) for k in range(2, dim + 1))


inputs = [
    (os.path.join(D, "random16.lower_distance_matrix"), ["--format", "lower-distance",
                                                           "--dim", "4"]),
    (os.path.join(D, "sphere_3_192.lower_distance_matrix"), ["--format", "lower-distance",
                                                               "--dim", "2"]),
    (os.path.join(D, "o3_1024.txt"), ["--format", "point-cloud", "--dim", "3",
                                      "--threshold", "1.6"]),
]
rng = random.Random(7)
tmp = []
for k in range(4):
    pts = ct.random_cloud(rng, rng.randint(30, 70), 3, ("uniform", "grid")[k % 2])
    path = ct.write_cloud(pts)
    tmp.append(path)
    inputs.append((path, ["--format", "point-cloud", "--dim", "3"]))


def points(path):
    with open(path) as f:
        return sum(1 for line in f if line.strip())


sizes = [16, 192, 1024] + [points(p) for p in tmp]
for (path, opts), n_points in zip(inputs, sizes):
    small = simplices(n_points, int(opts[opts.index("--dim") + 1])) < 100000
    for collapse in ("off", "on"):
        ref, _ = barcode(opts + ["--collapse", collapse], path)
        for n in (1, 2, ncpu + 3):
            out, log = barcode(opts + ["--collapse", collapse, "--threads", str(n)], path,
                               "threads")
            what = "%s --collapse %s --threads %d" % (os.path.basename(path), collapse, n)
            rep.check(out == ref, what + ": other bars than scalar")
            rep.check(ran_threads(log) == (1 if small else min(n, ncpu), n, ncpu),
                      what + ": log says %s" % (ran_threads(log),))
            rep.check(ran_small(log) == small, what + ": small input %s, log %r" % (small, log))

# A complex too small to share whose point cloud has many pairs (pairs x
# coordinates >= 2^20): the pool computes the distances only, and says so.
pts = ct.random_cloud(rng, 700, 5)
path = ct.write_cloud(pts)
tmp.append(path)
for dim_opts in (["--dim", "1", "--threshold", "0.9"], ["--dim", "0"]):
    opts = ["--format", "point-cloud", "--collapse", "off"] + dim_opts
    ref, _ = barcode(opts, path)
    for n in (1, 2):
        out, log = barcode(opts + ["--threads", str(n)], path, "threads")
        what = "700 points in R^5 %s --threads %d" % (" ".join(dim_opts), n)
        rep.check(out == ref, what + ": other bars than scalar")
        rep.check(ran_threads(log) == (min(n, ncpu), n, ncpu),
                  what + ": log says %s" % (ran_threads(log),))
        rep.check(("the distances on them" in log) == (min(n, ncpu) > 1),
                  what + ": log %r" % log)

# No --threads: the configuration's threads:, else every CPU available (on
# an input large enough to share).
path, opts = inputs[1]
_, log = barcode(opts, path, "threads")
rep.check(ran_threads(log) == (ncpu, 0, ncpu), "default: log says %s" % (ran_threads(log),))
with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
    f.write("threads: 1\n")
    tmp.append(f.name)
_, log = barcode(["--config", f.name] + opts, path, "threads")
rep.check(ran_threads(log) == (1, 1, ncpu), "threads: 1 in the config: log says %s" %
          (ran_threads(log),))
_, log = barcode(["--config", f.name, "--threads", "2"] + opts, path, "threads")
rep.check(ran_threads(log) == (min(2, ncpu), 2, ncpu),
          "--threads over the config: log says %s" % (ran_threads(log),))

# Bad counts.
for bad in ("0", "-1", "many", "5000"):
    r = ct.run([a.topoml, "barcode", "--threads", bad, path], check=False)
    rep.check(r.returncode == 2 and "--threads" in r.stderr,
              "--threads %s: exit %d, %r" % (bad, r.returncode, r.stderr))
with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
    f.write("gate: auto\nthreads: lots\n")
    tmp.append(f.name)
r = ct.run([a.topoml, "barcode", "--config", f.name, path], check=False)
rep.check(r.returncode != 0 and "threads" in r.stderr and ":2:" in r.stderr,
          "threads: lots: exit %d, %r" % (r.returncode, r.stderr))

# The backend list shows what runs where.
r = ct.run([a.topoml, "backends"])
rep.check("columns=threads" in r.stdout and "reduction=threads" in r.stdout,
          "topoml backends does not show the threads schedule")

for p in tmp:
    os.unlink(p)
rep.finish()
