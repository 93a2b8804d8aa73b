#!/usr/bin/env python3
"""Keep the code blocks of the docs identical to the files they show.

A block in a Markdown file under docs/ is tied to a file of the repository
by two marker lines around it:

    <!-- include: examples/example_plugin.c -->
    ```c
    ...the file, byte for byte...
    ```
    <!-- end include -->

`doc_includes.py --check` (the default) exits 1 and names every block that
differs from its file, or whose file is missing; `--update` rewrites the
blocks from the files. The files themselves are compiled and run by the
tests (tests/cli/test_examples.sh), so a page cannot show code that does not
build.
"""
import argparse
import os
import re
import sys

BLOCK = re.compile(
    r"^<!-- include: (?P<path>\S+) -->\n"
    r"(?P<fence>```+)(?P<lang>[^\n]*)\n"
    r"(?P<body>.*?)"
    r"^(?P=fence)\n"
    r"<!-- end include -->$",
    re.S | re.M)
MARKER = re.compile(r"^<!-- (include: \S+|end include) -->$", re.M)


def blocks(text):
    return list(BLOCK.finditer(text))


def process(root, md_path, update):
    """Problems of one page (a list of strings); with update, fix the page."""
    text = open(md_path, encoding="utf-8").read()
    found = blocks(text)
    problems = []
    if len(MARKER.findall(text)) != 2 * len(found):
        problems.append("%s: an include marker without its block or end marker" % md_path)
    out, last = [], 0
    for m in found:
        src = os.path.join(root, m.group("path"))
        line = text.count("\n", 0, m.start()) + 1
        if not os.path.isfile(src):
            problems.append("%s:%d: %s: no such file" % (md_path, line, m.group("path")))
            continue
        want = open(src, encoding="utf-8").read()
        if not want.endswith("\n"):
            want += "\n"
        if "\n" + m.group("fence") in "\n" + want:
            problems.append("%s:%d: %s contains the fence %s" %
                            (md_path, line, m.group("path"), m.group("fence")))
            continue
        if m.group("body") != want:
            problems.append("%s:%d: the block differs from %s" % (md_path, line, m.group("path")))
        out.append(text[last:m.start("body")])
        out.append(want)
        last = m.end("body")
    out.append(text[last:])
    new = "".join(out)
    if update and new != text:
        with open(md_path, "w", encoding="utf-8") as f:
            f.write(new)
    return problems, len(found)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--root", default=os.path.normpath(os.path.join(here, "..", "..")),
                    help="the repository (default: this script's)")
    ap.add_argument("--docs", help="the folder of Markdown pages (default: ROOT/docs)")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--check", action="store_true", help="report differences (default)")
    g.add_argument("--update", action="store_true", help="rewrite the blocks from the files")
    a = ap.parse_args()
    docs = a.docs or os.path.join(a.root, "docs")
    problems, n = [], 0
    for d, _, files in sorted(os.walk(docs)):
        for f in sorted(files):
            if f.endswith(".md"):
                p, k = process(a.root, os.path.join(d, f), a.update)
                problems += p
                n += k
    for p in problems:
        print(p, file=sys.stderr)
    print("%d included blocks, %d problems" % (n, len(problems)))
    return 1 if problems and not a.update else 0


if __name__ == "__main__":
    sys.exit(main())
