"""NumPy .npy through the real CLI, checked with numpy itself: point clouds
read from .npy (float64 and float32, C and Fortran order, with or without
--format: the magic number tells it) give the barcode and the distances of
the same points as text; `distance --output npy` and `edges --output npy`
write arrays numpy loads, equal to the text output; bad .npy files are
refused naming the file and the reason."""
import os
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import clitest as ct
import numpy as np

a = ct.args()
rep = ct.Report()
T = a.topoml
tmp = tempfile.mkdtemp(prefix="topoml-npy-")
rng = np.random.default_rng(3)
pts = rng.uniform(-1, 1, size=(40, 3))
txt = os.path.join(tmp, "pts.txt")
np.savetxt(txt, pts, fmt="%.17g")


def path(name):
    return os.path.join(tmp, name)


ref_bars = ct.run([T, "barcode", "--quiet", "--format", "point-cloud", "--dim", "2", txt]).stdout
ref_bars = ref_bars.split("\n", 1)[1]  # the header line names the format
variants = {
    "c64.npy": pts, "f64.npy": np.asfortranarray(pts),
    "c32.npy": pts.astype(np.float32), "f32.npy": np.asfortranarray(pts.astype(np.float32)),
}
for name, arr in variants.items():
    np.save(path(name), arr)
    for fmt in (["--format", "npy"], []):
        r = ct.run([T, "barcode", "--quiet", "--dim", "2"] + fmt + [path(name)])
        if arr.dtype == np.float64:
            rep.check(r.stdout.split("\n", 1)[1] == ref_bars, "%s %s: barcode differs" % (name, fmt))
        else:
            # float32 coordinates: the text of the same rounded points.
            t32 = path(name + ".txt")
            np.savetxt(t32, arr.astype(np.float64), fmt="%.17g")
            want = ct.run([T, "barcode", "--quiet", "--format", "point", "--dim", "2", t32]).stdout
            rep.check(r.stdout.split("\n", 1)[1] == want.split("\n", 1)[1],
                      "%s %s: barcode differs" % (name, fmt))

# distance: text and npy agree; numpy reads the npy.
for dtype, np_dtype in (("f64", np.float64), ("f32", np.float32)):
    out = path("d_%s.npy" % dtype)
    ct.run([T, "distance", "--format", "npy", "--dtype", dtype, "--output", "npy", "-o", out,
            path("c64.npy")])
    got = np.load(out)
    text = ct.run([T, "distance", "--dtype", dtype, txt]).stdout.split()
    want = np.array([float(v) for line in text for v in line.split(",")], dtype=np_dtype)
    rep.check(got.dtype == np_dtype and got.shape == (40 * 39 // 2,) and np.array_equal(got, want),
              "distance --dtype %s --output npy: %s %s" % (dtype, got.dtype, got.shape))
D = np.zeros((40, 40))
D[np.tril_indices(40, -1)] = np.load(path("d_f64.npy"))
D += D.T
rep.check(np.allclose(D, np.sqrt(((pts[:, None] - pts[None]) ** 2).sum(-1)), rtol=1e-15, atol=1e-15),
          "the documented numpy recipe does not give the distance matrix")

# edges: a structured array equal to the text lines.
out = path("e.npy")
ct.run([T, "edges", "--format", "point-cloud", "--threshold", "0.8", "--output", "npy", "-o", out,
        txt])
e = np.load(out)
lines = ct.run([T, "edges", "--format", "point-cloud", "--threshold", "0.8", txt]).stdout.split("\n")
lines = [ln.split() for ln in lines if ln]
rep.check(e.dtype.names == ("i", "j", "d") and len(e) == len(lines) > 0 and
          all(int(x[0]) == r["i"] and int(x[1]) == r["j"] and float(x[2]) == r["d"]
              for x, r in zip(lines, e)), "edges --output npy: %r" % (e[:3],))

# Bad files.
def raw(header, data=b""):
    h = header.encode()
    pad = (64 - (10 + len(h) + 1) % 64) % 64
    h = h + b" " * pad + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h + data


good = "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }"
bad = {
    "big_endian": (raw("{'descr': '>f8', 'fortran_order': False, 'shape': (2, 2), }",
                       b"\0" * 32), "dtype '>f8'"),
    "ints": (raw("{'descr': '<i8', 'fortran_order': False, 'shape': (2, 2), }", b"\0" * 32),
             "dtype '<i8'"),
    "one_d": (raw("{'descr': '<f8', 'fortran_order': False, 'shape': (4,), }", b"\0" * 32),
              "a 2-D array"),
    "three_d": (raw("{'descr': '<f8', 'fortran_order': False, 'shape': (1, 2, 2), }", b"\0" * 32),
                "a 2-D array"),
    "short": (raw(good, b"\0" * 24), "but it has"),
    "long": (raw(good, b"\0" * 40), "but it has"),
    "nan": (raw(good, struct.pack("<4d", 0, 1, float("nan"), 2)), "is NaN"),
    "empty_shape": (raw("{'descr': '<f8', 'fortran_order': False, 'shape': (0, 2), }"), "no points"),
    "version9": (b"\x93NUMPY\x09\x00" + b"\0" * 60, "version 9.0"),
}
for name, (data, why) in bad.items():
    with open(path(name), "wb") as f:
        f.write(data)
    for fmt in (["--format", "npy"], []):
        r = ct.run([T, "barcode", "--quiet"] + fmt + [path(name)], check=False)
        rep.check(r.returncode == 1 and name in r.stderr and why in r.stderr and r.stdout == "",
                  "%s %s: %d %r" % (name, fmt, r.returncode, r.stderr))
# From a pipe (no size, no seeking): told by its magic and read.
with open(path("c64.npy"), "rb") as f:
    good_bytes = f.read()
r = subprocess.run([T, "barcode", "--quiet", "--dim", "2", "-"], input=good_bytes,
                   capture_output=True, timeout=120)
rep.check(r.returncode == 0 and r.stdout.decode().split("\n", 1)[1] == ref_bars,
          "npy from stdin: %d %r" % (r.returncode, r.stderr))
for f in os.listdir(tmp):
    os.unlink(os.path.join(tmp, f))
os.rmdir(tmp)
rep.finish()
