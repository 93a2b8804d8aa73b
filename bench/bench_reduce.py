#!/usr/bin/env python3
"""The reduction stage of the threads backend's engine at 1 and 2 threads
(or any list): wall and CPU seconds of the reductions ("dim k", k >= 1),
of the enumerations and of the whole call, per case, by
bench/reduce_stages.c (the engine called directly, no edge collapse,
no CLI start-up), every thread count on the same input, alternating, in one
run. "threads 0" is scalar_rips itself, the serial reference (1 runs the
same serial code: a pool of one thread is no pool). The calling thread's
CPU seconds of the reduction ("calling thread") are about its wall time on
an idle machine with a core per thread (reduce_stages.c says why). Every run's
barcode digest must agree, or the script stops. Prints a Markdown table,
writes the JSON artifact (bench/artifact.py; a case's "times" are the
reduction's wall times, "cpu_times" its CPU seconds, the process's: every
thread's).

    gcc -O2 -g -std=c11 -D_GNU_SOURCE -Iplugin-api/include -Iplugins/scalar \\
        -Iplugins/threads bench/reduce_stages.c plugins/threads/pool.c \\
        plugins/scalar/rips.c -lm -lpthread -o /tmp/reduce_stages
    bench/bench_reduce.py --bin /tmp/reduce_stages [--threads 0,1,2] \\
        [--reps 3] [--only CASE]... [--batch N,...] [--scheme 0,1,2] [--json FILE]

With several --batch sizes (0: the engine's adaptive choice) or --scheme
values (the parallel reduction, scalar_rips_pool.scheme: 0 the engine's
choice, 1 batched in two phases, 2 lock-free) every pooled thread count
runs at each; the serial one (threads 0 or 1) once.
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import artifact  # noqa: E402
import bench_rips  # noqa: E402  (the data folder and the seeded generators)

# name, file (relative to the data folder, or generated), dim, threshold
CASES = [
    ("clifford_torus_10000", "gen:torus:10000:19", 2, 0.15),
    ("clifford_torus_50000", "gen:torus:50000:19", 2, 0.15),
    ("o3_4096", "o3_4096.txt", 3, 1.4),
    # the dense full-matrix case with little to collapse (issue 34)
    ("uniform_512_r16", "gen:uniform:512:16:34", 2, "inf"),
    ("sphere_3_192_d2", "sphere_3_192.lower_distance_matrix", 2, "inf"),
    ("sphere_3_192_d3", "sphere_3_192.lower_distance_matrix", 3, "inf"),
    ("o3_1024", "o3_1024.txt", 3, 1.8),
]
SCHEMES = {0: "auto", 1: "batched", 2: "lockfree"}

KEYS = ("reduce_wall", "reduce_cpu", "enum_wall", "enum_cpu", "wall", "cpu")


def med(runs, key):
    return statistics.median(r[key] for r in runs)


def table(cases):
    print("| case | threads | batch | scheme | reduction wall s | reduction CPU s | reduction CPU s, calling "
          "thread | enumeration CPU s | whole CPU s | whole wall s | resumed | runs |")
    print("| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    def med_of(c, key):
        # a file converted from a run's text output may lack some of them
        return "%.3f" % statistics.median(c[key]) if c.get(key) else "-"

    for c in cases:
        print("| %s | %s | %s | %s | %.3f | %.3f | %s | %s | %s | %s | %s | %d |" % (
            c["name"], c["engine_threads"],
            "-" if c["engine_threads"] < 2 else c.get("batch") or "adaptive",
            c.get("scheme", "-"),
            c["median"], c["cpu_median"],
            med_of(c, "main_cpu_times"), med_of(c, "enum_cpu_times"),
            med_of(c, "whole_cpu_times"), med_of(c, "whole_times"),
            c["resumed"] if c.get("resumed") is not None else "-", len(c["times"])))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", help="reduce_stages, built as above")
    ap.add_argument("--data", default=bench_rips.default_data(), help="Ripser's examples folder")
    ap.add_argument("--threads", default="0,1,2",
                    help="thread counts (0: scalar_rips, the serial reference)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--batch", default="0",
                    help="columns per batch of the parallel reduction, comma-separated "
                    "(0: the engine's adaptive choice)")
    ap.add_argument("--scheme", default="0",
                    help="parallel reductions, comma-separated (0: the engine's choice, "
                    "1: batched in two phases, 2: lock-free)")
    ap.add_argument("--only", action="append", help="run only these cases")
    ap.add_argument("--json", help="where the results go (default: bench/results/"
                    "reduce-cpu-<date>.json)")
    ap.add_argument("--markdown", help="print the Markdown table of this result file and exit")
    a = ap.parse_args()
    if a.markdown:
        with open(a.markdown, encoding="utf-8") as f:
            table(json.load(f)["cases"])
        return 0
    if not a.bin:
        ap.error("--bin is needed")
    threads = [int(t) for t in a.threads.split(",")]
    batches = [int(b) for b in a.batch.split(",")]
    schemes = [int(x) for x in a.scheme.split(",")]
    # (threads, batch, scheme) per configuration; one of each for a serial run
    configs = [(t, b, sc) for t in threads for b in (batches if t > 1 else batches[:1])
               for sc in (schemes if t > 1 else schemes[:1])]
    cases = [c for c in CASES if not a.only or c[0] in a.only]
    tmp = tempfile.mkdtemp(prefix="bench_reduce_")
    commands, out = [" ".join([os.path.relpath(__file__)] + sys.argv[1:])], []
    for name, src, dim, thr in cases:
        path = bench_rips.generate(src, tmp) if src.startswith("gen:") else \
            os.path.join(a.data, src)
        runs = {c: [] for c in configs}
        digest = None
        for rep in range(a.reps):
            for t, b, sc in configs:
                cmd = [a.bin, path, str(dim), str(thr), str(t), str(b), str(sc)]
                if rep == 0:
                    commands.append(" ".join(cmd))
                r = json.loads(subprocess.run(cmd, check=True, capture_output=True,
                                              text=True).stdout)
                if digest is None:
                    digest = r["digest"]
                if r["digest"] != digest:
                    sys.exit("%s: %d threads gave another barcode (%s, not %s)"
                             % (name, t, r["digest"], digest))
                runs[(t, b, sc)].append(r)
                print("%s threads %d batch %d scheme %d: reduction %.3f s wall, %.3f s CPU; "
                      "whole %.3f s CPU" % (name, t, b, sc, r["reduce_wall"], r["reduce_cpu"],
                                            r["cpu"]), file=sys.stderr)
        for t, b, sc in configs:
            rs = runs[(t, b, sc)]
            program = "topoml engine" + (" pooled" if t else " serial")
            if len(batches) > 1 and t > 1:
                program += " batch %s" % (b or "adaptive")
            if len(schemes) > 1 and t > 1:
                program += " " + SCHEMES[sc]
            out.append(artifact.case(
                name, program,
                [r["reduce_wall"] for r in rs], threads=max(t, 1), engine_threads=t,
                cpu_times=[r["reduce_cpu"] for r in rs], cpu_median=med(rs, "reduce_cpu"),
                main_cpu_times=[r["reduce_main_cpu"] for r in rs],
                enum_main_cpu_times=[r["enum_main_cpu"] for r in rs],
                median=med(rs, "reduce_wall"),
                enum_times=[r["enum_wall"] for r in rs],
                enum_cpu_times=[r["enum_cpu"] for r in rs],
                whole_times=[r["wall"] for r in rs], whole_cpu_times=[r["cpu"] for r in rs],
                resumed=rs[0]["resumed"], batch=b, bars=rs[0]["bars"], digest=digest,
                scheme=SCHEMES[sc] if t > 1 else "serial",
                displaced=[r.get("displaced", 0) for r in rs],
                dim=dim, threshold=thr))
    run = {
        "title": "Reduction stage of the Rips engine: serial and pooled (threads backend)",
        "machine": artifact.machine(),
        "versions": {"topoml": subprocess.run(["git", "-C", HERE, "rev-parse", "--short",
                                               "HEAD"], capture_output=True,
                                              text=True).stdout.strip() or "unknown"},
        "commands": commands,
        "statistic": "median of the reduction stage's wall time; cpu_median: its CPU "
                     "seconds (process, all threads)",
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "cases": out,
    }
    path = a.json or os.path.join(HERE, "results", "reduce-cpu-%s.json"
                                  % datetime.date.today().isoformat())
    artifact.save(path, run)
    table(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
