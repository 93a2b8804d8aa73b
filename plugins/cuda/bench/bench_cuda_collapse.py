#!/usr/bin/env python3
"""The edge collapse in front of the cuda backend: `topoml barcode --backend
cuda --collapse off|on|auto` on the GPU cases of bench/bench_rips_gpu.py.

    plugins/cuda/bench/bench_cuda_collapse.py --topoml build/tools/topoml \
        [--data DIR] [--reps 3] [--warmup 1] [--budget SECONDS] [--only NAMES]
        [--json OUT]

The three settings run alternately on the same file; the table gives median
wall times of the whole process (as a user sees them), the ratio of each to
collapse off, the edges the collapse kept, and the device memory high-water
mark the plugin logs. The three settings must print the same bars (as
multisets, to the printed digits: the collapse changes no bar, only the order
in which the reduction meets them). With the collapse on, the
collapsed graph goes to the plugin as sparse input under a threshold, and its
columns of dimensions >= 2 are collected on the device (rips.c,
tmc_sparse_source); the device log of one verbose run per setting is kept in the
JSON. Before a case's timed runs each setting runs --warmup times (default
1) untimed, as in bench_rips_gpu.py: the first call past the sizes run-time
verification has checked is re-run on the reference even with the gate off.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "bench"))
from bench_rips_gpu import CASES, materialise, run  # noqa: E402
from bench_rips import clitest, default_data  # noqa: E402
import artifact  # noqa: E402

SETTINGS = ("off", "on", "auto")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--topoml", required=True)
    ap.add_argument("--data", default=default_data())
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=1,
                    help="untimed runs of each setting before a case's timed ones (default 1)")
    ap.add_argument("--budget", type=float, default=120.0, help="seconds for everything")
    ap.add_argument("--only", help="cases whose name contains one of these (comma-separated)")
    ap.add_argument("--json")
    args = ap.parse_args()
    if args.reps < 1 or not 0 <= args.warmup <= 10:
        ap.error("--reps must be at least 1 and --warmup 0..10")
    start = time.time()
    tmp = tempfile.mkdtemp(prefix="topoml-collapse-")
    conf = os.path.join(tmp, "topoml.yaml")
    with open(conf, "w") as f:
        f.write("gate: off\n")
    rows = []
    print("%-26s %9s %9s %9s %8s %8s %16s %12s  %s" % (
        "case", "off s", "on s", "auto s", "on/off", "auto/off", "edges kept (on)",
        "GPU MiB on", "check"))
    for name, spec, opts, _ in CASES:
        if args.only and not any(w and w in name for w in args.only.split(",")):
            continue
        if args.budget - (time.time() - start) < 15:
            print("%-26s skipped: out of time" % name)
            continue
        path = materialise(spec, args.data, tmp)
        if not os.path.exists(path):
            print("%-26s skipped: no %s" % (name, path))
            continue
        cmd = {c: [args.topoml, "barcode", "--config", conf, "--quiet", "--backend", "cuda",
                   "--collapse", c] + opts + [path] for c in SETTINGS}
        times = {c: [] for c in SETTINGS}
        outs, errs = {}, {}
        for _ in range(args.warmup):
            for c in SETTINGS:
                left = args.budget - (time.time() - start)
                if left >= 5:
                    run(cmd[c], max(5, min(left, 120)))
        for _ in range(args.reps):
            for c in SETTINGS:
                left = args.budget - (time.time() - start)
                if left < 5:
                    break
                rc, out, err, secs = run(cmd[c], max(5, min(left, 120)))
                if rc != 0:
                    errs[c] = (err.strip().splitlines() or ["exit %s" % rc])[-1]
                    continue
                times[c].append(secs)
                outs.setdefault(c, out)
        logs, kept, high = {}, {}, {}
        for c in SETTINGS:
            if args.budget - (time.time() - start) < 5:
                break
            verbose = cmd[c][:2] + ["--verbose", "--verbose"] + [a for a in cmd[c][2:]
                                                                 if a != "--quiet"]
            _, _, err, _ = run(verbose, 120)
            logs[c] = [l.strip() for l in err.splitlines()
                       if "cuda" in l or "collapse" in l]
            m = re.search(r"edge collapse: (\d+) of (\d+) edges remain", err)
            kept[c] = (int(m.group(1)), int(m.group(2))) if m else None
            m = re.search(r"device memory high-water ([0-9.]+) MiB", err)
            high[c] = float(m.group(1)) if m else None
        med = {c: statistics.median(v) if v else None for c, v in times.items()}
        check = []
        if len(outs) == len(SETTINGS):
            # The same bars as multisets: the order in which they are printed
            # follows the reduction, which the collapse changes.
            bars = [{k: sorted(v) for k, v in clitest.parse_ripser(o)[0].items()}
                    for o in outs.values()]
            check.append("same bars" if all(b == bars[0] for b in bars) else "BARS DIFFER")
        for c, e in errs.items():
            check.append("%s failed: %s" % (c, e[:120]))

        def f(x):
            return "%9.3f" % x if x is not None else "%9s" % "-"

        def r(a, b):
            return "%8.2f" % (a / b) if a and b else "%8s" % "-"
        k = kept.get("on")
        print("%-26s %s %s %s %s %s %16s %12s  %s" % (
            name, f(med["off"]), f(med["on"]), f(med["auto"]), r(med["on"], med["off"]),
            r(med["auto"], med["off"]), "%d/%d" % k if k else "-",
            "%.1f" % high["on"] if high.get("on") is not None else "-", "; ".join(check)))
        sys.stdout.flush()
        rows.append({"case": name, "options": opts, "file": os.path.basename(path),
                     "times_s": times, "median_s": med, "edges_kept": kept,
                     "device_high_water_mib": high, "check": check, "log": logs})
    if args.json:
        # make_tables' schema through bench/artifact.py, the full rows
        # kept beside the cases
        m = artifact.machine()
        gpu = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version",
                              "--format=csv,noheader"], capture_output=True, text=True)
        m["gpu"] = (gpu.stdout.strip().splitlines() or ["?"])[0]
        version = subprocess.run([args.topoml, "--version"], capture_output=True, text=True)
        artifact.save(args.json, {
            "title": "cuda backend, edge collapse off/on/auto", "machine": m,
            "versions": {"topoml": version.stdout.strip() or "?"},
            "commands": [" ".join(sys.argv)], "reps": args.reps, "warmup": args.warmup,
            "cases": [artifact.case(row["case"], "topoml cuda --collapse %s" % c,
                                    [t for t in row["times_s"][c] if t is not None])
                      for row in rows for c in SETTINGS if row["times_s"].get(c)],
            "rows": rows})
    return 1 if any("DIFFER" in c for row in rows for c in row["check"]) else 0


if __name__ == "__main__":
    sys.exit(main())
