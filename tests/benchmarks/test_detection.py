"""The detection benchmark's own arithmetic (benchmarks/detection.py) on tiny cases, and
one run of its harness on a fake data root (never ../shared)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import average_precision_score

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root

from benchmarks import detection  # noqa: E402


@pytest.mark.parametrize("seed", range(5))
def test_average_precision_equals_scikit_learn(seed):
    rng = np.random.default_rng(seed)
    y = rng.random(60) < 0.2
    y[0] = True
    scores = np.round(rng.random(60), 1)  # many ties
    weights = rng.integers(0, 3, 60).astype(float)
    weights[0] = 1
    assert detection.average_precision(y, scores) == pytest.approx(
        average_precision_score(y, scores))
    assert detection.average_precision(y, scores, weights) == pytest.approx(
        average_precision_score(y, scores, sample_weight=weights))


def test_truncated_ap_and_precision_at_k():
    y = np.array([1, 0, 1, 0, 0, 1])
    s = np.array([6, 5, 4, 3, 2, 1.0])  # errors at ranks 1, 3 and 6
    assert detection.precision_at(y, s, 3) == pytest.approx(2 / 3)
    assert detection.truncated_ap(y, s, 3) == pytest.approx((1 + 2 / 3) / 3)
    assert detection.truncated_ap(y, s, 6) == pytest.approx(
        average_precision_score(y, s))


def test_paired_bootstrap_interval():
    rng = np.random.default_rng(0)
    y = rng.random(400) < 0.1
    noise = rng.normal(size=400)
    good = y * 2.0 + noise  # separates the errors
    same = good + rng.normal(scale=1e-9, size=400)
    diff, low, high = detection.paired_bootstrap(y, [good, good], [noise, noise],
                                                 resamples=300)
    assert low > 0 and low <= diff <= high
    diff, low, high = detection.paired_bootstrap(y, [good], [same], resamples=300)
    assert abs(diff) < 1e-6 and low <= 0 <= high


def test_harness_on_a_fake_root(tmp_path):
    rng = np.random.default_rng(0)
    words = {0: "engine car wheel", 1: "orbit space launch", 2: "goal team match"}
    folder = tmp_path / "labelerrors_20news"
    folder.mkdir()
    with open(folder / "test.jsonl", "w") as handle:
        for i in range(90):
            true = i % 3
            error = i % 9 == 0
            handle.write(json.dumps({"id": i, "text": f"{words[true]} {rng.integers(99)}",
                                     "label": (true + 1) % 3 if error else true,
                                     "is_error": error}) + "\n")
    spec = next(s for s in detection.DEV_SETS if s.name == "labelerrors_20news")
    rows = detection.run_set(spec, tmp_path, ["tfidf"], [0, 1], resamples=50,
                             cache=tmp_path / "cache", runner=detection._run_one)
    names = [r["candidate"] for r in rows]
    assert names == ["naive peer", "strong peer", "tfidf"]
    assert all(0 <= r["ap"] <= 1 and len(r["ap_by_seed"]) == 2 for r in rows)
    assert rows[1]["ratio"] == pytest.approx(1.0)
    again = detection.run_set(spec, tmp_path, ["tfidf"], [0, 1], resamples=50,
                              cache=tmp_path / "cache", runner=None)  # from the cache
    assert [r["ap"] for r in again] == [r["ap"] for r in rows]
    table = detection.markdown(rows, [0, 1], 50)
    assert "| labelerrors_20news (90 / 10) | tfidf |" in table
    detection.plot(rows, tmp_path / "d.png")
    assert (tmp_path / "d.png").stat().st_size > 0
    # a GPU candidate is not run on a CPU: taken from the cache when there, else left out
    gpu_name = detection.GPU_CANDIDATES[1]
    assert detection.CANDIDATES[gpu_name] == {"preset": "best"}

    def refuse(*args):
        raise AssertionError("a GPU candidate ran without a GPU")

    rows = detection.run_set(spec, tmp_path, [gpu_name], [0, 1], resamples=50,
                             cache=tmp_path / "cache", runner=refuse)
    assert [r["candidate"] for r in rows] == ["naive peer", "strong peer"]
    for seed in (0, 1):
        saved = tmp_path / "cache" / "labelerrors_20news" / "tfidf_0.npz"
        target = saved.with_name(f"{gpu_name.replace(' ', '_')}_{seed}.npz")
        target.write_bytes(saved.read_bytes())
    rows = detection.run_set(spec, tmp_path, [gpu_name], [0, 1], resamples=50,
                             cache=tmp_path / "cache", runner=refuse)
    assert rows[-1]["candidate"] == gpu_name
