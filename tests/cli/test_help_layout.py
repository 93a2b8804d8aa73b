"""Both programs, `topoml` (and each of its commands) and
`topoml-conformance`, print their help the same way, from one table per
command (tools/cli/cli_help.c) that is also what the command parses: options at
column 2, what they do from column 26 (on the option's line, or on the next
when the option reaches the column), wrapped lines at column 26 too, no line
over 79 characters; `-h, --help` listed everywhere, `--version` by each
program; `topoml help CMD` prints exactly `topoml CMD --help`. Every option
the help lists is taken, and the shared options a command does not list
are refused ("unknown option", exit 2, "Try 'PROG --help'."), so the table
and the parser agree. The man pages are made from this text
(test_man_pages.py checks that)."""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(__file__))
import clitest as ct

a = ct.args()
rep = ct.Report()
COLUMN, WIDTH = 26, 79
conformance = os.path.join(os.path.dirname(os.path.abspath(a.topoml)), "topoml-conformance")

top = ct.run([a.topoml, "--help"]).stdout
commands = re.findall(r"^  (\w[\w-]*) {2,}\S", top.split("Commands:")[1], re.M)
rep.check(set(commands) >= {"barcode", "distance", "edges", "backends", "image", "features",
                            "compare", "plot"}, "the command list: %r" % commands)

OPTION = re.compile(r"^  (-\S.*?)(?: {2,}(\S.*))?$")
# Options several commands share: each command that does not list one must
# refuse it.
SHARED = ["--backend", "--config", "--max-memory", "--quiet", "--verbose", "--json", "--format",
          "--output", "--threshold"]


def layout(name, h):
    """The flags the help lists, after checking its layout."""
    lines = h.splitlines()
    rep.check(h.startswith("Usage: " + name), "%s: a Usage line: %r" % (name, h[:60]))
    long_lines = [ln for ln in lines if len(ln) > WIDTH]
    rep.check(not long_lines, "%s: lines over %d columns: %r" % (name, WIDTH, long_lines))
    # The options paragraph: from the first option line to the next blank.
    start = next((i for i, ln in enumerate(lines) if OPTION.match(ln)), None)
    rep.check(start is not None, "%s: an options paragraph" % name)
    if start is None:
        return []
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
    rep.check(not bad, "%s: every description at column %d: %r" % (name, COLUMN, bad))
    rep.check("-h, --help" in flags, "%s: lists -h, --help" % name)
    return flags


def takes(prog, flags, missing_input):
    """Each option listed is taken (never "unknown option"); an option that
    wants a value gets one (a wrong value is another message)."""
    for f in flags:
        for opt in re.findall(r"--[\w-]+", f):
            if opt in ("--help", "--version"):
                continue
            words = f.split()
            value = words[-1] != opt and not words[-1].startswith("-")
            r = ct.run(prog + [opt] + (["1"] if value else []) + missing_input, check=False,
                       timeout=120)
            rep.check("unknown option" not in r.stderr and "needs a value" not in r.stderr,
                      "%s takes %s: %r" % (" ".join(prog), opt, r.stderr[:200]))


def refuses(prog, name, flags, missing_input):
    listed = set(re.findall(r"--[\w-]+", " ".join(flags)))
    for opt in SHARED:
        # (getopt_long takes a unique prefix: --output for --output-file)
        if any(x.startswith(opt) for x in listed):
            continue
        r = ct.run(prog + [opt, "1"] + missing_input, check=False, timeout=120)
        rep.check(r.returncode == 2 and "unknown option '%s'" % opt in r.stderr and
                  r.stderr.rstrip().endswith("Try '%s --help'." % name),
                  "%s refuses %s, which it does not list: %r" % (name, opt, r.stderr[:200]))


def bad_option(prog, name):
    for bad, what in (("--no-such-option", "unknown option '--no-such-option'"),
                      ("-Z", "unknown option '-Z'")):
        r = ct.run(prog + [bad], check=False)
        lines = r.stderr.splitlines()
        rep.check(r.returncode == 2 and len(lines) == 2 and lines[0] == "%s: %s" % (name, what)
                  and lines[1] == "Try '%s --help'." % name,
                  "%s %s: %r" % (name, bad, r.stderr))


# The programs themselves.
for prog, name in ((a.topoml, "topoml"), (conformance, "topoml-conformance")):
    h = ct.run([prog, "--help"]).stdout
    flags = layout(name, h)
    rep.check("--version" in flags, "%s --help lists --version: %r" % (name, flags))
    rep.check(ct.run([prog, "-h"]).stdout == h, "%s -h is --help" % name)
    v = ct.run([prog, "--version"]).stdout
    rep.check(re.match(r"%s \d+\.\d+\.\d+ " % name, v) is not None, "%s --version: %r" % (name, v))
    bad_option([prog], name)
takes_conf = layout("topoml-conformance", ct.run([conformance, "--help"]).stdout)
refuses([conformance], "topoml-conformance",
        takes_conf + ["--json", "--config", "--quiet", "--verbose"], ["--list"])

for cmd in commands:
    h = ct.run([a.topoml, cmd, "--help"]).stdout
    name = "topoml " + cmd
    rep.check(ct.run([a.topoml, "help", cmd]).stdout == h, "help %s is %s --help" % (cmd, cmd))
    flags = layout(name, h)
    takes([a.topoml, cmd], flags, ["/nonexistent/in.txt"])
    refuses([a.topoml, cmd], name, flags, ["/nonexistent/in.txt"])
    bad_option([a.topoml, cmd], name)

# `backends` runs no op: it takes neither --backend nor --max-memory nor
# --quiet (no progress to hide).
h = ct.run([a.topoml, "backends", "--help"]).stdout
for opt in ("--backend", "--max-memory", "--quiet"):
    rep.check(opt not in h, "backends --help does not list %s" % opt)
rep.finish()
