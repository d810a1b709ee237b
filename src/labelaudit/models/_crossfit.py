"""Out-of-sample probabilities: stratified k-fold cross-fitting, or fit-on-train/score-on-test."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from labelaudit._errors import InvalidInputError, InvalidParameterError
from labelaudit.models._base import Scorer, take

__all__ = ["make_folds", "crossfit_pred_probs", "fit_score_pred_probs", "FoldWarning"]


class FoldWarning(UserWarning):
    """Fewer folds were used than asked for, because a class is too small."""


def make_folds(labels: np.ndarray, *, n_folds: int = 5, random_state: int | None = 0,
               classes: np.ndarray | Sequence[object] | None = None) -> np.ndarray:
    """Assign every item to a fold, stratified by label; returns fold ids (n_samples,).

    When the smallest class has fewer items than ``n_folds``, the number of folds drops
    to that size with a :class:`FoldWarning`. A class with a single item cannot be held
    out and learned at the same time: that is an :class:`InvalidInputError`.

    Examples
    --------
    >>> folds = make_folds(np.array([0, 0, 1, 1, 0, 1]), n_folds=3)
    >>> sorted(np.bincount(folds).tolist())
    [2, 2, 2]
    """
    from sklearn.model_selection import StratifiedKFold

    if not isinstance(n_folds, (int, np.integer)) or n_folds < 2:
        raise InvalidParameterError(f"n_folds must be an integer >= 2; got {n_folds!r}")
    labels = np.asarray(labels)
    values, counts = np.unique(labels, return_counts=True)
    names = np.asarray(classes)[values] if classes is not None else values
    if counts.min() < 2:
        lonely = names[counts < 2].tolist()
        raise InvalidInputError(
            f"class{'es' if len(lonely) > 1 else ''} {lonely} ha{'ve' if len(lonely) > 1 else 's'} "
            "a single item: it cannot be held out and learned at once; "
            "drop or merge it, or score it against a separate training file with --score"
        )
    folds_used = int(min(n_folds, counts.min()))
    if folds_used < n_folds:
        small = names[counts < n_folds].tolist()
        warnings.warn(
            f"class{'es' if len(small) > 1 else ''} {small} ha{'ve' if len(small) > 1 else 's'} "
            f"fewer than {n_folds} items; using {folds_used} folds",
            FoldWarning, stacklevel=2,
        )
    splitter = StratifiedKFold(n_splits=folds_used, shuffle=True, random_state=random_state)
    fold_ids = np.empty(len(labels), dtype=np.int64)
    for fold, (_, test) in enumerate(splitter.split(np.zeros(len(labels)), labels)):
        fold_ids[test] = fold
    return fold_ids


def crossfit_pred_probs(
    scorer: Scorer, features: Any, labels: np.ndarray, fold_ids: np.ndarray, *,
    n_classes: int, progress: bool = False,
) -> np.ndarray:
    """Out-of-sample probabilities (n_samples, n_classes): each fold is scored by a model
    fitted on the other folds only."""
    from tqdm.auto import tqdm

    pred_probs = np.full((len(labels), n_classes), np.nan)
    folds = np.unique(fold_ids)
    for fold in tqdm(folds, desc=f"folds ({scorer.name})", disable=not progress, leave=False):
        held_out = np.flatnonzero(fold_ids == fold)
        train = np.flatnonzero(fold_ids != fold)
        model = scorer.clone().fit(take(features, train), labels[train], n_classes=n_classes)
        pred_probs[held_out] = model.predict_proba(take(features, held_out))
    return _normalise(pred_probs)


def fit_score_pred_probs(
    scorer: Scorer, train_features: Any, train_labels: np.ndarray, score_features: Any, *,
    n_classes: int,
) -> np.ndarray:
    """Fit on one split and predict another (the test-set audit)."""
    model = scorer.clone().fit(train_features, train_labels, n_classes=n_classes)
    return _normalise(model.predict_proba(score_features))


def _normalise(pred_probs: np.ndarray) -> np.ndarray:
    sums = pred_probs.sum(axis=1, keepdims=True)
    return pred_probs / np.where(sums > 0, sums, 1.0)
