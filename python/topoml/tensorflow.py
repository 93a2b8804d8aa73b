"""TensorFlow adapters for topoml (imported only by ``import
topoml.tensorflow``).

- ``TensorFlowTensorAdapter``: tensors to the host arrays topoml reads and
  back, keeping dtype and device.
- ``rips_persistence`` and the Keras layer ``RipsLayer``: Vietoris-Rips
  diagrams whose birth and death values are differentiable with respect to
  the points (or the distance matrix) through the generators, with
  ``tf.custom_gradient``; they run eagerly and inside ``tf.function``.
- ``TensorFlowActivationCapture``: outputs of named Keras layers and their
  topology signatures.

docs/ml.md describes them and what each claim rests on.
"""
import math

import numpy as np
import tensorflow as tf

from . import _ml

__all__ = ["TensorFlowTensorAdapter", "rips_persistence", "RipsLayer",
           "TensorFlowActivationCapture"]


class TensorFlowTensorAdapter:
    """Tensor <-> topoml input and output. ``to_numpy(t)`` gives the float64
    host array topoml reads (an eager CPU float64 tensor's own buffer where
    TensorFlow shares it); ``like(a, t)`` gives a result back as a tensor
    with ``t``'s dtype on ``t``'s device."""

    @staticmethod
    def to_numpy(t):
        if isinstance(t, np.ndarray):
            return np.asarray(t, dtype=np.float64)
        if not tf.is_tensor(t):
            raise TypeError("topoml.tensorflow: expected a tf.Tensor, got %s" % type(t).__name__)
        return np.asarray(t.numpy(), dtype=np.float64)

    @staticmethod
    def like(a, t):
        with tf.device(t.device or None):
            return tf.cast(tf.convert_to_tensor(np.asarray(a)), t.dtype)

    def diagrams(self, x, maxdim=1, threshold=math.inf, distance_matrix=False):
        """Diagrams of x as tensors in x's dtype (no gradient)."""
        return [tf.stop_gradient(d) for d in
                rips_persistence(x, maxdim, threshold, distance_matrix)]


def _generators(x, maxdim, threshold, distance_matrix):
    def host(a):
        dims, gens, _ = _ml.rips_with_generators(a, maxdim, threshold, distance_matrix)
        return dims, gens
    dims, gens = tf.numpy_function(host, [x], [tf.int64, tf.int64], stateful=False)
    dims.set_shape([None])
    gens.set_shape([None, 4])
    return dims, gens


def _lengths(x, i, j, distance_matrix):
    i, j = tf.maximum(i, 0), tf.maximum(j, 0)
    if distance_matrix:
        return tf.gather_nd(x, tf.stack([tf.maximum(i, j), tf.minimum(i, j)], axis=1))
    diff = tf.gather(x, i) - tf.gather(x, j)
    return tf.sqrt(tf.reduce_sum(diff * diff, axis=1))


def _pairs(x, gens, distance_matrix):
    """(m, 2) values of the generator edges, with a hand-written gradient:
    each value's gradient goes to its edge's endpoints (points) or to the
    entry D[max(i,j), min(i,j)] (distance matrix)."""
    @tf.custom_gradient
    def values(x):
        b = _lengths(x, gens[:, 0], gens[:, 1], distance_matrix)
        d = _lengths(x, gens[:, 2], gens[:, 3], distance_matrix)
        birth = tf.where(gens[:, 0] >= 0, b, tf.zeros_like(b))
        death = tf.where(gens[:, 2] >= 0, d, tf.fill(tf.shape(d), tf.constant(math.inf, x.dtype)))
        pairs = tf.stack([birth, death], axis=1)

        def grad(dy):
            gx = tf.zeros_like(x)
            for col, a in ((0, 0), (1, 2)):
                keep = gens[:, a] >= 0
                gi = tf.boolean_mask(gens[:, a], keep)
                gj = tf.boolean_mask(gens[:, a + 1], keep)
                w = tf.boolean_mask(dy[:, col], keep)
                if distance_matrix:
                    idx = tf.stack([tf.maximum(gi, gj), tf.minimum(gi, gj)], axis=1)
                    gx = tf.tensor_scatter_nd_add(gx, idx, w)
                else:
                    diff = tf.gather(x, gi) - tf.gather(x, gj)
                    unit = diff / tf.norm(diff, axis=1, keepdims=True)
                    c = w[:, None] * unit
                    gx = tf.tensor_scatter_nd_add(gx, gi[:, None], c)
                    gx = tf.tensor_scatter_nd_add(gx, gj[:, None], -c)
            return gx
        return pairs, grad
    return values(x)


def rips_persistence(x, maxdim=1, threshold=math.inf, distance_matrix=False):
    """Diagrams of x (n, d) points or (n, n) distances: a list of (k, 2)
    tensors, dimensions 0..maxdim, in x's dtype, differentiable with
    respect to x. Works eagerly and inside tf.function."""
    x = tf.convert_to_tensor(x)
    if not x.dtype.is_floating:
        raise TypeError("topoml.tensorflow: expected a floating-point tensor, got %s" % x.dtype)
    maxdim = int(maxdim)
    dims, gens = _generators(x, maxdim, float(threshold), bool(distance_matrix))
    pairs = _pairs(x, gens, bool(distance_matrix))
    return [tf.boolean_mask(pairs, tf.equal(dims, k)) for k in range(maxdim + 1)]


class RipsLayer(tf.keras.layers.Layer):
    """Keras layer: x -> diagrams (a list of (k, 2) tensors per dimension),
    like ``gudhi.tensorflow.RipsLayer`` but differentiable through the
    engine's generators."""

    def __init__(self, maxdim=1, threshold=math.inf, distance_matrix=False, **kwargs):
        kwargs.setdefault("autocast", False)
        super().__init__(**kwargs)
        self._convert_input_args = False  # keep the input's dtype (Keras 3 casts otherwise)
        self.maxdim, self.threshold, self.distance_matrix = maxdim, threshold, distance_matrix

    def call(self, x):
        return rips_persistence(x, self.maxdim, self.threshold, self.distance_matrix)


class TensorFlowActivationCapture:
    """Outputs of the named layers of a built Keras model, collected by
    ``update(batch)`` (eager, or through tf.function with
    ``graph=True``): the first ``max_samples`` rows per layer, flattened,
    optionally multiplied by a seeded Gaussian matrix of ``projection_dim``
    columns on the activations' device. ``signatures()`` and ``scale`` as
    in topoml.torch."""

    def __init__(self, model, layers, max_samples=1024, projection_dim=None, seed=0,
                 maxdim=1, n_bins=32, graph=False, scale="auto"):
        names = [l.name for l in model.layers]
        missing = [n for n in layers if n not in names]
        if missing:
            raise KeyError("topoml.tensorflow: no layer named %s in the model"
                           % ", ".join(missing))
        if int(max_samples) < 1:
            raise ValueError("topoml.tensorflow: max_samples must be >= 1")
        self.layers = list(layers)
        self.max_samples, self.projection_dim, self.seed = int(max_samples), projection_dim, seed
        self.maxdim, self.n_bins, self.scale = maxdim, n_bins, scale
        self._features = tf.keras.Model(model.inputs,
                                        [model.get_layer(n).output for n in self.layers])
        self._run = tf.function(self._forward) if graph else self._forward
        self._rows = {n: [] for n in self.layers}
        self._count = {n: 0 for n in self.layers}

    def _forward(self, x):
        outs = self._features(x, training=False)
        if not isinstance(outs, (list, tuple)):
            outs = [outs]
        res = []
        for o in outs:
            rows = tf.reshape(o, [tf.shape(o)[0], -1])
            if not rows.dtype.is_floating:
                rows = tf.cast(rows, tf.float32)
            if self.projection_dim is not None:
                p = tf.random.stateless_normal([rows.shape[1], int(self.projection_dim)],
                                               seed=[int(self.seed), 0], dtype=rows.dtype)
                rows = tf.matmul(rows, p) / math.sqrt(self.projection_dim)
            res.append(rows)
        return res

    def update(self, x):
        outs = self._run(tf.convert_to_tensor(x))
        for name, rows in zip(self.layers, outs):
            room = self.max_samples - self._count[name]
            if room > 0:
                rows = rows[:room]
                self._rows[name].append(rows)
                self._count[name] += int(rows.shape[0])

    def activations(self, name):
        return tf.concat(self._rows[name], axis=0) if self._rows[name] else None

    def signatures(self):
        """{layer: {"diagrams", "total_persistence", "entropy", "betti_grid",
        "betti_curves", "samples", "scale"}} from the rows kept so far; the
        layers are computed at once (topoml._ml.layer_signatures)."""
        rows = {}
        for name in self.layers:
            acts = self.activations(name)
            if acts is not None:
                rows[name] = TensorFlowTensorAdapter.to_numpy(acts)
        return _ml.layer_signatures(rows, self.maxdim, self.scale, self.n_bins)

    def clear(self):
        for n in self.layers:
            self._rows[n], self._count[n] = [], 0
