#!/usr/bin/env python3
"""Build the documentation site: stage docs/ with the generated pages, then
`mkdocs build --strict`.

Generated into the staged copy (never into docs/ itself):
  reference/c-api.md            the public headers' comments (api_reference.py)
  reference/python-api.md       the Python package's docstrings (python_reference.py)
  man/topoml.md, man/topoml-conformance.md
                                the built programs' --help (man_pages.py)
  benchmarks.md                 bench/results/*.json (bench/make_tables.py)
and the code blocks tied to files (doc_includes.py) are refreshed; a link
to a file of the tree outside docs/ (a benchmark artifact) gets a copy of
the file in the site.

Usage: build_site.py --build BUILD_DIR --out SITE_DIR [--source SRC]
Exit status: 0 built; 1 mkdocs or a generator failed (its output says why).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    sys.stdout.write(r.stdout)
    sys.stderr.write(r.stderr)
    if r.returncode != 0:
        raise SystemExit("build_site: failed (%d): %s" % (r.returncode, " ".join(cmd)))
    return r


LINK = re.compile(r"(\]\()([^)\s#]+)((?:#[^)\s]*)?\))")


def pull_in_sources(src, docs):
    """Links from a page to files of the tree outside docs/ (a benchmark
    artifact, a header) work on a forge but not in the site: copy each such
    file under docs/_source/<path in the tree> and point the link there. A
    link to a file that does not exist is left for mkdocs --strict to
    report."""
    src_docs = os.path.join(src, "docs")
    for d, _, files in os.walk(docs):
        for f in files:
            if not f.endswith(".md"):
                continue
            page = os.path.join(d, f)
            rel_dir = os.path.relpath(d, docs)
            text = open(page, encoding="utf-8").read()

            def fix(m):
                target = m.group(2)
                if re.match(r"^[a-z]+:", target) or target.startswith("/"):
                    return m.group(0)
                real = os.path.normpath(os.path.join(src_docs, rel_dir, target))
                inside_docs = real.startswith(src_docs + os.sep)
                if inside_docs or not real.startswith(src + os.sep) or not os.path.isfile(real):
                    return m.group(0)
                copy = os.path.join(docs, "_source", os.path.relpath(real, src))
                os.makedirs(os.path.dirname(copy), exist_ok=True)
                shutil.copyfile(real, copy)
                return m.group(1) + os.path.relpath(copy, d) + m.group(3)

            new = LINK.sub(fix, text)
            if new != text:
                with open(page, "w", encoding="utf-8") as out:
                    out.write(new)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--source", default=os.path.normpath(os.path.join(HERE, "..", "..")))
    ap.add_argument("--build", required=True, help="a build tree with tools/topoml")
    ap.add_argument("--out", required=True, help="where the site goes")
    ap.add_argument("--mkdocs", default="mkdocs")
    a = ap.parse_args()
    src, build = os.path.abspath(a.source), os.path.abspath(a.build)
    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        docs = os.path.join(tmp, "docs")
        shutil.copytree(os.path.join(src, "docs"), docs)
        run([py, os.path.join(HERE, "doc_includes.py"), "--root", src, "--docs", docs, "--update"])
        headers = [os.path.join(src, h) for h in (
            "core/include/topoml/topoml.h", "core/include/topoml/features.h",
            "plugin-api/include/topoml/plugin.h", "plugin-api/include/topoml/types.h")]
        run([py, os.path.join(HERE, "api_reference.py"), "--root", src,
             "--out", os.path.join(docs, "reference", "c-api.md")] + headers)
        run([py, os.path.join(HERE, "python_reference.py"), "--package",
             os.path.join(src, "python", "topoml"),
             "--out", os.path.join(docs, "reference", "python-api.md")])
        run([py, os.path.join(HERE, "man_pages.py"), "--program",
             os.path.join(build, "tools", "topoml"), "--commands",
             "--md", os.path.join(docs, "man", "topoml.md")])
        run([py, os.path.join(HERE, "man_pages.py"), "--program",
             os.path.join(build, "tools", "topoml-conformance"),
             "--md", os.path.join(docs, "man", "topoml-conformance.md")])
        run([py, os.path.join(src, "bench", "make_tables.py"), "--results",
             os.path.join(src, "bench", "results"), "--page", os.path.join(docs, "benchmarks.md")])
        pull_in_sources(src, docs)
        config = open(os.path.join(src, "mkdocs.yml")).read()
        with open(os.path.join(tmp, "mkdocs.yml"), "w") as f:
            f.write(config)
        run([a.mkdocs, "build", "--strict", "-f", os.path.join(tmp, "mkdocs.yml"),
             "-d", os.path.abspath(a.out)])
    print("build_site: %s" % os.path.abspath(a.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
