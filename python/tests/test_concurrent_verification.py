"""Run-time verification of calls made at the same time from several
threads, each with its own context: no check may read another thread's
state (a comparator's shared pointer once made the exact H0 check see
another call's edges, revoking a right plugin)."""
import os
import subprocess
import sys

CODE = """
import threading, numpy as np, topoml
rng = np.random.default_rng(9)
clouds = [rng.uniform(-1, 1, (60, 3)) for _ in range(8)]
def work(k):
    for _ in range(3):
        topoml.barcodes(clouds[k], maxdim=2, progress=False)
ts = [threading.Thread(target=work, args=(k,)) for k in range(8)]
[t.start() for t in ts]
[t.join() for t in ts]
print("done")
"""


def test_concurrent_calls_are_verified_without_false_alarms(tmp_path):
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path))
    for _ in range(3):
        r = subprocess.run([sys.executable, "-c", CODE], env=env, capture_output=True,
                           text=True, timeout=600)
        assert r.returncode == 0, r.stderr
        assert "wrong" not in r.stderr, r.stderr
        assert not (tmp_path / "topoml" / "revoked").exists(), \
            (tmp_path / "topoml" / "revoked").read_text()
