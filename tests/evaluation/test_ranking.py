"""Ranking metrics against hand-computed values, ties, edge cases and row-order invariance."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sklearn.metrics as skm

from labelaudit import InvalidInputError, InvalidParameterError
from labelaudit.evaluation import (
    aupr_score,
    average_precision_score,
    detection_report,
    precision_at_k,
    precision_recall_curve,
    rank_from_ids,
    recall_at_k,
    roc_auc_score,
    truncated_aupr_score,
)

# Ranking by score (lower = more suspect): E C E C C C  (E = error, C = clean)
IS_ERROR = np.array([True, False, True, False, False, False])
SCORES = np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6])


def test_curve_points_by_hand():
    curve = precision_recall_curve(IS_ERROR, SCORES)
    # anchor, then after each item: TP = 1,1,2,2,2,2 of 1..6 flagged, 2 errors in total
    assert curve.n_flagged.tolist() == [0, 1, 2, 3, 4, 5, 6]
    np.testing.assert_allclose(curve.precision, [1, 1, 1 / 2, 2 / 3, 2 / 4, 2 / 5, 2 / 6])
    np.testing.assert_allclose(curve.recall, [0, 0.5, 0.5, 1, 1, 1, 1])
    assert curve.thresholds[0] == -np.inf
    assert curve.n_items == 6 and curve.n_errors == 2 and curve.unknown is None
    frame = curve.to_frame()
    assert list(frame.columns) == ["threshold", "n_flagged", "precision", "recall"]
    assert len(frame) == 7


def test_aupr_by_hand():
    # trapezoids: (0->0.5) at (1+1)/2, (0.5->0.5) zero width, (0.5->1) at (1/2 + 2/3)/2
    expected = 0.5 * 1.0 + 0.5 * (0.5 + 2 / 3) / 2
    assert aupr_score(IS_ERROR, SCORES) == pytest.approx(expected)
    assert expected == pytest.approx(0.791666, abs=1e-6)


def test_average_precision_by_hand():
    # step function: 0.5 * P(1) + 0.5 * P(3) = 0.5 * 1 + 0.5 * 2/3
    assert average_precision_score(IS_ERROR, SCORES) == pytest.approx(0.5 + 1 / 3)


def test_roc_auc_by_hand():
    # error pairs ranked above clean: first error beats 4 cleans, second beats 3 of 4
    assert roc_auc_score(IS_ERROR, SCORES) == pytest.approx(7 / 8)


@pytest.mark.parametrize(("k", "precision", "recall"), [
    (1, 1.0, 0.5), (2, 0.5, 0.5), (3, 2 / 3, 1.0), (6, 1 / 3, 1.0),
    (7, 1 / 3, 1.0), (100, 1 / 3, 1.0),  # k larger than n is clipped to n
])
def test_precision_recall_at_k_by_hand(k, precision, recall):
    assert precision_at_k(IS_ERROR, SCORES, k=k) == pytest.approx(precision)
    assert recall_at_k(IS_ERROR, SCORES, k=k) == pytest.approx(recall)


def test_report_by_hand():
    report = detection_report(IS_ERROR, SCORES)
    assert report.n_items == 6 and report.n_errors == 2 and report.k_err == 2
    assert report.precision_at_err == pytest.approx(0.5)
    assert report.recall_at_err == pytest.approx(0.5)
    assert report.recall_at_2err == pytest.approx(1.0)
    assert report.aupr == pytest.approx(aupr_score(IS_ERROR, SCORES))
    assert report.average_precision == pytest.approx(0.5 + 1 / 3)
    assert report.roc_auc == pytest.approx(7 / 8)
    assert report.unknown is None and report.n_unknown == 0
    as_dict = report.to_dict()
    assert set(as_dict) >= {"n_items", "n_errors", "aupr", "average_precision",
                            "precision_at_err", "recall_at_err", "recall_at_2err", "roc_auc",
                            "unknown"}
    assert report.to_frame().shape == (1, len(as_dict))


def test_matches_scikit_learn_on_random_rankings_with_ties():
    rng = np.random.default_rng(0)
    for _ in range(20):
        n = int(rng.integers(5, 60))
        is_error = rng.random(n) < 0.3
        is_error[0], is_error[1] = True, False
        scores = rng.integers(0, 8, n).astype(float)  # many ties
        precision, recall, _ = skm.precision_recall_curve(is_error, -scores)
        assert aupr_score(is_error, scores) == pytest.approx(skm.auc(recall, precision))
        assert average_precision_score(is_error, scores) == pytest.approx(
            skm.average_precision_score(is_error, -scores))
        assert roc_auc_score(is_error, scores) == pytest.approx(
            skm.roc_auc_score(is_error, -scores))


# --- ties ---------------------------------------------------------------------------

def test_tied_items_enter_the_curve_together():
    # one error and one clean item tied at the top, then a clean item
    curve = precision_recall_curve([True, False, False], [0.0, 0.0, 1.0])
    assert curve.n_flagged.tolist() == [0, 2, 3]
    np.testing.assert_allclose(curve.precision, [1, 0.5, 1 / 3])
    np.testing.assert_allclose(curve.recall, [0, 1, 1])
    # trapezoid (0,1) -> (1, 0.5) = 0.75, then zero width
    assert aupr_score([True, False, False], [0.0, 0.0, 1.0]) == pytest.approx(0.75)
    # scikit-learn's step rule: recall jumps to 1 at precision 0.5
    assert average_precision_score([True, False, False], [0.0, 0.0, 1.0]) == pytest.approx(0.5)
    # a tie between the error and a clean item counts one half
    assert roc_auc_score([True, False, False], [0.0, 0.0, 1.0]) == pytest.approx(0.75)


def test_cut_inside_a_tie_counts_expected_errors():
    # 4 tied items with 1 error, after one sure error: k=3 takes 2 of the 4 tied items
    is_error = [True, True, False, False, False, False]
    scores = [0.0, 1.0, 1.0, 1.0, 1.0, 2.0]
    assert precision_at_k(is_error, scores, k=3) == pytest.approx((1 + 2 * 1 / 4) / 3)
    assert recall_at_k(is_error, scores, k=3) == pytest.approx((1 + 0.5) / 2)
    # the same ranking with all ties broken by row order would give 2/3; ties never do
    assert precision_at_k(is_error, scores, k=3) != pytest.approx(2 / 3)


def test_all_tied_gives_the_error_rate():
    is_error = np.array([True, False, False, False])
    flat = np.zeros(4)
    for k in range(1, 5):
        assert precision_at_k(is_error, flat, k=k) == pytest.approx(0.25)
    assert aupr_score(is_error, flat) == pytest.approx((1 + 0.25) / 2)
    assert average_precision_score(is_error, flat) == pytest.approx(0.25)
    assert roc_auc_score(is_error, flat) == pytest.approx(0.5)


# --- all-clean, all-errors ------------------------------------------------------------

def test_all_errors():
    is_error = np.ones(4, dtype=bool)
    scores = np.array([3.0, 1.0, 2.0, 0.0])
    assert aupr_score(is_error, scores) == pytest.approx(1.0)
    assert average_precision_score(is_error, scores) == pytest.approx(1.0)
    assert precision_at_k(is_error, scores, k=2) == 1.0
    assert recall_at_k(is_error, scores, k=2) == 0.5
    with pytest.raises(InvalidInputError, match="no clean items"):
        roc_auc_score(is_error, scores)
    with pytest.raises(InvalidInputError, match="no clean items"):
        detection_report(is_error, scores)


def test_all_clean():
    is_error = np.zeros(4, dtype=bool)
    scores = np.arange(4.0)
    assert precision_at_k(is_error, scores, k=2) == 0.0
    for func in (aupr_score, average_precision_score):
        with pytest.raises(InvalidInputError, match="no errors"):
            func(is_error, scores)
    with pytest.raises(InvalidInputError, match="no errors"):
        recall_at_k(is_error, scores, k=1)
    with pytest.raises(InvalidInputError, match="no errors"):
        roc_auc_score(is_error, scores)
    with pytest.raises(InvalidInputError, match="no errors"):
        detection_report(is_error, scores)


# --- truncated AUPR ------------------------------------------------------------------

def test_truncated_aupr_by_hand():
    # first 3 items: points (0,1) (0.5,1) (0.5,0.5) (1,2/3)
    assert truncated_aupr_score(IS_ERROR, SCORES, k=3) == pytest.approx(
        0.5 + 0.5 * (0.5 + 2 / 3) / 2)
    assert truncated_aupr_score(IS_ERROR, SCORES, k=1) == pytest.approx(0.5)
    assert truncated_aupr_score(IS_ERROR, SCORES, k=2) == pytest.approx(0.5)


def test_truncated_aupr_grows_with_k_and_reaches_aupr():
    rng = np.random.default_rng(0)
    is_error = rng.random(40) < 0.25
    scores = rng.integers(0, 10, 40).astype(float)
    values = [truncated_aupr_score(is_error, scores, k=k) for k in range(1, 41)]
    assert all(b >= a - 1e-12 for a, b in zip(values[:-1], values[1:], strict=True))
    assert values[-1] == pytest.approx(aupr_score(is_error, scores))
    assert truncated_aupr_score(is_error, scores, k=1000) == pytest.approx(values[-1])


def test_truncated_aupr_top_k_verified_with_estimated_errors():
    # only the top 3 were verified; the estimated number of errors in the set is 4
    is_error = np.array([1.0, 0.0, 1.0, np.nan, np.nan, np.nan, np.nan, np.nan])
    scores = np.arange(8.0)
    value = truncated_aupr_score(is_error, scores, k=3, unknown="exclude", n_errors=4)
    # recall = TP / 4: points (0,1) (0.25,1) (0.25,0.5) (0.5,2/3)
    assert value == pytest.approx(0.25 + 0.25 * (0.5 + 2 / 3) / 2)
    assert aupr_score(is_error, scores, unknown="exclude", n_errors=4) == pytest.approx(value)


def test_estimated_error_count_scales_recall_metrics():
    base = aupr_score(IS_ERROR, SCORES)
    assert aupr_score(IS_ERROR, SCORES, n_errors=4) == pytest.approx(base / 2)
    assert average_precision_score(IS_ERROR, SCORES, n_errors=4) == pytest.approx((0.5 + 1 / 3) / 2)
    assert recall_at_k(IS_ERROR, SCORES, k=3, n_errors=4) == pytest.approx(0.5)
    report = detection_report(IS_ERROR, SCORES, n_errors=3)
    assert report.k_err == 3
    assert report.precision_at_err == pytest.approx(2 / 3)
    assert report.recall_at_err == pytest.approx(2 / 3)
    assert report.recall_at_2err == pytest.approx(2 / 3)
    with pytest.raises(InvalidParameterError, match="smaller than the 2 errors"):
        aupr_score(IS_ERROR, SCORES, n_errors=1)


# --- unknown (unverified) items ------------------------------------------------------

def test_nan_requires_an_explicit_unknown_option():
    is_error = np.array([1.0, np.nan, 0.0, 1.0])
    with pytest.raises(InvalidParameterError, match="unknown='exclude'"):
        aupr_score(is_error, [0, 1, 2, 3])
    with pytest.raises(InvalidParameterError, match="unknown must be"):
        aupr_score(is_error, [0, 1, 2, 3], unknown="drop")


def test_unknown_exclude_and_clean():
    is_error = [1.0, np.nan, 0.0, 1.0]
    scores = [0.0, 1.0, 2.0, 3.0]
    excluded = detection_report(is_error, scores, unknown="exclude")
    assert (excluded.n_items, excluded.n_errors, excluded.n_unknown) == (3, 2, 1)
    assert excluded.unknown == "exclude"
    assert excluded.precision_at_err == pytest.approx(
        precision_at_k([1, 0, 1], [0, 2, 3], k=2))
    clean = detection_report(is_error, scores, unknown="clean")
    assert (clean.n_items, clean.n_errors, clean.unknown) == (4, 2, "clean")
    assert clean.aupr == pytest.approx(aupr_score([1, 0, 0, 1], scores))
    # None and pandas' NA mean unverified too
    assert precision_at_k([True, None, False], [0, 1, 2], k=2, unknown="exclude") == 0.5


# --- invariance to row order ---------------------------------------------------------

def test_invariance_to_row_order():
    rng = np.random.default_rng(0)
    is_error = rng.random(50) < 0.2
    scores = rng.integers(0, 6, 50).astype(float)
    perm = rng.permutation(50)
    a = detection_report(is_error, scores).to_dict()
    b = detection_report(is_error[perm], scores[perm]).to_dict()
    assert a == pytest.approx(b)
    for k in (1, 7, 13, 50, 80):
        assert precision_at_k(is_error, scores, k=k) == pytest.approx(
            precision_at_k(is_error[perm], scores[perm], k=k))
        assert truncated_aupr_score(is_error, scores, k=k) == pytest.approx(
            truncated_aupr_score(is_error[perm], scores[perm], k=k))


def test_perfect_and_reversed_rankings():
    is_error = np.array([False, True, False, True, False])
    perfect = np.where(is_error, 0.0, 1.0) + np.arange(5) * 0.01
    assert aupr_score(is_error, perfect) == pytest.approx(1.0)
    assert roc_auc_score(is_error, perfect) == 1.0
    assert roc_auc_score(is_error, -perfect) == 0.0
    assert detection_report(is_error, perfect).recall_at_err == 1.0


# --- validation ----------------------------------------------------------------------

@pytest.mark.parametrize(("is_error", "scores", "match"), [
    ([True, False], [0.1], "aligned"),
    ([True, 2], [0.1, 0.2], "True/False"),
    (["yes", "no"], [0.1, 0.2], "True/False"),
    ([True, False], [0.1, np.nan], "finite"),
    ([[True, False]], [0.1, 0.2], "1-d"),
    ([], [], "no verified items"),
    ([np.nan, np.nan], [0.0, 1.0], None),
])
def test_bad_input(is_error, scores, match):
    with pytest.raises(InvalidInputError, match=match):
        aupr_score(is_error, scores, unknown="exclude")


@pytest.mark.parametrize("k", [0, -1, 1.5, True, "3"])
def test_bad_k(k):
    with pytest.raises(InvalidParameterError, match="k must be (at least 1|a whole number)"):
        precision_at_k(IS_ERROR, SCORES, k=k)


# --- rank_from_ids -------------------------------------------------------------------

def test_rank_from_ids():
    scores = rank_from_ids(["d", "b"], ["a", "b", "c", "d"])
    assert scores.tolist() == [2.0, 1.0, 2.0, 0.0]
    truth = [False, True, False, True]
    assert precision_at_k(truth, scores, k=2) == 1.0
    # the unranked items tie: the third position has an expected 0 errors here
    assert precision_at_k([True, False, True, False], scores, k=3) == pytest.approx(
        (0 + 0 + 2 * 0.5 * 1) / 3)


@pytest.mark.parametrize(("ranked", "everything", "match"), [
    (["a", "a"], ["a", "b"], "twice"),
    (["z"], ["a", "b"], "not in all_ids"),
    (["a"], ["a", "a"], "duplicate"),
])
def test_rank_from_ids_errors(ranked, everything, match):
    with pytest.raises(InvalidInputError, match=match):
        rank_from_ids(ranked, everything)


def test_results_are_plain_floats():
    assert isinstance(aupr_score(IS_ERROR, SCORES), float)
    assert not math.isnan(average_precision_score(IS_ERROR, SCORES))
