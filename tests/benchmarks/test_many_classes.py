"""benchmarks/many_classes.py: its synthetic sets are reproducible and planted as described,
and a run writes the table and JSON with the command (never ../shared)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root

from benchmarks.many_classes import _flip, main, synthetic  # noqa: E402


def test_synthetic_sets_are_seeded_short_and_have_exactly_the_planted_flips():
    frame, flipped = synthetic(2000, 50, seed=3)
    again, flipped_again = synthetic(2000, 50, seed=3)
    other, _ = synthetic(2000, 50, seed=4)
    assert frame.equals(again) and np.array_equal(flipped, flipped_again)
    assert not frame["text"].equals(other["text"])
    assert flipped.sum() == 100  # 5 % of 2,000
    lengths = frame["text"].str.split().str.len()
    assert lengths.between(6, 15).all()
    assert frame["label"].nunique() == 50 and list(frame["id"]) == list(range(2000))


def test_flips_move_labels_to_another_class_and_classes_share_words():
    true = np.repeat(np.arange(40), 50)
    labels, flipped = _flip(true, 40, np.random.default_rng(0), 0.05)
    assert flipped.sum() == 100 and (labels[flipped] != true[flipped]).all()
    assert (labels[~flipped] == true[~flipped]).all()
    frame, flipped = synthetic(3000, 40, seed=0)
    words = frame["text"].str.split()
    clean = frame[~flipped]
    by_class = [set().union(*words[clean.index[clean["label"] == c]])
                for c in sorted(clean["label"].unique())]
    assert all(len(by_class[a] & by_class[a + 20]) > 0 for a in range(20))  # overlap


def test_a_run_writes_the_table_and_json_with_its_command(tmp_path, capsys):
    results = tmp_path / "results"
    assert main(["--sets", "400x25", "--candidates", "auto,centroid,fast",
                 "--results", str(results), "--timeout", "300"]) == 0
    saved = json.loads((results / "many_classes.json").read_text())
    runs = {(r["set"], r["candidate"]): r for r in saved["runs"]}
    assert set(runs) == {("400x25", "auto"), ("400x25", "centroid"), ("400x25", "fast")}
    for run in runs.values():
        assert "error" not in run, run
        assert 0.0 <= run["ap"] <= 1.0 and run["seconds"] > 0 and run["peak_gb"] > 0
    assert saved["commands"] == ["python -m benchmarks.many_classes --sets 400x25 "
                                 "--candidates auto,centroid,fast --results "
                                 f"{results} --timeout 300"]
    table = (results / "many_classes.md").read_text()
    assert "| 400x25 | auto |" in table and "400x25" in capsys.readouterr().out


def test_a_run_past_its_timeout_is_reported_as_stopped(tmp_path):
    results = tmp_path / "results"
    assert main(["--sets", "400x25", "--candidates", "auto", "--results", str(results),
                 "--timeout", "0.5"]) == 0
    run = json.loads((results / "many_classes.json").read_text())["runs"][0]
    assert run["error"].startswith("stopped (timeout)")


def test_the_cli_and_dense_candidates_score_the_same_scan(tmp_path):
    results = tmp_path / "results"
    assert main(["--sets", "400x25", "--candidates", "fast-dense,cli-fast",
                 "--results", str(results), "--timeout", "300"]) == 0
    runs = {r["candidate"]: r for r in
            json.loads((results / "many_classes.json").read_text())["runs"]}
    assert "error" not in runs["cli-fast"] and "error" not in runs["fast-dense"], runs
    # 25 classes are dense either way: the CLI's file ranks as the scan in memory
    assert abs(runs["cli-fast"]["ap"] - runs["fast-dense"]["ap"]) < 1e-3
    assert runs["cli-fast"]["n_flagged"] > 0
