"""Triton kernels for Python users: pairwise distances and topology-guided
block-sparse attention (imported only by ``import topoml.triton``; importing
it does not import torch or triton either: they load on first use).

- ``available()``: ``(True, "")`` when torch, triton and a CUDA device are
  there, ``(False, "missing runtime: ...")`` otherwise. Every launcher
  raises ``RuntimeError`` with that reason when it cannot run. Under
  ``TRITON_INTERPRET=1`` the launchers also take CPU tensors and run the
  kernels in Triton's interpreter (``interpret_available()``): that is how
  the tests check the kernels on a machine without a GPU.
- ``distances(x)``: the pairwise distances of the rows of x through the
  triton-bridge plugin's own kernel (plugins/triton-bridge/kernels/
  distances.py, the file its ahead-of-time build compiles), through
  Triton's JIT.
- ``attention_schedule(q, k, block_size)``: a block-sparse attention
  schedule chosen from the H0 barcode of the key blocks' summaries
  (``AttentionSchedule``; ``to_flex_block_mask()`` gives FlexAttention's
  ``BlockMask`` for the same blocks).
- ``block_sparse_attention(q, k, v, schedule)``: the forward and backward passes of
  attention restricted to the schedule's blocks, in a Triton kernel.

docs/triton-attention.md describes the method and what has been checked.
"""
import dataclasses
import functools
import importlib.util
import math
import os
import sys

import numpy as np

__all__ = ["available", "interpret_available", "distances", "AttentionSchedule",
           "attention_schedule", "schedule_from_block_mask", "block_means", "block_sparse_attention",
           "block_mask_dense", "h0_scale"]

_HERE = os.path.dirname(os.path.abspath(__file__))
# Where the triton-bridge kernels are: beside the package when it was built
# or installed (the build copies them there), else the source tree.
_KERNEL_DIRS = (os.path.join(_HERE, "_triton_kernels"),
                os.path.join(_HERE, "..", "..", "plugins", "triton-bridge", "kernels"))


def _interpreting():
    return os.environ.get("TRITON_INTERPRET", "") not in ("", "0")


def _runtime_reason():
    """'' when torch and triton import, else why not."""
    missing = []
    for name in ("torch", "triton"):
        try:
            importlib.import_module(name)
        except Exception as e:  # an ImportError, or a broken install
            missing.append("%s (%s)" % (name, e.__class__.__name__ + ": " + str(e)))
    return ("missing runtime: " + ", ".join(missing)) if missing else ""


@functools.lru_cache(maxsize=None)
def available():
    """(True, '') when torch, triton and a CUDA device are there; else
    (False, 'missing runtime: ...') naming what is missing. Without CUDA,
    triton itself is only looked for, not imported: importing it is of no
    use then, and in a process that has loaded other frameworks it can
    take the process down."""
    missing = [name for name in ("torch", "triton") if importlib.util.find_spec(name) is None]
    if missing:
        return False, "missing runtime: " + ", ".join("%s (not installed)" % m for m in missing)
    try:
        import torch
    except Exception as e:  # a broken install
        return False, "missing runtime: torch (%s: %s)" % (e.__class__.__name__, e)
    if not torch.cuda.is_available():
        return False, "missing runtime: CUDA (torch %s sees no CUDA device)" % torch.__version__
    reason = _runtime_reason()
    if reason:
        return False, reason
    return True, ""


def interpret_available():
    """(True, '') when TRITON_INTERPRET=1 is set and torch and triton
    import, so the launchers run CPU tensors in Triton's interpreter."""
    if not _interpreting():
        return False, "missing runtime: TRITON_INTERPRET=1 is not set (CPU tensors need the interpreter)"
    reason = _runtime_reason()
    if reason:
        return False, reason
    import numpy
    if tuple(int(v) for v in numpy.__version__.split(".")[:2]) >= (2, 4):
        # Triton 3.6's interpreter calls int() on 1-element arrays.
        return False, "missing runtime: Triton's interpreter needs numpy < 2.4 (found %s)" % numpy.__version__
    return True, ""


def _require(*tensors):
    """Raise RuntimeError unless these tensors can be launched on: CUDA
    tensors with a CUDA runtime, or CPU tensors under the interpreter
    (triton is imported only where it can run: see available)."""
    on_cpu = any(t.device.type == "cpu" for t in tensors)
    if on_cpu:
        ok, reason = interpret_available()
        if not ok:
            ok_cuda, why = available()
            raise RuntimeError("topoml.triton: CPU tensors need TRITON_INTERPRET=1; " +
                               (why if not ok_cuda else reason))
    else:
        ok, reason = available()
        if not ok:
            raise RuntimeError("topoml.triton: " + reason)
    devices = {t.device for t in tensors}
    if len(devices) > 1:
        raise ValueError("topoml.triton: tensors on different devices: %s" % sorted(map(str, devices)))


# --- the triton-bridge kernels, one source ---------------------------------

def _kernel_dir():
    for d in _KERNEL_DIRS:
        if os.path.isfile(os.path.join(d, "distances.py")):
            return os.path.normpath(d)
    raise RuntimeError("topoml.triton: the triton-bridge kernels are not installed (looked in %s)"
                       % ", ".join(os.path.normpath(d) for d in _KERNEL_DIRS))


@functools.lru_cache(maxsize=None)
def _bridge_kernels():
    """The modules plugins/triton-bridge/kernels/{tiles,distances}.py, loaded
    under private names (distances.py imports `tiles` by its plain name, as
    the ahead-of-time build puts the folder on sys.path: that name is bound
    only while distances.py loads)."""
    d = _kernel_dir()
    mods = {}
    saved = sys.modules.get("tiles")
    try:
        for name in ("tiles", "distances"):
            spec = importlib.util.spec_from_file_location("topoml._triton_kernels." + name,
                                                          os.path.join(d, name + ".py"))
            mod = importlib.util.module_from_spec(spec)
            if name == "tiles":
                sys.modules["tiles"] = mod
            sys.modules[spec.name] = mod
            spec.loader.exec_module(mod)
            mods[name] = mod
    finally:
        if saved is None:
            sys.modules.pop("tiles", None)
        else:
            sys.modules["tiles"] = saved
    return mods


def distances(x, squared=False, condensed=False):
    """Pairwise euclidean (or squared euclidean) distances between the rows
    of x, an (n, dim) float32 or float64 tensor, computed by the
    triton-bridge kernel ``pairwise_distances`` (its f32/f64 schedule: 64 x
    64 tiles, MT 4, TW 16). Returns the (n, n) matrix (zero diagonal), or
    with ``condensed`` the strict lower triangle in Ripser's order (entry
    i > j at i(i-1)/2 + j), with x's dtype and device."""
    import torch
    if not isinstance(x, torch.Tensor) or x.dim() != 2:
        raise ValueError("topoml.triton.distances: x must be an (n, dim) tensor")
    if x.dtype not in (torch.float32, torch.float64):
        raise TypeError("topoml.triton.distances: float32 or float64, got %s" % x.dtype)
    _require(x)
    n, dim = x.shape
    m = n * (n - 1) // 2
    out = torch.empty(max(m, 1), dtype=x.dtype, device=x.device)
    if n > 1:
        xt = x.detach().t().contiguous() if dim else torch.zeros(1, dtype=x.dtype, device=x.device)
        MT, TW = 4, 16
        rows = -(-n // (MT * TW))
        grid = (rows * (rows + 1) // 2,)
        _bridge_kernels()["distances"].pairwise_distances[grid](
            xt, out, n, dim, 0 if squared else 1, 0, 0, MT=MT, TW=TW, UNROLL=1,
            PTX_STORE=0 if _interpreting() else 1, num_warps=8, num_stages=1,
            enable_fp_fusion=False)  # as the ahead-of-time build compiles it
    out = out[:m]
    if condensed:
        return out
    full = torch.zeros((n, n), dtype=x.dtype, device=x.device)
    i, j = torch.tril_indices(n, n, offset=-1, device=x.device)
    full[i, j] = out
    full[j, i] = out
    return full


# --- schedules ---------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class AttentionSchedule:
    """A block-sparse attention schedule: which key blocks each query block
    attends to, for every (batch, head).

    ``counts[b, h, i]`` key blocks for query block i, listed ascending in
    ``indices[b, h, i, :counts[b, h, i]]`` (the rest of the row is padding,
    -1): one CSR row per query block, padded to a rectangle, which is also
    FlexAttention's ``kv_num_blocks`` / ``kv_indices`` layout. Blocks are
    ``block_size`` positions of the sequence; the last one of a sequence
    whose length is not a multiple of it is shorter (its tail is masked).

    Metadata: ``density`` the kept block pairs over the block pairs there
    are (all of them, or with ``causal`` those on or below the diagonal),
    over every (batch, head); ``scale[b, h]`` the threshold the components
    were taken at; ``components[b, h]`` their number; ``why`` how the scale
    was chosen; ``n_global`` the leading blocks every block attends to and
    that attend to every block.
    """
    block_size: int
    q_len: int
    kv_len: int
    causal: bool
    counts: np.ndarray
    indices: np.ndarray
    density: float
    scale: np.ndarray
    components: np.ndarray
    n_global: int
    why: str

    @property
    def shape(self):
        """(batch, heads, query blocks, key blocks)."""
        return self.counts.shape + (self.indices.shape[-1],)

    @property
    def n_blocks(self):
        """Kept block pairs over all (batch, head): the budget."""
        return int(self.counts.sum())

    def mask(self):
        """The block mask as a boolean array (batch, heads, q blocks, k blocks)."""
        b, h, nq, nk = self.shape
        m = np.zeros((b, h, nq, nk + 1), dtype=bool)
        idx = np.where(self.indices < 0, nk, self.indices)
        np.put_along_axis(m, idx, True, axis=-1)
        return m[..., :nk]

    def metadata(self):
        """The schedule's description as plain data (JSON-ready)."""
        return {"block_size": self.block_size, "q_len": self.q_len, "kv_len": self.kv_len,
                "causal": self.causal, "shape": list(self.shape), "n_blocks": self.n_blocks,
                "density": self.density, "scale": self.scale.tolist(),
                "components": self.components.tolist(), "n_global": self.n_global,
                "why": self.why}

    def transposed(self):
        """The schedule seen from the keys: for each key block, the query
        blocks that attend to it (the backward pass's dK/dV tables)."""
        m = np.swapaxes(self.mask(), -1, -2)
        counts = m.sum(axis=-1).astype(np.int32)
        order = np.argsort(~m, axis=-1, kind="stable").astype(np.int32)
        idx = np.where(np.arange(m.shape[-1]) < counts[..., None], order, -1).astype(np.int32)
        return dataclasses.replace(self, q_len=self.kv_len, kv_len=self.q_len, counts=counts,
                                   indices=idx)

    def device_tables(self, device):
        """(counts, indices) as int32 tensors on device, as the kernel reads them."""
        import torch
        return (torch.as_tensor(self.counts, dtype=torch.int32, device=device).contiguous(),
                torch.as_tensor(self.indices, dtype=torch.int32, device=device).contiguous())

    def to_flex_block_mask(self, device="cpu"):
        """FlexAttention's ``BlockMask`` for the same blocks. Kept blocks
        that need no element mask (below the diagonal when causal, inside
        the sequence) are its full blocks; the others are partial blocks
        whose ``mask_mod`` applies causality (q >= k) and the sequence end.
        ``mask_mod`` also looks the block up in the schedule, because
        FlexAttention's eager path (no torch.compile) applies ``mask_mod``
        alone and ignores the block tables."""
        import torch
        from torch.nn.attention.flex_attention import BlockMask
        b, h, nq, nk = self.shape
        bs = self.block_size
        kept = self.mask()
        partial = np.zeros_like(kept)
        if self.causal:
            partial |= np.eye(nq, nk, dtype=bool)[None, None]
        if self.kv_len % bs:
            partial[..., nk - 1] = True
        if self.q_len % bs:
            partial[..., nq - 1, :] = True
        partial &= kept
        full = kept & ~partial

        def tables(m):
            counts = torch.as_tensor(m.sum(-1), dtype=torch.int32, device=device)
            order = np.argsort(~m, axis=-1, kind="stable")
            return counts, torch.as_tensor(order, dtype=torch.int32, device=device).contiguous()

        blocks = torch.as_tensor(kept, device=device)
        causal, kv_len = self.causal, self.kv_len

        def mask_mod(bi, hi, q_idx, kv_idx):
            m = blocks[bi, hi, q_idx // bs, kv_idx // bs] & (kv_idx < kv_len)
            return (m & (q_idx >= kv_idx)) if causal else m

        pc, pi = tables(partial)
        fc, fi = tables(full)
        return BlockMask.from_kv_blocks(pc, pi, fc, fi, BLOCK_SIZE=bs, mask_mod=mask_mod,
                                        seq_lengths=(self.q_len, self.kv_len))


def _blocks(n, block_size):
    return -(-n // block_size)


def _components(dist, scale):
    """Labels (smallest member) of the connected components of the graph
    with an edge where dist <= scale, by min-label propagation with pointer
    jumping."""
    n = dist.shape[0]
    adj = dist <= scale
    np.fill_diagonal(adj, True)
    labels = np.arange(n)
    while True:
        new = np.where(adj, labels[None, :], n).min(axis=1)
        new = np.minimum(new, labels)
        while True:
            jumped = new[new]
            if np.array_equal(jumped, new):
                break
            new = jumped
        if np.array_equal(new, labels):
            return labels
        labels = new


def h0_scale(deaths):
    """(scale, why) from an H0 barcode's finite deaths: the death below the
    largest gap between consecutive deaths (sorted), so that the components
    at that scale are the clusters the largest gap separates. With one
    finite death, that death; with none (a single block), 0.

    Examples
    --------
    >>> from topoml.triton import h0_scale
    >>> h0_scale([0.1, 0.2, 0.25, 3.0, 3.2, float("inf")])[0]
    0.25
    """
    d = np.sort(np.asarray([v for v in deaths if np.isfinite(v)], dtype=np.float64))
    if d.size == 0:
        return 0.0, "one block: no finite H0 death"
    if d.size == 1:
        return float(d[0]), "one finite H0 death: its value"
    gaps = np.diff(d)
    i = int(np.argmax(gaps))
    return float(d[i]), ("largest gap between sorted H0 deaths: %.6g -> %.6g (gap %.6g, %d of %d deaths "
                         "below)" % (d[i], d[i + 1], gaps[i], i + 1, d.size))


def block_means(x, block_size):
    """Mean of each block of x (b, h, n, d) over its valid rows: a float64
    tensor (b, h, blocks, d) on x's device."""
    import torch
    b, h, n, d = x.shape
    nb = _blocks(n, block_size)
    pad = nb * block_size - n
    xf = x.detach().to(torch.float64)
    if pad:
        xf = torch.nn.functional.pad(xf, (0, 0, 0, pad))
    sums = xf.reshape(b, h, nb, block_size, d).sum(dim=3)
    sizes = torch.full((nb,), float(block_size), dtype=torch.float64, device=x.device)
    sizes[-1] = block_size - pad
    return sums / sizes[:, None]


def _can_launch(t):
    """Whether topoml.triton's kernels can run on tensor t here."""
    if t.device.type == "cuda":
        return available()[0]
    return t.device.type == "cpu" and interpret_available()[0]


def schedule_from_block_mask(mask, block_size, q_len, kv_len, causal, scale=None,
                             components=None, n_global=0, why=""):
    """An AttentionSchedule from a boolean block mask (b, h, q blocks, k
    blocks); causal drops blocks above the diagonal. The ablations in
    bench/attention.py (random, local, top-k) are built through this."""
    mask = np.array(mask, dtype=bool, copy=True)
    b, h, nq, nk = mask.shape
    if causal:
        mask &= np.tril(np.ones((nq, nk), dtype=bool))[None, None]
    counts = mask.sum(axis=-1).astype(np.int32)
    order = np.argsort(~mask, axis=-1, kind="stable").astype(np.int32)
    indices = np.where(np.arange(nk)[None, None, None, :] < counts[..., None], order, -1)
    possible = (np.tril(np.ones((nq, nk))).sum() if causal else nq * nk) * b * h
    if scale is None:
        scale = np.full((b, h), np.nan)
    if components is None:
        components = np.zeros((b, h), dtype=np.int64)
    return AttentionSchedule(block_size=int(block_size), q_len=int(q_len), kv_len=int(kv_len),
                             causal=bool(causal), counts=counts, indices=indices.astype(np.int32),
                             density=float(counts.sum() / possible), scale=np.asarray(scale),
                             components=np.asarray(components), n_global=int(n_global), why=why)


def attention_schedule(q, k, block_size=64, causal=False, n_global=1, summary="keys", scale=None):
    """The topology-guided schedule for queries q and keys k, (batch, heads,
    seq, d) tensors of the same sequence length.

    For each (batch, head): the mean of each block of ``summary`` ("keys",
    "queries", or "both": the two means side by side); their pairwise
    distances; the H0 barcode of those (``topoml.barcodes(maxdim=0)`` on the
    distance matrix); a scale from the barcode (``h0_scale``, or ``scale``
    if given); the connected components of the threshold graph at that
    scale. Query block i attends to key block j when blocks i and j are in
    the same component, when i == j, or when i or j is one of the first
    ``n_global`` blocks; with ``causal``, only j <= i.
    """
    import torch
    import topoml
    if q.dim() != 4 or k.dim() != 4 or q.shape[:2] != k.shape[:2] or q.shape[2] != k.shape[2]:
        raise ValueError("topoml.triton.attention_schedule: q and k must be (batch, heads, seq, d) "
                         "with the same batch, heads and seq; got %s and %s"
                         % (tuple(q.shape), tuple(k.shape)))
    if block_size < 16 or block_size & (block_size - 1):
        raise ValueError("topoml.triton.attention_schedule: block_size must be a power of two >= 16")
    if summary not in ("keys", "queries", "both"):
        raise ValueError("topoml.triton.attention_schedule: summary is 'keys', 'queries' or 'both'")
    b, h, n, _ = q.shape
    nb = _blocks(n, block_size)
    parts = [block_means(t, block_size) for t, use in ((k, summary != "queries"),
                                                         (q, summary != "keys")) if use]
    pts = torch.cat(parts, dim=-1)
    # The summaries' distances by the triton-bridge kernel where it can run
    # (on the device of q and k), else torch.cdist; both sum the squared
    # coordinate differences in float64.
    kernel = _can_launch(pts)
    mask = np.zeros((b, h, nb, nb), dtype=bool)
    scales = np.zeros((b, h))
    comps = np.zeros((b, h), dtype=np.int64)
    whys = set()
    g = min(n_global, nb)
    for bi in range(b):
        for hi in range(h):
            p = pts[bi, hi]
            dist = (distances(p) if kernel else
                    torch.cdist(p, p, compute_mode="donot_use_mm_for_euclid_dist")).cpu().numpy()
            dist = 0.5 * (dist + dist.T)
            np.fill_diagonal(dist, 0.0)
            if nb > 1:
                deaths = topoml.barcodes(dist, maxdim=0, distance_matrix=True)[0][:, 1]
            else:
                deaths = np.array([np.inf])
            if scale is None:
                s, why = h0_scale(deaths)
                whys.add(why.split(":")[0])
            else:
                s, why = float(scale), "given"
                whys.add(why)
            labels = _components(dist, s)
            m = labels[:, None] == labels[None, :]
            m[:g, :] = True
            m[:, :g] = True
            mask[bi, hi] = m
            scales[bi, hi] = s
            comps[bi, hi] = len(np.unique(labels))
    why = ("H0 of the %s blocks' means (block %d; distances by %s); scale: %s" %
           (summary, block_size, "the triton-bridge kernel" if kernel else "torch.cdist",
            "; ".join(sorted(whys))))
    return schedule_from_block_mask(mask, block_size, n, n, causal, scales, comps, g, why)


def block_mask_dense(schedule, device="cpu"):
    """The schedule's element mask (b, h, q_len, kv_len), bool tensor: the
    block mask expanded to positions, with causality when the schedule is
    causal (what masked dense attention must compute)."""
    import torch
    m = torch.from_numpy(schedule.mask()).to(device)
    bs = schedule.block_size
    m = m.repeat_interleave(bs, dim=2).repeat_interleave(bs, dim=3)
    m = m[:, :, :schedule.q_len, :schedule.kv_len]
    if schedule.causal:
        m = m & torch.ones(schedule.q_len, schedule.kv_len, dtype=torch.bool,
                           device=device).tril()
    return m


# --- the attention kernel ----------------------------------------------------

def _kernels():
    from . import _triton_attention
    return _triton_attention


def block_sparse_attention(q, k, v, schedule, sm_scale=None, allow_tf32=False, num_warps=None,
                           num_stages=None):
    """softmax(q kᵀ · sm_scale) v over the schedule's blocks only, with a
    backward pass (autograd: dq, dk, dv by two more kernels, recomputing
    the probabilities from the forward pass's log-sum-exp). q, k, v: (batch, heads, seq, d) float32, float16 or
    bfloat16 tensors of one dtype on one device; d at most 256. Returns a
    tensor of q's shape, dtype and device. A query row that keeps no key
    (impossible with the diagonal in the schedule) gives zeros. float32
    products are IEEE float32 unless ``allow_tf32``."""
    import torch
    if not all(isinstance(t, torch.Tensor) and t.dim() == 4 for t in (q, k, v)):
        raise ValueError("topoml.triton.block_sparse_attention: q, k, v must be 4-d tensors")
    if not (q.dtype == k.dtype == v.dtype) or q.dtype not in (torch.float32, torch.float16,
                                                              torch.bfloat16):
        raise TypeError("topoml.triton.block_sparse_attention: q, k, v of one dtype among "
                        "float32, float16, bfloat16; got %s, %s, %s" % (q.dtype, k.dtype, v.dtype))
    b, h, n, d = q.shape
    if k.shape != (b, h, schedule.kv_len, d) or v.shape != k.shape or n != schedule.q_len:
        raise ValueError("topoml.triton.block_sparse_attention: shapes %s, %s, %s do not match the "
                         "schedule (q_len %d, kv_len %d)" % (tuple(q.shape), tuple(k.shape),
                                                             tuple(v.shape), schedule.q_len,
                                                             schedule.kv_len))
    sb, sh, nq, nk = schedule.shape
    if (sb, sh) != (b, h):
        raise ValueError("topoml.triton.block_sparse_attention: schedule is for (batch, heads) = "
                         "(%d, %d), tensors are (%d, %d)" % (sb, sh, b, h))
    if d > 256:
        raise ValueError("topoml.triton.block_sparse_attention: head dimension %d > 256" % d)
    _require(q, k, v)
    if sm_scale is None:
        sm_scale = 1.0 / math.sqrt(d)
    launch = _Launch(schedule, d, float(sm_scale),
                     "tf32" if (allow_tf32 or q.dtype != torch.float32) else "ieee",
                     num_warps, num_stages)
    if torch.is_grad_enabled() and any(t.requires_grad for t in (q, k, v)):
        return _function().apply(q, k, v, launch)
    return launch.forward(q, k, v)[0]


class _Launch:
    """One schedule's launches: the forward kernel and the two backward ones."""

    def __init__(self, schedule, d, sm_scale, precision, num_warps, num_stages):
        self.s, self.d, self.sm_scale, self.precision = schedule, d, sm_scale, precision
        self.block_d = max(16, 1 << (d - 1).bit_length())
        self.opts = {}
        if not _interpreting():
            self.opts = {"num_warps": num_warps or (
                4 if schedule.block_size * self.block_d <= 64 * 64 else 8),
                "num_stages": num_stages or 2}

    def consts(self):
        return dict(BLOCK=self.s.block_size, D=self.d, BLOCK_D=self.block_d,
                    CAUSAL=self.s.causal, PRECISION=self.precision, **self.opts)

    def forward(self, q, k, v):
        import torch
        q, k, v = (t if t.stride(-1) == 1 else t.contiguous() for t in (q, k, v))
        b, h, n, _ = q.shape
        _, _, nq, nk = self.s.shape
        o = torch.empty_like(q, memory_format=torch.contiguous_format)
        lse = torch.empty((b * h, n), dtype=torch.float32, device=q.device)
        counts, indices = self.s.device_tables(q.device)
        _kernels().block_sparse_attention_fwd[(nq, b * h)](
            q, k, v, o, lse, counts, indices, self.sm_scale, n, self.s.kv_len, h,
            q.stride(0), q.stride(1), q.stride(2), k.stride(0), k.stride(1), k.stride(2),
            v.stride(0), v.stride(1), v.stride(2), o.stride(0), o.stride(1), o.stride(2),
            nq, nk, **self.consts())
        return o, lse

    def backward(self, q, k, v, o, lse, do):
        import torch
        q, k, v, do = (t.contiguous() for t in (q, k, v, do))
        b, h, n, _ = q.shape
        _, _, nq, nk = self.s.shape
        delta = (do.float() * o.float()).sum(-1).reshape(b * h, n).contiguous()
        dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
        counts, indices = self.s.device_tables(q.device)
        tcounts, tindices = self.s.transposed().device_tables(q.device)
        kern = _kernels()
        strides = (q.stride(0), q.stride(1), q.stride(2), k.stride(0), k.stride(1), k.stride(2))
        kern.block_sparse_attention_bwd_dq[(nq, b * h)](
            q, k, v, do, dq, lse, delta, counts, indices, self.sm_scale, n, self.s.kv_len, h,
            *strides, nq, nk, **self.consts())
        kern.block_sparse_attention_bwd_dkdv[(nk, b * h)](
            q, k, v, do, dk, dv, lse, delta, tcounts, tindices, self.sm_scale, n, self.s.kv_len,
            h, *strides, nq, nk, **self.consts())
        return dq, dk, dv


@functools.lru_cache(maxsize=None)
def _function():
    import torch

    class BlockSparseAttention(torch.autograd.Function):
        @staticmethod
        def forward(ctx, q, k, v, launch):
            o, lse = launch.forward(q, k, v)
            ctx.save_for_backward(q, k, v, o, lse)
            ctx.launch = launch
            return o

        @staticmethod
        def backward(ctx, do):
            q, k, v, o, lse = ctx.saved_tensors
            dq, dk, dv = ctx.launch.backward(q, k, v, o, lse, do)
            return dq, dk, dv, None

    return BlockSparseAttention
