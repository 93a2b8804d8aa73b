"""The man pages the build made (<build>/man/topoml.1, topoml-conformance.1)
say what the programs' --help says: rendered by groff (no warnings), the
words of `topoml --help`, of every `topoml COMMAND --help` and of
`topoml-conformance --help` appear in the page in the same order, and every
command has its own section."""
import os
import re
import shutil
import subprocess
import sys

import clitest

A = clitest.args()
failures = []


def check(what, ok, detail=""):
    if not ok:
        failures.append(what)
        print("FAIL: %s %s" % (what, detail))


def words(text):
    return text.split()


def subsequence(needle, hay):
    """Index in hay after needle's words in order, or -1."""
    it, n = 0, 0
    for w in hay:
        if n == len(needle):
            break
        if w == needle[n]:
            n += 1
        it += 1
    return it if n == len(needle) else -1


def rendered(page):
    r = subprocess.run(["groff", "-man", "-Tascii", "-ww", "-P-cbou", page],
                       capture_output=True, text=True)
    check("%s: groff renders it without warnings" % page, r.returncode == 0 and not r.stderr,
          r.stderr)
    return words(r.stdout)


def help_of(*cmd):
    return subprocess.run(list(cmd) + ["--help"], capture_output=True, text=True).stdout


if not shutil.which("groff"):
    raise SystemExit("test_man_pages: groff (Debian's groff-base, with man-db) is missing")
man = os.path.join(A.build, "man")
cli = A.topoml
conf = os.path.join(A.build, "tools", "topoml-conformance")

page = rendered(os.path.join(man, "topoml-conformance.1"))
h = help_of(conf)
check("topoml-conformance.1 has every word of --help in order",
      subsequence(words(h.split("\n", 1)[1]), page) >= 0)

page = rendered(os.path.join(man, "topoml.1"))
top = help_of(cli)
check("topoml.1 has every word of topoml --help in order",
      subsequence(words(top.split("\n", 1)[1]), page) >= 0)
commands = re.findall(r"^  (\w+)\s{2,}", top.split("Commands:", 1)[1], re.M)
check("topoml --help lists commands", len(commands) >= 5, str(commands))
text = " ".join(page)
for cmd in commands:
    at = text.find("topoml %s Usage:" % cmd)
    if at < 0:
        at = text.find("topoml %s topoml %s" % (cmd, cmd))
    check("topoml.1 has a section for %s" % cmd, at >= 0)
    h = help_of(cli, cmd)
    body = words(h.split("\n", 1)[1])
    check("topoml.1 has every word of topoml %s --help in order" % cmd,
          at >= 0 and subsequence(body, words(text[at:])) >= 0)

print("%d failures" % len(failures))
sys.exit(1 if failures else 0)
