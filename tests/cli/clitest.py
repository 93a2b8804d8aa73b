"""Helpers shared by the CLI integration tests: argument parsing, running
the real `topoml` and `ripser` binaries, parsing Ripser's text output and
comparing persistence diagrams as multisets."""
import argparse
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile

REL_TOL = 1e-5  # Ripser prints 6 significant digits


def args():
    p = argparse.ArgumentParser()
    p.add_argument("--topoml", required=True)
    p.add_argument("--data", required=True, help="Ripser's examples folder")
    p.add_argument("--test-data", default="")
    p.add_argument("--build", default="")
    return p.parse_args()


def run(cmd, check=True, stdin=None, timeout=600):
    r = subprocess.run(cmd, capture_output=True, text=True, input=stdin, timeout=timeout,
                       errors="replace")
    if check and r.returncode != 0:
        raise SystemExit("FAILED (%d): %s\n%s" % (r.returncode, " ".join(cmd), r.stderr))
    return r


def parse_ripser(text):
    """{dim: [(birth, death)]} and the header lines of Ripser's output."""
    bars, header, dim = {}, [], None
    for line in text.splitlines():
        if line.startswith("persistence intervals in dim "):
            dim = int(line.split()[-1].rstrip(":"))
            bars[dim] = []
        elif dim is not None and line.startswith(" ["):
            b, d = line.strip()[1:-1].split(",")
            bars[dim].append((float(b), math.inf if d.strip() == "" else float(d)))
        elif dim is None:
            header.append(line)
    return bars, header


def close(a, b, tol=REL_TOL):
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= tol * max(1.0, abs(a), abs(b))


def same_diagram(a, b, tol=REL_TOL):
    """Multisets of intervals equal up to a relative tolerance: sort both and
    compare pairwise (a tolerance-aware greedy match after sorting)."""
    if len(a) != len(b):
        return False
    left = sorted(a)
    right = sorted(b)
    unmatched = []
    for x, y in zip(left, right):
        if not (close(x[0], y[0], tol) and close(x[1], y[1], tol)):
            unmatched.append((x, y))
    if not unmatched:
        return True
    # Near-ties can sort differently: fall back to matching each bar.
    pool = list(right)
    for x in left:
        for k, y in enumerate(pool):
            if close(x[0], y[0], tol) and close(x[1], y[1], tol):
                del pool[k]
                break
        else:
            return False
    return True


def ripser_bin(name="ripser"):
    path = shutil.which(name)
    if not path:
        raise SystemExit("FAILED: %s not found (install Debian's ripser package)" % name)
    return path


def random_cloud(rng, n, dim, kind="uniform"):
    pts = []
    for k in range(n):
        if kind == "circle":
            t = 2 * math.pi * rng.random()
            pts.append([math.cos(t) + rng.gauss(0, 0.05), math.sin(t) + rng.gauss(0, 0.05)])
        elif kind == "grid":
            side = max(2, int(round(n ** (1.0 / dim))))
            pts.append([float((k // side ** c) % side) for c in range(dim)])
        else:
            pts.append([rng.uniform(-1, 1) for _ in range(dim)])
    return pts


def write_cloud(pts, sep=","):
    f = tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False)
    for p in pts:
        f.write(sep.join("%.9g" % v for v in p) + "\n")
    f.close()
    return f.name


class Report:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, ok, what):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
            print("FAIL:", what)

    def finish(self):
        print("%d passed, %d failed" % (self.passed, self.failed))
        sys.exit(1 if self.failed else 0)
