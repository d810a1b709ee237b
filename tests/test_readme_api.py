"""The Python tour (README.md, docs/getting-started.md) works as written, and every call that
getting-started lists for the other commands exists."""

from __future__ import annotations

import importlib

import pytest
from tests.conftest import make_topic_frame


def test_scan_then_evaluate_as_in_the_readme():
    from labelaudit import evaluate, scan

    df = make_topic_frame(10, n_errors=3)
    truth_df = df[["id", "is_error"]]
    result = scan(df.drop(columns=["is_error", "true_label"]), text="text", label="label",
                  scorers=["tfidf"])
    assert isinstance(result.summary(), str)
    metrics = evaluate(result.to_frame(), truth_df, is_error="is_error")
    frame = metrics.to_frame()
    assert len(frame) >= 1 and isinstance(metrics.summary(), str)


@pytest.mark.parametrize("path", [
    "labelaudit.noise.inject_noise_table", "labelaudit.noise.measure_noise_realism",
    "labelaudit.agreement.read_annotation_file", "labelaudit.scanning.scan_tokens",
    "labelaudit.evaluation.evaluate_tokens", "labelaudit.review.init_review",
    "labelaudit.review.invite_reviewer", "labelaudit.review.serve",
    "labelaudit.review.review_status", "labelaudit.review.review_results",
    "labelaudit.review.apply_verdicts_file", "labelaudit.review.export_items",
    "labelaudit.review.import_answers",
])
def test_every_call_the_readme_names_exists(path):
    module, _, name = path.rpartition(".")
    assert callable(getattr(importlib.import_module(module), name))
