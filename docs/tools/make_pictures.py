#!/usr/bin/env python3
"""The pictures of the README and the docs, made by the built `topoml`.

docs/images/ holds a persistence diagram and a barcode of a shipped example
(docs/examples/circle60.csv), drawn by `topoml plot` from the barcode that
`topoml barcode` computes. They are made by the commands in COMMANDS below,
which docs/getting-started.md shows as they are (with `topoml` for the built
program), so the page, the pictures and the program cannot drift apart:

  make_pictures.py --build BUILD            rewrite docs/images/*.svg
  make_pictures.py --build BUILD --check    make them in a temporary folder
                                            and compare, byte for byte

The barcode is computed on the scalar reference (`--backend scalar`): exact,
and the same on every machine, whatever other backends it has. `topoml plot`
writes the same bytes for the same diagram (tests/cli/test_plot_svg.py).

Exit status: 0 written, or with --check the same; 1 a command failed, or with
--check a picture differs or is missing (each one named).
"""
import argparse
import filecmp
import os
import shlex
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.normpath(os.path.join(HERE, "..", ".."))

# Run from the top of the source tree; every file they write is named in
# PICTURES or is scratch (circle60.json).
COMMANDS = [
    "topoml barcode --backend scalar --format point-cloud --dim 1 --output json"
    " -o circle60.json docs/examples/circle60.csv",
    "topoml plot --kind diagram --title 'circle60.csv: persistence diagram' --size 380x380"
    " -o circle60-diagram.svg circle60.json",
    "topoml plot --kind barcode --title 'circle60.csv: barcode' --size 380x380"
    " -o circle60-barcode.svg circle60.json",
]
PICTURES = ["circle60-diagram.svg", "circle60-barcode.svg"]


def make(source, topoml, out):
    """Run COMMANDS with their outputs in out (inputs from source); None,
    or the failure as text."""
    for cmd in COMMANDS:
        argv = shlex.split(cmd)
        argv[0] = topoml
        # inputs are the tree's files, outputs go to out
        argv = [os.path.join(source, x) if x.startswith("docs/") else x for x in argv]
        r = subprocess.run(argv, cwd=out, capture_output=True, text=True)
        if r.returncode != 0:
            return "%s: exit %d: %s" % (cmd, r.returncode, r.stderr.strip())
    missing = [p for p in PICTURES if not os.path.isfile(os.path.join(out, p))]
    return "not made: %s" % ", ".join(missing) if missing else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", required=True, help="a build tree with tools/topoml")
    ap.add_argument("--source", default=SOURCE, help="the source tree (default: this script's)")
    ap.add_argument("--check", action="store_true",
                    help="compare with the committed pictures instead of writing them")
    a = ap.parse_args()
    source = os.path.abspath(a.source)
    topoml = os.path.join(os.path.abspath(a.build), "tools", "topoml")
    images = os.path.join(source, "docs", "images")
    with tempfile.TemporaryDirectory() as tmp:
        err = make(source, topoml, tmp)
        if err:
            print("make_pictures: %s" % err, file=sys.stderr)
            return 1
        if a.check:
            stale = [p for p in PICTURES if not os.path.isfile(os.path.join(images, p)) or
                     not filecmp.cmp(os.path.join(tmp, p), os.path.join(images, p), shallow=False)]
            for p in stale:
                print("make_pictures: docs/images/%s is not what the commands make now: run "
                      "%s --build BUILD" % (p, os.path.relpath(os.path.abspath(__file__), source)),
                      file=sys.stderr)
            return 1 if stale else 0
        os.makedirs(images, exist_ok=True)
        for p in PICTURES:
            with open(os.path.join(tmp, p), "rb") as f, open(os.path.join(images, p), "wb") as g:
                g.write(f.read())
            print("make_pictures: docs/images/%s" % p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
