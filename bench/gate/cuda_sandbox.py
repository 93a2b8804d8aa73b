#!/usr/bin/env python3
"""The gate and the sandbox in front of a GPU plugin, measured on a machine
with an NVIDIA GPU: what a user of `--backend cuda` meets on a fresh machine
and afterwards.

For each isolation setting (`auto`, the default: the shipped cuda plugin
runs in the host process; `process`: every call in a sandboxed helper with
the NVIDIA driver's rules) and a fresh cache folder each:

- the first call (`topoml barcode --backend cuda --verbose`): its wall
  time, and the stages its log names (probe, certification, the first
  call's "verifying on the reference");
- the calls after it, on every input of the set, each --repeat times:
  wall time with `verify: auto` (the default) and with `verify: off`,
  and the scalar reference's time on the same input, taken in turn;
- every answer compared with the scalar reference's stdout: a
  difference is an error of this script (exit 1), not a figure.

Then `topoml-conformance --plugin cuda --tier full` (the cases in
sandboxed children) and `--tier quick --certify` (what a first use runs):
verdict, case count, wall time.

Prints a table and writes JSON (--json). Needs the build tree only.

  bench/gate/cuda_sandbox.py --build BUILD --data RIPSER_EXAMPLES \\
      [--repeat 3] [--json bench/results/gate/cuda-sandbox-h200.json]
"""
import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time


def run(cmd, env, timeout=900):
    t0 = time.perf_counter()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout,
                           errors="replace")
    except subprocess.TimeoutExpired:
        return None, time.perf_counter() - t0
    return r, time.perf_counter() - t0


def bars(text):
    """The output as a comparable value: each dimension's bars as a sorted
    list (the order of bars within a dimension is the engine's)."""
    out, cur = [], None
    for line in text.splitlines():
        if line.startswith("persistence intervals in dim"):
            cur = [line, []]
            out.append(cur)
        elif cur is not None:
            cur[1].append(line)
        else:
            out.append([line, []])
    return [(h, sorted(b)) for h, b in out]


def inputs(data, tmp):
    """(name, topoml arguments) of the call set."""
    import random
    rnd = random.Random(5)
    cloud = os.path.join(tmp, "cloud2000.txt")
    with open(cloud, "w") as f:
        for _ in range(2000):
            f.write("%.6f %.6f %.6f\n" % (rnd.random(), rnd.random(), rnd.random()))
    return [
        ("sphere_3_192 dim 2", ["--dim", "2", os.path.join(data, "sphere_3_192.lower_distance_matrix")]),
        ("o3_1024 dim 3 t 1.8", ["--dim", "3", "--threshold", "1.8", "--format", "point-cloud",
                                 os.path.join(data, "o3_1024.txt")]),
        ("random 2000 in R^3 dim 1", ["--dim", "1", "--format", "point-cloud", cloud]),
    ]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--conformance", default="full,quick",
                    help="tiers of topoml-conformance to run on the plugin ('' for none)")
    ap.add_argument("--plugin", default="cuda", help="the plugin measured (default cuda)")
    ap.add_argument("--json")
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    topoml = os.path.join(build, "tools", "topoml")
    conf = os.path.join(build, "tools", "topoml-conformance")
    plugin = os.path.join(build, "plugins-out", "topoml-backend-%s.so" % a.plugin)
    tmp = tempfile.mkdtemp(prefix="topoml-cuda-gate-")
    env = dict(os.environ)
    env.pop("TOPOML_CONFIG", None)
    env["XDG_CACHE_HOME"] = os.path.join(tmp, "xdg")
    calls = inputs(a.data, tmp)
    doc = {"what": "the gate and the sandbox in front of the cuda plugin",
           "machine": {"cpu": platform.processor(), "host_cpus": os.cpu_count()},
           "settings": {}, "conformance": {}}
    try:
        doc["machine"]["gpu"] = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
            capture_output=True, text=True).stdout.strip()
    except OSError:
        doc["machine"]["gpu"] = None
    r, _ = run([topoml, "backends"], env)
    doc["backends"] = r.stdout if r else None
    print(doc["backends"] or "topoml backends: no answer")

    want = {}
    for name, args in calls:
        r, t = run([topoml, "barcode", "--backend", "scalar", "--quiet"] + args, env)
        if r is None or r.returncode != 0:
            sys.exit("the reference failed on %s: %s" % (name, r.stderr if r else "timeout"))
        want[name] = r.stdout

    bad = []
    for isolation in ("auto", "process"):
        cache = os.path.join(tmp, "cache-" + isolation)
        os.makedirs(cache, mode=0o700)
        cfg = {}
        for verify in ("auto", "off"):
            cfg[verify] = os.path.join(tmp, "%s-%s.yaml" % (isolation, verify))
            with open(cfg[verify], "w") as f:
                f.write("isolation: %s\ncache_dir: %s\nverify: %s\n" % (isolation, cache, verify))
        first_name, first_args = calls[0]
        r, t = run([topoml, "barcode", "--backend", a.plugin, "--verbose", "--config", cfg["auto"]]
                   + first_args, env)
        log = r.stderr if r else "timeout"
        if r is None or r.returncode != 0 or bars(r.stdout) != bars(want[first_name]):
            bad.append("%s first call: %s" % (isolation, "timeout" if r is None else
                                               "exit %d" % r.returncode if r.returncode else
                                               "another barcode than the reference's"))
        stages = [ln for ln in log.splitlines()
                  if re.search(r"certif|probe|verifying|sandbox|isolat|helper|backend", ln)]
        setting = {"first_call_seconds": round(t, 2), "first_call_log": stages[:40], "calls": []}
        print("isolation %s: first call %.2f s" % (isolation, t))
        for name, args in calls:
            times = {"auto": [], "off": [], "scalar": []}
            for _ in range(a.repeat):
                for k in ("auto", "off", "scalar"):
                    if k == "scalar":
                        cmd = [topoml, "barcode", "--backend", "scalar", "--quiet"] + args
                    else:
                        cmd = [topoml, "barcode", "--backend", a.plugin, "--quiet",
                               "--config", cfg[k]] + args
                    r, t = run(cmd, env)
                    if r is None or r.returncode != 0 or bars(r.stdout) != bars(want[name]):
                        bad.append("%s %s %s: %s" % (isolation, k, name,
                                                     "timeout" if r is None else
                                                     "exit %d: %s" % (r.returncode, r.stderr[-300:])
                                                     if r.returncode else "another barcode"))
                        continue
                    times[k].append(t)
            row = {"input": name}
            for k, v in times.items():
                row[k + "_seconds"] = round(statistics.median(v), 4) if v else None
            if row["auto_seconds"] and row["off_seconds"]:
                row["verify_auto_overhead"] = round(row["auto_seconds"] / row["off_seconds"] - 1, 4)
            setting["calls"].append(row)
            print("  %-26s verify auto %8.3f s  off %8.3f s  scalar %8.3f s" % (
                name, row["auto_seconds"] or -1, row["off_seconds"] or -1,
                row["scalar_seconds"] or -1))
        doc["settings"][isolation] = setting

    for tier in [t for t in a.conformance.split(",") if t]:
        cache = os.path.join(tmp, "conf-" + tier)
        os.makedirs(cache, mode=0o700)
        rep = os.path.join(tmp, "conf-%s.json" % tier)
        cmd = [conf, "--plugin", plugin, "--tier", tier, "--cache-dir", cache, "--quiet",
               "--json", rep]
        if tier == "quick":
            cmd += ["--certify", "--fail-fast"]
        r, t = run(cmd, env, timeout=1800)
        row = {"seconds": round(t, 2), "exit": None if r is None else r.returncode}
        try:
            with open(rep) as f:
                p = json.load(f)["plugins"][0]
            row["verdict"] = p.get("verdict")
            cases = p.get("cases", [])
            row["cases"] = len(cases)
            row["not_passed"] = [{"name": c["name"], "result": c["result"],
                                  "detail": c.get("detail", "")[:200]}
                                 for c in cases if c["result"] not in ("PASS", "SKIP")][:10]
            slow = sorted(cases, key=lambda c: -c.get("seconds", 0))[:5]
            row["slowest"] = [{"name": c["name"], "seconds": c.get("seconds")} for c in slow]
        except (OSError, ValueError, KeyError, IndexError) as e:
            row["verdict"] = "no report (%s)" % e
            row["stderr"] = (r.stderr if r else "timeout")[-1000:]
        doc["conformance"][tier] = row
        print("conformance %s tier: %s, %s cases, %.1f s" % (tier, row.get("verdict"),
                                                             row.get("cases"), t))
    doc["wrong_or_failed_calls"] = bad
    if a.json:
        os.makedirs(os.path.dirname(os.path.abspath(a.json)), exist_ok=True)
        with open(a.json, "w") as f:
            json.dump(doc, f, indent=1)
    for b in bad:
        print("FAILED: " + b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
