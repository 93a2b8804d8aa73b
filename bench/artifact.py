"""Writes a benchmark artifact for bench/results/ in the one schema that
bench/make_tables.py reads (its docstring has the schema); the run is
checked by make_tables.check before anything is written, so a script cannot
leave a file the tables would refuse.

Not here: timing, statistics or tables (the scripts time; make_tables
renders)."""
import json
import os
import platform
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_tables  # noqa: E402

# The source tree the scripts belong to (bench/..).
SRC = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def machine():
    """What a run ran on, as the scripts record it."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"host": platform.node(), "cpu": cpu, "cpus": os.cpu_count(),
            "cpus_available": len(os.sched_getaffinity(0)),
            "platform": platform.platform(), "load_average": list(os.getloadavg())}


def source_tree(path=None):
    """The commit the source tree at path (default: the one these scripts
    belong to) is checked out at, and whether its files differ from it:
    {"commit": hex, "dirty": bool}. Files under bench/results/ do not count
    (a run writes there); untracked files do (a script not committed yet is
    code that ran). None, never an error, when path is not the top of a git
    checkout or git cannot be run."""
    path = os.path.realpath(path or SRC)

    def git(*args):
        try:
            r = subprocess.run(["git", "-C", path] + list(args), capture_output=True,
                               text=True, timeout=60)
        except (OSError, subprocess.SubprocessError):
            return None
        return r.stdout.strip() if r.returncode == 0 else None

    top = git("rev-parse", "--show-toplevel")
    if top is None or os.path.realpath(top) != path:
        return None
    head = git("rev-parse", "--verify", "-q", "HEAD")
    status = git("status", "--porcelain", "--", ".", ":(exclude)bench/results")
    if head is None or status is None or not re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", head):
        return None
    return {"commit": head, "dirty": bool(status)}


def case(name, program, times, threads=None, peak_rss=None, **extra):
    """One case of the schema; extra keys are kept (make_tables ignores them)."""
    c = {"name": name, "program": program, "threads": threads, "times": list(times),
         "peak_rss": peak_rss}
    c.update(extra)
    return c


def save(path, run):
    """Check run against the schema and write it to path ('-': stdout). The
    run gains "git" (source_tree()) when the scripts' tree is a checkout and
    the run does not say it already."""
    if "git" not in run:
        tree = source_tree()
        if tree:
            run = dict(run, git=tree)
    make_tables.check(json.loads(json.dumps(run)), path)
    text = json.dumps(run, indent=1) + "\n"
    if path == "-":
        sys.stdout.write(text)
        return
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
