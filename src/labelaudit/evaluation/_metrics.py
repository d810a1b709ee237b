"""Detection metrics of a ranking of suspect items against the truth, and the precision of a
human-verified sample of flagged items.

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

When only a sample of the flagged items was checked by people, :func:`verified_precision`
gives the share confirmed with its exact (Clopper-Pearson) interval, as Northcutt et al.
(2021) and Klie et al. (2023) report it.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from numpy.typing import ArrayLike

from labelaudit._errors import InvalidInputError, InvalidParameterError, format_rows
from labelaudit._validation import check_choice, check_fraction, check_int, shown

if TYPE_CHECKING:
    import pandas as pd

Unknown = Literal["exclude", "clean"]
_UNKNOWN_VALUES = ("exclude", "clean")


@dataclass(frozen=True)
class Truth:
    """A validated ranking problem: boolean truth and finite scores, NaN items resolved."""

    is_error: np.ndarray  # bool, (n_items,)
    scores: np.ndarray  # float, (n_items,), lower = more suspect
    n_unknown: int
    unknown: Unknown | None

    @property
    def n_items(self) -> int:
        return int(self.is_error.size)

    @property
    def n_errors(self) -> int:
        return int(self.is_error.sum())


def _truth_as_float(is_error: ArrayLike) -> np.ndarray:
    """Return ``is_error`` as floats 0/1/NaN, or raise naming the offending rows."""
    import pandas as pd
    if isinstance(is_error, (str, bytes)) or np.ndim(is_error) != 1:
        raise InvalidInputError(
            f"is_error must be a 1-d array of booleans, got {type(is_error).__name__} "
            f"with {np.ndim(is_error)} dimensions"
        )
    raw = np.asarray(is_error)
    if raw.dtype.kind in "biuf":  # fast path: bool, int or float arrays
        values = raw.astype(float)
    else:
        objects = np.asarray(is_error, dtype=object)
        values = np.full(objects.size, np.nan)
        for i, value in enumerate(objects):
            if value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value)):
                continue
            if isinstance(value, (bool, np.bool_, numbers.Real)):
                values[i] = float(value)
            else:
                values[i] = 0.5  # rejected below
    bad = ~(np.isnan(values) | (values == 0.0) | (values == 1.0))
    if bad.any():
        raise InvalidInputError(
            "is_error must hold True/False (or 1/0, NaN for unverified items); found other "
            f"values in {format_rows(np.flatnonzero(bad))}"
        )
    return values


def check_unknown(unknown: object) -> Unknown | None:
    """Validate the ``unknown`` option."""
    if unknown is None:
        return None
    return check_choice(unknown, "unknown", _UNKNOWN_VALUES)  # type: ignore[return-value]


def check_truth(is_error: ArrayLike, scores: ArrayLike | None = None, *, unknown: object = None,
                name: str = "scores") -> Truth:
    """Validate ``is_error`` (and ``scores``), resolving NaN truth by ``unknown``.

    ``is_error`` is boolean, 0/1, or float with NaN (or None) for unverified items. When any
    item is unverified, ``unknown`` must say what to do with it: ``"exclude"`` drops it from
    the ranking, ``"clean"`` counts it as a correctly labelled item.
    """
    unknown = check_unknown(unknown)
    truth = _truth_as_float(is_error)
    n = truth.size
    if scores is None:
        values = np.zeros(n)
    else:
        try:
            values = np.asarray(scores, dtype=float)
        except (TypeError, ValueError):
            raise InvalidInputError(f"{name} must be numbers (lower = more suspect)") from None
        if values.ndim != 1:
            raise InvalidInputError(f"{name} must be one-dimensional, got shape {values.shape}")
        if values.size != n:
            raise InvalidInputError(
                f"is_error has {n} items but {name} has {values.size}; they must be aligned"
            )
        bad = ~np.isfinite(values)
        if bad.any():
            raise InvalidInputError(
                f"{name} must be finite; NaN or infinite values in "
                f"{format_rows(np.flatnonzero(bad))}"
            )
    missing = np.isnan(truth)
    n_unknown = int(missing.sum())
    if n_unknown:
        if unknown is None:
            raise InvalidParameterError(
                f"is_error is NaN (unverified) for {n_unknown} of {n} items "
                f"({format_rows(np.flatnonzero(missing))}); pass unknown='exclude' to leave them "
                "out or unknown='clean' to count them as clean"
            )
        if unknown == "exclude":
            truth, values = truth[~missing], values[~missing]
        else:
            truth = np.where(missing, 0.0, truth)
    if truth.size == 0:
        raise InvalidInputError("no verified items to evaluate")
    return Truth(is_error=truth.astype(bool), scores=values, n_unknown=n_unknown, unknown=unknown)


def check_both_classes(truth: Truth, lead: str) -> None:
    """Raise unless the truth has both errors and clean items.

    The message is ``lead`` followed by what is missing, e.g. ``"ROC AUC is undefined:"``.
    """
    if truth.n_errors == 0 or truth.n_errors == truth.n_items:
        kind = "no errors" if truth.n_errors == 0 else "no clean items"
        raise InvalidInputError(f"{lead} the truth has {kind} among its {truth.n_items} items")


def check_k(k: object, *, name: str = "k") -> int:
    """Validate a positive integer cut-off (:func:`labelaudit._validation.check_int`, worded
    as the metrics have always said it)."""
    try:
        return check_int(k, name, minimum=1)
    except InvalidParameterError:
        raise InvalidParameterError(f"{name} must be a positive integer, got {shown(k)}") from None


def check_n_errors(n_errors: object, observed: int) -> int | None:
    """Validate an estimated total number of errors (None keeps the observed count)."""
    if n_errors is None:
        return None
    n_errors = check_k(n_errors, name="n_errors")
    if n_errors < observed:
        raise InvalidParameterError(
            f"n_errors ({n_errors}) is smaller than the {observed} errors marked in is_error"
        )
    return n_errors


def rank_from_ids(ranked_ids: Sequence[object], all_ids: Sequence[object]) -> np.ndarray:
    """Turn a ranked list of ids into scores aligned with ``all_ids`` (lower = more suspect).

    The i-th id of ``ranked_ids`` gets score ``i``; every id of ``all_ids`` that is not
    ranked gets ``len(ranked_ids)``, so the unranked items tie after all ranked ones (and
    the metrics treat them as one tie group, see :func:`precision_at_k`).

    Parameters
    ----------
    ranked_ids : sequence of shape (n_ranked,)
        Ids in order of suspicion, most suspect first (e.g. a detector's flagged list).
    all_ids : sequence of shape (n_items,)
        Every item's id, in the order of ``is_error``.

    Returns
    -------
    scores : ndarray of shape (n_items,)

    Examples
    --------
    >>> rank_from_ids(["c", "a"], ["a", "b", "c", "d"]).tolist()
    [1.0, 2.0, 0.0, 2.0]
    """
    all_list = list(all_ids)
    ranked_list = list(ranked_ids)
    position: dict[object, int] = {}
    duplicated = []
    for i, item in enumerate(all_list):
        if item in position:
            duplicated.append(item)
        position[item] = i
    if duplicated:
        raise InvalidInputError(f"all_ids has duplicate ids: {format_rows(duplicated)}")
    seen: set[object] = set()
    repeated = [r for r in ranked_list if r in seen or seen.add(r)]  # type: ignore[func-returns-value]
    if repeated:
        raise InvalidInputError(f"ranked_ids lists some ids twice: {format_rows(repeated)}")
    unknown_ids = [r for r in ranked_list if r not in position]
    if unknown_ids:
        raise InvalidInputError(
            f"ranked_ids has ids that are not in all_ids: {format_rows(unknown_ids)}"
        )
    scores = np.full(len(all_list), float(len(ranked_list)))
    for rank, item in enumerate(ranked_list):
        scores[position[item]] = float(rank)
    return scores


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
    return PrecisionRecallCurve(precision=np.r_[1.0, errors / flagged],
                                recall=np.r_[0.0, errors / total],
                                thresholds=np.r_[-np.inf, thresholds],
                                n_flagged=np.r_[0, flagged].astype(np.int64),
                                n_items=truth.n_items, n_errors=truth.n_errors,
                                n_errors_total=total, unknown=truth.unknown)


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


@dataclass(frozen=True)
class HeadlineMetrics:
    """The headline metrics of one ranking, shared by :class:`DetectionReport` and the
    per-level results of token evaluation (see :class:`DetectionReport` for each field)."""

    n_items: int
    n_errors: int
    aupr: float
    average_precision: float
    precision_at_err: float
    recall_at_err: float
    recall_at_2err: float
    roc_auc: float

    def headline(self) -> dict[str, Any]:
        """The headline fields only, by name (to build another result from this one)."""
        return {f.name: getattr(self, f.name) for f in fields(HeadlineMetrics)}


@dataclass(frozen=True)
class DetectionReport(HeadlineMetrics):
    """Headline metrics of a label-error ranking against the truth (Chong et al. 2022, table 3).

    Attributes
    ----------
    n_items : int
        Items evaluated (after excluding unverified ones when ``unknown="exclude"``).
    n_errors : int
        Errors marked in the truth among them.
    aupr : float
        Trapezoidal area under the precision-recall curve (:func:`aupr_score`).
    average_precision : float
        scikit-learn's average precision (:func:`average_precision_score`).
    precision_at_err, recall_at_err : float
        Precision and recall of the top ``k_err`` items, ``k_err`` = the number of errors
        (P,R@Err%). Equal by construction unless ``k_err`` exceeds ``n_items``.
    recall_at_2err : float
        Recall of the top ``2 * k_err`` items (R@2·Err%).
    roc_auc : float
        Area under the ROC curve (:func:`roc_auc_score`), on the observed truth.
    unknown : {"exclude", "clean"} or None
        How unverified items were treated (None: there were none and no choice was made).
    n_unknown : int
        Unverified (NaN) items in the truth before ``unknown`` was applied.
    k_err : int
        The cut-off of the @Err metrics and the recall denominator: ``n_errors``, or the
        estimate passed as ``n_errors=`` to :func:`detection_report`.
    """

    unknown: Unknown | None
    n_unknown: int = 0
    k_err: int = 0

    def to_dict(self) -> dict[str, float | int | str | None]:
        """The fields as a plain, JSON-ready dict."""
        return asdict(self)

    def to_frame(self) -> pd.DataFrame:
        """The fields as a one-row DataFrame."""
        import pandas as pd
        return pd.DataFrame([self.to_dict()])


def detection_report(is_error: ArrayLike, scores: ArrayLike, *, unknown: Unknown | None = None,
                     n_errors: int | None = None) -> DetectionReport:
    """Compute AUPR, average precision, P,R@Err%, R@2·Err% and ROC AUC of one ranking.

    Chong et al. (2022, section 7): "estimating the number of dataset errors and checking
    this many items" gives P,R@Err%; "checking twice this number of items" gives R@2·Err%.
    Ties and ``k`` beyond the number of items follow :func:`precision_at_k`.

    Parameters
    ----------
    is_error, scores, unknown
        As in :func:`labelaudit.evaluation.precision_recall_curve`: the truth (NaN for
        unverified items), the scores (lower = more suspect), what to do with unverified items.
    n_errors : int, optional
        Estimated number of errors in the whole set (e.g. ``round(0.05 * n_items)``) when
        the truth is partial; used as ``k_err`` and as the recall denominator.

    Returns
    -------
    DetectionReport

    Raises
    ------
    InvalidInputError
        When the (resolved) truth has no errors or no clean items.

    Examples
    --------
    >>> report = detection_report([True, False, True, False, False, False],
    ...                           [0.1, 0.2, 0.3, 0.4, 0.5, 0.6])
    >>> report.precision_at_err, report.recall_at_2err, round(report.aupr, 4)
    (0.5, 1.0, 0.7917)
    """
    truth = check_truth(is_error, scores, unknown=unknown)
    check_both_classes(truth, "detection metrics are undefined:")
    k_err = _denominator(truth, n_errors)
    n = truth.n_items
    found = _errors_at(truth, min(k_err, n))
    found_2 = _errors_at(truth, min(2 * k_err, n))
    return DetectionReport(
        n_items=n,
        n_errors=truth.n_errors,
        aupr=_curve(truth, n_errors).area(),
        average_precision=average_precision_score(
            truth.is_error, truth.scores, n_errors=n_errors
        ),
        precision_at_err=found / min(k_err, n),
        recall_at_err=found / k_err,
        recall_at_2err=found_2 / k_err,
        roc_auc=roc_auc_score(truth.is_error, truth.scores),
        unknown=truth.unknown,
        n_unknown=truth.n_unknown,
        k_err=k_err,
    )


def loss_wasserstein_distance(losses: ArrayLike, is_error: ArrayLike, *,
                              unknown: Unknown | None = None) -> float:
    """Wasserstein (earth mover's) distance between the losses of erroneous and clean items.

    Chong et al. (2022, section 7 and table 5) compare kinds of label noise by "the
    Wasserstein distances between noisy and clean loss distributions": the further apart
    the two distributions, the easier a loss ranking separates the errors. For two
    one-dimensional empirical distributions with CDFs ``U`` and ``V``,

    ``W1(U, V) = integral |U(x) - V(x)| dx``,

    computed by :func:`scipy.stats.wasserstein_distance`. It is in the units of the loss.

    Parameters
    ----------
    losses : array-like of shape (n_items,)
        Per-item losses (e.g. out-of-sample cross-entropy of the given label), any sign.
    is_error : array-like of shape (n_items,)
        True where the given label is wrong; float with NaN for unverified items.
    unknown : {"exclude", "clean"}, optional
        Required when ``is_error`` has NaN.

    Returns
    -------
    float
        ``>= 0``; 0 when both groups have the same loss distribution.

    References
    ----------
    Chong, Hong & Manning (2022), Detecting Label Errors by using Pre-Trained Language
    Models, EMNLP, section 7 and table 5.

    Examples
    --------
    >>> loss_wasserstein_distance([3.0, 0.5, 2.0, 0.1], [True, False, True, False])
    2.2
    """
    from scipy.stats import wasserstein_distance

    truth = check_truth(is_error, losses, unknown=unknown, name="losses")
    check_both_classes(
        truth, "the Wasserstein distance needs both erroneous and clean items;"
    )
    losses_ = truth.scores
    return float(wasserstein_distance(losses_[truth.is_error], losses_[~truth.is_error]))


@dataclass(frozen=True)
class VerifiedPrecision:
    """Precision of a verified sample and the number of errors it implies.

    Attributes
    ----------
    precision : float
        ``n_confirmed / n_verified``.
    ci_low, ci_high : float
        Clopper-Pearson interval of the precision at level ``confidence``.
    n_confirmed, n_verified : int
        Items confirmed as errors, and items verified.
    confidence : float
        Confidence level of the interval.
    estimated_errors, estimated_errors_low, estimated_errors_high : float or None
        ``precision``, ``ci_low`` and ``ci_high`` times ``n_flagged``; None when
        ``n_flagged`` was not given.
    """

    precision: float
    ci_low: float
    ci_high: float
    n_confirmed: int
    n_verified: int
    confidence: float
    estimated_errors: float | None = None
    estimated_errors_low: float | None = None
    estimated_errors_high: float | None = None

    def to_dict(self) -> dict[str, float | int | None]:
        """Return the fields as a plain dict (JSON-ready)."""
        return asdict(self)


def _check_count(value: object, name: str) -> int:
    """A count >= 0 (:func:`labelaudit._validation.check_int`, in the wording tests assert)."""
    try:
        number = check_int(value, name)
    except InvalidParameterError:
        raise InvalidParameterError(f"{name} must be an integer, got {shown(value)}") from None
    if number < 0:
        raise InvalidParameterError(f"{name} must be >= 0, got {number}")
    return number


def verified_precision(n_confirmed: int, n_verified: int, *, confidence: float = 0.95,
                       n_flagged: int | None = None) -> VerifiedPrecision:
    """Precision of a verified sample with a Clopper-Pearson confidence interval.

    Parameters
    ----------
    n_confirmed : int
        Number of verified items that people confirmed as label errors.
    n_verified : int
        Number of flagged items that were verified (``n_confirmed <= n_verified``).
    confidence : float, default=0.95
        Confidence level of the interval, in (0, 1).
    n_flagged : int, optional
        Size of the whole flagged set the sample was drawn from. When given, the
        precision and its interval are scaled by it to estimate how many errors the
        flagged set holds.

    Returns
    -------
    VerifiedPrecision

    Notes
    -----
    The interval is the exact binomial (Clopper-Pearson) interval,
    ``scipy.stats.binomtest(n_confirmed, n_verified).proportion_ci(confidence, method="exact")``:
    ``[B(a/2; k, n-k+1), B(1-a/2; k+1, n-k)]`` with ``B`` the beta quantile and
    ``a = 1 - confidence``. The estimate of errors in the flagged set,
    ``precision * n_flagged``, assumes the verified items are a uniform random sample
    of the flagged ones.

    References
    ----------
    .. [1] C. J. Clopper and E. S. Pearson, "The use of confidence or fiducial limits
       illustrated in the case of the binomial", Biometrika 26(4), 1934.
    .. [2] C. G. Northcutt, A. Athalye and J. Mueller, "Pervasive Label Errors in Test Sets
       Destabilize Machine Learning Benchmarks", NeurIPS Datasets and Benchmarks, 2021.

    Examples
    --------
    >>> vp = verified_precision(45, 50, n_flagged=400)
    >>> round(vp.precision, 2), round(vp.ci_low, 3), round(vp.ci_high, 3)
    (0.9, 0.782, 0.967)
    >>> round(vp.estimated_errors), round(vp.estimated_errors_low), round(vp.estimated_errors_high)
    (360, 313, 387)
    >>> verified_precision(3, 10).estimated_errors is None
    True
    """
    n_confirmed = _check_count(n_confirmed, "n_confirmed")
    n_verified = _check_count(n_verified, "n_verified")
    if n_verified == 0:
        raise InvalidParameterError(
            "n_verified is 0: verify at least one flagged item to estimate precision"
        )
    if n_confirmed > n_verified:
        raise InvalidParameterError(
            f"n_confirmed ({n_confirmed}) cannot exceed n_verified ({n_verified})"
        )
    confidence = check_fraction(confidence, "confidence", low_open=True, high_open=True)
    if n_flagged is not None:
        n_flagged = _check_count(n_flagged, "n_flagged")
        if n_flagged < n_verified:
            raise InvalidParameterError(
                f"n_flagged ({n_flagged}) cannot be smaller than n_verified ({n_verified}): "
                "the verified items are a sample of the flagged ones"
            )

    from scipy.stats import binomtest

    ci = binomtest(n_confirmed, n_verified).proportion_ci(
        confidence_level=confidence, method="exact"
    )
    precision = n_confirmed / n_verified
    low, high = float(ci.low), float(ci.high)
    est = est_low = est_high = None
    if n_flagged is not None:
        est, est_low, est_high = precision * n_flagged, low * n_flagged, high * n_flagged
    return VerifiedPrecision(precision=precision, ci_low=low, ci_high=high,
                             n_confirmed=n_confirmed, n_verified=n_verified,
                             confidence=confidence, estimated_errors=est,
                             estimated_errors_low=est_low, estimated_errors_high=est_high)
