"""TopKProbs: each item's likeliest classes give the same rankings as the dense rows."""

from __future__ import annotations

import numpy as np
import pytest

from labelaudit._errors import InvalidInputError, InvalidParameterError
from labelaudit.detect import (
    TopKProbs,
    apply_temperature,
    confident_learning,
    ensemble_pred_probs,
    label_quality_scores,
    mean_probs,
    resolve_top_classes,
    suggest_labels,
)


def _dense(n: int = 300, k: int = 40, seed: int = 0, sharp: float = 3.0) -> tuple:
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(n, k)) * sharp
    probs = np.exp(logits - logits.max(axis=1, keepdims=True))
    probs /= probs.sum(axis=1, keepdims=True)
    labels = np.where(rng.random(n) < 0.8, probs.argmax(axis=1), rng.integers(k, size=n))
    return probs, labels


def test_every_class_kept_is_the_dense_rows():
    probs, labels = _dense()
    top = TopKProbs.from_dense(probs, labels, k=probs.shape[1])
    np.testing.assert_allclose(top.dense(), probs, atol=1e-12)
    assert top.rest.max() < 1e-9 and top.shape == probs.shape


@pytest.mark.parametrize("method", ["loss", "ensemble", "self_confidence", "margin", "max_prob"])
def test_rankings_read_from_the_top_classes_are_exact(method):
    probs, labels = _dense()
    top = TopKProbs.from_dense(probs, labels, k=3)
    assert top.rest.max() > 0.01  # the rest is not covered, and still exact
    np.testing.assert_allclose(label_quality_scores(labels, top, method=method),
                               label_quality_scores(labels, probs, method=method), atol=1e-12)


def test_the_suggested_label_and_the_argmax_are_exact():
    probs, labels = _dense(seed=1)
    top = TopKProbs.from_dense(probs, labels, k=2)
    dense_suggested, dense_prob = suggest_labels(labels, probs)
    suggested, prob = suggest_labels(labels, top)
    np.testing.assert_array_equal(suggested, dense_suggested)
    np.testing.assert_allclose(prob, dense_prob)
    np.testing.assert_array_equal(top.argmax(axis=1), probs.argmax(axis=1))


def test_entropy_is_within_its_stated_bound():
    probs, labels = _dense(sharp=1.0)
    top = TopKProbs.from_dense(probs, labels, k=5)
    exact = -(probs * np.log(probs)).sum(axis=1)
    unlisted = probs.shape[1] - 5 - ~(top.classes == labels[:, None]).any(axis=1)
    bound = top.rest * np.log(np.maximum(unlisted, 1)) + 1e-9
    got = top.entropy()
    assert np.all(got >= exact - 1e-9)  # the even spread is the most entropy the rest holds
    assert np.all(got - exact <= bound)
    assert np.abs(got - exact).max() > 1e-3  # not exact by accident here


def test_a_temperature_matches_the_dense_rows_where_the_rest_is_covered():
    probs, labels = _dense(sharp=6.0)
    top = TopKProbs.from_dense(probs, labels, k=probs.shape[1])
    scaled = apply_temperature(top, 0.5)
    np.testing.assert_allclose(scaled.dense(), apply_temperature(probs, 0.5), atol=1e-10)
    kept = TopKProbs.from_dense(probs, labels, k=8)
    partial = apply_temperature(kept, 0.5)
    exact = apply_temperature(probs, 0.5)[np.arange(len(labels)), labels]
    # off by at most the mass the rows do not list
    assert np.all(np.abs(partial.given - exact) <= kept.rest + 1e-12)
    assert np.abs(partial.given - exact).max() > 1e-6  # and not exact by accident


def test_the_ensemble_of_sparse_members_matches_the_dense_one():
    a, labels = _dense(seed=2)
    b, _ = _dense(seed=3)
    dense = ensemble_pred_probs([a, b], labels)
    full = ensemble_pred_probs([TopKProbs.from_dense(a, labels, k=40),
                                TopKProbs.from_dense(b, labels, k=40)], labels)
    np.testing.assert_allclose(full.weights, dense.weights, atol=1e-4)
    np.testing.assert_allclose(full.pred_probs.dense(), dense.pred_probs, atol=1e-6)
    sparse = ensemble_pred_probs([TopKProbs.from_dense(a, labels, k=6),
                                  TopKProbs.from_dense(b, labels, k=6)], labels)
    rows = np.arange(len(labels))
    np.testing.assert_allclose(sparse.pred_probs.given, dense.pred_probs[rows, labels],
                               atol=0.05)
    assert np.mean(sparse.pred_probs.argmax() == dense.pred_probs.argmax(axis=1)) > 0.97


def test_mixing_keeps_every_members_classes_and_the_given_label():
    labels = np.array([0])
    a = TopKProbs.from_dense(np.array([[0.6, 0.3, 0.05, 0.05]]), labels, k=2)
    b = TopKProbs.from_dense(np.array([[0.1, 0.05, 0.8, 0.05]]), labels, k=2)
    mixed = mean_probs([a, b])
    np.testing.assert_allclose(mixed.given, [0.35])
    assert mixed.classes[0].tolist() == [2, 0]
    # class 2 is not in a's list: a's even share of its rest (0.1 over 2 classes) stands in
    np.testing.assert_allclose(mixed.probs[0], [(0.05 + 0.8) / 2, 0.35])


def test_confident_learning_is_cleanlabs_low_memory_run_on_the_dense_rows():
    from cleanlab.experimental.label_issues_batched import find_label_issues_batched

    probs, labels = _dense(n=600, seed=4)
    sparse = confident_learning(labels, TopKProbs.from_dense(probs, labels, k=10))
    batched = find_label_issues_batched(labels=labels, pred_probs=probs, verbose=False,
                                        n_jobs=1)
    dense = confident_learning(labels, probs)
    assert sparse.is_issue.sum() == sparse.n_issues
    same = (sparse.is_issue[batched]).mean()
    assert same > 0.95 and abs(sparse.n_issues - len(batched)) <= 2
    assert abs(sparse.n_issues - dense.n_issues) <= max(2, 0.05 * dense.n_issues)


def test_join_take_and_items_of_a_sparse_result():
    probs, labels = _dense(n=10)
    top = TopKProbs.from_dense(probs, labels, k=4)
    rows = np.array([7, 2, 5])
    np.testing.assert_allclose(top[rows].dense(), top.dense(rows))
    back = TopKProbs.join([(np.arange(5), top[:5]), (np.arange(5, 10), top[5:])], 10)
    np.testing.assert_allclose(back.dense(), top.dense())
    with pytest.raises(InvalidParameterError, match="picks items"):
        top[0, 1]
    with pytest.raises(InvalidInputError, match="labels differ"):
        label_quality_scores(labels[::-1], top)


def test_how_many_classes_are_kept():
    assert resolve_top_classes(None, 256) is None
    assert resolve_top_classes(None, 257) == 32
    assert resolve_top_classes(300, 257) is None
    with pytest.raises(InvalidParameterError, match="at least 2"):
        resolve_top_classes(1, 1000)
