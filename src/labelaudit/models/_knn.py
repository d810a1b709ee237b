"""Deep k-nearest-neighbour label disagreement on frozen embeddings (Bahri et al. 2020)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from labelaudit._validation import check_int, check_number
from labelaudit.io import TextDataset
from labelaudit.models._base import Scorer

__all__ = ["KnnScorer"]


@dataclass(eq=False, kw_only=True)
class KnnScorer(Scorer):
    """Class probabilities from the labels of an item's nearest training neighbours.

    Each item's probability of class ``c`` is the smoothed share of its ``k`` nearest
    training items (cosine similarity of frozen sentence embeddings, the ``embed``
    scorer's and its cache) that carry label ``c``:
    ``p(c) = (count_c + alpha) / (k + alpha * n_classes)``. An item whose neighbours
    disagree with its label gets a high loss, which is the deep-kNN filter of Bahri,
    Jiang & Gupta (2020) as a probability, so it joins the ensemble like any member.
    Cross-fitting keeps an item out of its own neighbour set.

    Parameters
    ----------
    k : int
        Neighbours per item.
    alpha : float
        Additive smoothing of the counts.
    model, batch_size, max_length, cache_dir : options of the embeddings (see
        :class:`~labelaudit.models.EmbedScorer`).

    References
    ----------
    Bahri, Jiang & Gupta (2020), Deep k-NN for Noisy Labels, ICML.

    Examples
    --------
    >>> scorer = KnnScorer(k=2)
    >>> x = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9]])
    >>> scorer.fit(x, np.array([0, 0, 1, 1]), n_classes=2).predict_proba(x[:1]).round(2)
    array([[0.83, 0.17]])
    """

    name = "knn"

    k: int = 10
    alpha: float = 0.5
    model: str | None = None
    batch_size: int = 32
    max_length: int = 256
    cache_dir: str | Path | None = None

    def prepare(self, data: TextDataset, *, progress: bool = False) -> Any:
        from labelaudit.models._embed import EmbedScorer

        return EmbedScorer(model=self.model, batch_size=self.batch_size,
                           max_length=self.max_length,
                           cache_dir=self.cache_dir).prepare(data, progress=progress)

    def fit(self, features: Any, labels: np.ndarray, *, n_classes: int) -> KnnScorer:
        check_int(self.k, "k", minimum=1)
        check_number(self.alpha, "alpha", low=0.0, low_open=True)
        vectors = np.asarray(features, dtype=np.float32)
        self.vectors_ = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True),
                                             1e-12)
        self.labels_ = np.asarray(labels, dtype=int)
        self.n_classes_ = n_classes
        return self

    def predict_proba(self, features: Any) -> np.ndarray:
        queries = np.asarray(features, dtype=np.float32)
        queries = queries / np.maximum(np.linalg.norm(queries, axis=1, keepdims=True), 1e-12)
        k = min(self.k, len(self.labels_))
        out = np.zeros((len(queries), self.n_classes_))
        for start in range(0, len(queries), 1024):  # bounded memory: 1,024 rows at a time
            sims = queries[start:start + 1024] @ self.vectors_.T
            nearest = np.argpartition(-sims, k - 1, axis=1)[:, :k]
            votes = self.labels_[nearest]
            for c in range(self.n_classes_):
                out[start:start + 1024, c] = (votes == c).sum(axis=1)
        return (out + self.alpha) / (k + self.alpha * self.n_classes_)
