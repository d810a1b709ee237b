"""Minority-split noise: on the most evenly split items, adopt the minority's label."""

from __future__ import annotations

import numpy as np

from labelaudit.noise._common import Flips, NoiseData, Shortfall, require_crowd


def minority_split_flips(data: NoiseData, eligible: np.ndarray, count: int,
                         rng: np.random.Generator) -> Flips:
    """Give the ``count`` most contested items their minority label ``m`` (most frequent other
    than ``y``), closest split ``|c_y - c_m| / n_annotations`` first, ties at random: SNLI's
    3-2 rule (Chong, Hong & Manning 2022, appendix A.3), generalised to any annotations."""
    crowd = require_crowd(data, "minority-split", several=True)
    counts = crowd.counts()
    labels = data.labels
    n_ann = counts.sum(axis=1)
    rows = np.arange(len(labels))
    others = counts.copy()
    others[rows, labels] = 0
    candidates = np.flatnonzero(eligible & (n_ann >= 2) & (others.max(axis=1) > 0))
    if count > len(candidates):
        raise Shortfall(len(candidates), "items need two or more annotations, one disagreeing")
    if count == 0:
        return Flips.of(np.zeros(0, np.int64), np.zeros(0, np.int64))
    sub = others[candidates]
    is_top = sub == sub.max(axis=1, keepdims=True)
    noise = rng.random(is_top.shape)
    minority = np.argmax(np.where(is_top, noise + 1.0, 0.0), axis=1)  # random among ties
    closeness = np.abs(counts[candidates, labels[candidates]] - sub[np.arange(len(sub)), minority])
    closeness = closeness / n_ann[candidates]
    order = np.lexsort((rng.random(len(candidates)), np.round(closeness, 12)))[:count]
    items = candidates[order]
    sort = np.argsort(items)
    return Flips.of(items[sort], minority[order][sort])
