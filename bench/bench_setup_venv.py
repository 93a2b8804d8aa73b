#!/usr/bin/env python3
"""How long tools/setup-debian.sh's Python step takes: making the checkout's
virtual environment (.venv) the first time, and running the step again.

The step is read out of tools/setup-debian.sh itself — from the line that
names the venv to the end of the pip install of the Python test
dependencies (not the PyTorch/TensorFlow step after it) — and run with
`sh` exactly as written, except that the venv lands in a temporary folder:
the step puts .venv at `$(dirname "$0")/..`, so it is given a $0 inside that
folder. The checkout's own .venv is never touched.

Two settings, taken in turn with the order reversed every other round
(bench/timing.py):

* first: into an empty folder, with an empty pip cache (what a fresh
  machine does: `python3 -m venv`, then pip downloads and installs every
  package that Debian does not provide);
* again: the step run once more on the folder the last `first` made
  (nothing missing, nothing installed).

Medians of --repeat runs: CPU seconds (user + system of the step and every
process it waited for) as the times, wall seconds beside them (the first
run's wall time includes the downloads); load average at the start and the
end. Needs the network to PyPI for `first`. Prints a table and writes a
bench/results artifact (bench/artifact.py; --json FILE, - for stdout).

  bench/bench_setup_venv.py [--repeat 3] [--json out.json]
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import artifact  # noqa: E402  (the one writer of bench/results/ files)
import timing  # noqa: E402

SRC = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
SETUP = os.path.join(SRC, "tools", "setup-debian.sh")


def python_step(path):
    """The Python step of the set-up script: from `venv=` to the `fi` that
    closes the pip install of "$need". SystemExit when the script no longer
    has that shape (so a change to it cannot go unnoticed)."""
    lines = open(path, encoding="utf-8").read().split("\n")
    start = next((i for i, l in enumerate(lines) if l.startswith("venv=")), None)
    if start is None:
        sys.exit("%s: no line 'venv=...': the Python step is not where this script "
                 "looks for it" % path)
    pip = next((i for i in range(start, len(lines))
                if '"$venv/bin/pip" install' in lines[i] and "$need" in lines[i]), None)
    end = None if pip is None else next(
        (i for i in range(pip, len(lines)) if lines[i].strip() == "fi"), None)
    if end is None:
        sys.exit("%s: no pip install of \"$need\" closed by 'fi' after 'venv=': the "
                 "Python step is not where this script looks for it" % path)
    return "set -eu\n" + "\n".join(lines[start:end + 1]) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--setup", default=SETUP,
                    help="the set-up script whose Python step is timed (default: %(default)s)")
    ap.add_argument("--print-step", action="store_true",
                    help="print the step as it will be run, and stop")
    ap.add_argument("--json", help="write the figures here (- for stdout)")
    a = ap.parse_args()
    if a.repeat < 1:
        ap.error("--repeat must be at least 1")
    step = python_step(a.setup)
    if a.print_step:
        sys.stdout.write(step)
        return 0

    tmp = tempfile.mkdtemp(prefix="topoml-bench-venv-")
    made = []  # the folders `first` made, the last one is `again`'s

    def first():
        folder = os.path.join(tmp, "tree%d" % len(made))
        os.makedirs(os.path.join(folder, "tools"))
        env = dict(os.environ, PIP_CACHE_DIR=os.path.join(folder, "pip-cache"))
        env.pop("VIRTUAL_ENV", None)
        t = timing.run(["sh", "-c", step, os.path.join(folder, "tools", "setup-debian.sh")],
                       env=env)
        if made:  # keep one venv on disk at a time
            shutil.rmtree(made[-1], ignore_errors=True)
        made.append(folder)
        return t

    def again():
        folder = made[-1]
        env = dict(os.environ, PIP_CACHE_DIR=os.path.join(folder, "pip-cache"))
        env.pop("VIRTUAL_ENV", None)
        return timing.run(["sh", "-c", step, os.path.join(folder, "tools", "setup-debian.sh")],
                          env=env)

    load_start = list(os.getloadavg())
    try:
        runs = timing.alternate({"first": first, "again": again}, a.repeat)
        venv = os.path.join(made[-1], ".venv")
        if not os.access(os.path.join(venv, "bin", "python"), os.X_OK):
            sys.exit("the step made no %s/bin/python" % venv)
        py = os.path.join(venv, "bin", "python")
        listed = subprocess.run([py, "-m", "pip", "list", "--disable-pip-version-check",
                                 "--local", "--format", "freeze"], capture_output=True, text=True)
        installed = listed.stdout.split() if listed.returncode == 0 else []
        python = subprocess.run([py, "--version"], capture_output=True, text=True).stdout.strip()
        pip = subprocess.run([py, "-m", "pip", "--version"], capture_output=True,
                             text=True).stdout.split(" from ")[0]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    load_end = list(os.getloadavg())

    print("load average %s at the start, %s at the end; medians of %d runs" % (
        "/".join("%.1f" % x for x in load_start), "/".join("%.1f" % x for x in load_end),
        a.repeat))
    print("%-8s %12s %12s" % ("run", "CPU s", "wall s"))
    cases = []
    what = {"first": "setup-debian.sh's Python step, into an empty folder (empty pip cache)",
            "again": "setup-debian.sh's Python step, again on the same folder"}
    for name, r in runs.items():
        cpu, wall = statistics.median(r["cpu"]), statistics.median(r["wall"])
        print("%-8s %12.2f %12.2f" % (name, cpu, wall))
        cases.append(artifact.case(what[name], "sh", r["cpu"], median=cpu,
                                   wall_times=r["wall"], wall_median=wall))
    print("installed into the venv: %d packages" % len(installed))
    if a.json:
        machine = artifact.machine()
        machine["load_average_start"] = load_start
        artifact.save(a.json, {
            "title": "Setting up .venv: tools/setup-debian.sh's Python step, first and again",
            "machine": machine,
            "versions": {"python": python or "?", "pip": pip or "?"},
            "commands": [" ".join(["bench/bench_setup_venv.py"] + sys.argv[1:])],
            "statistic": "median of %d runs, CPU seconds (user + system) of the step and the "
                         "processes it waited for; wall seconds (downloads included) in each "
                         "case's wall_times and wall_median; the two settings run in turn"
                         % a.repeat,
            "step": step,
            "installed": installed,
            "cases": cases})
    return 0


if __name__ == "__main__":
    sys.exit(main())
