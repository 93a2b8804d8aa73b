#!/usr/bin/env python3
"""What each layer of run-time verification costs a CLI call, the first
(and only) call of its process: `topoml barcode --backend B` on the shipped
benchmark set (the cases of bench/bench_verify.c: Ripser's
sphere_3_192, o3_1024, o3_2048 and random16), under

  verify: off     invariants only;
  verify: checks  + the checks that need no history (the exact pass of
                  core/src/verify_exact.c: H0 by a spanning forest, every bar
                  value an edge length, essential classes), the spot checks;
  verify: auto    + re-runs: the truncated re-run of every call, the full
                  re-runs drawn at random, the envelope and the budget;
  verify: always  + a full re-run of every call.

Each mode has its own certificate cache, warmed by untimed runs (the
backend certified, the envelope recorded): what is timed is a call whose
kind and size were checked before, the case the history-free checks exist
for. The figure is the CPU time of the process (user + system, every
thread; os.wait4), median of --repeat runs, the modes taken in turn; the
overhead of each mode over `off` per case, and its median over the cases.

  bench/bench_verify_checks.py --build build \\
      --data ../shared/data/ripser-examples --backend threads --repeat 5 --warmup 1 \\
      --json bench/results/verify-checks-cpu.json
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import artifact  # noqa: E402

CASES = [
    ("sphere_3_192 H<=2", "sphere_3_192.lower_distance_matrix", "lower-distance", 2, None),
    ("o3_1024 H<=3 t1.8", "o3_1024.txt", "point-cloud", 3, "1.8"),
    ("o3_2048 H<=2 t1.6", "o3_2048.txt", "point-cloud", 2, "1.6"),
    ("random16 H<=7", "random16.lower_distance_matrix", "lower-distance", 7, None),
]
MODES = ["off", "checks", "auto", "always"]


def cpu_of(cmd, env):
    """CPU seconds (user + system) and wall seconds of one run; its exit
    status must be 0."""
    t0 = time.monotonic()
    with open(os.devnull, "w") as null:
        p = subprocess.Popen(cmd, env=env, stdout=null, stderr=subprocess.PIPE)
        _, status, ru = os.wait4(p.pid, 0)
        err = p.stderr.read().decode(errors="replace")
        p.stderr.close()
    if status != 0:
        sys.exit("bench_verify_checks: %s: exit %d: %s" % (" ".join(cmd), status, err[-500:]))
    return ru.ru_utime + ru.ru_stime, time.monotonic() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--data", required=True, help="Ripser's examples")
    ap.add_argument("--backend", default="threads")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--json")
    a = ap.parse_args()
    if a.repeat < 1:
        sys.exit("bench_verify_checks: --repeat must be at least 1")
    topoml = os.path.join(os.path.abspath(a.build), "tools", "topoml")
    plugins = os.path.join(os.path.abspath(a.build), "plugins-out")
    work = tempfile.mkdtemp(prefix="topoml-bench-checks-")
    env = dict(os.environ)
    env.pop("TOPOML_CONFIG", None)
    env["TOPOML_PLUGIN_PATH"] = plugins
    configs = {}
    for m in MODES:
        cache = os.path.join(work, "cache-" + m)
        os.makedirs(cache, mode=0o700)
        configs[m] = os.path.join(work, m + ".yaml")
        with open(configs[m], "w") as f:
            f.write("verify: %s\ncache_dir: %s\n" % (m, cache))
    results, cases = [], []
    print("%-20s %9s %9s %9s %9s %9s %9s %9s" % ("case", "off", "checks", "auto", "always",
                                                 "checks", "auto", "always"))
    try:
        for name, file, fmt, dim, thr in CASES:
            cmd = [topoml, "barcode", "--format", fmt, "--dim", str(dim), "--backend", a.backend]
            if thr:
                cmd += ["--threshold", thr]
            cmd.append(os.path.join(a.data, file))
            times = {m: [] for m in MODES}
            walls = {m: [] for m in MODES}
            for m in MODES:
                for _ in range(a.warmup):
                    cpu_of(cmd + ["--config", configs[m]], env)
            for r in range(a.repeat):
                order = MODES if r % 2 == 0 else MODES[::-1]
                for m in order:
                    c, w = cpu_of(cmd + ["--config", configs[m]], env)
                    times[m].append(round(c, 6))
                    walls[m].append(round(w, 6))
            med = {m: statistics.median(times[m]) for m in MODES}
            over = {m: med[m] / med["off"] - 1 for m in MODES if m != "off"}
            results.append((name, med, over))
            print("%-20s %9.4f %9.4f %9.4f %9.4f %+8.1f%% %+8.1f%% %+8.1f%%" % (
                name, med["off"], med["checks"], med["auto"], med["always"],
                100 * over["checks"], 100 * over["auto"], 100 * over["always"]))
            for m in MODES:
                cases.append(artifact.case("%s verify:%s" % (name, m), "topoml barcode",
                                           times[m], backend=a.backend, mode=m,
                                           wall=walls[m], input=file))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    medians = {m: statistics.median(r[2][m] for r in results) for m in ("checks", "auto",
                                                                       "always")}
    print("median overhead over the cases: checks %+.1f%%, auto %+.1f%%, always %+.1f%%" % (
        100 * medians["checks"], 100 * medians["auto"], 100 * medians["always"]))
    if a.json:
        v = subprocess.run([topoml, "--version"], capture_output=True, text=True).stdout.strip()
        run = {"title": "Run-time verification, per layer: CPU seconds of one CLI call "
                        "(the first of its process, its kind checked before)",
               "machine": artifact.machine(), "versions": {"topoml": v},
               "commands": [" ".join(sys.argv)], "units": {"median": "s"},
               "statistic": "median CPU seconds (user + system) of the process",
               "baseline": "verify: off",
               "overhead_median": {m: round(x, 4) for m, x in medians.items()},
               "overhead_per_case": {r[0]: {m: round(x, 4) for m, x in r[2].items()}
                                     for r in results},
               "cases": cases}
        artifact.save(a.json, run)


if __name__ == "__main__":
    main()
