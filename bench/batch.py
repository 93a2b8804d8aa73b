#!/usr/bin/env python3
"""Many diagrams at once: the serial loop against scikit-learn's n_jobs and
a Dask LocalCluster of 1, 2, ... worker processes (docs/distributed.md).

The workload is seeded: --clouds clouds (default 2000) of --points points
(default 300) uniform in the unit cube of R^--dim (default 8), diagrams in
dimensions 0..--maxdim (default 2), each computed on one thread. In one run,
for each setting, the whole batch is timed --reps times (after an untimed
warm-up batch of --warmup clouds on every worker):

* serial: a Python loop of topoml.barcodes (the baseline);
* n_jobs=N: topoml.sklearn.VietorisRipsPersistence(n_jobs=N).fit_transform
  (joblib's threads; the GIL is released in C);
* dask-wN: topoml.dask.barcodes on a LocalCluster of N worker processes,
  one thread each.

The table gives each setting's median, its speed-up over the serial loop
and the speed-up per worker (the scaling efficiency; target >= 0.8 up to
the core count); "overhead/task" is (dask-w1 - serial) / clouds, the time
Dask and the binding add per cloud, also as a share of one cloud's
diagram (target <= 10%). The Dask settings' diagrams are compared with the
serial loop's. JSON through artifact.py.

    PYTHONPATH=build/python .venv/bin/python bench/batch.py \\
        [--clouds 2000] [--workers 1,2] [--reps 3] [--json bench/results/batch-2core.json]
"""
import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import artifact  # noqa: E402  (the one writer of bench/results/ files)

import numpy as np  # noqa: E402


def workload(clouds, points, dim, seed):
    rng = np.random.default_rng(seed)
    return [rng.random((points, dim)) for _ in range(clouds)]


def same(a, b):
    return len(a) == len(b) and all(
        len(x) == len(y) and all(np.array_equal(p, q) for p, q in zip(x, y))
        for x, y in zip(a, b))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clouds", type=int, default=2000)
    ap.add_argument("--points", type=int, default=300)
    ap.add_argument("--dim", type=int, default=8)
    ap.add_argument("--maxdim", type=int, default=2)
    ap.add_argument("--seed", type=int, default=20261204)
    ap.add_argument("--workers", default=",".join(
        str(w) for w in sorted({1, 2, os.cpu_count() or 1})))
    ap.add_argument("--n-jobs", default="2,-1")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=8)
    ap.add_argument("--json")
    a = ap.parse_args()
    if a.clouds < 1 or a.reps < 1 or not 0 <= a.warmup <= 1000:
        ap.error("--clouds and --reps must be positive, --warmup in 0..1000")
    workers = [int(w) for w in a.workers.split(",") if w]
    jobs = [int(j) for j in a.n_jobs.split(",") if j]
    if any(w < 1 for w in workers):
        ap.error("--workers takes positive counts")

    import topoml
    import topoml.dask
    from topoml.sklearn import VietorisRipsPersistence
    from distributed import Client, LocalCluster
    import dask
    import distributed

    clouds = workload(a.clouds, a.points, a.dim, a.seed)
    warm = clouds[:a.warmup]
    options = dict(maxdim=a.maxdim, n_threads=1)

    def serial():
        return [topoml.barcodes(X, progress=False, **options).diagrams for X in clouds]

    reference = None
    rows, cases = [], []

    def record(name, threads, fn):
        nonlocal reference
        fn_warm = fn(warm) if warm else None  # noqa: F841  (untimed)
        times, out = [], None
        for _ in range(a.reps):
            t0 = time.perf_counter()
            out = fn(None)
            times.append(time.perf_counter() - t0)
        if reference is None:
            reference = out
        elif out is not None and not same(out, reference):
            raise SystemExit("batch: %s gave other diagrams than the serial loop" % name)
        cases.append(artifact.case("batch", name, times, threads=threads))
        rows.append((name, threads, statistics.median(times)))
        print("%-12s %8.2f s" % (name, statistics.median(times)), flush=True)

    record("serial", 1, lambda sub: serial() if sub is None else
           [topoml.barcodes(X, progress=False, **options) for X in sub])
    for j in jobs:
        est = VietorisRipsPersistence(maxdim=a.maxdim, n_jobs=j)
        record("n_jobs=%d" % j, j, lambda sub, est=est: (est.fit_transform(
            clouds if sub is None else sub), None)[1])
    for w in workers:
        with LocalCluster(n_workers=w, threads_per_worker=1, processes=True,
                          dashboard_address=None, silence_logs=40) as cluster, \
                Client(cluster) as client:
            def run(sub, client=client):
                rs = topoml.dask.barcodes(clouds if sub is None else sub, client=client,
                                          **options)
                return [r.diagrams for r in rs] if sub is None else None
            record("dask-w%d" % w, w, run)

    serial_t = rows[0][2]
    one = {r[0]: r[2] for r in rows}
    per_cloud = serial_t / a.clouds
    print()
    print("| setting | workers/jobs | median s | speed-up | per worker |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name, threads, t in rows:
        n = max(1, threads if threads and threads > 0 else (os.cpu_count() or 1))
        print("| %s | %s | %.2f | %.2f | %.2f |" % (name, threads, t, serial_t / t,
                                                    serial_t / t / n))
    overhead = None
    if "dask-w1" in one:
        overhead = (one["dask-w1"] - serial_t) / a.clouds
        print("\noverhead/task: %.2f ms = %.1f%% of one cloud's %.2f ms"
              % (overhead * 1e3, 100 * overhead / per_cloud, per_cloud * 1e3))
    if a.json:
        artifact.save(a.json, {
            "title": "Batches of diagrams: serial loop, n_jobs, Dask LocalCluster",
            "machine": artifact.machine(),
            "versions": {"topoml": topoml.__version__, "dask": dask.__version__,
                         "distributed": distributed.__version__, "numpy": np.__version__},
            "commands": [" ".join([os.path.basename(sys.executable)] + sys.argv)],
            "baseline": "serial",
            "workload": {"clouds": a.clouds, "points": a.points, "dim": a.dim,
                         "maxdim": a.maxdim, "seed": a.seed},
            "per_cloud_s": per_cloud, "overhead_per_task_s": overhead,
            "cases": cases})
    return 0


if __name__ == "__main__":
    sys.exit(main())
