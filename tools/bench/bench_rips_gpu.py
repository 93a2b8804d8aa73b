#!/usr/bin/env python3
"""Vietoris-Rips barcodes on the GPU: `topoml barcode --backend cuda` against
the scalar reference backend on the same machine and, when given, Ripser++
(built from its public source on that machine) and Ripser.

    tools/bench/bench_rips_gpu.py --topoml build/tools/topoml \
        [--data DIR] [--ripserpp PATH] [--ripser PATH] [--reps 3] \
        [--budget SECONDS] [--json OUT]

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
the outputs are checked here against the scalar backend.
"""
import argparse
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_rips import clitest, default_data  # noqa: E402  (Ripser's examples, its output)


# name, file (in --data or generated), options common to all programs,
# repetitions of the scalar backend (the slow one) at most
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
]


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
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace"), \
        time.perf_counter() - t0


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
    ap.add_argument("--budget", type=float, default=300.0, help="seconds for everything")
    ap.add_argument("--only", help="run only cases whose name contains one of these "
                    "(comma-separated)")
    ap.add_argument("--slow-cap", type=float, default=100.0,
                    help="seconds after which a scalar or Ripser run is stopped (reported as "
                    "'>cap')")
    ap.add_argument("--json")
    args = ap.parse_args()
    start = time.time()
    tmp = tempfile.mkdtemp(prefix="topoml-bench-")
    conf = os.path.join(tmp, "topoml.yaml")
    with open(conf, "w") as f:
        f.write("gate: off\n")
    rows = []
    print("%-26s %10s %10s %10s %10s %9s %9s  %s" % (
        "case", "scalar s", "cuda s", "ripser++ s", "ripser s", "scal/cuda", "rpp/cuda",
        "check"))
    for name, spec, opts, scalar_reps in CASES:
        if args.only and not any(w and w in name for w in args.only.split(",")):
            continue
        left = args.budget - (time.time() - start)
        if left < 20:
            print("%-26s skipped: out of time" % name)
            continue
        path = materialise(spec, args.data, tmp)
        progs = {
            "scalar": [args.topoml, "barcode", "--config", conf, "--quiet", "--backend", "scalar"]
            + opts + [path],
            "cuda": [args.topoml, "barcode", "--config", conf, "--quiet", "--backend", "cuda"]
            + opts + [path],
        }
        if args.ripserpp:
            # Ripser++ enumerates every simplex of the full complex unless
            # told the complex is sparse; under a threshold that is hopeless
            # (o3_1024 --dim 3: 4.6e10 tetrahedra), so it gets --sparse there.
            progs["ripser++"] = [args.ripserpp] + opts + (
                ["--sparse"] if "--threshold" in opts else []) + [path]
        if args.ripser:
            progs["ripser"] = [args.ripser] + opts + [path]
        times = {k: [] for k in progs}
        outs, errs = {}, {}
        for rep in range(args.reps):
            for k, cmd in progs.items():
                if k in ("scalar", "ripser") and rep >= scalar_reps:
                    continue
                left = args.budget - (time.time() - start)
                if left < 5:
                    break
                cap = args.slow_cap if k in ("scalar", "ripser") else 240
                rc, out, err, secs = run(cmd, max(5, min(left, cap)))
                if rc is None and k in ("scalar", "ripser") and left >= cap:
                    errs[k] = "stopped after %.0f s (more than the cap)" % cap
                    times[k].append(None)
                    continue
                if rc != 0:
                    errs[k] = (err.strip().splitlines() or ["exit %s" % rc])[-1]
                    continue
                times[k].append(secs)
                outs.setdefault(k, out)
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
        ref = counts(outs.get("scalar", ""))
        for k in ("ripser++", "ripser"):
            if k in outs:
                check.append("%s counts %s" % (k, "same" if counts(outs[k]) == ref else
                                               "differ %s vs %s" % (counts(outs[k]), ref)))
        for k, e in errs.items():
            check.append("%s failed: %s" % (k, e[:120]))

        def f(x):
            return "%10.3f" % x if x is not None else "%10s" % "-"

        def r(a, b):
            return "%9.2f" % (a / b) if a and b else "%9s" % "-"
        print("%-26s %s %s %s %s %s %s  %s" % (
            name, f(med["scalar"]), f(med["cuda"]), f(med.get("ripser++")),
            f(med.get("ripser")), r(med["scalar"], med["cuda"]),
            r(med.get("ripser++"), med["cuda"]), "; ".join(check)))
        for d in device:
            print("%-26s   device: %s" % ("", d))
        sys.stdout.flush()
        rows.append({"case": name, "options": opts, "file": os.path.basename(path),
                     "times_s": times, "median_s": med, "check": check, "device_log": device,
                     "bars_per_dim": ref})
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rows": rows, "reps": args.reps}, f, indent=1)
    bad = any("DIFFERS" in c or "differ " in c for row in rows for c in row["check"])
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
