"""The evidence beside each flagged item: out-of-fold words, neighbours, conflicting
duplicates; in every output format, from ``explain``, and off with ``evidence=False``."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from labelaudit import InvalidParameterError, scan
from labelaudit.io import TextDataset, evidence_text, read_evidence
from labelaudit.models import (
    HeldOutWords,
    Scorer,
    TfidfScorer,
    WordCollector,
    crossfit_pred_probs,
    make_folds,
)
from labelaudit.scanning._evidence import conflicting_groups, duplicate_groups

SPORT = "match goal team player win".split()
FOOD = "pasta sauce cook kitchen taste".split()


def topic_frame(n: int = 120, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        label = ["sport", "food"][i % 2]
        words = SPORT if label == "sport" else FOOD
        rows.append((f"{' '.join(rng.choice(words, 5))} note{rng.integers(40)}", label))
    return pd.DataFrame(rows, columns=["text", "label"])


def flagged_record(result, item_id):
    frame = result.to_frame().set_index("id")
    assert frame.loc[item_id, "flagged"]
    return frame.loc[item_id, "evidence"]


def test_words_point_toward_the_suggested_label():
    frame = topic_frame()
    frame.loc[0, "label"] = "food"  # a sport text labelled food
    frame.loc[1, "label"] = "sport"  # a food text labelled sport
    result = scan(frame, scorers=["tfidf"], top=2)
    for item_id, toward, vocabulary in [(0, "sport", SPORT), (1, "food", FOOD)]:
        record = flagged_record(result, item_id)
        assert record["toward"] == toward and record["words_from"] == "tfidf"
        assert record["words"], record
        weights = [w["weight"] for w in record["words"]]
        assert all(w > 0 for w in weights) and weights == sorted(weights, reverse=True)
        for word in record["words"]:
            assert set(word["term"].split()) <= set(vocabulary), word
            assert word["term"] in frame.loc[item_id, "text"]
        assert len(record["neighbours"]) == 3
        assert all(n["label"] == toward and n["id"] != item_id for n in record["neighbours"])


def test_an_item_never_explains_itself():
    """A word only the planted error and the other items of its own fold hold is in no
    model that scored those items: out of fold it can never be evidence, while a model
    fitted on all items would take it as the strongest sign of 'sport'."""
    frame = topic_frame()
    frame.loc[0, "label"] = "food"  # a sport text labelled food
    labels = (frame["label"] == "sport").to_numpy().astype(int)  # classes sorted: food, sport
    folds = make_folds(labels, n_folds=5, random_state=0)
    same_fold = (folds == folds[0]) & (labels == 1)
    frame.loc[same_fold | (frame.index == 0), "text"] += " zqxv zqxv"
    result = scan(frame, scorers=["tfidf"], top=1, n_folds=5, random_state=0)
    record = flagged_record(result, 0)
    assert record["toward"] == "sport" and record["words"]
    assert not any("zqxv" in w["term"] for w in record["words"])
    leaky = TfidfScorer()
    features = leaky.prepare(TextDataset(np.arange(len(frame)), frame["text"].tolist(), None,
                                         labels, np.array(["food", "sport"])))
    leaky.fit(features, labels, n_classes=2)
    _, said = leaky.predict_explained(features[[0]], labels[[0]])
    assert any("zqxv" in str(t) for t in said.terms[0, 0])  # what a leak would show


class _Spy(Scorer):
    """Features are item positions: explain says which held-out items the model trained on."""

    explains = True

    def prepare(self, data, *, progress=False):
        return np.arange(len(data))[:, None]

    def fit(self, features, labels, *, n_classes):
        self.seen_ = set(features[:, 0].tolist())
        self.n_classes_ = n_classes
        return self

    def predict_proba(self, features):
        return np.full((len(features), self.n_classes_), 1 / self.n_classes_)

    def predict_explained(self, features, labels):
        n = len(features)
        terms = np.full((n, 1, 1), None, dtype=object)
        terms[:, 0, 0] = ["seen" if i in self.seen_ else "unseen" for i in features[:, 0]]
        return self.predict_proba(features), HeldOutWords(
            classes=np.array([[1 - y] for y in labels]), terms=terms,
            weights=np.ones((n, 1, 1), np.float32), pair=np.zeros((n, 1, 1), bool))


def test_each_items_words_come_from_the_fold_that_held_it_out():
    labels = np.array([0, 1] * 20)
    collector = WordCollector(len(labels), "spy")
    folds = make_folds(labels, n_folds=4, random_state=0)
    crossfit_pred_probs(_Spy(), np.arange(40)[:, None], labels, folds, n_classes=2,
                        words=collector)
    said = [collector.toward(i, 1 - labels[i]) for i in range(40)]
    assert said == [[("unseen", 1.0, False)]] * 40


def test_words_match_a_refit_without_the_item():
    frame = topic_frame(80, seed=3)
    frame.loc[5, "label"] = "sport" if frame.loc[5, "label"] == "food" else "food"
    result = scan(frame, scorers=["tfidf"], top=1, n_folds=4)
    record = result.explain(5)
    data = TextDataset(np.arange(80), frame["text"].tolist(), None, result.labels,
                       result.classes)
    folds = make_folds(result.labels, n_folds=4, random_state=0)
    scorer = TfidfScorer()
    features = scorer.prepare(data)
    train = folds != folds[5]
    model = TfidfScorer().fit(features[train], result.labels[train], n_classes=2)
    _, words = model.predict_explained(features[[5]], result.labels[[5]])
    assert [w["term"] for w in record["words"]] == [t for t in words.terms[0, 0] if t]


def test_a_planted_conflicting_duplicate_is_named():
    frame = topic_frame()
    frame.loc[7, "text"] = "  " + frame.loc[6, "text"].upper() + "!!"
    frame.loc[7, "label"] = "sport" if frame.loc[6, "label"] == "food" else "food"
    result = scan(frame, scorers=["tfidf"], top=10)
    flagged = [i for i in (6, 7) if result.to_frame().set_index("id").loc[i, "flagged"]]
    assert flagged
    for item in (6, 7):
        other = 13 - item
        record = result.explain(item)
        assert {"id": other, "label": frame.loc[other, "label"], "similarity": 1.0} \
            in record["duplicate_of"]
    assert "duplicates: 1 of 1 groups" in result.summary()


def test_a_near_duplicate_with_another_label_is_named():
    long = " ".join(SPORT * 6)
    frame = topic_frame()
    frame.loc[10, ["text", "label"]] = [long + " extra", "sport"]
    frame.loc[11, ["text", "label"]] = [long, "food"]
    named = scan(frame, scorers=["tfidf"]).explain(11)["duplicate_of"]
    assert [d["id"] for d in named] == [10] and 0.95 <= named[0]["similarity"] < 1.0


def test_duplicate_groups_and_conflicts():
    groups = duplicate_groups(["A b.", "a  B", "c", "C!"], None)
    assert groups.tolist() == [0, 0, 1, 1]
    assert conflicting_groups(groups, np.array([0, 0, 0, 1])) == (2, 1)
    paired = duplicate_groups(["a", "a"], ["x", "y"])
    assert paired.tolist() == [0, 1]


def test_pairs_say_which_side_a_word_comes_from():
    rng = np.random.default_rng(1)
    rows = []
    for i in range(80):
        label = ["sport", "food"][i % 2]
        words = SPORT if label == "sport" else FOOD
        rows.append((f"premise {i}", " ".join(rng.choice(words, 4)), label))
    frame = pd.DataFrame(rows, columns=["text", "hypothesis", "label"])
    frame.loc[0, "label"] = "food"
    record = scan(frame, text_pair="hypothesis", scorers=["tfidf"], top=1).explain(0)
    assert record["words"] and all(w["side"] == "text_pair" for w in record["words"])
    assert "(pair)" in evidence_text(record)


def test_every_format_carries_the_evidence(tmp_path):
    frame = topic_frame()
    frame.loc[0, "label"] = "food"
    result = scan(frame, scorers=["tfidf"], top=3)
    record = flagged_record(result, 0)
    result.write(tmp_path / "o.jsonl")
    first = json.loads((tmp_path / "o.jsonl").read_text().splitlines()[0])
    assert first["id"] == 0 and first["evidence"] == record
    result.write(tmp_path / "o.csv")
    line = pd.read_csv(tmp_path / "o.csv")["evidence"][0]
    assert line.startswith("toward sport: ") and line == evidence_text(record)
    assert [w["term"] for w in read_evidence(line)["words"]] == \
        [w["term"] for w in record["words"]]  # the line reads back
    result.write(tmp_path / "o.parquet")
    back = pd.read_parquet(tmp_path / "o.parquet")
    assert [w["term"] for w in back["evidence"][0]["words"]] == \
        [w["term"] for w in record["words"]]
    assert back["evidence"][len(back) - 1] is None  # not flagged


def test_explain_any_item_and_refuse_an_unknown_id():
    frame = topic_frame()
    frame["id"] = [f"r{i}" for i in range(len(frame))]
    frame.loc[0, "label"] = "food"
    result = scan(frame, scorers=["tfidf"], top=1)
    last = result.to_frame()["id"].iloc[-1]
    record = result.explain(last)
    assert record["toward"] != record["against"]
    assert all(n["label"] == record["toward"] for n in record["neighbours"])
    assert result.explain("r0")["words"] and result.to_frame()["id"].iloc[0] == "r0"
    with pytest.raises(InvalidParameterError, match="item id 'nope' is not in this scan"):
        result.explain("nope")


def test_no_evidence_and_given_probabilities(tmp_path):
    frame = topic_frame()
    frame.loc[0, "label"] = "food"
    off = scan(frame, scorers=["tfidf"], evidence=False)
    assert "evidence" not in off.to_frame().columns
    with pytest.raises(InvalidParameterError, match="evidence=False"):
        off.explain(0)
    probs = np.where(frame[["label"]].to_numpy() == ["food", "sport"], 0.9, 0.1)
    probs[0] = [0.1, 0.9]
    given = scan(frame, pred_probs=probs, top=1)
    record = given.explain(0)
    assert record["words"] == [] and record["words_from"] is None and record["neighbours"]
    assert "evidence: neighbours and duplicates only, no words (the probabilities are " \
        "yours (pred_probs))" in given.summary()
