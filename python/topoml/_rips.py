"""Vietoris-Rips barcodes: the native call and the two calls people know.

``barcodes`` is topoml's own call (a small result object with the backend
that ran and why); ``ripser`` has ripser.py's signature and result dict;
``ripser_parallel`` has giotto-ph's. All three share one path to the C API
(``_compute``), so they give the same diagrams for the same input.

Each is one compiled callable (``_core.Entry``) around the Python function
defined here, whose signature and docstring it shows: it binds the
arguments to that function's parameters and runs the whole call in C++ for
the inputs most calls have (a 2-D float64 or float32 numpy array, plain int
and float arguments, a metric by its exact name in ``_inputs.METRICS``, no
progress bar), building the same result; on a few points the Python work
around the C call cost as much as the call (docs/python.md, "Speed"). For
anything else it calls the Python function with the arguments as given,
and its general path (``_barcodes``, ``_ripser``, ``_ripser_parallel``)
checks, converts and runs them.
"""
import functools
import math
import numbers
import time
from dataclasses import dataclass, field
from typing import List, Optional

import numpy as np

from . import _context, _core, _gens, _inputs, _progress

@dataclass
class BarcodeResult:
    # _core.barcodes makes these without __init__ (object.__new__, then the
    # fields in order): a field added here is added there too.
    """What :func:`barcodes` returns.

    Attributes
    ----------
    diagrams : list of numpy.ndarray
        ``diagrams[k]`` holds the bars of H_k as a ``(n_k, 2)`` float64 array
        of (birth, death); death is ``inf`` for essential classes (and for
        classes still alive at the threshold). Bars of zero length are not
        reported.
    backend : str
        The backend that computed them.
    selection_reason : str
        Why that backend was chosen.
    timings : dict
        ``"compute"``: seconds in the C computation of the barcode;
        ``"c"``: seconds in all the C calls the result needed (the data set
        built from the input, the barcode, and for ``ripser`` the edge
        count); ``"total"``: seconds in the whole call (input checks and
        conversion and the result arrays included).
    maxdim, threshold, modulus : the parameters used (for a partial result,
        ``maxdim`` is the last finished dimension).
    complete : bool
        True for a returned result (a cancelled computation raises). False
        only in :class:`MemoryLimitError`'s ``partial``.
    stopped : dict or None
        None for a complete result; for a partial one, where and why it
        stopped: ``{"dim": k, "reason": "memory limit"}``, dimension k being
        the first one not finished (the CLI's JSON says the same).
    cocycles : list or None
        With ``barcodes(..., cocycles=True)``: ``cocycles[k]`` is a list
        parallel to ``diagrams[k]``, one representative cocycle per bar as
        ripser.py's ``do_cocycles`` gives it: an ``(m, k + 2)`` int64 array,
        each row the k + 1 vertices of a k-simplex (descending) and the
        cocycle's value on it in 0..modulus-1 (``cocycles[0]``: one empty
        ``(0, 2)`` array per bar). None when not asked for.
    """

    diagrams: List[np.ndarray]
    backend: str
    selection_reason: str
    timings: dict
    maxdim: int
    threshold: float
    modulus: int
    complete: bool = True
    num_edges: Optional[int] = field(default=None, repr=False)
    stopped: Optional[dict] = None
    cocycles: Optional[list] = field(default=None, repr=False)

    def __len__(self):
        return len(self.diagrams)

    def __getitem__(self, k):
        return self.diagrams[k]

    def __iter__(self):
        return iter(self.diagrams)


def _to_input(X, kind, metric, metric_params, threshold):
    """(Input, C metric) for X read as `kind`: "points", "distance" (dense,
    condensed or sparse) or "auto" (sparse and 1-D inputs are distances,
    2-D arrays points)."""
    if kind == "auto":
        if _inputs.is_sparse(X):
            kind = "distance"
        else:
            kind = "distance" if np.ndim(X) == 1 else "points"
    if kind == "distance":
        if _inputs.is_sparse(X):
            return _inputs.sparse(X, threshold), 0
        if np.ndim(X) == 1:
            return _inputs.condensed(X), 0
        return _inputs.dense(X), 0
    code = _inputs.metric_code(metric)
    if code is None:
        if isinstance(metric, str) and metric.lower() == "precomputed":
            return _to_input(X, "distance", metric, metric_params, threshold)
        if _inputs.is_sparse(X):
            raise ValueError("a sparse matrix is read as distances; use distance_matrix=True or "
                             "metric='precomputed'")
        return _inputs.other_metric(X, metric, metric_params), 0
    if metric_params:
        raise ValueError("metric_params are for metrics computed by scikit-learn; %r takes none"
                         % (metric,))
    if _inputs.is_sparse(X):
        raise ValueError("a sparse matrix is read as distances; use distance_matrix=True or "
                         "metric='precomputed'")
    return _inputs.points(X), code


COLLAPSE = {"auto": 0, True: 1, False: 2}  # topoml_collapse


def _collapse(value):
    if isinstance(value, str):
        value = value.lower()
    if value is None or value not in COLLAPSE:
        raise ValueError("collapse must be 'auto', True or False, got %s" % (_inputs.show(value),))
    return COLLAPSE[value]


def _threads(n_threads):
    """giotto-ph's n_threads (-1: all cores) as the C option (0: all)."""
    if type(n_threads) is int and (n_threads > 0 or n_threads == -1):
        return 0 if n_threads == -1 else n_threads
    if isinstance(n_threads, bool) or not isinstance(n_threads, numbers.Integral) \
            or n_threads == 0 or n_threads < -1:
        raise ValueError("n_threads must be a positive integer or -1, got %s"
                         % (_inputs.show(n_threads),))
    return 0 if n_threads == -1 else int(n_threads)


# want_generators of _compute (and of Context.rips): a bit set.
_WANT_GENERATORS, _WANT_COCYCLES = 1, 2


def _compute(X, kind, maxdim, threshold, modulus, metric, metric_params, backend, progress,
             want_stats, collapse="auto", n_threads=-1, want_generators=False, weighting=None):
    """The one path to ``Context.rips``: rips's dict plus "total", "n" and
    the parameters. Kept lean: on inputs of a few points every step here
    is a visible share of the call (docs/python.md, "Speed").
    want_generators: True or _WANT_GENERATORS for the generators ("gens"),
    _WANT_COCYCLES for the cocycles ("cocycles"), or both."""
    t0 = time.perf_counter()
    want_generators = int(want_generators)
    maxdim = _inputs.check_int(maxdim, "maxdim", 0)
    modulus = _inputs.check_int(modulus, "coeff", 2)
    threshold = _inputs.check_threshold(threshold)
    coll, threads = _collapse(collapse), _threads(n_threads)
    ctx = _context.context()
    fn, close = _progress.resolve(progress)
    try:
        if backend is None:  # the common case
            out, n = _run(ctx, X, kind, metric, metric_params, maxdim, threshold, modulus, coll,
                          threads, fn, want_stats, want_generators, weighting)
        else:
            with _context.use_backend(ctx, backend):
                out, n = _run(ctx, X, kind, metric, metric_params, maxdim, threshold, modulus,
                              coll, threads, fn, want_stats, want_generators, weighting)
    except _core.MemoryLimitError as e:
        if e.partial is not None:
            e.partial = _partial_result(e.partial, threshold, modulus, time.perf_counter() - t0)
        raise
    finally:
        close()
    out["total"] = time.perf_counter() - t0
    out["n"] = n
    out["maxdim"], out["threshold"], out["modulus"] = maxdim, threshold, modulus
    return out


_FAST_DTYPES = (np.dtype(np.float64), np.dtype(np.float32))


def _run(ctx, X, kind, metric, metric_params, maxdim, threshold, modulus, collapse, n_threads,
         progress, want_stats, want_generators, weighting=None):
    """(Context.rips's dict, number of points). A 2-D float64 or float32
    array read as points under a metric the C side has, or as a dense
    distance matrix, goes to the C side as it is (Context.rips_array); any
    other input, or one that path refuses, is converted by _inputs, which
    also says what is wrong with a bad one. weighting: None, or the keyword
    arguments of Context.rips's weighted filtration (_weighting)."""
    if weighting is not None:
        inp, code = _to_input(X, kind, metric, metric_params, threshold)
        edges = inp.edges or (None, None, None)
        return ctx.rips(inp.points, inp.condensed, edges[0], edges[1], edges[2], inp.n, maxdim,
                        threshold, modulus, code, collapse, n_threads, progress, True,
                        want_stats, want_generators, **weighting), inp.n
    if type(X) is np.ndarray and X.ndim == 2 and X.dtype in _FAST_DTYPES and not metric_params:
        if kind == "distance" or (isinstance(metric, str) and metric.lower() == "precomputed"):
            matrix, code = True, 0
        else:
            matrix, code = False, _inputs.metric_code(metric)
        if code is not None:
            out = ctx.rips_array(X, matrix, maxdim, threshold, modulus, code, collapse, n_threads,
                                 progress, True, want_stats, want_generators)
            if out is not None:
                return out, X.shape[0]
    inp, code = _to_input(X, kind, metric, metric_params, threshold)
    edges = inp.edges or (None, None, None)
    return ctx.rips(inp.points, inp.condensed, edges[0], edges[1], edges[2], inp.n, maxdim,
                    threshold, modulus, code, collapse, n_threads, progress, True, want_stats,
                    want_generators), inp.n


def _partial_result(out, threshold, modulus, total):
    """The BarcodeResult of a computation the memory limit stopped mid-way."""
    done = len(out["dgms"]) - 1
    return BarcodeResult(diagrams=out["dgms"], backend=out["backend"],
                         selection_reason=out["reason"],
                         timings={"compute": out["seconds"], "c": out["c_seconds"],
                                  "total": total},
                         maxdim=done, threshold=threshold, modulus=modulus, complete=False,
                         stopped=out["stopped"])


def _fast_partial(e, threshold, modulus):
    """A MemoryLimitError from a _core entry (whose arguments passed its
    checks): its ``partial`` as _compute makes it, a BarcodeResult."""
    if isinstance(e.partial, dict):
        e.partial = _partial_result(e.partial, float(threshold), int(modulus),
                                    e.partial.pop("total"))


def barcodes(X, maxdim=1, threshold=math.inf, modulus=2, metric="euclidean", backend=None,
             distance_matrix=None, metric_params=None, progress=None, collapse="auto",
             n_threads=-1, cocycles=False):
    """Vietoris-Rips persistence barcodes of a point cloud or distance matrix.

    Parameters
    ----------
    X : array_like or scipy.sparse matrix
        A point cloud ``(n_points, n_dims)``; a square distance matrix; a
        condensed distance vector in ``scipy.spatial.distance.pdist`` order;
        or a sparse distance matrix (absent entries are infinite). float32 or
        float64, any memory order.
    maxdim : int
        Highest homology dimension: H_0 .. H_maxdim.
    threshold : float
        Largest edge length in the filtration; ``inf`` (the default) uses
        the enclosing radius, beyond which nothing changes.
    modulus : int
        Prime p of the coefficient field Z/p.
    metric : str or callable
        For point clouds: ``"euclidean"``, ``"sqeuclidean"``, ``"manhattan"``
        (``"cityblock"``, ``"l1"``), ``"chebyshev"`` and ``"cosine"`` run in
        C; any other scikit-learn metric or a callable is computed by
        scikit-learn first; ``"precomputed"`` reads X as distances.
    backend : str or None
        Run on this backend only (see :func:`backends`); None lets topoml
        choose (or uses :func:`select_backend`'s choice).
    distance_matrix : bool or None
        Force reading X as distances (True) or points (False); None decides
        from the input (sparse or 1-D: distances; 2-D: points unless
        ``metric="precomputed"``).
    metric_params : dict or None
        Keyword arguments of a scikit-learn metric.
    progress : None, bool or callable
        None: a progress bar when interactive; True/False: always/never; a
        callable ``f(stage, done, total)`` gets the reports and cancels by
        returning a true value.
    collapse : "auto", True or False
        Edge collapse of the flag complex before the reduction (it changes
        no bar): ``"auto"`` when it pays, True always, False never.
    n_threads : int
        Threads the edge collapse and a multi-threaded backend may use; -1:
        every core. The diagrams do not depend on it.
    cocycles : bool
        Also a representative cocycle of every bar (the result's
        ``cocycles``), as Ripser computes them; turns the edge collapse off.
        A backend that cannot give them hands the call to the scalar
        reference.

    Returns
    -------
    BarcodeResult

    Raises
    ------
    ValueError
        bad input (NaN, negative or asymmetric distances, wrong shapes, a
        modulus that is not prime, an unknown backend), with the C message.
    MemoryLimitError
        (a MemoryError) the work would exceed the memory limit: refused
        before it began (``partial`` None), or stopped mid-way, when
        ``partial`` is a BarcodeResult with the finished dimensions
        (``complete`` False, ``stopped`` saying where).
    RuntimeError
        a backend failed, or the named backend is not enabled.
    KeyboardInterrupt
        Ctrl-C during the computation.

    Examples
    --------
    >>> import numpy as np, topoml
    >>> t = np.linspace(0, 2 * np.pi, 24, endpoint=False)
    >>> r = topoml.barcodes(np.c_[np.cos(t), np.sin(t)], maxdim=1, backend="scalar")
    >>> len(r.diagrams[1]), r.backend
    (1, 'scalar')
    """
    return _barcodes(X, maxdim, threshold, modulus, metric, backend, distance_matrix,
                     metric_params, progress, collapse, n_threads, cocycles)


def _barcodes(X, maxdim, threshold, modulus, metric, backend, distance_matrix, metric_params,
              progress, collapse, n_threads, cocycles=False):
    """barcodes' general path: every input and argument the compiled
    entry leaves to Python (_core.barcodes returned None), checked and
    converted here."""
    kind = "auto" if distance_matrix is None else ("distance" if distance_matrix else "points")
    out = _compute(X, kind, maxdim, threshold, modulus, metric, metric_params, backend, progress,
                   False, collapse, n_threads, _WANT_COCYCLES if cocycles else 0)
    return BarcodeResult(diagrams=out["dgms"], backend=out["backend"],
                         selection_reason=out["reason"],
                         timings={"compute": out["seconds"], "c": out["c_seconds"],
                                  "total": out["total"]},
                         maxdim=out["maxdim"], threshold=out["threshold"],
                         modulus=out["modulus"], complete=out["complete"],
                         cocycles=out.get("cocycles"))


class RipserResult(dict):
    """ripser.py's result dict. ``dperm2all`` (the distance matrix ripser.py
    always returns: n x n, or n_perm x n with ``n_perm``) is a key like the
    others — in ``keys()``, ``in``, ``dict(r)``, ``copy`` and pickling — but
    its n x n matrix is made when first read (through ``r["dperm2all"]``,
    ``keys()``, ``items()``, iteration or a copy), so a result whose matrix
    is never read never holds it. Attributes, not keys: ``backend`` (the
    backend that ran) and ``timings`` (as :class:`BarcodeResult`'s)."""

    # _core.ripser makes these without __init__ (dict.__new__, then the
    # items and attributes __init__ and ripser() would set): keep the two
    # in step (test_native's test_compiled_entries_give_the_general_paths_results).

    def __init__(self, X, kind, metric, metric_params, **items):
        super().__init__(**items)
        self._source = (X, kind, metric, metric_params)

    def _fill(self):
        if not dict.__contains__(self, "dperm2all"):
            X, kind, metric, metric_params = self._source
            dict.__setitem__(self, "dperm2all", _distance_matrix(X, kind, metric, metric_params))
        return self

    def __missing__(self, key):
        if key != "dperm2all":
            raise KeyError(key)
        return dict.__getitem__(self._fill(), key)

    def __contains__(self, key):
        return key == "dperm2all" or dict.__contains__(self, key)

    def __len__(self):
        return dict.__len__(self) + (not dict.__contains__(self, "dperm2all"))

    def __iter__(self):
        return dict.__iter__(self._fill())

    def keys(self):
        return dict.keys(self._fill())

    def items(self):
        return dict.items(self._fill())

    def values(self):
        return dict.values(self._fill())

    def get(self, key, default=None):
        return self[key] if key in self else default

    def __eq__(self, other):
        return dict.__eq__(self._fill(), other)

    __hash__ = None

    def copy(self):
        new = dict.__new__(type(self))
        dict.update(new, self._fill())
        new.__dict__.update(self.__dict__)
        return new

    def __copy__(self):
        return self.copy()

    def __reduce__(self):
        # Pickled with its matrix, without the input it was made from.
        state = {k: v for k, v in self.__dict__.items() if k != "_source"}
        return (_unpickle_ripser_result, (dict(self._fill()), state))


def _unpickle_ripser_result(items, state):
    new = dict.__new__(RipserResult)
    dict.update(new, items)
    new.__dict__.update(state)
    new._source = None
    return new


def _one_to_all(X, i, code):
    """Distances from point i of X to every point under C metric `code`,
    summed coordinate by coordinate as the scalar reference sums them
    (plugins/scalar/metric.h), so they are its distances bit for bit on
    ordinary values."""
    x = X[i]
    acc = np.zeros(X.shape[0])
    if code in (0, 1):  # euclidean, sqeuclidean
        for k in range(X.shape[1]):
            t = X[:, k] - x[k]
            acc += t * t
        return np.sqrt(acc) if code == 0 else acc
    if code == 2:  # manhattan
        for k in range(X.shape[1]):
            acc += np.abs(X[:, k] - x[k])
        return acc
    if code == 3:  # chebyshev
        for k in range(X.shape[1]):
            np.maximum(acc, np.abs(X[:, k] - x[k]), out=acc)
        return acc
    xx, yy = np.zeros(X.shape[0]), 0.0  # cosine
    for k in range(X.shape[1]):
        acc += X[:, k] * x[k]
        xx += X[:, k] * X[:, k]
        yy += x[k] * x[k]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.maximum(1 - acc / np.sqrt(xx * yy), 0.0)


def greedy_permutation(X, n_perm, distance_matrix=False, metric="euclidean"):
    """ripser.py's furthest-point sampling (``get_greedy_perm``): the first
    point is point 0; each next one is the point farthest from those taken
    (the first of them on a tie, as ``numpy.argmax``). Returns ``(idx_perm,
    lambdas, dperm2all)``: the indices taken, the covering radius after each
    (``lambdas[-1]`` is ripser.py's ``r_cover``), and the ``(n_perm, n)``
    distances from the points taken to all points: X's rows for a distance
    matrix, else topoml's distances (the scalar reference's, computed one
    point against all, so only ``n_perm`` rows are ever held) or, for a
    metric topoml does not compute, scikit-learn's as ripser.py has them."""
    n, X0 = X.shape[0], X
    code = None if distance_matrix else _inputs.metric_code(metric)
    if distance_matrix:
        def row(i):
            return np.array(X[i, :], dtype=np.float64)
    elif code is None:
        from sklearn.metrics import pairwise_distances

        def row(i):
            ds = pairwise_distances(X, X[i, :][None, :], metric=metric).ravel()
            ds[i] = 0.0
            return ds
    else:
        X = np.asarray(X, dtype=np.float64)

        def row(i):
            ds = _one_to_all(X, i, code)
            ds[i] = 0.0
            return ds
    idx_perm = np.zeros(n_perm, dtype=np.int64)
    lambdas = np.zeros(n_perm)
    ds = row(0)
    dperm2all = [ds]
    for k in range(1, n_perm):
        idx = int(np.argmax(ds))
        idx_perm[k] = idx
        lambdas[k - 1] = ds[idx]
        dperm2all.append(row(idx))
        ds = np.minimum(ds, dperm2all[-1])
    lambdas[-1] = np.max(ds)
    return idx_perm, lambdas, np.array(dperm2all, dtype=_float_type_of(X0))


def _distance_matrix(X, kind, metric, metric_params):
    """ripser.py's ``dperm2all`` without ``n_perm``: a distance matrix is
    the object given (a sparse one in its own format, COO stays COO; a
    condensed one, topoml's own input, made square); for points, the n x n
    distances in X's floating type where it is float32 (as scikit-learn's
    ``pairwise_distances`` gives them), else float64."""
    if _inputs.is_sparse(X):
        return X
    if kind == "distance" or (isinstance(metric, str) and metric.lower() == "precomputed"):
        if isinstance(X, np.ndarray) and X.ndim == 2:
            return X
        A = np.asarray(X, dtype=np.float64)
        if A.ndim == 1:
            from .features import squareform
            return squareform(A)
        return A
    code = _inputs.metric_code(metric)
    if code is None:
        from sklearn.metrics import pairwise_distances
        return pairwise_distances(np.asarray(X), metric=metric, **(metric_params or {}))
    from .features import distances, squareform
    return squareform(distances(X, metric=metric)).astype(_float_type_of(X), copy=False)


def _float_type_of(X):
    """float32 for a float32 array, else float64: the type scikit-learn's
    distances of X have, and so ripser.py's ``dperm2all``."""
    return np.float32 if getattr(X, "dtype", None) == np.float32 else np.float64


def ripser(X, maxdim=1, thresh=math.inf, coeff=2, distance_matrix=False, do_cocycles=False,
           metric="euclidean", n_perm=None):
    """ripser.py's ``ripser``, computed by topoml.

    Same signature and result dict as ``ripser.ripser``, so
    ``from topoml import ripser`` replaces ``from ripser import ripser``.

    Returns
    -------
    dict
        ``dgms``: list of ``(n_k, 2)`` arrays, H_0 .. H_maxdim;
        ``num_edges``: edges in the filtration (pairs within ``thresh``, or
        within the enclosing radius when ``thresh`` is inf, as ripser.py
        counts them); ``cocycles``: with ``do_cocycles=True`` ripser.py's
        representative cocycles — ``cocycles[d][k]``, for the bar
        ``dgms[d][k]`` (d >= 1), an ``(m, d + 2)`` int64 array of rows
        (vertices of a d-simplex, descending — with ``n_perm``, indices of
        the input's points —, then the cocycle's value in 0..coeff-1), equal
        to ripser.py's where the filtration has no ties (with ties another
        representative of the same class may come back); ``cocycles[0]`` is
        empty; without, a list of empty lists; ``idx_perm``: ``arange(n)``, or with ``n_perm``
        the points of ripser.py's greedy (furthest-point) permutation, on
        which the diagrams are computed (:func:`greedy_permutation`);
        ``r_cover``: 0.0, or with ``n_perm`` the covering radius of the
        points taken; ``dperm2all``: the ``(n, n)`` distance matrix (made
        when first read), or with ``n_perm`` the ``(n_perm, n)`` distances
        from the points taken to all points.

    ripser.py's warnings come as Python warnings: a square input read as
    points (``distance_matrix=False``), and a point cloud with more columns
    than rows.

    Differences: a distance matrix must have a zero diagonal (ripser.py
    reads a nonzero diagonal as vertex birth times; topoml raises
    ValueError), and must be symmetric. An input with no points raises
    ValueError ("no points"), as ripser.py does for a point cloud; ripser.py
    reads an empty distance matrix as one point, topoml refuses it too.

    Examples
    --------
    >>> import numpy as np
    >>> from topoml import ripser
    >>> X = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
    >>> ripser(X)["dgms"][1]
    array([[1.        , 1.41421356]])
    """
    return _ripser(X, maxdim, thresh, coeff, distance_matrix, do_cocycles, metric, n_perm)


def _shape(X):
    return X.shape if _inputs.is_sparse(X) else np.shape(X)


def _ripser_cocycles(out, do_cocycles, idx_perm=None):
    """ripser.py's ``cocycles``: none in dimension 0; with a greedy
    permutation, the vertices as indices of the input's points (as
    ripser.py maps them)."""
    if not do_cocycles:
        return [[] for _ in range(out["maxdim"] + 1)]
    cocycles = [[]] + out["cocycles"][1:]
    if idx_perm is not None:
        for d in range(1, len(cocycles)):
            for c in cocycles[d]:
                c[:, :-1] = idx_perm[c[:, :-1]]
    return cocycles


def _ripser(X, maxdim, thresh, coeff, distance_matrix, do_cocycles, metric, n_perm):
    """ripser's general path (see _barcodes)."""
    import warnings
    shape = _shape(X)
    if not distance_matrix and len(shape) == 2:
        # ripser.py's two warnings, in its words.
        if shape[0] == shape[1]:
            warnings.warn("The input matrix is square, but the distance_matrix flag is off.  "
                          "Did you mean to indicate that this was a distance matrix?",
                          stacklevel=3)
        elif shape[0] < shape[1]:
            warnings.warn("The input point cloud has more columns than rows; did you mean to "
                          "transpose?", stacklevel=3)
    kind = "distance" if distance_matrix else "points"
    n = shape[0] if shape else 0
    if n_perm is not None and n_perm is not False and n_perm != 0:
        if isinstance(n_perm, bool) or not isinstance(n_perm, numbers.Integral):
            raise ValueError("n_perm must be an integer, got %r" % (n_perm,))
        if distance_matrix and _inputs.is_sparse(X):
            raise ValueError("Greedy permutation is not supported for sparse distance matrices")
        if n_perm > n:
            raise ValueError("Number of points in greedy permutation is greater than number "
                             "of points in the point cloud")
        if n_perm < 0:
            raise ValueError("Should be a strictly positive number of points in the greedy "
                             "permutation")
    if n_perm and n_perm < n:
        A = np.asarray(X)
        if not distance_matrix and A.dtype.kind not in "fiub":
            A = _inputs.as_float64(A, "X")
        idx_perm, lambdas, dperm2all = greedy_permutation(A, int(n_perm), bool(distance_matrix),
                                                          metric)
        out = _compute(dperm2all[:, idx_perm], "distance", maxdim, thresh, coeff, metric, None,
                       None, None, True, want_generators=_WANT_COCYCLES if do_cocycles else 0)
        result = RipserResult(X, kind, metric, None, dgms=out["dgms"],
                              cocycles=_ripser_cocycles(out, do_cocycles, idx_perm),
                              num_edges=out["num_edges"], idx_perm=idx_perm,
                              r_cover=float(lambdas[-1]), dperm2all=dperm2all)
    else:
        out = _compute(X, kind, maxdim, thresh, coeff, metric, None, None, None, True,
                       want_generators=_WANT_COCYCLES if do_cocycles else 0)
        result = RipserResult(X, kind, metric, None, dgms=out["dgms"],
                              cocycles=_ripser_cocycles(out, do_cocycles),
                              num_edges=out["num_edges"], idx_perm=np.arange(out["n"]),
                              r_cover=0.0)
    result.backend, result.timings = out["backend"], {"compute": out["seconds"],
                                                      "c": out["c_seconds"],
                                                      "total": out["total"]}
    return result


def ripser_parallel(X, maxdim=1, thresh=math.inf, coeff=2, metric="euclidean", metric_params={},
                    nearest_neighbors_params={}, weights=None, weight_params=None,
                    collapse_edges=False, n_threads=1, return_generators=False):
    """giotto-ph's ``ripser_parallel``, computed by topoml.

    Same signature and result (``{"dgms": [...]}``) as
    ``gph.ripser_parallel``. ``metric="precomputed"`` reads X as a dense or
    sparse distance matrix.

    The diagrams are float32 arrays, as giotto-ph's (topoml computes in
    double and rounds at the end; a bar whose two ends round to the same
    float32 is left out, as giotto-ph, computing in float32, never has it).
    ``n_threads`` (-1: all cores) is handed to the engine: the edge collapse
    and a multi-threaded backend use that many threads; the diagrams do not
    depend on it.
    ``collapse_edges`` turns the edge collapse on (True) or off (False); it
    changes no bar. With ``return_generators=True`` the result also has
    ``gens``, giotto-ph's tuple ``(finite H0 (k, 3), [finite H1.. (k, 4)],
    essential H0 (e,), [essential H1.. (e, 2)])``: for each bar the edges
    that give its birth and death values, edges written (larger vertex,
    smaller vertex); the diagrams then come in the generators' order (H0 in
    Kruskal's order, higher dimensions by (birth, death) descending). H0's
    birth vertex is the one giotto-ph's union-find names (every vertex is
    born at 0; see ``topoml._gens``); with ties in the distances, another
    valid choice of edges than giotto-ph's may come back. The edge collapse
    is not run when generators are asked for (giotto-ph refuses the
    combination; here it is simply skipped: it changes no bar).

    ``weights`` (an array of one weight >= 0 per point, or ``"DTM"``) and
    ``weight_params`` (``p`` in 1, 2, ``np.inf``, default 1; for DTM
    ``n_neighbors``, default 3, and ``r``, default 2) give giotto-ph's
    weighted Rips filtration, computed by the library (topoml.h, "Weighted
    Rips filtrations"): vertices are born at their weights. With a finite
    ``thresh``, a vertex whose weight is above it is not in the complex, and
    the DTM uses every point's nearest neighbours (giotto-ph's thresholded
    paths differ there: docs/python.md). Not with ``return_generators``.

    Examples
    --------
    >>> import numpy as np
    >>> from topoml import ripser_parallel
    >>> D = np.array([[0, 1, 2], [1, 0, 1.5], [2, 1.5, 0]])
    >>> ripser_parallel(D, metric="precomputed")["dgms"][0]
    array([[0. , 1. ],
           [0. , 1.5],
           [0. , inf]], dtype=float32)
    >>> ripser_parallel(D, metric="precomputed", return_generators=True)["gens"][0]
    array([[1, 1, 0],
           [2, 2, 1]])
    """
    return _ripser_parallel(X, maxdim, thresh, coeff, metric, metric_params, weights,
                            collapse_edges, n_threads, return_generators, weight_params)


# topoml_weights (topoml.h)
_WEIGHTS_GIVEN, _WEIGHTS_DTM = 1, 2


def _weighting(weights, weight_params):
    """Context.rips's keyword arguments for giotto-ph's ``weights`` and
    ``weight_params``, checked as giotto-ph checks them (its messages); the
    count of weights is checked against the points by the C side."""
    params = {} if weight_params is None else weight_params
    p = params.get("p", 1)
    if not (p == 1 or p == 2 or p == np.inf):
        raise NotImplementedError(f"Weighting not supported for p = {p}")
    kw = {"weight_p": float(p)}
    if isinstance(weights, str):
        if weights != "DTM":
            raise ValueError("'{}' passed for `weights` but the only allowed string is "
                             "'DTM'".format(weights))
        kw["weights"] = _WEIGHTS_DTM
        kw["dtm_neighbors"] = _inputs.check_int(params.get("n_neighbors", 3), "n_neighbors", 1)
        kw["dtm_r"] = float(params.get("r", 2))
        return kw
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim == 2 and w.shape[1] == 1:
        w = w[:, 0]
    if w.ndim != 1:
        raise ValueError("y should be a 1d array, got an array of shape {} "
                         "instead.".format(w.shape))
    if np.any(w < 0):
        raise ValueError("All weights must be non-negative.Negative weights passed.")
    kw["weights"] = _WEIGHTS_GIVEN
    kw["vertex_weights"] = np.ascontiguousarray(w)
    return kw


def _ripser_parallel(X, maxdim, thresh, coeff, metric, metric_params, weights, collapse_edges,
                     n_threads, return_generators, weight_params=None):
    """ripser_parallel's general path (see _barcodes)."""
    _threads(n_threads)
    want_gens = bool(return_generators)
    weighting = None
    if weights is not None:
        if want_gens:
            raise NotImplementedError("topoml.ripser_parallel: return_generators with weights "
                                      "is not supported")
        weighting = _weighting(weights, weight_params)
    out = _compute(X, "points", maxdim, thresh, coeff, metric, metric_params, None, None, False,
                   bool(collapse_edges) and not want_gens, n_threads, want_gens, weighting)
    if not want_gens:
        return {"dgms": _giotto_dgms(out["dgms"])}
    dgms, gens = _gens.giotto(out["dgms"], out["gens"], out["n"], out["zero_edges"])
    # float32 as giotto-ph's; every bar kept, its generators in step
    return {"dgms": [d.astype(np.float32) for d in dgms], "gens": gens}


# The compiled entries build these results themselves, and read metric
# names from the one table of them.
def _giotto_dgms(dgms):
    """giotto-ph's diagrams from topoml's: float32, as giotto-ph computes
    and returns them, and without the bars whose two ends round to the
    same float32 (giotto-ph, whose filtration values are float32, never
    has them; topoml's are exact in double and may be a few ulps apart)."""
    out = []
    for d in dgms:
        d32 = d.astype(np.float32)
        out.append(d32[d32[:, 0] != d32[:, 1]] if len(d32) else d32)
    return out


_core.set_rips_types(RipserResult, BarcodeResult, _inputs.METRICS, _giotto_dgms)


def _entry(function):
    """``function`` as its compiled entry (``_core.Entry``): the fast path
    first, ``function`` when it does not apply; the name, docstring and
    signature are ``function``'s."""
    return functools.update_wrapper(_core.Entry(function, function.__name__, _fast_partial),
                                    function)


barcodes, ripser, ripser_parallel = _entry(barcodes), _entry(ripser), _entry(ripser_parallel)
