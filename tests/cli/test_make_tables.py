"""tools/bench/make_tables.py: the committed artifacts in bench/results/
all follow the schema, and every link from README.md and docs/ to one
resolves; a file in the schema the benchmark scripts write (raw times, no
median, threads, peak RSS) gets its median computed and its ratios to the
baseline; cases in the older scripts' shape are read per program; a file
that breaks the schema is refused under --strict, naming the file and the
case, and otherwise listed on the page without a table."""
import json
import os
import re
import subprocess
import sys
import tempfile

import clitest

A = clitest.args()
SRC = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
TOOL = os.path.join(SRC, "tools", "bench", "make_tables.py")
failures = []


def check(what, ok, detail=""):
    if not ok:
        failures.append(what)
        print("FAIL: %s %s" % (what, detail))


def tables(*args):
    return subprocess.run([sys.executable, TOOL] + list(args), capture_output=True, text=True)


results = os.path.join(SRC, "bench", "results")
r = tables("--results", results)
check("the committed artifacts give a page", r.returncode == 0, r.stderr)
for f in sorted(os.listdir(results)):
    if f.endswith(".json"):
        check("%s has a table or is listed without one" % f,
              "[%s](" % f in r.stdout or "* `%s`:" % f in r.stdout, r.stdout[-800:])
for f in ("2026-12-scalar-vs-ripser.json", "2026-12-cuda-rips.json"):
    r = tables("--strict", os.path.join(results, f))
    check("%s follows the schema" % f, r.returncode == 0, r.stderr)

linked = 0
pages = [os.path.join(SRC, "README.md")] + [
    os.path.join(d, f) for d, _, fs in os.walk(os.path.join(SRC, "docs")) for f in fs
    if f.endswith(".md")]
for p in pages:
    for target in re.findall(r"\]\(([^)#\s]*bench/results/[^)#\s]+)\)", open(p).read()):
        linked += 1
        real = os.path.normpath(os.path.join(os.path.dirname(p), target))
        check("%s links an existing artifact: %s" % (os.path.relpath(p, SRC), target),
              os.path.isfile(real))
check("README and docs link artifacts", linked >= 3, str(linked))

with tempfile.TemporaryDirectory() as tmp:
    run = {"machine": "test machine", "versions": {"topoml": "x"}, "commands": ["bench --x"],
           "baseline": "ripser",
           "cases": [
               {"name": "a", "program": "ripser", "threads": 1, "times": [3.0, 1.0, 2.0],
                "peak_rss": 2097152},
               {"name": "a", "program": "topoml", "threads": 1, "times": [0.5, 0.25, 1.0, 0.75],
                "median": None, "peak_rss": 1048576},
               {"name": "a", "program": "topoml", "threads": 2, "times": [0.25], "peak_rss": None},
           ]}
    good = os.path.join(tmp, "good.json")
    json.dump(run, open(good, "w"))
    r = tables(good)
    check("the scripts' schema is read", r.returncode == 0, r.stderr)
    row = [l for l in r.stdout.splitlines() if l.startswith("| a |")]
    check("one row per case", len(row) == 1, r.stdout)
    cells = [c.strip() for c in row[0].strip("|").split("|")] if row else []
    # ripser median 2 s; topoml (1 thread) median of 4 times 625 ms; 2 threads 250 ms
    check("medians computed from the raw times",
          cells[1:4] == ["2 s", "625 ms", "250 ms"], str(cells))
    check("ratios to the baseline", cells[4:6] == ["0.31", "0.12"], str(cells))
    check("peak RSS in MiB", cells[6:9] == ["2.0 MiB", "1.0 MiB", ""], str(cells))
    check("threads named when they differ", "topoml (2 threads)" in r.stdout, r.stdout)

    for bad, why in (({"cases": []}, "no 'cases'"),
                     ({"cases": [{"name": "a", "program": "p"}]}, "neither 'median' nor 'times'"),
                     ({"cases": [{"name": "a", "program": "p", "times": ["1"]}]}, "'times'"),
                     ({"cases": [{"name": "a", "times": [1]}]}, "'name' and a 'program'")):
        p = os.path.join(tmp, "bad.json")
        json.dump(bad, open(p, "w"))
        r = tables("--strict", good, p)
        check("refused: %s" % why, r.returncode == 1 and "bad.json" in r.stderr and why in r.stderr,
              r.stderr)
        r = tables(good, p)
        check("without --strict, listed untabled: %s" % why,
              r.returncode == 0 and "* `bad.json`:" in r.stdout and "| a |" in r.stdout, r.stderr)
    open(os.path.join(tmp, "broken.json"), "w").write("{")
    r = tables(os.path.join(tmp, "broken.json"))
    check("refused: not JSON", r.returncode == 1 and "broken.json" in r.stderr, r.stderr)
    # The older scripts' shape: per-program results under "case".
    old = os.path.join(tmp, "old.json")
    json.dump({"cases": [{"case": "b", "scalar": {"wall_s": 2.0}, "cpp_compat": {"wall_s": 1.0},
                          "same": True}], "baseline": "scalar"}, open(old, "w"))
    r = tables("--strict", old)
    check("the older shape is read per program", r.returncode == 0 and
          "| b | 2 s | 1 s | 0.50 |" in r.stdout, r.stdout + r.stderr)

print("%d failures" % len(failures))
sys.exit(1 if failures else 0)
