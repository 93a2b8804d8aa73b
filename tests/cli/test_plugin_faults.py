"""Plugins that misbehave, run through the real `topoml`.

Before any gate decision: a constructor that crashes, a constructor that
calls _exit(0), a probe that crashes. Each is found on the plugin path and
must leave every command working — `topoml backends` (listing it as
rejected, with the reason), the default choice, `--backend scalar`,
`gate: strict`, `disable: [name]` — with the right answer on stdout, exit 0,
and never a signal; naming the plugin with --backend is an error (exit 1),
not a crash or a silent success.

Inside an op: a plugin that writes to stdout, crashes, calls exit(0) or
never returns for more than 150 points. Under the default configuration,
with and without --backend, it is kept from the user — refused by the
certification on first use, or run in its own process (topoml does not
ship it) where its failure makes the reference answer — and topoml is
never killed: exit 0 with a right answer and a warning naming the plugin,
or, when the plugin was named and refused, exit 1 and nothing on stdout.
With `enable: [name]` (no certification) the isolated process is what
keeps it out. The runaway one gets `isolation_timeout: 2` (the default
deadline is 600 s)."""
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
    op_faults(tmp)
    if failures:
        print("%d failures" % len(failures))
        sys.exit(1)
    print("ok: %d fault plugins x %d configurations, %d faults in ops" %
          (len(FAULTS), 5, len(OP_FAULTS)))


OP_FAULTS = {
    "op-stdout": ("fault-op-stdout", "bytes to standard output"),
    "op-crash": ("fault-op-crash", "died of signal"),
    "op-exit": ("fault-op-exit", "exited with status 0"),
    "op-runaway": ("fault-op-runaway", "did not finish within 2 s"),
}


def same_numbers(a, b, tol=1e-12):
    """Distance outputs equal up to rounding (another certified backend may
    sum in another order)."""
    la, lb = a.splitlines(), b.splitlines()
    if len(la) != len(lb):
        return False
    for x, y in zip(la, lb):
        vx = [float(v) for v in x.split(",") if v]
        vy = [float(v) for v in y.split(",") if v]
        if len(vx) != len(vy) or any(abs(p - q) > tol * max(1.0, abs(p)) for p, q in zip(vx, vy)):
            return False
    return True


def op_faults(tmp):
    """Each op fault must be kept from the user: either the gate refuses it
    (certification on first use finds it) or its process fails and the
    reference answers. `enable: [name]` skips certification, so that run
    always goes through the isolated process."""
    import random
    rng = random.Random(5)
    big = os.path.join(tmp, "cloud200.txt")
    with open(big, "w") as f:
        for _ in range(200):
            f.write("%.6f %.6f\n" % (rng.random(), rng.random()))
    env_cache = tempfile.mkdtemp(prefix="topoml-faults-cache-")
    os.environ["XDG_CACHE_HOME"] = env_cache  # certification on first use writes here
    ref = topoml(["distance", big, "--backend", "scalar"], "/nonexistent")
    check("reference distances", ref.returncode == 0, ref.stderr)
    for folder, (name, what) in OP_FAULTS.items():
        pdir = os.path.join(A.build, "fault-plugins", folder)
        timeout = "isolation_timeout: 2\n" if folder == "op-runaway" else ""
        configs = {}
        for tag, text in (("default", timeout), ("enable", "enable: [%s]\n" % name + timeout)):
            configs[tag] = os.path.join(tmp, "%s-%s.yaml" % (folder, tag))
            with open(configs[tag], "w") as f:
                f.write(text)
        for tag, cfg in configs.items():
            for extra in ([], ["--backend", name]):
                where = "%s/%s %s" % (folder, tag, extra)
                r = topoml(["distance", big] + extra, pdir, cfg)
                check(where + ": not killed", r.returncode in (0, 1),
                      "%d %s" % (r.returncode, r.stderr[-800:]))
                # Under AddressSanitizer a crash is an exit with status 1.
                isolated = "scalar reference" in r.stderr and (
                    what in r.stderr or (folder == "op-crash" and "exited with status" in r.stderr))
                if r.returncode == 0:
                    check(where + ": stdout is a right answer", same_numbers(r.stdout, ref.stdout),
                          "%d bytes vs %d" % (len(r.stdout), len(ref.stdout)))
                    check(where + ": kept from the user with a warning naming it",
                          name in r.stderr and (isolated or "conformance" in r.stderr),
                          r.stderr[-800:])
                else:
                    check(where + ": refused by name, nothing on stdout",
                          extra and r.stdout == "" and name in r.stderr, r.stderr[-800:])
                if tag == "enable":
                    check(where + ": enabled without certification, so isolated",
                          r.returncode == 0 and isolated, r.stderr[-800:])


main()
