"""Every member's fit converges, or the scan says it did not (issue #26): the TF-IDF
member's probabilities equal a reference fit run to convergence, on many classes too
(the earlier newton-cg tol=1e-3 stopped after a few steps there)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from labelaudit.io import TextDataset
from labelaudit.models import ConvergenceWarning, EmbedScorer, TfidfScorer
from labelaudit.models._tfidf import fit_converged


def _topic_texts(n_classes: int, per_class: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    vocab = [f"w{i}" for i in range(400)]
    texts, labels = [], []
    for c in range(n_classes):
        own = vocab[c * 8:(c + 1) * 8]
        for _ in range(per_class):
            words = list(rng.choice(own, 4)) + list(rng.choice(vocab, 6))
            texts.append(" ".join(words))
            labels.append(c)
    return texts, np.array(labels)


@pytest.mark.parametrize("n_classes", [2, 20])
def test_tfidf_member_matches_a_converged_reference(n_classes):
    texts, labels = _topic_texts(n_classes, 30)
    data = TextDataset(np.arange(len(texts)), texts, None, labels, np.arange(n_classes))
    scorer = TfidfScorer()
    features = scorer.prepare(data)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        fitted = scorer.fit(features, labels, n_classes=n_classes)
    matrix = fitted._transform(features, fit=False)
    reference = LogisticRegression(C=fitted.C, solver="lbfgs", tol=1e-10,
                                   max_iter=20000).fit(matrix, labels)
    ours = fitted.predict_proba(features)
    assert np.abs(ours - reference.predict_proba(matrix)).max() < 5e-3
    # the old setting was far from it on many classes
    early = LogisticRegression(C=fitted.C, solver="newton-cg", tol=1e-3,
                               max_iter=1000).fit(matrix, labels)
    if n_classes == 20:
        assert np.abs(early.predict_proba(matrix) - reference.predict_proba(matrix)).max() \
            > 10 * np.abs(ours - reference.predict_proba(matrix)).max()


def test_a_fit_that_runs_out_of_steps_says_so():
    texts, labels = _topic_texts(5, 20)
    data = TextDataset(np.arange(len(texts)), texts, None, labels, np.arange(5))
    scorer = TfidfScorer(max_iter=1)
    with pytest.warns(ConvergenceWarning, match="stopped after 1 steps"):
        scorer.fit(scorer.prepare(data), labels, n_classes=5)
    rng = np.random.default_rng(0)
    features = rng.normal(size=(60, 5))
    embed = EmbedScorer()
    embed.C = 1e6  # barely regularised: lbfgs needs more than its 2,000 steps? then it says so
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        embed.fit(features, labels[:60] % 3, n_classes=3)
    assert all(w.category is not ConvergenceWarning or "embed member" in str(w.message)
               for w in caught)
    with pytest.warns(ConvergenceWarning, match="embed member"):
        fit_converged(make_pipeline(StandardScaler(), LogisticRegression(max_iter=1)),
                      features, labels[:60] % 3, member="embed")
