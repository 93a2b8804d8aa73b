#!/usr/bin/env python3
"""Benchmark of topoml.torch's activation capture and differentiable layer
on small generated models (nothing is downloaded).

Two models, each on a generated data set:

* "mlp": a 4-layer MLP (3 -> 256 -> 256 -> 128 -> 10) on noisy points on
  two linked circles in R^3; captured: its three hidden layers;
* "cnn": a small CNN (three 3x3 convolution blocks, 16/32/64 channels,
  pooling, a linear head) on 32x32 RGB images of random oriented gratings
  with noise; captured: the three blocks' outputs (4096, 2048, 64 values);
* "resnet18" (--models): ResNet-18 as torchvision lays it out (random
  weights) on 224x224 RGB gratings; captured: the outputs of its stages
  layer2, layer3 and layer4 (100 352, 50 176 and 25 088 values). Left out
  by default on a CPU, where its forward pass over 1024 images takes
  minutes.

For each model and sample size n:

* forward: the model's own forward pass over n samples;
* capture: the same forward pass with TorchActivationCapture hooks on the
  three layers (projection to 16 columns on the activations' device), then
  signatures() (H0/H1 diagrams of the filtration truncated at the automatic
  scale, total persistence, entropy, Betti curves) of every layer;
  signature = capture - forward, the cost the signatures add;
* capture_exact (--exact-sizes, MLP only): the same with scale=None, the
  whole filtration, as signatures() computed it before the scale existed;
* rips_grad (MLP only): RipsPersistence forward + backward of the total H1
  persistence on the n x 16 projected activations of the last hidden layer;
  on a CUDA device also rips_grad_host: the same on a copy of those
  activations in host memory (the engine on the host's cores, without the
  cuda plugin), so that the two are compared on one machine.

On a CUDA device (--device cuda), also, for each of --transfer-sizes: a
uniform cloud of n points in the unit cube of R^3, made on the device, H0/H1
truncated where a point has about 15 neighbours, on the cuda backend two ways:

* device: TorchTensorAdapter.diagrams on the CUDA tensor (DLPack, read on
  the device; the run checks that the library made no host copy);
* round trip: the tensor copied to the host, topoml.barcodes(...,
  backend="cuda") on that array, the diagrams copied back to the device as
  tensors — what a caller without the device path does.

Both alternate, median of --repeat runs each; the run checks that both give
the same diagrams.

Times are wall-clock, best of --repeat runs (the forward pass: of at least
25; time.perf_counter; on a CUDA device torch.cuda.synchronize() is called
before each reading). Prints a
table and writes JSON with the framework versions, dtype, device and the
signature values (--json FILE).

  PYTHONPATH=build/python .venv/bin/python bench/ml_adapters.py \\
      [--sizes 256,512,1024] [--exact-sizes 1024] [--repeat 3] [--device cpu] \\
      [--transfer-sizes 4096,16384,65536] [--json out.json]
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


def images(torch, n, device, seed=0, size=32):
    """n RGB size x size images: an oriented grating per image (random
    angle, frequency, phase and colour) plus noise."""
    g = torch.Generator().manual_seed(seed)
    yy, xx = torch.meshgrid(torch.arange(float(size)), torch.arange(float(size)), indexing="ij")
    angle = torch.rand(n, 1, 1, generator=g) * math.pi
    freq = 0.1 + 0.4 * torch.rand(n, 1, 1, generator=g)
    phase = torch.rand(n, 1, 1, generator=g) * 2 * math.pi
    wave = torch.sin(freq * (torch.cos(angle) * xx + torch.sin(angle) * yy) + phase)
    colour = torch.rand(n, 3, 1, 1, generator=g)
    x = colour * wave[:, None] + 0.1 * torch.randn(n, 3, size, size, generator=g)
    return x.to(device)


def images224(torch, n, device, seed=0):
    return images(torch, n, device, seed, 224)


def cnn(torch, device):
    torch.manual_seed(0)
    nn = torch.nn
    return nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                         nn.Flatten(), nn.Linear(64, 10)).to(device).eval()


def resnet18(torch, device):
    """ResNet-18 as torchvision builds it (a 7x7 stride-2 stem, max pooling,
    four stages of two basic blocks with 64/128/256/512 channels, global
    average pooling, a linear head; here 10 classes), written out so that
    nothing beyond torch is needed; seeded random weights, eval mode."""
    nn = torch.nn

    class Block(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.relu = nn.ReLU(inplace=True)
            self.downsample = None
            if stride != 1 or cin != cout:
                self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                                nn.BatchNorm2d(cout))

        def forward(self, x):
            y = self.relu(self.bn1(self.conv1(x)))
            y = self.bn2(self.conv2(y))
            return self.relu(y + (x if self.downsample is None else self.downsample(x)))

    class ResNet18(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
            self.bn1 = nn.BatchNorm2d(64)
            self.relu = nn.ReLU(inplace=True)
            self.maxpool = nn.MaxPool2d(3, 2, 1)
            self.layer1 = nn.Sequential(Block(64, 64, 1), Block(64, 64, 1))
            self.layer2 = nn.Sequential(Block(64, 128, 2), Block(128, 128, 1))
            self.layer3 = nn.Sequential(Block(128, 256, 2), Block(256, 256, 1))
            self.layer4 = nn.Sequential(Block(256, 512, 2), Block(512, 512, 1))
            self.avgpool = nn.AdaptiveAvgPool2d(1)
            self.fc = nn.Linear(512, 10)

        def forward(self, x):
            x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
            x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
            return self.fc(torch.flatten(self.avgpool(x), 1))

    torch.manual_seed(0)
    return ResNet18().to(device).eval()


MODELS = {
    "mlp": ("MLP 3-256-256-128-10, generated linked circles", model, data, ["1", "3", "5"]),
    "cnn": ("CNN conv16-pool-conv32-pool-conv64-avgpool-linear10, generated 32x32 RGB gratings",
            cnn, images, ["2", "5", "8"]),
    "resnet18": ("ResNet-18 (torchvision's layout, random weights), generated 224x224 RGB "
                 "gratings", resnet18, images224, ["layer2", "layer3", "layer4"]),
}


def timed(torch, device, fn, repeat):
    best, out = math.inf, None
    for _ in range(repeat):
        if device.type == "cuda":
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        out = fn()
        if device.type == "cuda":
            torch.cuda.synchronize()
        best = min(best, time.perf_counter() - t0)
    return best, out


def uniform_cloud(torch, n, device, seed=1):
    g = torch.Generator(device=device).manual_seed(seed)
    return torch.rand(n, 3, generator=g, device=device, dtype=torch.float32)


def transfer_rows(torch, topoml, tt, device, sizes, repeat):
    """The device path against a host round trip, on the cuda backend."""
    adapter = tt.TorchTensorAdapter()
    rows = []
    for n in sizes:
        x = uniform_cloud(torch, n, device)
        # about 15 points within the threshold of each: (4/3) pi r^3 n = 15
        thr = (15 * 3 / (4 * math.pi * n)) ** (1 / 3)

        def on_device():
            return adapter.diagrams(x, 1, thr)

        def round_trip():
            host = x.cpu().numpy()
            res = topoml.barcodes(host, maxdim=1, threshold=thr, backend="cuda")
            return [torch.from_numpy(d).to(device=device, dtype=x.dtype)
                    for d in res.diagrams]

        a, b = on_device(), round_trip()  # warm-up, and the same diagrams
        info = dict(adapter.last_info)
        same = len(a) == len(b) and all(torch.equal(u, v) for u, v in zip(a, b))
        t_dev, t_host = [], []
        for _ in range(repeat):
            t_dev.append(timed(torch, device, on_device, 1)[0])
            t_host.append(timed(torch, device, round_trip, 1)[0])
        t_dev.sort()
        t_host.sort()
        rows.append({"n": n, "threshold": thr, "dtype": str(x.dtype).replace("torch.", ""),
                     "device_s": t_dev[len(t_dev) // 2], "round_trip_s": t_host[len(t_host) // 2],
                     "device_times": t_dev, "round_trip_times": t_host,
                     "backend": info.get("backend"), "host_copies": info.get("host_copies"),
                     "same_diagrams": same, "bars": [len(d) for d in a]})
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="256,512,1024")
    ap.add_argument("--exact-sizes", default="1024",
                    help="sizes at which the MLP's whole-filtration signatures are timed too "
                         "(empty: none)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--models", default=None,
                    help="comma-separated, from %s (default: all on a CUDA device, all but "
                         "resnet18 on a CPU)" % ",".join(MODELS))
    ap.add_argument("--transfer-sizes", default="4096,16384,65536",
                    help="cloud sizes of the device-path vs host-round-trip comparison "
                         "(CUDA devices only; empty: none)")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()

    import torch
    import topoml
    import topoml.torch as tt

    device = torch.device(args.device)
    models = args.models.split(",") if args.models else \
        [k for k in MODELS if device.type == "cuda" or k != "resnet18"]
    for k in models:
        if k not in MODELS:
            ap.error("unknown model %r (known: %s)" % (k, ", ".join(MODELS)))
    exact_sizes = {int(v) for v in args.exact_sizes.split(",") if v}
    # before any timing: this thread's topoml context, the certification of
    # the plugins on first use (child processes), torch's thread pool
    topoml.barcodes(data(torch, 64, torch.device("cpu")).numpy(), maxdim=1)
    with torch.no_grad():
        model(torch, device)(data(torch, 64, device))
    rows = []
    for key in models:
        _, make_model, make_data, layers = MODELS[key]
        net = make_model(torch, device)
        for n in [int(v) for v in args.sizes.split(",")]:
            x = make_data(torch, n, device)
            with torch.no_grad():
                net(x)  # warm-up
                # best of many: a forward pass of a few ms is the figure most
                # disturbed by other work on the machine
                t_fwd, _ = timed(torch, device, lambda: net(x), max(25, args.repeat))

            def capture(scale="auto"):
                with tt.TorchActivationCapture(net, layers, max_samples=n, projection_dim=16,
                                               scale=scale) as cap:
                    with torch.no_grad():
                        net(x)
                    return cap.signatures(), cap.activations(layers[-1])
            capture()  # warm-up: a plugin's certification on first use, caches
            t_cap, (sig, acts) = timed(torch, device, capture, args.repeat)
            row = {
                "model": key, "n": n, "forward_s": t_fwd, "capture_s": t_cap,
                "signature_s": t_cap - t_fwd, "signature_over_forward": (t_cap - t_fwd) / t_fwd,
                "signatures": {name: {"scale": s["scale"],
                                      "total_persistence": s["total_persistence"],
                                      "entropy": s["entropy"],
                                      "bars": [len(d) for d in s["diagrams"]]}
                               for name, s in sig.items()},
            }
            if key == "mlp" and n in exact_sizes:
                t_exact, (sig_exact, _) = timed(torch, device, lambda: capture(None), 1)
                row["capture_exact_s"] = t_exact
                row["signatures_exact"] = {
                    name: {"total_persistence": s["total_persistence"], "entropy": s["entropy"],
                           "bars": [len(d) for d in s["diagrams"]]}
                    for name, s in sig_exact.items()}
            if key == "mlp":
                def rips_grad(a):
                    p = a.detach().double().requires_grad_()
                    h1 = tt.RipsPersistence(maxdim=1)(p)[1]
                    loss = (h1[:, 1] - h1[:, 0]).sum() if len(h1) else (p * 0).sum()
                    loss.backward()
                    return float(loss.detach())
                row["rips_grad_s"], row["h1_total_persistence_last_layer"] = timed(
                    torch, device, lambda: rips_grad(acts), args.repeat)
                if device.type == "cuda":
                    row["rips_grad_backend"] = dict(tt.RipsPersistenceFunction.last_info or {})
                    host = acts.detach().cpu()
                    row["rips_grad_host_s"], row["h1_total_persistence_host"] = timed(
                        torch, device, lambda: rips_grad(host), args.repeat)
            rows.append(row)

    transfer = []
    if device.type == "cuda" and args.transfer_sizes:
        transfer = transfer_rows(torch, topoml, tt, device,
                                 [int(v) for v in args.transfer_sizes.split(",")],
                                 max(5, args.repeat))

    print("%8s %6s %11s %11s %13s %8s %15s %12s %12s" % (
        "model", "n", "forward ms", "capture ms", "signature ms", "sig/fwd", "exact capture ms",
        "rips+grad ms", "on host ms"))
    for r in rows:
        print("%8s %6d %11.3f %11.3f %13.3f %8.2f %15s %12s %12s" % (
            r["model"], r["n"], 1e3 * r["forward_s"], 1e3 * r["capture_s"],
            1e3 * r["signature_s"], r["signature_over_forward"],
            "%.1f" % (1e3 * r["capture_exact_s"]) if "capture_exact_s" in r else "-",
            "%.3f" % (1e3 * r["rips_grad_s"]) if "rips_grad_s" in r else "-",
            "%.3f" % (1e3 * r["rips_grad_host_s"]) if "rips_grad_host_s" in r else "-"))
    if transfer:
        print("\n%7s %10s %12s %15s %8s %12s %6s" % (
            "n", "threshold", "device ms", "round trip ms", "ratio", "host copies", "same"))
        for r in transfer:
            print("%7d %10.4f %12.3f %15.3f %8.2f %12s %6s" % (
                r["n"], r["threshold"], 1e3 * r["device_s"], 1e3 * r["round_trip_s"],
                r["device_s"] / r["round_trip_s"], r["host_copies"], r["same_diagrams"]))
    result = {
        "benchmark": "ml_adapters", "models": {k: MODELS[k][0] for k in models},
        "torch": torch.__version__, "torch_threads": torch.get_num_threads(),
        "topoml": topoml.__version__, "numpy": __import__("numpy").__version__,
        "python": platform.python_version(), "machine": platform.machine(),
        "load_average": list(os.getloadavg()),
        "device": str(device), "dtype_model": "float32", "dtype_rips": "float64",
        "cudnn_allow_tf32": bool(torch.backends.cudnn.allow_tf32),
        "matmul_allow_tf32": bool(torch.backends.cuda.matmul.allow_tf32),
        "capture": {"layers": {k: MODELS[k][3] for k in models}, "projection_dim": 16,
                    "maxdim": 1, "scale": "auto"},
        "repeat": args.repeat,
        "timing": "wall-clock; forward: best of max(25, repeat), capture and rips_grad: best of "
                  "repeat, capture_exact_s: one run",
        "rows": rows,
        "transfer": transfer,
    }
    if args.json:
        artifact.save(args.json, as_artifact(result, " ".join(["bench/ml_adapters.py"] +
                                                              sys.argv[1:])))
    return 0


def as_artifact(result, command):
    """The run in the bench/results schema (bench/make_tables.py): a
    case per model, size and timed step; what the script keeps besides
    stays as it is."""
    cases = [{"name": "%s n=%d" % (r["model"], r["n"]), "program": what, "times": [],
              "median": r[what + "_s"]}
             for r in result["rows"] for what in ("forward", "capture", "rips_grad", "rips_grad_host")
             if what + "_s" in r]
    cases += [{"name": "cloud n=%d dim 1 (cuda backend)" % r["n"], "program": what,
               "times": r[what + "_times"], "median": r[what + "_s"]}
              for r in result.get("transfer", []) for what in ("device", "round_trip")]
    return dict(result,
                title="topoml.torch: activation signatures and the differentiable Rips layer",
                machine={"cpu": result["machine"], "device": result["device"],
                         "load_average": result["load_average"]},
                versions={k: result[k] for k in ("torch", "topoml", "numpy", "python")},
                commands=[command], statistic="best of the runs (" + result["timing"] + ")",
                no_raw_times="ml_adapters.py keeps the best of its runs, not the runs",
                cases=cases)


if __name__ == "__main__":
    sys.exit(main())
