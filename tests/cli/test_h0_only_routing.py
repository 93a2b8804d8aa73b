"""A barcode of dimension 0 goes to a backend's h0 op when that backend
offers no rips op (docs/embedding.md, "Choosing a backend"): with the test
plugin h0-only (the scalar reference's h0 op alone,
tests/conformance_plugins/wrong.c), `topoml barcode --dim 0` runs on it when
it is named or first in `prefer`, and prints exactly the built-in
reference's bars (Ripser's text and JSON); --dim 1 goes past it to a rips
backend, and is refused when it is named. (Before, `prefer` passed over an
h0-only plugin for a dimension-0 barcode.)"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import clitest as ct

a = ct.args()
rep = ct.Report()
plugin_dir = os.path.abspath(os.path.join(a.build, "conformance-plugins", "h0-only"))
if not os.path.exists(os.path.join(plugin_dir, "topoml-backend-h0-only.so")):
    raise SystemExit("test_h0_only_routing: %s has no topoml-backend-h0-only.so" % plugin_dir)
tmp = tempfile.mkdtemp(prefix="topoml-h0-only-")
env = dict(os.environ, TOPOML_PLUGIN_PATH=plugin_dir, XDG_CACHE_HOME=os.path.join(tmp, "cache"))
env.pop("TOPOML_CONFIG", None)


def config(name, text):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write('gate: "off"\n' + text)
    return path


def run(args):
    import subprocess
    return subprocess.run([a.topoml] + args, capture_output=True, text=True, env=env, timeout=300)


def ran_on(r):
    for ln in r.stderr.splitlines():
        if ln.startswith("topoml: ran on backend '"):
            return ln.split("'")[1]
    return None


inputs = [["--format", "lower-distance", os.path.join(a.data, "random16.lower_distance_matrix")],
          ["--format", "lower-distance", os.path.join(a.data, "sphere_3_192.lower_distance_matrix")],
          ["--format", "lower-distance", "--threshold", "50",
           os.path.join(a.data, "random20.lower_distance_matrix")],
          ["--format", "point-cloud", "--threshold", "1.8", os.path.join(a.data, "o3_1024.txt")]]
plain = config("plain.yaml", "")
prefer = config("prefer.yaml", "prefer: [h0-only, scalar]\n")
for inp in inputs:
    what = os.path.basename(inp[-1])
    ref = run(["barcode", "--backend", "scalar", "--dim", "0"] + inp)
    rep.check(ref.returncode == 0 and "persistence intervals in dim 0" in ref.stdout,
              "%s: the reference runs: %s" % (what, ref.stderr[-300:]))
    for how, args in (("named", ["--config", plain, "--backend", "h0-only"]),
                      ("first in prefer", ["--config", prefer])):
        r = run(["barcode", "--verbose", "--dim", "0"] + args + inp)
        rep.check(r.returncode == 0 and ran_on(r) == "h0-only",
                  "%s, %s: ran on %r: %s" % (what, how, ran_on(r), r.stderr[-400:]))
        rep.check(r.stdout == ref.stdout, "%s, %s: the reference's bars, byte for byte" %
                  (what, how))
        j = run(["barcode", "--verbose", "--dim", "0", "--output", "json"] + args + inp)
        jr = run(["barcode", "--backend", "scalar", "--dim", "0", "--output", "json"] + inp)
        rep.check(j.returncode == 0 and ran_on(j) == "h0-only" and j.stdout == jr.stdout,
                  "%s, %s: --output json the same: %s" % (what, how, j.stderr[-300:]))
    # Dimension 1 needs rips: never the h0-only plugin, which the choice passes over.
    r = run(["barcode", "--verbose", "--dim", "1", "--config", prefer] + inp)
    rep.check(r.returncode == 0 and ran_on(r) not in (None, "h0-only"),
              "%s: --dim 1 on %r" % (what, ran_on(r)))
    r = run(["barcode", "--dim", "1", "--config", plain, "--backend", "h0-only"] + inp)
    rep.check(r.returncode == 1 and "h0-only" in r.stderr,
              "%s: --dim 1 named h0-only is refused: %r" % (what, r.stderr[-300:]))
rep.finish()
