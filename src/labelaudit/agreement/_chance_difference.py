"""How large a difference between two systems noise in the gold standard can explain.

Section 4.1 of Beigman Klebanov & Beigman (2009): two systems equally good on the easy items
of a gold standard, guessing on its ``R`` hard (noise) items, differ by chance.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from scipy import stats

from labelaudit._errors import InvalidParameterError
from labelaudit._validation import check_fraction, check_int
from labelaudit.agreement._noise_model import checked
from labelaudit.agreement._text import key_value_text, percent
from labelaudit.io import ResultFiles

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["ChanceDifference", "chance_difference"]


@dataclass(frozen=True)
class ChanceDifference(ResultFiles):
    """How large a difference between two systems chance alone can produce (section 4.1).

    Two systems equally good on easy items, guessing on the ``n_noise`` hard ones: the
    difference ``S`` in correct answers sums ``R`` independent steps of -1, 0, +1 with
    probabilities 1/4, 1/2, 1/4, so ``mu_S = 0`` and ``sigma_S = sqrt(R / 2)``.

    Attributes
    ----------
    n_items, n_noise : int
        ``L`` and ``R``.
    confidence : float
    sigma : float
        ``sqrt(R / 2)``.
    chebyshev_bound : float
        ``sigma / sqrt(1 - confidence)``: ``P(|S| > bound) <= 1 - confidence`` for any
        distribution (Chebyshev; 4.47 sigma at 95%).
    normal_bound : float
        ``z * sigma`` with the two-sided normal quantile (1.96 sigma at 95%; the paper's
        footnote 9 rounds it to 2 sigma).
    delta : int or None
        The observed difference, when given.
    p_exact : float or None
        ``P(|S| >= delta)`` under the model, exactly: ``S + R`` is Binomial(2R, 1/2).
    """

    n_items: int
    n_noise: int
    confidence: float
    sigma: float
    chebyshev_bound: float
    normal_bound: float
    delta: int | None = None
    p_exact: float | None = None

    @property
    def noise_rate(self) -> float:
        return self.n_noise / self.n_items

    @property
    def can_be_chance(self) -> bool | None:
        """Whether ``delta`` is within the Chebyshev bound (None without a delta)."""
        if self.delta is None:
            return None
        return abs(self.delta) <= self.chebyshev_bound

    @property
    def can_be_chance_exact(self) -> bool | None:
        """Whether ``P(|S| >= delta)`` under the model is at least ``1 - confidence``.

        The model fixes the distribution of ``S``, so this test is much tighter than the
        distribution-free Chebyshev bound the paper uses (None without a delta).
        """
        if self.p_exact is None:
            return None
        return self.p_exact >= 1 - self.confidence

    def to_dict(self) -> dict:
        return {
            **asdict(self),
            "noise_rate": self.noise_rate,
            "can_be_chance": self.can_be_chance,
            "can_be_chance_exact": self.can_be_chance_exact,
        }

    def to_frame(self) -> pd.DataFrame:
        """One row with every field."""
        import pandas as pd
        return pd.DataFrame([self.to_dict()])

    def summary(self) -> str:
        """The bounds (and the verdicts on ``delta``) as a two-column table for a person."""
        conf = f"{100 * self.confidence:g}%"
        rows: list[tuple[str, object]] = [
            ("items (L)", self.n_items),
            ("noise items (R)", f"{self.n_noise} ({percent(self.noise_rate)})"),
            ("sigma = sqrt(R/2)", f"{self.sigma:.2f}"),
            (f"chance difference, Chebyshev {conf}", f"{self.chebyshev_bound:.1f} "
             f"({percent(self.chebyshev_bound / self.n_items)} of L)"),
            (f"chance difference, normal {conf}", f"{self.normal_bound:.1f} "
             f"({percent(self.normal_bound / self.n_items)} of L)"),
        ]
        if self.delta is not None:
            def verdict(chance: bool | None) -> str:
                return "can be chance" if chance else "larger than chance"

            rows += [("observed difference", self.delta),
                     ("P(|S| >= delta), exact", f"{self.p_exact:.3g}"),
                     ("verdict, Chebyshev (the paper)", verdict(self.can_be_chance)),
                     (f"verdict, exact tail at {conf}", verdict(self.can_be_chance_exact))]
        return key_value_text(rows)


def chance_difference(
    n_items: int,
    *,
    n_noise: int | None = None,
    noise_rate: float | None = None,
    delta: int | None = None,
    confidence: float = 0.95,
) -> ChanceDifference:
    """The difference between two systems that noise in the gold standard can explain.

    Section 4.1 of the paper: on a gold standard of ``L`` items of which up to ``R`` are
    noise, :math:`S = \\sum_{i=1}^R X_i` with :math:`X_i \\in \\{-1, 0, 1\\}` of probability
    1/4, 1/2, 1/4, :math:`\\sigma_S = \\sqrt{R/2}`, and by Chebyshev
    :math:`\\Pr(|S| > k\\sigma) \\le 1/k^2`.

    Parameters
    ----------
    n_items : int
        ``L``.
    n_noise : int, optional
        ``R``; or give ``noise_rate`` (``gamma``), and ``R = round(gamma * L)``.
    noise_rate : float, optional
    delta : int, optional
        An observed difference in correct answers, to test against chance; its size is at
        most ``n_items``.
    confidence : float, default 0.95

    Returns
    -------
    ChanceDifference

    Examples
    --------
    The paper's example: L = 900, R = 125; a difference of up to 35 correct answers (3.9%
    of the gold standard) can be attributed to chance:

    >>> res = chance_difference(900, n_noise=125)
    >>> int(res.chebyshev_bound), round(res.chebyshev_bound / 900, 3)
    (35, 0.039)
    """
    big_l = checked(check_int, n_items, "n_items", minimum=1)
    if (n_noise is None) == (noise_rate is None):
        raise InvalidParameterError("give exactly one of n_noise and noise_rate")
    if n_noise is None:
        r = int(round(checked(check_fraction, noise_rate, "noise_rate") * big_l))
    else:
        r = checked(check_int, n_noise, "n_noise", minimum=0)
    if r > big_l:
        raise InvalidParameterError(f"n_noise ({r}) cannot exceed n_items ({big_l})")
    alpha = checked(check_fraction, confidence, "confidence", low_open=True, high_open=True)
    sigma = math.sqrt(r / 2)
    cheb = sigma / math.sqrt(1 - alpha)
    normal = float(stats.norm.ppf(0.5 + alpha / 2)) * sigma
    p_exact = None
    if delta is not None:
        delta = abs(checked(check_int, delta, "delta"))  # the sign only says which system is ahead
        if delta > big_l:
            raise InvalidParameterError(
                f"delta ({delta}) cannot exceed n_items ({big_l}): two systems' correct "
                "answers on n_items items differ by at most n_items")
        if delta == 0:
            p_exact = 1.0
        else:
            # S + R ~ Binomial(2R, 1/2); P(|S| >= delta) = 2 P(B >= R + delta)
            p_exact = float(min(1.0, 2 * stats.binom.sf(r + delta - 1, 2 * r, 0.5)))
    return ChanceDifference(
        n_items=big_l,
        n_noise=r,
        confidence=alpha,
        sigma=sigma,
        chebyshev_bound=cheb,
        normal_bound=normal,
        delta=delta,
        p_exact=p_exact,
    )
