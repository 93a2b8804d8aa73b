"""One libtopoml context per Python thread, and the backend selection.

The C API lets one thread at a time use a context; different contexts run
at once. So each Python thread gets its own ``topoml._core.Context``, made
on first use (discovery and probing of the plugins happen then), and
computations in several threads run in parallel with the GIL released.

Not here: argument checking and result shapes (``_rips``, ``features``).
"""
import threading

from . import _core

_local = threading.local()
_lock = threading.Lock()
_selected = None  # the backend select_backend() asked for, or None
_generation = 0   # bumped by select_backend so every thread's context follows


def context():
    """The calling thread's context, with the process-wide backend choice."""
    ctx = getattr(_local, "ctx", None)
    if ctx is None:
        ctx = _local.ctx = _core.Context()
        _local.generation = -1
    if _local.generation != _generation:
        with _lock:
            name, gen = _selected, _generation
        ctx.use_backend(name)
        _local.generation = gen
    return ctx


def set_selected(name):
    global _selected, _generation
    with _lock:
        _selected = name
        _generation += 1


def selected():
    return _selected


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
            self.ctx.use_backend(_selected)
        return False
