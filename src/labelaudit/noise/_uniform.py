"""Uniform (symmetric) label noise."""

from __future__ import annotations

import numpy as np

from labelaudit.noise._common import Flips, NoiseData, Shortfall, draw


def uniform_flips(data: NoiseData, eligible: np.ndarray, count: int,
                  rng: np.random.Generator) -> Flips:
    """Flip ``count`` random eligible items to another class, ``P(y~ = j | y) = 1 / (K - 1)``
    (Frénay & Verleysen 2014; the least realistic baseline of Chong et al. 2022, table 5)."""
    if data.n_classes < 2:
        raise Shortfall(0, "the label set has a single class")
    items = draw(np.flatnonzero(eligible), count, rng)
    offset = rng.integers(1, data.n_classes, size=count)
    return Flips.of(items, (data.labels[items] + offset) % data.n_classes)
