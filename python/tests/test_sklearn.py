"""The scikit-learn transformers: check_estimator, Pipeline and
GridSearchCV, and features equal to the functions they wrap."""
import inspect
import warnings

import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn")
from sklearn.base import clone  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.model_selection import GridSearchCV  # noqa: E402
from sklearn.pipeline import Pipeline, make_pipeline  # noqa: E402
from sklearn.utils.estimator_checks import check_estimator  # noqa: E402

import topoml  # noqa: E402
from topoml.sklearn import (BettiCurve, PersistenceEntropy, PersistenceImage,  # noqa: E402
                            PersistenceLandscape, VietorisRipsPersistence)
from conftest import assert_same_dgms, cloud  # noqa: E402

FEATURES = [PersistenceImage(n_bins=5), BettiCurve(n_bins=10), PersistenceLandscape(n_bins=10),
            PersistenceEntropy()]


# Checks scikit-learn skips for want of something that is not topoml's:
# the array API check without SCIPY_ARRAY_API and array-api-strict, the
# polars ones without polars. Any other skip fails the test.
SKIPS_NOT_OURS = ("check_array_api_input", "polars")


def run_check_estimator(est, expected_failed_checks=None):
    """check_estimator on `est`, every check run: scikit-learn >= 1.6 gives
    each check's result (a skip other than SKIPS_NOT_OURS fails), older
    versions run them one by one with skips made errors."""
    if "on_fail" in inspect.signature(check_estimator).parameters:
        results = check_estimator(est, expected_failed_checks=expected_failed_checks or {},
                                  on_skip=None, on_fail=None)
        bad = [(r["check_name"], r["status"], str(r["exception"])[:300]) for r in results
               if (r["status"] == "failed" and not r["expected_to_fail"]) or
               (r["status"] == "skipped" and not any(k in r["check_name"] + str(r["exception"])
                                                     for k in SKIPS_NOT_OURS))]
        assert not bad, bad
        assert sum(r["status"] == "passed" for r in results) > 30
        return
    ran = 0
    with warnings.catch_warnings():
        warnings.simplefilter("error", category=sklearn.exceptions.SkipTestWarning)
        for e, check in check_estimator(est, generate_only=True):
            name = getattr(check, "func", check).__name__
            if name not in (expected_failed_checks or {}):
                check(e)
                ran += 1
    assert ran > 30


def test_check_estimator_vietoris_rips():
    run_check_estimator(VietorisRipsPersistence())
    run_check_estimator(VietorisRipsPersistence(maxdim=0, n_jobs=2))


def test_tags_both_ways():
    """scikit-learn >= 1.6 reads __sklearn_tags__ (and refuses a class with
    _more_tags alone, the failure of 1.9.1 before both were there); older
    versions read _more_tags. Each class defines both itself."""
    for cls in (VietorisRipsPersistence, PersistenceImage, BettiCurve, PersistenceLandscape,
                PersistenceEntropy):
        defined = set().union(*(vars(k) for k in cls.__mro__ if k.__module__ == "topoml.sklearn"))
        assert {"__sklearn_tags__", "_more_tags"} <= defined, cls
    if hasattr(sklearn.base.BaseEstimator, "__sklearn_tags__"):
        from sklearn.utils import get_tags
        assert get_tags(VietorisRipsPersistence()).transformer_tags.preserves_dtype == ["float64"]
        assert get_tags(PersistenceImage()).input_tags.three_d_array


# Checks a Pipeline fails by itself: it fits its last step in place, so its
# `steps` parameter holds a fitted estimator afterwards.
PIPELINE_OWN_FAILURES = {
    "check_dont_overwrite_parameters": "Pipeline fits its last step in place",
    "check_estimators_overwrite_params": "Pipeline fits its last step in place",
    "check_parameters_default_constructible": "Pipeline's steps parameter has no default",
}


@pytest.mark.parametrize("feature", FEATURES, ids=lambda f: type(f).__name__)
def test_check_estimator_feature_behind_vietoris_rips(feature):
    """check_estimator feeds 2-D arrays, which only VietorisRipsPersistence
    reads, so each feature transformer is checked behind it in a Pipeline:
    every check but the two the Pipeline fails by itself (above), which
    test_feature_transformers_leave_their_parameters_alone covers for the
    feature transformers."""
    pipe = Pipeline([("vr", VietorisRipsPersistence()), ("f", feature)])
    run_check_estimator(pipe, PIPELINE_OWN_FAILURES)


@pytest.mark.parametrize("feature", FEATURES, ids=lambda f: type(f).__name__)
def test_feature_transformers_leave_their_parameters_alone(feature):
    D = VietorisRipsPersistence().fit_transform([cloud(np.random.default_rng(0), "circle", 20)])
    est = clone(feature)
    before = {k: repr(v) for k, v in est.get_params().items()}
    names = set(vars(est))
    est.fit(D)
    assert {k: repr(v) for k, v in est.get_params().items()} == before
    added = set(vars(est)) - names
    assert added and all(a.endswith("_") for a in added)


@pytest.mark.parametrize("feature", FEATURES, ids=lambda f: type(f).__name__)
def test_feature_transformers_pass_the_checks_that_need_no_data(feature):
    from sklearn.utils import estimator_checks as ec
    name = type(feature).__name__
    with warnings.catch_warnings():
        warnings.simplefilter("error", category=sklearn.exceptions.SkipTestWarning)
        for check in (ec.check_parameters_default_constructible, ec.check_no_attributes_set_in_init,
                      ec.check_get_params_invariance, ec.check_set_params):
            check(name, clone(feature))


def labelled_clouds(rng, n):
    X, y = [], []
    for k in range(n):
        if k % 2:
            X.append(cloud(rng, "circle", 30))
        else:
            X.append(rng.normal(0, 0.5, size=(30, 2)))
        y.append(k % 2)
    return X, np.array(y)


def test_pipeline_and_grid_search_learn_circles_from_blobs():
    rng = np.random.default_rng(0)
    X, y = labelled_clouds(rng, 24)
    pipe = Pipeline([("vr", VietorisRipsPersistence(n_jobs=2)),
                     ("img", PersistenceImage(n_bins=6, sigma=0.2)),
                     ("clf", LogisticRegression(max_iter=1000))])
    search = GridSearchCV(pipe, {"img__sigma": [0.1, 0.3], "vr__maxdim": [1]}, cv=3)
    search.fit(X, y)
    Xt, yt = labelled_clouds(np.random.default_rng(1), 10)
    assert search.score(Xt, yt) >= 0.9


def test_diagrams_equal_barcodes():
    rng = np.random.default_rng(2)
    clouds = [cloud(rng, "uniform", n, 3) for n in (10, 25, 40)]
    D = VietorisRipsPersistence(maxdim=2, reduced_homology=False).fit_transform(clouds)
    assert D.shape[0] == 3 and D.shape[2] == 3
    for d, c in zip(D, clouds):
        want = topoml.barcodes(c, maxdim=2).diagrams
        got = [d[(d[:, 2] == q) & (d[:, 1] > d[:, 0])][:, :2] for q in range(3)]
        assert_same_dgms(got, want, tol=0)
    R = VietorisRipsPersistence(maxdim=0).fit_transform(clouds)
    assert not np.isinf(R).any()  # the infinite H0 bar is gone
    T = VietorisRipsPersistence(maxdim=1, threshold=0.3).fit_transform(clouds)
    assert T[:, :, 1].max() <= 0.3


def test_features_equal_the_functions():
    rng = np.random.default_rng(3)
    clouds = [cloud(rng, "circle", 25) for _ in range(3)]
    D = VietorisRipsPersistence().fit_transform(clouds)
    h1 = [d[(d[:, 2] == 1) & (d[:, 1] > d[:, 0])][:, :2] for d in D]
    bc = BettiCurve(n_bins=7, sample_range=(0, 2)).fit(D)
    np.testing.assert_array_equal(bc.transform(D)[:, 7:],
                                  [topoml.betti_curve(d, np.linspace(0, 2, 7)) for d in h1])
    pe = PersistenceEntropy().fit(D).transform(D)
    np.testing.assert_allclose(pe[:, 1], [topoml.entropy(d) for d in h1])
    pl = PersistenceLandscape(n_layers=2, n_bins=5, sample_range=(0, 2)).fit(D).transform(D)
    assert pl.shape == (3, 2 * 2 * 5)
    np.testing.assert_allclose(pl[:, 10:], [topoml.landscapes(d, np.linspace(0, 2, 5), 2).ravel()
                                            for d in h1])
    pi = PersistenceImage(n_bins=4, birth_range=(0, 1), pers_range=(0, 2)).fit(D).transform(D)
    np.testing.assert_allclose(pi[:, 16:], [topoml.persistence_images(
        d, (0, 1), (0, 2), resolution=(4, 4), sigma=0.1).ravel() for d in h1])


def test_bad_inputs_raise():
    with pytest.raises(ValueError, match="NaN|nan|infinity"):
        VietorisRipsPersistence().fit_transform(np.array([[0.0, np.nan]]))
    with pytest.raises(ValueError, match="3-D"):
        PersistenceEntropy().fit(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="death < birth"):
        BettiCurve().fit(np.array([[[1.0, 0.0, 0.0]]]))
    vr = VietorisRipsPersistence().fit(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="features"):
        vr.transform(np.zeros((2, 4)))
    assert clone(vr).get_params() == vr.get_params()


def fitted_pipeline(feature, output=None):
    X = [cloud(np.random.default_rng(k), "circle", 20) for k in range(4)]
    pipe = Pipeline([("vr", VietorisRipsPersistence()), ("f", clone(feature))])
    if output:
        pipe.set_output(transform=output)
    return pipe, X


@pytest.mark.parametrize("feature", FEATURES, ids=lambda f: type(f).__name__)
def test_feature_names_name_every_column(feature):
    pipe, X = fitted_pipeline(feature)
    out = pipe.fit_transform(X)
    names = pipe.get_feature_names_out()
    assert len(names) == out.shape[1] and len(set(names)) == len(names)
    assert all(n.startswith(type(feature).__name__.lower() + "_h") for n in names)
    vr = pipe.named_steps["vr"]
    assert list(vr.get_feature_names_out()) == ["birth", "death", "homology_dimension"]
    assert pipe.named_steps["f"].n_features_in_ == 3


@pytest.mark.skipif(not hasattr(sklearn.base.TransformerMixin, "set_output"),
                    reason="scikit-learn < 1.2 has no set_output")
@pytest.mark.parametrize("feature", FEATURES, ids=lambda f: type(f).__name__)
def test_pipeline_with_pandas_output(feature):
    """set_output(transform="pandas") on a Pipeline reaches every step: the
    diagrams stay 3-D between the steps, the features come out as a
    DataFrame named by get_feature_names_out; the same under set_config."""
    pd = pytest.importorskip("pandas")
    pipe, X = fitted_pipeline(feature, "pandas")
    df = pipe.fit_transform(X)
    assert isinstance(df, pd.DataFrame)
    assert list(df.columns) == list(pipe.get_feature_names_out())
    plain = fitted_pipeline(feature)[0].fit_transform(X)
    np.testing.assert_array_equal(df.to_numpy(), plain)
    with sklearn.config_context(transform_output="pandas"):
        pipe, X = fitted_pipeline(feature)
        assert isinstance(pipe.fit_transform(X), pd.DataFrame)
        assert pipe.named_steps["vr"].transform(X).ndim == 3
    # scikit-learn's check_set_output_transform_pandas also wants a
    # DataFrame input's index on the output: the 3-D diagrams between the
    # steps carry no index (docs/python.md), so the default check only
    from sklearn.utils import estimator_checks as ec
    pipe = Pipeline([("vr", VietorisRipsPersistence()), ("f", clone(feature))])
    ec.check_set_output_transform("Pipeline", pipe)


def test_every_fit_sets_n_features_in():
    rng = np.random.default_rng(4)
    flat = rng.random((3, 7))
    assert VietorisRipsPersistence().fit(flat).n_features_in_ == 7
    clouds = rng.random((3, 10, 4))
    vr = VietorisRipsPersistence().fit(clouds)
    assert vr.n_features_in_ == 4
    assert VietorisRipsPersistence().fit(list(clouds)).n_features_in_ == 4
    with pytest.raises(ValueError, match="3 coordinates per point.*expecting 4"):
        vr.transform(rng.random((2, 10, 3)))
    D = vr.transform(clouds)
    for f in FEATURES:
        assert clone(f).fit(D).n_features_in_ == 3


@pytest.mark.parametrize("feature", [None] + FEATURES,
                         ids=lambda f: "VietorisRips" if f is None else type(f).__name__)
def test_transformers_preserve_float64(feature):
    from sklearn.utils.estimator_checks import check_transformer_preserve_dtypes
    est = VietorisRipsPersistence() if feature is None else Pipeline(
        [("vr", VietorisRipsPersistence()), ("f", clone(feature))])
    check_transformer_preserve_dtypes(type(est).__name__, est)


def test_n_jobs_shares_the_cpus_out(monkeypatch):
    """n_jobs=k > 1 runs k computations at once, each on its share of the
    CPUs (n_threads), not k computations each starting a thread per CPU;
    n_jobs=None runs one at a time on every CPU. Same diagrams either way."""
    import threading
    from topoml import _rips
    from topoml import sklearn as tsk
    seen = []
    real = _rips._compute

    def spy(*args, **kw):
        seen.append((kw.get("n_threads"), threading.get_ident()))
        return real(*args, **kw)

    monkeypatch.setattr(_rips, "_compute", spy)
    monkeypatch.setattr(tsk, "_cpus", lambda: 8)
    X = np.random.default_rng(5).random((6, 30, 2))
    one = VietorisRipsPersistence().fit_transform(X)
    assert {t for t, _ in seen} == {-1} and len({i for _, i in seen}) == 1
    for jobs, share in ((2, 4), (4, 2), (16, 1)):
        seen.clear()
        np.testing.assert_array_equal(VietorisRipsPersistence(n_jobs=jobs).fit_transform(X), one)
        assert {t for t, _ in seen} == {max(1, 8 // min(jobs, 6))}, (jobs, seen)
