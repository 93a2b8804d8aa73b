"""What the Vietoris-Rips calls accept, turned into what the C API takes.

Point clouds and dense distance matrices (numpy, float32 or float64, any
strides), condensed vectors in scipy's ``pdist`` order, and scipy.sparse
matrices. The C API copies its input into its own data set, from float64
row-major memory: an array already in that form is handed over as it is, any
other is converted once here. Nothing here imports scipy: sparse matrices are
recognised by their type's module and read through ``tocoo()``.
"""
import math
import numbers

import numpy as np

from . import _core

# topoml_metric values (topoml/types.h) under the names scikit-learn and
# scipy use for them.
METRICS = {
    "euclidean": 0, "l2": 0,
    "sqeuclidean": 1,
    "manhattan": 2, "cityblock": 2, "l1": 2,
    "chebyshev": 3,
    "cosine": 4,
}


class Input:
    """Keyword arguments for ``_core.Context.rips`` (points / condensed /
    edges and n)."""

    def __init__(self, n, points=None, condensed=None, edges=None):
        self.n = n
        self.points = points
        self.condensed = condensed
        self.edges = edges

    def kwargs(self):
        ei = ej = ed = None
        if self.edges is not None:
            ei, ej, ed = self.edges
        return dict(points=self.points, condensed=self.condensed, ei=ei, ej=ej, ed=ed, n=self.n)


def is_sparse(X):
    return type(X).__module__.startswith("scipy.sparse") and hasattr(X, "tocoo")


def as_float64(X, what):
    """X as a numpy array of real numbers whose values are aligned (the C
    side reads them as doubles or floats: an array that starts off its
    alignment, as numpy.frombuffer can make, is copied)."""
    if type(X) is np.ndarray and X.dtype.kind in "fiub" and X.flags.aligned:
        return X
    try:
        A = np.asarray(X)
    except Exception as e:  # ragged lists and the like
        raise ValueError("%s: not an array of numbers (%s)" % (what, e)) from None
    if A.dtype == object or not (np.issubdtype(A.dtype, np.floating) or
                                 np.issubdtype(A.dtype, np.integer) or A.dtype == np.bool_):
        raise ValueError("%s: needs real numbers, got dtype %s" % (what, A.dtype))
    return A if A.flags.aligned else A.copy()


def points(X):
    A = as_float64(X, "point cloud")
    if A.ndim != 2:
        raise ValueError("point cloud: needs a 2-D array (n_points, n_dims), got shape %s"
                         % (A.shape,))
    return Input(A.shape[0], points=np.ascontiguousarray(A, dtype=np.float64))


def show(value):
    """A value as an error message shows it: numpy's scalars as the Python
    number they hold (numpy 2's repr would say np.float64(nan))."""
    if isinstance(value, np.generic):
        value = value.item()
    return repr(value)


def _check_finite(v, what):
    if v.size and not np.all(np.isfinite(v)):
        bad = np.unravel_index(int(np.flatnonzero(~np.isfinite(v))[0]), v.shape)
        where = "(%s)" % ", ".join(str(int(k)) for k in bad) if v.ndim > 1 else str(int(bad[0]))
        raise ValueError("%s: entry %s is %s (distances must be finite)"
                         % (what, where, show(v[bad])))


def dense(D):
    """A square distance matrix: symmetric, zero diagonal; its lower triangle
    in Ripser's order goes to the C side."""
    A = as_float64(D, "distance matrix")
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError("distance matrix: needs a square 2-D array, got shape %s" % (A.shape,))
    n = A.shape[0]
    A = A.astype(np.float64, copy=False)
    lower = _core.lower_triangle(A)  # one pass in C for a valid matrix, else None
    if lower is not None:
        return Input(n, condensed=lower)
    diag = np.diagonal(A)
    if np.any(diag != 0):
        i = int(np.flatnonzero(diag != 0)[0])
        raise ValueError("distance matrix: diagonal entry (%d, %d) is %s; topoml has no vertex "
                         "birth times, the diagonal must be 0" % (i, i, show(diag[i])))
    _check_finite(A, "distance matrix")
    if n < 2:
        return Input(n, condensed=np.zeros(0))
    below = np.tri(n, k=-1, dtype=bool)
    lower, upper = A[below], A.T[below]  # d(i, j) and d(j, i), i > j, in Ripser's order
    diff = np.abs(lower - upper)
    if np.any(diff > 1e-9 * float(np.max(np.abs(lower)))):
        k = int(np.argmax(diff))
        i = int(math.floor((1 + math.sqrt(1 + 8 * k)) / 2))
        j = k - i * (i - 1) // 2
        raise ValueError("distance matrix: not symmetric: entry (%d, %d) is %s but (%d, %d) "
                         "is %s" % (i, j, show(lower[k]), j, i, show(upper[k])))
    return Input(n, condensed=lower)


def condensed(v):
    """scipy's pdist order (upper triangle by rows) to Ripser's (lower
    triangle by rows)."""
    A = as_float64(v, "condensed distances")
    if A.ndim != 1:
        raise ValueError("condensed distances: needs a 1-D array, got shape %s" % (A.shape,))
    m = A.shape[0]
    n = int(round((1 + math.sqrt(1 + 8 * m)) / 2)) if m else 1
    if n * (n - 1) // 2 != m:
        raise ValueError("condensed distances: length %d is not n(n-1)/2 for any n" % m)
    A = A.astype(np.float64, copy=False)
    _check_finite(A, "condensed distances")
    if n < 2:
        return Input(n, condensed=np.zeros(0))
    j = np.arange(n, dtype=np.int64)
    base = j * n - j * (j + 1) // 2 - j - 1  # pdist index of (j, i) is base[j] + i
    lower = np.concatenate([A[base[:i] + i] for i in range(1, n)])
    return Input(n, condensed=lower)


def sparse(S, threshold=math.inf):
    """A scipy.sparse distance matrix: stored entries off the diagonal are
    edges (an explicit 0 is an edge of length 0), absent ones are infinite;
    (i, j) and (j, i) may both be stored if they agree."""
    if S.ndim != 2 or S.shape[0] != S.shape[1]:
        raise ValueError("sparse distance matrix: needs a square matrix, got shape %s"
                         % (S.shape,))
    n = S.shape[0]
    coo = S.tocoo()
    r = np.asarray(coo.row, dtype=np.int64)
    c = np.asarray(coo.col, dtype=np.int64)
    d = as_float64(coo.data, "sparse distance matrix").astype(np.float64, copy=False)
    on_diag = r == c
    if np.any(d[on_diag] != 0):
        i = int(r[on_diag][np.flatnonzero(d[on_diag] != 0)[0]])
        raise ValueError("sparse distance matrix: diagonal entry (%d, %d) is nonzero; topoml has "
                         "no vertex birth times" % (i, i))
    r, c, d = r[~on_diag], c[~on_diag], d[~on_diag]
    if d.size and not np.all(np.isfinite(d)):
        k = int(np.flatnonzero(~np.isfinite(d))[0])
        raise ValueError("sparse distance matrix: entry (%d, %d) is %s" % (r[k], c[k], show(d[k])))
    i, j = np.minimum(r, c), np.maximum(r, c)
    key = i * n + j
    order = np.lexsort((d, key))
    key, i, j, d = key[order], i[order], j[order], d[order]
    first = np.ones(key.shape, dtype=bool)
    first[1:] = key[1:] != key[:-1]
    dup = ~first
    if np.any(dup):
        k = int(np.flatnonzero(dup)[0])
        if d[k] != d[k - 1]:
            raise ValueError("sparse distance matrix: not symmetric: (%d, %d) is stored as %s and "
                             "%s" % (i[k], j[k], show(d[k - 1]), show(d[k])))
    keep = first & (d <= threshold)
    return Input(n, edges=(np.ascontiguousarray(i[keep], dtype=np.uint32),
                           np.ascontiguousarray(j[keep], dtype=np.uint32),
                           np.ascontiguousarray(d[keep])))


def metric_code(metric):
    """The C metric for a name, or None when the caller must compute the
    distances (another scikit-learn metric, or a callable)."""
    if isinstance(metric, str):
        return METRICS.get(metric.lower())
    return None


def other_metric(X, metric, metric_params):
    """Distances by scikit-learn for metrics the C side does not have, as
    ripser.py and giotto-ph compute them."""
    try:
        from sklearn.metrics import pairwise_distances
    except ImportError:
        raise ValueError("metric %r: topoml computes %s itself; other metrics need scikit-learn"
                         % (metric, ", ".join(sorted(METRICS)))) from None
    A = as_float64(X, "point cloud")
    return dense(pairwise_distances(A, metric=metric, **(metric_params or {})))


def check_int(value, name, low):
    if type(value) is int and value >= low:
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
        raise ValueError("%s must be an integer >= %d, got %s" % (name, low, show(value)))
    return int(value)


def check_threshold(value, name="thresh"):
    try:
        t = float(value)
    except (TypeError, ValueError):
        raise ValueError("%s must be a number, got %s" % (name, show(value))) from None
    if math.isnan(t) or t < 0:
        raise ValueError("%s must be >= 0 (inf: none), got %s" % (name, show(value)))
    return t
