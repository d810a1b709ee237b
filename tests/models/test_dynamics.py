"""The ``dynamics`` scorer: training dynamics (AUM, data-map confidence and variability)
of held-out items, in the scan, its output and its report."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest

from labelaudit import InvalidInputError, scan
from labelaudit.cli import main
from labelaudit.io import TextDataset
from labelaudit.models import DynamicsScorer, crossfit_pred_probs, training_dynamics
from labelaudit.models._dynamics import DynamicsRecorder, recording

WORDS = {"sport": ["match", "goal", "team", "coach", "league", "cup"],
         "food": ["pasta", "sauce", "cook", "recipe", "bake", "soup"],
         "tech": ["chip", "laptop", "code", "robot", "network", "cloud"]}
NEXT = {"sport": "food", "food": "tech", "tech": "sport"}


def planted(n_per_class: int = 16, n_flips: int = 6) -> tuple[pd.DataFrame, np.ndarray]:
    """Four topic words per text (plus the item's own tag, so texts are unique), and
    ``n_flips`` labels moved to the next class; returns the frame and the flipped rows."""
    rng = np.random.default_rng(0)
    classes = [c for c in WORDS for _ in range(n_per_class)]
    texts = [" ".join(rng.choice(WORDS[c], size=4, replace=False)) + f" item{i}"
             for i, c in enumerate(classes)]
    flips = np.sort(rng.choice(len(classes), size=n_flips, replace=False))
    labels = [NEXT[c] if i in flips else c for i, c in enumerate(classes)]
    return pd.DataFrame({"id": np.arange(len(texts)), "text": texts, "label": labels}), flips


def as_dataset(frame: pd.DataFrame) -> TextDataset:
    classes = np.array(sorted(WORDS))
    labels = np.searchsorted(classes, frame["label"].to_numpy())
    return TextDataset(frame["id"].to_numpy(), list(frame["text"]), None, labels, classes)


def test_training_dynamics_by_hand():
    # 2 epochs, 2 items, 3 classes; item 0 labelled 0, item 1 labelled 2
    logits = np.array([[[2.0, 1.0, 0.0], [0.0, 3.0, 1.0]],
                       [[0.0, 1.0, 0.0], [0.0, 0.0, 2.0]]])
    found = training_dynamics(np.array([0, 2]), logits)
    # margins: item 0: 2-1=1, 0-1=-1 -> 0; item 1: 1-3=-2, 2-0=2 -> 0
    np.testing.assert_allclose(found.aum, [0.0, 0.0])
    p0 = [np.exp(2) / (np.exp(2) + np.exp(1) + 1), 1 / (2 + np.e)]
    np.testing.assert_allclose(found.confidence[0], np.mean(p0))
    np.testing.assert_allclose(found.variability[0], np.std(p0))
    assert found.n_epochs == 2 and found.order.tolist() == [0, 1]
    assert list(found.to_frame().columns) == ["aum", "confidence", "variability"]


@pytest.mark.parametrize(("labels", "logits"), [
    (np.array([0]), np.zeros((2, 1))),            # no epoch axis
    (np.array([0, 1]), np.zeros((2, 1, 2))),      # one label too many
    (np.array([2]), np.zeros((2, 1, 2))),         # label out of range
])
def test_training_dynamics_refuses_bad_input(labels, logits):
    with pytest.raises(InvalidInputError):
        training_dynamics(labels, logits)


def test_scorer_statistics_have_the_right_shapes_and_ranges():
    frame, _ = planted()
    data = as_dataset(frame)
    scorer = DynamicsScorer(epochs=4)
    features = scorer.prepare(data)
    fitted = scorer.fit(features, data.labels, n_classes=3)
    logits = fitted.epoch_logits(features)
    assert logits.shape == (4, len(frame), 3)
    probs = fitted.epoch_probs(features)
    np.testing.assert_allclose(fitted.predict_proba(features), probs.mean(axis=0))
    np.testing.assert_allclose(fitted.predict_proba(features).sum(axis=1), 1.0)
    found = training_dynamics(data.labels, logits)
    for values in (found.aum, found.confidence, found.variability):
        assert values.shape == (len(frame),) and np.isfinite(values).all()
    assert (found.confidence >= 0).all() and (found.confidence <= 1).all()
    assert (found.variability >= 0).all()
    # the recorder predicts the same logits, item-major, for the fold executor
    held = recording(scorer).fit(features, data.labels, n_classes=3).predict_proba(features)
    np.testing.assert_allclose(held, np.moveaxis(logits, 0, 1))


def test_scan_flipped_items_get_lower_aum_than_clean_ones():
    frame, flips = planted()
    result = scan(frame, scorers=["dynamics"])
    found = result.dynamics
    assert found is not None and found.n_epochs == DynamicsScorer().epochs
    flipped = np.isin(np.arange(len(frame)), flips)
    assert found.aum[flipped].mean() < found.aum[~flipped].mean()
    assert found.confidence[flipped].mean() < found.confidence[~flipped].mean()
    assert (found.confidence >= 0).all() and (found.confidence <= 1).all()
    # the member's probabilities are the mean over epochs: their given-label column is
    # the data map's confidence
    member = result.member_probs["dynamics"]
    np.testing.assert_allclose(member[np.arange(len(frame)), result.labels], found.confidence)
    columns = result.to_frame().set_index("id")
    np.testing.assert_allclose(columns.loc[frame["id"], "dynamics_aum"], found.aum)


def test_a_held_out_item_is_never_trained_on_and_its_logits_ignore_its_own_label():
    frame, _ = planted()
    data = as_dataset(frame)
    seen: list[set[str]] = []

    @dataclass(eq=False, kw_only=True)
    class Spy(DynamicsRecorder):
        def fit(self, features, labels, *, n_classes):
            seen.append(set(features[:, 0]))
            return super().fit(features, labels, n_classes=n_classes)

    folds = np.arange(len(frame)) % 4
    features = Spy().prepare(data)
    logits = crossfit_pred_probs(Spy(epochs=3), features, data.labels, folds, n_classes=3)
    assert logits.shape == (3, len(frame), 3) and np.isfinite(logits).all()
    for fold, texts in enumerate(seen):
        assert not texts & set(features[folds == fold, 0])
    changed = data.labels.copy()
    changed[5] = (changed[5] + 1) % 3
    again = crossfit_pred_probs(Spy(epochs=3), features, changed, folds, n_classes=3)
    np.testing.assert_array_equal(again[:, 5], logits[:, 5])
    assert not np.array_equal(again, logits)  # the other folds' models did change


def test_the_same_random_state_gives_the_same_result():
    frame, _ = planted()
    first, second = scan(frame, scorers=["dynamics"]), scan(frame, scorers=["dynamics"])
    np.testing.assert_array_equal(first.dynamics.aum, second.dynamics.aum)
    np.testing.assert_array_equal(first.dynamics.variability, second.dynamics.variability)
    data = as_dataset(frame)
    features = DynamicsScorer().prepare(data)
    a, b = (DynamicsScorer(epochs=2, random_state=s).fit(features, data.labels, n_classes=3)
            .epoch_logits(features) for s in (0, 1))
    assert not np.allclose(a, b)  # the seed orders the minibatches


def test_repeats_and_a_scored_split_keep_their_dynamics():
    frame, _ = planted()
    repeated = scan(frame, scorers=["tfidf", "dynamics"], n_seeds=2)
    assert repeated.dynamics.n_epochs == 2 * DynamicsScorer().epochs
    train, test = frame.iloc[::2], frame.iloc[1::2]
    scored = scan(train, score=test, scorers=[DynamicsScorer(epochs=3)])
    assert scored.dynamics.aum.shape == (len(test),) and scored.dynamics.n_epochs == 3
    plain = scan(frame, scorers=["tfidf"])
    assert plain.dynamics is None
    assert not [c for c in plain.to_frame().columns if c.startswith("dynamics_")]


def test_cli_scan_writes_the_columns_and_the_report_draws_the_data_map(tmp_path):
    frame, _ = planted()
    data, out, page = tmp_path / "tiny.csv", tmp_path / "x.csv", tmp_path / "report.html"
    frame.to_csv(data, index=False)
    assert main(["scan", str(data), "--scorers", "dynamics", "--out", str(out), "-q"]) == 0
    written = pd.read_csv(out)
    for column in ("dynamics_aum", "dynamics_confidence", "dynamics_variability"):
        assert column in written.columns and np.isfinite(written[column]).all()
    assert main(["report", str(out), "--out", str(page), "-q"]) == 0
    html = page.read_text(encoding="utf-8")
    assert '<section id="cartography">' in html and '<div class="plot" id="data-map"><svg' in html
    assert "dynamics_aum</b>" not in html  # not repeated as an input column in the table
