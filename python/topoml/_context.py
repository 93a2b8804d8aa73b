"""One libtopoml context per Python thread, and the backend selection.

The C API lets one thread at a time use a context; different contexts run
at once. So each Python thread gets its own ``topoml._core.Context``, made
on first use (discovery and probing of the plugins happen then) and kept in
the thread's state (it goes when the thread ends), and computations in
several threads run in parallel with the GIL released. Both live in the
compiled module (``_core.thread_context``), which the Vietoris-Rips calls
reach without a Python call.

Not here: argument checking and result shapes (``_rips``, ``features``).
"""
from . import _core

#: The calling thread's context, following the process-wide backend choice
#: (:func:`set_selected`) on its next use.
context = _core.thread_context


def set_selected(name):
    """Make `name` (None: topoml chooses) every thread's backend choice."""
    _core.set_selected(name)


def selected():
    return _core.selected()


class use_backend:
    """Run the ops inside the ``with`` block on backend ``name`` (None: the
    process-wide choice)."""

    def __init__(self, ctx, name):
        self.ctx = ctx
        self.name = name

    def __enter__(self):
        if self.name is not None:
            self.ctx.use_backend(self.name)
        return self.ctx

    def __exit__(self, *exc):
        if self.name is not None:
            self.ctx.use_backend(_core.selected())
        return False
