#!/usr/bin/env python3
"""The schedule sweep's bookkeeping (bench/sweep.py), on made-up timings:
config enumeration and order, the budget's shares, pruning, error and
mismatch handling, ranking and the printed summary. No torch, no Triton, no
GPU. Exit status 0 when every check passed."""

import json
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import sweep  # noqa: E402

failures = 0


def check(ok, text):
    global failures
    print(("ok   " if ok else "FAIL ") + text)
    failures += not ok


EXACT_SPEC = {"constexprs": {"MT": 8, "TW": 16, "UNROLL": 1, "PTX_STORE": 1}, "num_warps": 8,
              "num_stages": 1, "maxnreg": 128}
DOT_SPEC = {"constexprs": {"BLOCK": 64, "BLOCK_K": 32}, "num_warps": 8, "num_stages": 2,
            "maxnreg": None}
EXACT_GRID = 2 * 2 * 2 * 2 * 2 * 2 * 2
DOT_GRID = 2 * 3 * 2 * 3


class FakeClock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def test_enumeration():
    d = sweep.default_config(EXACT_SPEC, "exact")
    check(d == {"MT": 8, "TW": 16, "UNROLL": 1, "PTX_STORE": 1, "num_warps": 8, "num_stages": 1,
                "maxnreg": 128}, "default of the exact kernel")
    check(list(d) == list(sweep.GRIDS["exact"]), "exact default: the grid's parameters, in order")
    dd = sweep.default_config(DOT_SPEC, "dot")
    check(dd["BLOCK_K"] == 32 and dd["num_warps"] == 8 and "maxnreg" not in dd,
          "default of the dot kernel")
    check(sweep.default_config({"constexprs": {"MT": 4, "TW": 16, "UNROLL": 1, "PTX_STORE": 1},
                                "num_warps": 4, "num_stages": 1}, "exact")["maxnreg"] is None,
          "no maxnreg in kernels.json: None")
    ex = sweep.enumerate_configs("exact", d)
    check(len(ex) == EXACT_GRID, f"exact grid has {EXACT_GRID} configs ({len(ex)})")
    check(ex[0] == d, "exact: the default comes first")
    check(len({sweep.config_key(c) for c in ex}) == len(ex), "exact: keys are distinct")
    check(all("BLOCK_K" not in c for c in ex), "exact: no BLOCK_K")
    dist = [sweep.distance(c, d) for c in ex]
    check(dist == sorted(dist), "exact: ordered by distance from the default")
    check(dist[1] == 1 and dist[-1] == 7, "exact: neighbours first, farthest last")
    dot = sweep.enumerate_configs("dot", dd)
    check(len(dot) == DOT_GRID, f"dot grid has {DOT_GRID} configs ({len(dot)})")
    check(dot[0] == dd and all("BLOCK_K" in c for c in dot), "dot: default first, BLOCK_K set")
    odd = {"MT": 2, "TW": 8, "UNROLL": 1, "PTX_STORE": 0, "num_warps": 4, "num_stages": 2,
           "maxnreg": None}
    got = sweep.enumerate_configs("exact", odd)
    check(got[0] == odd and len(got) == EXACT_GRID + 1, "a default off the grid is added, first")
    check(sweep.config_key(dd) == "B64 K32 w8 s2", "config key")
    check(sweep.config_key(d) == "M8 T16 u1 p1 w8 s1 r128"
          and sweep.config_key(odd) == "M2 T8 u1 p0 w4 s2", "config key: maxnreg when set")
    check(sweep.block_of(d) == 128 and sweep.block_of(dd) == 64, "tile size")
    consts, options = sweep.split_config(odd)
    check(consts == {"MT": 2, "TW": 8, "UNROLL": 1, "PTX_STORE": 0}
          and options == {"num_warps": 4, "num_stages": 2},
          "split: constexprs, and the launch options that are set")
    check(sweep.groups([3, 16, 64, 256]) ==
          [("exact", 3), ("exact", 16), ("exact", 64), ("dot", 64), ("exact", 256),
           ("dot", 256)], "groups: dot from 64 coordinates")


def test_spec_for():
    short = dict(EXACT_SPEC, name="short")
    long_ = dict(EXACT_SPEC, name="long", min_dim=10)
    check(sweep.spec_for([long_, short], 3)["name"] == "short", "spec_for: below min_dim")
    check(sweep.spec_for([short, long_], 10)["name"] == "long", "spec_for: from min_dim")
    check(sweep.spec_for([short, long_], 63)["name"] == "long", "spec_for: above")
    check(sweep.spec_for(short, 100) is short, "spec_for: a single entry serves every dim")
    check(sweep.spec_for([long_], 3) is None, "spec_for: none below every min_dim")
    # kernels.json writes "min_dim": null where a schedule has none, and
    # lists every variant of both schedules, the short ones first.
    meta = json.loads((Path(__file__).resolve().parent.parent / "generated" /
                       "kernels.json").read_text())
    exact = sweep.kernel_specs(meta)["exact"]
    check([sweep.spec_for(exact, d)["base"] for d in (1, 9, 10, 63)] ==
          ["distances_f32", "distances_f32", "distances_long_f32", "distances_long_f32"],
          "spec_for: kernels.json's exact schedules split at the long one's min_dim")


def test_parse_grid():
    g = sweep.parse_grid("exact:MT=4;UNROLL=1,2;maxnreg=none,128 dot:BLOCK=64")
    check(g["exact"]["MT"] == (4,) and g["exact"]["UNROLL"] == (1, 2)
          and g["exact"]["maxnreg"] == (None, 128), "grid: values replaced")
    check(g["exact"]["TW"] == sweep.GRIDS["exact"]["TW"] and g["dot"]["BLOCK"] == (64,),
          "grid: the rest kept, both kernels")
    check(sweep.GRIDS["exact"]["MT"] == (4, 8), "grid: GRIDS itself unchanged")
    check(sweep.parse_grid("") == sweep.GRIDS, "grid: empty text, GRIDS")
    d = sweep.default_config(EXACT_SPEC, "exact")
    ex = sweep.enumerate_configs("exact", d, g)
    check(len(ex) == 1 + 2 ** 6 and ex[0] == d, "grid: the default first, then the narrowed grid")
    for bad in ("exact", "exact:BLOCK=64", "edges:MT=4", "exact:MT=", "exact:MT=four"):
        try:
            sweep.parse_grid(bad)
            check(False, f"grid: {bad!r} refused")
        except ValueError:
            check(True, f"grid: {bad!r} refused")


def fake_measure(timings, clock, cost=1.0, errors=(), mismatches=()):
    """measure() over a table key -> ms; each call advances the clock."""
    calls = []

    def measure(cfg, is_default, prune_ms):
        clock.t += cost
        key = sweep.config_key(cfg)
        calls.append((key, prune_ms))
        if key in errors:
            raise RuntimeError("out of resource: shared memory, Required: 262144\nHardware limit")
        ms = timings[key]
        rec = {"verified": key not in mismatches}
        if not rec["verified"]:
            return rec
        if ms > prune_ms:
            rec["pruned"] = True
        rec["ms"] = ms
        return rec
    return measure, calls


def test_group_and_ranking():
    d = sweep.default_config(EXACT_SPEC, "exact")
    configs = sweep.enumerate_configs("exact", d)
    keys = [sweep.config_key(c) for c in configs]
    # Default 10 ms; a few faster ones, one failing, one wrong.
    timings = {k: 10.0 + i * 0.01 for i, k in enumerate(keys)}
    timings[keys[0]] = 10.0
    timings["M4 T32 u1 p1 w8 s1 r128"] = 6.0
    timings["M8 T16 u1 p1 w4 s1 r128"] = 8.0
    timings["M8 T16 u1 p1 w8 s2 r128"] = 5.0   # fastest, but wrong
    timings["M8 T16 u1 p1 w8 s1"] = 30.0  # pruned
    clock = FakeClock()
    budget = sweep.Budget(1000, 1, clock=clock)
    budget.start_group()
    measure, calls = fake_measure(timings, clock, errors={"M8 T32 u1 p1 w8 s1 r128"},
                                  mismatches={"M8 T16 u1 p1 w8 s2 r128"})
    records, stopped = sweep.sweep_group("exact", 3, configs, measure, budget)
    check(stopped is None and len(records) == EXACT_GRID, "group: every config ran")
    check(math.isinf(calls[0][1]), "group: the default is never pruned")
    check(any(abs(p - 15.0) < 1e-9 for _, p in calls), "group: prune at 1.5 x the best so far")
    err = [r for r in records if "error" in r]
    check(len(err) == 1 and "\n" not in err[0]["error"] and err[0]["error"].startswith(
        "RuntimeError: out of resource"), "group: a failing config is recorded, one line")
    bad = [r for r in records if r.get("verified") is False]
    check(len(bad) == 1 and bad[0]["key"] == "M8 T16 u1 p1 w8 s2 r128",
          "group: a mismatch is recorded")
    top = sweep.rank(records)
    check([t["key"] for t in top][:2] == ["M4 T32 u1 p1 w8 s1 r128", "M8 T16 u1 p1 w4 s1 r128"],
          f"rank: fastest verified first ({[t['key'] for t in top]})")
    check(len(top) == 5, "rank: top 5")
    check(abs(top[0]["speedup"] - 10.0 / 6.0) < 1e-12, "rank: speed-up over the default")
    check(all(t["key"] != "M8 T16 u1 p1 w8 s2 r128" for t in top),
          "rank: mismatched configs are left out")
    summary = sweep.summarize([{"kernel": "exact", "dim": 3, "n": 65536, "of": EXACT_GRID,
                                "records": records, "stopped": None}])
    s = summary[0]
    check(s["failed"] == 1 and s["mismatched"] == 1 and s["tried"] == EXACT_GRID
          and s["default_ms"] == 10.0, "summary: counts and default")
    text = sweep.format_summary(summary)
    check("1. M4 T32 u1 p1 w8 s1 r128" in text and "1.667x" in text, "summary text:\n" + text)


def test_budget():
    clock = FakeClock()
    b = sweep.Budget(100, 4, clock=clock)
    b.start_group()
    check(abs(b.group_deadline - 25) < 1e-9, "budget: first group gets a quarter")
    clock.t = 10  # used 10 of its 25
    b.start_group()
    check(abs(b.group_deadline - (10 + 90 / 3)) < 1e-9, "budget: unused time passes on")
    # A group that runs out of its share stops after the config under way.
    d = sweep.default_config(DOT_SPEC, "dot")
    configs = sweep.enumerate_configs("dot", d)
    timings = {sweep.config_key(c): 1.0 for c in configs}
    clock2 = FakeClock()
    b2 = sweep.Budget(20, 2, clock=clock2)
    b2.start_group()
    measure, calls = fake_measure(timings, clock2, cost=3.0)
    records, stopped = sweep.sweep_group("dot", 64, configs, measure, b2)
    check(len(records) == 4 and stopped == "group's share of the budget",
          f"budget: group share stops the group ({len(records)}, {stopped})")
    b2.start_group()
    check(abs(b2.group_deadline - 20) < 1e-9, "budget: the last group gets the rest")
    clock2.t = 25
    records, stopped = sweep.sweep_group("dot", 128, configs, measure, b2)
    check(len(records) == 1 and stopped == "time budget",
          "budget: the default still runs, then the overall budget stops it")
    # The default failing ends the group: nothing to compare with.
    b3 = sweep.Budget(100, 1, clock=FakeClock())
    b3.start_group()
    measure, _ = fake_measure(timings, FakeClock(), errors={sweep.config_key(d)})
    records, stopped = sweep.sweep_group("dot", 64, configs, measure, b3)
    check(len(records) == 1 and stopped == "default schedule failed", "default failure stops")
    check(sweep.rank(records) == [], "rank: nothing measured, nothing ranked")


def test_run_sweep_wiring():
    """run_sweep with the GPU parts replaced: groups, order, the result list
    filled in place."""
    seen = []

    class FakeCuda:
        @staticmethod
        def empty_cache():
            pass

    class FakeTorch:
        cuda = FakeCuda

    def fake_prepare(torch, n, dim, samples):
        seen.append(("prepare", dim))
        return {"dim": dim}

    def fake_measure_config(torch, ek, dk, kernel, cfg, d, reps, is_default, prune_ms, ctx):
        seen.append((kernel, d["dim"], sweep.config_key(cfg)))
        return {"ms": 1.0 + 0.001 * len(seen), "verified": True}

    saved = sweep.prepare, sweep.measure_config
    sweep.prepare, sweep.measure_config = fake_prepare, fake_measure_config
    try:
        out = []
        lines = []
        sweep.run_sweep(FakeTorch, None, None, {"exact": EXACT_SPEC, "dot": DOT_SPEC}, 1024,
                        [3, 64], 3, 100, 1e6, log=lines.append, results=out)
    finally:
        sweep.prepare, sweep.measure_config = saved
    check([(g["kernel"], g["dim"], len(g["records"]), g["stopped"]) for g in out] ==
          [("exact", 3, EXACT_GRID, None), ("exact", 64, EXACT_GRID, None),
           ("dot", 64, DOT_GRID, None)],
          "run_sweep: three groups, all configs")
    check([s for s in seen if s[0] == "prepare"] == [("prepare", 3), ("prepare", 64)],
          "run_sweep: data prepared once per dim")
    check(any("exact n=1024 dim=3" in ln for ln in lines), "run_sweep: a summary per group")


test_enumeration()
test_spec_for()
test_parse_grid()
test_group_and_ranking()
test_budget()
test_run_sweep_wiring()
print(f"{'all passed' if not failures else f'{failures} failed'}")
sys.exit(1 if failures else 0)
