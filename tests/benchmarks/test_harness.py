"""The benchmark harness's machinery on a fake data root (never ../shared)."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root

import benchmarks.__main__ as bench  # noqa: E402
from benchmarks.datasets import SPECS, load, subsample  # noqa: E402
from benchmarks.detectors import measure  # noqa: E402


def write_fake_20news(root: Path, n: int = 120, n_errors: int = 12) -> np.ndarray:
    rng = np.random.default_rng(0)
    words = {0: "engine car wheel", 1: "orbit space launch", 2: "goal team match"}
    labels = rng.integers(0, 3, n)
    is_error = np.zeros(n, dtype=bool)
    is_error[rng.choice(n, n_errors, replace=False)] = True
    given = np.where(is_error, (labels + 1) % 3, labels)
    folder = root / "labelerrors_20news"
    folder.mkdir(parents=True)
    with open(folder / "test.jsonl", "w") as handle:
        for i in range(n):
            record = {"id": i, "text": f"{words[int(labels[i])]} {rng.integers(1000)}",
                      "label": int(given[i]), "is_error": bool(is_error[i]),
                      "true_label": int(labels[i])}
            handle.write(json.dumps(record) + "\n")
    return is_error


def test_load_and_subsample(tmp_path):
    is_error = write_fake_20news(tmp_path)
    assert load(SPECS["chaosnli_snli"], tmp_path) is None  # missing: skipped
    data = load(SPECS["labelerrors_20news"], tmp_path)
    assert list(data.frame.columns) == ["id", "text", "label"]
    np.testing.assert_array_equal(data.is_error, is_error)
    small = subsample(data, size=40)
    assert small.quick and len(small.frame) <= 40 and small.is_error.sum() >= 5
    assert small.frame["label"].value_counts().min() >= 5
    assert subsample(data, size=10_000) is data


def test_measure_reports_time_memory_and_failures():
    def allocate():
        block = np.ones(60_000_000 // 8)  # 60 MB touched
        return {"x": np.array([block.sum()])}, {"x": 1}, {}

    run = measure(lambda: None, allocate)
    assert run.scores["x"][0] == 60_000_000 // 8
    assert run.seconds > 0 and run.memory_mb > 40
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        measure(lambda: None, lambda: 1 / 0)


def test_table_and_ratios():
    rows = [
        {"detector": "ours:default", "flagged": 3, "aupr": 0.6, "average_precision": 0.5,
         "precision_at_err": 0.5, "recall_at_2err": 0.8, "seconds": 10.0, "items_per_s": 10.0,
         "memory_mb": 200.0, "timing_group": "scan"},
        {"detector": "ours:loss", "flagged": None, "aupr": 0.4, "average_precision": 0.4,
         "precision_at_err": 0.5, "recall_at_2err": 0.8, "seconds": 10.0, "items_per_s": 10.0,
         "memory_mb": 200.0, "timing_group": "scan"},
        {"detector": "cleanlab:tfidf+lr", "flagged": 4, "aupr": 0.3, "average_precision": 0.25,
         "precision_at_err": 0.0, "recall_at_2err": 0.4, "seconds": 2.0, "items_per_s": 50.0,
         "memory_mb": 50.0},
    ]
    ratios = bench._ratios(rows)["ours:default / cleanlab:tfidf+lr"]
    assert ratios["aupr"] == pytest.approx(2.0) and ratios["seconds"] == pytest.approx(5.0)
    assert ratios["precision_at_err"] == float("inf")
    lines = bench._format_table(rows).splitlines()
    assert lines[0].split()[:3] == ["detector", "flagged", "AUPR"]
    assert lines[2].split()[-3:] == ['"', '"', '"']  # same scan: timing not repeated
    assert lines[3].split()[-3:] == ["2.0", "50.0", "50.0"]


def test_missing_data_and_the_token_hook(tmp_path, monkeypatch, capsys):
    assert bench.main(["--data", str(tmp_path / "nowhere")]) == 1
    calls = []

    def fake_run(data_root, args):
        calls.append((Path(data_root), args.quick))
        return [{"dataset": "conll_fake", "detector": "ours:tokens", "aupr": 0.5,
                 "n_items": 10, "n_errors": 2}]

    monkeypatch.setitem(sys.modules, "benchmarks.tokens",
                        types.SimpleNamespace(run=fake_run))
    code = bench.main(["--data", str(tmp_path), "--quick", "--datasets", "conll_fake",
                       "--results", str(tmp_path / "results")])
    assert code == 0 and calls == [(tmp_path, True)]
    assert "ours:tokens" in capsys.readouterr().out
    saved = json.loads((tmp_path / "results" / "conll_fake-quick.json").read_text())
    assert saved["rows"][0]["aupr"] == 0.5


@pytest.mark.slow
def test_full_harness_on_a_fake_dataset(tmp_path, capsys):
    write_fake_20news(tmp_path / "data")
    code = bench.main(["--data", str(tmp_path / "data"), "--results", str(tmp_path / "out"),
                       "--no-tokens"])
    assert code == 0
    result = json.loads((tmp_path / "out" / "labelerrors_20news.json").read_text())
    names = [row["detector"] for row in result["rows"]]
    assert names[0] == "ours:default" and {"cleanlab:same-probs", "cleanlab:tfidf+lr"} <= set(
        names)
    assert all(0 <= row["aupr"] <= 1 for row in result["rows"])
    assert "ours:default / cleanlab:tfidf+lr" in result["ratios"]
    assert "== labelerrors_20news" in capsys.readouterr().out
