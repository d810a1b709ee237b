"""Label-quality scores from out-of-sample predicted probabilities.

Every score is a label-quality score: lower means more suspect, as in cleanlab.
``self_confidence`` is computed by ``cleanlab.rank.get_label_quality_scores``; the other
methods have no equivalent there (see :func:`label_quality_scores`).
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from labelaudit._errors import InvalidInputError, InvalidParameterError
from labelaudit.detect._cleanlab import import_cleanlab

__all__ = [
    "SCORE_METHODS",
    "ScoreMethod",
    "check_pred_probs",
    "label_quality_scores",
    "per_item_loss",
    "suggest_labels",
]

ScoreMethod = Literal["loss", "self_confidence", "margin", "entropy", "max_prob"]
SCORE_METHODS: tuple[str, ...] = ("loss", "self_confidence", "margin", "entropy", "max_prob")
_EPS = 1e-12


def check_pred_probs(labels: np.ndarray, pred_probs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Validate ``labels`` (n_samples,) and ``pred_probs`` (n_samples, n_classes)."""
    labels = np.asarray(labels)
    pred_probs = np.asarray(pred_probs, dtype=float)
    if pred_probs.ndim != 2:
        raise InvalidInputError(
            f"pred_probs must have shape (n_samples, n_classes); got {pred_probs.shape}"
        )
    if labels.shape != (pred_probs.shape[0],):
        raise InvalidInputError(
            f"labels has shape {labels.shape} but pred_probs has {pred_probs.shape[0]} rows"
        )
    if not np.issubdtype(labels.dtype, np.integer):
        raise InvalidInputError("labels must be integer class indices 0..n_classes-1")
    if labels.size and (labels.min() < 0 or labels.max() >= pred_probs.shape[1]):
        raise InvalidInputError(
            f"labels must lie in 0..{pred_probs.shape[1] - 1}; got {labels.min()}..{labels.max()}"
        )
    if not np.all(np.isfinite(pred_probs)) or pred_probs.min(initial=0) < 0:
        raise InvalidInputError("pred_probs must be finite and non-negative")
    return labels.astype(np.int64), pred_probs


def per_item_loss(labels: np.ndarray, pred_probs: np.ndarray) -> np.ndarray:
    """Cross-entropy of the given label, ``-log p(label | x)``, shape (n_samples,).

    Examples
    --------
    >>> per_item_loss(np.array([0, 1]), np.array([[0.5, 0.5], [0.9, 0.1]])).round(3).tolist()
    [0.693, 2.303]
    """
    labels, pred_probs = check_pred_probs(labels, pred_probs)
    given = pred_probs[np.arange(len(labels)), labels]
    return -np.log(np.clip(given, _EPS, 1.0))


def label_quality_scores(
    labels: np.ndarray, pred_probs: np.ndarray, *, method: ScoreMethod = "loss"
) -> np.ndarray:
    """Score how likely each given label is correct; lower means more suspect.

    Parameters
    ----------
    labels : ndarray of int, shape (n_samples,)
        Given (possibly wrong) labels as class indices.
    pred_probs : ndarray of shape (n_samples, n_classes)
        Out-of-sample predicted probabilities.
    method : {"loss", "self_confidence", "margin", "entropy", "max_prob"}
        - ``loss``: ``log p(label | x)``, the negated cross-entropy (FML of Chong et al.
          2022, who rank items by the loss of the given label under a foundation model).
          Not in ``cleanlab.rank``.
        - ``self_confidence``: ``p(label | x)``, computed by cleanlab's
          ``cleanlab.rank.get_label_quality_scores(method="self_confidence")``.
        - ``margin``: ``p(label | x) - max_{k != label} p(k | x)``, in [-1, 1] (0: the given
          label ties with the best other class). Ours, not cleanlab's: cleanlab's
          ``normalized_margin`` is the same margin rescaled to [0, 1], ``(margin + 1) / 2``
          (it ranks the same, but its values differ, and scores are part of our outputs).
        - ``entropy``: ``1 - H(p) / log K``, label-blind: uncertain items are suspect. Ours,
          not cleanlab's: its ``confidence_weighted_entropy``, ``log(1 + r) / r`` with
          ``r = (H(p) / log K) / p(label | x)``, depends on the given label and ranks
          differently.
        - ``max_prob``: ``max_k p(k | x)``, the Hendrycks & Gimpel (2017) baseline. Not in
          ``cleanlab.rank``.

    Returns
    -------
    ndarray of shape (n_samples,)

    References
    ----------
    Chong, Hong & Manning (2022), Detecting Label Errors by using Pre-Trained Language
    Models, section 3. Hendrycks & Gimpel (2017), A baseline for detecting misclassified
    and out-of-distribution examples. Northcutt et al. (2021), Confident Learning.

    Examples
    --------
    >>> probs = np.array([[0.9, 0.1], [0.2, 0.8], [0.6, 0.4]])
    >>> label_quality_scores(np.array([0, 0, 1]), probs, method="margin").round(2).tolist()
    [0.8, -0.6, -0.2]
    """
    labels, pred_probs = check_pred_probs(labels, pred_probs)
    rows = np.arange(len(labels))
    given = pred_probs[rows, labels]
    if method == "loss":
        return np.log(np.clip(given, _EPS, 1.0))
    if method == "self_confidence":
        if len(labels) == 0:  # cleanlab refuses empty labels
            return given
        rank = import_cleanlab("cleanlab.rank")
        return np.asarray(rank.get_label_quality_scores(labels, pred_probs,
                                                        method="self_confidence"), dtype=float)
    if method == "margin":
        others = pred_probs.copy()
        others[rows, labels] = -np.inf
        return given - others.max(axis=1)
    if method == "entropy":
        n_classes = pred_probs.shape[1]
        if n_classes < 2:
            return np.ones(len(labels))
        clipped = np.clip(pred_probs, _EPS, 1.0)
        entropy = -(pred_probs * np.log(clipped)).sum(axis=1)
        return 1.0 - entropy / np.log(n_classes)
    if method == "max_prob":
        return pred_probs.max(axis=1)
    raise InvalidParameterError(
        f"unknown method {method!r}; choose one of {', '.join(SCORE_METHODS)}"
    )


def suggest_labels(labels: np.ndarray, pred_probs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The most probable label other than the given one, and its probability.

    Examples
    --------
    >>> suggest_labels(np.array([0]), np.array([[0.5, 0.2, 0.3]]))
    (array([2]), array([0.3]))
    """
    labels, pred_probs = check_pred_probs(labels, pred_probs)
    others = pred_probs.copy()
    others[np.arange(len(labels)), labels] = -np.inf
    suggested = others.argmax(axis=1)
    return suggested, pred_probs[np.arange(len(labels)), suggested]
