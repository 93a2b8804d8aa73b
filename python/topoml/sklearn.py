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
2-D arrays, which only the first step reads; docs/python.md).

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

import numpy as np
from joblib import Parallel, delayed
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


def _more_tags_for(est):
    return {"preserves_dtype": [np.float64]}


class VietorisRipsPersistence(TransformerMixin, BaseEstimator):
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
        Samples computed in parallel threads (the GIL is released).
    backend : str or None
        As in :func:`topoml.barcodes`.

    Input: a 3-D array ``(n_samples, n_points, n_dims)``, a list of 2-D
    arrays, or a 2-D array whose rows are clouds of points on the real line.
    Output: ``(n_samples, n_points_out, 3)`` diagrams (module docstring).
    """

    def __init__(self, maxdim=1, threshold=math.inf, coeff=2, metric="euclidean",
                 metric_params=None, reduced_homology=True, infinity_values=None, n_jobs=None,
                 backend=None):
        self.maxdim = maxdim
        self.threshold = threshold
        self.coeff = coeff
        self.metric = metric
        self.metric_params = metric_params
        self.reduced_homology = reduced_homology
        self.infinity_values = infinity_values
        self.n_jobs = n_jobs
        self.backend = backend

    def fit(self, X, y=None):
        """Check the parameters and X; nothing is learnt from X but its
        width (for a 2-D X, the number of points per cloud)."""
        clouds, A = _clouds(X)
        self.n_features_in_ = A.shape[1] if A is not None else None
        self.homology_dimensions_ = tuple(range(int(self.maxdim) + 1))
        return self

    def transform(self, X, y=None):
        check_is_fitted(self, "homology_dimensions_")
        clouds, A = _clouds(X)
        if self.n_features_in_ is not None and A is not None and A.shape[1] != self.n_features_in_:
            raise ValueError("X has %d features, but %s is expecting %d features as input"
                             % (A.shape[1], type(self).__name__, self.n_features_in_))
        kind = "distance" if self.metric == "precomputed" else "points"
        dgms = Parallel(n_jobs=self.n_jobs, prefer="threads")(
            delayed(self._one)(c, kind) for c in clouds)
        return self._pad(dgms)

    def _one(self, cloud, kind):
        out = _rips._compute(cloud, kind, self.maxdim, self.threshold, self.coeff, self.metric,
                             self.metric_params, self.backend, False, False)
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

    def _more_tags(self):
        return _more_tags_for(self)


class _DiagramFeatures(TransformerMixin, BaseEstimator):
    """What the feature transformers share: fit learns the homology
    dimensions and a range per dimension; transform builds one block per
    dimension."""

    def fit(self, X, y=None):
        D = _diagrams(X)
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

    def _more_tags(self):
        return _more_tags_for(self)


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

    def _block(self, dgms, grid):
        return np.stack([features.landscapes(d, grid, levels=self.n_layers) for d in dgms])


class PersistenceEntropy(_DiagramFeatures):
    """Persistent entropy (:func:`topoml.entropy`) per homology dimension;
    infinite points dropped, or their death replaced by ``infinity_values``."""

    def __init__(self, infinity_values=None):
        self.infinity_values = infinity_values

    def _learn_range(self, P):
        return None

    def _block(self, dgms, _):
        inf = "drop" if self.infinity_values is None else self.infinity_values
        return np.array([features.entropy(d, infinite=inf) for d in dgms])
