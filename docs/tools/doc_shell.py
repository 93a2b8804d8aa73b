#!/usr/bin/env python3
"""Run the shell snippets of the docs against a build, and check the
command lines they quote.

The C and C++ code the docs show is tied to files that the tests build
(doc_includes.py, `<!-- include: FILE -->`); this does the same for the
shell. Every fenced block whose language is sh, bash, shell or console in
docs/*.md and README.md is run, unless a marker line right above it says
why not:

    <!-- shell: skip: builds and installs the project -->
    ```sh
    ...
    ```

A `console` block (or any block whose lines start with "$ ") is a session:
each "$ COMMAND" runs and the lines under it are its expected output, line
for line, where a line " ..." stands for any number of lines. Other blocks
run as one bash script (`set -e`), and must exit 0.

They run in a fresh folder holding links to the source tree's docs/,
examples/ and tools/ and to the build as build/, with build/tools first in
PATH (so `topoml` and `topoml-conformance` are the build's), HOME and
XDG_CACHE_HOME inside it, and no TOPOML_CONFIG or TOPOML_PLUGIN_PATH.

Besides, every inline `topoml COMMAND ... --option` and
`topoml-conformance ... --option` of the pages must name an option that the
command's --help lists (so a page cannot show `topoml barcode --json`).

Usage: doc_shell.py --root SRC --build BUILD [--list]
Exit status 0: every snippet ran as shown; 1: one did not (each failure is
named with its page and line); 2: the check could not be made.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

FENCE = re.compile(r"^(```+)([\w-]*)[^\n]*\n(.*?)^\1\s*$", re.S | re.M)
SKIP = re.compile(r"^<!-- shell: skip: (.+?) -->\s*$")
SHELLS = {"sh", "bash", "shell", "console"}
INLINE = re.compile(r"`(topoml(?:-conformance)? [^`]*)`")


def pages(root):
    docs = os.path.join(root, "docs")
    out = [os.path.join(docs, n) for n in sorted(os.listdir(docs)) if n.endswith(".md")]
    readme = os.path.join(root, "README.md")
    return out + ([readme] if os.path.exists(readme) else [])


def snippets(path):
    """[(line, lang, body, skip reason or None)] of one page."""
    text = open(path, encoding="utf-8").read()
    out = []
    for m in FENCE.finditer(text):
        lang = m.group(2).lower()
        if lang not in SHELLS:
            continue
        line = text.count("\n", 0, m.start()) + 1
        before = text[:m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        s = SKIP.match(before)
        out.append((line, lang, m.group(3), s.group(1) if s else None))
    return out


def session(body):
    """[(command, [expected lines])] of a console block."""
    steps = []
    for ln in body.rstrip("\n").split("\n"):
        if ln.startswith("$ "):
            steps.append((ln[2:], []))
        elif steps:
            steps[-1][1].append(ln)
    return steps


def output_matches(expected, actual):
    """Expected lines, " ..." standing for any run of lines, against actual."""
    def match(i, j):
        while i < len(expected):
            if expected[i].strip() == "...":
                return any(match(i + 1, k) for k in range(j, len(actual) + 1))
            if j >= len(actual) or expected[i].rstrip() != actual[j].rstrip():
                return False
            i, j = i + 1, j + 1
        return j == len(actual)
    return match(0, 0)


def run_snippet(where, lang, body, env, cwd):
    """A problem (str), or None."""
    steps = session(body)
    if lang == "console" or steps:
        if not steps:
            return "%s: a console block without a '$ ' command" % where
        for cmd, expected in steps:
            r = subprocess.run(["bash", "-c", cmd], cwd=cwd, env=env, capture_output=True,
                               text=True, timeout=300)
            if r.returncode != 0:
                return "%s: `%s` exited %d: %s" % (where, cmd, r.returncode, r.stderr[-500:])
            if expected and not output_matches(expected, r.stdout.rstrip("\n").split("\n")):
                return "%s: `%s` printed\n%s\nnot what the page shows:\n%s" % (
                    where, cmd, r.stdout, "\n".join(expected))
        return None
    r = subprocess.run(["bash", "-e", "-c", body], cwd=cwd, env=env, capture_output=True,
                       text=True, timeout=300)
    if r.returncode != 0:
        return "%s: exited %d: %s%s" % (where, r.returncode, r.stdout[-300:], r.stderr[-500:])
    return None


def help_options(build, prog, cmd, cache):
    key = (prog, cmd)
    if key not in cache:
        exe = os.path.join(build, "tools", prog)
        args = [exe] + ([cmd] if cmd else []) + ["--help"]
        r = subprocess.run(args, capture_output=True, text=True)
        cache[key] = set(re.findall(r"(?<![\w-])(--[a-z][\w-]*)", r.stdout)) \
            if r.returncode == 0 else None
    return cache[key]


def inline_problems(path, rel, build, commands, cache):
    problems = []
    text = open(path, encoding="utf-8").read()
    # Inline spans only: fenced blocks are run instead.
    prose = FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    for m in INLINE.finditer(prose):
        words = m.group(1).split()
        prog = words[0]
        cmd = None
        if prog == "topoml":
            if len(words) < 2 or words[1] not in commands:
                continue
            cmd = words[1]
        known = help_options(build, prog, cmd, cache)
        if known is None:
            continue
        for w in words[1:]:
            opt = w.split("=")[0]
            if opt.startswith("--") and re.fullmatch(r"--[a-z][\w-]*", opt) and opt not in known:
                line = prose.count("\n", 0, m.start()) + 1
                problems.append("%s:%d: `%s`: %s takes no %s (see %s --help)" %
                                (rel, line, m.group(1), " ".join(filter(None, [prog, cmd])),
                                 opt, " ".join(filter(None, [prog, cmd]))))
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", required=True, help="the source tree")
    ap.add_argument("--build", required=True, help="the build tree")
    ap.add_argument("--list", action="store_true", help="list the snippets, run nothing")
    a = ap.parse_args()
    root, build = os.path.abspath(a.root), os.path.abspath(a.build)
    topoml = os.path.join(build, "tools", "topoml")
    if not os.access(topoml, os.X_OK):
        print("doc_shell: %s is not built" % topoml, file=sys.stderr)
        return 2
    top = subprocess.run([topoml, "--help"], capture_output=True, text=True).stdout
    commands = set(re.findall(r"^  (\w[\w-]*) {2,}\S", top.split("Commands:")[-1], re.M))
    problems, ran, skipped = [], 0, 0
    cache = {}
    with tempfile.TemporaryDirectory(prefix="topoml-doc-shell-") as tmp:
        for d in ("docs", "examples", "tools"):
            os.symlink(os.path.join(root, d), os.path.join(tmp, d))
        os.symlink(build, os.path.join(tmp, "build"))
        env = {k: v for k, v in os.environ.items()
               if k not in ("TOPOML_CONFIG", "TOPOML_PLUGIN_PATH")}
        env.update(PATH=os.path.join(build, "tools") + os.pathsep + env.get("PATH", ""),
                   HOME=os.path.join(tmp, "home"), XDG_CACHE_HOME=os.path.join(tmp, "cache"),
                   LC_ALL="C")
        os.makedirs(env["HOME"])
        for path in pages(root):
            rel = os.path.relpath(path, root)
            problems += inline_problems(path, rel, build, commands, cache)
            for line, lang, body, skip in snippets(path):
                where = "%s:%d" % (rel, line)
                if a.list:
                    print("%s %s" % (where, "skip: " + skip if skip else "run"))
                    continue
                if skip:
                    skipped += 1
                    continue
                ran += 1
                p = run_snippet(where, lang, body, env, tmp)
                if p:
                    problems.append(p)
    for p in problems:
        print("FAIL: " + p, file=sys.stderr)
    if not a.list:
        print("%d snippets run, %d skipped (marked), %d problems" % (ran, skipped, len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
