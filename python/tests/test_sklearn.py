"""The scikit-learn transformers: check_estimator, Pipeline and
GridSearchCV, and features equal to the functions they wrap."""
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


def run_check_estimator(est):
    with warnings.catch_warnings():
        warnings.simplefilter("error", category=sklearn.exceptions.SkipTestWarning)
        check_estimator(est)


def test_check_estimator_vietoris_rips():
    run_check_estimator(VietorisRipsPersistence())
    run_check_estimator(VietorisRipsPersistence(maxdim=0, n_jobs=2))


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
    import inspect
    if "expected_failed_checks" in inspect.signature(check_estimator).parameters:
        check_estimator(pipe, expected_failed_checks=PIPELINE_OWN_FAILURES)
        return
    ran = 0
    with warnings.catch_warnings():
        warnings.simplefilter("error", category=sklearn.exceptions.SkipTestWarning)
        for est, check in check_estimator(pipe, generate_only=True):
            name = getattr(check, "func", check).__name__
            if name not in PIPELINE_OWN_FAILURES:
                check(est)
                ran += 1
    assert ran > 30


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
