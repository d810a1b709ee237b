"""Majority vote with an explicit tie policy."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import numpy as np

from labelaudit._errors import InvalidInputError
from labelaudit._validation import check_choice
from labelaudit.agreement._aggregation import Aggregation
from labelaudit.io import Annotations, format_items, to_annotations

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["majority_vote"]

TiePolicy = Literal["random", "first", "abstain", "error"]
_TIES = ("random", "first", "abstain", "error")


def majority_vote(
    annotations: pd.DataFrame | Annotations,
    *,
    item: str | None = None,
    annotator: str | None = None,
    label: str | None = None,
    ties: TiePolicy = "random",
    random_state: int | None = 0,
) -> Aggregation:
    """Aggregate crowd labels by the most frequent label of each item.

    Parameters
    ----------
    annotations : DataFrame
        Long format, one row per annotation (``item, annotator, label``; crowd-kit's
        ``task, worker, label`` work too). The annotator column is optional. Missing labels
        are ignored.
    item, annotator, label : str, optional
        Column names, found among the usual aliases when not given.
    ties : {"random", "first", "abstain", "error"}, default "random"
        What to do when several categories share the most votes: pick one of them at random
        (seeded by ``random_state``), pick the first in sorted category order, leave the item
        without a label (None), or raise :class:`InvalidInputError` naming the tied items.
        Tied items are flagged in ``Aggregation.tied`` whatever the policy.
    random_state : int or None, default 0
        Seed for ``ties="random"``.

    Returns
    -------
    Aggregation
        ``probs`` holds each item's vote shares; ``annotator_quality`` each annotator's share
        of labels equal to the aggregated label (over items that have one).

    Examples
    --------
    >>> df = pd.DataFrame({
    ...     "item": [1, 1, 1, 2, 2],
    ...     "annotator": ["a", "b", "c", "a", "b"],
    ...     "label": ["pos", "pos", "neg", "neg", "pos"],
    ... })
    >>> res = majority_vote(df, ties="abstain")
    >>> res.labels.tolist(), res.tied.tolist()
    (['pos', None], [False, True])
    >>> majority_vote(df, ties="first").labels.tolist()
    ['pos', 'neg']
    """
    check_choice(ties, "ties", _TIES)
    ann = to_annotations(annotations, item=item, annotator=annotator, label=label)
    counts = ann.counts()
    n_ann = counts.sum(axis=1)
    empty = np.flatnonzero(n_ann == 0)
    if len(empty):
        raise InvalidInputError(
            f"no annotation to vote on in {format_items(ann.items[empty].tolist())}; "
            "drop them or label them"
        )
    top = counts.max(axis=1, keepdims=True)
    is_top = counts == top
    tied = is_top.sum(axis=1) > 1
    if ties == "error" and tied.any():
        raise InvalidInputError(
            f"tied votes on {format_items(ann.items[tied].tolist())}; choose another "
            "tie policy (random, first, abstain) or collect more labels"
        )
    winner = is_top.argmax(axis=1)
    if ties == "random" and tied.any():
        rng = np.random.default_rng(random_state)
        for i in np.flatnonzero(tied):
            winner[i] = rng.choice(np.flatnonzero(is_top[i]))
    probs = counts / n_ann[:, None]
    classes = np.asarray(ann.classes, dtype=object)
    labels = classes[winner].astype(object)
    support = probs[np.arange(len(winner)), winner]
    decided = np.ones(len(winner), dtype=bool)
    if ties == "abstain":
        labels[tied] = None
        support = np.where(tied, 0.0, support)
        decided = ~tied
    quality = None
    if ann.annotators is not None:
        quality = annotator_agreement_with(ann, winner, decided)
    return Aggregation(
        method="majority_vote",
        items=ann.items,
        labels=labels,
        classes=ann.classes,
        probs=probs,
        support=support,
        n_annotations=n_ann,
        tied=tied,
        annotators=ann.annotators,
        annotator_quality=quality,
    )


def annotator_agreement_with(
    ann: Annotations, item_labels: np.ndarray, decided: np.ndarray | None = None
) -> np.ndarray:
    """Each annotator's share of labels equal to ``item_labels`` (class codes per item).

    Items where ``decided`` is False are skipped; an annotator with no such item gets NaN.
    """
    if ann.annotators is None:
        raise InvalidInputError("per-annotator statistics need annotator ids")
    mask = np.ones(len(ann.item_codes), dtype=bool)
    if decided is not None:
        mask = decided[ann.item_codes]
    hits = (ann.label_codes == item_labels[ann.item_codes]) & mask
    n_annot = len(ann.annotators)
    total = np.bincount(ann.annotator_codes[mask], minlength=n_annot).astype(float)
    good = np.bincount(ann.annotator_codes[hits], minlength=n_annot).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, good / np.maximum(total, 1), np.nan)
