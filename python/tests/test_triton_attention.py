"""topoml.triton: the triton-bridge distance kernel through Triton's JIT, the
topology-guided attention schedule, and the block-sparse attention kernel
against masked dense attention and FlexAttention.

With a CUDA device the kernels run there (bf16 included). Without one they
run on CPU tensors in Triton's interpreter (TRITON_INTERPRET=1, set by the
`launch` fixture for this module only), at small sizes; the interpreter
has no bfloat16 arithmetic (numpy has no such type: its bf16 results are
garbage), so bf16 is checked on a GPU only and skips here saying so.

Tolerances (max absolute difference, inputs ~N(0, 1), outputs |o| < 3):
float32 2e-5 (IEEE products, float32 softmax), float16 4e-3 (products of
float16 inputs, P rounded to float16 before P·V, output rounded to float16:
a few ulps of 2^-10), bfloat16 3e-2 (the same with 2^-7). Gradients: the
largest error over the largest reference gradient, 1e-4 / 1e-2 / 5e-2.
"""
import os
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is not installed")
tt = pytest.importorskip("topoml.triton")

TOL = {torch.float32: 2e-5, torch.float16: 4e-3, torch.bfloat16: 3e-2}


@pytest.fixture(scope="module")
def launch():
    """The device the kernels run on: 'cuda'; or 'cpu' in a process that
    started with TRITON_INTERPRET=1 (the interpreter must be on before
    triton is imported: test_interpreted runs this file so); skips with
    the reason otherwise."""
    ok, why = tt.available()
    if ok:
        return "cuda"
    if os.environ.get("TRITON_INTERPRET") != "1":
        pytest.skip("%s; runs under Triton's interpreter in test_interpreted's process" % why)
    ok_i, why_i = tt.interpret_available()
    if not ok_i:
        pytest.skip("%s; %s" % (why, why_i))
    return "cpu"


def test_interpreted(pytestconfig):
    """Without CUDA: the kernel tests of this file in a process started
    with TRITON_INTERPRET=1, on CPU tensors; they must pass (bf16 alone
    may skip, with its reason)."""
    ok, why = tt.available()
    if ok:
        pytest.skip("CUDA is here: the kernel tests ran on it")
    if os.environ.get("TRITON_INTERPRET") == "1":
        pytest.skip("this is the interpreted process")
    env = dict(os.environ, TRITON_INTERPRET="1")
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider",
                        __file__, "-k", "launch_ or matches",
                        "--topoml-build", pytestconfig.getoption("--topoml-build"),
                        "--topoml-source", pytestconfig.getoption("--topoml-source"),
                        "--topoml-data", pytestconfig.getoption("--topoml-data")],
                       capture_output=True, text=True, env=env)
    report = r.stdout[-4000:] + r.stderr[-2000:]
    assert r.returncode == 0, report
    skipped = [l for l in r.stdout.splitlines() if l.startswith("SKIPPED")]
    assert all("bf16" in l for l in skipped), report
    assert " passed" in r.stdout, report


def clustered(b, h, n, d, clusters, block, seed, dtype=torch.float32):
    """(b, h, n, d) keys whose blocks sit around `clusters` far-apart
    centres (block i around centre i % clusters), plus small noise."""
    g = torch.Generator().manual_seed(seed)
    centres = 4.0 * torch.randn(b, h, clusters, d, generator=g)
    which = (torch.arange(n) // block) % clusters
    x = centres[:, :, which, :] + 0.3 * torch.randn(b, h, n, d, generator=g)
    return x.to(dtype)


def test_import_is_lazy(pytestconfig):
    build = pytestconfig.getoption("--topoml-build")
    code = ("import sys, topoml, topoml.triton as t; "
            "assert 'torch' not in sys.modules and 'triton' not in sys.modules, "
            "[m for m in ('torch', 'triton') if m in sys.modules]; print('lazy')")
    env = dict(os.environ, PYTHONPATH=os.path.join(build, "python"))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert r.returncode == 0 and "lazy" in r.stdout, r.stderr


def test_missing_runtime_reason(monkeypatch):
    ok, why = tt.available()
    assert isinstance(ok, bool) and isinstance(why, str)
    if ok:
        pytest.skip("a CUDA device is here: nothing is missing")
    assert why.startswith("missing runtime: ")
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    q = torch.zeros(1, 1, 16, 16)
    s = tt.schedule_from_block_mask(np.ones((1, 1, 1, 1), bool), 16, 16, 16, False)
    with pytest.raises(RuntimeError, match="missing runtime"):
        tt.block_sparse_attention(q, q, q, s)
    with pytest.raises(RuntimeError, match="missing runtime"):
        tt.distances(torch.zeros(4, 2))


def test_h0_scale_rule():
    s, why = tt.h0_scale([0.1, 0.2, 0.25, 3.0, 3.2, np.inf])
    assert s == 0.25 and "largest gap" in why
    assert tt.h0_scale([0.5, np.inf])[0] == 0.5
    assert tt.h0_scale([np.inf])[0] == 0.0
    import doctest
    r = doctest.testmod(tt, verbose=False)
    assert r.attempted >= 2 and r.failed == 0, r


@pytest.mark.parametrize("causal", [False, True])
def test_schedule_invariants(causal):
    import topoml
    b, h, n, d, block, clusters = 2, 3, 150, 8, 16, 3  # 10 blocks, the last one ragged
    k = clustered(b, h, n, d, clusters, block, seed=1)
    q = torch.randn(b, h, n, d, generator=torch.Generator().manual_seed(2))
    s = tt.attention_schedule(q, k, block_size=block, causal=causal, n_global=1)
    nb = -(-n // block)
    assert s.shape == (b, h, nb, nb) and s.q_len == n and s.block_size == block
    m = s.mask()
    eye = np.eye(nb, dtype=bool)
    assert m[..., eye].all(), "diagonal missing"
    assert m[..., :, 0].all(), "global key block missing"
    if causal:
        assert not m[..., ~np.tril(np.ones((nb, nb), bool))].any(), "block above the diagonal"
        possible = nb * (nb + 1) // 2
    else:
        assert m[..., 0, :].all(), "global query block missing"
        assert (m == np.swapaxes(m, -1, -2)).all(), "not symmetric"
        possible = nb * nb
    assert s.density == pytest.approx(m.sum() / (possible * b * h))
    assert s.n_blocks == m.sum() == s.counts.sum()
    # The CSR rows list exactly the kept blocks, ascending, padded with -1.
    for bi, hi, i in [(0, 0, 3), (1, 2, nb - 1)]:
        row = s.indices[bi, hi, i]
        c = s.counts[bi, hi, i]
        assert list(row[:c]) == list(np.flatnonzero(m[bi, hi, i])) and (row[c:] == -1).all()
    # Three well-separated clusters of blocks: three components, and the
    # scale is one of the H0 deaths of the block means.
    assert (s.components == clusters).all(), s.components
    means = np.stack([k[1, 2, i * block:(i + 1) * block].double().mean(0).numpy() for i in range(nb)])
    deaths = topoml.barcodes(means, maxdim=0)[0][:, 1]
    assert np.isclose(deaths, s.scale[1, 2], rtol=1e-6).any(), (deaths, s.scale[1, 2])
    assert "largest gap" in s.why
    assert s.density < 1.0
    meta = s.metadata()
    assert meta["components"][0][0] == clusters and meta["n_blocks"] == s.n_blocks


def dense_reference(q, k, v, s):
    mask = tt.block_mask_dense(s, device=q.device)
    return torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float(),
                                                            attn_mask=mask)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16],
                         ids=["f32", "f16", "bf16"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_attention_matches_masked_sdpa(launch, dtype, causal):
    if launch == "cpu" and dtype == torch.bfloat16:
        pytest.skip("bf16: Triton's interpreter has no bfloat16 arithmetic; checked on a GPU only")
    # Ragged (40 = 2.5 blocks), batch and heads > 1, head dim not a power of two.
    b, h, n, d, block = (2, 2, 40, 24, 16) if launch == "cpu" else (2, 3, 1000, 64, 64)
    g = torch.Generator().manual_seed(7 + causal)
    k = clustered(b, h, n, d, 2, block, seed=3)
    q = torch.randn(b, h, n, d, generator=g)
    v = torch.randn(b, h, n, d, generator=g)
    s = tt.attention_schedule(q, k, block_size=block, causal=causal)
    assert s.density < 1.0  # a mask that drops blocks, so a dense kernel would fail
    q, k, v = (t.to(device=launch, dtype=dtype) for t in (q, k, v))
    o = tt.block_sparse_attention(q, k, v, s)
    assert o.dtype == dtype and o.device == q.device and o.shape == q.shape
    ref = dense_reference(q, k, v, s)
    err = (o.float() - ref).abs().max().item()
    assert err <= TOL[dtype], "max |kernel - masked SDPA| = %g > %g" % (err, TOL[dtype])
    unmasked = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float(),
                                                                is_causal=causal)
    assert (o.float() - unmasked).abs().max().item() > 10 * TOL[dtype]


GRAD_TOL = {torch.float32: 1e-4, torch.float16: 1e-2, torch.bfloat16: 5e-2}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16],
                         ids=["f32", "f16", "bf16"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
def test_gradients_match_masked_sdpa(launch, dtype, causal):
    """dq, dk, dv of the backward kernels against autograd through masked
    SDPA in float32, relative to the largest reference gradient."""
    if launch == "cpu" and dtype == torch.bfloat16:
        pytest.skip("bf16: Triton's interpreter has no bfloat16 arithmetic; checked on a GPU only")
    b, h, n, d, block = (1, 2, 40, 24, 16) if launch == "cpu" else (2, 2, 1000, 64, 64)
    g = torch.Generator().manual_seed(11 + causal)
    k = clustered(b, h, n, d, 2, block, seed=9)
    q = torch.randn(b, h, n, d, generator=g)
    v = torch.randn(b, h, n, d, generator=g)
    go = torch.randn(b, h, n, d, generator=g).to(launch)
    s = tt.attention_schedule(q, k, block_size=block, causal=causal)
    q, k, v = (t.to(device=launch, dtype=dtype).requires_grad_() for t in (q, k, v))
    o = tt.block_sparse_attention(q, k, v, s)
    grads = torch.autograd.grad(o, (q, k, v), go.to(dtype))
    ref_in = [t.detach().float().requires_grad_() for t in (q, k, v)]
    ref = torch.nn.functional.scaled_dot_product_attention(
        *ref_in, attn_mask=tt.block_mask_dense(s, device=launch))
    want = torch.autograd.grad(ref, ref_in, go)
    for name, got, w in zip("qkv", grads, want):
        assert got.dtype == dtype and got.device == w.device and got.shape == w.shape
        rel = ((got.float() - w).abs().max() / w.abs().max()).item()
        assert rel <= GRAD_TOL[dtype], "d%s: max error / max |grad| = %g" % (name, rel)


def test_attention_matches_flex_attention(launch):
    flex = pytest.importorskip("torch.nn.attention.flex_attention",
                               reason="torch has no FlexAttention")
    b, h, n, d, block = (1, 2, 40, 16, 16) if launch == "cpu" else (2, 2, 1000, 64, 128)
    k = clustered(b, h, n, d, 2, block, seed=5)
    q = torch.randn(b, h, n, d, generator=torch.Generator().manual_seed(6))
    v = torch.randn(b, h, n, d, generator=torch.Generator().manual_seed(7))
    s = tt.attention_schedule(q, k, block_size=block, causal=True)
    q, k, v = (t.to(launch) for t in (q, k, v))
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # eager FlexAttention warns that it is unfused
        fo = flex.flex_attention(q, k, v, block_mask=s.to_flex_block_mask(device=launch))
    o = tt.block_sparse_attention(q, k, v, s)
    err = (o - fo).abs().max().item()
    assert err <= TOL[torch.float32], "max |kernel - FlexAttention| = %g" % err
    assert (fo - dense_reference(q, k, v, s)).abs().max().item() <= TOL[torch.float32]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["f32", "f64"])
def test_distances_match_cdist(launch, dtype):
    n, dim = (70, 5) if launch == "cpu" else (1000, 16)  # two tile rows, the last partial
    x = torch.randn(n, dim, generator=torch.Generator().manual_seed(4), dtype=dtype).to(launch)
    dist = tt.distances(x)
    assert dist.dtype == dtype and dist.device == x.device
    ref = torch.cdist(x, x, compute_mode="donot_use_mm_for_euclid_dist")
    # Both sum the squared differences coordinate by coordinate: a few ulps apart.
    rel = ((dist - ref).abs() / ref.clamp_min(1e-30)).max().item()
    assert rel <= (1e-6 if dtype == torch.float32 else 1e-14), rel
    sq = tt.distances(x, squared=True, condensed=True)
    i, j = torch.tril_indices(n, n, offset=-1, device=x.device)
    assert sq.shape == (n * (n - 1) // 2,)
    assert torch.allclose(sq, ref[i, j] ** 2, rtol=1e-5 if dtype == torch.float32 else 1e-12)
