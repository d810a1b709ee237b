"""The input's other columns in scan's output (``keep_columns``, ``--no-keep-columns``)."""

import numpy as np
import pandas as pd
import pytest
from tests.conftest import make_topic_frame

from labelaudit import scan
from labelaudit.cli import main

LABELAUDIT = ["id", "text", "label", "suggested_label", "suggested_prob", "given_prob",
              "loss", "rank"]


def perfect(frame):
    classes = sorted(set(frame["label"]))
    return np.eye(len(classes))[frame["label"].map(classes.index)] * 0.9 + 0.1 / len(classes)


@pytest.fixture
def frame():
    data = make_topic_frame(6, n_errors=2)
    data["source"] = [f"forum{i % 4}" for i in range(len(data))]
    data["year"] = np.arange(len(data)) + 2000
    return data


def test_kept_columns_follow_labelaudit_columns_aligned_by_item(frame):
    out = scan(frame, scorers=["tfidf"]).to_frame()
    assert out.columns.tolist()[:len(LABELAUDIT)] == LABELAUDIT
    assert out.columns.tolist()[-4:] == ["true_label", "is_error", "source", "year"]
    by_id = frame.set_index("id")
    for column in ("source", "year", "true_label"):
        assert out[column].tolist() == by_id.loc[out["id"], column].tolist()
    dropped = scan(frame, scorers=["tfidf"], keep_columns=False)
    assert dropped.extra is None
    assert not {"source", "year", "true_label"} & set(dropped.to_frame().columns)


def test_used_columns_are_not_repeated(frame):
    renamed = frame.rename(columns={"text": "body", "label": "gold", "id": "key"})
    renamed["votes"] = [["a"]] * len(renamed)
    result = scan(renamed, text="body", label="gold", id="key", pred_probs=perfect(frame))
    assert result.extra is not None
    assert result.extra.columns.tolist() == ["true_label", "is_error", "source", "year", "votes"]


def test_clashing_names_get_an_input_prefix(frame):
    frame = frame.assign(rank=1, score_old=0.5, flagged="maybe", input_rank=7)
    out = scan(frame, pred_probs=perfect(frame)).to_frame()
    assert {"input_score_old", "input_flagged", "input_input_rank"} <= set(out.columns)
    assert (out["input_flagged"] == "maybe").all() and (out["input_input_rank"] == 1).all()
    assert (out["input_rank"] == 7).all()
    assert out["rank"].tolist() == list(range(1, len(out) + 1))  # labelaudit's own
    assert "score_old" not in out.columns  # evaluate and review read score_* as scores


def test_with_score_the_scored_files_columns_are_kept():
    train = make_topic_frame(8, seed=1).assign(part="train")
    test = make_topic_frame(4, seed=2, n_errors=1).drop(columns=["true_label"]).assign(
        batch=lambda d: np.arange(len(d)))
    out = scan(train, score=test, scorers=["tfidf"]).to_frame()
    assert len(out) == len(test) and "batch" in out.columns
    assert "part" not in out.columns and "true_label" not in out.columns


def test_cli_keeps_columns_unless_told_not_to(frame, tmp_path):
    frame.to_csv(tmp_path / "data.csv", index=False)
    kept, dropped = tmp_path / "kept.parquet", tmp_path / "dropped.csv"
    assert main(["scan", str(tmp_path / "data.csv"), "--scorers", "tfidf", "--out", str(kept),
                 "-q"]) == 0
    written = pd.read_parquet(kept)
    assert {"source", "year", "true_label", "is_error"} <= set(written.columns)
    assert main(["scan", str(tmp_path / "data.csv"), "--scorers", "tfidf",
                 "--no-keep-columns", "--out", str(dropped), "-q"]) == 0
    written = pd.read_csv(dropped)
    assert not {"source", "year", "true_label", "is_error"} & set(written.columns)
    assert written.columns.tolist()[:len(LABELAUDIT)] == LABELAUDIT


def test_a_mixed_kept_column_parquet_cannot_hold_is_one_line(tmp_path, capsys):
    data = make_topic_frame(4)
    data["meta"] = [1 if i % 2 else "x" for i in range(len(data))]
    data.to_json(tmp_path / "data.jsonl", orient="records", lines=True)
    out = tmp_path / "issues.parquet"
    assert main(["scan", str(tmp_path / "data.jsonl"), "--pred-probs",
                 str(_save(tmp_path, perfect(data))), "--out", str(out), "-q"]) == 1
    assert "mixes value types" in capsys.readouterr().err and not out.exists()
    assert main(["scan", str(tmp_path / "data.jsonl"), "--pred-probs",
                 str(tmp_path / "probs.npy"), "--no-keep-columns", "--out", str(out),
                 "-q"]) == 0


def _save(folder, probs):
    np.save(folder / "probs.npy", probs)
    return folder / "probs.npy"
