#!/usr/bin/env python3
"""Markdown tables from the benchmark artifacts in bench/results/.

Every speed or memory figure in the README and the docs comes from a JSON
file in bench/results/, and the tables are made from those files by this
script, so a number can be traced to the run that made it and made again.

A file holds one run:

  machine   what it ran on (text, or an object of named facts)
  versions  {"program": "version", ...}
  commands  ["the command that made it", ...] (or {"what": "command", ...})
  cases     [{"name", "program", "threads", "times": [seconds, ...],
              "median", "peak_rss"}, ...]

and may add: title, source (where the numbers come from, e.g. "transcribed
from docs/notes/..."), baseline (the program the others are divided by),
statistic (what a case's figure is when it is not the median of its times,
e.g. "best of 3"; the figure is then in "median" all the same), units
({"median": "s" | "ms" | "us", "peak_rss": "bytes" | "KiB" | "MiB"};
default seconds and bytes), git ({"commit": hex, "dirty": true | false}:
the commit of the source tree the run was made from, and whether its files
differed from it; bench/artifact.py adds it in a git checkout and the
tables show it beside the versions). "median" may be left out when "times" has the
raw times; "threads" and "peak_rss" may be null or absent. A file with a case
whose "times" is empty must say why in "no_raw_times" (e.g. "transcribed
from a table that kept medians only"): a figure without its raw times is
never silent. Unknown keys are ignored (a script may keep more there).

A figure quoted in the README or the docs without an artifact has a slot in
pending.json in the same folder ({"pending": [{"title", "why", "quoted_in":
["page: heading", ...], "file", "command"}]}): with "file" and "command" it
waits for the run that makes that file, without them no run will (a figure
of an intermediate build, a time taken by hand). The page shows each as "no
artifact yet" or "no artifact", never as a number. A slot whose file exists
is an error under --strict (the slot goes when the artifact lands).

A file that does not follow the schema is named, with the reason, on stderr
and at the end of the page, and gets no table.

bench/artifact.py writes files in this schema (checked by check()).

Usage: make_tables.py [--results DIR | FILE...] [--page FILE] [--strict]
       make_tables.py --check-figures SRC
       make_tables.py --results DIR --update-speed PAGE... | --check-speed PAGE...
Without --page the tables go to standard output. Exit status 1 when no file
gives a table, or with --strict when any file breaks the schema.

--update-speed / --check-speed: the speed tables of the front pages (the
README, docs/index.md), one per machine kind (SPEED_TABLES below), between
the marker lines

    <!-- tables:begin NAME -->
    <!-- tables:end NAME -->

--update-speed rewrites what is between them from the artifacts in DIR;
--check-speed makes the same text and compares: exit status 1, with the
difference, when a page's table is not what the artifacts make now (a figure
edited by hand, an artifact added or changed since), or a marker is unknown
or unpaired. A table has one row per case and one column per program; each
row is one run: of the runs on that kind of machine that timed topoml's
default choice and at least one other program on the case, the latest (its
"date", or its machine's), its JSON linked in the row. A run made while the
machine was busy (load average at the start above its CPU count) is left out
and named under the table: its wall times measure the other work. A program
the row's run did not time is an em dash, never a figure from another run.

--check-figures: every section of SRC's README.md, docs/ and plugins/*/README.md that quotes a
measured figure (a time, a speed ratio, a table of bare numbers in a
section that speaks of seconds; not a limit such as "at most 1 s") names
its artifact: a link, a `path` or a heading bench/results/X.json, or a link
to pending.json with a slot naming that section. Exit status 1, with each
section that does not, otherwise 0.
"""
import argparse
import difflib
import json
import math
import os
import re
import statistics
import sys

RSS_UNITS = {"bytes": 1, "b": 1, "kib": 1024, "kb": 1000, "mib": 1048576, "mb": 1e6,
             "gib": 1073741824, "gb": 1e9}


PENDING = "pending.json"


class SchemaError(Exception):
    pass


def number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def load(path):
    """The file's run, with each case's median (seconds) and peak RSS
    (bytes) worked out."""
    try:
        d = json.load(open(path, encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise SchemaError("%s: not a JSON file: %s" % (path, e))
    return check(d, path)


def check(d, path):
    """d (a run as the schema says) with '_cases' worked out; SchemaError
    naming path and the case otherwise."""
    if not isinstance(d, dict) or not isinstance(d.get("cases"), list) or not d["cases"]:
        raise SchemaError("%s: no 'cases' list" % path)
    for key, kinds in (("machine", (str, dict)), ("versions", (dict,)),
                       ("commands", (list, dict))):
        if not isinstance(d.get(key), kinds) or not d[key]:
            raise SchemaError("%s: no '%s' (%s)" % (path, key, " or ".join(
                {"str": "text", "dict": "object", "list": "list"}[k.__name__] for k in kinds)))
    git = d.get("git")
    if git is not None and not (isinstance(git, dict) and isinstance(git.get("commit"), str) and
                                re.fullmatch(r"[0-9a-f]{7,64}", git["commit"]) and
                                isinstance(git.get("dirty"), bool)):
        raise SchemaError("%s: 'git' must be {\"commit\": a hexadecimal commit id, "
                          "\"dirty\": true or false}" % path)
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
    if any(c["runs"] == 0 for c in cases) and not (
            isinstance(d.get("no_raw_times"), str) and d["no_raw_times"].strip()):
        raise SchemaError("%s: a case has no raw times and 'no_raw_times' does not say why"
                          % path)
    d["_cases"] = cases
    d["_path"] = path
    return d


def load_pending(path):
    """The slots of pending.json: [{"file", "title", "command", ...}]."""
    try:
        d = json.load(open(path, encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise SchemaError("%s: not a JSON file: %s" % (path, e))
    slots = d.get("pending") if isinstance(d, dict) else None
    if not isinstance(slots, list):
        raise SchemaError("%s: no 'pending' list" % path)
    for i, s in enumerate(slots):
        if not isinstance(s, dict) or not all(isinstance(s.get(k), str) and s[k]
                                              for k in ("title", "why")):
            raise SchemaError("%s: slot %d needs a 'title' and a 'why'" % (path, i))
        if ("file" in s) != ("command" in s) or not all(
                isinstance(s[k], str) and s[k] for k in ("file", "command") if k in s):
            raise SchemaError("%s: slot %d (%s): a 'file' comes with the 'command' that makes it"
                              % (path, i, s["title"]))
        if not isinstance(s.get("quoted_in"), list) or not s["quoted_in"] or not all(
                isinstance(q, str) and ": " in q for q in s["quoted_in"]):
            raise SchemaError("%s: slot %d (%s): 'quoted_in' must list 'page: heading'"
                              % (path, i, s["title"]))
    return slots


def fact(v):
    """A machine fact as text: numbers to 3 significant digits."""
    if isinstance(v, list):
        return "/".join(fact(x) for x in v)
    if isinstance(v, float):
        return "%.3g" % v
    return str(v)


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
    # a ratio column only for a program measured on a case the baseline has
    others = [x for x in cols if x != base and any((n, x) in cell and (n, base) in cell
                                                   for n in names)]
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
    machine = d["machine"]
    if isinstance(machine, dict):
        machine = "; ".join("%s %s" % (k, fact(v)) for k, v in machine.items())
    out += ["Machine: %s." % str(machine).rstrip("."), ""]
    versions = ["%s %s" % kv for kv in d["versions"].items()]
    if d.get("git"):
        versions.append("source tree: commit %s%s" % (
            d["git"]["commit"][:12], " with uncommitted changes" if d["git"]["dirty"] else ""))
    out += ["Versions: " + "; ".join(versions) + ".", ""]
    commands = d["commands"]
    if isinstance(commands, dict):
        commands = ["%s: %s" % kv for kv in commands.items()]
    out += ["    " + str(cmd) for cmd in commands] + [""]
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
    runs = sorted({c["runs"] for c in cases if c["runs"]})
    what = (d.get("statistic") or "medians").rstrip(".")
    what = what[0].upper() + what[1:]
    if runs:
        out += ["", "%s; raw times per case: %s." % (what, "/".join(map(str, runs)))]
    if any(c["runs"] == 0 for c in cases):
        out += ["", "%s; no raw times: %s." % (what, d["no_raw_times"].rstrip("."))]
    return "\n".join(out + [""])


def slot_table(slot):
    """A figure quoted without its artifact: a visible gap, no number."""
    out = ["## %s" % slot["title"], ""]
    if slot.get("file"):
        out += ["Artifact: `%s` — **no artifact yet**; to be made by" % slot["file"], "",
                "    " + slot["command"], ""]
    else:
        out += ["**No artifact**: no run will make one.", ""]
    out += [slot["why"][0].upper() + slot["why"][1:].rstrip(".") + ".", ""]
    out += ["Quoted in: " + "; ".join(slot["quoted_in"]) + ".", ""]
    return "\n".join(out)


# A measured figure in prose or a table: a time or a speed ratio. A number
# right after a word of limits ("at most 1 s", "timeout 10 s", "--timeout
# 120") or right before one ("30 s at most", "a 5 s bound", "a 20 s
# computation" as a test's workload) is a setting, not a measurement.
FIGURE = re.compile(r"(?<![\w.])\d+(?:\.\d+)?\s?(?:ms|µs|s)(?![\w/])"
                    r"|(?<![\w.])\d+(?:\.\d+)?\s?×(?!\s*\d)|\bx\d+\.\d+\b")
SETTING_BEFORE = re.compile(r"((?i:limit|timeout|at most|≤|<=|under|budget|after|every|target|"
                            r"up to|within|default|than)|--[a-z-]+|[A-Z_]{4,}=)[^.;|]{0,15}$")
SETTING_AFTER = re.compile(r"^\s*(?i:at most|or less|budget|limit|timeout|bound|deadline|"
                           r"computation|by default)")
ARTIFACT_REF = re.compile(r"\]\(([^)#\s]*bench/results/[^)#\s]+\.json)\)"
                          r"|`(bench/results/[^`\s]+\.json)`|^#+ (bench/results/\S+\.json)$",
                          re.M)
# A table of bare numbers is a table of measurements when its section speaks
# of seconds.
TABLE_CELL = re.compile(r"^\+?\d+\.\d+(\s*\(.*\))?$")
TIME_WORDS = re.compile(r"\bseconds?\b|\bms\b|\b[a-z+]+ s\b|wall time|CPU time", re.I)


def sections(text):
    """(heading, text) of each part of a Markdown page between headings
    (of any level; a '#' inside a fenced block is no heading)."""
    out, head, cur, fence = [], "", [], False
    for line in text.split("\n"):
        if line.lstrip().startswith("```"):
            fence = not fence
        if line.startswith("#") and not fence:
            out.append((head, "\n".join(cur)))
            head, cur = line.lstrip("#").strip(), []
        cur.append(line)
    out.append((head, "\n".join(cur)))
    return out


def figures_without_artifact(src, pages, slots):
    """Every section of the pages (paths relative to src) that quotes a
    measured figure must name its artifact: a link (or a `path`) to
    bench/results/X.json that exists, or to pending.json with a slot whose
    quoted_in names this page and heading. Returns the problems found."""
    problems, quoted = [], set()
    named = {q for slot in slots for q in slot.get("quoted_in", [])}
    for page in pages:
        text = open(os.path.join(src, page), encoding="utf-8").read()
        for head, sec in sections(text):
            where = "%s: %s" % (page, head)
            flat = re.sub(r"\s+", " ", sec)
            figs = [m.group(0) for m in FIGURE.finditer(flat)
                    if not SETTING_BEFORE.search(flat[max(0, m.start() - 40):m.start()])
                    and not SETTING_AFTER.search(flat[m.end():m.end() + 12])]
            if TIME_WORDS.search(sec):
                figs += [c.strip() for line in sec.split("\n")
                         if line.startswith("|") and not re.match(r"^\|\s*-", line)
                         for c in line.strip().strip("|").split("|")
                         if TABLE_CELL.match(c.strip())]
            refs = []
            for m in ARTIFACT_REF.finditer(sec):
                # a link is relative to its page; a `path` (or a heading) to the tree
                real = os.path.normpath(os.path.join(src, os.path.dirname(page), m.group(1))) \
                    if m.group(1) else os.path.join(src, m.group(2) or m.group(3))
                refs.append(m.group(1) or m.group(2) or m.group(3))
                if not os.path.isfile(real):
                    problems.append("%s: names %s, which does not exist" % (where, refs[-1]))
            if any(os.path.basename(r) == PENDING for r in refs):
                quoted.add(where)
                if where not in named:
                    problems.append("%s: points at %s, but no slot there names this section"
                                    % (where, PENDING))
            if figs and not refs:
                problems.append("%s: quotes %s without naming its artifact in bench/results/"
                                % (where, ", ".join(figs[:3])))
    for q in sorted(named - quoted):
        if q.split(": ", 1)[0] in pages:
            problems.append("%s names '%s', which does not point at it" % (PENDING, q))
    return problems


def check_figures(src):
    # the README, the docs, and each plugin's README (the backend pages
    # quote their own measurements)
    plugins = os.path.join(src, "plugins")
    pages = ["README.md"] + sorted(
        os.path.relpath(os.path.join(d, f), src)
        for d, _, fs in os.walk(os.path.join(src, "docs")) for f in fs if f.endswith(".md")) + \
        sorted(os.path.join("plugins", p, "README.md") for p in
               (os.listdir(plugins) if os.path.isdir(plugins) else [])
               if os.path.isfile(os.path.join(plugins, p, "README.md")))
    pending = os.path.join(src, "bench", "results", PENDING)
    try:
        slots = load_pending(pending) if os.path.exists(pending) else []
    except SchemaError as e:
        print("make_tables: %s" % e, file=sys.stderr)
        return 1
    problems = figures_without_artifact(src, pages, slots)
    for p in problems:
        print("make_tables: %s" % p, file=sys.stderr)
    return 1 if problems else 0


# ------------------------------------------------------------------------
# The front pages' speed tables: one per machine kind.
#
# A column takes, from one run, the median of the first of its programs the
# run timed on the case (a program is a name and a thread count; threads
# "cpus" means every CPU of the machine, as topoml's default and as the
# giotto-ph column is run). "best" in a column takes the fastest of the
# programs listed (giotto-ph's collapse_edges on and off).
# ------------------------------------------------------------------------

def _machine(d):
    return d["machine"] if isinstance(d["machine"], dict) else {}


def _cpus(d):
    m = _machine(d)
    return m.get("cpus_available") or m.get("cpus")


SPEED_TABLES = {
    "speed-cpu-2core": {
        "kind": "a 2-core x86-64 machine (no GPU)",
        "match": lambda d: _cpus(d) == 2 and "gpu" not in _machine(d),
        "columns": [
            ("topoml", [("topoml threads collapse=auto", "cpus")]),
            ("giotto-ph", ["best", ("giotto-ph collapse=on", "cpus"),
                           ("giotto-ph collapse=off", "cpus")]),
            ("ripser.py", [("ripser.py", 1)]),
            ("Ripser", [("ripser 1.2.1", 1), ("ripser", 1)]),
            ("Ripser++", [("Ripser++", None)]),
        ],
        "default": "the backend it chooses by default there, threads, on both cores with "
                   "`--collapse auto` (named: `--backend threads`)",
    },
    "speed-h200": {
        "kind": "a 16-core x86-64 machine with an NVIDIA H200",
        "match": lambda d: "H200" in str(_machine(d).get("gpu", "")),
        "columns": [
            ("topoml", [("topoml cuda", None)]),
            ("topoml in process", [("topoml cuda in-process", None)]),
            ("giotto-ph", ["best", ("giotto-ph collapse=on", "cpus"),
                           ("giotto-ph collapse=off", "cpus")]),
            ("ripser.py", [("ripser.py", 1)]),
            ("Ripser", [("ripser 1.2.1", 1), ("ripser", 1)]),
            ("Ripser++", [("Ripser++", None)]),
        ],
        "default": "the backend it chooses by default there, cuda (an accelerator's "
                   "backend comes first), with 16 host threads (named: `--backend cuda`; "
                   "`gate: off`, its bars checked against the scalar backend's in the run)",
    },
}
SPEED_MARKER = re.compile(r"^<!-- tables:(begin|end) (\S+) -->$", re.M)


def run_date(d):
    """When the run was made, as the ISO text the scripts write; "" when the
    file does not say (it then loses to any run that does)."""
    return str(d.get("date") or _machine(d).get("date") or "")


def busy(d):
    """Was the machine busy with other work when the run started?"""
    load = _machine(d).get("load_average_start")
    cpus = _cpus(d)
    return bool(isinstance(load, list) and load and number(load[0]) and cpus and
                load[0] > cpus)


def case_key(d, c):
    """(name, input, dim, threshold) of a raw case of d: the first word of
    its name, and the input file and options from its own fields or from the
    run's "rows" (bench_rips_gpu.py keeps them there); None without a dim."""
    dim, thr, src = c.get("dim"), c.get("threshold"), c.get("input")
    for row in d.get("rows") or []:
        if isinstance(row, dict) and row.get("case") == c["name"]:
            src = src or row.get("file")
            opts = row.get("options") or []
            for flag, value in zip(opts, opts[1:]):
                if flag == "--dim" and dim is None:
                    dim = int(value)
                elif flag == "--threshold" and thr is None:
                    thr = float(value)
    if dim is None:
        return None
    return (c["name"].split()[0], src, int(dim), None if thr is None else float(thr))


def case_label(key):
    name, _, dim, thr = key
    return "%s `--dim %d%s`" % (name, dim, "" if thr is None else " --threshold %g" % thr)


def figures(d, key):
    """{(program, threads): (median seconds, runs, error)} of run d on case
    key. A case whose program failed keeps its figure when some of its runs
    finished (the error is then shown with it), and has none otherwise."""
    out = {}
    for c, w in zip(d["cases"], d["_cases"]):
        if case_key(d, c) != key or (c.get("error") and not w["runs"]):
            continue
        out[(w["program"], w["threads"])] = (w["median"], w["runs"], c.get("error") or None)
    return out


def column_figure(spec, d, figs):
    """The figure of one column in run d: (seconds, runs, error, program),
    or None."""
    best = spec[0] == "best"
    found = []
    for name, threads in spec[1:] if best else spec:
        want = _cpus(d) if threads == "cpus" else threads
        hits = [v + (name,) for (p, t), v in sorted(figs.items(), key=str)
                if p == name and (want is None or t == want)]
        if hits:
            found.append(min(hits, key=lambda h: h[0]))
            if not best:
                break
    return min(found, key=lambda h: h[0]) if found else None


def plain(x):
    """Seconds to 3 significant digits, never in exponent form."""
    if x == 0:
        return "0"
    digits = max(0, 2 - int(math.floor(math.log10(abs(x)))))
    return "%.*f" % (digits, x)


def speed_table(name, runs, page_dir):
    """The Markdown of table `name` from the runs, links relative to
    page_dir (the folder of the page it goes into)."""
    spec = SPEED_TABLES[name]
    cols = spec["columns"]
    # Each case: the latest run with topoml's default choice and another column.
    chosen, left_out = {}, []
    for d in sorted((d for d in runs if spec["match"](d)),
                    key=lambda d: (run_date(d), d["_path"])):
        for c in d["cases"]:
            key = case_key(d, c)
            if key is None:
                continue
            figs = figures(d, key)
            cells = [column_figure(spec_, d, figs) for _, spec_ in cols]
            if cells[0] is None or all(x is None for x in cells[1:]):
                continue
            if busy(d):
                if os.path.basename(d["_path"]) not in left_out:
                    left_out.append(os.path.basename(d["_path"]))
            else:
                chosen[key] = (d, cells)
    head = ["case"] + [c for c, _ in cols] + ["run"]
    out = ["| " + " | ".join(head) + " |", "| --- |" + " ---: |" * len(cols) + " --- |"]
    counts, failed = set(), []
    for key in sorted(chosen, key=lambda k: (chosen[k][1][0][0], k)):
        d, cells = chosen[key]
        path = os.path.relpath(os.path.abspath(d["_path"]), page_dir).replace(os.sep, "/")
        run = os.path.splitext(os.path.basename(d["_path"]))[0]
        row = [case_label(key)]
        for (col, _), cell in zip(cols, cells):
            if cell is None:
                row.append("—")
                continue
            counts.add(cell[1])
            row.append(plain(cell[0]) + (" *" if cell[2] else ""))
            if cell[2]:
                failed.append("%s on %s in %s: the median of the %d runs that finished; "
                              "the run also says '%s'" % (col, key[0], run, cell[1], cell[2]))
        row.append("[%s](%s)" % (run, path))
        out.append("| " + " | ".join(row) + " |")
    if not chosen:
        out.append("| no run yet |" + " — |" * len(cols) + " |")
    n = sorted(counts)
    runs_text = ("%d" % n[0] if len(n) == 1 else "%d to %d" % (n[0], n[-1])) if n else "no"
    inproc = any(c == "topoml in process" for c, _ in cols)
    note = "Seconds per run (wall time), the median of %s runs. **topoml**: %s; a whole " \
        "process, as Ripser and Ripser++. giotto-ph (as many threads as topoml, the faster " \
        "of `collapse_edges` on and off), ripser.py%s: the call in Python, imports%s left " \
        "out. A row is the latest run here that timed topoml and another program on the " \
        "case (linked); — : not timed in it." % (
            runs_text, spec["default"], " and topoml in process" if inproc else "",
            " and the backend's start" if inproc else "")
    out += ["", note]
    if failed:
        out += ["", "\\* " + "; ".join(failed) + "."]
    if left_out:
        out += ["", "Left out, made while the machine was busy (load average above its CPU "
                "count): %s." % ", ".join(sorted(left_out))]
    return "\n".join(out)


def speed_pages(pages, runs, update):
    """Rewrite (update) or compare the speed tables of the pages. Returns the
    problems, each naming the page."""
    problems = []
    for page in pages:
        text = open(page, encoding="utf-8").read()
        marks = list(SPEED_MARKER.finditer(text))
        new, last, i = [], 0, 0
        while i < len(marks):
            m = marks[i]
            line = text.count("\n", 0, m.start()) + 1
            end = marks[i + 1] if i + 1 < len(marks) else None
            if m.group(1) != "begin" or end is None or end.group(1) != "end" or \
                    end.group(2) != m.group(2):
                problems.append("%s:%d: a tables marker without its pair" % (page, line))
                break
            if m.group(2) not in SPEED_TABLES:
                problems.append("%s:%d: no table named %s (there are: %s)" % (
                    page, line, m.group(2), ", ".join(sorted(SPEED_TABLES))))
                i += 2
                continue
            new.append(text[last:m.end()] + "\n")
            new.append(speed_table(m.group(2), runs, os.path.dirname(os.path.abspath(page))))
            new.append("\n")
            last = end.start()
            i += 2
        new.append(text[last:])
        made = "".join(new)
        if problems:
            continue
        if update:
            if made != text:
                with open(page, "w", encoding="utf-8") as f:
                    f.write(made)
        elif made != text:
            diff = "".join(difflib.unified_diff(
                text.splitlines(True), made.splitlines(True), page + " (as it is)",
                page + " (from the artifacts)", n=0))
            problems.append("%s: the speed tables are not what the artifacts make now "
                            "(make_tables.py --results DIR --update-speed %s):\n%s"
                            % (page, page, diff))
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--results", help="a folder of *.json artifacts")
    ap.add_argument("files", nargs="*")
    ap.add_argument("--page", help="write a Markdown page here (links relative to it)")
    ap.add_argument("--strict", action="store_true",
                    help="fail on a file that breaks the schema (default: list it untabled)")
    ap.add_argument("--check-figures", metavar="SRC",
                    help="instead of tables: check that every measured figure in SRC's "
                         "README.md and docs/ names its artifact (exit 1 if one does not)")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--update-speed", nargs="+", metavar="PAGE",
                   help="rewrite the speed tables between the pages' markers")
    g.add_argument("--check-speed", nargs="+", metavar="PAGE",
                   help="check that the pages' speed tables are what the artifacts make")
    a = ap.parse_args()
    if a.check_figures:
        return check_figures(a.check_figures)
    if a.update_speed or a.check_speed:
        if not a.results:
            ap.error("--update-speed and --check-speed need --results")
        runs = []
        for f in sorted(os.listdir(a.results)):
            if f.endswith(".json") and f != PENDING:
                try:
                    runs.append(load(os.path.join(a.results, f)))
                except SchemaError as e:
                    print("make_tables: %s" % e, file=sys.stderr)
                    return 1
        problems = speed_pages(a.update_speed or a.check_speed, runs, bool(a.update_speed))
        for p in problems:
            print("make_tables: %s" % p, file=sys.stderr)
        return 1 if problems else 0
    files = list(a.files)
    slots, skipped = [], []
    if a.results:
        files += sorted(os.path.join(a.results, f) for f in os.listdir(a.results)
                        if f.endswith(".json") and f != PENDING)
        if os.path.exists(os.path.join(a.results, PENDING)):
            try:
                slots = load_pending(os.path.join(a.results, PENDING))
            except SchemaError as e:
                print("make_tables: %s" % e, file=sys.stderr)
                if a.strict:
                    return 1
                skipped.append((PENDING, str(e)))
        for slot in slots:
            if slot.get("file") and os.path.exists(os.path.join(a.results, slot["file"])):
                print("make_tables: %s: %s has its artifact now: remove the slot"
                      % (PENDING, slot["file"]), file=sys.stderr)
                if a.strict:
                    return 1
        slots = [x for x in slots
                 if not (x.get("file") and os.path.exists(os.path.join(a.results, x["file"])))]
    if not files:
        ap.error("no artifacts")
    runs = []
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
           "Made by `bench/make_tables.py` from the JSON artifacts in "
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
    if slots:
        out += ["# Figures without an artifact", "",
                "Quoted in the README or the docs from runs that kept no JSON; each has a "
                "slot in `bench/results/%s`: one with a file waits for the run that makes "
                "it, one without will not get one." % PENDING, ""]
        out += [slot_table(x) for x in slots]
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
