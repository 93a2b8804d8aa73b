"""PyTorch adapters for topoml (imported only by ``import topoml.torch``).

- ``TorchTensorAdapter``: tensors to the host arrays topoml reads and
  back, keeping dtype and device; CPU tensors are read without a copy.
- ``RipsPersistence`` (``nn.Module``) and ``RipsPersistenceFunction``
  (``torch.autograd.Function``): Vietoris-Rips diagrams whose birth and
  death values are differentiable with respect to the points (or the
  distance matrix), through the generators the engine returns.
- ``TorchActivationCapture``: forward hooks on named modules collecting
  activations, and topology signatures per layer.

docs/ml.md describes them and what each claim rests on.
"""
import math

import numpy as np
import torch

from . import _ml

__all__ = ["TorchTensorAdapter", "RipsPersistenceFunction", "RipsPersistence",
           "rips_persistence", "TorchActivationCapture"]


class TorchTensorAdapter:
    """Tensor <-> topoml input and output.

    ``to_numpy(t)`` gives the float64 host array topoml reads: a CPU float64
    tensor that is contiguous is shared through DLPack (no copy); other
    dtypes are converted and CUDA tensors copied to the host (the engine's
    Python path takes host memory). ``like(a, t)`` turns a result back into
    a tensor with ``t``'s dtype and device (no copy when they already match
    a CPU float64 array)."""

    @staticmethod
    def to_numpy(t):
        if not isinstance(t, torch.Tensor):
            raise TypeError("topoml.torch: expected a torch.Tensor, got %s" % type(t).__name__)
        t = t.detach()
        if t.device.type == "cpu" and t.dtype == torch.float64 and t.is_contiguous():
            return np.from_dlpack(t)
        return t.to(device="cpu", dtype=torch.float64).contiguous().numpy()

    @staticmethod
    def like(a, t):
        a = np.asarray(a)
        out = torch.from_numpy(np.ascontiguousarray(a))
        if out.is_floating_point() or not torch.is_floating_point(t):
            return out.to(device=t.device, dtype=t.dtype if out.is_floating_point() else out.dtype)
        return out.to(device=t.device)

    def diagrams(self, x, maxdim=1, threshold=math.inf, distance_matrix=False):
        """Diagrams of x (no gradient) as tensors with x's dtype and device.

        A float32/float64 CUDA tensor goes to the library through DLPack and
        stays on its device (read there by the cuda plugin: no host copy of
        the input); ``last_info`` then holds the backend that ran and
        ``host_copies``, the host copies the library made (0 on that path)."""
        if isinstance(x, torch.Tensor) and x.is_cuda and x.dtype in (torch.float32,
                                                                      torch.float64):
            return self._device_diagrams(x.detach(), maxdim, threshold, distance_matrix)
        with torch.no_grad():
            return rips_persistence(x, maxdim, threshold, distance_matrix)

    def _device_diagrams(self, x, maxdim, threshold, distance_matrix):
        src, n, stream = _device_source(x, distance_matrix)
        out = _ml.rips_device(src, n, maxdim, threshold, distance_matrix, stream)
        self.last_info = {k: v for k, v in out.items() if k != "dgms"}
        return [self.like(d, x) for d in out["dgms"]]


def _device_source(x, distance_matrix):
    """(array, n, stream) for the library's device path: the points, or a
    distance matrix's strict lower triangle in Ripser's order gathered on
    the device, C-contiguous; the current CUDA stream of x's device."""
    n = x.shape[0]
    if distance_matrix:
        r, c = torch.tril_indices(n, n, -1, device=x.device)
        x = x[r, c]
    return x.contiguous(), n, torch.cuda.current_stream(x.device).cuda_stream


def _edge_values(x, idx, distance_matrix):
    """Lengths of the edges idx (k, 2) (-1: none -> 0 here, masked later)."""
    i, j = idx[:, 0].clamp(min=0), idx[:, 1].clamp(min=0)
    if distance_matrix:
        hi, lo = torch.maximum(i, j), torch.minimum(i, j)
        return x[hi, lo]  # the engine reads the strict lower triangle
    return torch.linalg.vector_norm(x[i] - x[j], dim=1)


class RipsPersistenceFunction(torch.autograd.Function):
    """``apply(x, maxdim, threshold, distance_matrix)`` -> (pairs, dims,
    gens): pairs (m, 2) birth/death values in x's dtype and device, dims
    (m,) and gens (m, 4) int64. Gradients reach x through the generator
    edges: d|x_i - x_j| / d x_i = (x_i - x_j) / |x_i - x_j|, or for a
    distance matrix the entry [max(i,j), min(i,j)] itself. Births in
    dimension 0 are 0 and infinite deaths +inf; neither carries gradient.

    A float32/float64 CUDA tensor is read on its device (DLPack; the cuda
    plugin computes the generators there); ``last_info`` (a class
    attribute) then says which backend ran and ``host_copies``, the host
    copies of the input the library made (0 for points on the cuda
    plugin). Other tensors go through a host array."""

    last_info = None

    @staticmethod
    def forward(ctx, x, maxdim=1, threshold=math.inf, distance_matrix=False):
        if x.is_cuda and x.dtype in (torch.float32, torch.float64):
            # read on the device (the cuda plugin gives generators there);
            # only the generators, (m, 4) integers, come to the host
            src, n, stream = _device_source(x.detach(), distance_matrix)
            dims, gens, out = _ml.rips_device_with_generators(src, n, maxdim, threshold,
                                                              distance_matrix, stream)
            RipsPersistenceFunction.last_info = {k: v for k, v in out.items()
                                                 if k not in ("dgms", "gens")}
        else:
            dims, gens, _ = _ml.rips_with_generators(TorchTensorAdapter.to_numpy(x), maxdim,
                                                     threshold, distance_matrix)
        g = torch.from_numpy(gens).to(x.device)
        d = torch.from_numpy(dims).to(x.device)
        birth = torch.where(g[:, 0] >= 0, _edge_values(x, g[:, 0:2], distance_matrix),
                            torch.zeros((), dtype=x.dtype, device=x.device))
        death = torch.where(g[:, 2] >= 0, _edge_values(x, g[:, 2:4], distance_matrix),
                            torch.full((), math.inf, dtype=x.dtype, device=x.device))
        pairs = torch.stack([birth, death], dim=1)
        ctx.save_for_backward(x, g)
        ctx.distance_matrix = distance_matrix
        ctx.mark_non_differentiable(d, g)
        return pairs, d, g

    @staticmethod
    def backward(ctx, grad_pairs, _grad_dims, _grad_gens):
        x, g = ctx.saved_tensors
        grad_x = torch.zeros_like(x)
        if grad_pairs is None:
            return grad_x, None, None, None
        for col, (a, b) in ((0, (0, 1)), (1, (2, 3))):
            keep = g[:, a] >= 0
            if not bool(keep.any()):
                continue
            gi, gj, w = g[keep, a], g[keep, b], grad_pairs[keep, col]
            if ctx.distance_matrix:
                grad_x.index_put_((torch.maximum(gi, gj), torch.minimum(gi, gj)), w,
                                  accumulate=True)
            else:
                diff = x[gi] - x[gj]
                unit = diff / torch.linalg.vector_norm(diff, dim=1, keepdim=True)
                contrib = w[:, None] * unit
                grad_x.index_add_(0, gi, contrib)
                grad_x.index_add_(0, gj, -contrib)
        return grad_x, None, None, None


def rips_persistence(x, maxdim=1, threshold=math.inf, distance_matrix=False):
    """Diagrams of x, a list of (k, 2) tensors (dimensions 0..maxdim) in x's
    dtype and device, differentiable with respect to x."""
    if not isinstance(x, torch.Tensor):
        raise TypeError("topoml.torch: expected a torch.Tensor, got %s" % type(x).__name__)
    if not x.is_floating_point():
        raise TypeError("topoml.torch: expected a floating-point tensor, got %s" % x.dtype)
    pairs, dims, _ = RipsPersistenceFunction.apply(x, int(maxdim), float(threshold),
                                                   bool(distance_matrix))
    return [pairs[dims == k] for k in range(int(maxdim) + 1)]


class RipsPersistence(torch.nn.Module):
    """Layer: x (n, d) points, or (n, n) distances with
    ``distance_matrix=True``, or a batch (B, n, d) -> diagrams (a list per
    dimension; for a batch, a list of such lists)."""

    def __init__(self, maxdim=1, threshold=math.inf, distance_matrix=False):
        super().__init__()
        self.maxdim, self.threshold, self.distance_matrix = maxdim, threshold, distance_matrix

    def forward(self, x):
        if x.dim() == 3:
            return [rips_persistence(b, self.maxdim, self.threshold, self.distance_matrix)
                    for b in x]
        return rips_persistence(x, self.maxdim, self.threshold, self.distance_matrix)


class TorchActivationCapture:
    """Collect the outputs of named modules of ``model`` in forward passes
    and compute their topology signatures.

    ``layers``: names from ``model.named_modules()``. Each output is
    flattened to (batch, features); at most ``max_samples`` rows per layer
    are kept (the first ones seen). With ``projection_dim`` the rows are
    multiplied by a Gaussian matrix (seeded by ``seed``), made and applied
    on the activation's own device, before they leave it. ``scale``: the
    filtration is truncated there ("auto": a few nearest-neighbour gaps;
    None: the whole filtration; see docs/ml.md). Use as a context manager
    (hooks are removed on exit) or call ``remove()``."""

    def __init__(self, model, layers, max_samples=1024, projection_dim=None, seed=0,
                 maxdim=1, n_bins=32, scale="auto"):
        names = dict(model.named_modules())
        missing = [n for n in layers if n not in names]
        if missing:
            raise KeyError("topoml.torch: no module named %s in the model" % ", ".join(missing))
        if int(max_samples) < 1:
            raise ValueError("topoml.torch: max_samples must be >= 1")
        self.layers = list(layers)
        self.max_samples, self.projection_dim, self.seed = int(max_samples), projection_dim, seed
        self.maxdim, self.n_bins, self.scale = maxdim, n_bins, scale
        self._rows = {n: [] for n in self.layers}
        self._count = {n: 0 for n in self.layers}
        self._proj = {}
        self._handles = [names[n].register_forward_hook(self._hook(n)) for n in self.layers]

    def _projection(self, name, t):
        p = self._proj.get(name)
        if p is None or p.device != t.device or p.dtype != t.dtype:
            gen = torch.Generator(device=t.device)
            gen.manual_seed(int(self.seed))
            p = torch.randn(t.shape[1], int(self.projection_dim), generator=gen,
                            device=t.device, dtype=t.dtype) / math.sqrt(self.projection_dim)
            self._proj[name] = p
        return p

    def _hook(self, name):
        @torch.compiler.disable
        def hook(module, inputs, output):
            out = output[0] if isinstance(output, (tuple, list)) else output
            room = self.max_samples - self._count[name]
            if room <= 0 or not isinstance(out, torch.Tensor):
                return
            with torch.no_grad():
                rows = out.detach().reshape(out.shape[0], -1)[:room]
                if not rows.is_floating_point():
                    rows = rows.float()
                if self.projection_dim is not None:
                    rows = rows @ self._projection(name, rows)
                self._rows[name].append(rows)
                self._count[name] += rows.shape[0]
        return hook

    def activations(self, name):
        """The rows kept for layer ``name`` (a tensor on its device)."""
        return torch.cat(self._rows[name]) if self._rows[name] else None

    def signatures(self):
        """{layer: {"diagrams", "total_persistence", "entropy", "betti_grid",
        "betti_curves", "samples", "scale"}} from the rows kept so far."""
        rows = {}
        for name in self.layers:
            acts = self.activations(name)
            if acts is not None:
                rows[name] = TorchTensorAdapter.to_numpy(acts)
        return _ml.layer_signatures(rows, self.maxdim, self.scale, self.n_bins)

    def clear(self):
        for n in self.layers:
            self._rows[n], self._count[n] = [], 0

    def remove(self):
        for h in self._handles:
            h.remove()
        self._handles = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()
        return False

