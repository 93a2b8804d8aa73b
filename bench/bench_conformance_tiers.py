#!/usr/bin/env python3
"""What a run of topoml-conformance costs: the quick tier (what the gate
runs on a plugin's first use, with --certify --fail-fast as the gate does)
and the full tier (what CI runs on every plugin the build produces), on the
CPU plugins of the build tree.

Each run is

  topoml-conformance --plugin build/plugins-out/topoml-backend-NAME.so
      --tier T --certify --fail-fast --cache-dir (a fresh folder)
      --seed S --json R.json --quiet

and is timed as CPU time (user + system of the tool and of the processes it
waited for) and as wall time; the case count, the verdict and the five
slowest cases come from the JSON the tool writes. The plugins and tiers are
run in turn inside each of --repeat rounds (bench/timing.py), so that
a change of load on a shared machine falls on all of them; the figure is
the median, and the load average at the start and the end is recorded. Prints a table and writes the
run as a bench/results artifact (bench/artifact.py; --json FILE, or -
for stdout). Needs only the standard library and a build tree.

  bench/bench_conformance_tiers.py --build build [--repeat 3] \\
      [--plugins scalar,threads,cpp-compat] [--tiers quick,full] \\
      [--modes session,per-case] [--json out.json]

--modes: `session` (the default: one process per plugin runs its cases one
after another) and `per-case` (--process-per-case: a new process for each
case, as before), run in turn in the same rounds so that their ratio is
measured under the same load.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import artifact  # noqa: E402  (the one writer of bench/results/ files)
import timing  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", required=True, help="the build tree")
    ap.add_argument("--plugins", default="scalar,threads,cpp-compat",
                    help="plugins of build/plugins-out/, comma-separated")
    ap.add_argument("--tiers", default="quick,full")
    ap.add_argument("--modes", default="session",
                    help="session, per-case, or both comma-separated")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1,
                    help="seed of the cases generated from the capability records")
    ap.add_argument("--timeout", type=float, default=1200, help="seconds one run may take")
    ap.add_argument("--json", help="write the figures here (- for stdout)")
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    tool = os.path.join(build, "tools", "topoml-conformance")
    plugins, tiers, modes = a.plugins.split(","), a.tiers.split(","), a.modes.split(",")
    if not set(modes) <= {"session", "per-case"}:
        sys.exit("--modes takes session and per-case")
    for p in plugins:
        if not os.path.exists(os.path.join(build, "plugins-out", "topoml-backend-%s.so" % p)):
            sys.exit("no plugin %s in %s/plugins-out: build it first" % (p, build))
    tmp = tempfile.mkdtemp(prefix="topoml-bench-conf-")
    env = dict(os.environ, XDG_CACHE_HOME=os.path.join(tmp, "xdg"))
    env.pop("TOPOML_CONFIG", None)
    env.pop("TOPOML_PLUGIN_PATH", None)

    def one_run(plugin, tier, mode):
        """One certification run in a fresh cache folder: (wall, cpu, report)."""
        cache, report = os.path.join(tmp, "cache"), os.path.join(tmp, "r.json")
        shutil.rmtree(cache, ignore_errors=True)
        cmd = [tool, "--plugin", os.path.join(build, "plugins-out",
                                              "topoml-backend-%s.so" % plugin),
               "--tier", tier, "--certify", "--fail-fast", "--cache-dir", cache,
               "--seed", str(a.seed), "--json", report, "--quiet"] + (
                   ["--process-per-case"] if mode == "per-case" else [])
        t = timing.run(cmd, env, a.timeout)
        if t is None:
            sys.exit("%s, tier %s: over %g s" % (plugin, tier, a.timeout))
        with open(report, encoding="utf-8") as f:
            return t[0], t[1], json.load(f)

    load_start = list(os.getloadavg())
    runs = timing.alternate({(p, t, m): (lambda p=p, t=t, m=m: one_run(p, t, m))
                             for t in tiers for p in plugins for m in modes}, a.repeat)
    load_end = list(os.getloadavg())
    shutil.rmtree(tmp, ignore_errors=True)

    rows, cases = [], []
    for (plugin, tier, mode), r in runs.items():
        rep = r["last"]
        pr = rep["plugins"][0]
        row = {"plugin": plugin, "tier": tier, "mode": mode, "cases": pr["cases_run"],
               "generated_cases": rep.get("generated_cases"), "verdict": pr["verdict"],
               "counts": pr["counts"], "cpu_s": statistics.median(r["cpu"]),
               "wall_s": statistics.median(r["wall"]),
               "cases_seconds": sum(c.get("seconds") or 0 for c in pr.get("cases", [])),
               "slowest_cases": sorted(([c["name"], c.get("seconds") or 0]
                                        for c in pr.get("cases", [])),
                                       key=lambda x: -x[1])[:5]}
        rows.append(row)
        cases.append(artifact.case("%s tier, %s" % (tier, mode), plugin, r["cpu"],
                                   wall_times=r["wall"],
                                   wall_median=row["wall_s"], cases_run=row["cases"],
                                   verdict=row["verdict"], counts=row["counts"]))

    print("load average %s at the start, %s at the end; medians of %d runs" % (
        "/".join("%.1f" % x for x in load_start), "/".join("%.1f" % x for x in load_end),
        a.repeat))
    print("%-11s %-6s %-9s %6s %8s %10s %10s %10s" % ("plugin", "tier", "mode", "cases",
                                                     "verdict", "CPU s", "wall s", "in cases"))
    for r in rows:
        print("%-11s %-6s %-9s %6d %8s %10.2f %10.2f %10.2f" % (
            r["plugin"], r["tier"], r["mode"], r["cases"], r["verdict"], r["cpu_s"], r["wall_s"],
            r["cases_seconds"]))
    if a.json:
        rep = next(iter(runs.values()))["last"]
        version = subprocess.run([tool.replace("topoml-conformance", "topoml"), "--version"],
                                 capture_output=True, text=True, env=env)
        machine = artifact.machine()
        machine["load_average_start"] = load_start
        artifact.save(a.json, {
            "title": "topoml-conformance: the quick and full tiers on the CPU plugins",
            "machine": machine,
            "versions": {"topoml": version.stdout.strip() or "?",
                         "suite": rep.get("suite_version", "?")},
            "commands": [" ".join(["bench/bench_conformance_tiers.py"] + sys.argv[1:])],
            "baseline": "scalar" if "scalar" in plugins else None,
            "statistic": "median of %d runs, CPU seconds (user + system) of topoml-conformance "
                         "and the processes it waited for; wall seconds in each case's "
                         "wall_times and wall_median; plugins, tiers and modes run in turn"
                         % a.repeat,
            "seed": a.seed,
            "runs": rows,
            "cases": cases})
    return 0 if all(r["verdict"] == "pass" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
