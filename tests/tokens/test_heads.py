import itertools

import numpy as np
import pytest

from labelaudit import InvalidParameterError
from labelaudit.models._tokens import (
    CRFHead,
    LinearHead,
    make_head,
    shape_features,
    window_features,
)

# the heads are torch networks, trained here: `make test-fast` leaves these out
pytestmark = pytest.mark.heavy


def toy_task(n=60, seed=0):
    """Tag 1 where feature 0 is positive, tag 2 right after a 1 (a transition to learn)."""
    rng = np.random.default_rng(seed)
    feats, labels = [], []
    for _ in range(n):
        length = int(rng.integers(3, 8))
        x = rng.normal(size=(length, 4)).astype(np.float32)
        y = np.zeros(length, dtype=np.int64)
        for t in range(length):
            if x[t, 0] > 0.5:
                y[t] = 1
            elif t > 0 and y[t - 1] == 1:
                y[t] = 2
        feats.append(x)
        labels.append(y)
    return feats, labels


@pytest.mark.parametrize(
    "head", [LinearHead(), CRFHead(epochs=10, learning_rate=0.1, batch_size=16)]
)
def test_heads_learn_and_return_probabilities(head):
    feats, labels = toy_task()
    window = [window_features(f, ["x"] * len(f), window=1) for f in feats]
    probs = head.fit(window, labels, 4).predict_proba(window)
    assert [p.shape for p in probs] == [(len(f), 4) for f in feats]
    stacked = np.vstack(probs)
    assert np.allclose(stacked.sum(1), 1.0) and stacked.min() >= 0
    assert stacked[:, 3].max() < 0.01  # class 3 never seen
    accuracy = (stacked.argmax(1) == np.concatenate(labels)).mean()
    assert accuracy > 0.9


def test_crf_marginals_match_brute_force_enumeration():
    rng = np.random.default_rng(1)
    feats, labels = toy_task(n=20, seed=1)
    crf = CRFHead(epochs=2).fit(feats, labels, 3)
    x = rng.normal(size=(4, 4)).astype(np.float32)
    [marginals] = crf.predict_proba([x])
    emissions = (((x - crf.mean_) / crf.scale_) @ crf.weight_.numpy()) + crf.bias_.numpy()
    trans, start, end = crf.trans_.numpy(), crf.start_.numpy(), crf.end_.numpy()
    expected = np.zeros((4, 3))
    for seq in itertools.product(range(3), repeat=4):
        s = start[seq[0]] + end[seq[-1]] + sum(emissions[t, k] for t, k in enumerate(seq))
        s += sum(trans[a, b] for a, b in zip(seq, seq[1:], strict=False))
        for t, k in enumerate(seq):
            expected[t, k] += np.exp(s)
    expected /= expected.sum(1, keepdims=True)
    assert np.allclose(marginals, expected, atol=1e-5)


def test_crf_handles_mixed_lengths_in_one_batch():
    feats, labels = toy_task(n=30)
    crf = CRFHead(epochs=3).fit(feats, labels, 3)
    together = crf.predict_proba(feats[:5])
    alone = [crf.predict_proba([f])[0] for f in feats[:5]]
    for a, b in zip(together, alone, strict=False):
        assert np.allclose(a, b, atol=1e-5)


def test_same_random_state_same_result():
    feats, labels = toy_task(n=20)
    a = CRFHead(epochs=2, random_state=3).fit(feats, labels, 3).predict_proba(feats)
    b = CRFHead(epochs=2, random_state=3).fit(feats, labels, 3).predict_proba(feats)
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=False))


def test_single_class_training_data():
    feats = [np.ones((2, 3), np.float32)]
    probs = LinearHead().fit(feats, [np.array([0, 0])], 3).predict_proba(feats)
    assert probs[0].tolist() == [[1.0, 0.0, 0.0], [1.0, 0.0, 0.0]]


def test_shape_features_and_unknown_head():
    f = shape_features(["Paris", "USA", "1996", ",", "ex-England"])
    assert f[:, 0].tolist() == [1, 0, 0, 0, 0]  # title case
    assert f[:, 4].tolist() == [0, 0, 1, 0, 0]  # all digits
    assert f[:, 5].tolist() == [0, 0, 0, 1, 0]  # punctuation
    assert f[:, 6].tolist() == [0, 0, 0, 0, 1]  # inner hyphen
    with pytest.raises(InvalidParameterError):
        make_head("svm")


def test_crf_warm_start_carries_the_weights_over_to_the_new_scaling_exactly():
    feats, labels = toy_task(n=40)
    first = CRFHead(epochs=3).fit(feats[:15], labels[:15], 3)
    # no warm pass: the same scores on new items although the mean and scale changed
    carried = CRFHead(warm_epochs=0, min_steps=0).fit(feats, labels, 3, init=first)
    assert not np.allclose(carried.mean_, first.mean_)
    for a, b in zip(first.predict_proba(feats), carried.predict_proba(feats), strict=True):
        assert np.allclose(a, b, atol=1e-5)
    # warm passes learn from the new items, and the start is left as it was
    warm = CRFHead(warm_epochs=4, learning_rate=0.05).fit(feats, labels, 3, init=first)
    before = first.weight_.clone()
    assert warm.weight_ is not first.weight_ and first.weight_.equal(before)

    def accuracy(head):
        predicted = np.vstack(head.predict_proba(feats[15:])).argmax(1)
        return (predicted == np.concatenate(labels[15:])).mean()

    assert accuracy(warm) > accuracy(first)
    with pytest.raises(InvalidParameterError, match="other classes"):
        CRFHead().fit(feats, labels, 4, init=first)
