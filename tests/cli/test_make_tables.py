"""bench/make_tables.py and bench/artifact.py: every committed
artifact in bench/results/ follows the one schema (--strict) and gets a
table; the slots of pending.json show as "no artifact yet", never as a
number; every measured figure in README.md and docs/ names its artifact or
its slot (--check-figures), and a figure that does not is found, in prose,
in a table and in a fenced block; a file in the schema the benchmark scripts
write (raw times, no median, threads, peak RSS) gets its median computed and
its ratios to the baseline; a case without raw times is refused unless the
file says why; the older per-program shape, a file without machine,
versions or commands, and a broken pending.json are refused under --strict,
naming the file and the case, and otherwise listed on the page without a
table; artifact.save refuses what the tables would refuse; artifact.save
records the source tree's commit and whether it was dirty (bench/results/
aside) in a git checkout, nothing outside one, and the tables show it beside
the versions; a malformed 'git' is refused."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import clitest

A = clitest.args()
SRC = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
TOOL = os.path.join(SRC, "bench", "make_tables.py")
sys.path.insert(0, os.path.join(SRC, "bench"))
import artifact  # noqa: E402
import make_tables  # noqa: E402

failures = []


def check(what, ok, detail=""):
    if not ok:
        failures.append(what)
        print("FAIL: %s %s" % (what, detail))


def tables(*args):
    return subprocess.run([sys.executable, TOOL] + list(args), capture_output=True, text=True)


# The committed artifacts: all in the schema, each with a table.
results = os.path.join(SRC, "bench", "results")
r = tables("--strict", "--results", results)
check("the committed artifacts follow the schema", r.returncode == 0, r.stderr)
for f in sorted(os.listdir(results)):
    if f.endswith(".json") and f != "pending.json":
        check("%s has a table" % f, "[%s](" % f in r.stdout, r.stdout[-800:])
slots = json.load(open(os.path.join(results, "pending.json")))["pending"]
for s in slots:
    check("slot '%s' is on the page" % s["title"], "## %s" % s["title"] in r.stdout)
    if "file" in s:
        check("slot %s has no artifact yet" % s["file"],
              not os.path.exists(os.path.join(results, s["file"])) and
              "`%s` — **no artifact yet**" % s["file"] in r.stdout)
# The GPU figures: each family has its artifacts or a slot that waits for them.
gpu = {
    "2026-12-asm-avx512.json": ["2026-12-asm-avx512.json"],
    "2026-12-triton-bridge.json": sorted(f for f in os.listdir(results)
                                         if re.fullmatch(r"triton-bridge-h200-r\d+\.json", f)),
    "2026-12-conformance-gpu.json": ["conformance-h200/full-%s.json" % p
                                     for p in ("cuda", "triton-bridge", "asm-avx512")],
}
for f, files in gpu.items():
    check("the GPU figures of %s have their artifact or a slot" % f,
          (files and all(os.path.exists(os.path.join(results, g)) for g in files)) or
          f in {s.get("file") for s in slots})
for p in ("cuda", "triton-bridge", "asm-avx512"):
    path = os.path.join(results, "conformance-h200", "full-%s.json" % p)
    if os.path.exists(path):
        report = json.load(open(path))
        check("the full tier of %s is a passing topoml-conformance report" % p,
              report.get("tool") == "topoml-conformance" and report.get("tier") == "full" and
              all(q.get("verdict") == "pass" for q in report.get("plugins", [])))

# Every figure quoted in README.md and docs/ names its artifact.
r = tables("--check-figures", SRC)
check("every figure in README and docs names its artifact", r.returncode == 0, r.stderr)
linked = 0
pages = [os.path.join(SRC, "README.md")] + [
    os.path.join(d, f) for d, _, fs in os.walk(os.path.join(SRC, "docs")) for f in fs
    if f.endswith(".md")]
for p in pages:
    for target in re.findall(r"\]\(([^)#\s]*bench/results/[^)#\s]+)\)", open(p).read()):
        linked += 1
        real = os.path.normpath(os.path.join(os.path.dirname(p), target))
        check("%s links an existing artifact: %s" % (os.path.relpath(p, SRC), target),
              os.path.isfile(real))
check("README and docs link artifacts", linked >= 3, str(linked))

with tempfile.TemporaryDirectory() as tmp:
    # --check-figures on a small tree: what it finds and what it lets pass.
    tree = os.path.join(tmp, "tree")
    os.makedirs(os.path.join(tree, "docs", "notes"))
    os.makedirs(os.path.join(tree, "plugins", "p"))
    os.makedirs(os.path.join(tree, "bench", "results"))
    shutil.copy(os.path.join(results, "cpp_compat.json"),
                os.path.join(tree, "bench", "results", "run.json"))
    json.dump({"pending": [{"title": "t", "why": "w", "quoted_in": ["docs/b.md: Owed"]}]},
              open(os.path.join(tree, "bench", "results", "pending.json"), "w"))
    good_pages = {
        "README.md": "# x\n\n## Speed\n\nIt takes 1.31 s ([run](bench/results/run.json)).\n",
        "docs/a.md": "# a\n\nA call waits at most 1 s; the timeout is 10 s; 30 s at most; "
                     "a ~20 s computation under a 5 s bound.\n\n"
                     "## Table\n\n| case | s |\n| --- | ---: |\n| x | 0.25 s |\n\n"
                     "From `bench/results/run.json`.\n",
        "docs/b.md": "# b\n\n## Owed\n\nAbout 5 ms ([pending](../bench/results/pending.json)).\n",
        "docs/notes/c.md": "# c\n\n## Done\n\n3.5× faster "
                           "([run](../../bench/results/run.json)).\n\n"
                           "### bench/results/run.json\n\n| case | s |\n| --- | --- |\n"
                           "| x | 1.250 |\n\n## Versions\n\n| version | core |\n| --- | --- |\n"
                           "| 1 | 0.3 |\n",
        "plugins/p/README.md": "# p\n\n## Measured\n\n2.5× faster "
                               "([run](../../bench/results/run.json)); a run takes 240 s by "
                               "default.\n",
    }

    def write_tree(pages):
        for f in list(good_pages) + list(pages):
            path = os.path.join(tree, f)
            if os.path.exists(path):
                os.unlink(path)
        for f, text in pages.items():
            open(os.path.join(tree, f), "w").write(text)
        return tables("--check-figures", tree)

    r = write_tree(good_pages)
    check("figures with artifacts, slots and limits pass", r.returncode == 0, r.stderr)
    for page, text, why in (
            ("docs/a.md", "# a\n\n## New\n\nIt now takes 0.82 s.\n", "quotes 0.82 s"),
            ("docs/a.md", "# a\n\n| case | topoml |\n| --- | --- |\n| x | 12 ms |\n",
             "quotes 12 ms"),
            ("docs/a.md", "# a\n\n```\nn  kern\n64 4.15 ms\n```\n", "quotes 4.15 ms"),
            ("docs/a.md", "# a\n\nSeconds per call:\n\n| case | off | auto |\n| --- | --- | --- |\n"
                          "| x | 1.608 | 1.786 (+11.1%) |\n", "quotes 1.608"),
            ("docs/notes/c.md", "# c\n\n## Done\n\n3.5× faster.\n", "quotes 3.5×"),
            ("README.md", "# x\n\n## Speed\n\n1.31 s ([run](bench/results/gone.json)).\n",
             "gone.json, which does not exist"),
            ("docs/a.md", "# a\n\n## Other\n\n2 s ([p](../bench/results/pending.json)).\n",
             "no slot there names this section"),
            ("docs/b.md", "# b\n\n## Owed\n\nAbout 5 ms (later).\n", "quotes 5 ms"),
            ("plugins/p/README.md", "# p\n\n## Measured\n\n2.5× faster.\n", "quotes 2.5×"),
    ):
        pages = dict(good_pages)
        pages[page] = text
        r = write_tree(pages)
        check("--check-figures finds: %s" % why, r.returncode == 1 and why in r.stderr and
              page in r.stderr, r.stderr)
    pages = dict(good_pages)
    pages["docs/b.md"] = "# b\n\n## Owed\n\nNothing measured here.\n"
    r = write_tree(pages)
    check("--check-figures finds a slot its section does not point at", r.returncode == 1 and
          "names 'docs/b.md: Owed', which does not point at it" in r.stderr, r.stderr)

    # The schema.
    run = {"machine": "test machine", "versions": {"topoml": "x"}, "commands": ["bench --x"],
           "baseline": "ripser",
           "cases": [
               {"name": "a", "program": "ripser", "threads": 1, "times": [3.0, 1.0, 2.0],
                "peak_rss": 2097152},
               {"name": "a", "program": "topoml", "threads": 1, "times": [0.5, 0.25, 1.0, 0.75],
                "median": None, "peak_rss": 1048576},
               {"name": "a", "program": "topoml", "threads": 2, "times": [0.25], "peak_rss": None},
           ]}
    good = os.path.join(tmp, "good.json")
    json.dump(run, open(good, "w"))
    r = tables("--strict", good)
    check("the scripts' schema is read", r.returncode == 0, r.stderr)
    row = [l for l in r.stdout.splitlines() if l.startswith("| a |")]
    check("one row per case", len(row) == 1, r.stdout)
    cells = [c.strip() for c in row[0].strip("|").split("|")] if row else []
    # ripser median 2 s; topoml (1 thread) median of 4 times 625 ms; 2 threads 250 ms
    check("medians computed from the raw times",
          cells[1:4] == ["2 s", "625 ms", "250 ms"], str(cells))
    check("ratios to the baseline", cells[4:6] == ["0.31", "0.12"], str(cells))
    check("peak RSS in MiB", cells[6:9] == ["2.0 MiB", "1.0 MiB", ""], str(cells))
    check("threads named when they differ", "topoml (2 threads)" in r.stdout, r.stdout)
    check("the raw times are counted", "raw times per case: 1/3/4" in r.stdout, r.stdout)

    # A figure without raw times: allowed only when the file says why, and
    # the page says it too; the statistic is named.
    medians = dict(run, statistic="best of 3 runs", no_raw_times="kept the best run only")
    medians["cases"] = [{"name": "b", "program": "ripser", "median": 2.0},
                        {"name": "b", "program": "topoml", "median": 0.5}]
    p = os.path.join(tmp, "medians.json")
    json.dump(medians, open(p, "w"))
    r = tables("--strict", p)
    check("a file that says why it has no raw times is read",
          r.returncode == 0 and "| b | 2 s | 500 ms | 0.25 |" in r.stdout and
          "Best of 3 runs; no raw times: kept the best run only." in r.stdout,
          r.stdout + r.stderr)

    silent = dict(medians)
    del silent["no_raw_times"]
    old_shape = {"cases": [{"case": "b", "scalar": {"wall_s": 2.0}, "cpp_compat": {"wall_s": 1.0}}],
                 "machine": "m", "versions": {"x": "1"}, "commands": ["c"]}
    for bad, why in (({"cases": []}, "no 'cases'"),
                     (dict(run, cases=[{"name": "a", "program": "p"}]),
                      "neither 'median' nor 'times'"),
                     (dict(run, cases=[{"name": "a", "program": "p", "times": ["1"]}]), "'times'"),
                     (dict(run, cases=[{"name": "a", "times": [1]}]), "'name' and a 'program'"),
                     (silent, "'no_raw_times' does not say why"),
                     ({k: v for k, v in run.items() if k != "machine"}, "no 'machine'"),
                     ({k: v for k, v in run.items() if k != "versions"}, "no 'versions'"),
                     (dict(run, commands=[]), "no 'commands'"),
                     (old_shape, "'name' and a 'program'"),
                     (dict(run, git={"commit": "not-hex", "dirty": False}), "'git' must be"),
                     (dict(run, git={"commit": "abc1234"}), "'git' must be"),
                     (dict(run, git="abc1234"), "'git' must be")):
        p = os.path.join(tmp, "bad.json")
        json.dump(bad, open(p, "w"))
        r = tables("--strict", good, p)
        check("refused: %s" % why, r.returncode == 1 and "bad.json" in r.stderr and why in r.stderr,
              r.stderr)
        r = tables(good, p)
        check("without --strict, listed untabled: %s" % why,
              r.returncode == 0 and "* `bad.json`:" in r.stdout and "| a |" in r.stdout, r.stderr)
        try:
            artifact.save(os.path.join(tmp, "saved.json"), bad)
            check("artifact.save refuses: %s" % why, False)
        except make_tables.SchemaError as e:
            check("artifact.save refuses: %s" % why, why in str(e), str(e))
        check("artifact.save wrote nothing: %s" % why,
              not os.path.exists(os.path.join(tmp, "saved.json")))
    open(os.path.join(tmp, "broken.json"), "w").write("{")
    r = tables(os.path.join(tmp, "broken.json"))
    check("refused: not JSON", r.returncode == 1 and "broken.json" in r.stderr, r.stderr)

    # artifact.save writes what the tables read.
    saved = os.path.join(tmp, "saved.json")
    artifact.save(saved, {"machine": artifact.machine(), "versions": {"topoml": "x"},
                          "commands": ["bench"], "baseline": "p",
                          "cases": [artifact.case("c", "p", [0.2, 0.1, 0.3]),
                                    artifact.case("c", "q", [0.05], threads=2, extra=1)]})
    r = tables("--strict", saved)
    check("artifact.save's file is read", r.returncode == 0 and "| c | 200 ms | 50 ms | 0.25 |"
          in r.stdout, r.stdout + r.stderr)

    # The source tree's commit: from a git checkout, with whether its files
    # differ (bench/results/ aside); nothing, and no error, elsewhere.
    def git(repo, *args):
        return subprocess.run(["git", "-C", repo, "-c", "user.name=t", "-c", "user.email=t@t"] +
                              list(args), capture_output=True, text=True, check=True).stdout
    plain = os.path.join(tmp, "plain")
    os.makedirs(os.path.join(plain, "tools"))
    check("no checkout, no commit", artifact.source_tree(plain) is None)
    if shutil.which("git"):
        repo = os.path.join(tmp, "repo")
        os.makedirs(os.path.join(repo, "bench", "results"))
        os.makedirs(os.path.join(repo, "tools"))
        open(os.path.join(repo, "tools", "x.py"), "w").write("x = 1\n")
        open(os.path.join(repo, "bench", "results", "r.json"), "w").write("{}\n")
        git(repo, "init", "-q")
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", "c")
        head = git(repo, "rev-parse", "HEAD").strip()
        check("a clean checkout: its commit, not dirty",
              artifact.source_tree(repo) == {"commit": head, "dirty": False},
              artifact.source_tree(repo))
        open(os.path.join(repo, "bench", "results", "r.json"), "w").write("{\"x\": 1}\n")
        open(os.path.join(repo, "bench", "results", "new.json"), "w").write("{}\n")
        check("a run's files in bench/results/ do not make it dirty",
              artifact.source_tree(repo) == {"commit": head, "dirty": False},
              artifact.source_tree(repo))
        open(os.path.join(repo, "tools", "new.py"), "w").write("")
        check("an untracked script makes it dirty", artifact.source_tree(repo) ==
              {"commit": head, "dirty": True}, artifact.source_tree(repo))
        os.unlink(os.path.join(repo, "tools", "new.py"))
        open(os.path.join(repo, "tools", "x.py"), "w").write("x = 2\n")
        check("a changed file makes it dirty", artifact.source_tree(repo) ==
              {"commit": head, "dirty": True}, artifact.source_tree(repo))
        check("a folder inside a checkout is not its top: no commit",
              artifact.source_tree(os.path.join(repo, "tools")) is None)
        path = os.environ["PATH"]
        os.environ["PATH"] = plain
        try:
            check("no git to run: no commit, no error", artifact.source_tree(repo) is None)
        finally:
            os.environ["PATH"] = path
        git(repo, "checkout", "-q", "--", ".")
        base = {"machine": "m", "versions": {"topoml": "x"}, "commands": ["bench"],
                "cases": [artifact.case("c", "p", [0.1])]}
        for tree, dirty in ((repo, False), (repo, True)):
            if dirty:
                open(os.path.join(repo, "tools", "x.py"), "w").write("x = 3\n")
            src, artifact.SRC = artifact.SRC, tree
            try:
                artifact.save(saved, base)
            finally:
                artifact.SRC = src
            d = json.load(open(saved))
            check("artifact.save records the commit (dirty: %s)" % dirty,
                  d.get("git") == {"commit": head, "dirty": dirty}, d.get("git"))
            r = tables("--strict", saved)
            check("the table shows the commit beside the versions (dirty: %s)" % dirty,
                  r.returncode == 0 and "Versions: topoml x; source tree: commit %s%s." % (
                      head[:12], " with uncommitted changes" if dirty else "") in r.stdout,
                  r.stdout + r.stderr)
        src, artifact.SRC = artifact.SRC, repo
        try:
            artifact.save(saved, dict(base, git={"commit": "abc1234", "dirty": False}))
        finally:
            artifact.SRC = src
        check("a run that names its commit keeps it",
              json.load(open(saved)).get("git") == {"commit": "abc1234", "dirty": False})
    src, artifact.SRC = artifact.SRC, plain
    try:
        artifact.save(saved, {"machine": "m", "versions": {"topoml": "x"}, "commands": ["b"],
                              "cases": [artifact.case("c", "p", [0.1])]})
    finally:
        artifact.SRC = src
    d = json.load(open(saved))
    r = tables("--strict", saved)
    check("outside a checkout: no 'git', and the table as before",
          "git" not in d and r.returncode == 0 and "Versions: topoml x.\n" in r.stdout,
          r.stdout + r.stderr)

    # Slots: a missing artifact shows as such; a slot whose file has landed,
    # or a slot without its command, is refused under --strict.
    folder = os.path.join(tmp, "results")
    os.mkdir(folder)
    shutil.copy(good, folder)
    slot = {"file": "gpu.json", "title": "GPU run", "command": "device-run gpu",
            "why": "not run yet", "quoted_in": ["README.md: Speed"]}
    json.dump({"pending": [slot]}, open(os.path.join(folder, "pending.json"), "w"))
    r = tables("--strict", "--results", folder)
    check("a slot shows 'no artifact yet' and no number",
          r.returncode == 0 and "## GPU run" in r.stdout and
          "`gpu.json` — **no artifact yet**" in r.stdout and "device-run gpu" in r.stdout and
          not re.search(r"## GPU run\n(?:(?!\n## ).)*\|", r.stdout, re.S), r.stdout + r.stderr)
    check("pending.json is not read as a run", "[pending.json](" not in r.stdout, r.stdout)
    shutil.copy(good, os.path.join(folder, "gpu.json"))
    r = tables("--strict", "--results", folder)
    check("a slot whose artifact landed is refused",
          r.returncode == 1 and "gpu.json has its artifact now" in r.stderr, r.stderr)
    r = tables("--results", folder)
    check("without --strict, the landed artifact gets its table and the slot goes",
          r.returncode == 0 and "[gpu.json](" in r.stdout and "no artifact yet" not in r.stdout,
          r.stdout + r.stderr)
    os.unlink(os.path.join(folder, "gpu.json"))
    json.dump({"pending": [{k: v for k, v in slot.items() if k != "command"}]},
              open(os.path.join(folder, "pending.json"), "w"))
    r = tables("--strict", "--results", folder)
    check("a slot with a file but no command is refused",
          r.returncode == 1 and "comes with the 'command'" in r.stderr, r.stderr)

print("%d failures" % len(failures))
sys.exit(1 if failures else 0)
