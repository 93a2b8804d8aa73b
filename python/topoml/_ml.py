"""What topoml.torch and topoml.tensorflow share: Vietoris-Rips barcodes
with their generators (the edges that give each birth and death value) on
host arrays, and the topology signatures of one point cloud.

Not here: anything that imports a framework (topoml.torch,
topoml.tensorflow).
"""
import math
import os
import threading

import numpy as np

from . import _context, _inputs, _rips, features

_EUCLIDEAN = 0


def condensed_lower(D):
    """The strict lower triangle of a square matrix in Ripser's order
    ((1,0), (2,0), (2,1), (3,0), ...): the entries the engine reads."""
    D = np.asarray(D, dtype=np.float64)
    if D.ndim != 2 or D.shape[0] != D.shape[1]:
        raise ValueError("topoml: a distance matrix must be square, got shape %r" % (D.shape,))
    return np.ascontiguousarray(D[np.tril_indices(D.shape[0], -1)])


def rips_with_generators(X, maxdim=1, threshold=math.inf, distance_matrix=False):
    """(dims, gens, dgms) for the point cloud X (n, d, Euclidean) or the
    distance matrix X (n, n; its strict lower triangle is read).

    dims: (m,) int64, the dimension of each interval, ascending;
    gens: (m, 4) int64, the birth edge (i, j) and the death edge (i, j) of
    each interval, -1 where there is none (births in dimension 0, infinite
    deaths); dgms: the diagrams, a (k, 2) array per dimension. The values
    themselves are the lengths of these edges; the
    frameworks recompute them on the tensor's device, so that they carry
    gradients."""
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError("topoml: expected a 2-d array, got shape %r" % (X.shape,))
    if not np.all(np.isfinite(X)):
        raise ValueError("topoml: the input has NaN or infinite entries")
    maxdim = int(maxdim)
    if maxdim < 0:
        raise ValueError("topoml: maxdim must be >= 0")
    ctx = _context.context()
    n = X.shape[0]
    if distance_matrix:
        condensed = condensed_lower(X)
        out = ctx.rips(None, condensed, None, None, None, n, maxdim, float(threshold), 2,
                       _EUCLIDEAN, 2, 1, None, False, False, 1)
    else:
        out = ctx.rips(np.ascontiguousarray(X), None, None, None, None, n, maxdim,
                       float(threshold), 2, _EUCLIDEAN, 2, 1, None, False, False, 1)
    gens = out["gens"]
    return _dims_and_gens(out["gens"]) + (out["dgms"],)


def _dims_and_gens(gens):
    """(dims, gens): the binding's generators per dimension as one (m, 4)
    int64 array and the dimension of each row."""
    dims = np.concatenate([np.full(len(g), d, dtype=np.int64) for d, g in enumerate(gens)])
    return dims, np.concatenate(gens).reshape(-1, 4).astype(np.int64)


def rips_device_with_generators(array, n, maxdim=1, threshold=math.inf, condensed=False,
                                stream=0):
    """rips_with_generators for an array in CUDA device memory (as
    rips_device takes it): (dims, gens, out), out the binding's dict
    ("dgms", "backend", "host_copies", ...). A backend whose device-input
    record gives generators (the cuda plugin) reads the array where it is;
    otherwise the library makes one host copy and the reference computes."""
    out = rips_device(array, n, maxdim, threshold, condensed, stream, generators=True)
    return _dims_and_gens(out["gens"]) + (out,)


def rips_device(array, n, maxdim=1, threshold=math.inf, condensed=False, stream=0,
                generators=False):
    """Diagrams of an array in CUDA device memory, read there (no host
    copy where a backend takes device input: the cuda plugin, for points).
    ``array``: what DLPack imports as a C-contiguous float32/float64 CUDA
    array, points (n, d) or, with ``condensed``, the n(n-1)/2 entries of the
    strict lower triangle in Ripser's order; ``stream``: the cudaStream_t
    (an int) after whose work the values are ready. Returns the C binding's
    dict: "dgms" (host arrays), "backend", "host_copies", ..."""
    maxdim = int(maxdim)
    if maxdim < 0:
        raise ValueError("topoml: maxdim must be >= 0")
    return _context.context().rips_device(array, bool(condensed), int(n), maxdim,
                                          float(threshold), 2, _EUCLIDEAN, int(stream), None,
                                          False, bool(generators))


def signature_scale(X, sample=128, factor=2.0, edges_per_row=8, seed=0):
    """The scale up to which an activation signature looks at X (rows),
    from the distances of `sample` rows drawn at random (seeded) to all
    rows, Euclidean, O(sample * n) work: `factor` times the 90th percentile
    of their nearest-neighbour distances (a few times the typical gap
    between neighbouring rows, where the small loops of H1 are born and
    most die), but at most the distance within which a row has
    2 * `edges_per_row` others on average (so the complex has about
    `edges_per_row` * n edges: where distances concentrate, as for noisy
    high-dimensional activations, the gaps are nearly the diameter)."""
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    if n < 2:
        return 0.0
    rng = np.random.default_rng(seed)
    idx = rng.choice(n, min(int(sample), n), replace=False)
    sq = np.einsum("ij,ij->i", X, X)
    d2 = sq[idx, None] + sq[None, :] - 2.0 * (X[idx] @ X.T)
    d2[np.arange(len(idx)), idx] = np.inf  # not the row itself
    d = np.sqrt(np.maximum(d2, 0.0))
    gaps = factor * float(np.quantile(d.min(axis=1), 0.9))
    others = d[np.isfinite(d)]
    share = min(1.0, 2.0 * edges_per_row / (n - 1))
    budget = float(np.quantile(others, share)) if len(others) else gaps
    return min(gaps, budget)


def layer_diagrams(X, maxdim=1, scale="auto", n_threads=-1):
    """(diagrams, scale) of the Vietoris-Rips filtration of the rows of X
    (Euclidean), truncated at `scale`: what activation signatures are made
    of, cheap by design.

    ``scale="auto"`` (the default) is :func:`signature_scale`'s; a number is
    used as it is; None (or inf) gives the whole filtration. Under a finite
    scale the engine keeps only the edges within it (a sparse complex, edge
    collapse, every core): for 1024 rows of 16 columns that is some 10 ms
    instead of seconds. The diagrams are exactly those of the whole
    filtration for every bar born at most at the scale, except that a bar
    still alive there has death ``inf`` (it is cut, not essential); bars
    born later are absent. No generators are computed (signatures need
    none), and no edge collapse: at the automatic scale the complex has
    about 8 n edges, where the collapse costs more than the reduction it
    saves (and on the whole filtration of such rows too; docs/ml.md)."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError("topoml: expected a 2-d array, got shape %r" % (X.shape,))
    if not np.all(np.isfinite(X)):
        raise ValueError("topoml: the input has NaN or infinite entries")
    if isinstance(scale, str):
        if scale != "auto":
            raise ValueError("topoml: scale must be 'auto', a number or None, got %r" % (scale,))
        scale = signature_scale(X)
    scale = math.inf if scale is None else float(scale)
    if math.isnan(scale) or scale < 0:
        raise ValueError("topoml: scale must be >= 0, got %r" % (scale,))
    return _rips.barcodes(X, maxdim=int(maxdim), threshold=scale, progress=False,
                          collapse=False, n_threads=n_threads).diagrams, scale


def signatures(dgms, n_bins=32):
    """Topology signatures of diagrams (a list of (k, 2) arrays, one per
    dimension): total persistence, persistent entropy and the Betti curve
    on a grid of n_bins values from 0 to the largest finite value, per
    dimension. Infinite bars are left out of the first two."""
    finite = [d[np.isfinite(d[:, 1])] for d in dgms]
    top = max([float(f.max()) for f in finite if len(f)] + [0.0])
    grid = np.linspace(0.0, top if top > 0 else 1.0, int(n_bins))
    return {
        "diagrams": dgms,
        "total_persistence": [float(features.total_persistence(f)) if len(f) else 0.0
                              for f in finite],
        "entropy": [float(features.entropy(f)) if len(f) else 0.0 for f in finite],
        "betti_grid": grid,
        "betti_curves": [features.betti_curve(d, grid) for d in dgms],
    }


_pool = None
_pool_workers = 0
_pool_lock = threading.Lock()


def _cpus():
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _workers():
    """The threads layer_signatures computes layers on: one pool for the
    process, made on first use, so that each of its threads keeps its topoml
    context (and the backend it probed) from one call to the next."""
    global _pool, _pool_workers
    with _pool_lock:
        if _pool is None:
            from concurrent.futures import ThreadPoolExecutor
            _pool_workers = min(8, _cpus())
            _pool = ThreadPoolExecutor(max_workers=_pool_workers,
                                       thread_name_prefix="topoml-signatures")
        return _pool


def layer_signatures(layers, maxdim=1, scale="auto", n_bins=32):
    """{name: signature} for {name: rows} (2-d host arrays): each layer's
    layer_diagrams at `scale`, then signatures() of them, with "samples"
    (the rows) and "scale" (the one used) added. The layers are computed at
    once, on up to min(8, CPUs) threads (the library releases the GIL while
    it computes), each call with its share of the CPUs as n_threads; one
    layer, or one CPU, is computed in the calling thread. The result is the
    same as computing them one after another."""
    names = list(layers)
    cpus = _cpus()

    def one(name, n_threads):
        X = layers[name]
        dgms, used = layer_diagrams(X, maxdim, scale, n_threads)
        sig = signatures(dgms, n_bins)
        sig["samples"], sig["scale"] = int(np.shape(X)[0]), used
        return sig

    if len(names) < 2 or cpus < 2:
        return {name: one(name, -1) for name in names}
    pool = _workers()
    share = max(1, cpus // min(len(names), _pool_workers))
    futures = {name: pool.submit(one, name, share) for name in names}
    return {name: futures[name].result() for name in names}
