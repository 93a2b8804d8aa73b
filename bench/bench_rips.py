#!/usr/bin/env python3
"""CPU benchmark of Vietoris-Rips barcodes: topoml (scalar reference, and
the threads backend with the edge collapse off, on and auto), giotto-ph
(collapse on and off), ripser.py and Ripser (Debian's 1.2.1), every program
on the same input, at the same thread count, alternating, in one run. The
table gives each program's median time and peak RSS and the ratios the
targets of issue 19 are stated in; the JSON (machine facts, versions, the
exact commands, every time) goes to bench/results/.

    bench/bench_rips.py --topoml build/tools/topoml \\
        [--python /tmp/venv/bin/python] [--threads 1,2] [--reps 3] \\
        [--big] [--torus N] [--only CASE]... [--json FILE]
    bench/bench_rips.py --markdown FILE.json   # the table, as Markdown
    bench/bench_rips.py --collapse-probe --topoml build/tools/topoml \
        [--before OTHER/topoml] [--reps 5] [--json FILE]

    tools/bench/bench_rips.py --small-clouds --python /work/main/.venv/bin/python \
        [--reps 7] [--only CASE]... [--json FILE]

--small-clouds times everyday inputs in one Python process (py_rips.py
--sweep): seeded clouds of 100 to 2000 points at maxdim 1 and 2, no
threshold, `topoml.ripser` with its defaults against `topoml.barcodes` with
collapse=False and collapse=True and giotto-ph's `ripser_parallel` with its
defaults (one thread, no collapse), interleaved, medians of --reps calls
after one untimed; the ratios the targets of issue 34 are stated in (the
defaults within 10% of the better collapse setting, and at most 1.0x
giotto-ph's defaults). The JSON goes to bench/results/small-clouds-2core.json
by default.

--collapse-probe measures the rule of `--collapse auto` instead: on every
case above and sphere_3_192 at dim 3 too, the scalar backend (no plugin
probe) with `--collapse off` and `--collapse auto` (and auto of another
build, --before), alternating; per case the decision, how many of the
longest edges the probe looked at, the collapse stage's own CPU time (from
the library's log) and each run's CPU time (user + system), medians. The
JSON goes to bench/results/collapse-auto-2core.json by default.

Times: a CLI's wall time from start to exit; for the Python libraries the
time from before reading the input to the end of the computation (py_rips.py:
the interpreter's start-up and imports are left out, which favours them).
Peak RSS is the process's (GNU time), the interpreter's included for Python.
Before a case's timed runs every program runs --warmup times (default 1)
untimed: what a program pays once per machine is left out of its times — the
gate's certification of a plugin the first time it runs, and the first call
past the sizes run-time verification has checked, which is re-run on the
reference (docs/conformance.md) — as are a cold page cache and the first
import of a Python library. bench_envelope.py and bench_probe.py measure
those one-time costs.
o3_4096 (minutes) runs only with --big; --torus N adds the seeded Clifford
torus of N points in R^4 (dim 2, threshold 0.15; the issue's case is
N = 50000).
"""
import argparse
import datetime
import json
import math
import os
import platform
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
sys.path.insert(0, os.path.join(ROOT, "tests", "cli"))
import clitest  # noqa: E402  (the one comparison of diagrams)
sys.path.insert(0, HERE)
import artifact  # noqa: E402  (writes and checks the JSON)


def default_data():
    """shared/data/ripser-examples in the nearest folder above this file."""
    d = HERE
    while True:
        cand = os.path.join(d, "shared", "data", "ripser-examples")
        if os.path.isdir(cand) or os.path.dirname(d) == d:
            return cand
        d = os.path.dirname(d)


# name, file (relative to the data folder, or generated), format, dim, threshold
CASES = [
    ("o3_1024", "o3_1024.txt", "point-cloud", 3, 1.8),
    ("sphere_3_192", "sphere_3_192.lower_distance_matrix", "lower-distance", 2, None),
    ("o3_2048", "o3_2048.txt", "point-cloud", 2, 1.6),
    ("uniform_300_r3", "gen:uniform:300:3:1", "point-cloud", 2, None),
    ("uniform_2000_r3", "gen:uniform:2000:3:2", "point-cloud", 2, 0.25),
    ("random16", "random16.lower_distance_matrix", "lower-distance", 7, None),
    ("projective_plane", "projective_plane.lower_distance_matrix", "lower-distance", 2, None),
    # issue 34's dense case with little to collapse: 512 points in R^16, no threshold
    ("uniform_512_r16", "gen:uniform:512:16:34", "point-cloud", 2, None),
]
BIG = [("o3_4096", "o3_4096.txt", "point-cloud", 3, 1.4)]


def generate(spec, folder):
    """gen:uniform:N:DIM:SEED (uniform in the unit cube) or gen:torus:N:SEED (the
    Clifford torus (cos a, sin a, cos b, sin b) / sqrt 2, a and b uniform):
    a point cloud file, made again identically from the same spec."""
    parts = spec.split(":")
    rng = random.Random(int(parts[-1]))
    n = int(parts[2])
    path = os.path.join(folder, "_".join(parts[1:]) + ".txt")
    with open(path, "w") as f:
        for _ in range(n):
            if parts[1] == "torus":
                a, b = rng.uniform(0, 2 * math.pi), rng.uniform(0, 2 * math.pi)
                s = 1 / math.sqrt(2)
                p = [s * math.cos(a), s * math.sin(a), s * math.cos(b), s * math.sin(b)]
            else:
                p = [rng.random() for _ in range(int(parts[3]))]
            f.write(" ".join("%.17g" % v for v in p) + "\n")
    return path


def programs(a, threads):
    """(program, threads, command builder) for every program at every thread
    count: the single-threaded ones once, at 1."""
    out = []

    def topoml(backend, collapse, t):
        def cmd(path, fmt, dim, thr):
            c = [a.topoml, "barcode", "--quiet", "--backend", backend, "--collapse", collapse,
                 "--format", fmt, "--dim", str(dim)]
            if backend != "scalar":
                c += ["--threads", str(t)]
            return c + (["--threshold", repr(thr)] if thr is not None else []) + [path]
        return cmd

    def py(lib, collapse, t):
        def cmd(path, fmt, dim, thr):
            c = [a.python, os.path.join(HERE, "py_rips.py"), lib, path, fmt, str(dim),
                 "--threads", str(t), "--collapse", collapse]
            return c + (["--threshold", repr(thr)] if thr is not None else [])
        return cmd

    def ripser(path, fmt, dim, thr):
        return [a.ripser, "--format", fmt, "--dim", str(dim)] + \
            (["--threshold", repr(thr)] if thr is not None else []) + [path]

    out.append(("topoml scalar", 1, topoml("scalar", "off", 1)))
    out.append(("ripser 1.2.1", 1, ripser))
    if a.python:
        out.append(("ripser.py", 1, py("ripserpy", "off", 1)))
    for t in threads:
        for c in ("off", "on", "auto"):
            out.append(("topoml threads collapse=%s" % c, t, topoml("threads", c, t)))
        if a.python:
            for c in ("off", "on"):
                out.append(("giotto-ph collapse=%s" % c, t, py("gph", c, t)))
    return out


# Why the last measure() that failed did (kept in the JSON's "failed" list).
LAST_FAILURE = {}


def measure(cmd, timeout):
    """(seconds, CPU seconds, peak RSS KiB, stdout) or None when it failed or ran
    out of time. Seconds: the program's own figure if it prints one
    (py_rips.py), else the wall time of the process; CPU seconds (user +
    system, all threads) likewise, which a machine shared with other work
    disturbs far less than the wall time."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as tf, \
            tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter()
        try:
            p = subprocess.run(["/usr/bin/time", "-f", "%M %U %S", "-o", tf.name] + cmd,
                               stdout=subprocess.PIPE, stderr=err, timeout=timeout)
        except subprocess.TimeoutExpired:
            LAST_FAILURE["why"] = "ran past --timeout %g s" % timeout
            return None
        wall = time.perf_counter() - start
        rss, user, sys_ = tf.read().split()[-3:]
        err.seek(0)
        lines = err.read().splitlines()
        own = [l.split()[1] for l in lines if l.startswith("seconds ")]
        own_cpu = [l.split()[1] for l in lines if l.startswith("cpu ")]
    if p.returncode != 0:
        status = ("killed by signal %d" % -p.returncode if p.returncode < 0
                  else "exit status %d" % p.returncode)
        LAST_FAILURE["why"] = "%s: %s" % (status, " | ".join(lines[-3:]) or "no message")
        return None
    cpu = float(own_cpu[-1]) if own_cpu else float(user) + float(sys_)
    return ((float(own[-1]) if own else wall), cpu, int(rss), p.stdout.decode(errors="replace"),
            lines)


def same_bars(a, b):
    """Equal diagrams, bars shorter than the printed precision left out (Ripser
    and giotto-ph compute point distances in float, topoml in double)."""
    x, _ = clitest.parse_ripser(a)
    y, _ = clitest.parse_ripser(b)

    def long(bars):
        return [(s, e) for s, e in bars
                if math.isinf(e) or e - s > clitest.REL_TOL * max(1.0, abs(s), abs(e))]
    return sorted(x) == sorted(y) and all(clitest.same_diagram(long(x[k]), long(y[k])) for k in x)


def facts(a):
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    mem = None
    try:
        with open("/proc/meminfo") as f:
            mem = next(int(l.split()[1]) for l in f if l.startswith("MemTotal"))
    except (OSError, StopIteration):
        pass
    return {"host": platform.node(), "cpu": cpu, "cpus": os.cpu_count(),
            "cpus_available": len(os.sched_getaffinity(0)), "mem_kib": mem,
            "kernel": platform.release(), "load_average_start": os.getloadavg(),
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}


def versions(a):
    def out(cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True,
                                  timeout=60).stdout.strip()
        except OSError:
            return None
    v = {"topoml": out([a.topoml, "--version"]) if a.topoml else
         out([a.python, "-c", "import topoml; print(topoml.__version__)"]),
         "ripser": out(["dpkg-query", "-W", "-f", "${Version}", "ripser"]),
         "python": platform.python_version()}
    if a.python:
        v["giotto-ph"] = out([a.python, "-c", "import gph; print(gph.__version__)"])
        v["ripser.py"] = out([a.python, "-c", "import ripser; print(ripser.__version__)"])
        v["numpy"] = out([a.python, "-c", "import numpy; print(numpy.__version__)"])
    return v


def save(doc, path):
    doc["machine"]["load_average_end"] = os.getloadavg()
    with open(path + ".tmp", "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(path + ".tmp", path)


def table(doc):
    """The Markdown table of a result file: per case, each program's median
    and peak RSS, and the ratios of topoml's best to the others."""
    lines = ["| case | program | threads | median s | CPU s | peak MiB | same bars |",
             "| --- | --- | ---: | ---: | ---: | ---: | --- |"]
    for c in doc["cases"]:
        med = "%.3f" % c["median"] if c["median"] is not None else "failed"
        cpu = "%.3f" % c["cpu_median"] if c.get("cpu_median") is not None else "-"
        rss = "%.0f" % (c["peak_rss"] / 1024) if c["peak_rss"] else "-"
        lines.append("| %s | %s | %d | %s | %s | %s | %s |" % (
            c["name"], c["program"], c["threads"], med, cpu, rss,
            {True: "yes", False: "NO", None: "-"}[c.get("same_bars")]))
    lines += ["", "Ratios (topoml's threads backend with `--collapse auto` at the same thread "
              "count, over the other program's median CPU time, or wall time where no CPU time "
              "was recorded; < 1 is faster):", "",
              "| case | threads | vs better giotto-ph | vs ripser 1.2.1 | peak RSS vs giotto-ph "
              "| peak RSS vs ripser |", "| --- | ---: | ---: | ---: | ---: | ---: |"]
    names = sorted({c["name"] for c in doc["cases"]}, key=[c["name"] for c in doc["cases"]].index)
    for name in names:
        rows = [c for c in doc["cases"] if c["name"] == name and c["median"] is not None]
        rip = next((c for c in rows if c["program"] == "ripser 1.2.1"), None)
        for t in sorted({c["threads"] for c in rows if "threads" in c["program"]}):
            ours = [c for c in rows if c["program"].startswith("topoml threads") and
                    c["threads"] == t and c["program"] != "topoml threads collapse=off"]
            auto = next((c for c in ours if c["program"].endswith("auto")), None)
            gph = [c for c in rows if c["program"].startswith("giotto-ph") and c["threads"] == t]
            if not auto:
                continue
            bg = min(gph, key=lambda c: c.get("cpu_median") or c["median"]) if gph else None

            def r(x, y):
                return "%.2f" % (x / y) if y else "-"

            def cost(c):
                return c["cpu_median"] if c.get("cpu_median") is not None else c["median"]
            lines.append("| %s | %d | %s | %s | %s | %s |" % (
                name, t, r(cost(auto), cost(bg)) if bg else "-",
                r(cost(auto), cost(rip)) if rip else "-",
                r(auto["peak_rss"], bg["peak_rss"]) if bg else "-",
                r(auto["peak_rss"], rip["peak_rss"]) if rip else "-"))
    return "\n".join(lines) + "\n"


PROBE_CASES = CASES + [("sphere_3_192", "sphere_3_192.lower_distance_matrix",
                        "lower-distance", 3, None)]


def collapse_log(lines):
    """What the library's log (--verbose) says of the collapse: (decision,
    removed, examined, size, stage CPU s, stage wall s), None where it says
    nothing; a build whose log has no probe line says only whether edges
    were removed, and the stage's wall time (from the CLI's timeline: the
    "collapse" line to the next stage's) is there for every build."""
    stamps = [(float(m.group(1)), m.group(2)) for m in
              (re.match(r"topoml info: +([0-9.]+) s: ([^:]+)", l) for l in lines) if m]
    wall = next((stamps[k + 1][0] - t for k, (t, st) in enumerate(stamps[:-1])
                 if st == "collapse"), None)
    for l in lines:
        m = re.search(r"edge collapse: (not done|goes on): the probe removed (\d+) of the "
                      r"first (\d+) of the longest (\d+) edges.* took ([0-9.]+) s CPU", l)
        if m:
            return ("collapse" if m.group(1) == "goes on" else "no",
                    int(m.group(2)), int(m.group(3)), int(m.group(4)), float(m.group(5)), wall)
    done = any(re.search(r"edge collapse: \d+ of \d+ edges remain", l) for l in lines)
    return ("collapse" if done else "no", None, None, None, None, wall)


def collapse_probe(a):
    """The --collapse-probe run: see the module's docstring."""
    out = a.json or os.path.normpath(os.path.join(ROOT, "bench", "results",
                                                  "collapse-auto-2core.json"))
    progs = [("topoml scalar collapse=off", a.topoml, "off"),
             ("topoml scalar collapse=auto", a.topoml, "auto")]
    if a.before:
        progs.append(("topoml scalar collapse=auto (before)", a.before, "auto"))
    cases = PROBE_CASES
    if a.only:
        cases = [c for c in cases if c[0] in a.only]
    v = versions(a)
    if a.before:
        v["topoml (before)"] = subprocess.run([a.before, "--version"], capture_output=True,
                                              text=True).stdout.strip()
    doc = {"title": "The rule of --collapse auto: its decision and the cost of its probe "
                    "(scalar backend, CPU seconds)",
           "statistic": "median of the CPU times (user + system) of the process",
           "units": {"median": "s", "peak_rss": "KiB"}, "baseline": progs[0][0],
           "machine": facts(a), "versions": v, "commands": {}, "cases": []}
    gen = tempfile.mkdtemp(prefix="bench_rips_")
    hdr = "%-30s %-8s %-9s %9s %9s %9s %9s %9s %9s %9s %9s" % (
        "case", "decision", "probe", "stage cpu", "stage wl", "before wl", "off s", "auto s",
        "auto-off", "before s", "before-off")
    print(hdr)
    print("-" * len(hdr))
    for name, fname, fmt, dim, thr in cases:
        path = generate(fname, gen) if fname.startswith("gen:") else os.path.join(a.data, fname)
        label = "%s --dim %d%s" % (name, dim, " --threshold %g" % thr if thr is not None else "")
        cpus = {p[0]: [] for p in progs}
        rss = {p[0]: [] for p in progs}
        logs = {p[0]: [] for p in progs}
        outs = {}
        for rep in range(a.reps):
            order = progs[rep % len(progs):] + progs[:rep % len(progs)]
            for prog, exe, coll in order:
                cmd = [exe, "barcode", "--quiet", "--verbose", "--backend", "scalar",
                       "--collapse", coll, "--format", fmt, "--dim", str(dim)] + \
                    (["--threshold", repr(thr)] if thr is not None else []) + [path]
                doc["commands"]["%s/%s" % (label, prog)] = " ".join(cmd)
                m = measure(cmd, a.timeout)
                if m is None:
                    sys.exit("%s: %s failed" % (label, " ".join(cmd)))
                cpus[prog].append(m[1])
                rss[prog].append(m[2])
                logs[prog].append(collapse_log(m[4]))
                outs.setdefault(prog, m[3])
        ref = outs[progs[0][0]]
        med = {p: statistics.median(cpus[p]) for p in cpus}
        for prog, _, coll in progs:
            seen = logs[prog]
            decisions = sorted({x[0] for x in seen})
            stage = [x[4] for x in seen if x[4] is not None]
            stage_wall = [x[5] for x in seen if x[5] is not None]
            c = {"name": label, "program": prog, "threads": 1, "times": cpus[prog],
                 "median": med[prog], "peak_rss": max(rss[prog]),
                 "same_bars": same_bars(ref, outs[prog]), "input": fname, "dim": dim,
                 "threshold": thr}
            if coll == "auto":
                c["decision"] = decisions[0] if len(decisions) == 1 else decisions
                c["probe"] = {"removed": seen[0][1], "examined": seen[0][2], "size": seen[0][3]}
                c["stage_cpu_times"] = stage
                c["stage_cpu_median"] = statistics.median(stage) if stage else None
                c["stage_wall_times"] = stage_wall
                c["stage_wall_median"] = statistics.median(stage_wall) if stage_wall else None
                c["minus_off"] = med[prog] - med[progs[0][0]]
            doc["cases"].append(c)
        after = doc["cases"][-len(progs) + 1]
        before = doc["cases"][-1] if a.before else None
        pr = after["probe"]
        print("%-30s %-8s %-9s %9s %9s %9s %9.3f %9.3f %+9.3f %9s %9s" % (
            label, after["decision"], "%s/%s" % (pr["examined"], pr["size"]),
            "%.4f" % after["stage_cpu_median"] if after["stage_cpu_median"] is not None else "-",
            "%.4f" % after["stage_wall_median"] if after["stage_wall_median"] is not None else "-",
            "%.4f" % before["stage_wall_median"] if before and
            before["stage_wall_median"] is not None else "-",
            med[progs[0][0]], after["median"], after["minus_off"],
            "%.3f" % before["median"] if before else "-",
            "%+.3f" % before["minus_off"] if before else "-"))
        sys.stdout.flush()
    artifact.save(out, doc)
    print("(CPU seconds, medians of %d runs, alternating; results in %s)" % (a.reps, out))


# name, shape, points, ambient dimension, maxdim, timed runs of collapse=True
# at most (no threshold: the enclosing radius, as the defaults of every
# program here; collapse=True takes 3-100x the reduction on a big H1 there,
# up to minutes a call, so it runs once where it is that slow; a 2000-point
# circle at H1 takes minutes with either setting and is left out)
SMALL = [
    ("circle_100", "circle", 100, 2, 1, 99), ("circle_300", "circle", 300, 2, 1, 99),
    ("circle_1000", "circle", 1000, 2, 1, 1),
    ("uniform2_100", "uniform", 100, 2, 1, 99), ("uniform2_400", "uniform", 400, 2, 1, 99),
    ("uniform2_1000", "uniform", 1000, 2, 1, 1), ("uniform2_2000", "uniform", 2000, 2, 1, 1),
    ("uniform3_300", "uniform", 300, 3, 1, 99), ("uniform3_1000", "uniform", 1000, 3, 1, 1),
    ("sphere_1000", "sphere", 1000, 3, 1, 1), ("torus_1000", "torus", 1000, 3, 1, 1),
    ("clusters4_1000", "clusters", 1000, 4, 1, 1),
    ("circle_300_h2", "circle", 300, 2, 2, 99), ("uniform2_400_h2", "uniform", 400, 2, 2, 99),
    ("uniform3_100_h2", "uniform", 100, 3, 2, 99), ("uniform3_300_h2", "uniform", 300, 3, 2, 99),
    ("sphere_300_h2", "sphere", 300, 3, 2, 99), ("torus_400_h2", "torus", 400, 3, 2, 99),
]


def small_clouds(a):
    """The --small-clouds run: see the module's docstring."""
    out = a.json or os.path.normpath(os.path.join(ROOT, "bench", "results",
                                                  "small-clouds-2core.json"))
    cases = [c for c in SMALL if not a.only or c[0] in a.only]
    spec = [{"name": n, "shape": s, "n": k, "dim": d, "maxdim": m, "seed": 7, "on_reps": r}
            for n, s, k, d, m, r in cases]
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(spec, f)
    cmd = [a.python, os.path.join(HERE, "py_rips.py"), "--sweep", f.name, str(a.reps)]
    res = json.loads(subprocess.run(cmd, stdout=subprocess.PIPE, check=True).stdout)
    os.unlink(f.name)
    v = versions(a)
    doc = {"title": "Small clouds in process: topoml.ripser's defaults against both collapse "
                    "settings and giotto-ph's defaults",
           "statistic": "median of the wall times of the calls (seconds)",
           "units": {"median": "s"}, "baseline": "giotto-ph defaults",
           "machine": facts(a), "versions": v,
           "commands": {"sweep": " ".join(cmd[:3]) + " CASES.json %d" % a.reps,
                        "run": "tools/bench/bench_rips.py --small-clouds --reps %d" % a.reps},
           "cases": []}
    hdr = "%-16s %6s %9s %9s %9s %9s %9s %9s %9s %9s" % (
        "case", "maxdim", "defaults", "off", "on", "gph", "def/best", "def/gph", "cpu d/b",
        "cpu d/g")
    print(hdr)
    print("-" * len(hdr))
    worst = {"wall": [0.0, 0.0], "cpu": [0.0, 0.0]}
    for r in res:
        c = r["case"]
        med = {p: statistics.median(t) for p, t in r["times"].items()}
        cmed = {p: statistics.median(t) for p, t in r["cpu_times"].items()}
        for p, t in r["times"].items():
            doc["cases"].append(artifact.case(c["name"], p, t, threads=None, median=med[p],
                                              cpu_times=r["cpu_times"][p], cpu_median=cmed[p],
                                              same_bars=r["same"][p], shape=c["shape"],
                                              points=c["n"], ambient=c["dim"],
                                              maxdim=c["maxdim"]))
        ratios = []
        for kind, m in (("wall", med), ("cpu", cmed)):
            d = m["topoml.ripser defaults"]
            best = min(m["topoml collapse=False"], m["topoml collapse=True"])
            g = m["giotto-ph defaults"]
            ratios += [d / best, d / g]
            worst[kind] = [max(worst[kind][0], d / best), max(worst[kind][1], d / g)]
        print("%-16s %6d %9.4f %9.4f %9.4f %9.4f %9.2f %9.2f %9.2f %9.2f%s" % (
            c["name"], c["maxdim"], med["topoml.ripser defaults"], med["topoml collapse=False"],
            med["topoml collapse=True"], med["giotto-ph defaults"], *ratios,
            "" if all(r["same"].values()) else "  DIFFER"))
    doc["summary"] = {"worst defaults / better collapse setting (wall)": worst["wall"][0],
                      "worst defaults / giotto-ph defaults (wall)": worst["wall"][1],
                      "worst defaults / better collapse setting (cpu)": worst["cpu"][0],
                      "worst defaults / giotto-ph defaults (cpu)": worst["cpu"][1]}
    artifact.save(out, doc)
    print("worst, wall: defaults / better setting %.2f, defaults / giotto-ph %.2f; "
          "CPU: %.2f, %.2f" % (worst["wall"][0], worst["wall"][1], worst["cpu"][0],
                               worst["cpu"][1]))
    print("(seconds in one process, medians of %d calls after 1 untimed, interleaved; "
          "results in %s)" % (a.reps, out))


def probe_table(doc):
    """The Markdown table of a --collapse-probe file."""
    lines = ["| case | decision | probe: removed / looked at / longest tenth | collapse stage, "
             "CPU s | stage, wall s | stage before, wall s | process CPU s, off | auto | "
             "auto - off | auto before | before - off |",
             "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    names = sorted({c["name"] for c in doc["cases"]}, key=[c["name"] for c in doc["cases"]].index)
    for name in names:
        rows = [c for c in doc["cases"] if c["name"] == name]
        off = next(c for c in rows if c["program"].endswith("collapse=off"))
        auto = next(c for c in rows if c["program"].endswith("collapse=auto"))
        before = next((c for c in rows if c["program"].endswith("(before)")), None)
        p = auto["probe"]
        def ms(c, key):
            return "%.4f" % c[key] if c and c.get(key) is not None else "-"
        lines.append("| %s | %s%s | %s / %s / %s | %s | %s | %s | %.3f | %.3f | %+.3f | %s | %s |" % (
            name, auto["decision"],
            " (before: %s)" % before["decision"] if before else "",
            p["removed"], p["examined"], p["size"], ms(auto, "stage_cpu_median"),
            ms(auto, "stage_wall_median"), ms(before, "stage_wall_median"),
            off["median"], auto["median"], auto["minus_off"],
            "%.3f" % before["median"] if before else "-",
            "%+.3f" % before["minus_off"] if before else "-"))
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--topoml", help="the topoml CLI")
    ap.add_argument("--ripser", default="/usr/bin/ripser")
    ap.add_argument("--python", help="a Python with giotto-ph and ripser.py (else they are "
                    "left out)")
    ap.add_argument("--data", default=default_data(), help="Ripser's examples folder")
    ap.add_argument("--threads", default="1,%d" % len(os.sched_getaffinity(0)),
                    help="thread counts, comma-separated (default: 1 and every CPU available)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=1,
                    help="untimed runs of every program before a case's timed ones (default 1)")
    ap.add_argument("--timeout", type=float, default=600, help="seconds one run may take")
    ap.add_argument("--big", action="store_true", help="also o3_4096 (minutes)")
    ap.add_argument("--torus", type=int, default=0, help="also a Clifford torus of N points")
    ap.add_argument("--only", action="append", help="run only these cases")
    ap.add_argument("--program", action="append",
                    help="run only the programs whose name starts with this (repeatable; e.g. "
                    "for cases where the others take hours)")
    ap.add_argument("--json", help="where the results go (default: bench/results/"
                    "rips-cpu-<date>.json)")
    ap.add_argument("--markdown", help="print the Markdown table of this result file and exit")
    ap.add_argument("--small-clouds", action="store_true",
                    help="everyday clouds in process against giotto-ph's defaults")
    ap.add_argument("--collapse-probe", action="store_true",
                    help="measure the rule of --collapse auto instead (see above)")
    ap.add_argument("--before", help="with --collapse-probe: another build's topoml CLI, whose "
                    "--collapse auto is measured beside this one's")
    a = ap.parse_args()
    if a.markdown:
        with open(a.markdown) as f:
            doc = json.load(f)
        sys.stdout.write(probe_table(doc) if any("probe" in c for c in doc["cases"])
                         else table(doc))
        return
    if a.small_clouds:
        if not a.python or a.reps < 3:
            ap.error("--small-clouds needs --python (with giotto-ph) and --reps 3 or more")
        small_clouds(a)
        return
    if not a.topoml:
        ap.error("--topoml is required")
    if a.collapse_probe:
        if a.reps < 5:
            ap.error("--collapse-probe takes medians of at least 5 runs (--reps 5)")
        collapse_probe(a)
        return
    if a.reps < 1 or not 0 <= a.warmup <= 10:
        ap.error("--reps must be at least 1 and --warmup 0..10")
    threads = sorted({int(t) for t in a.threads.split(",")})
    cases = CASES + (BIG if a.big else [])
    if a.torus:
        cases.append(("clifford_torus_%d" % a.torus, "gen:torus:%d:19" % a.torus, "point-cloud",
                      2, 0.15))
    if a.only:
        cases = [c for c in cases if c[0] in a.only]
    out = a.json
    if not out:
        folder = os.path.join(ROOT, "bench", "results")
        os.makedirs(folder, exist_ok=True)
        out = os.path.join(folder, "rips-cpu-%s.json" %
                           datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M"))
    progs = programs(a, threads)
    if a.program:
        progs = [p for p in progs if any(p[0].startswith(x) for x in a.program)]
    doc = {"title": "Rips barcodes on the CPU: topoml (collapse, threads) against giotto-ph, "
                    "ripser.py and Ripser", "baseline": "ripser 1.2.1",
           "units": {"median": "s", "peak_rss": "KiB"},
           "machine": facts(a), "versions": versions(a), "commands": {}, "cases": [],
           "warmup": a.warmup}
    tree = artifact.source_tree()
    if tree:
        doc["git"] = tree
    gen = tempfile.mkdtemp(prefix="bench_rips_")
    hdr = "%-18s %-30s %3s %9s %9s %9s  %s" % ("case", "program", "thr", "median s", "cpu s",
                                               "peak MiB", "bars")
    print(hdr)
    print("-" * len(hdr))
    for name, fname, fmt, dim, thr in cases:
        path = generate(fname, gen) if fname.startswith("gen:") else os.path.join(a.data, fname)
        runs = {(p, t): [] for p, t, _ in progs}
        cpus = {k: [] for k in runs}
        rss = {k: [] for k in runs}
        outs, failed, failed_why = {}, set(), {}
        for prog, t, build in progs * a.warmup:
            if (prog, t) not in failed and measure(build(path, fmt, dim, thr), a.timeout) is None:
                failed.add((prog, t))
                failed_why[(prog, t)] = LAST_FAILURE.get("why", "failed")
        for rep in range(a.reps):
            # rotate the order each repetition: no program always runs first,
            # on a cache warmed (or a machine loaded) by another
            order = progs[rep % len(progs):] + progs[:rep % len(progs)]
            for prog, t, build in order:
                key = (prog, t)
                if key in failed:
                    continue
                cmd = build(path, fmt, dim, thr)
                doc["commands"]["%s/%s/%d" % (name, prog, t)] = " ".join(cmd)
                m = measure(cmd, a.timeout)
                if m is None:
                    failed.add(key)
                    failed_why[key] = LAST_FAILURE.get("why", "failed")
                    continue
                runs[key].append(m[0])
                cpus[key].append(m[1])
                rss[key].append(m[2])
                outs.setdefault(key, m[3])
        # The reference bars: the scalar backend's; where it was left out
        # (--program, for a case it would take too long on), the first
        # topoml run that finished.
        ref = outs.get(("topoml scalar", 1))
        if ref is None:
            ref = next((outs[(p, t)] for p, t, _ in progs
                        if p.startswith("topoml") and (p, t) in outs), None)
        for prog, t, _ in progs:
            key = (prog, t)
            times = runs[key]
            med = statistics.median(times) if times and key not in failed else None
            peak = max(rss[key]) if rss[key] else None
            same = same_bars(ref, outs[key]) if ref is not None and key in outs else None
            cmed = statistics.median(cpus[key]) if med is not None else None
            if med is None:
                # not a case of the schema (no time): listed apart, with why
                doc.setdefault("failed", []).append({
                    "name": name, "program": prog, "threads": t, "input": fname, "dim": dim,
                    "threshold": thr, "why": failed_why.get(key, "failed")})
                print("%-18s %-30s %3d %9s" % (name, prog, t, "failed"))
                continue
            doc["cases"].append({"name": name, "program": prog, "threads": t, "times": times,
                                 "median": med, "cpu_times": cpus[key], "cpu_median": cmed,
                                 "peak_rss": peak, "same_bars": same,
                                 "input": fname, "dim": dim, "threshold": thr})
            print("%-18s %-30s %3d %9s %9s %9s  %s" % (
                name, prog, t, "%.3f" % med if med is not None else "failed",
                "%.3f" % cmed if cmed is not None else "-",
                "%.1f" % (peak / 1024) if peak else "-",
                {True: "same", False: "DIFFER", None: "-"}[same]))
            sys.stdout.flush()
        save(doc, out)  # after every case: an interrupted run keeps what it measured
    print("(medians of %d runs after %d untimed, alternating; results in %s)" % (
        a.reps, a.warmup, out))


if __name__ == "__main__":
    main()
