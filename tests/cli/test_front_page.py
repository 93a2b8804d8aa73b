"""The front pages (README.md, docs/index.md) and their pictures are what
the generators make now. The speed tables between the tables markers are
what bench/make_tables.py makes from bench/results/ (a figure edited by
hand, or a newer run not yet in the table, fails); the pictures in
docs/images/ are what docs/tools/make_pictures.py makes with this build's
topoml (a stale byte fails), they are SVG that a code host and the docs site
show as they are (width, height, viewBox; no script, no outside file), the
pages point at them by relative paths that exist, and getting-started shows
the commands that make them. The README's examples run: the command line's
output is the one shown, the C program builds against this build and prints
the same bars, the Python example prints what its comment says. The table
logic itself: a row comes from the latest run that timed topoml's default
choice and another program on the case, a program that run did not time is
an em dash, a run made on a busy machine is left out and named."""
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

import clitest

A = clitest.args()
A.build = os.path.abspath(A.build)
A.topoml = os.path.abspath(A.topoml)
SRC = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
TABLES = os.path.join(SRC, "bench", "make_tables.py")
PICTURES = os.path.join(SRC, "docs", "tools", "make_pictures.py")
RESULTS = os.path.join(SRC, "bench", "results")
PAGES = [os.path.join(SRC, "README.md"), os.path.join(SRC, "docs", "index.md")]
NS = "{http://www.w3.org/2000/svg}"
sys.path.insert(0, os.path.dirname(PICTURES))
import make_pictures  # noqa: E402

failures = []


def check(what, ok, detail=""):
    if not ok:
        failures.append(what)
        print("FAIL: %s %s" % (what, detail[-3000:]))


def py(*args, cwd=None):
    return subprocess.run([sys.executable] + list(args), capture_output=True, text=True, cwd=cwd)


def read(path):
    return open(path, encoding="utf-8").read()


# --- The speed tables ---------------------------------------------------

r = py(TABLES, "--results", RESULTS, "--check-speed", *PAGES)
check("the front pages' speed tables are what the artifacts make", r.returncode == 0, r.stderr)
for page in PAGES:
    text = read(page)
    for name in ("speed-cpu-2core", "speed-h200"):
        m = re.search(r"<!-- tables:begin %s -->\n(.*?)<!-- tables:end %s -->" % (name, name),
                      text, re.S)
        check("%s has the table %s" % (os.path.relpath(page, SRC), name),
              m is not None and m.group(1).startswith("| case | topoml |"))
        if m is None:
            continue
        for link in re.findall(r"\]\(([^)]+\.json)\)", m.group(1)):
            check("%s: %s links an artifact that exists: %s" % (
                os.path.relpath(page, SRC), name, link),
                os.path.isfile(os.path.join(os.path.dirname(page), link)))

with tempfile.TemporaryDirectory() as tmp:
    # A copy of the tree's pages and artifacts: as they are, they pass.
    res = os.path.join(tmp, "bench", "results")
    shutil.copytree(RESULTS, res)
    readme = os.path.join(tmp, "README.md")
    shutil.copy(PAGES[0], readme)
    good = read(readme)
    r = py(TABLES, "--results", res, "--check-speed", readme)
    check("a copy of the README and the artifacts passes", r.returncode == 0, r.stderr)

    # A figure edited by hand fails, naming the page.
    row = re.search(r"^\| o3_1024 `--dim 3 --threshold 1\.8` \| ([0-9.]+) \|", good, re.M)
    check("the 2-core table has o3_1024", row is not None, good[:2000])
    if row:
        with open(readme, "w") as f:
            f.write(good[:row.start(1)] + "0.001" + good[row.end(1):])
        r = py(TABLES, "--results", res, "--check-speed", readme)
        check("a figure edited by hand fails", r.returncode == 1 and "README.md" in r.stderr
              and "0.001" in r.stderr, r.stderr)
        with open(readme, "w") as f:
            f.write(good)

    # A newer run on the same kind of machine: the table is stale until
    # updated, and then the row comes from it.
    newer = json.load(open(os.path.join(res, "rips-cpu-2core-quiet.json")))
    newer["machine"]["date"] = "2099-01-01T00:00:00+00:00"
    for c in newer["cases"]:
        if c["name"] == "o3_1024" and c["program"] == "topoml threads collapse=auto" \
                and c["threads"] == 2:
            c["times"], c["median"] = [0.0421, 0.0422, 0.0423], 0.0422
    json.dump(newer, open(os.path.join(res, "rips-cpu-2core-zz-newer.json"), "w"))
    r = py(TABLES, "--results", res, "--check-speed", readme)
    check("a newer run makes the table stale", r.returncode == 1, r.stderr)
    r = py(TABLES, "--results", res, "--update-speed", readme)
    text = read(readme)
    check("--update-speed takes the newer run's figure and links it", r.returncode == 0 and
          "| 0.0422 |" in text and "](bench/results/rips-cpu-2core-zz-newer.json)" in text,
          r.stderr + text[:3000])

    # The same run, busy: left out and named, the older run's figure back.
    newer["machine"]["load_average_start"] = [5.0, 4.0, 3.0]
    json.dump(newer, open(os.path.join(res, "rips-cpu-2core-zz-newer.json"), "w"))
    r = py(TABLES, "--results", res, "--update-speed", readme)
    text = read(readme)

    def tables_only(t):
        return "\n".join(line for line in t.split("\n") if not line.startswith("Left out"))

    left = [line for line in text.split("\n") if line.startswith("Left out")]
    check("a run on a busy machine is left out and named", r.returncode == 0 and
          tables_only(text) == tables_only(good) and
          any("rips-cpu-2core-zz-newer.json" in line for line in left), r.stderr + str(left))

    # A run that timed topoml and one other program: the others are dashes.
    only = {"machine": {"cpus_available": 2, "date": "2099-02-01T00:00:00+00:00"},
            "versions": {"topoml": "x"}, "commands": ["x"],
            "cases": [{"name": "o3_1024", "program": "topoml threads collapse=auto",
                       "threads": 2, "times": [0.5], "dim": 3, "threshold": 1.8, "input": "o3_1024.txt"},
                      {"name": "o3_1024", "program": "ripser 1.2.1", "threads": 1,
                       "times": [2.0], "dim": 3, "threshold": 1.8, "input": "o3_1024.txt"},
                      {"name": "o3_1024", "program": "topoml scalar", "threads": 1,
                       "times": [1.0], "dim": 3, "threshold": 1.8, "input": "o3_1024.txt"}]}
    json.dump(only, open(os.path.join(res, "rips-cpu-2core-zz-only.json"), "w"))
    r = py(TABLES, "--results", res, "--update-speed", readme)
    rows = [line for line in read(readme).split("\n")
            if line.startswith("| o3_1024 `--dim 3 --threshold 1.8` |")]
    check("a program not timed in the row's run is an em dash, not another run's figure",
          "| o3_1024 `--dim 3 --threshold 1.8` | 0.500 | — | — | 2.00 | — | "
          "[rips-cpu-2core-zz-only](bench/results/rips-cpu-2core-zz-only.json) |" in rows,
          r.stderr + "\n".join(rows))
    check("one row per case and kind of machine: the newer run's replaces the older's",
          len([x for x in rows if "rips-cpu-2core" in x]) == 1, "\n".join(rows))

    # A marker without its pair, or naming no table, is an error.
    with open(readme, "w") as f:
        f.write(good + "\n<!-- tables:begin speed-nowhere -->\n<!-- tables:end speed-nowhere -->\n")
    r = py(TABLES, "--results", res, "--check-speed", readme)
    check("an unknown table name fails", r.returncode == 1 and "speed-nowhere" in r.stderr,
          r.stderr)
    with open(readme, "w") as f:
        f.write(good.replace("<!-- tables:end speed-h200 -->\n", ""))
    r = py(TABLES, "--results", res, "--check-speed", readme)
    check("a begin marker without its end fails", r.returncode == 1 and "without its pair"
          in r.stderr, r.stderr)

# --- The pictures ---------------------------------------------------------

r = py(PICTURES, "--build", A.build, "--check")
check("docs/images/ is what make_pictures.py makes with this build", r.returncode == 0, r.stderr)
images = os.path.join(SRC, "docs", "images")
for name in make_pictures.PICTURES:
    path = os.path.join(images, name)
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        check("%s is an SVG file" % name, False, str(e))
        continue
    check("%s: an svg element with width, height and viewBox" % name,
          root.tag == NS + "svg" and all(root.get(k) for k in ("width", "height", "viewBox")))
    raw = read(path)
    for bad in ("<script", "<image", "foreignObject", "@import", "url(", "href", "@font-face"):
        check("%s: nothing outside the file, no script (%s)" % (name, bad), bad not in raw)
    check("the README shows %s" % name, "](docs/images/%s)" % name in read(PAGES[0]))
    check("docs/index.md shows %s" % name, "](images/%s)" % name in read(PAGES[1]))
started = read(os.path.join(SRC, "docs", "getting-started.md"))
for cmd in make_pictures.COMMANDS:
    check("getting-started shows the command: %s" % cmd, "\n%s\n" % cmd in started)
for name in make_pictures.PICTURES:
    check("getting-started shows %s" % name, "](images/%s)" % name in started)

with tempfile.TemporaryDirectory() as tmp:
    # A stale picture fails, naming it; writing them puts them back.
    shutil.copytree(os.path.join(SRC, "docs"), os.path.join(tmp, "docs"))
    victim = os.path.join(tmp, "docs", "images", make_pictures.PICTURES[0])
    fresh = open(victim, "rb").read()
    with open(victim, "wb") as f:
        f.write(fresh.replace(b"<circle ", b"<circle  ", 1))
    r = py(os.path.join(tmp, "docs", "tools", "make_pictures.py"), "--build", A.build, "--check")
    check("a stale picture fails", r.returncode == 1 and make_pictures.PICTURES[0] in r.stderr,
          r.stderr)
    r = py(os.path.join(tmp, "docs", "tools", "make_pictures.py"), "--build", A.build)
    check("make_pictures.py writes them back", r.returncode == 0 and
          open(victim, "rb").read() == fresh, r.stderr)

# --- The README's examples run -----------------------------------------------


def block(text, name):
    m = re.search(r"<!-- example: %s -->\n```[a-z]*\n(.*?)^```$" % name, text, re.S | re.M)
    return m.group(1) if m else None


readme = read(PAGES[0])
cli = block(readme, "cli")
check("the README has its command-line example", cli is not None)
expected_cli = ""
if cli:
    first, *shown = cli.rstrip("\n").split("\n")
    argv = shlex.split(first[2:])
    argv[0] = A.topoml
    r = subprocess.run(argv, capture_output=True, text=True, cwd=SRC)
    expected_cli = r.stdout
    # " ..." stands for any lines
    pattern = "".join("(?:.*\n)*?" if line == " ..." else re.escape(line) + "\n"
                      for line in shown)
    check("the command-line example prints what the README shows",
          r.returncode == 0 and re.fullmatch(pattern, r.stdout) is not None,
          r.stdout + r.stderr)


def cache_value(key):
    """A value of the build's CMakeCache.txt, or None."""
    path = os.path.join(A.build, "CMakeCache.txt")
    m = re.search(r"^%s:\w+=(.*)$" % key, read(path), re.M) if os.path.exists(path) else None
    return m.group(1) if m else None


c_src = block(readme, "c")
check("the README has its C example", c_src is not None)
# The build's compiler and sanitizer: a host built without them cannot load
# a sanitized libtopoml.
cc = cache_value("CMAKE_C_COMPILER") or shutil.which("cc")
sanitize = {"address": ["-fsanitize=address,undefined"], "thread": ["-fsanitize=thread"]}.get(
    cache_value("TOPOML_SANITIZE") or "", [])
if c_src and cc:
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "first.c"), "w") as f:
            f.write(c_src)
        lib = os.path.join(A.build, "core")
        r = subprocess.run([cc, "-std=c11", "-Wall", "-Wextra", "-Werror", "first.c",
                            "-I" + os.path.join(SRC, "core", "include"),
                            "-I" + os.path.join(SRC, "plugin-api", "include"),
                            "-I" + os.path.join(A.build, "core", "include"),
                            "-L" + lib, "-ltopoml", "-Wl,-rpath," + lib, "-o", "first"] +
                           sanitize,
                           capture_output=True, text=True, cwd=tmp)
        check("the C example builds against this build", r.returncode == 0, r.stderr)
        if r.returncode == 0:
            r = subprocess.run([os.path.join(tmp, "first")], capture_output=True, text=True,
                               cwd=SRC)
            bars = expected_cli[expected_cli.find("persistence intervals"):]
            check("the C example prints the command line's bars",
                  r.returncode == 0 and bars and r.stdout == bars, r.stdout + r.stderr)
elif c_src:
    print("SKIP: no cc to build the C example")

py_src = block(readme, "python")
check("the README has its Python example", py_src is not None)
check("docs/index.md shows the README's Python example", py_src and
      "```python\n%s```" % py_src in read(PAGES[1]))
package = os.path.join(A.build, "python", "topoml")
venv = cache_value("TOPOML_PYTHON_VENV")
venv = venv and os.path.join(venv, "bin", "python")
if py_src and os.path.isdir(package) and venv and os.path.exists(venv):
    want = re.search(r"^print\(.*\)\s+# (.*)$", py_src, re.M)
    env = dict(os.environ, PYTHONPATH=os.path.join(A.build, "python"))
    r = subprocess.run([venv, "-c", py_src], capture_output=True, text=True, cwd=SRC, env=env)
    check("the Python example prints what its comment says",
          r.returncode == 0 and want and r.stdout.strip() == want.group(1).strip(),
          r.stdout + r.stderr)
elif py_src:
    print("SKIP: the Python package is not built here (%s)" % package)

print("%d failures" % len(failures))
sys.exit(1 if failures else 0)
