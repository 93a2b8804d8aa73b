"""The CPU benchmark scripts that make bench/results/ artifacts run and write
files the tables accept, on small settings (no figure is checked: these are
not timed tests). bench/timing.py takes the settings in turn with the
order reversed every other round, counts the CPU time of a command's own
children, and stops on an unexpected exit status or a timeout;
bench_conformance_tiers.py, bench_isolation.py and bench_input.py write
artifacts in the schema with every run's CPU and wall times and the load
average, and refuse a build tree without the plugins they time; bench_verify
writes one case per input and mode with every call's times and the command
line, and refuses bad usage; bench_probe.py takes every command, plugin
count and build in turn and keeps wall and CPU times, and with
--probe-cache the build a second time with the probe reports kept; bench_cpp_compat.py
keeps the medians of the two backends taken in turn, leaves out a backend
that ran past its timeout and writes nothing when every run did;
bench_setup_venv.py times the Python step read
out of tools/setup-debian.sh, first into an empty folder and then again on
it, and leaves no venv behind; bench_builds.py takes two builds in turn on
a case and keeps every run's CPU and wall times, and refuses a case or a
CLI that does not exist; bench_envelope.py times a first call and the same
call again and refuses a case that does not exist; bench_rips.py runs each
program --warmup times untimed before its timed runs (a wrapper of the CLI
counts the calls) and refuses a negative --warmup; process_timeline.py
stamps the lines of a CLI process in their order and the exit after them,
and refuses a --mark without NAME= and a command that fails."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import clitest

A = clitest.args()
SRC = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
BENCH = os.path.join(SRC, "bench")
sys.path.insert(0, BENCH)
import artifact as artifact_py  # noqa: E402
import make_tables  # noqa: E402
import timing  # noqa: E402

# The tree these scripts run from; None outside a git checkout.
TREE = artifact_py.source_tree()

failures = []


def check(what, ok, detail=""):
    if not ok:
        failures.append(what)
        print("FAIL: %s %s" % (what, str(detail)[-2000:]))


def script(name, *args):
    return subprocess.run([sys.executable, os.path.join(BENCH, name)] + list(args),
                          capture_output=True, text=True, timeout=600)


def artifact(path, what, commit=True):
    """The file, checked against the schema (and, for a script that writes
    through bench/artifact.py, for the source tree's commit); None (and
    a failure) otherwise."""
    try:
        d = make_tables.load(path)
    except make_tables.SchemaError as e:
        check("%s: the artifact follows the schema" % what, False, e)
        return None
    if commit:
        # the commit only: another test running beside this one may touch
        # the tree (test_make_tables checks 'dirty' on a tree of its own)
        git = d.get("git")
        check("%s: the source tree's commit is recorded" % what,
              git.get("commit") == TREE["commit"] and isinstance(git.get("dirty"), bool)
              if TREE and isinstance(git, dict) else git is None and TREE is None,
              (git, TREE))
    return d


def cpu_and_wall(d, what, runs):
    check("%s: load average at start and end" % what,
          len(d["machine"].get("load_average_start", [])) == 3 and
          len(d["machine"].get("load_average", [])) == 3, d["machine"])
    for c in d["cases"]:
        check("%s: %s / %s: %d CPU and wall times" % (what, c["name"], c["program"], runs),
              len(c["times"]) == runs and len(c.get("wall_times", [])) == runs, c)


# timing.alternate: A B, B A, A B ...; each setting's results kept.
order = []
runs = timing.alternate({k: (lambda k=k: (order.append(k) or 1.0, 2.0, k)) for k in "AB"}, 3)
check("settings in turn, the order reversed every other round", order == list("ABBAAB"), order)
check("each setting's times and last result",
      runs["A"]["wall"] == [1.0] * 3 and runs["B"]["cpu"] == [2.0] * 3 and
      runs["B"]["last"] == "B", runs)

# timing.run: the CPU of a grandchild that burns 0.2 s of CPU is counted.
burn = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.2: pass\n"
r = timing.run(["sh", "-c", '"$0" -c "$1"; true', sys.executable, burn])
check("a child's children count in the CPU time", r is not None and r[1] >= 0.15, r)
check("exit status 1 taken when asked for", timing.run(["false"], status=1) is not None)
try:
    timing.run(["false"])
    check("an unexpected exit status ends the script", False)
except SystemExit as e:
    check("an unexpected exit status ends the script", "FAILED (1)" in str(e), e)
check("a timeout answers None", timing.run(["sleep", "5"], timeout=0.2) is None)

tmp = tempfile.mkdtemp(prefix="topoml-test-bench-")
try:
    # topoml-conformance's quick tier on one plugin, twice.
    out = os.path.join(tmp, "conf.json")
    r = script("bench_conformance_tiers.py", "--build", A.build, "--plugins", "threads",
               "--tiers", "quick", "--repeat", "2", "--json", out)
    check("bench_conformance_tiers.py runs", r.returncode == 0, r.stdout + r.stderr)
    d = artifact(out, "conformance tiers") if r.returncode == 0 else None
    if d:
        cpu_and_wall(d, "conformance tiers", 2)
        run = d["runs"][0] if d.get("runs") else {}
        check("the case count, verdict and counts come from the tool's report",
              run.get("plugin") == "threads" and run.get("tier") == "quick" and
              run.get("verdict") == "pass" and run.get("cases", 0) > 0 and
              sum(run.get("counts", {}).values()) == run.get("cases"), run)
        check("the command line is recorded",
              "--plugins threads" in d["commands"][0], d["commands"])
    r = script("bench_conformance_tiers.py", "--build", A.build, "--plugins", "no-such")
    check("bench_conformance_tiers.py refuses a plugin the build lacks",
          r.returncode != 0 and "no plugin no-such" in r.stderr, r.stderr)

    # Isolation: the small sizes, once.
    out = os.path.join(tmp, "iso.json")
    r = script("bench_isolation.py", "--build", A.build, "--quick", "--repeat", "1",
               "--json", out)
    check("bench_isolation.py runs", r.returncode == 0, r.stdout + r.stderr)
    d = artifact(out, "isolation") if r.returncode == 0 else None
    if d:
        cpu_and_wall(d, "isolation", 1)
        check("isolation: both settings of every figure, outputs compared",
              len(d["cases"]) == 8 and len(d["ops"]) == 3 and
              all(op["same_output"] for op in d["ops"]) and
              all(set(op) >= {"cpu", "wall"} for op in d["ops"]), d["cases"])
    empty = os.path.join(tmp, "empty-build")
    os.mkdir(empty)
    r = script("bench_isolation.py", "--build", empty, "--quick")
    check("bench_isolation.py refuses a build without the tests' plugins",
          r.returncode != 0 and "build the tests first" in r.stderr, r.stderr)

    # The input side: one read, one refusal.
    out = os.path.join(tmp, "input.json")
    r = script("bench_input.py", "--build", A.build, "--data", A.data, "--repeat", "1",
               "--json", out)
    check("bench_input.py runs", r.returncode == 0, r.stdout + r.stderr)
    d = artifact(out, "input") if r.returncode == 0 else None
    if d:
        check("the refusal is for memory", "memory limit" in d.get("refused_with", ""), d)
        check("the read's time from the --verbose timeline",
              len(d["cases"]) == 3 and len(d["cases"][0]["times"]) == 1, d["cases"])

    # bench_verify on small stand-ins for Ripser's inputs, two calls a mode.
    data = os.path.join(tmp, "data")
    os.mkdir(data)
    r16 = os.path.join(A.data, "random16.lower_distance_matrix")
    for name in ("random16.lower_distance_matrix", "sphere_3_192.lower_distance_matrix"):
        shutil.copy(r16, os.path.join(data, name))
    for name in ("o3_1024.txt", "o3_2048.txt"):
        with open(os.path.join(A.data, name)) as f, open(os.path.join(data, name), "w") as g:
            g.writelines(f.readlines()[:40])
    tool = os.path.join(A.build, "bench", "bench_verify")
    out = os.path.join(tmp, "verify.json")
    r = subprocess.run([tool, "--data", data, "--calls", "2", "--json", out],
                       capture_output=True, text=True, timeout=600)
    check("bench_verify runs", r.returncode == 0, r.stdout + r.stderr)
    d = artifact(out, "verify", commit=False) if r.returncode == 0 else None
    if d:
        cpu_and_wall(d, "verify", 2)
        check("verify: 4 inputs x 3 modes", len(d["cases"]) == 12 and
              {c["program"] for c in d["cases"]} == {"verify: off", "verify: auto",
                                                     "verify: always"}, d["cases"])
        check("verify: the command line is recorded",
              d["commands"] == [" ".join([tool, "--data", data, "--calls", "2", "--json", out])],
              d["commands"])
        check("verify: the overheads over the set",
              all(isinstance(d.get(k), float) for k in
                  ("overhead_auto", "overhead_always", "overhead_auto_wall",
                   "overhead_always_wall")), d)
    for bad in (["--calls", "2"], ["--data", data, "--calls", "0"], ["--data", data, "--bogus", "1"],
                ["--data"]):
        r = subprocess.run([tool] + bad, capture_output=True, text=True, timeout=60)
        check("bench_verify refuses %s" % " ".join(bad), r.returncode == 2 and r.stderr, r.stderr)

    # bench_probe.py: every command, plugin count and build in turn (a build
    # against itself here), wall times with the CPU times beside them.
    out = os.path.join(tmp, "probe.json")
    r = script("bench_probe.py", "--build", A.build, "--baseline", A.build, "--repeat", "2",
               "--probe-ms", "50", "--json", out)
    check("bench_probe.py runs", r.returncode == 0, r.stdout + r.stderr)
    d = artifact(out, "probe") if r.returncode == 0 else None
    if d:
        check("probe: load average at start and end",
              len(d["machine"].get("load_average_start", [])) == 3 and
              len(d["machine"].get("load_average", [])) == 3, d["machine"])
        check("probe: 4 commands x 3 plugin counts x 2 builds, 2 wall and CPU times each",
              len(d["cases"]) == 24 and
              all(len(c["times"]) == 2 and len(c.get("cpu_times", [])) == 2 and
                  abs(c["median"] - sum(c["times"]) / 2) < 1e-9 for c in d["cases"]) and
              {c["program"] for c in d["cases"]} == {"topoml (after)", "topoml (before)"},
              d["cases"][:2])
        check("probe: the same bars whatever the plugins", d.get("same_output") is True, d)
    # ... and --probe-cache: the build again, with the probe reports kept.
    out = os.path.join(tmp, "probe-cache.json")
    r = script("bench_probe.py", "--build", A.build, "--probe-cache", "--repeat", "2",
               "--probe-ms", "50", "--json", out)
    check("bench_probe.py --probe-cache runs", r.returncode == 0, r.stdout + r.stderr)
    d = artifact(out, "probe") if r.returncode == 0 else None
    if d:
        check("probe cache: 4 commands x 3 plugin counts, without and with kept reports",
              len(d["cases"]) == 24 and {c["program"] for c in d["cases"]} ==
              {"topoml (after)", "topoml (after, probe reports kept)"} and
              d["baseline"] == "topoml (after)", d["cases"][:2])
    empty = os.path.join(tmp, "no-plugins-build")
    os.mkdir(empty)
    r = script("bench_probe.py", "--build", empty)
    check("bench_probe.py refuses a build without the slow-probe plugin",
          r.returncode != 0 and "build the tests' plugins first" in r.stderr, r.stderr)

    # bench_cpp_compat.py on the real CLI: two small cases, medians of the
    # backends taken in turn, outputs compared.
    out = os.path.join(tmp, "cpp.json")
    r = script("bench_cpp_compat.py", "--topoml", A.topoml, "--data", A.data, "--only",
               "uniform 60x3", "--repeat", "2", "--json", out)
    check("bench_cpp_compat.py runs", r.returncode == 0, r.stdout + r.stderr)
    d = artifact(out, "cpp-compat") if r.returncode == 0 else None
    if d:
        cpu_and_wall(d, "cpp-compat", 2)
        check("cpp-compat: the two cases named, both backends, the same bars",
              {c["name"] for c in d["cases"]} == {"rips uniform 60x3 dim 2",
                                                  "rips uniform 60x3 dim 2 mod 3"} and
              len(d["cases"]) == 4 and all(c["same"] is True for c in d["cases"]), d["cases"])
        check("cpp-compat: medians, not the best run", d["statistic"].startswith("median of 2") and
              all(abs(c["median"] - (c["times"][0] + c["times"][1]) / 2) < 1e-3
                  for c in d["cases"]), d["cases"])
    r = script("bench_cpp_compat.py", "--topoml", A.topoml, "--only", "no such case")
    check("bench_cpp_compat.py refuses an --only that names no case",
          r.returncode == 2 and "no case name contains" in r.stderr, r.stderr)
    # A stand-in CLI that logs each backend it is asked for and sleeps for
    # those named in FAKE_SLOW: the order of the runs, and a timeout.
    fake = os.path.join(tmp, "fake-topoml")
    with open(fake, "w") as f:
        f.write('#!/bin/sh\ncase "$*" in *--version*) echo "topoml fake"; exit 0;; esac\n'
                'echo "$4" >> "$FAKE_LOG"\ncase "$4" in $FAKE_SLOW) exec sleep 5;; esac\n'
                'echo "persistence intervals in dim 0:"\necho " [0,1)"\n')
    os.chmod(fake, 0o755)
    one = ["--topoml", fake, "--data", A.data, "--only", "uniform 60x3 dim 2 mod 3",
           "--repeat", "2", "--timeout", "1", "--json"]
    for slow, want in (("none", ["scalar", "cpp-compat", "cpp-compat", "scalar"]),
                       ("cpp-compat", ["scalar", "cpp-compat", "scalar", "scalar"]),
                       ("*", ["scalar", "cpp-compat"])):
        log, out = os.path.join(tmp, "fake-%s.log" % len(want)), os.path.join(tmp, "fake.json")
        for f in (log, out):
            if os.path.exists(f):
                os.unlink(f)
        r = subprocess.run([sys.executable, os.path.join(BENCH, "bench_cpp_compat.py")] + one +
                           [out], capture_output=True, text=True, timeout=120,
                           env=dict(os.environ, FAKE_LOG=log, FAKE_SLOW=slow))
        seen = open(log).read().split() if os.path.exists(log) else []
        check("cpp-compat, slow %s: the runs in turn, the order reversed" % slow, seen == want,
              seen)
        if slow == "*":
            check("cpp-compat: every run past the timeout is refused, no file",
                  r.returncode != 0 and "every run went past --timeout" in r.stderr and
                  not os.path.exists(out), r.stdout + r.stderr)
            continue
        check("cpp-compat, slow %s: runs" % slow, r.returncode == 0, r.stdout + r.stderr)
        d = artifact(out, "cpp-compat, slow %s" % slow) if r.returncode == 0 else None
        if d:
            progs = {c["program"]: c for c in d["cases"]}
            check("cpp-compat, slow %s: each backend measured twice, a timed-out one left out"
                  % slow, all(len(c["times"]) == 2 for c in d["cases"]) and
                  sorted(progs) == (["scalar"] if slow == "cpp-compat" else
                                    ["cpp-compat", "scalar"]), d["cases"])
        if slow == "cpp-compat":
            check("cpp-compat: the timeout is printed", "timeout" in r.stdout, r.stdout)

    # bench_setup_venv.py: the step it times is setup-debian.sh's Python
    # step, read from the script (not a copy), without the ML step.
    r = script("bench_setup_venv.py", "--print-step")
    setup = open(os.path.join(SRC, "tools", "setup-debian.sh")).read()
    check("bench_setup_venv.py prints the Python step of setup-debian.sh",
          r.returncode == 0 and "-m venv" in r.stdout and '"$venv/bin/pip" install' in r.stdout
          and all(line in setup for line in r.stdout.splitlines()[1:]) and
          "torch" not in r.stdout and "ml_need" not in r.stdout, r.stdout + r.stderr)
    broken = os.path.join(tmp, "setup-without-venv.sh")
    with open(broken, "w") as f:
        f.write(setup.replace("\nvenv=", "\nthe_venv="))
    r = script("bench_setup_venv.py", "--setup", broken, "--print-step")
    check("bench_setup_venv.py refuses a set-up script without the step",
          r.returncode != 0 and "no line 'venv=...'" in r.stderr, r.stderr)
    # A stand-in set-up with the same shape that makes a real venv but
    # installs nothing (no network): `first` runs into an empty folder each
    # time, `again` on the folder the last `first` made.
    stand_in = os.path.join(tmp, "setup-stand-in.sh")
    with open(stand_in, "w") as f:
        f.write('#!/bin/sh\nset -eu\n'
                'venv="$(cd "$(dirname "$0")/.." && pwd)/.venv"\n'
                'if [ -x "$venv/bin/python" ]; then echo "kept $venv" >> "$VENV_LOG"; else\n'
                '  echo "made $venv" >> "$VENV_LOG"\n'
                '  /usr/bin/python3 -m venv --without-pip --system-site-packages "$venv"\nfi\n'
                'need=""\nif [ -n "$need" ]; then\n'
                '    "$venv/bin/pip" install -q --disable-pip-version-check $need\nfi\n')
    log, out = os.path.join(tmp, "venv.log"), os.path.join(tmp, "venv.json")
    r = subprocess.run([sys.executable, os.path.join(BENCH, "bench_setup_venv.py"), "--setup",
                        stand_in, "--repeat", "2", "--json", out], capture_output=True,
                       text=True, timeout=600, env=dict(os.environ, VENV_LOG=log))
    check("bench_setup_venv.py runs", r.returncode == 0, r.stdout + r.stderr)
    seen = [line.split() for line in open(log)] if os.path.exists(log) else []
    # rounds: first, again; again, first
    check("first into a new empty folder, again on the last one made",
          [w for w, _ in seen] == ["made", "kept", "kept", "made"] and
          seen[0][1] == seen[1][1] == seen[2][1] != seen[3][1], seen)
    d = artifact(out, "setup venv") if r.returncode == 0 else None
    if d:
        cpu_and_wall(d, "setup venv", 2)
        check("setup venv: the step run is recorded", d.get("step", "").count("venv=") == 1, d)
        check("setup venv: no venv left behind",
              not any(os.path.exists(p) for _, p in seen), seen)

    # bench_builds.py: the same CLI as both builds, one small case.
    out = os.path.join(tmp, "builds.json")
    r = script("bench_builds.py", "--build", A.topoml, "--baseline", A.topoml, "--data", A.data,
               "--only", "projective_plane", "--reps", "2", "--json", out)
    check("bench_builds.py runs", r.returncode == 0, r.stdout + r.stderr)
    d = artifact(out, "builds") if r.returncode == 0 else None
    if d:
        check("builds: both builds, two CPU and wall times each",
              sorted(c["program"] for c in d["cases"]) == ["baseline", "build"] and
              all(len(c["times"]) == 2 and len(c["wall_times"]) == 2 for c in d["cases"]),
              d["cases"])
    for bad, want in ((["--only", "no such case"], "no such case"),
                      (["--baseline", os.path.join(tmp, "missing")], "not an executable")):
        args = ["--build", A.topoml, "--baseline", A.topoml] + bad
        r = script("bench_builds.py", *args)
        check("bench_builds.py refuses %s" % " ".join(bad),
              r.returncode == 2 and want in r.stderr, r.stderr)

    # bench_envelope.py: a small case (re-run both times: small calls always
    # are) and a refusal of a case that does not exist.
    out = os.path.join(tmp, "envelope.json")
    r = script("bench_envelope.py", "--topoml", A.topoml, "--data", A.data,
               "--only", "projective_plane", "--repeat", "2", "--json", out)
    check("bench_envelope.py runs", r.returncode == 0, r.stdout + r.stderr)
    d = artifact(out, "envelope") if r.returncode == 0 else None
    if d:
        check("envelope: the first call and the call again, two times each",
              sorted(c["program"] for c in d["cases"]) ==
              ["first call (past the envelope: re-run)", "same call again (within it)"] and
              all(len(c["times"]) == 2 for c in d["cases"]), d["cases"])
    r = script("bench_envelope.py", "--topoml", A.topoml, "--data", A.data, "--only", "nope")
    check("bench_envelope.py refuses a case that does not exist",
          r.returncode == 2 and "no such case" in r.stderr, r.stderr)

    # bench_rips.py --warmup: the CLI through a wrapper that counts its calls;
    # two more untimed runs are two more calls, and the timed runs stay --reps.
    calls = os.path.join(tmp, "calls")
    counted = os.path.join(tmp, "topoml-counted")
    with open(counted, "w") as f:
        f.write("#!/bin/sh\necho x >> '%s'\nexec '%s' \"$@\"\n" % (calls, A.topoml))
    os.chmod(counted, 0o755)
    n_calls = {}
    for warm in (0, 2):
        if os.path.exists(calls):
            os.unlink(calls)
        out = os.path.join(tmp, "rips-warmup-%d.json" % warm)
        r = script("bench_rips.py", "--topoml", counted, "--data", A.data, "--threads", "1",
                   "--reps", "2", "--warmup", str(warm), "--only", "random16",
                   "--program", "topoml scalar", "--json", out)
        check("bench_rips.py --warmup %d runs" % warm, r.returncode == 0, r.stdout + r.stderr)
        d = artifact(out, "rips --warmup %d" % warm) if r.returncode == 0 else None
        if d:
            check("rips --warmup %d: recorded, two timed runs" % warm,
                  d.get("warmup") == warm and len(d["cases"]) == 1 and
                  len(d["cases"][0]["times"]) == 2, d)
        with open(calls) if os.path.exists(calls) else open(os.devnull) as f:
            n_calls[warm] = len(f.readlines())
    check("bench_rips.py --warmup 2 calls the CLI twice more than --warmup 0",
          n_calls.get(2, 0) - n_calls.get(0, 0) == 2, n_calls)
    r = script("bench_rips.py", "--topoml", A.topoml, "--warmup", "-1")
    check("bench_rips.py refuses --warmup -1",
          r.returncode == 2 and "--warmup" in r.stderr, r.stderr)

    # process_timeline.py on a CLI process: the marks in the order of the log,
    # the exit last, every run's times kept.
    out = os.path.join(tmp, "timeline.json")
    r = script("process_timeline.py", "--runs", "2", "--mark", "loaded=backend .* loaded",
               "--mark", "dim1=s: dim 1:", "--mark", "ran=ran on backend", "--json", out, "--",
               A.topoml, "barcode", "--verbose", "--verbose", "--backend", "scalar", "--format",
               "lower-distance", "--dim", "1", os.path.join(A.data, "random16.lower_distance_matrix"))
    check("process_timeline.py runs", r.returncode == 0, r.stdout + r.stderr)
    d = artifact(out, "timeline") if r.returncode == 0 else None
    if d:
        got = [c["name"] for c in d["cases"]]
        med = [c["median"] for c in d["cases"]]
        check("timeline: the marks found, in the log's order, the exit last",
              got == ["dim1", "ran", "exit"] and med == sorted(med) and
              all(len(c["times"]) == 2 for c in d["cases"]), d["cases"])
    r = script("process_timeline.py", "--mark", "no-equals-sign", "--", A.topoml, "--version")
    check("process_timeline.py refuses a --mark without NAME=",
          r.returncode == 2 and "NAME=REGEX" in r.stderr, r.stderr)
    r = script("process_timeline.py", "--runs", "1", "--", A.topoml, "barcode", "/no/such/file")
    check("process_timeline.py stops on a command that fails",
          r.returncode == 1 and "failed with status" in r.stderr, r.stderr)
finally:
    shutil.rmtree(tmp, ignore_errors=True)

print("%d failures" % len(failures))
sys.exit(1 if failures else 0)
