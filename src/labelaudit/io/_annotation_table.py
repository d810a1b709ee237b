"""The long-format annotation table: :class:`Annotations` and the encoding of a long table.

:func:`labelaudit.io.to_annotations` (in :mod:`labelaudit.io._annotations`) is the entry
point; it calls :func:`encode_long` for a long table.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from labelaudit._errors import InvalidInputError, LabelAuditWarning, format_rows
from labelaudit.io._annotation_labels import (
    clean_label,
    format_items,
    is_empty_label,
    is_missing,
    label_kind,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "ANNOTATOR_ALIASES",
    "Annotations",
    "DroppedAnnotationsWarning",
    "ITEM_ALIASES",
    "LABEL_ALIASES",
    "encode_long",
]

ITEM_ALIASES = ("item", "item_id", "task", "task_id", "id")
ANNOTATOR_ALIASES = ("annotator", "annotator_id", "worker", "worker_id", "rater")
LABEL_ALIASES = ("label",)


class DroppedAnnotationsWarning(LabelAuditWarning):
    """Some annotations (or items) were left out: empty labels, empty annotation lists."""


@dataclass(frozen=True)
class Annotations:
    """Crowd annotations in canonical long form, with integer codes.

    Built by :func:`to_annotations`: from a long table alone, or encoded against a dataset's
    rows and label set (``ids=``, ``classes=``), where item ``i`` is the dataset's row ``i``
    and label code ``k`` its class ``k``.

    Attributes
    ----------
    items : ndarray of shape (n_items,)
        Item ids in order of first appearance (the dataset's ids, in row order, when encoded
        against a dataset; items without annotations are kept).
    classes : tuple
        The sorted distinct labels (user values), or the dataset's label set.
    annotators : ndarray of shape (n_annotators,) or None
        Annotator ids in order of first appearance; None when the input had none.
    item_codes, annotator_codes, label_codes : ndarray of shape (n_annotations,)
        Index of each annotation's item, annotator (-1 when unknown) and label.

    Examples
    --------
    >>> from labelaudit.io import to_annotations
    >>> ann = to_annotations([["a", "b"], ["b"]], ids=np.arange(2), classes=np.array(["a", "b"]))
    >>> ann.item_codes.tolist(), ann.label_codes.tolist(), ann.n_annotators
    ([0, 0, 1], [0, 1, 1], 0)
    >>> ann.counts().tolist()
    [[1, 1], [0, 1]]
    >>> ann.to_matrix().tolist()
    [[0.0, 1.0], [1.0, nan]]
    """

    items: np.ndarray
    classes: tuple
    annotators: np.ndarray | None
    item_codes: np.ndarray
    annotator_codes: np.ndarray
    label_codes: np.ndarray

    @property
    def n_items(self) -> int:
        return len(self.items)

    @property
    def n_classes(self) -> int:
        return len(self.classes)

    @property
    def n_annotators(self) -> int:
        """Number of distinct known annotators (0 when the annotations carry no ids)."""
        return 0 if self.annotators is None else len(self.annotators)

    def counts(self) -> np.ndarray:
        """Category counts of shape (n_items, n_classes)."""
        out = np.zeros((self.n_items, self.n_classes), dtype=np.int64)
        np.add.at(out, (self.item_codes, self.label_codes), 1)
        return out

    def to_matrix(self) -> np.ndarray:
        """The labels as an (n_items, n_annotators) array of class indices, NaN where missing.

        The ``labels_multiannotator`` input of cleanlab's CROWDLAB. Without annotator ids the
        k-th label of every item is treated as annotator k.

        Returns
        -------
        ndarray of float, shape (n_items, n_annotators)
        """
        import pandas as pd
        if self.annotators is not None:
            columns, n_columns = self.annotator_codes, len(self.annotators)
        else:  # the k-th label of each item is annotator k
            columns = pd.Series(self.item_codes).groupby(self.item_codes).cumcount().to_numpy()
            n_columns = int(columns.max()) + 1 if len(columns) else 0
        matrix = np.full((self.n_items, n_columns), np.nan)
        matrix[self.item_codes, columns] = self.label_codes
        return matrix

    def to_frame(self) -> pd.DataFrame:
        """The long table with columns ``item, annotator, label``."""
        import pandas as pd
        annot = (
            self.annotators[self.annotator_codes]
            if self.annotators is not None
            else np.full(len(self.item_codes), None, dtype=object)
        )
        return pd.DataFrame(
            {
                "item": self.items[self.item_codes],
                "annotator": annot,
                "label": np.asarray(self.classes, dtype=object)[self.label_codes],
            }
        )


def _pick(columns: Sequence[str], given: str | None, aliases: tuple, what: str) -> str | None:
    if given is not None:
        if given not in columns:
            raise InvalidInputError(
                f"no {what} column {given!r} in the annotations; columns are {list(columns)}"
            )
        return given
    for name in aliases:
        if name in columns:
            return name
    return None


def encode_long(annotations: pd.DataFrame, *, item: str | None = None,
                annotator: str | None = None, label: str | None = None) -> Annotations:
    """Validate a long annotation table (one row per annotation) and encode it.

    Called by :func:`labelaudit.io.to_annotations`, which documents the parameters; the
    warning for dropped annotations names the caller of ``to_annotations``.
    """
    import pandas as pd
    cols = list(annotations.columns)
    item_col = _pick(cols, item, ITEM_ALIASES, "item")
    label_col = _pick(cols, label, LABEL_ALIASES, "label")
    if item_col is None or label_col is None:
        raise InvalidInputError(
            f"cannot find the item and label columns among {cols}; name them with "
            "item=... and label=... (the long format is one row per item, annotator, label)"
        )
    annot_col = _pick(cols, annotator, ANNOTATOR_ALIASES, "annotator")
    if len(annotations) == 0:
        raise InvalidInputError("the annotation table is empty: there is nothing to measure")

    item_values = annotations[item_col].to_numpy(dtype=object)
    raw_labels = annotations[label_col].to_numpy(dtype=object)
    missing_item = [i for i, v in enumerate(item_values) if is_missing(v)]
    if missing_item:
        raise InvalidInputError(
            f"the item column {item_col!r} is empty in {format_rows(missing_item)}; "
            "every annotation needs an item id"
        )
    keep = np.array([not is_empty_label(v) for v in raw_labels], dtype=bool)
    if not keep.any():
        raise InvalidInputError(
            f"all {len(keep)} annotations have an empty or missing label (column {label_col!r}): "
            "there is nothing to measure; check the label column (label=... or --label)"
        )
    positions = np.flatnonzero(keep)
    classes, label_codes = _label_codes(raw_labels[keep], positions, label_col)

    item_codes_all, item_uniques = pd.factorize(pd.Series(item_values, dtype=object), sort=False)
    # items whose every annotation is missing still appear, with no annotations
    items = np.asarray(item_uniques, dtype=object)
    item_codes = item_codes_all[keep].astype(np.int64)
    if not keep.all():
        _warn_dropped(keep, items, item_codes, label_col)

    annotators, annotator_codes = _annotator_codes(
        None if annot_col is None else annotations[annot_col].to_numpy(dtype=object)[keep],
        annot_col, item_codes, positions)
    return Annotations(
        items=items,
        classes=classes,
        annotators=annotators,
        item_codes=item_codes,
        annotator_codes=annotator_codes,
        label_codes=label_codes,
    )


def _label_codes(labels: np.ndarray, positions: np.ndarray, column: str
                 ) -> tuple[tuple, np.ndarray]:
    """The sorted classes and each label's index; the labels must be of one kind."""
    values = [clean_label(v) for v in labels]
    kinds = [label_kind(v) for v in values]
    odd = [int(positions[i]) for i, k in enumerate(kinds) if k != kinds[0]]
    if odd or kinds[0] not in ("str", "number"):
        raise InvalidInputError(
            f"labels of mixed or unsupported types in column {column!r}: row "
            f"{positions[0]} is {kinds[0]}, {format_rows(odd or [int(positions[0])])} differ; "
            "labels must be all strings or all numbers (convert the column to one type)")
    classes = tuple(sorted(set(values)))  # type: ignore[type-var]  # one kind, checked above
    index = {c: i for i, c in enumerate(classes)}
    return classes, np.array([index[v] for v in values], dtype=np.int64)


def _annotator_codes(values: np.ndarray | None, column: str | None, item_codes: np.ndarray,
                     positions: np.ndarray) -> tuple[np.ndarray | None, np.ndarray]:
    """The annotators and each annotation's code (-1 and None without annotator ids)."""
    import pandas as pd
    known = (np.zeros(len(item_codes), dtype=bool) if values is None
             else np.array([not is_missing(v) for v in values], dtype=bool))
    if not known.any():
        return None, np.full(len(item_codes), -1, dtype=np.int64)
    if not known.all():
        raise InvalidInputError(
            f"the annotator column {column!r} is empty in "
            f"{format_rows(positions[~known].tolist())}; give every annotation an "
            "annotator id or none at all")
    codes, uniques = pd.factorize(pd.Series(values, dtype=object), sort=False)
    codes = codes.astype(np.int64)
    dup = np.flatnonzero(pd.Series(item_codes * (len(uniques) + 1) + codes).duplicated())
    if len(dup):
        raise InvalidInputError(
            f"an annotator labels the same item more than once in "
            f"{format_rows(positions[dup].tolist())}; keep one label per (item, annotator) pair")
    return np.asarray(uniques, dtype=object), codes


def _warn_dropped(keep: np.ndarray, items: np.ndarray, item_codes: np.ndarray,
                  label_col: str) -> None:
    """Count the annotations dropped for an empty label, and the items left with none."""
    empty = np.flatnonzero(~keep)
    bare = np.setdiff1d(np.arange(len(items)), item_codes)
    message = (f"dropped {len(empty)} of {len(keep)} annotations with an empty label in column "
               f"{label_col!r} ({format_rows(empty.tolist())})")
    if len(bare):
        message += (f"; {len(bare)} of {len(items)} items {'has' if len(bare) == 1 else 'have'} "
                    "no label left "
                    f"({format_items(items[bare].tolist())})")
    # _warn_dropped < encode_long < to_annotations < its caller
    warnings.warn(DroppedAnnotationsWarning(message), stacklevel=4)
