"""The interface every scorer implements."""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from typing import Any

import numpy as np

from labelaudit.io import TextDataset

__all__ = ["Scorer", "take", "full_proba"]


def take(features: Any, index: np.ndarray) -> Any:
    """Rows ``index`` of features that are an array, a sparse matrix or a list."""
    if isinstance(features, list):
        return [features[i] for i in index]
    return features[index]


def full_proba(proba: np.ndarray, fitted_classes: np.ndarray, n_classes: int) -> np.ndarray:
    """Spread a model's probabilities over all ``n_classes`` columns.

    A training fold may miss a class; that class gets probability 0 for its items.

    Examples
    --------
    >>> full_proba(np.array([[0.3, 0.7]]), np.array([0, 2]), 3).tolist()
    [[0.3, 0.0, 0.7]]
    """
    out = np.zeros((proba.shape[0], n_classes))
    out[:, np.asarray(fitted_classes, dtype=int)] = proba
    return out


class Scorer(ABC):
    """A model that turns texts into class probabilities.

    Scorers work in two steps so that expensive, label-free work (encoding texts with a
    pre-trained encoder) happens once for all items, and only the cheap, label-dependent
    part is repeated per fold: ``prepare`` maps a :class:`TextDataset` to features;
    ``fit`` and ``predict_proba`` take rows of those features.
    """

    name: str = "scorer"

    @abstractmethod
    def prepare(self, data: TextDataset, *, progress: bool = False) -> Any:
        """Compute the label-free features of every item in ``data``."""

    @abstractmethod
    def fit(self, features: Any, labels: np.ndarray, *, n_classes: int) -> Scorer:
        """Fit on feature rows and integer labels; returns ``self``."""

    @abstractmethod
    def predict_proba(self, features: Any) -> np.ndarray:
        """Probabilities of shape (n_samples, n_classes)."""

    def clone(self) -> Scorer:
        """An unfitted copy with the same options."""
        fresh = copy.copy(self)
        for key in [k for k in vars(fresh) if k.endswith("_") and not k.startswith("_")]:
            delattr(fresh, key)
        return fresh
