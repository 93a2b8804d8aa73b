#!/usr/bin/env python3
"""What the input side of the topoml CLI costs: reading a text point cloud,
and refusing a job that cannot fit in memory.

* read: `topoml barcode o3_4096.txt --format point-cloud --dim 0
  --threshold 0.01 --backend scalar --verbose` on Ripser's o3_4096.txt
  (729 KB, 4096 points in R^9). The --verbose timeline counts from the
  moment the context is open; its first line comes when the first stage
  (distances) starts, so that line's time is the read of the file (block
  reads, the text parser) and the few checks before the first stage.
* refuse: `topoml barcode --format point-cloud --dim 1` on 200 000 random
  points in the plane (a seeded file): refused with the memory estimate
  (exit status 1, "memory limit" on stderr) before any pass over all
  pairs. Timed as the whole command, reading included.

Each figure is the median of --repeat runs, as CPU time (user + system of
the command) and wall time (bench/timing.py), the two commands taken
in turn; the read's own time is a wall time from the timeline. Prints a
table and writes the run as a bench/results artifact
(bench/artifact.py; --json FILE, or - for stdout). Needs only the
standard library and a build tree.

  bench/bench_input.py --build build --data ../shared/data/ripser-examples \\
      [--repeat 15] [--json out.json]
"""

import argparse
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import artifact  # noqa: E402  (the one writer of bench/results/ files)
import timing  # noqa: E402

FIRST_STAGE = re.compile(r"^topoml info:\s+([0-9.]+) s: ", re.M)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", required=True, help="the build tree")
    ap.add_argument("--data", required=True, help="Ripser's examples (o3_4096.txt)")
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--json", help="write the figures here (- for stdout)")
    a = ap.parse_args()
    topoml = os.path.join(os.path.abspath(a.build), "tools", "topoml")
    o3 = os.path.join(a.data, "o3_4096.txt")
    if not os.path.exists(o3):
        sys.exit("no %s" % o3)
    tmp = tempfile.mkdtemp(prefix="topoml-bench-input-")
    env = dict(os.environ, XDG_CACHE_HOME=os.path.join(tmp, "xdg"))
    env.pop("TOPOML_CONFIG", None)
    env.pop("TOPOML_PLUGIN_PATH", None)
    big = os.path.join(tmp, "cloud200k.txt")
    rnd = random.Random(7)
    with open(big, "w") as f:
        for _ in range(200000):
            f.write("%.6f %.6f\n" % (rnd.random(), rnd.random()))

    read_cmd = [topoml, "barcode", o3, "--format", "point-cloud", "--dim", "0",
                "--threshold", "0.01", "--backend", "scalar", "--verbose"]
    refuse_cmd = [topoml, "barcode", "--format", "point-cloud", "--dim", "1", big]
    read_s = []

    def read():
        wall, cpu, r = timing.run(read_cmd, env)
        m = FIRST_STAGE.search(r.stderr)
        if not m:
            sys.exit("no timeline in --verbose's output:\n" + r.stderr)
        read_s.append(float(m.group(1)))
        return wall, cpu, r

    def refuse():
        wall, cpu, r = timing.run(refuse_cmd, env, status=1)
        if "memory limit" not in r.stderr or r.stdout:
            sys.exit("not refused for memory:\n" + r.stderr)
        return wall, cpu, r

    load_start = list(os.getloadavg())
    runs = timing.alternate({"read": read, "refuse": refuse}, a.repeat)
    load_end = list(os.getloadavg())
    refused_with = runs["refuse"]["last"].stderr.strip().splitlines()[-1]
    shutil.rmtree(tmp, ignore_errors=True)

    med = {k: {w: statistics.median(r[w]) for w in ("cpu", "wall")} for k, r in runs.items()}
    print("load average %s at the start, %s at the end; medians of %d runs" % (
        "/".join("%.1f" % x for x in load_start), "/".join("%.1f" % x for x in load_end),
        a.repeat))
    print("%-46s %10s %10s" % ("", "CPU", "wall"))
    print("%-46s %10s %8.1f ms" % ("read o3_4096.txt (timeline, to the first stage)", "",
                                   1e3 * statistics.median(read_s)))
    print("%-46s %7.1f ms %7.1f ms" % ("the whole command (--dim 0 --threshold 0.01)",
                                       1e3 * med["read"]["cpu"], 1e3 * med["read"]["wall"]))
    print("%-46s %7.1f ms %7.1f ms" % ("refuse 200 000 points, --dim 1",
                                       1e3 * med["refuse"]["cpu"], 1e3 * med["refuse"]["wall"]))
    print("refused with:", refused_with)
    if a.json:
        version = subprocess.run([topoml, "--version"], capture_output=True, text=True, env=env)
        machine = artifact.machine()
        machine["load_average_start"] = load_start
        artifact.save(a.json, {
            "title": "The CLI's input side: reading o3_4096.txt, refusing 200 000 points",
            "machine": machine,
            "versions": {"topoml": version.stdout.strip() or "?"},
            "commands": {"script": " ".join(["bench/bench_input.py"] + sys.argv[1:]),
                         "read": " ".join(read_cmd[1:]).replace(a.data + os.sep, ""),
                         "refuse": " ".join(refuse_cmd[1:]).replace(tmp + os.sep, "")},
            "statistic": "median of %d runs, the two commands taken in turn; the read is the "
                         "wall time of --verbose's first timeline line, the commands CPU "
                         "seconds (user + system), wall seconds in wall_times" % a.repeat,
            "refused_with": refused_with,
            "cases": [
                artifact.case("read o3_4096.txt (to the first stage)", "topoml barcode",
                              read_s),
                artifact.case("topoml barcode o3_4096.txt --dim 0 --threshold 0.01",
                              "topoml barcode", runs["read"]["cpu"],
                              wall_times=runs["read"]["wall"]),
                artifact.case("topoml barcode --dim 1, 200 000 points: refused",
                              "topoml barcode", runs["refuse"]["cpu"],
                              wall_times=runs["refuse"]["wall"])]})
    return 0


if __name__ == "__main__":
    sys.exit(main())
