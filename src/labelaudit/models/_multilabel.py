"""Multi-label scoring: one binary logistic regression per class on a member's features
(one-vs-rest), and folds stratified by label sets (iterative stratification)."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from labelaudit.models._base import Scorer
from labelaudit.models._tfidf import TfidfScorer


@dataclass(eq=False)
class OneVsRestScorer(Scorer):
    """``base``'s features (``tfidf`` or ``embed``) with one binary logistic regression per
    class: each class's probability of being in the label set (rows need not sum to 1). A
    class a fold has on every item or none is predicted at its smoothed share.

    Examples
    --------
    >>> from labelaudit.io import TextDataset
    >>> from labelaudit.models import TfidfScorer
    >>> texts = ["goal team", "pasta sauce", "goal pasta", "team"] * 4
    >>> Y = np.array([[1, 0], [0, 1], [1, 1], [1, 0]] * 4)
    >>> scorer = OneVsRestScorer(TfidfScorer())
    >>> features = scorer.prepare(TextDataset(np.arange(16), texts, None, Y, np.array(["f", "s"])))
    >>> (scorer.fit(features, Y, n_classes=2).predict_proba(features[:3]) > 0.5).tolist()
    [[True, False], [False, True], [True, True]]
    """

    base: Scorer
    C: float | None = None

    def __post_init__(self) -> None:
        self.name = self.base.name

    def prepare(self, data: Any, *, progress: bool = False) -> Any:
        return self.base.prepare(data, progress=progress)

    def _matrix(self, features: Any, *, fit: bool) -> Any:
        if isinstance(self.base, TfidfScorer):
            return self.base._transform(features, fit=fit)
        from sklearn.preprocessing import StandardScaler

        if fit:
            self.scaler_ = StandardScaler().fit(features)
        return self.scaler_.transform(features)

    def fit(self, features: Any, labels: Any, *, n_classes: int) -> OneVsRestScorer:
        from sklearn.linear_model import LogisticRegression

        Y = np.asarray(labels)
        matrix = self._matrix(features, fit=True)
        C = self.C if self.C is not None else getattr(self.base, "C", 1.0)
        self.heads_: list[Any] = []
        for j in range(n_classes):
            column = Y[:, j]
            if column.min() == column.max():  # every item or none: its smoothed share
                self.heads_.append((column.sum() + 0.5) / (len(column) + 1.0))
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                self.heads_.append(LogisticRegression(C=C, max_iter=1000).fit(matrix, column))
        return self

    def predict_proba(self, features: Any) -> np.ndarray:
        matrix = self._matrix(features, fit=False)
        out = np.empty((matrix.shape[0], len(self.heads_)))
        for j, head in enumerate(self.heads_):
            out[:, j] = head if isinstance(head, float) else head.predict_proba(matrix)[:, 1]
        return out

    def join_predictions(self, parts: list[tuple[np.ndarray, Any]], n_samples: int, *,
                         n_classes: int) -> Any:
        """Per-class probabilities in item order, rows not normalised."""
        out = np.full((n_samples, n_classes), np.nan)
        for positions, probs in parts:
            out[positions] = probs
        return out


def label_set_folds(Y: np.ndarray, *, n_folds: int = 5, random_state: int | None = 0
                    ) -> np.ndarray:
    """A fold id per item, each class spread evenly (iterative stratification, Sechidis et
    al. 2011): the rarest class left first, each item to the fold lacking it most. Not the
    ``iterative-stratification`` package: its wheel installs a top-level ``tests`` package.

    Examples
    --------
    >>> Y = np.array([[1, 0], [0, 1], [1, 1], [0, 0]] * 5)
    >>> folds = label_set_folds(Y, n_folds=5)
    >>> np.bincount(folds).tolist(), [int(Y[folds == f, 0].sum()) for f in range(5)]
    ([4, 4, 4, 4, 4], [2, 2, 2, 2, 2])
    """
    rng = np.random.default_rng(random_state)
    has = np.asarray(Y, dtype=bool)
    n = len(has)
    want_items = np.full(n_folds, n / n_folds)
    want = np.outer(np.full(n_folds, 1.0 / n_folds), has.sum(axis=0))  # (folds, classes)
    folds = np.full(n, -1, dtype=np.int64)
    left = np.ones(n, dtype=bool)

    def pick(scores: np.ndarray) -> int:
        best = np.flatnonzero(scores == scores.max())
        if len(best) > 1:
            items = want_items[best]
            best = best[items == items.max()]
        return int(best[rng.integers(len(best))] if len(best) > 1 else best[0])

    while True:
        counts = has[left].sum(axis=0)
        if not counts.any():
            break
        active = np.flatnonzero(counts)
        rarest = active[counts[active] == counts[active].min()]
        j = int(rarest[rng.integers(len(rarest))])
        for i in rng.permutation(np.flatnonzero(left & has[:, j])):
            f = pick(want[:, j])
            folds[i], left[i] = f, False
            want[f] -= has[i]
            want_items[f] -= 1
    for i in rng.permutation(np.flatnonzero(left)):
        f = pick(want_items)
        folds[i] = f
        want_items[f] -= 1
    return folds
