#!/usr/bin/env python3
"""Benchmark of the cpp-compat backend against the scalar reference, through
the topoml CLI: pairwise distances (`topoml distance`) and Vietoris-Rips
barcodes (`topoml barcode`) on the same inputs, each backend asked for by
name (cpp-compat with a configuration that lists it under `enable`, since it
is not certified yet).

Each run is timed as wall-clock and as CPU time (user + system of the child
process; on a shared machine the CPU time is the steadier figure) by
bench/timing.py: the two backends of a case are run in turn, the
order reversed every other round, so a change of load falls on both alike,
and each figure is the median of --repeat runs; the load average at the
start and the end is recorded. The outputs of the two backends are
compared: bars as sorted lists, distances line by line; `same` says whether
they agree exactly.

Prints a table and writes every figure as a bench/results artifact
(bench/artifact.py; --json FILE, or stdout with --json -). Only the
standard library is needed.

  bench/bench_cpp_compat.py --topoml build/tools/topoml \\
      --data ../shared/data/ripser-examples [--quick] [--json out.json]
"""

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import artifact  # noqa: E402  (the one writer of bench/results/ files)
import timing  # noqa: E402


def cloud(rng, n, dim, kind):
    pts = []
    for _ in range(n):
        if kind == "sphere":  # uniform on the unit sphere S^(dim-1)
            v = [rng.gauss(0, 1) for _ in range(dim)]
            r = sum(x * x for x in v) ** 0.5
            pts.append([x / r for x in v])
        else:
            pts.append([rng.uniform(-1, 1) for _ in range(dim)])
    return pts


def write_cloud(folder, name, pts):
    path = os.path.join(folder, name)
    with open(path, "w") as f:
        for p in pts:
            f.write(" ".join("%.17g" % x for x in p) + "\n")
    return path


class Timeout(Exception):
    """A run of this backend went past --timeout."""

    def __init__(self, backend):
        Exception.__init__(self, backend)
        self.backend = backend


def timed(backend, cmd, timeout):
    """(wall seconds, cpu seconds, stdout) of one run; Timeout past timeout."""
    t = timing.run(cmd, timeout=timeout)
    if t is None:
        raise Timeout(backend)
    return t[0], t[1], t[2].stdout


def in_turn(cmds, repeat, timeout):
    """timing.alternate over {backend: cmd}; a backend that times out is
    left {"timeout": timeout} and the others are timed again without it."""
    out, cmds = {}, dict(cmds)
    while cmds:
        try:
            runs = timing.alternate({b: (lambda b=b, c=c: timed(b, c, timeout))
                                     for b, c in cmds.items()}, repeat)
        except Timeout as e:
            out[e.backend] = {"timeout": timeout}
            del cmds[e.backend]
            continue
        out.update(runs)
        break
    return out


def canonical(kind, text):
    """What must agree between backends: sorted bars per dimension, or the
    distance lines as they are."""
    if kind == "distance":
        return text
    out, dim = {}, None
    for line in text.splitlines():
        if line.startswith("persistence intervals in dim "):
            dim = int(line.split()[-1].rstrip(":"))
            out[dim] = []
        elif dim is not None and line.startswith(" ["):
            out[dim].append(line.strip())
    return {d: sorted(v) for d, v in out.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--topoml", default="build/tools/topoml")
    ap.add_argument("--data", default=os.path.join(os.path.dirname(__file__),
                                                   "../../shared/data/ripser-examples"))
    ap.add_argument("--repeat", type=int, default=3,
                    help="runs per case and backend; the median is kept")
    ap.add_argument("--timeout", type=float, default=1200, help="seconds per run")
    ap.add_argument("--quick", action="store_true",
                    help="skip sphere_3_192 in dimension 2 (the longest case)")
    ap.add_argument("--only", action="append", metavar="TEXT",
                    help="run only the cases whose name contains TEXT (again for more)")
    ap.add_argument("--json", help="write the figures here ('-': stdout)")
    a = ap.parse_args()
    if a.repeat < 1:
        ap.error("--repeat must be at least 1")
    tmp = tempfile.mkdtemp(prefix="bench-cpp-compat-")
    config = os.path.join(tmp, "topoml.yaml")
    with open(config, "w") as f:
        f.write("enable: [cpp-compat]\n")
    rng = random.Random(5)
    sphere = os.path.join(a.data, "sphere_3_192.lower_distance_matrix")
    o3 = os.path.join(a.data, "o3_1024.txt")
    c2000 = write_cloud(tmp, "uniform2000x9.txt", cloud(rng, 2000, 9, "uniform"))
    c4000 = write_cloud(tmp, "uniform4000x3.txt", cloud(rng, 4000, 3, "uniform"))
    s100 = write_cloud(tmp, "s3_100.txt", cloud(rng, 100, 4, "sphere"))
    u300 = write_cloud(tmp, "uniform300x3.txt", cloud(rng, 300, 3, "uniform"))
    u60 = write_cloud(tmp, "uniform60x3.txt", cloud(rng, 60, 3, "uniform"))

    # (name, command, arguments)
    cases = [
        ("distances uniform 2000x9 f64", "distance", ["--dtype", "f64", c2000]),
        ("distances uniform 2000x9 f32", "distance", ["--dtype", "f32", c2000]),
        ("distances uniform 4000x3 f64", "distance", ["--dtype", "f64", c4000]),
        ("distances o3_1024 cosine f32", "distance", ["--metric", "cosine", "--dtype", "f32", o3]),
        ("rips sphere_3_192 dim 1", "barcode", ["--dim", "1", sphere]),
        ("rips sphere_3_192 dim 2", "barcode", ["--dim", "2", sphere]),
        ("rips S^3 100 points dim 2", "barcode",
         ["--format", "point-cloud", "--dim", "2", s100]),
        ("rips uniform 300x3 dim 1", "barcode", ["--format", "point-cloud", "--dim", "1", u300]),
        ("rips uniform 60x3 dim 2", "barcode", ["--format", "point-cloud", "--dim", "2", u60]),
        ("rips uniform 60x3 dim 2 mod 3", "barcode",
         ["--format", "point-cloud", "--dim", "2", "--modulus", "3", u60]),
        ("rips o3_1024 dim 2 t 1.6", "barcode",
         ["--format", "point-cloud", "--dim", "2", "--threshold", "1.6", o3]),
    ]
    if a.quick:
        cases = [c for c in cases if c[0] != "rips sphere_3_192 dim 2"]
    if a.only:
        cases = [c for c in cases if any(t in c[0] for t in a.only)]
        if not cases:
            ap.error("no case name contains %s" % " or ".join(a.only))

    load_start = list(os.getloadavg())
    rows = []
    for name, command, args in cases:
        row = {"case": name, "command": command, "args": [os.path.basename(x) for x in args]}
        cmds = {}
        for backend in ("scalar", "cpp-compat"):
            cmd = [a.topoml, command, "--quiet", "--backend", backend]
            if backend != "scalar":
                cmd += ["--config", config]
            cmds[backend] = cmd + args
        outputs = {}
        for backend, r in in_turn(cmds, a.repeat, a.timeout).items():
            key = backend.replace("-", "_")
            if "timeout" in r:
                row[key] = r
                continue
            row[key] = {"wall_s": round(statistics.median(r["wall"]), 4),
                        "cpu_s": round(statistics.median(r["cpu"]), 4),
                        "cpu_runs": [round(t, 4) for t in r["cpu"]],
                        "wall_runs": [round(t, 4) for t in r["wall"]],
                        "command": " ".join(os.path.basename(x) if x.startswith(tmp) else x
                                            for x in cmds[backend])}
            outputs[backend] = canonical(command, r["last"])
        if len(outputs) == 2:
            row["same"] = outputs["scalar"] == outputs["cpp-compat"]
            s, c = row["scalar"]["cpu_s"], row["cpp_compat"]["cpu_s"]
            row["cpu_ratio"] = round(c / s, 2) if s > 0 else None
        rows.append(row)
        print_row(row, first=len(rows) == 1)
    load_end = list(os.getloadavg())
    print("load average %s at the start, %s at the end; medians of %d runs" % (
        "/".join("%.1f" % x for x in load_start), "/".join("%.1f" % x for x in load_end),
        a.repeat))

    if a.json and not any("cpu_s" in row.get(k, {}) for row in rows
                          for k in ("scalar", "cpp_compat")):
        sys.exit("every run went past --timeout %g s: no figure to write" % a.timeout)
    if a.json:
        machine = artifact.machine()
        machine["load_average_start"] = load_start
        artifact.save(a.json, {
            "title": "cpp-compat against the scalar reference through the topoml CLI",
            "machine": machine,
            "versions": {"topoml": subprocess.run([a.topoml, "--version"], capture_output=True,
                                                  text=True).stdout.strip() or "?"},
            "commands": [" ".join(["bench/bench_cpp_compat.py"] + sys.argv[1:])],
            "baseline": "scalar",
            "statistic": "median of %d runs, CPU seconds (user + system) of the whole CLI "
                         "process; wall seconds in each case's wall_times and wall_median; "
                         "the two backends of a case run in turn" % a.repeat,
            "cases": [artifact.case(row["case"], backend, row[key]["cpu_runs"], threads=1,
                                    median=row[key]["cpu_s"], wall_median=row[key]["wall_s"],
                                    wall_times=row[key]["wall_runs"],
                                    command=row[key]["command"], same=row.get("same"))
                      for row in rows for backend, key in (("scalar", "scalar"),
                                                           ("cpp-compat", "cpp_compat"))
                      if "cpu_s" in row.get(key, {})]})
        if a.json != "-":
            print("figures written to", a.json)
    for p in os.listdir(tmp):
        os.unlink(os.path.join(tmp, p))
    os.rmdir(tmp)


def print_row(row, first):
    if first:
        print("%-32s %10s %10s %10s %10s %7s %5s" % ("case", "scalar s", "(cpu)", "cpp s",
                                                     "(cpu)", "x cpu", "same"))
    def fig(k, f):
        v = row.get(k, {})
        return "timeout" if "timeout" in v else "%.3f" % v[f]
    print("%-32s %10s %10s %10s %10s %7s %5s" % (
        row["case"], fig("scalar", "wall_s"), fig("scalar", "cpu_s"), fig("cpp_compat", "wall_s"),
        fig("cpp_compat", "cpu_s"),
        "-" if row.get("cpu_ratio") is None else "%.1f" % row["cpu_ratio"],
        {True: "yes", False: "NO"}.get(row.get("same"), "-")))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
