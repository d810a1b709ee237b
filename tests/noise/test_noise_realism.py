"""noise_realism: Wasserstein distances between noised and clean items' losses."""

from __future__ import annotations

import numpy as np
import pytest

from labelaudit import InvalidInputError
from labelaudit.noise import noise_realism, plot_loss_histograms


def _probs_for(labels: np.ndarray, given_prob: np.ndarray) -> np.ndarray:
    probs = np.column_stack([1 - given_prob, given_prob])
    return np.where(labels[:, None] == 1, probs, probs[:, ::-1])


def test_distances_order_methods_by_how_distinct_their_losses_are():
    rng = np.random.default_rng(0)
    n = 300
    labels = rng.integers(2, size=n)
    prob = rng.uniform(0.7, 0.99, size=n)  # clean items: confident
    methods = np.full(n, None, dtype=object)
    methods[:20] = "uniform"
    prob[:20] = rng.uniform(0.01, 0.1, size=20)  # very wrong: high loss
    methods[20:40] = "dissenting-worker"
    prob[20:40] = rng.uniform(0.3, 0.7, size=20)  # in between
    result = noise_realism(labels, _probs_for(labels, prob), noise_method=methods)
    table = result.to_frame()
    assert table["method"].tolist() == ["uniform", "dissenting-worker"]
    assert table["n_noisy"].tolist() == [20, 20] and set(table["n_clean"]) == {260}
    uniform, worker = table["wasserstein_distance"]
    assert uniform > worker > 0
    # W1 of two samples with disjoint supports is the difference of their means
    clean_loss = -np.log(prob[40:])
    assert uniform == pytest.approx(np.mean(-np.log(prob[:20])) - clean_loss.mean())


def test_identical_distributions_are_at_distance_zero():
    labels = np.array([0, 1] * 50)
    probs = _probs_for(labels, np.tile([0.9, 0.6], 50))
    methods = np.where(np.arange(100) % 4 < 2, "uniform", None)
    table = noise_realism(labels, probs, noise_method=methods).to_frame()
    assert table["wasserstein_distance"].iloc[0] == pytest.approx(0.0)


def test_boolean_flags_and_missing_values():
    labels = np.array([0, 0, 1, 1])
    probs = _probs_for(labels, np.array([0.9, 0.2, 0.8, 0.9]))
    table = noise_realism(labels, probs, noise_method=[False, True, False, False]).to_frame()
    assert table["method"].tolist() == ["noisy"]
    table = noise_realism(labels, probs, noise_method=[np.nan, "x", "", None]).to_frame()
    assert table["method"].tolist() == ["x"] and table["n_clean"].tolist() == [3]


def test_realism_errors():
    labels = np.array([0, 1])
    probs = np.array([[0.5, 0.5], [0.5, 0.5]])
    with pytest.raises(InvalidInputError, match="no item is marked"):
        noise_realism(labels, probs, noise_method=[None, None])
    with pytest.raises(InvalidInputError, match="no clean items"):
        noise_realism(labels, probs, noise_method=["a", "b"])
    with pytest.raises(InvalidInputError, match="one entry per item"):
        noise_realism(labels, probs, noise_method=["a"])


def test_histogram_plot_is_written(tmp_path):
    rng = np.random.default_rng(0)
    labels = rng.integers(2, size=60)
    probs = _probs_for(labels, rng.uniform(0.05, 0.95, size=60))
    methods = np.where(np.arange(60) < 10, "uniform", np.where(np.arange(60) < 20, "dl", None))
    result = noise_realism(labels, probs, noise_method=methods)
    path = plot_loss_histograms([result, result], tmp_path / "hist.png", title="test")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert [p.name for p in tmp_path.iterdir()] == ["hist.png"]  # no temporary file left
