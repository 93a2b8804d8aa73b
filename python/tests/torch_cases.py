"""topoml.torch: the tensor adapter, the differentiable Rips layer
(gradcheck, a topological loss that goes down) and activation capture.
Run by test_ml_frameworks.py in an interpreter of its own (see there)."""
import math
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed (tools/setup-debian.sh "
                            "installs the CPU build)")
import topoml.torch as tt  # noqa: E402

import topoml  # noqa: E402


def generic_cloud(n, d=2, seed=0, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    return torch.rand(n, d, generator=g, dtype=dtype)


def noisy_circle(n, noise, seed):
    g = torch.Generator().manual_seed(seed)
    t = torch.rand(n, generator=g, dtype=torch.float64) * 2 * math.pi
    pts = torch.stack([torch.cos(t), torch.sin(t)], dim=1)
    return pts + noise * torch.randn(n, 2, generator=g, dtype=torch.float64)


def test_import_topoml_imports_no_framework():
    code = ("import sys, topoml, topoml.features; "
            "bad = [m for m in ('torch', 'tensorflow') if m in sys.modules]; "
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True, env=None)


def test_adapter_shares_cpu_float64_memory_and_restores_dtype_device():
    x = generic_cloud(10)
    a = tt.TorchTensorAdapter.to_numpy(x)
    assert a.dtype == np.float64 and a.ctypes.data == x.data_ptr()  # no copy
    x32 = x.float()
    a32 = tt.TorchTensorAdapter.to_numpy(x32)
    assert a32.dtype == np.float64 and np.allclose(a32, x32.numpy())
    back = tt.TorchTensorAdapter.like(a32, x32)
    assert back.dtype == torch.float32 and back.device == x32.device
    with pytest.raises(TypeError):
        tt.TorchTensorAdapter.to_numpy(np.zeros((3, 2)))


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_diagrams_match_the_engine(seed, dtype):
    x = generic_cloud(25, 3, seed, dtype)
    dg = tt.RipsPersistence(maxdim=2)(x)
    ref = topoml.barcodes(x.double().numpy(), maxdim=2).diagrams
    for d, r in zip(dg, ref):
        assert d.dtype == dtype
        got = d.detach().double().numpy()
        tol = 1e-12 if dtype == torch.float64 else 1e-6  # norms may differ by ulps
        assert got.shape == r.shape
        fin = np.isfinite(r)
        assert np.array_equal(np.isfinite(got), fin)
        assert np.allclose(got[fin], r[fin], rtol=tol, atol=tol)


def test_distance_matrix_input_matches_points():
    x = generic_cloud(18, 2, 5)
    D = torch.cdist(x, x)
    a = tt.rips_persistence(x, 1)
    b = tt.rips_persistence(D, 1, distance_matrix=True)
    for p, q in zip(a, b):
        assert torch.allclose(p, q, atol=1e-12)


@pytest.mark.parametrize("seed", [0, 3, 7])
def test_gradcheck_points(seed):
    x = generic_cloud(14, 2, seed).requires_grad_()

    def f(x):
        pairs, _, _ = tt.RipsPersistenceFunction.apply(x, 1, math.inf, False)
        return torch.where(torch.isfinite(pairs), pairs, torch.zeros_like(pairs))
    assert torch.autograd.gradcheck(f, (x,), eps=1e-6, atol=1e-5)


def test_gradcheck_distance_matrix():
    x = generic_cloud(10, 3, 11)
    D = torch.cdist(x, x).detach().requires_grad_()

    def f(D):
        pairs, _, _ = tt.RipsPersistenceFunction.apply(D, 1, math.inf, True)
        return torch.where(torch.isfinite(pairs), pairs, torch.zeros_like(pairs))
    assert torch.autograd.gradcheck(f, (D,), eps=1e-6, atol=1e-5)


def test_gradient_flows_to_generator_vertices_only():
    x = noisy_circle(12, 0.05, 4).requires_grad_()
    pairs, dims, gens = tt.RipsPersistenceFunction.apply(x, 1, math.inf, False)
    k = int(torch.nonzero(dims == 1)[0])
    pairs[k, 1].backward()
    touched = set(torch.nonzero(x.grad.abs().sum(1)).flatten().tolist())
    assert touched == {int(gens[k, 2]), int(gens[k, 3])}


def h1_persistence(dg, x):
    h1 = dg[1]
    return (h1[:, 1] - h1[:, 0]).sum() if len(h1) else (x * 0).sum()


@pytest.mark.parametrize("seed", [0, 1])
def test_topological_loss_removes_h1(seed):
    x = noisy_circle(40, 0.05, seed).requires_grad_()
    layer = tt.RipsPersistence(maxdim=1)
    opt = torch.optim.SGD([x], lr=0.05)
    losses = []
    for _ in range(60):
        opt.zero_grad()
        loss = h1_persistence(layer(x), x)
        losses.append(float(loss.detach()))
        loss.backward()
        opt.step()
    assert losses[0] > 0.5
    assert losses[-1] < 0.5 * losses[0]


def test_topological_loss_enlarges_h1():
    x = noisy_circle(40, 0.05, 2).requires_grad_()
    layer = tt.RipsPersistence(maxdim=1)
    opt = torch.optim.SGD([x], lr=0.02)
    first = None
    for _ in range(30):
        opt.zero_grad()
        h1 = layer(x)[1]
        loss = -(h1[:, 1] - h1[:, 0]).max()
        first = float(loss) if first is None else first
        loss.backward()
        opt.step()
    assert float(-(lambda h: (h[:, 1] - h[:, 0]).max())(layer(x)[1])) < first - 0.1


def small_mlp():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(3, 32), torch.nn.ReLU(), torch.nn.Linear(32, 16),
                               torch.nn.ReLU(), torch.nn.Linear(16, 2))


def circle_batch(n=64):
    t = torch.linspace(0, 2 * math.pi, n + 1)[:-1]
    return torch.stack([torch.cos(t), torch.sin(t), torch.zeros(n)], dim=1)


@pytest.mark.parametrize("mode", ["plain", "no_grad_eval", "compile_eager"])
def test_activation_capture_modes_agree(mode):
    model = small_mlp()
    ref_model = small_mlp()
    with tt.TorchActivationCapture(ref_model, ["1", "3"], max_samples=48) as ref:
        ref_model(circle_batch())
    expected = ref.signatures()
    run = model
    if mode == "compile_eager":
        run = torch.compile(model, backend="eager")
    with tt.TorchActivationCapture(model, ["1", "3"], max_samples=48) as cap:
        if mode == "no_grad_eval":
            model.eval()
            with torch.no_grad():
                run(circle_batch(32))
                run(circle_batch(40))
        else:
            run(circle_batch())
    sig = cap.signatures()
    assert set(sig) == {"1", "3"}
    for name in sig:
        assert sig[name]["samples"] == 48
        if mode != "no_grad_eval":  # the same 48 rows as the reference
            for a, b in zip(sig[name]["diagrams"], expected[name]["diagrams"]):
                assert np.allclose(a, b)
        assert sig[name]["total_persistence"][0] > 0
        assert len(sig[name]["betti_curves"]) == 2
        distinct = len(np.unique(cap.activations(name).numpy(), axis=0))
        assert sig[name]["betti_curves"][0][0] == distinct  # one component per point at 0


def test_activation_capture_projection_and_errors():
    model = small_mlp()
    with tt.TorchActivationCapture(model, ["1"], max_samples=20, projection_dim=4) as cap:
        model(circle_batch())
    acts = cap.activations("1")
    assert acts.shape == (20, 4)
    sig = cap.signatures()["1"]
    assert sig["entropy"][0] > 0
    model(circle_batch())  # hooks are gone after the with block
    assert cap.activations("1").shape == (20, 4)
    with pytest.raises(KeyError):
        tt.TorchActivationCapture(model, ["nope"])
    with pytest.raises(TypeError):
        tt.rips_persistence(torch.zeros(4, 2, dtype=torch.int64))
    with pytest.raises(ValueError):
        tt.rips_persistence(torch.tensor([[0.0, math.nan], [1.0, 1.0]]))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_cuda_tensors_same_diagrams_and_gradcheck():
    # CUDA tensors are read on the device (the cuda plugin gives the
    # generators there: no host copy of the points); the values and the
    # gradients are computed on the device.
    x = generic_cloud(20, 3, 9)
    xc = x.cuda()
    for a, b in zip(tt.rips_persistence(x, 2), tt.rips_persistence(xc, 2)):
        assert b.device.type == "cuda"
        assert torch.allclose(a, b.cpu(), atol=1e-12)
    info = tt.RipsPersistenceFunction.last_info
    assert info["backend"] == "cuda" and info["host_copies"] == 0, info
    xg = generic_cloud(12, 2, 3).cuda().requires_grad_()

    def f(x):
        pairs, _, _ = tt.RipsPersistenceFunction.apply(x, 1, math.inf, False)
        return torch.where(torch.isfinite(pairs), pairs, torch.zeros_like(pairs))
    assert torch.autograd.gradcheck(f, (xg,), eps=1e-6, atol=1e-5)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_cuda_tensors_reach_the_cuda_plugin_with_no_host_copy(dtype):
    # CUDA tensors go to the library through DLPack and stay on the device:
    # the cuda plugin reads them there, the library makes no host copy, and
    # the diagrams are the engine's on the same values in host memory
    # (widened to float64, as the host path widens them), bit for bit.
    adapter = tt.TorchTensorAdapter()
    side = torch.cuda.Stream()
    for seed, (n, d, maxdim, thr) in enumerate(((60, 2, 1, math.inf), (150, 3, 2, math.inf),
                                                (300, 3, 2, 0.5), (1, 3, 1, math.inf))):
        x = generic_cloud(n, d, seed, dtype)
        want = topoml.ripser(x.double().numpy(), maxdim=maxdim, thresh=thr)["dgms"]
        # Written on a side stream: the plugin must wait for that stream.
        with torch.cuda.stream(side):
            xc = x.cuda(non_blocking=True) * 1
            got = adapter.diagrams(xc, maxdim, thr)
        assert adapter.last_info["backend"] == "cuda", adapter.last_info
        assert adapter.last_info["host_copies"] == 0, adapter.last_info
        assert len(got) == maxdim + 1
        for a, b in zip(want, got):
            assert b.device.type == "cuda" and b.dtype == dtype
            assert torch.equal(torch.from_numpy(a).to(dtype), b.cpu()), (a, b)
    # A distance matrix on the device: condensed there, copied once by the
    # library (the engine reads matrices on the host); the same diagrams.
    x = generic_cloud(40, 3, 5, dtype)
    D = torch.cdist(x.double(), x.double())
    D = ((D + D.T) / 2).fill_diagonal_(0).to(dtype)  # exactly symmetric, zero diagonal
    want = topoml.ripser(D.double().numpy(), maxdim=1, distance_matrix=True)["dgms"]
    got = adapter.diagrams(D.cuda(), 1, math.inf, distance_matrix=True)
    assert adapter.last_info["host_copies"] == 1, adapter.last_info
    for a, b in zip(want, got):
        assert torch.equal(torch.from_numpy(a).to(dtype), b.cpu()), (a, b)


def test_activation_signatures_are_truncated_at_their_scale():
    """signatures() runs on the filtration truncated at the capture's scale
    (auto by default), exactly the engine's diagrams there; scale=None
    gives the whole filtration."""
    from topoml import _ml
    model = small_mlp()
    for scale in ("auto", 0.05, None):
        with tt.TorchActivationCapture(model, ["1", "3"], max_samples=64, scale=scale) as cap:
            model(circle_batch())
        sig = cap.signatures()
        for name in ("1", "3"):
            x = cap.activations(name).detach().double().numpy()
            want = _ml.signature_scale(x) if scale == "auto" else (
                math.inf if scale is None else scale)
            assert sig[name]["scale"] == want
            threshold = want if math.isfinite(want) else math.inf
            engine = topoml.barcodes(x, maxdim=1, threshold=threshold).diagrams
            for a, b in zip(sig[name]["diagrams"], engine):
                np.testing.assert_array_equal(a, b)
