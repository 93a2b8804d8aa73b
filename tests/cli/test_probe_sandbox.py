"""Plugin code outside a serving helper is sandboxed too: the probe helper
and the conformance suite's children, through the real programs.

The fault plugin fault-steal (tests/fault_plugins/fault.c, STEAL) reaches
for topoml's records.key (whose HMAC key seals every certificate), creates
a file and runs /usr/bin/touch, from its constructor (which runs in the
probe process) or from its op (which runs under certification).

1. `topoml backends` probes it: for each of read, write, exec and all
   three, the host exits 0, the key's bytes appear nowhere, no file was
   written or made by the program, and the plugin is listed as rejected
   with the reason (the read refused, or the sandbox's SIGSYS).
2. Landlock's read rule for a folder of LD_LIBRARY_PATH that holds the
   cache folder ($HOME, and the folder above a configured cache_dir) is
   left out: the key stays unreadable, and a helper that serves calls says
   so at debug level.
3. `topoml-conformance --certify` on it, its op reading the key that seals
   the certificates and writing a file: every case it runs is CRASH (the
   sandbox's SIGSYS), no file is written, the key appears nowhere, and the
   certificate the runner writes after the children ended says
   verdict=fail.

Where the kernel lacks seccomp or Landlock this test skips (exit 77)."""
import json
import os
import subprocess
import sys
import tempfile

import clitest

A = clitest.args()
A.build = os.path.abspath(A.build)
CLI = A.topoml
CONFORMANCE = os.path.join(A.build, "tools", "topoml-conformance")
PLUGIN_DIR = os.path.join(A.build, "fault-plugins", "steal")
failures = []


def check(what, ok, detail=""):
    if not ok:
        failures.append("%s %s" % (what, detail))
        print("FAIL: %s %s" % (what, detail))


def make_key(cache):
    os.makedirs(cache, mode=0o700, exist_ok=True)
    os.chmod(cache, 0o700)
    key = os.path.join(cache, "records.key")
    data = os.urandom(32)
    fd = os.open(key, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.write(fd, data)
    os.close(fd)
    return key, data.hex()


def backends(env):
    r = subprocess.run([CLI, "backends", "--json"], capture_output=True, text=True, env=env,
                       timeout=120, errors="replace")
    try:
        listed = [b for b in json.loads(r.stdout) if "steal" in (b.get("path") or "")]
    except ValueError:
        listed = []
    return r, listed


def probe_case(where, env, key_hex, written, executed, said):
    for f in (written, executed):
        if os.path.exists(f):
            os.unlink(f)
    r, listed = backends(env)
    check(where + ": the host exits 0", r.returncode == 0, "%d %s" % (r.returncode, r.stderr[-400:]))
    check(where + ": the key's bytes appear nowhere", key_hex not in r.stdout + r.stderr)
    check(where + ": no file written", not os.path.exists(written))
    check(where + ": no program run", not os.path.exists(executed))
    check(where + ": listed once", len(listed) == 1, r.stdout[:600])
    if len(listed) == 1:
        b = listed[0]
        text = json.dumps(b)
        check(where + ": rejected", b.get("gate") in ("rejected", "unsupported"),
              text[:600])
        check(where + ": the reason says '%s'" % said, said in text, text[:600])
    return r


def main():
    tmp = tempfile.mkdtemp(prefix="topoml-probe-sandbox-")
    home = os.path.join(tmp, "home")
    os.mkdir(home)
    written = os.path.join(tmp, "written")
    executed = os.path.join(tmp, "executed")
    xdg = os.path.join(tmp, "xdg")
    key, key_hex = make_key(os.path.join(xdg, "topoml"))
    env = dict(os.environ, HOME=home, XDG_CACHE_HOME=xdg, TOPOML_PLUGIN_PATH=PLUGIN_DIR,
               TOPOML_TEST_KEY=key, TOPOML_TEST_WRITE_MARKER=written,
               TOPOML_TEST_EXEC_MARKER=executed)
    for var in ("TOPOML_CONFIG", "LD_LIBRARY_PATH", "TOPOML_TEST_STEAL", "TOPOML_TEST_STEAL_AT"):
        env.pop(var, None)

    r, listed = backends(env)
    walls = listed[0].get("sandbox") if listed else None
    if walls is None:
        # Not isolated when listed: the sandbox line of any isolated plugin.
        probe = subprocess.run([CLI, "backends", "--json"], capture_output=True, text=True,
                               env=dict(env, TOPOML_PLUGIN_PATH=os.path.join(
                                   A.build, "fault-plugins", "proc-stdout")))
        walls = next((b.get("sandbox") for b in json.loads(probe.stdout)
                      if b.get("sandbox")), "")
    print("sandbox: %s" % walls)
    if not walls or (walls.startswith("partial") and
                     ("no seccomp" in walls or "no landlock" in walls)):
        print("SKIP: this kernel's sandbox is %s" % (walls or "unknown"))
        sys.exit(77)

    # 1. The probe.
    probe_case("probe, read", dict(env, TOPOML_TEST_STEAL="read"), key_hex, written, executed,
               "could not read the key: Permission denied")
    probe_case("probe, write", dict(env, TOPOML_TEST_STEAL="write"), key_hex, written, executed,
               "Bad system call")
    probe_case("probe, exec", dict(env, TOPOML_TEST_STEAL="exec"), key_hex, written, executed,
               "Bad system call")
    probe_case("probe, all three", env, key_hex, written, executed, "Bad system call")

    # 2. LD_LIBRARY_PATH naming a folder that holds the cache folder: $HOME
    # (the default cache, $HOME/.cache/topoml), and the folder above a
    # configured cache_dir.
    env_home = dict(env, TOPOML_TEST_STEAL="read", LD_LIBRARY_PATH=home)
    env_home.pop("XDG_CACHE_HOME")
    home_key, home_hex = make_key(os.path.join(home, ".cache", "topoml"))
    probe_case("LD_LIBRARY_PATH=$HOME", dict(env_home, TOPOML_TEST_KEY=home_key), home_hex,
               written, executed, "could not read the key: Permission denied")
    above = os.path.join(tmp, "above")
    conf_key, conf_hex = make_key(os.path.join(above, "cache"))
    cfg = os.path.join(tmp, "cache_dir.yaml")
    with open(cfg, "w") as f:
        f.write("cache_dir: %s\n" % os.path.join(above, "cache"))
    probe_case("LD_LIBRARY_PATH above cache_dir",
               dict(env, TOPOML_TEST_STEAL="read", TOPOML_TEST_KEY=conf_key,
                    LD_LIBRARY_PATH="/nonexistent:" + above, TOPOML_CONFIG=cfg),
               conf_hex, written, executed, "could not read the key: Permission denied")

    # ... and a helper that serves calls says so at debug level.
    cfg_iso = os.path.join(tmp, "isolated.yaml")
    with open(cfg_iso, "w") as f:
        f.write("enable: [fault-good]\nisolation: process\n")
    points = os.path.join(tmp, "points.txt")
    with open(points, "w") as f:
        f.write("0 0\n1 0\n0 2\n")
    r = subprocess.run([CLI, "distance", points, "--config", cfg_iso, "--backend", "fault-good",
                        "--verbose", "--verbose"], capture_output=True, text=True, timeout=120,
                       env=dict(env_home, TOPOML_PLUGIN_PATH=os.path.join(
                           A.build, "fault-plugins", "good")), errors="replace")
    said = "sandbox: LD_LIBRARY_PATH folder %s not made readable" % home
    check("serve: the left-out folder is said at debug level", said in r.stderr, r.stderr[-800:])

    # 3. Certification: the op reads the key and writes a file.
    certs = os.path.join(tmp, "certs")
    cert_key, cert_hex = make_key(certs)  # the key that seals its certificate
    report = os.path.join(tmp, "report.json")
    plugin = os.path.join(PLUGIN_DIR, "topoml-backend-fault.so")
    r = subprocess.run([CONFORMANCE, "--plugin", plugin, "--tier", "quick", "--certify",
                        "--cache-dir", certs, "--json", report, "--quiet"],
                       capture_output=True, text=True, timeout=600, errors="replace",
                       env=dict(env, TOPOML_TEST_STEAL_AT="op", TOPOML_TEST_KEY=cert_key))
    check("certify: the run completes", r.returncode in (0, 1),
          "%d %s" % (r.returncode, r.stderr[-600:]))
    check("certify: no file written", not os.path.exists(written))
    check("certify: the key's bytes appear nowhere", cert_hex not in r.stdout + r.stderr)
    # The certificate written after the run records the failure.
    for name in os.listdir(certs):
        if name.endswith(".cert"):
            with open(os.path.join(certs, name)) as f:
                text = f.read()
            check("certify: its certificate says verdict=fail", "\nverdict=fail\n" in text,
                  text[:400])
    results = []
    try:
        with open(report) as f:
            doc = json.load(f)
        for p in doc.get("plugins", []):
            results += [c.get("result") for c in p.get("cases", [])]
            check("certify: verdict fail", p.get("verdict") == "fail", str(p.get("verdict")))
    except (OSError, ValueError) as e:
        check("certify: a JSON report", False, str(e))
    ran = [x for x in results if x not in ("NOT_SUPPORTED", "SKIPPED")]
    check("certify: cases ran", len(ran) > 0, str(results[:10]))
    check("certify: every case it ran is CRASH", ran and all(x == "CRASH" for x in ran),
          str(sorted(set(ran))))

    if failures:
        print("%d failures" % len(failures))
        sys.exit(1)
    print("ok: probe and certification of a plugin that reaches for records.key, a file and "
          "a program are sandboxed (%s); %d certification cases CRASH" % (walls, len(ran)))


main()
