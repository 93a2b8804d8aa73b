"""topoml-backend-threads through the real CLI: `topoml barcode --backend
threads --threads N` prints exactly what the scalar reference prints, for
N = 1, 2 and more than the machine has (then capped: the log says how many
ran), on Ripser's examples and seeded random clouds, with the collapse on and
off; the thread count comes from --threads, else the configuration's
`threads:`, else every CPU available; bad counts are refused."""
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

for path, opts in inputs:
    for collapse in ("off", "on"):
        ref, _ = barcode(opts + ["--collapse", collapse], path)
        for n in (1, 2, ncpu + 3):
            out, log = barcode(opts + ["--collapse", collapse, "--threads", str(n)], path,
                               "threads")
            what = "%s --collapse %s --threads %d" % (os.path.basename(path), collapse, n)
            rep.check(out == ref, what + ": other bars than scalar")
            rep.check(ran_threads(log) == (min(n, ncpu), n, ncpu),
                      what + ": log says %s" % (ran_threads(log),))

# No --threads: the configuration's threads:, else every CPU available.
path, opts = inputs[0]
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
rep.check("columns=threads" in r.stdout and "reduction=serial" in r.stdout,
          "topoml backends does not show the threads schedule")

for p in tmp:
    os.unlink(p)
rep.finish()
