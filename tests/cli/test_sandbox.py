"""The sandbox of a plugin's helper process, through the real `topoml`.

Each fault plugin (tests/fault_plugins/fault.c) computes distances right
and, for more than 150 points, first tries to harm the host from its
helper: write into the host's stdout through /proc/<host>/fd/1, open
/proc/<host>/mem for writing, kill the host, fork a daemon that listens on
a socket, append to a file in $HOME, touch 3 GiB under --max-memory 256MiB,
never return, exec a program. Each run must end with exit 0, the
reference's answer on stdout and nothing else there, a warning naming the
plugin and the reference, the host alive, no process of the run left, no
file written and no port listening.

Then the host is interrupted (SIGINT, SIGTERM) or killed (SIGKILL) during
an isolated call that never returns: no helper may outlive it.

The runaway plugin runs under the default configuration (no
isolation_timeout): the deadline derived from the call's size must end it
in seconds, not the 600 s of isolation_timeout.

Where the kernel lacks seccomp or Landlock, `topoml backends` says
"partial: ..." and this test skips (exit 77) with that reason."""
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time

import clitest

A = clitest.args()
A.build = os.path.abspath(A.build)
CLI = A.topoml
failures = []


def check(what, ok, detail=""):
    if not ok:
        failures.append("%s %s" % (what, detail))
        print("FAIL: %s %s" % (what, detail))


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def run_processes(host_pid):
    """Helpers of the host `host_pid` and whatever they started: their
    command line ends in the sandbox policy, whose last field is the host's
    pid (readable even for a non-dumpable process)."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                args = f.read().split(b"\0")
        except OSError:
            continue
        if b"--sandbox" in args and any(a.endswith(b":%d" % host_pid) for a in args):
            found.append(int(pid))
    return found


def kill_all(pids):
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def same_numbers(a, b, tol=1e-12):
    la, lb = a.splitlines(), b.splitlines()
    if len(la) != len(lb):
        return False
    for x, y in zip(la, lb):
        vx = [float(v) for v in x.split(",") if v]
        vy = [float(v) for v in y.split(",") if v]
        if len(vx) != len(vy) or any(abs(p - q) > tol * max(1.0, abs(p)) for p, q in zip(vx, vy)):
            return False
    return True


FAULTS = {
    # folder: (what the host says about it, extra options)
    "proc-stdout": ("Bad system call", []),
    "proc-mem": ("Bad system call", []),
    "kill-host": ("Bad system call", []),
    "daemon": ("Bad system call", []),
    "home-write": ("Bad system call", []),
    "big-memory": ("map 3 GiB", ["--max-memory", "256MiB"]),
    "op-runaway": ("did not finish within", []),
    "exec": ("Bad system call", []),
}


def main():
    tmp = tempfile.mkdtemp(prefix="topoml-sandbox-")
    home = os.path.join(tmp, "home")
    os.mkdir(home)
    profile = os.path.join(home, ".profile")
    with open(profile, "w") as f:
        f.write("# the user's own\n")
    exec_marker = os.path.join(tmp, "exec-marker")
    rng = random.Random(7)
    cloud = os.path.join(tmp, "cloud200.txt")
    with open(cloud, "w") as f:
        for _ in range(200):
            f.write("%.6f %.6f\n" % (rng.random(), rng.random()))
    env = dict(os.environ, HOME=home, XDG_CACHE_HOME=os.path.join(tmp, "cache"),
               TOPOML_TEST_EXEC_MARKER=exec_marker)
    env.pop("TOPOML_CONFIG", None)

    probe = subprocess.run([CLI, "backends", "--json"], capture_output=True, text=True,
                           env=dict(env, TOPOML_PLUGIN_PATH=os.path.join(
                               A.build, "fault-plugins", "proc-stdout")))
    listed = [b for b in json.loads(probe.stdout) if b["name"] == "fault-proc-stdout"]
    if not listed or not listed[0].get("sandbox"):
        print("FAIL: fault-proc-stdout not listed with a sandbox: %s" % probe.stdout[:600])
        sys.exit(1)
    walls = listed[0]["sandbox"]
    print("sandbox: %s" % walls)
    if walls.startswith("partial") and ("no seccomp" in walls or "no landlock" in walls):
        print("SKIP: this kernel's sandbox is %s" % walls)
        sys.exit(77)

    ref = subprocess.run([CLI, "distance", cloud, "--backend", "scalar"], capture_output=True,
                         text=True, env=env)
    check("reference", ref.returncode == 0, ref.stderr)
    for folder, (said, extra) in FAULTS.items():
        name = "fault-" + folder
        cfg = os.path.join(tmp, folder + ".yaml")
        with open(cfg, "w") as f:
            f.write("enable: [%s]\n" % name)  # no certification: straight to the helper
        if folder == "big-memory" and "memory limit" not in walls.split(";")[0]:
            print("SKIP %s: the helpers have no memory limit here (%s)" % (folder, walls))
            continue
        port = free_port()
        run_env = dict(env, TOPOML_PLUGIN_PATH=os.path.join(A.build, "fault-plugins", folder),
                       TOPOML_TEST_PORT=str(port))
        t0 = time.monotonic()
        p = subprocess.Popen([CLI, "distance", cloud, "--config", cfg] + extra,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=run_env, errors="replace")
        out, err = p.communicate(timeout=120)
        r = subprocess.CompletedProcess(p.args, p.returncode, out, err)
        took = time.monotonic() - t0
        where = folder
        check(where + ": host exits 0 (not killed)", r.returncode == 0,
              "%d %s" % (r.returncode, r.stderr[-600:]))
        check(where + ": stdout is the reference's answer and nothing else",
              same_numbers(r.stdout, ref.stdout) and "PWNED" not in r.stdout,
              "%d bytes; %r" % (len(r.stdout), r.stdout[:80]))
        check(where + ": a warning names the plugin, what happened and the reference",
              name in r.stderr and said in r.stderr and "reference" in r.stderr, r.stderr[-600:])
        time.sleep(0.3)
        left = run_processes(p.pid)
        check(where + ": no process of the run is left", not left, str(left))
        kill_all(left)
        with open(profile) as f:
            check(where + ": $HOME/.profile untouched", f.read() == "# the user's own\n")
        check(where + ": no program was run", not os.path.exists(exec_marker))
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                check(where + ": nothing listens on the daemon's port", False)
        except OSError:
            pass
        if folder == "op-runaway":
            # 200 points: the deadline is the 5 s floor, not isolation_timeout.
            check(where + ": ended by a deadline derived from its size", took < 30,
                  "%.1f s" % took)
    interrupted(tmp, env)
    if failures:
        print("%d failures" % len(failures))
        sys.exit(1)
    print("ok: %d faults stopped by the sandbox (%s), interrupted host leaves no helper" %
          (len(FAULTS), walls))


def interrupted(tmp, env):
    """SIGINT, SIGTERM or SIGKILL to `topoml` while its helper runs a call
    that never returns: the helper must not outlive the host."""
    cloud = os.path.join(tmp, "cloud200.txt")
    cfg = os.path.join(tmp, "interrupt.yaml")
    with open(cfg, "w") as f:
        f.write("enable: [fault-op-runaway]\nisolation_timeout: 300\n")
    run_env = dict(env, TOPOML_PLUGIN_PATH=os.path.join(A.build, "fault-plugins", "op-runaway"))
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL):
        where = "interrupt (%s)" % sig.name
        p = subprocess.Popen([CLI, "distance", cloud, "--config", cfg], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env=run_env)
        helpers = []
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not helpers:
            helpers = run_processes(p.pid)
            time.sleep(0.05)
        check(where + ": a helper runs the call", bool(helpers))
        time.sleep(0.3)  # into the op
        p.send_signal(sig)
        p.communicate(timeout=30)
        check(where + ": the host ended by the signal", p.returncode == -sig, str(p.returncode))
        gone = time.monotonic() + 5
        left = run_processes(p.pid)
        while left and time.monotonic() < gone:
            time.sleep(0.05)
            left = run_processes(p.pid)
        check(where + ": no helper outlives the host", not left, str(left))
        kill_all(left)


main()
