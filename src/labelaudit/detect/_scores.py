"""The ranking methods: label-quality scores of the scored items, lower = more suspect, as in
cleanlab. :data:`RANKING_METHODS` is the one list of them (``scan(methods=, rank_by=)``,
``labelaudit scan --methods/--rank-by``), and the one that dispatches.

- ``loss``: ``log p(label | x)`` under the first member, the negated cross-entropy (FML of
  Chong et al. 2022, who rank items by the loss of the given label under a foundation
  model); ``ensemble``: the same under the ensemble. Not in ``cleanlab.rank``.
- ``self_confidence``: ``p(label | x)``, computed by cleanlab's
  ``cleanlab.rank.get_label_quality_scores(method="self_confidence")``.
- ``margin``: ``p(label | x) - max_{k != label} p(k | x)``, in [-1, 1] (0: the given label
  ties with the best other class). Ours, not cleanlab's: cleanlab's ``normalized_margin``
  is the same margin rescaled to [0, 1], ``(margin + 1) / 2`` (it ranks the same, but its
  values differ, and scores are part of our outputs).
- ``entropy``: ``1 - H(p) / log K``, label-blind: uncertain items are suspect. Ours, not
  cleanlab's: its ``confidence_weighted_entropy``, ``log(1 + r) / r`` with
  ``r = (H(p) / log K) / p(label | x)``, depends on the given label and ranks differently.
- ``max_prob``: ``max_k p(k | x)``, the Hendrycks & Gimpel (2017) baseline. Not in
  ``cleanlab.rank``.
- ``confident_learning``: cleanlab's flags first (:func:`labelaudit.detect.confident_learning`);
  ``crowdlab``: CROWDLAB's scores from several annotators' votes
  (:func:`labelaudit.detect.crowdlab`).

References: Chong, Hong & Manning (2022), Detecting Label Errors by using Pre-Trained
Language Models, section 3. Hendrycks & Gimpel (2017), A baseline for detecting
misclassified and out-of-distribution examples. Northcutt et al. (2021), Confident Learning.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from labelaudit._errors import InvalidInputError, InvalidParameterError
from labelaudit.detect._cleanlab import import_cleanlab

if TYPE_CHECKING:  # the verdicts are computed above this module, which they import
    from labelaudit.detect._confident import ConfidentLearning
    from labelaudit.detect._multiannotator import CrowdLab

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
    return -_log_given(*check_pred_probs(labels, pred_probs))


class Predictions(NamedTuple):
    """What a ranking method reads (arrays checked by :func:`check_pred_probs`)."""

    labels: np.ndarray  # the given labels, class indices
    pred_probs: np.ndarray  # out-of-sample probabilities (a scan's: the ensemble's)
    first_member: np.ndarray  # the first member's probabilities (``loss``)
    confident: ConfidentLearning | None = None  # cleanlab's verdict on pred_probs
    crowd: CrowdLab | None = None  # CROWDLAB's verdict, with annotators' votes


def _given(labels: np.ndarray, probs: np.ndarray) -> np.ndarray:
    return probs[np.arange(len(labels)), labels]


def _log_given(labels: np.ndarray, probs: np.ndarray) -> np.ndarray:
    return np.log(np.clip(_given(labels, probs), _EPS, 1.0))


def _self_confidence(p: Predictions) -> np.ndarray:
    if len(p.labels) == 0:  # cleanlab refuses empty labels
        return _given(p.labels, p.pred_probs)
    rank = import_cleanlab("cleanlab.rank")
    return np.asarray(rank.get_label_quality_scores(p.labels, p.pred_probs,
                                                    method="self_confidence"), dtype=float)


def _margin(p: Predictions) -> np.ndarray:
    others = p.pred_probs.copy()
    others[np.arange(len(p.labels)), p.labels] = -np.inf
    return _given(p.labels, p.pred_probs) - others.max(axis=1)


def _entropy(p: Predictions) -> np.ndarray:
    n_classes = p.pred_probs.shape[1]
    if n_classes < 2:
        return np.ones(len(p.labels))
    entropy = -(p.pred_probs * np.log(np.clip(p.pred_probs, _EPS, 1.0))).sum(axis=1)
    return 1.0 - entropy / np.log(n_classes)


def _verdict(verdict: ConfidentLearning | CrowdLab | None, method: str) -> np.ndarray:
    if verdict is None:
        needs = "several annotators' votes" if method == "crowdlab" else "cleanlab's flags"
        raise InvalidParameterError(f"the {method} method needs {needs}: call "
                                    f"labelaudit.detect.{method}", param="method")
    return verdict.scores


#: The ranking methods by name, in the order users see them: each one's scores of the
#: :class:`Predictions` (see the module's docstring).
RANKING_METHODS: dict[str, Callable[[Predictions], np.ndarray]] = {
    "loss": lambda p: _log_given(p.labels, p.first_member),
    "ensemble": lambda p: _log_given(p.labels, p.pred_probs),
    "self_confidence": _self_confidence,
    "margin": _margin,
    "entropy": _entropy,
    "max_prob": lambda p: p.pred_probs.max(axis=1),
    "confident_learning": lambda p: _verdict(p.confident, "confident_learning"),
    "crowdlab": lambda p: _verdict(p.crowd, "crowdlab"),
}


def label_quality_scores(labels: np.ndarray, pred_probs: np.ndarray, *,
                         method: str = "loss") -> np.ndarray:
    """Score how likely each given label is correct (lower = more suspect) with ``method``,
    a :data:`RANKING_METHODS` name that reads one set of probabilities (``loss`` and
    ``ensemble`` are then the same; ``confident_learning`` and ``crowdlab`` have their own
    functions).

    ``labels``: given (possibly wrong) labels as class indices, shape (n_samples,);
    ``pred_probs``: out-of-sample probabilities, shape (n_samples, n_classes).

    Examples
    --------
    >>> probs = np.array([[0.9, 0.1], [0.2, 0.8], [0.6, 0.4]])
    >>> label_quality_scores(np.array([0, 0, 1]), probs, method="margin").round(2).tolist()
    [0.8, -0.6, -0.2]
    """
    labels, pred_probs = check_pred_probs(labels, pred_probs)
    if method not in RANKING_METHODS:
        raise InvalidParameterError(
            f"unknown method {method!r}; choose one of {', '.join(RANKING_METHODS)}",
            param="method")
    return RANKING_METHODS[method](Predictions(labels, pred_probs, pred_probs))


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
