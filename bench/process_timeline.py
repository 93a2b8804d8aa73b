#!/usr/bin/env python3
"""process_timeline.py -- where a whole CLI process's time goes.

Runs one command (a `topoml barcode --verbose --verbose ...` line, say)
again and again and stamps every line of its standard error with the
seconds since the process was started, as the line arrives (the pipe is
read unbuffered; topoml's log lines are written whole), and the moment it
exits. Each run gives a timeline; the table has, per milestone (a line that
matches a --mark pattern, first match per run), the median of the runs'
times, and the exit's. The gaps between marks say what a stage costs:
before the first line, starting the process and loading plugins; between
the call's last line and the exit, tearing down (a device's context, say).

    process_timeline.py [--runs 5] [--mark NAME=REGEX]... [--json OUT]
                        [--title TEXT] -- COMMAND...

With no --mark every distinct line (digits blanked) is a milestone. The
command's standard output is read and thrown away. A benchmark, not a test:
it prints numbers; --json writes a bench/results artifact (the schema of
bench/make_tables.py).
"""
import argparse
import json
import os
import re
import select
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import artifact  # noqa: E402


def one_run(cmd):
    """[(seconds, line)] of standard error, and the exit's (seconds, status)."""
    start = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, bufsize=0)
    lines, pending = [], b""
    fd = p.stderr.fileno()
    while True:
        ready, _, _ = select.select([fd], [], [], 1.0)
        if not ready:
            if p.poll() is not None:
                break
            continue
        chunk = os.read(fd, 65536)
        t = time.perf_counter() - start
        if not chunk:
            break
        pending += chunk
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            lines.append((t, line.decode("utf-8", "replace")))
    status = p.wait()
    end = time.perf_counter() - start
    if pending:
        lines.append((end, pending.decode("utf-8", "replace")))
    return lines, (end, status)


def version_of(program):
    """`program --version`'s first line, or "unknown"."""
    try:
        r = subprocess.run([program, "--version"], capture_output=True, text=True, timeout=30)
        first = (r.stdout or r.stderr).strip().splitlines()
        return first[0] if r.returncode == 0 and first else "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def milestones(lines, marks):
    """{name: first time} for the marks, or every distinct line's shape."""
    found = {}
    if marks:
        for t, line in lines:
            for name, rx in marks:
                if name not in found and rx.search(line):
                    found[name] = t
    else:
        for t, line in lines:
            key = re.sub(r"\d+(\.\d+)?", "#", line.strip())[:100]
            found.setdefault(key, t)
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--mark", action="append", default=[], metavar="NAME=REGEX")
    ap.add_argument("--json")
    ap.add_argument("--title", default="")
    ap.add_argument("--name", default="", help="the case's name in the JSON")
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd[:1] == ["--"] else a.cmd
    if not cmd:
        ap.error("no command after --")
    if not 1 <= a.runs <= 100:
        ap.error("--runs must be 1..100")
    marks = []
    for m in a.mark:
        name, sep, rx = m.partition("=")
        if not sep or not name:
            ap.error("--mark wants NAME=REGEX, got %r" % m)
        try:
            marks.append((name, re.compile(rx)))
        except re.error as e:
            ap.error("--mark %s: %s" % (name, e))

    runs = []
    for _ in range(a.runs):
        lines, (end, status) = one_run(cmd)
        if status != 0:
            sys.stderr.write("the command failed with status %d:\n" % status)
            sys.stderr.write("\n".join(l for _, l in lines[-10:]) + "\n")
            return 1
        found = milestones(lines, marks)
        found["exit"] = end
        runs.append({"marks": found, "last_line": lines[-1][0] if lines else None})

    order = [n for n, _ in marks] if marks else list(runs[0]["marks"])
    order = [n for n in order if n != "exit"] + ["exit"]
    rows = []
    print("%-60s %8s %8s   (seconds since the process started, median of %d)"
          % ("milestone", "median", "min", a.runs))
    for name in order:
        ts = [r["marks"][name] for r in runs if name in r["marks"]]
        if not ts:
            print("%-60s %8s" % (name[:60], "absent"))
            continue
        med, lo = statistics.median(ts), min(ts)
        rows.append({"milestone": name, "times": [round(t, 4) for t in ts],
                     "median": round(med, 4), "min": round(lo, 4)})
        print("%-60s %8.3f %8.3f" % (name[:60], med, lo))
    if a.json:
        prefix = a.name + ": " if a.name else ""
        artifact.save(a.json, {
            "title": a.title or "a process's timeline: " + " ".join(cmd),
            "machine": artifact.machine(),
            "versions": {os.path.basename(cmd[0]): version_of(cmd[0])},
            "units": {"median": "s", "min": "s"},
            "commands": {"how": "process_timeline.py --runs %d -- %s" % (a.runs, " ".join(cmd))},
            "cases": [artifact.case(prefix + r["milestone"], cmd[0], r["times"],
                                    median=r["median"], min=r["min"]) for r in rows],
        })
    return 0


if __name__ == "__main__":
    sys.exit(main())
