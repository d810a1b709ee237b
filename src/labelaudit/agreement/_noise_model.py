"""The easy/hard annotation noise model of Beigman Klebanov & Beigman (2009).

Annotators agree on easy items and flip independent coins on hard ones, so some hard items
surface as agreements. From the number ``d`` of disagreed items among ``n`` and the chance
``p`` that the coins agree on a hard item, equation 1 of the paper bounds, at confidence
``alpha``, the share ``gamma`` of hard (noise) items hidden in the agreed subset. Section 4.1
turns a noise level into the difference between two systems that chance alone can explain.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
from scipy import special

from labelaudit._errors import InvalidParameterError
from labelaudit._validation import check_fraction, check_int
from labelaudit.agreement._text import key_value_text, percent
from labelaudit.io import ResultFiles

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["NoiseBound", "noise_bound", "tolerable_disagreements"]

T = TypeVar("T")


@dataclass(frozen=True)
class NoiseBound(ResultFiles):
    """Upper bound on the noise level of the agreed subset.

    Attributes
    ----------
    n_items : int
        ``n``, all annotated items.
    n_disagreed : int
        ``d``, items the annotators disagreed on (all hard).
    p_chance : float
        ``p``, probability that the annotators agree on a hard item by chance.
    confidence : float
        ``alpha``.
    max_hard : int
        ``t0``, the smallest ``t`` with ``P(X > t | A_d) < 1 - alpha``: at most this many hard
        items in all, with confidence ``alpha``.
    hidden_hard : int
        ``t0 - d``, hard items that may hide among the agreed ones.
    gamma : float
        ``(t0 - d) / (n - d)``, the noise level of the agreed subset (NaN when nothing was
        agreed on).
    """

    n_items: int
    n_disagreed: int
    p_chance: float
    confidence: float
    max_hard: int
    hidden_hard: int
    gamma: float

    @property
    def n_agreed(self) -> int:
        return self.n_items - self.n_disagreed

    def to_dict(self) -> dict:
        """Every field and ``n_agreed``, JSON-ready (an undefined gamma is None)."""
        return {**asdict(self), "n_agreed": self.n_agreed,
                "gamma": None if math.isnan(self.gamma) else self.gamma}

    def to_frame(self) -> pd.DataFrame:
        """One row with every field."""
        import pandas as pd
        return pd.DataFrame([self.to_dict()])

    def summary(self) -> str:
        """The bound as a two-column table for a person."""
        return key_value_text([
            ("items (n)", self.n_items),
            ("disagreed (d)", self.n_disagreed),
            ("agreed", self.n_agreed),
            ("p, chance agreement on a hard item", self.p_chance),
            ("confidence", self.confidence),
            ("hard items at most (t0)", self.max_hard),
            ("hard items hidden among the agreed", self.hidden_hard),
            ("gamma, noise of the agreed subset", percent(self.gamma)),
        ])


def checked(check: Callable[..., T], value: object, name: str, **bounds: Any) -> T:
    """``check(value, name, **bounds)`` from :mod:`labelaudit._validation`, its message worded
    as these functions have always put it (``n_items must be a whole number, got 2.5``)."""
    try:
        return check(value, name, **bounds)
    except InvalidParameterError as exc:
        raise InvalidParameterError(str(exc).replace("; got ", ", got ")) from None


def _log_posterior_tail(n: int, d: int, p: float) -> tuple[np.ndarray, float]:
    """``log sum_{i=t+1}^n w_i`` for t = d..n and ``log sum_{i=d}^n w_i``.

    ``w_i = C(i, d) p^(i-d)`` is the unnormalised posterior of ``i`` hard items given ``d``
    disagreements under a uniform prior (equation 1).
    """
    i = np.arange(d, n + 1, dtype=np.float64)
    log_binom = special.gammaln(i + 1) - special.gammaln(d + 1) - special.gammaln(i - d + 1)
    if p == 0.0:
        log_p_term = np.where(i == d, 0.0, -np.inf)
    else:
        log_p_term = (i - d) * math.log(p)
    log_w = log_binom + log_p_term
    # tail[k] = log sum_{i >= d + k} w_i ; tail of t is tail[t - d + 1]
    rev = np.logaddexp.accumulate(log_w[::-1])[::-1]
    total = float(rev[0])
    tails = np.append(rev[1:], -np.inf)  # for t = d..n: log sum_{i > t}
    return tails, total


def noise_bound(
    n_items: int, n_disagreed: int, p_chance: float, *, confidence: float = 0.95
) -> NoiseBound:
    """Upper bound ``gamma`` on the share of hard items among the agreed ones (equation 1).

    With a uniform prior over the number of hard items (the paper's footnote 5),

    .. math::

        P(X > t \\mid A_d) = \\frac{\\sum_{i=t+1}^{n} \\binom{i}{d} p^{i-d}}
                                  {\\sum_{i=d}^{n} \\binom{i}{d} p^{i-d}}

    ``t0`` is the smallest integer with :math:`P(X > t_0 \\mid A_d) < 1 - \\alpha`, and
    :math:`\\gamma = (t_0 - d)/(n - d)`. The sums are computed in log space
    (``gammaln``/``logaddexp``), so ``n`` up to 10^6 and beyond is exact and fast.

    Parameters
    ----------
    n_items : int
        ``n``, the number of annotated items.
    n_disagreed : int
        ``d``, items the annotators did not all agree on.
    p_chance : float
        ``p``, probability that the annotators agree on a hard item by chance: for ``k``
        annotators flipping coins with per-annotator probabilities ``q_jc``,
        :math:`p = \\sum_c \\prod_j q_{jc}` (``0.5`` for two annotators and two equiprobable
        categories, ``0.0625`` for five); see :func:`chance_agreement`.
    confidence : float, default 0.95
        ``alpha``.

    Returns
    -------
    NoiseBound

    References
    ----------
    Beigman Klebanov, B. and Beigman, E. (2009). From Annotator Agreement to Noise Models.
    Computational Linguistics 35(4), section 2, equation 1.

    Examples
    --------
    The paper's section 3.1: 1,000 items, 100 disagreements, two annotators, ``p = 0.5``;
    up to 125 of the 900 agreements may be coin flips, gamma = 13.8%:

    >>> bound = noise_bound(1000, 100, 0.5, confidence=0.95)
    >>> bound.hidden_hard, round(bound.gamma, 3)
    (125, 0.139)
    """
    n = checked(check_int, n_items, "n_items", minimum=1)
    d = checked(check_int, n_disagreed, "n_disagreed", minimum=0)
    if d > n:
        raise InvalidParameterError(f"n_disagreed ({d}) cannot exceed n_items ({n})")
    p = checked(check_fraction, p_chance, "p_chance")
    alpha = checked(check_fraction, confidence, "confidence", high_open=True)
    tails, total = _log_posterior_tail(n, d, p)
    log_threshold = math.log1p(-alpha) if alpha < 1 else -math.inf
    below = np.flatnonzero(tails - total < log_threshold)
    t0 = d + int(below[0])  # tails[-1] = -inf, so there is always one
    gamma = (t0 - d) / (n - d) if n > d else float("nan")
    return NoiseBound(
        n_items=n,
        n_disagreed=d,
        p_chance=p,
        confidence=alpha,
        max_hard=t0,
        hidden_hard=t0 - d,
        gamma=gamma,
    )


def tolerable_disagreements(
    n_items: int, p_chance: float, *, gamma: float = 0.05, confidence: float = 0.95
) -> int:
    """Most disagreements ``d`` that keep the agreed subset's noise bound at or below ``gamma``.

    The inverse of :func:`noise_bound`: the largest ``d`` with
    ``noise_bound(n_items, d, p_chance, confidence=confidence).gamma <= gamma``, found by
    bisection (the bound grows with ``d``). Returns -1 when even ``d = 0`` exceeds ``gamma``.

    Examples
    --------
    The paper's section 3.1: two annotators, 1,000 items, 95% noise-free with 95%
    confidence tolerates only 33 disagreements:

    >>> tolerable_disagreements(1000, 0.5, gamma=0.05, confidence=0.95)
    33
    """
    n = checked(check_int, n_items, "n_items", minimum=1)
    target = checked(check_fraction, gamma, "gamma")
    p = checked(check_fraction, p_chance, "p_chance")
    alpha = checked(check_fraction, confidence, "confidence", high_open=True)

    def ok(d: int) -> bool:
        return noise_bound(n, d, p, confidence=alpha).gamma <= target

    if not ok(0):
        return -1
    lo, hi = 0, n - 1  # ok(lo) holds; d = n leaves nothing agreed
    if ok(hi):
        return hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid):
            lo = mid
        else:
            hi = mid
    return lo
