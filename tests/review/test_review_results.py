"""Results from hand-made vote tables: verdicts, reviewer statistics, kappa, precision."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from labelaudit.review import (
    CORRECTABLE,
    NON_AGREEMENT,
    NON_ERROR,
    PENDING,
    init_review,
    next_item,
    record_answer,
    review_results,
)

# rows: items d0..d5 (given labels from the scan fixture), columns: reviewers a..c
VOTES = {
    "d0": ["neg", "neg", "neg"],
    "d1": ["pos", "pos", "neg"],
    "d2": ["none of these", "neg", "unsure"],
    "d3": ["neg", "pos", "pos"],
    "d4": ["pos", "pos", "pos"],
}


@pytest.fixture(scope="module")
def voted(tmp_path_factory, scan_factory):
    """Three reviewers answer five of six items as in VOTES (d5 stays unanswered).

    Shared by the tests of this module, which only read it.
    """
    tmp_path = tmp_path_factory.mktemp("voted")
    scan = scan_factory()
    scan["label"] = ["pos", "pos", "pos", "neg", "pos", "neg"] + scan["label"].tolist()[6:]
    store = init_review(scan, tmp_path / "r.sqlite", top=6, n_reviewers=3, n_flagged=20)
    reviewers = [store.add_reviewer(name)[0] for name in "abc"]
    for column, reviewer in enumerate(reviewers):
        for step in range(10):
            assignment = next_item(store, reviewer.reviewer_pk, now=100.0 * step)
            item = assignment.item
            if item is None or item["item_id"] == "d5":
                break
            answer = VOTES[item["item_id"]][column]
            outcome = record_answer(store, reviewer.reviewer_pk, item["item_pk"], answer,
                                    now=100.0 * step + 2 + column)
            assert outcome.recorded
    return store


def test_verdicts(voted):
    results = review_results(voted)
    items = results.items.set_index("id")
    assert items["verdict"].to_dict() == {
        "d0": CORRECTABLE, "d1": NON_ERROR, "d2": NON_AGREEMENT, "d3": CORRECTABLE,
        "d4": NON_ERROR, "d5": PENDING}
    assert items.loc["d0", "majority_label"] == "neg"
    assert items.loc["d3", "majority_label"] == "pos"
    assert items.loc["d2", "votes"] == "neg:1; none of these:1; unsure:1"
    assert items["n_votes"].tolist() == [3, 3, 3, 3, 3, 0]
    assert list(items.index) == [f"d{i}" for i in range(6)]
    assert "text" in results.items.columns and "text_pair" not in results.items.columns
    assert results.verdict_counts() == {CORRECTABLE: 2, NON_AGREEMENT: 1, NON_ERROR: 2,
                                        PENDING: 1}


def test_kappa_matches_the_hand_computed_value(voted):
    results = review_results(voted)
    # categories neg, pos, none of these; unsure dropped, so d2 has 2 votes
    counts = np.array([[3, 0, 0], [1, 2, 0], [1, 0, 1], [1, 2, 0], [0, 3, 0]])
    k = counts.sum(axis=1)
    p_a = ((counts * (counts - 1)).sum(axis=1) / (k * (k - 1))).mean()
    p_j = counts.sum(axis=0) / k.sum()
    expected = (p_a - (p_j ** 2).sum()) / (1 - (p_j ** 2).sum())
    assert results.n_kappa_items == 5
    assert results.fleiss_kappa == pytest.approx(expected)


def test_precision_at_k_and_the_error_estimate(voted):
    results = review_results(voted)
    curve = results.precision_at_k
    assert curve["k"].tolist() == [1, 2, 3, 4, 5, 6]
    # confirmed errors: Correctable or Non-Agreement (d0, d2, d3)
    assert curve["n_confirmed"].tolist() == [1, 1, 2, 3, 3, 3]
    assert curve["n_verified"].tolist() == [1, 2, 3, 4, 5, 5]
    assert curve["precision"].tolist() == pytest.approx([1, 0.5, 2 / 3, 0.75, 0.6, 0.6])
    assert (curve["ci_low"] <= curve["precision"]).all()
    assert (curve["precision"] <= curve["ci_high"]).all()
    verified = results.verified
    assert (verified.n_confirmed, verified.n_verified) == (3, 5)
    assert verified.estimated_errors == pytest.approx(0.6 * 20)
    strict = review_results(voted, count_non_agreement=False)
    assert strict.verified.n_confirmed == 2
    assert strict.precision_at_k["n_confirmed"].tolist() == [1, 1, 1, 2, 2, 2]


def test_reviewer_statistics(voted):
    stats = review_results(voted).reviewers.set_index("reviewer")
    assert stats["n_answers"].to_dict() == {"a": 5, "b": 5, "c": 5}
    # majorities: d0 neg, d1 pos, d3 pos, d4 pos (d2 has none)
    assert stats.loc["a", "agreement_with_majority"] == pytest.approx(3 / 4)
    assert stats.loc["b", "agreement_with_majority"] == pytest.approx(4 / 4)
    assert stats.loc["c", "agreement_with_majority"] == pytest.approx(3 / 4)
    # answered 2, 3 and 4 seconds after being shown
    assert stats["median_seconds"].to_dict() == {"a": 2.0, "b": 3.0, "c": 4.0}
    assert stats["sentinel_accuracy"].isna().all()


def test_summary_is_json(voted):
    summary = review_results(voted).to_dict()
    text = json.dumps(summary)
    assert json.loads(text)["verdicts"][CORRECTABLE] == 2
    assert summary["precision"]["n_verified"] == 5
    assert len(summary["precision_at_k"]) == 6


def test_results_before_any_answer(project):
    results = review_results(project)
    assert results.verified is None
    assert np.isnan(results.fleiss_kappa) and results.n_kappa_items == 0
    assert (results.items["verdict"] == PENDING).all()
    assert results.precision_at_k["precision"].isna().all()


def test_integer_labels_come_back_as_integers(tmp_path, scan):
    scan = scan.assign(label=(scan["label"] == "pos").astype(int),
                       suggested_label=(scan["suggested_label"] == "pos").astype(int))
    store = init_review(scan, tmp_path / "r.sqlite", top=2, n_reviewers=1)
    reviewer, _ = store.add_reviewer("a")
    item = next_item(store, reviewer.reviewer_pk).item
    flip = "1" if item["given_label"] == "0" else "0"
    assert record_answer(store, reviewer.reviewer_pk, item["item_pk"], flip).recorded
    items = review_results(store).items
    assert store.config.classes == [0, 1]
    assert items.loc[0, "majority_label"] == int(flip)
    assert isinstance(items.loc[0, "label"], (int, np.integer))
    assert pd.isna(items.loc[1, "majority_label"])


def test_integer_majority_labels_stay_integers_next_to_pending_items(tmp_path, scan):
    scan = scan.assign(label=(scan["label"] == "pos").astype(int),
                       suggested_label=(scan["suggested_label"] == "pos").astype(int))
    store = init_review(scan, tmp_path / "r.sqlite", top=3, n_reviewers=1)
    reviewer, _ = store.add_reviewer("a")
    item = next_item(store, reviewer.reviewer_pk).item
    assert record_answer(store, reviewer.reviewer_pk, item["item_pk"], "1").recorded
    items = review_results(store).items
    assert items["majority_label"].tolist()[0] == 1
    assert items["majority_label"].map(type).tolist()[0] is int
    assert items["majority_label"].tolist()[1:] == [None, None]
    csv = tmp_path / "v.csv"
    items.to_csv(csv, index=False)
    assert pd.read_csv(csv)["majority_label"].tolist()[0] == 1
