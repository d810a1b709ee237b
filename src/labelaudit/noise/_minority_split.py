"""Minority-split noise: on the most evenly split items, adopt the minority's label."""

from __future__ import annotations

import numpy as np

from labelaudit.noise._common import Flips, NoiseData, Shortfall, require_crowd


def minority_split_flips(data: NoiseData, eligible: np.ndarray, count: int,
                         rng: np.random.Generator) -> Flips:
    """Give the ``count`` most contested items the label of their dissenting annotators.

    For SNLI, whose annotations carry no annotator ids, Chong, Hong & Manning (2022,
    appendix A.3) simulate the systematic errors of dissenting workers this way: "We use
    the minority label when there is a 3-2 split between the five labels." Generalised to
    any number of annotations: the minority label ``m`` of an item is its most frequent
    label other than the final label ``y`` (ties at random), and items are taken in order
    of how close the split is, ``|c_y - c_m| / n_annotations`` (0.2 for a 3-2 split of
    five, 0.6 for 4-1), closest first, ties at random. Only items with two or more
    annotations, one of them disagreeing, take part.

    References
    ----------
    Chong, Hong & Manning (2022), Detecting Label Errors by using Pre-Trained Language
    Models, appendix A.3 (80% of SNLI-5).
    """
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
