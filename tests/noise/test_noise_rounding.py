"""Issue #11: the noised count is round(rate * n), halves up, and says when that is 0 or all."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from labelaudit.noise import NoiseRateWarning, inject_noise


@pytest.fixture
def labels() -> np.ndarray:
    return np.random.default_rng(0).choice(["a", "b", "c"], 40)


@pytest.mark.parametrize(("rate", "expected", "message"), [
    (0.999, 40, "asks for 39.96 items, which rounds to all 40: every item is noised"),
    (0.01, 0, "asks for 0.4 items, which rounds to 0: no item is noised"),
])
def test_noise_rate_rounding_to_all_or_none_warns(labels, rate, expected, message):
    with pytest.warns(NoiseRateWarning, match=message):
        result = inject_noise(labels, method="uniform", rate=rate)
    assert result.n_requested == result.n_noisy == expected
    assert int((result.labels != result.clean_labels).sum()) == result.n_noisy
    assert int(result.is_noisy.sum()) == result.n_noisy


@pytest.mark.parametrize(("rate", "expected"), [(0.1, 4), (0.0125, 1), (0.9875, 40)])
def test_noise_rate_count_is_round_half_up(labels, rate, expected):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = inject_noise(labels, method="uniform", rate=rate)
    assert result.n_requested == result.n_noisy == expected
    assert int((result.labels != result.clean_labels).sum()) == expected
    assert bool(caught) == (expected in (0, 40))


def test_crowd_majority_without_a_rate_requests_nothing(labels):
    crowd = [[label, label] for label in labels]
    result = inject_noise(labels, method="crowd-majority", annotations=crowd)
    assert result.n_requested is None and result.n_noisy == 0
