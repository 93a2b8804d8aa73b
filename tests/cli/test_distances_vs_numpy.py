"""`topoml distance` against numpy/scipy for every metric and dtype, on
random clouds: the condensed lower-triangular output in Ripser's order."""
import os
import random
import sys

import numpy as np
from scipy.spatial.distance import pdist, squareform

sys.path.insert(0, os.path.dirname(__file__))
import clitest as ct

a = ct.args()
rep = ct.Report()
rng = random.Random(7)
scipy_name = {"euclidean": "euclidean", "sqeuclidean": "sqeuclidean",
              "manhattan": "cityblock", "chebyshev": "chebyshev", "cosine": "cosine"}
for n, dim in [(2, 1), (17, 3), (64, 16), (33, 100)]:
    pts = np.array(ct.random_cloud(rng, n, dim))
    path = ct.write_cloud(pts.tolist())
    xs = np.loadtxt(path, delimiter=",", ndmin=2)
    for metric, sname in scipy_name.items():
        for dtype in ("f64", "f32"):
            r = ct.run([a.topoml, "distance", "--metric", metric, "--dtype", dtype, path])
            rows = [l for l in r.stdout.splitlines()[1:]]
            got = []
            for l in rows:
                got.extend(float(v) for v in l.split(","))
            src = xs.astype(np.float32).astype(np.float64) if dtype == "f32" else xs
            full = squareform(pdist(src, sname))
            want = [full[i, j] for i in range(1, n) for j in range(i)]
            tol = 1e-12 if dtype == "f64" else 2e-6 * dim
            ok = len(got) == len(want) and all(
                abs(g - w) <= tol * max(1.0, abs(w)) for g, w in zip(got, want))
            rep.check(ok, "n=%d dim=%d %s %s" % (n, dim, metric, dtype))
    os.unlink(path)
rep.finish()
