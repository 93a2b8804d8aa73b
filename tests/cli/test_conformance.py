"""topoml-conformance and the gate, for real: every wrongly built plugin gets
the result code its fault calls for, a correct copy of the scalar reference
passes, the JSON and JUnit reports parse (json, xml.etree) and agree, the
certificates written by --certify enable a plugin under `gate: strict`, a
plugin whose file changes is gated again, and `gate: auto` certifies or
rejects a plugin on first use without anything reaching stdout."""
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

import clitest

A = clitest.args()
TOOL = os.path.join(A.build, "tools", "topoml-conformance")
CLI = A.topoml
SCALAR = os.path.join(A.build, "plugins-out", "topoml-backend-scalar.so")
failures = []


def plugin(name):
    return os.path.join(A.build, "conformance-plugins", name, "topoml-backend-%s.so" % name)


def fault(name):
    return os.path.join(A.build, "fault-plugins", name, "topoml-backend-fault.so")


def run(cmd, timeout=600):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, errors="replace")


def check(what, ok, detail=""):
    if not ok:
        failures.append("%s %s" % (what, detail))
        print("FAIL: %s %s" % (what, detail))


def conformance(args, want_status, tmp, tag):
    """Run the tool with JSON and JUnit output; return (json, junit root)."""
    j = os.path.join(tmp, tag + ".json")
    x = os.path.join(tmp, tag + ".xml")
    r = run([TOOL] + args + ["--json", j, "--junit", x])
    check("%s: exit status" % tag, r.returncode == want_status,
          "got %d, want %d\n%s%s" % (r.returncode, want_status, r.stdout[-3000:], r.stderr[-2000:]))
    report = json.load(open(j))
    junit = ET.parse(x).getroot()
    # The two reports say the same things.
    for p, suite in zip(report["plugins"], junit.findall("testsuite")):
        c = p["counts"]
        check("%s: junit tests" % tag, int(suite.get("tests")) == len(p["cases"]))
        check("%s: junit failures" % tag, int(suite.get("failures")) == c["FAIL"])
        check("%s: junit errors" % tag, int(suite.get("errors")) == c["CRASH"] + c["TIMEOUT"])
        check("%s: junit skipped" % tag, int(suite.get("skipped")) == c["NOT_SUPPORTED"])
    return report, junit


def results(report, index=0):
    return {c["name"]: c for c in report["plugins"][index]["cases"]}


def test_usage():
    for args in (["--tier", "huge"], ["--certify", "--case", "h0/*"], ["--case", "no/such/case"],
                 ["--backend", "no-such-backend"], ["--timeout", "-1"], ["stray"],
                 ["--plugin", "/nonexistent/topoml-backend-x.so"], ["--bogus"]):
        r = run([TOOL] + args)
        check("usage %s" % args, r.returncode == 2, "status %d: %s" % (r.returncode, r.stderr))
    r = run([TOOL, "--help"])
    check("--help", r.returncode == 0 and "--certify" in r.stdout)
    quick = run([TOOL, "--list"]).stdout.split()
    full = run([TOOL, "--list", "--tier", "full"]).stdout.split()
    check("quick tier is part of the full tier", set(quick) < set(full),
          "%d quick, %d full" % (len(quick), len(full)))
    check("tiers are not empty", len(quick) >= 40 and len(full) > len(quick))
    return len(quick), len(full)


def test_reference_copies_pass(tmp):
    report, junit = conformance(["--plugin", SCALAR, "--plugin", plugin("scalar-copy")], 0, tmp,
                                "copies")
    for i, name in enumerate(("scalar", "scalar-copy")):
        p = report["plugins"][i]
        check("%s name" % name, p["name"] == name)
        check("%s verdict" % name, p["verdict"] == "pass", p["verdict"])
        bad = [c["name"] for c in p["cases"] if c["result"] != "PASS"]
        check("%s: every case PASS" % name, not bad, str(bad[:5]))
        check("%s file hash" % name, len(p["file_sha256"]) == 64)
    check("junit: two suites", len(junit.findall("testsuite")) == 2)


def test_wrong_plugins_are_refused(tmp):
    expect = {
        # plugin: (op that is wrong, result, words in the detail)
        "wrong-shifted-bar": ("rips", "FAIL", "bottleneck distance"),
        "wrong-missing-h1": ("rips", "FAIL", "H1:"),
        "wrong-edge-order": ("edges", "FAIL", "out of (d, i, j) order"),
        "wrong-crash": ("h0", "CRASH", "in: op h0"),
        "wrong-liar": ("rips", "FAIL", "it lied"),
    }
    for name, (op, result, words) in expect.items():
        report, _ = conformance(["--plugin", plugin(name)], 1, tmp, name)
        p = report["plugins"][0]
        check("%s verdict" % name, p["verdict"] == "fail")
        bad = [c for c in p["cases"] if c["result"] != "PASS"]
        # The long-lived checks ("all" ops in one process) refuse it too.
        check("%s: only %s cases are refused" % (name, op),
              all(c["op"] == op or c["name"] == "longlived/repeated-calls" for c in bad),
              str([c["name"] for c in bad if c["op"] != op][:5]))
        check("%s: the long-lived process refuses it too" % name,
              any(c["name"] == "longlived/repeated-calls" for c in bad))
        check("%s: refused as %s" % (name, result), bad and all(c["result"] == result for c in bad),
              str([(c["name"], c["result"]) for c in bad][:5]))
        cases_bad = [c for c in bad if c["name"] != "longlived/repeated-calls"]
        check("%s: says why" % name, cases_bad and words in cases_bad[0]["detail"],
              cases_bad[0]["detail"] if cases_bad else "")
    # One metric wrong: exactly the chebyshev distance cases fail.
    report, _ = conformance(["--plugin", plugin("wrong-metric")], 1, tmp, "wrong-metric")
    for c in report["plugins"][0]["cases"]:
        want = "FAIL" if c["op"] == "distances" and "/chebyshev/" in c["name"] else "PASS"
        check("wrong-metric %s" % c["name"], c["result"] == want, c["result"] + " " + c["detail"])
    # A hang is killed at the time limit.
    report, junit = conformance(["--plugin", plugin("wrong-hang"), "--case", "edges/uniform-d3/*",
                                 "--timeout", "1"], 1, tmp, "wrong-hang")
    r = results(report)
    check("wrong-hang: TIMEOUT", [c["result"] for c in r.values()] == ["TIMEOUT", "TIMEOUT"],
          str(r))
    check("wrong-hang: killed quickly", all(c["seconds"] < 5 for c in r.values()))
    check("wrong-hang: junit error", junit.find(".//error") is not None)
    # Hardware absent: every case NOT_SUPPORTED, and that is not a failure.
    report, junit = conformance(["--plugin", fault("probe-fails")], 0, tmp, "probe-fails")
    p = report["plugins"][0]
    check("probe-fails: all NOT_SUPPORTED", p["counts"]["NOT_SUPPORTED"] == len(p["cases"]))
    check("probe-fails: says why", "no widget" in p["cases"][0]["detail"])
    check("probe-fails: junit skipped", len(junit.findall(".//skipped")) == len(p["cases"]))
    # Not a plugin at all.
    garbage = os.path.join(A.build, "fault-plugins", "garbage", "topoml-backend-garbage.so")
    report, _ = conformance(["--plugin", garbage, "--case", "h0/*"], 1, tmp, "garbage")
    p = report["plugins"][0]
    check("garbage: not loaded", p["loaded"] is False and "cannot load" in (p["load_error"] or ""))
    check("garbage: every case FAIL", all(c["result"] == "FAIL" for c in p["cases"]))


def write_config(tmp, name, gate, cache, folder, extra=""):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write("gate: %s\ncache_dir: %s\nplugin_paths: [%s]\n%s" % (gate, cache, folder, extra))
    return path


def backend(cfg, name):
    r = run([CLI, "backends", "--json", "--config", cfg])
    check("backends --json", r.returncode == 0, r.stderr)
    for b in json.loads(r.stdout):
        if b["name"] == name and b["path"]:
            return b
    check("backend %s listed" % name, False)
    return {"gate": "?", "gate_reason": ""}


def test_certificates_and_the_gate(tmp):
    cache = os.path.join(tmp, "cache")
    folder = os.path.join(tmp, "plugins")
    os.mkdir(folder)
    so = os.path.join(folder, "topoml-backend-scalar-copy.so")
    shutil.copy(plugin("scalar-copy"), so)
    os.chmod(so, 0o755)
    strict = write_config(tmp, "strict.yaml", "strict", cache, folder)
    auto = write_config(tmp, "auto.yaml", "auto", cache, folder)
    b = backend(strict, "scalar-copy")
    check("strict, no certificate: disabled", b["gate"] == "disabled" and
          "not certified" in b["gate_reason"], str(b))

    r = run([TOOL, "--plugin", so, "--certify", "--cache-dir", cache])
    check("--certify scalar-copy", r.returncode == 0, r.stdout[-2000:] + r.stderr)
    certs = [f for f in os.listdir(cache) if f.endswith(".cert")]
    check("one certificate written", len(certs) == 1, str(certs))
    check("cache folder private", stat.S_IMODE(os.stat(cache).st_mode) == 0o700)
    cert = os.path.join(cache, certs[0])
    check("certificate private", stat.S_IMODE(os.stat(cert).st_mode) == 0o600)
    text = open(cert).read()
    for key in ("file_sha256=", "core_version=", "abi_version=1", "suite_version=", "tier=quick",
                "cpu_sha256=", "devices_sha256=", "verdict=pass", "checksum="):
        check("certificate has " + key, key in text)
    b = backend(strict, "scalar-copy")
    check("strict, certified: enabled", b["gate"] == "enabled" and
          "certified on" in b["gate_reason"] and "tier quick" in b["gate_reason"], str(b))
    text_out = run([CLI, "backends", "--config", strict]).stdout
    check("backends table says certified", "certified on" in text_out)

    # The plugin runs user work.
    points = os.path.join(tmp, "points.csv")
    with open(points, "w") as f:
        f.write("0 0\n3 4\n1 1\n")
    r = run([CLI, "distance", "--config", strict, "--backend", "scalar-copy", points])
    check("certified plugin runs", r.returncode == 0 and r.stdout.strip().startswith("5"),
          r.stdout + r.stderr)

    # A tampered certificate is refused, never trusted.
    with open(cert) as f:
        good = f.read()
    with open(cert, "w") as f:
        f.write(good.replace("tier=quick", "tier=full"))
    b = backend(strict, "scalar-copy")
    check("tampered certificate refused", b["gate"] == "disabled" and
          "certificate invalid" in b["gate_reason"], str(b))
    with open(cert, "w") as f:
        f.write(good)

    # The file changes: the certificate of its old content does not count
    # for the new one (certificates are kept per content).
    with open(so, "ab") as f:
        f.write(b"\0patched")
    b = backend(strict, "scalar-copy")
    check("changed file: strict disables", b["gate"] == "disabled" and
          "not certified" in b["gate_reason"], str(b))
    b = backend(auto, "scalar-copy")
    check("changed file: auto waits for first use", b["gate"] == "disabled" and
          "not certified" in b["gate_reason"] and "first use" in b["gate_reason"], str(b))
    # First use under auto certifies it again, in another process, says so
    # at warning level (the file changed since it was certified), and
    # nothing of that reaches stdout.
    ref = run([CLI, "distance", "--config", strict, points]).stdout
    r = run([CLI, "distance", "--config", auto, points])
    check("first use: same output", r.returncode == 0 and r.stdout == ref, r.stdout + r.stderr)
    check("first use: the re-certification is announced",
          "changed since it was certified" in r.stderr and "certifying backend 'scalar-copy' again"
          in r.stderr, r.stderr)
    b = backend(auto, "scalar-copy")
    check("first use: certified", b["gate"] == "enabled" and "certified on" in b["gate_reason"],
          str(b))
    b = backend(strict, "scalar-copy")
    check("re-certified file: strict enables", b["gate"] == "enabled", str(b))

    # Operator override.
    over = write_config(tmp, "over.yaml", "strict", os.path.join(tmp, "empty-cache"), folder,
                        "enable: [scalar-copy]\n")
    b = backend(over, "scalar-copy")
    check("enable: override", b["gate"] == "enabled" and
          b["gate_reason"] == "enabled by configuration, not certified", str(b))


def test_auto_gate_rejects_wrong_plugins(tmp):
    """Each wrong plugin, found under gate: auto, is certified on first use,
    fails, is rejected with its result code in the reason, and the host
    falls back to the reference with the right answer."""
    points = os.path.join(tmp, "circle.csv")
    with open(points, "w") as f:
        for k in range(12):
            import math
            f.write("%.6f %.6f\n" % (math.cos(k * 0.5236), math.sin(k * 0.5236)))
    want = run([CLI, "barcode", "--format", "point-cloud", "--dim", "1", points]).stdout
    codes = {"wrong-shifted-bar": "FAIL", "wrong-missing-h1": "FAIL", "wrong-edge-order": "FAIL",
             "wrong-metric": "FAIL", "wrong-crash": "CRASH", "wrong-hang": "TIMEOUT",
             "wrong-liar": "FAIL"}
    for name, code in codes.items():
        cache = os.path.join(tmp, "cache-" + name)
        folder = os.path.dirname(plugin(name))
        cfg = write_config(tmp, name + ".yaml", "auto", cache, folder)
        r = run([CLI, "barcode", "--config", cfg, "--format", "point-cloud", "--dim", "1",
                 points], timeout=300)
        check("%s: host still answers right" % name, r.returncode == 0 and r.stdout == want,
              r.stdout + r.stderr)
        b = backend(cfg, name)
        check("%s: rejected by the gate" % name, b["gate"] == "rejected" and
              "failed conformance (tier quick)" in b["gate_reason"] and code in b["gate_reason"],
              str(b))
        # The refusal names the first failing case and how it differed,
        # where the host waited for it (stderr) and in the listing.
        check("%s: the refusal names the failing case" % name,
              ("first failing case " in b["gate_reason"] and "(%s): " % code in b["gate_reason"]
               and "first failing case " in r.stderr), b["gate_reason"] + "\n" + r.stderr)
    # The correct copy is enabled the same way.
    cache = os.path.join(tmp, "cache-copy")
    cfg = write_config(tmp, "copy.yaml", "auto", cache, os.path.dirname(plugin("scalar-copy")))
    r = run([CLI, "barcode", "--config", cfg, "--format", "point-cloud", "--dim", "1", points])
    check("scalar-copy: same answer", r.returncode == 0 and r.stdout == want, r.stderr)
    b = backend(cfg, "scalar-copy")
    check("scalar-copy: enabled on first use", b["gate"] == "enabled" and
          "certified on" in b["gate_reason"], str(b))


def main():
    for path in (TOOL, SCALAR, plugin("scalar-copy")):
        if not os.path.exists(path):
            raise SystemExit("missing %s" % path)
    tmp = tempfile.mkdtemp(prefix="topoml-conf-")
    try:
        quick, full = test_usage()
        test_reference_copies_pass(tmp)
        test_wrong_plugins_are_refused(tmp)
        test_certificates_and_the_gate(tmp)
        test_auto_gate_rejects_wrong_plugins(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d quick cases, %d full cases" % (quick, full))
    if failures:
        print("%d checks failed" % len(failures))
        sys.exit(1)
    print("all checks passed")


main()
