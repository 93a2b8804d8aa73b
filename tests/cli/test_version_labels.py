"""The version labels of the headers and docs ("appended in 0.3", "since
core 0.4", ...) agree with the history tables (docs/embedding.md,
"Versions"; docs/plugin-abi.md, "Version history") and with the one
version, project() in CMakeLists.txt (docs/tools/check_versions.py): the tree
passes; copies with the disagreements the check exists for fail, naming the
file and line."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import clitest as ct

ct.args()
rep = ct.Report()
SRC = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
TOOL = os.path.join(SRC, "docs", "tools", "check_versions.py")


def check(root):
    return subprocess.run([sys.executable, TOOL, "--root", root], capture_output=True, text=True)


r = check(SRC)
rep.check(r.returncode == 0, "the tree's labels agree: %s%s" % (r.stdout, r.stderr))
rep.check(int(r.stdout.split()[0]) >= 15, "labels found: %r" % r.stdout)


def mutated(rel, old, new, expect):
    with tempfile.TemporaryDirectory() as tmp:
        for d in ("docs", "core/include", "plugin-api/include"):
            shutil.copytree(os.path.join(SRC, d), os.path.join(tmp, d))
        shutil.copy(os.path.join(SRC, "CMakeLists.txt"), tmp)
        path = os.path.join(tmp, rel)
        text = open(path).read()
        rep.check(re.search(old, text) is not None, "%s has %r" % (rel, old))
        open(path, "w").write(re.sub(old, new, text, count=1))
        r = check(tmp)
        rep.check(r.returncode == 1 and expect in r.stderr,
                  "%s: %r -> %r fails naming %r: %s" % (rel, old, new, expect, r.stderr))


# The project one minor version behind the labels (version.h said 0.3.0
# while plugin.h said "appended in core 0.4").
v = re.search(r"project\(topoml VERSION (\d+)\.(\d+)\.", open(os.path.join(SRC, "CMakeLists.txt")).read())
mutated("CMakeLists.txt", r"project\(topoml VERSION \d+\.\d+\.\d+",
        "project(topoml VERSION %s.%d.0" % (v.group(1), int(v.group(2)) - 1), "above the project's")
# A header's label that the table contradicts (collapse "appended in 0.2").
mutated("core/include/topoml/topoml.h", r"Appended in 0\.3 \(read only", "Appended in 0.2 (read only",
        "topoml.h:")
# A doc's label that the table contradicts.
mutated("docs/embedding.md", r"appended to `topoml_rips_options` in 0\.3",
        "appended to `topoml_rips_options` in 0.2", "embedding.md:")
mutated("plugin-api/include/topoml/plugin.h", r"Appended in core 0\.4 \(read only",
        "Appended in core 0.3 (read only", "topoml_input_v1.memory")
# A label of a version no table has.
mutated("docs/plugin-abi.md", r"since core 0\.3", "since core 0.9", "no history table has")
# A field labelled but missing from the tables.
mutated("docs/embedding.md", r"`topoml_backend_info.isolation` and ", "", "in no history table")
rep.finish()
