"""topoml.dask on a real distributed.LocalCluster of worker processes: the
serial loop's results in input order, every input form, features and files
made on the workers, failures reported by index, a worker killed mid-run,
a restarted run, and scikit-learn through joblib's Dask backend."""
import os
import signal
import time
import warnings

import numpy as np
import pytest

pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")
import dask.array as da  # noqa: E402
import dask.bag as db  # noqa: E402

import topoml  # noqa: E402
import topoml.dask as tdask  # noqa: E402
from conftest import assert_same_dgms  # noqa: E402


def clouds(count, seed=0, low=20, high=70, dim=3):
    """Seeded clouds of varied sizes, so that tasks finish out of order."""
    rng = np.random.default_rng(seed)
    return [rng.random((int(rng.integers(low, high)), dim)) for _ in range(count)]


def serial(cs, **options):
    return [topoml.barcodes(X, progress=False, **options).diagrams for X in cs]


@pytest.fixture(scope="module")
def client():
    # Worker processes, one thread each: what a cluster of machines looks like.
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None, silence_logs=40)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def same(results, expected):
    assert len(results) == len(expected)
    for r, dgms in zip(results, expected):
        assert len(r.diagrams) == len(dgms)
        for a, b in zip(r.diagrams, dgms):
            assert_same_dgms(a, b)


def test_list_gives_the_serial_results_in_input_order(client):
    cs = clouds(30)
    rs = tdask.barcodes(cs, maxdim=2, client=client, batch_size=3)
    same(rs, serial(cs, maxdim=2))
    assert all(isinstance(r, topoml.BarcodeResult) for r in rs)


def test_active_client_is_used_without_naming_it(client):
    cs = clouds(6, seed=1)
    with distributed.get_task_stream(client) as ts:
        rs = tdask.barcodes(cs, maxdim=1)
    same(rs, serial(cs, maxdim=1))
    assert any("topoml-barcodes" in str(t["key"]) for t in ts.data)


def test_local_threads_without_a_cluster():
    # In a process of its own: no Client there, so Dask's local threads run it.
    import subprocess
    import sys
    code = ("import numpy as np, topoml, topoml.dask as t\n"
            "rng = np.random.default_rng(2)\n"
            "cs = [rng.random((30, 3)) for _ in range(8)]\n"
            "rs = t.barcodes(cs, maxdim=1, progress=True)\n"
            "ok = all(all(np.array_equal(a, b) for a, b in zip(r.diagrams,\n"
            "         topoml.barcodes(X, maxdim=1, progress=False).diagrams))\n"
            "         for r, X in zip(rs, cs))\n"
            "print(len(rs), ok)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=dict(os.environ), timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[-2:] == ["8", "True"]
    assert "100%" in r.stdout + r.stderr or "Completed" in r.stdout + r.stderr


def test_dask_array_stack_stays_in_the_cluster(client):
    rng = np.random.default_rng(3)
    stack = rng.random((10, 40, 3))
    arr = da.from_array(stack, chunks=(3, 20, 3))  # split points too: rechunked
    rs = tdask.barcodes(arr, maxdim=1, client=client)
    same(rs, serial(list(stack), maxdim=1))


def test_bag_in_order_and_bad_shape_refused(client):
    cs = clouds(9, seed=4)
    rs = tdask.barcodes(db.from_sequence(cs, npartitions=4), maxdim=1, client=client)
    same(rs, serial(cs, maxdim=1))
    with pytest.raises(ValueError, match="n_clouds, n_points, dim"):
        tdask.barcodes(da.zeros((4, 5)), client=client)
    with pytest.raises(TypeError, match="clouds must be"):
        tdask.barcodes(iter(cs), client=client)


def test_paths_are_read_on_the_workers(client, tmp_path):
    cs = clouds(6, seed=5)
    paths = []
    for k, X in enumerate(cs):
        if k % 3 == 0:
            p = tmp_path / ("c%d.npy" % k)
            np.save(p, X)
        elif k % 3 == 1:
            p = tmp_path / ("c%d.csv" % k)
            np.savetxt(p, X, delimiter=",", fmt="%.17g")
        else:
            p = tmp_path / ("c%d.npz" % k)
            np.savez(p, X=X)
        paths.append(str(p))
    bag = tdask.barcodes(paths, maxdim=1, client=client, compute=False)
    # Only the paths are in the graph, not the clouds.
    graph = dict(bag.__dask_graph__())
    assert not any(isinstance(v, np.ndarray) for task in graph.values()
                   for v in (task if isinstance(task, tuple) else (task,)))
    same(client.compute(bag).result(), serial(cs, maxdim=1))


def test_bad_file_names_the_file(tmp_path):
    p = tmp_path / "ragged.txt"
    p.write_text("0 0\n1 1 1\n")
    with pytest.raises(ValueError, match="ragged.txt"):
        tdask.read_cloud(str(p))


def test_features_are_computed_on_the_workers(client):
    cs = clouds(8, seed=6)
    params = {"birth_range": (0, 1), "pers_range": (0, 1), "resolution": (5, 5), "dims": [1]}
    images = tdask.barcodes(cs, maxdim=1, client=client, features="persistence_images",
                            feature_params=params)
    for X, img in zip(cs, images):
        d = topoml.barcodes(X, maxdim=1, progress=False).diagrams
        want = topoml.persistence_images([d[1]], birth_range=(0, 1), pers_range=(0, 1),
                                         resolution=(5, 5))
        np.testing.assert_array_equal(img, want)
    ent = tdask.barcodes(cs, maxdim=1, client=client, features="entropy")
    assert len(ent) == len(cs) and all(len(e) == 2 for e in ent)
    n1 = tdask.barcodes(cs, maxdim=1, client=client, features=lambda r: len(r.diagrams[1]))
    assert n1 == [len(d[1]) for d in serial(cs, maxdim=1)]
    with pytest.raises(ValueError, match="features must be"):
        tdask.barcodes(cs, features="nope", client=client)


def poisoned(count, bad, seed=7):
    cs = clouds(count, seed=seed)
    for k in bad:
        cs[k] = cs[k].copy()
        cs[k][2, 1] = np.nan
    return cs


def test_a_failing_cloud_is_named_by_its_index(client):
    cs = poisoned(10, [3, 7])
    with pytest.raises(tdask.CloudError, match="cloud 3: ValueError:.*NaN") as e:
        tdask.barcodes(cs, client=client, batch_size=10)
    assert e.value.index == 3
    rs = tdask.barcodes(cs, client=client, errors="return", batch_size=2)
    assert [k for k, r in enumerate(rs) if isinstance(r, tdask.Failure)] == [3, 7]
    assert rs[3].index == 3 and rs[3].error == "ValueError" and "NaN" in rs[3].reason
    good = [X for k, X in enumerate(cs) if k not in (3, 7)]
    same([r for r in rs if not isinstance(r, tdask.Failure)], serial(good))
    with pytest.warns(RuntimeWarning, match="2 of 10 clouds failed.*cloud 3:.*cloud 7:"):
        rs = tdask.barcodes(cs, client=client, errors="skip")
    same(rs, serial(good))
    with pytest.raises(ValueError, match="errors must be"):
        tdask.barcodes(cs, client=client, errors="ignore")


def test_memory_limit_fails_one_cloud_alone(client):
    rng = np.random.default_rng(8)
    cs = [rng.random((30, 3)), rng.random((1500, 3)), rng.random((30, 3))]
    rs = tdask.barcodes(cs, maxdim=2, client=client, errors="return", max_memory=16 << 20)
    assert isinstance(rs[1], tdask.Failure) and rs[1].error == "MemoryLimitError"
    assert "memory" in rs[1].reason
    same([rs[0], rs[2]], serial([cs[0], cs[2]], maxdim=2))
    # The workers' own limit is back afterwards: H0 of the large cloud needs
    # more than 16 MiB too (its edges), and now passes.
    big = tdask.barcodes([cs[1]], maxdim=0, client=client, batch_size=1)
    same(big, serial([cs[1]], maxdim=0))


def test_output_files_written_by_workers_and_a_restart_skips_them(client, tmp_path):
    cs = clouds(12, seed=9)
    out = tmp_path / "out"
    first = tdask.barcodes(cs, maxdim=1, client=client, output=str(out), batch_size=4)
    assert [w.index for w in first] == list(range(12))
    assert not any(w.skipped for w in first)
    for w, dgms in zip(first, serial(cs, maxdim=1)):
        got = w.load()
        assert got["index"] == w.index
        for a, b in zip(got["diagrams"], dgms):
            assert_same_dgms(a, b)
    # A run stopped half-way: two files missing (one of them torn).
    os.remove(first[4].path)
    os.remove(first[9].path)
    (out / "cloud-00000009.123.tmp.npz").write_bytes(b"torn")
    again = tdask.barcodes(cs, maxdim=1, client=client, output=str(out), batch_size=4)
    assert [w.index for w in again if not w.skipped] == [4, 9]
    for w, dgms in zip(again, serial(cs, maxdim=1)):
        for a, b in zip(w.load()["diagrams"], dgms):
            assert_same_dgms(a, b)
    feats = tdask.barcodes(cs[:3], maxdim=1, client=client, output=str(tmp_path / "f"),
                           features="betti_curve", feature_params={"grid": [0.1, 0.2, 0.3]})
    assert feats[0].load()["features"].shape == (2, 3)


def test_a_worker_killed_mid_run_loses_nothing(client):
    import threading
    rng = np.random.default_rng(10)
    cs = [rng.random((160, 4)) for _ in range(24)]
    expected = serial(cs, maxdim=2)
    pids = client.run(os.getpid)
    out = {}

    def run():
        out["results"] = tdask.barcodes(cs, maxdim=2, client=client, batch_size=1)

    runner = threading.Thread(target=run)
    runner.start()

    def finished(dask_scheduler):
        return sum(1 for t in dask_scheduler.tasks.values()
                   if t.state == "memory" and "topoml-barcodes" in str(t.key))

    # Let some tasks finish, then kill a worker while others are running.
    deadline = time.monotonic() + 120
    while client.run_on_scheduler(finished) < 3 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert runner.is_alive(), "the run ended before a worker could be killed"
    victim = sorted(pids.values())[0]
    os.kill(victim, signal.SIGKILL)
    runner.join(timeout=300)
    assert not runner.is_alive()
    same(out["results"], expected)
    client.wait_for_workers(2, timeout=60)
    assert victim not in client.run(os.getpid).values()


def test_sklearn_transformer_n_jobs_on_the_dask_backend(client):
    joblib = pytest.importorskip("joblib")
    from topoml.sklearn import VietorisRipsPersistence
    cs = clouds(8, seed=11)
    want = VietorisRipsPersistence(maxdim=1).fit_transform(cs)
    with distributed.get_task_stream(client) as ts:
        with joblib.parallel_backend("dask"):
            got = VietorisRipsPersistence(maxdim=1, n_jobs=2).fit_transform(cs)
    np.testing.assert_array_equal(got, want)
    assert len(ts.data) >= 1  # the clouds ran as tasks on the cluster


def test_grid_search_over_a_pipeline_on_the_dask_backend(client):
    joblib = pytest.importorskip("joblib")
    sklearn = pytest.importorskip("sklearn")  # noqa: F841
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import Pipeline
    from topoml.sklearn import PersistenceImage, VietorisRipsPersistence
    rng = np.random.default_rng(12)
    t = np.linspace(0, 2 * np.pi, 30, endpoint=False)
    circles = [np.c_[np.cos(t), np.sin(t)] + 0.05 * rng.standard_normal((30, 2))
               for _ in range(10)]
    blobs = [0.3 * rng.standard_normal((30, 2)) for _ in range(10)]
    X, y = circles + blobs, np.r_[np.ones(10), np.zeros(10)]
    pipe = Pipeline([("vr", VietorisRipsPersistence(maxdim=1)),
                     ("img", PersistenceImage(n_bins=5)), ("lr", LogisticRegression())])
    grid = {"img__sigma": [0.05, 0.2], "lr__C": [0.1, 1.0]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = GridSearchCV(pipe, grid, cv=2).fit(X, y)
        with distributed.get_task_stream(client) as ts:
            with joblib.parallel_backend("dask"):
                on_dask = GridSearchCV(pipe, grid, cv=2, n_jobs=-1).fit(X, y)
    assert on_dask.best_params_ == plain.best_params_
    np.testing.assert_allclose(on_dask.cv_results_["mean_test_score"],
                               plain.cv_results_["mean_test_score"])
    assert len(ts.data) >= 8  # 4 settings x 2 folds ran as tasks


def test_arguments_are_checked_before_any_task():
    with pytest.raises(ValueError, match="max_memory"):
        tdask.barcodes(clouds(2), max_memory=-1)
    with pytest.raises(ValueError, match="batch_size"):
        tdask.barcodes(clouds(2), batch_size=0, client=None)
    with pytest.raises(ValueError, match="feature_params needs features"):
        tdask.barcodes(clouds(2), feature_params={"grid": [1]})
    with pytest.raises(ValueError, match="maxdim"):
        tdask.barcodes(clouds(2), maxdim=-1)


def test_import_topoml_does_not_import_dask(build_dir):
    import subprocess
    import sys
    code = "import sys, topoml; print('dask' in sys.modules, 'distributed' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=dict(os.environ), check=True).stdout.split()
    assert out == ["False", "False"]


def test_docstring_example():
    import doctest
    result = doctest.testmod(tdask, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
