"""`topoml backends` says where each backend's ops run, in text ("runs in:")
and in --json ("isolation": "host" or "process"), the two agreeing for every
backend listed: the built-in reference in the host; a plugin found outside
topoml's own folder in a helper process unless `isolation: none`; the
plugins shipped with topoml, found in its own folder, in the host unless
`isolation: process`."""
import json
import os
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


def backends(plugin_dir, config, json_out):
    env = dict(os.environ)
    env.pop("TOPOML_CONFIG", None)
    if plugin_dir:
        env["TOPOML_PLUGIN_PATH"] = plugin_dir
    else:
        env.pop("TOPOML_PLUGIN_PATH", None)
    cmd = [A.topoml, "backends", "--config", config] + (["--json"] if json_out else [])
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)


def text_modes(out):
    """{path ('libtopoml' for the built-in one): 'host' | 'process'} from
    the text listing."""
    modes, path = {}, None
    for line in out.splitlines():
        if line.startswith("  path:"):
            path = line.split(":", 1)[1].strip()
        elif line.startswith("  runs in:"):
            modes[path] = "process" if "helper process" in line else "host"
    return modes


found = os.path.join(A.build, "conformance-plugins", "scalar-copy")
with tempfile.TemporaryDirectory() as tmp:
    for isolation, want_found, want_shipped in (
            (None, "process", "host"), ("auto", "process", "host"),
            ("none", "host", "host"), ("process", "process", "process")):
        config = os.path.join(tmp, "c.yaml")
        with open(config, "w") as f:
            f.write("enable: [scalar-copy]\n")
            if isolation:
                f.write("isolation: %s\n" % isolation)
        tag = "isolation: %s" % (isolation or "(default)")
        for plugin_dir, name, want in ((found, "scalar-copy", want_found),
                                       (None, "threads", want_shipped)):
            j = backends(plugin_dir, config, True)
            t = backends(plugin_dir, config, False)
            check("%s: exit 0" % tag, j.returncode == 0 and t.returncode == 0, j.stderr + t.stderr)
            if j.returncode or t.returncode:
                continue
            listed = json.loads(j.stdout)
            by_path = {b["path"] or "libtopoml": b.get("isolation") for b in listed}
            check("%s: every backend has its mode in --json" % tag,
                  len(by_path) == len(listed) and
                  all(m in ("host", "process") for m in by_path.values()), j.stdout[:400])
            check("%s: text and --json agree" % tag, text_modes(t.stdout) == by_path,
                  "%r vs %r" % (text_modes(t.stdout), by_path))
            check("%s: the built-in reference runs in the host" % tag,
                  by_path.get("libtopoml") == "host", j.stdout[:400])
            mine = [b for b in listed if b["name"] == name and b["path"]]
            check("%s: %s is listed" % (tag, name), len(mine) == 1, j.stdout[:400])
            check("%s: %s runs in the %s" % (tag, name, want),
                  all(b["isolation"] == want for b in mine), "%r" % mine[:1])

print("%d failures" % len(failures))
sys.exit(1 if failures else 0)
