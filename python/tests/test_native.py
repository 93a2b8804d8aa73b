"""topoml's own calls: barcodes() and its result, the backend metadata and
selection, errors as Python exceptions with the C message, several Python
threads computing at once, progress, cancelling and Ctrl-C."""
import math
import os
import signal
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import topoml
from conftest import assert_same_dgms, cloud


def test_barcodes_result_object():
    X = cloud(np.random.default_rng(0), "circle", 40)
    r = topoml.barcodes(X, maxdim=1)
    assert isinstance(r, topoml.BarcodeResult)
    assert len(r.diagrams) == 2 and len(r) == 2
    for d in r.diagrams:
        assert d.dtype == np.float64 and d.ndim == 2 and d.shape[1] == 2
        assert np.all(d[:, 0] <= d[:, 1])
    assert np.isinf(r.diagrams[0][:, 1]).sum() == 1
    assert r.backend in topoml.available_backends() and r.selection_reason
    assert 0 < r.timings["compute"] <= r.timings["c"] <= r.timings["total"]
    assert (r.maxdim, r.threshold, r.modulus, r.complete) == (1, math.inf, 2, True)
    assert r.stopped is None
    # the one long H1 bar of a circle
    assert len(r.diagrams[1]) >= 1 and np.ptp(r.diagrams[1], axis=1).max() > 0.5
    assert_same_dgms(list(r), topoml.ripser(X)["dgms"])


def test_result_arrays_own_their_memory():
    """Each diagram is its own array (not a view into a shared buffer) and
    stays valid after the result and the C barcode are gone."""
    import gc
    r = topoml.barcodes(cloud(np.random.default_rng(1), "uniform", 40), maxdim=1)
    d0, d1 = r.diagrams
    want = (d0.copy(), d1.copy())
    assert not isinstance(d0.base, np.ndarray) and not isinstance(d1.base, np.ndarray)
    del r
    gc.collect()
    for _ in range(5):  # reuse freed memory
        topoml.barcodes(cloud(np.random.default_rng(2), "uniform", 40), maxdim=1)
    np.testing.assert_array_equal(d0, want[0])
    np.testing.assert_array_equal(d1, want[1])
    d0[0, 0] = -1.0  # writable, and no other array changes with it
    assert want[0][0, 0] != -1.0


def test_threshold_keeps_classes_alive_at_it():
    X = cloud(np.random.default_rng(2), "uniform", 30)
    r = topoml.barcodes(X, maxdim=1, threshold=0.2)
    assert np.all(r.diagrams[0][:, 0] == 0)
    finite = r.diagrams[0][np.isfinite(r.diagrams[0][:, 1])]
    assert np.all(finite[:, 1] <= 0.2)


def test_backends_mirror_capability_records():
    bs = topoml.backends()
    assert bs[0].name == "scalar" and bs[0].path is None and bs[0].enabled
    assert bs[0].gate_state == "enabled" and bs[0].gate_reason
    assert bs[0].probe_ok and bs[0].abi_version >= 1
    ops = {c.op: c for c in bs[0].capabilities}
    assert set(ops) >= {"distances", "edges", "rips", "image"}
    assert ops["rips"].max_modulus >= 3 and "euclidean" in ops["rips"].metrics
    assert set(ops["rips"].inputs) == {"points", "condensed", "sparse"}
    assert set(ops["distances"].dtypes) == {"float32", "float64"}
    assert ops["rips"].device.startswith("cpu")
    assert bs[0].isolation == "host"  # the built-in reference runs in this process
    for b in bs:
        assert b.gate_state in ("enabled", "disabled", "unsupported", "rejected")
        assert b.selection in ("auto", "by-name")
        assert b.isolation in ("host", "process")
        # the sandbox's walls are said for a backend in a helper process only
        assert (b.sandbox is None) == (b.isolation == "host")
    assert "scalar" in topoml.available_backends()
    assert set(topoml.available_backends()) == {b.name for b in bs if b.enabled}


def test_select_backend():
    X = cloud(np.random.default_rng(3), "uniform", 20)
    try:
        topoml.select_backend("scalar")
        assert topoml.selected_backend() == "scalar"
        assert topoml.barcodes(X).backend == "scalar"
        seen = []
        t = threading.Thread(target=lambda: seen.append(topoml.barcodes(X).backend))
        t.start()
        t.join()
        assert seen == ["scalar"]
    finally:
        topoml.select_backend(None)
    assert topoml.selected_backend() is None
    with pytest.raises(ValueError, match="no backend named 'nonesuch'"):
        topoml.select_backend("nonesuch")
    with pytest.raises((ValueError, RuntimeError), match="nonesuch"):
        topoml.barcodes(X, backend="nonesuch")
    assert topoml.barcodes(X, backend="scalar").backend == "scalar"


def test_the_reference_starts_no_plugin_probe(build_dir, tmp_path):
    # A plugin whose probe writes to TOPOML_TEST_PROBE_LOG when it runs: the
    # reference, chosen by select_backend or backend=, needs no probe; the
    # listing does (tests/fault_plugins/fault.c, tests/cli/test_probe_on_need.py).
    log = tmp_path / "probes.log"
    env = dict(os.environ, TOPOML_TEST_PROBE_LOG=str(log), TOPOML_TEST_PROBE_MS="50",
               TOPOML_PLUGIN_PATH=os.path.join(build_dir, "fault-plugins", "probe-slow"))
    env.pop("TOPOML_CONFIG", None)
    script = textwrap.dedent("""
        import sys, numpy as np, topoml
        X = np.random.default_rng(0).random((30, 3))
        topoml.select_backend("scalar")
        assert topoml.barcodes(X, maxdim=1).backend == "scalar"
        assert topoml.ripser(X)["dgms"][0].shape[0] == 30
        topoml.select_backend(None)
        assert topoml.barcodes(X, maxdim=1, backend="scalar").backend == "scalar"
        if sys.argv[1] == "list":
            topoml.backends()
    """)
    for mode, want in (("reference", ""), ("list", "fault")):
        if log.exists():
            log.unlink()
        r = subprocess.run([sys.executable, "-c", script, mode], env=env, capture_output=True,
                           text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        ran = log.read_text() if log.exists() else ""
        assert (want in ran) if want else ran == "", (mode, ran)


WRONG_AT_RUN_TIME = textwrap.dedent("""
    import json, sys, warnings, numpy as np, topoml
    t = np.linspace(0, 2 * np.pi, 40, endpoint=False)
    X = np.c_[np.cos(t), np.sin(t)] + np.random.default_rng(2).normal(0, 0.05, (40, 2))
    want = dgms = topoml.barcodes(X, backend="scalar").diagrams
    if sys.argv[1] == "image":  # the reference's images, then auto choice's
        topoml.select_backend("scalar")
        want = [topoml.persistence_images(dgms[1], (0, 1), (0, 1), resolution=(8, 6))]
        topoml.select_backend(None)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        if sys.argv[1] == "image":
            got = [topoml.persistence_images(dgms[1], (0, 1), (0, 1), resolution=(8, 6))]
            backend, reason = "", "-"
        elif sys.argv[1] == "ripser":
            r = topoml.ripser(X)
            got, backend, reason = r["dgms"], r.backend, ""
        else:
            r = topoml.barcodes(X)
            got, backend, reason = r.diagrams, r.backend, r.selection_reason
    same = all(np.array_equal(np.sort(g, 0), np.sort(w, 0)) for g, w in zip(got, want))
    gate = {b.name: b.gate_state for b in topoml.backends()}
    print(json.dumps({"backend": backend, "reason": reason, "same": same, "gate": gate,
                      "warnings": [(w.category.__name__, str(w.message)) for w in seen]}))
""")


@pytest.mark.parametrize("call", ["barcodes", "ripser", "image"])
def test_a_plugin_wrong_at_run_time_gives_the_reference_answer_and_a_warning(build_dir,
                                                                             tmp_path, call):
    """A plugin that behaves under topoml-conformance and is wrong elsewhere
    (tests/gate_faults, GF_EXE: certified on first use, then wrong in this
    process): the verification catches it, the caller gets the reference's
    diagrams, a BackendWarning says what happened, and the plugin is
    disabled, here and (its certificate revoked) in the next process."""
    import json
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"),
               TOPOML_PLUGIN_PATH=os.path.join(build_dir, "gate-faults", "exe"))
    env.pop("TOPOML_CONFIG", None)
    runs = []
    for _ in range(2):
        r = subprocess.run([sys.executable, "-c", WRONG_AT_RUN_TIME, call], env=env,
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        runs.append(json.loads(r.stdout))
    first, second = runs
    assert first["same"], first
    if call != "image":  # images say no backend
        assert first["backend"] == "scalar", first
    if call == "barcodes":
        assert "gf-exe" in first["reason"] and "wrong" in first["reason"], first
    assert first["gate"]["gf-exe"] == "rejected", first
    warned = [m for c, m in first["warnings"] if c == "BackendWarning"]
    assert any("gf-exe" in m and "wrong" in m for m in warned), first["warnings"]
    assert any("revoked" in m for m in warned), first["warnings"]
    # The next process finds the revoked certificate: not chosen (another
    # backend may be: the build tree's plugins are found too), no warning of
    # a wrong answer, the same diagrams.
    assert second["same"] and second["backend"] != "gf-exe", second  # "" for images
    assert second["gate"]["gf-exe"] != "enabled", second
    assert not any("wrong" in m for c, m in second["warnings"]), second["warnings"]


def test_select_backend_probes_only_the_named_plugin(build_dir, tmp_path):
    # Two plugins whose probes write to TOPOML_TEST_PROBE_LOG: selecting one
    # by name probes its file (topoml-backend-fault-accel.so) alone; the
    # listing probes the other too (docs/architecture.md, "Loading a plugin").
    log = tmp_path / "probes.log"
    faults = os.path.join(build_dir, "fault-plugins")
    env = dict(os.environ, TOPOML_TEST_PROBE_LOG=str(log), TOPOML_TEST_PROBE_MS="50",
               TOPOML_PLUGIN_PATH=os.path.join(faults, "probe-slow") + ":" +
               os.path.join(faults, "accel"))
    env.pop("TOPOML_CONFIG", None)
    script = textwrap.dedent("""
        import sys, topoml
        try:
            topoml.select_backend("fault-accel")
        except ValueError as e:  # not certified: disabled until its first use
            assert "fault-accel" in str(e), e
        finally:
            topoml.select_backend(None)
        with open(sys.argv[1]) as f:
            print(sorted(l.split()[0] for l in f if l.strip()))
        topoml.backends()
        with open(sys.argv[1]) as f:
            print(sorted(l.split()[0] for l in f if l.strip()))
    """)
    log.write_text("")
    r = subprocess.run([sys.executable, "-c", script, str(log)], env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\n")[:2] == ["['fault-accel']", "['fault-accel', 'fault-probe-slow']"], \
        r.stdout


@pytest.mark.parametrize("call", ["barcodes", "ripser", "ripser_parallel"])
def test_bad_input_raises_with_message(call):
    f = getattr(topoml, call)
    nan = np.array([[0.0, 1.0], [np.nan, 2.0], [1.0, 1.0]])
    with pytest.raises(ValueError, match=r"(?i)nan|finite"):
        f(nan)
    with pytest.raises(ValueError, match="2-D"):
        f(np.zeros((2, 2, 2)))
    with pytest.raises(ValueError, match="real numbers"):
        f(np.array([["a", "b"]]))
    with pytest.raises(ValueError, match="maxdim"):
        f(np.zeros((3, 2)), maxdim=-1)
    with pytest.raises(ValueError, match="coeff"):
        f(np.zeros((3, 2)), coeff=1) if call != "barcodes" else f(np.zeros((3, 2)), modulus=1)
    with pytest.raises(ValueError, match="thresh"):
        f(np.zeros((3, 2)), thresh=-1.0) if call != "barcodes" else f(np.zeros((3, 2)),
                                                                       threshold=-1.0)


def test_bad_distance_matrices():
    D = np.array([[0, 1, 2], [1, 0, 3], [2, 3, 0]], dtype=float)
    with pytest.raises(ValueError, match="not symmetric"):
        topoml.ripser(D + np.triu(np.ones((3, 3)), 1), distance_matrix=True)
    with pytest.raises(ValueError, match="diagonal"):
        topoml.ripser(D + np.eye(3), distance_matrix=True)
    with pytest.raises(ValueError, match="negative"):
        topoml.ripser(-D, distance_matrix=True)
    with pytest.raises(ValueError, match="square"):
        topoml.ripser(D[:2], distance_matrix=True)
    with pytest.raises(ValueError, match="n\\(n-1\\)/2"):
        topoml.barcodes(np.ones(4))
    with pytest.raises(ValueError, match="finite"):
        topoml.barcodes(np.array([1.0, np.inf, 2.0]))
    with pytest.raises(ValueError, match="prime|modulus"):
        topoml.ripser(D, distance_matrix=True, coeff=4)


def test_no_points_is_an_error():
    # An empty input is refused as an empty file is, by every entry point
    # and every input kind (ripser.py raises ValueError for an empty point
    # cloud too; for an empty distance matrix it reports one point).
    for X in (np.zeros((0, 2)), np.zeros((0, 0)), np.zeros((0, 3), dtype=np.float32)):
        with pytest.raises(ValueError, match="no points"):
            topoml.barcodes(X)
        with pytest.raises(ValueError, match="no points"):
            topoml.ripser(X)
    with pytest.raises(ValueError, match="no points"):
        topoml.ripser(np.zeros((0, 0)), distance_matrix=True)


def test_small_inputs():
    assert topoml.barcodes(np.zeros((1, 2))).diagrams[0].tolist() == [[0, math.inf]]
    assert topoml.barcodes(np.array([[0.0], [1.0]])).diagrams[0].tolist() == [[0, 1], [0, math.inf]]


def test_memory_limit_is_memory_error():
    ctx = topoml._context.context()
    old = ctx.max_memory()
    ctx.set_max_memory(1 << 16)
    try:
        with pytest.raises(MemoryError):
            topoml.barcodes(cloud(np.random.default_rng(0), "uniform", 400, 3), maxdim=2)
    finally:
        ctx.set_max_memory(old)


@pytest.fixture
def memory_limit():
    """Sets the calling thread's memory limit; the old one comes back after."""
    ctx = topoml._context.context()
    old = ctx.max_memory()
    yield ctx.set_max_memory
    ctx.set_max_memory(old)


def _rows(d):
    return d[np.lexsort((d[:, 1], d[:, 0]))]


def _limit_outcomes(call, full, set_limit):
    """Run call() under limits from 4 MiB down to 4 KiB: each outcome is the
    whole barcode, a refusal before any work (partial None), or the finished
    dimensions of a computation stopped mid-way, exactly the first ones of
    the full diagrams. Counts of each."""
    seen = {"whole": 0, "refused": 0, "partial": 0}
    limit = 4 << 20
    while limit > 4096:
        set_limit(limit)
        try:
            dgms = call()
        except topoml.MemoryLimitError as e:
            assert isinstance(e, MemoryError)
            assert "memory limit" in str(e)
            p = e.partial
            if p is None:
                seen["refused"] += 1
            else:
                seen["partial"] += 1
                assert isinstance(p, topoml.BarcodeResult)
                assert p.complete is False
                assert p.stopped == {"dim": p.maxdim + 1, "reason": "memory limit"}
                assert "dimension %d stopped" % (p.maxdim + 1) in str(e)
                assert len(p.diagrams) == p.maxdim + 1 < len(full)
                assert p.backend and p.selection_reason
                for got, want in zip(p.diagrams, full):
                    # the partial result is topoml's own (float64); giotto-ph's
                    # full diagrams are float32
                    np.testing.assert_array_equal(_rows(got.astype(want.dtype)), _rows(want))
        else:
            seen["whole"] += 1
            assert_same_dgms(dgms, full)
        limit = limit * 7 // 8
    return seen


@pytest.mark.parametrize("backend", [None, "scalar"])
@pytest.mark.parametrize("kind", ["points", "distances"])
def test_memory_limit_mid_way_keeps_the_finished_dimensions(memory_limit, backend, kind):
    X = np.random.default_rng(11).random((60, 4))
    if kind == "distances":
        X = topoml.features.squareform(topoml.distances(X))
    full = topoml.barcodes(X, maxdim=3, collapse=False, backend=backend).diagrams
    seen = _limit_outcomes(lambda: topoml.barcodes(X, maxdim=3, collapse=False,
                                                   backend=backend).diagrams, full, memory_limit)
    assert all(seen.values()), seen


@pytest.mark.parametrize("size,bytes_", [("300KiB", 300 << 10), ("2MB", 2000000)])
def test_memory_limit_comes_from_the_configuration(tmp_path, size, bytes_):
    """docs/python.md's way to set the limit: max_memory in the file named
    by $TOPOML_CONFIG."""
    cfg = tmp_path / "topoml.yaml"
    cfg.write_text("max_memory: %s\n" % size)
    out = subprocess.run([sys.executable, "-c", "import topoml; "
                          "print(topoml._context.context().max_memory())"],
                         env=dict(os.environ, TOPOML_CONFIG=str(cfg)), capture_output=True,
                         text=True, check=True).stdout
    assert int(out) == bytes_


@pytest.mark.parametrize("call", ["ripser", "ripser_parallel"])
def test_memory_limit_mid_way_in_the_compatible_calls(memory_limit, call):
    """ripser.py's and giotto-ph's calls raise the same MemoryLimitError,
    with the finished dimensions as a BarcodeResult."""
    X = np.random.default_rng(12).random((60, 4))
    fn = getattr(topoml, call)
    kw = {"collapse_edges": False} if call == "ripser_parallel" else {}
    full = fn(X, maxdim=3, **kw)["dgms"]
    seen = _limit_outcomes(lambda: fn(X, maxdim=3, **kw)["dgms"], full, memory_limit)
    assert all(seen.values()), seen


def test_threads_give_the_same_answers():
    rng = np.random.default_rng(9)
    clouds = [cloud(rng, "uniform", 60, 3) for _ in range(8)]
    want = [topoml.barcodes(X, maxdim=2).diagrams for X in clouds]
    got = [None] * len(clouds)
    errors = []

    def work(k):
        try:
            for _ in range(3):
                got[k] = topoml.barcodes(clouds[k], maxdim=2).diagrams
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(clouds))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for g, w in zip(got, want):
        assert_same_dgms(g, w, tol=0)


def long_cloud():
    return np.random.default_rng(1).uniform(size=(200, 4))


def test_gil_is_released_during_compute_and_a_callback_cancels():
    """A long computation in one thread; while it runs, the main thread
    computes a small one to the end (impossible if the first held the GIL),
    then cancels the first through its progress callback."""
    started, stop = threading.Event(), threading.Event()
    state = {}

    def progress(stage, done, total):
        started.set()
        return stop.is_set()

    def long_work():
        try:
            topoml.barcodes(long_cloud(), maxdim=3, progress=progress)
            state["outcome"] = "finished"
        except topoml.CancelledError as e:
            state["outcome"] = "cancelled"
            state["message"] = str(e)

    t = threading.Thread(target=long_work)
    t.start()
    assert started.wait(60)
    small = topoml.barcodes(cloud(np.random.default_rng(0), "circle", 30))
    assert "outcome" not in state  # the long one is still running
    stop.set()
    t.join(60)
    assert state["outcome"] == "cancelled" and "cancel" in state["message"]
    assert len(small.diagrams[1]) >= 1


def test_progress_callback_exception_propagates():
    class Boom(Exception):
        pass

    def progress(stage, done, total):
        raise Boom(stage)

    with pytest.raises(Boom):
        topoml.barcodes(long_cloud(), maxdim=3, progress=progress)


def test_progress_bar_writes_to_stderr_when_asked(capfd):
    from topoml import _progress
    bar = _progress.Bar(delay=0)
    bar("dim 1", 5, 10)
    bar.close()
    err = capfd.readouterr().err
    assert "dim 1" in err and "5" in err
    assert _progress.resolve(False)[0] is None
    with pytest.raises(TypeError):
        _progress.resolve("yes")


def test_silent_unless_interactive(capfd):
    topoml.barcodes(long_cloud()[:80], maxdim=2)
    out = capfd.readouterr()
    assert out.out == "" and out.err == ""


CTRL_C = textwrap.dedent("""
    import sys, time, numpy as np, topoml
    X = np.random.default_rng(1).uniform(size=(400, 8))  # ~20 s uninterrupted
    seen = []
    def progress(stage, done, total):
        if not seen:
            print("started", flush=True)
        seen.append(time.monotonic())
        return False
    try:
        topoml.barcodes(X, maxdim=3, progress=progress)
        print("finished")
    except KeyboardInterrupt:
        print("interrupted %.3f" % (time.monotonic() - float(sys.stdin.readline())))
""")


def test_ctrl_c_interrupts_within_a_second():
    """SIGINT, as a terminal's Ctrl-C or Jupyter's interrupt sends it, ends
    a long computation with KeyboardInterrupt within a second."""
    interrupt_within_a_second(CTRL_C)


def interrupt_within_a_second(script, settle=0.0):
    """Run `script` (it prints "started", computes, and on KeyboardInterrupt
    prints "interrupted SECONDS" since the time it reads on stdin), send it
    SIGINT `settle` seconds after it started, and check it stopped within a
    second."""
    import time
    p = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True, env=dict(os.environ))
    assert p.stdout.readline().strip() == "started"
    time.sleep(settle)
    t = time.monotonic()
    p.send_signal(signal.SIGINT)
    p.stdin.write("%r\n" % t)
    p.stdin.flush()
    out, _ = p.communicate(timeout=60)
    assert out.startswith("interrupted"), out
    assert float(out.split()[1]) < 1.0, out


@pytest.mark.parametrize("matrix", [False, True])
def test_arrays_go_to_c_as_they_are_with_the_converted_answer(matrix):
    """A float64 or float32 array with non-negative strides goes to the C
    side unconverted (Context.rips_array); any other array is converted in
    Python first. Both give exactly the diagrams of the same values as a
    C-ordered float64 array."""
    rng = np.random.default_rng(21)
    X = rng.uniform(size=(25, 3))
    A = np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1)) if matrix else X
    big = np.zeros((2 * A.shape[0], 3 * A.shape[1]))
    big[::2, ::3] = A
    layouts = {"C": (A, True), "F": (np.asfortranarray(A), True),
               "strided": (big[::2, ::3], True), "float32": (A.astype(np.float32), True),
               "float32 F": (np.asfortranarray(A.astype(np.float32)), True),
               "reversed": (A[::-1, ::-1] if matrix else A[::-1], False),
               "int": ((A * 1000).astype(np.int64), False)}
    ctx = topoml._context.context()
    for name, (B, direct) in layouts.items():
        ref = np.array(B.tolist(), dtype=np.float64)
        want = topoml.barcodes(ref.tolist(), maxdim=2, distance_matrix=matrix).diagrams
        got = topoml.barcodes(B, maxdim=2, distance_matrix=matrix).diagrams
        assert len(got) == len(want) == 3, name
        for g, w in zip(got, want):
            np.testing.assert_array_equal(_rows(g), _rows(w), err_msg=name)
        out = ctx.rips_array(B, matrix, 2, math.inf, 2, 0, 0, 0, None, True, False, False)
        assert (out is not None) == direct, name
        if direct:
            for g, w in zip(out["dgms"], want):
                np.testing.assert_array_equal(_rows(g), _rows(w), err_msg=name)


@pytest.mark.parametrize("layout", ["C", "F", "strided", "float32"])
def test_distance_matrix_checks_every_entry_in_every_layout(layout):
    """A bad entry anywhere (either triangle, the diagonal), in any memory
    layout, is refused naming the entry; what is within the symmetry
    tolerance is accepted and gives the diagrams of the exact matrix."""
    rng = np.random.default_rng(11)
    X = rng.uniform(size=(9, 3))
    D0 = np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1))
    if layout == "float32":
        D0 = D0.astype(np.float32).astype(np.float64)

    def arrange(D):
        if layout == "F":
            return np.asfortranarray(D)
        if layout == "strided":
            big = np.zeros((2 * len(D), 3 * len(D)))
            big[::2, ::3] = D
            return big[::2, ::3]
        if layout == "float32":
            return D.astype(np.float32)
        return np.ascontiguousarray(D)

    want = topoml.ripser(D0, maxdim=1, distance_matrix=True)["dgms"]
    near = D0.copy()
    near[2, 5] *= 1 + 1e-12
    for got in (topoml.ripser(arrange(D0), maxdim=1, distance_matrix=True)["dgms"],
                topoml.ripser(arrange(near), maxdim=1, distance_matrix=True)["dgms"]):
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-6)
    for i, j in [(0, 1), (1, 0), (8, 3), (3, 8), (7, 6)]:
        for value, word in [(np.nan, "NaN|finite"), (np.inf, "inf|finite"),
                            (D0[i, j] + 0.5, "not symmetric")]:
            D = D0.copy()
            D[i, j] = value
            with pytest.raises(ValueError, match=word) as e:
                topoml.ripser(arrange(D), distance_matrix=True)
            assert "(%d, %d)" % (max(i, j), min(i, j)) in str(e.value) \
                or "(%d, %d)" % (i, j) in str(e.value) or "entry" in str(e.value)
    for k in (0, 4, 8):
        D = D0.copy()
        D[k, k] = 0.25
        with pytest.raises(ValueError, match="diagonal entry \\(%d, %d\\)" % (k, k)):
            topoml.ripser(arrange(D), distance_matrix=True)


# ---- The compiled entries (topoml._core.ripser, ripser_parallel, barcodes) ----
#
# Each public call first hands its arguments as given to its compiled entry,
# which does the whole call for the common inputs and returns None for any
# other (the Python function then takes its general path, _rips._ripser,
# _ripser_parallel, _barcodes). Both paths must give the same result, and
# everything the entry leaves to Python must still be checked there.

def _layouts(A):
    """The same values as C, Fortran, strided and float32 arrays."""
    big = np.zeros((2 * A.shape[0], 3 * A.shape[1]))
    big[::2, ::3] = A
    return {"C": A, "F": np.asfortranarray(A), "strided": big[::2, ::3],
            "float32": A.astype(np.float32), "float32 F": np.asfortranarray(A.astype(np.float32))}


def _unaligned(A):
    """A copy of A whose float64 values start one byte off their alignment."""
    raw = np.zeros(A.size * 8 + 1, dtype=np.uint8)
    B = np.frombuffer(raw.data, dtype=np.float64, count=A.size, offset=1).reshape(A.shape)
    B[...] = A
    assert not B.flags.aligned
    return B


def _fast_cases():
    """(call, X, kwargs) the compiled entries take, over every input kind
    and argument they read."""
    rng = np.random.default_rng(31)
    X = rng.uniform(size=(14, 3))
    D = np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1))
    for name, A in _layouts(X).items():
        yield "ripser", A, {}
        yield "ripser", A, {"maxdim": 2, "thresh": 0.6, "coeff": 3, "metric": "manhattan"}
        yield "ripser_parallel", A, {"maxdim": 2, "n_threads": 2, "collapse_edges": True}
        yield "barcodes", A, {"maxdim": 2, "threshold": 1, "modulus": 5, "metric": "cosine",
                              "collapse": False, "n_threads": 1}
    for name, A in _layouts(D).items():
        yield "ripser", A, {"distance_matrix": True, "maxdim": 2}
        yield "ripser", A, {"metric": "precomputed", "thresh": 0.7}
        yield "ripser_parallel", A, {"metric": "precomputed", "metric_params": None}
        yield "barcodes", A, {"distance_matrix": True, "collapse": True, "progress": False}
        yield "barcodes", A, {"metric": "precomputed", "collapse": "auto", "n_threads": -1}
    yield "ripser", _unaligned(X), {}  # left to Python, which copies it
    yield "ripser", _unaligned(D), {"distance_matrix": True}
    yield "ripser", X, {"maxdim": 0, "thresh": 0, "metric": "chebyshev"}
    yield "ripser", X[:1], {}
    yield "barcodes", X, {"metric": "sqeuclidean", "progress": lambda *a: False}


def _general(call):
    from topoml import _rips
    sig = {"ripser": ("maxdim", "thresh", "coeff", "distance_matrix", "do_cocycles", "metric",
                      "n_perm"),
           "ripser_parallel": ("maxdim", "thresh", "coeff", "metric", "metric_params",
                               "nearest_neighbors_params", "weights", "weight_params",
                               "collapse_edges", "n_threads", "return_generators"),
           "barcodes": ("maxdim", "threshold", "modulus", "metric", "backend",
                        "distance_matrix", "metric_params", "progress", "collapse",
                        "n_threads", "cocycles")}[call]
    import inspect
    defaults = inspect.signature(getattr(topoml, call)).parameters

    def run(X, **kw):
        args = [kw.get(k, defaults[k].default) for k in sig]
        if call == "ripser_parallel":  # giotto-ph's unused parameters
            del args[5], args[6]
        return {"ripser": _rips._ripser, "ripser_parallel": _rips._ripser_parallel,
                "barcodes": _rips._barcodes}[call](X, *args)
    return run


def _same_result(got, want, what):
    assert type(got) is type(want), what
    if isinstance(want, topoml.BarcodeResult):
        g, w = dict(vars(got)), dict(vars(want))
        assert list(g) == list(w), what
        assert list(g.pop("timings")) == list(w.pop("timings")) == ["compute", "c", "total"]
        dg, dw = g.pop("diagrams"), w.pop("diagrams")
        assert g == w and all(type(g[k]) is type(w[k]) for k in g), what
    else:
        assert list(got) == list(want), what
        dg, dw = got["dgms"], want["dgms"]
        for k in want:
            if k == "dgms":
                continue
            if isinstance(want[k], np.ndarray):
                assert got[k].dtype == want[k].dtype, what
                np.testing.assert_array_equal(got[k], want[k], err_msg=what)
            else:
                assert got[k] == want[k] and type(got[k]) is type(want[k]), (what, k)
        if isinstance(want, topoml._rips.RipserResult):
            assert got.backend == want.backend, what
            assert list(got.timings) == list(want.timings) == ["compute", "c", "total"], what
            assert 0 < got.timings["compute"] <= got.timings["c"] <= got.timings["total"], what
            assert got._source[1:] == want._source[1:] and got._source[0] is want._source[0]
            np.testing.assert_array_equal(got["dperm2all"], want["dperm2all"], err_msg=what)
    assert len(dg) == len(dw), what
    for a, b in zip(dg, dw):
        # giotto-ph's diagrams are float32, topoml's own and ripser.py's float64
        want_type = np.float32 if what.startswith("ripser_parallel") else np.float64
        assert a.dtype == b.dtype == want_type and a.flags.owndata and a.flags.writeable
        np.testing.assert_array_equal(a, b, err_msg=what)


def test_compiled_entries_give_the_general_paths_results(array_reading):
    """Arrays read as numpy lays them out (numpy's C API's fields, checked
    at import) or through the buffer protocol: the same results."""
    from topoml import _core
    assert _core._numpy_layout() is array_reading
    for call, X, kw in _fast_cases():
        what = "%s %s %s %s" % (call, X.dtype, X.strides, kw)
        fast = getattr(topoml, call)(X, **kw)
        _same_result(fast, _general(call)(X, **kw), what)


def test_numpy_layout_check_finds_numpys_layout():
    """The import-time check of numpy's array layout passes with the numpy
    installed (else every call would take the slower buffer protocol)."""
    from topoml import _core
    assert _core._numpy_layout() is True
    assert _core._numpy_api() is True  # numpy's C API makes the result's arrays


@pytest.mark.parametrize("call", ["barcodes", "ripser", "ripser_parallel"])
def test_public_calls_are_compiled_and_keep_the_python_signature(call):
    """topoml.ripser and the others are compiled callables around their
    Python function: same signature, name, docstring and help, pickled by
    name, bound as a function is; arguments by position or keyword, and the
    TypeErrors of a bad call are the Python function's."""
    import inspect
    import pickle
    import pydoc
    f = getattr(topoml, call)
    py = f.__wrapped__
    assert inspect.isfunction(py) and not inspect.isfunction(f) and inspect.isroutine(f)
    assert inspect.signature(f) == inspect.signature(py)
    assert (f.__name__, f.__qualname__, f.__module__) == (call, call, "topoml._rips")
    assert f.__doc__ == py.__doc__ and "Examples" in f.__doc__
    assert call + str(inspect.signature(py)) in pydoc.render_doc(f, renderer=pydoc.plaintext)
    assert pickle.loads(pickle.dumps(f)) is f
    X = np.random.default_rng(6).uniform(size=(9, 2))
    dgms = (lambda r: r.diagrams) if call == "barcodes" else (lambda r: r["dgms"])
    want = dgms(py(X, 1))
    for got in (f(X), f(X, 1), f(X=X, maxdim=1), f(X, **{"maxdim": 1})):
        assert_same_dgms(dgms(got), want, tol=0)
    if call == "ripser_parallel":  # giotto-ph's parameters neither path reads
        assert_same_dgms(dgms(f(X, nearest_neighbors_params={"a": 1}, weight_params={})), want,
                         tol=0)
    n = len(inspect.signature(py).parameters)
    for args, kw in (((), {}), ((X,), {"nope": 1}), ((X, 1), {"maxdim": 1}),
                     ((X,) * (n + 1), {}), ((X,), {"X": X})):
        with pytest.raises(TypeError) as e:
            f(*args, **kw)
        with pytest.raises(TypeError) as e_py:
            py(*args, **kw)
        assert str(e.value) == str(e_py.value)

    class Holder:
        g = f
    with pytest.raises(ValueError):  # bound: the instance is X, as for a function
        Holder().g()


@pytest.fixture(params=[True, False], ids=["numpy layout", "buffer protocol"])
def array_reading(request):
    """Both ways the compiled entries read an array's description."""
    from topoml import _core
    was = _core._numpy_layout(request.param)
    yield request.param
    _core._numpy_layout(was)


def test_compiled_entries_take_the_common_inputs_and_leave_the_rest(monkeypatch, array_reading):
    """The entries return None for what they leave to Python, and run what
    they take (a returned result)."""
    from topoml import _core
    monkeypatch.delitem(sys.modules, "IPython", raising=False)  # not interactive
    X = np.random.default_rng(3).uniform(size=(10, 2))
    D = np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1))
    inf = math.inf

    def ripser(X, maxdim=1, thresh=inf, coeff=2, dm=False, cocycles=False, metric="euclidean",
               n_perm=None):
        return _core.ripser(X, maxdim, thresh, coeff, dm, cocycles, metric, n_perm)

    def barcodes(X, maxdim=1, threshold=inf, modulus=2, metric="euclidean", backend=None,
                 dm=None, params=None, progress=None, collapse="auto", n_threads=-1,
                 cocycles=False):
        return _core.barcodes(X, maxdim, threshold, modulus, metric, backend, dm, params,
                              progress, collapse, n_threads, cocycles)

    def parallel(X, maxdim=1, thresh=inf, coeff=2, metric="euclidean", params={}, weights=None,
                 collapse=False, n_threads=1, gens=False):
        return _core.ripser_parallel(X, maxdim, thresh, coeff, metric, params, weights,
                                     collapse, n_threads, gens)

    assert ripser(X) is not None and barcodes(X) is not None and parallel(X) is not None
    assert ripser(D, dm=True) is not None and barcodes(D, metric="precomputed") is not None
    assert ripser(X, maxdim=0, thresh=2, coeff=7, metric="l1") is not None
    left = [
        ripser(X.tolist()), ripser(X.astype(np.int64)), ripser(X.astype(">f8")),
        ripser(X[::-1]), ripser(X[None]), ripser(D[0]), ripser(np.asarray(X, np.float16)),
        ripser(X.view(type("Sub", (np.ndarray,), {}))), ripser(_unaligned(X)),
        ripser(X, maxdim=np.int64(1)), ripser(X, maxdim=True), ripser(X, maxdim=-1),
        ripser(X, maxdim=2 ** 40), ripser(X, coeff=1), ripser(X, coeff=2.0),
        ripser(X, thresh=np.float64(1)), ripser(X, thresh=-1.0), ripser(X, thresh=math.nan),
        ripser(X, thresh="1"), ripser(X, thresh=10 ** 400), ripser(X, dm=1),
        ripser(X, cocycles=True), ripser(X, cocycles=0), ripser(X, n_perm=5),
        ripser(X, metric="Euclidean"), ripser(X, metric="minkowski"), ripser(X, metric=len),
        ripser(D + np.eye(10), dm=True), ripser(D[:, :9], dm=True),
        barcodes(X, backend="scalar"), barcodes(X, progress=True), barcodes(X, progress="x"),
        barcodes(X, collapse="AUTO"), barcodes(X, collapse=1), barcodes(X, n_threads=0),
        barcodes(X, n_threads=-2), barcodes(X, n_threads=True), barcodes(X, params={"p": 1}),
        barcodes(D[0]), barcodes(X, cocycles=True), barcodes(X, cocycles=0),
        parallel(X, gens=True), parallel(X, weights="kde"), parallel(X, collapse=1),
        parallel(X, params={"p": 3}), parallel(X, n_threads=2.0),
    ]
    assert all(r is None for r in left), [k for k, r in enumerate(left) if r is not None]
    # In IPython or Jupyter progress=None means a bar: _progress's, in Python.
    monkeypatch.setitem(sys.modules, "IPython", sys)
    assert ripser(X) is None and parallel(X) is None and barcodes(X) is None
    assert barcodes(X, progress=False) is not None


@pytest.mark.parametrize("call", ["barcodes", "ripser", "ripser_parallel"])
def test_what_the_compiled_entries_leave_is_still_checked(call):
    """Arguments the entries leave to Python get the general path's checks
    and messages, or its conversions (numpy integers, np.float64)."""
    f = getattr(topoml, call)
    X = np.random.default_rng(4).uniform(size=(12, 2))
    want = f(X, maxdim=1)["dgms"] if call != "barcodes" else f(X, maxdim=1).diagrams
    dgms = (lambda r: r.diagrams) if call == "barcodes" else (lambda r: r["dgms"])
    thr, mod = ("threshold", "modulus") if call == "barcodes" else ("thresh", "coeff")
    for kw in ({"maxdim": np.int64(1)}, {thr: np.float64(np.inf)}, {mod: np.int32(2)}):
        assert_same_dgms(dgms(f(X, **kw)), want, tol=0)
    for kw, word in (({"maxdim": True}, "maxdim"), ({"maxdim": 1.0}, "maxdim"),
                     ({mod: 2.0}, "coeff"), ({thr: "far"}, "thresh"),
                     ({thr: math.nan}, "thresh")):
        with pytest.raises(ValueError, match=word):
            f(X, **kw)
    if call != "ripser":
        for n in (0, -2, True, 1.5):
            with pytest.raises(ValueError, match="n_threads"):
                f(X, n_threads=n)
        with pytest.raises(ValueError, match="metric_params"):
            f(X, metric_params={"p": 3})
    if call == "barcodes":
        with pytest.raises(ValueError, match="collapse"):
            f(X, collapse="sometimes")
        with pytest.raises(TypeError, match="progress"):
            f(X, progress="yes")
    with pytest.raises(ValueError, match="not symmetric"):
        D = np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1)).astype(np.float32)
        D[3, 1] += 1
        f(D, metric="precomputed")


def test_each_thread_has_its_own_context_and_follows_select_backend():
    """_context.context() is one Context per thread, kept across calls; a
    select_backend() in one thread reaches a thread whose context already
    exists, on its next call."""
    X = np.random.default_rng(5).uniform(size=(20, 2))
    ctx = topoml._context.context()
    assert topoml._context.context() is ctx
    # This context's own choice: each context chooses for itself (its probes
    # and gate states are its own), so the other thread's may differ.
    before = topoml.barcodes(X)
    seen, go, done = {}, threading.Event(), threading.Event()

    def other():
        seen["ctx"] = topoml._context.context()
        first = topoml.barcodes(X)
        seen["first_reason"] = first.selection_reason
        seen["first"] = first.backend
        go.wait(30)
        seen["again"] = topoml._context.context()
        seen["after"] = topoml.barcodes(X).backend
        seen["ripser"] = topoml.ripser(X).backend
        done.set()

    t = threading.Thread(target=other)
    t.start()
    try:
        while "first" not in seen and t.is_alive():
            t.join(0.01)
        topoml.select_backend("scalar")
        go.set()
        t.join(60)
        assert seen["ctx"] is not ctx and seen["again"] is seen["ctx"]
        assert seen["after"] == seen["ripser"] == "scalar"
        assert topoml.barcodes(X).backend == "scalar"
    finally:
        topoml.select_backend(None)
    after = topoml.barcodes(X)
    assert after.backend == before.backend, (before.selection_reason, after.selection_reason,
                                             seen["first"], seen["first_reason"])


CTRL_C_RIPSER = textwrap.dedent("""
    import sys, time, numpy as np, topoml
    X = np.random.default_rng(1).uniform(size=(400, 8))  # ~20 s uninterrupted
    print("started", flush=True)
    try:
        topoml.%s(X, maxdim=3)
        print("finished")
    except KeyboardInterrupt:
        print("interrupted %%.3f" %% (time.monotonic() - float(sys.stdin.readline())))
""")


@pytest.mark.parametrize("call", ["ripser", "ripser_parallel"])
def test_ctrl_c_interrupts_the_compatible_calls(call):
    """No progress function: Ctrl-C still ends the computation within a
    second (the compiled entries look for signals during the work)."""
    interrupt_within_a_second(CTRL_C_RIPSER % call, settle=0.5)  # into the computation


def test_unaligned_arrays_reach_the_c_side_aligned(monkeypatch):
    """An array whose values start off their alignment (numpy.frombuffer at
    an odd offset) is copied before the C side reads it as doubles."""
    from topoml import _core, _inputs
    X = np.random.default_rng(6).uniform(size=(8, 3))
    D = np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1))
    assert _inputs.points(_unaligned(X)).points.flags.aligned
    np.testing.assert_array_equal(_inputs.points(_unaligned(X)).points, X)
    ctx = topoml._context.context()  # the general path's array entry leaves them
    for A, matrix in ((X, False), (D, True)):
        assert ctx.rips_array(_unaligned(A), matrix, 1, math.inf, 2, 0, 0, 0, None, True, False,
                              False) is None
        assert ctx.rips_array(A, matrix, 1, math.inf, 2, 0, 0, 0, None, True, False,
                              False) is not None
    seen = []

    def lower_triangle(A, real=_core.lower_triangle):
        seen.append(A.flags.aligned)
        return real(A)
    monkeypatch.setattr(_core, "lower_triangle", lower_triangle)
    got = _inputs.dense(_unaligned(D)).condensed
    np.testing.assert_array_equal(got, D[np.tril_indices(8, -1)])
    assert seen == [True]


def test_compiled_entries_leave_calls_until_the_types_are_registered():
    """The compiled module loaded alone (before topoml._rips registers the
    result classes and the metric table) leaves every call to Python
    instead of making a result of no class."""
    script = textwrap.dedent("""
        import importlib.util, math, sys, numpy as np
        spec = importlib.util.spec_from_file_location("_core", sys.argv[1])
        core = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(core)
        X = np.random.default_rng(0).uniform(size=(5, 2))
        D = np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1))
        print(core.ripser(X, 1, math.inf, 2, False, False, "euclidean", None),
              core.ripser(D, 1, math.inf, 2, True, False, "euclidean", None),
              core.barcodes(X, 1, math.inf, 2, "euclidean", None, None, None, False, "auto", -1,
                            False),
              core.ripser_parallel(D, 1, math.inf, 2, "precomputed", {}, None, False, 1, False))
    """)
    r = subprocess.run([sys.executable, "-c", script, topoml._core.__file__], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["None"] * 4, r.stdout
