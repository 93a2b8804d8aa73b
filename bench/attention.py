#!/usr/bin/env python3
"""Topology-guided block-sparse attention (topoml.triton) against dense
attention and same-budget ablations, for time and quality
(docs/triton-attention.md).

For each input kind and sequence length L, on (batch, heads, L, dim) q, k, v:

* schedules, all with the topology schedule's number of kept blocks per
  (batch, head) (the budget): `topology` (topoml.triton.attention_schedule:
  H0 of the key blocks' means), `random` (random blocks), `local` (the
  blocks nearest the diagonal, a sliding window), `topk` (the blocks of
  largest query-block x key-block mean dot product). Every ablation keeps
  the diagonal, as the topology schedule does; causal runs keep only
  blocks on or below it.
* time (CUDA events, median of --reps after a warm-up): dense
  scaled_dot_product_attention with each backend torch ships (math,
  efficient, flash, cuDNN: torch.nn.attention.sdpa_kernel; a backend that
  refuses the input is recorded with its reason), FlexAttention
  (torch.compile'd) at each schedule's BlockMask, and the Triton kernel
  (topoml.triton.block_sparse_attention) at each schedule. The math
  backend is left out above --math-max (it materialises L x L scores).
* quality per schedule, on --rows sampled query rows of every (batch,
  head): the softmax mass of dense attention the schedule keeps (mean over
  rows) and the relative error ||O_sparse - O_dense|| / ||O_dense|| of the
  Triton kernel's output against dense attention in float32.
* inputs: `clustered` (keys and queries drawn around a few far-apart
  centres, one centre per block, so blocks have cluster structure),
  `random` (N(0, 1): no structure), `transformer` (q, k, v of the last
  attention layer of a small transformer trained here for --train-steps
  steps on a synthetic task: next-token prediction on sequences of
  segments, each segment's tokens drawn from one of a few topics, the
  topics recurring through the sequence; no download).

--small runs tiny sizes on the CPU under Triton's interpreter
(TRITON_INTERPRET=1 is set before triton loads) with eager FlexAttention
and no dense backends but math: it checks the script end to end, and its
times mean nothing. JSON through artifact.py (cases: one per input, L,
schedule or dense backend, and method; quality in each case's "quality").

    PYTHONPATH=build/python .venv/bin/python bench/attention.py \\
        [--seq 1024,4096,16384,65536] [--dtype bf16] [--json bench/results/attention-h200.json]
    PYTHONPATH=build/python .venv/bin/python bench/attention.py --small --json /tmp/attention-small.json
"""
import argparse
import math
import os
import statistics
import sys
import time
import warnings

if "--small" in sys.argv:
    os.environ["TRITON_INTERPRET"] = "1"  # before triton loads

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import artifact  # noqa: E402  (the one writer of bench/results/ files)

import numpy as np  # noqa: E402


def parse():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seq", default="1024,4096,16384,65536")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--block", type=int, default=128)
    ap.add_argument("--dtype", default="bf16", choices=["fp32", "fp16", "bf16"])
    ap.add_argument("--causal", action="store_true")
    ap.add_argument("--inputs", default="clustered,random,transformer")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--rows", type=int, default=256, help="query rows per (batch, head) for quality")
    ap.add_argument("--math-max", type=int, default=8192)
    ap.add_argument("--train-steps", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--small", action="store_true", help="tiny sizes, CPU, Triton's interpreter")
    ap.add_argument("--json")
    a = ap.parse_args()
    if a.small:
        a.batch, a.heads, a.dim, a.block = 1, 2, 16, 16
        if "--seq" not in " ".join(sys.argv):
            a.seq = "48,80"
        a.dtype, a.reps, a.rows, a.train_steps = "fp32", 1, 1 << 30, 20
    a.seq = [int(s) for s in a.seq.split(",")]
    a.inputs = a.inputs.split(",")
    return a


# --- inputs ------------------------------------------------------------------

def clustered_inputs(torch, b, h, n, d, block, g, device):
    clusters = 4
    centres = 3.0 * torch.randn(b, h, clusters, d, generator=g) / math.sqrt(d) * 4
    nb = -(-n // block)
    which = torch.randint(0, clusters, (nb,), generator=g).repeat_interleave(block)[:n]
    base = centres[:, :, which, :]
    q = base + 0.3 * torch.randn(b, h, n, d, generator=g)
    k = base + 0.3 * torch.randn(b, h, n, d, generator=g)
    v = torch.randn(b, h, n, d, generator=g)
    return [t.to(device) for t in (q, k, v)]


def random_inputs(torch, b, h, n, d, block, g, device):
    return [torch.randn(b, h, n, d, generator=g).to(device) for _ in range(3)]


class TinyTransformer:
    """Token embedding + sinusoidal positions + 2 pre-norm attention/MLP
    layers (SDPA) + output head; `qkv` returns the last layer's q, k, v."""

    def __init__(self, torch, vocab, heads, dim_head, layers, device):
        nn = torch.nn
        self.torch, self.heads, self.dh = torch, heads, dim_head
        width = heads * dim_head
        self.emb = nn.Embedding(vocab, width).to(device)
        self.layers = nn.ModuleList([nn.ModuleDict({
            "n1": nn.LayerNorm(width), "qkv": nn.Linear(width, 3 * width),
            "o": nn.Linear(width, width), "n2": nn.LayerNorm(width),
            "mlp": nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))})
            for _ in range(layers)]).to(device)
        self.head = nn.Linear(width, vocab).to(device)
        self.params = list(self.emb.parameters()) + list(self.layers.parameters()) + \
            list(self.head.parameters())

    def positions(self, n, width, device):
        torch = self.torch
        pos = torch.arange(n, device=device, dtype=torch.float32)[:, None]
        freq = torch.exp(torch.arange(0, width, 2, device=device) * (-math.log(1e4) / width))
        pe = torch.zeros(n, width, device=device)
        pe[:, 0::2] = torch.sin(pos * freq)
        pe[:, 1::2] = torch.cos(pos * freq)
        return pe

    def run(self, tokens, capture=False):
        torch = self.torch
        F = torch.nn.functional
        b, n = tokens.shape
        x = self.emb(tokens)
        x = x + self.positions(n, x.shape[-1], x.device)
        for i, L in enumerate(self.layers):
            y = L["n1"](x)
            q, k, v = L["qkv"](y).view(b, n, 3, self.heads, self.dh).permute(2, 0, 3, 1, 4)
            if capture and i == len(self.layers) - 1:
                return q, k, v
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + L["o"](a.transpose(1, 2).reshape(b, n, -1))
            x = x + L["mlp"](L["n2"](x))
        return self.head(x)


def topic_tokens(torch, b, n, g, topics=4, per_topic=16, segment=32):
    """Sequences of segments; each segment's tokens come from one topic's
    vocabulary (topic t: tokens t*per_topic ..), the topic chosen at random
    per segment, so same-topic segments recur through the sequence."""
    segs = -(-n // segment)
    topic = torch.randint(0, topics, (b, segs), generator=g).repeat_interleave(segment, 1)[:, :n]
    return topic * per_topic + torch.randint(0, per_topic, (b, n), generator=g)


def transformer_inputs_factory(torch, a, device, log):
    g = torch.Generator().manual_seed(a.seed + 17)
    model = TinyTransformer(torch, 64, a.heads, a.dim, 2, device)
    opt = torch.optim.AdamW(model.params, lr=3e-3)
    train_n = 64 if a.small else 512
    t0 = time.perf_counter()
    loss = None
    for _ in range(a.train_steps):
        tok = topic_tokens(torch, 8, train_n, g).to(device)
        logits = model.run(tok[:, :-1])
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                                 tok[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
    info = {"train_steps": a.train_steps, "train_seq": train_n, "final_loss": float(loss),
            "uniform_loss": math.log(64), "train_s": time.perf_counter() - t0}
    log("transformer: %d steps at seq %d, loss %.3f (uniform %.3f)" % (
        a.train_steps, train_n, info["final_loss"], info["uniform_loss"]))

    def make(torch_, b, h, n, d, block, g_, device_):
        with torch.no_grad():
            tok = topic_tokens(torch, b, n, g_).to(device)
            return [t.float().contiguous() for t in model.run(tok, capture=True)]
    return make, info


# --- schedules ---------------------------------------------------------------

def budget_schedule(tt, score, counts, block, n, causal):
    """The ablation mask keeping, per (batch, head), the diagonal and then
    the highest-scoring blocks up to that (batch, head)'s budget."""
    b, h, nq, nk = score.shape
    s = score.astype(np.float64).copy()
    s[..., np.eye(nq, nk, dtype=bool)] = np.inf
    if causal:
        s[..., ~np.tril(np.ones((nq, nk), dtype=bool))] = -np.inf
    mask = np.zeros(score.shape, dtype=bool)
    for bi in range(b):
        for hi in range(h):
            flat = s[bi, hi].ravel()
            keep = np.argsort(-flat, kind="stable")[:int(counts[bi, hi])]
            mask[bi, hi].ravel()[keep] = True
    return tt.schedule_from_block_mask(mask, block, n, n, causal, why="same-budget ablation")


def schedules(torch, tt, q, k, block, causal, rng):
    topo = tt.attention_schedule(q, k, block_size=block, causal=causal)
    counts = topo.counts.sum(-1)
    b, h, nq, nk = topo.shape
    n = q.shape[2]
    ii, jj = np.meshgrid(np.arange(nq), np.arange(nk), indexing="ij")
    local = np.broadcast_to(-np.abs(ii - jj) - 1e-3 * jj, (b, h, nq, nk))
    scores = torch.einsum("bhid,bhjd->bhij", tt.block_means(q, block),
                          tt.block_means(k, block)).cpu().numpy()
    return {"topology": topo,
            "random": budget_schedule(tt, rng.random((b, h, nq, nk)), counts, block, n, causal),
            "local": budget_schedule(tt, local, counts, block, n, causal),
            "topk": budget_schedule(tt, scores, counts, block, n, causal)}


# --- measurement -------------------------------------------------------------

def timer(torch, device, reps):
    def run(fn):
        fn()  # warm-up (compilation)
        times = []
        for _ in range(reps):
            if device == "cuda":
                s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                s.record()
                fn()
                e.record()
                torch.cuda.synchronize()
                times.append(s.elapsed_time(e) * 1e-3)
            else:
                t0 = time.perf_counter()
                fn()
                times.append(time.perf_counter() - t0)
        return times
    return run


def quality(torch, tt, q, k, v, sched, out, rows, rng):
    """(kept softmax mass, relative error of out) on sampled query rows."""
    b, h, n, d = q.shape
    r = np.sort(rng.choice(n, size=min(rows, n), replace=False))
    ri = torch.as_tensor(r, device=q.device)
    qs = q[:, :, ri].float()
    s = torch.einsum("bhrd,bhnd->bhrn", qs, k.float()) / math.sqrt(d)
    if sched.causal:
        s = s.masked_fill(ri[:, None] < torch.arange(n, device=q.device)[None, :], float("-inf"))
    p = torch.softmax(s, dim=-1)
    dense = torch.einsum("bhrn,bhnd->bhrd", p, v.float())
    blocks = torch.as_tensor(sched.mask(), device=q.device)  # (b, h, nq, nk)
    keep = blocks[:, :, ri // sched.block_size, :].repeat_interleave(sched.block_size, -1)[..., :n]
    mass = (p * keep).sum(-1).mean().item()
    o = out[:, :, ri].float()
    err = (torch.linalg.vector_norm(o - dense) / torch.linalg.vector_norm(dense)).item()
    return mass, err


def main():
    a = parse()
    import torch
    import topoml
    import topoml.triton as tt
    from torch.nn.attention import SDPBackend, sdpa_kernel
    flex_mod = None
    try:
        import torch.nn.attention.flex_attention as flex_mod
    except ImportError:
        pass
    device = "cpu" if a.small else "cuda"
    ok, why = (tt.interpret_available() if a.small else tt.available())
    if not ok:
        raise SystemExit("attention.py: " + why + ("" if a.small else " (--small runs on the CPU)"))
    dtype = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[a.dtype]
    flex = None
    # Every schedule's BlockMask brings its own mask_mod closure and every
    # length its own shapes: room for those recompilations, so that
    # FlexAttention never falls back to its unfused eager path mid-run.
    import torch._dynamo
    for knob in ("recompile_limit", "cache_size_limit"):
        if hasattr(torch._dynamo.config, knob):
            setattr(torch._dynamo.config, knob, 256)
    if flex_mod is not None:
        flex = flex_mod.flex_attention if a.small else torch.compile(flex_mod.flex_attention,
                                                                     dynamic=False)
    backends = [("sdpa-math", SDPBackend.MATH)]
    if not a.small:
        backends += [("sdpa-efficient", SDPBackend.EFFICIENT_ATTENTION),
                     ("sdpa-flash", SDPBackend.FLASH_ATTENTION)]
        if hasattr(SDPBackend, "CUDNN_ATTENTION"):
            backends.append(("sdpa-cudnn", SDPBackend.CUDNN_ATTENTION))
    run = timer(torch, device, a.reps)
    rng = np.random.default_rng(a.seed)
    log = lambda s: print(s, flush=True)  # noqa: E731
    makers = {"clustered": clustered_inputs, "random": random_inputs}
    extra = {}
    if "transformer" in a.inputs:
        makers["transformer"], extra["transformer"] = transformer_inputs_factory(torch, a, device, log)
    cases, table, refused = [], [], []
    for kind in a.inputs:
        for n in a.seq:
            g = torch.Generator().manual_seed(a.seed * 1000 + n)
            q, k, v = (t.to(dtype) for t in makers[kind](torch, a.batch, a.heads, n, a.dim, a.block,
                                                       g, device))
            name = "%s L=%d" % (kind, n)
            for label, backend in backends:
                if label == "sdpa-math" and n > a.math_max:
                    refused.append({"case": name, "program": label,
                                    "why": "L > --math-max %d (L x L scores)" % a.math_max})
                    continue
                try:
                    with sdpa_kernel([backend]):
                        times = run(lambda: torch.nn.functional.scaled_dot_product_attention(
                            q, k, v, is_causal=a.causal))
                except RuntimeError as e:
                    refused.append({"case": name, "program": label, "why": str(e).split("\n")[0]})
                    log("%-22s %-16s refused: %s" % (name, label, str(e).split("\n")[0][:80]))
                    continue
                cases.append(artifact.case(name + " dense", label, times))
                table.append((name, "dense", label, statistics.median(times), None, None, 1.0))
            t0 = time.perf_counter()
            scheds = schedules(torch, tt, q, k, a.block, a.causal, rng)
            build_s = time.perf_counter() - t0
            for sname, s in scheds.items():
                out = tt.block_sparse_attention(q, k, v, s)
                mass, err = quality(torch, tt, q, k, v, s, out, a.rows,
                                    np.random.default_rng(a.seed))
                qual = {"kept_mass": mass, "rel_error": err, "density": s.density,
                        "n_blocks": s.n_blocks}
                if sname == "topology":
                    qual["schedule"] = s.metadata()
                    qual["schedule_build_s"] = build_s
                    del qual["schedule"]["scale"], qual["schedule"]["components"]
                    qual["components_mean"] = float(s.components.mean())
                times = run(lambda: tt.block_sparse_attention(q, k, v, s))
                cases.append(artifact.case("%s %s" % (name, sname), "triton", times, quality=qual))
                table.append((name, sname, "triton", statistics.median(times), mass, err, s.density))
                if flex is not None:
                    bm = s.to_flex_block_mask(device=device)
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        fo = flex(q, k, v, block_mask=bm)
                        ftimes = run(lambda: flex(q, k, v, block_mask=bm))
                    diff = (fo.float() - out.float()).abs().max().item()
                    fmass, ferr = quality(torch, tt, q, k, v, s, fo, a.rows,
                                          np.random.default_rng(a.seed))
                    cases.append(artifact.case("%s %s" % (name, sname), "flex", ftimes,
                                               quality=dict(qual, kept_mass=fmass, rel_error=ferr,
                                                            max_abs_vs_triton=diff)))
                    table.append((name, sname, "flex", statistics.median(ftimes), fmass, ferr,
                                  s.density))
                log("%-22s %-9s density %.3f mass %.4f rel.err %.4f" % (name, sname, s.density,
                                                                       mass, err))
    print()
    print("| input | schedule | method | median ms | density | kept mass | rel. error |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: |")
    for name, sname, method, t, mass, err, dens in table:
        print("| %s | %s | %s | %.3f | %.3f | %s | %s |" % (
            name, sname, method, t * 1e3, dens, "-" if mass is None else "%.4f" % mass,
            "-" if err is None else "%.4f" % err))
    if a.json:
        import triton
        artifact.save(a.json, {
            "title": "Topology-guided block-sparse attention vs dense SDPA, FlexAttention and "
                     "same-budget ablations" + (" (--small: interpreter, times meaningless)"
                                                if a.small else ""),
            "machine": artifact.machine(),
            "device": torch.cuda.get_device_name() if device == "cuda" else "cpu (interpreter)",
            "versions": {"topoml": topoml.__version__, "torch": torch.__version__,
                         "triton": triton.__version__},
            "commands": [" ".join([os.path.basename(sys.executable)] + sys.argv)],
            "settings": {"batch": a.batch, "heads": a.heads, "dim": a.dim, "block": a.block,
                         "dtype": a.dtype, "causal": a.causal, "seq": a.seq, "reps": a.reps,
                         "rows": a.rows, "seed": a.seed, "small": a.small},
            "transformer": extra.get("transformer"),
            "refused": refused,
            "cases": cases})
    return 0


if __name__ == "__main__":
    sys.exit(main())
