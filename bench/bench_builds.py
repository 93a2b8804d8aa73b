#!/usr/bin/env python3
"""Two builds of topoml on the same Rips cases: the CPU seconds (user +
system, from the kernel's per-child accounting: microseconds, not the 10 ms
of /usr/bin/time) and the wall seconds of `topoml barcode` of each build,
taken in turn (bench/timing.py), medians. For a change that moves
the engine's time by a few per cent, e.g. compiler flags, on a machine that
is doing other work: CPU time moves less with the load than wall time.

    bench/bench_builds.py --build build/tools/topoml \\
        --baseline OTHER/tools/topoml [--backend scalar] [--reps 11] \\
        [--only CASE]... [--json FILE]

The cases are bench_rips.py's (the shipped Ripser examples and the seeded
uniform clouds), each with `--collapse auto` (the default) and, where
the collapse goes on, also `--collapse off`, so that the engine's own work
is measured on a large complex too. Both builds must print the same bars."""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import artifact  # noqa: E402
import bench_rips  # noqa: E402
import timing  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", required=True, help="the topoml CLI measured")
    ap.add_argument("--baseline", required=True, help="the topoml CLI it is compared with")
    ap.add_argument("--backend", default="scalar")
    ap.add_argument("--reps", type=int, default=11)
    ap.add_argument("--data", default=bench_rips.default_data())
    ap.add_argument("--only", action="append", help="run only these cases")
    ap.add_argument("--json", help="where the results go (default: stdout)")
    a = ap.parse_args()

    builds = {"build": a.build, "baseline": a.baseline}
    for k, b in builds.items():
        if not (os.path.isfile(b) and os.access(b, os.X_OK)):
            ap.error("--%s %s: not an executable topoml CLI" % (k, b))
    names = [c[0] for c in bench_rips.CASES]
    for o in a.only or []:
        if o not in names:
            ap.error("--only %s: no such case (cases: %s)" % (o, ", ".join(names)))
    cases, rows = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for name, f, fmt, dim, thr in bench_rips.CASES:
            if a.only and name not in a.only:
                continue
            path = bench_rips.generate(f, tmp) if f.startswith("gen:") else os.path.join(a.data, f)
            for collapse in ("auto", "off"):
                if collapse == "off" and name in ("random16", "projective_plane"):
                    continue
                args = ["barcode", "--backend", a.backend, "--collapse", collapse,
                        "--format", fmt, "--dim", str(dim)]
                if thr is not None:
                    args += ["--threshold", str(thr)]
                args.append(path)
                settings = {k: (lambda b=b: timing.run([b] + args)) for k, b in builds.items()}
                got = timing.alternate(settings, a.reps)
                if got["build"]["last"].stdout != got["baseline"]["last"].stdout:
                    sys.exit("%s --collapse %s: the two builds print different bars" %
                             (name, collapse))
                label = "%s --collapse %s" % (name, collapse)
                med = {}
                for k in builds:
                    cpu = got[k]["cpu"]
                    med[k] = statistics.median(cpu)
                    cases.append(artifact.case(label, k, cpu, threads=1,
                                               wall_times=got[k]["wall"],
                                               wall_median=statistics.median(got[k]["wall"])))
                rows.append((label, med["build"], med["baseline"]))
                print("%-42s build %8.4f s  baseline %8.4f s  ratio %.3f" %
                      (label, med["build"], med["baseline"], med["build"] / med["baseline"]),
                      flush=True)
    version = {k: subprocess.run([b, "--version"], capture_output=True,
                                 text=True).stdout.strip() for k, b in builds.items()}
    doc = {"title": "Two builds of topoml, the same Rips cases (backend %s)" % a.backend,
           "machine": artifact.machine(), "versions": version,
           "commands": [" ".join(sys.argv)] + ["build: %s; baseline: %s" % (a.build, a.baseline)],
           "statistic": "median of the CPU seconds (user + system) of %d runs per build, the "
                        "builds in turn; wall seconds in wall_times" % a.reps,
           "baseline": "baseline", "cases": cases}
    artifact.save(a.json or "-", doc)


if __name__ == "__main__":
    main()
