"""`topoml image` against numerical integration: every pixel of small images
is integrated with scipy.integrate.dblquad over the pixel's rectangle, larger
images are checked against the closed form with scipy.special.erf, and a
single point is checked by hand (the one-sigma pixel holds erf(1/sqrt2)^2 of
the mass). Also the output styles (JSON, CSV, PGM), batches of files, the
weights, infinite points, and the command's errors."""
import json
import math
import os
import random
import sys
import tempfile

import numpy as np
from scipy.integrate import dblquad
from scipy.special import erf

sys.path.insert(0, os.path.dirname(__file__))
import clitest as ct

a = ct.args()
rep = ct.Report()
rng = random.Random(11)
tmp = tempfile.mkdtemp()
INF = math.inf


def write(pairs, name, dim=1):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        for b, d in pairs:
            f.write("%d %r %s\n" % (dim, b, "inf" if math.isinf(d) else repr(d)))
    return path


def weight(p, spec):
    kind, _, arg = spec.partition(":")
    if kind == "linear":
        return min(p / float(arg), 1.0)
    if kind == "power":
        return p ** float(arg)
    return 1.0


def run_image(paths, sigma, w, h, br, pr, wspec="constant", infinite="drop", style="json"):
    cmd = [a.topoml, "image", "--sigma", repr(sigma), "--width", str(w), "--height", str(h),
           "--birth-range", "%r:%r" % br, "--pers-range", "%r:%r" % pr, "--weight", wspec,
           "--infinite", infinite, "--output", style] + paths
    return ct.run(cmd)


def points(pairs, infinite):
    out = []
    for b, d in pairs:
        if math.isinf(d):
            if infinite == "drop":
                continue
            d = float(infinite.split(":")[1])
        out.append((b, d - b))
    return out


def closed_form(pts, sigma, w, h, br, pr, wspec):
    xs = br[0] + np.arange(w + 1) * ((br[1] - br[0]) / w)
    ys = pr[0] + np.arange(h + 1) * ((pr[1] - pr[0]) / h)
    img = np.zeros((h, w))
    s = sigma * math.sqrt(2)
    for b, p in pts:
        ex = np.diff(erf((xs - b) / s))
        ey = np.diff(erf((ys - p) / s))
        img += weight(p, wspec) * 0.25 * np.outer(ey, ex)
    return img


def integrated(pts, sigma, w, h, br, pr, wspec):
    """Each pixel by adaptive quadrature of the weighted Gaussians."""
    db, dp = (br[1] - br[0]) / w, (pr[1] - pr[0]) / h
    norm = 1.0 / (2 * math.pi * sigma * sigma)

    def surface(y, x):
        return sum(weight(p, wspec) * norm * math.exp(-((x - b) ** 2 + (y - p) ** 2) / (2 * sigma * sigma))
                   for b, p in pts)

    img = np.zeros((h, w))
    for r in range(h):
        for c in range(w):
            x0, y0 = br[0] + c * db, pr[0] + r * dp
            img[r, c] = dblquad(surface, x0, x0 + db, y0, y0 + dp, epsabs=1e-13, epsrel=1e-11)[0]
    return img


# ---- a single point by hand ---------------------------------------------

path = write([(0.0, 1.0)], "one.txt")
r = run_image([path], 0.5, 1, 1, (-0.5, 0.5), (0.5, 1.5))
v = json.loads(r.stdout)["images"][0]["pixels"][0][0]
one_sigma = 0.68268949213708589717
rep.check(abs(v - one_sigma ** 2) <= 1e-15, "one-sigma pixel: %r" % v)

# ---- small images against dblquad ----------------------------------------

for trial, wspec in enumerate(["constant", "linear:1.5", "power:2", "constant"]):
    pairs = [(rng.uniform(0, 2), 0) for _ in range(3)]
    pairs = [(b, b + rng.uniform(0.1, 2)) for b, _ in pairs] + [(rng.uniform(0, 1), INF)]
    infinite = "clip:3" if trial % 2 else "drop"
    sigma = rng.uniform(0.15, 0.5)
    br, pr, w, h = (-0.25, 2.5), (0.0, 2.25), 5, 4
    path = write(pairs, "q%d.txt" % trial)
    got = np.array(json.loads(run_image([path], sigma, w, h, br, pr, wspec, infinite).stdout)
                   ["images"][0]["pixels"])
    want = integrated(points(pairs, infinite), sigma, w, h, br, pr, wspec)
    err = np.abs(got - want).max()
    rep.check(got.shape == (h, w) and err <= 1e-9, "dblquad trial %d (%s, %s): max diff %g"
              % (trial, wspec, infinite, err))

# ---- larger images against the closed form -------------------------------

for trial in range(6):
    pairs = [(rng.uniform(0, 5), 0) for _ in range(rng.randrange(0, 60))]
    pairs = [(b, b + rng.expovariate(1.0)) for b, _ in pairs]
    wspec = ["constant", "linear:2", "power:1.5"][trial % 3]
    sigma = rng.uniform(0.05, 0.6)
    w, h = rng.randrange(1, 60), rng.randrange(1, 60)
    br, pr = (-1.0, 6.0), (0.0, 4.0)
    path = write(pairs, "c%d.txt" % trial)
    got = np.array(json.loads(run_image([path], sigma, w, h, br, pr, wspec).stdout)
                   ["images"][0]["pixels"])
    want = closed_form(points(pairs, "drop"), sigma, w, h, br, pr, wspec)
    err = np.abs(got - want).max() if pairs else np.abs(got).max()
    rep.check(got.shape == (h, w) and err <= 1e-12 * max(1.0, np.abs(want).max()),
              "closed form trial %d (%d points, %dx%d): max diff %g" % (trial, len(pairs), w, h, err))

# ---- batches and output styles -------------------------------------------

p1 = write([(0.5, 1.5), (1.0, 1.25)], "b1.txt")
p2 = write([], "b2.txt")
p3 = write([(2.0, 3.75)], "b3.txt")
args = ([p1, p2, p3], 0.3, 6, 5, (0.0, 3.0), (0.0, 2.5))
js = json.loads(run_image(*args).stdout)
imgs = [np.array(im["pixels"]) for im in js["images"]]
rep.check([im["source"] for im in js["images"]] == [p1, p2, p3], "one image per file, in order")
rep.check(np.all(imgs[1] == 0), "an empty diagram gives an empty image")
alone = np.array(json.loads(run_image([p3], *args[1:]).stdout)["images"][0]["pixels"])
rep.check(np.array_equal(alone, imgs[2]), "images of a batch do not depend on each other")
csv = run_image(*args, style="csv").stdout.splitlines()
rep.check(len(csv) == 3 and all(len(l.split(",")) == 30 for l in csv), "CSV: a line per image")
rep.check(np.allclose(np.array([float(v) for v in csv[0].split(",")]).reshape(5, 6), imgs[0],
                      rtol=0, atol=0), "CSV holds the same numbers, row 0 first")
outp = os.path.join(tmp, "img.pgm")
ct.run([a.topoml, "image", "--sigma", "0.3", "--width", "6", "--height", "5", "--birth-range",
        "0:3", "--pers-range", "0:2.5", "--output", "pgm", "--output-file", outp, p3])
data = open(outp, "rb").read()
head = b"P5\n6 5\n255\n"
ok = data.startswith(head) and len(data) == len(head) + 30
if ok:
    pix = np.frombuffer(data[len(head):], dtype=np.uint8).reshape(5, 6)
    # The point (2, 3.75) has persistence 1.75: the second row from the top.
    ok = pix.max() == 255 and np.unravel_index(pix.argmax(), pix.shape)[0] == 1
rep.check(ok, "PGM: header, size, highest persistence at the top")

# Default ranges and sigma come from the data; the image holds most of the
# mass of each Gaussian.
js = json.loads(ct.run([a.topoml, "image", "-O", "json", "--width", "40", "--height", "40",
                        p1]).stdout)
total = np.array(js["images"][0]["pixels"]).sum()
rep.check(js["pers_range"][0] == 0 and 1.9 < total <= 2.0, "default ranges: mass %g" % total)

# ---- errors --------------------------------------------------------------

for bad in (["--sigma", "0"], ["--sigma", "nan"], ["--birth-range", "1:1"], ["--width", "0"],
            ["--weight", "linear:-1"], ["--infinite", "clip:x"], ["--output", "png"]):
    r = ct.run([a.topoml, "image"] + bad + [p1], check=False)
    rep.check(r.returncode == 2 and "Try 'topoml image --help'" in r.stderr,
              "usage error for %s: %d %r" % (bad, r.returncode, r.stderr))
broken = os.path.join(tmp, "broken.json")
with open(broken, "w") as f:
    f.write('{"dims":[{"dim":1,"intervals":[[0,1],[0 1]]}]}')
r = ct.run([a.topoml, "image", broken], check=False)
rep.check(r.returncode == 1 and "broken.json:1:41:" in r.stderr, "parse error: %r" % r.stderr)
r = ct.run([a.topoml, "image", "--infinite", "clip:0.1",
            write([(0.5, INF)], "clipbelow.txt")], check=False)
rep.check(r.returncode == 1 and "clip_death" in r.stderr, "clip below a birth: %r" % r.stderr)
r = ct.run([a.topoml, "image", "--backend", "no-such-backend", p1], check=False)
rep.check(r.returncode == 1 and "no-such-backend" in r.stderr, "unknown backend: %r" % r.stderr)
rep.finish()
