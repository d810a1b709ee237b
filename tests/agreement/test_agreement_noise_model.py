"""The Beigman Klebanov & Beigman noise model: the paper's worked examples are golden tests."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from labelaudit import InvalidParameterError
from labelaudit.agreement import chance_difference, noise_bound, tolerable_disagreements


def _exact_t0(n: int, d: int, p: Fraction, alpha: Fraction) -> int:
    """Equation 1 with exact rational arithmetic (uniform prior), for small n."""
    weights = [Fraction(math.comb(i, d)) * p ** (i - d) for i in range(d, n + 1)]
    total = sum(weights)
    for t in range(d, n + 1):
        tail = sum(weights[t - d + 1 :])
        if tail / total < 1 - alpha:
            return t
    raise AssertionError("unreachable")


def test_section_3_1_two_annotators():
    """1,000 items, 900 agreed, p = 0.5: up to 125 agreements are coin flips, gamma = 13.8%."""
    bound = noise_bound(1000, 100, 0.5, confidence=0.95)
    assert bound.hidden_hard == 125
    assert bound.max_hard == 225
    assert bound.n_agreed == 900
    assert round(100 * bound.gamma, 1) == 13.9  # 125 / 900 = 13.89%, the paper truncates: 13.8%
    assert math.floor(1000 * bound.gamma) / 10 == 13.8


def test_section_3_1_poesio_vieira():
    """n = 992, d = 121, p = 0.47 gives gamma = 15% at 95% confidence."""
    bound = noise_bound(992, 121, 0.47, confidence=0.95)
    assert round(bound.gamma, 2) == 0.15


def test_section_3_1_tolerable_disagreements():
    """1,000 items, two annotators: only 33 disagreements keep the agreed part 95% noise-free."""
    assert tolerable_disagreements(1000, 0.5, gamma=0.05, confidence=0.95) == 33
    assert noise_bound(1000, 33, 0.5).gamma <= 0.05
    assert noise_bound(1000, 34, 0.5).gamma > 0.05


def test_section_3_2_five_annotators():
    """1,000 items, five annotators, 660 agreements, p = 0.0625: gamma within 5%."""
    p = 2 * 0.5**5
    assert p == 0.0625
    bound = noise_bound(1000, 340, p, confidence=0.95)
    assert bound.gamma <= 0.05
    assert round(bound.gamma, 2) == 0.05


def test_section_3_3_kappa_point_estimates():
    """kappa estimates the share of easy items: 800 of 900 agreed -> 11% noise; 637 of 660 ->
    3.5%, both below the 95% bounds of the model."""
    assert round((900 - 800) / 900, 2) == 0.11
    assert round((660 - 637) / 660, 3) == 0.035
    assert noise_bound(1000, 100, 0.5).gamma > 0.11
    assert noise_bound(1000, 340, 0.0625).gamma > 0.035


def test_section_4_1_chance_difference():
    """L = 900, R = 125: a difference of up to 35 correct answers (3.9%) can be chance."""
    res = chance_difference(900, n_noise=125, delta=35, confidence=0.95)
    assert res.sigma == pytest.approx(math.sqrt(62.5))
    assert int(res.chebyshev_bound) == 35  # 4.47 sigma; the paper rounds k to 4.5
    assert int(4.5 * res.sigma) == 35
    assert round(res.chebyshev_bound / 900, 3) == 0.039
    assert res.can_be_chance is True
    # the model fixes S's distribution (S + R ~ Binomial(2R, 1/2)): exactly, 35 is not chance
    assert res.p_exact < 1e-4 and res.can_be_chance_exact is False
    assert chance_difference(900, n_noise=125, delta=15).can_be_chance_exact is True
    assert chance_difference(900, n_noise=125, delta=36).can_be_chance is False
    # footnote 9: the normal approximation gives the tighter ~2 sigma bound
    assert res.normal_bound == pytest.approx(1.959964 * res.sigma, rel=1e-5)
    # gamma = 0.139 of 900 rounds to the same R
    assert chance_difference(900, noise_rate=0.139).n_noise == 125


def test_chance_difference_exact_tail_matches_simulation():
    rng = np.random.default_rng(0)
    r, delta = 40, 6
    steps = rng.choice([-1, 0, 1], p=[0.25, 0.5, 0.25], size=(20000, r)).sum(axis=1)
    empirical = float((np.abs(steps) >= delta).mean())
    res = chance_difference(200, n_noise=r, delta=-delta)
    assert res.delta == delta
    assert res.p_exact == pytest.approx(empirical, abs=0.01)
    # Chebyshev is a valid (loose) bound
    assert res.p_exact <= res.sigma**2 / delta**2


@pytest.mark.parametrize("d, p", [(0, 0.5), (3, 0.5), (10, 0.3), (25, 0.9), (40, 0.0625)])
def test_log_space_matches_exact_rational_arithmetic(d, p):
    n = 60
    for alpha in (0.9, 0.95, 0.99):
        expected = _exact_t0(n, d, Fraction(p), Fraction(alpha).limit_denominator(1000))
        assert noise_bound(n, d, p, confidence=alpha).max_hard == expected


def test_large_n_is_stable_and_consistent():
    bound = noise_bound(1_000_000, 100_000, 0.5, confidence=0.95)
    assert np.isfinite(bound.gamma)
    # the posterior of h is concentrated near d / (1 - p) = 200,000, with sd ~ sqrt(d p)/(1-p)
    assert 200_000 < bound.max_hard < 200_000 + 6 * math.sqrt(100_000 * 0.5) / 0.5
    small = noise_bound(1000, 100, 0.5)
    assert bound.gamma < small.gamma  # relative uncertainty shrinks with n


def test_gamma_grows_with_disagreements_and_confidence():
    gammas = [noise_bound(500, d, 0.4).gamma for d in range(0, 200, 7)]
    assert all(a <= b for a, b in zip(gammas, gammas[1:], strict=False))
    assert noise_bound(500, 50, 0.4, confidence=0.99).gamma > noise_bound(
        500, 50, 0.4, confidence=0.9
    ).gamma


def test_edge_cases():
    assert noise_bound(100, 10, 0.0).gamma == 0.0  # hard items can never agree by chance
    assert math.isnan(noise_bound(10, 10, 0.5).gamma)  # nothing agreed
    assert tolerable_disagreements(1000, 0.5, gamma=0.0) == -1
    assert tolerable_disagreements(50, 0.0, gamma=0.0) == 49


@pytest.mark.parametrize(
    "kwargs",
    [
        {"n_items": 10, "n_disagreed": 11, "p_chance": 0.5},
        {"n_items": 10, "n_disagreed": 1, "p_chance": 1.5},
        {"n_items": 10, "n_disagreed": 1, "p_chance": 0.5, "confidence": 1.0},
        {"n_items": 10.5, "n_disagreed": 1, "p_chance": 0.5},
        {"n_items": 0, "n_disagreed": 0, "p_chance": 0.5},
    ],
)
def test_bad_parameters(kwargs):
    with pytest.raises(InvalidParameterError):
        noise_bound(**kwargs)


def test_chance_difference_bad_parameters():
    with pytest.raises(InvalidParameterError, match="exactly one"):
        chance_difference(100)
    with pytest.raises(InvalidParameterError, match="exceed"):
        chance_difference(100, n_noise=101)
    res = chance_difference(100, n_noise=10)
    assert res.delta is None and res.can_be_chance is None
    assert set(res.to_frame().columns) >= {"sigma", "chebyshev_bound", "normal_bound"}
