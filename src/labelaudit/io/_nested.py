"""Nested annotations: one row per item with a list of labels or of {worker, label} objects."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import numpy as np

from labelaudit._errors import InvalidInputError
from labelaudit.io._annotation_labels import is_missing

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["nested_to_long"]

_WORKER_KEYS = ("worker", "annotator", "worker_id", "annotator_id", "rater")
_LABEL_KEYS = ("label", "value", "answer")


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
    if is_missing(cell):
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
    import pandas as pd
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
