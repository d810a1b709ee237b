"""What a label set may hold, one rule for every format: class names only. A null, NaN or
blank member (JSONL, Parquet) or a blank part between separators (CSV) is refused, naming
the rows, instead of becoming a class named "None"; a class name holding the separator is
refused where sets are written as text; an empty separator is refused."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from labelaudit._errors import InvalidInputError, InvalidParameterError
from labelaudit.cli import main
from labelaudit.io import format_label_set, read_label_sets


@pytest.mark.parametrize("values", [
    [["sports"], ["sports", None], ["tech"]],            # JSONL null
    [["sports"], np.array(["sports", np.nan], dtype=object), ["tech"]],  # Parquet NaN
    [["sports"], ["sports", "  "], ["tech"]],            # a blank name
])
def test_a_missing_member_of_a_list_is_refused_with_its_row(values):
    with pytest.raises(InvalidInputError, match=r"missing or empty label in row 'b'"):
        read_label_sets(pd.Series(values, dtype=object), column="label",
                        ids=np.array(["a", "b", "c"]))


@pytest.mark.parametrize("text", ["sports||tech", "sports|", "|tech"])
def test_a_blank_member_between_separators_is_refused_with_its_row(text):
    with pytest.raises(InvalidInputError, match=r"missing or empty label in row 'b'"):
        read_label_sets(pd.Series(["sports", text, ""]), column="label",
                        ids=np.array(["a", "b", "c"]), sep="|")


def test_empty_sets_stay_the_empty_set():
    Y, classes = read_label_sets(pd.Series([[], "", None, "a|b"], dtype=object), column="l",
                                 ids=np.arange(4), sep="|")
    assert classes.tolist() == ["a", "b"] and Y.tolist() == [[0, 0], [0, 0], [0, 0], [1, 1]]


def test_no_class_named_none_from_a_jsonl_file(tmp_path, capsys):
    path = tmp_path / "sets.jsonl"
    rows = [{"id": f"{i:03d}", "text": f"goal team {i}", "label": ["sports", "tech"][i % 2:][:1]}
            for i in range(12)]
    rows[4]["label"] = ["sports", None]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["scan", str(path), "--scorers", "tfidf", "-q"]) == 1
    err = capsys.readouterr().err
    assert "missing or empty label in row '004'" in err and len(err.strip().splitlines()) == 1


def test_a_class_holding_the_separator_is_not_written_as_text():
    classes = np.array(["sci|tech", "sports"], dtype=object)
    assert format_label_set(np.array([1, 1]), classes) == ["sci|tech", "sports"]
    assert format_label_set(np.array([1, 1]), classes, sep=";") == "sci|tech;sports"
    with pytest.raises(InvalidInputError, match=r"the class 'sci\|tech' holds '\|'") as info:
        format_label_set(np.array([1, 0]), classes, sep="|")
    assert info.value.params == ("label_sep",)


def test_scan_refuses_a_csv_whose_cells_would_not_read_back(tmp_path, capsys):
    path = tmp_path / "sets.jsonl"
    path.write_text("".join(
        json.dumps({"text": f"{['goal team', 'chip code'][i % 2]} {i}",
                    "label": [["sports"], ["sci|tech"]][i % 2]}) + "\n" for i in range(12)))
    out = tmp_path / "issues.csv"
    assert main(["scan", str(path), "--scorers", "tfidf", "-q", "--out", str(out)]) == 1
    err = capsys.readouterr().err.strip()
    assert "the class 'sci|tech' holds '|'" in err and "--label-sep" in err
    assert "label_sep" not in err and not out.exists()
    assert main(["scan", str(path), "--scorers", "tfidf", "-q", "--out", str(out),
                 "--label-sep", ";"]) == 0
    assert "sci|tech" in set(pd.read_csv(out)["label"])


def test_an_empty_separator_is_refused():
    with pytest.raises(InvalidParameterError, match="label_sep must be at least one") as info:
        read_label_sets(pd.Series(["a"]), column="label", ids=np.arange(1), sep="")
    assert info.value.params == ("label_sep",)
    with pytest.raises(InvalidParameterError, match="label_sep must be at least one"):
        format_label_set(np.array([1]), np.array(["a"]), sep="")
