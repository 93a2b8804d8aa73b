"""The asm-avx512 plugin through the real loader and CLI. `topoml backends`
lists it with a probe verdict. Where the probe says yes, `distance` and
`edges` with --backend asm-avx512 (under `gate: off`: a test has no
certificate) agree with the scalar reference within the plugin's stated
bound, |d - ref| <= 2*dim*eps*ref, and edges are exactly the pairs of its
own distances within the threshold, in (d, i, j) order. Where it says no,
asking for it by name fails with exit 1 and the probe's reason."""
import os
import random
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import clitest as ct

EPS = {"f32": 2.0 ** -23, "f64": 2.0 ** -52}

a = ct.args()
rep = ct.Report()
plugin = os.path.join(a.build, "plugins-out", "topoml-backend-asm-avx512.so")
if not os.path.exists(plugin):
    print("asm-avx512 is not built here (not x86-64): nothing to test")
    rep.finish()

listing = ct.run([a.topoml, "backends"]).stdout
block = listing[listing.find("\nasm-avx512\n"):]
m = re.search(r"probe:\s+(ok|not supported): ([^\n]*)", block)
rep.check(m is not None, "backends lists asm-avx512 with a probe verdict")
if m is None:
    print(listing)
    rep.finish()
supported = m.group(1) == "ok"

config = tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False)
config.write("gate: off\n")
config.close()


def values(text):
    return [float(v) for line in text.splitlines() for v in line.split(",") if v]


rng = random.Random(11)
for n, dim in [(2, 1), (50, 3), (97, 17), (130, 64)]:
    path = ct.write_cloud(ct.random_cloud(rng, n, dim))
    for metric in ("euclidean", "sqeuclidean"):
        for dtype in ("f32", "f64"):
            cmd = [a.topoml, "distance", "--config", config.name, "--metric", metric,
                   "--dtype", dtype]
            r = ct.run(cmd + ["--backend", "asm-avx512", path], check=False)
            what = "n=%d dim=%d %s %s" % (n, dim, metric, dtype)
            if not supported:
                rep.check(r.returncode == 1 and m.group(2) in r.stderr,
                          "refused with the probe's reason: " + what)
                continue
            rep.check(r.returncode == 0, "asm-avx512 distance runs: " + what)
            ref = values(ct.run(cmd + ["--backend", "scalar", path]).stdout)
            got = values(r.stdout)
            bound = 2 * dim * EPS[dtype]
            rep.check(len(got) == len(ref) == n * (n - 1) // 2 and all(
                abs(g - w) <= bound * w for g, w in zip(got, ref)), "within 2*dim*eps: " + what)
        if not supported:
            continue
        # edges (f64 in the CLI) are the pairs of the plugin's own distances
        cmd = [a.topoml, "distance", "--config", config.name, "--metric", metric,
               "--backend", "asm-avx512", path]
        dist = values(ct.run(cmd).stdout)
        threshold = sorted(dist)[len(dist) // 3]
        r = ct.run([a.topoml, "edges", "--config", config.name, "--metric", metric,
                    "--format", "point-cloud", "--backend", "asm-avx512", "--threshold",
                    repr(threshold), path])
        got = [(float(d), int(i), int(j)) for i, j, d in
               (line.split() for line in r.stdout.splitlines())]
        want = sorted((d, j, i) for i in range(1, n) for j in range(i)
                      for d in [dist[i * (i - 1) // 2 + j]] if d <= threshold)
        rep.check(got == want, "edges are the distances <= threshold, sorted: n=%d dim=%d %s"
                  % (n, dim, metric))
    os.unlink(path)
os.unlink(config.name)
rep.finish()
