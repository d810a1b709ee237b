"""The review-feedback experiment (benchmarks/review_feedback.py): the simulated review on
tiny hand-made rankings, and one run of the harness on a fake data root (never ../shared)."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root

from benchmarks import review_feedback as rf  # noqa: E402
from labelaudit.detect import label_quality_scores  # noqa: E402


def planted(n: int = 200, n_errors: int = 20, seed: int = 0):
    """A prior that ranks the planted errors well but not perfectly, and features that
    separate them (what a calibrator can learn)."""
    rng = np.random.default_rng(seed)
    is_error = np.zeros(n, dtype=bool)
    is_error[rng.choice(n, n_errors, replace=False)] = True
    prior = rng.normal(size=n) + 1.5 * is_error
    features = np.column_stack([is_error + rng.normal(scale=0.3, size=n),
                                rng.normal(size=n)])
    return prior, is_error, features


def test_static_reviews_in_ranking_order():
    prior, is_error, _ = planted()
    result = rf.replay(prior, is_error, budget=60, batch_size=7)
    ranking = np.argsort(-prior, kind="stable")
    assert result.reviewed.tolist() == ranking[:60].tolist()
    assert result.order.tolist() == ranking.tolist()
    assert result.found == int(is_error[ranking[:60]].sum())
    assert result.ap(is_error) == pytest.approx(rf.average_precision(is_error, prior))


@pytest.mark.parametrize("per_class", [False, True])
def test_feedback_finds_every_planted_error_and_reviews_each_item_once(per_class):
    prior, is_error, features = planted()
    labels = np.arange(len(prior)) % 3 if per_class else None
    rerank = rf.calibrator(features, prior, labels=labels)
    result = rf.replay(prior, is_error, budget=len(prior), batch_size=25, rerank=rerank)
    assert result.found == is_error.sum()
    assert len(set(result.reviewed.tolist())) == len(result.reviewed) == len(prior)
    # within a small budget, the learned ranking finds more than the prior's top items
    small = rf.replay(prior, is_error, budget=40, batch_size=10, rerank=rerank)
    static = rf.replay(prior, is_error, budget=40, batch_size=10)
    assert len(set(small.reviewed.tolist())) == 40
    assert small.found > static.found
    assert sorted(small.order.tolist()) == list(range(len(prior)))


def test_budget_and_last_batch():
    prior, is_error, _ = planted(n=30, n_errors=3)
    calls = []

    def rerank(reviewed, verdicts):
        calls.append(len(reviewed))
        assert verdicts.tolist() == is_error[reviewed].tolist()  # the truth answers
        return prior

    result = rf.replay(prior, is_error, budget=23, batch_size=10, rerank=rerank)
    assert len(result.reviewed) == 23
    assert calls == [10, 20]  # not after the last batch: nothing is left to choose
    assert rf.replay(prior, is_error, budget=99).reviewed.size == 30  # capped at the items


def write_fake_root(root: Path, n: int = 120, n_errors: int = 12) -> np.ndarray:
    rng = np.random.default_rng(0)
    words = {0: "engine car wheel", 1: "orbit space launch", 2: "goal team match"}
    labels = rng.integers(0, 3, n)
    is_error = np.zeros(n, dtype=bool)
    is_error[rng.choice(n, n_errors, replace=False)] = True
    folder = root / "labelerrors_20news"
    folder.mkdir(parents=True)
    with open(folder / "test.jsonl", "w") as handle:
        for i in range(n):
            handle.write(json.dumps({
                "id": i, "text": f"{words[int(labels[i])]} {rng.integers(1000)}",
                "label": int((labels[i] + 1) % 3 if is_error[i] else labels[i]),
                "is_error": bool(is_error[i]), "true_label": int(labels[i])}) + "\n")
    return is_error


def test_harness_on_a_fake_root(tmp_path, monkeypatch):
    write_fake_root(tmp_path)
    spec = next(s for s in rf.DEV_SETS if s.name == "labelerrors_20news")
    out = rf.run_set(spec, tmp_path, [0, 1], cache=tmp_path / "cache", batch_size=5)
    assert out is not None and (out["errors"], out["budget"], out["batches"]) == (12, 24, 5)
    rows = {r["strategy"]: r for r in out["rows"]}
    assert list(rows) == list(rf.STRATEGIES)
    # the planted errors contradict their words: every strategy finds them all
    assert all(r["found_by_seed"] == [12, 12] for r in rows.values())
    assert rows["static"]["ratio"] == 1.0 and not rows["calibrator"]["wins"]
    # a rerun takes the scans from the cache
    monkeypatch.setattr(rf, "default_scan", lambda *a: pytest.fail("scanned again"))
    again = rf.run_set(spec, tmp_path, [0, 1], cache=tmp_path / "cache", batch_size=5)
    assert again is not None
    assert [r["found_by_seed"] for r in again["rows"]] == [r["found_by_seed"]
                                                         for r in out["rows"]]
    table = rf.markdown([out], "python -m benchmarks.review_feedback", batch_size=5)
    assert "| labelerrors_20news (120 / 12 / 24, 5) | corrections | 12.0 (12, 12) |" in table
    assert "- corrections: wins on none; loses on none -> does not qualify" in table
    assert rf.run_set(spec, tmp_path / "missing", [0], cache=None) is None


def test_corrections_without_verdicts_give_back_the_default_ranking(tmp_path):
    is_error = write_fake_root(tmp_path)
    spec = next(s for s in rf.DEV_SETS if s.name == "labelerrors_20news")
    frame, _ = rf._load(spec, tmp_path)
    outputs = rf.default_scan(frame, spec, 0)
    assert np.allclose(rf.ensemble_probs(outputs, outputs.member_probs), outputs.pred_probs)
    truth = rf._truth(spec, tmp_path, outputs.classes)
    assert ((truth != outputs.labels) == is_error).all()
    # the refitted member alone in the ensemble (on this toy data its weight may be 0)
    outputs = dataclasses.replace(outputs, weights={"tfidf": 1.0})
    outputs = dataclasses.replace(outputs, scores={"ensemble": label_quality_scores(
        outputs.labels, rf.ensemble_probs(outputs, outputs.member_probs),
        method="ensemble")}, rank_by="ensemble")
    rerank = rf.corrections(outputs, frame, spec, truth, seed=0)
    clean = np.flatnonzero(~is_error)[:3]
    assert np.allclose(rerank(clean, np.zeros(3, dtype=bool)), outputs.suspicion)
    # a confirmed error trains with its correct label: the model's view moves
    errors = np.flatnonzero(is_error)
    moved = rerank(errors, np.ones(len(errors), dtype=bool))
    assert not np.allclose(moved, outputs.suspicion)
    outputs.save(tmp_path / "scan.npz")
    loaded = rf.ScanOutputs.load(tmp_path / "scan.npz")
    assert loaded.rank_by == outputs.rank_by
    assert np.array_equal(loaded.suspicion, outputs.suspicion)
    assert loaded.weights == outputs.weights


def test_command_writes_the_table_and_the_json(tmp_path, capsys):
    write_fake_root(tmp_path / "data")
    args = ["--data-root", str(tmp_path / "data"), "--results", str(tmp_path / "out"),
            "--cache", str(tmp_path / "cache"), "--sets", "labelerrors_20news,snow2008_rte",
            "--seeds", "0", "--batch", "5", "--strategies", "static,calibrator"]
    assert rf.main(args) == 0
    table = (tmp_path / "out" / "review_feedback.md").read_text()
    assert table.startswith(f"Command: `python -m benchmarks.review_feedback {' '.join(args)}`")
    saved = json.loads((tmp_path / "out" / "review_feedback.json").read_text())
    assert [s["dataset"] for s in saved["sets"]] == ["labelerrors_20news"]  # RTE: no file
    assert [r["strategy"] for r in saved["sets"][0]["rows"]] == ["static", "calibrator"]
    with pytest.raises(SystemExit) as stop:
        rf.main(["--sets", "imdb"])
    assert stop.value.code == 2 and "unknown sets ['imdb']" in capsys.readouterr().err
