"""Multi-label data: label sets read from lists or separated text, the multi-label scan
(one-vs-rest members on label-set folds, label-set scores, missing and extra classes), and
every other command either reading label sets (noise: tests/noise/test_noise_label_sets.py)
or refusing them with one line."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import labelaudit
from labelaudit._errors import InvalidInputError, InvalidParameterError
from labelaudit.cli import main
from labelaudit.io import read_label_sets
from labelaudit.scanning import LabelSetScanResult, label_set_scores

TOPICS = {"sport": ["goal", "match", "team", "coach"], "food": ["pasta", "sauce", "bread", "cook"],
          "tech": ["chip", "code", "app", "cloud"]}


def make_sets(n: int = 150, seed: int = 0) -> pd.DataFrame:
    """Texts of topic words labelled by the set of their topics (some items have none);
    item 0's set gains a class its words do not have, item 1's loses one it has."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        k = int(rng.choice([0, 1, 1, 2]))
        labels = sorted(rng.choice(list(TOPICS), size=k, replace=False).tolist())
        words = [str(rng.choice(TOPICS[t])) for t in labels for _ in range(2)]
        words += ["the", "and", "today"][: 3 - len(labels)]
        rows.append({"id": f"p{i}", "text": " ".join(rng.permutation(words)), "topics": labels})
    rows[0] = {"id": "p0", "text": "goal match team the", "topics": ["food", "sport"]}
    rows[1] = {"id": "p1", "text": "pasta sauce chip code", "topics": ["food"]}
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def sets():
    return make_sets()


@pytest.fixture(scope="module")
def result(sets):
    return labelaudit.scan(sets, label="topics", progress=False)


def test_read_label_sets_from_lists_and_separated_text():
    ids = np.arange(3)
    Y, classes = read_label_sets(pd.Series([["b", "a"], [], ["a"]]), column="l", ids=ids)
    assert Y.tolist() == [[1, 1], [0, 0], [1, 0]] and classes.tolist() == ["a", "b"]
    Y, _ = read_label_sets(pd.Series(["b|a", np.nan, " a "]), column="l", ids=ids, sep="|")
    assert Y.tolist() == [[1, 1], [0, 0], [1, 0]]  # an empty CSV cell is the empty set
    with pytest.raises(InvalidInputError, match=r"mixes lists of labels \(2 items\) and single "
                                                r"labels \(in row 2"):
        read_label_sets(pd.Series([["a"], ["b"], "a"]), column="l", ids=ids)
    with pytest.raises(InvalidInputError, match="no label set in row 1"):
        read_label_sets(pd.Series([["a"], None, ["b"]]), column="l", ids=ids)
    with pytest.raises(InvalidInputError, match=r"class names \['a\|b'\] .* hold the separator"):
        read_label_sets(pd.Series([["a|b"], ["c"], []]), column="l", ids=ids, sep="|")
    with pytest.raises(InvalidInputError, match="outside the classes"):
        read_label_sets(pd.Series([["a"], ["z"], []]), column="l", ids=ids, classes=["a"])


def test_label_set_folds_spread_every_class_and_the_items_evenly():
    from labelaudit.models._multilabel import label_set_folds

    rng = np.random.default_rng(3)
    Y = (rng.random((403, 6)) < [0.5, 0.2, 0.05, 0.02, 0.3, 0.01]).astype(np.int8)
    folds = label_set_folds(Y, n_folds=5, random_state=1)
    per_fold = np.array([Y[folds == f].sum(axis=0) for f in range(5)])
    assert (per_fold.max(axis=0) - per_fold.min(axis=0)).max() <= 1
    sizes = np.bincount(folds, minlength=5)
    assert sizes.max() - sizes.min() <= 1 and sizes.sum() == 403
    assert not np.array_equal(folds, label_set_folds(Y, n_folds=5, random_state=2))


def test_label_set_scores_rank_the_unlikely_set_first():
    Y = np.array([[1, 0], [1, 0], [0, 1]])
    P = np.array([[0.9, 0.1], [0.2, 0.7], [0.1, 0.9]])
    scores = label_set_scores(Y, P)
    assert {name: int(np.argmin(v)) for name, v in scores.items()} == {
        "log_likelihood": 1, "worst_class": 1, "cleanlab": 1}
    assert scores["worst_class"].round(2).tolist() == [0.9, 0.2, 0.9]
    assert scores["log_likelihood"][1] == pytest.approx(np.sqrt(0.2 * 0.3))


def test_scan_finds_the_planted_extra_and_missing_classes(result):
    assert isinstance(result, LabelSetScanResult)
    assert result.classes.tolist() == ["food", "sport", "tech"]
    frame = result.to_frame()
    top = frame.head(2).set_index("id")
    assert set(top.index) == {"p0", "p1"}
    assert top.loc["p0", "extra"] == ["food"] and top.loc["p0", "suggested_label"] == ["sport"]
    assert top.loc["p1", "missing"] == ["tech"] and top.loc["p1", "label"] == ["food"]
    assert frame["rank"].tolist()[:2] == [1, 2]
    assert "suggested set differs from the given one" in result.summary()
    top2 = labelaudit.scan(make_sets(), label="topics", top=2, progress=False)
    assert top2.to_frame()["flagged"].tolist()[:3] == [True, True, False]
    counts = top2.class_counts().set_index("class")
    assert counts.loc["tech", "flagged_missing"] == 1 and counts.loc["food", "flagged_extra"] == 1
    assert "multi-label" in result.summary() and "flagged_missing" in result.summary()
    joined = result.to_frame(sep="|")
    assert joined.set_index("id").loc["p0", "label"] == "food|sport"


def test_scan_reads_separated_text_and_the_same_sets_give_the_same_ranking(sets, result):
    text = sets.assign(topics=sets["topics"].map("|".join))
    again = labelaudit.scan(text, label="topics", label_sep="|", progress=False)
    np.testing.assert_allclose(again.scores["log_likelihood"], result.scores["log_likelihood"])
    assert again.to_frame()["id"].tolist() == result.to_frame()["id"].tolist()


def test_given_probabilities_replace_the_members(sets):
    Y, _ = read_label_sets(sets["topics"], column="topics", ids=np.arange(len(sets)))
    probs = np.where(Y == 1, 0.9, 0.1)
    probs[5] = 1 - probs[5]  # the model disagrees with item 5 on every class
    given = labelaudit.scan(sets, label="topics", pred_probs=probs, progress=False)
    assert list(given.member_probs) == ["pred_probs"]
    assert given.to_frame()["id"].iloc[0] == "p5"
    table = pd.DataFrame(probs, columns=["food", "sport", "tech"])[["tech", "food", "sport"]]
    by_name = labelaudit.scan(sets, label="topics", pred_probs=table, progress=False)
    np.testing.assert_allclose(by_name.pred_probs, given.pred_probs)
    with pytest.raises(InvalidInputError, match="one column per class"):
        labelaudit.scan(sets, label="topics", pred_probs=probs[:, :2], progress=False)
    with pytest.raises(InvalidInputError, match=r"probabilities in \[0, 1\]"):
        labelaudit.scan(sets, label="topics", pred_probs=probs * 2, progress=False)


def test_given_probabilities_skip_the_checks_only_cross_fitting_needs(sets):
    few = sets.head(6).copy()
    few.at[3, "topics"] = ["music"]  # a class on one item, and too few items for 5 folds
    Y, classes = read_label_sets(few["topics"], column="topics", ids=np.arange(len(few)))
    result = labelaudit.scan(few, label="topics", pred_probs=np.where(Y == 1, 0.8, 0.2),
                             classes=list(classes), progress=False)
    assert len(result.to_frame()) == 6 and "music" in list(result.classes)
    with pytest.raises(InvalidInputError, match="on a single item"):
        labelaudit.scan(few, label="topics", progress=False)


def test_single_label_options_and_bad_data_are_refused(sets):
    with pytest.raises(InvalidParameterError, match=r"methods=, n_seeds= go with one label"):
        labelaudit.scan(sets, label="topics", methods=["ensemble"], n_seeds=2)
    with pytest.raises(InvalidParameterError, match="do not score label sets"):
        labelaudit.scan(sets, label="topics", scorers=["finetune"])
    rare = sets.copy()
    rare.at[3, "topics"] = ["music"]
    with pytest.raises(InvalidInputError, match=r"1 class is on a single item: \['music'\]"):
        labelaudit.scan(rare, label="topics", progress=False)
    with pytest.raises(InvalidParameterError, match="rank_by"):
        labelaudit.scan(sets, label="topics", rank_by="nope")
    with pytest.raises(InvalidParameterError, match="threshold"):
        labelaudit.scan(sets, label="topics", threshold=1.5)
    with pytest.raises(InvalidParameterError, match="top"):
        labelaudit.scan(sets, label="topics", top=-1)
    below = labelaudit.scan(sets, label="topics", threshold=0.2, progress=False)
    assert below.flagged.tolist() == (below.scores["worst_class"] < 0.2).tolist()
    assert below.flag_rule == "worst_class below 0.2"


def test_cli_writes_sets_as_lists_or_joined_text(sets, tmp_path, capsys):
    sets.to_json(tmp_path / "posts.jsonl", orient="records", lines=True)
    sets.assign(topics=sets["topics"].map(";".join)).to_csv(tmp_path / "posts.csv", index=False)
    assert main(["scan", str(tmp_path / "posts.jsonl"), "--label", "topics", "--scorers",
                 "tfidf", "--out", str(tmp_path / "a.csv"), "--quiet"]) == 0  # not streamed
    written = pd.read_csv(tmp_path / "a.csv", keep_default_na=False).set_index("id")
    assert written.loc["p0", "label"] == "food|sport" and written.loc["p0", "extra"] == "food"
    assert main(["scan", str(tmp_path / "posts.csv"), "--label", "topics", "--label-sep", ";",
                 "--out", str(tmp_path / "b.jsonl"), "--rank-by", "worst_class",
                 "--quiet"]) == 0
    first = json.loads((tmp_path / "b.jsonl").read_text().splitlines()[0])
    assert isinstance(first["label"], list) and "score_worst_class" in first
    assert main(["scan", str(tmp_path / "posts.jsonl"), "--label", "topics", "--methods",
                 "ensemble", "--quiet"]) == 2  # a usage error
    assert "--methods goes with one label per item" in capsys.readouterr().err


def _list_labels(tmp_path) -> None:
    frame = make_sets(60).rename(columns={"topics": "label"})
    frame["is_error"] = frame["id"].isin(["p0", "p1"])
    frame["risk"] = np.arange(len(frame), dtype=float)
    for name in ("a", "b", "c"):
        frame.to_json(tmp_path / f"{name}.jsonl", orient="records", lines=True)


@pytest.mark.parametrize("argv", [
    ["train-bench", "a.jsonl", "--eval", "b.jsonl", "--methods", "base"],
    ["select", "a.jsonl", "--val", "b.jsonl", "--eval", "c.jsonl"],
    ["consistency", "a.jsonl", "--suspect", "b.jsonl", "--text", "text"],
    ["impact", "a.jsonl", "--predictions", "m=b.jsonl", "--flagged", "is_error",
     "--corrected-label", "label"],
    ["review", "init", "a.jsonl", "--db", "r.sqlite", "--rank-by", "risk", "--top", "5"],
], ids=lambda argv: argv[0] if argv[0] != "review" else "review-init")
def test_commands_of_one_label_per_item_refuse_label_sets_in_one_line(argv, tmp_path, capsys,
                                                                      monkeypatch):
    _list_labels(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert main([*argv, "--quiet"] if argv[0] != "review" else argv) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "holds label sets (multi-label)" in err, err
    assert "`labelaudit scan` audits label sets" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.jsonl", "b.jsonl", "c.jsonl"]


def test_evaluate_compares_label_sets_at_item_and_class_level(result, tmp_path, capsys):
    result.write(tmp_path / "issues.jsonl")
    truth = pd.DataFrame({"id": result.ids, "true_label": [
        ["sport"] if i == "p0" else ["food", "tech"] if i == "p1" else
        list(reversed([str(c) for c in result.classes[row.astype(bool)]]))
        for i, row in zip(result.ids, result.label_sets, strict=True)]})
    truth.to_json(tmp_path / "truth.jsonl", orient="records", lines=True)
    assert main(["evaluate", str(tmp_path / "issues.jsonl"), "--eval",
                 str(tmp_path / "truth.jsonl"), "--true-label", "true_label",
                 "--format", "json", "--quiet"]) == 0
    rows = json.loads(capsys.readouterr().out)
    best = {r["method"]: r for r in rows}["log_likelihood"]
    assert best["n_errors"] == 2 and best["average_precision"] == pytest.approx(1.0)
    metrics = labelaudit.evaluate(tmp_path / "issues.jsonl", tmp_path / "truth.jsonl",
                                  true_label="true_label")
    classes = metrics.classes.set_index("class")
    assert classes.loc["food", ["changed", "hits"]].tolist() == [1, 1]  # p0's extra food
    assert classes.loc["tech", ["changed", "hits"]].tolist() == [1, 1]  # p1's missing tech
    assert classes.loc["all", "changed"] == 2 and classes.loc["all", "recall"] == 1.0
    assert "per class" in metrics.summary() and "classes" in metrics.to_dict()


def test_a_hugging_face_sequence_of_class_labels_is_read_as_label_sets(sets, result):
    import datasets

    names = ["food", "sport", "tech"]
    features = datasets.Features({"id": datasets.Value("string"),
                                  "text": datasets.Value("string"),
                                  "topics": datasets.Sequence(datasets.ClassLabel(names=names))})
    ds = datasets.Dataset.from_dict({
        "id": sets["id"].tolist(), "text": sets["text"].tolist(),
        "topics": [[names.index(t) for t in row] for row in sets["topics"]]}, features)
    from_hub = labelaudit.scan(ds, label="topics", progress=False)
    assert isinstance(from_hub, LabelSetScanResult) and from_hub.classes.tolist() == names
    np.testing.assert_allclose(from_hub.scores["worst_class"], result.scores["worst_class"])


def test_a_bad_class_label_id_in_a_sequence_is_named_by_its_row():
    """datasets refuses such ids when it builds a dataset, so the check is tested alone:
    every row's ids are checked in one pass, and a bad one is named by its item's row."""
    from labelaudit.io._read import _class_name_sets

    rows = pd.Series([[0], [], [1, 7]])
    with pytest.raises(InvalidInputError, match=r"ids with no name \(7\) in row 2;"):
        _class_name_sets(rows, ["a", "b"], "topics", "the dataset")
    assert _class_name_sets(rows.iloc[:2], ["a", "b"], "topics", "d") == [["a"], []]
