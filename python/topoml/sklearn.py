"""scikit-learn transformers: point clouds to persistence diagrams, and
diagrams to feature vectors, for ``Pipeline`` and ``GridSearchCV``.

This module imports scikit-learn (``import topoml`` does not).

Diagrams travel between the steps as giotto-tda lays them out: a 3-D array
``(n_samples, n_points, 3)`` of (birth, death, homology dimension), each
dimension padded to the same number of points across the samples with
points of zero length ``(0, 0, dim)``, which every feature ignores.

* :class:`VietorisRipsPersistence`: point clouds (or distance matrices)
  to diagrams.
* :class:`PersistenceImage`, :class:`BettiCurve`,
  :class:`PersistenceLandscape`, :class:`PersistenceEntropy`: diagrams to
  2-D feature arrays ``(n_samples, n_features)``, one block per homology
  dimension in increasing order; ranges and grids are learnt in ``fit``
  unless given.

scikit-learn's ``check_estimator`` passes on VietorisRipsPersistence, and
on each feature transformer behind it in a Pipeline (check_estimator feeds
2-D arrays, which only the first step reads; docs/python.md), from the
oldest scikit-learn the package declares to the newest: the estimators
give their tags both ways (``__sklearn_tags__``, scikit-learn >= 1.6, and
``_more_tags`` before).

Feature names and ``set_output``: the feature transformers name their
columns (``get_feature_names_out``) and give a pandas DataFrame under
``set_output(transform="pandas")`` (or ``sklearn.set_config``), so a
``Pipeline`` with pandas output works. The diagrams between the steps are
3-D and have no table form: VietorisRipsPersistence takes ``set_output``
(a Pipeline passes it on to every step) and keeps giving the 3-D array;
its ``get_feature_names_out`` names the last axis, ``("birth", "death",
"homology_dimension")``, which is what the feature transformers take
(their ``n_features_in_`` is 3).

Examples
--------
>>> import numpy as np
>>> from sklearn.pipeline import make_pipeline
>>> from topoml.sklearn import VietorisRipsPersistence, PersistenceEntropy
>>> t = np.linspace(0, 2 * np.pi, 20, endpoint=False)
>>> circle = np.c_[np.cos(t), np.sin(t)]
>>> make_pipeline(VietorisRipsPersistence(), PersistenceEntropy()).fit_transform([circle]).shape
(1, 2)
"""
import math
import os

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_array, check_is_fitted

from . import _rips, features

__all__ = ["VietorisRipsPersistence", "PersistenceImage", "BettiCurve", "PersistenceLandscape",
           "PersistenceEntropy"]


def _clouds(X):
    """A list of float64 arrays, one per sample, and the 2-D array when X
    is one (each row is then a cloud of points on the real line)."""
    if hasattr(X, "tocoo"):
        # check_array raises scikit-learn's usual error for sparse input
        check_array(X, accept_sparse=False)
    if isinstance(X, (list, tuple)):
        try:  # a rectangular list is read as the array it makes
            A = np.asarray(X, dtype=np.float64)
        except (ValueError, TypeError):
            A = None
        if A is not None and A.ndim in (2, 3):
            X = A
    if isinstance(X, np.ndarray) or not isinstance(X, (list, tuple)):
        A = np.asarray(X)
        if A.ndim == 2:
            A = check_array(A, dtype=np.float64)
            return [row.reshape(-1, 1) for row in A], A
        if A.ndim == 3:
            A = check_array(A, dtype=np.float64, allow_nd=True)
            return list(A), None
        if A.ndim < 2 and A.dtype != object:
            check_array(A)  # scikit-learn's own message for 0-D and 1-D input
        if A.ndim != 1 or A.dtype != object:
            raise ValueError("Expected a 2-D array (clouds on the line), a 3-D array "
                             "(n_samples, n_points, n_dims) or a list of 2-D arrays; got an "
                             "array of %d dimensions" % A.ndim)
        X = list(A)
    if len(X) == 0:
        raise ValueError("Found array with 0 sample(s) while a minimum of 1 is required.")
    if all(np.ndim(x) == 0 for x in X):
        A = check_array(np.asarray(X, dtype=np.float64).reshape(1, -1))
        return [A[0].reshape(-1, 1)], None
    return [check_array(x, dtype=np.float64, ensure_min_samples=0) for x in X], None


def _diagrams(X):
    """Check a 3-D diagram array; returns it as float64."""
    D = np.asarray(X, dtype=np.float64)
    if D.ndim != 3 or D.shape[2] != 3:
        raise ValueError("Expected diagrams as a 3-D array (n_samples, n_points, 3) of (birth, "
                         "death, dim), e.g. from VietorisRipsPersistence; got shape %s"
                         % (D.shape,))
    if D.shape[0] == 0:
        raise ValueError("Found array with 0 sample(s) while a minimum of 1 is required.")
    if np.isnan(D).any() or not np.isfinite(D[:, :, [0, 2]]).all():
        raise ValueError("Diagrams contain NaN or infinite births/dimensions")
    if (D[:, :, 1] < D[:, :, 0]).any():
        raise ValueError("Diagrams contain a point with death < birth")
    return D


def _by_dim(D, dim):
    """The points of one sample's diagram in dimension `dim`, padding
    (zero-length points) dropped."""
    P = D[(D[:, 2] == dim) & (D[:, 1] > D[:, 0])]
    return np.ascontiguousarray(P[:, :2])


# The diagrams' last axis, what VietorisRipsPersistence gives and the
# feature transformers take.
DIAGRAM_AXIS = ("birth", "death", "homology_dimension")

# VietorisRipsPersistence's 3-D output is never wrapped in a DataFrame
# (scikit-learn >= 1.2 wraps `transform` of every TransformerMixin that has
# get_feature_names_out, unless the class says so).
_NO_OUTPUT_WRAP = ({"auto_wrap_output_keys": None} if hasattr(TransformerMixin, "set_output")
                   else {})


def _cpus():
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


class VietorisRipsPersistence(TransformerMixin, BaseEstimator, **_NO_OUTPUT_WRAP):
    """Persistence diagrams of point clouds (or distance matrices).

    Parameters
    ----------
    maxdim : int
        Homology dimensions 0 .. maxdim.
    threshold : float
        Largest edge length; inf uses each cloud's enclosing radius.
    coeff : int
        Prime p of the field Z/p.
    metric : str
        As in :func:`topoml.barcodes`; ``"precomputed"`` reads each sample as
        a distance matrix.
    metric_params : dict or None
        Keyword arguments of a scikit-learn metric.
    reduced_homology : bool
        Drop the one infinite H_0 bar of each sample (always there).
    infinity_values : float or None
        The death given to classes still alive at the threshold; None: the
        threshold (classes stay infinite when it is inf).
    n_jobs : int or None
        Samples computed at once, in threads (the GIL is released during each
        computation). None: one at a time, each on every CPU (the threads
        backend and the edge collapse use them); k > 1 (-1: every CPU):
        k at a time, the CPUs shared out among them, so that k computations
        do not each start a thread per CPU.
    backend : str or None
        As in :func:`topoml.barcodes`.
    weights : None, ``"DTM"`` or callable
        A weighted Rips filtration, as giotto-ph's ``ripser_parallel`` takes
        it (:func:`topoml.ripser_parallel`): ``"DTM"``, or a function of
        each sample giving one weight >= 0 per point. None: the plain one.
    weight_params : dict or None
        giotto-ph's ``weight_params`` (``p``, ``n_neighbors``, ``r``).

    Input: a 3-D array ``(n_samples, n_points, n_dims)``, a list of 2-D
    arrays, or a 2-D array whose rows are clouds of points on the real line.
    Output: ``(n_samples, n_points_out, 3)`` diagrams (module docstring).

    ``n_features_in_``: for a 2-D X its width (scikit-learn's rule); for
    clouds, the dimension of their points when every sample has the same
    (``transform`` then checks it; with ``metric="precomputed"`` the
    samples' sizes differ and it is None).
    """

    def __init__(self, maxdim=1, threshold=math.inf, coeff=2, metric="euclidean",
                 metric_params=None, reduced_homology=True, infinity_values=None, n_jobs=None,
                 backend=None, weights=None, weight_params=None):
        self.maxdim = maxdim
        self.threshold = threshold
        self.coeff = coeff
        self.metric = metric
        self.metric_params = metric_params
        self.reduced_homology = reduced_homology
        self.infinity_values = infinity_values
        self.n_jobs = n_jobs
        self.backend = backend
        self.weights = weights
        self.weight_params = weight_params

    def fit(self, X, y=None):
        """Check the parameters and X; nothing is learnt from X but its
        width (for a 2-D X, the number of points per cloud)."""
        clouds, A = _clouds(X)
        self.n_features_in_ = self._width(clouds, A)
        self.homology_dimensions_ = tuple(range(int(self.maxdim) + 1))
        return self

    def _width(self, clouds, A):
        if A is not None:
            return A.shape[1]
        if self.metric == "precomputed":
            return None
        widths = {c.shape[1] for c in clouds if c.ndim == 2}
        return widths.pop() if len(widths) == 1 else None

    def transform(self, X, y=None):
        check_is_fitted(self, "homology_dimensions_")
        clouds, A = _clouds(X)
        width = self._width(clouds, A)
        if self.n_features_in_ is not None and width is not None and width != self.n_features_in_:
            what = "features" if A is not None else "coordinates per point"
            raise ValueError("X has %d %s, but %s is expecting %d %s as input"
                             % (width, what, type(self).__name__, self.n_features_in_, what))
        kind = "distance" if self.metric == "precomputed" else "points"
        jobs = 1 if self.n_jobs is None else effective_n_jobs(self.n_jobs)
        jobs = max(1, min(jobs, len(clouds)))
        # each computation's threads: every CPU when one runs at a time, a
        # share when several do (the threads backend and the collapse start
        # a thread per CPU they are given)
        n_threads = -1 if jobs == 1 else max(1, _cpus() // jobs)
        if jobs == 1:
            dgms = [self._one(c, kind, n_threads) for c in clouds]
        else:
            dgms = Parallel(n_jobs=jobs, prefer="threads")(
                delayed(self._one)(c, kind, n_threads) for c in clouds)
        return self._pad(dgms)

    def get_feature_names_out(self, input_features=None):
        """The names of the diagrams' last axis: birth, death,
        homology_dimension (the output is 3-D; module docstring)."""
        check_is_fitted(self, "homology_dimensions_")
        return np.asarray(DIAGRAM_AXIS, dtype=object)

    def set_output(self, *, transform=None):
        """Accepted as scikit-learn's set_output (a Pipeline passes it to
        every step); the diagrams stay a 3-D array whatever is asked, the
        feature transformers after this step give the DataFrame."""
        if transform is not None:
            self._sklearn_output_config = {"transform": transform}
        return self

    def _one(self, cloud, kind, n_threads=-1):
        weighting = None
        if self.weights is not None:
            w = self.weights(cloud) if callable(self.weights) else self.weights
            weighting = _rips._weighting(w, self.weight_params)
        out = _rips._compute(cloud, kind, self.maxdim, self.threshold, self.coeff, self.metric,
                             self.metric_params, self.backend, False, False,
                             n_threads=n_threads, weighting=weighting)
        dgms = out["dgms"]
        if self.reduced_homology and len(dgms[0]):
            h0 = dgms[0]
            k = np.flatnonzero(np.isinf(h0[:, 1]))
            if len(k):
                dgms[0] = np.delete(h0, k[0], axis=0)
        fill = self.infinity_values
        if fill is None and math.isfinite(self.threshold):
            fill = float(self.threshold)
        if fill is not None:
            dgms = [np.where(np.isinf(d), fill, d) for d in dgms]
        return dgms

    def _pad(self, dgms):
        dims = self.homology_dimensions_
        width = [max(1, max(len(d[q]) for d in dgms)) for q in dims]
        out = np.zeros((len(dgms), sum(width), 3))
        start = 0
        for q, w in zip(dims, width):
            out[:, start:start + w, 2] = q
            for s, d in enumerate(dgms):
                out[s, start:start + len(d[q]), :2] = d[q]
            start += w
        return out

    # Tags both ways: __sklearn_tags__ (scikit-learn >= 1.6, which refuses
    # a class with _more_tags alone) and _more_tags (before 1.6).
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64"]
        return tags

    def _more_tags(self):
        return {"preserves_dtype": [np.float64]}


class _DiagramFeatures(TransformerMixin, BaseEstimator):
    """What the feature transformers share: fit learns the homology
    dimensions and a range per dimension; transform builds one block per
    dimension."""

    def fit(self, X, y=None):
        D = _diagrams(X)
        self.n_features_in_ = D.shape[2]
        self.homology_dimensions_ = tuple(int(q) for q in np.unique(D[:, :, 2]))
        self.ranges_ = {}
        for q in self.homology_dimensions_:
            P = D[(D[:, :, 2] == q) & (D[:, :, 1] > D[:, :, 0])][:, :2]
            P = P[np.isfinite(P[:, 1])]
            self.ranges_[q] = self._learn_range(P)
        return self

    def transform(self, X, y=None):
        check_is_fitted(self, "homology_dimensions_")
        D = _diagrams(X)
        blocks = []
        for q in self.homology_dimensions_:
            per_sample = [_by_dim(d, q) for d in D]
            blocks.append(self._block(per_sample, self.ranges_[q]).reshape(len(D), -1))
        return np.hstack(blocks)

    def get_feature_names_out(self, input_features=None):
        """One name per column: the class's short name, the homology
        dimension and the column's index within that dimension's block, e.g.
        ``persistenceimage_h1_7``."""
        check_is_fitted(self, "homology_dimensions_")
        prefix = type(self).__name__.lower()
        names = []
        for q in self.homology_dimensions_:
            width = self._block_width(q)
            names += ["%s_h%d_%d" % (prefix, q, k) for k in range(width)]
        return np.asarray(names, dtype=object)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64"]
        tags.input_tags.two_d_array = False  # diagrams: 3-D only
        tags.input_tags.three_d_array = True
        return tags

    def _more_tags(self):
        return {"preserves_dtype": [np.float64], "X_types": ["3darray"]}


def _span(lo, hi):
    """A non-empty interval around [lo, hi] (one unit when it is empty)."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        lo = lo if math.isfinite(lo) else 0.0
        return lo, lo + 1.0
    return lo, hi


class PersistenceImage(_DiagramFeatures):
    """Persistence images (:func:`topoml.persistence_images`), flattened,
    one per homology dimension. Infinite points are dropped.

    Parameters
    ----------
    sigma : float
        Standard deviation of the Gaussians.
    n_bins : int
        Pixels along each axis.
    birth_range, pers_range : (float, float) or None
        Learnt from the training diagrams (finite points, per dimension)
        when None.
    weight : {"constant", "linear", "power"}
    weight_power : float
        For ``"power"``: pixels weighted by persistence ** weight_power.
    """

    def __init__(self, sigma=0.1, n_bins=20, birth_range=None, pers_range=None,
                 weight="constant", weight_power=1.0):
        self.sigma = sigma
        self.n_bins = n_bins
        self.birth_range = birth_range
        self.pers_range = pers_range
        self.weight = weight
        self.weight_power = weight_power

    def _learn_range(self, P):
        b = self.birth_range or _span(P[:, 0].min(initial=np.inf), P[:, 0].max(initial=-np.inf))
        p = P[:, 1] - P[:, 0]
        r = self.pers_range or _span(0.0, p.max(initial=0.0))
        return tuple(b), tuple(r)

    def _block_width(self, q):
        return self.n_bins * self.n_bins

    def _block(self, dgms, rng):
        (b, r), n = rng, self.n_bins
        return features.persistence_images(dgms, b, r, resolution=(n, n), sigma=self.sigma,
                                           weight=self.weight, weight_power=self.weight_power)


class BettiCurve(_DiagramFeatures):
    """Betti curves (:func:`topoml.betti_curve`) on ``n_bins`` values
    evenly spaced over the range of the training diagrams (per dimension),
    or over ``sample_range``."""

    def __init__(self, n_bins=100, sample_range=None):
        self.n_bins = n_bins
        self.sample_range = sample_range

    def _learn_range(self, P):
        lo, hi = self.sample_range or _span(P.min(initial=np.inf), P.max(initial=-np.inf))
        return np.linspace(lo, hi, self.n_bins)

    def _block_width(self, q):
        return self.n_bins

    def _block(self, dgms, grid):
        return np.stack([features.betti_curve(d, grid) for d in dgms])


class PersistenceLandscape(_DiagramFeatures):
    """The first ``n_layers`` persistence landscapes
    (:func:`topoml.landscapes`) on ``n_bins`` values over the range of the
    training diagrams, or over ``sample_range``."""

    def __init__(self, n_layers=1, n_bins=100, sample_range=None):
        self.n_layers = n_layers
        self.n_bins = n_bins
        self.sample_range = sample_range

    def _learn_range(self, P):
        lo, hi = self.sample_range or _span(P.min(initial=np.inf), P.max(initial=-np.inf))
        return np.linspace(lo, hi, self.n_bins)

    def _block_width(self, q):
        return self.n_layers * self.n_bins

    def _block(self, dgms, grid):
        return np.stack([features.landscapes(d, grid, levels=self.n_layers) for d in dgms])


class PersistenceEntropy(_DiagramFeatures):
    """Persistent entropy (:func:`topoml.entropy`) per homology dimension;
    infinite points dropped, or their death replaced by ``infinity_values``."""

    def __init__(self, infinity_values=None):
        self.infinity_values = infinity_values

    def _learn_range(self, P):
        return None

    def _block_width(self, q):
        return 1

    def _block(self, dgms, _):
        inf = "drop" if self.infinity_values is None else self.infinity_values
        return np.array([features.entropy(d, infinite=inf) for d in dgms])
