#!/usr/bin/env python3
"""Benchmark of topoml-backend-cuda against torch.cdist on the same GPU.

Runs bench_cuda (the C benchmark: measured ceilings, the distance kernel from
device to device, and the plugin's ops against the scalar reference), then
times torch.cdist on the same sizes, and writes OUT/bench.json and a readable
OUT/bench.md.

torch.cdist returns the full n x n matrix; topoml returns the condensed lower
triangle, half as many entries. Both are reported per pair of points
(pairs/s) and per byte written. torch.cdist in its default mode uses a
matrix product (|x|^2 + |y|^2 - 2 x.y) for large inputs, which is faster but
loses digits for near points; "donot_use_mm_for_euclid_dist" computes
differences directly, as topoml does.

Usage: bench_cuda.py --bench PATH/bench_cuda --cuda-plugin PATH --scalar-plugin PATH
                     --out DIR [--quick]
"""
import argparse
import json
import os
import subprocess
import sys
import time


def run_c_bench(args):
    path = os.path.join(args.out, "bench_cuda.json")
    cmd = [args.bench, args.cuda_plugin, args.scalar_plugin, path]
    if args.quick:
        cmd.append("--quick")
    with open(os.path.join(args.out, "bench_cuda.txt"), "w") as log:
        rc = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT).returncode
    if rc != 0:
        return {"error": "bench_cuda exited with %d (see bench_cuda.txt)" % rc}
    with open(path) as f:
        return json.load(f)


def time_cuda(torch, fn, reps):
    """Best time of `reps` runs after one warm-up, in seconds."""
    fn()
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        best = min(best, start.elapsed_time(end) / 1e3)
    return best


def torch_rows(sizes, quick):
    try:
        import torch
    except Exception as e:  # no torch: say so in the report
        return {"error": "torch not importable: %s" % e}
    if not torch.cuda.is_available():
        return {"error": "torch sees no CUDA device"}
    rows = []
    info = {"torch": torch.__version__, "device": torch.cuda.get_device_name(0),
            "allow_tf32_matmul": bool(torch.backends.cuda.matmul.allow_tf32)}
    for n, dim in sizes:
        for mode in ("use_mm_for_euclid_dist_if_necessary", "donot_use_mm_for_euclid_dist"):
            # The direct mode is slow at the largest sizes; keep the run short.
            if mode.startswith("donot") and n * n * dim > (2 if quick else 64) * 65536 * 65536:
                continue
            try:
                x = torch.rand(n, dim, device="cuda", dtype=torch.float32)
                holder = {}

                def fn():
                    holder["d"] = torch.cdist(x, x, compute_mode=mode)

                t = time_cuda(torch, fn, 3)
                del holder["d"], x
                torch.cuda.empty_cache()
            except Exception as e:
                rows.append({"n": n, "dim": dim, "mode": mode, "error": str(e)})
                continue
            pairs = n * (n - 1) / 2
            rows.append({"n": n, "dim": dim, "mode": mode, "seconds": t,
                         "pairs_per_s": pairs / t, "gb_per_s": n * n * 4 / t / 1e9})
    info["rows"] = rows
    return info


def markdown(c_bench, torch_bench):
    out = ["# topoml-backend-cuda benchmark", ""]
    if "error" in c_bench:
        out += ["bench_cuda: " + c_bench["error"], ""]
        return "\n".join(out)
    ceil = c_bench["ceilings"]
    out += ["Device: %s" % c_bench["device"], "",
            "Measured ceilings: write %.0f GB/s; f32 add/mul %.1f TFLOP/s; f64 add/mul %.1f "
            "TFLOP/s (separate adds and multiplies, as the distance kernel issues them)."
            % (ceil["write_gb_per_s"], ceil["fp32_addmul_tflop_per_s"],
               ceil["fp64_addmul_tflop_per_s"]), ""]
    torch_index = {}
    if "rows" in torch_bench:
        for r in torch_bench["rows"]:
            if "seconds" in r:
                torch_index[(r["n"], r["dim"], r["mode"])] = r
    out += ["## Distances, device to device (f32 euclidean unless said)", "",
            "| dtype | metric | n | dim | topoml ms | GB/s (% of write) | TFLOP/s (% of add/mul) "
            "| torch.cdist mm ms | torch.cdist direct ms | topoml pairs/s vs torch mm |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    metric = {0: "euclidean", 1: "sqeuclidean", 2: "manhattan", 3: "chebyshev", 4: "cosine"}
    for r in c_bench["rows"]:
        if r["op"] != "distances_device":
            continue
        mm = torch_index.get((r["n"], r["dim"], "use_mm_for_euclid_dist_if_necessary"))
        direct = torch_index.get((r["n"], r["dim"], "donot_use_mm_for_euclid_dist"))
        same = r["dtype"] == "f32" and r["metric"] == 0
        pairs = r["n"] * (r["n"] - 1) / 2
        out.append("| %s | %s | %d | %d | %.3f | %.0f (%.0f%%) | %.2f (%.0f%%) | %s | %s | %s |" % (
            r["dtype"], metric.get(r["metric"], "?"), r["n"], r["dim"], r["seconds"] * 1e3,
            r["gb_per_s"], r["pct_write_ceiling"], r["tflop_per_s"], r["pct_flop_ceiling"],
            "%.3f" % (mm["seconds"] * 1e3) if mm and same else "",
            "%.3f" % (direct["seconds"] * 1e3) if direct and same else "",
            "x%.2f" % ((pairs / r["seconds"]) / mm["pairs_per_s"]) if mm and same else ""))
    out += ["", "## Through the plugin ABI, against the scalar reference", "",
            "| op | data | n | dim | parameters | cuda s | scalar s | speed-up | status |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in c_bench["rows"]:
        if r["op"] == "distances_device":
            continue
        s = r["scalar_seconds"]
        out.append("| %s | %s | %d | %d | %s | %.3f | %s | %s | %s |" % (
            r["op"], r["data"], r["n"], r["dim"], r["params"], r["cuda_seconds"],
            "%.3f" % s if s >= 0 else "-", "x%.1f" % (s / r["cuda_seconds"]) if s > 0 else "-",
            r["status"]))
    if "error" in torch_bench:
        out += ["", "torch: " + torch_bench["error"]]
    else:
        out += ["", "torch %s, allow_tf32 for matmul: %s" % (torch_bench["torch"],
                                                              torch_bench["allow_tf32_matmul"])]
    return "\n".join(out) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bench", required=True)
    p.add_argument("--cuda-plugin", required=True)
    p.add_argument("--scalar-plugin", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--quick", action="store_true")
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    t0 = time.time()
    c_bench = run_c_bench(args)
    sizes = sorted({(r["n"], r["dim"]) for r in c_bench.get("rows", [])
                    if r["op"] == "distances_device" and r["dtype"] == "f32"})
    torch_bench = torch_rows(sizes, args.quick)
    result = {"bench_cuda": c_bench, "torch_cdist": torch_bench, "seconds": time.time() - t0}
    with open(os.path.join(args.out, "bench.json"), "w") as f:
        json.dump(result, f, indent=1)
    with open(os.path.join(args.out, "bench.md"), "w") as f:
        f.write(markdown(c_bench, torch_bench))
    sys.stdout.write(markdown(c_bench, torch_bench))
    return 0 if "error" not in c_bench else 1


if __name__ == "__main__":
    sys.exit(main())
