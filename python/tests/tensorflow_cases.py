"""topoml.tensorflow: the tensor adapter, RipsLayer (gradients against
finite differences, eager/tf.function parity) and activation capture.
Run by test_ml_frameworks.py in an interpreter of its own (see there)."""
import math

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow", reason="TensorFlow is not installed "
                         "(tools/setup-debian.sh installs tensorflow-cpu)")
import topoml.tensorflow as ttf  # noqa: E402

import topoml  # noqa: E402


def generic_cloud(n, d=2, seed=0):
    return np.random.default_rng(seed).random((n, d))


def noisy_circle(n, noise, seed):
    rng = np.random.default_rng(seed)
    t = rng.random(n) * 2 * math.pi
    return np.stack([np.cos(t), np.sin(t)], 1) + noise * rng.normal(size=(n, 2))


def finite_values(dgms):
    return [np.where(np.isfinite(d), d, 0.0) for d in (np.asarray(x) for x in dgms)]


@pytest.mark.parametrize("seed", [0, 1])
def test_diagrams_match_the_engine_and_keep_dtype(seed):
    x = generic_cloud(25, 3, seed)
    ref = topoml.barcodes(x, maxdim=2).diagrams
    for dtype, tol in ((tf.float64, 1e-12), (tf.float32, 1e-6)):
        dg = ttf.RipsLayer(maxdim=2)(tf.constant(x, dtype=dtype))
        for d, r in zip(dg, ref):
            assert d.dtype == dtype
            got = d.numpy().astype(np.float64)
            assert got.shape == r.shape
            fin = np.isfinite(r)
            assert np.array_equal(np.isfinite(got), fin)
            assert np.allclose(got[fin], r[fin], rtol=tol, atol=tol)


def test_adapter_roundtrip():
    t = tf.constant(generic_cloud(6), dtype=tf.float32)
    a = ttf.TensorFlowTensorAdapter.to_numpy(t)
    assert a.dtype == np.float64 and np.allclose(a, t.numpy())
    back = ttf.TensorFlowTensorAdapter.like(a, t)
    assert back.dtype == tf.float32 and back.device == t.device
    with pytest.raises(TypeError):
        ttf.TensorFlowTensorAdapter.to_numpy([1.0, 2.0])


def loss_of(x, distance_matrix=False):
    dg = ttf.rips_persistence(x, 1, distance_matrix=distance_matrix)
    h0 = dg[0][:, 1]
    h0 = tf.where(tf.math.is_finite(h0), h0, tf.zeros_like(h0))
    h1 = dg[1]
    w = tf.range(1, tf.shape(h0)[0] + 1, dtype=x.dtype)
    return tf.reduce_sum(w * h0) + tf.reduce_sum(h1[:, 1] * 2.0 - h1[:, 0] * 3.0)


@pytest.mark.parametrize("seed", [0, 4])
@pytest.mark.parametrize("distance_matrix", [False, True])
def test_gradient_matches_finite_differences(seed, distance_matrix):
    x0 = noisy_circle(14, 0.1, seed)
    if distance_matrix:
        x0 = np.linalg.norm(x0[:, None] - x0[None], axis=-1)
    x = tf.Variable(x0)
    with tf.GradientTape() as tape:
        loss = loss_of(x, distance_matrix)
    g = tape.gradient(loss, x).numpy()
    eps = 1e-6
    fd = np.zeros_like(x0)
    for idx in np.ndindex(*x0.shape):
        if distance_matrix and idx[0] <= idx[1]:
            continue  # the engine reads the strict lower triangle only
        p, m = x0.copy(), x0.copy()
        p[idx] += eps
        m[idx] -= eps
        fd[idx] = (float(loss_of(tf.constant(p), distance_matrix)) -
                   float(loss_of(tf.constant(m), distance_matrix))) / (2 * eps)
    assert np.abs(g).max() > 0
    assert np.allclose(g, fd, atol=1e-5)


def test_eager_and_tf_function_agree():
    x = tf.Variable(noisy_circle(30, 0.05, 3))

    def step(x):
        with tf.GradientTape() as tape:
            dg = ttf.rips_persistence(x, 1)
            loss = tf.reduce_sum(dg[1][:, 1] - dg[1][:, 0])
        return dg, loss, tape.gradient(loss, x)
    e_dg, e_loss, e_g = step(x)
    g_dg, g_loss, g_g = tf.function(step)(x)
    for a, b in zip(e_dg, g_dg):
        assert np.array_equal(a.numpy(), b.numpy())
    assert float(e_loss) == float(g_loss) > 0
    assert np.allclose(e_g.numpy(), g_g.numpy(), rtol=1e-12, atol=1e-12)  # op fusion: ulps


def test_topological_loss_goes_down():
    x = tf.Variable(noisy_circle(40, 0.05, 0))
    opt = tf.keras.optimizers.SGD(learning_rate=0.05)
    losses = []
    for _ in range(60):
        with tf.GradientTape() as tape:
            h1 = ttf.rips_persistence(x, 1)[1]
            loss = tf.reduce_sum(h1[:, 1] - h1[:, 0]) + 0.0 * tf.reduce_sum(x)
        losses.append(float(loss))
        opt.apply_gradients([(tape.gradient(loss, x), x)])
    assert losses[0] > 0.5 and losses[-1] < 0.5 * losses[0]


def small_model():
    tf.keras.utils.set_random_seed(0)
    inp = tf.keras.Input((3,))
    h = tf.keras.layers.Dense(32, activation="relu", name="h1")(inp)
    h = tf.keras.layers.Dense(16, activation="relu", name="h2")(h)
    return tf.keras.Model(inp, tf.keras.layers.Dense(2, name="out")(h))


def circle_batch(n=64):
    t = np.linspace(0, 2 * math.pi, n, endpoint=False)
    return np.stack([np.cos(t), np.sin(t), np.zeros(n)], 1).astype(np.float32)


@pytest.mark.parametrize("projection_dim", [None, 4])
def test_activation_capture_eager_graph_parity(projection_dim):
    model = small_model()
    sigs = []
    for graph in (False, True):
        cap = ttf.TensorFlowActivationCapture(model, ["h1", "h2"], max_samples=48,
                                              projection_dim=projection_dim, graph=graph)
        cap.update(circle_batch(32))
        cap.update(circle_batch(40))
        assert cap.activations("h1").shape[0] == 48
        if projection_dim:
            assert cap.activations("h1").shape[1] == projection_dim
        sigs.append(cap.signatures())
    eager, graph = sigs
    for name in ("h1", "h2"):
        for a, b in zip(eager[name]["diagrams"], graph[name]["diagrams"]):
            assert np.allclose(a, b, atol=1e-6)
        assert np.allclose(eager[name]["total_persistence"], graph[name]["total_persistence"],
                           atol=1e-6)
        assert eager[name]["total_persistence"][0] > 0
        assert eager[name]["samples"] == 48
    with pytest.raises(KeyError):
        ttf.TensorFlowActivationCapture(model, ["nope"])


def test_activation_signatures_are_truncated_at_their_scale():
    """As topoml.torch's: the engine's diagrams at the capture's scale
    (auto by default), the whole filtration with scale=None."""
    from topoml import _ml
    model = small_model()
    for scale in ("auto", 0.05, None):
        cap = ttf.TensorFlowActivationCapture(model, ["h1", "h2"], max_samples=48, scale=scale)
        cap.update(circle_batch(48))
        sig = cap.signatures()
        for name in ("h1", "h2"):
            x = np.asarray(cap.activations(name), dtype=np.float64)
            want = _ml.signature_scale(x) if scale == "auto" else (
                math.inf if scale is None else scale)
            assert sig[name]["scale"] == want
            engine = topoml.barcodes(x, maxdim=1, threshold=want).diagrams
            for a, b in zip(sig[name]["diagrams"], engine):
                np.testing.assert_array_equal(a, b)
