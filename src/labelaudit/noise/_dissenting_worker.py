"""Dissenting-worker noise: adopt whole annotators' disagreements, one annotator at a time."""

from __future__ import annotations

import numpy as np

from labelaudit.noise._common import Flips, NoiseData, Shortfall, require_crowd


def dissenting_worker_flips(data: NoiseData, eligible: np.ndarray, count: int,
                            rng: np.random.Generator) -> Flips:
    """Apply all disagreeing labels of random annotators, one at a time, until ``count`` items
    are noised: gaps in annotator training (Chong, Hong & Manning 2022, section 4; 80% of
    TweetNLP-5). Items are noised once; the last annotator's are sampled to hit ``count``."""
    crowd = require_crowd(data, "dissenting-worker", workers=True)
    items_of, workers_of, labels_of = crowd.item_codes, crowd.annotator_codes, crowd.label_codes
    known = workers_of >= 0
    dissent = known & (labels_of != data.labels[items_of]) & eligible[items_of]
    available = len(np.unique(items_of[dissent]))
    if count > available:
        raise Shortfall(available, "items need a disagreeing annotation from a known annotator")
    taken = np.zeros(data.n_samples, dtype=bool)
    items: list[np.ndarray] = []
    new: list[np.ndarray] = []
    remaining = count
    for worker in rng.permutation(crowd.n_annotators):
        if remaining == 0:
            break
        mine = np.flatnonzero(dissent & (workers_of == worker))
        mine = mine[~taken[items_of[mine]]]
        if len(mine) == 0:
            continue
        # one label per item (to_annotations forbids an annotator labelling an item twice)
        if len(mine) > remaining:
            mine = np.sort(rng.choice(mine, size=remaining, replace=False))
        taken[items_of[mine]] = True
        items.append(items_of[mine])
        new.append(labels_of[mine])
        remaining -= len(mine)
    return Flips.gathered(items, new)
