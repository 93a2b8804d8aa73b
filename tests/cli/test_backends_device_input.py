"""`topoml backends` says which ops take input in device memory: a
capability record with TOPOML_CAP_DEVICE_INPUT is marked `device-input` in
the text and `"device_input": true` in the JSON, and no other record is.
The fake-device plugin of the tests (tests/device_plugin) claims rips on
points in device memory; the built-in scalar reference claims nothing."""
import json
import subprocess
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import clitest as ct

a = ct.args()
rep = ct.Report()
folder = os.path.abspath(os.path.join(a.build, "device-plugin"))
if not os.path.exists(os.path.join(folder, "topoml-backend-fake-device.so")):
    raise SystemExit("FAILED: the fake-device plugin is not built in %s" % folder)
env = dict(os.environ, TOPOML_PLUGIN_PATH=folder, TOPOML_CONFIG="")



r = subprocess.run([a.topoml, "backends", "--json"], env=env, capture_output=True, text=True)
rep.check(r.returncode == 0, "backends --json exits 0: %s" % r.stderr)
backends = {b["name"]: b for b in json.loads(r.stdout)}
rep.check("fake-device" in backends and "scalar" in backends,
          "both backends listed: %s" % sorted(backends))
for name in ("fake-device", "scalar"):
    for c in backends.get(name, {}).get("capabilities", []):
        want = name == "fake-device" and c["op"] == "rips" and c["inputs"] == ["points"]
        rep.check(c.get("device_input") is want,
                  "%s %s %s: device_input %r" % (name, c["op"], c["inputs"], c.get("device_input")))
claims = [c for c in backends["fake-device"]["capabilities"] if c.get("device_input")]
rep.check(len(claims) == 1, "fake-device claims device input once: %d" % len(claims))

r = subprocess.run([a.topoml, "backends"], env=env, capture_output=True, text=True)
lines = r.stdout.splitlines()
start = lines.index("fake-device") + 1 if "fake-device" in lines else len(lines)
end = start
while end < len(lines) and lines[end].startswith("  "):
    end += 1
marked = [line for line in lines[start:end] if "device-input" in line]
rep.check(len(marked) == 1 and "op rips" in marked[0] and "inputs=points " in marked[0],
          "text marks one record, rips on points: %r" % marked)
rep.finish()
