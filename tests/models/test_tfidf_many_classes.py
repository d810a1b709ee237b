"""The TF-IDF member at many classes: ``solver="auto"`` keeps newton-cg up to
``MANY_CLASSES`` classes and learns more with minibatch Adagrad, which ranks planted flips
as the converged newton-cg fit does; an explicit solver is used as given."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import average_precision_score

import labelaudit
from labelaudit._errors import InvalidParameterError
from labelaudit.io import TextDataset
from labelaudit.models import ConvergenceWarning, TfidfScorer
from labelaudit.models._tfidf import MANY_CLASSES, MiniBatchSoftmax


def _intents(n_classes: int, per_class: int, *, flip_rate: float = 0.0, seed: int = 0):
    """Short texts: 1-3 of the class's 4 keywords (shared between neighbouring classes)
    among filler words; ``flip_rate`` of the labels moved to another class."""
    rng = np.random.default_rng(seed)
    vocab = np.array([f"w{i}" for i in range(3 * n_classes + 40)])
    true = np.repeat(np.arange(n_classes), per_class)
    texts = []
    for c in true:
        own = vocab[3 * c:3 * c + 4]
        words = list(rng.choice(own, rng.integers(1, 4))) + list(
            rng.choice(vocab[-40:], rng.integers(4, 9)))
        texts.append(" ".join(rng.permutation(words)))
    labels = true.copy()
    flipped = np.zeros(len(true), dtype=bool)
    flipped[rng.choice(len(true), int(round(flip_rate * len(true))), replace=False)] = True
    labels[flipped] = (true[flipped] + rng.integers(1, n_classes, flipped.sum())) % n_classes
    return texts, labels, flipped


def _fit(scorer: TfidfScorer, n_classes: int, per_class: int = 6) -> TfidfScorer:
    texts, labels, _ = _intents(n_classes, per_class)
    data = TextDataset(np.arange(len(texts)), texts, None, labels, np.arange(n_classes))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return scorer.fit(scorer.prepare(data), labels, n_classes=n_classes)


def test_auto_keeps_newton_cg_up_to_the_threshold_and_switches_above():
    assert MANY_CLASSES >= 20  # the detection benchmark's sets (<= 20 classes) unchanged
    at = _fit(TfidfScorer(), MANY_CLASSES)
    above = _fit(TfidfScorer(), MANY_CLASSES + 1)
    assert at.solver_ == "newton-cg" and isinstance(at.model_, LogisticRegression)
    assert at.model_.solver == "newton-cg" and at.model_.tol == 1e-6
    assert above.solver_ == "adagrad" and isinstance(above.model_, MiniBatchSoftmax)


@pytest.mark.parametrize("solver", ["newton-cg", "lbfgs", "sgd", "centroid", "adagrad"])
def test_an_explicit_solver_is_used_at_any_class_count(solver):
    fitted = _fit(TfidfScorer(solver=solver, tol=1e-3), 30)
    assert fitted.solver_ == solver
    model = fitted.model_
    if solver in ("newton-cg", "lbfgs"):
        assert model.solver == solver and model.tol == 1e-3
    probs = fitted.predict_proba(fitted.prepare(TextDataset(
        np.arange(3), ["w0 w1", "w3 w4", "w90"], None, np.zeros(3, int), np.arange(30))))
    assert probs.shape == (3, 30) and np.allclose(probs.sum(axis=1), 1.0)


def test_an_unknown_solver_names_the_option():
    with pytest.raises(InvalidParameterError, match="solver must be one of") as caught:
        _fit(TfidfScorer(solver="saga"), 25)  # type: ignore[arg-type]
    assert caught.value.params == ("solver",)


def test_adagrad_reaches_the_converged_newton_cg_probabilities():
    texts, labels, _ = _intents(30, 10)
    data = TextDataset(np.arange(len(texts)), texts, None, labels, np.arange(30))
    exact = TfidfScorer(solver="newton-cg")
    exact.fit(exact.prepare(data), labels, n_classes=30)
    fast = TfidfScorer(solver="adagrad", tol=1e-5, max_iter=2000)
    fast.fit(fast.prepare(data), labels, n_classes=30)
    features = exact.prepare(data)
    gap = np.abs(fast.predict_proba(features) - exact.predict_proba(features)).max()
    assert gap < 0.05


def test_adagrad_that_runs_out_of_epochs_says_so():
    texts, labels, _ = _intents(25, 6)
    data = TextDataset(np.arange(len(texts)), texts, None, labels, np.arange(25))
    scorer = TfidfScorer(solver="adagrad", max_iter=1)
    with pytest.warns(ConvergenceWarning, match="stopped after 1 steps"):
        scorer.fit(scorer.prepare(data), labels, n_classes=25)


def _scan_ap(texts, labels, flipped, member):
    frame = {"text": texts, "label": [f"c{k}" for k in labels]}
    import pandas as pd

    result = labelaudit.scan(pd.DataFrame(frame), scorers=[member], evidence=False,
                             progress=False)
    return average_precision_score(flipped, -np.asarray(result.scores[result.rank_by]))


def test_the_fast_path_ranks_planted_flips_as_the_present_solver_does():
    texts, labels, flipped = _intents(40, 25, flip_rate=0.05, seed=1)
    present = _scan_ap(texts, labels, flipped, TfidfScorer(solver="newton-cg"))
    fast = _scan_ap(texts, labels, flipped, TfidfScorer())  # auto: adagrad at 40 classes
    assert present > 0.5  # the flips are findable, so the comparison means something
    assert fast >= present - 0.03


def test_adagrad_member_explains_its_ranking():
    texts, labels, _ = _intents(25, 8)
    import pandas as pd

    frame = pd.DataFrame({"text": texts, "label": [f"c{k}" for k in labels]})
    result = labelaudit.scan(frame, scorers=["tfidf"], progress=False, top=5)
    item = int(np.asarray(result.ids)[np.argsort(result.scores[result.rank_by])[0]])
    found = result.explain(item)
    assert found["words"] and found["toward"] != found["against"]


def _objective(model, matrix, labels, C):
    """Mean log loss plus |W|^2 / (2 C n): what both solvers minimise."""
    proba = np.asarray(model.predict_proba(matrix), dtype=np.float64)
    n = matrix.shape[0]
    coef = np.asarray(model.coef_, dtype=np.float64)
    return (-np.log(proba[np.arange(n), np.searchsorted(model.classes_, labels)]).mean()
            + np.square(coef).sum() / (2 * C * n))


def test_adagrad_at_its_defaults_reaches_newton_cgs_objective():
    texts, labels, _ = _intents(40, 12, flip_rate=0.05, seed=2)
    data = TextDataset(np.arange(len(texts)), texts, None, labels, np.arange(40))
    exact = TfidfScorer(solver="newton-cg")
    exact.fit(exact.prepare(data), labels, n_classes=40)
    fast = TfidfScorer(solver="adagrad")
    fast.fit(fast.prepare(data), labels, n_classes=40)
    matrix = exact._transform(exact.prepare(data), fit=False)
    optimum = _objective(exact.model_, matrix, labels, exact.C)
    reached = _objective(fast.model_, matrix, labels, fast.C)
    assert optimum <= reached + 1e-6  # newton-cg is the converged optimum
    assert reached < optimum * 1.02


def test_adagrad_under_a_strong_penalty_matches_newton_cg():
    # the penalty shrinks unused rows to nothing between batches: the scale fold path
    texts, labels, _ = _intents(25, 8)
    data = TextDataset(np.arange(len(texts)), texts, None, labels, np.arange(25))
    exact = TfidfScorer(solver="newton-cg", C=0.05)
    exact.fit(exact.prepare(data), labels, n_classes=25)
    fast = TfidfScorer(solver="adagrad", C=0.05, tol=1e-6, max_iter=3000)
    fast.fit(fast.prepare(data), labels, n_classes=25)
    features = exact.prepare(data)
    fast_probs = fast.predict_proba(features)
    assert np.isfinite(fast_probs).all()
    assert np.abs(fast_probs - exact.predict_proba(features)).max() < 0.02


def test_adagrad_gives_the_same_model_on_one_thread_or_two(monkeypatch):
    import scipy.sparse as sp

    texts, labels, _ = _intents(30, 10)
    scorer = TfidfScorer()
    data = TextDataset(np.arange(len(texts)), texts, None, labels, np.arange(30))
    matrix = sp.csr_matrix(scorer._transform(scorer.prepare(data), fit=True))
    fitted = []
    for threads in ("1", "2"):
        monkeypatch.setenv("LABELAUDIT_THREADS", threads)
        fitted.append(MiniBatchSoftmax(batch_size=64, max_iter=5).fit(matrix, labels))
    assert fitted[0].n_iter_ == fitted[1].n_iter_
    np.testing.assert_allclose(fitted[0].weights_, fitted[1].weights_, atol=1e-5)
    np.testing.assert_allclose(fitted[0].intercept_, fitted[1].intercept_, atol=1e-5)


def test_the_vocabulary_is_capped_by_the_class_count(monkeypatch):
    from sklearn.feature_extraction.text import TfidfVectorizer

    from labelaudit.models import _tfidf

    assert TfidfScorer().feature_cap(1000) == 200_000  # the default caps nothing here
    assert TfidfScorer().feature_cap(5000) == _tfidf.WEIGHT_BUDGET // (4 * 5000)
    assert TfidfScorer(max_features=None).feature_cap(20, n_texts=2) == (
        _tfidf.WEIGHT_BUDGET // (4 * 20 * 2))
    assert TfidfScorer().feature_cap(MANY_CLASSES) == 200_000  # <= 20 classes: unchanged
    monkeypatch.setattr(_tfidf, "WEIGHT_BUDGET", 4 * 30 * 12)  # 12 features at 30 classes
    fitted = _fit(TfidfScorer(), 30)
    assert fitted.max_features_ == 12
    vocabulary = fitted.vectorizers_[0].vocabulary_
    assert len(vocabulary) == 12 and fitted.model_.coef_.shape == (30, 12)
    texts, _, _ = _intents(30, 6)
    frequent = TfidfVectorizer(ngram_range=(1, 2), token_pattern=r"(?u)\b\w+\b",
                               max_features=12).fit(texts).vocabulary_
    assert set(vocabulary) == set(frequent)  # the most frequent terms are kept
