"""Progress display and Ctrl-C for long computations.

The C library calls a progress function now and then (about 10 to 100 times
a second) from the computing thread; the binding takes the GIL back at most
every 50 ms, looks for pending signals (so Ctrl-C raises KeyboardInterrupt
within a second, in a terminal and in Jupyter alike) and calls the function
made here. ``progress=None`` shows a bar only when Python runs interactively;
``True`` always, ``False`` never; a callable ``f(stage, done, total)`` gets
every report and cancels the work by returning a true value.
"""
import sys
import time


def interactive():
    """True in an interactive interpreter, IPython or Jupyter."""
    # sys.__dict__ rather than getattr: a missing attribute costs an
    # exception, on every call of every computation
    return bool("ps1" in sys.__dict__ or sys.flags.interactive or "IPython" in sys.modules)


class Bar:
    """A progress bar that appears only once the work has run for `delay`
    seconds: tqdm when it is installed, else one stderr line redrawn."""

    def __init__(self, delay=0.5, stream=None):
        self.start = time.monotonic()
        self.delay = delay
        self.stream = stream
        self.stage = None
        self.tqdm = None
        self.plain = False

    def __call__(self, stage, done, total):
        if time.monotonic() - self.start < self.delay:
            return False
        if stage != self.stage:
            self.close()
            self.stage = stage
            self._open(stage, total)
        if self.tqdm is not None:
            self.tqdm.total = total
            self.tqdm.n = done
            self.tqdm.refresh()
        else:
            stream = self.stream or sys.stderr
            stream.write("\rtopoml: %s %d/%d" % (stage, done, total))
            stream.flush()
            self.plain = True
        return False

    def _open(self, stage, total):
        try:
            from tqdm.auto import tqdm
        except ImportError:
            self.tqdm = None
            return
        self.tqdm = tqdm(total=total, desc="topoml: " + stage, leave=False, file=self.stream)

    def close(self):
        if self.tqdm is not None:
            self.tqdm.close()
            self.tqdm = None
        if self.plain:
            stream = self.stream or sys.stderr
            stream.write("\n")
            stream.flush()
            self.plain = False


def _nothing():
    pass


def resolve(progress):
    """(function for the binding or None, closer) for a `progress` argument."""
    if progress is None:
        progress = interactive()
    if progress is False:
        return None, _nothing
    if progress is True:
        bar = Bar()
        return bar, bar.close
    if callable(progress):
        return progress, _nothing
    raise TypeError("progress must be None, True, False or a callable f(stage, done, total)")


def run(call, progress, **kwargs):
    """Run call(progress=..., check_signals=True, **kwargs), closing the bar."""
    fn, close = resolve(progress)
    try:
        return call(progress=fn, check_signals=True, **kwargs)
    finally:
        close()
