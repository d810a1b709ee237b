"""Dissenting-label noise: replace the final label by one an annotator gave instead."""

from __future__ import annotations

import numpy as np

from labelaudit.noise._common import Flips, NoiseData, draw, require_crowd


def dissenting_label_flips(data: NoiseData, eligible: np.ndarray, count: int,
                           rng: np.random.Generator) -> Flips:
    """Give ``count`` random items one of their disagreeing annotations, drawn uniformly (a
    label two annotators gave is twice as likely): imperfect quality control (Chong, Hong &
    Manning 2022, section 4; 20% of TweetNLP-5 and SNLI-5 in appendix A.1)."""
    crowd = require_crowd(data, "dissenting-label")
    items_of, labels_of = crowd.item_codes, crowd.label_codes
    dissent = (labels_of != data.labels[items_of]) & eligible[items_of]
    items = draw(np.unique(items_of[dissent]), count, rng,
                 "items need an annotation that disagrees with them")
    # dissenting annotations grouped by item, in item order
    d_items, d_labels = items_of[dissent], labels_of[dissent]
    order = np.argsort(d_items, kind="stable")
    d_items, d_labels = d_items[order], d_labels[order]
    start = np.searchsorted(d_items, items, side="left")
    stop = np.searchsorted(d_items, items, side="right")
    pick = start + np.floor(rng.random(len(items)) * (stop - start)).astype(np.int64)
    return Flips.of(items, d_labels[pick])
