#!/usr/bin/env python3
"""What run-time verification's envelope costs a topoml command.

The core re-runs on the reference every plugin call larger than any of its
kind that plugin has been checked on (docs/conformance.md, "The envelope"):
the first call of a new largest size on a machine pays the reference's time
as well, the later ones do not. This times, per case, `topoml barcode
--backend threads` twice in a fresh certificate cache that already holds
the threads plugin's certificate (so that certification is not timed): the
first call (past the envelope: re-run) and the same call again (within it).
Each repetition starts from a fresh cache; wall seconds, medians.

Prints a table and writes a bench/results artifact (bench/artifact.py;
--json FILE, or - for stdout). Standard library only.

  bench/bench_envelope.py --topoml build/tools/topoml --data ../shared/data/ripser-examples \\
      [--repeat 3] [--only CASE] [--json out.json]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import artifact  # noqa: E402  (the one writer of bench/results/ files)

# name: (file, arguments), the benchmark set's settings (bench_rips.py)
CASES = {
    "projective_plane": ("projective_plane.lower_distance_matrix", ["--dim", "2"]),
    "random16": ("random16.lower_distance_matrix", ["--dim", "7"]),
    "o3_1024": ("o3_1024.txt", ["--format", "point-cloud", "--dim", "3", "--threshold", "1.8"]),
    "o3_2048": ("o3_2048.txt", ["--format", "point-cloud", "--dim", "2", "--threshold", "1.6"]),
    "sphere_3_192": ("sphere_3_192.lower_distance_matrix", ["--dim", "2"]),
}


def run(cmd, env):
    t0 = time.perf_counter()
    r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    t = time.perf_counter() - t0
    if r.returncode != 0:
        sys.exit("failed (%d): %s\n%s" % (r.returncode, " ".join(cmd), r.stderr[-2000:]))
    return t, r.stderr


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--topoml", required=True, help="the topoml CLI")
    ap.add_argument("--data", required=True, help="Ripser's examples folder")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", action="append", help="a case (repeatable)")
    ap.add_argument("--json", help="write the figures here (- for stdout)")
    a = ap.parse_args()
    cli = os.path.abspath(a.topoml)
    if not (os.path.isfile(cli) and os.access(cli, os.X_OK)):
        ap.error("--topoml: not an executable: %s" % a.topoml)
    names = a.only or list(CASES)
    for n in names:
        if n not in CASES:
            ap.error("no such case: %s (cases: %s)" % (n, ", ".join(CASES)))
    if a.repeat < 1:
        ap.error("--repeat must be at least 1")

    tmp = tempfile.mkdtemp(prefix="topoml-bench-envelope-")
    try:
        env = dict(os.environ, XDG_CACHE_HOME=os.path.join(tmp, "seed"))
        env.pop("TOPOML_CONFIG", None)
        tiny = os.path.join(a.data, CASES["projective_plane"][0])
        # Certify the threads plugin once; each repetition copies that cache
        # without the records of checked sizes.
        run([cli, "barcode", "--backend", "threads", "--dim", "1", tiny], env)
        seed = os.path.join(tmp, "seed", "topoml")
        first, again = {n: [] for n in names}, {n: [] for n in names}
        for k in range(a.repeat):
            for n in names:
                cache = os.path.join(tmp, "c%d-%s" % (k, n))
                shutil.copytree(seed, os.path.join(cache, "topoml"),
                                ignore=shutil.ignore_patterns("*.verified"))
                e = dict(env, XDG_CACHE_HOME=cache)
                f, args = CASES[n]
                cmd = [cli, "barcode", "--backend", "threads"] + args + [os.path.join(a.data, f)]
                t1, _ = run(cmd, e)
                t2, _ = run(cmd, e)
                first[n].append(t1)
                again[n].append(t2)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    print("%-18s %12s %12s %8s" % ("case", "first s", "again s", "ratio"))
    cases = []
    for n in names:
        m1, m2 = statistics.median(first[n]), statistics.median(again[n])
        print("%-18s %12.4f %12.4f %8.2f" % (n, m1, m2, m1 / m2 if m2 else float("nan")))
        cases.append(artifact.case(n, "first call (past the envelope: re-run)", first[n]))
        cases.append(artifact.case(n, "same call again (within it)", again[n]))
    if a.json:
        version = subprocess.run([cli, "--version"], capture_output=True,
                                 text=True).stdout.strip() or "unknown"
        artifact.save(a.json, {
            "title": "topoml barcode --backend threads: the first call past the verification "
                     "envelope, and the same call again",
            "machine": artifact.machine(),
            "versions": {"topoml": version},
            "commands": [" ".join([os.path.relpath(__file__)] + sys.argv[1:])],
            "statistic": "median of %d fresh caches, wall seconds" % a.repeat,
            "cases": cases,
        })


if __name__ == "__main__":
    main()
