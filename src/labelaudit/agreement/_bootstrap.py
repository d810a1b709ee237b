"""Statistics with percentile bootstrap intervals over resampled items."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from labelaudit.agreement._aggregation import _plain

__all__ = ["Estimate", "bootstrap_ci", "estimate"]


@dataclass(frozen=True)
class Estimate:
    """A statistic with its bootstrap confidence interval (NaN bounds when not bootstrapped)."""

    name: str
    value: float
    ci_low: float
    ci_high: float

    def to_dict(self) -> dict:
        return {k: _plain(v) for k, v in self.__dict__.items()}


def bootstrap_ci(
    n_units: int,
    statistic: Callable[[np.ndarray], float],
    *,
    n_bootstrap: int = 1000,
    confidence: float = 0.95,
    random_state: int | None = 0,
) -> tuple[float, float]:
    """Percentile bootstrap interval of ``statistic(indices)`` over units resampled with
    replacement.

    The resampling is :func:`scipy.stats.bootstrap` (``method="percentile"``) on the unit
    indices ``0 .. n_units - 1``. One difference, which the agreement statistics need:
    replicates where the statistic is undefined (NaN, e.g. kappa on a resample where every
    label is the same) are dropped before taking the percentiles, where scipy would return
    a NaN interval; the interval is NaN when fewer than 10 replicates remain. Without NaN
    replicates the interval is scipy's.

    Examples
    --------
    >>> x = np.arange(100.0)
    >>> lo, hi = bootstrap_ci(100, lambda idx: x[idx].mean(), n_bootstrap=200)
    >>> bool(lo < 49.5 < hi)
    True
    """
    if n_bootstrap <= 0 or n_units < 2:
        return math.nan, math.nan
    from scipy.stats import bootstrap

    with warnings.catch_warnings():  # NaN replicates: scipy's degenerate-data warning
        warnings.simplefilter("ignore", RuntimeWarning)
        result = bootstrap((np.arange(n_units),), statistic, n_resamples=int(n_bootstrap),
                           vectorized=False, method="percentile", confidence_level=confidence,
                           random_state=np.random.default_rng(random_state))
    reps = np.asarray(result.bootstrap_distribution, dtype=float)
    reps = reps[~np.isnan(reps)]
    if len(reps) < 10:
        return math.nan, math.nan
    tail = (1 - confidence) / 2
    lo, hi = np.quantile(reps, [tail, 1 - tail])
    return float(lo), float(hi)


def estimate(name: str, statistic: Callable[[np.ndarray], float], n_units: int, *,
             n_bootstrap: int, confidence: float, random_state: int | None) -> Estimate:
    """``statistic`` on every unit, with its bootstrap interval."""
    lo, hi = bootstrap_ci(n_units, statistic, n_bootstrap=n_bootstrap, confidence=confidence,
                          random_state=random_state)
    return Estimate(name, float(statistic(np.arange(n_units))), lo, hi)
