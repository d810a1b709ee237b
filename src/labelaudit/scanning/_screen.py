"""Screening of the default members: each is tried on a sample first, and one that earns
little weight there is not run on all items (its encoding is the slow part)."""

from __future__ import annotations

from contextlib import nullcontext
from typing import Any

import numpy as np

from labelaudit.io import TextDataset

__all__ = ["SCREEN_WEIGHT", "screen_members", "screen_sample"]

SCREEN_WEIGHT = 0.05  # members below this ensemble weight on the screen are skipped


def screen_sample(labels: np.ndarray, *, size: int, random_state: int | None) -> np.ndarray:
    """Sorted positions of a stratified sample of ``size`` items (plain random when a
    class has a single item).

    Examples
    --------
    >>> screen_sample(np.array([0, 0, 0, 0, 1, 1, 1, 1]), size=4, random_state=0).size
    4
    """
    from sklearn.model_selection import train_test_split

    counts = np.bincount(labels)
    stratify = labels if counts[counts > 0].min() >= 2 else None
    sample, _ = train_test_split(np.arange(len(labels)), train_size=size,
                                 random_state=random_state, stratify=stratify)
    return np.sort(sample)


def screen_members(train: TextDataset, scorers: list, *, size: int | None, n_folds: int,
                   random_state: int | None, progress: bool, **options: Any,
                   ) -> tuple[list, dict[str, float]]:
    """The default members worth running on all of ``train``: each is cross-fitted on a
    stratified sample of ``size`` items (None: ``train`` is the sample already), the
    ensemble weights are fitted there, and a member under :data:`SCREEN_WEIGHT` is
    dropped (its weight returned, for the summary). The first member always stays (it is
    the one behind ``loss``)."""
    from labelaudit.detect import ensemble_pred_probs
    from labelaudit.models import exact_folds
    from labelaudit.models._registry import member_keys, member_pred_probs

    assert train.labels is not None  # noqa: S101 - the caller checked
    part = train
    if size is not None:
        sample = screen_sample(train.labels, size=size, random_state=random_state)
        part = TextDataset(ids=train.ids[sample], texts=[train.texts[i] for i in sample],
                           text_pairs=None if train.text_pairs is None
                           else [train.text_pairs[i] for i in sample],
                           labels=train.labels[sample], classes=train.classes)
    # a sample's smallest class may hold fewer items than the folds the whole data can take
    with exact_folds(False) if size is not None else nullcontext():
        run = member_pred_probs(part, scorers=scorers, n_folds=n_folds,
                                random_state=random_state, progress=progress, **options)
    probs = run.per_scorer()
    weight = dict(zip(probs, ensemble_pred_probs(list(probs.values()), part.labels)
                      .weights.tolist(), strict=True))
    keys = member_keys(scorers)
    kept = [s for i, (s, key) in enumerate(zip(scorers, keys, strict=True))
            if i == 0 or weight[key] >= SCREEN_WEIGHT]
    dropped = {key: weight[key] for key in keys[1:] if weight[key] < SCREEN_WEIGHT}
    return kept, dropped
