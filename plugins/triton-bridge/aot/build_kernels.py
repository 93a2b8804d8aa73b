#!/usr/bin/env python3
"""Ahead-of-time build of the topoml triton-bridge kernels.

Compiles every kernel specialization listed in SPECS (kernels/*.py) for one
CUDA target with Triton, without a GPU, and writes into generated/:

  tb_kernels.h           the kernel table type, one launch stub per kernel,
                         the constexpr block sizes as macros
  tb_kernels.c           the kernel table, the launch stubs, the schedule
                         strings that capability records show
  tb_cubin_<name>.c      one cubin each, as a byte array
  kernels.json           metadata: name, signature, block sizes, warps,
                         stages, target, shared memory, cubin hash, and the
                         SHA-256 of every input file (tests/check_generated.cmake
                         compares those with the files in the tree)

The output depends only on the inputs and the Triton version: no paths, no
times, line info off (it would embed file paths in the cubins). Running the
script again gives byte-identical files; `--check` compiles into a scratch
folder and fails when the committed files differ.

Usage:  python3 aot/build_kernels.py [--out DIR] [--check]
Needs:  triton (3.6 is what generated/ was built with); no GPU, no torch.

Variants. Triton's JIT compiles a kernel anew for every combination of
argument properties it sees: a pointer or an integer divisible by 16 gets
`tt.divisibility = 16`, which lets the compiler prove that loads are aligned
and contiguous in runs of 16 (vector loads, one predicate per run), and an
integer below 2**31 is passed as a 32-bit one. An ahead-of-time build has to
make those promises itself, so each point-cloud kernel is compiled more than
once, most specialised first: variants that assume what the JIT sees on the
plugin's padded layout (the dot kernel: pointers and n multiples of 16, n
and dim 32-bit, `d16n32`), one for each assumption alone (`d16`, `n32`),
and a generic one that assumes nothing; the f32 exact kernel also has `r1`,
euclidean compiled in. (Before `d16n32` existed, the cubin launched for the
padded layout was up to 7% slower than the JIT's kernel on an H200.) The
exact kernels load one coordinate per lane and store one entry per lane
(tiles.store_tile), so alignment changes nothing in their code: their `d16`
variants compiled byte for byte like the others and are not listed. For each
kernel the generated `tb_launch_<kernel>` stub checks the actual arguments
(device addresses as numbers, integers by value) and launches the first
variant whose assumptions hold, so a launch is never made under a false
promise. A variant whose cubin comes out byte for byte like a less
specialised one is dropped.

Not here: loading (src/device.c does that).
"""

import argparse
import hashlib
import importlib
import json
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent  # plugins/triton-bridge
KERNELS = ROOT / "kernels"
GENERATED = ROOT / "generated"

TARGET_ARCH = 90  # sm_90: the H200/H100 family; the plugin refuses other devices
WARP_SIZE = 32

# Options every kernel is compiled with. No floating-point contraction: the
# distance kernels then perform exactly the operations of the scalar
# reference (plugins/scalar/metric.h) with the same rounding.
COMPILE_OPTIONS = {"enable_fp_fusion": False}

# One entry per kernel. `signature` lists the run-time arguments in order
# (Triton's type names); `constexprs` are compiled in; `variants` maps a
# suffix to what that variant assumes, most specialised first: `divisible`,
# the arguments it assumes are multiples of 16 (the JIT's "D"
# specialization), and `int32`, 64-bit integer arguments it takes as 32-bit
# ones (as the JIT does for every integer below 2**31), which it may do only
# when their product is below 2**31 (for the distance kernels n*dim: the
# kernel then forms k*n in 32 bits). The last variant assumes nothing and
# always fits. Every variant becomes one cubin. `schedule` is the prefix of
# the kernel's words in the op's schedule string (default: its dtype);
# `min_dim`, where given, is the smallest dimension the host sends to the
# kernel (a macro in tb_kernels.h and a word of the schedule); `maxnreg`,
# where given, caps the registers per thread (ptxas .maxnreg): the f32
# distance kernel's long schedule ran 5-7% faster with the cap than without
# it on an H200 (bench.py --sweep; 125 registers, no spill).
# The exact kernels (distances.py, edges.py) take the tile as MT x TW
# (tiles.tile_lanes; BLOCK = MT * TW, a macro in tb_kernels.h too).
#
# The exact f32 distance kernel; its two schedules below add name, constexprs
# and launch options.
EXACT_F32 = {
    "op": "distances", "dtype": "f32", "module": "distances", "kernel": "pairwise_distances",
    "signature": [("xt", "*fp32"), ("out", "*fp32"), ("n", "i64"), ("dim", "i64"),
                  ("root", "i32"), ("tile0", "i64"), ("out0", "i64")],
    "variants": {"n32r1": {"int32": ["n", "dim"], "one": ["root"]},
                 "n32": {"int32": ["n", "dim"]}, "": {}},
}
KERNELS_SPEC = [
    dict(EXACT_F32, name="distances_f32", num_warps=8, num_stages=1,
         constexprs={"MT": 4, "TW": 16, "UNROLL": 1, "PTX_STORE": 1}),
    # The same kernel for longer points: the loop unrolled twice, half the
    # warps, registers capped (bench.py --sweep on an H200, n = 65536: 7.60 ms
    # against 8.16 at dim 16, 16.4 against 18.9 at dim 48; 4.48 against 3.85
    # at dim 3, hence two schedules).
    dict(EXACT_F32, name="distances_long_f32", schedule="f32.long", min_dim=10, num_warps=4,
         num_stages=1, maxnreg=128, constexprs={"MT": 4, "TW": 16, "UNROLL": 2, "PTX_STORE": 1}),
    {
        "name": "distances_dot_f32", "op": "distances", "dtype": "f32", "schedule": "f32.dot",
        "module": "distances_dot", "kernel": "pairwise_distances_dot",
        "signature": [("xt", "*fp32"), ("xs", "*fp32"), ("out", "*fp32"), ("n", "i64"),
                      ("dim", "i64"), ("root", "i32"), ("tile0", "i64"), ("out0", "i64")],
        "constexprs": {"BLOCK": 64, "BLOCK_K": 32}, "num_warps": 4, "num_stages": 2,
        "min_dim": 64,
        "variants": {"d16n32": {"divisible": ["xt", "xs", "out", "n"], "int32": ["n", "dim"]},
                     "d16": {"divisible": ["xt", "xs", "out", "n"]},
                     "n32": {"int32": ["n", "dim"]}, "": {}},
    },
    {
        "name": "distances_f64", "op": "distances", "dtype": "f64",
        "module": "distances", "kernel": "pairwise_distances",
        "signature": [("xt", "*fp64"), ("out", "*fp64"), ("n", "i64"), ("dim", "i64"),
                      ("root", "i32"), ("tile0", "i64"), ("out0", "i64")],
        "constexprs": {"MT": 4, "TW": 16, "UNROLL": 1, "PTX_STORE": 1}, "num_warps": 8,
        "num_stages": 1, "variants": {"n32": {"int32": ["n", "dim"]}, "": {}},
    },
    {
        "name": "edges_f32", "op": "edges", "dtype": "f32",
        "module": "edges", "kernel": "threshold_edges",
        "signature": [("xt", "*fp32"), ("n", "i64"), ("dim", "i64"), ("root", "i32"),
                      ("thr", "fp32"), ("tile0", "i64"), ("ei", "*u32"), ("ej", "*u32"),
                      ("ed", "*fp32"), ("counter", "*i64"), ("capacity", "i64")],
        "constexprs": {"MT": 4, "TW": 16, "UNROLL": 1}, "num_warps": 4, "num_stages": 1,
        "variants": {"d16": {"divisible": ["xt", "n", "ei", "ej", "ed", "counter"]}, "": {}},
    },
    {
        "name": "edges_f64", "op": "edges", "dtype": "f64",
        "module": "edges", "kernel": "threshold_edges",
        "signature": [("xt", "*fp64"), ("n", "i64"), ("dim", "i64"), ("root", "i32"),
                      ("thr", "fp64"), ("tile0", "i64"), ("ei", "*u32"), ("ej", "*u32"),
                      ("ed", "*fp64"), ("counter", "*i64"), ("capacity", "i64")],
        "constexprs": {"MT": 4, "TW": 16, "UNROLL": 1}, "num_warps": 8, "num_stages": 1,
        "variants": {"d16": {"divisible": ["xt", "n", "ei", "ej", "ed", "counter"]}, "": {}},
    },
    {
        "name": "image_f64", "op": "image", "dtype": "f64",
        "module": "image", "kernel": "persistence_image",
        "signature": [("pairs", "*fp64"), ("offsets", "*u64"), ("out", "*fp64"),
                      ("diag0", "i64"), ("tile0", "i32"), ("width", "i32"), ("height", "i32"),
                      ("birth_min", "fp64"), ("db", "fp64"), ("pers_min", "fp64"),
                      ("dp", "fp64"), ("s", "fp64"), ("weight_mode", "i32"),
                      ("weight_max", "fp64"), ("weight_power", "fp64"),
                      ("infinite_mode", "i32"), ("clip_death", "fp64")],
        "constexprs": {"BLOCK_R": 16, "BLOCK_C": 16, "BLOCK_P": 8},
        "num_warps": 4, "num_stages": 1,
        "variants": {"": {}},
    },
]


def expand_variants(kernels):
    """One spec per compiled variant: name "<kernel>" or "<kernel>_<suffix>",
    `base` the kernel's name, `divisible` the arguments assumed % 16 == 0,
    `int32` the 64-bit integer arguments passed as 32-bit ones, `one` the
    32-bit ones compiled in as the constant 1 (and not passed), `signature`
    with those arguments' types narrowed."""
    specs = []
    for k in kernels:
        arg_names = [n for n, _ in k["signature"]]
        types = dict(k["signature"])
        suffixes = list(k["variants"])
        if k["variants"][suffixes[-1]]:
            raise SystemExit(f"{k['name']}: the last variant must assume nothing")
        narrowed = {a for v in k["variants"].values() for a in v.get("int32", [])}
        for suffix, assumes in k["variants"].items():
            if set(assumes) - {"divisible", "int32", "one"}:
                raise SystemExit(f"{k['name']}_{suffix}: unknown assumption {sorted(assumes)}")
            divisible, int32 = assumes.get("divisible", []), assumes.get("int32", [])
            one = assumes.get("one", [])
            for a in one:
                if types[a] != "i32":
                    raise SystemExit(f"{k['name']}_{suffix}: {a} ({types[a]}) cannot be "
                                     "compiled in as 1 (32-bit integers only)")
            for a in divisible:
                if not (types[a].startswith("*") or types[a] in ("i64", "u64")):
                    raise SystemExit(f"{k['name']}: {a} ({types[a]}) cannot carry a divisibility "
                                     "assumption (pointers and 64-bit integers only)")
            # The stub narrows one set of arguments per kernel (see emit).
            if int32 and (set(int32) != narrowed or any(types[a] != "i64" for a in int32)):
                raise SystemExit(f"{k['name']}_{suffix}: every 32-bit variant of a kernel must "
                                 "narrow the same i64 arguments")
            spec = {key: v for key, v in k.items() if key != "variants"}
            spec["base"] = k["name"]
            spec["name"] = f"{k['name']}_{suffix}" if suffix else k["name"]
            spec["divisible"] = list(divisible)
            spec["divisible_mask"] = sum(1 << arg_names.index(a) for a in divisible)
            spec["int32"] = list(int32)
            spec["int32_mask"] = sum(1 << arg_names.index(a) for a in int32)
            spec["one"] = list(one)
            spec["one_mask"] = sum(1 << arg_names.index(a) for a in one)
            spec["wide_signature"] = k["signature"]
            spec["signature"] = [(a, "i32" if a in int32 else t) for a, t in k["signature"]]
            specs.append(spec)
    return specs


SPECS = expand_variants(KERNELS_SPEC)

C_TYPES = {
    "i32": "int32_t", "i64": "int64_t", "u32": "uint32_t", "u64": "uint64_t",
    "fp32": "float", "fp64": "double",
}

HEADER_NOTE = ("/* Generated by plugins/triton-bridge/aot/build_kernels.py from the Triton\n"
               " * kernels in kernels/; do not edit. Regenerate with:\n"
               " * python3 aot/build_kernels.py */\n"
               "/* clang-format off */\n")


def c_type(triton_type):
    return "tb_cudeviceptr" if triton_type.startswith("*") else C_TYPES[triton_type]


def sha256_file(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def input_files():
    """The files whose content determines the generated ones."""
    files = sorted(KERNELS.glob("*.py")) + [Path(__file__).resolve()]
    return {str(p.relative_to(ROOT)): sha256_file(p) for p in files}


def compile_spec(spec):
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    module = importlib.import_module(spec["module"])
    fn = getattr(module, spec["kernel"])
    signature = {name: ("constexpr" if name in spec["one"] else ty)
                 for name, ty in spec["signature"]}
    for name in spec["constexprs"]:
        signature[name] = "constexpr"
    if list(signature) != list(fn.arg_names):
        raise SystemExit(f"{spec['name']}: signature {list(signature)} does not match "
                         f"{spec['kernel']}{tuple(fn.arg_names)}")
    # The attributes Triton's JIT gives an argument it finds divisible by 16.
    names = [n for n, _ in spec["signature"]]
    attrs = {(names.index(a),): [["tt.divisibility", 16]] for a in spec["divisible"]}
    constexprs = dict(spec["constexprs"], **{name: 1 for name in spec["one"]})
    src = ASTSource(fn=fn, signature=signature, constexprs=constexprs, attrs=attrs)
    target = GPUTarget("cuda", TARGET_ARCH, WARP_SIZE)
    backend = triton.compiler.make_backend(target)
    options = backend.parse_options(dict(COMPILE_OPTIONS, num_warps=spec["num_warps"],
                                         num_stages=spec["num_stages"],
                                         maxnreg=spec.get("maxnreg")))
    compiled = triton.compile(src, target=target, options=options.__dict__)
    md = compiled.metadata
    if getattr(md, "global_scratch_size", 0) or getattr(md, "profile_scratch_size", 0):
        raise SystemExit(f"{spec['name']}: needs global/profile scratch memory, which the "
                         "launch stubs do not provide")
    if md.num_ctas != 1:
        raise SystemExit(f"{spec['name']}: num_ctas {md.num_ctas} != 1")
    return compiled.asm["cubin"], md


def schedule_text(spec, variants):
    """"key=value" words for one kernel, each key prefixed by its dtype;
    `variants` is [(spec, md)] of its compiled variants."""
    fields = [("kernel", spec["kernel"])]
    if "min_dim" in spec:
        fields += [("min_dim", spec["min_dim"])]
    fields += [(k.lower(), v) for k, v in spec["constexprs"].items()]
    if "MT" in spec["constexprs"]:
        fields += [("block", spec["constexprs"]["MT"] * spec["constexprs"]["TW"])]
    fields += [("warps", spec["num_warps"]), ("stages", spec["num_stages"])]
    if spec.get("maxnreg"):
        fields += [("maxnreg", spec["maxnreg"])]
    fields += [("shared", max(md.shared for _, md in variants)),
               ("variants", ",".join(variant_label(v) for v, _ in variants))]
    prefix = spec.get("schedule", spec["dtype"])
    return " ".join(f"{prefix}.{k}={v}" for k, v in fields)


def variant_label(spec):
    return spec["name"][len(spec["base"]) + 1:] if spec["name"] != spec["base"] else "any"


def drop_identical_variants(compiled):
    """[(spec, (cubin, md))] less every variant whose cubin is byte for byte
    that of a less specialised variant of the same kernel (an assumption the
    compiler found no use for): it would only cost a launch-time check, and
    the fake driver (tests/fake_cuda) tells kernels apart by their bytes."""
    kept = []
    for i, (spec, (cubin, md)) in enumerate(compiled):
        later = [c for s, (c, _) in compiled[i + 1:] if s["base"] == spec["base"]]
        if cubin not in later:
            kept.append((spec, (cubin, md)))
    return kept


def emit(out_dir, compiled):
    """Write the generated files for [(spec, (cubin, md))]."""
    import triton

    target_name = f"sm_{TARGET_ARCH}"
    files = {}
    meta = {
        "generator": "plugins/triton-bridge/aot/build_kernels.py",
        "triton": triton.__version__,
        "target": {"backend": "cuda", "arch": TARGET_ARCH, "name": target_name,
                   "warp_size": WARP_SIZE},
        "options": COMPILE_OPTIONS,
        "inputs": input_files(),
        "kernels": [],
    }
    specs = [spec for spec, _ in compiled]
    families = {}  # base name -> [(spec, md)], in SPECS order (most specialised first)
    for spec, (cubin, md) in compiled:
        families.setdefault(spec["base"], []).append((spec, md))

    # Per-op schedule strings, "key=value ..." as capability records show them.
    ops = {}
    for base, variants in families.items():
        ops.setdefault(variants[0][0]["op"], []).append(schedule_text(variants[0][0], variants))

    h = [HEADER_NOTE,
         "#ifndef TB_KERNELS_H\n#define TB_KERNELS_H\n\n",
         "#include <stddef.h>\n#include <stdint.h>\n\n#include \"cuda_driver.h\"\n\n",
         f"/* Every cubin is built for this compute capability and no other. */\n",
         f"#define TB_TARGET_CC {TARGET_ARCH}\n",
         f"#define TB_TARGET_NAME \"{target_name}\"\n",
         f"#define TB_TRITON_VERSION \"{triton.__version__}\"\n\n",
         "typedef struct tb_kernel_spec {\n"
         "    const char *name;     /* variant, e.g. \"distances_dot_f32_d16\" */\n"
         "    const char *base;     /* the kernel it is a variant of, e.g. \"distances_f32\" */\n"
         "    const char *function; /* the kernel's entry point in the cubin */\n"
         "    const unsigned char *cubin;\n"
         "    size_t cubin_size;\n"
         "    unsigned num_warps, num_stages;\n"
         "    unsigned threads; /* per block: num_warps * warp size */\n"
         "    unsigned shared;  /* dynamic shared memory per block, bytes */\n"
         "    /* Bit k set: the variant was compiled assuming argument k (a device\n"
         "     * address or a 64-bit integer) is a multiple of 16. */\n"
         "    uint32_t divisible;\n"
         "    /* Bit k set: argument k (a 64-bit integer in the launch stub) is passed\n"
         "     * as a 32-bit one; the product of these arguments is below 2^31. */\n"
         "    uint32_t int32;\n"
         "    /* Bit k set: argument k (a 32-bit integer) is compiled in as 1 and\n"
         "     * left out of the arguments the variant is launched with. */\n"
         "    uint32_t one;\n"
         "} tb_kernel_spec;\n\n",
         "enum {\n"]
    for spec in specs:
        h.append(f"    TB_KERNEL_{spec['name'].upper()},\n")
    h.append("    TB_KERNEL_COUNT\n};\n\n")
    h.append("extern const tb_kernel_spec tb_kernels[TB_KERNEL_COUNT];\n\n")
    h.append("/* Whether the launch arguments `args` (as for cuLaunchKernel) meet the\n"
             " * assumptions tb_kernels[kernel] was compiled under: the divisibility of\n"
             " * the arguments in `divisible`, and for those in `int32`, values >= 0\n"
             " * whose product is below 2^31, and the arguments in `one` equal to 1.\n"
             " * `args` has every argument of the kernel's signature. With `narrowed`\n"
             " * 0 every integer in args is at its full width (as the launch stubs\n"
             " * receive them); otherwise the `int32` arguments are int32_t (as the\n"
             " * variant is launched). */\n"
             "int tb_kernel_fits(int kernel, void *const *args, int narrowed);\n\n")
    h.append("/* Block sizes compiled into each kernel (the host tiles the work by them;\n"
             " * every variant of a kernel has the same). */\n")
    for base, variants in families.items():
        consts = variants[0][0]["constexprs"]
        for k, v in consts.items():
            h.append(f"#define TB_{base.upper()}_{k} {v}\n")
        if "MT" in consts and "TW" in consts:  # tiles.tile_lanes: BLOCK = MT * TW
            h.append(f"#define TB_{base.upper()}_BLOCK {consts['MT'] * consts['TW']}\n")
        if "min_dim" in variants[0][0]:
            h.append(f"/* The host sends {base} points of this dimension or more only. */\n"
                     f"#define TB_{base.upper()}_MIN_DIM {variants[0][0]['min_dim']}\n")
    h.append("\n/* Schedule metadata per op, \"key=value ...\", for capability records. */\n")
    for op in ops:
        h.append(f"extern const char tb_schedule_{op}[];\n")
    h.append("\n/* Launch stubs, one per kernel. Each launches the first variant of the\n"
             " * kernel (most specialised first) whose assumptions the arguments meet,\n"
             " * from `functions`, indexed like tb_kernels[] and loaded into the current\n"
             " * context, and stores its index in *variant when variant is not NULL. A\n"
             " * grid with a zero dimension launches nothing and returns TB_CUDA_SUCCESS;\n"
             " * otherwise the driver's status is returned as is, to be checked by the\n"
             " * caller. */\n")
    c_stubs = []
    for base, variants in families.items():
        spec = variants[0][0]
        params = ", ".join(f"{c_type(t)} {n}" for n, t in spec["wide_signature"])
        proto = (f"tb_curesult tb_launch_{base}(const tb_cuda *cu, const tb_cufunction *functions,\n"
                 f"        tb_custream stream, unsigned gx, unsigned gy, unsigned gz, int *variant,\n"
                 f"        {params})")
        h.append(proto + ";\n")
        # Triton appends two pointer arguments (global and profile scratch) to
        # every kernel; these kernels need neither (checked above), so NULL.
        names = [n for n, _ in spec["wide_signature"]]
        narrowed = sorted({a for v, _ in variants for a in v["int32"]}, key=names.index)

        def arg_array(v):
            """(C name, initialiser) of the argument array variant v is
            launched with: narrowed integers as int32_t copies, `one`
            arguments left out."""
            tag = ("_32" if v["int32"] else "") + "".join(f"_no_{a}" for a in v["one"])
            items = [f"&{n}_32" if v["int32"] and n in narrowed else f"&{n}"
                     for n in names if n not in v["one"]]
            return "args" + tag, ", ".join(items + ["&global_scratch", "&profile_scratch"])
        consts = ", ".join(f"{k}={v}" for k, v in spec["constexprs"].items())
        lines = [f"/* {spec['kernel']} ({spec['module']}.py), {consts}, num_warps={spec['num_warps']},\n"
                 f" * num_stages={spec['num_stages']}, {target_name}; variants:\n"]
        for v, md in variants:
            what = []
            if v["divisible"]:
                what.append(", ".join(v["divisible"]) + " % 16 == 0")
            if v["int32"]:
                what.append(" * ".join(v["int32"]) + " < 2^31, passed as int32_t")
            if v["one"]:
                what.append(", ".join(v["one"]) + " == 1, compiled in")
            what = "; ".join(what) or "no assumptions"
            lines.append(f" *   {v['name']}: {what}; {md.shared} bytes of shared memory\n")
        lines.append(f" */\n{proto}\n{{\n"
                     f"    if (gx == 0 || gy == 0 || gz == 0)\n"
                     f"        return TB_CUDA_SUCCESS;\n"
                     f"    tb_cudeviceptr global_scratch = 0, profile_scratch = 0;\n")
        if narrowed:
            lines.append("".join(f"    int32_t {a}_32 = (int32_t){a};\n" for a in narrowed))
        arrays = {}
        for v, _ in [(variants[-1][0], None)] + variants[:-1]:  # "args" (the generic) first
            name, init = arg_array(v)
            if name not in arrays:
                arrays[name] = init
                lines.append(f"    void *{name}[] = {{ {init} }};\n")
        ids = [(f"TB_KERNEL_{v['name'].upper()}", arg_array(v)[0]) for v, _ in variants]
        lines.append(f"    int k = {ids[-1][0]};\n"
                     f"    void **launch_args = {ids[-1][1]};\n")
        for n_, (kid, arr) in enumerate(ids[:-1]):
            lines.append(f"    {'else ' if n_ else ''}if (tb_kernel_fits({kid}, args, 0)) {{\n"
                         f"        k = {kid};\n"
                         f"        launch_args = {arr};\n"
                         f"    }}\n")
        lines.append(f"    if (variant != NULL)\n"
                     f"        *variant = k;\n"
                     f"    return cu->cuLaunchKernel(functions[k], gx, gy, gz, tb_kernels[k].threads, "
                     f"1, 1,\n                              tb_kernels[k].shared, stream,\n"
                     f"                              launch_args, NULL);\n"
                     f"}}\n\n")
        c_stubs.append("".join(lines))
    h.append("\n#endif /* TB_KERNELS_H */\n")
    files["tb_kernels.h"] = "".join(h)

    c = [HEADER_NOTE, "#include \"tb_kernels.h\"\n\n"]
    for spec, (cubin, md) in compiled:
        c.append(f"extern const unsigned char tb_cubin_{spec['name']}[{len(cubin)}];\n")
    c.append("\nconst tb_kernel_spec tb_kernels[TB_KERNEL_COUNT] = {\n")
    for spec, (cubin, md) in compiled:
        c.append(f"    {{ \"{spec['name']}\", \"{spec['base']}\", \"{md.name}\", "
                 f"tb_cubin_{spec['name']}, sizeof tb_cubin_{spec['name']},\n"
                 f"      {spec['num_warps']}, {spec['num_stages']}, {spec['num_warps'] * WARP_SIZE}, "
                 f"{md.shared}, 0x{spec['divisible_mask']:x}, 0x{spec['int32_mask']:x}, "
                 f"0x{spec['one_mask']:x} }},\n")
    c.append("};\n\n")
    for op, texts in ops.items():
        c.append(f"const char tb_schedule_{op}[] = \"target={target_name} " + " ".join(texts) +
                 "\";\n")
    c.append("\n/* Every argument a variant assumes divisible or narrows is 8 bytes wide\n"
             " * here (a device address or a 64-bit integer; aot/build_kernels.py\n"
             " * refuses others), except a narrowed one once `narrowed`: int32_t. */\n"
             "int tb_kernel_fits(int kernel, void *const *args, int narrowed)\n{\n"
             "    uint32_t mask = tb_kernels[kernel].divisible;\n"
             "    const uint32_t int32 = narrowed ? tb_kernels[kernel].int32 : 0;\n"
             "    for (int k = 0; mask != 0; k++, mask >>= 1)\n"
             "        if ((mask & 1) && ((int32 >> k) & 1 ? (uint64_t)*(const int32_t *)args[k]\n"
             "                                             : *(const uint64_t *)args[k]) % 16 != 0)\n"
             "            return 0;\n"
             "    int64_t product = 1;\n"
             "    mask = tb_kernels[kernel].int32;\n"
             "    for (int k = 0; mask != 0; k++, mask >>= 1) {\n"
             "        if (!(mask & 1))\n"
             "            continue;\n"
             "        int64_t v = narrowed ? *(const int32_t *)args[k] : *(const int64_t *)args[k];\n"
             "        if (v < 0 || v > INT32_MAX || (v > 0 && product > INT32_MAX / v))\n"
             "            return 0;\n"
             "        product *= v;\n"
             "    }\n"
             "    mask = tb_kernels[kernel].one;\n"
             "    for (int k = 0; mask != 0; k++, mask >>= 1)\n"
             "        if ((mask & 1) && *(const int32_t *)args[k] != 1)\n"
             "            return 0;\n"
             "    return 1;\n}\n\n")
    c.extend(c_stubs)
    files["tb_kernels.c"] = "".join(c)

    for spec, (cubin, md) in compiled:
        lines = [HEADER_NOTE,
                 f"/* {spec['kernel']} ({spec['name']}), {target_name}, {len(cubin)} bytes,\n"
                 f" * sha256 {hashlib.sha256(cubin).hexdigest()} */\n",
                 "#include <stddef.h>\n\n",
                 f"extern const unsigned char tb_cubin_{spec['name']}[{len(cubin)}];\n\n",
                 f"/* Aligned for the driver, which reads the ELF image in place. */\n",
                 f"__attribute__((aligned(64))) const unsigned char tb_cubin_{spec['name']}[{len(cubin)}] = {{\n"]
        for k in range(0, len(cubin), 16):
            lines.append("    " + ",".join(f"0x{b:02x}" for b in cubin[k:k + 16]) + ",\n")
        lines.append("};\n")
        files[f"tb_cubin_{spec['name']}.c"] = "".join(lines)
        meta["kernels"].append({
            "name": spec["name"],
            "base": spec["base"],
            "op": spec["op"],
            "dtype": spec["dtype"],
            "source": f"kernels/{spec['module']}.py",
            "kernel": spec["kernel"],
            "function": md.name,
            "signature": [f"{n}:{t}" for n, t in spec["signature"]],
            "divisible_by_16": spec["divisible"],
            "int32": spec["int32"],
            "one": spec["one"],
            "constexprs": spec["constexprs"],
            "num_warps": spec["num_warps"],
            "num_stages": spec["num_stages"],
            "maxnreg": spec.get("maxnreg"),
            "min_dim": spec.get("min_dim"),
            "threads": spec["num_warps"] * WARP_SIZE,
            "shared": md.shared,
            "target": target_name,
            "cubin_bytes": len(cubin),
            "cubin_sha256": hashlib.sha256(cubin).hexdigest(),
            "stub": f"tb_launch_{spec['base']}",
        })
    files["kernels.json"] = json.dumps(meta, indent=2, sort_keys=False) + "\n"

    out_dir.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (out_dir / name).write_text(text)
    # A variant no longer built leaves no cubin behind.
    for old in out_dir.glob("tb_cubin_*.c"):
        if old.name not in files:
            old.unlink()
    return files


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=GENERATED, help="output folder")
    parser.add_argument("--check", action="store_true",
                        help="build into a scratch folder and compare with --out")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="tb-aot-") as scratch:
        # A fresh cache so that every kernel really is compiled by this run,
        # and no line info, which would put file paths into the cubins.
        os.environ["TRITON_CACHE_DIR"] = str(Path(scratch) / "cache")
        os.environ["TRITON_DISABLE_LINE_INFO"] = "1"
        sys.path.insert(0, str(KERNELS))
        compiled = drop_identical_variants([(spec, compile_spec(spec)) for spec in SPECS])
        out_dir = Path(scratch) / "out" if args.check else args.out
        files = emit(out_dir, compiled)
        if args.check:
            stale = [name for name, text in files.items()
                     if not (args.out / name).is_file() or (args.out / name).read_text() != text]
            extra = sorted(p.name for p in args.out.glob("*") if p.name not in files)
            if stale or extra:
                print(f"generated sources out of date: {', '.join(stale + extra)}", file=sys.stderr)
                return 1
            print(f"{args.out}: up to date ({len(files)} files)", file=sys.stderr)
            return 0
    total = sum(len(t) for t in files.values())
    print(f"wrote {len(files)} files, {total} bytes, to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
