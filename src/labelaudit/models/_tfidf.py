"""TF-IDF features with a logistic-regression head: the classic text baseline."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from labelaudit.io import TextDataset
from labelaudit.models._base import Scorer, full_proba

__all__ = ["CharTfidfScorer", "TfidfScorer"]


@dataclass(eq=False, kw_only=True)
class TfidfScorer(Scorer):
    """TF-IDF (word 1-2 grams, sublinear tf) + multinomial logistic regression.

    For sentence pairs, each side gets its own vectoriser and the two are stacked.
    The vectoriser is fitted inside each fold, so no statistic of a scored item leaks in.

    Parameters
    ----------
    C : float
        Inverse regularisation strength of the logistic regression.
    ngram_range : tuple of int
    min_df : int
    max_features : int or None
    analyzer : {"word", "char_wb"}
        Word n-grams, or character n-grams within word boundaries (``ngram_range``
        then counts characters; the ``tfidf-char`` member uses 2-5), which see spelling
        and morphology that word n-grams miss.
    tol : float
        Stopping tolerance of the solver (newton-cg stops when the largest gradient entry
        is below it: with many classes, 1e-3 can stop it before the first step).

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

    C: float = 10.0
    ngram_range: tuple[int, int] = (1, 2)
    min_df: int = 1
    max_features: int | None = 200_000
    analyzer: str = "word"
    tol: float = 1e-3

    def prepare(self, data: TextDataset, *, progress: bool = False) -> Any:
        if data.text_pairs is None:
            return np.array(data.texts, dtype=object)[:, None]
        return np.stack([np.array(data.texts, dtype=object),
                         np.array(data.text_pairs, dtype=object)], axis=1)

    def _vectorizer(self):
        from sklearn.feature_extraction.text import TfidfVectorizer

        if self.analyzer == "char_wb":
            return TfidfVectorizer(analyzer="char_wb", ngram_range=self.ngram_range,
                                   min_df=self.min_df, sublinear_tf=True,
                                   max_features=self.max_features, dtype=np.float32)
        return TfidfVectorizer(ngram_range=self.ngram_range, min_df=self.min_df,
                               sublinear_tf=True, max_features=self.max_features,
                               token_pattern=r"(?u)\b\w+\b",
                               dtype=np.float32)

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
        self.model_ = LogisticRegression(C=self.C, solver="newton-cg", tol=self.tol,
                                         max_iter=1000).fit(matrix, labels)
        return self

    def predict_proba(self, features: Any) -> np.ndarray:
        proba = self.model_.predict_proba(self._transform(features, fit=False))
        return full_proba(proba, self.model_.classes_, self.n_classes_)


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
