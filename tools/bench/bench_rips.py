#!/usr/bin/env python3
"""Benchmark of `topoml barcode` against Ripser on Ripser's published
benchmark inputs: both programs run on the same input, alternately, several
times; the table gives the median wall time, the median user CPU time and
the peak resident set size of each, and their ratios (topoml / ripser).
The outputs of the first repetition are compared (the bars, ignoring the
header lines). Results also go to a JSON file.

    tools/bench/bench_rips.py --topoml build/tools/topoml [--big] [--reps 5]

o3_4096 (about a minute and 1.2 GB with Ripser) runs only with --big.
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests",
                                "cli"))
import clitest  # noqa: E402  (the one comparison of diagrams)



def default_data():
    """shared/data/ripser-examples in the nearest folder above this file."""
    d = os.path.dirname(os.path.abspath(__file__))
    while True:
        cand = os.path.join(d, "shared", "data", "ripser-examples")
        if os.path.isdir(cand) or os.path.dirname(d) == d:
            return cand
        d = os.path.dirname(d)


# Ripser 1.2.1 reads "distance" when no --format is given, whatever its
# help says, so every case names its format.
CASES = [  # name, input file, options
    ("sphere_3_192", "sphere_3_192.lower_distance_matrix",
     ["--format", "lower-distance", "--dim", "2"]),
    ("o3_1024", "o3_1024.txt", ["--format", "point-cloud", "--dim", "3", "--threshold", "1.8"]),
    ("o3_2048", "o3_2048.txt", ["--format", "point-cloud", "--dim", "2", "--threshold", "1.6"]),
    ("random16", "random16.lower_distance_matrix", ["--format", "lower-distance", "--dim", "7"]),
]
BIG = [("o3_4096", "o3_4096.txt", ["--format", "point-cloud", "--dim", "3", "--threshold", "1.4"])]


def measure(cmd):
    """Wall seconds, user CPU seconds, peak RSS in KiB and stdout of one run.
    User time and RSS come from GNU time: the rusage of a child forked from
    this Python process would count Python's own pages as the child's."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as tf:
        start = time.perf_counter()
        p = subprocess.run(["/usr/bin/time", "-f", "%U %M", "-o", tf.name] + cmd,
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        wall = time.perf_counter() - start
        user, rss = tf.read().split()[-2:]
    if p.returncode != 0:
        raise SystemExit("%s exited with %d" % (" ".join(cmd), p.returncode))
    return wall, float(user), int(rss), p.stdout.decode(errors="replace")


def same_bars(a, b):
    """Equal diagrams up to Ripser's printed precision (it computes point
    distances in float, topoml in double, so last digits may differ)."""
    x, _ = clitest.parse_ripser(a)
    y, _ = clitest.parse_ripser(b)
    return sorted(x) == sorted(y) and all(clitest.same_diagram(x[k], y[k]) for k in x)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--topoml", required=True, help="the topoml CLI")
    ap.add_argument("--ripser", default="/usr/bin/ripser")
    ap.add_argument("--data", default=default_data(), help="Ripser's examples folder")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--big", action="store_true", help="also o3_4096 (minutes)")
    ap.add_argument("--only", action="append", help="run only these cases")
    ap.add_argument("--json", default="bench_rips.json", help="where the results go")
    a = ap.parse_args()

    cases = CASES + (BIG if a.big else [])
    if a.only:
        cases = [c for c in cases if c[0] in a.only]
    results = []
    hdr = "%-13s %9s %9s %6s  %9s %9s %6s  %8s %8s %6s  %s" % (
        "case", "ripser s", "topoml s", "ratio", "ripser u", "topoml u", "ratio", "ripser MB",
        "topoml MB", "ratio", "output")
    print(hdr)
    print("-" * len(hdr))
    for name, fname, opts in cases:
        path = os.path.join(a.data, fname)
        runs = {"ripser": [], "topoml": []}
        same = None
        reps = a.reps
        rep = 0
        while rep < reps:
            # alternate which goes first, so that neither always runs on a
            # cache warmed (or a machine loaded) by the other
            order = ["ripser", "topoml"] if rep % 2 == 0 else ["topoml", "ripser"]
            outs = {}
            for who in order:
                cmd = [a.ripser] + opts + [path] if who == "ripser" else \
                    [a.topoml, "barcode", "--quiet"] + opts + [path]
                wall, user, rss, out = measure(cmd)
                runs[who].append((wall, user, rss))
                outs[who] = out
            # runs of a few milliseconds are mostly process start-up and
            # noise: take many more of them
            if rep == 0 and max(runs["ripser"][0][0], runs["topoml"][0][0]) < 0.2:
                reps = max(reps, 41)
            if rep == 0:
                same = same_bars(outs["ripser"], outs["topoml"])
            rep += 1
        med = {w: [statistics.median(x[i] for x in runs[w]) for i in range(3)] for w in runs}
        r, t = med["ripser"], med["topoml"]
        ratio = [t[i] / r[i] if r[i] > 0 else float("nan") for i in range(3)]
        print("%-13s %9.3f %9.3f %6.2f  %9.3f %9.3f %6.2f  %8.1f %8.1f %6.2f  %s" % (
            name, r[0], t[0], ratio[0], r[1], t[1], ratio[1], r[2] / 1024, t[2] / 1024, ratio[2],
            "same bars" if same else "DIFFERS"))
        sys.stdout.flush()
        results.append({
            "case": name, "input": fname, "options": opts, "reps": reps,
            "ripser": {"wall_s": r[0], "user_s": r[1], "max_rss_kib": r[2],
                       "runs": runs["ripser"]},
            "topoml": {"wall_s": t[0], "user_s": t[1], "max_rss_kib": t[2],
                       "runs": runs["topoml"]},
            "ratio": {"wall": ratio[0], "user": ratio[1], "max_rss": ratio[2]},
            "same_bars": same,
        })
    with open(a.json, "w") as f:
        json.dump({"machine": platform.node(), "cpu": platform.processor() or platform.machine(),
                   "load_average": os.getloadavg(), "topoml": a.topoml, "ripser": a.ripser,
                   "results": results}, f, indent=1)
    print("(medians of %d runs, 41 for runs under 0.2 s; ratio = topoml / ripser; u = user CPU "
          "seconds; results in %s)" % (a.reps, a.json))


if __name__ == "__main__":
    main()
