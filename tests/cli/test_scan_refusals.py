"""``labelaudit scan`` refuses, before any work, what it would silently ignore or get wrong:
scoring the data it trains on, an encoder no member takes, a pair mode without pairs, folds
when scoring a separate split, streaming label sets; and keeps its messages short."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest
from tests.conftest import make_topic_frame

from labelaudit.cli import main


@pytest.fixture()
def data_file(tmp_path):
    path = tmp_path / "data.csv"
    make_topic_frame(12, n_errors=3).drop(columns=["true_label", "is_error"]).to_csv(
        path, index=False)
    return path


def _one_line_error(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Traceback" not in err[0], err
    return err[0]


def test_scoring_the_training_file_itself_is_refused(data_file, capsys):
    before = data_file.read_bytes()
    assert main(["scan", str(data_file), "--score", str(data_file), "--scorers", "tfidf"]) != 0
    line = _one_line_error(capsys)
    assert re.search("data and (--score|score=) are the same file", line)
    assert "look right by construction" in line and data_file.read_bytes() == before


def test_scoring_items_of_the_training_file_warns(data_file, tmp_path, capsys):
    part = tmp_path / "part.csv"
    part.write_text("".join(data_file.read_text().splitlines(keepends=True)[:11]))
    assert main(["scan", str(data_file), "--score", str(part), "--scorers", "tfidf"]) == 0
    err = capsys.readouterr().err
    assert "warning: 10 of the 10 scored items (100%) are also in the training set" in err


@pytest.mark.parametrize(("flags", "says"), [
    (["--model", "nonexistent/model"], "--model sets the encoder of the embed, finetune"),
    (["--preset", "fast", "--model", "x"], "the members (tfidf) take none"),
    (["--scorers", "embed", "--pair-mode", "joint"], "without --text-pair the texts are single"),
    (["--scorers", "tfidf", "--pair-mode", "joint", "--text-pair", "text"],
     "add embed to --scorers, or drop --pair-mode"),
])
def test_options_no_member_takes_are_usage_errors(data_file, flags, says, capsys):
    assert main(["scan", str(data_file), *flags]) == 2
    assert says in _one_line_error(capsys)


def test_folds_with_a_separate_split_to_score_are_a_usage_error(data_file, tmp_path, capsys):
    other = tmp_path / "other.csv"
    make_topic_frame(4, seed=3).drop(columns=["true_label", "is_error"]).to_csv(other,
                                                                                 index=False)
    assert main(["scan", str(data_file), "--score", str(other), "--folds", "3"]) == 2
    assert "error: --folds sets the cross-fitting of the data; with --score" in \
        capsys.readouterr().err


def test_streaming_label_sets_is_refused_before_any_work(tmp_path, capsys):
    data = tmp_path / "topics.jsonl"
    frame = make_topic_frame(8)
    data.write_text("".join(json.dumps({"id": i, "text": t, "label": [c]}) + "\n"
                            for i, (t, c) in enumerate(zip(frame["text"], frame["label"],
                                                           strict=True))))
    out = tmp_path / "issues.parquet"
    assert main(["scan", str(data), "--engine", "local", "--scorers", "tfidf",
                 "--out", str(out)]) == 2
    assert "column 'label' holds label sets (multi-label)" in _one_line_error(capsys)
    assert not out.exists()


def test_show_0_prints_the_summary_alone(data_file, capsys):
    assert main(["scan", str(data_file), "--scorers", "tfidf", "--show", "0"]) == 0
    out = capsys.readouterr()
    assert out.out == "" and "Empty DataFrame" not in out.err and "items: 36" in out.err


def test_a_label_column_of_texts_is_named_in_a_short_line(data_file, tmp_path, capsys):
    titled = tmp_path / "titled.csv"
    pd.read_csv(data_file).assign(title=lambda f: f["text"]).to_csv(titled, index=False)
    assert main(["scan", str(titled), "--label", "title", "--scorers", "tfidf"]) == 1
    line = _one_line_error(capsys)
    assert "and 31 more have a single item" in line and len(line) < 400


@pytest.mark.parametrize(("flags", "says"), [
    (["--text-pair", "text"], "--text and --text-pair both name column 'text'"),
    (["--label", "text"], "--text and --label both name column 'text'"),
    (["--text", "label"], "--text and --label both name column 'label'"),
])
def test_one_column_in_two_roles_is_a_usage_error(data_file, flags, says, capsys):
    assert main(["scan", str(data_file), "--scorers", "tfidf", *flags]) == 2
    assert says in _one_line_error(capsys)
