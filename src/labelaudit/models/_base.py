"""The interface every scorer implements."""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from typing import Any

import numpy as np


def take(features: Any, index: np.ndarray) -> Any:
    """Rows ``index`` of features that are an array, a sparse matrix or a list."""
    if isinstance(features, list):
        return [features[i] for i in index]
    return features[index]


def full_proba(proba: np.ndarray, fitted_classes: np.ndarray, n_classes: int) -> np.ndarray:
    """Spread a model's probabilities over all ``n_classes`` columns.

    A training fold may miss a class; that class gets probability 0 for its items. Rows
    sum to 1 in float64 (a model fitted on float32 features predicts in float32).

    Examples
    --------
    >>> full_proba(np.array([[0.3, 0.7]]), np.array([0, 2]), 3).tolist()
    [[0.3, 0.0, 0.7]]
    """
    out = np.zeros((proba.shape[0], n_classes))
    out[:, np.asarray(fitted_classes, dtype=int)] = proba
    # float32 features give float32 probabilities: sum them to 1 again in float64
    sums = out.sum(axis=1, keepdims=True)
    return out / np.where(sums > 0, sums, 1.0)


class Scorer(ABC):
    """A model that turns items (texts, or tagged sentences) into class probabilities.

    Scorers work in two steps so that expensive, label-free work (encoding texts with a
    pre-trained encoder) happens once for all items, and only the cheap, label-dependent
    part is repeated per fold: ``prepare`` maps a dataset (a :class:`TextDataset`, or a
    ``TokenDataset`` for token scorers) to one feature row per item; ``fit`` and
    ``predict_proba`` take rows of those features (see :func:`take`).

    Text scorers predict one row ``(n_classes,)`` per item; token scorers (subclasses of
    ``TokenScorer``) one ``(n_tokens, n_classes)`` array per sentence. Cross-fitting puts
    the held-out predictions back in item order with :meth:`join_predictions`.
    """

    name: str = "scorer"

    @abstractmethod
    def prepare(self, data: Any, *, progress: bool = False) -> Any:
        """Compute the label-free features of every item in ``data``."""

    @abstractmethod
    def fit(self, features: Any, labels: Any, *, n_classes: int) -> Scorer:
        """Fit on feature rows and integer labels; returns ``self``."""

    @abstractmethod
    def predict_proba(self, features: Any) -> Any:
        """Probabilities of shape (n_samples, n_classes)."""

    def join_predictions(self, parts: list[tuple[np.ndarray, Any]], n_samples: int, *,
                         n_classes: int) -> Any:
        """Predictions of every item, in item order, from ``(positions, predict_proba
        output)`` pairs: one array (n_samples, n_classes) with rows summing to 1."""
        pred_probs = np.full((n_samples, n_classes), np.nan)
        for positions, probs in parts:
            pred_probs[positions] = probs
        sums = pred_probs.sum(axis=1, keepdims=True)
        return pred_probs / np.where(sums > 0, sums, 1.0)

    def fold_devices(self) -> list[str]:
        """Devices to fit folds on at once, one process each (several GPUs of one
        machine); empty (the default) fits the folds in turn in this process."""
        return []

    def fold_gpus(self) -> int:
        """GPUs one fold's fit wants when folds run as Ray tasks: 0 (the default), or 1
        for a scorer that trains on a GPU."""
        return 0

    def on_device(self, device: str) -> Scorer:
        """An unfitted copy that fits on ``device`` (see :meth:`fold_devices`)."""
        return self.clone()

    def clone(self) -> Scorer:
        """An unfitted copy with the same options."""
        fresh = copy.copy(self)
        for key in [k for k in vars(fresh) if k.endswith("_") and not k.startswith("_")]:
            delattr(fresh, key)
        return fresh
