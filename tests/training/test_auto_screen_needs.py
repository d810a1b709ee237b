"""What ``train --method auto`` needs before it screens: enough items of every class to
hold some out and train on the rest, and one label per item (label sets name the methods
that take them). Both are refused in one line before any model is fitted."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from labelaudit.cli import main


def _one_line_error(capsys, argv) -> str:
    assert main([str(a) for a in argv]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


def test_auto_on_four_rows_says_what_it_needs(tmp_path, capsys):
    pd.DataFrame({"text": ["match goal", "goal cup", "pasta sauce", "bake soup"],
                  "label": ["sport", "sport", "food", "food"]}).to_csv(
        tmp_path / "four.csv", index=False)
    line = _one_line_error(capsys, ["train", tmp_path / "four.csv", "--method", "auto",
                                    "--out", tmp_path / "model"])
    assert ("every class needs at least 3 items; 2 classes have fewer: food (2), sport (2)"
            in line and "or name a method" in line)
    assert not (tmp_path / "model").exists()


def test_auto_on_label_sets_names_the_methods_that_take_them(tmp_path, capsys):
    rows = [{"text": f"item {i}", "topics": ["a", "b"] if i % 2 else ["a"]} for i in range(12)]
    (tmp_path / "sets.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    line = _one_line_error(capsys, ["train", tmp_path / "sets.jsonl", "--label", "topics",
                                    "--method", "auto", "--out", tmp_path / "model"])
    assert "holds label sets (multi-label), and method 'auto' screens methods that take " \
        "one label per item; for label sets: base or filter" in line


@pytest.mark.parametrize("method", ["mixup", "seal"])
def test_other_methods_on_label_sets_name_base_and_filter(tmp_path, capsys, method):
    rows = [{"text": f"item {i}", "topics": ["a", "b"] if i % 2 else ["a"]} for i in range(12)]
    (tmp_path / "sets.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    line = _one_line_error(capsys, ["train", tmp_path / "sets.jsonl", "--label", "topics",
                                    "--method", method, "--out", tmp_path / "model"])
    assert f"method '{method}' takes one label per item; for label sets: base or filter" in line
