"""Normalise crowd annotations to one long table, the data format of crowd labels.

Two input shapes are accepted everywhere annotations are read (:mod:`labelaudit.agreement`,
the noise methods of :mod:`labelaudit.noise`, CROWDLAB in :mod:`labelaudit.detect`):

* long format, one row per (item, annotator, label), as in crowd-kit. Column names are
  given explicitly or found among the usual aliases (``item``/``item_id``/``task``,
  ``annotator``/``annotator_id``/``worker``, ``label``);
* nested format, one row per item with a list column holding either plain labels
  (``["yes", "no", "yes"]``, annotators unknown) or ``{"worker": id, "label": value}``
  objects.

Missing annotations (``None``/``NaN`` or blank labels) are dropped, with a
:class:`DroppedAnnotationsWarning` that counts them. Labels must all be strings or all be
numbers; the categories are their sorted distinct values.

:class:`Annotations` is the one crowd-label type of labelaudit: agreement statistics read its
counts and codes, the noise methods its long-format codes, CROWDLAB its
:meth:`~Annotations.to_matrix`.
Given a dataset's ``ids`` and ``classes``, :func:`to_annotations` encodes the annotations
against its rows and label set (per-row lists of labels are accepted then too).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from labelaudit._errors import InvalidInputError, InvalidParameterError, format_rows
from labelaudit.io._annotation_labels import clean_label
from labelaudit.io._annotation_table import Annotations, encode_long
from labelaudit.io._nested import nested_to_long

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["encode_rows", "to_annotations"]


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
    annotations : DataFrame, Annotations or sequence
        Long format, one row per annotation. An :class:`Annotations` is returned unchanged.
        With ``ids`` and ``classes``, also one entry per dataset row: a list of plain labels
        or of ``{"worker": id, "label": value}`` objects (JSON text is parsed).
    item, annotator, label : str, optional
        Column names; found among the usual aliases when not given (``item``, ``item_id``,
        ``task``; ``annotator``, ``annotator_id``, ``worker``; ``label``). The annotator column
        is optional.
    ids : array-like of shape (n_samples,), optional
        A dataset's row ids: encode the annotations against its rows (item ``i`` is row ``i``;
        a long table's item ids must be among ``ids``). Give ``classes`` with it.
    classes : array-like of shape (n_classes,), optional
        The dataset's label set (label code ``k`` is ``classes[k]``); every annotation's
        label must be in it. Give ``ids`` with it.

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
    import pandas as pd
    if isinstance(annotations, Annotations):
        return annotations
    if ids is not None or classes is not None:
        if ids is None or classes is None:
            raise InvalidParameterError("give ids and classes together, or neither")
        return encode_rows(annotations, ids=ids, classes=classes, item=item,
                           annotator=annotator, label=label)
    if not isinstance(annotations, pd.DataFrame):
        raise InvalidParameterError(
            f"annotations must be a pandas DataFrame, got {type(annotations).__name__} (one "
            "list of annotations per row is read only against a dataset: pass ids= and classes=)"
        )
    return encode_long(annotations, item=item, annotator=annotator, label=label)


def encode_rows(
    annotations: pd.DataFrame | pd.Series | Sequence[object], *,
    ids: np.ndarray | Sequence[object], classes: np.ndarray | Sequence[object],
    item: str | None = None, annotator: str | None = None, label: str | None = None,
) -> Annotations:
    """Encode crowd annotations against the rows and the label set of a dataset.

    ``annotations`` is either a long table (one row per annotation: ``item_id``,
    ``annotator_id``, ``label``, or the aliases :func:`to_annotations` knows) whose item
    ids are the dataset's ``ids``, or one entry per row: a list of plain labels or of
    ``{"worker": id, "label": value}`` objects (JSON text is parsed).

    Examples
    --------
    >>> ann = encode_rows([["a", "b"], ["b"]], ids=np.arange(2), classes=np.array(["a", "b"]))
    >>> ann.counts().tolist(), ann.n_annotators
    ([[1, 1], [0, 1]], 0)
    """
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
    import pandas as pd
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
