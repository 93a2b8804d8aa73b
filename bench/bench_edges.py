#!/usr/bin/env python3
"""The Rips engine's edge stage on point clouds, before and after a change.

The edge stage is the engine's set-up of a point cloud: every pair's
distance, the enclosing radius and the pairs under the threshold (the
neighbour lists), or the distance matrix without a threshold; then comes
the sort of the edges, then H0 (and H1). bench/edge_stage.c times it
from the progress callback's stage changes; this script compiles that file
against the engine of two source trees — BASE (a commit, taken out with git
archive) and this checkout — with the same flags, runs both on the same
seeded Gaussian clouds, alternating, and writes the medians as a table and
as a JSON artifact (bench/artifact.py's schema). A case's "times" are
the CPU seconds (user + sys, every thread of the process) of the set-up:
on a shared machine CPU time means something where wall time does not. The
sort's and the whole call's CPU seconds, and the wall times, are kept too.

Cases: n = 1024 and 4096 points in R^3, R^16, R^64, float32 and float64,
under the threshold that keeps about 8 n edges (what topoml's activation
signatures compute per layer; --dim 1) and with none (--dim 0, the distance
matrix: the path that must not get slower); the engine alone (one thread)
and lent a pool of 2 threads as topoml-backend-threads lends it (float32).
Both builds must give the same barcode, bit for bit (the run stops if not).

Usage:
  bench/bench_edges.py [--base COMMIT [--base-tree DIR]] [--threads 1,2]
                             [--rounds 3] [--json FILE]
  bench/bench_edges.py --markdown FILE   (the table of a result file)
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, ".."))
sys.path.insert(0, HERE)
import artifact  # noqa: E402

CFLAGS = ["-O2", "-g", "-std=c11", "-ffp-contract=off", "-D_GNU_SOURCE"]
SIZES = (1024, 4096)
DIMS = (3, 16, 64)
EDGES_PER_POINT = 8


def build(tree, out):
    """edge_stage.c of this checkout against the engine of `tree`."""
    defs = []
    with open(os.path.join(tree, "plugins", "scalar", "rips.h"), encoding="utf-8") as f:
        if "scalar_rips_pooled_distances" in f.read():
            defs = ["-DTOPOML_HAVE_POOLED_DISTANCES"]
    cmd = ["gcc"] + CFLAGS + defs + [
        "-I" + os.path.join(tree, "plugin-api", "include"),
        "-I" + os.path.join(tree, "plugins", "scalar"),
        "-I" + os.path.join(tree, "plugins", "threads"),
        os.path.join(HERE, "edge_stage.c"), os.path.join(tree, "plugins", "threads", "pool.c"),
        os.path.join(tree, "plugins", "scalar", "rips.c"), "-lm", "-lpthread", "-o", out]
    subprocess.run(cmd, check=True)
    return " ".join(os.path.relpath(c, ROOT) if c.startswith(ROOT) else c for c in cmd)


def base_tree(commit, tmp):
    tree = os.path.join(tmp, "base")
    os.makedirs(tree)
    arch = subprocess.run(["git", "-C", ROOT, "archive", commit, "plugin-api", "plugins/scalar",
                           "plugins/threads"], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", tree], input=arch, check=True)
    return tree


def git_short(rev):
    try:
        return subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", rev],
                              capture_output=True, text=True).stdout.strip() or rev
    except OSError:
        return rev


def med(runs, key):
    return statistics.median(r[key] for r in runs)


def table(cases):
    rows = {}
    for c in cases:
        rows.setdefault((c["name"], c["threads"]), {})[c["build"]] = c
    print("| case | threads | edges | set-up CPU before | after | x | whole call CPU before "
          "| after | x |")
    print("|---|---|---|---|---|---|---|---|---|")
    for (name, threads), b in rows.items():
        if "before" not in b or "after" not in b:
            continue
        x, y = b["before"], b["after"]
        print("| %s | %d | %d | %.2f ms | %.2f ms | %.1f | %.2f ms | %.2f ms | %.1f |" % (
            name, threads, y["edges"], 1e3 * x["median"], 1e3 * y["median"],
            x["median"] / y["median"] if y["median"] else float("inf"),
            1e3 * x["whole_cpu_median"], 1e3 * y["whole_cpu_median"],
            x["whole_cpu_median"] / y["whole_cpu_median"] if y["whole_cpu_median"]
            else float("inf")))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", default="1c03990",
                    help="the commit whose engine is 'before' (default: the one this "
                    "work started from)")
    ap.add_argument("--base-tree", help="a folder holding BASE's plugin-api, plugins/scalar and "
                    "plugins/threads (where this checkout has no git history, e.g. a copy on "
                    "another machine); --base then only names it")
    ap.add_argument("--head", help="what to call this checkout (default: git's HEAD)")
    ap.add_argument("--threads", default="1,2",
                    help="thread counts for the float32 cases (float64: the first)")
    ap.add_argument("--rounds", type=int, default=3,
                    help="alternating rounds (before, after) per case")
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    ap.add_argument("--dims", default=",".join(map(str, DIMS)))
    ap.add_argument("--json", help="where the results go (default: bench/results/"
                    "edges-cpu-2core.json)")
    ap.add_argument("--markdown", help="print the Markdown table of this result file and exit")
    a = ap.parse_args()
    if a.markdown:
        with open(a.markdown, encoding="utf-8") as f:
            table(json.load(f)["cases"])
        return 0
    tmp = tempfile.mkdtemp(prefix="bench_edges_")
    bins = {"before": os.path.join(tmp, "edge_stage_before"),
            "after": os.path.join(tmp, "edge_stage_after")}
    tree = os.path.abspath(a.base_tree) if a.base_tree else base_tree(a.base, tmp)
    commands = [" ".join([os.path.relpath(__file__, ROOT)] + sys.argv[1:]),
                build(tree, bins["before"]), build(ROOT, bins["after"])]
    head = a.head or git_short("HEAD")
    base = git_short(a.base) if not a.base_tree else a.base
    configs = []
    for n in map(int, a.sizes.split(",")):
        for d in map(int, a.dims.split(",")):
            for per_point in (EDGES_PER_POINT, 0):
                for dtype in ("f32", "f64"):
                    counts = [int(t) for t in a.threads.split(",")]
                    for threads in (counts if dtype == "f32" else counts[:1]):
                        configs.append((n, d, per_point, dtype, threads))
    out = []
    for n, d, per_point, dtype, threads in configs:
        max_dim = 1 if per_point else 0
        name = "n=%d d=%d %s %s" % (n, d, dtype,
                                    "%d n edges, dim 1" % per_point if per_point
                                    else "no threshold, dim 0")
        runs = {"before": [], "after": []}
        for rnd in range(a.rounds):
            for which in ("before", "after"):
                cmd = [bins[which], str(n), str(d), dtype, str(per_point), str(max_dim),
                       str(threads), "1", "1"]
                if rnd == 0 and which == "after":
                    commands.append(" ".join(["edge_stage"] + cmd[1:]))
                r = json.loads(subprocess.run(cmd, check=True, capture_output=True,
                                              text=True).stdout)
                runs[which].append(dict(r["runs"][0], threshold=r["threshold"]))
        digests = {r["barcode_fnv"] for w in runs for r in runs[w]}
        if len(digests) != 1:
            sys.exit("%s: the builds gave different barcodes (%s)" % (name, sorted(digests)))
        for which in ("before", "after"):
            rs = runs[which]
            out.append(artifact.case(
                name, "topoml engine %s (%s)" % (which, base if which == "before" else head),
                [r["setup_cpu"] for r in rs], threads=threads, build=which,
                median=med(rs, "setup_cpu"),
                setup_wall_times=[r["setup_wall"] for r in rs],
                sort_cpu_times=[r["sort_cpu"] for r in rs],
                whole_cpu_times=[r["total_cpu"] for r in rs],
                whole_cpu_median=med(rs, "total_cpu"),
                whole_wall_times=[r["total_wall"] for r in rs],
                n=n, dim=d, dtype=dtype, max_dim=max_dim, threshold=rs[0]["threshold"],
                edges=rs[0]["edges"], intervals=rs[0]["intervals"],
                barcode_fnv=rs[0]["barcode_fnv"]))
            print("%s, %d thread(s), %s: set-up %.2f ms CPU, whole %.2f ms CPU" % (
                name, threads, which, 1e3 * med(rs, "setup_cpu"), 1e3 * med(rs, "total_cpu")),
                file=sys.stderr)
    run = {
        "title": "The Rips engine's edge stage on point clouds, before and after",
        "machine": artifact.machine(),
        "versions": {"topoml before": base, "topoml after": head},
        "commands": commands,
        "statistic": "median of the set-up's CPU seconds (user + sys, all threads of the "
                     "process), alternating rounds; whole_cpu_median: the whole call's",
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "cases": out,
    }
    path = a.json or os.path.join(ROOT, "bench", "results", "edges-cpu-2core.json")
    artifact.save(path, run)
    table(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
