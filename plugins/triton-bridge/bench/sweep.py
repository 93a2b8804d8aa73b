"""Schedule sweep of the triton-bridge distance kernels (bench.py --sweep).

For each dimension, the exact kernel (kernels/distances.py) and, from 64
coordinates, the matrix-product kernel (kernels/distances_dot.py) are
launched through Triton's JIT on the plugin's padded layout (as bench.py's
`jit` column) under a grid of schedules (GRIDS below):

  exact  MT 4, 8; TW 16, 32 (tiles of MT*TW, tiles.tile_lanes); UNROLL
         1, 2 (the coordinate loop); PTX_STORE 1, 0 (tiles.store_tile);
         num_warps 4, 8; num_stages 1, 2; maxnreg none, 128
  dot    BLOCK 64, 128; BLOCK_K 16, 32, 64; num_warps 4, 8;
         num_stages 2, 3, 4

`--grid` (parse_grid) narrows or changes the values of a kernel's parameters
for one run, e.g. "exact:MT=4;UNROLL=1,2;maxnreg=none,128".

A config that fails to compile or to launch (out of shared memory or
registers, a tl.dot shape the target refuses) is recorded with its error and
skipped. Each config's output is checked on a sample of pairs before it is
timed:

  exact  bitwise equal to the default schedule's output. Each entry is the
         same sequence of operations whatever the tiling: coordinates
         accumulated one at a time, k = 0 .. dim-1, in one scalar per entry
         (tiles.distance_tile), no contraction, sqrt_rn; the tile, warps and
         stages only change which thread does it and when.
  dot    within the conformance bound |d - d_ref| <= 4 (dim + 2) eps d_ref
         (eps = 2^-23, d_ref in float64; tests/test_ops.c), since BLOCK_K
         and the MMA layout change the summation order of the inner
         products; the largest difference from the default schedule, in
         float32 ulps, is recorded too.

Timing: CUDA events, one warm-up launch (the checked one), then the median of
`reps` launches; a config whose first timed launch is over PRUNE x the best
of its (kernel, dim) so far gets no more launches. Under an overall budget:
the (kernel, dim) groups are run in turn, each allowed an equal share of
what is left when it starts (time a group does not use passes to the next);
within a group the default schedule comes first (the reference for checks
and speed-ups), then the others by how many parameters they change from it,
so a cut-short group has still tried the nearest neighbours.

The functions above `run_sweep` need neither torch nor a GPU
(tests/test_sweep.py runs them on made-up timings).
"""

import itertools
import math
import statistics
import time

# Per kernel, each parameter's values, in the order of config keys. A
# parameter is a constexpr of the kernel unless it is one of LAUNCH_OPTIONS.
GRIDS = {
    "exact": {"MT": (4, 8), "TW": (16, 32), "UNROLL": (1, 2), "PTX_STORE": (1, 0),
              "num_warps": (4, 8), "num_stages": (1, 2), "maxnreg": (None, 128)},
    "dot": {"BLOCK": (64, 128), "BLOCK_K": (16, 32, 64), "num_warps": (4, 8),
            "num_stages": (2, 3, 4)},
}
LAUNCH_OPTIONS = ("num_warps", "num_stages", "maxnreg")
KEY_LETTERS = {"MT": "M", "TW": "T", "UNROLL": "u", "PTX_STORE": "p", "BLOCK": "B",
               "BLOCK_K": "K", "num_warps": "w", "num_stages": "s", "maxnreg": "r"}
DOT_MIN_DIM = 64  # the host sends f32 points of >= 64 coordinates to the dot kernel
PRUNE = 1.5
TOP = 5


def config_key(cfg):
    """A short, stable label: M8 T16 u1 p1 w8 s1 r128, B64 K32 w8 s2 (r: maxnreg,
    left out when there is none)."""
    return " ".join(f"{KEY_LETTERS.get(k, k)}{v}" for k, v in cfg.items() if v is not None)


def block_of(cfg):
    """Rows (and columns) of one tile."""
    return cfg["BLOCK"] if "BLOCK" in cfg else cfg["MT"] * cfg["TW"]


def split_config(cfg):
    """(constexprs, launch options) of a config, as the JIT takes them."""
    consts = {k: v for k, v in cfg.items() if k not in LAUNCH_OPTIONS}
    options = {k: v for k, v in cfg.items() if k in LAUNCH_OPTIONS and v is not None}
    return consts, options


def default_config(spec, kernel):
    """The schedule a kernels.json entry of kernel ("exact" or "dot") was
    compiled with: its constexprs, then the launch options of the kernel's
    grid (None where the entry has none), in the order of config keys."""
    cfg = dict(spec["constexprs"])
    for k in GRIDS[kernel]:
        if k in LAUNCH_OPTIONS:
            cfg[k] = spec.get(k)
    return cfg


def parse_grid(text, grids=GRIDS):
    """GRIDS with the values text gives: "KERNEL:PARAM=V[,V...][;PARAM=...]",
    several kernels separated by spaces; "none" is None, other values are
    integers. A parameter text leaves out keeps its values. Raises ValueError
    on an unknown kernel or parameter or an empty value list."""
    out = {k: dict(v) for k, v in grids.items()}
    for part in text.split():
        kernel, sep, body = part.partition(":")
        if not sep or kernel not in out:
            raise ValueError(f"grid {part!r}: expected KERNEL:PARAM=V,... with KERNEL one of "
                             f"{', '.join(out)}")
        for item in body.split(";"):
            param, sep, values = item.partition("=")
            if not sep or param not in out[kernel]:
                raise ValueError(f"grid {part!r}: {param!r} is not a parameter of {kernel} "
                                 f"({', '.join(out[kernel])})")
            vals = tuple(None if v.lower() == "none" else int(v) for v in values.split(",") if v)
            if not vals:
                raise ValueError(f"grid {part!r}: no values for {param}")
            out[kernel][param] = vals
    return out


def kernel_specs(meta):
    """The f32 distance kernels' kernels.json entries, by kernel: "exact",
    those of both schedules of the exact kernel (every variant; spec_for picks
    by dim), and "dot", the matrix-product kernel's first."""
    return {"exact": [k for k in meta["kernels"]
                      if k["base"] in ("distances_f32", "distances_long_f32")],
            "dot": next(k for k in meta["kernels"] if k["base"] == "distances_dot_f32")}


def spec_for(specs, dim):
    """The kernels.json entry that serves points of `dim` coordinates: of
    `specs` (one entry, or a list of the schedules of one kernel), the one
    with the largest `min_dim` (0 where it has none) not above dim."""
    if isinstance(specs, dict):
        return specs
    fit = [s for s in specs if (s.get("min_dim") or 0) <= dim]
    return max(fit, key=lambda s: s.get("min_dim") or 0) if fit else None


def distance(cfg, default):
    """How many parameters cfg changes from default."""
    return sum(cfg[k] != default.get(k) for k in cfg)


def enumerate_configs(kernel, default, grids=GRIDS):
    """Every schedule of the grid for kernel ("exact" or "dot"), default first,
    then by distance from it (ties in grid order). The default is included
    even where it is not on the grid."""
    params = grids[kernel]
    grid = [dict(zip(params, values)) for values in itertools.product(*params.values())]
    if default not in grid:
        grid.append(dict(default))
    order = sorted(range(len(grid)), key=lambda i: (distance(grid[i], default), i))
    return [grid[i] for i in order]


def groups(dims, dot_min_dim=DOT_MIN_DIM):
    """The (kernel, dim) pairs to sweep, in order."""
    out = []
    for dim in dims:
        out.append(("exact", dim))
        if dim >= dot_min_dim:
            out.append(("dot", dim))
    return out


class Budget:
    """An overall deadline, shared out over groups: each group may use what is
    left divided by the groups not yet started (itself included)."""

    def __init__(self, seconds, n_groups, clock=time.monotonic):
        self.clock = clock
        self.deadline = clock() + seconds
        self.groups_left = n_groups
        self.group_deadline = self.deadline

    def start_group(self):
        now = self.clock()
        left = max(0.0, self.deadline - now)
        self.group_deadline = now + left / max(1, self.groups_left)
        self.groups_left -= 1

    def group_spent(self):
        return self.clock() >= self.group_deadline

    def spent(self):
        return self.clock() >= self.deadline


def rank(records, top=TOP):
    """The measured, verified configs of one group, fastest first (at most
    `top`), each with its speed-up over the default: list of dicts with key,
    ms, speedup, default (bool)."""
    base = next((r for r in records if r.get("default") and r.get("ms") is not None), None)
    ok = [r for r in records if r.get("ms") is not None and r.get("verified", False)
          and not math.isnan(r["ms"])]
    ok.sort(key=lambda r: (r["ms"], r["key"]))
    out = []
    for r in ok[:top]:
        out.append({"key": r["key"], "config": r["config"], "ms": r["ms"],
                    "speedup": base["ms"] / r["ms"] if base else None,
                    "default": bool(r.get("default")), "pruned": bool(r.get("pruned"))})
    return out


def summarize(group_results, top=TOP):
    """Per group: counts and the ranking, for printing and JSON."""
    out = []
    for g in group_results:
        recs = g["records"]
        base = next((r for r in recs if r.get("default")), None)
        out.append({
            "kernel": g["kernel"], "dim": g["dim"], "n": g["n"],
            "tried": len(recs), "of": g["of"],
            "failed": sum(1 for r in recs if "error" in r),
            "mismatched": sum(1 for r in recs if r.get("verified") is False),
            "default_ms": base.get("ms") if base else None,
            "stopped": g.get("stopped"),
            "top": rank(recs, top),
        })
    return out


def format_summary(summary):
    lines = []
    for s in summary:
        head = (f"{s['kernel']:>5} n={s['n']} dim={s['dim']}: {s['tried']}/{s['of']} configs "
                f"tried, {s['failed']} failed, {s['mismatched']} mismatched, default "
                + (f"{s['default_ms']:.3f} ms" if s["default_ms"] is not None else "-"))
        if s["stopped"]:
            head += f" (stopped: {s['stopped']})"
        lines.append(head)
        for k, t in enumerate(s["top"]):
            sp = f"{t['speedup']:.3f}x" if t["speedup"] is not None else "-"
            mark = " (default)" if t["default"] else ""
            mark += " (1 rep)" if t["pruned"] else ""
            lines.append(f"    {k + 1}. {t['key']:<24} {t['ms']:9.3f} ms  {sp:>8}{mark}")
    return "\n".join(lines)


def short_error(exc, limit=300):
    text = f"{type(exc).__name__}: {exc}".replace("\n", " ")
    return text if len(text) <= limit else text[:limit] + "..."


def sweep_group(kernel, dim, configs, measure, budget, prune=PRUNE, log=None, records=None):
    """Run the configs of one group through measure(cfg, is_default, prune_ms)
    -> dict (ms, verified, ..., or error), within the budget's share,
    appending to `records` (a new list by default) as it goes, so that an
    interrupted sweep keeps what it measured. Returns (records, stopped or
    None)."""
    records = [] if records is None else records
    best = math.inf
    for k, cfg in enumerate(configs):
        if k > 0 and budget.group_spent():
            return records, "time budget" if budget.spent() else "group's share of the budget"
        rec = {"key": config_key(cfg), "config": cfg, "default": k == 0}
        try:
            rec.update(measure(cfg, k == 0, best * prune))
        except Exception as exc:  # compile, resources, launch: record and go on
            rec["error"] = short_error(exc)
        if rec.get("ms") is not None and rec.get("verified") and not math.isnan(rec["ms"]):
            best = min(best, rec["ms"])
        records.append(rec)
        if log:
            if "error" in rec:
                log(f"  {kernel} dim={dim} {rec['key']}: {rec['error']}")
            else:
                log(f"  {kernel} dim={dim} {rec['key']}: {rec.get('ms', float('nan')):.3f} ms"
                    f"{'' if rec.get('verified') else ' MISMATCH'}"
                    f"{' (pruned)' if rec.get('pruned') else ''}")
        if k == 0 and "error" in rec:
            return records, "default schedule failed"
    return records, None


# ---- on the GPU ----

def flushed(text):
    print(text, flush=True)


def run_sweep(torch, exact_kernel, dot_kernel, specs, n, dims, reps, samples, seconds,
              log=flushed, results=None, grids=GRIDS):
    """The sweep proper. specs: {"exact": ..., "dot": ...}, the kernels.json
    entries of each kernel's schedules (one, or a list: spec_for). Appends to and returns
    `results`, one dict per (kernel, dim) group: kernel, dim, n, of (configs
    in the grid), records, stopped (None when every config ran). grids:
    GRIDS or parse_grid's answer."""
    todo = groups(dims)
    budget = Budget(seconds, len(todo))
    results = [] if results is None else results
    data = {}
    for kernel, dim in todo:
        budget.start_group()
        # The default: the schedule the plugin launches for this dim.
        configs = enumerate_configs(kernel, default_config(spec_for(specs[kernel], dim), kernel),
                                    grids)
        group = {"kernel": kernel, "dim": dim, "n": n, "of": len(configs), "records": [],
                 "stopped": "interrupted"}
        results.append(group)
        if budget.spent():
            group["stopped"] = "time budget"
            continue
        if data.get("dim") != dim:
            data.clear()
            torch.cuda.empty_cache()
            data.update(prepare(torch, n, dim, samples))
        ctx = {"base": None}

        def measure(cfg, is_default, prune_ms, kernel=kernel, dim=dim, ctx=ctx):
            return measure_config(torch, exact_kernel, dot_kernel, kernel, cfg, data, reps,
                                  is_default, prune_ms, ctx)
        t = time.monotonic()
        _, group["stopped"] = sweep_group(kernel, dim, configs, measure, budget, log=log,
                                          records=group["records"])
        group["seconds"] = round(time.monotonic() - t, 1)
        if log:
            log(format_summary(summarize([group])))
    data.clear()
    return results


def prepare(torch, n, dim, samples):
    """The plugin's layout for n random points of dim coordinates (as
    bench.py's jit column): transposed, padded with zero points to ld, a
    multiple of 16; the centred copy for the dot kernel; an output buffer of
    the condensed size for ld points; a sample of pairs and their float64
    distances."""
    gen = torch.Generator().manual_seed(n * 1000 + dim)
    x = (torch.rand((n, dim), generator=gen, dtype=torch.float32) * 2 - 1).cuda()
    ld = -(-n // 16) * 16
    xt = torch.nn.functional.pad(x.t(), (0, ld - n)).contiguous()
    xs = (xt - xt[:, :n].double().mean(dim=1).float()[:, None]).contiguous()
    xs[:, n:] = 0
    out = torch.empty(ld * (ld - 1) // 2, dtype=torch.float32, device="cuda")
    s = min(samples, n * (n - 1) // 2)
    g = torch.Generator(device="cuda").manual_seed(7)
    i = torch.randint(1, n, (s,), device="cuda", generator=g)
    j = (torch.rand(s, device="cuda", generator=g) * i).long().clamp_max(i - 1)
    xd = x.double()
    ref = ((xd[i] - xd[j]) ** 2).sum(1).sqrt()
    return {"dim": dim, "n": n, "ld": ld, "xt": xt, "xs": xs, "out": out,
            "idx": i * (i - 1) // 2 + j, "ref": ref}


def launch(exact_kernel, dot_kernel, kernel, cfg, d):
    tiles = -(-d["ld"] // block_of(cfg))
    grid = (tiles * (tiles + 1) // 2,)
    consts, options = split_config(cfg)
    if kernel == "dot":
        dot_kernel[grid](d["xt"], d["xs"], d["out"], d["ld"], d["dim"], 1, 0, 0,
                         **consts, **options, enable_fp_fusion=False)
    else:
        exact_kernel[grid](d["xt"], d["out"], d["ld"], d["dim"], 1, 0, 0,
                           **consts, **options, enable_fp_fusion=False)


def measure_config(torch, exact_kernel, dot_kernel, kernel, cfg, d, reps, is_default,
                   prune_ms, ctx):
    rec = {}
    out = d["out"]
    out.fill_(float("nan"))  # an entry the config leaves unwritten shows as NaN
    t = time.perf_counter()
    launch(exact_kernel, dot_kernel, kernel, cfg, d)  # compiles; the warm-up
    torch.cuda.synchronize()
    rec["first_call_s"] = round(time.perf_counter() - t, 3)
    got = out[d["idx"]].clone()
    if is_default:
        ctx["base"] = got
    base = ctx["base"]
    if kernel == "exact":
        rec["verified"] = bool(torch.equal(got, base))
    else:
        ref = d["ref"]
        bound = 4.0 * (d["dim"] + 2) * 2.0 ** -23
        err = ((got.double() - ref).abs() / (bound * ref)).nan_to_num(nan=math.inf)
        err = torch.where(ref == 0, torch.where(got == 0, 0.0, math.inf), err)
        rec["worst_over_bound"] = err.max().item()
        rec["verified"] = rec["worst_over_bound"] <= 1.0
        if base is not None:
            a = got.view(torch.int32).long()
            b = base.view(torch.int32).long()
            rec["max_ulp_vs_default"] = (a - b).abs().max().item()
    if not rec["verified"] and not is_default:
        return rec  # not worth timing
    times = []
    for k in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        launch(exact_kernel, dot_kernel, kernel, cfg, d)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
        if k == 0 and times[0] > prune_ms:
            rec["pruned"] = True
            break
    rec["ms"] = statistics.median(times)
    rec["reps"] = len(times)
    return rec
