"""Crowd annotations encoded against a dataset's rows and label set (noise methods, CROWDLAB).

:func:`labelaudit.agreement.to_annotations` with ``ids=`` and ``classes=`` calls
:func:`encode_rows` and returns an :class:`~labelaudit.agreement.Annotations`.
:class:`Crowd` and :func:`crowd_from_annotations` are the former encoding, deprecated.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from labelaudit._errors import InvalidInputError, format_rows
from labelaudit.agreement._annotations import Annotations, to_annotations
from labelaudit.agreement._labels import clean_label
from labelaudit.agreement._nested import nested_to_long

__all__ = ["Crowd", "crowd_from_annotations", "encode_rows"]


def encode_rows(
    annotations: pd.DataFrame | pd.Series | Sequence[object], *,
    ids: np.ndarray | Sequence[object], classes: np.ndarray | Sequence[object],
    item: str | None = None, annotator: str | None = None, label: str | None = None,
) -> Annotations:
    """Encode crowd annotations against the rows and the label set of a dataset.

    ``annotations`` is either a long table (one row per annotation: ``item_id``,
    ``annotator_id``, ``label``, or the aliases :func:`labelaudit.agreement.to_annotations`
    knows) whose item ids are the dataset's ``ids``, or one entry per row: a list of plain
    labels or of ``{"worker": id, "label": value}`` objects (JSON text is parsed).

    Examples
    --------
    >>> ann = encode_rows([["a", "b"], ["b"]], ids=np.arange(2), classes=np.array(["a", "b"]))
    >>> ann.counts().tolist(), ann.n_annotators
    ([[1, 1], [0, 1]], 0)
    """
    id_values = np.asarray(ids).tolist()
    class_values = np.asarray(classes).tolist()
    n = len(id_values)
    if isinstance(annotations, pd.DataFrame):
        long = annotations
        position = {clean_label(v): i for i, v in enumerate(id_values)}
    else:
        long = _nested_rows(annotations, n)
        item, annotator, label = "item", "annotator", "label"
        position = {i: i for i in range(n)}
    if len(long) == 0:
        return _empty(id_values, class_values)
    ann = to_annotations(long, item=item, annotator=annotator, label=label)
    rows = np.array([position.get(clean_label(v), -1) for v in ann.items.tolist()],
                    dtype=np.int64)
    if (rows < 0).any():
        raise InvalidInputError(
            f"the annotations name items that are not in the data: "
            f"{format_rows(ann.items[rows < 0].tolist())}; item ids must match the id column "
            "(or row numbers 0..n-1 without one)"
        )
    index = {clean_label(c): i for i, c in enumerate(class_values)}
    codes = np.array([index.get(clean_label(c), -1) for c in ann.classes], dtype=np.int64)
    if (codes < 0).any():
        unknown = [c for c, k in zip(ann.classes, codes, strict=True) if k < 0]
        bad = np.isin(ann.label_codes, np.flatnonzero(codes < 0))
        where = pd.unique(ann.items[ann.item_codes[bad]])
        raise InvalidInputError(
            f"the annotations use labels outside the label set {class_values}: "
            f"{unknown}, in {format_rows(where)}; "
            "map them to dataset labels or pass the full label set as classes"
        )
    return Annotations(items=_objects(id_values), classes=tuple(class_values),
                       annotators=ann.annotators, item_codes=rows[ann.item_codes],
                       annotator_codes=ann.annotator_codes.astype(np.int64),
                       label_codes=codes[ann.label_codes])


def _nested_rows(annotations: pd.Series | Sequence[object], n: int) -> pd.DataFrame:
    """One list of annotations per row, as a long table whose items are row numbers."""
    values = list(annotations)
    if len(values) != n:
        raise InvalidInputError(
            f"annotations has {len(values)} entries but there are {n} labels; give one "
            "list of annotations per row, or a long table (item_id, annotator_id, label)"
        )
    nested = pd.DataFrame({"item": np.arange(n), "annotations": pd.Series(values, dtype=object)})
    long = nested_to_long(nested, item="item", annotations="annotations")
    if long["annotator"].notna().any() and long["annotator"].isna().any():
        without = pd.unique(long.loc[long["annotator"].isna(), "item"])
        raise InvalidInputError(
            "give every annotation an annotator id or none at all: "
            f"{format_rows(without)} have annotations without one"
        )
    return long


def _objects(values: list) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def _empty(ids: list, classes: list) -> Annotations:
    empty = np.zeros(0, dtype=np.int64)
    return Annotations(items=_objects(ids), classes=tuple(classes), annotators=None,
                       item_codes=empty, annotator_codes=empty, label_codes=empty)


@dataclass(frozen=True)
class Crowd:
    """Deprecated: the former encoding of crowd labels; use :class:`Annotations`.

    ``items``, ``workers`` and ``labels`` are :attr:`Annotations.item_codes`,
    :attr:`~Annotations.annotator_codes` and :attr:`~Annotations.label_codes`; ``counts`` is
    :meth:`Annotations.counts` and ``n_workers`` :attr:`Annotations.n_annotators`.
    """

    items: np.ndarray
    workers: np.ndarray
    labels: np.ndarray
    counts: np.ndarray
    n_workers: int

    @classmethod
    def of(cls, annotations: Annotations) -> Crowd:
        """The legacy view of encoded annotations."""
        return cls(items=annotations.item_codes, workers=annotations.annotator_codes,
                   labels=annotations.label_codes, counts=annotations.counts(),
                   n_workers=annotations.n_annotators)


def crowd_from_annotations(
    annotations: pd.DataFrame | pd.Series | Sequence[object], *, ids: np.ndarray,
    classes: np.ndarray,
) -> Crowd:
    """Deprecated: use ``labelaudit.agreement.to_annotations(annotations, ids=, classes=)``.

    Encodes crowd annotations against the rows and the label set of a dataset (see
    :func:`encode_rows`) and returns them as the former :class:`Crowd`.
    """
    warnings.warn(
        "crowd_from_annotations is deprecated and will be removed in the next release; use "
        "labelaudit.agreement.to_annotations(annotations, ids=ids, classes=classes), which "
        "returns an Annotations", DeprecationWarning, stacklevel=2)
    return Crowd.of(encode_rows(annotations, ids=ids, classes=classes))
