#!/usr/bin/env python3
"""The mutation campaign of the gate: how many wrong plugins reach the user.

Makes mutants of a real backend's source — the scalar reference's Rips, H0,
edges and distance code (plugins/scalar/rips.c, scalar.c, metric.h), each
built as a third-party plugin under another name ("mutant-NNN") — with the
faults an ordinary bug has: a comparison operator turned, a bound off by
one, a constant changed, a condition dropped, a tie broken the other way, a
double made a float. Each mutant that compiles is

  1. certified (`topoml-conformance --certify --tier quick`, the tier the
     gate runs on first use): a FAIL, CRASH or TIMEOUT rejects it;
  2. if certified, given a seeded workload it never saw (the inputs are
     drawn here from --seed, not by the suite): calls through the C API
     (bench/gate/mutant_driver.c, the backend named, every answer compared
     exactly with the built-in reference's) and through the CLI (`topoml
     barcode/edges --backend mutant-NNN`, stdout compared with `--backend
     scalar`'s).

Per mutant: rejected at certification / caught at run time (the reference's
answer given, a warning logged) / wrong answers that reached the caller
(status 0 and not the reference's answer) / survived (right on every call:
an equivalent mutant, or one the workload does not reach). For a mutant
whose wrong answers got through, the calls are run again under `verify:
always` (a full re-run of every call), which names the check that would
have caught them and its cost. Writes a table (stdout) and JSON (--json).

Not a test (tests/cli/test_mutants_smoke.py runs it on 2 mutants): an
artifact, bench/results/gate/gate-mutants.json.

  bench/gate/mutants.py --build build --count 110 --json bench/results/gate/gate-mutants.json
"""
import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

SRC = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(SRC, "bench"))

# ---- mutation operators: (kind, pattern, replacement) on one line ----
OPERATORS = [
    ("comparison", r"(?<![<>=!-])<=(?!=)", "<"),
    ("comparison", r"(?<![<>=!-])<(?![<=])", "<="),
    ("comparison", r"(?<![<>=!-])>=(?!=)", ">"),
    ("comparison", r"(?<![<>=!-])>(?![>=])", ">="),
    ("comparison", r"==", "!="),
    ("comparison", r"!=", "=="),
    ("off-by-one", r"\+ 1\b", "+ 2"),
    ("off-by-one", r"\- 1\b", "- 2"),
    ("off-by-one", r"\+ 1\b", ""),
    ("off-by-one", r"(?<=\w) - 1\b", ""),
    ("constant", r"\b0\.5\b", "0.25"),
    ("constant", r"\b2\b(?![.\w])", "3"),
    ("constant", r"(?<![\w.])1(?![\w.])", "0"),
    ("dropped-condition", r"\bif \((.+)\)\s*$", "if (0)"),
    ("dropped-condition", r"\bif \((.+)\)\s*$", "if (1)"),
    ("dropped-condition", r"&& [^&|()]+?(?=\)|&&|\|\|)", ""),
    ("dropped-condition", r"\|\| [^&|()]+?(?=\)|&&|\|\|)", ""),
    ("tie-break", r"\? -1 : 1", "? 1 : -1"),
    ("tie-break", r"return ([a-z_]+) < ([a-z_]+) \? -1 : ([a-z_]+) > ([a-z_]+);",
     r"return \1 > \2 ? -1 : \3 < \4;"),
    ("float-vs-double", r"\bdouble (?=[a-z_]+ =)", "float "),
    ("float-vs-double", r"\(double\)", "(float)"),
]

# A mutant whose calls failed (a non-zero status: no answer, right or wrong,
# reached the caller) and none was caught or wrong.
ERROR_OUTCOME = "failed at run time (an error, no answer)"

# Where mutants are made: the ops' code, not the file's comments or the
# plugin's plumbing.
FILES = ["plugins/scalar/rips.c", "plugins/scalar/scalar.c", "plugins/scalar/metric.h"]


def code_lines(text):
    """Indices of lines that are code: not comments, not preprocessor, not
    string-only; the scalar plugin's plumbing (error messages, logging) is
    left alone."""
    out, in_comment = [], False
    for k, line in enumerate(text.split("\n")):
        s = line.strip()
        if in_comment:
            if "*/" in s:
                in_comment = False
            continue
        if s.startswith("/*"):
            in_comment = "*/" not in s
            continue
        if not s or s.startswith("//") or s.startswith("#") or s.startswith("*"):
            continue
        if '"' in s or "scalar_fail" in s or "progress" in s or "alloc" in s or "free(" in s:
            continue
        out.append(k)
    return out


def candidates(rng):
    """Every (file, line, operator, match) site, shuffled with the seed."""
    sites = []
    for f in FILES:
        text = open(os.path.join(SRC, f)).read()
        lines = text.split("\n")
        for k in code_lines(text):
            for op_index, (kind, pat, _rep) in enumerate(OPERATORS):
                for m in re.finditer(pat, lines[k]):
                    sites.append((f, k, op_index, m.start()))
    rng.shuffle(sites)
    return sites


def mutate(f, k, op_index, start):
    text = open(os.path.join(SRC, f)).read()
    lines = text.split("\n")
    kind, pat, rep = OPERATORS[op_index]
    line = lines[k]
    m = re.compile(pat).search(line, start)
    if not m or m.start() != start:
        return None
    new = line[:m.start()] + m.expand(rep) + line[m.end():]
    if new == line:
        return None
    lines[k] = new
    return "\n".join(lines), kind, line.strip(), new.strip()


ENTRY = r"""
#include "scalar.h"
static topoml_backend_v1 vt;
TOPOML_PLUGIN_EXPORT int topoml_backend_negotiate(uint32_t *abi_version,
    const topoml_host_v1 *host, const topoml_backend_v1 **backend)
{
    (void)host;
    if (!abi_version || !backend || *abi_version < 1)
        return TOPOML_E_ABI;
    vt = *topoml_scalar_backend();
    vt.name = MUTANT_NAME;
    vt.version = "0.0.1";
    vt.vendor = "topoml mutation campaign";
    vt.description = "the scalar reference with one mutation";
    *abi_version = 1;
    *backend = &vt;
    return TOPOML_OK;
}
"""

CFLAGS = ["-O0", "-fPIC", "-ffp-contract=off", "-fvisibility=hidden", "-w",
          "-DTOPOML_SCALAR_HAVE_RIPS=1", "-DTOPOML_SCALAR_HAVE_IMAGE=1"]


class Builder:
    """Builds mutants: the untouched files' objects once, the mutated file
    (with metric.h: both files that include it) per mutant."""

    def __init__(self, work):
        self.work = work
        self.src = os.path.join(work, "src")
        shutil.copytree(os.path.join(SRC, "plugins", "scalar"), self.src)
        self.inc = ["-I" + os.path.join(SRC, "plugin-api", "include"), "-I" + self.src]
        self.objs = {}
        for c in ("rips.c", "scalar.c", "image.c"):
            self.objs[c] = self.compile(os.path.join(self.src, c), os.path.join(work, c + ".o"))
        with open(os.path.join(work, "entry.c"), "w") as e:
            e.write(ENTRY)

    def compile(self, path, out, extra=()):
        r = subprocess.run(["gcc"] + CFLAGS + list(extra) + self.inc + ["-c", path, "-o", out],
                           capture_output=True, text=True)
        return out if r.returncode == 0 else None

    def build(self, name, f, text, folder):
        os.makedirs(folder)
        mdir = os.path.join(folder, "src")
        os.makedirs(mdir)
        base = os.path.basename(f)
        with open(os.path.join(mdir, base), "w") as o:
            o.write(text)
        # the mutated file first on the include path: metric.h mutants reach
        # both files that include it
        inc = ["-I" + mdir]
        objs = []
        for c in ("rips.c", "scalar.c", "image.c"):
            if base == c or (base == "metric.h" and c != "image.c"):
                src = os.path.join(mdir, c) if base == c else os.path.join(self.src, c)
                o = self.compile(src, os.path.join(folder, c + ".o"), inc)
                if not o:
                    return None
                objs.append(o)
            else:
                objs.append(self.objs[c])
        entry = self.compile(os.path.join(self.work, "entry.c"), os.path.join(folder, "entry.o"),
                             ['-DMUTANT_NAME="%s"' % name])
        if not entry:
            return None
        so = os.path.join(folder, "topoml-backend-%s.so" % name)
        r = subprocess.run(["gcc", "-shared", "-o", so, entry] + objs + ["-lm"],
                           capture_output=True, text=True)
        for o in objs + [entry]:
            if o.startswith(folder):
                os.remove(o)
        return so if r.returncode == 0 else None


# ---- the workload: drawn from --seed, never seen by a mutant ----

def workload(rng, folder, scale):
    """Inputs (point clouds written as CSV) and calls: sizes 10..3000,
    dimensions 0..3, moduli 2/3/5, thresholds, ties (integer grids whose
    lengths tie at the threshold) and duplicate points."""
    os.makedirs(folder, exist_ok=True)
    files = {}

    def cloud(name, pts):
        p = os.path.join(folder, name + ".csv")
        with open(p, "w") as f:
            for q in pts:
                f.write(",".join(repr(float(x)) for x in q) + "\n")
        files[name] = p
        return p

    def uniform(n, d):
        return [[rng.random() for _ in range(d)] for _ in range(n)]

    calls = []
    # Rips, up to dimension 3, small and medium clouds, cut and uncut
    for k, (n, d, dims, thr) in enumerate(
            [(10, 2, 1, "inf"), (14, 3, 3, "inf"), (21, 3, 3, "inf"), (28, 4, 3, "1.0"),
             (35, 3, 2, "inf"), (42, 2, 2, "inf"), (49, 3, 2, "0.6"), (63, 3, 2, "0.5"),
             (70, 2, 1, "inf"), (84, 3, 2, "0.45"), (100, 3, 1, "inf"), (140, 3, 2, "0.35"),
             (150, 2, 1, "0.3"), (203, 3, 1, "0.3"), (280, 3, 1, "0.25"), (301, 2, 1, "0.15"),
             (500, 3, 1, "0.15"), (700, 2, 1, "0.06")]):
        n = max(10, int(n * scale)) if n > 100 else n
        p = cloud("u%d_%d" % (n, d), uniform(n, d))
        # moduli 2, 3, 5 in turn; the smaller clouds with two of them
        for modulus in ((2, 3, 5)[k % 3],) + (((3, 5, 2)[k % 3],) if n <= 84 else ()):
            calls.append(("rips", p, thr, dims, modulus))
    # H0 and edges, up to 3000 points
    for n, d, thr in [(1000, 2, "0.05"), (2000, 3, "0.08"), (3000, 2, "0.02")]:
        n = max(10, int(n * scale))
        p = cloud("h%d_%d" % (n, d), uniform(n, d))
        calls.append(("rips", p, thr, 0, 2))
        calls.append(("edges", p, thr, 0, 2))
    # ties: integer grids, the threshold on tied lengths
    for side, d in [(5, 2), (4, 3), (7, 2)]:
        pts = []
        for k in range(side ** d):
            pts.append([(k // side ** a) % side for a in range(d)])
        p = cloud("grid%d_%d" % (side, d), pts)
        for thr in ("1", "1.4142135623730951", "2"):
            calls.append(("rips", p, thr, 1 if d == 3 else 2, 2))
            if thr != "2":
                calls.append(("edges", p, thr, 0, 2))
    # duplicate points, duplicated distances
    base = uniform(30, 3)
    p = cloud("dup90", base * 3)
    for thr, dims in (("0", 1), ("0.3", 2), ("inf", 1)):
        calls.append(("rips", p, thr, dims, 3))
    calls.append(("edges", p, "0", 0, 2))
    return calls


def run(cmd, env=None, timeout=600):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout,
                              errors="replace")
    except subprocess.TimeoutExpired:
        return None


def cli_cmd(call):
    op, path, thr, dims, modulus = call
    if op == "edges":
        return ["edges", "--format", "point-cloud", "--threshold", thr, path]
    c = ["barcode", "--format", "point-cloud", "--dim", str(dims), "--modulus", str(modulus)]
    if thr != "inf":
        c += ["--threshold", thr]
    return c + [path]


def summarize(results):
    summary, by_kind = {}, {}
    for rec in results:
        summary[rec["outcome"]] = summary.get(rec["outcome"], 0) + 1
        k = by_kind.setdefault(rec["kind"], {})
        k[rec["outcome"]] = k.get(rec["outcome"], 0) + 1
    wrong = sum(rec.get("api", {}).get("wrong", 0) + rec.get("cli", {}).get("wrong_stdout", 0)
                for rec in results)
    return summary, by_kind, wrong


def table(results, n_calls, n_cli):
    summary, by_kind, wrong_answers = summarize(results)
    print()
    print("| kind | mutants | rejected at certification | caught at run time | failed at run "
          "time | wrong answers reached the caller | survived |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for kind, k in sorted(by_kind.items()) + [("all", summary)]:
        print("| %s | %d | %d | %d | %d | %d | %d |" % (
            kind, sum(k.values()), k.get("rejected at certification", 0),
            k.get("caught at run time", 0), k.get(ERROR_OUTCOME, 0),
            k.get("wrong answers reached the caller", 0),
            k.get("survived (right on every call)", 0)))
    print("\nwrong answers that reached the caller: %d (calls per certified mutant: %d C API "
          "+ %d CLI)" % (wrong_answers, n_calls, n_cli))
    caught = [r for r in results if r["outcome"] == "caught at run time"]
    if caught:
        print("\ncaught at run time, by the check that caught the first call:")
        for r in caught:
            print("  %s %s:%d %s -> %s: %s" % (r["name"], r["file"], r["line"], r["before"][:50],
                                               r["after"][:50], r.get("first_catch", "")[:150]))


def write_json(a, results, calls, cli_pick, work, tried, t_start):
    try:
        import artifact
        machine, tree = artifact.machine(), artifact.source_tree()
    except Exception as e:  # noqa: BLE001 - the record, not the run, is optional
        machine, tree = {"error": str(e)}, {}
    summary, by_kind, wrong = summarize(results)
    out = {"schema": "topoml-gate-mutants-1", "command": " ".join(sys.argv),
           "seed": a.seed, "count": a.count, "scale": a.scale, "shard": a.shard,
           "workload": {"calls": len(calls), "cli_calls": len(cli_pick),
                        "list": [" ".join(map(str, c)).replace(work, "") for c in calls]},
           "machine": machine, "source": tree,
           "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "seconds": round(time.time() - t_start, 1), "sites_tried": tried,
           "summary": summary, "wrong_answers_reached_caller": wrong,
           "by_kind": by_kind, "mutants": results}
    tmp = a.json + ".tmp"
    with open(tmp, "w") as f:
        json.dump(out, f, indent=1)
    os.replace(tmp, a.json)


def merge(a):
    parts = [json.load(open(p)) for p in a.merge]
    results = sorted((m for p in parts for m in p["mutants"]), key=lambda m: m["name"])
    for m in results:  # runs made before "failed at run time" was its own outcome
        if m["outcome"] == "caught at run time" and not m.get("api", {}).get("caught"):
            m["outcome"] = ERROR_OUTCOME
    out = dict(parts[0])
    out["shards"] = [{"command": p["command"], "seconds": p["seconds"], "date": p["date"],
                      "mutants": len(p["mutants"])} for p in parts]
    out["mutants"] = results
    out["sites_tried"] = sum(p["sites_tried"] for p in parts)
    out["seconds"] = max(p["seconds"] for p in parts)
    out["summary"], out["by_kind"], out["wrong_answers_reached_caller"] = summarize(results)
    out.pop("shard", None)
    out["command"] = " ".join(sys.argv)
    table(results, out["workload"]["calls"], out["workload"]["cli_calls"])
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)


def sanitizer_flags(build):
    """The sanitizer flags the build was made with (its CMakeCache.txt), so
    that the driver links against a sanitized libtopoml: an unsanitized
    program cannot load it."""
    want = ""
    try:
        with open(os.path.join(build, "CMakeCache.txt")) as f:
            for line in f:
                if line.startswith("TOPOML_SANITIZE:"):
                    want = line.split("=", 1)[1].strip()
    except OSError:
        pass
    return {"address": ["-fsanitize=address,undefined"],
            "thread": ["-fsanitize=thread"]}.get(want, [])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--count", type=int, default=110, help="mutants that compile (default 110)")
    ap.add_argument("--seed", type=int, default=2026, help="mutation sites and workload")
    ap.add_argument("--cli-calls", type=int, default=8,
                    help="calls of the workload also run through the CLI (default 8)")
    ap.add_argument("--scale", type=float, default=1.0, help="size factor of the larger inputs")
    ap.add_argument("--json", help="write the results here (after every mutant, and at the end)")
    ap.add_argument("--shard", default="0/1",
                    help="I/N: make the mutants of every N-th site from the I-th (to run N "
                         "processes side by side; --merge joins their JSON)")
    ap.add_argument("--merge", nargs="+", metavar="JSON",
                    help="join the JSON of shards into --json, print the table, and stop")
    ap.add_argument("--keep", action="store_true", help="keep the work folder")
    a = ap.parse_args()
    if a.merge:
        return merge(a)
    shard, shards = (int(x) for x in a.shard.split("/"))
    build = os.path.abspath(a.build)
    topoml = os.path.join(build, "tools", "topoml")
    conformance = os.path.join(build, "tools", "topoml-conformance")
    libdir = os.path.join(build, "core")
    work = tempfile.mkdtemp(prefix="topoml-mutants-")
    t_start = time.time()
    rng = random.Random(a.seed)
    driver = os.path.join(work, "mutant_driver")
    r = subprocess.run(["gcc", "-O1"] + sanitizer_flags(build) +
                       ["-I" + os.path.join(SRC, "core", "include"),
                        "-I" + os.path.join(build, "core", "include"),
                        "-I" + os.path.join(SRC, "plugin-api", "include"),
                        os.path.join(SRC, "bench", "gate", "mutant_driver.c"), "-o", driver,
                        "-L" + libdir, "-ltopoml", "-Wl,-rpath," + libdir, "-lm"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("mutant_driver: " + r.stderr)
    builder = Builder(work)
    calls = workload(random.Random(a.seed + 1), os.path.join(work, "inputs"), a.scale)
    calls_file = os.path.join(work, "calls.txt")
    with open(calls_file, "w") as f:
        for c in calls:
            f.write("%s %s %s %d %d\n" % c)
    cli_pick = random.Random(a.seed + 2).sample(range(len(calls)), min(a.cli_calls, len(calls)))
    empty = os.path.join(work, "no-plugins")
    os.makedirs(empty)
    base_env = dict(os.environ)
    base_env.pop("TOPOML_CONFIG", None)
    base_env["TOPOML_PLUGIN_PATH"] = empty
    base_env["XDG_CACHE_HOME"] = os.path.join(work, "ref-cache")
    want_cli = {}
    for k in cli_pick:
        rr = run([topoml] + cli_cmd(calls[k]) + ["--backend", "scalar"], base_env)
        want_cli[k] = rr.stdout if rr and rr.returncode == 0 else None

    results = []
    sites = candidates(rng)[shard::shards]
    tried = 0
    t_start_mutants = time.time()
    for site in sites:
        if len(results) >= a.count:
            break
        m = mutate(*site)
        if not m:
            continue
        text, kind, before, after = m
        tried += 1
        name = "mutant-%03d" % (len(results) * shards + shard)
        folder = os.path.join(work, name)
        t0 = time.time()
        so = builder.build(name, site[0], text, folder)
        if not so:
            shutil.rmtree(folder, ignore_errors=True)
            continue
        rec = {"name": name, "file": site[0], "line": site[1] + 1, "kind": kind,
               "before": before, "after": after}
        cache = os.path.join(folder, "cache")
        pristine = os.path.join(folder, "pristine")
        os.makedirs(cache, mode=0o700)
        env = dict(base_env, TOPOML_PLUGIN_PATH=folder)
        c = run([conformance, "--plugin", so, "--tier", "quick", "--certify", "--fail-fast",
                 "--timeout", "10", "--cache-dir", cache, "--quiet", "--json",
                 os.path.join(folder, "report.json")], env, timeout=300)
        rec["certify_seconds"] = round(time.time() - t0, 2)
        verdict = None
        try:
            with open(os.path.join(folder, "report.json")) as f:
                rep = json.load(f)
            p = rep["plugins"][0]
            verdict = p.get("verdict")
            bad = [x for x in p.get("cases", []) if x["result"] in ("FAIL", "CRASH", "TIMEOUT")]
            rec["certification"] = ("%s %s: %s" % (bad[0]["result"], bad[0]["name"],
                                                   bad[0]["detail"][:160])) if bad else verdict
        except (OSError, ValueError, KeyError, IndexError):
            rec["certification"] = "no report (%s)" % ("timeout" if c is None else
                                                       "exit %d" % c.returncode)
        if verdict != "pass":
            rec["outcome"] = "rejected at certification"
            results.append(rec)
            if a.json:
                write_json(a, results, calls, cli_pick, work, tried, t_start)
            print("%s %-18s %-26s %s" % (name, kind, rec["outcome"], rec["certification"][:70]),
                  flush=True)
            shutil.rmtree(folder, ignore_errors=True)
            continue
        shutil.copytree(cache, pristine)
        t1 = time.time()
        d = run([driver, name, folder, cache, pristine, calls_file], env, timeout=900)
        per = []
        for line in (d.stdout.splitlines() if d else []):
            parts = line.split(" ", 4)
            if len(parts) >= 4 and parts[0] == "call":
                per.append({"call": int(parts[1]), "verdict": parts[2], "seconds": float(parts[3]),
                            "detail": parts[4] if len(parts) > 4 else ""})
        rec["api_seconds"] = round(time.time() - t1, 2)
        rec["api_calls"] = len(per)
        counts = {v: sum(1 for x in per if x["verdict"] == v)
                  for v in ("right", "caught", "wrong", "error")}
        rec["api"] = counts
        rec["api_driver_failed"] = d is None or d.returncode != 0
        if rec["api_driver_failed"] and not per:
            # the driver ran no call at all: that is a broken campaign, not
            # a mutant that survived
            sys.exit("%s: mutant_driver ran no call (%s): %s" % (
                name, "timeout" if d is None else "exit %d" % d.returncode,
                (d.stderr if d else "")[-2000:]))
        caught = [x for x in per if x["verdict"] == "caught"]
        if caught:
            rec["first_catch"] = caught[0]["detail"][:300]
        wrong = [x for x in per if x["verdict"] == "wrong"]
        # the CLI: stdout against the reference's
        cli = {"right": 0, "wrong_stdout": 0, "error": 0}
        for k in cli_pick:
            if os.path.exists(pristine):
                shutil.rmtree(cache)
                shutil.copytree(pristine, cache)
            conf = os.path.join(folder, "cli.yaml")
            with open(conf, "w") as f:
                f.write("cache_dir: %s\n" % cache)
            rr = run([topoml] + cli_cmd(calls[k]) + ["--backend", name, "--config", conf], env)
            if rr is None or rr.returncode != 0:
                cli["error"] += 1
            elif want_cli.get(k) is not None and rr.stdout != want_cli[k]:
                cli["wrong_stdout"] += 1
                wrong.append({"call": k, "detail": "CLI stdout differs", "cli": True})
            else:
                cli["right"] += 1
        rec["cli"] = cli
        if wrong:
            rec["outcome"] = "wrong answers reached the caller"
            rec["wrong_calls"] = [{"call": x["call"], "what": " ".join(map(str, calls[x["call"]]))
                                   .replace(work, ""), "detail": x["detail"][:200]}
                                  for x in wrong[:5]]
            # which check would have caught them, at what cost: every call
            # re-run in full (verify: always)
            shutil.rmtree(cache)
            shutil.copytree(pristine, cache)
            sub = os.path.join(folder, "wrong-calls.txt")
            with open(sub, "w") as f:
                for x in wrong:
                    f.write("%s %s %s %d %d\n" % calls[x["call"]])
            al = run([driver, name, folder, cache, pristine, sub, "always"], env, timeout=900)
            got = [ln.split(" ", 4) for ln in (al.stdout.splitlines() if al else [])]
            rec["under_verify_always"] = {
                "caught": sum(1 for g in got if len(g) > 2 and g[2] == "caught"),
                "of": len(wrong),
                "seconds": round(sum(float(g[3]) for g in got if len(g) > 3), 3),
                "plugin_seconds": round(sum(x.get("seconds", 0) for x in wrong), 3)}
        elif caught:
            rec["outcome"] = "caught at run time"
        elif counts["error"] or cli["error"]:
            rec["outcome"] = ERROR_OUTCOME
        else:
            rec["outcome"] = "survived (right on every call)"
        results.append(rec)
        if a.json:
            write_json(a, results, calls, cli_pick, work, tried, t_start)
        print("%s %-18s %-26s api %s cli %s %s" % (
            name, kind, rec["outcome"], counts, cli,
            rec.get("first_catch", "")[:80]), flush=True)
        shutil.rmtree(folder, ignore_errors=True)

    table(results, len(calls), len(cli_pick))
    print("%d mutation sites tried, %d built; %.0f s" % (tried, len(results),
                                                          time.time() - t_start))
    if a.json:
        write_json(a, results, calls, cli_pick, work, tried, t_start)
    if not a.keep:
        shutil.rmtree(work, ignore_errors=True)
    else:
        print("work folder:", work)


if __name__ == "__main__":
    main()
