"""Verified precision, the loss Wasserstein distance, the PR plot, and property tests."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import beta

from labelaudit import InvalidInputError, InvalidParameterError
from labelaudit.evaluation import (
    PrecisionRecallCurve,
    VerifiedPrecision,
    aupr_score,
    detection_report,
    loss_wasserstein_distance,
    plot_precision_recall,
    precision_at_k,
    precision_recall_curve,
    verified_precision,
)

# --- verified precision ---------------------------------------------------------------


def test_verified_precision_matches_the_beta_quantiles():
    vp = verified_precision(45, 50, confidence=0.9, n_flagged=400)
    assert isinstance(vp, VerifiedPrecision)
    assert vp.precision == pytest.approx(0.9)
    # Clopper-Pearson: [B(a/2; k, n-k+1), B(1-a/2; k+1, n-k)], a = 0.1
    assert vp.ci_low == pytest.approx(beta.ppf(0.05, 45, 6))
    assert vp.ci_high == pytest.approx(beta.ppf(0.95, 46, 5))
    assert vp.estimated_errors == pytest.approx(360.0)
    assert vp.estimated_errors_low == pytest.approx(400 * vp.ci_low)
    assert vp.estimated_errors_high == pytest.approx(400 * vp.ci_high)
    assert vp.to_dict()["n_verified"] == 50


def test_verified_precision_edges():
    none = verified_precision(0, 10)
    assert (none.precision, none.ci_low) == (0.0, 0.0)
    assert none.ci_high == pytest.approx(1 - 0.025 ** (1 / 10))  # closed form for k = 0
    assert none.estimated_errors is None
    every = verified_precision(10, 10)
    assert (every.precision, every.ci_high) == (1.0, 1.0)
    assert every.ci_low == pytest.approx(0.025 ** (1 / 10))


@pytest.mark.parametrize(("args", "kwargs", "match"), [
    ((5, 0), {}, "n_verified is 0"),
    ((6, 5), {}, "cannot exceed"),
    ((-1, 5), {}, "at least 0"),
    ((1.5, 5), {}, "whole number"),
    ((1, 5), {"confidence": 1.0}, r"\(0, 1\)"),
    ((1, 5), {"n_flagged": 3}, "cannot be smaller"),
])
def test_verified_precision_bad_options(args, kwargs, match):
    with pytest.raises(InvalidParameterError, match=match):
        verified_precision(*args, **kwargs)


# --- Wasserstein ---------------------------------------------------------------------


def test_wasserstein_by_hand():
    # errors {3, 2}, clean {0.5, 0.1}: sorted pairs (2, 0.1), (3, 0.5): mean shift 2.2
    assert loss_wasserstein_distance([3.0, 0.5, 2.0, 0.1], [True, False, True, False]) == (
        pytest.approx(2.2))
    # identical distributions are at distance 0; shifting the errors by c moves it to c
    rng = np.random.default_rng(0)
    clean = rng.exponential(size=30)
    losses = np.r_[clean, clean]
    truth = np.r_[np.ones(30, bool), np.zeros(30, bool)]
    assert loss_wasserstein_distance(losses, truth) == pytest.approx(0.0)
    shifted = np.r_[clean + 1.5, clean]
    assert loss_wasserstein_distance(shifted, truth) == pytest.approx(1.5)


def test_wasserstein_needs_both_groups_and_resolves_unknown():
    with pytest.raises(InvalidInputError, match="no errors"):
        loss_wasserstein_distance([1.0, 2.0], [False, False])
    with pytest.raises(InvalidParameterError, match="unknown"):
        loss_wasserstein_distance([1.0, 2.0, 3.0], [True, False, np.nan])
    assert loss_wasserstein_distance([1.0, 2.0, 9.0], [True, False, np.nan],
                                     unknown="exclude") == pytest.approx(1.0)


# --- plot ----------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", [".png", ".svg"])
def test_plot_writes_the_format_of_the_suffix(tmp_path, suffix):
    rng = np.random.default_rng(0)
    is_error = rng.random(40) < 0.3
    curves = {
        "good": precision_recall_curve(is_error, np.where(is_error, 0.0, 1.0) + rng.random(40)),
        "random": precision_recall_curve(is_error, rng.random(40)),
    }
    out = plot_precision_recall(curves, tmp_path / f"pr{suffix}", title="demo")
    data = out.read_bytes()
    if suffix == ".png":
        assert data.startswith(b"\x89PNG")
    else:
        assert b"<svg" in data and b"good (AUPR" in data
    assert [p.name for p in tmp_path.iterdir()] == [f"pr{suffix}"]  # no temporary left


def test_plot_bad_options(tmp_path):
    curve = precision_recall_curve([True, False], [0.0, 1.0])
    with pytest.raises(InvalidParameterError, match=".png or .svg"):
        plot_precision_recall({"a": curve}, tmp_path / "pr.jpg")
    with pytest.raises(InvalidParameterError, match="empty"):
        plot_precision_recall({}, tmp_path / "pr.png")
    with pytest.raises(InvalidParameterError, match="PrecisionRecallCurve"):
        plot_precision_recall({"a": [0.1]}, tmp_path / "pr.png")
    assert not list(tmp_path.iterdir())
    assert isinstance(curve, PrecisionRecallCurve)


# --- properties ----------------------------------------------------------------------

rankings = st.integers(min_value=2, max_value=40).flatmap(lambda n: st.tuples(
    st.lists(st.booleans(), min_size=n, max_size=n).filter(lambda v: any(v) and not all(v)),
    st.lists(st.integers(0, 5), min_size=n, max_size=n),
    st.permutations(range(n)),
))


@settings(max_examples=60, deadline=None)
@given(rankings)
def test_properties(ranking):
    is_error, scores, perm = (np.asarray(x) for x in ranking)
    scores = scores.astype(float)
    report = detection_report(is_error, scores)
    for value in (report.aupr, report.average_precision, report.precision_at_err,
                  report.recall_at_err, report.recall_at_2err, report.roc_auc):
        assert 0.0 <= value <= 1.0
    assert report.recall_at_err <= report.recall_at_2err + 1e-12
    assert report.precision_at_err == pytest.approx(report.recall_at_err)
    # row order never changes a metric
    assert detection_report(is_error[perm], scores[perm]).to_dict() == pytest.approx(
        report.to_dict())
    # a monotone transform of the scores never changes a metric
    assert aupr_score(is_error, np.exp(scores) * 3 - 1) == pytest.approx(report.aupr)
    # with every score tied, P@1 is the error rate (expected value over tie-breaks)
    flat = np.zeros_like(scores)
    assert precision_at_k(is_error, flat, k=1) == pytest.approx(is_error.mean())
