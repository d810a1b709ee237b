"""Ensembles of out-of-sample probabilities (FME), weighted by out-of-sample fit."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from labelaudit._errors import InvalidParameterError
from labelaudit.detect._scores import check_pred_probs

__all__ = ["Ensemble", "ensemble_pred_probs"]


@dataclass(frozen=True)
class Ensemble:
    """Averaged probabilities and the weight each member got."""

    pred_probs: np.ndarray
    weights: np.ndarray


def _mean_nll(weights: np.ndarray, stack: np.ndarray, labels: np.ndarray) -> float:
    given = np.einsum("m,mn->n", weights, stack[:, np.arange(len(labels)), labels])
    return float(-np.log(np.clip(given, 1e-12, None)).mean())


def ensemble_pred_probs(
    members: Sequence[np.ndarray], labels: np.ndarray | None = None, *,
    weights: Literal["auto", "equal"] | Sequence[float] = "auto",
) -> Ensemble:
    """Average several members' probabilities, each (n_samples, n_classes).

    ``weights="auto"`` picks the convex weights that minimise the mean out-of-sample
    log loss of the given labels (one number per member, so fitting them barely uses the
    labels; a member that predicts worse out of sample gets less weight). ``"equal"`` is
    the plain average of Chong et al.'s FME.

    References
    ----------
    Chong, Hong & Manning (2022), section 3: Foundation Model Ensembling averages the
    predicted probabilities of several fine-tuned models and ranks by the loss.

    Examples
    --------
    >>> good = np.array([[0.9, 0.1], [0.2, 0.8], [0.8, 0.2]])
    >>> noise = np.full((3, 2), 0.5)
    >>> ensemble_pred_probs([good, noise], np.array([0, 1, 0])).weights.round(2).tolist()
    [1.0, 0.0]
    """
    if not members:
        raise InvalidParameterError("an ensemble needs at least one member")
    stack = np.stack([np.asarray(m, dtype=float) for m in members])
    if len(members) == 1:
        return Ensemble(stack[0], np.ones(1))
    if isinstance(weights, str):
        if weights == "equal":
            w = np.full(len(members), 1.0 / len(members))
        elif weights == "auto":
            if labels is None:
                raise InvalidParameterError("weights='auto' needs the labels")
            labels, _ = check_pred_probs(labels, stack[0])
            w = _fit_weights(stack, labels)
        else:
            raise InvalidParameterError(f"weights must be 'auto', 'equal' or numbers; got {weights!r}")
    else:
        w = np.asarray(weights, dtype=float)
        if w.shape != (len(members),) or (w < 0).any() or w.sum() <= 0:
            raise InvalidParameterError("weights must be one non-negative number per member")
        w = w / w.sum()
    return Ensemble(np.einsum("m,mnk->nk", w, stack), w)


def _fit_weights(stack: np.ndarray, labels: np.ndarray) -> np.ndarray:
    from scipy.optimize import minimize

    m = stack.shape[0]
    start = np.full(m, 1.0 / m)
    result = minimize(
        _mean_nll, start, args=(stack, labels), method="SLSQP",
        bounds=[(0.0, 1.0)] * m,
        constraints=({"type": "eq", "fun": lambda w: w.sum() - 1.0},),
    )
    w = np.clip(result.x if result.success else start, 0.0, None)
    w = w / w.sum()
    return np.round(w, 6) / np.round(w, 6).sum()
