#!/usr/bin/env python3
"""The C API reference, generated from the comments of the public headers.

The headers are documented where they declare (STYLE.md: as libgit2 does):
a block comment directly above a declaration documents it, the comment at
the top of a header describes the header, and a comment made of a row of
dashes, a title and another row starts a section. This script turns that
into one Markdown page — per header, its description, its sections, and
per declaration its code (fields keep their trailing comments) and its
comment — for the documentation site (docs/tools/build_site.py).

Usage: api_reference.py --out FILE HEADER...
"""
import argparse
import html
import os
import re
import sys

RULE = re.compile(r"^-{8,}$")


def comment_text(block):
    """The text of a /* ... */ block, without the frame."""
    body = block.strip()
    body = body[2:-2] if body.startswith("/*") and body.endswith("*/") else body
    lines = []
    for line in body.split("\n"):
        line = line.strip()
        if line.startswith("*"):
            line = line[1:]
            if line.startswith(" "):
                line = line[1:]
        lines.append(line.rstrip())
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    return lines


def prose(lines):
    """Comment lines as Markdown: paragraphs, '-' items as a list, indented
    lines as code; text that Markdown would read as markup is escaped."""
    out, code, item = [], False, False
    for line in lines:
        if not line.strip():
            item = False
        elif re.match(r"^\s?- ", line):
            item = True
        elif item and line.startswith(" "):
            out.append(html.escape(line.strip(), quote=False).replace("*", "\\*"))
            continue
        if line.startswith("  ") and line.strip():
            if not code:
                out += ["", "```c"]
                code = True
            out.append(line[2:] if line.startswith("  ") else line)
            continue
        if code:
            out += ["```", ""]
            code = False
        text = html.escape(line, quote=False).replace("*", "\\*")
        text = re.sub(r"^(\s*)- ", r"\1* ", text)
        if text.lstrip().startswith("* ") and out and out[-1].strip() and \
                not out[-1].lstrip().startswith("* "):
            out.append("")
        out.append(text)
    if code:
        out.append("```")
    return "\n".join(out).strip()


def decl_name(code):
    code = re.sub(r"/\*.*?\*/", "", code, flags=re.S)
    m = re.match(r"\s*#define\s+(\w+)", code)
    if m:
        return m.group(1)
    if code.lstrip().startswith("typedef"):
        if "}" in code:
            m = re.search(r"}\s*(\w+)\s*;", code[code.rindex("}"):])
            return m.group(1) if m else None
        m = re.search(r"\(\s*\*\s*(\w+)\s*\)\s*\(", code)  # function pointer type
        if m:
            return m.group(1)
        m = re.search(r"(\w+)\s*;\s*$", code.strip())
        return m.group(1) if m else None
    m = re.search(r"(\w+)\s*\(", code)
    return m.group(1) if m else None


def parse(path):
    """(description, [items]); an item is ('section', title) or
    ('decl', name, code, comment lines)."""
    text = open(path, encoding="utf-8").read()
    lines = text.split("\n")
    items, description, pending = [], None, None
    i = 0
    while i < len(lines):
        line = lines[i]
        s = line.strip()
        if s.startswith("/*"):
            block = [line]
            while "*/" not in lines[i]:
                i += 1
                block.append(lines[i])
            c = comment_text("\n".join(block))
            i += 1
            if description is None:
                description = c
                continue
            if c and RULE.match(c[0]) and RULE.match(c[-1]):
                body = [x for x in c[1:-1]]
                items.append(("section", body[0].strip(), body[1:]))
                pending = None
                continue
            pending = c
            continue
        if not s:
            pending = None
            i += 1
            continue
        if s.startswith("#"):
            if s.startswith("#define") and not re.match(r"#define\s+TOPOML_\w+_H\s*$", s) \
                    and pending is not None:
                block = [line]
                while i + 1 < len(lines) and lines[i + 1].strip().startswith("#define"):
                    i += 1
                    block.append(lines[i])
                items.append(("decl", decl_name(block[0]), "\n".join(block), pending))
            elif s.startswith("#define") and not re.match(r"#define\s+TOPOML_\w+_H\s*$", s) \
                    and s.split()[1].startswith("TOPOML_") and "(" not in s.split()[1]:
                items.append(("decl", decl_name(line), line, []))
            pending = None
            i += 1
            continue
        if s in ("}", '}', 'extern "C" {') or s.startswith("#ifdef") or s.startswith("#endif"):
            i += 1
            continue
        # A declaration: up to the ';' that closes it at brace depth 0.
        block, depth = [], 0
        while i < len(lines):
            block.append(lines[i])
            code = re.sub(r"/\*.*?\*/", "", lines[i])
            depth += code.count("{") - code.count("}")
            i += 1
            if depth <= 0 and code.rstrip().endswith(";"):
                break
            if depth <= 0 and code.rstrip().endswith("}"):  # an inline function body
                break
        code = "\n".join(block)
        name = decl_name(code)
        if name:
            items.append(("decl", name, code, pending or []))
        pending = None
    return description or [], items


def render(headers, root):
    out = ["# C API reference", "",
           "Generated from the comments of the public headers by "
           "`docs/tools/api_reference.py`; the headers are the source. A host "
           "includes `<topoml/topoml.h>` (and `<topoml/features.h>` for diagram "
           "features) and links libtopoml; a plugin includes `<topoml/plugin.h>` "
           "only ([the plugin ABI](../plugin-abi.md)).", ""]
    for path in headers:
        rel = os.path.relpath(path, root)
        name = "topoml/" + os.path.basename(path)
        description, items = parse(path)
        out += ["## `%s`" % name, "", "Source: `%s`" % rel, ""]
        if description:
            first = description[0]
            if first.startswith(name):
                description = description[1:]
            out += [prose(description), ""]
        seen = set()
        for item in items:
            if item[0] == "decl":
                if item[1] in seen:
                    continue
                seen.add(item[1])
            if item[0] == "section":
                out += ["### %s" % item[1], ""]
                if any(x.strip() for x in item[2]):
                    out += [prose(item[2]), ""]
                continue
            _, dname, code, comment = item
            out += ["#### `%s`" % dname, "", "```c", code.rstrip(), "```", ""]
            if comment:
                out += [prose(comment), ""]
    return "\n".join(out).rstrip() + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--root", default=os.path.normpath(
        os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")))
    ap.add_argument("headers", nargs="+")
    a = ap.parse_args()
    text = render(a.headers, a.root)
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "w", encoding="utf-8") as f:
        f.write(text)
    n = text.count("\n#### ")
    print("api_reference: %d declarations from %d headers" % (n, len(a.headers)))
    return 0 if n else 1


if __name__ == "__main__":
    sys.exit(main())
