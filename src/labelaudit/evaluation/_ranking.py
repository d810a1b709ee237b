"""Precision-recall metrics over a ranking of suspect items.

Conventions shared by every function here:

- ``scores`` are label-quality scores: **lower means more suspect**, so items are flagged
  from the lowest score up. A detector that outputs "higher = more suspect" values
  (a loss) must be negated first.
- **Ties.** Items with equal scores cannot be told apart by the detector, so they are never
  split by row order. Curves have one point per distinct score (all tied items enter
  together, as :func:`sklearn.metrics.precision_recall_curve` does). A cut-off ``k`` that
  falls inside a group of tied items counts that group's errors in proportion to how many
  of its items fit before ``k`` -- the expected count when ties are broken uniformly at
  random. Every metric is therefore invariant to the order of the rows.
- **Unverified items.** ``is_error`` may be float with NaN for items nobody checked; then
  ``unknown`` must be ``"exclude"`` (drop them) or ``"clean"`` (count them as clean).
- **Partial truth.** ``n_errors`` (where accepted) replaces the number of errors observed in
  ``is_error`` as the recall denominator, e.g. an estimate ``0.05 * n_items`` when only the
  top of the ranking was verified (Chong et al. 2022, appendix E.1).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from labelaudit._errors import InvalidInputError
from labelaudit.evaluation._truth import (
    Truth,
    Unknown,
    check_both_classes,
    check_k,
    check_n_errors,
    check_truth,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "PrecisionRecallCurve",
    "aupr_score",
    "average_precision_score",
    "precision_at_k",
    "precision_recall_curve",
    "recall_at_k",
    "roc_auc_score",
    "truncated_aupr_score",
]


@dataclass(frozen=True, eq=False)
class PrecisionRecallCurve:
    """Precision and recall of a ranking at every threshold.

    Point ``j`` flags the ``n_flagged[j]`` items whose score is ``<= thresholds[j]``. The
    first point is the conventional anchor (recall 0, precision 1, nothing flagged,
    threshold ``-inf``); the last flags every item.

    Attributes
    ----------
    precision, recall : ndarray of shape (n_points,)
    thresholds : ndarray of shape (n_points,)
    n_flagged : ndarray of int, shape (n_points,)
    n_items : int
    n_errors : int
        Errors observed in the truth.
    n_errors_total : int
        The recall denominator: ``n_errors``, or the estimate passed as ``n_errors=``.
    unknown : {"exclude", "clean"} or None
        How unverified items were treated.
    """

    precision: np.ndarray
    recall: np.ndarray
    thresholds: np.ndarray
    n_flagged: np.ndarray
    n_items: int
    n_errors: int
    n_errors_total: int
    unknown: Unknown | None = None

    def to_frame(self) -> pd.DataFrame:
        """One row per point: ``threshold, n_flagged, precision, recall``."""
        import pandas as pd
        return pd.DataFrame({
            "threshold": self.thresholds,
            "n_flagged": self.n_flagged,
            "precision": self.precision,
            "recall": self.recall,
        })

    def area(self) -> float:
        """Area under the curve by the trapezoidal rule (what :func:`aupr_score` returns)."""
        return _trapezoid(self.recall, self.precision)


def _trapezoid(x: np.ndarray, y: np.ndarray) -> float:
    return float(np.sum(np.diff(x) * (y[1:] + y[:-1]) / 2.0))


def _groups(truth: Truth) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct scores ascending, items flagged up to each, errors flagged up to each."""
    order = np.argsort(truth.scores, kind="mergesort")
    sorted_scores = truth.scores[order]
    cum_errors = np.cumsum(truth.is_error[order])
    last = np.r_[np.flatnonzero(np.diff(sorted_scores)), sorted_scores.size - 1]
    return sorted_scores[last], last + 1, cum_errors[last]


def _errors_at(truth: Truth, k: int) -> float:
    """Expected errors among the first ``k`` items, ties broken uniformly at random."""
    n = truth.n_items
    if k >= n:
        return float(truth.n_errors)
    kth = np.partition(truth.scores, k - 1)[k - 1]
    above = truth.scores < kth
    tied = truth.scores == kth
    n_above = int(above.sum())
    return float(truth.is_error[above].sum()) + (k - n_above) * float(
        truth.is_error[tied].sum()
    ) / int(tied.sum())


def _denominator(truth: Truth, n_errors: int | None) -> int:
    total = check_n_errors(n_errors, truth.n_errors)
    if total is None:
        if truth.n_errors == 0:
            raise InvalidInputError(
                f"recall is undefined: the truth marks no errors among its {truth.n_items} items"
                + (" left after excluding unverified ones" if truth.unknown == "exclude" else "")
            )
        total = truth.n_errors
    return total


def _curve(truth: Truth, n_errors: int | None, k: int | None = None) -> PrecisionRecallCurve:
    total = _denominator(truth, n_errors)
    thresholds, flagged, errors = _groups(truth)
    errors = errors.astype(float)
    if k is not None and k < truth.n_items:
        keep = flagged < k
        thresholds, flagged, errors = thresholds[keep], flagged[keep], errors[keep]
        kth = np.partition(truth.scores, k - 1)[k - 1]
        thresholds = np.r_[thresholds, kth]
        flagged = np.r_[flagged, k]
        errors = np.r_[errors, _errors_at(truth, k)]
    return PrecisionRecallCurve(
        precision=np.r_[1.0, errors / flagged],
        recall=np.r_[0.0, errors / total],
        thresholds=np.r_[-np.inf, thresholds],
        n_flagged=np.r_[0, flagged].astype(np.int64),
        n_items=truth.n_items,
        n_errors=truth.n_errors,
        n_errors_total=total,
        unknown=truth.unknown,
    )


def precision_recall_curve(is_error: ArrayLike, scores: ArrayLike, *,
                           unknown: Unknown | None = None,
                           n_errors: int | None = None) -> PrecisionRecallCurve:
    """Precision and recall of flagging the items with the lowest scores, at every threshold.

    Parameters
    ----------
    is_error : array-like of shape (n_items,)
        True where the given label is wrong; float with NaN for unverified items.
    scores : array-like of shape (n_items,)
        Label-quality scores, lower = more suspect.
    unknown : {"exclude", "clean"}, optional
        Required when ``is_error`` has NaN: drop those items, or count them as clean.
    n_errors : int, optional
        Total number of errors to use as the recall denominator, when the truth is partial.

    Returns
    -------
    PrecisionRecallCurve
        One point per distinct score (tied items enter together), after the anchor point
        (recall 0, precision 1).

    Examples
    --------
    >>> curve = precision_recall_curve([True, False, True, False], [0.1, 0.2, 0.3, 0.4])
    >>> curve.precision.round(3).tolist()
    [1.0, 1.0, 0.5, 0.667, 0.5]
    >>> curve.recall.tolist()
    [0.0, 0.5, 0.5, 1.0, 1.0]
    """
    truth = check_truth(is_error, scores, unknown=unknown)
    return _curve(truth, n_errors)


def aupr_score(is_error: ArrayLike, scores: ArrayLike, *, unknown: Unknown | None = None,
               n_errors: int | None = None) -> float:
    """Area under the precision-recall curve by the trapezoidal rule.

    Chong et al. (2022, appendix E.1): "We calculate the Area Under the Precision-Recall
    Curve (AUPR) using the trapezoidal rule, given individual measurements of precision and
    recall at every possible threshold". With the points ``(R_j, P_j)`` of
    :func:`precision_recall_curve` (including the anchor ``(0, 1)``),

    ``AUPR = sum_j (R_j - R_{j-1}) * (P_j + P_{j-1}) / 2``,

    which equals ``sklearn.metrics.auc(recall, precision)`` on scikit-learn's curve of
    ``-scores``. Linear interpolation makes it slightly optimistic compared to
    :func:`average_precision_score`.

    Parameters
    ----------
    is_error, scores, unknown
        As in :func:`precision_recall_curve`: the truth (NaN for unverified items), the
        label-quality scores (lower = more suspect) and what to do with unverified items.
    n_errors : int, optional
        Total number of errors (recall denominator) when the truth is partial; the AUPR
        then scales by ``observed errors / n_errors``.

    Returns
    -------
    float
        In [0, 1]; a random ranking scores about the error rate.

    References
    ----------
    .. [1] D. Chong, J. Hong and C. D. Manning, "Detecting Label Errors by using
       Pre-Trained Language Models", EMNLP 2022.

    Examples
    --------
    >>> round(aupr_score([True, False, True, False], [0.1, 0.2, 0.3, 0.4]), 4)
    0.7917
    >>> aupr_score([1.0, float("nan"), 0.0], [0.1, 0.2, 0.3], unknown="exclude")
    1.0
    """
    truth = check_truth(is_error, scores, unknown=unknown)
    return _curve(truth, n_errors).area()


def truncated_aupr_score(is_error: ArrayLike, scores: ArrayLike, *, k: int,
                         unknown: Unknown | None = None, n_errors: int | None = None) -> float:
    """AUPR over the first ``k`` items of the ranking only.

    For data where only the top ``k`` items were verified (Chong et al. 2022, appendix E.1:
    "We can calculate the precision and recall of the 1st, 2nd, 3rd, ..., and 1,310th
    items"). The curve of :func:`precision_recall_curve` is cut at ``k`` flagged items (a
    tie group straddling ``k`` contributes its expected errors) and integrated by the
    trapezoidal rule; the area is not rescaled, so it is at most ``recall_at_k``. With
    ``k >= n_items`` it equals :func:`aupr_score`. Pass ``n_errors`` (an estimate of the
    errors in the whole set) when the truth beyond the top ``k`` is unknown.

    Examples
    --------
    >>> round(truncated_aupr_score([True, False, True, False], [0.1, 0.2, 0.3, 0.4], k=2), 4)
    0.5
    >>> truncated_aupr_score([1, 0, 1, 0], [1, 2, 3, 4], k=10) == aupr_score(
    ...     [1, 0, 1, 0], [1, 2, 3, 4])
    True
    """
    k = check_k(k)
    truth = check_truth(is_error, scores, unknown=unknown)
    return _curve(truth, n_errors, k=k).area()


def average_precision_score(is_error: ArrayLike, scores: ArrayLike, *,
                            unknown: Unknown | None = None, n_errors: int | None = None) -> float:
    """Average precision, as :func:`sklearn.metrics.average_precision_score` computes it.

    ``AP = sum_j (R_j - R_{j-1}) * P_j`` over the distinct thresholds (a step function, no
    interpolation), computed by scikit-learn on ``-scores``. With ``n_errors`` the recall
    steps shrink by ``observed errors / n_errors``, and so does AP.

    Examples
    --------
    >>> round(average_precision_score([True, False, True, False], [0.1, 0.2, 0.3, 0.4]), 4)
    0.8333
    """
    from sklearn.metrics import average_precision_score as sk_average_precision

    truth = check_truth(is_error, scores, unknown=unknown)
    total = _denominator(truth, n_errors)
    if truth.n_errors == 0:
        return 0.0
    ap = float(sk_average_precision(truth.is_error, -truth.scores))
    return ap * truth.n_errors / total


def precision_at_k(is_error: ArrayLike, scores: ArrayLike, *, k: int,
                   unknown: Unknown | None = None) -> float:
    """Share of errors among the ``k`` most suspect items.

    A tie group that straddles position ``k`` counts its errors in proportion to how many of
    its items fit (the expected value under random tie-breaking). ``k`` larger than the
    number of items is clipped to it, so the result is then the error rate.

    Examples
    --------
    >>> precision_at_k([True, False, True, False], [0.1, 0.2, 0.3, 0.4], k=2)
    0.5
    >>> precision_at_k([True, False, False, False], [0.1, 0.1, 0.3, 0.4], k=1)  # a tie
    0.5
    """
    k = check_k(k)
    truth = check_truth(is_error, scores, unknown=unknown)
    k = min(k, truth.n_items)
    return _errors_at(truth, k) / k


def recall_at_k(is_error: ArrayLike, scores: ArrayLike, *, k: int, unknown: Unknown | None = None,
                n_errors: int | None = None) -> float:
    """Share of all errors found among the ``k`` most suspect items.

    Ties are handled as in :func:`precision_at_k`; ``k`` larger than the number of items
    gives 1 (or ``observed / n_errors`` with an estimated ``n_errors``).

    Examples
    --------
    >>> recall_at_k([True, False, True, False], [0.1, 0.2, 0.3, 0.4], k=3)
    1.0
    """
    k = check_k(k)
    truth = check_truth(is_error, scores, unknown=unknown)
    total = _denominator(truth, n_errors)
    return _errors_at(truth, min(k, truth.n_items)) / total


def roc_auc_score(is_error: ArrayLike, scores: ArrayLike, *,
                  unknown: Unknown | None = None) -> float:
    """Area under the ROC curve: the chance that a random error ranks above a random clean item.

    Computed by :func:`sklearn.metrics.roc_auc_score` on ``-scores``; a tie between an error
    and a clean item counts one half. Needs at least one error and one clean item.

    Examples
    --------
    >>> roc_auc_score([True, False, True, False], [0.1, 0.2, 0.3, 0.4])
    0.75
    """
    from sklearn.metrics import roc_auc_score as sk_roc_auc

    truth = check_truth(is_error, scores, unknown=unknown)
    check_both_classes(truth, "ROC AUC is undefined:")
    return float(sk_roc_auc(truth.is_error, -truth.scores))
