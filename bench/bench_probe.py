#!/usr/bin/env python3
"""What plugin probes cost a topoml command, before and after probing on need,
and with the probe reports kept between commands.

Every topoml process used to probe every plugin it found (one helper process
each, at context creation), so a command paid for the slowest probe — on a
GPU machine the CUDA initialisation of the cuda and triton-bridge plugins —
even when it ran on the scalar reference. Now the plugins are probed only
when a call needs them (docs/architecture.md, "Loading a plugin").

This times whole commands with 0, 1 and 3 plugins whose probe sleeps
(the tests' fault plugin PROBE_SLOW, TOPOML_TEST_PROBE_MS, default 400 ms;
copies under distinct file names), on a seeded point cloud of celegans'
size (297 points in R^3, Rips up to dimension 2) or --data FILE:

* `topoml barcode --backend scalar`  (needs no plugin)
* `topoml barcode --backend threads` (names a plugin: probes the file named
                                      for it, topoml-backend-threads.so)
* `topoml barcode`                   (automatic choice: probes every plugin)
* `topoml backends`                  (lists: probes every plugin)

all under `gate: strict` (no certification on first use, which would time
the conformance suite instead; `enable: [threads]` lets the named plugin
run), with the build tree's own plugins found as usual: on a GPU machine whose build has the cuda and triton-bridge plugins,
the rows with 0 slow plugins time their real probes. --baseline BUILD
times a build of the earlier code the same way. Each command starts without
a kept probe report (the cache folder's *.probe files are removed before it,
untimed), so that every plugin it needs is probed in a child process, as
before the probe cache; --probe-cache times --build a second time with the
reports kept (probe_cache, on by default), as on a machine that ran topoml
before: one untimed run of each command fills the cache folder first.
Every command, plugin count and build is taken in turn inside each round, the order reversed
every other round (bench/timing.py), so a change of load on a shared
machine falls on all of them alike. Medians of --repeat runs, wall seconds (a probe that
sleeps costs wall time, not CPU time), and CPU seconds (user + system of
the command and its helper processes: steadier on a loaded machine) beside
them; the load average at the start and the end.
Prints a table and writes a bench/results artifact (bench/artifact.py;
--json FILE, or - for stdout). Standard library only.

  bench/bench_probe.py --build build [--baseline OLD_BUILD] [--probe-cache]
                             [--json out.json]
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

SLOW = os.path.join("fault-plugins", "probe-slow", "topoml-backend-fault-probe-slow.so")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", required=True, help="the build tree (with the tests' plugins)")
    ap.add_argument("--baseline", help="a build tree of the code to compare with")
    ap.add_argument("--label", default="after", help="what to call --build's runs")
    ap.add_argument("--baseline-label", default="before",
                    help="what to call --baseline's runs")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--probe-ms", type=int, default=400, help="each slow probe's sleep")
    ap.add_argument("--data", help="input file (default: a seeded 297-point cloud)")
    ap.add_argument("--format", default="point-cloud", help="--format of --data")
    ap.add_argument("--dim", type=int, default=2)
    ap.add_argument("--probe-cache", action="store_true",
                    help="also time --build with the probe reports of earlier commands kept")
    ap.add_argument("--json", help="write the figures here (- for stdout)")
    a = ap.parse_args()
    if a.repeat < 1:
        ap.error("--repeat must be at least 1")
    # (label, build tree, whether probe reports are kept between commands)
    builds = [(a.label, os.path.abspath(a.build), False)]
    if a.probe_cache:
        builds.append(("%s, probe reports kept" % a.label, os.path.abspath(a.build), True))
    if a.baseline:
        builds.append((a.baseline_label, os.path.abspath(a.baseline), False))
    slow = os.path.join(builds[0][1], SLOW)
    if not os.path.exists(slow):
        sys.exit("no %s: build the tests' plugins first (target fault_probe_slow)" % slow)

    tmp = tempfile.mkdtemp(prefix="topoml-bench-probe-")
    try:
        data = a.data
        if not data:
            data = os.path.join(tmp, "cloud297.txt")
            rng = random.Random(297)
            with open(data, "w") as f:
                for _ in range(297):
                    f.write("%.17g %.17g %.17g\n" % (rng.random(), rng.random(), rng.random()))
        config = os.path.join(tmp, "strict.yaml")
        with open(config, "w") as f:
            f.write("gate: strict\nenable: [threads]\n")
        folders = {}
        for count in (0, 1, 3):
            d = os.path.join(tmp, "plugins%d" % count)
            os.mkdir(d, 0o700)
            for k in range(count):
                shutil.copy(slow, os.path.join(d, "topoml-backend-slow-%d.so" % k))
            folders[count] = d
        env = dict(os.environ, TOPOML_TEST_PROBE_MS=str(a.probe_ms))
        env.pop("TOPOML_CONFIG", None)
        env.pop("TOPOML_TEST_PROBE_LOG", None)

        commands = [
            ("barcode --backend scalar", ["barcode", "--backend", "scalar", "--format",
                                          a.format, "--dim", str(a.dim), data]),
            ("barcode --backend threads", ["barcode", "--backend", "threads", "--format",
                                           a.format, "--dim", str(a.dim), data]),
            ("barcode (automatic)", ["barcode", "--format", a.format, "--dim", str(a.dim),
                                     data]),
            ("backends", ["backends"]),
        ]

        def drop_reports(cache):
            """Remove the probe reports kept in cache folder `cache`."""
            if os.path.isdir(cache):
                for name in os.listdir(cache):
                    if name.endswith(".probe"):
                        os.unlink(os.path.join(cache, name))

        def setting(cmd, e, keep):
            def go():
                if not keep:
                    drop_reports(os.path.join(e["XDG_CACHE_HOME"], "topoml"))
                return timing.run(cmd, e)
            return go

        settings = {}
        for what, args in commands:
            for count, folder in folders.items():
                for label, build, keep in builds:
                    cmd = [os.path.join(build, "tools", "topoml")] + args[:1] + \
                        ["--config", config] + args[1:]
                    # One cache folder per setting: certificates (none under
                    # gate: strict), verified sizes, and the kept reports.
                    e = dict(env, TOPOML_PLUGIN_PATH=folder,
                             XDG_CACHE_HOME=os.path.join(tmp, "cache-%d" % builds.index(
                                 (label, build, keep))))
                    settings[(what, count, label)] = setting(cmd, e, keep)
                    if keep:
                        timing.run(cmd, e)  # the earlier command whose reports are kept
        load_start = list(os.getloadavg())
        runs = timing.alternate(settings, a.repeat)
        load_end = list(os.getloadavg())
        times = {k: r["wall"] for k, r in runs.items()}
        cpus = {k: r["cpu"] for k, r in runs.items()}
        outputs = {}
        for (what, count, _), r in runs.items():
            if what.startswith("barcode"):
                outputs.setdefault((what, count), set()).add(r["last"].stdout)
        same = all(len(v) == 1 for v in outputs.values())

        cases = []
        labels = [label for label, _, _ in builds]
        print("%-26s %8s " % ("command", "plugins") +
              " ".join("%12s" % ("%s (ms)" % l) for l in labels) + "   " +
              " ".join("%14s" % ("%s CPU ms" % l) for l in labels))
        for what, _ in commands:
            for count in folders:
                row, cpu_row = [], []
                for label in labels:
                    t = times[(what, count, label)]
                    c = cpus[(what, count, label)]
                    med = statistics.median(t)
                    row.append(med)
                    cpu_row.append(statistics.median(c))
                    cases.append(artifact.case(
                        "topoml %s, %d slow-probe plugin%s" % (what, count,
                                                                "" if count == 1 else "s"),
                        "topoml (%s)" % label, t, median=med, slow_plugins=count,
                        probe_ms=a.probe_ms, cpu_times=c, cpu_median=cpu_row[-1]))
                print("%-26s %8d " % (what, count) +
                      " ".join("%12.1f" % (1e3 * m) for m in row) + "   " +
                      " ".join("%14.1f" % (1e3 * m) for m in cpu_row))
        print("barcodes identical across builds and plugin counts: %s" % ("yes" if same else "NO"))
        print("load average %s at the start, %s at the end" % (
            "/".join("%.1f" % x for x in load_start), "/".join("%.1f" % x for x in load_end)))
        if a.json:
            versions = {}
            for label, build, _ in builds:
                v = subprocess.run([os.path.join(build, "tools", "topoml"), "--version"],
                                   capture_output=True, text=True, env=env)
                versions["topoml (%s)" % label] = v.stdout.strip() or "?"
            machine = artifact.machine()
            machine["load_average_start"] = load_start
            artifact.save(a.json, {
                "title": "Plugin probes: what they cost a command, before and after probing "
                         "on need" + (", and with the probe reports kept" if a.probe_cache
                                      else ""),
                "machine": machine,
                "versions": versions,
                "commands": [" ".join(["bench/bench_probe.py"] + sys.argv[1:])],
                "baseline": "topoml (%s)" % (a.baseline_label if a.baseline else a.label),
                "statistic": "median of %d runs, wall seconds of the whole command; CPU "
                             "seconds (user + system, with its helper processes) in each "
                             "case's cpu_times and cpu_median; every setting run in turn"
                             % a.repeat,
                "input": a.data or "seeded cloud: 297 points in the unit cube of R^3",
                "dim": a.dim,
                "same_output": same,
                "cases": cases})
        return 0 if same else 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
