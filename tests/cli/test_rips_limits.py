"""Rips memory limits and progress through the real CLI.

- The shipped examples run under the default limit (the machine's): the
  estimate made before the work never refuses what fits comfortably.
- Under a smaller --max-memory, work is refused before any output with the
  estimate in the complex's terms ("dimension k would need about N
  simplices"), or, where the estimate was low and the limit is reached
  mid-way, the finished dimensions are printed exactly as a full run prints
  them, then an error line names the dimension that stopped; exit status 1.
  The JSON output says it is partial ("complete": false, "stopped").
- On a terminal (a pseudo-terminal here) the progress line of every stage
  has a total, counts up, and updates at least 4 times a second of the
  process's time (the shorter of wall and CPU time: a loaded machine that
  does not run the process for a while is not a missing update), on the
  scalar and the threads backend.
"""
import json
import os
import pty
import random
import re
import select
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
import clitest as ct

a = ct.args()
rep = ct.Report()
tmp = tempfile.mkdtemp()
ex = a.data


def run(args, timeout=300):
    return ct.run([a.topoml] + args, check=False, timeout=timeout)


# ---- the shipped examples under the default limit ----
shipped = [
    (["--dim", "2"], "random16.lower_distance_matrix"),
    (["--dim", "2"], "random20.lower_distance_matrix"),
    (["--dim", "2"], "projective_plane.lower_distance_matrix"),
    (["--dim", "2"], "sphere_3_192.lower_distance_matrix"),
    (["--dim", "3", "--threshold", "1.8", "--format", "point-cloud"], "o3_1024.txt"),
    (["--dim", "2", "--threshold", "1.4", "--format", "point-cloud"], "o3_2048.txt"),
]
for opts, name in shipped:
    for collapse in ("on", "off"):
        r = run(["barcode", "--collapse", collapse] + opts + [os.path.join(ex, name)])
        rep.check(r.returncode == 0 and "memory" not in r.stderr,
                  "%s %s --collapse %s under the default limit: exit %d: %s"
                  % (name, " ".join(opts), collapse, r.returncode, r.stderr[-300:]))

# ---- refused before the work, or stopped mid-way with the finished dimensions ----
rnd = random.Random(17)
cloud = os.path.join(tmp, "cloud.txt")
with open(cloud, "w") as f:
    for _ in range(70):
        f.write(" ".join("%.6f" % rnd.random() for _ in range(4)) + "\n")


def dims_of(text):
    return [int(m) for m in re.findall(r"^persistence intervals in dim (\d+):", text, re.M)]


for backend in ("scalar", "threads"):
    base = ["barcode", "--format", "point-cloud", "--dim", "3", "--collapse", "off",
            "--backend", backend, cloud]
    full = run(base)
    rep.check(full.returncode == 0, "%s: full run: %s" % (backend, full.stderr[-300:]))
    early = partial = 0
    limit = 64 << 20
    while limit > 4096:
        r = run(base + ["--max-memory", str(limit)])
        what = "%s --max-memory %d" % (backend, limit)
        limit = limit * 7 // 8
        if r.returncode == 0:
            rep.check(r.stdout == full.stdout, what + ": another barcode than without a limit")
            continue
        rep.check(r.returncode == 1, what + ": exit %d" % r.returncode)
        rep.check("memory limit" in r.stderr and "set by the caller" in r.stderr,
                  what + ": no limit or its source: %r" % r.stderr)
        rep.check("rips:" not in r.stdout and "Traceback" not in r.stderr, what + ": internals")
        if not r.stdout:
            if "would need about" in r.stderr:
                early += 1
                rep.check(re.search(r"dimension \d would need about [0-9.e+]+ (simplices|edges)",
                                    r.stderr) and "lower the dimension or the threshold" in
                          r.stderr, what + ": the estimate not in the complex's terms: %r"
                          % r.stderr)
            continue
        # partial: dimensions 0..k-1 exactly as the full run printed them
        got = dims_of(r.stdout)
        k = len(got)
        partial += 1
        rep.check(got == list(range(k)) and 0 < k <= 3, what + ": dimensions %s" % got)
        cut = full.stdout.find("persistence intervals in dim %d:" % k)
        rep.check(cut > 0 and r.stdout == full.stdout[:cut],
                  what + ": the finished dimensions differ from the full run's")
        m = re.search(r"dimension (\d+) stopped at (\d+) (simplices to reduce|edges): ", r.stderr)
        rep.check(m is not None and int(m.group(1)) == k and "bytes" in r.stderr,
                  what + ": the error does not say which dimension stopped: %r" % r.stderr)
        j = run(base + ["--max-memory", str(limit * 8 // 7), "--output", "json"])
        if j.returncode == 1 and j.stdout:
            doc = json.loads(j.stdout)
            rep.check(doc["complete"] is False and doc["stopped"]["reason"] == "memory limit"
                      and doc["stopped"]["dim"] == len(doc["dims"]) == doc["max_dim"] + 1,
                      what + ": JSON does not mark the partial result: %r" % j.stdout[:200])
    rep.check(early > 0, backend + ": no limit was refused by the estimate before the work")
    rep.check(partial > 0, backend + ": no limit gave a partial barcode")

# ---- the progress line on a terminal ----
LINE = re.compile(r"^(.+): (\d+)/(\d+) \((\d+)%\)$")


def cpu_seconds(pid):
    """The process's CPU time so far (user + system, all its threads), or
    None once it is gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def progress_lines(args):
    """Runs topoml with stderr on a pseudo-terminal; the self-updating line's
    states with the time each arrived (wall seconds, and the process's CPU
    seconds then), and the exit status."""
    master, slave = pty.openpty()
    t0 = time.monotonic()
    p = subprocess.Popen([a.topoml] + args, stdout=subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    raw, arrivals = b"", []
    while True:
        ready, _, _ = select.select([master], [], [], 0.02)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            raw += chunk
            arrivals.append((time.monotonic() - t0, len(raw), cpu_seconds(p.pid)))
        elif p.poll() is not None:
            break
    p.wait()
    os.close(master)
    states, pos = [], 0
    for t, end, cpu in arrivals:
        for seg in raw[pos:end].decode(errors="replace").split("\r"):
            if seg.startswith("\x1b[K") and seg[3:].strip():
                states.append((t, seg[3:], cpu))
        pos = end
    return states, raw, p.returncode


for backend in ("scalar", "threads"):
    args = ["barcode", "--format", "point-cloud", "--dim", "3", "--threshold", "1.8",
            "--collapse", "off", "--backend", backend, os.path.join(ex, "o3_1024.txt")]
    states, raw, rc = progress_lines(args)
    what = "progress on a terminal, " + backend
    rep.check(rc == 0 and len(states) >= 4, what + ": exit %d, %d updates" % (rc, len(states)))
    if len(states) < 4:
        continue
    last = {}
    for t, s, _ in states:
        if s.endswith("...") and not re.search(r"\d", s):
            continue  # a stage that says it begins ("verifying on the reference...")
        m = LINE.match(s)
        rep.check(m is not None, what + ": a line without a total: %r" % s)
        if not m:
            continue
        stage, done, total = m.group(1), int(m.group(2)), int(m.group(3))
        rep.check(0 < total and done <= total, what + ": %r" % s)
        rep.check(stage not in last or last[stage] <= done, what + ": %s went back" % stage)
        last[stage] = done
    # The line shows at most ten updates a second, so a stage shorter than
    # that may never be on it (dim 2's enumeration on the threads backend
    # can take a few tens of milliseconds); the long one must be.
    rep.check("dim 3 enumeration" in last,
              what + ": no line for dim 3 enumeration: %s" % sorted(last))
    # At least 4 a second: the library reports every 50 ms and the CLI shows
    # at most 10 a second. The median gap must be within 0.25 s and none
    # beyond 1 s, each gap taken as the shorter of its wall time and the
    # CPU time the process had in it: on a loaded machine (the other tests
    # under Valgrind on every core) a process that is not run for a second
    # cannot report, and a process that works a second without reporting is
    # what this looks for (on threads its CPU time runs ahead of the wall).
    def gap(x, y):
        wall = y[0] - x[0]
        return min(wall, y[2] - x[2]) if x[2] is not None and y[2] is not None else wall
    gaps = sorted(gap(x, y) for x, y in zip(states, states[1:]))
    rep.check(gaps[len(gaps) // 2] <= 0.25 and gaps[-1] <= 1.0,
              what + ": median gap %.2f s, longest %.2f s, %d updates"
              % (gaps[len(gaps) // 2], gaps[-1], len(states)))
    rep.check(raw.endswith(b"\r\x1b[K"), what + ": the line is not cleared at the end")

rep.finish()
