"""What `labelaudit agreement` does, from Python: read a file, report, write its tables."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from labelaudit.agreement import (
    AGGREGATION_METHODS,
    AnnotationFile,
    aggregate,
    chance_difference,
    noise_bound,
    read_annotation_file,
)


@pytest.fixture()
def crowd_file(tmp_path):
    rng = np.random.default_rng(0)
    path = tmp_path / "crowd.jsonl"
    with open(path, "w") as fh:
        for i in range(30):
            truth = ["no", "yes"][int(rng.integers(0, 2))]
            votes = [{"worker": f"w{w}", "label": truth if rng.random() < 0.85 else
                      ("no" if truth == "yes" else "yes")} for w in range(4)]
            fh.write(json.dumps({"id": f"q{i}", "text": f"text {i}", "votes": votes,
                                 "expert": truth}) + "\n")
    return path


def test_a_file_gives_the_report_and_the_tables_of_the_command(crowd_file):
    data = read_annotation_file(crowd_file, gold="expert")
    assert isinstance(data, AnnotationFile) and data.nested_column == "votes"
    report = data.agreement_report(n_bootstrap=0, min_share=0.75)
    assert report.n_items == 30 and report.n_annotators == 4
    items = data.items_frame(report)
    assert items.columns[0] == "id" and len(items) == 30
    gold = data.gold_frame(report)
    assert {"id", "gold_label", "support", "text", "expert"} <= set(gold.columns)
    assert "votes" not in gold.columns and len(gold) == len(report.gold.items)


def test_the_tables_asked_for_are_written_one_line_each(crowd_file, tmp_path):
    data = read_annotation_file(crowd_file)
    report = data.agreement_report(n_bootstrap=0, confidence=0.9)
    items, gold = tmp_path / "items.csv", tmp_path / "gold.csv"
    lines = data.write_tables(report, source=crowd_file, items_out=items, gold_out=gold)
    assert not items.exists()  # each table is written as its line is asked for
    assert next(lines) == f"wrote 30 items to {items}" and items.exists()
    said = next(lines)
    assert said.startswith(f"wrote {len(report.gold.items)} agreed items to {gold} (gamma ")
    assert said.endswith(f"at 90% confidence; see {tmp_path / 'gold.noise.json'})")
    assert list(lines) == [] and len(pd.read_csv(items)) == 30
    assert list(data.write_tables(report, source=crowd_file)) == []


def test_report_summary_is_the_text_the_command_prints(crowd_file):
    data = read_annotation_file(crowd_file, gold="expert")
    report = data.agreement_report(n_bootstrap=20, ties="first")
    text = report.summary(source="crowd.jsonl", method="majority")
    assert text.startswith("crowd.jsonl: 30 items, 120 annotations (4.0 per item")
    assert "aggregation: majority, " in text and "(ties: first)" in text
    assert "95% CI" in text and "fleiss_kappa" in text
    assert "against the reference labels:" in text and "\nannotators\n" in text
    assert report.summary().splitlines()[0].startswith("annotations: 30 items")


def test_noise_model_summaries_and_documents():
    bound = noise_bound(1000, 100, 0.5)
    assert bound.summary().splitlines()[-1].split()[-1] == "13.9%"
    undefined = noise_bound(10, 10, 0.5)
    assert math.isnan(undefined.gamma) and undefined.to_dict()["gamma"] is None
    json.dumps(undefined.to_dict(), allow_nan=False)
    result = chance_difference(900, noise_rate=0.139, delta=35)
    lines = result.summary().splitlines()
    assert lines[0].split() == ["items", "(L)", "900"]
    assert any(line.startswith("verdict, Chebyshev (the paper)") and
               line.endswith("can be chance") for line in lines)


def test_the_commands_aggregation_names_are_the_librarys_methods():
    from labelaudit.cli._agreement import AGGREGATION_METHODS as COMMAND_METHODS

    assert list(COMMAND_METHODS) == list(AGGREGATION_METHODS)
    votes = pd.DataFrame({"item": [1, 1, 1], "annotator": list("abc"), "label": [0, 0, 1]})
    for name in AGGREGATION_METHODS:
        assert aggregate(votes, method=name).labels.tolist() == [0]
