"""The ranking methods: label-quality scores, lower = more suspect, as in cleanlab.
:data:`RANKING_METHODS` is the one list of them, and the one that dispatches.

- ``loss``: ``log p(label | x)`` under the first member (FML of Chong et al. 2022);
  ``ensemble``: the same under the ensemble.
- ``self_confidence``: ``p(label | x)``, by ``cleanlab.rank.get_label_quality_scores``.
- ``margin``: ``p(label | x) - max_{k != label} p(k | x)``, in [-1, 1]. cleanlab's
  ``normalized_margin`` is ``(margin + 1) / 2``: same ranking, other values (and scores
  are part of our outputs).
- ``entropy``: ``1 - H(p) / log K``, label-blind. cleanlab's
  ``confidence_weighted_entropy`` depends on the given label and ranks differently.
- ``max_prob``: ``max_k p(k | x)``, the Hendrycks & Gimpel (2017) baseline.
- ``confident_learning``: cleanlab's flags first (:func:`confident_learning`);
  ``crowdlab``: CROWDLAB's scores from several annotators' votes (:func:`crowdlab`).

References: Chong, Hong & Manning (2022), Detecting Label Errors by using Pre-Trained
Language Models, section 3. Hendrycks & Gimpel (2017), A baseline for detecting
misclassified and out-of-distribution examples. Northcutt et al. (2021), Confident Learning.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from labelaudit._errors import InvalidInputError, InvalidParameterError
from labelaudit.detect._cleanlab import import_cleanlab
from labelaudit.detect._topk import TopKProbs

if TYPE_CHECKING:  # the verdicts are computed above this module, which they import
    from labelaudit.detect._confident import ConfidentLearning
    from labelaudit.detect._multiannotator import CrowdLab

_EPS = 1e-12


Probs = np.ndarray | TopKProbs  # dense rows, or each item's likeliest classes


def check_pred_probs(labels: np.ndarray, pred_probs: Probs) -> tuple[np.ndarray, Any]:
    """Validate ``labels`` (n_samples,) and ``pred_probs`` (n_samples, n_classes), dense or a
    :class:`TopKProbs` of the same labels."""
    labels = np.asarray(labels)
    if isinstance(pred_probs, TopKProbs):
        if not np.array_equal(labels, pred_probs.labels):
            raise InvalidInputError("labels differ from the labels the probabilities were "
                                    "kept for (TopKProbs.labels)")
        return pred_probs.labels, pred_probs
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


def per_item_loss(labels: np.ndarray, pred_probs: Probs) -> np.ndarray:
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
    pred_probs: Probs  # out-of-sample probabilities (a scan's: the ensemble's)
    first_member: Probs  # the first member's probabilities (``loss``)
    confident: ConfidentLearning | None = None  # cleanlab's verdict on pred_probs
    crowd: CrowdLab | None = None  # CROWDLAB's verdict, with annotators' votes


def given_probs(labels: np.ndarray, probs: Probs) -> np.ndarray:
    """Each item's probability of its label in ``labels`` (a :class:`TopKProbs`: of the
    given labels it was kept for)."""
    if isinstance(probs, TopKProbs):
        return probs.given
    return probs[np.arange(len(labels)), labels]


def dense_probs(probs: Probs) -> np.ndarray:
    """Every class's probability of every item, for what reads them all (CROWDLAB,
    Datalab): a :class:`TopKProbs` made dense (its rest spread evenly), dense rows as
    they are."""
    return probs.dense() if isinstance(probs, TopKProbs) else probs


def _log_given(labels: np.ndarray, probs: Probs) -> np.ndarray:
    return np.log(np.clip(given_probs(labels, probs), _EPS, 1.0))


def _self_confidence(p: Predictions) -> np.ndarray:
    if len(p.labels) == 0 or isinstance(p.pred_probs, TopKProbs):
        # cleanlab refuses empty labels; its self-confidence is the given probability
        return given_probs(p.labels, p.pred_probs)
    rank = import_cleanlab("cleanlab.rank")
    return np.asarray(rank.get_label_quality_scores(p.labels, p.pred_probs,
                                                    method="self_confidence"), dtype=float)


def _margin(p: Predictions) -> np.ndarray:
    return given_probs(p.labels, p.pred_probs) - best_other(p.labels, p.pred_probs)[1]


def best_other(labels: np.ndarray, probs: Probs) -> tuple[np.ndarray, np.ndarray]:
    """Each item's most probable class other than its label, and that probability."""
    if isinstance(probs, TopKProbs):
        return probs.best_other()
    others = probs.copy()
    others[np.arange(len(labels)), labels] = -np.inf
    classes = others.argmax(axis=1)
    return classes, probs[np.arange(len(labels)), classes]


def _entropy(p: Predictions) -> np.ndarray:
    n_classes = p.pred_probs.shape[1]
    if n_classes < 2:
        return np.ones(len(p.labels))
    if isinstance(p.pred_probs, TopKProbs):
        entropy = p.pred_probs.entropy()
    else:
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


def label_quality_scores(labels: np.ndarray, pred_probs: Probs, *,
                         method: str = "loss") -> np.ndarray:
    """How likely each given label (class indices, (n_samples,)) is correct under the
    out-of-sample ``pred_probs`` (n_samples, n_classes), lower = more suspect, by a
    :data:`RANKING_METHODS` ``method`` (``loss`` and ``ensemble`` are then the same).

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


def suggest_labels(labels: np.ndarray, pred_probs: Probs) -> tuple[np.ndarray, np.ndarray]:
    """The most probable label other than the given one, and its probability.

    Examples
    --------
    >>> suggest_labels(np.array([0]), np.array([[0.5, 0.2, 0.3]]))
    (array([2]), array([0.3]))
    """
    labels, pred_probs = check_pred_probs(labels, pred_probs)
    return best_other(labels, pred_probs)
