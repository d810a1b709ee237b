"""Detection metrics of a ranking against the truth, and the precision of a verified sample
(:func:`verified_precision`, Clopper-Pearson, as Northcutt et al. 2021 and Klie et al. 2023).

- ``scores``: **lower means more suspect**; negate a loss first.
- **Ties** are never split by row order: curves have one point per distinct score, and a
  cut-off ``k`` inside a tie group counts its expected errors under random tie-breaking.
- **Unverified items** (NaN in ``is_error``) need ``unknown="exclude"`` or ``"clean"``.
- **Partial truth:** ``n_errors`` replaces the observed errors as the recall denominator,
  e.g. ``0.05 * n_items`` when only the top was verified (Chong et al. 2022, appendix E.1).
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from numpy.typing import ArrayLike

from labelaudit._errors import InvalidInputError, InvalidParameterError, format_rows
from labelaudit._html_table import result_html
from labelaudit._validation import check_choice, check_fraction, check_int

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
    """Validate ``is_error`` and ``scores``; NaN items go as ``unknown`` says, or are refused."""
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
    """Raise unless the truth has both errors and clean items; the message starts with ``lead``."""
    if truth.n_errors == 0 or truth.n_errors == truth.n_items:
        kind = "no errors" if truth.n_errors == 0 else "no clean items"
        raise InvalidInputError(f"{lead} the truth has {kind} among its {truth.n_items} items")


def rank_from_ids(ranked_ids: Sequence[object], all_ids: Sequence[object]) -> np.ndarray:
    """Scores aligned with ``all_ids`` from ids ranked most suspect first (a flagged list):
    the i-th ranked id scores ``i``, every unranked id ``len(ranked_ids)``, one tie group.

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
    """Precision and recall at every threshold: point ``j`` flags the ``n_flagged[j]`` items
    scoring ``<= thresholds[j]``, after the anchor (0, 1, ``-inf``); ``n_errors_total`` is
    the recall denominator (the estimate ``n_errors=``), ``n_errors`` the observed."""

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

    def _repr_html_(self) -> str:
        """The curve's points in a notebook."""
        return result_html(self, header=f"{self.n_errors:,} errors among {self.n_items:,} items")

    def area(self) -> float:
        """Area under the curve by the trapezoidal rule (what :func:`aupr_score` returns)."""
        x, y = self.recall, self.precision
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
    """The recall denominator: the estimate ``n_errors`` (checked), else the observed errors."""
    if n_errors is not None:
        n_errors = check_int(n_errors, "n_errors", minimum=1)
        if n_errors < truth.n_errors:
            raise InvalidParameterError(f"n_errors ({n_errors}) is smaller than the "
                                        f"{truth.n_errors} errors marked in is_error")
        return n_errors
    if truth.n_errors == 0:
        raise InvalidInputError(
            f"recall is undefined: the truth marks no errors among its {truth.n_items} items"
            + (" left after excluding unverified ones" if truth.unknown == "exclude" else ""))
    return truth.n_errors


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
    is_error, scores : array-like of shape (n_items,)
        True where the given label is wrong (NaN: unverified); scores, lower = more suspect.
    unknown : {"exclude", "clean"}, optional
        Required when ``is_error`` has NaN: drop those items, or count them as clean.
    n_errors
        Total number of errors, the recall denominator when the truth is partial.

    Returns
    -------
    PrecisionRecallCurve
        One point per distinct score (ties enter together), after the anchor (0, 1).

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

    which is ``sklearn.metrics.auc(recall, precision)`` on the curve of ``-scores``; linear
    interpolation makes it slightly optimistic next to :func:`average_precision_score`.

    Parameters
    ----------
    is_error, scores, unknown, n_errors
        As in :func:`precision_recall_curve`; with ``n_errors`` the AUPR scales by
        ``observed errors / n_errors``.

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
    items"). The curve of :func:`precision_recall_curve` is cut at ``k`` (a tie group
    straddling ``k`` gives its expected errors) and integrated by the trapezoidal rule, not
    rescaled (at most ``recall_at_k``); with ``k >= n_items`` it is :func:`aupr_score`.
    Pass ``n_errors`` when the truth beyond the top ``k`` is unknown.

    Examples
    --------
    >>> round(truncated_aupr_score([True, False, True, False], [0.1, 0.2, 0.3, 0.4], k=2), 4)
    0.5
    >>> truncated_aupr_score([1, 0, 1, 0], [1, 2, 3, 4], k=10) == aupr_score(
    ...     [1, 0, 1, 0], [1, 2, 3, 4])
    True
    """
    k = check_int(k, "k", minimum=1)
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
    k = check_int(k, "k", minimum=1)
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
    k = check_int(k, "k", minimum=1)
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
    """The headline metrics of one ranking (:class:`DetectionReport`, token evaluation's levels)."""

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

    ``n_items`` and ``n_errors`` are counted after ``unknown`` (``n_unknown`` unverified);
    ``aupr``, ``average_precision``, ``roc_auc`` as their ``*_score`` functions;
    ``precision_at_err``, ``recall_at_err`` (P,R@Err%) of the top ``k_err`` items (the errors,
    or the estimate ``n_errors=``), ``recall_at_2err`` of the top ``2 * k_err``.
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

    def _repr_html_(self) -> str:
        """The metrics in a notebook, as one row."""
        return result_html(self)


def detection_report(is_error: ArrayLike, scores: ArrayLike, *, unknown: Unknown | None = None,
                     n_errors: int | None = None) -> DetectionReport:
    """Compute AUPR, average precision, P,R@Err%, R@2·Err% and ROC AUC of one ranking.

    Chong et al. (2022, section 7): "estimating the number of dataset errors and checking
    this many items" gives P,R@Err%; "checking twice this number of items" gives R@2·Err%.
    Ties and ``k`` beyond the items follow :func:`precision_at_k`. Raises
    :class:`InvalidInputError` when the resolved truth has no errors or no clean items.

    Parameters
    ----------
    is_error, scores, unknown
        As in :func:`precision_recall_curve`.
    n_errors
        Estimated errors in the whole set (e.g. ``round(0.05 * n_items)``) when the truth
        is partial: ``k_err`` and the recall denominator.

    Returns
    -------
    DetectionReport

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
    """Wasserstein distance ``W1(U, V) = integral |U(x) - V(x)| dx`` between the loss
    distributions of erroneous and clean items, in the units of the loss (scipy's
    ``wasserstein_distance``): Chong et al. (2022, section 7, table 5) compare kinds of noise
    by "the Wasserstein distances between noisy and clean loss distributions".

    Examples
    --------
    >>> loss_wasserstein_distance([3.0, 0.5, 2.0, 0.1], [True, False, True, False])
    2.2
    """
    from scipy.stats import wasserstein_distance

    truth = check_truth(is_error, losses, unknown=unknown, name="losses")
    check_both_classes(truth, "the Wasserstein distance needs both erroneous and clean items;")
    return float(wasserstein_distance(truth.scores[truth.is_error], truth.scores[~truth.is_error]))


@dataclass(frozen=True)
class VerifiedPrecision:
    """Precision ``n_confirmed / n_verified`` with its Clopper-Pearson interval ``[ci_low,
    ci_high]``; the ``estimated_errors*`` are those times ``n_flagged`` (or None)."""

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


def verified_precision(n_confirmed: int, n_verified: int, *, confidence: float = 0.95,
                       n_flagged: int | None = None) -> VerifiedPrecision:
    """Precision of a verified sample with a Clopper-Pearson confidence interval.

    Parameters
    ----------
    n_confirmed, n_verified
        Verified items confirmed as label errors, and flagged items verified (at least
        ``n_confirmed``).
    confidence
        Confidence level of the interval, in (0, 1).
    n_flagged
        Size of the flagged set the sample was drawn from: scales the precision and its
        interval to an estimate of the errors it holds.

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
    n_confirmed = check_int(n_confirmed, "n_confirmed", minimum=0)
    n_verified = check_int(n_verified, "n_verified", minimum=0)
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
        n_flagged = check_int(n_flagged, "n_flagged", minimum=0)
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
