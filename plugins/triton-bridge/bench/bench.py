#!/usr/bin/env python3
"""Benchmark of the topoml triton-bridge backend on one GPU.

Pairwise distances of n random points (float32, euclidean) computed several
ways, each timed after a warm-up run:

  bridge    topoml-backend-triton-bridge.so through its plugin ABI (ctypes):
            points in host memory -> condensed matrix in host memory. `e2e`
            is the whole call; `kern` is the plugin's own measure of its
            launches (host clock from the first launch to cuCtxSynchronize,
            on the output buffer it keeps between calls) and `download`
            of its copies of the result to host memory, both read from its
            debug log, as is the kernel variant the launch stub picked
            (`variant`: distances_f32_* below 10 coordinates,
            distances_long_f32_* from 10, distances_dot_*_d16n32, the
            matrix-product route, f32 from 64 coordinates, aligned since the
            plugin pads the points to a multiple of 16; see
            src/op_distances.c and aot/build_kernels.py). `jit` and `aot`
            below run on the same padded layout (ld = n rounded up to a
            multiple of 16).
            `cupti` is the device time of the same call's kernels as CUPTI
            records it (torch.profiler), without the host's launch and
            synchronisation.
  aot       the cubin the plugin launched (generated/tb_cubin_<variant>.c),
            loaded and launched here through the driver on torch's buffers
            and timed with CUDA events exactly as `jit` is: the compiled code
            alone, against the JIT's.
  jit       the same Triton kernel (kernels/distances.py, or distances_dot.py
            for the dot route) launched through Triton's JIT, device tensors
            in and out (condensed). The JIT picks its own specialisation from
            the arguments (integers below 2^31 as i32, multiples of 16
            marked divisible, root == 1 a constant). `jit fresh` times it on
            an output buffer allocated just before (as the plugin's is), n <=
            16384. `jit x`/`jit .` in the JSON: the exact and the dot kernel
            at every dimension, to place the cut-over.
  cuda      topoml-backend-cuda.so (with --cuda-plugin): its kernels' device
            time in the same host-to-host call, from CUPTI.
  cdist     torch.cdist(x, x) on the device: the full n x n matrix, computed
            with a matrix product (its default for n > 25).

With --sweep, none of the above: a search for faster schedules of the two
distance kernels through the JIT (bench/sweep.py says how), printing per
(kernel, dim) the five fastest configs and their speed-up over the default
schedule, and the JSON with every config tried (README.md, "Schedule sweep",
says what to do with the result).

`ratio` is the bridge's kernel time (cupti where recorded, else kern) over
the best of jit, cuda and cdist; the issue's target is <= 1.10.

Accuracy is measured on a sample of pairs against float64 on the device:
the largest relative error, and the largest distance in float32 ulps from
the float64 value rounded to float32. `same` says whether the bridge's
values are bit-identical to the JIT's on the sample (the same kernel, once
compiled ahead of time and once just in time).

Then the bridge's threshold edges (against a torch formulation: cdist, mask,
nonzero, sort) and persistence images, for scale.

Prints a table and writes everything to --json. Needs torch and triton for
the jit and cdist columns; with --no-torch only the bridge runs (that mode
also works against the fake driver of the tests, for checking this script).
"""

import argparse
import ctypes
import json
import math
import os
import platform
import random
import re
import statistics
import sys
import time
from ctypes import (CFUNCTYPE, POINTER, Structure, byref, c_char_p, c_double, c_int, c_int32,
                    c_size_t, c_uint32, c_uint64, c_void_p)
from pathlib import Path

HERE = Path(__file__).resolve().parent
KERNELS = HERE.parent / "kernels"
GENERATED = HERE.parent / "generated"

# ---- the plugin ABI (plugin-api/include/topoml/plugin.h), as ctypes ----

ALLOC = CFUNCTYPE(c_void_p, c_void_p, c_size_t)
REALLOC = CFUNCTYPE(c_void_p, c_void_p, c_void_p, c_size_t)
FREE = CFUNCTYPE(None, c_void_p, c_void_p)
LOG = CFUNCTYPE(None, c_void_p, c_int, c_char_p)
PROGRESS = CFUNCTYPE(c_int, c_void_p, c_char_p, c_uint64, c_uint64)

TOPOML_F32, TOPOML_F64 = 0, 1
EUCLIDEAN, SQEUCLIDEAN = 0, 1
POINTS = 0


class Host(Structure):
    _fields_ = [("struct_size", c_uint32), ("abi_version", c_uint32), ("host_data", c_void_p),
                ("alloc", ALLOC), ("realloc", REALLOC), ("free", FREE), ("log", LOG),
                ("core_version", c_char_p)]


class Call(Structure):
    _fields_ = [("struct_size", c_uint32), ("reserved", c_uint32), ("host_data", c_void_p),
                ("alloc", ALLOC), ("realloc", REALLOC), ("free", FREE), ("log", LOG),
                ("progress", PROGRESS), ("max_memory", c_uint64), ("error", c_void_p),
                ("error_size", c_size_t), ("device", c_int32), ("reserved2", c_uint32)]


class Input(Structure):
    _fields_ = [("struct_size", c_uint32), ("kind", c_uint32), ("n", c_uint64), ("dim", c_uint64),
                ("dtype", c_uint32), ("metric", c_uint32), ("data", c_void_p),
                ("n_edges", c_uint64), ("edges", c_void_p)]


class Edge(Structure):
    _fields_ = [("d", c_double), ("i", c_uint32), ("j", c_uint32)]


class Capability(Structure):
    _fields_ = [("struct_size", c_uint32), ("op", c_uint32), ("dtypes", c_uint32),
                ("metrics", c_uint32), ("inputs", c_uint32), ("max_dim", c_uint32),
                ("max_modulus", c_uint32), ("reserved", c_uint32), ("max_points", c_uint64),
                ("device", c_char_p), ("schedule", c_char_p)]


class ImageParams(Structure):
    _fields_ = [("struct_size", c_uint32), ("weight", c_uint32), ("weight_max", c_double),
                ("weight_power", c_double), ("sigma", c_double), ("birth_min", c_double),
                ("birth_max", c_double), ("pers_min", c_double), ("pers_max", c_double),
                ("width", c_uint32), ("height", c_uint32), ("infinite", c_uint32),
                ("reserved", c_uint32), ("clip_death", c_double)]


CREATE = CFUNCTYPE(c_int, POINTER(Host), POINTER(c_void_p))
DESTROY = CFUNCTYPE(None, c_void_p)
PROBE = CFUNCTYPE(c_int, c_void_p, c_char_p, c_size_t)
CAPS = CFUNCTYPE(c_int, c_void_p, POINTER(POINTER(Capability)), POINTER(c_uint32))
DISTANCES = CFUNCTYPE(c_int, c_void_p, POINTER(Call), POINTER(Input), c_void_p)
EDGES = CFUNCTYPE(c_int, c_void_p, POINTER(Call), POINTER(Input), c_double,
                  POINTER(POINTER(Edge)), POINTER(c_uint64))
IMAGE = CFUNCTYPE(c_int, c_void_p, POINTER(Call), POINTER(ImageParams), c_uint64,
                  POINTER(c_uint64), c_void_p, POINTER(c_double))


class Backend(Structure):
    _fields_ = [("struct_size", c_uint32), ("abi_version", c_uint32), ("name", c_char_p),
                ("version", c_char_p), ("vendor", c_char_p), ("description", c_char_p),
                ("create", CREATE), ("destroy", DESTROY), ("probe", PROBE),
                ("capabilities", CAPS), ("distances", DISTANCES), ("edges", EDGES),
                ("h0", c_void_p), ("rips", c_void_p), ("image", IMAGE)]


class Bridge:
    """The plugin, loaded and created as the core would."""

    def __init__(self, path):
        self.libc = ctypes.CDLL(None)
        self.libc.malloc.restype = c_void_p
        self.libc.malloc.argtypes = [c_size_t]
        self.libc.realloc.restype = c_void_p
        self.libc.realloc.argtypes = [c_void_p, c_size_t]
        self.libc.free.argtypes = [c_void_p]
        self.messages = []
        # Keep the callbacks alive as long as the plugin may call them.
        self._alloc = ALLOC(lambda data, size: self.libc.malloc(size))
        self._realloc = REALLOC(lambda data, ptr, size: self.libc.realloc(ptr, size))
        self._free = FREE(lambda data, ptr: self.libc.free(ptr))
        self._log = LOG(lambda data, level, msg: self.messages.append(msg.decode()))
        self._progress = PROGRESS(lambda data, stage, done, total: 0)
        self.host = Host(ctypes.sizeof(Host), 1, None, self._alloc, self._realloc, self._free,
                         self._log, b"bench")
        self.lib = ctypes.CDLL(str(path))
        negotiate = self.lib.topoml_backend_negotiate
        negotiate.argtypes = [POINTER(c_uint32), POINTER(Host), POINTER(POINTER(Backend))]
        negotiate.restype = c_int
        abi = c_uint32(1)
        be = POINTER(Backend)()
        if negotiate(byref(abi), byref(self.host), byref(be)) != 0:
            raise SystemExit("negotiation failed")
        self.be = be.contents
        self.state = c_void_p()
        if self.be.create(byref(self.host), byref(self.state)) != 0:
            raise SystemExit("create failed")
        why = ctypes.create_string_buffer(512)
        self.probe_status = self.be.probe(self.state, why, 512)
        self.probe_text = why.value.decode()
        caps = POINTER(Capability)()
        n = c_uint32()
        self.schedules = {}
        if self.probe_status == 0 and self.be.capabilities(self.state, byref(caps), byref(n)) == 0:
            for k in range(n.value):
                self.schedules[caps[k].op] = caps[k].schedule.decode()
        self.error = ctypes.create_string_buffer(1024)

    def call(self):
        self.messages.clear()
        return Call(ctypes.sizeof(Call), 0, None, self._alloc, self._realloc, self._free,
                    self._log, self._progress, 0, ctypes.cast(self.error, c_void_p), 1024, -1, 0)

    def _check(self, status, what):
        if status != 0:
            raise RuntimeError(f"{what}: status {status}: {self.error.value.decode()}")

    def logged(self, pattern, convert=float, default=float("nan")):
        """The first group of `pattern` in the last call's debug log."""
        for m in self.messages:
            got = re.search(pattern, m)
            if got:
                return convert(got.group(1))
        return default

    def kernel_ms(self):
        return self.logged(r"kernels ([0-9.]+) ms")

    def distances(self, points_ptr, n, dim, out_ptr, metric=EUCLIDEAN):
        inp = Input(ctypes.sizeof(Input), POINTS, n, dim, TOPOML_F32, metric, points_ptr, 0, None)
        call = self.call()
        t = time.perf_counter()
        status = self.be.distances(self.state, byref(call), byref(inp), out_ptr)
        wall = time.perf_counter() - t
        self._check(status, "distances")
        return wall * 1e3, self.kernel_ms()

    def edges(self, points_ptr, n, dim, threshold):
        inp = Input(ctypes.sizeof(Input), POINTS, n, dim, TOPOML_F32, EUCLIDEAN, points_ptr, 0,
                    None)
        call = self.call()
        out = POINTER(Edge)()
        count = c_uint64()
        t = time.perf_counter()
        status = self.be.edges(self.state, byref(call), byref(inp), threshold, byref(out),
                               byref(count))
        wall = time.perf_counter() - t
        self._check(status, "edges")
        first = (out[0].d, out[0].i, out[0].j) if count.value else None
        last = (out[count.value - 1].d, out[count.value - 1].i,
                out[count.value - 1].j) if count.value else None
        if out:
            self.libc.free(ctypes.cast(out, c_void_p))
        return wall * 1e3, self.kernel_ms(), count.value, first, last

    def image(self, params, offsets, pairs_ptr, n_diagrams, out_ptr):
        call = self.call()
        t = time.perf_counter()
        status = self.be.image(self.state, byref(call), byref(params), n_diagrams, offsets,
                               pairs_ptr, out_ptr)
        wall = time.perf_counter() - t
        self._check(status, "image")
        return wall * 1e3, self.kernel_ms()

    def close(self):
        self.be.destroy(self.state)


# ---- the plugin's cubins, launched directly ----

class Cubins:
    """The generated cubins, loaded through the driver into torch's context,
    launched on torch's current stream."""

    def __init__(self):
        self.cu = ctypes.CDLL("libcuda.so.1")
        self.meta = {k["name"]: k for k in json.loads((GENERATED / "kernels.json").read_text())
                     ["kernels"]}
        self.functions = {}

    def function(self, name):
        if name not in self.functions:
            text = (GENERATED / f"tb_cubin_{name}.c").read_text()
            body = text[text.index("= {") + 3:]
            image = bytes(int(h, 16) for h in re.findall(r"0x([0-9a-f]{2})", body))
            buf = ctypes.create_string_buffer(image, len(image))
            mod, fn = c_void_p(), c_void_p()
            if self.cu.cuModuleLoadData(byref(mod), buf) != 0:
                raise RuntimeError(f"cuModuleLoadData({name}) failed")
            md = self.meta[name]
            if self.cu.cuModuleGetFunction(byref(fn), mod, md["function"].encode()) != 0:
                raise RuntimeError(f"cuModuleGetFunction({name}) failed")
            if md["shared"] > 49152:
                self.cu.cuFuncSetAttribute(fn, 8, md["shared"])
            self.functions[name] = (fn, buf)
        return self.functions[name][0]

    def launch(self, torch, name, grid, *args):
        md = self.meta[name]
        conv = {"i32": ctypes.c_int32, "i64": ctypes.c_int64, "fp32": ctypes.c_float,
                "fp64": ctypes.c_double}
        vals = []
        for a, sig in zip(args, md["signature"]):
            arg, ty = sig.split(":")
            if arg in md.get("one", []):
                continue  # compiled in as 1, not passed (a must be 1 then)
            vals.append(c_uint64(a.data_ptr()) if ty.startswith("*") else conv[ty](a))
        vals += [c_uint64(0), c_uint64(0)]  # Triton's global and profile scratch
        params = (c_void_p * len(vals))(*[ctypes.addressof(v) for v in vals])
        stream = c_void_p(torch.cuda.current_stream().cuda_stream)
        r = self.cu.cuLaunchKernel(self.function(name), grid, 1, 1, md["threads"], 1, 1,
                                   md["shared"], stream, params, None)
        if r != 0:
            raise RuntimeError(f"cuLaunchKernel({name}): {r}")


def cupti_kernel_ms(torch, fn):
    """Device time of the kernels fn() runs, as CUPTI records it (torch.profiler
    sees kernels of every library in the process); NaN when none is seen."""
    try:
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            fn()
            torch.cuda.synchronize()
        total = 0.0
        for e in prof.events():
            kind = getattr(e.device_type, "name", str(e.device_type))
            if "CUDA" not in kind or e.name.startswith(("Memcpy", "Memset")):
                continue
            total += e.time_range.elapsed_us()
        return total / 1e3 if total > 0 else float("nan")
    except Exception as exc:  # profiler missing or refusing: leave the column empty
        print(f"cupti: {exc}", file=sys.stderr)
        return float("nan")


# ---- helpers ----

def optional(row, key, fn):
    """row[key] = fn(), or the error in row[key + "_error"]: a column this
    script could not measure leaves the rest of the table standing."""
    try:
        row[key] = fn()
    except Exception as exc:
        row[key + "_error"] = f"{type(exc).__name__}: {exc}"
        print(f"  ({key}: {row[key + '_error']})", file=sys.stderr, flush=True)


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def timed_cuda(torch, fn, reps):
    """Median milliseconds of fn() over reps runs, after one warm-up run."""
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return median(times)


def accuracy(torch, values, ref):
    """Largest relative error and float32 ulp distance of float32 `values`
    from float64 `ref` (both 1-D device tensors)."""
    v = values.double()
    rel = ((v - ref).abs() / ref.abs().clamp_min(1e-30)).max().item()
    a = values.float().view(torch.int32).long()
    b = ref.float().view(torch.int32).long()
    return rel, (a - b).abs().max().item()


def environment(torch):
    env = {"python": platform.python_version(), "machine": platform.node()}
    try:
        import triton
        env["triton"] = triton.__version__
    except ImportError:
        pass
    if torch is not None:
        env["torch"] = torch.__version__
        env["gpu"] = torch.cuda.get_device_name(0)
        env["cuda_runtime"] = torch.version.cuda
        free, total = torch.cuda.mem_get_info()
        env["gpu_memory_gib"] = round(total / 2**30, 1)
    return env


# ---- the benchmarks ----

def bench_distances(args, bridge, cuda, torch, results, deadline):
    exact_kernel = dot_kernel = cubins = None
    if torch is not None:
        sys.path.insert(0, str(KERNELS))
        sys.path.insert(0, str(HERE))
        import sweep
        from distances import pairwise_distances as exact_kernel
        from distances_dot import pairwise_distances_dot as dot_kernel
        try:
            cubins = Cubins()
        except Exception as exc:
            print(f"direct cubin launches unavailable: {exc}", file=sys.stderr)
        specs = sweep.kernel_specs(json.loads((GENERATED / "kernels.json").read_text()))
        dot_spec, exact_specs = specs["dot"], specs["exact"]
    for n in args.sizes:
        m = n * (n - 1) // 2
        host_out = (ctypes.c_float * m)()  # reused for every dim at this n
        host_view = None
        for dim in args.dims:
            if time.monotonic() > deadline:
                results.append({"op": "distances", "n": n, "dim": dim, "skipped": "time budget"})
                print(f"{n:>7} {dim:>5}  skipped: time budget", flush=True)
                continue
            reps = args.reps if n <= 16384 else max(1, args.reps - 1)
            row = {"op": "distances", "n": n, "dim": dim, "dtype": "f32", "metric": "euclidean"}
            if torch is not None:
                gen = torch.Generator().manual_seed(n * 1000 + dim)
                x = torch.rand((n, dim), generator=gen, dtype=torch.float32) * 2 - 1
                x = x.contiguous()
                ptr = x.data_ptr()
            else:
                rnd = random.Random(n * 1000 + dim)
                xs = (ctypes.c_float * (n * dim))(*[rnd.uniform(-1, 1) for _ in range(n * dim)])
                ptr = ctypes.addressof(xs)
            # bridge: host to host
            bridge.distances(ptr, n, dim, host_out)  # warm-up (loads nothing new, but pages)
            e2e, kern, down = [], [], []
            for _ in range(reps):
                w, k = bridge.distances(ptr, n, dim, host_out)
                e2e.append(w)
                kern.append(k)
                down.append(bridge.logged(r"download ([0-9.]+) ms"))
            row["bridge_e2e_ms"] = median(e2e)
            row["bridge_kernel_ms"] = median(kern)
            # Host-to-host time is mostly the copy of the condensed matrix back.
            row["bridge_download_ms"] = median(down)
            # Which compiled variant the launch stub picked (build_kernels.py).
            row["bridge_variant"] = bridge.logged(r"kernel (\S+)$", str, "-")
            dot = row["bridge_variant"].startswith("distances_dot")
            row["route"] = "dot" if dot else "exact"
            if torch is not None:
                optional(row, "bridge_cupti_ms", lambda: cupti_kernel_ms(
                    torch, lambda: bridge.distances(ptr, n, dim, host_out)))
            if cuda is not None:
                def cuda_e2e():
                    cuda.distances(ptr, n, dim, host_out)
                    return median([cuda.distances(ptr, n, dim, host_out)[0] for _ in range(reps)])
                optional(row, "cuda_e2e_ms", cuda_e2e)
                if torch is not None:
                    optional(row, "cuda_kernel_ms", lambda: cupti_kernel_ms(
                        torch, lambda: cuda.distances(ptr, n, dim, host_out)))
            if torch is not None:
                xd = x.cuda()
                # The plugin's layout (src/op_distances.c): transposed, n rounded
                # up to a multiple of 16 with zero columns, the kernels launched
                # for ld points. The JIT and the cubin get the same, so that all
                # three run the same code on the same work.
                ld = -(-n // 16) * 16
                m_ld = ld * (ld - 1) // 2
                xt = torch.nn.functional.pad(xd.t(), (0, ld - n)).contiguous()
                # Sample of pairs i > j and the float64 reference.
                s = min(args.samples, m)
                g = torch.Generator(device="cuda").manual_seed(7)
                i = torch.randint(1, n, (s,), device="cuda", generator=g)
                j = (torch.rand(s, device="cuda", generator=g) * i).long().clamp_max(i - 1)
                idx = i * (i - 1) // 2 + j
                xdd = xd.double()
                ref = ((xdd[i] - xdd[j]) ** 2).sum(1).sqrt()
                if cuda is not None:
                    # The cuda plugin's calls above wrote their own result into
                    # host_out: the bridge's again, so that the accuracy and
                    # `same` columns are the bridge's.
                    bridge.distances(ptr, n, dim, host_out)
                if host_view is None:
                    host_view = torch.frombuffer(host_out, dtype=torch.float32)
                got_bridge = host_view[idx.cpu()].cuda()
                row["bridge_max_rel"], row["bridge_max_ulp"] = accuracy(torch, got_bridge, ref)

                out = torch.empty(m_ld, dtype=torch.float32, device="cuda")
                # The host's centring for the dot kernel (src/points.c): the mean
                # over the n points; the padding columns stay zero.
                xs = (xt - xt[:, :n].double().mean(dim=1).float()[:, None]).contiguous()
                xs[:, n:] = 0
                def run_jit(use_dot, buf):
                    # The compiled schedule (kernels.json), through bench/sweep.py's
                    # launcher, which the sweep measures the same way.
                    kernel = "dot" if use_dot else "exact"
                    spec = dot_spec if use_dot else sweep.spec_for(exact_specs, dim)
                    cfg = sweep.default_config(spec, kernel)
                    sweep.launch(exact_kernel, dot_kernel, kernel, cfg,
                                 {"xt": xt, "xs": xs, "out": buf, "ld": ld, "dim": dim})

                def jit():
                    run_jit(dot, out)
                t = time.perf_counter()
                jit()
                torch.cuda.synchronize()
                row["jit_first_call_ms"] = (time.perf_counter() - t) * 1e3
                row["jit_kernel_ms"] = timed_cuda(torch, jit, reps)
                got_jit = out[idx]
                row["jit_max_rel"], row["jit_max_ulp"] = accuracy(torch, got_jit, ref)
                row["same"] = bool(torch.equal(got_jit, got_bridge))
                # The other kernel too, for the cut-over dimension.
                other = "jit_exact_ms" if dot else "jit_dot_ms"
                row["jit_exact_ms" if not dot else "jit_dot_ms"] = row["jit_kernel_ms"]
                optional(row, other, lambda: timed_cuda(torch, lambda: run_jit(not dot, out), reps))
                if not dot and other in row:
                    row["jit_dot_max_rel"], _ = accuracy(torch, out[idx], ref)
                # The plugin's own cubin, launched like the JIT's kernel.
                v = row["bridge_variant"]
                if cubins is not None and v in cubins.meta:
                    args_ = ((xt, xs, out) if dot else (xt, out)) + (ld, dim, 1, 0, 0)
                    spec = dot_spec if dot else sweep.spec_for(exact_specs, dim)
                    tiles = -(-ld // sweep.block_of(spec["constexprs"]))
                    optional(row, "aot_kernel_ms", lambda: timed_cuda(
                        torch, lambda: cubins.launch(torch, v, tiles * (tiles + 1) // 2, *args_),
                        reps))
                    if "aot_kernel_ms" in row:
                        row["aot_same"] = bool(torch.equal(out[idx], got_bridge))
                del out
                torch.cuda.empty_cache()

                def jit_fresh():
                    # The JIT on a buffer allocated just before each launch.
                    fresh = []
                    for _ in range(reps):
                        buf = torch.empty(m_ld, dtype=torch.float32, device="cuda")
                        torch.cuda.synchronize()
                        start = torch.cuda.Event(enable_timing=True)
                        end = torch.cuda.Event(enable_timing=True)
                        start.record()
                        run_jit(dot, buf)
                        end.record()
                        end.synchronize()
                        fresh.append(start.elapsed_time(end))
                        del buf
                        torch.cuda.empty_cache()
                    return median(fresh)
                if n <= 16384:
                    optional(row, "jit_fresh_ms", jit_fresh)
                del xs

                holder = {}

                def cdist():
                    holder["d"] = torch.cdist(xd, xd)
                try:
                    row["cdist_ms"] = timed_cuda(torch, cdist, reps)
                    got_cdist = holder["d"][i, j]
                    row["cdist_max_rel"], row["cdist_max_ulp"] = accuracy(torch, got_cdist, ref)
                except torch.cuda.OutOfMemoryError:
                    row["cdist_ms"] = None
                    row["cdist_note"] = "out of device memory"
                holder.clear()
                del xd, xt, xdd
                torch.cuda.empty_cache()
            bridge_ms = row.get("bridge_cupti_ms")
            if bridge_ms is None or math.isnan(bridge_ms):
                bridge_ms = row.get("bridge_kernel_ms")
            others = [row.get(k) for k in ("jit_kernel_ms", "cuda_kernel_ms", "cdist_ms")]
            others = [v for v in others if v is not None and not math.isnan(v)]
            if others and bridge_ms is not None and not math.isnan(bridge_ms):
                row["best_other_ms"] = min(others)
                row["ratio"] = bridge_ms / min(others)
            results.append(row)
            print_row(row)
        del host_view
        del host_out


COLUMNS = [("bridge e2e", "bridge_e2e_ms"), ("download", "bridge_download_ms"),
           ("kern", "bridge_kernel_ms"), ("cupti", "bridge_cupti_ms"), ("aot", "aot_kernel_ms"),
           ("jit", "jit_kernel_ms"), ("jit fresh", "jit_fresh_ms"), ("jit x", "jit_exact_ms"),
           ("jit .", "jit_dot_ms"), ("cuda", "cuda_kernel_ms"), ("cdist", "cdist_ms"),
           ("ratio", "ratio")]


def print_header():
    print(f"{'n':>6} {'dim':>4} " + " ".join(f"{c:>10}" for c, _ in COLUMNS) +
          f"  {'ulp b/j/c':>12} {'same':>5}  variant")
    print(f"{'':>6} {'':>4} " + " ".join(f"{'ms' if k != 'ratio' else '':>10}"
                                         for _, k in COLUMNS))


def fmt(v, width, digits=2):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return f"{'-':>{width}}"
    return f"{v:>{width}.{digits}f}"


def print_row(r):
    ulps = "/".join(str(r.get(k, "-")) for k in ("bridge_max_ulp", "jit_max_ulp", "cdist_max_ulp"))
    print(f"{r['n']:>6} {r['dim']:>4} " +
          " ".join(fmt(r.get(k), 10, 2 if k == "ratio" else 3) for _, k in COLUMNS) +
          f"  {ulps:>12} {str(r.get('same', '-')):>5}  {r.get('bridge_variant', '-')}", flush=True)


def bench_edges(args, bridge, torch, results, deadline):
    for n, dim, density in args.edge_cases:
        if time.monotonic() > deadline:
            results.append({"op": "edges", "n": n, "dim": dim, "skipped": "time budget"})
            continue
        row = {"op": "edges", "n": n, "dim": dim, "dtype": "f32", "density": density}
        rnd = random.Random(n + dim)
        if torch is not None:
            gen = torch.Generator().manual_seed(n + dim)
            x = (torch.rand((n, dim), generator=gen) * 2 - 1).contiguous()
            ptr = x.data_ptr()
            xd = x.cuda()
            s = torch.randint(0, n, (2, 20000), device="cuda")
            sample = (xd[s[0]] - xd[s[1]]).pow(2).sum(1).sqrt()
            t = torch.quantile(sample[s[0] != s[1]], density).item()
        else:
            vals = [rnd.uniform(-1, 1) for _ in range(n * dim)]
            xs = (ctypes.c_float * (n * dim))(*vals)
            ptr = ctypes.addressof(xs)
            pts = [vals[k * dim:(k + 1) * dim] for k in range(n)]
            sample = sorted(math.dist(pts[rnd.randrange(n)], pts[rnd.randrange(n)])
                            for _ in range(2000))
            t = sample[int(density * (len(sample) - 1))]
        row["threshold"] = t
        bridge.edges(ptr, n, dim, t)
        w, k, count, first, last = bridge.edges(ptr, n, dim, t)
        row.update(bridge_e2e_ms=w, bridge_kernel_ms=k, edges=count)
        if torch is not None and n <= 32768:
            def torch_edges():
                d = torch.cdist(xd, xd)
                ii, jj = torch.nonzero(torch.tril(d <= t, diagonal=-1), as_tuple=True)
                dd = d[ii, jj].double()
                # (d, i, j) order with i < j: stable sorts, last key first.
                lo, hi = jj, ii
                o = torch.argsort(hi, stable=True)
                o = o[torch.argsort(lo[o], stable=True)]
                o = o[torch.argsort(dd[o], stable=True)]
                return dd[o], lo[o], hi[o]
            row["torch_ms"] = timed_cuda(torch, torch_edges, 2)
            dd, lo, hi = torch_edges()
            row["torch_edges"] = int(dd.numel())
            row["torch_first"] = [float(dd[0]), int(lo[0]), int(hi[0])] if dd.numel() else None
            row["bridge_first"] = list(first) if first else None
            del dd, lo, hi
            torch.cuda.empty_cache()
        results.append(row)
        print(f"edges n={n} dim={dim} t={t:.6g}: {count} edges, bridge {w:.2f} ms "
              f"(kernels {k:.2f} ms), torch cdist+mask+sort "
              f"{fmt(row.get('torch_ms'), 0)} ms ({row.get('torch_edges', '-')} edges)",
              flush=True)


def bench_image(args, bridge, results, deadline):
    for n_diagrams, per, size in args.image_cases:
        if time.monotonic() > deadline:
            results.append({"op": "image", "diagrams": n_diagrams, "skipped": "time budget"})
            continue
        rnd = random.Random(n_diagrams)
        total = n_diagrams * per
        pairs = (c_double * (2 * total))()
        for q in range(total):
            b = rnd.random()
            pairs[2 * q] = b
            pairs[2 * q + 1] = b + rnd.random()
        offsets = (c_uint64 * (n_diagrams + 1))(*[k * per for k in range(n_diagrams + 1)])
        params = ImageParams(ctypes.sizeof(ImageParams), 1, 1.0, 1.0, 0.05, 0.0, 1.0, 0.0, 1.0,
                             size, size, 0, 0, 0.0)
        out = (c_double * (n_diagrams * size * size))()
        bridge.image(params, offsets, pairs, n_diagrams, out)
        w, k = bridge.image(params, offsets, pairs, n_diagrams, out)
        row = {"op": "image", "diagrams": n_diagrams, "pairs_per_diagram": per, "size": size,
               "bridge_e2e_ms": w, "bridge_kernel_ms": k}
        results.append(row)
        print(f"image {n_diagrams} diagrams x {per} pairs, {size}x{size}: bridge {w:.2f} ms "
              f"(kernels {k:.2f} ms)", flush=True)


def parse_triples(text):
    return [tuple(float(v) if "." in v else int(v) for v in item.split(":"))
            for item in text.split(",") if item]


def sweep_main(args):
    """bench.py --sweep: the schedule sweep of bench/sweep.py, on n = the first
    of --only-n (default 65536) and --dims/--only-dim."""
    import signal

    import torch
    if not torch.cuda.is_available():
        raise SystemExit("torch sees no GPU: the sweep needs one")
    torch.backends.cuda.matmul.allow_tf32 = False
    sys.path.insert(0, str(HERE))
    sys.path.insert(0, str(KERNELS))
    import sweep
    from distances import pairwise_distances as exact_kernel
    from distances_dot import pairwise_distances_dot as dot_kernel
    specs = sweep.kernel_specs(json.loads((GENERATED / "kernels.json").read_text()))
    n = int(args.only_n.split(",")[0]) if args.only_n else 65536
    try:
        grids = sweep.parse_grid(args.grid)
    except ValueError as exc:
        raise SystemExit(f"--grid: {exc}")
    env = environment(torch)
    print("environment: " + ", ".join(f"{k}={v}" for k, v in env.items()), flush=True)
    # The schedule the plugin launches at each dim: the default of its group.
    defaults = {f"{kernel} dim={dim}": sweep.config_key(sweep.default_config(
                    sweep.spec_for(specs[kernel], dim), kernel))
                for kernel, dim in sweep.groups(args.dims)}
    print(f"sweep: n={n} dims={args.dims} reps={args.reps} budget={args.budget:.0f} s; defaults: "
          + ", ".join(f"{k} {v}" for k, v in defaults.items()), flush=True)
    groups = []
    report = {"mode": "sweep", "environment": env, "n": n, "dims": args.dims,
              "reps": args.reps, "budget_s": args.budget, "defaults": defaults,
              "grid": grids,
              "groups": groups}

    def stop(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")
    signal.signal(signal.SIGTERM, stop)
    status = 0
    try:
        sweep.run_sweep(torch, exact_kernel, dot_kernel, specs, n, args.dims, args.reps,
                        args.samples, args.budget, results=groups, grids=grids)
    except KeyboardInterrupt as exc:
        print(f"sweep interrupted ({exc}); what was measured follows", flush=True)
        status = 1
    finally:
        report["summary"] = sweep.summarize(groups)
        print("\n==== sweep: top configs per (kernel, dim) ====")
        print(sweep.format_summary(report["summary"]), flush=True)
        if args.json:
            args.json.write_text(json.dumps(report, indent=2) + "\n")
    return status


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--plugin", type=Path,
                        help="path of topoml-backend-triton-bridge.so (not needed for --sweep)")
    parser.add_argument("--sweep", action="store_true",
                        help="search schedules of the distance kernels through the JIT "
                             "(bench/sweep.py) instead of the benchmark: n = first of --only-n "
                             "(default 65536), --dims or --only-dim, --budget default 200")
    parser.add_argument("--grid", default="",
                        help="with --sweep: other values for the grid's parameters, e.g. "
                             "\"exact:MT=4;UNROLL=1,2;maxnreg=none,128\" (sweep.parse_grid)")
    parser.add_argument("--cuda-plugin", type=Path,
                        help="path of topoml-backend-cuda.so, for its column")
    parser.add_argument("--json", type=Path, help="write the results here")
    # 16383 is there for the generic variant (n not a multiple of 16).
    parser.add_argument("--sizes", default="1024,4096,16383,16384,65536")
    parser.add_argument("--dims", default="3,16,64,128,256")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--samples", type=int, default=200000)
    parser.add_argument("--edges", default="16384:3:0.005,32768:8:0.001",
                        help="n:dim:density,...")
    parser.add_argument("--images", default="1000:200:32,20000:50:20",
                        help="diagrams:pairs_each:size,...")
    parser.add_argument("--budget", type=float,
                        help="seconds; later cases are skipped once spent (default: none, "
                             "200 with --sweep)")
    parser.add_argument("--no-torch", action="store_true", help="bridge only")
    parser.add_argument("--only-n", metavar="N[,N...]",
                        help="distances rows of these n only (replaces --sizes); with "
                             "--only-n or --only-dim the edge and image cases are skipped")
    parser.add_argument("--only-dim", metavar="D[,D...]",
                        help="distances rows of these dimensions only (replaces --dims)")
    args = parser.parse_args()
    only = args.only_n is not None or args.only_dim is not None
    args.sizes = [int(v) for v in (args.only_n or args.sizes).split(",") if v]
    args.dims = [int(v) for v in (args.only_dim or args.dims).split(",") if v]
    args.edge_cases = [] if only else parse_triples(args.edges)
    args.image_cases = [] if only else parse_triples(args.images)
    if args.budget is None:
        args.budget = 200.0 if args.sweep else 1e9
    if args.sweep:
        return sweep_main(args)
    if args.plugin is None:
        parser.error("--plugin is required (except with --sweep)")
    deadline = time.monotonic() + args.budget

    torch = None
    if not args.no_torch:
        import torch
        if not torch.cuda.is_available():
            raise SystemExit("torch sees no GPU (use --no-torch for the bridge alone)")
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.cuda.init()

    bridge = Bridge(args.plugin)
    cuda = None
    if args.cuda_plugin is not None and args.cuda_plugin.is_file():
        try:
            cuda = Bridge(args.cuda_plugin)
            print(f"cuda plugin probe: {cuda.probe_status}: {cuda.probe_text}")
            if cuda.probe_status != 0:
                cuda = None
        except (OSError, SystemExit) as exc:
            print(f"cuda plugin not loaded: {exc}")
            cuda = None
    print(f"probe: {bridge.probe_status}: {bridge.probe_text}")
    if bridge.probe_status != 0:
        raise SystemExit("the plugin cannot run here")
    for op, sched in sorted(bridge.schedules.items()):
        print(f"schedule op {op}: {sched}")
    env = environment(torch)
    print("environment: " + ", ".join(f"{k}={v}" for k, v in env.items()), flush=True)

    results = []
    report = {"environment": env, "probe": bridge.probe_text, "schedules": bridge.schedules,
              "results": results}
    try:
        print_header()
        bench_distances(args, bridge, cuda, torch, results, deadline)
        bench_edges(args, bridge, torch, results, deadline)
        bench_image(args, bridge, results, deadline)
    finally:
        if args.json:
            args.json.write_text(json.dumps(report, indent=2) + "\n")
        bridge.close()
        if cuda is not None:
            cuda.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
