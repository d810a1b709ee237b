"""Scorers by name, and the default out-of-sample probabilities used across labelaudit."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from labelaudit._errors import InvalidInputError
from labelaudit.io import TextDataset
from labelaudit.models._base import Scorer
from labelaudit.registry import SCORERS as _SCORERS

__all__ = [
    "DEFAULT_SCORERS",
    "SCORERS",
    "MemberProbs",
    "ScorerName",
    "cross_val_pred_probs",
    "make_scorer",
    "member_pred_probs",
]

ScorerName = Literal["tfidf", "embed", "finetune"]
SCORERS: tuple[str, ...] = _SCORERS.names()
DEFAULT_SCORERS: tuple[str, ...] = _SCORERS.default


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

    cls: type[Scorer] = _SCORERS.load(name)
    accepted = inspect.signature(cls.__init__).parameters
    return cls(**{k: v for k, v in options.items() if k in accepted and v is not None})


@dataclass(frozen=True)
class MemberProbs:
    """Out-of-sample probabilities of every ensemble member.

    Attributes
    ----------
    probs : dict of str to ndarray (n_samples, n_classes)
        One entry per scorer and repeat: ``"tfidf"``, then ``"tfidf#1"``... with seeds.
    n_folds : int
        Folds actually used (fewer than asked when a class is small).
    """

    probs: dict[str, np.ndarray]
    n_folds: int

    def per_scorer(self) -> dict[str, np.ndarray]:
        """Each scorer's repeats averaged, as FME averages seeds."""
        runs: dict[str, list[np.ndarray]] = {}
        for key, probs in self.probs.items():
            runs.setdefault(key.split("#")[0], []).append(probs)
        return {name: np.mean(r, axis=0) for name, r in runs.items()}


def member_pred_probs(
    train: TextDataset, target: TextDataset | None = None, *,
    scorers: Sequence[str] = DEFAULT_SCORERS, n_folds: int = 5, n_seeds: int = 1,
    random_state: int | None = 0, progress: bool = False, **options: Any,
) -> MemberProbs:
    """Out-of-sample probabilities of each scorer (and each seed repeat).

    Every scorer prepares its features once; each repeat is cross-fitted on stratified
    folds of ``train`` (the same folds for every scorer), or, with ``target``, fitted on
    all of ``train`` to score ``target``, where a repeat only changes scorers that are
    random.
    """
    from labelaudit.models._crossfit import crossfit_pred_probs, fit_score_pred_probs, make_folds

    if train.labels is None:
        raise InvalidInputError("the dataset has no labels to cross-fit on")
    n_classes = len(train.classes)
    members: dict[str, np.ndarray] = {}
    folds_used = n_folds
    for name in scorers:
        scorer = make_scorer(name, **options)
        train_features = scorer.prepare(train, progress=progress)
        target_features = None if target is None else scorer.prepare(target, progress=progress)
        for seed in range(n_seeds):
            state = None if random_state is None else random_state + seed
            seeded = make_scorer(name, **{**options, "random_state": state})
            key = name if seed == 0 else f"{name}#{seed}"
            if target_features is not None:
                members[key] = fit_score_pred_probs(seeded, train_features, train.labels,
                                                    target_features, n_classes=n_classes)
                continue
            folds = make_folds(train.labels, n_folds=n_folds, random_state=state,
                               classes=train.classes)
            folds_used = int(folds.max()) + 1
            members[key] = crossfit_pred_probs(seeded, train_features, train.labels, folds,
                                               n_classes=n_classes, progress=progress)
    return MemberProbs(members, folds_used)


def cross_val_pred_probs(
    data: TextDataset, *, scorers: Sequence[str] = DEFAULT_SCORERS, n_folds: int = 5,
    random_state: int | None = 0, progress: bool = False, **options: Any,
) -> np.ndarray:
    """Out-of-sample probabilities (n_samples, n_classes) from the default scorer set.

    Every member is cross-fitted on the same stratified folds, then the members are
    averaged with weights fitted to their out-of-sample log loss
    (:func:`labelaudit.detect.ensemble_pred_probs`), as :func:`labelaudit.scan` does.
    """
    from labelaudit.detect import ensemble_pred_probs

    members = member_pred_probs(data, scorers=scorers, n_folds=n_folds,
                                random_state=random_state, progress=progress, **options)
    return ensemble_pred_probs(list(members.per_scorer().values()), data.labels).pred_probs
