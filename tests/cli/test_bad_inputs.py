"""The bad-input matrix, against the real CLI: every malformed input in
every format it can be given in must end with exit status 1 (never a signal:
status > 128 or negative), a message on stderr naming the file, and nothing
printed as a barcode."""
import os
import struct
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import clitest as ct

a = ct.args()
rep = ct.Report()
tmp = tempfile.mkdtemp(prefix="topoml-bad-")


def dipha(n, values, magic=8067171840, kind=7, n_header=None):
    head = struct.pack("<qqq", magic, kind, n if n_header is None else n_header)
    return head + struct.pack("<%dd" % len(values), *values)


cases = {
    # name: (format, bytes, extra options)
    "nan_point": ("point-cloud", b"0,1\n1,nan\n", []),
    "inf_point": ("point-cloud", b"0,1\ninf,1\n", []),
    "ragged_rows": ("point-cloud", b"0,1\n1,2,3\n", []),
    "empty_points": ("point-cloud", b"", []),
    "blank_points": ("point-cloud", b"\n\n  \n", []),
    "word_in_points": ("point-cloud", b"0,1\n1,abc\n", []),
    "huge_dimension_garbage": ("point-cloud", b"1e999999,2\n", []),
    "negative_lower": ("lower-distance", b"\n1\n1,-2\n", []),
    "nan_lower": ("lower-distance", b"\n1\n1,nan\n", []),
    "not_triangular": ("lower-distance", b"1,2\n3,4\n", []),
    "empty_lower": ("lower-distance", b"", []),
    "garbage_lower": ("lower-distance", os.urandom(200), []),
    "negative_upper": ("upper-distance", b"1,2,-3\n", []),
    # Read as Ripser reads them (with a warning) unless --strict-symmetry.
    "asymmetric_full": ("distance", b"0,1\n2,0\n", ["--strict-symmetry"]),
    "nonzero_diagonal": ("distance", b"1,1\n1,0\n", ["--strict-symmetry"]),
    "ragged_full": ("distance", b"0,1,2\n1,0\n2,1,0\n", []),
    "not_square": ("distance", b"0,1\n1,0\n2,2\n", []),
    "lower_triangle_strict": ("distance", b"0\n1,0\n2,3,0\n", ["--strict-symmetry"]),
    # No format named: a layout that fits no matrix, a header, binary noise.
    "no_layout": ("auto", b"1 2\n3\n4 5 6\n", []),
    "header_unnamed": ("auto", b"x,y\n1,2\n3,4\n", []),
    "noise_unnamed": ("auto", b"\x01\x02\x00\x03" * 50, []),
    "points_unnamed": ("auto", b"1,-2,3\n4,5,6\n", []),
    "sparse_self_loop": ("sparse", b"0 0 1\n", []),
    "sparse_negative_index": ("sparse", b"-1 2 1\n", []),
    "sparse_conflict": ("sparse", b"0 1 1\n1 0 2\n", []),
    "sparse_nan": ("sparse", b"0 1 nan\n", []),
    "sparse_two_fields": ("sparse", b"0 1\n", []),
    "dipha_bad_magic": ("dipha", dipha(2, [0, 1, 1, 0], magic=1), []),
    "dipha_wrong_type": ("dipha", dipha(2, [0, 1, 1, 0], kind=1), []),
    "dipha_lying_size": ("dipha", dipha(2, [0, 1, 1, 0], n_header=1000), []),
    "dipha_overflow_size": ("dipha", dipha(2, [0, 1, 1, 0], n_header=2**62), []),
    "dipha_truncated": ("dipha", dipha(3, [0, 1, 1, 1, 0, 1, 1, 1, 0])[:-5], []),
    "dipha_asymmetric": ("dipha", dipha(2, [0, 1, 2, 0]), ["--strict-symmetry"]),
    "dipha_empty": ("dipha", b"", []),
    "binary_bad_size": ("binary", b"\x00\x00\x80\x3f\x00", []),
    "binary_not_triangular": ("binary", struct.pack("<2f", 1, 1), []),
    "binary_nan": ("binary", struct.pack("<3f", 1, float("nan"), 1), []),
    "binary_negative": ("binary", struct.pack("<3f", 1, -1, 1), []),
    # A perfectly good file under the wrong format flag.
    "csv_as_dipha": ("dipha", b"0,1\n1,0\n", []),
    "dipha_as_points": ("point-cloud", dipha(2, [0, 1, 1, 0]), []),
    # Limits: a memory limit smaller than the data; a modulus that is not prime.
    "over_memory_limit": ("point-cloud", b"".join(b"%d,%d\n" % (i, i * i) for i in range(10000)),
                          ["--max-memory", "64K"]),
}

tried = 0
for name, (fmt, data, extra) in sorted(cases.items()):
    path = os.path.join(tmp, name)
    with open(path, "wb") as f:
        f.write(data)
    for cmd in (["barcode", "--dim", "1"], ["edges", "--threshold", "10"]):
        r = ct.run([a.topoml] + cmd + ["--format", fmt] + extra + [path], check=False)
        tried += 1
        # The message is plain text even when the input is binary garbage.
        ok = r.returncode == 1 and name in r.stderr and "persistence intervals" not in r.stdout \
            and "Traceback" not in r.stderr and r.stderr.isascii()
        rep.check(ok, "%s %s: status %d, stderr %r" % (name, cmd[0], r.returncode,
                                                      r.stderr.strip()[:200]))
    # Distances read point clouds only.
    if fmt == "point-cloud":
        r = ct.run([a.topoml, "distance"] + extra + [path], check=False)
        tried += 1
        rep.check(r.returncode == 1 and name in r.stderr,
                  "%s distance: status %d %r" % (name, r.returncode, r.stderr[:200]))

# stdin: the message names it.
r = ct.run([a.topoml, "barcode", "--format", "point-cloud", "-"], stdin="0,1\n1,nan\n", check=False)
rep.check(r.returncode == 1 and "stdin" in r.stderr, "stdin: %d %r" % (r.returncode, r.stderr))
print("bad inputs tried: %d" % (tried + 1))
for f in os.listdir(tmp):
    os.unlink(os.path.join(tmp, f))
os.rmdir(tmp)
rep.finish()
