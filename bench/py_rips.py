#!/usr/bin/env python3
"""One Rips computation with a Python library, for bench_rips.py and
bench_rips_gpu.py: giotto-ph (`gph.ripser_parallel`), ripser.py
(`ripser.ripser`) or topoml's own package in-process (`topoml.barcodes` on
--backend, the way a library user calls it). Reads the input the
way topoml does (a point cloud, one point per line; Ripser's lower-distance
matrix; or a full distance matrix), computes, prints the bars in Ripser's
text format on stdout and, on stderr, `seconds S` and `cpu C`: the wall and CPU time (all
threads) from before reading the file to after the computation (the
interpreter's start and imports are left out).

For topoml the backend's one-time start in the process (loading the plugin,
for cuda starting the device: what a library user pays once per process, as
a giotto-ph user pays its import) is left out too: a call on a 3-point cloud
comes first, and its time is printed as `setup S` on stderr.

    py_rips.py {gph|ripserpy|topoml} FILE {point-cloud|lower-distance|distance} DIM
               [--threshold T] [--threads N] [--collapse on|off|auto]
               [--backend NAME]
    py_rips.py --sweep CASES.json REPS

--sweep (for bench_rips.py --small-clouds) times, in this one process and
interleaved, `topoml.ripser` with its defaults, `topoml.barcodes` with
collapse=False and collapse=True (the same threads: all cores) and giotto-ph's
`ripser_parallel` with its defaults, on each case of the file (a list of
{"name", "shape", "n", "dim", "maxdim", "seed", "threshold", "on_reps"}: clouds
made here from the seed), REPS timed calls each after one untimed (at most
on_reps of collapse=True, which takes minutes on a big H1); prints one
JSON object: per case and program the wall and CPU times of the calls
(seconds, perf_counter and process_time around the call alone: the CPU
time, all threads, is what a machine shared with other work disturbs
least) and whether the diagrams agree.
"""
import argparse
import math
import sys
import time

import numpy as np


def read(path, fmt):
    if fmt == "point-cloud":
        return np.loadtxt(path, delimiter="," if path.endswith(".csv") else None, ndmin=2), False
    if fmt == "distance":  # a full (square) distance matrix
        return np.loadtxt(path, delimiter="," if path.endswith(".csv") else None, ndmin=2), True
    values = []
    with open(path) as f:
        for line in f:
            values.extend(float(x) for x in line.replace(",", " ").split())
    n = int(round((1 + math.sqrt(1 + 8 * len(values))) / 2))
    m = np.zeros((n, n))
    m[np.tril_indices(n, -1)] = values  # Ripser's lower-distance order, row by row
    return m + m.T, True


def cloud(shape, n, dim, seed):
    """A seeded point cloud: "circle" (unit circle, noise 0.01), "uniform"
    (the unit cube of R^dim), "sphere" (unit S^2, noise 0.01), "torus" (the
    torus of radii 1 and 0.4 in R^3), "clusters" (8 Gaussian blobs in R^dim)."""
    rng = np.random.default_rng(seed)
    if shape == "circle":
        t = rng.uniform(0, 2 * np.pi, n)
        return np.c_[np.cos(t), np.sin(t)] + rng.normal(0, 0.01, (n, 2))
    if shape == "uniform":
        return rng.uniform(0, 1, (n, dim))
    if shape == "sphere":
        x = rng.normal(0, 1, (n, 3))
        return x / np.linalg.norm(x, axis=1)[:, None] + rng.normal(0, 0.01, (n, 3))
    if shape == "torus":
        a, b = rng.uniform(0, 2 * np.pi, n), rng.uniform(0, 2 * np.pi, n)
        return np.c_[(1 + 0.4 * np.cos(b)) * np.cos(a), (1 + 0.4 * np.cos(b)) * np.sin(a),
                     0.4 * np.sin(b)]
    if shape == "clusters":
        centres = rng.uniform(0, 10, (8, dim))
        return centres[rng.integers(0, 8, n)] + rng.normal(0, 0.5, (n, dim))
    raise ValueError("unknown shape %r" % shape)


def sweep(path, reps):
    """--sweep: see the module's docstring."""
    import json
    import gph
    import topoml
    with open(path) as f:
        cases = json.load(f)

    def calls(c, x):
        thr = c.get("threshold") or math.inf
        d = c["maxdim"]
        return [
            ("topoml.ripser defaults", lambda: topoml.ripser(x, maxdim=d, thresh=thr)["dgms"]),
            ("topoml collapse=False", lambda: topoml.barcodes(x, maxdim=d, threshold=thr,
                                                              collapse=False).diagrams),
            ("topoml collapse=True", lambda: topoml.barcodes(x, maxdim=d, threshold=thr,
                                                             collapse=True).diagrams),
            ("giotto-ph defaults", lambda: gph.ripser_parallel(x, maxdim=d,
                                                               thresh=thr)["dgms"]),
        ]

    topoml.ripser(np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]))  # the one-time start
    out = []
    for c in cases:
        x = cloud(c["shape"], c["n"], c.get("dim", 2), c.get("seed", 1))
        progs = calls(c, x)
        times = {p: [] for p, _ in progs}
        cpu = {p: [] for p, _ in progs}
        # minutes a call (collapse=True on a big H1): fewer runs, no warm-up
        few = c.get("on_reps", reps) < reps
        # untimed: warm-up, and the diagrams
        dgms = {p: f() for p, f in progs if not (few and p == "topoml collapse=True")}
        for rep in range(reps):
            order = progs[rep % len(progs):] + progs[:rep % len(progs)]
            for p, f in order:
                if p == "topoml collapse=True" and rep >= c.get("on_reps", reps):
                    continue
                t0, c0 = time.perf_counter(), time.process_time()
                d = f()
                times[p].append(time.perf_counter() - t0)
                cpu[p].append(time.process_time() - c0)
                dgms.setdefault(p, d)
        ref = dgms[progs[1][0]]
        same = {p: all(len(a) == len(b) and np.allclose(np.sort(a, axis=0), np.sort(b, axis=0),
                                                          rtol=1e-5, atol=1e-6)
                       for a, b in zip(ref, d)) for p, d in dgms.items()}
        out.append({"case": c, "times": times, "cpu_times": cpu, "same": same})
        print(json.dumps(out[-1]), file=sys.stderr)
    print(json.dumps(out))


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--sweep":
        return sweep(sys.argv[2], int(sys.argv[3]))
    ap = argparse.ArgumentParser()
    ap.add_argument("lib", choices=["gph", "ripserpy", "topoml"])
    ap.add_argument("file")
    ap.add_argument("format", choices=["point-cloud", "lower-distance", "distance"])
    ap.add_argument("dim", type=int)
    ap.add_argument("--threshold", type=float, default=math.inf)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--collapse", choices=["on", "off", "auto"], default="off")
    ap.add_argument("--backend", help="topoml only: the backend (default: topoml's choice)")
    a = ap.parse_args()
    if a.lib == "gph":
        import gph
    elif a.lib == "topoml":
        import topoml
        setup = time.perf_counter()
        if a.backend:
            topoml.select_backend(a.backend)
        topoml.barcodes(np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]), maxdim=1)
        print("setup %.6f" % (time.perf_counter() - setup), file=sys.stderr)
    else:
        import ripser
    start, cpu_start = time.perf_counter(), time.process_time()
    x, precomputed = read(a.file, a.format)
    if a.lib == "topoml":
        res = topoml.barcodes(x, maxdim=a.dim, threshold=a.threshold,
                              metric="precomputed" if precomputed else "euclidean",
                              collapse={"on": True, "off": False}.get(a.collapse, "auto"),
                              n_threads=a.threads)
        print("backend %s" % res.backend, file=sys.stderr)
        dgms = res.diagrams
    elif a.lib == "gph":
        dgms = gph.ripser_parallel(x, maxdim=a.dim, thresh=a.threshold,
                                   metric="precomputed" if precomputed else "euclidean",
                                   collapse_edges=a.collapse == "on",
                                   n_threads=a.threads)["dgms"]
    else:
        dgms = ripser.ripser(x, maxdim=a.dim, thresh=a.threshold,
                             distance_matrix=precomputed)["dgms"]
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    out = []
    for k, d in enumerate(dgms):
        out.append("persistence intervals in dim %d:" % k)
        for b, e in d:
            out.append(" [%g, )" % b if math.isinf(e) else " [%g,%g)" % (b, e))
    print("\n".join(out))
    print("seconds %.6f" % seconds, file=sys.stderr)
    print("cpu %.6f" % cpu, file=sys.stderr)


if __name__ == "__main__":
    main()
