"""Label sets are compared as sets when a scan output is measured against true label sets:
in any order, whatever the file format (CSV text, JSONL or Parquet lists), an empty set being
an empty set; the per-class table counts the same items."""

from __future__ import annotations

import pandas as pd
import pytest

from labelaudit.cli import main
from labelaudit.evaluation import evaluate


def _scan_output(sep: str | None = "|") -> pd.DataFrame:
    """A multi-label scan's output of six items; item 3 has the empty set."""
    given = [["tech", "politics"], ["politics", "tech"], ["sport"], [], ["tech"], ["sport"]]

    def sets(values):
        return [sep.join(v) if sep is not None else v for v in values]

    return pd.DataFrame({
        "id": range(6), "text": "t", "label": sets(given), "suggested_label": sets(given),
        "missing": sets([[]] * 5 + [["tech"]]), "extra": sets([[]] * 6),
        "score_worst_class": [0.9, 0.8, 0.7, 0.6, 0.5, 0.1], "rank": [6, 5, 4, 3, 2, 1],
        "flagged": [False] * 5 + [True]})


# The truth writes every set in another order; only item 5 differs (tech added).
TRUE = [["politics", "tech"], ["tech", "politics"], ["sport"], [], ["tech"], ["tech", "sport"]]


def _truth(sep: str | None = "|") -> pd.DataFrame:
    return pd.DataFrame({"id": range(6), "true_label": [
        sep.join(v) if sep is not None else v for v in TRUE]})


@pytest.mark.parametrize(("issues_suffix", "truth_suffix"), [
    (".csv", ".csv"), (".jsonl", ".csv"), (".csv", ".jsonl"), (".parquet", ".parquet"),
    (".jsonl", ".parquet")])
def test_sets_in_another_order_are_the_same_set_in_every_format(tmp_path, issues_suffix,
                                                                  truth_suffix):
    paths = []
    for name, make, suffix in (("issues", _scan_output, issues_suffix),
                               ("truth", _truth, truth_suffix)):
        path = tmp_path / f"{name}{suffix}"
        frame = make("|" if suffix == ".csv" else None)
        {".csv": lambda f, p: f.to_csv(p, index=False),
         ".jsonl": lambda f, p: f.to_json(p, orient="records", lines=True),
         ".parquet": lambda f, p: f.to_parquet(p)}[suffix](frame, path)
        paths.append(path)
    result = evaluate(*paths, true_label="true_label")
    assert result.n_errors == 1 and result.is_error.tolist() == [0, 0, 0, 0, 0, 1]
    classes = result.classes.set_index("class")
    # the per-class table agrees: one item changed, on tech, and the scan named it
    assert classes.loc["all", "changed"] == 1 and classes.loc["tech", "hits"] == 1


def test_the_scan_s_own_csv_reads_an_empty_set_as_the_empty_set(tmp_path, capsys):
    _scan_output().to_csv(tmp_path / "issues.csv", index=False)
    _truth().to_csv(tmp_path / "truth.csv", index=False)
    assert pd.read_csv(tmp_path / "issues.csv")["label"].isna().sum() == 1  # a blank cell
    assert main(["evaluate", str(tmp_path / "issues.csv"), "--eval",
                 str(tmp_path / "truth.csv"), "-q"]) == 0
    out = capsys.readouterr()
    assert "worst_class" in out.out and "error" not in out.err


def test_a_missing_value_in_a_column_of_lists_stays_unverified(tmp_path):
    truth = _truth(None)
    truth.at[2, "true_label"] = None
    truth.to_json(tmp_path / "truth.jsonl", orient="records", lines=True)
    result = evaluate(_scan_output(None), tmp_path / "truth.jsonl", unknown="exclude")
    assert result.n_unverified == 1 and result.n_errors == 1


def test_another_separator_is_given_with_label_sep():
    issues = _scan_output(";")
    truth = _truth(";")
    assert evaluate(issues, truth, label_sep=";").n_errors == 1
