"""Diagram tools over ``topoml/features.h``: distances between diagrams,
Betti curves, landscapes, entropy, total persistence, persistence images;
and pairwise distances of point clouds.

A diagram of one dimension is a ``(k, 2)`` array of (birth, death), death
``inf`` for essential classes (what :func:`topoml.barcodes` and
:func:`topoml.ripser` return per dimension). The definitions are those of
docs/features.md; every function checks its diagram (no NaN, birth <=
death) and raises ValueError with the C message otherwise.
"""
import math

import numpy as np

from . import _context, _inputs, _progress

_WEIGHTS = {"constant": 0, "linear": 1, "power": 2}


def diagram(dgm, what="diagram"):
    """A diagram as a C-contiguous float64 ``(k, 2)`` array (a copy only
    when needed). Extra columns (giotto-tda's homology dimension) are
    dropped."""
    A = _inputs.as_float64(dgm, what)
    if A.size == 0:
        return np.zeros((0, 2))
    if A.ndim != 2 or A.shape[1] < 2:
        raise ValueError("%s: needs a (k, 2) array of (birth, death), got shape %s"
                         % (what, A.shape))
    return np.ascontiguousarray(A[:, :2], dtype=np.float64)


def _grid(grid):
    g = np.ascontiguousarray(_inputs.as_float64(grid, "grid"), dtype=np.float64)
    if g.ndim != 1:
        raise ValueError("grid: needs a 1-D array, got shape %s" % (g.shape,))
    return g


def bottleneck(dgm1, dgm2, matching=False):
    """Exact bottleneck distance (L-infinity ground metric) between two
    diagrams; infinite points are matched as GUDHI matches them.

    persim's ``bottleneck`` drops infinite points; this one does not: give
    finite diagrams to compare with persim.

    Examples
    --------
    >>> from topoml import bottleneck
    >>> bottleneck([[0, 1], [0, 3]], [[0, 1.5]])
    1.5
    """
    if matching:
        raise NotImplementedError("bottleneck: matching=True is not supported; "
                                  "wasserstein(..., matching=True) gives an optimal matching")
    return _context.context().bottleneck(diagram(dgm1), diagram(dgm2))


def wasserstein(dgm1, dgm2, matching=False, order=1.0, internal_p=math.inf):
    """Exact Wasserstein distance of order ``order`` with the
    L^``internal_p`` ground metric (GUDHI's ``wasserstein_distance``).
    persim's ``wasserstein`` is not one of these: it measures L-infinity
    between points but Euclidean distance to the diagonal.

    With ``matching=True`` also returns an optimal matching as GUDHI does:
    an ``(m, 2)`` int array of index pairs into dgm1 and dgm2, -1 for the
    diagonal (needs scipy).

    Examples
    --------
    >>> from topoml import wasserstein
    >>> wasserstein([[0, 1], [0, 3]], [[0, 1.5]])
    2.0
    """
    a, b = diagram(dgm1), diagram(dgm2)
    d = _context.context().wasserstein(a, b, float(order), float(internal_p))
    if not matching:
        return d
    return d, _matching(a, b, order, internal_p)


def _matching(a, b, order, internal_p):
    """An optimal matching: the assignment problem on the augmented cost
    matrix for the finite points; essential points of each kind in the
    order of their finite coordinate."""
    from scipy.optimize import linear_sum_assignment

    pairs = []
    fa, fb = np.isfinite(a).all(axis=1), np.isfinite(b).all(axis=1)
    for kind_a, kind_b in _infinite_kinds(a, b):
        ia, ib = np.flatnonzero(kind_a), np.flatnonzero(kind_b)
        if len(ia) != len(ib):
            return np.zeros((0, 2), dtype=np.int64)  # the distance is inf
        key_a = np.where(np.isfinite(a[ia, 0]), a[ia, 0], a[ia, 1])
        key_b = np.where(np.isfinite(b[ib, 0]), b[ib, 0], b[ib, 1])
        pairs += list(zip(ia[np.argsort(key_a, kind="stable")], ib[np.argsort(key_b, kind="stable")]))
    ia, ib = np.flatnonzero(fa), np.flatnonzero(fb)
    A, B = a[ia], b[ib]
    p = float(internal_p)
    diff = np.abs(A[:, None, :] - B[None, :, :])
    ground = diff.max(axis=2) if math.isinf(p) else (diff ** p).sum(axis=2) ** (1 / p)
    to_diag = 2.0 ** (0.0 if math.isinf(p) else 1 / p) / 2.0
    da, db = (A[:, 1] - A[:, 0]) * to_diag, (B[:, 1] - B[:, 0]) * to_diag
    n, m = len(A), len(B)
    q = float(order)
    C = np.zeros((n + m, n + m))
    C[:n, :m] = ground ** q
    C[:n, m:] = np.inf
    C[n:, :m] = np.inf
    C[np.arange(n), m + np.arange(n)] = da ** q
    C[n + np.arange(m), np.arange(m)] = db ** q
    big = C[np.isfinite(C)].max() * 2 + 1 if C.size else 1
    rows, cols = linear_sum_assignment(np.where(np.isinf(C), big, C))
    for r, c in zip(rows, cols):
        if r < n and c < m:
            pairs.append((ia[r], ib[c]))
        elif r < n:
            pairs.append((ia[r], -1))
        elif c < m:
            pairs.append((-1, ib[c]))
    return np.array(pairs, dtype=np.int64).reshape(-1, 2)


def _infinite_kinds(a, b):
    def kinds(x):
        bi, de = np.isinf(x[:, 0]) & (x[:, 0] < 0), np.isinf(x[:, 1]) & (x[:, 1] > 0)
        return [~bi & de, bi & ~de, bi & de]
    return zip(kinds(a), kinds(b))


def betti_curve(dgm, grid):
    """Betti curve: the number of bars with birth <= t < death at each grid
    value t (GUDHI's ``BettiCurve(predefined_grid=grid)``).

    Examples
    --------
    >>> from topoml import betti_curve
    >>> betti_curve([[0, 2], [1, float("inf")]], [0, 1, 2, 3])
    array([1., 2., 1., 1.])
    """
    return _context.context().betti_curve(diagram(dgm), _grid(grid))


def landscapes(dgm, grid, levels=5):
    """Persistence landscapes lambda_1 .. lambda_levels sampled on the grid
    (Bubenik 2015), shape ``(levels, len(grid))``; GUDHI's ``Landscape``
    is sqrt(2) times these.

    Examples
    --------
    >>> from topoml import landscapes
    >>> landscapes([[0, 2]], [0, 1, 2], levels=1)
    array([[0., 1., 0.]])
    """
    return _context.context().landscapes(diagram(dgm), _inputs.check_int(levels, "levels", 1),
                                         _grid(grid))


def entropy(dgm, infinite="drop"):
    """Persistent entropy -sum (l/L) ln(l/L) (natural logarithm, GUDHI's
    ``Entropy(mode="scalar")``). Infinite bars are dropped (``"drop"``) or
    their death replaced by a number given as ``infinite``.

    Examples
    --------
    >>> from topoml import entropy
    >>> round(entropy([[0, 1], [0, 1]]), 6)
    0.693147
    """
    return _context.context().entropy(finite(dgm, infinite))


def total_persistence(dgm, q=1.0):
    """Sum of (death - birth)^q; inf when a death is infinite."""
    return _context.context().total_persistence(diagram(dgm), float(q))


def finite(dgm, infinite="drop"):
    """The diagram without infinite deaths (``"drop"``), or with them
    replaced by the number ``infinite`` (clipped)."""
    d = diagram(dgm)
    if isinstance(infinite, str):
        if infinite != "drop":
            raise ValueError("infinite must be 'drop' or a number, got %s"
                             % (_inputs.show(infinite),))
        return _context.context().pairs_finite(d, 0, 0.0)
    return _context.context().pairs_finite(d, 1, float(infinite))


def persistence_images(diagrams, birth_range, pers_range, resolution=(20, 20), sigma=0.1,
                       weight="constant", weight_max=1.0, weight_power=1.0, infinite="drop",
                       progress=False):
    """Persistence images (Adams et al. 2017) of one diagram or a list of
    diagrams, through the backend selection (the ``image`` op).

    A point (b, d) is mapped to (b, d - b) and adds ``w(d - b)`` times a
    Gaussian of standard deviation ``sigma``; a pixel is the exact integral
    over its cell. ``weight``: ``"constant"`` (1), ``"linear"``
    (``min(p / weight_max, 1)``) or ``"power"`` (``p ** weight_power``,
    persim's default ``persistence`` weight with n=1). ``resolution`` is
    (width, height) in pixels; row 0 of an image is the lowest persistence,
    column 0 the lowest birth.

    Returns an array ``(height, width)`` for one diagram, ``(n, height,
    width)`` for a list.

    Examples
    --------
    >>> from topoml import persistence_images
    >>> persistence_images([[0.75, 1.5]], (0, 1), (0, 1), resolution=(2, 2), sigma=1e-3).round(3)
    array([[0., 0.],
           [0., 1.]])
    """
    single = not isinstance(diagrams, (list, tuple)) or (
        len(diagrams) > 0 and np.ndim(diagrams[0]) == 1)
    dgms = [diagrams] if single else list(diagrams)
    arrays = [diagram(d) for d in dgms]
    counts = np.array([len(a) for a in arrays], dtype=np.uint64)
    offsets = np.zeros(len(arrays) + 1, dtype=np.uint64)
    np.cumsum(counts, out=offsets[1:])
    pairs = np.concatenate(arrays) if arrays else np.zeros((0, 2))
    if weight not in _WEIGHTS:
        raise ValueError("weight must be one of %s, got %r" % (", ".join(_WEIGHTS), weight))
    if isinstance(infinite, str):
        if infinite != "drop":
            raise ValueError("infinite must be 'drop' or a number, got %s"
                             % (_inputs.show(infinite),))
        mode, clip = 0, 0.0
    else:
        mode, clip = 1, float(infinite)
    width, height = resolution
    ctx = _context.context()
    imgs = _progress.run(ctx.persistence_images, progress, pairs=np.ascontiguousarray(pairs),
                         offsets=offsets, weight=_WEIGHTS[weight], weight_max=float(weight_max),
                         weight_power=float(weight_power), sigma=float(sigma),
                         birth_min=float(birth_range[0]), birth_max=float(birth_range[1]),
                         pers_min=float(pers_range[0]), pers_max=float(pers_range[1]),
                         width=_inputs.check_int(width, "width", 1),
                         height=_inputs.check_int(height, "height", 1), infinite=mode,
                         clip_death=clip)
    return imgs[0] if single else imgs


def distances(X, metric="euclidean"):
    """Pairwise distances of a point cloud, condensed in scipy's ``pdist``
    order (the C result is in Ripser's lower order; see :func:`squareform`).

    Examples
    --------
    >>> from topoml.features import distances
    >>> distances([[0, 0], [3, 4], [0, 1]])
    array([5.        , 1.        , 4.24264069])
    """
    code = _inputs.metric_code(metric)
    if code is None:
        raise ValueError("metric %r: one of %s" % (metric, ", ".join(sorted(_inputs.METRICS))))
    inp = _inputs.points(X)
    lower = _context.context().distances(inp.points, code)
    return squareform(squareform(lower, lower=True))  # to pdist order


def squareform(X, lower=False):
    """Condensed vector <-> square matrix, as scipy's ``squareform``; with
    ``lower=True`` the vector is in Ripser's lower-triangular order."""
    A = np.asarray(X, dtype=np.float64)
    if A.ndim == 1:
        m = A.shape[0]
        n = int(round((1 + math.sqrt(1 + 8 * m)) / 2)) if m else 1
        if n * (n - 1) // 2 != m:
            raise ValueError("condensed distances: length %d is not n(n-1)/2 for any n" % m)
        M = np.zeros((n, n))
        if lower:
            i, j = np.tril_indices(n, -1)
        else:
            i, j = np.triu_indices(n, 1)
        M[i, j] = A
        M[j, i] = A
        return M
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError("squareform: needs a square matrix or a condensed vector")
    i, j = (np.tril_indices if lower else np.triu_indices)(A.shape[0], -1 if lower else 1)
    return A[i, j]
