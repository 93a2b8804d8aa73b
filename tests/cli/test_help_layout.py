"""Every `topoml` command's help is laid out the same way, from one table
per command (tools/cli/cli_help.c): options at column 2, what they do from
column 26 (on the option's line, or on the next when the option reaches the
column), wrapped lines at column 26 too, no line over 79 characters;
`topoml help CMD` prints exactly `topoml CMD --help`; and every option the
help lists is one the command takes (so the table and the parser agree).
The man pages are made from this text (test_man_pages.py checks that)."""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(__file__))
import clitest as ct

a = ct.args()
rep = ct.Report()
COLUMN, WIDTH = 26, 79

top = ct.run([a.topoml, "--help"]).stdout
commands = re.findall(r"^  (\w[\w-]*) {2,}\S", top.split("Commands:")[1], re.M)
rep.check(set(commands) >= {"barcode", "distance", "edges", "backends", "image", "features",
                            "compare", "plot"}, "the command list: %r" % commands)
rep.check(all(len(ln) <= WIDTH for ln in top.splitlines()), "topoml --help fits 79 columns")

OPTION = re.compile(r"^  (-\S.*?)(?: {2,}(\S.*))?$")
for cmd in commands:
    h = ct.run([a.topoml, cmd, "--help"]).stdout
    rep.check(ct.run([a.topoml, "help", cmd]).stdout == h, "help %s is %s --help" % (cmd, cmd))
    rep.check(h.startswith("Usage: topoml " + cmd), "%s: a Usage line" % cmd)
    lines = h.splitlines()
    long_lines = [ln for ln in lines if len(ln) > WIDTH]
    rep.check(not long_lines, "%s: lines over %d columns: %r" % (cmd, WIDTH, long_lines))
    # The options paragraph: from the first option line to the next blank.
    start = next(i for i, ln in enumerate(lines) if OPTION.match(ln))
    end = next((i for i in range(start, len(lines)) if not lines[i].strip()), len(lines))
    flags = []
    bad = []
    pending = False  # the option before has its text still to come
    for ln in lines[start:end]:
        m = OPTION.match(ln)
        if m:
            if pending:
                bad.append(ln)
            flags.append(m.group(1))
            if m.group(2) is None:
                pending = True  # reaches the column: text on the next line
                if len(ln) + 2 <= COLUMN:
                    bad.append(ln)
            else:
                pending = False
                if ln.index(m.group(2), len(m.group(1)) + 2) != COLUMN:
                    bad.append(ln)
        else:
            indent = len(ln) - len(ln.lstrip())
            pending = False
            if indent != COLUMN:
                bad.append(ln)
    rep.check(not bad, "%s: every description at column %d: %r" % (cmd, COLUMN, bad))
    rep.check("-h, --help" in flags, "%s: lists --help" % cmd)
    # Each option listed is taken: never "unknown option". An option that
    # wants a value gets one (a wrong value is a different message).
    for f in flags:
        for name in re.findall(r"--[\w-]+", f):
            if name == "--help":
                continue
            words = f.split()
            takes = words[-1] != name and not words[-1].startswith("-")
            args = [a.topoml, cmd, name] + (["1"] if takes else [])
            r = ct.run(args + ["/nonexistent/in.txt"], check=False, timeout=120)
            rep.check("unknown option" not in r.stderr and "needs a value" not in r.stderr,
                      "%s takes %s: %r" % (cmd, name, r.stderr[:200]))
rep.finish()
