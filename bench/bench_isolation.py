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

Each figure is the median of --repeat runs, as CPU time (user + system of
the command and of the processes it waited for: the probe and the helper)
and as wall time; the two settings of a figure are run in turn inside one
run (bench/timing.py), so a change of load on a shared machine falls
on both, and the load average at the start and the end is recorded. On a
loaded machine read the CPU figures. Prints a table and writes every run as
a bench/results artifact (bench/artifact.py; --json FILE, or - for
stdout). Needs only the standard library and a build tree with the tests'
plugins.

  bench/bench_isolation.py --build build [--quick] [--json out.json]
"""

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import artifact  # noqa: E402  (the one writer of bench/results/ files)
import timing  # noqa: E402


def compare(settings, repeat):
    """timing.alternate over {label: (cmd, env)}, with each setting's
    medians: {label: {"wall", "cpu", "wall_s", "cpu_s", "out"}}."""
    runs = timing.alternate({k: (lambda c=c, e=e: timing.run(c, e))
                             for k, (c, e) in settings.items()}, repeat)
    return {k: dict(r, wall_s=statistics.median(r["wall"]), cpu_s=statistics.median(r["cpu"]),
                    out=r["last"].stdout) for k, r in runs.items()}


def cases_of(name, runs, **extra):
    """The artifact's cases of one figure: CPU times as the times, the wall
    times kept beside them."""
    return [artifact.case(name, label, r["cpu"], wall_times=r["wall"],
                          wall_median=r["wall_s"], **extra) for label, r in runs.items()]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", required=True, help="the build tree")
    ap.add_argument("--repeat", type=int, default=9)
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

    load_start = list(os.getloadavg())
    results = {"probe": {}, "ops": []}
    cases = []
    # The build tree's own plugins are probed in both runs; the difference
    # is the one plugin.
    probe = compare({"build tree's plugins": ([topoml, "backends"],
                                              dict(env, TOPOML_PLUGIN_PATH=empty)),
                     "one more plugin": ([topoml, "backends"],
                                         dict(env, TOPOML_PLUGIN_PATH=plugin_dir))}, a.repeat)
    base, one = probe["build tree's plugins"], probe["one more plugin"]
    results["probe"] = {k + "_s": {"cpu": r["cpu_s"], "wall": r["wall_s"]}
                        for k, r in (("backends", base), ("backends_one_more_plugin", one))}
    results["probe"]["per_plugin_s"] = {w: one[w + "_s"] - base[w + "_s"]
                                        for w in ("cpu", "wall")}
    cases += cases_of("topoml backends", probe)

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
        runs = compare({"in the host": (args + ["--config", configs["none"]], e),
                        "isolated": (args + ["--config", configs["process"]], e)}, a.repeat)
        host, iso = runs["in the host"], runs["isolated"]
        same = host["out"] == iso["out"]
        name = "topoml %s%s, %d points" % (cmd, " --dim 1" if cmd == "barcode" else "", n)
        cases += cases_of(name, runs, same_output=same)
        row = {"command": cmd, "points": n, "same_output": same}
        for w in ("cpu", "wall"):
            t_in, t_iso = host[w + "_s"], iso[w + "_s"]
            row[w] = {"in_process_s": t_in, "isolated_s": t_iso, "overhead_s": t_iso - t_in,
                      "overhead_pct": 100.0 * (t_iso - t_in) / t_in}
        results["ops"].append(row)
    load_end = list(os.getloadavg())
    shutil.rmtree(tmp, ignore_errors=True)

    p = results["probe"]
    print("load average %s at the start, %s at the end; medians of %d runs" % (
        "/".join("%.1f" % x for x in load_start), "/".join("%.1f" % x for x in load_end),
        a.repeat))
    for w in ("cpu", "wall"):
        print("probe (%s): `topoml backends` %.1f ms; with one more plugin %.1f ms: %.1f ms per "
              "plugin" % (w, 1e3 * p["backends_s"][w], 1e3 * p["backends_one_more_plugin_s"][w],
                          1e3 * p["per_plugin_s"][w]))
    print("%-9s %7s %5s %12s %12s %12s %9s %5s" % ("command", "points", "time", "in-process",
                                                   "isolated", "overhead", "overhead", "same"))
    for r in results["ops"]:
        for w in ("cpu", "wall"):
            f = r[w]
            print("%-9s %7d %5s %10.1f ms %10.1f ms %10.1f ms %8.1f%% %5s" % (
                r["command"], r["points"], w, 1e3 * f["in_process_s"], 1e3 * f["isolated_s"],
                1e3 * f["overhead_s"], f["overhead_pct"], "yes" if r["same_output"] else "NO"))
    if a.json:
        version = subprocess.run([topoml, "--version"], capture_output=True, text=True, env=env)
        machine = artifact.machine()
        machine["load_average_start"] = load_start
        artifact.save(a.json, {
            "title": "Plugin isolation: what probing and running a plugin in its own process cost",
            "machine": machine,
            "versions": {"topoml": version.stdout.strip() or "?"},
            "commands": [" ".join(["bench/bench_isolation.py"] + sys.argv[1:])],
            "baseline": "in the host",
            "statistic": "median of %d runs, CPU seconds (user + system) of the whole command "
                         "and the processes it waited for; wall seconds in each case's "
                         "wall_times and wall_median; the two settings of a case run in turn"
                         % a.repeat,
            "probe": results["probe"], "ops": results["ops"],
            "cases": cases})
    return 0 if all(r["same_output"] for r in results["ops"]) else 1


if __name__ == "__main__":
    sys.exit(main())
