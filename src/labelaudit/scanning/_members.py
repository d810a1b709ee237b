"""The model step of ``scan``: screen the default members, cross-fit every member (or fit
on the training split and score the other), and combine them into one ensemble."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from labelaudit.io import TextDataset
from labelaudit.models import TrainingDynamics, fold_checkpoints

__all__ = ["MemberFit", "fit_members"]


@dataclass(frozen=True)
class MemberFit:
    """What the members gave: the ensemble's probabilities and how it was made."""

    pred_probs: np.ndarray
    member_probs: dict[str, np.ndarray]
    weights: dict[str, float]
    temperatures: dict[str, float]
    seconds: dict[str, float]
    mode: str
    screened: dict[str, float] = field(default_factory=dict)
    dynamics: TrainingDynamics | None = None

    @classmethod
    def given(cls, probs: np.ndarray) -> MemberFit:
        """The user's probabilities (``pred_probs``) as the one member, nothing fitted."""
        from labelaudit.scanning._text_result import GIVEN_PROBS

        return cls(pred_probs=probs, member_probs={"pred_probs": probs},
                   weights={"pred_probs": 1.0}, temperatures={"pred_probs": 1.0}, seconds={},
                   mode=GIVEN_PROBS)


def fit_members(train: TextDataset, target: TextDataset | None, labels: np.ndarray, *,
                scorers: Sequence[Any], screen: int, weights: Any, n_folds: int,
                n_seeds: int, random_state: int | None, progress: bool, sweep: int,
                keep: int | None, model: str | None, pair_mode: str | None,
                cache_dir: str | Path | None, engine: str, ray_address: str | None,
                checkpoint_dir: str | Path | None, resume: bool) -> MemberFit:
    """Screen (``screen`` > 0: the default members on a sample), fit and combine.

    ``labels`` are the scored items' labels (``target``'s, else ``train``'s); the folds
    run where ``engine`` says (:func:`labelaudit.engine.folds_on`)."""
    from labelaudit.detect import ensemble_pred_probs
    from labelaudit.engine import folds_on
    from labelaudit.models import training_dynamics
    from labelaudit.models._registry import member_pred_probs
    from labelaudit.scanning._screen import screen_members

    screened: dict[str, float] = {}
    with folds_on(engine, ray_address):
        if screen and len(train) > screen:
            scorers, screened = screen_members(
                train, list(scorers), size=screen, n_folds=n_folds, random_state=random_state,
                progress=progress, model=model, pair_mode=pair_mode, cache_dir=cache_dir)
        with fold_checkpoints(checkpoint_dir, resume=resume):
            run = member_pred_probs(train, target, scorers=list(scorers), n_folds=n_folds,
                                    n_seeds=n_seeds, random_state=random_state,
                                    progress=progress, sweep=sweep, keep=keep, model=model,
                                    pair_mode=pair_mode, cache_dir=cache_dir)
    # Repeats of one scorer (--seeds) are averaged first; the weights and temperatures
    # are then fitted per scorer, not per repeat.
    scorer_probs = run.per_scorer()
    ensemble = ensemble_pred_probs(list(scorer_probs.values()), labels, weights=weights)
    dynamics = None
    if run.epoch_logits:  # a dynamics member ran: its epochs (and repeats) together
        dynamics = training_dynamics(labels, np.concatenate(list(run.epoch_logits.values())))
    return MemberFit(
        pred_probs=ensemble.pred_probs, member_probs=run.probs,
        weights=dict(zip(scorer_probs, ensemble.weights.tolist(), strict=True)),
        temperatures=dict(zip(scorer_probs, ensemble.temperatures.tolist(), strict=True)),
        seconds=dict(run.seconds),
        mode=("fit-on-train, score-on-test" if target is not None
              else f"{run.n_folds}-fold cross-fit"),
        screened=screened, dynamics=dynamics)
