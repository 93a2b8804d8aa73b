"""bench/gate/mutants.py on two mutants, the workload shrunk: the campaign's
machinery (build a mutant as a third-party plugin, certify it, run the
workload through the C API and the CLI, classify, write the JSON) works,
and no wrong answer of either reaches the caller. The campaign itself is an
artifact (bench/results/gate/gate-mutants.json), not a test."""
import json
import os
import subprocess
import sys
import tempfile

import clitest

A = clitest.args()
SRC = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
OUTCOMES = {"rejected at certification", "caught at run time",
            "failed at run time (an error, no answer)",
            "wrong answers reached the caller", "survived (right on every call)"}

with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "mutants.json")
    r = subprocess.run([sys.executable, os.path.join(SRC, "bench", "gate", "mutants.py"),
                        "--build", A.build, "--count", "2", "--scale", "0.05",
                        "--cli-calls", "1", "--json", out],
                       capture_output=True, text=True, timeout=1200)
    if r.returncode != 0:
        sys.exit("mutants.py failed (%d): %s" % (r.returncode, r.stderr[-2000:]))
    d = json.load(open(out))
    problems = []
    if len(d["mutants"]) != 2:
        problems.append("%d mutants, not 2" % len(d["mutants"]))
    for m in d["mutants"]:
        if m["outcome"] not in OUTCOMES:
            problems.append("%s: outcome %r" % (m["name"], m["outcome"]))
        if m["before"] == m["after"]:
            problems.append("%s: not mutated" % m["name"])
        if m["outcome"] != "rejected at certification" and m.get("api_calls") != d["workload"]["calls"]:
            problems.append("%s: %s of %d calls ran" % (m["name"], m.get("api_calls"),
                                                         d["workload"]["calls"]))
    if d["workload"]["calls"] < 50:
        problems.append("a workload of %d calls" % d["workload"]["calls"])
    if d["wrong_answers_reached_caller"] != 0:
        problems.append("wrong answers reached the caller: %s" % d["wrong_answers_reached_caller"])
    if "| all | 2 |" not in r.stdout:
        problems.append("no table:\n" + r.stdout[-1000:])
    if problems:
        sys.exit("FAIL: " + "; ".join(problems))
    print("ok: 2 mutants, %s" % d["summary"])
