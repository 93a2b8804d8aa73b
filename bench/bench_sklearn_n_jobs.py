#!/usr/bin/env python3
"""VietorisRipsPersistence.transform with n_jobs=None, 2 and -1 on the same
clouds (default: 8 clouds of 300 uniform points in R^3, maxdim=1): wall
seconds per setting, each k > 1 also as it ran before the CPUs were shared
out (every computation given every CPU: "(all CPUs each)"), the settings taken in turn, --repeat rounds, the order
reversed every other round; each setting's median, and its speed-up over
n_jobs=None measured in the same run. Prints a table and writes a
bench/results artifact (bench/artifact.py).

Run against a build tree's package (PYTHONPATH=build/python):

  PYTHONPATH=build/python python3 bench/bench_sklearn_n_jobs.py \
      [--clouds 8] [--points 300] [--repeat 5] [--json bench/results/FILE.json]
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np
from joblib import effective_n_jobs

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import artifact  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--clouds", type=int, default=8)
    ap.add_argument("--points", type=int, default=300)
    ap.add_argument("--maxdim", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json", default=None)
    a = ap.parse_args()

    import sklearn
    import topoml
    from topoml import sklearn as tsk
    from topoml.sklearn import VietorisRipsPersistence
    shared = tsk._cpus

    rng = np.random.default_rng(0)
    X = rng.random((a.clouds, a.points, 3))
    # (n_jobs, CPUs shared out): the second False gives each computation
    # every CPU (n_threads larger than the CPUs is clamped to them)
    settings = [(None, True), (2, True), (-1, True), (2, False), (-1, False)]
    times = {s: [] for s in settings}
    ref = VietorisRipsPersistence(maxdim=a.maxdim).fit_transform(X)  # warm-up, and the answer
    for r in range(a.repeat):
        for s in (settings if r % 2 == 0 else settings[::-1]):
            tsk._cpus = shared if s[1] else (lambda: 1 << 20)
            est = VietorisRipsPersistence(maxdim=a.maxdim, n_jobs=s[0]).fit(X)
            t = time.perf_counter()
            out = est.transform(X)
            times[s].append(time.perf_counter() - t)
            np.testing.assert_array_equal(out, ref)
    tsk._cpus = shared
    base = statistics.median(times[(None, True)])
    print("%-28s %10s %8s" % ("n_jobs", "median s", "speed-up"))
    cases = []
    for s in settings:
        m = statistics.median(times[s])
        name = "n_jobs=%s%s" % (s[0], "" if s[1] else " (all CPUs each)")
        print("%-28s %10.3f %8.2f" % (name, m, base / m))
        jobs = 1 if s[0] is None else effective_n_jobs(s[0])
        cases.append(artifact.case(name, "topoml.sklearn", times[s], threads=jobs, n_jobs=s[0],
                                   speedup_over_none=base / m))
    if a.json:
        artifact.save(a.json, {
            "title": "VietorisRipsPersistence.transform, %d clouds of %d points in R^3, "
                     "maxdim=%d, by n_jobs" % (a.clouds, a.points, a.maxdim),
            "machine": artifact.machine(),
            "versions": {"topoml": topoml.__version__, "scikit-learn": sklearn.__version__,
                         "numpy": np.__version__},
            "commands": ["PYTHONPATH=build/python python3 bench/bench_sklearn_n_jobs.py "
                         + " ".join(sys.argv[1:])],
            "baseline": "n_jobs=None",
            "cases": cases,
        })


if __name__ == "__main__":
    main()
