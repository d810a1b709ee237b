"""Ensembles of out-of-sample probabilities (FME), weighted by out-of-sample fit."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from labelaudit._errors import InvalidParameterError
from labelaudit.detect._scores import Probs, check_pred_probs, given_probs
from labelaudit.detect._topk import TopKProbs


@dataclass(frozen=True)
class Ensemble:
    """Averaged probabilities, the weight each member got and its temperature (1 = as is)."""

    pred_probs: Probs
    weights: np.ndarray
    temperatures: np.ndarray


def apply_temperature(pred_probs: Probs, temperature: float) -> Probs:
    """``softmax(log(pred_probs) / temperature)``, row by row (a :class:`TopKProbs`:
    :meth:`TopKProbs.scaled`).

    Examples
    --------
    >>> apply_temperature(np.array([[0.8, 0.2]]), 0.5).round(3).tolist()
    [[0.941, 0.059]]
    """
    if isinstance(pred_probs, TopKProbs):
        return pred_probs.scaled(temperature)
    logits = np.log(np.clip(pred_probs, 1e-12, 1.0)) / temperature
    logits -= logits.max(axis=1, keepdims=True)
    out = np.exp(logits)
    return out / out.sum(axis=1, keepdims=True)


def temperature_scale(pred_probs: Probs, labels: np.ndarray) -> tuple[Probs, float]:
    """``softmax(log p / T)`` with the one T that minimises out-of-sample log loss (Guo et
    al. 2017): TF-IDF + logistic regression is far too unsure (T well below 1 on 20
    Newsgroups) and embedding heads too sure, so a plain average favours the softer member.

    References
    ----------
    Guo, Pleiss, Sun & Weinberger (2017), On Calibration of Modern Neural Networks.

    Examples
    --------
    >>> probs = np.array([[0.6, 0.4], [0.4, 0.6], [0.6, 0.4], [0.6, 0.4]])
    >>> scaled, t = temperature_scale(probs, np.array([0, 1, 0, 0]))
    >>> bool(t < 1.0), bool(scaled[0, 0] > 0.9)
    (True, True)
    """
    from scipy.optimize import minimize_scalar

    labels, pred_probs = check_pred_probs(labels, pred_probs)

    def loss(log_t: float) -> float:
        scaled = apply_temperature(pred_probs, float(np.exp(log_t)))
        return float(-np.log(np.clip(given_probs(labels, scaled), 1e-12, None)).mean())

    best = minimize_scalar(loss, bounds=(np.log(0.05), np.log(20.0)), method="bounded")
    temperature = float(np.exp(best.x)) if best.success else 1.0
    return apply_temperature(pred_probs, temperature), temperature


def mean_probs(members: Sequence[Probs]) -> Probs:
    """The plain average of several runs' probabilities (dense, or :class:`TopKProbs`
    mixed with equal weights), as FME averages seeds.

    Examples
    --------
    >>> mean_probs([np.array([[0.8, 0.2]]), np.array([[0.4, 0.6]])]).tolist()
    [[0.6000000000000001, 0.4]]
    """
    if isinstance(members[0], TopKProbs):
        return TopKProbs.mix(members, [1.0 / len(members)] * len(members))  # type: ignore[arg-type]
    return np.mean([np.asarray(m) for m in members], axis=0)


def _mean_nll(weights: np.ndarray, given: np.ndarray) -> float:
    """The mean log loss of the given labels under the mix (``given``: (members, n))."""
    return float(-np.log(np.clip(weights @ given, 1e-12, None)).mean())


def ensemble_pred_probs(
    members: Sequence[Probs], labels: np.ndarray | None = None, *,
    weights: Literal["auto", "equal"] | Sequence[float] = "auto",
    calibrate: bool = True,
) -> Ensemble:
    """Average several members' probabilities, each (n_samples, n_classes), dense or
    all :class:`TopKProbs` (mixed by :meth:`TopKProbs.mix`).

    ``weights="auto"``: the convex weights minimising the mean out-of-sample log loss of
    the given labels (one number per member); ``"equal"``: the plain average of FME. With
    ``calibrate`` and labels, each member is first :func:`temperature_scale`-d, so weights
    reflect how well members separate the classes, not how sure they are.

    References
    ----------
    Chong, Hong & Manning (2022), section 3: Foundation Model Ensembling averages the
    predicted probabilities of several fine-tuned models and ranks by the loss.

    Examples
    --------
    >>> good = np.array([[0.9, 0.1], [0.2, 0.8], [0.8, 0.2]])
    >>> noise = np.full((3, 2), 0.5)
    >>> out = ensemble_pred_probs([good, noise], np.array([0, 1, 0]), calibrate=False)
    >>> out.weights.round(2).tolist()
    [1.0, 0.0]
    """
    if not members:
        raise InvalidParameterError("an ensemble needs at least one member")
    kept = [m.classes.shape[1] for m in members if isinstance(m, TopKProbs)]
    sparse = bool(kept)
    if sparse and len(kept) < len(members):  # dense members join the others' top classes
        if labels is None:
            raise InvalidParameterError("dense and TopKProbs members together need the labels")
        members = [m if isinstance(m, TopKProbs) else TopKProbs.from_dense(m, labels, k=kept[0])
                   for m in members]
    stack: list[Probs] = [m if sparse else np.asarray(m, dtype=float) for m in members]
    temperatures = np.ones(len(members))
    if calibrate and labels is not None:
        for i in range(len(members)):
            stack[i], temperatures[i] = temperature_scale(stack[i], labels)
    if len(members) == 1:
        return Ensemble(stack[0], np.ones(1), temperatures)
    if isinstance(weights, str):
        if weights == "equal":
            w = np.full(len(members), 1.0 / len(members))
        elif weights == "auto":
            if labels is None:
                raise InvalidParameterError("weights='auto' needs the labels")
            labels, _ = check_pred_probs(labels, stack[0])
            w = _fit_weights(np.stack([given_probs(labels, m) for m in stack]))
        else:
            raise InvalidParameterError(
                f"weights must be 'auto', 'equal' or numbers; got {weights!r}")
    else:
        w = np.asarray(weights, dtype=float)
        if w.shape != (len(members),) or (w < 0).any() or w.sum() <= 0:
            raise InvalidParameterError("weights must be one non-negative number per member")
        w = w / w.sum()
    if sparse:
        return Ensemble(TopKProbs.mix(stack, w), w, temperatures)  # type: ignore[arg-type]
    return Ensemble(np.einsum("m,mnk->nk", w, np.stack([np.asarray(m) for m in stack])), w,
                    temperatures)


def _fit_weights(given: np.ndarray) -> np.ndarray:
    """The convex weights of the members minimising the mean log loss of the given labels
    (``given``: each member's probabilities of them, (members, n))."""
    from scipy.optimize import minimize

    m = given.shape[0]
    start = np.full(m, 1.0 / m)
    result = minimize(
        _mean_nll, start, args=(given,), method="SLSQP",
        bounds=[(0.0, 1.0)] * m,
        constraints=({"type": "eq", "fun": lambda w: w.sum() - 1.0},),
    )
    w = np.clip(result.x if result.success else start, 0.0, None)
    w = w / w.sum()
    return np.round(w, 6) / np.round(w, 6).sum()
