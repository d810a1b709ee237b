"""Majority vote and the crowd-kit models on hand-made crowd tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from labelaudit import InvalidInputError, InvalidParameterError
from labelaudit.agreement import aggregate, dawid_skene, glad, mace, majority_vote

# item -> labels by annotators a, b, c, d (None = not annotated); hand-checked majorities
HAND = {
    "i1": ["pos", "pos", "pos", None],   # pos, unanimous
    "i2": ["pos", "neg", "pos", "pos"],  # pos 3/4
    "i3": ["neg", "neg", "pos", None],   # neg 2/3
    "i4": ["neg", "pos", None, None],    # tie
    "i5": ["neu", "neg", "pos", None],   # three-way tie
}


def _hand_table() -> pd.DataFrame:
    rows = []
    for item, labels in HAND.items():
        for annot, lab in zip("abcd", labels, strict=True):
            if lab is not None:
                rows.append((item, annot, lab))
    return pd.DataFrame(rows, columns=["item", "annotator", "label"])


def test_majority_vote_hand_table_abstain():
    res = majority_vote(_hand_table(), ties="abstain")
    assert res.items.tolist() == list(HAND)
    assert res.labels.tolist() == ["pos", "pos", "neg", None, None]
    assert res.tied.tolist() == [False, False, False, True, True]
    np.testing.assert_allclose(res.support, [1, 0.75, 2 / 3, 0, 0])
    assert res.n_annotations.tolist() == [3, 4, 3, 2, 3]
    assert res.classes == ("neg", "neu", "pos")
    np.testing.assert_allclose(res.probs.sum(axis=1), 1)
    # annotator quality = share of their labels equal to the decided majority (i1-i3)
    # a: pos, pos, neg -> 3/3; b: pos, neg, neg -> 2/3; c: pos, pos, pos -> 2/3; d: pos -> 1
    np.testing.assert_allclose(res.annotator_quality, [1, 2 / 3, 2 / 3, 1])


def test_majority_vote_tie_policies():
    df = _hand_table()
    first = majority_vote(df, ties="first")
    assert first.labels.tolist()[3:] == ["neg", "neg"]  # "neg" sorts first
    with pytest.raises(InvalidInputError, match="tied votes on items 'i4', 'i5'"):
        majority_vote(df, ties="error")
    a = majority_vote(df, ties="random", random_state=3)
    b = majority_vote(df, ties="random", random_state=3)
    assert a.labels.tolist() == b.labels.tolist()
    assert a.labels[3] in ("neg", "pos") and a.labels[4] in ("neu", "neg", "pos")
    seen = {majority_vote(df, ties="random", random_state=s).labels[4] for s in range(30)}
    assert seen == {"neu", "neg", "pos"}
    with pytest.raises(InvalidParameterError):
        majority_vote(df, ties="coin")


def test_majority_vote_without_annotator_ids_and_frames():
    df = _hand_table().drop(columns="annotator")
    res = majority_vote(df, ties="abstain")
    assert res.annotators is None and res.annotator_quality is None
    frame = res.to_frame()
    assert list(frame.columns[:5]) == ["item", "label", "support", "n_annotations", "tied"]
    assert {"prob_neg", "prob_neu", "prob_pos"} <= set(frame.columns)
    assert res.annotators_frame().empty
    assert res.to_dict()["items"][3]["label"] is None
    assert res.as_series()["i3"] == "neg"


def _spammer_crowd(n_items: int = 80) -> tuple[pd.DataFrame, np.ndarray]:
    """Three careful annotators and two who answer at random."""
    rng = np.random.default_rng(0)
    truth = rng.integers(0, 2, n_items)
    accuracy = {"good1": 0.92, "good2": 0.9, "good3": 0.85, "spam1": 0.5, "spam2": 0.5}
    rows = []
    for i in range(n_items):
        for annot, acc in accuracy.items():
            lab = truth[i] if rng.random() < acc else 1 - truth[i]
            rows.append((f"item{i}", annot, int(lab)))
    return pd.DataFrame(rows, columns=["item", "annotator", "label"]), truth


@pytest.mark.parametrize(
    "fn",
    [dawid_skene, lambda df: glad(df, n_iter=3), lambda df: mace(df, n_restarts=1, n_iter=20)],
    ids=["dawid_skene", "glad", "mace"],
)
def test_latent_models_find_the_truth_and_the_spammers(fn):
    df, truth = _spammer_crowd(40)  # crowd-kit's GLAD is slow: keep the crowd small
    res = fn(df)
    assert res.items.tolist() == [f"item{i}" for i in range(len(truth))]
    assert (res.labels.astype(int) == truth).mean() >= 0.9
    quality = dict(zip(res.annotators, res.annotator_quality, strict=True))
    assert min(quality["good1"], quality["good2"]) > max(quality["spam1"], quality["spam2"])
    np.testing.assert_allclose(res.probs.sum(axis=1), 1)
    assert np.all(res.support >= 0.5)


def test_latent_models_need_annotator_ids():
    df, _ = _spammer_crowd(10)
    with pytest.raises(InvalidInputError, match="annotator ids"):
        dawid_skene(df.drop(columns="annotator"))


def test_aggregate_dispatch():
    df = _hand_table()
    assert aggregate(df, ties="abstain").method == "majority_vote"
    assert aggregate(df, method="dawid-skene").labels[0] == "pos"
    with pytest.raises(InvalidParameterError, match="method"):
        aggregate(df, method="vote")
