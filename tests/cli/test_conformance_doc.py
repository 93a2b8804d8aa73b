"""docs/conformance.md's examples are what topoml-conformance writes today:
the certificate example has a real certificate's keys in the same order,
and the same values for every key that does not change from run to run or
machine to machine (format, plugin, versions, tier, devices, verdict,
summary); the gate's progress line quotes the real number of quick-tier
cases. The real run is the quick tier of the cpp-compat plugin, certified
into a temporary cache folder, as the gate runs it."""
import os
import re
import subprocess
import sys
import tempfile

import clitest

A = clitest.args()
SRC = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
DOC = os.path.join(SRC, "docs", "conformance.md")
STEADY = ("format", "plugin", "core_version", "abi_version", "suite_version", "tier",
          "devices", "verdict", "summary")
failures = []


def check(what, ok, detail=""):
    if not ok:
        failures.append(what)
        print("FAIL: %s %s" % (what, detail))


def doc_certificate(text):
    """[(key, value)] of the page's example: the fenced block that starts
    with format=topoml-certificate-; a value ends where two spaces start the
    note beside it."""
    m = re.search(r"```\n(format=topoml-certificate-.*?)```", text, re.S)
    if not m:
        return []
    return [(k, re.split(r"\s{2,}", v.strip())[0]) for k, v in
            (line.split("=", 1) for line in m.group(1).splitlines() if "=" in line)]


text = open(DOC, encoding="utf-8").read()
example = doc_certificate(text)
check("the page has a certificate example", len(example) > 5, example)
progress = re.findall(r"certifying backend\s+'([^']+)':\s+(\d+)\s+of\s+(\d+)\s+cases",
                      text)
check("the page has one progress line", len(progress) == 1, progress)

plugin = os.path.join(A.build, "plugins-out", "topoml-backend-cpp-compat.so")
tool = os.path.join(A.build, "tools", "topoml-conformance")
if not os.path.exists(plugin):
    check("the cpp-compat plugin is built (%s)" % plugin, False)
else:
    with tempfile.TemporaryDirectory() as cache:
        r = subprocess.run([tool, "--plugin", plugin, "--tier", "quick", "--certify",
                            "--fail-fast", "--cache-dir", cache, "--quiet", "--progress",
                            "--seed", "1"], capture_output=True, text=True, timeout=600)
        check("the quick tier certifies cpp-compat", r.returncode == 0, r.stderr[-2000:])
        certs = [f for f in os.listdir(cache) if f.endswith(".cert")]
        check("one certificate", len(certs) == 1, certs)
        real = []
        if certs:
            with open(os.path.join(cache, certs[0]), encoding="utf-8") as f:
                real = [tuple(line.rstrip("\n").split("=", 1)) for line in f if "=" in line]
        check("the example has the real certificate's keys, in order",
              [k for k, _ in example] == [k for k, _ in real],
              "\n  page: %s\n  real: %s" % ([k for k, _ in example], [k for k, _ in real]))
        ex, re_ = dict(example), dict(real)
        for k in STEADY:
            check("the example's %s is the real one" % k, ex.get(k) == re_.get(k),
                  "page: %r, real: %r" % (ex.get(k), re_.get(k)))
        totals = {int(line.split()[2]) for line in r.stderr.splitlines()
                  if line.startswith("progress ")}
        check("one case count in the progress lines", len(totals) == 1, totals)
        if progress and len(totals) == 1:
            name, done, total = progress[0]
            check("the progress line names the example's plugin and the real count",
                  name == re_.get("plugin") and int(total) == totals.pop() and
                  int(done) < int(total), progress)

print("%d failures" % len(failures))
sys.exit(1 if failures else 0)
