"""Measure a scan's rankings against known label errors: the library behind ``evaluate``."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from labelaudit._errors import InvalidInputError, InvalidParameterError, LabelAuditWarning
from labelaudit._validation import check_int, check_number
from labelaudit.evaluation._detection_report import DetectionReport, detection_report
from labelaudit.evaluation._join import TruthFrom, join_truth
from labelaudit.evaluation._ranking import (
    PrecisionRecallCurve,
    precision_at_k,
    precision_recall_curve,
    recall_at_k,
)
from labelaudit.evaluation._truth import Unknown, check_k, check_unknown
from labelaudit.io import ResultFiles

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["CutoffWarning", "EvaluationResult", "evaluate"]


class CutoffWarning(LabelAuditWarning):
    """An ``at_k`` cut-off beyond the items evaluated was clipped to them."""


@dataclass(frozen=True)
class EvaluationResult(ResultFiles):
    """Detection metrics of every ranking of a scan output against the truth.

    Attributes
    ----------
    ids : list of shape (n_items,)
        The items evaluated, as normalised ids (text).
    is_error : ndarray of float, shape (n_items,)
        The truth: 1 wrong label, 0 right, NaN unverified.
    scores : dict of str to ndarray of shape (n_items,)
        Each ranking (method name -> scores, lower = more suspect).
    reports : dict of str to DetectionReport
        The headline metrics of each ranking.
    precision_at_k, recall_at_k : dict of str to dict of int to float
        Precision and recall of each ranking at the cut-offs ``at_k``.
    at_k : tuple of int
    truth_from : {"is_error", "true_label"}
        Which kind of truth column was read.
    unknown : {"exclude", "clean"} or None
        How unverified items were treated.
    n_unverified : int
        Items the truth leaves blank (or, with ``unknown``, does not list).
    n_missing_truth : int
        Ids of the scan output that the truth does not list.
    n_errors_estimate : int or None
        The estimated number of errors in the whole set (``error_rate`` or ``n_errors``).
    issues_source, truth_source : str or None
        The files read (None for DataFrames).
    classes : DataFrame or None
        For a multi-label scan output against true label sets: per class, the items whose
        membership the truth changes, those the scan names as missing or extra, the hits,
        precision and recall (:func:`labelaudit.evaluation.class_metrics`).
    """

    ids: list[object]
    is_error: np.ndarray
    scores: dict[str, np.ndarray]
    reports: dict[str, DetectionReport]
    precision_at_k: dict[str, dict[int, float]]
    recall_at_k: dict[str, dict[int, float]]
    at_k: tuple[int, ...]
    truth_from: TruthFrom
    unknown: Unknown | None
    n_unverified: int
    n_missing_truth: int
    n_errors_estimate: int | None
    issues_source: str | None = None
    truth_source: str | None = None
    classes: pd.DataFrame | None = None

    @property
    def n_errors(self) -> int:
        """Errors the truth marks."""
        return int(np.nansum(self.is_error))

    def to_frame(self) -> pd.DataFrame:
        """One row per ranking: ``method``, the :class:`DetectionReport` fields, then
        ``precision_at_<k>, recall_at_<k>`` for each cut-off."""
        import pandas as pd
        rows = []
        for method, report in self.reports.items():
            row: dict[str, object] = {"method": method, **report.to_dict()}
            for k in self.at_k:
                row[f"precision_at_{k}"] = self.precision_at_k[method][k]
                row[f"recall_at_{k}"] = self.recall_at_k[method][k]
            rows.append(row)
        return pd.DataFrame(rows)

    def to_table(self) -> pd.DataFrame:
        """:meth:`to_frame` for reading: short column names (``ap``, ``p@err``, ``r@2err``,
        ``p@<k>``, ``unverified``...), ``-`` for no ``unknown`` setting, four decimals."""
        return self.to_frame().rename(columns={
            "average_precision": "ap", "precision_at_err": "p@err", "recall_at_err": "r@err",
            "recall_at_2err": "r@2err", "n_unknown": "unverified",
            **{f"precision_at_{k}": f"p@{k}" for k in self.at_k},
            **{f"recall_at_{k}": f"r@{k}" for k in self.at_k},
        }).fillna({"unknown": "-"}).round(4)

    def to_dict(self) -> dict:
        """JSON-ready: the sources, how the truth was read, and the metrics (NaN as None)."""
        return {
            "issues": self.issues_source, "truth": self.truth_source,
            "truth_from": self.truth_from, "unknown": self.unknown,
            "n_unverified": self.n_unverified,
            "n_scan_ids_missing_from_truth": self.n_missing_truth,
            "n_errors_estimate": self.n_errors_estimate,
            "metrics": [{k: (None if isinstance(v, float) and math.isnan(v) else v)
                         for k, v in row.items()}
                        for row in self.to_frame().to_dict(orient="records")],
        } | ({} if self.classes is None else {"classes": [
            {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items()}
            for row in self.classes.to_dict(orient="records")]})

    def summary(self) -> str:
        """One line: items, known errors, the estimate and unverified items, methods."""
        note = f", {self.n_unverified} unverified ({self.unknown})" if self.n_unverified else ""
        estimate = (f", {self.n_errors_estimate} estimated in all"
                    if self.n_errors_estimate is not None else "")
        n = len(self.reports)
        line = (f"evaluated {len(self.ids)} items: {self.n_errors} known errors{estimate}{note}; "
                f"{n} method{'s' if n != 1 else ''}")
        if self.classes is None:
            return line
        return (line + "\nper class: items whose membership the truth changes, those the scan "
                "names missing or extra, and the hits\n"
                + self.classes.round(4).to_string(index=False))

    def curves(self) -> dict[str, PrecisionRecallCurve]:
        """The precision-recall curve of each ranking."""
        return {method: precision_recall_curve(self.is_error, scores, unknown=self.unknown,
                                               n_errors=self.n_errors_estimate)
                for method, scores in self.scores.items()}

    def plot(self, path: str | Path, *, title: str | None = None) -> Path:
        """Save the precision-recall curves as PNG or SVG (see
        :func:`labelaudit.evaluation.plot_precision_recall`)."""
        from labelaudit.evaluation._plot import plot_precision_recall

        if title is None and self.issues_source and self.truth_source:
            title = f"{self.issues_source} vs {self.truth_source}"
        return plot_precision_recall(self.curves(), path, title=title)


def _estimate(error_rate: float | None, n_errors: int | None, n_items: int, observed: int,
              where: str) -> int | None:
    """The estimated number of errors, checked against the items and the truth."""
    if error_rate is not None and n_errors is not None:
        raise InvalidParameterError("give error_rate or n_errors, not both",
                                    param=("error_rate", "n_errors"))
    if n_errors is not None:
        n_errors = check_int(n_errors, "n_errors", minimum=1)
        if n_errors > n_items:
            raise InvalidParameterError(
                f"n_errors={n_errors} is more than the {n_items} items in {where}: there "
                f"cannot be more errors than items; give at most {n_items} (or error_rate=, "
                "a share of the items)", param=("n_errors", "error_rate"))
    if error_rate is not None:
        rate = check_number(error_rate, "error_rate", low=0.0, high=1.0, low_open=True)
        n_errors = max(1, round(rate * n_items))
    if n_errors is not None and n_errors < observed:
        raise InvalidParameterError(
            f"the estimated number of errors ({n_errors}) is smaller than the {observed} "
            "errors the truth marks; raise error_rate=/n_errors= or drop it")
    return n_errors


def warn_clipped(ks: Sequence[int], n_evaluated: int, *, name: str = "at_k",
                 items: str = "items", stacklevel: int = 3) -> None:
    """Warn (:class:`CutoffWarning`) naming the cut-offs ``ks`` (the option ``name``)
    beyond the ``n_evaluated`` ``items`` ranked, where p@k and r@k are those of them all."""
    beyond = [k for k in ks if k > n_evaluated]
    if beyond:
        warnings.warn(CutoffWarning(
            f"{name}={', '.join(map(str, beyond))}: more than the {n_evaluated} {items} "
            f"evaluated, so p@k and r@k there are those of all {n_evaluated} {items} (the "
            "cut-off is clipped)"), stacklevel=stacklevel + 1)


def _cutoffs(at_k: int | Sequence[int], n_evaluated: int) -> tuple[int, ...]:
    """The distinct cut-offs; a warning names those beyond the items evaluated."""
    ks = tuple(dict.fromkeys(check_k(k, name="at_k") for k in
                             ((at_k,) if isinstance(at_k, (int, np.integer)) else at_k)))
    warn_clipped(ks, n_evaluated)
    return ks


def evaluate(
    issues: pd.DataFrame | str | Path,
    truth: pd.DataFrame | str | Path,
    *,
    id: str = "id",
    is_error: str | None = None,
    true_label: str | None = None,
    label: str = "label",
    scores: str | Sequence[str] | None = None,
    higher_is_suspect: str | Sequence[str] | None = None,
    label_sep: str | None = None,
    unknown: Unknown | None = None,
    partial_ranking: bool = False,
    error_rate: float | None = None,
    n_errors: int | None = None,
    at_k: int | Sequence[int] = (),
) -> EvaluationResult:
    """Measure how well each ranking of a scan output finds the errors a truth table marks.

    The two tables are joined by ``id``; every score column (``score_<method>``, or
    ``rank``) is one ranking, lower = more suspect. For each, :func:`detection_report`
    gives AUPR, average precision, P,R@Err%, R@2·Err% and ROC AUC (Chong et al. 2022),
    and :func:`precision_at_k` / :func:`recall_at_k` the chosen cut-offs.

    Parameters
    ----------
    issues : DataFrame or path
        The scan output (any format :func:`labelaudit.io.read_table` reads).
    truth : DataFrame or path
        The known errors, keyed by ``id``.
    id : str, default "id"
        The id column of both tables.
    is_error : str, optional
        Truth column that is true for wrong labels, blank for unverified items (default:
        ``is_error``, else ``true_label`` compared with ``label``).
    true_label : str, optional
        Truth column with the correct label, compared with the scan output's ``label``.
    label : str, default "label"
        Given-label column of the scan output (and, with ``partial_ranking``, of the truth).
    scores : str or sequence of str, optional
        Score columns (comma-separated text or a list; default every ``score_*`` column).
        Lower = more suspect, but for labelaudit's ``loss`` (higher = more suspect) and the
        columns named in ``higher_is_suspect``; a named column labelaudit does not write
        is read as lower = more suspect, with a :class:`ScoreDirectionWarning`.
    higher_is_suspect : str or sequence of str, optional
        Score columns whose higher values are more suspect (comma-separated text or a list).
    label_sep : str, optional
        The labels are label sets (multi-label), written as text joined by ``label_sep``.
        Without it, label sets are recognised (a multi-label scan's output, a column of
        lists) and text is split at ``|``, as the scan writes it. Sets are compared as
        sets, in any order; a blank cell of text is the empty set (an unverified item is
        left out of the truth, or has no value in a column of lists).
    unknown : {"exclude", "clean"}, optional
        Unverified items (blank truth, or scan ids the truth does not list): leave them
        out, or count them as clean. Required when there are any.
    partial_ranking : bool, default False
        The scan output lists only some items (a flagged list): truth items missing from it
        rank after every listed item, tied.
    error_rate : float in (0, 1], optional
        Estimated share of errors in the whole set, when only part was verified: sets
        ``k_err`` of the @Err metrics and the recall denominator.
    n_errors : int, optional
        Estimated number of errors instead of ``error_rate``; at most the number of items.
    at_k : int or sequence of int, default ()
        Cut-offs for precision and recall at ``k``; one beyond the items evaluated is clipped
        to them, with a :class:`CutoffWarning`.

    Returns
    -------
    EvaluationResult

    References
    ----------
    D. Chong, J. Hong and C. D. Manning, "Detecting Label Errors by using Pre-Trained
    Language Models", EMNLP 2022, section 7 and appendix E.1.

    Examples
    --------
    >>> issues = pd.DataFrame({"id": [1, 2, 3, 4], "score_loss": [0.1, 0.2, 0.3, 0.4]})
    >>> truth = pd.DataFrame({"id": [1, 2, 3, 4], "is_error": [True, False, True, False]})
    >>> result = evaluate(issues, truth, at_k=[2])
    >>> result.to_frame()[["method", "aupr", "precision_at_2"]].round(4)
      method    aupr  precision_at_2
    0   loss  0.7917             0.5
    >>> result.summary()
    'evaluated 4 items: 2 known errors; 1 method'
    """
    import pandas as pd
    unknown = check_unknown(unknown)
    joined = join_truth(issues, truth, id=id, is_error=is_error, true_label=true_label,
                        label=label, scores=scores, higher_is_suspect=higher_is_suspect,
                        label_sep=label_sep, unknown=unknown, partial_ranking=partial_ranking)
    n_unverified = int(np.isnan(joined.is_error).sum())
    n_items = len(joined.ids)
    if n_unverified and unknown is None:
        raise InvalidInputError(
            f"the truth leaves {n_unverified} of {n_items} items unverified (blank); pass "
            "unknown='exclude' to leave them out or unknown='clean' to count them as clean")
    sources = [None if isinstance(x, pd.DataFrame) else str(x) for x in (issues, truth)]
    where = " and ".join(s or name for s, name in zip(sources, ("issues", "truth"), strict=True))
    estimate = _estimate(error_rate, n_errors, n_items, int(np.nansum(joined.is_error)), where)
    ks = _cutoffs(at_k, n_items - (n_unverified if unknown == "exclude" else 0))
    reports, precision, recall = {}, {}, {}
    for method, values in joined.scores.items():
        reports[method] = detection_report(joined.is_error, values, unknown=unknown,
                                           n_errors=estimate)
        precision[method] = {k: precision_at_k(joined.is_error, values, k=k, unknown=unknown)
                             for k in ks}
        recall[method] = {k: recall_at_k(joined.is_error, values, k=k, unknown=unknown,
                                         n_errors=estimate) for k in ks}
    return EvaluationResult(
        ids=joined.ids, is_error=joined.is_error, scores=joined.scores, reports=reports,
        precision_at_k=precision, recall_at_k=recall, at_k=ks, truth_from=joined.truth_from,
        unknown=unknown, n_unverified=n_unverified, n_missing_truth=joined.n_missing_truth,
        n_errors_estimate=estimate, issues_source=sources[0], truth_source=sources[1],
        classes=joined.classes)
