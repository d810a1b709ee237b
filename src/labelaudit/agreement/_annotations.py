"""Normalise crowd annotations to one long table and to per-item category counts.

Two input shapes are accepted everywhere in :mod:`labelaudit.agreement`:

* long format, one row per (item, annotator, label), as in crowd-kit. Column names are
  given explicitly or found among the usual aliases (``item``/``item_id``/``task``,
  ``annotator``/``annotator_id``/``worker``, ``label``);
* nested format, one row per item with a list column holding either plain labels
  (``["yes", "no", "yes"]``, annotators unknown) or ``{"worker": id, "label": value}``
  objects.

Missing annotations (``None``/``NaN`` or blank labels) are dropped, with a
:class:`DroppedAnnotationsWarning` that counts them. Labels must all be strings or all be
numbers; the categories are their sorted distinct values.
"""

from __future__ import annotations

import json
import math
import numbers
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from labelaudit._errors import InvalidInputError, InvalidParameterError, format_rows

__all__ = [
    "Annotations",
    "Crowd",
    "DroppedAnnotationsWarning",
    "annotation_counts",
    "clean_label",
    "crowd_from_annotations",
    "format_items",
    "nested_to_long",
    "to_annotations",
]

ITEM_ALIASES = ("item", "item_id", "task", "task_id", "id")
ANNOTATOR_ALIASES = ("annotator", "annotator_id", "worker", "worker_id", "rater")
LABEL_ALIASES = ("label",)
_WORKER_KEYS = ("worker", "annotator", "worker_id", "annotator_id", "rater")
_LABEL_KEYS = ("label", "value", "answer")


class DroppedAnnotationsWarning(UserWarning):
    """Some annotations (or items) were left out: empty labels, empty annotation lists."""


@dataclass(frozen=True)
class Annotations:
    """Annotations in canonical long form, with integer codes.

    Attributes
    ----------
    items : ndarray of shape (n_items,)
        Item ids in order of first appearance.
    classes : tuple
        The sorted distinct labels (user values).
    annotators : ndarray of shape (n_annotators,) or None
        Annotator ids in order of first appearance; None when the input had none.
    item_codes, annotator_codes, label_codes : ndarray of shape (n_annotations,)
        Index of each annotation's item, annotator (-1 when unknown) and label.
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

    def counts(self) -> np.ndarray:
        """Category counts of shape (n_items, n_classes)."""
        out = np.zeros((self.n_items, self.n_classes), dtype=np.int64)
        np.add.at(out, (self.item_codes, self.label_codes), 1)
        return out

    def to_frame(self) -> pd.DataFrame:
        """The long table with columns ``item, annotator, label``."""
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


def format_items(items: Sequence[object], *, limit: int = 5) -> str:
    """Name the first few offending items: ``"items 'a', 'b'"``, ``"item 3"``.

    Examples
    --------
    >>> format_items(["a", "b"])
    "items 'a', 'b'"
    """
    return "item" + format_rows(items, limit=limit)[3:]


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


def _is_missing(value: object) -> bool:
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    return isinstance(value, float) and math.isnan(value)


def _is_empty_label(value: object) -> bool:
    """A missing label: None, NaN, or a blank string."""
    return _is_missing(value) or (isinstance(value, str) and not value.strip())


def clean_label(value: object) -> object:
    """Turn numpy scalars into Python values and integral floats into ints."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _label_kind(value: object) -> str:
    if isinstance(value, str):
        return "str"
    if isinstance(value, numbers.Number):
        return "number"
    return type(value).__name__


def _parse_cell(cell: object, row: object) -> list[tuple[object, object]]:
    """(annotator, label) pairs of one nested cell; annotator is None when not given."""
    if isinstance(cell, str):
        text = cell.strip()
        if text.startswith("["):
            try:
                cell = json.loads(text)
            except json.JSONDecodeError as exc:
                raise InvalidInputError(
                    f"the annotations of row {row!r} are not a valid JSON list: {exc}"
                ) from exc
        else:
            raise InvalidInputError(
                f"the annotations of row {row!r} are a string, not a list; expected a list of "
                "labels or of {'worker': id, 'label': value} objects"
            )
    if _is_missing(cell):
        return []
    if isinstance(cell, np.ndarray):
        cell = cell.tolist()
    if not isinstance(cell, (list, tuple)):
        raise InvalidInputError(
            f"the annotations of row {row!r} are a {type(cell).__name__}, not a list; expected "
            "a list of labels or of {'worker': id, 'label': value} objects"
        )
    pairs = []
    for entry in cell:
        if isinstance(entry, dict):
            worker = next((entry[k] for k in _WORKER_KEYS if k in entry), None)
            key = next((k for k in _LABEL_KEYS if k in entry), None)
            if key is None:
                raise InvalidInputError(
                    f"an annotation of row {row!r} has no label key: {entry!r}; expected one "
                    f"of {list(_LABEL_KEYS)}"
                )
            pairs.append((worker, entry[key]))
        else:
            pairs.append((None, entry))
    return pairs


def nested_to_long(frame: pd.DataFrame, *, item: str, annotations: str) -> pd.DataFrame:
    """Explode a per-item list column into a long table ``item, annotator, label``.

    Parameters
    ----------
    frame : DataFrame
        One row per item.
    item : str
        The item-id column.
    annotations : str
        The list column: plain labels, or ``{"worker": id, "label": value}`` objects (JSON
        text is parsed). Annotators are None when the list holds plain labels.

    Examples
    --------
    >>> df = pd.DataFrame({"id": [1, 2], "votes": [["a", "b"], [{"worker": "w1", "label": "a"}]]})
    >>> nested_to_long(df, item="id", annotations="votes").values.tolist()
    [[1, None, 'a'], [1, None, 'b'], [2, 'w1', 'a']]
    """
    for col in (item, annotations):
        if col not in frame.columns:
            raise InvalidInputError(
                f"no column {col!r} in the input; columns are {list(frame.columns)}"
            )
    items, workers, labels = [], [], []
    for item_id, cell in zip(frame[item].tolist(), frame[annotations].tolist(), strict=True):
        for worker, value in _parse_cell(cell, item_id):
            items.append(item_id)
            workers.append(worker)
            labels.append(value)
    return pd.DataFrame({"item": items, "annotator": workers, "label": labels}, dtype=object)


def to_annotations(
    annotations: pd.DataFrame | Annotations,
    *,
    item: str | None = None,
    annotator: str | None = None,
    label: str | None = None,
) -> Annotations:
    """Validate a long annotation table and encode it.

    Parameters
    ----------
    annotations : DataFrame or Annotations
        Long format, one row per annotation. An :class:`Annotations` is returned unchanged.
    item, annotator, label : str, optional
        Column names; found among the usual aliases when not given (``item``, ``item_id``,
        ``task``; ``annotator``, ``annotator_id``, ``worker``; ``label``). The annotator column
        is optional.

    Returns
    -------
    Annotations

    Raises
    ------
    InvalidInputError
        Empty table, missing columns, labels of mixed types, or an annotator labelling the same
        item twice.

    Examples
    --------
    >>> df = pd.DataFrame({"task": ["a", "a", "b"], "worker": [1, 2, 1], "label": ["x", "y", "x"]})
    >>> ann = to_annotations(df)
    >>> ann.classes, ann.counts().tolist()
    (('x', 'y'), [[1, 1], [1, 0]])
    """
    if isinstance(annotations, Annotations):
        return annotations
    if not isinstance(annotations, pd.DataFrame):
        raise InvalidParameterError(
            f"annotations must be a pandas DataFrame, got {type(annotations).__name__}"
        )
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
    missing_item = [i for i, v in enumerate(item_values) if _is_missing(v)]
    if missing_item:
        raise InvalidInputError(
            f"the item column {item_col!r} is empty in {format_rows(missing_item)}; "
            "every annotation needs an item id"
        )
    keep = np.array([not _is_empty_label(v) for v in raw_labels], dtype=bool)
    if not keep.any():
        raise InvalidInputError(
            f"all {len(keep)} annotations have an empty or missing label (column {label_col!r}): "
            "there is nothing to measure; check the label column (label=... or --label)"
        )
    positions = np.flatnonzero(keep)
    labels = [clean_label(v) for v in raw_labels[keep]]
    kinds = [_label_kind(v) for v in labels]
    first_kind = kinds[0]
    odd = [int(positions[i]) for i, k in enumerate(kinds) if k != first_kind]
    if odd or first_kind not in ("str", "number"):
        bad = odd or [int(positions[0])]
        raise InvalidInputError(
            f"labels of mixed or unsupported types in column {label_col!r}: row "
            f"{positions[0]} is {first_kind}, {format_rows(bad)} differ; labels must be all "
            "strings or all numbers (convert the column to one type)"
        )
    classes = tuple(sorted(set(labels)))  # type: ignore[type-var]  # one kind, checked above
    class_index = {c: i for i, c in enumerate(classes)}
    label_codes = np.array([class_index[v] for v in labels], dtype=np.int64)

    item_codes_all, item_uniques = pd.factorize(pd.Series(item_values, dtype=object), sort=False)
    # items whose every annotation is missing still appear, with no annotations
    items = np.asarray(item_uniques, dtype=object)
    item_codes = item_codes_all[keep].astype(np.int64)
    if not keep.all():
        _warn_dropped(keep, items, item_codes, label_col)

    if annot_col is not None:
        annot_values = annotations[annot_col].to_numpy(dtype=object)[keep]
        known = np.array([not _is_missing(v) for v in annot_values], dtype=bool)
        if known.all():
            annot_codes, annot_uniques = pd.factorize(
                pd.Series(annot_values, dtype=object), sort=False
            )
            annotators: np.ndarray | None = np.asarray(annot_uniques, dtype=object)
            annotator_codes = annot_codes.astype(np.int64)
            pair = pd.Series(item_codes * (len(annot_uniques) + 1) + annotator_codes)
            dup = np.flatnonzero(pair.duplicated().to_numpy())
            if len(dup):
                raise InvalidInputError(
                    f"an annotator labels the same item more than once in "
                    f"{format_rows(positions[dup].tolist())}; keep one label per "
                    "(item, annotator) pair"
                )
        elif known.any():
            raise InvalidInputError(
                f"the annotator column {annot_col!r} is empty in "
                f"{format_rows(positions[~known].tolist())}; give every annotation an "
                "annotator id or none at all"
            )
        else:
            annotators, annotator_codes = None, np.full(len(labels), -1, dtype=np.int64)
    else:
        annotators, annotator_codes = None, np.full(len(labels), -1, dtype=np.int64)
    return Annotations(
        items=items,
        classes=classes,
        annotators=annotators,
        item_codes=item_codes,
        annotator_codes=annotator_codes,
        label_codes=label_codes,
    )


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
    warnings.warn(DroppedAnnotationsWarning(message), stacklevel=3)


def annotation_counts(
    annotations: pd.DataFrame | Annotations,
    *,
    item: str | None = None,
    annotator: str | None = None,
    label: str | None = None,
) -> pd.DataFrame:
    """Count how many annotators put each item in each category.

    Parameters
    ----------
    annotations : DataFrame
        Long format (see :func:`to_annotations`).
    item, annotator, label : str, optional
        Column names (found among the usual aliases when not given).

    Returns
    -------
    DataFrame of shape (n_items, n_classes)
        Indexed by item id, one column per category; the input of :func:`fleiss_kappa`.

    Examples
    --------
    >>> df = pd.DataFrame({"item": [1, 1, 1, 2, 2, 2], "label": list("aabbbb")})
    >>> counts = annotation_counts(df)
    >>> counts.columns.tolist(), counts.index.tolist(), counts.to_numpy().tolist()
    (['a', 'b'], [1, 2], [[2, 1], [0, 3]])
    """
    ann = to_annotations(annotations, item=item, annotator=annotator, label=label)
    frame = pd.DataFrame(ann.counts(), columns=list(ann.classes))
    frame.index = pd.Index(ann.items, name="item")
    frame.columns.name = None
    return frame


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
