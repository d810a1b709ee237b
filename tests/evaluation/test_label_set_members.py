"""A label set that evaluate reads (the truth's sets, the scan output's given, missing and
extra sets) holds class names only: a null or blank member is refused with io's one rule
and wording, naming the file, the column and the item, instead of counting as a class named
"None". Ids of the per-class table are matched as the item-level join matches them."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from labelaudit._errors import InvalidInputError
from labelaudit.cli import main
from labelaudit.evaluation import class_metrics, evaluate

GIVEN = [["tech", "politics"], ["politics", "tech"], ["sport"], [], ["tech"], ["sport"]]
TRUE = [["politics", "tech"], ["tech", "politics"], ["sport"], [], ["tech"], ["tech", "sport"]]


def _scan_output(**changes) -> pd.DataFrame:
    """A multi-label scan's output of six items; item 5 lacks tech (named missing)."""
    return pd.DataFrame({
        "id": range(6), "text": "t", "label": GIVEN, "suggested_label": GIVEN,
        "missing": [[]] * 5 + [["tech"]], "extra": [[]] * 6,
        "score_worst_class": [0.9, 0.8, 0.7, 0.6, 0.5, 0.1], "rank": [6, 5, 4, 3, 2, 1],
        "flagged": [False] * 5 + [True], **changes})


def _jsonl(path, rows) -> None:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


@pytest.mark.parametrize("member", [None, "", "  "])
def test_a_truth_set_holding_null_or_blank_is_one_line_exit_1(tmp_path, capsys, member):
    _scan_output().to_json(tmp_path / "issues.jsonl", orient="records", lines=True)
    truth = tmp_path / "truth.jsonl"
    _jsonl(truth, [{"id": i, "true_label": [*s, member] if i == 2 else s}
                   for i, s in enumerate(TRUE)])
    before = truth.read_bytes()
    said = (f"{truth}: column 'true_label' has a label set with a missing or empty label in "
            "row 2")
    with pytest.raises(InvalidInputError, match=f"^{said}"):
        evaluate(tmp_path / "issues.jsonl", truth)
    assert main(["evaluate", str(tmp_path / "issues.jsonl"), "--eval", str(truth), "-q"]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and said in err and "'None'" not in err
    assert truth.read_bytes() == before


@pytest.mark.parametrize("column", ["label", "missing", "extra"])
def test_a_scan_output_set_holding_null_is_refused(column):
    sets = {"label": GIVEN, "missing": [[]] * 5 + [["tech"]], "extra": [[]] * 6}[column]
    issues = _scan_output(**{column: [*sets[:3], [*sets[3], None], *sets[4:]]})
    truth = pd.DataFrame({"id": range(6), "true_label": TRUE})
    with pytest.raises(InvalidInputError, match=rf"^issues: column '{column}' has a label set "
                       r"with a missing or empty label in row 3 \(e\.g\."):
        evaluate(issues, truth, true_label="true_label")
    with pytest.raises(InvalidInputError, match=rf"^issues: column '{column}'"):
        class_metrics(issues, truth, id="id", label="label", true_label="true_label")


def test_a_text_set_with_an_empty_part_is_refused_and_a_blank_cell_is_the_empty_set():
    issues = _scan_output(**{c: ["|".join(v) for v in _scan_output()[c]]
                             for c in ("label", "suggested_label", "missing", "extra")})
    truth = pd.DataFrame({"id": range(6), "true_label": ["|".join(v) for v in TRUE]})
    assert evaluate(issues, truth).n_errors == 1  # item 3's blank cells: the empty set
    truth.loc[4, "true_label"] = "tech||sport"
    with pytest.raises(InvalidInputError, match=r"column 'true_label' .* in row 4"):
        evaluate(issues, truth)


@pytest.mark.parametrize("truth_ids", [
    [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, np.nan],  # a CSV column of ids with a blank: floats
    ["0", "1", "2", "3", "4", " 5", None],    # ids as text, one with a space
])
def test_the_per_class_table_matches_ids_as_the_item_join_does(truth_ids):
    issues = _scan_output()
    truth = pd.DataFrame({"id": truth_ids, "true_label": [*TRUE, ["sport"]]})
    classes = class_metrics(issues, truth, id="id", label="label", true_label="true_label")
    table = classes.set_index("class")
    assert table.loc["all", "changed"] == 1 and table.loc["tech", "hits"] == 1
    assert table.loc["tech", "recall"] == 1.0
