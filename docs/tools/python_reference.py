#!/usr/bin/env python3
"""The Python API reference, generated from the package's docstrings.

Reads python/topoml/ with `ast` — nothing is imported, so the compiled
binding need not be built — and writes one Markdown page: each public name
of `topoml.__all__` (including the names loaded lazily, as the package's
`_LAZY` table lists them), with its signature and docstring, and for a class
its public methods. The docstrings are numpydoc text and are shown as they
are written.

Usage: python_reference.py --package python/topoml --out FILE
"""
import argparse
import ast
import os
import sys


def literal(tree, name):
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == name for t in node.targets):
            try:
                return ast.literal_eval(node.value)
            except ValueError:
                # __all__ = [...] + sorted(_LAZY): take the literal part.
                if isinstance(node.value, ast.BinOp):
                    return ast.literal_eval(node.value.left)
                raise
    return None


def signature(node):
    if isinstance(node, ast.ClassDef):
        init = next((n for n in node.body if isinstance(n, ast.FunctionDef)
                     and n.name == "__init__"), None)
        if init is None:
            return "class %s" % node.name
        args = ast.unparse(init.args)
        args = args[len("self, "):] if args.startswith("self, ") else \
            ("" if args == "self" else args)
        return "class %s(%s)" % (node.name, args)
    return "%s(%s)" % (node.name, ast.unparse(node.args))


def block(doc):
    return ["```text", doc.rstrip(), "```"] if doc else ["(no docstring)"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--package", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    init = ast.parse(open(os.path.join(a.package, "__init__.py")).read())
    public = list(literal(init, "__all__") or [])
    lazy = literal(init, "_LAZY") or {}
    public += sorted(n for n in lazy if n not in public)
    defs = {}
    for f in sorted(os.listdir(a.package)):
        if f.endswith(".py") and f != "__init__.py":
            module = f[:-3]
            tree = ast.parse(open(os.path.join(a.package, f)).read())
            for node in tree.body:
                if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                    # The module a lazy name comes from wins; else the first.
                    if node.name not in defs or lazy.get(node.name) == module:
                        defs[node.name] = (module, node)
    out = ["# Python API reference", "",
           "Generated from the docstrings of the `topoml` package "
           "(`python/topoml/`) by `docs/tools/python_reference.py`; every name "
           "of `topoml.__all__`.", ""]
    missing = []
    for name in public:
        if name not in defs:
            missing.append(name)
            continue
        module, node = defs[name]
        out += ["## `topoml.%s`" % name, "", "```python", signature(node), "```", "",
                "Defined in `topoml/%s.py`." % module, ""]
        out += block(ast.get_docstring(node)) + [""]
        if isinstance(node, ast.ClassDef):
            for m in node.body:
                if isinstance(m, ast.FunctionDef) and not m.name.startswith("_") \
                        and ast.get_docstring(m):
                    out += ["### `%s.%s`" % (name, m.name), "", "```python",
                            signature(m), "```", ""] + block(ast.get_docstring(m)) + [""]
    if missing:
        out += ["Names of `__all__` defined in the compiled binding (no Python source): " +
                ", ".join("`%s`" % m for m in missing) + ".", ""]
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "w", encoding="utf-8") as f:
        f.write("\n".join(out).rstrip() + "\n")
    print("python_reference: %d names, %d without Python source" %
          (len(public) - len(missing), len(missing)))
    return 0 if len(public) > len(missing) else 1


if __name__ == "__main__":
    sys.exit(main())
