"""What label errors in a test set do to a benchmark (Northcutt et al. 2021, section 6).

After a verification round, the test set D splits into benign items B (not flagged, or
flagged and the given label confirmed), correctable items C (reviewers agreed on another
label) and unknown items U (no agreement); P = D \\ U = B ∪ C is the pruned set. The noise
prevalence is N = |C| / |P|. Removing a share x of B gives the expected accuracy

    A(x; M) = (A_C(M)|C| + (1 - x) A_B(M)|B|) / (|C| + (1 - x)|B|)

at noise prevalence N(x) = |C| / (|C| + (1 - x)|B|): A(0; M) is the accuracy on P and
A(1; M) the accuracy on C.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from labelaudit._errors import InvalidInputError, InvalidParameterError, LabelAuditWarning
from labelaudit.impact._impact_result import ImpactCurve, ImpactResult, RankFlip
from labelaudit.impact._impact_sets import (
    BENIGN,
    CORRECTABLE,
    UNKNOWN,
    PendingVerdictWarning,
    align_predictions,
    impact_sets,
)
from labelaudit.io import read_table

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["EmptyCorrectableWarning", "ItemScores", "accuracy_scores", "flip_point", "impact",
           "impact_curve", "measure_impact"]


class EmptyCorrectableWarning(LabelAuditWarning):
    """No item is correctable: N = 0 and no ranking can flip."""


def _curve(totals: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Score(x; M) per model (rows) at each share ``x`` of B removed (columns) from the
    per-model totals ``(num_C, den_C, num_B, den_B)`` (shape ``(4, n_models)``): the score
    is (num_C + (1 - x) num_B) / (den_C + (1 - x) den_B); NaN where the denominator is 0."""
    kept = 1.0 - np.asarray(x, dtype=float)
    num_c, den_c, num_b, den_b = (np.nan_to_num(np.asarray(v, dtype=float))[:, None]
                                  for v in totals)
    numerator = num_c + num_b * kept[None, :]
    denominator = den_c + den_b * kept[None, :]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, numerator / np.where(denominator > 0, denominator, 1),
                        np.nan)


def _accuracy_totals(acc_C: np.ndarray, acc_B: np.ndarray, n_correctable: int,  # noqa: N803
                     n_benign: int) -> np.ndarray:
    """Accuracies as totals: hits and item counts on C and on B."""
    acc_c = np.nan_to_num(np.asarray(acc_C, dtype=float))
    acc_b = np.nan_to_num(np.asarray(acc_B, dtype=float))
    return np.stack([acc_c * n_correctable, np.full(acc_c.shape, float(n_correctable)),
                     acc_b * n_benign, np.full(acc_b.shape, float(n_benign))])


def impact_curve(acc_C: np.ndarray, acc_B: np.ndarray, n_correctable: int,  # noqa: N803
                 n_benign: int, x: np.ndarray) -> np.ndarray:
    """A(x; M) for each model (rows) at each share ``x`` of B removed (columns).

    Implements A(x; M) = (A_C(M)|C| + (1 - x) A_B(M)|B|) / (|C| + (1 - x)|B|); NaN where
    the denominator is 0 (x = 1 with C empty).

    Examples
    --------
    >>> impact_curve(np.array([0.5]), np.array([0.9]), 10, 90, np.array([0.0, 1.0]))
    array([[0.86, 0.5 ]])
    """
    return _curve(_accuracy_totals(acc_C, acc_B, n_correctable, n_benign), x)


def _crossings(a: np.ndarray, b: np.ndarray) -> list[float]:
    """The shares x in (0, 1) at which the scores of two models cross, from their totals
    ``(num_C, den_C, num_B, den_B)``.

    With t = 1 - x the share of B kept, each score is (n_C + t n_B) / (d_C + t d_B), so
    the difference is 0 where (n_C^a + t n_B^a)(d_C^b + t d_B^b) = (n_C^b + t n_B^b)(d_C^a +
    t d_B^a), a quadratic in t. When both models have the same denominators (accuracy:
    item counts) the common factor cancels and the single root is t = -Δn_C / Δn_B.
    Roots that only touch (a double root) are not crossings.
    """
    na_c, da_c, na_b, da_b = (float(v) for v in a)
    nb_c, db_c, nb_b, db_b = (float(v) for v in b)
    if da_c == db_c and da_b == db_b:
        delta_b = na_b - nb_b
        roots = [] if delta_b == 0 else [-(na_c - nb_c) / delta_b]
    else:
        quadratic = na_b * db_b - nb_b * da_b
        linear = na_c * db_b + na_b * db_c - nb_c * da_b - nb_b * da_c
        constant = na_c * db_c - nb_c * da_c
        scale = max(abs(quadratic), abs(linear), abs(constant), 1e-300)
        if abs(quadratic) <= 1e-12 * scale:
            roots = [] if linear == 0 else [-constant / linear]
        else:
            disc = linear * linear - 4 * quadratic * constant
            if disc <= 0:
                return []
            root = np.sqrt(disc)
            # the numerically stable pair of roots
            q = -0.5 * (linear + np.copysign(root, linear))
            roots = [q / quadratic] + ([constant / q] if q != 0 else [])
    out = []
    for t in roots:
        x = 1.0 - t
        if 0.0 < x < 1.0 and da_c + t * da_b > 0 and db_c + t * db_b > 0:
            out.append(float(x))
    return sorted(out)


def flip_point(c_a: float, b_a: float, c_b: float, b_b: float, n_correctable: int,
               n_benign: int) -> float | None:
    """The share x in (0, 1) at which A(x; a) = A(x; b), or None if their order does not
    flip strictly inside (0, 1).

    With t = (1 - x)|B|, A(x; a) - A(x; b) = (Δ_C |C| + Δ_B t) / (|C| + t), a ratio of
    linear functions, so it is 0 at t = -Δ_C |C| / Δ_B, i.e. x = 1 + Δ_C |C| / (Δ_B |B|).

    Examples
    --------
    >>> round(flip_point(0.2, 0.9, 0.6, 0.8, 10, 90), 12)  # 1 + (-0.4 * 10) / (0.1 * 90)
    0.555555555556
    """
    if n_correctable == 0 or n_benign == 0:
        return None
    totals = _accuracy_totals(np.array([c_a, c_b]), np.array([b_a, b_b]), n_correctable,
                              n_benign)
    found = _crossings(totals[:, 0], totals[:, 1])
    return found[0] if found else None


def _ratio(num: np.ndarray, den: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Per model, the pooled score sum(num) / sum(den) over the items in ``mask``; NaN
    when the denominator is 0 (no items, or no entities for F1)."""
    total = den[:, mask].sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, num[:, mask].sum(axis=1) / np.where(total > 0, total, 1),
                        np.nan)


def _ranks(acc: np.ndarray) -> np.ndarray:
    """Rank 1 for the highest accuracy; ties share the best rank."""
    values = np.nan_to_num(acc, nan=-1.0)
    return (values[None, :] > values[:, None]).sum(axis=1) + 1


def _flips(models: tuple[str, ...], totals: np.ndarray, n_correctable: int,
           n_benign: int) -> tuple[RankFlip, ...]:
    """Every crossing of two models' curves inside (0, 1), each checked on the curve;
    ``totals`` has shape ``(4, n_models)`` (see :func:`_curve`)."""
    flips = []
    if n_correctable == 0 or n_benign == 0:
        return ()
    for i, j in combinations(range(len(models)), 2):
        pair = totals[:, [i, j]]
        previous = 0.0
        for x in _crossings(pair[:, 0], pair[:, 1]):
            at = _curve(pair, np.array([x]))[:, 0]
            if not np.isclose(at[0], at[1], rtol=0, atol=1e-9):  # pragma: no cover - algebra
                raise AssertionError(f"flip of {models[i]}/{models[j]} at x={x} fails the check")
            before = _curve(pair, np.array([(previous + x) / 2]))[:, 0]
            first, second = (i, j) if before[0] > before[1] else (j, i)  # ahead just before
            prevalence = n_correctable / (n_correctable + (1 - x) * n_benign)
            flips.append(RankFlip(models[first], models[second], float(x), float(prevalence)))
            previous = x
    return tuple(sorted(flips, key=lambda f: f.x))


def _wilson(k: int, n: int, confidence_level: float) -> tuple[float, float]:
    """Wilson score interval of k/n, as ``scipy.stats.binomtest(k, n).proportion_ci(
    method="wilson")`` gives it, without importing scipy.stats."""
    from scipy.special import ndtri

    z = float(ndtri(0.5 + confidence_level / 2))
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, float(centre - half)), min(1.0, float(centre + half))


def _check_options(confidence_level: float, n_points: int) -> None:
    if not 0.0 < confidence_level < 1.0:
        raise InvalidParameterError(f"confidence_level must be in (0, 1), got {confidence_level}",
                                    param="confidence_level")
    if n_points < 2:
        raise InvalidParameterError(f"n_points must be at least 2, got {n_points}",
                                    param="n_points")


def impact(
    corrected: pd.DataFrame | str | Path,
    predictions: Mapping[str, pd.DataFrame | str | Path],
    *,
    id: str = "id",  # noqa: A002 - mirrors the CLI flag
    label: str | None = None,
    corrected_label: str | None = None,
    flagged: str | None = None,
    verdict: str | None = None,
    confidence_level: float = 0.95,
    n_points: int = 101,
) -> ImpactResult:
    """Measure what the verified label errors of a test set do to each model and ranking.

    Parameters
    ----------
    corrected : DataFrame or path
        The table ``labelaudit review apply`` writes (recognised by its
        ``review_original_label`` and ``review_verdict`` columns), or a plain table with
        the original label, the corrected label and a flagged and/or a verdict column.
    predictions : mapping of str to DataFrame or path
        Model name to its predictions: ``id`` and a predicted-label column
        (``predicted_label``, ``prediction``, ``pred``, ``label`` or the only other one), or
        ``id`` and a probability column per class (named ``<class>`` or ``prob_<class>``).
    id : str, default="id"
        Id column of every table.
    label, corrected_label : str, optional
        Original and corrected label columns (default: ``review_original_label`` and
        ``label`` for a ``review apply`` output, else ``label`` and ``corrected``).
    flagged : str, optional
        Boolean column: the item was flagged for review (default: ``flagged`` if present,
        else every item with a verdict).
    verdict : str, optional
        Column of verdicts: Correctable, Non-Agreement, Non-Error or Pending (default:
        ``review_verdict`` or ``verdict``). Without one, a flagged item is correctable when
        its corrected label differs, benign when it is the same, unknown when blank.
    confidence_level : float, default=0.95
        Of the Wilson interval of N.
    n_points : int, default=101
        Points of the curve, x evenly spaced in [0, 1].

    Returns
    -------
    ImpactResult

    Warns
    -----
    PendingVerdictWarning
        Flagged items without a final verdict, counted in U.
    EmptyCorrectableWarning
        C is empty: N = 0, no flips.

    References
    ----------
    Northcutt, Athalye and Mueller, "Pervasive Label Errors in Test Sets Destabilize Machine
    Learning Benchmarks", NeurIPS 2021 Datasets and Benchmarks, section 6.

    Examples
    --------
    >>> data = pd.DataFrame({"id": [1, 2, 3, 4], "label": ["a", "a", "b", "b"],
    ...     "corrected": ["a", "b", "b", "b"], "flagged": [False, True, False, True],
    ...     "verdict": ["", "Correctable", "", "Non-Agreement"]})
    >>> preds = {"m": pd.DataFrame({"id": [1, 2, 3, 4], "pred": ["a", "b", "b", "a"]})}
    >>> result = impact(data, preds)
    >>> (result.n_benign, result.n_correctable, result.n_unknown, result.noise_prevalence)
    (2, 1, 1, 0.3333333333333333)
    >>> float(result.acc_original[0]), float(result.acc_corrected[0]), result.flips
    (0.6666666666666666, 1.0, ())
    """
    import pandas as pd
    _check_options(confidence_level, n_points)
    frame = corrected if isinstance(corrected, pd.DataFrame) else read_table(corrected)
    sets, n_pending = impact_sets(frame, id=id, label=label, corrected_label=corrected_label,
                                  flagged=flagged, verdict=verdict)
    models, predicted = align_predictions(sets, predictions, id=id)
    if n_pending:
        warnings.warn(f"{n_pending} flagged items have no final verdict (Pending): counted "
                      "as unknown (U)", PendingVerdictWarning, stacklevel=2)
    return measure_impact(sets.sets, n_pending, models,
                          accuracy_scores(predicted, sets.original, sets.corrected),
                          confidence_level, n_points)


@dataclass(frozen=True)
class ItemScores:
    """Per model (rows) and item (columns), the numerator and denominator of the score
    against the original and the corrected labels: hits over 1 for accuracy, 2 TP over
    2 TP + FP + FN for entity F1 (so that pooling gives micro F1)."""

    num_original: np.ndarray
    den_original: np.ndarray
    num_corrected: np.ndarray
    den_corrected: np.ndarray


def accuracy_scores(predicted: np.ndarray, original: np.ndarray,
                    corrected: np.ndarray) -> ItemScores:
    """Hits of each model's predicted labels (rows) against both labels of every item."""
    ones = np.ones(predicted.shape, dtype=float)
    return ItemScores((predicted == original[None, :]).astype(float), ones,
                      (predicted == corrected[None, :]).astype(float), ones)


def measure_impact(sets: np.ndarray, n_pending: int, models: tuple[str, ...],
                   scores: ItemScores, confidence_level: float, n_points: int, *,
                   metric: str = "accuracy", unit: str = "items") -> ImpactResult:
    """The impact measures from the sets (0 B, 1 C, 2 U per item) and the item scores."""
    is_b, is_c = sets == BENIGN, sets == CORRECTABLE
    n_b, n_c, n_u = int(is_b.sum()), int(is_c.sum()), int((sets == UNKNOWN).sum())
    if n_b + n_c == 0:
        raise InvalidInputError(f"every {unit[:-1]} is unknown (U): the pruned set P is "
                                f"empty, so there is no {metric} to measure")
    if n_c == 0:
        warnings.warn(f"C is empty: no flagged {unit[:-1]} was corrected to another label, "
                      "so N = 0 and no ranking flips", EmptyCorrectableWarning, stacklevel=3)
    pruned = is_b | is_c
    s = scores
    acc_original = _ratio(s.num_original, s.den_original, pruned)
    acc_corrected = _ratio(s.num_corrected, s.den_corrected, pruned)
    acc_c = _ratio(s.num_corrected, s.den_corrected, is_c)
    acc_c_original = _ratio(s.num_original, s.den_original, is_c)
    acc_b = _ratio(s.num_corrected, s.den_corrected, is_b)
    benign = (s.num_corrected[:, is_b].sum(axis=1), s.den_corrected[:, is_b].sum(axis=1))
    totals = np.stack([s.num_corrected[:, is_c].sum(axis=1),
                       s.den_corrected[:, is_c].sum(axis=1), *benign])
    totals_original = np.stack([s.num_original[:, is_c].sum(axis=1),
                                s.den_original[:, is_c].sum(axis=1), *benign])
    rank_original, rank_corrected = _ranks(acc_original), _ranks(acc_corrected)
    swapped = tuple(
        (models[i], models[j]) for i, j in combinations(range(len(models)), 2)
        if (rank_original[i] - rank_original[j]) * (rank_corrected[i] - rank_corrected[j]) < 0)
    x = np.linspace(0.0, 1.0, n_points)
    with np.errstate(invalid="ignore", divide="ignore"):
        prevalence = np.where(n_c + (1 - x) * n_b > 0,
                              n_c / np.maximum(n_c + (1 - x) * n_b, 1e-300), np.nan)
    curve = ImpactCurve(x=x, noise_prevalence=prevalence, corrected=_curve(totals, x),
                        original=_curve(totals_original, x))
    return ImpactResult(
        models=models, n_benign=n_b, n_correctable=n_c, n_unknown=n_u, n_pending=n_pending,
        noise_prevalence=n_c / (n_b + n_c),
        noise_prevalence_ci=_wilson(n_c, n_b + n_c, confidence_level),
        confidence_level=confidence_level, acc_original=acc_original,
        acc_corrected=acc_corrected, acc_C=acc_c, acc_C_original=acc_c_original,
        acc_B=acc_b, rank_original=rank_original, rank_corrected=rank_corrected,
        swapped=swapped, flips=_flips(models, totals, n_c, n_b),
        flips_original=_flips(models, totals_original, n_c, n_b), curve=curve,
        metric=metric, unit=unit)
