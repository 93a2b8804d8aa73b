#!/usr/bin/env python3
"""What the Python binding costs, and how topoml.ripser compares with the
Python packages people use today, on Ripser's benchmark inputs.

For each case, in one run, alternating the order of the contenders:

* topoml.ripser in-process (numpy array in, result dict out), and the C
  computation inside it: result.timings["c"], every C call the result
  needs (the data set made from the array, the barcode, and the edge count
  that ripser.py's num_edges asks for), on the same backend with the same
  verification; result.timings["compute"], the barcode alone, is kept in
  the JSON too;
* the `topoml barcode` program on the same file (process start, parsing and
  printing included);
* ripser.py's ripser (single-threaded) and giotto-ph's ripser_parallel
  in-process, giotto-ph at topoml's thread count (topoml.ripser uses every
  core this process may run on; --threads sets both).

The table gives medians; "binding" is the median over the runs of
topoml.ripser's time over its own C computation's, minus one (target: at
most 5%): each run is compared with itself, so the load of a shared machine
moves both alike. Each contender runs after the others, so its code and
data have mostly left the caches (on the shared test machine a plain
Python function call took 16 us after 20 ms away, 0.4 us right after
another): on the smallest inputs that is most of what the binding costs.
"b2b" is the same ratio for a second topoml.ripser call right after the
first, as in a loop over many small inputs (cases under 0.2 s). The
diagrams of all four are compared (tests/cli/clitest.py's comparison). Results, with the load average before
and after, also go to JSON.

    PYTHONPATH=build/python .venv/bin/python bench/python_overhead.py \\
        --topoml build/tools/topoml [--reps 5] [--json bench/results/python_overhead.json]
"""
import argparse
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "cli"))
sys.path.insert(0, HERE)
import artifact  # noqa: E402  (the one writer of bench/results/ files)
import clitest  # noqa: E402  (the one comparison of diagrams)
from bench_rips import CASES, default_data, generate  # noqa: E402  (the benchmark set)

import numpy as np  # noqa: E402


def load(path, fmt):
    """The case's input as ripser.py and giotto-ph take it: a point cloud,
    or the square matrix of a lower-distance file."""
    if fmt == "point-cloud":
        return np.loadtxt(path), False
    with open(path) as f:
        v = np.array(f.read().replace(",", " ").split(), dtype=np.float64)
    n = int(round((1 + math.sqrt(1 + 8 * len(v))) / 2))
    D = np.zeros((n, n))
    i, j = np.tril_indices(n, -1)
    D[i, j] = v
    D[j, i] = v
    return D, True


def options(fmt, dim, thr):
    """The `topoml barcode` options of a case of bench_rips.CASES."""
    return ["--format", fmt, "--dim", str(dim)] + \
        (["--threshold", repr(thr)] if thr is not None else [])


def as_lists(dgms):
    return {k: [tuple(map(float, p)) for p in np.asarray(d).reshape(-1, 2)]
            for k, d in enumerate(dgms)}


def import_times(tries=7):
    """Seconds to import numpy, then topoml, in fresh interpreters (best
    of `tries`): what `import topoml` adds to numpy's own import."""
    code = ("import time; t = time.perf_counter(); import numpy; u = time.perf_counter(); "
            "import topoml; print(u - t, time.perf_counter() - u)")
    best = [math.inf, math.inf]
    for _ in range(tries):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             check=True).stdout.split()
        best = [min(b, float(x)) for b, x in zip(best, out)]
    return {"numpy_s": best[0], "topoml_beyond_numpy_s": best[1]}


def runs_of_one(contenders, runs):
    """Run each contender once (kept as a timed run); their times."""
    for f in contenders:
        f()
    return [v[-1] for k, v in runs.items() if k not in ("compute", "c")]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--topoml", required=True, help="the topoml CLI")
    ap.add_argument("--data", default=default_data(), help="Ripser's examples folder")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--only", action="append", help="run only these cases")
    ap.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)),
                    help="threads for topoml and giotto-ph (default: every core available)")
    ap.add_argument("--json", default=os.path.join(HERE, "results",
                                                   "python_overhead.json"))
    a = ap.parse_args()

    import topoml
    from gph import ripser_parallel
    if a.threads != len(os.sched_getaffinity(0)):
        os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:a.threads])
    from ripser import ripser as ripser_py

    # the shipped inputs of the benchmark set (not its generated clouds)
    cases = [c for c in CASES if not c[1].startswith("gen:") and (not a.only or c[0] in a.only)]
    loadavg = {"before": os.getloadavg()}
    hdr = "%-16s %9s %9s %7s %7s %9s %9s %9s %7s %7s  %s" % (
        "case", "C s", "ripser s", "binding", "b2b", "CLI s", "ripser.py", "giotto-ph",
        "vs r.py", "vs gph", "diagrams")
    print(hdr)
    print("-" * len(hdr))
    results = []
    gen = tempfile.mkdtemp(prefix="python_overhead_")
    for name, fname, fmt, dim, thr in cases:
        path = generate(fname, gen) if fname.startswith("gen:") else os.path.join(a.data, fname)
        opts = options(fmt, dim, thr)
        thr = math.inf if thr is None else thr
        X, dm = load(path, fmt)
        kw = dict(maxdim=dim, thresh=math.inf if thr is None else thr)
        runs = {k: [] for k in ("compute", "c", "topoml", "cli", "ripser.py", "giotto-ph")}
        dgms = {}
        backend = [None]
        b2b = {"topoml": [], "c": [], "on": False}  # small cases: a second call right after

        def run_topoml():
            t = time.perf_counter()
            r = topoml.ripser(X, distance_matrix=dm, **kw)
            runs["topoml"].append(time.perf_counter() - t)
            backend[0] = r.backend
            runs["compute"].append(r.timings["compute"])
            runs["c"].append(r.timings["c"])
            dgms["topoml"] = r["dgms"]
            if b2b["on"]:
                t = time.perf_counter()
                r = topoml.ripser(X, distance_matrix=dm, **kw)
                b2b["topoml"].append(time.perf_counter() - t)
                b2b["c"].append(r.timings["c"])

        def run_cli():
            t = time.perf_counter()
            p = subprocess.run([a.topoml, "barcode", "--quiet"] + opts + [path],
                               stdout=subprocess.PIPE, check=True)
            runs["cli"].append(time.perf_counter() - t)
            dgms["cli"] = p.stdout.decode()

        def run_ripser_py():
            t = time.perf_counter()
            r = ripser_py(X, distance_matrix=dm, **kw)
            runs["ripser.py"].append(time.perf_counter() - t)
            dgms["ripser.py"] = r["dgms"]

        def run_gph():
            t = time.perf_counter()
            r = ripser_parallel(X, metric="precomputed" if dm else "euclidean",
                                n_threads=a.threads, **kw)
            runs["giotto-ph"].append(time.perf_counter() - t)
            dgms["giotto-ph"] = r["dgms"]

        contenders = [run_topoml, run_cli, run_ripser_py, run_gph]
        for f in contenders:  # warm-up, untimed: imports, the context, caches
            f()
        runs = {k: [] for k in runs}
        # runs of a few milliseconds are mostly noise: take many more of them
        small = max(runs_of_one(contenders, runs)) < 0.2
        reps = max(a.reps, 41) if small else a.reps
        b2b["on"] = small
        for rep in range(1, reps):  # the first run was the one above
            order = contenders[rep % 4:] + contenders[:rep % 4]
            for f in order:
                f()
        ref = as_lists(dgms["topoml"])
        cli, _ = clitest.parse_ripser(dgms["cli"])
        same = all(sorted(o) == sorted(ref) and all(clitest.same_diagram(ref[k], o[k]) for k in ref)
                   for o in (cli, as_lists(dgms["ripser.py"]), as_lists(dgms["giotto-ph"])))
        med = {k: statistics.median(v) for k, v in runs.items()}
        binding = statistics.median(t / c for t, c in zip(runs["topoml"], runs["c"])) - 1
        warm = statistics.median(t / c for t, c in zip(b2b["topoml"], b2b["c"])) - 1 \
            if small else None
        print("%-16s %9.4g %9.4g %6.1f%% %7s %9.4g %9.4g %9.4g %7.2f %7.2f  %s" % (
            name, med["c"], med["topoml"], 100 * binding,
            "-" if warm is None else "%.1f%%" % (100 * warm), med["cli"], med["ripser.py"],
            med["giotto-ph"], med["topoml"] / med["ripser.py"], med["topoml"] / med["giotto-ph"],
            ("same" if same else "DIFFER") + " (%s)" % backend[0]))
        sys.stdout.flush()
        results.append({"case": name, "input": fname, "options": opts, "reps": reps,
                        "median_s": med, "runs_s": runs, "binding_overhead": binding,
                        "num_edges_s": med["c"] - med["compute"],
                        "back_to_back": None if warm is None else {
                            "binding_overhead": warm, "runs_s": b2b["topoml"],
                            "c_s": b2b["c"]},
                        "ratio_vs_ripser_py": med["topoml"] / med["ripser.py"],
                        "ratio_vs_giotto_ph": med["topoml"] / med["giotto-ph"],
                        "same_diagrams": same, "topoml_backend": backend[0]})
    loadavg["after"] = os.getloadavg()
    print("load average (1, 5, 15 min): %s before, %s after" % tuple(
        "/".join("%.1f" % x for x in loadavg[k]) for k in ("before", "after")))
    imports = import_times()
    print("import topoml in a fresh interpreter: %.1f ms beyond numpy's %.1f ms (best of 7)"
          % (1e3 * imports["topoml_beyond_numpy_s"], 1e3 * imports["numpy_s"]))
    import gph
    import ripser as ripser_mod
    versions = {"python": platform.python_version(), "numpy": np.__version__,
                "topoml": topoml.__version__, "ripser.py": ripser_mod.__version__,
                "giotto-ph": getattr(gph, "__version__", "?")}
    artifact.save(a.json, {
        "title": "topoml.ripser in Python against ripser.py and giotto-ph, and the binding's cost",
        "machine": artifact.machine(), "versions": versions,
        "commands": [" ".join(["bench/python_overhead.py"] + sys.argv[1:])],
        "baseline": "ripser.py", "threads": a.threads, "import": imports, "load_average": loadavg,
        "cases": [artifact.case(r["case"], program, r["runs_s"][program],
                                threads=1 if program == "ripser.py" else a.threads,
                                median=r["median_s"][program])
                  for r in results for program in r["runs_s"]],
        "results": [{k: v for k, v in r.items() if k not in ("median_s", "runs_s")}
                    for r in results]})
    print("(medians of %d runs, 41 for cases under 0.2 s; C = the C calls inside topoml.ripser: "
          "data set, barcode, edge count; binding = median of topoml.ripser / C - 1 per run; "
          "b2b = the same for a second call right after the first (cases under 0.2 s); "
          "vs = topoml.ripser / other, lower is better; JSON in %s)" % (a.reps, a.json))


if __name__ == "__main__":
    main()
