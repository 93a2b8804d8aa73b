"""The shell snippets of docs/*.md and README.md run against this build as
the pages show them (docs/tools/doc_shell.py): a `$ ` session prints what
the page says, other blocks exit 0, a block that cannot run here carries
`<!-- shell: skip: REASON -->`; and every inline `topoml CMD --option` names
an option of that command. The real pages pass; copies with one thing wrong
each fail, naming the page and line."""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import clitest as ct

a = ct.args()
rep = ct.Report()
SRC = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
TOOL = os.path.join(SRC, "docs", "tools", "doc_shell.py")
BUILD = os.path.abspath(a.build)


def check(root):
    return subprocess.run([sys.executable, TOOL, "--root", root, "--build", BUILD],
                          capture_output=True, text=True, timeout=900)


r = check(SRC)
rep.check(r.returncode == 0, "the docs' snippets run as shown: %s%s" % (r.stdout, r.stderr[-2000:]))
ran = int(r.stdout.split()[0]) if r.stdout[:1].isdigit() else 0
rep.check(ran >= 2, "snippets run: %r" % r.stdout)


def mutated(page, old, new, expect):
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copytree(os.path.join(SRC, "docs"), os.path.join(tmp, "docs"), symlinks=True)
        shutil.copy(os.path.join(SRC, "README.md"), tmp)
        for d in ("examples", "tools"):
            os.symlink(os.path.join(SRC, d), os.path.join(tmp, d))
        path = os.path.join(tmp, page)
        text = open(path).read()
        rep.check(old in text, "%s has %r" % (page, old))
        open(path, "w").write(text.replace(old, new, 1))
        r = check(tmp)
        rep.check(r.returncode == 1 and expect in r.stderr,
                  "%s: %r -> %r fails naming %r: %s" % (page, old, new, expect, r.stderr[-600:]))


# An option the command does not have, in prose (as python.md had).
mutated("docs/python.md", "`topoml barcode --output json`", "`topoml barcode --json`",
        "docs/python.md:")
# A session whose output is not what the page shows.
mutated("docs/getting-started.md", " [0.181828,1.6317)", " [0.181828,1.7)",
        "docs/getting-started.md:30")
# A block that fails, unmarked.
mutated("docs/formats.md", "# ", "```sh\ntopoml barcode --no-such-option x\n```\n\n# ",
        "docs/formats.md:1: exited 2")
# The same block marked is skipped.
with tempfile.TemporaryDirectory() as tmp:
    shutil.copytree(os.path.join(SRC, "docs"), os.path.join(tmp, "docs"), symlinks=True)
    shutil.copy(os.path.join(SRC, "README.md"), tmp)
    for d in ("examples", "tools"):
        os.symlink(os.path.join(SRC, d), os.path.join(tmp, d))
    p = os.path.join(tmp, "docs", "formats.md")
    open(p, "w").write("<!-- shell: skip: a test -->\n```sh\nfalse\n```\n" + open(p).read())
    r = check(tmp)
    rep.check(r.returncode == 0 and "skipped" in r.stdout, "a marked block is skipped: %s%s" %
              (r.stdout, r.stderr[-300:]))
rep.finish()
