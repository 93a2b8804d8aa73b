"""The ABI guard (abi/check_abi.py) against the committed baseline
(abi/): the baseline's own headers and today's pass; a plugin ABI struct
with a member inserted before others, removed or retyped, a renumbered
enumerator, a changed function-pointer signature in the vtable, or a
removed function fail; a member appended at the end passes; a member
appended into trailing padding (the size, and so struct_size, does not
change) fails; an incompatible change passes only with TOPOML_ABI_VERSION
bumped *and* the bump documented in docs/plugin-abi.md's version history."""
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile

import clitest

A = clitest.args()
SRC = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
TOOL = os.path.join(SRC, "abi", "check_abi.py")
failures = []


def check(what, ok, detail=""):
    if not ok:
        failures.append(what)
        print("FAIL: %s %s" % (what, detail[-3000:]))


def guard(*args):
    return subprocess.run([sys.executable, TOOL] + list(args), capture_output=True, text=True)


def variant(tmp, name, edits, base=os.path.join(SRC, "abi", "include")):
    """A copy of the plugin headers with (old, new) replacements in plugin.h."""
    d = os.path.join(tmp, name)
    shutil.copytree(base, d)
    p = os.path.join(d, "topoml", "plugin.h")
    s = open(p).read()
    for old, new in edits:
        if old not in s:
            raise SystemExit("test_abi_guard: %r not in the baseline plugin.h" % old)
        s = s.replace(old, new, 1)
    open(p, "w").write(s)
    return d


CALL_END = "    uint32_t reserved2;\n} topoml_call_v1;"

with tempfile.TemporaryDirectory() as tmp:
    r = guard("--source", SRC, "--plugin-headers", os.path.join(SRC, "abi", "include"))
    check("the baseline's own headers pass", r.returncode == 0, r.stdout + r.stderr)
    check("... and report no change", "compatible with the baseline" in r.stdout, r.stdout)
    r = guard("--source", SRC)
    check("today's plugin headers pass", r.returncode == 0, r.stdout + r.stderr)

    bad = {
        "inserted": [("    uint32_t reserved;\n    void *host_data;",
                      "    uint32_t reserved;\n    uint32_t inserted;\n    void *host_data;")],
        "removed": [(CALL_END, "} topoml_call_v1;")],
        "retyped": [("    uint64_t max_memory; /*", "    uint32_t max_memory; /*")],
        "renumbered": [("    TOPOML_OP_RIPS = 3,", "    TOPOML_OP_RIPS = 5,")],
        "signature": [("    int (*probe)(void *state, char *why, size_t why_size);",
                       "    int (*probe)(void *state, char *why, size_t why_size, int more);")],
    }
    for name, edits in bad.items():
        r = guard("--source", SRC, "--plugin-headers", variant(tmp, name, edits))
        check("a %s member/value fails" % name,
              r.returncode == 1 and "INCOMPATIBLE" in r.stdout, r.stdout + r.stderr)

    appended = variant(tmp, "appended", [(CALL_END, "    uint32_t reserved2;\n"
                                          "    uint64_t appended;\n} topoml_call_v1;")])
    r = guard("--source", SRC, "--plugin-headers", appended)
    check("a member appended at the end passes", r.returncode == 0, r.stdout + r.stderr)

    # The classification itself, on a report of a member appended into the
    # trailing padding: abidiff reports an insertion but no size change.
    spec = importlib.util.spec_from_file_location("check_abi", TOOL)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    padding = ("underlying type 'struct s' at x.h:1:1 changed:\n"
               "  type size hasn't changed\n  1 data member insertion:\n"
               "    'uint32_t more', at offset 96 (in bits) at x.h:4:1\n")
    check("a member appended into padding is incompatible", mod.classify(padding) != [])
    grown = ("underlying type 'struct s' at x.h:1:1 changed:\n"
             "  type size changed from 96 to 128 (in bits)\n  1 data member insertion:\n"
             "    'uint32_t more', at offset 96 (in bits) at x.h:4:1\n")
    check("a member appended to a grown struct is compatible", mod.classify(grown) == [],
          str(mod.classify(grown)))
    check("a removed function is incompatible",
          mod.classify("Functions changes summary: 1 Removed, 0 Changed, 0 Added function\n") != [])

    # A removed function of the anchor, through abidiff for real.
    src2 = os.path.join(tmp, "src2")
    shutil.copytree(os.path.join(SRC, "abi"), os.path.join(src2, "abi"))
    shutil.copytree(os.path.join(SRC, "docs"), os.path.join(src2, "docs"))
    anchor = os.path.join(src2, "abi", "plugin_abi_anchor.c")
    s = open(anchor).read().replace("topoml_abi_anchor(", "topoml_abi_anchor_renamed(")
    open(anchor, "w").write(s)
    r = guard("--source", src2, "--plugin-headers", os.path.join(SRC, "abi", "include"))
    check("a removed function fails", r.returncode == 1 and "Removed" in r.stdout,
          r.stdout + r.stderr)

    # A version bump: only when documented.
    bumped = variant(tmp, "bumped", bad["inserted"] + [("#define TOPOML_ABI_VERSION 1u",
                                                         "#define TOPOML_ABI_VERSION 2u")])
    r = guard("--source", SRC, "--plugin-headers", bumped)
    check("an undocumented bump fails", r.returncode == 1, r.stdout + r.stderr)
    doc = os.path.join(tmp, "plugin-abi.md")
    text = open(os.path.join(SRC, "docs", "plugin-abi.md")).read()
    at = text.index("\n", text.index("| 1 (appended) |")) + 1
    open(doc, "w").write(text[:at] + "| 2 | 0.3 | a new field in topoml_call_v1 |\n" + text[at:])
    r = guard("--source", SRC, "--plugin-headers", bumped, "--doc", doc)
    check("a documented bump passes", r.returncode == 0 and "documented version bump" in r.stdout,
          r.stdout + r.stderr)

print("%d failures" % len(failures))
sys.exit(1 if failures else 0)
