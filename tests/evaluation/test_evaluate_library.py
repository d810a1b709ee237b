"""labelaudit.evaluate: the truth join of `labelaudit evaluate` as a library function."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import labelaudit
from labelaudit import InvalidInputError, InvalidParameterError
from labelaudit.evaluation import (
    CutoffWarning,
    EvaluationResult,
    aupr_score,
    detection_report,
    evaluate,
    precision_at_k,
)


@pytest.fixture()
def tables():
    """A scan output of 30 items, 6 of them errors, and its truth (in another row order)."""
    rng = np.random.default_rng(0)
    n = 30
    is_error = np.zeros(n, dtype=bool)
    is_error[rng.choice(n, 6, replace=False)] = True
    good = np.where(is_error, 0.0, 1.0) + rng.random(n)
    labels = rng.choice(["pos", "neg"], n)
    true = np.where(is_error, np.where(labels == "pos", "neg", "pos"), labels)
    issues = pd.DataFrame({"id": np.arange(n), "label": labels, "score_good": good,
                           "score_random": rng.random(n)})
    order = rng.permutation(n)
    truth = pd.DataFrame({"id": [str(i) for i in order], "is_error": is_error[order],
                          "true_label": true[order]})
    return issues, truth, is_error, good


def test_frames_in_result_out(tables):
    issues, truth, is_error, good = tables
    result = evaluate(issues, truth, at_k=[5, 10])
    assert isinstance(result, EvaluationResult)
    assert labelaudit.evaluate is evaluate
    frame = result.to_frame()
    assert frame["method"].tolist() == ["good", "random"]
    assert frame.loc[0, "aupr"] == pytest.approx(aupr_score(is_error, good))
    assert frame.loc[0, "precision_at_5"] == pytest.approx(precision_at_k(is_error, good, k=5))
    assert result.reports["good"] == detection_report(is_error, good)
    assert result.summary() == "evaluated 30 items: 6 known errors; 2 methods"
    document = result.to_dict()
    assert document["issues"] is None and document["truth_from"] == "is_error"
    assert [row["method"] for row in document["metrics"]] == ["good", "random"]


def test_true_label_gives_the_same_truth(tables):
    issues, truth, _, _ = tables
    by_flag = evaluate(issues, truth).to_frame()
    by_label = evaluate(issues, truth.drop(columns="is_error"))
    assert by_label.truth_from == "true_label"
    pd.testing.assert_frame_equal(by_label.to_frame(), by_flag)


def test_files_are_read_and_named(tables, tmp_path):
    issues, truth, _, _ = tables
    issues.to_csv(tmp_path / "issues.csv", index=False)
    truth.to_json(tmp_path / "truth.jsonl", orient="records", lines=True)
    result = evaluate(tmp_path / "issues.csv", str(tmp_path / "truth.jsonl"),
                      scores="score_good")
    assert list(result.reports) == ["good"]
    assert result.to_dict()["truth"] == str(tmp_path / "truth.jsonl")
    path = result.plot(tmp_path / "pr.svg")
    assert path.read_text().startswith("<?xml")


def test_messages_name_the_parameters(tables):
    issues, truth, _, _ = tables
    truth = truth.assign(is_error=truth["is_error"].astype(object))
    truth.loc[truth.index[:4], "is_error"] = None
    with pytest.raises(InvalidInputError, match="pass unknown='exclude'"):
        evaluate(issues, truth)
    result = evaluate(issues, truth, unknown="exclude")
    assert result.n_unverified == 4 and result.reports["good"].n_items == 26
    with pytest.raises(InvalidInputError, match="partial_ranking=True"):
        evaluate(issues.head(10), truth, unknown="exclude")
    with pytest.raises(InvalidParameterError, match="n_errors=31 is more than the 30 items"):
        evaluate(issues, truth, unknown="clean", n_errors=31)
    with pytest.raises(InvalidParameterError, match="error_rate or n_errors, not both"):
        evaluate(issues, truth, unknown="clean", n_errors=5, error_rate=0.1)
    with pytest.raises(InvalidParameterError, match="unknown must be one of"):
        evaluate(issues, truth, unknown="maybe")  # type: ignore[arg-type]


def test_partial_ranking_and_estimates(tables):
    issues, truth, _, _ = tables
    top = issues.sort_values("score_good").head(8)
    result = evaluate(top, truth, partial_ranking=True, error_rate=0.5)
    assert len(result.ids) == 30 and result.n_errors_estimate == 15
    assert result.reports["good"].k_err == 15


def test_cut_offs_beyond_the_items_warn(tables):
    issues, truth, is_error, good = tables
    with pytest.warns(CutoffWarning, match=r"at_k=50: more than the 30 items evaluated"):
        result = evaluate(issues, truth, at_k=50)
    assert result.precision_at_k["good"][50] == pytest.approx(is_error.mean())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        evaluate(issues, truth, at_k=(30,))


def test_type_mismatch_is_named(tables):
    issues, truth, _, _ = tables
    truth = truth.drop(columns="is_error").assign(true_label=1)
    with pytest.raises(InvalidInputError, match=r"\(label='label' of issues: '\w+', '\w+'; str\)"):
        evaluate(issues, truth)


def test_the_result_reads_as_a_short_table_and_writes_a_document_or_a_table(tables, tmp_path):
    import json

    issues, truth, _, _ = tables
    result = evaluate(issues, truth, at_k=[5])
    table = result.to_table()
    assert {"ap", "p@err", "r@2err", "p@5", "r@5"} <= set(table.columns)
    assert table["ap"].tolist() == result.to_frame()["average_precision"].round(4).tolist()
    document = json.loads(result.write(tmp_path / "m.json").read_text())
    assert [row["method"] for row in document["metrics"]] == ["good", "random"]
    written = pd.read_csv(result.write(tmp_path / "m.csv"))
    assert written.columns.tolist() == result.to_frame().columns.tolist()
