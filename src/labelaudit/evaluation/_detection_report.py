"""All the headline detection metrics of one ranking in one result."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import TYPE_CHECKING, Any

from numpy.typing import ArrayLike

from labelaudit.evaluation._ranking import (
    _curve,
    _denominator,
    _errors_at,
    average_precision_score,
    roc_auc_score,
)
from labelaudit.evaluation._truth import Unknown, check_both_classes, check_truth

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["DetectionReport", "HeadlineMetrics", "detection_report"]


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
