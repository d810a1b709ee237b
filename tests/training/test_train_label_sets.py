"""train on label sets: a sigmoid per class with binary cross-entropy (base), filter with
the multi-label scan, save/load, predict and evaluate; other methods refused in one line."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import labelaudit
import labelaudit.training
from labelaudit._errors import InvalidInputError, InvalidParameterError
from labelaudit.cli import main
from labelaudit.training import evaluate_model, load_model

TOPICS = {"sport": ["goal", "match", "team"], "food": ["pasta", "sauce", "bread"],
          "tech": ["chip", "code", "cloud"]}


@pytest.fixture(scope="module")
def sets():
    rng = np.random.default_rng(0)
    rows = []
    for i in range(90):
        labels = sorted(rng.choice(list(TOPICS), size=int(rng.choice([1, 2])),
                                   replace=False).tolist())
        words = [str(rng.choice(TOPICS[t])) for t in labels for _ in range(2)]
        rows.append({"id": i, "text": " ".join(words), "topics": labels})
    return pd.DataFrame(rows)


def fit(frame, tiny_st_dir, **options):
    options.setdefault("epochs", 20)
    return labelaudit.training.train(frame, text="text", label="topics", model=str(tiny_st_dir),
                            **options)


def test_base_learns_label_sets_and_round_trips(sets, tiny_st_dir, tmp_path):
    model = fit(sets, tiny_st_dir)
    assert model.multi_label and model.log["multi_label"]
    assert model.classes.tolist() == ["food", "sport", "tech"]
    losses = model.log["losses"]
    assert losses[-1] < losses[0]
    probs = model.predict_proba(sets)
    assert probs.shape == (90, 3) and ((probs >= 0) & (probs <= 1)).all()
    assert not np.allclose(probs.sum(axis=1), 1.0)  # one sigmoid per class, not a softmax
    predicted = model.predict(sets)
    assert all(isinstance(p, list) for p in predicted)
    again = load_model(model.save(tmp_path / "model"))
    assert again.multi_label
    np.testing.assert_allclose(again.predict_proba(sets), probs, atol=1e-6)
    metrics = evaluate_model(model, sets, text="text", label="topics")
    assert set(metrics.extra) >= {"subset_accuracy", "micro_f1", "hamming_loss"}
    assert metrics.top1 == metrics.extra["subset_accuracy"]
    assert "subset accuracy" in metrics.summary() and metrics.to_dict()["top5"] is None


def test_filter_drops_or_relabels_what_the_multi_label_scan_flags(sets, tiny_st_dir):
    noisy = sets.copy()
    noisy.at[0, "topics"] = sorted(set(noisy.at[0, "topics"]) ^ {"tech", "sport", "food"})
    dropped = fit(noisy, tiny_st_dir, method="filter")
    flagged = dropped.log["flagged"]
    assert flagged >= 1 and dropped.log["n_used"] == 90 - flagged
    relabelled = fit(noisy, tiny_st_dir, method="filter", filter="relabel")
    assert relabelled.log["n_used"] == 90 and relabelled.log["filter"] == "relabel"
    from labelaudit.training import training_notes

    assert any("multi-label scan" in line for line in training_notes(dropped))


def test_other_methods_and_options_refuse_label_sets(sets, tiny_st_dir):
    with pytest.raises(InvalidParameterError, match=r"method 'seal' takes one label per item; "
                                                    r"for label sets: base or filter"):
        fit(sets, tiny_st_dir, method="seal")
    with pytest.raises(InvalidParameterError, match="noise_rate and filter_detector"):
        fit(sets, tiny_st_dir, method="base", noise_rate=0.1)
    rare = sets.copy()
    rare.at[0, "topics"] = ["music"]
    with pytest.raises(InvalidInputError, match=r"1 class is on a single item: \['music'\]"):
        fit(rare, tiny_st_dir)


def test_cli_trains_evaluates_and_predicts_label_sets(sets, tiny_st_dir, tmp_path, capsys):
    joined = sets.assign(topics=sets["topics"].map("|".join))
    joined.to_csv(tmp_path / "posts.csv", index=False)
    joined.iloc[::3].to_csv(tmp_path / "held.csv", index=False)  # --eval: another file
    assert main(["train", str(tmp_path / "posts.csv"), "--label", "topics", "--label-sep", "|",
                 "--model", str(tiny_st_dir), "--epochs", "5", "--out",
                 str(tmp_path / "model"), "--eval", str(tmp_path / "held.csv"),
                 "--metrics-out", str(tmp_path / "m.json")]) == 0
    assert "(label sets)" in capsys.readouterr().err
    doc = json.loads((tmp_path / "m.json").read_text())
    assert doc["multi_label"] and doc["top5"] is None and 0 <= doc["micro_f1"] <= 1
    assert main(["predict", str(tmp_path / "model"), str(tmp_path / "posts.csv"), "--out",
                 str(tmp_path / "pred.jsonl"), "--quiet"]) == 0
    first = json.loads((tmp_path / "pred.jsonl").read_text().splitlines()[0])
    assert isinstance(first["labels"], list) and {"prob_food", "prob_sport"} <= set(first)


def test_cli_refuses_sets_on_one_side_only_before_training(sets, tiny_st_dir, tmp_path,
                                                           capsys):
    sets.to_json(tmp_path / "multi.jsonl", orient="records", lines=True)
    sets.assign(topics=sets["topics"].str[0]).to_json(tmp_path / "single.jsonl",
                                                      orient="records", lines=True)
    for train, held in (("single.jsonl", "multi.jsonl"), ("multi.jsonl", "single.jsonl")):
        assert main(["train", str(tmp_path / train), "--label", "topics", "--model",
                     str(tiny_st_dir), "--eval", str(tmp_path / held), "--metrics-out",
                     str(tmp_path / "m.json")]) == 1
        assert "give both the same kind of labels" in capsys.readouterr().err
    assert not (tmp_path / "m.json").exists()
