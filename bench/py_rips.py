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


def main():
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
