"""The easy/hard annotation noise model of Beigman Klebanov & Beigman (2009).

Annotators agree on easy items and flip independent coins on hard ones, so some hard items
surface as agreements. From the number ``d`` of disagreed items among ``n`` and the chance
``p`` that the coins agree on a hard item, equation 1 of the paper bounds, at confidence
``alpha``, the share ``gamma`` of hard (noise) items hidden in the agreed subset
(:func:`noise_bound`), and, inverted, how many disagreements an annotation can afford
(:func:`tolerable_disagreements`, :func:`tolerance`). Section 4.1 turns a noise level into
the difference between two systems that chance alone can explain
(:func:`chance_difference`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from labelaudit._errors import InvalidParameterError
from labelaudit._validation import check_fraction, check_int
from labelaudit.agreement._text import key_value_text, percent
from labelaudit.io import ResultFiles

if TYPE_CHECKING:
    import pandas as pd


T = TypeVar("T")


class _OneRow(ResultFiles):
    def to_frame(self: Any) -> pd.DataFrame:
        """One row: :meth:`to_dict`."""
        import pandas as pd
        return pd.DataFrame([self.to_dict()])


@dataclass(frozen=True)
class NoiseBound(_OneRow):
    """Upper bound on the noise of the agreed subset (equation 1): of ``n_items`` (n),
    ``n_disagreed`` (d) are hard; with chance agreement ``p_chance`` and confidence ``alpha``
    at most ``max_hard`` (t0) are hard, ``hidden_hard`` = t0 - d of them among the agreed, and
    ``gamma`` = (t0 - d) / (n - d) (NaN when nothing was agreed on).
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

    def summary(self) -> str:
        """The bound as a two-column table for a person."""
        return key_value_text([
            ("items (n)", self.n_items), ("disagreed (d)", self.n_disagreed),
            ("agreed", self.n_agreed), ("p, chance agreement on a hard item", self.p_chance),
            ("confidence", self.confidence), ("hard items at most (t0)", self.max_hard),
            ("hard items hidden among the agreed", self.hidden_hard),
            ("gamma, noise of the agreed subset", percent(self.gamma))])


def checked(check: Callable[..., T], value: object, name: str, **bounds: Any) -> T:
    """``check(value, name, **bounds)``, its message worded as these functions put it
    (``n_items must be a whole number, got 2.5``)."""
    try:
        return check(value, name, **bounds)
    except InvalidParameterError as exc:
        raise InvalidParameterError(str(exc).replace("; got ", ", got ")) from None


def _log_posterior_tail(n: int, d: int, p: float) -> tuple[np.ndarray, float]:
    """``log sum_{i>t} w_i`` for t = d..n and ``log sum_{i>=d} w_i``, with
    ``w_i = C(i, d) p^(i-d)`` the posterior of ``i`` hard items under a uniform prior."""
    from scipy import special

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
    n_items: int, n_disagreed: int, p_chance: float, *, confidence: float = 0.95) -> NoiseBound:
    """Upper bound ``gamma`` on the share of hard items among the agreed ones (equation 1).

    With a uniform prior over the number of hard items (the paper's footnote 5),

    .. math::

        P(X > t \\mid A_d) = \\frac{\\sum_{i=t+1}^{n} \\binom{i}{d} p^{i-d}}
                                  {\\sum_{i=d}^{n} \\binom{i}{d} p^{i-d}}

    ``t0`` is the smallest integer with :math:`P(X > t_0 \\mid A_d) < 1 - \\alpha`, and
    :math:`\\gamma = (t_0 - d)/(n - d)`, summed in log space (exact and fast for n >= 10^6).
    ``n_items`` is ``n``, ``n_disagreed`` ``d`` (items not all agreed on), ``confidence``
    ``alpha`` and ``p_chance`` ``p``, the chance that annotators agree on a hard item,
    :math:`p = \\sum_c \\prod_j q_{jc}` (0.5 for two coin-flipping annotators, 0.0625 for five).

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
        n_items=n, n_disagreed=d, p_chance=p, confidence=alpha, max_hard=t0, hidden_hard=t0 - d,
        gamma=gamma)


def tolerable_disagreements(
    n_items: int, p_chance: float, *, gamma: float = 0.05, confidence: float = 0.95) -> int:
    """Most disagreements ``d`` that keep :func:`noise_bound`'s gamma at or below
    ``gamma`` (bisection; the bound grows with ``d``); -1 when even ``d = 0`` exceeds it.

    The paper's section 3.1: two annotators and 1,000 items tolerate only 33:

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


@dataclass(frozen=True)
class Tolerance(_OneRow):
    """The result of :func:`tolerance`."""

    n_items: int
    p_chance: float
    gamma: float
    confidence: float
    max_disagreements: int

    def to_dict(self) -> dict[str, float]:
        return asdict(self)

    def summary(self) -> str:
        """The inputs and the answer as aligned ``name  value`` lines."""
        d = self.max_disagreements
        return key_value_text([
            ("items (n)", self.n_items), ("p, chance agreement on a hard item", self.p_chance),
            ("target gamma", percent(self.gamma)), ("confidence", self.confidence),
            ("most disagreements tolerated", d if d >= 0 else "none (even 0 exceeds gamma)")])


def tolerance(n_items: int, p_chance: float, *, gamma: float = 0.05,
              confidence: float = 0.95) -> Tolerance:
    """:func:`tolerable_disagreements` with its inputs, as a :class:`Tolerance`.

    Examples
    --------
    >>> tolerance(1000, 0.5).max_disagreements
    33
    """
    d = tolerable_disagreements(n_items, p_chance, gamma=gamma, confidence=confidence)
    return Tolerance(n_items, p_chance, gamma, confidence, d)


@dataclass(frozen=True)
class ChanceDifference(_OneRow):
    """How large a difference between two systems chance alone can produce (section 4.1):
    ``n_items`` (L), ``n_noise`` (R), ``sigma`` = sqrt(R / 2), ``chebyshev_bound`` =
    sigma / sqrt(1 - confidence) (4.47 sigma at 95%), ``normal_bound`` = z sigma (1.96
    sigma; the paper's footnote 9 rounds to 2), and with an observed ``delta`` its exact tail
    ``p_exact`` = P(|S| >= delta) (S + R is Binomial(2R, 1/2)).
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
        """Whether ``p_exact`` is at least ``1 - confidence``: a much tighter test than
        the paper's distribution-free Chebyshev bound (None without a delta)."""
        if self.p_exact is None:
            return None
        return self.p_exact >= 1 - self.confidence

    def to_dict(self) -> dict:
        return {
            **asdict(self), "noise_rate": self.noise_rate, "can_be_chance": self.can_be_chance,
            "can_be_chance_exact": self.can_be_chance_exact}

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
    n_items: int, *, n_noise: int | None = None, noise_rate: float | None = None,
    delta: int | None = None, confidence: float = 0.95) -> ChanceDifference:
    """The difference between two systems that noise in the gold standard can explain.

    Section 4.1 of the paper: on a gold standard of ``L`` items of which up to ``R`` are
    noise, :math:`S = \\sum_{i=1}^R X_i` with :math:`X_i \\in \\{-1, 0, 1\\}` of probability
    1/4, 1/2, 1/4, :math:`\\sigma_S = \\sqrt{R/2}`, and by Chebyshev
    :math:`\\Pr(|S| > k\\sigma) \\le 1/k^2`.

    ``n_items`` is ``L``, ``n_noise`` ``R`` (or ``noise_rate`` gamma, ``R = round(gamma L)``);
    ``delta``, an observed difference in correct answers, is tested against chance.

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
    from scipy import stats

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
        n_items=big_l, n_noise=r, confidence=alpha, sigma=sigma, chebyshev_bound=cheb,
        normal_bound=normal, delta=delta, p_exact=p_exact)
