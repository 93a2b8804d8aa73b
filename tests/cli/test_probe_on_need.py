"""The CLI probes plugins only when a command needs them (docs/architecture.md,
"Loading a plugin"): with a plugin whose probe is slow on the plugin path,
a command that runs on the scalar reference (`--backend scalar`, `prefer:
[scalar]` in the configuration) or needs no backend at all (features,
compare) starts no probe process, and gives the same output as with no
plugin at all; naming a plugin (`--backend NAME`, `prefer: [NAME, ...]`)
probes the file named for it (topoml-backend-NAME.so) and no other, unless
no such file gives that name; the automatic choice, an unknown name and
`topoml backends` (text and JSON) probe every plugin, and list it as
probed.

The fault plugins append a line to TOPOML_TEST_PROBE_LOG whenever their
probe runs: the test reads that, never the wall time."""
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

import clitest

A = clitest.args()
failures = []


def check(what, ok, detail=""):
    if not ok:
        failures.append(what)
        print("FAIL: %s %s" % (what, detail))


slow = os.path.join(A.build, "fault-plugins", "probe-slow")
accel = os.path.join(A.build, "fault-plugins", "accel")


def run(args, plugin_path, log, stdin=None):
    env = dict(os.environ, TOPOML_TEST_PROBE_LOG=log, TOPOML_TEST_PROBE_MS="200")
    env.pop("TOPOML_CONFIG", None)
    env["TOPOML_PLUGIN_PATH"] = plugin_path
    return subprocess.run([A.topoml] + args, capture_output=True, text=True, env=env,
                          input=stdin, timeout=300)


def probes(log):
    """The names of the plugins whose probe ran, one per run."""
    if not os.path.exists(log):
        return []
    with open(log) as f:
        return sorted(line.split()[0] for line in f if line.strip())


with tempfile.TemporaryDirectory() as tmp:
    empty = os.path.join(tmp, "empty")
    os.mkdir(empty, 0o700)
    rng = random.Random(19)
    cloud = os.path.join(tmp, "cloud.txt")
    with open(cloud, "w") as f:
        for _ in range(60):
            f.write("%.17g %.17g %.17g\n" % (rng.random(), rng.random(), rng.random()))
    prefer = os.path.join(tmp, "prefer.yaml")
    with open(prefer, "w") as f:
        f.write("prefer: [scalar, fault-accel]\ngate: strict\n")
    strict = os.path.join(tmp, "strict.yaml")
    with open(strict, "w") as f:
        f.write("gate: strict\n")
    prefer_accel = os.path.join(tmp, "prefer-accel.yaml")
    with open(prefer_accel, "w") as f:
        f.write("prefer: [fault-accel, scalar]\ngate: strict\n")
    diagram = os.path.join(tmp, "d.json")
    r = run(["barcode", "--format", "point-cloud", "--output", "json", "-o", diagram, cloud],
            empty, os.path.join(tmp, "unused.log"))
    check("a diagram to read", r.returncode == 0, r.stderr)
    plugins = slow + ":" + accel

    # Commands that never need a plugin: no probe, and the output of a run
    # with no plugin at all.
    on_reference = [
        ("barcode --backend scalar", ["barcode", "--backend", "scalar", "--format",
                                      "point-cloud", "--dim", "2", cloud]),
        ("barcode, prefer: [scalar]", ["barcode", "--config", prefer, "--format",
                                       "point-cloud", cloud]),
        ("distance --backend scalar", ["distance", "--backend", "scalar", cloud]),
        ("edges --backend scalar", ["edges", "--backend", "scalar", "--format", "point-cloud",
                                    "--threshold", "0.3", cloud]),
        ("features", ["features", diagram]),
        ("compare", ["compare", diagram, diagram]),
    ]
    for k, (what, args) in enumerate(on_reference):
        log = os.path.join(tmp, "ref%d.log" % k)
        with_plugins = run(args, plugins, log)
        alone = run(args, empty, os.path.join(tmp, "alone%d.log" % k))
        check(what + ": runs", with_plugins.returncode == 0, with_plugins.stderr)
        check(what + ": no probe ran", probes(log) == [], str(probes(log)))
        check(what + ": same output as with no plugin",
              with_plugins.stdout == alone.stdout and with_plugins.stdout, what)

    # Commands that need to know the plugins probe each of them, once.
    needs = [
        ("barcode (automatic choice)", ["barcode", "--config", strict, "--format",
                                        "point-cloud", cloud]),
        ("distance (automatic choice)", ["distance", "--config", strict, cloud]),
        ("distance --backend no-such", ["distance", "--config", strict, "--backend",
                                        "no-such", cloud]),
        ("backends", ["backends", "--config", strict]),
        ("backends --json", ["backends", "--config", strict, "--json"]),
    ]
    for k, (what, args) in enumerate(needs):
        log = os.path.join(tmp, "need%d.log" % k)
        r = run(args, plugins, log)
        if "no-such" in args:
            # The same refusal as ever, naming what was found.
            check(what + ": refused", r.returncode != 0 and
                  "no backend is named 'no-such'" in r.stderr and "fault-accel" in r.stderr and
                  "fault-probe-slow" in r.stderr, r.stderr)
        else:
            check(what + ": runs", r.returncode == 0, r.stderr)
        check(what + ": every plugin probed once",
              probes(log) == ["fault-accel", "fault-probe-slow"], str(probes(log)))
        if what == "backends":
            check(what + ": lists the plugin as probed",
                  "fault-probe-slow" in r.stdout and "probe:    ok" in r.stdout, r.stdout)
        if what == "backends --json":
            listed = json.loads(r.stdout)
            entries = listed if isinstance(listed, list) else listed.get("backends", [])
            names = [b.get("name") for b in entries]
            check(what + ": lists the plugins", "fault-probe-slow" in names and
                  "fault-accel" in names, str(names))

    # Naming a plugin probes the file named for it, and no other.
    named = [
        ("distance --backend fault-accel", ["distance", "--config", strict, "--backend",
                                            "fault-accel", cloud]),
        ("barcode, prefer: [fault-accel, scalar]", ["barcode", "--config", prefer_accel,
                                                    "--format", "point-cloud", cloud]),
    ]
    for k, (what, args) in enumerate(named):
        log = os.path.join(tmp, "named%d.log" % k)
        r = run(args, plugins, log)
        if "--backend" in args:
            # Disabled under gate: strict: refused by name, after its probe.
            check(what + ": refused", r.returncode != 0 and
                  "backend 'fault-accel' is not enabled" in r.stderr, r.stderr)
        else:
            alone = run(args, empty, os.path.join(tmp, "named-alone%d.log" % k))
            check(what + ": runs on the reference", r.returncode == 0 and
                  r.stdout == alone.stdout, r.stderr)
        check(what + ": only its file probed", probes(log) == ["fault-accel"], str(probes(log)))

    # A file named unlike the backend it holds is still found by that name,
    # after every file is probed; its file name is no backend's.
    renamed = os.path.join(tmp, "renamed")
    os.mkdir(renamed, 0o700)
    shutil.copy(os.path.join(accel, "topoml-backend-fault-accel.so"),
                os.path.join(renamed, "topoml-backend-renamed.so"))
    os.chmod(os.path.join(renamed, "topoml-backend-renamed.so"), 0o700)
    for name, found in (("fault-accel", True), ("renamed", False)):
        log = os.path.join(tmp, "renamed-%s.log" % name)
        r = run(["distance", "--config", strict, "--backend", name, cloud],
                slow + ":" + renamed, log)
        want = ("backend 'fault-accel' is not enabled" if found else
                "no backend is named 'renamed'")
        check("renamed file, --backend %s: %s" % (name, want),
              r.returncode != 0 and want in r.stderr, r.stderr)
        check("renamed file, --backend %s: every plugin probed" % name,
              probes(log) == ["fault-accel", "fault-probe-slow"], str(probes(log)))

if failures:
    print("%d failure(s)" % len(failures))
    sys.exit(1)
print("ok")
