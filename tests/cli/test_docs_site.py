"""The documentation site builds with `mkdocs build --strict`
(docs/tools/build_site.py) and has its generated pages: the C API reference
with the public functions, topoml(1) and topoml-conformance(1) with their
options, the configuration keys, the Python API reference, the benchmark tables with their artifacts
copied in, the front page's and getting-started's pictures (docs/images/) in the site where their
pages point; a page with a broken link makes the build fail, naming it."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import clitest

A = clitest.args()
SRC = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
TOOL = os.path.join(SRC, "docs", "tools", "build_site.py")
failures = []


def check(what, ok, detail=""):
    if not ok:
        failures.append(what)
        print("FAIL: %s %s" % (what, detail[-3000:]))


def build(src, out):
    return subprocess.run([sys.executable, TOOL, "--source", src, "--build", A.build, "--out", out],
                          capture_output=True, text=True)


def page(site, path):
    p = os.path.join(site, path)
    return open(p, encoding="utf-8").read() if os.path.exists(p) else ""


with tempfile.TemporaryDirectory() as tmp:
    site = os.path.join(tmp, "site")
    r = build(SRC, site)
    check("the site builds strictly", r.returncode == 0, r.stdout + r.stderr)
    capi = page(site, "reference/c-api/index.html")
    for name in ("topoml_context_new", "topoml_barcode_compute", "topoml_backend_v1",
                 "topoml_bottleneck_distance"):
        check("C API reference has %s" % name, name in capi)
    check("Python API reference has ripser and barcodes",
          "topoml.ripser" in page(site, "reference/python-api/index.html") and
          "topoml.barcodes" in page(site, "reference/python-api/index.html"))
    man = page(site, "man/topoml/index.html")
    check("topoml(1) has barcode's --threshold", "topoml barcode" in man and "--threshold" in man)
    check("topoml-conformance(1) has --certify",
          "--certify" in page(site, "man/topoml-conformance/index.html"))
    check("the configuration page shows topoml.yaml.example",
          "max_memory" in page(site, "configuration/index.html"))
    bench = page(site, "benchmarks/index.html")
    check("the benchmark page has tables", "<table" in bench)
    for f in os.listdir(os.path.join(SRC, "bench", "results")):
        # pending.json is no run: its slots' sections link it (make_tables
        # --check-figures), and with no slot no page may, so it is absent
        if f == "pending.json" and not json.load(
                open(os.path.join(SRC, "bench", "results", f)))["pending"]:
            continue
        if f.endswith(".json"):
            check("artifact %s is in the site" % f,
                  os.path.exists(os.path.join(site, "_source", "bench", "results", f)))
    # The pictures: copied into the site, and each page's <img> resolves to one.
    for html, pics in (("index.html", "images/"), ("getting-started/index.html", "../images/")):
        for name in sorted(os.listdir(os.path.join(SRC, "docs", "images"))):
            src_attr = 'src="%s%s"' % (pics, name)
            check("%s shows %s" % (html, name), src_attr in page(site, html), src_attr)
            check("the site has images/%s" % name,
                  os.path.exists(os.path.join(site, "images", name)))
    check("the home page has both speed tables, their artifacts linked into the site",
          page(site, "index.html").count("_source/bench/results/rips-") >= 2)
    check("the landscape page is there",
          "Multiparameter" in page(site, "concepts/topology-landscape/index.html"))
    check("writing-a-plugin shows the example plugin",
          "topoml_backend_negotiate" in page(site, "writing-a-plugin/index.html"))

    # A broken link fails the build.
    src2 = os.path.join(tmp, "src")
    for d in ("docs", "examples", "core/include", "plugin-api/include", "bench", "tools",
              "python/topoml"):
        shutil.copytree(os.path.join(SRC, d), os.path.join(src2, d))
    for f in ("mkdocs.yml", "topoml.yaml.example"):
        shutil.copy(os.path.join(SRC, f), os.path.join(src2, f))
    with open(os.path.join(src2, "docs", "features.md"), "a") as f:
        f.write("\nSee [nowhere](no-such-page.md).\n")
    r = build(src2, os.path.join(tmp, "site2"))
    check("a broken link fails the build", r.returncode != 0 and "no-such-page.md" in
          r.stdout + r.stderr, r.stdout + r.stderr)

print("%d failures" % len(failures))
sys.exit(1 if failures else 0)
