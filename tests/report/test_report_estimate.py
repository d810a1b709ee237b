"""The report's headline count of label errors: confident learning's, from the scan
output's two top probabilities, equal to cleanlab's and near the planted errors."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from labelaudit.detect import count_label_issues, suggest_labels
from labelaudit.report import render_report


def _cleanlab_count(labels: np.ndarray, pred_probs: np.ndarray) -> int:
    from cleanlab.count import num_label_issues

    return int(num_label_issues(labels, pred_probs))


def _top_two(labels: np.ndarray, pred_probs: np.ndarray):
    suggested, suggested_prob = suggest_labels(labels, pred_probs)
    given = pred_probs[np.arange(len(labels)), labels]
    return count_label_issues(labels, given, suggested, suggested_prob,
                              n_classes=pred_probs.shape[1])


def _headline(html: str) -> int:
    return int(re.search(r'<span id="error-estimate">([\d,]+)</span>', html)[1]
               .replace(",", ""))


@pytest.mark.parametrize("n_classes", [2, 3, 5, 20])
def test_count_equals_cleanlab(n_classes):
    rng = np.random.default_rng(0)
    for strength in (0.5, 3.0, 10.0):
        labels = rng.integers(n_classes, size=400)
        alpha = np.ones((400, n_classes))
        alpha[np.arange(400), labels] += strength
        probs = np.vstack([rng.dirichlet(a) for a in alpha])
        count = _top_two(labels, probs)
        expected = _cleanlab_count(labels, probs)
        # the items the two top probabilities cannot decide are left out of n_issues
        assert count.n_issues <= expected <= count.n_issues + count.n_undecided
        if count.n_undecided == 0:
            assert count.n_issues == expected


def test_a_class_nobody_carries_is_never_confident():
    labels = np.array([0, 0, 1, 1])
    given = np.array([0.9, 0.2, 0.9, 0.8])
    count = count_label_issues(labels, given, np.array([1, 2, 0, 0]),
                               np.array([0.1, 0.7, 0.1, 0.2]), n_classes=3)
    assert count.thresholds.tolist()[2] == 2.0 and count.n_issues == 0


def _planted(seed: int = 0, n: int = 1500, n_classes: int = 4, rate: float = 0.1):
    """Gaussian classes, ``rate`` of the labels moved to another class at random, and a
    logistic regression's 5-fold out-of-sample probabilities fitted on the noisy labels."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import cross_val_predict

    rng = np.random.default_rng(seed)
    centers = rng.normal(scale=3.0, size=(n_classes, 6))
    true = rng.integers(n_classes, size=n)
    features = centers[true] + rng.normal(size=(n, 6))
    labels = true.copy()
    flip = rng.random(n) < rate
    labels[flip] = (true[flip] + rng.integers(1, n_classes, size=flip.sum())) % n_classes
    probs = cross_val_predict(LogisticRegression(max_iter=1000), features, labels, cv=5,
                              method="predict_proba")
    return labels, probs, int(flip.sum())


def test_headline_is_near_the_planted_errors_and_equals_cleanlab(tmp_path):
    labels, probs, n_errors = _planted()
    names = np.array(["w", "x", "y", "z"], dtype=object)
    suggested, suggested_prob = suggest_labels(labels, probs)
    given = probs[np.arange(len(labels)), labels]
    frame = pd.DataFrame({"id": np.arange(len(labels)), "label": names[labels],
                          "suggested_label": names[suggested],
                          "suggested_prob": suggested_prob, "given_prob": given,
                          "score_self_confidence": given})
    frame["rank"] = frame["given_prob"].rank(method="first").astype(int)
    path = tmp_path / "issues.csv"
    frame.sample(frac=1.0, random_state=0).to_csv(path, index=False)  # any row order
    estimate = _headline(render_report(path).html)
    old = float((1 - given).sum())  # the report's former headline, Σ(1 − p)
    assert estimate == _cleanlab_count(labels, probs)
    assert abs(estimate - n_errors) < 0.2 * n_errors  # 137 of 156 planted
    assert old > 2 * n_errors  # 332: the model's own uncertainty counted as errors
