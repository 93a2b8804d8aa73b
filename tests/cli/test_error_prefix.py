"""One error style across the `topoml` command line: every message of a
subcommand on stderr starts "topoml CMD: ", then the file where there is
one ("FILE:" and "LINE:" where the input is at fault), then the reason;
usage errors add one "Try 'topoml CMD --help'." line and exit 2, other
errors exit 1. Checked for every subcommand with an unknown option, an
option without its value, a bad value, a missing input file, a malformed
input and an output file that cannot be created."""
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import clitest as ct

a = ct.args()
rep = ct.Report()
tmp = tempfile.mkdtemp()


def write(name, text):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write(text)
    return path


matrix = write("m.lower_distance_matrix", "1\n2,3\n4,x,6\n")
good_matrix = write("g.lower_distance_matrix", "1\n2,3\n4,5,6\n")
cloud = write("c.csv", "0,0\n1,0\n0,1x\n")
good_cloud = write("g.csv", "0,0\n1,0\n0,1\n")
diagram = write("d.txt", "0 0 1\n0 0.5 2\n1 2 oops\n")
good_diagram = write("g.txt", "0 0 1\n1 0.5 2\n")
missing = os.path.join(tmp, "no-such-file.txt")
no_dir = os.path.join(tmp, "no-such-dir", "out")

# command: (a bad option value, an option that takes a value, the
# arguments before the input files, the number of input files, a malformed
# input (its bad line is 3), a good input)
commands = {
    "barcode": (["--dim", "x"], "--format", [], 1, matrix, good_matrix),
    "distance": (["--metric", "x"], "--metric", [], 1, cloud, good_cloud),
    "edges": (["--threshold", "x"], "--format", ["--threshold", "1"], 1, matrix, good_matrix),
    # (backends takes no option whose value it checks: --config names a file)
    "backends": (None, "--config", [], 0, None, None),
    "image": (["--width", "x"], "--dim", [], 1, diagram, good_diagram),
    "features": (["--levels", "x"], "--dim", [], 1, diagram, good_diagram),
    "compare": (["--order", "x"], "--dim", [], 2, diagram, good_diagram),
    "plot": (["--kind", "x"], "--dim", [], 1, diagram, good_diagram),
}


def check_usage(cmd, args, what, reason):
    r = ct.run([a.topoml, cmd] + args, check=False)
    lines = r.stderr.splitlines()
    ok = (r.returncode == 2 and len(lines) == 2 and
          re.match(r"^topoml %s: %s" % (cmd, reason), lines[0]) is not None and
          lines[1] == "Try 'topoml %s --help'." % cmd)
    rep.check(ok, "%s %s: %d %r" % (cmd, what, r.returncode, r.stderr))


def check_error(cmd, args, what, pattern):
    r = ct.run([a.topoml, cmd] + args, check=False)
    lines = r.stderr.splitlines()
    ok = (r.returncode == 1 and len(lines) >= 1 and
          re.match(r"^topoml %s: %s" % (cmd, pattern), lines[0]) is not None and
          all(ln.startswith("topoml %s: " % cmd) or ln.startswith("topoml warning: ")
              for ln in lines))
    rep.check(ok, "%s %s: %d %r" % (cmd, what, r.returncode, r.stderr))


for cmd, (bad_value, takes_value, pre, n_files, malformed, good) in commands.items():
    check_usage(cmd, ["--no-such-option"], "unknown long option",
                re.escape("unknown option '--no-such-option'"))
    check_usage(cmd, ["-Z"], "unknown short option", re.escape("unknown option '-Z'"))
    check_usage(cmd, [takes_value], "option without its value",
                re.escape("option '%s' needs a value" % takes_value))
    if bad_value is not None:
        check_usage(cmd, bad_value, "bad value", r".*'x'")
    if n_files == 0:
        continue
    check_error(cmd, pre + [missing] * n_files, "missing input",
                re.escape(missing) + ": No such file or directory")
    check_error(cmd, pre + [malformed] * n_files, "malformed input",
                re.escape(malformed) + ":3: ")
    check_error(cmd, pre + [good] * n_files + ["-o", no_dir], "-o in a missing folder",
                re.escape(no_dir) + ": No such file or directory$")

r = ct.run([a.topoml, "no-such-command"], check=False)
rep.check(r.returncode == 2 and r.stderr.startswith("topoml: unknown command 'no-such-command'"),
          "unknown command: %r" % r.stderr[:80])

for f in os.listdir(tmp):
    os.unlink(os.path.join(tmp, f))
os.rmdir(tmp)
rep.finish()
