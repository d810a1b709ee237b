"""Where agreement reuses a trusted library, it agrees with it; where it keeps its own code,
the difference the docstring names is real."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import bootstrap
from sklearn.metrics import cohen_kappa_score

from labelaudit.agreement import bootstrap_ci, cohen_kappa, fleiss_kappa


def test_cohen_kappa_is_sklearns_on_random_labels():
    rng = np.random.default_rng(0)
    for _ in range(20):
        n, k = int(rng.integers(5, 200)), int(rng.integers(2, 6))
        a = rng.integers(0, k, n)
        b = np.where(rng.random(n) < rng.random(), a, rng.integers(0, k, n))
        assert cohen_kappa(a, b) == pytest.approx(cohen_kappa_score(a, b), abs=1e-12)
        names = np.array([f"c{v}" for v in range(k)], dtype=object)
        assert cohen_kappa(names[a], names[b]) == pytest.approx(cohen_kappa_score(a, b))


def test_cohen_kappa_differs_from_sklearn_only_where_it_is_undefined():
    with pytest.warns(Warning):  # scikit-learn warns and returns NaN
        assert math.isnan(cohen_kappa_score([1, 1], [1, 1]))
    assert math.isnan(cohen_kappa([1, 1], [1, 1]))  # ours: NaN, quietly
    assert cohen_kappa(["a", 1, "a"], ["a", 1, 1]) == pytest.approx(
        cohen_kappa_score([0, 1, 0], [0, 1, 1]))  # mixed label types work


def test_fleiss_kappa_is_statsmodels_with_a_fixed_panel():
    from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss

    rng = np.random.default_rng(1)
    for _ in range(20):
        n_raters, n_cat = int(rng.integers(2, 9)), int(rng.integers(2, 6))
        counts = rng.multinomial(n_raters, rng.dirichlet(np.ones(n_cat)),
                                 size=int(rng.integers(5, 80)))
        if (counts.sum(axis=0) == counts.sum()).any():
            continue  # one category only: undefined
        assert fleiss_kappa(counts) == pytest.approx(sm_fleiss(counts), abs=1e-12)


def test_fleiss_kappa_keeps_crowds_that_statsmodels_refuses():
    from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss

    counts = np.array([[2, 0], [2, 1], [1, 3]])  # 2, 3 and 4 annotations
    with pytest.raises(AssertionError):
        sm_fleiss(counts)
    p_a, p_e = 11 / 18, 41 / 81
    assert fleiss_kappa(counts) == pytest.approx((p_a - p_e) / (1 - p_e))


def test_bootstrap_ci_is_scipys_percentile_interval():
    rng = np.random.default_rng(2)
    for seed in range(5):
        x = rng.normal(size=int(rng.integers(10, 120)))
        ours = bootstrap_ci(len(x), lambda idx, x=x: float(x[idx].mean()), n_bootstrap=300,
                            confidence=0.9, random_state=seed)
        theirs = bootstrap((x,), np.mean, n_resamples=300, method="percentile",
                           confidence_level=0.9, random_state=np.random.default_rng(seed))
        assert ours == pytest.approx(tuple(theirs.confidence_interval), abs=1e-12)


def test_bootstrap_ci_drops_undefined_replicates_where_scipy_gives_nan():
    x = np.r_[np.zeros(5), np.ones(5)]

    def statistic(idx: np.ndarray) -> float:  # undefined when a resample has one value
        values = x[idx]
        return float(values.mean()) if values.min() != values.max() else math.nan

    lo, hi = bootstrap_ci(len(x), statistic, n_bootstrap=200, random_state=0)
    assert 0 < lo <= 0.5 <= hi < 1
    with pytest.warns(Warning):
        theirs = bootstrap((np.arange(10),), statistic, n_resamples=2000, vectorized=False,
                           method="percentile", random_state=np.random.default_rng(0))
    assert math.isnan(theirs.confidence_interval.low)
    assert bootstrap_ci(len(x), lambda idx: math.nan, n_bootstrap=50) == (
        pytest.approx(math.nan, nan_ok=True), pytest.approx(math.nan, nan_ok=True))
