"""``labelaudit report`` refuses an edited or damaged scan output with one line that names
the column, the first offending row and the fix, and writes nothing."""

from __future__ import annotations

import pandas as pd
import pytest

from labelaudit.cli import main

FIX = "re-run `labelaudit scan --out` rather than editing its output"


def _run(tmp_path, frame: pd.DataFrame, capsys) -> tuple[int, str]:
    path = tmp_path / "issues.csv"
    frame.to_csv(path, index=False)
    code = main(["report", str(path), "--out", str(tmp_path / "report.html")])
    err = capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["issues.csv"]
    return code, err


def _edited(make_scan_frame, column: str, row: int, value: object) -> pd.DataFrame:
    frame = make_scan_frame().astype({column: object})
    frame.loc[row, column] = value
    return frame


@pytest.mark.parametrize(("column", "value", "shown"), [
    ("given_prob", -1.2, "has -1.2"), ("given_prob", 41, "has 41.0"),
    ("suggested_prob", None, "is blank"), ("given_prob", "high", "has 'high'")])
def test_probability_outside_0_1_is_refused(tmp_path, make_scan_frame, capsys, column, value,
                                            shown):
    frame = _edited(make_scan_frame, column, 4, value)
    code, err = _run(tmp_path, frame, capsys)
    assert code == 1
    assert err == (f"labelaudit report: error: issues.csv: column {column!r} must hold "
                   f"probabilities in [0, 1]; row 5 (id {frame['id'][4]!r}) {shown}; {FIX}\n")


def test_reversed_rank_is_refused(tmp_path, make_scan_frame, capsys):
    frame = make_scan_frame()
    frame["rank"] = frame["rank"].to_numpy()[::-1]
    code, err = _run(tmp_path, frame, capsys)
    assert code == 1 and err.count("\n") == 1
    assert err.startswith("labelaudit report: error: issues.csv: column 'rank' does not "
                          "follow the scan's ranking")
    # rank 2 is the table's second-to-last row
    assert f"rank 2 at row 59 (id {frame['id'][58]!r})" in err and err.endswith(f"{FIX}\n")


def test_duplicated_rank_is_refused(tmp_path, make_scan_frame, capsys):
    frame = make_scan_frame()
    frame.loc[3, "rank"] = 3
    code, err = _run(tmp_path, frame, capsys)
    assert code == 1
    assert err == ("labelaudit report: error: issues.csv: column 'rank' must number the rows "
                   f"1 to 60, each once; rank 3 is on rows 3 and 4; {FIX}\n")


@pytest.mark.parametrize(("value", "shown"), [(0, "has 0"), (61, "has 61"), (2.5, "has 2.5"),
                                              (None, "is blank")])
def test_rank_outside_1_n_is_refused(tmp_path, make_scan_frame, capsys, value, shown):
    code, err = _run(tmp_path, _edited(make_scan_frame, "rank", 6, value), capsys)
    assert code == 1
    assert "column 'rank' must number the rows 1 to 60, each once; row 7 (id " in err
    assert f") {shown}" in err and err.count("\n") == 1


def test_duplicate_ids_are_refused(tmp_path, make_scan_frame, capsys):
    frame = make_scan_frame()
    frame.loc[[9, 20], "id"] = frame.loc[2, "id"]
    frame.loc[30, "id"] = frame.loc[31, "id"]
    code, err = _run(tmp_path, frame, capsys)
    assert code == 1
    assert err == (f"labelaudit report: error: issues.csv: column 'id' must name each item "
                   f"once; id {frame['id'][2]!r} is on rows 3, 10 and 21 (2 repeated ids in "
                   f"all); {FIX}\n")


def test_a_sound_table_in_any_row_order_is_read(tmp_path, make_scan_frame, capsys):
    frame = make_scan_frame().sample(frac=1.0, random_state=0)  # e.g. sorted by hand
    frame.loc[frame.index[0], "given_prob"] = 1.0 + 1e-9  # rounding, clipped
    path = tmp_path / "issues.csv"
    frame.to_csv(path, index=False)
    assert main(["report", str(path), "--out", str(tmp_path / "r.html"), "-q"]) == 0
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert 'id="error-estimate"' in html
    # without a rank column the report ranks by the given label's probability
    frame.drop(columns=["rank"]).to_csv(path, index=False)
    assert main(["report", str(path), "--out", str(tmp_path / "r2.html"), "-q"]) == 0
