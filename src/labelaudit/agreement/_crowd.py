"""Crowd annotations encoded against a dataset's rows and label set (for noise and CROWDLAB)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from labelaudit._errors import InvalidInputError, format_rows
from labelaudit.agreement._labels import clean_label
from labelaudit.agreement._nested import nested_to_long

__all__ = ["Crowd", "crowd_from_annotations"]


@dataclass(frozen=True)
class Crowd:
    """Crowd annotations encoded against the dataset's label set.

    Attributes
    ----------
    items, workers, labels : ndarray of int, shape (n_annotations,)
        Row of the dataset, annotator code (-1 when unknown) and class index of each
        annotation.
    counts : ndarray of int, shape (n_samples, n_classes)
        How many annotators gave each item each class.
    n_workers : int
        Number of distinct known annotators (0 when the annotations carry no ids).
    """

    items: np.ndarray
    workers: np.ndarray
    labels: np.ndarray
    counts: np.ndarray
    n_workers: int


def crowd_from_annotations(
    annotations: pd.DataFrame | pd.Series | Sequence[object], *, ids: np.ndarray,
    classes: np.ndarray,
) -> Crowd:
    """Encode crowd annotations against the rows and the label set of a dataset.

    ``annotations`` is either a long table (one row per annotation: ``item_id``,
    ``annotator_id``, ``label``, or the aliases :func:`labelaudit.agreement.to_annotations`
    knows) whose item ids are the dataset's ``ids``, or one entry per row: a list of plain
    labels or of ``{"worker": id, "label": value}`` objects (JSON text is parsed).

    Examples
    --------
    >>> crowd = crowd_from_annotations([["a", "b"], ["b"]], ids=np.arange(2),
    ...                                classes=np.array(["a", "b"]))
    >>> crowd.counts.tolist(), crowd.n_workers
    ([[1, 1], [0, 1]], 0)
    """
    n = len(ids)
    if isinstance(annotations, pd.DataFrame):
        long = annotations
        position = {clean_label(v): i for i, v in enumerate(np.asarray(ids).tolist())}
    else:
        values = list(annotations)
        if len(values) != n:
            raise InvalidInputError(
                f"annotations has {len(values)} entries but there are {n} labels; give one "
                "list of annotations per row, or a long table (item_id, annotator_id, label)"
            )
        nested = pd.DataFrame({"item": np.arange(n),
                               "annotations": pd.Series(values, dtype=object)})
        long = nested_to_long(nested, item="item", annotations="annotations")
        if long["annotator"].notna().any() and long["annotator"].isna().any():
            without = pd.unique(long.loc[long["annotator"].isna(), "item"])
            raise InvalidInputError(
                "give every annotation an annotator id or none at all: "
                f"{format_rows(without)} have annotations without one"
            )
        position = {i: i for i in range(n)}
        if len(long) == 0:
            return _empty_crowd(n, len(classes))
    if len(long) == 0:
        return _empty_crowd(n, len(classes))
    from labelaudit.agreement._annotations import to_annotations

    ann = to_annotations(long)
    rows = np.array([position.get(clean_label(v), -1) for v in ann.items.tolist()],
                    dtype=np.int64)
    if (rows < 0).any():
        raise InvalidInputError(
            f"the annotations name items that are not in the data: "
            f"{format_rows(ann.items[rows < 0].tolist())}; item ids must match the id column "
            "(or row numbers 0..n-1 without one)"
        )
    index = {clean_label(c): i for i, c in enumerate(np.asarray(classes).tolist())}
    codes = np.array([index.get(clean_label(c), -1) for c in ann.classes], dtype=np.int64)
    if (codes < 0).any():
        unknown = [c for c, k in zip(ann.classes, codes, strict=True) if k < 0]
        bad = np.isin(ann.label_codes, np.flatnonzero(codes < 0))
        where = pd.unique(ann.items[ann.item_codes[bad]])
        raise InvalidInputError(
            f"the annotations use labels outside the label set {np.asarray(classes).tolist()}: "
            f"{unknown}, in {format_rows(where)}; "
            "map them to dataset labels or pass the full label set as classes"
        )
    items = rows[ann.item_codes]
    labels = codes[ann.label_codes]
    counts = np.zeros((n, len(classes)), dtype=np.int64)
    np.add.at(counts, (items, labels), 1)
    n_workers = 0 if ann.annotators is None else len(ann.annotators)
    return Crowd(items=items, workers=ann.annotator_codes.astype(np.int64), labels=labels,
                 counts=counts, n_workers=n_workers)


def _empty_crowd(n: int, n_classes: int) -> Crowd:
    empty = np.zeros(0, dtype=np.int64)
    return Crowd(items=empty, workers=empty, labels=empty,
                 counts=np.zeros((n, n_classes), dtype=np.int64), n_workers=0)
