"""Scorers by name, and the default out-of-sample probabilities used across labelaudit."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from labelaudit._errors import InvalidInputError, InvalidParameterError
from labelaudit.io import TextDataset
from labelaudit.models._base import Scorer

__all__ = ["SCORERS", "DEFAULT_SCORERS", "ScorerName", "make_scorer", "cross_val_pred_probs"]

ScorerName = Literal["tfidf", "embed", "finetune"]
SCORERS: tuple[str, ...] = ("tfidf", "embed", "finetune")
DEFAULT_SCORERS: tuple[str, ...] = ("tfidf", "embed")


def make_scorer(name: str, **options: Any) -> Scorer:
    """A scorer by name: ``"tfidf"``, ``"embed"`` or ``"finetune"``.

    Options unknown to a scorer are ignored, so one set of options (``model=...``) can be
    passed to every member of an ensemble.

    Examples
    --------
    >>> make_scorer("tfidf").name
    'tfidf'
    """
    import inspect

    from labelaudit.models._embed import EmbedScorer
    from labelaudit.models._finetune import FinetuneScorer
    from labelaudit.models._tfidf import TfidfScorer

    classes: dict[str, type[Scorer]] = {
        "tfidf": TfidfScorer, "embed": EmbedScorer, "finetune": FinetuneScorer}
    if name not in classes:
        raise InvalidParameterError(
            f"unknown scorer {name!r}; choose from {', '.join(SCORERS)}")
    cls = classes[name]
    accepted = inspect.signature(cls.__init__).parameters
    return cls(**{k: v for k, v in options.items() if k in accepted and v is not None})


def cross_val_pred_probs(
    data: TextDataset, *, scorers: Sequence[str] = DEFAULT_SCORERS, n_folds: int = 5,
    random_state: int | None = 0, progress: bool = False, **options: Any,
) -> np.ndarray:
    """Out-of-sample probabilities (n_samples, n_classes) from the default scorer set.

    Every member is cross-fitted on the same stratified folds, then the members are
    averaged with weights fitted to their out-of-sample log loss
    (:func:`labelaudit.detect.ensemble_pred_probs`).
    """
    from labelaudit.detect import ensemble_pred_probs
    from labelaudit.models._crossfit import crossfit_pred_probs, make_folds

    if data.labels is None:
        raise InvalidInputError("the dataset has no labels to cross-fit on")
    folds = make_folds(data.labels, n_folds=n_folds, random_state=random_state,
                       classes=data.classes)
    members = []
    for name in scorers:
        scorer = make_scorer(name, **options)
        features = scorer.prepare(data, progress=progress)
        members.append(crossfit_pred_probs(scorer, features, data.labels, folds,
                                           n_classes=len(data.classes), progress=progress))
    return ensemble_pred_probs(members, data.labels).pred_probs
