import numpy as np
import pytest

from labelaudit import InvalidInputError, InvalidParameterError
from labelaudit.detect import (
    RANKING_METHODS,
    label_quality_scores,
    per_item_loss,
    suggest_labels,
)

# the ranking methods that read one set of probabilities alone
ONE_SET = [m for m in RANKING_METHODS if m not in ("confident_learning", "crowdlab")]
PROBS = np.array([[0.7, 0.2, 0.1], [0.1, 0.1, 0.8], [0.4, 0.4, 0.2], [1 / 3, 1 / 3, 1 / 3]])
LABELS = np.array([0, 0, 1, 2])


def test_loss_is_log_of_given_probability():
    expected = np.log([0.7, 0.1, 0.4, 1 / 3])
    np.testing.assert_allclose(label_quality_scores(LABELS, PROBS, method="loss"), expected)
    np.testing.assert_allclose(per_item_loss(LABELS, PROBS), -expected)


def test_self_confidence():
    np.testing.assert_allclose(label_quality_scores(LABELS, PROBS, method="self_confidence"),
                               [0.7, 0.1, 0.4, 1 / 3])


def test_margin_hand_computed():
    # given minus best other: 0.7-0.2, 0.1-0.8, 0.4-0.4, 1/3-1/3
    np.testing.assert_allclose(label_quality_scores(LABELS, PROBS, method="margin"),
                               [0.5, -0.7, 0.0, 0.0], atol=1e-12)


def test_entropy_is_label_blind_and_normalised():
    scores = label_quality_scores(LABELS, PROBS, method="entropy")
    assert scores[3] == pytest.approx(0.0)  # uniform: maximal entropy
    assert scores[0] > scores[2]
    one_hot = label_quality_scores(np.array([1]), np.array([[0.0, 1.0, 0.0]]), method="entropy")
    assert one_hot[0] == pytest.approx(1.0)


def test_max_prob_is_hendrycks_gimpel_confidence():
    np.testing.assert_allclose(label_quality_scores(LABELS, PROBS, method="max_prob"),
                               [0.7, 0.8, 0.4, 1 / 3])


@pytest.mark.parametrize("method", ONE_SET)
def test_perfect_model_ranks_errors_last_to_first(method):
    labels = np.array([0, 1, 0, 1])
    probs = np.array([[0.99, 0.01], [0.01, 0.99], [0.6, 0.4], [0.99, 0.01]])
    scores = label_quality_scores(labels, probs, method=method)
    assert scores.shape == (4,)
    if method != "entropy" and method != "max_prob":
        assert np.argmin(scores) == 3  # the confidently wrong label is most suspect


@pytest.mark.parametrize("method", ONE_SET)
def test_invariant_to_row_order_and_class_renaming(method):
    rng = np.random.default_rng(0)
    probs = rng.dirichlet(np.ones(4), size=30)
    labels = rng.integers(4, size=30)
    base = label_quality_scores(labels, probs, method=method)
    perm = rng.permutation(30)
    np.testing.assert_allclose(label_quality_scores(labels[perm], probs[perm], method=method),
                               base[perm])
    rename = np.array([2, 0, 3, 1])  # class k becomes rename[k]
    renamed = np.empty_like(probs)
    renamed[:, rename] = probs
    np.testing.assert_allclose(label_quality_scores(rename[labels], renamed, method=method), base)


def test_suggest_labels_picks_best_other_class():
    suggested, prob = suggest_labels(LABELS, PROBS)
    assert suggested.tolist()[:2] == [1, 2]
    np.testing.assert_allclose(prob[:2], [0.2, 0.8])


def test_bad_inputs():
    with pytest.raises(InvalidParameterError, match="unknown method"):
        label_quality_scores(LABELS, PROBS, method="nope")
    with pytest.raises(InvalidParameterError, match="needs several annotators' votes"):
        label_quality_scores(LABELS, PROBS, method="crowdlab")
    with pytest.raises(InvalidInputError, match="shape"):
        label_quality_scores(LABELS, PROBS[0])
    with pytest.raises(InvalidInputError, match="rows"):
        label_quality_scores(LABELS[:2], PROBS)
    with pytest.raises(InvalidInputError, match="lie in"):
        label_quality_scores(np.array([0, 0, 1, 3]), PROBS)
    with pytest.raises(InvalidInputError, match="finite"):
        label_quality_scores(LABELS, np.where(PROBS > 0.5, np.nan, PROBS))


def _random_scores_input(seed: int, n: int = 200, n_classes: int = 4):
    rng = np.random.default_rng(seed)
    return rng.integers(n_classes, size=n), rng.dirichlet(np.ones(n_classes) * 0.7, size=n)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_scores_against_cleanlab_rank(seed):
    """self_confidence is cleanlab's; margin is cleanlab's normalized_margin rescaled; entropy
    is not cleanlab's confidence_weighted_entropy (ours ignores the given label)."""
    from labelaudit.detect._cleanlab import import_cleanlab

    rank = import_cleanlab("cleanlab.rank")
    labels, probs = _random_scores_input(seed)
    theirs = {m: rank.get_label_quality_scores(labels, probs, method=m)
              for m in ("self_confidence", "normalized_margin", "confidence_weighted_entropy")}
    np.testing.assert_array_equal(label_quality_scores(labels, probs, method="self_confidence"),
                                  theirs["self_confidence"])
    margin = label_quality_scores(labels, probs, method="margin")
    np.testing.assert_allclose(margin, 2 * theirs["normalized_margin"] - 1, atol=1e-12)
    np.testing.assert_array_equal(np.argsort(margin, kind="stable"),
                                  np.argsort(theirs["normalized_margin"], kind="stable"))
    entropy = label_quality_scores(labels, probs, method="entropy")
    cwe = theirs["confidence_weighted_entropy"]
    assert not np.allclose(entropy, cwe)
    assert not np.array_equal(np.argsort(entropy), np.argsort(cwe))  # a different ranking
    other_labels = (labels + 1) % probs.shape[1]  # ours is label-blind, cleanlab's is not
    np.testing.assert_array_equal(label_quality_scores(other_labels, probs, method="entropy"),
                                  entropy)
    assert not np.allclose(rank.get_label_quality_scores(
        other_labels, probs, method="confidence_weighted_entropy"), cwe)


def test_self_confidence_of_no_items():
    empty = label_quality_scores(np.zeros(0, dtype=int), np.zeros((0, 3)),
                                 method="self_confidence")
    assert empty.shape == (0,)
