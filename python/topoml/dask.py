"""Many diagrams on a Dask cluster: one task per batch of clouds, results in
input order.

Machine-learning work computes one diagram per sample, per layer, per epoch.
:func:`barcodes` hands that to Dask (``dask``, ``distributed``), which runs
the same graph on a laptop's processes, an HPC allocation (dask-jobqueue) or
Kubernetes; topoml adds no scheduler of its own. Each task computes its
clouds with :func:`topoml.barcodes` in the worker's own topoml context, so a
worker's backend is chosen by the normal selection (a worker with a GPU runs
the cuda plugin), and its memory limit is the worker's configuration
(``max_memory:`` in ``TOPOML_CONFIG``) or the ``max_memory`` given here.

What is shipped where: arrays given in a list travel from the client with
their task; file paths are read on the workers; a ``dask.array`` stack and a
``dask.bag`` stay in the cluster. Features (``features=``) are computed in
the same task, so diagrams need never reach the client, and with
``output=`` the workers write each result to its own NPZ file and return
only its path (restartable: a file already there is not computed again).

Faults: a worker that dies mid-run loses nothing (Dask runs its tasks again
elsewhere); a cloud that fails (bad input, the memory limit) is reported
with its index and reason, and with ``errors="return"`` or ``"skip"`` does
not stop the others.

``import topoml`` does not import this module or Dask; ``topoml.dask``
imports Dask when first used. docs/distributed.md has the whole path from a
laptop to a cluster.
"""
import math
import numbers
import os
import uuid
import warnings

import numpy as np

__all__ = ["barcodes", "read_cloud", "CloudError", "Failure", "Written", "FEATURES"]

#: Features computed on the workers by name: ``features=NAME`` with
#: ``feature_params`` as keyword arguments of the topoml function.
FEATURES = ("persistence_images", "betti_curve", "landscapes", "entropy", "total_persistence")

_ERRORS = ("raise", "return", "skip")
_PER_CLOUD = ("betti_curve", "landscapes", "entropy", "total_persistence")


class CloudError(ValueError):
    """A cloud of a batch failed (``errors="raise"``): ``index`` is its place
    in the input (``(partition, position)`` for a ``dask.bag``), ``error``
    the name of the original exception, whose text the message repeats."""

    def __init__(self, index, error, message):
        super().__init__("cloud %s: %s: %s" % (_index_text(index), error, message))
        self.index, self.error, self.reason = index, error, message

    def __reduce__(self):
        return (CloudError, (self.index, self.error, self.reason))


class Failure:
    """What ``errors="return"`` puts in the place of a cloud that failed:
    its ``index``, the exception's name (``error``, e.g. ``"ValueError"``,
    ``"MemoryLimitError"``) and its message (``reason``)."""

    __slots__ = ("index", "error", "reason")

    def __init__(self, index, error, reason):
        self.index, self.error, self.reason = index, error, reason

    def __reduce__(self):
        return (Failure, (self.index, self.error, self.reason))

    def __eq__(self, other):
        return isinstance(other, Failure) and (self.index, self.error, self.reason) == \
            (other.index, other.error, other.reason)

    def __hash__(self):
        return hash((self.index, self.error, self.reason))

    def __repr__(self):
        return "Failure(index=%r, error=%r, reason=%r)" % (self.index, self.error, self.reason)


class Written:
    """What ``output=`` returns for a cloud: the ``path`` of its NPZ file,
    and ``skipped`` True when the file was already there (a restarted run)."""

    __slots__ = ("index", "path", "skipped")

    def __init__(self, index, path, skipped):
        self.index, self.path, self.skipped = index, path, skipped

    def __reduce__(self):
        return (Written, (self.index, self.path, self.skipped))

    def __eq__(self, other):
        return isinstance(other, Written) and (self.index, self.path) == (other.index, other.path)

    def __hash__(self):
        return hash((self.index, self.path))

    def __repr__(self):
        return "Written(index=%r, path=%r, skipped=%r)" % (self.index, self.path, self.skipped)

    def load(self):
        """The file's content: ``{"diagrams": [...]}`` or ``{"features": ...}``,
        with ``backend``."""
        return load(self.path)


def _index_text(index):
    if isinstance(index, tuple):
        return "%d of partition %d" % (index[1], index[0])
    return str(index)


def _dask():
    try:
        import dask
        import dask.bag  # noqa: F401
    except ImportError:
        raise ImportError("topoml.dask needs Dask: pip install 'dask[distributed]'") from None
    return dask


def read_cloud(path):
    """A cloud from a file, as the workers read it: ``.npy`` (a 2-D array),
    ``.npz`` (its only array, or the one named ``X``), or text (one point per
    line, coordinates separated by commas or white space; ``#`` starts a
    comment). Errors name the file and the reason (numpy's, with the line for
    text)."""
    path = os.fspath(path)
    lower = path.lower()
    try:
        if lower.endswith(".npy"):
            X = np.load(path, allow_pickle=False)
        elif lower.endswith(".npz"):
            with np.load(path, allow_pickle=False) as z:
                names = list(z.files)
                if "X" in names:
                    X = z["X"]
                elif len(names) == 1:
                    X = z[names[0]]
                else:
                    raise ValueError("holds %d arrays (%s) and none named X"
                                     % (len(names), ", ".join(names)))
        else:
            with open(path, encoding="utf-8") as f:
                text = f.read().replace(",", " ")
            X = np.loadtxt(text.splitlines(), ndmin=2, comments="#")
    except (OSError, ValueError) as e:
        raise ValueError("%s: %s" % (path, e)) from None
    if X.ndim != 2:
        raise ValueError("%s: needs a 2-D array (points or a distance matrix), got shape %s"
                         % (path, X.shape))
    return X


def load(path):
    """A file that ``output=`` wrote, as a dict."""
    with np.load(os.fspath(path), allow_pickle=False) as z:
        out = {"backend": str(z["backend"]), "index": z["index"].tolist()}
        if "features" in z.files:
            out["features"] = z["features"]
        else:
            k = int(z["maxdim"])
            out["diagrams"] = [z["dgm_%d" % d] for d in range(k + 1)]
    return out


def _out_path(output, index):
    if isinstance(index, tuple):
        name = "cloud-p%05d-%06d.npz" % index
    else:
        name = "cloud-%08d.npz" % index
    return os.path.join(output, name)


def _write(path, index, result, value, features):
    arrays = {"backend": np.array(result.backend), "index": np.array(index)}
    if features is None:
        arrays["maxdim"] = np.array(len(result.diagrams) - 1)
        for d, dgm in enumerate(result.diagrams):
            arrays["dgm_%d" % d] = dgm
    else:
        arrays["features"] = np.asarray(value)
    # Written under another name, then renamed: a file that is there is whole,
    # so a restarted run may skip it.
    tmp = "%s.%d.tmp.npz" % (path[:-4], os.getpid())
    np.savez(tmp, **arrays)
    os.replace(tmp, path)


def _feature(result, features, params):
    """The feature `features` (a name of FEATURES or a callable) of one
    BarcodeResult, computed on the worker."""
    if callable(features):
        return features(result)
    import topoml
    fn = getattr(topoml, features)
    dims = params.get("dims")
    rest = {k: v for k, v in params.items() if k != "dims"}
    dgms = result.diagrams if dims is None else [result.diagrams[d] for d in dims]
    if features == "persistence_images":
        return fn(dgms, **rest)
    return [fn(d, **rest) for d in dgms]


def _run_batch(start, sources, options, features, feature_params, output, errors,
               max_memory):
    """The task: every cloud of one batch, in order. `start` is the index of
    the first (an int), or (partition, 0) for a bag's partition."""
    import topoml
    from topoml import _context
    ctx = _context.context()
    before = ctx.max_memory()
    if max_memory is not None:
        ctx.set_max_memory(max_memory)
    out = []
    try:
        for k, source in enumerate(sources):
            index = (start[0], k) if isinstance(start, tuple) else start + k
            path = _out_path(output, index) if output is not None else None
            if path is not None and os.path.exists(path):
                out.append(Written(index, path, True))
                continue
            try:
                X = read_cloud(source) if isinstance(source, (str, os.PathLike)) else source
                result = topoml.barcodes(X, progress=False, **options)
                value = result if features is None else \
                    _feature(result, features, feature_params)
            except (ValueError, TypeError, MemoryError, RuntimeError, OSError) as e:
                name = type(e).__name__
                if errors == "raise":
                    raise CloudError(index, name, str(e)) from e
                out.append(Failure(index, name, str(e)))
                continue
            if path is not None:
                _write(path, index, result, value, features)
                out.append(Written(index, path, False))
            else:
                out.append(value)
    finally:
        if max_memory is not None:
            ctx.set_max_memory(before)
    return out


def _options(maxdim, threshold, modulus, metric, collapse, n_threads, backend,
             distance_matrix):
    if isinstance(maxdim, bool) or not isinstance(maxdim, numbers.Integral) or maxdim < 0:
        raise ValueError("maxdim must be a non-negative integer, got %r" % (maxdim,))
    return {"maxdim": int(maxdim), "threshold": threshold, "modulus": modulus, "metric": metric,
            "collapse": collapse, "n_threads": n_threads, "backend": backend,
            "distance_matrix": distance_matrix}


def _workers_hint(client):
    if client is not None:
        try:
            return max(1, sum(w.get("nthreads", 1)
                              for w in client.scheduler_info()["workers"].values()))
        except Exception:  # a client whose scheduler is gone: Dask says so later
            pass
    return os.cpu_count() or 1


def _batches(n, batch_size, workers):
    """(start, stop) ranges: about 4 batches per worker thread, at most 64
    clouds each, unless batch_size says."""
    if batch_size is None:
        batch_size = max(1, min(64, math.ceil(n / (4 * workers))))
    elif isinstance(batch_size, bool) or not isinstance(batch_size, numbers.Integral) \
            or batch_size < 1:
        raise ValueError("batch_size must be a positive integer, got %r" % (batch_size,))
    return [(i, min(n, i + batch_size)) for i in range(0, n, batch_size)]


def barcodes(clouds, maxdim=1, threshold=math.inf, modulus=2, metric="euclidean",
             collapse="auto", n_threads=1, backend=None, distance_matrix=None, *,
             features=None, feature_params=None, output=None, errors="raise",
             max_memory=None, batch_size=None, client=None, resources=None, progress=False,
             compute=True):
    """Diagrams (or features) of many clouds, computed by Dask.

    Parameters
    ----------
    clouds : list, dask.array.Array or dask.bag.Bag
        A list (or tuple) of clouds, each an array as :func:`topoml.barcodes`
        takes it or a path to a file read on the worker (:func:`read_cloud`);
        a ``dask.array`` of shape ``(n_clouds, n_points, dim)`` (same-shape
        clouds; each block of clouds is one task); or a ``dask.bag`` of
        arrays (one task per partition; an index is then
        ``(partition, position)``).
    maxdim, threshold, modulus, metric, collapse, backend, distance_matrix
        As :func:`topoml.barcodes`.
    n_threads : int
        Threads each cloud's computation may use (default 1: Dask runs one
        task per worker thread, so the cores are used by the tasks).
    features : None, str or callable
        None: each result is a :class:`topoml.BarcodeResult`. A name of
        :data:`FEATURES` computes that feature on the worker with
        ``feature_params`` (plus ``dims``: the dimensions to use, default
        all): ``"persistence_images"`` gives the array of
        :func:`topoml.persistence_images` for the cloud's diagrams, the others
        a list with one entry per dimension. A callable gets the
        BarcodeResult on the worker; what it returns is the result.
    output : None or str
        A folder the workers can write: each result is written there as
        ``cloud-<index>.npz`` (diagrams ``dgm_0..dgm_k``, or ``features``,
        with ``backend`` and ``index``) and the result is a :class:`Written`
        with its path. A file already there is not computed again, so a run
        stopped half-way is continued by running it again.
    errors : "raise", "return" or "skip"
        A cloud that fails (bad input, the memory limit): raise
        :class:`CloudError` naming its index ("raise"); put a
        :class:`Failure` with its index and reason in its place ("return");
        or leave it out of the results, with one warning naming each index
        and reason ("skip").
    max_memory : int or None
        Bytes each computation may take (topoml's memory limit), on every
        worker; None keeps each worker's configuration. A cloud over it
        fails alone (``MemoryLimitError``) instead of taking the worker down.
    batch_size : int or None
        Clouds per task for a list (default: about four tasks per worker
        thread, at most 64 clouds each).
    client : distributed.Client or None
        The cluster; None uses Dask's current scheduler (the active Client,
        else the local threads).
    resources : dict or None
        Dask worker resources each task needs, e.g. ``{"GPU": 1}`` to run
        the clouds on the workers started with a GPU (docs/distributed.md).
    progress : bool
        Show Dask's progress bar while the clouds are computed.
    compute : bool
        True: compute and return the list. False: return a ``dask.bag`` of
        the results, in input order, to build on.

    Returns
    -------
    list
        One result per cloud, in input order (``errors="skip"`` leaves out the
        failed ones).

    Examples
    --------
    >>> import numpy as np, topoml.dask
    >>> rng = np.random.default_rng(0)
    >>> clouds = [rng.random((40, 3)) for _ in range(6)]
    >>> rs = topoml.dask.barcodes(clouds, maxdim=1, client=None)
    >>> len(rs), rs[0].diagrams[0].shape[1]
    (6, 2)
    """
    dask = _dask()
    import dask.bag as db
    if errors not in _ERRORS:
        raise ValueError("errors must be one of %s, got %r" % (", ".join(_ERRORS), errors))
    if features is not None and not callable(features) and features not in FEATURES:
        raise ValueError("features must be a callable or one of %s, got %r"
                         % (", ".join(FEATURES), features))
    if feature_params is not None and features is None:
        raise ValueError("feature_params needs features")
    if max_memory is not None and (isinstance(max_memory, bool) or
                                   not isinstance(max_memory, numbers.Integral) or
                                   max_memory <= 0):
        raise ValueError("max_memory must be a positive number of bytes, got %r" % (max_memory,))
    options = _options(maxdim, threshold, modulus, metric, collapse, n_threads, backend,
                       distance_matrix)
    params = dict(feature_params or {})
    if output is not None:
        output = os.path.abspath(os.fspath(output))
        os.makedirs(output, exist_ok=True)
    client = client if client is not None else _default_client()
    token = uuid.uuid4().hex[:12]
    batch = dask.delayed(_run_batch, pure=False)

    def run(start, sources, *rest):
        # Named for Dask's dashboard and progress bar: one key per batch.
        first = "p%d" % start[0] if isinstance(start, tuple) else str(start)
        return batch(start, sources, *rest, dask_key_name="topoml-barcodes-%s-%s"
                     % (token, first))

    extra = (options, features, params, output, errors, max_memory)
    with dask.annotate(resources=resources) if resources else _nothing():
        parts = _parts(clouds, run, extra, _workers_hint(client), batch_size)
    if not compute:
        return db.from_delayed(parts)
    results = _compute(parts, client, progress)
    if errors == "skip":
        failed = [r for r in results if isinstance(r, Failure)]
        if failed:
            warnings.warn("topoml.dask.barcodes: %d of %d clouds failed and were left out: %s"
                          % (len(failed), len(results),
                             "; ".join("cloud %s: %s: %s" % (_index_text(f.index), f.error,
                                                             f.reason) for f in failed)),
                          RuntimeWarning, stacklevel=2)
            results = [r for r in results if not isinstance(r, Failure)]
    return results


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _parts(clouds, run, extra, workers, batch_size):
    """The graph's tasks, one delayed list of results each, in input order."""
    import dask.array as da
    import dask.bag as db
    if isinstance(clouds, db.Bag):
        return [run((p, 0), part, *extra) for p, part in enumerate(clouds.to_delayed())]
    if isinstance(clouds, da.Array):
        if clouds.ndim != 3:
            raise ValueError("a dask.array of clouds needs shape (n_clouds, n_points, dim), "
                             "got %d dimensions" % clouds.ndim)
        if len(clouds.chunks[1]) > 1 or len(clouds.chunks[2]) > 1:
            clouds = clouds.rechunk({1: -1, 2: -1})
        blocks = clouds.to_delayed().reshape(-1)
        starts = np.concatenate([[0], np.cumsum(clouds.chunks[0])[:-1]]).astype(int)
        return [run(int(s), b, *extra) for s, b in zip(starts, blocks)]
    if isinstance(clouds, np.ndarray) and clouds.ndim == 3:
        clouds = list(clouds)
    if not isinstance(clouds, (list, tuple)):
        raise TypeError("clouds must be a list or tuple of arrays or paths, a dask.array "
                        "(n_clouds, n_points, dim) or a dask.bag, got %s"
                        % type(clouds).__name__)
    return [run(a, list(clouds[a:b]), *extra)
            for a, b in _batches(len(clouds), batch_size, workers)]


def _default_client():
    """The active distributed Client, or None (then the local threads run the
    tasks: the C computation releases the GIL)."""
    try:
        from distributed import default_client
        return default_client()
    except (ImportError, ValueError):
        return None


def _compute(parts, client, progress):
    """The batches' results, flattened in input order. The batches are
    computed as they are (no graph optimisation), so each keeps its name on
    Dask's dashboard."""
    if client is not None:
        futures = client.compute(parts, optimize_graph=False)
        if progress:
            from distributed import progress as show
            show(futures)
        batches = client.gather(futures)
    else:
        import dask
        scheduler = dask.config.get("scheduler", None) or "threads"
        if progress:
            from dask.diagnostics import ProgressBar
            with ProgressBar():
                batches = dask.compute(*parts, scheduler=scheduler, optimize_graph=False)
        else:
            batches = dask.compute(*parts, scheduler=scheduler, optimize_graph=False)
    return [r for batch in batches for r in batch]
