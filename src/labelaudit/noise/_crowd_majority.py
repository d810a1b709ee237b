"""Crowd-majority noise: replace the final label by the crowd's majority vote."""

from __future__ import annotations

import numpy as np

from labelaudit.noise._common import Flips, NoiseData, draw, require_crowd


def crowd_majority_labels(labels: np.ndarray, counts: np.ndarray,
                          rng: np.random.Generator) -> np.ndarray:
    """The crowd's majority label of every item, ties broken as Hovy et al. (2014) did.

    "In the rare case of ties, the tie is broken in favor of the label that matches the
    gold label, if applicable. Otherwise, a label is selected at random" (Chong, Hong &
    Manning 2022, appendix A.2). Items without annotations keep their label.

    Examples
    --------
    >>> counts = np.array([[2, 2, 0], [1, 2, 2], [3, 0, 1], [0, 0, 0]])
    >>> crowd_majority_labels(np.array([1, 0, 2, 1]), counts, np.random.default_rng(0))[[0, 2, 3]]
    array([1, 0, 1])
    """
    labels = np.asarray(labels)
    majority = labels.copy()
    top = counts.max(axis=1)
    annotated = top > 0
    is_top = (counts == top[:, None]) & annotated[:, None]
    keeps = is_top[np.arange(len(labels)), labels]
    for i in np.flatnonzero(annotated & ~keeps):
        tied = np.flatnonzero(is_top[i])
        majority[i] = tied[0] if len(tied) == 1 else rng.choice(tied)
    return majority


def crowd_majority_flips(data: NoiseData, eligible: np.ndarray, count: int | None,
                         rng: np.random.Generator) -> Flips:
    """Noise ``count`` random items (all with None) with two or more annotations whose crowd
    majority differs from the final label: systematic errors (Chong, Hong & Manning 2022,
    section 4 and appendix A.2; TweetNLP-M keeps all 20.46%)."""
    crowd = require_crowd(data, "crowd-majority", several=True)
    counts = crowd.counts()
    majority = crowd_majority_labels(data.labels, counts, rng)
    several = counts.sum(axis=1) >= 2
    candidates = np.flatnonzero(eligible & several & (majority != data.labels))
    items = draw(candidates, len(candidates) if count is None else count, rng,
                 "items need a crowd majority that differs from them")
    return Flips.of(items, majority[items])
