"""The CLI around the barcode: `topoml help CMD`, `backends --json` with
capability names (not bit masks), a backend name that does not exist refused
before any work, and `edges` telling the input layout as `barcode` does."""
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import clitest as ct

a = ct.args()
rep = ct.Report()
T = a.topoml

# help CMD is CMD --help, for every command the main help lists.
main_help = ct.run([T, "help"]).stdout
commands = [ln.split()[0] for ln in main_help.splitlines() if ln.startswith("  ") and ln.split()]
rep.check("barcode" in commands and "backends" in commands, "commands: %r" % commands)
for c in commands:
    r = ct.run([T, "help", c], check=False)
    rep.check(r.returncode == 0 and r.stdout == ct.run([T, c, "--help"]).stdout and
              r.stdout.startswith("Usage: topoml " + c),
              "help %s: %d %r" % (c, r.returncode, r.stdout[:80]))
    # Option lists are aligned: within a command, a description on an
    # option's line, and each continuation line, start in one column.
    starts = set()
    for ln in r.stdout.splitlines():
        if ln.lstrip().startswith("-"):
            gap = ln.find("  ", len(ln) - len(ln.lstrip()))
            if gap > 0:
                starts.add(len(ln) - len(ln[gap:].lstrip()))
        elif ln.startswith("      ") and ln.strip():
            starts.add(len(ln) - len(ln.lstrip()))
    if c in ("barcode", "distance", "edges", "backends"):  # tools/cli/topoml.c's commands
        rep.check(len(starts) == 1, "help %s: descriptions start in columns %s" %
                  (c, sorted(starts)))
r = ct.run([T, "help", "nosuch"], check=False)
rep.check(r.returncode == 2 and "unknown command 'nosuch'" in r.stderr, "help nosuch: %r" % r.stderr)

# backends --json: names.
b = json.loads(ct.run([T, "backends", "--json"]).stdout)
known = {"dtypes": {"f32", "f64"}, "inputs": {"points", "condensed", "sparse"},
         "metrics": {"euclidean", "sqeuclidean", "manhattan", "chebyshev", "cosine"}}
scalar = [x for x in b if x["name"] == "scalar" and x["path"] is None]
rep.check(len(scalar) == 1, "scalar listed once as built in")
for x in b:
    for cap in x["capabilities"]:
        for key, names in known.items():
            rep.check(isinstance(cap[key], list) and set(cap[key]) <= names,
                      "%s %s %s: %r" % (x["name"], cap["op"], key, cap[key]))
rips = [c for c in scalar[0]["capabilities"] if c["op"] == "rips"][0]
rep.check(set(rips["inputs"]) == known["inputs"], "scalar rips inputs %r" % rips["inputs"])

# A backend that does not exist: refused at once, naming what exists.
tmp = tempfile.mkdtemp(prefix="topoml-cmds-")
lower = os.path.join(tmp, "lower.txt")
with open(lower, "w") as f:
    f.write("\n1\n2 3\n")
for cmd in (["barcode"], ["edges", "--threshold", "5"]):
    r = ct.run([T] + cmd + ["--backend", "nosuch", lower], check=False)
    rep.check(r.returncode == 1 and "no backend is named 'nosuch'" in r.stderr and
              "scalar" in r.stderr and r.stdout == "",
              "%s --backend nosuch: %d %r" % (cmd[0], r.returncode, r.stderr))

# edges reads a matrix without --format as barcode does.
full = os.path.join(tmp, "full.txt")
with open(full, "w") as f:
    f.write("0 1 2\n1 0 3\n2 3 0\n")
for path in (lower, full):
    r = ct.run([T, "edges", "--threshold", "2.5", path])
    rep.check(r.stdout == "1 0 1\n2 0 2\n".replace("1 0 1", "0 1 1").replace("2 0 2", "0 2 2"),
              "edges %s: %r" % (os.path.basename(path), r.stdout))
for f in os.listdir(tmp):
    os.unlink(os.path.join(tmp, f))
os.rmdir(tmp)
rep.finish()
