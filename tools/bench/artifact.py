"""Writes a benchmark artifact for bench/results/ in the one schema that
tools/bench/make_tables.py reads (its docstring has the schema); the run is
checked by make_tables.check before anything is written, so a script cannot
leave a file the tables would refuse.

Not here: timing, statistics or tables (the scripts time; make_tables
renders)."""
import json
import os
import platform
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_tables  # noqa: E402


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


def case(name, program, times, threads=None, peak_rss=None, **extra):
    """One case of the schema; extra keys are kept (make_tables ignores them)."""
    c = {"name": name, "program": program, "threads": threads, "times": list(times),
         "peak_rss": peak_rss}
    c.update(extra)
    return c


def save(path, run):
    """Check run against the schema and write it to path ('-': stdout)."""
    make_tables.check(json.loads(json.dumps(run)), path)
    text = json.dumps(run, indent=1) + "\n"
    if path == "-":
        sys.stdout.write(text)
        return
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
