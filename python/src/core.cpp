/*
 * core.cpp — topoml._core, the compiled binding of the Python package over
 * the public C API (topoml/topoml.h, topoml/features.h) and nothing else.
 *
 * Thin on purpose: arrays arrive as typed, C-contiguous float64 views (the
 * Python layer makes them so, copying only when it must), the GIL is
 * released around every C call that may take time, and every status is
 * turned into a Python exception in one place (raise_status). Ctrl-C
 * reaches a running computation through the progress callback, which takes
 * the GIL back briefly to look for pending signals and to call the user's
 * progress function. Not here: argument defaults, input kinds, result
 * shapes — the Python modules decide those.
 *
 * One exception, for speed: topoml.ripser, ripser_parallel and barcodes
 * are compiled callables here (Entry), which run a compiled entry each
 * (Context::fast_*) that does the whole call on the inputs a call mostly
 * gets — a 2-D float numpy array taken as it is, plain arguments — and
 * builds the result the Python function would (test_native checks the two
 * agree), and call that Python function for anything else. On a few points the Python and numpy
 * work around the C call, with cold caches, cost as much as the C call
 * itself; docs/python.md, "Speed". Anything else it leaves to Python.
 *
 * This file only makes the module; the parts, by concern, are in the files
 * python/src/README.md lists (binding.h: what they share).
 */
#include "binding.h"

using namespace topoml_py;

NB_MODULE(_core, m)
{
    m.doc() = "topoml's compiled binding over the public C API (use the topoml package).";
    nb::class_<Context> context(m, "Context");
    register_arrays(m);
    register_backends(m, context);
    register_rips(m, context);
    register_entries(m);
    register_features(context);
}
