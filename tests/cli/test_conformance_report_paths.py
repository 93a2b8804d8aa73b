"""topoml-conformance refuses a --json or --junit file it could not write
(a missing folder, a folder that is a file) at once, with status 2 and a
message naming the option and the folder, before any case runs; a file in
an existing folder, a bare file name and "-" still work."""
import os
import subprocess
import sys
import tempfile
import time

import clitest

A = clitest.args()
TOOL = os.path.abspath(os.path.join(A.build, "tools", "topoml-conformance"))
SCALAR = os.path.abspath(os.path.join(A.build, "plugins-out", "topoml-backend-scalar.so"))
failures = []


def check(what, ok, detail=""):
    if not ok:
        failures.append(what)
        print("FAIL: %s %s" % (what, detail))


def run(args, cwd=None):
    start = time.monotonic()
    env = dict(os.environ, TOPOML_PLUGIN_PATH="")
    env.pop("TOPOML_CONFIG", None)
    r = subprocess.run([TOOL, "--plugin", SCALAR, "--tier", "full"] + args,
                       capture_output=True, text=True, cwd=cwd, timeout=600, env=env)
    return r, time.monotonic() - start


with tempfile.TemporaryDirectory() as tmp:
    afile = os.path.join(tmp, "a-file")
    open(afile, "w").close()
    for option in ("--json", "--junit"):
        for bad, folder in ((os.path.join(tmp, "missing", "deeper", "r.out"),
                             os.path.join(tmp, "missing", "deeper")),
                            (os.path.join(afile, "r.out"), afile)):
            r, secs = run([option, bad])
            what = "%s into %s" % (option, folder)
            check(what + ": status 2", r.returncode == 2, "%d %s" % (r.returncode, r.stderr))
            check(what + ": says which option and folder", option in r.stderr and folder in r.stderr,
                  r.stderr)
            check(what + ": no case ran", "PASS" not in r.stdout and secs < 5,
                  "%.1f s, stdout %r" % (secs, r.stdout[:200]))
            check(what + ": nothing written", not os.path.exists(bad))
    # The refusal is about the folder: good paths of every kind still work.
    good = os.path.join(tmp, "r.json")
    r, _ = run(["--case", "h0/tiny/*", "--json", good, "--junit", "bare.xml"], cwd=tmp)
    check("existing folder and bare name: status 0", r.returncode == 0, r.stderr)
    check("existing folder: written", os.path.getsize(good) > 0)
    check("bare name: written", os.path.getsize(os.path.join(tmp, "bare.xml")) > 0)
    r, _ = run(["--case", "h0/tiny/*", "--json", "-"])
    check("--json -: status 0 and JSON on stdout", r.returncode == 0 and r.stdout.lstrip().startswith("{"),
          r.stderr)

print("%d failures" % len(failures))
sys.exit(1 if failures else 0)
