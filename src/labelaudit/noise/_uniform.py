"""Uniform (symmetric) label noise."""

from __future__ import annotations

import numpy as np

from labelaudit.noise._common import Flips, NoiseData, Shortfall


def uniform_flips(data: NoiseData, eligible: np.ndarray, count: int,
                  rng: np.random.Generator) -> Flips:
    """Flip ``count`` eligible items, chosen at random, to another class chosen uniformly.

    The noisy label of a chosen item with clean label ``y`` is drawn from
    ``P(y~ = j | y) = 1 / (K - 1)`` for every ``j != y``: the "uniform noise" of the
    label-noise literature (Frénay & Verleysen 2014), the least realistic baseline of
    Chong, Hong & Manning (2022, section 4 and table 5).

    References
    ----------
    Chong, Hong & Manning (2022), Detecting Label Errors by using Pre-Trained Language
    Models, section 4. Frénay & Verleysen (2014), Classification in the presence of label
    noise: a survey.
    """
    candidates = np.flatnonzero(eligible)
    if data.n_classes < 2:
        raise Shortfall(0, "the label set has a single class")
    if count > len(candidates):
        raise Shortfall(len(candidates))
    items = np.sort(rng.choice(candidates, size=count, replace=False))
    offset = rng.integers(1, data.n_classes, size=count)
    return Flips.of(items, (data.labels[items] + offset) % data.n_classes)
