#!/usr/bin/env python3
"""One Rips computation with a Python library, for bench_rips.py: giotto-ph
(`gph.ripser_parallel`) or ripser.py (`ripser.ripser`). Reads the input the
way topoml does (a point cloud, one point per line; Ripser's lower-distance
matrix; or a full distance matrix), computes, prints the bars in Ripser's
text format on stdout and, on stderr, `seconds S` and `cpu C`: the wall and CPU time (all
threads) from before reading the file to after the computation (the
interpreter's start and imports are left out).

    py_rips.py {gph|ripserpy} FILE {point-cloud|lower-distance|distance} DIM
               [--threshold T] [--threads N] [--collapse on|off]
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
    ap.add_argument("lib", choices=["gph", "ripserpy"])
    ap.add_argument("file")
    ap.add_argument("format", choices=["point-cloud", "lower-distance", "distance"])
    ap.add_argument("dim", type=int)
    ap.add_argument("--threshold", type=float, default=math.inf)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--collapse", choices=["on", "off"], default="off")
    a = ap.parse_args()
    if a.lib == "gph":
        import gph
    else:
        import ripser
    start, cpu_start = time.perf_counter(), time.process_time()
    x, precomputed = read(a.file, a.format)
    if a.lib == "gph":
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
