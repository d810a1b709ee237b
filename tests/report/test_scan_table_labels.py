"""The report refuses a scan table with a blank given or suggested label in one line naming
the column, the row and what is expected."""

from __future__ import annotations

import pandas as pd
import pytest

from labelaudit.cli import main


@pytest.mark.parametrize("column", ["label", "suggested_label"])
def test_a_blank_label_names_its_row_and_column(tmp_path, capsys, column):
    table = pd.DataFrame({"id": ["a", "b", "c", "d"], "text": "t",
                          "label": ["pos", "neg", "pos", "neg"],
                          "suggested_label": ["neg", "pos", "neg", "pos"],
                          "suggested_prob": [0.9, 0.8, 0.3, 0.2],
                          "given_prob": [0.1, 0.2, 0.7, 0.8], "rank": [1, 2, 3, 4],
                          "flagged": [True, True, False, False]})
    table.loc[2, column] = None
    path = tmp_path / "issues.csv"
    table.to_csv(path, index=False)
    before = path.read_bytes()
    assert main(["report", str(path), "--out", str(tmp_path / "r.html")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"labelaudit report: error: {path.name}: column {column!r} must hold a label on "
                   "every row (one of the classes); row 3 (id 'c') is blank; re-run "
                   "`labelaudit scan --out` rather than editing its output"]
    assert path.read_bytes() == before and not (tmp_path / "r.html").exists()
