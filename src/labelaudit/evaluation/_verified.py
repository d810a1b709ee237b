"""Precision of a human-verified sample of flagged items, with an exact confidence interval.

When only a sample of the flagged items has been checked by people, the share confirmed
as real errors is a binomial proportion. Its Clopper-Pearson ("exact") interval is the
one Northcutt et al. (2021) and Klie et al. (2023) report, and scaling it by the number of
flagged items estimates how many real errors the whole flagged set holds.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from labelaudit._errors import InvalidParameterError
from labelaudit._validation import check_fraction, check_int, shown

__all__ = ["VerifiedPrecision", "verified_precision"]


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


def verified_precision(
    n_confirmed: int,
    n_verified: int,
    *,
    confidence: float = 0.95,
    n_flagged: int | None = None,
) -> VerifiedPrecision:
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
    return VerifiedPrecision(
        precision=precision,
        ci_low=low,
        ci_high=high,
        n_confirmed=n_confirmed,
        n_verified=n_verified,
        confidence=confidence,
        estimated_errors=est,
        estimated_errors_low=est_low,
        estimated_errors_high=est_high,
    )
