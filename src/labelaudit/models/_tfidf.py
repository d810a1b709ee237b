"""TF-IDF features with a logistic-regression head: the classic text baseline."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from labelaudit._errors import LabelAuditWarning
from labelaudit.io import TextDataset
from labelaudit.models._base import HeldOutWords, Scorer, full_proba


class ConvergenceWarning(LabelAuditWarning):
    """A member's model stopped before its solver converged."""


def fit_converged(model: Any, features: Any, labels: np.ndarray, *, member: str) -> Any:
    """``model.fit(features, labels)`` (a scikit-learn estimator, or a pipeline ending in
    one, with ``max_iter``), saying in a :class:`ConvergenceWarning` when its solver ran
    out of steps: every member's fit converges, or the scan says it did not."""
    from sklearn.exceptions import ConvergenceWarning as SklearnConvergenceWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=SklearnConvergenceWarning)
        model.fit(features, labels)
    final = model[-1] if hasattr(model, "steps") else model
    if int(np.max(final.n_iter_)) >= final.max_iter:
        warnings.warn(
            f"the {member} member's logistic regression stopped after {final.max_iter} "
            f"steps without converging (tol={final.tol:g}); its probabilities, and so the "
            "ranking, may be off", ConvergenceWarning, stacklevel=3)
    return model


@dataclass(eq=False, kw_only=True)
class TfidfScorer(Scorer):
    """TF-IDF (word 1-2 grams, sublinear tf) + multinomial logistic regression.

    For sentence pairs, each side gets its own vectoriser and the two are stacked.
    The vectoriser is fitted inside each fold, so no statistic of a scored item leaks in.

    Parameters
    ----------
    C : inverse regularisation strength of the logistic regression.
    ngram_range, min_df, max_features : the vectoriser's.
    analyzer : {"word", "char_wb"}
        Word n-grams, or character n-grams within word boundaries (``ngram_range`` then
        counts characters), which see spelling and morphology that words miss.
    tol : stopping tolerance of newton-cg on the largest gradient entry of the mean loss.
        1e-6 converges: within 1e-3 of a fit run to 1e-10 on IMDB and about 3e-3 on 20
        Newsgroups, where 1e-3 stopped with probabilities up to 0.7 away.
    max_iter : Newton steps at most; a fit that ends there warns (:class:`ConvergenceWarning`).

    Examples
    --------
    >>> from labelaudit.io import TextDataset
    >>> texts = ["good film", "great film", "bad film", "awful film"] * 3
    >>> labels = np.array([1, 1, 0, 0] * 3)
    >>> data = TextDataset(np.arange(12), texts, None, labels, np.array([0, 1]))
    >>> scorer = TfidfScorer()
    >>> features = scorer.prepare(data)
    >>> scorer.fit(features, labels, n_classes=2).predict_proba(features[:2]).argmax(1).tolist()
    [1, 1]
    """

    name = "tfidf"
    explains = True

    C: float = 10.0
    ngram_range: tuple[int, int] = (1, 2)
    min_df: int = 1
    max_features: int | None = 200_000
    analyzer: str = "word"
    tol: float = 1e-6
    max_iter: int = 200

    def prepare(self, data: TextDataset, *, progress: bool = False) -> Any:
        if data.text_pairs is None:
            return np.array(data.texts, dtype=object)[:, None]
        return np.stack([np.array(data.texts, dtype=object),
                         np.array(data.text_pairs, dtype=object)], axis=1)

    def _vectorizer(self):
        from sklearn.feature_extraction.text import TfidfVectorizer

        # token_pattern only for words: sklearn warns when it is given to char_wb
        words = {"token_pattern": r"(?u)\b\w+\b"} if self.analyzer != "char_wb" else {}
        return TfidfVectorizer(analyzer=self.analyzer, ngram_range=self.ngram_range,
                               min_df=self.min_df, sublinear_tf=True,
                               max_features=self.max_features, dtype=np.float32, **words)

    def _transform(self, features: np.ndarray, *, fit: bool):
        import scipy.sparse as sp

        if fit:
            self.vectorizers_ = [self._vectorizer() for _ in range(features.shape[1])]
            blocks = [v.fit_transform(features[:, j]) for j, v in enumerate(self.vectorizers_)]
        else:
            blocks = [v.transform(features[:, j]) for j, v in enumerate(self.vectorizers_)]
        return blocks[0] if len(blocks) == 1 else sp.hstack(blocks).tocsr()

    def fit(self, features: Any, labels: np.ndarray, *, n_classes: int) -> TfidfScorer:
        from sklearn.linear_model import LogisticRegression

        matrix = self._transform(features, fit=True)
        self.n_classes_ = n_classes
        self.model_ = fit_converged(
            LogisticRegression(C=self.C, solver="newton-cg", tol=self.tol,
                               max_iter=self.max_iter), matrix, labels, member=self.name)
        return self

    def predict_proba(self, features: Any) -> np.ndarray:
        proba = self.model_.predict_proba(self._transform(features, fit=False))
        return full_proba(proba, self.model_.classes_, self.n_classes_)

    def explain(self, features: Any, labels: np.ndarray, probs: np.ndarray, *,
                n_terms: int = 5, n_tried: int = 3) -> HeldOutWords:
        """For each item, its ``n_tried`` likeliest classes other than the given one, and
        the ``n_terms`` n-grams whose coefficient difference times TF-IDF value pushes
        most toward each: ``x_j * (w_class,j - w_given,j)`` is the term's part of the
        log-odds of the class against the given label."""
        matrix = self._transform(features, fit=False).tocsr()
        n, n_classes = len(labels), probs.shape[1]
        fitted = np.asarray(self.model_.classes_, dtype=int)
        coef = self.model_.coef_
        row_of = np.full(n_classes, -1)  # each class's row of coef (-1: a zero row)
        if len(fitted) == 2:  # one row: the log-odds of fitted[1] against fitted[0]
            row_of[fitted[1]] = 0
        else:
            row_of[fitted] = np.arange(len(fitted))
        # the likeliest other classes the fold learned, best first (-1 past the last)
        open_ = np.asarray(probs, dtype=float).copy()
        open_[np.arange(n), labels] = -1.0
        open_[:, np.setdiff1d(np.arange(n_classes), fitted)] = -1.0
        m = max(1, min(n_tried, n_classes - 1))
        tried = np.argsort(-open_, axis=1, kind="stable")[:, :m]
        tried[np.take_along_axis(open_, tried, axis=1) < 0] = -1
        row = np.repeat(np.arange(n), np.diff(matrix.indptr))
        col, value = matrix.indices, matrix.data

        def weights(classes: np.ndarray) -> np.ndarray:
            rows = np.where(classes >= 0, row_of[np.maximum(classes, 0)], -1)[row]
            out = np.zeros(len(col), dtype=np.float64)
            ok = rows >= 0
            out[ok] = coef[rows[ok], col[ok]]
            return out

        names = np.concatenate([v.get_feature_names_out() for v in self.vectorizers_])
        first = len(self.vectorizers_[0].vocabulary_)
        terms = np.full((n, m, n_terms), None, dtype=object)
        pushes = np.zeros((n, m, n_terms), dtype=np.float32)
        pair = np.zeros((n, m, n_terms), dtype=bool)
        against = weights(np.asarray(labels))
        for slot in range(m):
            push = value * (weights(tried[:, slot]) - against)
            order = np.lexsort((-push, row))  # by item, then strongest push first
            place = np.arange(len(order)) - matrix.indptr[row[order]]
            keep = order[(place < n_terms) & (push[order] > 0)]
            at = place[(place < n_terms) & (push[order] > 0)]
            terms[row[keep], slot, at] = names[col[keep]]
            pushes[row[keep], slot, at] = push[keep]
            pair[row[keep], slot, at] = col[keep] >= first
        return HeldOutWords(classes=tried, terms=terms, weights=pushes, pair=pair)


@dataclass(eq=False, kw_only=True)
class CharTfidfScorer(TfidfScorer):
    """TF-IDF of character 2-5-grams within word boundaries + logistic regression: a
    cheap member that differs from the word model (spelling, morphology, rare words).

    Examples
    --------
    >>> CharTfidfScorer().analyzer, CharTfidfScorer().ngram_range
    ('char_wb', (2, 5))
    """

    name = "tfidf-char"
    ngram_range: tuple[int, int] = (2, 5)
    analyzer: str = "char_wb"
