#!/usr/bin/env python3
"""Benchmark of topoml.torch's activation capture and differentiable layer
on a small generated model (nothing is downloaded).

A 4-layer MLP (3 -> 256 -> 256 -> 128 -> 10) on a generated data set (noisy
points on two linked circles in R^3); for each sample size n:

* forward: the model's own forward pass over n rows;
* capture: the same forward pass with TorchActivationCapture hooks on the
  three hidden layers (projection to 16 columns on the activations' device),
  then signatures() (H0/H1 diagrams, total persistence, entropy, Betti
  curves) of every layer;
* rips_grad: RipsPersistence forward + backward of the total H1 persistence
  on the n x 16 projected activations of the last hidden layer.

Times are wall-clock, best of --repeat runs (time.perf_counter; on a CUDA
device torch.cuda.synchronize() is called before each reading). Prints a
table and writes JSON with the framework versions, dtype, device and the
signature values (--json FILE).

  PYTHONPATH=build/python .venv/bin/python tools/bench/ml_adapters.py \\
      [--sizes 256,512,1024] [--repeat 3] [--device cpu] [--json out.json]
"""
import argparse
import math
import os
import platform
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import artifact  # noqa: E402  (the one writer of bench/results/ files)


def data(torch, n, device, seed=0):
    g = torch.Generator().manual_seed(seed)
    t = torch.rand(n, generator=g) * 2 * math.pi
    half = n // 2
    a = torch.stack([torch.cos(t[:half]), torch.sin(t[:half]), torch.zeros(half)], 1)
    b = torch.stack([1 + torch.cos(t[half:]), torch.zeros(n - half), torch.sin(t[half:])], 1)
    x = torch.cat([a, b]) + 0.05 * torch.randn(n, 3, generator=g)
    return x.to(device)


def model(torch, device):
    torch.manual_seed(0)
    nn = torch.nn
    return nn.Sequential(nn.Linear(3, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                         nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 10)).to(device).eval()


def timed(torch, device, fn, repeat):
    """Every run's wall time, and the last run's result."""
    times, out = [], None
    for _ in range(repeat):
        if device.type == "cuda":
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        out = fn()
        if device.type == "cuda":
            torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    return times, out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="256,512,1024")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()

    import torch
    import topoml
    import topoml.torch as tt

    device = torch.device(args.device)
    net = model(torch, device)
    layers = ["1", "3", "5"]
    rows = []
    for n in [int(s) for s in args.sizes.split(",")]:
        x = data(torch, n, device)
        with torch.no_grad():
            runs_fwd, _ = timed(torch, device, lambda: net(x), args.repeat)

        def capture():
            with tt.TorchActivationCapture(net, layers, max_samples=n, projection_dim=16) as cap:
                with torch.no_grad():
                    net(x)
                return cap.signatures(), cap.activations("5")
        runs_cap, (sig, acts) = timed(torch, device, capture, args.repeat)

        def rips_grad():
            p = acts.detach().double().requires_grad_()
            h1 = tt.RipsPersistence(maxdim=1)(p)[1]
            loss = (h1[:, 1] - h1[:, 0]).sum() if len(h1) else (p * 0).sum()
            loss.backward()
            return float(loss.detach())
        runs_grad, loss = timed(torch, device, rips_grad, args.repeat)
        t_fwd, t_cap, t_grad = min(runs_fwd), min(runs_cap), min(runs_grad)
        rows.append({
            "n": n, "runs_s": {"forward": runs_fwd, "capture": runs_cap, "rips_grad": runs_grad},
            "forward_s": t_fwd, "capture_s": t_cap, "rips_grad_s": t_grad,
            "capture_over_forward": t_cap / t_fwd,
            "h1_total_persistence_last_layer": loss,
            "signatures": {name: {"total_persistence": s["total_persistence"],
                                  "entropy": s["entropy"],
                                  "bars": [len(d) for d in s["diagrams"]]}
                           for name, s in sig.items()},
        })

    print("%6s %12s %12s %12s %10s" % ("n", "forward ms", "capture ms", "rips+grad ms",
                                       "cap/fwd"))
    for r in rows:
        print("%6d %12.3f %12.3f %12.3f %10.1f" % (r["n"], 1e3 * r["forward_s"],
                                                 1e3 * r["capture_s"], 1e3 * r["rips_grad_s"],
                                                 r["capture_over_forward"]))
    if args.json:
        artifact.save(args.json, {
            "title": "topoml.torch: activation capture and the differentiable Rips layer",
            "machine": artifact.machine(),
            "versions": {"torch": torch.__version__, "topoml": topoml.__version__,
                         "numpy": __import__("numpy").__version__,
                         "python": platform.python_version()},
            "commands": [" ".join(["tools/bench/ml_adapters.py"] + sys.argv[1:])],
            "statistic": "best of %d runs" % args.repeat,
            "model": "MLP 3-256-256-128-10, generated linked circles",
            "device": str(device), "dtype_model": "float32", "dtype_rips": "float64",
            "capture": {"layers": layers, "projection_dim": 16, "maxdim": 1},
            "cases": [artifact.case("n=%d" % r["n"], what, r["runs_s"][what],
                                    median=r["%s_s" % what])
                      for r in rows for what in ("forward", "capture", "rips_grad")],
            "rows": [{k: v for k, v in r.items() if k != "runs_s"} for r in rows]})
    return 0


if __name__ == "__main__":
    sys.exit(main())
