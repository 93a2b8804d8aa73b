#!/usr/bin/env python3
"""Man pages and their Markdown twins, made from a program's own --help.

The help text is the one source: `topoml --help` and `topoml COMMAND --help`
for topoml(1), `topoml-conformance --help` for topoml-conformance(1). The
build runs this on the programs it has just built (docs/tools/CMakeLists.txt)
to make <build>/man/*.1, which `cmake --install` puts under share/man/man1;
the documentation site runs it again for its Markdown pages
(docs/tools/build_site.py). So the manual always says what --help says.

The help text follows one layout: a "Usage:" line, a one-line summary
(which may wrap), then paragraphs; an option paragraph has lines
"  -x, --long ARG   what it does" with wrapped lines indented further; a
command list is a "Commands:" line with "  name   what it does" lines.

Usage: man_pages.py --program PATH [--commands] [--man FILE] [--md FILE]
"""
import argparse
import os
import re
import subprocess
import sys

OPTION = re.compile(r"^\s{1,8}(-[^\s].*?)(?:\s{2,}(\S.*))?$")
ENTRY = re.compile(r"^\s{2}(\w[\w-]*)\s{2,}(\S.*)$")


def help_text(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    if r.returncode != 0 or not r.stdout.startswith("Usage:"):
        raise SystemExit("man_pages: %s --help: status %d, %r" %
                         (" ".join(cmd), r.returncode, (r.stdout + r.stderr)[:200]))
    return r.stdout


def parse(text):
    """{'usage': str, 'summary': str, 'blocks': [(kind, data)]}: kind is
    'text' (lines), 'options' [(option, description)] or 'list'
    (title, [(name, description)])."""
    paras, cur = [], []
    for line in text.rstrip("\n").split("\n"):
        if line.strip():
            cur.append(line.rstrip())
        elif cur:
            paras.append(cur)
            cur = []
    if cur:
        paras.append(cur)
    first = paras.pop(0)
    usage = first[0][len("Usage:"):].strip()
    summary = " ".join(x.strip() for x in first[1:])
    blocks = []
    for p in paras:
        if p[0].rstrip().endswith(":") and len(p) > 1 and all(ENTRY.match(x) for x in p[1:]):
            blocks.append(("list", (p[0].rstrip()[:-1], [ENTRY.match(x).groups() for x in p[1:]]),
                           p))
            continue
        # Lines of options (with their wrapped lines) and lines of text.
        for line in p:
            m = OPTION.match(line)
            indent = len(line) - len(line.lstrip())
            last = blocks[-1] if blocks else None
            if m and indent <= 8:
                if not (last and last[0] == "options" and last[2] is p):
                    blocks.append(("options", [], p))
                blocks[-1][1].append([m.group(1).strip(), m.group(2) or ""])
            elif indent > 8 and last and last[0] == "options" and last[2] is p:
                opt = last[1][-1]
                opt[1] = (opt[1] + " " + line.strip()).strip()
            elif last and last[0] == "text" and last[2] is p:
                last[1].append(line.strip())
            else:
                blocks.append(("text", [line.strip()], p))
    blocks = [(k, [tuple(o) for o in d] if k == "options" else d)
              for k, d, *_ in blocks]
    return {"usage": usage, "summary": summary, "blocks": blocks}


def roff(s):
    s = s.replace("\\", "\\e").replace("-", "\\-")
    return s


def roff_line(s):
    s = roff(s)
    return "\\&" + s if s.startswith((".", "'")) else s


def man_blocks(blocks):
    out = []
    for kind, data in blocks:
        if kind == "text":
            out += [".PP"] + [roff_line(x) for x in data]
        elif kind == "options":
            for opt, desc in data:
                out += [".TP", ".B " + roff(opt), roff_line(desc)]
        else:
            title, entries = data
            out += [".PP", roff_line(title + ":")]
            for name, desc in entries:
                out += [".TP", ".B " + roff(name), roff_line(desc)]
    return out


def md_escape(s):
    return s.replace("<", "&lt;").replace(">", "&gt;").replace("*", "\\*").replace("|", "\\|")


def md_code(s):
    """Inline code that survives a Markdown table (no pipes inside)."""
    return "`%s`" % s if "|" not in s and "`" not in s else md_escape(s)


def md_blocks(blocks, level):
    out = []
    for kind, data in blocks:
        if kind == "text":
            out += [md_escape(" ".join(data)), ""]
        elif kind == "options":
            out += ["| option | what it does |", "| --- | --- |"]
            out += ["| %s | %s |" % (md_code(o), md_escape(d)) for o, d in data]
            out.append("")
        else:
            title, entries = data
            out += ["%s %s" % ("#" * level, title), ""]
            out += ["* `%s` — %s" % (n, md_escape(d)) for n, d in entries]
            out.append("")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--program", required=True)
    ap.add_argument("--commands", action="store_true",
                    help="also each command of the program's 'Commands:' list")
    ap.add_argument("--man", help="write the man page (roff) here")
    ap.add_argument("--md", help="write the Markdown page here")
    a = ap.parse_args()
    name = os.path.basename(a.program)
    top = parse(help_text([a.program, "--help"]))
    version = subprocess.run([a.program, "--version"], capture_output=True,
                             text=True).stdout.strip().split("\n")[0]
    commands = []
    if a.commands:
        for kind, data in top["blocks"]:
            if kind == "list":
                for cmd, _ in data[1]:
                    commands.append((cmd, parse(help_text([a.program, cmd, "--help"]))))
    if not (a.man or a.md):
        ap.error("give --man and/or --md")

    if a.man:
        # NAME is the summary's first sentence, DESCRIPTION the whole of it.
        short = re.split(r"(?<=[.:]) ", top["summary"], maxsplit=1)[0].rstrip(".:")
        out = ['.TH "%s" 1 "" "%s" "User Commands"' % (name.upper(), roff(version)),
               ".nh", ".ad l",
               ".SH NAME", "%s \\- %s" % (roff(name), roff(short)),
               ".SH SYNOPSIS", ".B " + roff(name), roff_line(top["usage"][len(name):].strip()),
               ".SH DESCRIPTION", roff_line(top["summary"])] + man_blocks(top["blocks"])
        if commands:
            out.append(".SH COMMANDS")
            for cmd, h in commands:
                out += [".SS %s %s" % (roff(name), roff(cmd)), ".B " + roff(h["usage"]), ".PP",
                        roff_line(h["summary"])] + man_blocks(h["blocks"])
        see = [n for n in ("topoml", "topoml-conformance") if n != name]
        out += [".SH SEE ALSO", ", ".join("\\fB%s\\fR(1)" % roff(n) for n in see)]
        os.makedirs(os.path.dirname(os.path.abspath(a.man)), exist_ok=True)
        with open(a.man, "w", encoding="utf-8") as f:
            f.write("\n".join(out) + "\n")

    if a.md:
        out = ["# %s(1)" % name, "",
               "Made from `%s --help`%s by `docs/tools/man_pages.py`, like the man "
               "page (`man %s`); %s." % (name, " and each command's `--help`" if commands else "",
                                         name, md_escape(version)), "",
               "## Synopsis", "", "```", top["usage"], "```", "",
               md_escape(top["summary"]), "", "## Description", ""] + md_blocks(top["blocks"], 3)
        if commands:
            out += ["## Commands", ""]
            for cmd, h in commands:
                out += ["### %s %s" % (name, cmd), "", "```", h["usage"], "```", "",
                        md_escape(h["summary"]), ""] + md_blocks(h["blocks"], 4)
        os.makedirs(os.path.dirname(os.path.abspath(a.md)), exist_ok=True)
        with open(a.md, "w", encoding="utf-8") as f:
            f.write("\n".join(out).rstrip() + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
