"""Dissenting-label noise: replace the final label by one an annotator gave instead."""

from __future__ import annotations

import numpy as np

from labelaudit.noise._common import Flips, NoiseData, Shortfall, require_crowd


def dissenting_label_flips(data: NoiseData, eligible: np.ndarray, count: int,
                           rng: np.random.Generator) -> Flips:
    """Give ``count`` random items a label that one of their annotators gave instead.

    "For any dataset which includes two levels of label quality, the *dissenting label*
    method replaces final labels with disagreeing labels at random, simulating imperfect
    quality control" (Chong, Hong & Manning 2022, section 4). The items are drawn
    uniformly among the eligible items with at least one annotation that disagrees with
    the final label; each gets one of its disagreeing annotations, drawn uniformly (so a
    label two annotators gave is twice as likely as a label one gave).

    References
    ----------
    Chong, Hong & Manning (2022), Detecting Label Errors by using Pre-Trained Language
    Models, section 4 and appendix A.1 (20% of TweetNLP-5 and SNLI-5).
    """
    crowd = require_crowd(data, "dissenting-label")
    items_of, labels_of = crowd.item_codes, crowd.label_codes
    dissent = (labels_of != data.labels[items_of]) & eligible[items_of]
    candidates = np.unique(items_of[dissent])
    if count > len(candidates):
        raise Shortfall(len(candidates), "items need an annotation that disagrees with them")
    items = np.sort(rng.choice(candidates, size=count, replace=False))
    # dissenting annotations grouped by item, in item order
    d_items, d_labels = items_of[dissent], labels_of[dissent]
    order = np.argsort(d_items, kind="stable")
    d_items, d_labels = d_items[order], d_labels[order]
    start = np.searchsorted(d_items, items, side="left")
    stop = np.searchsorted(d_items, items, side="right")
    pick = start + np.floor(rng.random(len(items)) * (stop - start)).astype(np.int64)
    return Flips.of(items, d_labels[pick])
