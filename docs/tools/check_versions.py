#!/usr/bin/env python3
"""Version labels agree with the one version of the project.

The version is written once, in project(topoml VERSION X.Y.Z) of the top
CMakeLists.txt. What came after 0.1 is listed in two history tables: the
public API's (docs/embedding.md, "Versions": rows "| X.Y | ... |") and the
plugin ABI's (docs/plugin-abi.md, "Version history": rows
"| ABI | X.Y | ... |"). The headers and docs label things with "appended in
X.Y", "appended to v1 in core X.Y", "since X.Y", "before core X.Y",
", core X.Y", and a header's section banner "... (X.Y)".

This script fails (exit 1, one line per problem, FILE:LINE first) when
  - topoml/version.h.in does not take its numbers from project();
  - a table row or a label names a version above the project's;
  - a label names a version that no table has;
  - what a label is about (the declarations under a header comment, the
    field a trailing comment belongs to, the `names` of a doc sentence) is
    in a table under another version, or, for header declarations, in no
    table at all.

Usage: check_versions.py [--root DIR]
"""
import argparse
import os
import re
import sys

VERSION = r"(\d+\.\d+)"
LABEL = re.compile(r"(?:\b[Aa]ppended(?: to v1)? in (?:core )?|\b[Ss]ince (?:core )?"
                   r"|\bbefore core |\bin core |, core |\(core )" + VERSION + r"(?![\d.]*\d)")
DOC_LABEL = re.compile(r"\bappended to `[^`]+` in " + VERSION + r"\b")
BANNER = re.compile(r"^ \* .*\(" + VERSION + r"\)\s*$")
IDENT = re.compile(r"`([A-Za-z_][\w.]*)")
FIRST = "0.1"  # what is not in a table came with the first version
HEADERS = ["core/include/topoml/topoml.h", "core/include/topoml/features.h",
           "core/include/topoml/topoml.hpp", "plugin-api/include/topoml/plugin.h",
           "plugin-api/include/topoml/types.h"]


def vkey(v):
    return tuple(int(x) for x in v.split("."))


def tables(root, problems):
    """[(version, {identifiers}, where)] from the two history tables."""
    rows = []
    for page, pattern in (("docs/embedding.md", r"^\| (\d+\.\d+) \| (.*)\|\s*$"),
                          ("docs/plugin-abi.md", r"^\| [^|]+ \| (\d+\.\d+) \| (.*)\|\s*$")):
        path = os.path.join(root, page)
        n = 0
        for i, line in enumerate(open(path, encoding="utf-8"), 1):
            m = re.match(pattern, line)
            if m:
                rows.append((m.group(1), set(IDENT.findall(m.group(2))), "%s:%d" % (page, i)))
                n += 1
        if n == 0:
            problems.append("%s: no version history table" % page)
    return rows


def matches(name, token):
    """`name` (a declaration, maybe struct.field) and a table's `token`."""
    return (name == token or token.endswith("." + name) or name.endswith("." + token)
            or token.startswith(name + ".") or name.split(".")[-1] == token.split(".")[-1]
            and "." in name and "." in token)


def declared(lines, start):
    """Names declared from lines[start] to the first blank line, the end of
    the struct, or the next comment of its own line."""
    block = []
    for line in lines[start:]:
        s = line.strip()
        if not s or s.startswith("}") or (s.startswith("/*") and block):
            break
        block.append(line)
    code = re.sub(r"/\*.*?(\*/|$)", " ", "\n".join(block), flags=re.S)
    names = []
    for m in re.finditer(r"^\s*#define\s+(\w+)", code, re.M):
        names.append(m.group(1))
    code = re.sub(r"^\s*#.*$", "", code, flags=re.M)
    for stmt in code.split(";"):
        s = " ".join(stmt.split())
        if not s or s.startswith("return"):
            continue
        m = re.search(r"\(\s*\*\s*(\w+)\s*\)\s*\(", s) or re.search(r"\b(\w+)\s*\(", s) \
            or re.search(r"\b(\w+)\s*(?:\[[^\]]*\])?\s*$", s)
        if m:
            names.append(m.group(1))
    return names


def enclosing_struct(lines, i):
    for line in lines[i:]:
        if re.match(r"\s*typedef struct|\s*struct \w+ \{", line):
            return None
        m = re.match(r"^\}\s*(\w+)\s*;", line)
        if m:
            return m.group(1)
    return None


def header_labels(root, rel, problems):
    """[(version, [names], where)] of one header."""
    out = []
    path = os.path.join(root, rel)
    if not os.path.exists(path):
        return out
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if "/*" not in line:
            i += 1
            continue
        # The whole comment, from this line to its "*/".
        end = i
        while "*/" not in lines[end] and end + 1 < len(lines):
            end += 1
        text = " ".join(lines[i:end + 1])
        versions = LABEL.findall(text)
        banner = [BANNER.match(x).group(1) for x in lines[i:end + 1] if BANNER.match(x)]
        where = "%s:%d" % (rel, i + 1)
        if versions or banner:
            code = line[:line.index("/*")].strip()
            if banner:
                # A section: every function declared until the next banner.
                names = []
                for later in lines[end + 1:]:
                    if later.startswith(" * ----") or later.startswith("/* ----"):
                        if names:
                            break
                    m = re.match(r"TOPOML_API\b.*?\b(\w+)\s*\(", later)
                    if m:
                        names.append(m.group(1))
                versions = versions + banner
            elif code:
                names = declared([code], 0)  # a trailing comment: its field
            else:
                names = declared(lines, end + 1)
            struct = enclosing_struct(lines, i)
            if struct:
                names = [n if n.isupper() else "%s.%s" % (struct, n) for n in names]
            for v in versions:
                out.append((v, names, where))
        i = end + 1
    return out


def doc_labels(root, problems):
    out = []
    docs = os.path.join(root, "docs")
    for name in sorted(os.listdir(docs)):
        if not name.endswith(".md"):
            continue
        rel = "docs/" + name
        text = open(os.path.join(docs, name), encoding="utf-8").read()
        fence = False
        for i, line in enumerate(text.split("\n"), 1):
            if line.startswith("```"):
                fence = not fence
            if fence or line.startswith("|"):
                continue
            for m in list(LABEL.finditer(line)) + list(DOC_LABEL.finditer(line)):
                # The sentence around the label: its `names`.
                para = line
                names = IDENT.findall(para)
                out.append((m.group(1), names, "%s:%d" % (rel, i)))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=os.path.normpath(
        os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")))
    a = ap.parse_args()
    root = a.root
    problems = []
    cm = open(os.path.join(root, "CMakeLists.txt"), encoding="utf-8").read()
    m = re.search(r"project\(topoml VERSION (\d+)\.(\d+)\.(\d+)", cm)
    if not m:
        print("CMakeLists.txt: no project(topoml VERSION X.Y.Z)", file=sys.stderr)
        return 1
    project = "%s.%s" % (m.group(1), m.group(2))
    vh = open(os.path.join(root, "core/include/topoml/version.h.in"), encoding="utf-8").read()
    for macro in ("@PROJECT_VERSION_MAJOR@", "@PROJECT_VERSION_MINOR@", "@PROJECT_VERSION@"):
        if macro not in vh:
            problems.append("core/include/topoml/version.h.in: does not use %s" % macro)
    rows = tables(root, problems)
    known = {v for v, _, _ in rows}
    for v, _, where in rows:
        if vkey(v) > vkey(project):
            problems.append("%s: version %s is above the project's %s (CMakeLists.txt)" %
                            (where, v, project))
    labels = []
    for rel in HEADERS:
        labels += [(v, n, w, True) for v, n, w in header_labels(root, rel, problems)]
    labels += [(v, n, w, False) for v, n, w in doc_labels(root, problems)]
    for v, names, where, header in labels:
        if vkey(v) > vkey(project):
            problems.append("%s: labelled %s, above the project's %s (CMakeLists.txt)" %
                            (where, v, project))
        if v not in known:
            problems.append("%s: labelled %s, a version no history table has" % (where, v))
            continue
        for name in names:
            rows_of = [(rv, rw) for rv, ids, rw in rows if any(matches(name, t) for t in ids)]
            if not rows_of:
                if header and v != FIRST:
                    problems.append("%s: %s is labelled %s but is in no history table" %
                                    (where, name, v))
                continue
            if not any(rv == v for rv, _ in rows_of):
                problems.append("%s: %s is labelled %s, the history table says %s (%s)" %
                                (where, name, v, ", ".join(sorted({rv for rv, _ in rows_of})),
                                 rows_of[0][1]))
    for p in problems:
        print(p, file=sys.stderr)
    print("%d labels, %d table rows, project %s: %d problems" %
          (len(labels), len(rows), project, len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
