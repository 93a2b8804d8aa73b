#!/usr/bin/env python3
"""The ABI guard: compare libtopoml's exported ABI and the plugin ABI's types
with the baseline in abi/ (abidw dumps of the previous release), with
abidiff (Debian's abigail-tools), and fail on an incompatible change that
is not a documented version bump.

Compatible, by the project's rules (docs/plugin-abi.md, "Versioning
policy"): functions and variables added; a struct that grows by members
appended at its end (its struct_size tells old from new); enumerators
added. Everything else abidiff reports is incompatible — a removed symbol,
a member inserted before others, removed or retyped, a member appended into
padding (the size, and so struct_size, does not change), an enumerator that
changes value, a changed function or function-pointer signature, a new
SONAME.

An incompatible change passes only as a documented version bump: for the
plugin ABI, TOPOML_ABI_VERSION in topoml/plugin.h above the baseline's, with
a row for the new version in the version history of docs/plugin-abi.md; for
libtopoml, a SONAME above the baseline's, named (libtopoml.so.N) in that
history too. Then make a new baseline: abi/update_baseline.sh.

Usage: check_abi.py --source DIR [--lib libtopoml.so] [--plugin-headers DIR]
Exit status 0: compatible (or a documented bump); 1: incompatible; 2: the
check could not be made.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

# Lines of an abidiff report that only say where a change is.
NAV = [re.compile(p) for p in (
    r"^Functions changes summary: ",
    r"^Variables changes summary: ",
    r"^Function symbols changes summary: ",
    r"^Variable symbols changes summary: ",
    r"^\d+ functions? with some indirect sub-type changes?:$",
    r"^\d+ variables? with some indirect sub-type changes?:$",
    r"^\[C\] '.*' (at \S+ )?has some indirect sub-type changes:$",
    r"^\[C\] '.*' (at \S+ )?has some sub-type changes:$",
    r"^parameter \d+ of type '.*' has sub-type changes:$",
    r"^in pointed to type '.*'( at \S+)?:$",
    r"^in unqualified underlying type '.*'( at \S+)?:$",
    r"^in referenced type '.*'( at \S+)?:$",
    r"^underlying type '(struct|union|typedef) .*' (at \S+ )?changed:$",
    r"^type of '.*' changed:$",
    r"^type size hasn't changed$",
    r"^\d+ data member changes?( \(\d+ filtered\))?:$",
    # members whose only change abidiff itself filtered as harmless (e.g. a
    # function pointer whose pointed-to struct grew by appended members)
    r"^no data member changes? \(\d+ filtered\);?$",
)]
ADDED = [re.compile(p) for p in (
    r"^\d+ Added (functions?|variables?|function symbols? not referenced by debug info"
    r"|variable symbols? not referenced by debug info):$",
    r"^\[A\] ",
)]
SIZE = re.compile(r"^type size changed from (\d+) to (\d+) \(in bits\)$")
INSERTIONS = re.compile(r"^\d+ data member insertions?:$")
MEMBER = re.compile(r"^'.*', at offset (\d+) \(in bits\)")
REMOVED = re.compile(r"(\d+) Removed")


def classify(report):
    """The reasons a report is incompatible (empty: compatible)."""
    reasons = []
    for m in REMOVED.finditer(report):
        if int(m.group(1)):
            reasons.append("something was removed: %s" % m.group(0))
    old_size = None
    grown = False
    in_insertions = False
    for raw in report.splitlines():
        line = raw.strip()
        if not line:
            continue
        if any(p.match(line) for p in NAV) or any(p.match(line) for p in ADDED):
            in_insertions = False
            continue
        m = SIZE.match(line)
        if m:
            old_size, new_size = int(m.group(1)), int(m.group(2))
            grown = new_size > old_size
            if not grown:
                reasons.append(line)
            in_insertions = False
            continue
        if INSERTIONS.match(line):
            in_insertions = True
            continue
        m = MEMBER.match(line)
        if in_insertions and m:
            if old_size is None or not grown:
                reasons.append("member appended without the struct growing (struct_size "
                               "cannot tell): " + line)
            elif int(m.group(1)) < old_size:
                reasons.append("member inserted before the end: " + line)
            continue
        in_insertions = False
        reasons.append(line)
    return reasons


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def abidiff(args):
    rc, out = run(["abidiff"] + args)
    if rc & 3:
        raise SystemExit("check_abi: abidiff failed (%d): %s\n%s" % (rc, " ".join(args), out))
    return rc, out


def header_abi_version(plugin_h):
    m = re.search(r"^#define TOPOML_ABI_VERSION (\d+)u?\b", open(plugin_h).read(), re.M)
    if not m:
        raise SystemExit("check_abi: no TOPOML_ABI_VERSION in %s" % plugin_h)
    return int(m.group(1))


def soname(lib):
    rc, out = run(["readelf", "-d", lib])
    m = re.search(r"Library soname: \[libtopoml\.so\.(\d+)\]", out)
    if rc or not m:
        raise SystemExit("check_abi: cannot read the SONAME of %s" % lib)
    return int(m.group(1))


def history(doc):
    """The version history section of docs/plugin-abi.md."""
    text = open(doc).read()
    m = re.search(r"^### Version history\n(.*?)(?=^#)", text, re.M | re.S)
    return m.group(1) if m else ""


def build_anchor(source, headers, out):
    """abi/plugin_abi_anchor.c compiled with debug information."""
    plugin_h = os.path.join(headers, "topoml", "plugin.h")
    defs = []
    if re.search(r"typedef enum topoml_selection\b", open(plugin_h).read()):
        defs.append("-DTOPOML_ANCHOR_SELECTION")
    cc = os.environ.get("CC", "cc")
    rc, msg = run([cc, "-g", "-O0", "-shared", "-fPIC", "-I", headers] + defs +
                  ["-o", out, os.path.join(source, "abi", "plugin_abi_anchor.c")])
    if rc:
        raise SystemExit("check_abi: cannot build the anchor: %s" % msg)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--source", required=True, help="the topoml source tree")
    ap.add_argument("--lib", help="libtopoml.so to check (built with -g)")
    ap.add_argument("--plugin-headers", help="folder holding topoml/plugin.h "
                    "(default: SOURCE/plugin-api/include)")
    ap.add_argument("--baseline", help="baseline folder (default: SOURCE/abi)")
    ap.add_argument("--doc", help="the ABI document (default: SOURCE/docs/plugin-abi.md)")
    a = ap.parse_args()
    base = a.baseline or os.path.join(a.source, "abi")
    headers = a.plugin_headers or os.path.join(a.source, "plugin-api", "include")
    doc = a.doc or os.path.join(a.source, "docs", "plugin-abi.md")
    meta = json.load(open(os.path.join(base, "baseline.json")))
    hist = history(doc)
    failed = False

    with tempfile.TemporaryDirectory() as tmp:
        anchor = os.path.join(tmp, "libtopoml_abi_anchor.so")
        build_anchor(a.source, headers, anchor)
        rc, report = abidiff([os.path.join(base, "plugin-abi.abi"), anchor])
        abi_now = header_abi_version(os.path.join(headers, "topoml", "plugin.h"))
        reasons = classify(report) + (["abidiff: incompatible change"] if rc & 8 else [])
        print("== plugin ABI: baseline v%d (topoml %s), headers v%d" %
              (meta["plugin_abi"], meta["release"], abi_now))
        print(report.rstrip() or "(no change)")
        failed |= verdict("plugin ABI", reasons, abi_now > meta["plugin_abi"] and
                          re.search(r"^\| %d \|" % abi_now, hist, re.M) is not None,
                          "ABI v%d" % abi_now)

    if a.lib:
        inc = os.path.join(a.source, "core", "include", "topoml")
        pinc = os.path.join(headers, "topoml")
        rc, report = abidiff(["--headers-dir2", inc, "--headers-dir2", pinc,
                              os.path.join(base, "libtopoml.abi"), a.lib])
        so_now = soname(a.lib)
        reasons = classify(report) + (["abidiff: incompatible change"] if rc & 8 else [])
        print("== libtopoml: baseline libtopoml.so.%d (topoml %s), now libtopoml.so.%d" %
              (meta["soversion"], meta["release"], so_now))
        print(report.rstrip() or "(no change)")
        failed |= verdict("libtopoml", reasons, so_now > meta["soversion"] and
                          ("libtopoml.so.%d" % so_now) in hist, "libtopoml.so.%d" % so_now)
    return 1 if failed else 0


def verdict(what, reasons, bumped, new_version):
    if not reasons:
        print("%s: compatible with the baseline" % what)
        return False
    if bumped:
        print("%s: incompatible, and a documented version bump (%s): make a new baseline "
              "with abi/update_baseline.sh" % (what, new_version))
        return False
    print("%s: INCOMPATIBLE with the baseline, and no documented version bump:" % what)
    for r in reasons:
        print("  - " + r)
    return True


if __name__ == "__main__":
    sys.exit(main())
