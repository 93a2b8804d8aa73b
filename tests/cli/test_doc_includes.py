"""The code blocks of the docs are the files they name, byte for byte
(docs/tools/doc_includes.py): the real docs pass; a copy with one byte of a
block changed, a block naming a missing file, or a marker without its block
fails, naming the page and line; --update puts the file back in."""
import os
import shutil
import subprocess
import sys
import tempfile

import clitest

A = clitest.args()
SRC = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
TOOL = os.path.join(SRC, "docs", "tools", "doc_includes.py")
failures = []


def check(what, ok, detail=""):
    if not ok:
        failures.append(what)
        print("FAIL: %s %s" % (what, detail))


def run(*args):
    return subprocess.run([sys.executable, TOOL] + list(args), capture_output=True, text=True)


r = run("--root", SRC)
check("the docs' blocks match their files", r.returncode == 0, r.stderr + r.stdout)
n = int(r.stdout.split()[0])
check("writing-a-plugin.md includes the examples", n >= 5, r.stdout)

with tempfile.TemporaryDirectory() as tmp:
    shutil.copytree(os.path.join(SRC, "docs"), os.path.join(tmp, "docs"))
    shutil.copytree(os.path.join(SRC, "examples"), os.path.join(tmp, "examples"))
    page = os.path.join(tmp, "docs", "writing-a-plugin.md")
    good = open(page).read()
    # One byte of the plugin's block changed.
    at = good.index("#include <topoml/plugin.h>", good.index("<!-- include: examples/example_plugin.c"))
    open(page, "w").write(good[:at] + "#include <topoml/plugin.h> " + good[at + 26:])
    r = run("--root", tmp)
    check("a changed byte fails", r.returncode == 1 and "writing-a-plugin.md:" in r.stderr
          and "example_plugin.c" in r.stderr, r.stderr)
    r = run("--root", tmp, "--update")
    check("--update puts the file back", r.returncode == 0 and open(page).read() == good, r.stderr)
    # The file changed, the page not.
    with open(os.path.join(tmp, "examples", "host.c"), "a") as f:
        f.write("/* one more line */\n")
    r = run("--root", tmp)
    check("a changed file fails", r.returncode == 1 and "host.c" in r.stderr, r.stderr)
    os.remove(os.path.join(tmp, "examples", "host.c"))
    r = run("--root", tmp)
    check("a missing file fails", r.returncode == 1 and "no such file" in r.stderr, r.stderr)
    shutil.copy(os.path.join(SRC, "examples", "host.c"), os.path.join(tmp, "examples", "host.c"))
    open(page, "w").write(good.replace("<!-- end include -->", "", 1))
    r = run("--root", tmp)
    check("a block without its end marker fails", r.returncode == 1, r.stderr)

print("%d failures" % len(failures))
sys.exit(1 if failures else 0)
