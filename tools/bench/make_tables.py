#!/usr/bin/env python3
"""Markdown tables from the benchmark artifacts in bench/results/.

Every speed or memory figure in the README and the docs comes from a JSON
file in bench/results/, and the tables are made from those files by this
script, so a number can be traced to the run that made it and made again.

A file holds one run:

  machine   what it ran on (text)
  versions  {"program": "version", ...}
  commands  ["the command that made it", ...]
  cases     [{"name", "program", "threads", "times": [seconds, ...],
              "median", "peak_rss"}, ...]

and may add: title, source (where the numbers come from, e.g. "transcribed
from docs/notes/..."), baseline (the program the others are divided by),
units ({"median": "s", "peak_rss": "bytes" | "KiB" | "MiB"}; default
seconds and bytes). "median" may be left out when "times" has the raw
times; "threads" and "peak_rss" may be null or absent. Unknown keys are
ignored.

Cases in the shape the older scripts wrote ({"case": name, "<program>":
{"wall_s": ...}}) are read as one case per program. A file that does not
follow the schema is named, with the reason, on stderr and at the end of
the page, and gets no table.

Usage: make_tables.py [--results DIR | FILE...] [--page FILE] [--strict]
Without --page the tables go to standard output. Exit status 1 when no file
gives a table, or with --strict when any file breaks the schema.
"""
import argparse
import json
import math
import os
import statistics
import sys

RSS_UNITS = {"bytes": 1, "b": 1, "kib": 1024, "kb": 1000, "mib": 1048576, "mb": 1e6,
             "gib": 1073741824, "gb": 1e9}


class SchemaError(Exception):
    pass


def number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def per_program(c):
    """A case as the older benchmark scripts wrote it — {"case": name,
    "<program>": {"wall_s": ..., "runs": ...}, ...} — as one case of the
    schema per program; a case of the schema as it is."""
    if not isinstance(c, dict) or "name" in c or not isinstance(c.get("case"), str):
        return [c]
    out = []
    for program, v in c.items():
        if isinstance(v, dict) and number(v.get("wall_s")):
            runs = v.get("runs") if isinstance(v.get("runs"), list) else []
            out.append({"name": c["case"], "program": program, "median": v["wall_s"],
                        "times": [r[0] if isinstance(r, list) else r for r in runs],
                        "peak_rss": v["max_rss_kib"] * 1024 if number(v.get("max_rss_kib"))
                        else None})
    return out or [c]


def load(path):
    """The file's run, with each case's median (seconds) and peak RSS
    (bytes) worked out."""
    try:
        d = json.load(open(path, encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise SchemaError("%s: not a JSON file: %s" % (path, e))
    if not isinstance(d, dict) or not isinstance(d.get("cases"), list) or not d["cases"]:
        raise SchemaError("%s: no 'cases' list" % path)
    d["cases"] = [c2 for c in d["cases"] for c2 in per_program(c)]
    units = d.get("units") or {}
    scale = {"s": 1.0, "ms": 1e-3, "us": 1e-6}.get(str(units.get("median", "s")).split()[0])
    if scale is None:
        raise SchemaError("%s: units.median must be s, ms or us" % path)
    rss_unit = str(units.get("peak_rss", "bytes")).split()[0].lower()
    if rss_unit not in RSS_UNITS:
        raise SchemaError("%s: units.peak_rss must be one of %s" % (path, ", ".join(RSS_UNITS)))
    cases = []
    for i, c in enumerate(d["cases"]):
        where = "%s: case %d" % (path, i)
        if not isinstance(c, dict) or not isinstance(c.get("name"), str) or \
                not isinstance(c.get("program"), str):
            raise SchemaError("%s: needs a 'name' and a 'program'" % where)
        times = c.get("times") or []
        if not isinstance(times, list) or not all(number(t) and t >= 0 for t in times):
            raise SchemaError("%s (%s): 'times' must be a list of seconds" % (where, c["name"]))
        median = c.get("median")
        if median is None and times:
            median = statistics.median(times)
        elif median is not None and not (number(median) and median >= 0):
            raise SchemaError("%s (%s): 'median' must be a number" % (where, c["name"]))
        if median is None:
            raise SchemaError("%s (%s): neither 'median' nor 'times'" % (where, c["name"]))
        rss = c.get("peak_rss")
        if rss is not None and not (number(rss) and rss >= 0):
            raise SchemaError("%s (%s): 'peak_rss' must be a number" % (where, c["name"]))
        threads = c.get("threads")
        if threads is not None and not (isinstance(threads, int) and threads > 0):
            raise SchemaError("%s (%s): 'threads' must be a positive integer" % (where, c["name"]))
        cases.append({"name": c["name"], "program": c["program"], "threads": threads,
                      "runs": len(times), "median": median * scale,
                      "rss": None if rss is None else rss * RSS_UNITS[rss_unit]})
    d["_cases"] = cases
    d["_path"] = path
    return d


def seconds(x):
    if x >= 1:
        return "%.3g s" % x if x < 1000 else "%.0f s" % x
    if x >= 1e-3:
        return "%.3g ms" % (x * 1e3)
    return "%.3g µs" % (x * 1e6)


def mib(x):
    return "%.1f MiB" % (x / 1048576)


def column(c, multi_threads):
    """A program's column; a program run with several thread counts gets
    one column per count."""
    if c["program"] in multi_threads and c["threads"]:
        return "%s (%d thread%s)" % (c["program"], c["threads"], "s" if c["threads"] > 1 else "")
    return c["program"]


def table(d, link):
    cases = d["_cases"]
    counts = {}
    for c in cases:
        counts.setdefault(c["program"], set()).add(c["threads"])
    multi = {p for p, t in counts.items() if len(t) > 1}
    names, cols = [], []
    for c in cases:
        if c["name"] not in names:
            names.append(c["name"])
        if column(c, multi) not in cols:
            cols.append(column(c, multi))
    cell = {(c["name"], column(c, multi)): c for c in cases}
    base = d.get("baseline")
    base = base if base in cols else None
    others = [x for x in cols if x != base]
    has_rss = any(c["rss"] is not None for c in cases)
    head = ["case"] + cols
    if base:
        head += ["%s / %s" % (x, base) for x in others]
    if has_rss:
        head += ["peak RSS: %s" % x for x in cols]
    out = ["## %s" % (d.get("title") or os.path.basename(d["_path"])), ""]
    out.append("Artifact: [%s](%s)" % (os.path.basename(d["_path"]), link))
    if d.get("source"):
        out.append("— %s." % d["source"].rstrip("."))
    out.append("")
    if d.get("machine"):
        out += ["Machine: %s." % str(d["machine"]).rstrip("."), ""]
    if d.get("versions"):
        out += ["Versions: " + "; ".join("%s %s" % kv for kv in d["versions"].items()) + ".", ""]
    for cmd in d.get("commands") or []:
        out += ["    " + cmd]
    if d.get("commands"):
        out.append("")
    out += ["| " + " | ".join(head) + " |", "| --- |" + " ---: |" * (len(head) - 1)]
    for n in names:
        row = [n.replace("|", "\\|")]
        row += [seconds(cell[(n, x)]["median"]) if (n, x) in cell else "" for x in cols]
        if base:
            for x in others:
                b, o = cell.get((n, base)), cell.get((n, x))
                row.append("%.2f" % (o["median"] / b["median"]) if b and o and b["median"] > 0
                           else "")
        if has_rss:
            row += [mib(cell[(n, x)]["rss"]) if (n, x) in cell and cell[(n, x)]["rss"]
                    is not None else "" for x in cols]
        out.append("| " + " | ".join(row) + " |")
    runs = sorted({c["runs"] for c in cases})
    out += ["", "Medians%s." % (" of %s raw times" % "/".join(map(str, runs)) if runs != [0]
                                else " (the artifact has no raw times)"), ""]
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--results", help="a folder of *.json artifacts")
    ap.add_argument("files", nargs="*")
    ap.add_argument("--page", help="write a Markdown page here (links relative to it)")
    ap.add_argument("--strict", action="store_true",
                    help="fail on a file that breaks the schema (default: list it untabled)")
    a = ap.parse_args()
    files = list(a.files)
    if a.results:
        files += sorted(os.path.join(a.results, f) for f in os.listdir(a.results)
                        if f.endswith(".json"))
    if not files:
        ap.error("no artifacts")
    runs, skipped = [], []
    for f in files:
        try:
            runs.append(load(f))
        except SchemaError as e:
            print("make_tables: %s" % e, file=sys.stderr)
            if a.strict:
                return 1
            skipped.append((f, str(e)))
    # The page is written where docs/ will have it: links are relative to
    # docs/, so a link goes up to the tree's bench/results/.
    out = ["# Benchmarks", "",
           "Made by `tools/bench/make_tables.py` from the JSON artifacts in "
           "`bench/results/` — one file per run, with the machine, the versions, the "
           "commands and the times. Ratios divide by the column named after the slash; "
           "below 1 is faster (or smaller) than it.", ""]
    for d in runs:
        if a.page:
            rel = os.path.relpath(os.path.abspath(d["_path"]),
                                  os.path.join(os.path.dirname(os.path.abspath(d["_path"])),
                                               "..", "..", "docs"))
        else:
            rel = d["_path"]
        out += [table(d, rel), ""]
    if skipped:
        out += ["## Artifacts without a table", "",
                "These files in `bench/results/` do not follow the schema above, so no "
                "table is made from them; their figures are in the file itself:", ""]
        out += ["* `%s`: %s" % (os.path.basename(f), why.split(": ", 1)[-1])
                for f, why in skipped]
    text = "\n".join(out).rstrip() + "\n"
    if a.page:
        with open(a.page, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0 if runs else 1


if __name__ == "__main__":
    sys.exit(main())
