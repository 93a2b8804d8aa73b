#!/usr/bin/env python3
"""Vietoris-Rips barcodes on the GPU: `topoml barcode --backend cuda` against
the scalar reference backend on the same machine and, when given, the
threads backend and giotto-ph (from PyPI, at the same thread count, with
and without edge collapse), Ripser++ (built from its public source on that
machine) and Ripser.

    bench/bench_rips_gpu.py --topoml build/tools/topoml \
        [--data DIR] [--ripserpp PATH] [--ripser PATH] [--python PY] \
        [--threads N] [--reps 3] [--budget SECONDS] [--json OUT] \
        [--topoml-python PY]

Cases whose input file is not in --data (celegans, Vicsek300: Ripser++'s
public examples) are skipped. giotto-ph's time is the one py_rips.py
reports (file reading and computation, the interpreter's start and imports
left out: in its favour). With --topoml-python (a Python that imports
topoml's package) the cuda and threads backends also run that way, in
process: `topoml.barcodes` timed like giotto-ph, from reading the file to
the diagrams, with the backend's one-time start in the process (the plugin
loaded, CUDA started) left out as giotto-ph's import is; those rows compare
like with like. The peak GPU memory of the cuda plugin and of
Ripser++ (nvidia-smi, sampled every 50 ms, above what was in use before the
run) is in the table and the JSON.

Every program runs on the same file with the same options, alternately;
the table gives median wall times (process start and file reading
included, as a user sees them) and the ratios. The cuda output must be
byte-identical to the scalar one; Ripser++'s and Ripser's bars are compared
by count per dimension (their number formatting differs). One cuda run with
`--verbose --verbose` gives the device's share of each dimension (how many
simplices, how many columns survive clearing and the apparent pairs, time
on the device), which goes into the JSON.

The gate is switched off for the timed runs (a configuration file with
`gate: off`): certification is measured elsewhere (topoml-conformance), and
the outputs are checked here against the scalar backend. Before a case's
timed runs every program but the slow ones (the scalar backend, Ripser and
giotto-ph without collapse, which run once or twice) runs --warmup times
(default 1) untimed, so that a one-time cost on this machine stays out of
the medians: the first call past the sizes run-time verification has
checked is re-run on the reference even with the gate off
(docs/conformance.md; bench/bench_envelope.py measures it).
"""
import argparse
import datetime
import json
import os
import platform
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_rips import clitest, default_data  # noqa: E402  (Ripser's examples, its output)
import artifact  # noqa: E402  (the source tree's commit)


# The slow programs: at most a case's own number of timed runs, and no
# warm-up run.
SLOW = ("scalar", "ripser", "giotto-ph")

# name, file (in --data or generated), options common to all programs,
# repetitions of the slow programs (scalar, Ripser, giotto-ph without collapse) at most
CASES = [
    ("sphere_3_192 dim 2", "sphere_3_192.lower_distance_matrix",
     ["--format", "lower-distance", "--dim", "2"], 3),
    ("sphere_3_192 dim 3", "sphere_3_192.lower_distance_matrix",
     ["--format", "lower-distance", "--dim", "3"], 1),
    ("o3_1024 dim 3 t 1.8", "o3_1024.txt",
     ["--format", "point-cloud", "--dim", "3", "--threshold", "1.8"], 3),
    ("o3_4096 dim 3 t 1.4", "o3_4096.txt",
     ["--format", "point-cloud", "--dim", "3", "--threshold", "1.4"], 1),
    ("random 200 pts R^4 dim 3", "@random:200:4:1",
     ["--format", "point-cloud", "--dim", "3"], 1),
    ("random 1000 pts R^3 dim 2", "@random:1000:3:2",
     ["--format", "point-cloud", "--dim", "2"], 1),
    # Ripser++'s paper set (its repository's examples), when in --data
    ("celegans dim 3", "celegans.distance_matrix", ["--format", "distance", "--dim", "3"], 1),
    ("Vicsek300 dim 3", "Vicsek300_300_of_300.distance_matrix",
     ["--format", "distance", "--dim", "3"], 1),
]


class GpuMemory:
    """Peak GPU memory in use (MiB, all processes, nvidia-smi) while a run
    lasts, above what was in use when it started."""

    def __init__(self):
        import threading
        self.threading = threading
        self.ok = self.sample() is not None

    @staticmethod
    def sample():
        try:
            out = subprocess.run(["nvidia-smi", "--query-gpu=memory.used",
                                  "--format=csv,noheader,nounits"], capture_output=True,
                                 text=True, timeout=5).stdout.split()
            return float(out[0])
        except (OSError, ValueError, IndexError, subprocess.TimeoutExpired):
            return None

    def __enter__(self):
        self.base = self.sample() or 0.0
        self.peak = self.base
        self.stop = self.threading.Event()

        def loop():
            while not self.stop.wait(0.05):
                v = self.sample()
                if v is not None and v > self.peak:
                    self.peak = v
        self.t = self.threading.Thread(target=loop, daemon=True)
        self.t.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.t.join()
        self.used = self.peak - self.base


def materialise(spec, data, tmp):
    if not spec.startswith("@random:"):
        return os.path.join(data, spec)
    _, n, dim, seed = spec.split(":")
    rng = random.Random(int(seed))
    path = os.path.join(tmp, "random_%s_%s_%s.txt" % (n, dim, seed))
    with open(path, "w") as f:
        for _ in range(int(n)):
            f.write(" ".join("%.9f" % rng.random() for _ in range(int(dim))) + "\n")
    return path


def run(cmd, timeout):
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "", "timeout after %ds" % timeout, timeout
    secs = time.perf_counter() - t0
    err = p.stderr.decode(errors="replace")
    # py_rips.py reports its own time (the interpreter's start left out)
    m = re.search(r"^seconds ([0-9.]+)$", err, re.M)
    if m and p.returncode == 0:
        secs = float(m.group(1))
    return p.returncode, p.stdout.decode(errors="replace"), err, secs


def counts(text):
    """Bars per dimension in Ripser-style output (Ripser, Ripser++, topoml)."""
    return {dim: len(bars) for dim, bars in clitest.parse_ripser(text)[0].items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--topoml", required=True)
    ap.add_argument("--data", default=default_data())
    ap.add_argument("--ripserpp")
    ap.add_argument("--ripser")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=1,
                    help="untimed runs of every fast program before a case's timed ones")
    ap.add_argument("--budget", type=float, default=300.0, help="seconds for everything")
    ap.add_argument("--only", help="run only cases whose name contains one of these "
                    "(comma-separated)")
    ap.add_argument("--slow-cap", type=float, default=100.0,
                    help="seconds after which a scalar or Ripser run is stopped (reported as "
                    "'>cap')")
    ap.add_argument("--python", help="a Python with giotto-ph: its rows, at --threads threads, "
                    "collapse on and off")
    ap.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)),
                    help="threads of the threads backend and giotto-ph (default: all CPUs)")
    ap.add_argument("--topoml-python",
                    help="a Python that imports topoml: the cuda and threads backends in process "
                    "too (rows 'cuda in-process', 'threads in-process')")
    ap.add_argument("--json")
    args = ap.parse_args()
    gpu_mem = GpuMemory()
    here = os.path.dirname(os.path.abspath(__file__))
    fmt_of = {"lower-distance": "lower-distance", "distance": "distance",
              "point-cloud": "point-cloud"}
    start = time.time()
    tmp = tempfile.mkdtemp(prefix="topoml-bench-")
    conf = os.path.join(tmp, "topoml.yaml")
    with open(conf, "w") as f:
        f.write("gate: off\n")
    rows = []
    cases = []
    commands = {}
    print("%-26s %9s %9s %9s %9s %9s %9s %9s %9s %9s %8s %8s %8s %8s %8s  %s" % (
        "case", "scalar s", "cuda s", "threads s", "cuda ip s", "thr ip s", "gph s", "gph+col s",
        "ripser++", "ripser s", "cuda/gph", "ip/gph", "rpp/cuda", "cudaMiB", "rppMiB", "check"))
    if args.topoml_python:
        os.environ["TOPOML_CONFIG"] = conf  # the in-process rows: the same gate: off
    for name, spec, opts, scalar_reps in CASES:
        if args.only and not any(w and w in name for w in args.only.split(",")):
            continue
        left = args.budget - (time.time() - start)
        if left < 20:
            print("%-26s skipped: out of time" % name)
            continue
        path = materialise(spec, args.data, tmp)
        if not os.path.exists(path):
            print("%-26s skipped: no %s in %s" % (name, spec, args.data))
            continue
        progs = {
            "scalar": [args.topoml, "barcode", "--config", conf, "--quiet", "--backend", "scalar"]
            + opts + [path],
            "cuda": [args.topoml, "barcode", "--config", conf, "--quiet", "--backend", "cuda"]
            + opts + [path],
        }
        progs["threads"] = [args.topoml, "barcode", "--config", conf, "--quiet", "--backend",
                            "threads", "--threads", str(args.threads)] + opts + [path]
        # py_rips.py's arguments: the file as the CLI reads it, the same
        # dimension, threshold and thread count
        py_args = [path, fmt_of[opts[opts.index("--format") + 1]],
                   opts[opts.index("--dim") + 1], "--threads", str(args.threads)]
        if "--threshold" in opts:
            py_args += ["--threshold", opts[opts.index("--threshold") + 1]]
        if args.python:
            for label, coll in (("giotto-ph", "off"), ("giotto-ph collapse", "on")):
                progs[label] = [args.python, os.path.join(here, "py_rips.py"), "gph"] + py_args + [
                    "--collapse", coll]
        if args.topoml_python:
            for label, be in (("cuda in-process", "cuda"), ("threads in-process", "threads")):
                progs[label] = [args.topoml_python, os.path.join(here, "py_rips.py"), "topoml"] + \
                    py_args + ["--collapse", "auto", "--backend", be]
        if args.ripserpp:
            # Ripser++ enumerates every simplex of the full complex unless
            # told the complex is sparse; under a threshold that is hopeless
            # (o3_1024 --dim 3: 4.6e10 tetrahedra), so it gets --sparse there.
            progs["ripser++"] = [args.ripserpp] + opts + (
                ["--sparse"] if "--threshold" in opts else []) + [path]
        if args.ripser:
            progs["ripser"] = [args.ripser] + opts + [path]
        times = {k: [] for k in progs}
        extra_info = {}
        gpu_peak = {}
        outs, errs = {}, {}
        for _ in range(args.warmup):
            for k, cmd in progs.items():
                left = args.budget - (time.time() - start)
                if k not in SLOW and left >= 30:
                    run(cmd, max(5, min(left, 240)))
        for rep in range(args.reps):
            for k, cmd in progs.items():
                slow = k in SLOW
                if slow and rep >= scalar_reps:
                    continue
                left = args.budget - (time.time() - start)
                if left < 5:
                    break
                cap = args.slow_cap if slow else 240
                if k in ("cuda", "ripser++") and gpu_mem.ok and k not in gpu_peak:
                    with gpu_mem as g:
                        rc, out, err, secs = run(cmd, max(5, min(left, cap)))
                    if rc == 0:
                        gpu_peak[k] = g.used
                else:
                    rc, out, err, secs = run(cmd, max(5, min(left, cap)))
                if rc is None and slow and left >= cap:
                    errs[k] = "stopped after %.0f s (more than the cap)" % cap
                    times[k].append(None)
                    continue
                if rc != 0:
                    errs[k] = (err.strip().splitlines() or ["exit %s" % rc])[-1]
                    continue
                times[k].append(secs)
                outs.setdefault(k, out)
                for key, pat in (("setup_s", r"^setup ([0-9.]+)$"), ("backend", r"^backend (\S+)$")):
                    mm = re.search(pat, err, re.M)
                    if mm:
                        extra_info.setdefault(k, {}).setdefault(key, []).append(
                            float(mm.group(1)) if key == "setup_s" else mm.group(1))
        # the device's share, from one verbose run
        device = []
        rc, _, err, _ = run(progs["cuda"][:2] + ["--verbose", "--verbose"] + progs["cuda"][2:],
                            max(5, min(args.budget - (time.time() - start), 120)))
        for line in err.splitlines():
            if "cuda rips:" in line:
                device.append(line.split("cuda rips:", 1)[1].strip())
        med = {k: statistics.median(v) if v and None not in v else None
               for k, v in times.items()}
        check = []
        if "scalar" in outs and "cuda" in outs:
            check.append("cuda==scalar" if outs["cuda"] == outs["scalar"] else "CUDA DIFFERS")
        if "scalar" in outs and "threads" in outs:
            check.append("threads==scalar" if outs["threads"] == outs["scalar"]
                         else "THREADS DIFFERS")
        ref = counts(outs.get("scalar", "") or outs.get("cuda", ""))
        for k in ("ripser++", "ripser", "giotto-ph", "giotto-ph collapse", "cuda in-process",
                  "threads in-process"):
            if k in outs:
                check.append("%s counts %s" % (k, "same" if counts(outs[k]) == ref else
                                               "differ %s vs %s" % (counts(outs[k]), ref)))
        for k, e in errs.items():
            check.append("%s failed: %s" % (k, e[:120]))

        def f(x):
            return "%10.3f" % x if x is not None else "%10s" % "-"

        def r(a, b):
            return "%9.2f" % (a / b) if a and b else "%9s" % "-"
        gph = [med.get(k) for k in ("giotto-ph", "giotto-ph collapse") if med.get(k)]
        best_gph = min(gph) if gph else None

        def m(x):
            return "%8.0f" % x if x is not None else "%8s" % "-"
        print("%-26s %s %s %s %s %s %s %s %s %s %s %s %s %s %s  %s" % (
            name, f(med["scalar"])[1:], f(med["cuda"])[1:], f(med.get("threads"))[1:],
            f(med.get("cuda in-process"))[1:], f(med.get("threads in-process"))[1:],
            f(med.get("giotto-ph"))[1:], f(med.get("giotto-ph collapse"))[1:],
            f(med.get("ripser++"))[1:], f(med.get("ripser"))[1:],
            r(med["cuda"], best_gph)[1:], r(med.get("cuda in-process"), best_gph)[1:],
            r(med.get("ripser++"), med["cuda"])[1:],
            m(gpu_peak.get("cuda")), m(gpu_peak.get("ripser++")), "; ".join(check)))
        for d in device:
            print("%-26s   device: %s" % ("", d))
        sys.stdout.flush()
        rows.append({"case": name, "options": opts, "file": os.path.basename(path),
                     "times_s": times, "median_s": med, "check": check, "device_log": device,
                     "bars_per_dim": ref, "gpu_peak_mib": gpu_peak})
        label = {"scalar": "topoml scalar", "cuda": "topoml cuda",
                 "threads": "topoml threads", "giotto-ph": "giotto-ph collapse=off",
                 "giotto-ph collapse": "giotto-ph collapse=on", "ripser++": "Ripser++",
                 "ripser": "ripser 1.2.1", "cuda in-process": "topoml cuda in-process",
                 "threads in-process": "topoml threads in-process"}
        for k, v in times.items():
            commands["%s/%s" % (name, label[k])] = " ".join(progs[k])
            ok = [x for x in v if x is not None]
            cases.append({"name": name, "program": label[k],
                          "threads": args.threads if k in ("threads", "giotto-ph",
                                                           "giotto-ph collapse",
                                                           "threads in-process") else 1,
                          "times": ok, "median": med.get(k), "peak_rss": None,
                          "peak_gpu_mib": gpu_peak.get(k), "error": errs.get(k),
                          **extra_info.get(k, {})})
    if args.json:
        machine = {"cpu": next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                                if l.startswith("model name")), platform.machine()),
                   "cpus_available": len(os.sched_getaffinity(0)),
                   "gpu": subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,"
                                          "memory.total", "--format=csv,noheader"],
                                         capture_output=True, text=True).stdout.strip()
                   if gpu_mem.ok else None,
                   "date": datetime.datetime.now(datetime.timezone.utc).isoformat(
                       timespec="seconds")}

        def version(cmd):
            try:
                return subprocess.run(cmd, capture_output=True, text=True,
                                      timeout=60).stdout.strip() or None
            except OSError:
                return None
        versions = {"topoml": version([args.topoml, "--version"])}
        if args.python:
            versions["giotto-ph"] = version([args.python, "-c",
                                             "import gph; print(gph.__version__)"])
        doc = {"title": "Rips barcodes on the GPU machine: topoml cuda and threads "
               "against giotto-ph, Ripser++ and Ripser",
               "machine": machine, "versions": versions, "commands": commands,
               "units": {"median": "s", "times": "s", "peak_gpu_mib": "MiB"},
               "baseline": "Ripser++", "cases": cases,
               "rows": rows, "reps": args.reps, "warmup": args.warmup}
        # The source tree's commit, where the tree is a checkout (a copy
        # without git metadata records none).
        tree = artifact.source_tree()
        if tree:
            doc["git"] = tree
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=1)
    # A failure is topoml's answer differing (a backend against the scalar
    # reference, or the in-process rows' counts); a peer's differing counts
    # (giotto-ph with collapse_edges under a threshold did, on o3_1024 and
    # o3_4096) are reported in the table and the JSON, not a failure of ours.
    bad = any("DIFFERS" in c or (c.startswith(("cuda in-process", "threads in-process"))
                                 and "differ " in c)
              for row in rows for c in row["check"])
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
