"""Settings that weaken the gate are said on every command, whether the
configuration comes from --config or from TOPOML_CONFIG: `verify: checks`,
`verify: off` and `enable: [...]` warn on stderr as `gate: off` does, and
the default configuration says none of it; stdout is the answer alone."""
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


with tempfile.TemporaryDirectory() as tmp:
    points = os.path.join(tmp, "p.csv")
    with open(points, "w") as f:
        f.write("0 0\n3 4\n1 1\n")
    env = dict(os.environ, XDG_CACHE_HOME=os.path.join(tmp, "cache"))
    env.pop("TOPOML_CONFIG", None)
    want = subprocess.run([A.topoml, "distance", points], capture_output=True, text=True,
                          env=env).stdout
    cases = [("verify: checks\n", "warning: verify: checks"),
             ("verify: off\n", "warning: verify: off"),
             ("enable: [threads, other]\n", "warning: enable: [threads, other]"),
             ("gate: \"off\"\n", "warning: gate is off")]
    for text, said in cases:
        cfg = os.path.join(tmp, "c.yaml")
        with open(cfg, "w") as f:
            f.write(text)
        for how in ("--config", "TOPOML_CONFIG"):
            for attempt in range(2):  # every command, not the first one only
                if how == "--config":
                    cmd, e = [A.topoml, "distance", "--config", cfg, points], env
                else:
                    cmd, e = [A.topoml, "distance", points], dict(env, TOPOML_CONFIG=cfg)
                r = subprocess.run(cmd, capture_output=True, text=True, env=e, timeout=120)
                check("%r via %s (run %d) warns" % (text, how, attempt + 1),
                      r.returncode == 0 and said in r.stderr and r.stdout == want,
                      r.stdout + r.stderr)
    r = subprocess.run([A.topoml, "distance", points], capture_output=True, text=True, env=env)
    check("the default says none of it",
          "verify:" not in r.stderr and "enable:" not in r.stderr, r.stderr)

print("%d failures" % len(failures))
sys.exit(1 if failures else 0)
