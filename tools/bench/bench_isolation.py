#!/usr/bin/env python3
"""What running plugin code outside the host costs, through the topoml CLI.

Two figures:

* probe: a context probes every plugin it finds in a helper process
  (topoml-plugin-host --probe) before the gate decides. Timed as
  `topoml backends` with an empty plugin folder and with one plugin (the
  scalar reference's copy built by the tests, conformance-plugins/
  scalar-copy), no other plugin folder; the difference is what one plugin's
  probe process adds to every command.
* ops: the same plugin, enabled by the configuration, once loaded into the
  host (`isolation: none`) and once in its own process (`isolation:
  process`: a helper started on the first call, inputs and outputs through
  memfds). Timed as whole commands — `topoml distance` and `topoml
  barcode` on random clouds — so the figure includes the helper's start;
  the outputs of the two runs must be identical.

Each figure is the best of --repeat runs (wall-clock). Prints a table and
writes every run as a bench/results artifact (tools/bench/artifact.py;
--json FILE, or - for stdout). Needs only the
standard library and a build tree with the tests' plugins.

  tools/bench/bench_isolation.py --build build [--quick] [--json out.json]
"""

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import artifact  # noqa: E402  (the one writer of bench/results/ files)


def timed(cmd, env, repeat):
    """(every run's wall time, the last run's output)."""
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        r = subprocess.run(cmd, capture_output=True, text=True, env=env)
        dt = time.perf_counter() - t0
        if r.returncode != 0:
            sys.exit("FAILED (%d): %s\n%s" % (r.returncode, " ".join(cmd), r.stderr))
        times.append(dt)
        out = r.stdout
    return times, out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", required=True, help="the build tree")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="small sizes only")
    ap.add_argument("--json", help="write the figures here (- for stdout)")
    a = ap.parse_args()
    a.build = os.path.abspath(a.build)
    topoml = os.path.join(a.build, "tools", "topoml")
    plugin_dir = os.path.join(a.build, "conformance-plugins", "scalar-copy")
    if not os.path.exists(os.path.join(plugin_dir, "topoml-backend-scalar-copy.so")):
        sys.exit("no %s: build the tests first" % plugin_dir)
    tmp = tempfile.mkdtemp(prefix="topoml-bench-iso-")
    empty = os.path.join(tmp, "empty")
    os.mkdir(empty, 0o755)
    env = dict(os.environ, XDG_CACHE_HOME=os.path.join(tmp, "cache"))
    env.pop("TOPOML_CONFIG", None)
    env.pop("TOPOML_PLUGIN_PATH", None)
    configs = {}
    for mode in ("none", "process"):
        path = os.path.join(tmp, mode + ".yaml")
        with open(path, "w") as f:
            f.write("enable: [scalar-copy]\nisolation: %s\n" % mode)
        configs[mode] = path

    results = {"probe": {}, "ops": []}
    cases = []
    # The build tree's own plugins are probed in both runs; the difference
    # is the one plugin.
    runs_base, _ = timed([topoml, "backends"], dict(env, TOPOML_PLUGIN_PATH=empty), a.repeat)
    runs_one, _ = timed([topoml, "backends"], dict(env, TOPOML_PLUGIN_PATH=plugin_dir), a.repeat)
    base, one = min(runs_base), min(runs_one)
    results["probe"] = {"backends_s": base, "backends_one_more_plugin_s": one,
                        "per_plugin_s": one - base}
    cases += [artifact.case("topoml backends", "build tree's plugins", runs_base, median=base),
              artifact.case("topoml backends", "one more plugin", runs_one, median=one)]

    rng = random.Random(11)
    sizes = [(200, "distance"), (1000, "distance"), (200, "barcode")]
    if not a.quick:
        sizes += [(3000, "distance"), (600, "barcode")]
    for n, cmd in sizes:
        path = os.path.join(tmp, "cloud%d.txt" % n)
        if not os.path.exists(path):
            with open(path, "w") as f:
                for _ in range(n):
                    f.write("%.17g %.17g %.17g\n" % (rng.random(), rng.random(), rng.random()))
        args = [topoml, cmd, path, "--backend", "scalar-copy"]
        if cmd == "barcode":
            args += ["--format", "point-cloud", "--dim", "1"]
        e = dict(env, TOPOML_PLUGIN_PATH=plugin_dir)
        runs_in, out_in = timed(args + ["--config", configs["none"]], e, a.repeat)
        runs_iso, out_iso = timed(args + ["--config", configs["process"]], e, a.repeat)
        t_in, t_iso = min(runs_in), min(runs_iso)
        name = "topoml %s%s, %d points" % (cmd, " --dim 1" if cmd == "barcode" else "", n)
        cases += [artifact.case(name, "in the host", runs_in, median=t_in),
                  artifact.case(name, "isolated", runs_iso, median=t_iso,
                                same_output=out_in == out_iso)]
        results["ops"].append({"command": cmd, "points": n, "in_process_s": t_in,
                               "isolated_s": t_iso, "overhead_s": t_iso - t_in,
                               "overhead_pct": 100.0 * (t_iso - t_in) / t_in,
                               "same_output": out_in == out_iso})

    p = results["probe"]
    print("probe: `topoml backends` %.1f ms; with one more plugin %.1f ms: %.1f ms per plugin"
          % (1e3 * p["backends_s"], 1e3 * p["backends_one_more_plugin_s"],
             1e3 * p["per_plugin_s"]))
    print("%-9s %7s %12s %12s %12s %9s %5s" % ("command", "points", "in-process", "isolated",
                                               "overhead", "overhead", "same"))
    for r in results["ops"]:
        print("%-9s %7d %10.1f ms %10.1f ms %10.1f ms %8.1f%% %5s" % (
            r["command"], r["points"], 1e3 * r["in_process_s"], 1e3 * r["isolated_s"],
            1e3 * r["overhead_s"], r["overhead_pct"], "yes" if r["same_output"] else "NO"))
    if a.json:
        version = subprocess.run([topoml, "--version"], capture_output=True, text=True, env=env)
        artifact.save(a.json, {
            "title": "Plugin isolation: what probing and running a plugin in its own process cost",
            "machine": artifact.machine(),
            "versions": {"topoml": version.stdout.strip() or "?"},
            "commands": [" ".join(["tools/bench/bench_isolation.py"] + sys.argv[1:])],
            "baseline": "in the host",
            "statistic": "best of %d runs, wall seconds of the whole command" % a.repeat,
            "cases": cases})
    return 0 if all(r["same_output"] for r in results["ops"]) else 1


if __name__ == "__main__":
    sys.exit(main())
