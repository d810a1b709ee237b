"""The report of a multi-label scan reads label sets with io's one rule: a null or blank
member of a set, in the scan output or in the truth given with --eval, is one line on
stderr (exit 1) naming the file, the column and the item, never a class named "None"."""

from __future__ import annotations

import json

import pytest

from labelaudit._errors import InvalidInputError
from labelaudit.cli import main
from labelaudit.report import render_report

GIVEN = [["tech", "politics"], ["politics", "tech"], ["sport"], [], ["tech"], ["sport"]]


def _scan_rows(**changes) -> list[dict]:
    """A multi-label scan's output of six items as JSON lines rows; item 5 lacks tech."""
    rows = [{"id": f"d{i}", "text": "t", "label": given, "suggested_label": given,
             "missing": [] if i < 5 else ["tech"], "extra": [],
             "score_worst_class": 0.9 - 0.1 * i, "rank": 6 - i, "flagged": i == 5}
            for i, given in enumerate(GIVEN)]
    for key, value in changes.items():
        rows[3][key] = value
    return rows


def _jsonl(path, rows) -> None:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


@pytest.mark.parametrize("column", ["label", "suggested_label", "missing", "extra"])
def test_a_scan_output_set_holding_null_is_one_line(tmp_path, capsys, column):
    issues = tmp_path / "issues.jsonl"
    _jsonl(issues, _scan_rows(**{column: ["tech", None]}))
    before = issues.read_bytes()
    said = (f"{issues}: column {column!r} has a label set with a missing or empty label in "
            "row 'd3'")
    with pytest.raises(InvalidInputError, match=f"^{said}"):
        render_report(issues)
    assert main(["report", str(issues), "--out", str(tmp_path / "r.html")]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and said in err
    assert issues.read_bytes() == before and not (tmp_path / "r.html").exists()


def test_a_truth_set_holding_null_is_one_line(tmp_path, capsys):
    issues, truth = tmp_path / "issues.jsonl", tmp_path / "truth.jsonl"
    _jsonl(issues, _scan_rows())
    _jsonl(truth, [{"id": f"d{i}", "true_label": [*s, None] if i == 2 else s}
                   for i, s in enumerate(GIVEN)])
    assert main(["report", str(issues), "--eval", str(truth), "--true-label", "true_label",
                 "--out", str(tmp_path / "r.html")]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert (f"{truth}: column 'true_label' has a label set with a missing or empty label in "
            "row 'd2'") in err
    assert not (tmp_path / "r.html").exists()
