"""Crowd annotations (:class:`Annotations`, the one crowd-label type) from the long format,
one row per (item, annotator, label) as in crowd-kit, or the nested one, a list per item
(:func:`nested_to_long`); blank labels are dropped with a :class:`DroppedAnnotationsWarning`.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from labelaudit._errors import (
    InvalidInputError,
    InvalidParameterError,
    LabelAuditWarning,
    format_rows,
)
from labelaudit.io._labels import (
    clean_label,
    format_items,
    is_empty_label,
    is_missing,
    label_kind,
)

if TYPE_CHECKING:
    import pandas as pd

ITEM_ALIASES = ("item", "item_id", "task", "task_id", "id")
ANNOTATOR_ALIASES = ("annotator", "annotator_id", "worker", "worker_id", "rater")
LABEL_ALIASES = ("label",)


class DroppedAnnotationsWarning(LabelAuditWarning):
    """Some annotations (or items) were left out: empty labels, empty annotation lists."""


@dataclass(frozen=True)
class Annotations:
    """Crowd annotations in canonical long form, with integer codes (built by
    :func:`to_annotations`).

    Attributes
    ----------
    items, annotators
        Item and annotator ids in order of first appearance (a dataset's ids when encoded
        against it, items without annotations kept); ``annotators`` None if none.
    classes
        The sorted distinct labels, or the dataset's label set.
    item_codes, annotator_codes, label_codes
        Index of each annotation's item, annotator (-1 when unknown) and label, shape
        (n_annotations,).

    Examples
    --------
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
        return 0 if self.annotators is None else len(self.annotators)

    def counts(self) -> np.ndarray:
        """Category counts of shape (n_items, n_classes)."""
        out = np.zeros((self.n_items, self.n_classes), dtype=np.int64)
        np.add.at(out, (self.item_codes, self.label_codes), 1)
        return out

    def to_matrix(self) -> np.ndarray:
        """Class indices, shape (n_items, n_annotators), NaN where missing: CROWDLAB's
        ``labels_multiannotator``."""
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
        annot = (self.annotators[self.annotator_codes] if self.annotators is not None
                 else np.full(len(self.item_codes), None, dtype=object))
        return pd.DataFrame({"item": self.items[self.item_codes], "annotator": annot,
                             "label": np.asarray(self.classes, dtype=object)[self.label_codes]})


def to_annotations(
    annotations: pd.DataFrame | Annotations | Sequence[object],
    *,
    item: str | None = None,
    annotator: str | None = None,
    label: str | None = None,
    ids: np.ndarray | Sequence[object] | None = None,
    classes: np.ndarray | Sequence[object] | None = None,
) -> Annotations:
    """Validate a long annotation table and encode it.

    Parameters
    ----------
    annotations
        Long format, one row per annotation (an :class:`Annotations` is returned as is);
        with ``ids``, also one list per row as in :func:`nested_to_long`.
    item, annotator, label
        Column names, else found among the usual aliases (``item_id``, ``task``, ``worker``...);
        the annotator column is optional.
    ids, classes
        A dataset's row ids, shape (n_samples,), and label set, given together: item ``i``
        is row ``i`` and label code ``k`` is ``classes[k]``.

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
    >>> import pandas as pd
    >>> df = pd.DataFrame({"task": ["a", "a", "b"], "worker": [1, 2, 1], "label": ["x", "y", "x"]})
    >>> ann = to_annotations(df)
    >>> ann.classes, ann.counts().tolist()
    (('x', 'y'), [[1, 1], [1, 0]])
    """
    import pandas as pd
    if isinstance(annotations, Annotations):
        return annotations
    if ids is not None or classes is not None:
        if ids is None or classes is None:
            raise InvalidParameterError("give ids and classes together, or neither")
        return _encode_rows(annotations, ids=ids, classes=classes, item=item,
                            annotator=annotator, label=label)
    if not isinstance(annotations, pd.DataFrame):
        raise InvalidParameterError(
            f"annotations must be a pandas DataFrame, got {type(annotations).__name__} (one "
            "list of annotations per row is read only against a dataset: pass ids= and classes=)")
    return _encode_long(annotations, item=item, annotator=annotator, label=label)


def _pick(columns: Sequence[str], given: str | None, aliases: tuple, what: str) -> str | None:
    if given is not None:
        if given not in columns:
            raise InvalidInputError(
                f"no {what} column {given!r} in the annotations; columns are {list(columns)}")
        return given
    for name in aliases:
        if name in columns:
            return name
    return None


def _encode_long(annotations: pd.DataFrame, *, item: str | None = None,
                 annotator: str | None = None, label: str | None = None) -> Annotations:
    """A long annotation table (one row per annotation), validated and encoded."""
    import pandas as pd
    cols = list(annotations.columns)
    item_col = _pick(cols, item, ITEM_ALIASES, "item")
    label_col = _pick(cols, label, LABEL_ALIASES, "label")
    if item_col is None or label_col is None:
        raise InvalidInputError(
            f"cannot find the item and label columns among {cols}; name them with "
            "item=... and label=... (the long format is one row per item, annotator, label)")
    annot_col = _pick(cols, annotator, ANNOTATOR_ALIASES, "annotator")
    if len(annotations) == 0:
        raise InvalidInputError("the annotation table is empty: there is nothing to measure")

    item_values = annotations[item_col].to_numpy(dtype=object)
    raw_labels = annotations[label_col].to_numpy(dtype=object)
    missing_item = [i for i, v in enumerate(item_values) if is_missing(v)]
    if missing_item:
        raise InvalidInputError(
            f"the item column {item_col!r} is empty in {format_rows(missing_item)}; "
            "every annotation needs an item id")
    keep = np.array([not is_empty_label(v) for v in raw_labels], dtype=bool)
    if not keep.any():
        raise InvalidInputError(
            f"all {len(keep)} annotations have an empty or missing label (column {label_col!r}): "
            "there is nothing to measure; check the label column (label=... or --label)",
            param="label")
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
    # _warn_dropped < _encode_long < to_annotations < its caller
    warnings.warn(DroppedAnnotationsWarning(message), stacklevel=4)


def _encode_rows(
    annotations: pd.DataFrame | pd.Series | Sequence[object], *,
    ids: np.ndarray | Sequence[object], classes: np.ndarray | Sequence[object],
    item: str | None = None, annotator: str | None = None, label: str | None = None,
) -> Annotations:
    """Annotations (a long table, or one list per row) encoded against a dataset's rows."""
    import pandas as pd
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
        empty = np.zeros(0, dtype=np.int64)
        return Annotations(items=_objects(id_values), classes=tuple(class_values),
                           annotators=None, item_codes=empty, annotator_codes=empty,
                           label_codes=empty)
    ann = to_annotations(long, item=item, annotator=annotator, label=label)
    rows = np.array([position.get(clean_label(v), -1) for v in ann.items.tolist()], dtype=np.int64)
    if (rows < 0).any():
        raise InvalidInputError(
            f"the annotations name items that are not in the data: "
            f"{format_rows(ann.items[rows < 0].tolist())}; item ids must match the id column "
            "(or row numbers 0..n-1 without one)")
    index = {clean_label(c): i for i, c in enumerate(class_values)}
    codes = np.array([index.get(clean_label(c), -1) for c in ann.classes], dtype=np.int64)
    if (codes < 0).any():
        unknown = [c for c, k in zip(ann.classes, codes, strict=True) if k < 0]
        bad = np.isin(ann.label_codes, np.flatnonzero(codes < 0))
        where = pd.unique(ann.items[ann.item_codes[bad]])
        raise InvalidInputError(
            f"the annotations use labels outside the label set {class_values}: "
            f"{unknown}, in {format_rows(where)}; "
            "map them to dataset labels or pass the full label set as classes")
    return Annotations(items=_objects(id_values), classes=tuple(class_values),
                       annotators=ann.annotators, item_codes=rows[ann.item_codes],
                       annotator_codes=ann.annotator_codes.astype(np.int64),
                       label_codes=codes[ann.label_codes])


def _nested_rows(annotations: pd.Series | Sequence[object], n: int) -> pd.DataFrame:
    """One list of annotations per row, as a long table whose items are row numbers."""
    import pandas as pd
    values = list(annotations)
    if len(values) != n:
        raise InvalidInputError(
            f"annotations has {len(values)} entries but there are {n} labels; give one "
            "list of annotations per row, or a long table (item_id, annotator_id, label)")
    nested = pd.DataFrame({"item": np.arange(n), "annotations": pd.Series(values, dtype=object)})
    long = nested_to_long(nested, item="item", annotations="annotations")
    if long["annotator"].notna().any() and long["annotator"].isna().any():
        without = pd.unique(long.loc[long["annotator"].isna(), "item"])
        raise InvalidInputError(
            "give every annotation an annotator id or none at all: "
            f"{format_rows(without)} have annotations without one")
    return long


def _objects(values: list) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


_WORKER_KEYS = ("worker", "annotator", "worker_id", "annotator_id", "rater")
_LABEL_KEYS = ("label", "value", "answer")


def _parse_cell(cell: object, row: object) -> list[tuple[object, object]]:
    """(annotator or None, label) pairs of one nested cell."""
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
                "labels or of {'worker': id, 'label': value} objects")
    if is_missing(cell):
        return []
    if isinstance(cell, np.ndarray):
        cell = cell.tolist()
    if not isinstance(cell, (list, tuple)):
        raise InvalidInputError(
            f"the annotations of row {row!r} are a {type(cell).__name__}, not a list; expected "
            "a list of labels or of {'worker': id, 'label': value} objects")
    pairs = []
    for entry in cell:
        if isinstance(entry, dict):
            worker = next((entry[k] for k in _WORKER_KEYS if k in entry), None)
            key = next((k for k in _LABEL_KEYS if k in entry), None)
            if key is None:
                raise InvalidInputError(
                    f"an annotation of row {row!r} has no label key: {entry!r}; expected one "
                    f"of {list(_LABEL_KEYS)}")
            pairs.append((worker, entry[key]))
        else:
            pairs.append((None, entry))
    return pairs


def nested_to_long(frame: pd.DataFrame, *, item: str, annotations: str) -> pd.DataFrame:
    """Explode a per-item list column into a long table ``item, annotator, label``.

    Parameters
    ----------
    frame, item
        One row per item, and its item-id column.
    annotations
        The list column: plain labels (annotator None) or ``{"worker": id, "label": value}``
        objects; JSON text is parsed.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"id": [1, 2], "votes": [["a", "b"], [{"worker": "w1", "label": "a"}]]})
    >>> nested_to_long(df, item="id", annotations="votes").values.tolist()
    [[1, None, 'a'], [1, None, 'b'], [2, 'w1', 'a']]
    """
    import pandas as pd
    for col in (item, annotations):
        if col not in frame.columns:
            raise InvalidInputError(
                f"no column {col!r} in the input; columns are {list(frame.columns)}")
    items, workers, labels = [], [], []
    for item_id, cell in zip(frame[item].tolist(), frame[annotations].tolist(), strict=True):
        for worker, value in _parse_cell(cell, item_id):
            items.append(item_id)
            workers.append(worker)
            labels.append(value)
    return pd.DataFrame({"item": items, "annotator": workers, "label": labels}, dtype=object)
