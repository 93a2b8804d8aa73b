"""Plugins that misbehave before any gate decision, run through the real
`topoml`: a constructor that crashes, a constructor that calls _exit(0), a
probe that crashes. Each is found on the plugin path and must leave every
command working — `topoml backends` (listing it as rejected, with the
reason), the default choice, `--backend scalar`, `gate: strict`,
`disable: [name]` — with the right answer on stdout, exit 0, and never a
signal; naming the plugin with --backend is an error (exit 1), not a crash
or a silent success."""
import json
import os
import sys
import tempfile

import clitest

A = clitest.args()
CLI = A.topoml
failures = []

FAULTS = {
    "ctor-crash": ("fault-ctor-crash", "load (constructors) and negotiate"),
    "ctor-exit": ("fault-ctor-exit", "load (constructors) and negotiate"),
    "probe-crash": ("fault-probe-crash", "create, probe, capabilities"),
}
CLOUD = "0 0\n3 4\n6 8\n0 8\n"
WANT_DISTANCES = "\n5\n10,5\n8,5,6\n"


def check(what, ok, detail=""):
    if not ok:
        failures.append("%s %s" % (what, detail))
        print("FAIL: %s %s" % (what, detail))


def topoml(args, plugin_dir, config=None, stdin=None):
    env = dict(os.environ, TOPOML_PLUGIN_PATH=plugin_dir)
    env.pop("TOPOML_CONFIG", None)
    cmd = [CLI] + args
    if config is not None:
        cmd += ["--config", config]
    import subprocess
    return subprocess.run(cmd, capture_output=True, text=True, input=stdin, env=env,
                          timeout=120, errors="replace")


def main():
    tmp = tempfile.mkdtemp(prefix="topoml-faults-")
    cloud = os.path.join(tmp, "cloud.txt")
    with open(cloud, "w") as f:
        f.write(CLOUD)
    for folder, (name, stage) in FAULTS.items():
        pdir = os.path.join(A.build, "fault-plugins", folder)
        configs = {"default": None}
        for tag, text in (("strict", "gate: strict\n"), ("disable", "disable: [%s]\n" % name),
                          ("enable", "enable: [%s]\n" % name), ("off", 'gate: "off"\n')):
            path = os.path.join(tmp, "%s-%s.yaml" % (folder, tag))
            with open(path, "w") as f:
                f.write(text)
            configs[tag] = path
        for tag, cfg in configs.items():
            where = "%s/%s" % (folder, tag)
            r = topoml(["backends", "--json"], pdir, cfg)
            check(where + ": backends exit 0", r.returncode == 0, "%d %s" % (r.returncode, r.stderr))
            if r.returncode == 0:
                listed = [b for b in json.loads(r.stdout)
                          if b["path"] and b["path"].startswith(pdir)]
                check(where + ": listed once", len(listed) == 1, r.stdout[:500])
                if listed:
                    b = listed[0]
                    check(where + ": rejected", b["gate"] == "rejected", b["gate"])
                    check(where + ": reason names the probe process and stage",
                          "probe process" in b["gate_reason"] and stage in b["gate_reason"],
                          b["gate_reason"])
            r = topoml(["backends"], pdir, cfg)
            check(where + ": backends text exit 0", r.returncode == 0, r.stderr)
            check(where + ": warning on stderr", "rejected" in r.stderr and "probe process" in r.stderr,
                  r.stderr)
            for extra in ([], ["--backend", "scalar"]):
                r = topoml(["distance", cloud] + extra, pdir, cfg)
                check(where + ": distance %s" % extra, r.returncode == 0 and r.stdout == WANT_DISTANCES,
                      "%d %r %s" % (r.returncode, r.stdout, r.stderr))
                r = topoml(["barcode", "--format", "point-cloud", cloud] + extra, pdir, cfg)
                check(where + ": barcode %s" % extra,
                      r.returncode == 0 and "persistence intervals in dim 0" in r.stdout,
                      "%d %s" % (r.returncode, r.stderr))
            r = topoml(["distance", cloud, "--backend", name], pdir, cfg)
            check(where + ": --backend %s is an error" % name,
                  r.returncode == 1 and r.stdout == "" and name in r.stderr,
                  "%d %r %s" % (r.returncode, r.stdout, r.stderr))
    if failures:
        print("%d failures" % len(failures))
        sys.exit(1)
    print("ok: %d fault plugins x %d configurations" % (len(FAULTS), 5))


main()
