"""Validate a table as a text-classification dataset."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from labelaudit._errors import InvalidInputError, format_rows
from labelaudit._validation import shown

__all__ = ["TextDataset", "encode_labels", "prepare_text_dataset", "require_columns"]


@dataclass(frozen=True)
class TextDataset:
    """A validated text (or text-pair) classification dataset.

    Attributes
    ----------
    ids : ndarray of shape (n_samples,)
        The user's ids, or row numbers when the table had no id column.
    texts : list of str
    text_pairs : list of str or None
        Second texts of sentence pairs (NLI), aligned with ``texts``.
    labels : ndarray of int, shape (n_samples,) or None
        Given labels encoded as indices into ``classes``; None for unlabelled data.
    classes : ndarray of shape (n_classes,)
        The user's label values, sorted.
    """

    ids: np.ndarray
    texts: list[str]
    text_pairs: list[str] | None
    labels: np.ndarray | None
    classes: np.ndarray

    def __len__(self) -> int:
        return len(self.texts)


def require_columns(frame: pd.DataFrame, columns: list[str]) -> None:
    """Raise :class:`InvalidInputError` naming missing columns and the ones there are."""
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise InvalidInputError(
            f"missing column{'s' if len(missing) > 1 else ''} {', '.join(map(repr, missing))}; "
            f"the table has {', '.join(map(repr, map(str, frame.columns[:12])))}"
        )


def _text_column(frame: pd.DataFrame, column: str, ids: np.ndarray) -> list[str]:
    values = frame[column]
    missing = values.isna().to_numpy()
    as_text = values.where(~missing, "").astype(str)
    empty = missing | (as_text.str.strip() == "").to_numpy()
    if empty.any():
        raise InvalidInputError(
            f"column {column!r} has empty or missing text in {format_rows(ids[empty])}; "
            "drop or fill those rows"
        )
    return as_text.tolist()


def encode_labels(
    values: pd.Series | np.ndarray, ids: np.ndarray, *, column: str = "label",
    classes: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Encode label values as integer indices into their sorted unique values.

    Returns ``(labels, classes)``. With ``classes`` given, values outside it are an error.

    Examples
    --------
    >>> labels, classes = encode_labels(pd.Series(["b", "a", "b"]), np.arange(3))
    >>> labels.tolist(), classes.tolist()
    ([1, 0, 1], ['a', 'b'])
    """
    series = pd.Series(values)
    missing = series.isna().to_numpy()
    if missing.any():
        raise InvalidInputError(
            f"column {column!r} has missing labels in {format_rows(ids[missing])}; "
            "label or drop those rows"
        )
    raw = series.to_numpy(dtype=object)
    kinds = {("number" if isinstance(v, (int, float, np.integer, np.floating))
              and not isinstance(v, bool) else type(v).__name__) for v in raw}
    if len(kinds) > 1:
        raise InvalidInputError(
            f"column {column!r} mixes label types ({', '.join(sorted(kinds))}); "
            "use all strings or all integers"
        )
    if kinds == {"number"}:
        floats = np.asarray(raw, dtype=float)
        if np.all(floats == np.round(floats)):
            raw = floats.astype(np.int64)
        else:
            raw = floats
    uniques = np.unique(raw) if classes is None else np.asarray(classes)
    index = {v: i for i, v in enumerate(uniques.tolist())}
    encoded = np.fromiter((index.get(v, -1) for v in np.asarray(raw).tolist()), dtype=np.int64,
                          count=len(raw))
    unknown = encoded < 0
    if unknown.any():
        raise InvalidInputError(
            f"column {column!r} has labels outside the training label set "
            f"{uniques.tolist()} in {format_rows(ids[unknown])}"
        )
    return encoded, uniques


def _value_kind(value: object) -> str:
    if isinstance(value, (bool, np.bool_)):
        return "bool"
    if isinstance(value, (int, float, np.integer, np.floating)):
        return "number"
    return type(value).__name__


def _ids(frame: pd.DataFrame, id_column: str | None) -> np.ndarray:
    if id_column is None:
        return np.arange(len(frame))
    ids = frame[id_column]
    if ids.isna().any():
        raise InvalidInputError(
            f"column {id_column!r} has missing ids in "
            f"{format_rows(np.flatnonzero(ids.isna().to_numpy()))}"
        )
    kinds = {_value_kind(v) for v in ids.tolist()}
    if len(kinds) > 1:
        firsts: dict[str, tuple[int, object]] = {}
        for row, value in enumerate(ids.tolist()):
            firsts.setdefault(_value_kind(value), (row, value))
        kinds_seen = ", ".join(f"{shown(v)} ({k}, row {r})" for k, (r, v) in firsts.items())
        raise InvalidInputError(
            f"column {id_column!r} mixes id types: {kinds_seen}; an id 2 and an id '2' would "
            "be two items; use all strings or all integers"
        )
    duplicated = ids.duplicated(keep=False).to_numpy()
    if duplicated.any():
        values = pd.unique(ids[duplicated])
        repeated = (", ".join(shown(v) for v in values[:5])
                    + (" ..." if len(values) > 5 else ""))
        raise InvalidInputError(
            f"column {id_column!r} has duplicate ids {repeated} in "
            f"{format_rows(np.flatnonzero(duplicated))}; ids must be unique"
        )
    return ids.to_numpy()


def prepare_text_dataset(
    frame: pd.DataFrame,
    *,
    text: str,
    label: str | None,
    text_pair: str | None = None,
    id: str | None = None,  # noqa: A002 - mirrors the CLI flag
    classes: np.ndarray | None = None,
    min_classes: int = 2,
) -> TextDataset:
    """Check a table and turn it into a :class:`TextDataset`.

    Raises :class:`InvalidInputError` naming the problem and the first offending rows:
    a missing column, empty or missing text, a missing label, duplicate ids, or fewer
    than ``min_classes`` classes.

    Examples
    --------
    >>> frame = pd.DataFrame({"text": ["good", "bad", "fine"], "label": ["pos", "neg", "pos"]})
    >>> data = prepare_text_dataset(frame, text="text", label="label")
    >>> data.labels.tolist(), data.classes.tolist()
    ([1, 0, 1], ['neg', 'pos'])
    """
    if len(frame) == 0:
        raise InvalidInputError("the table has no rows")
    columns = [text] + ([text_pair] if text_pair else []) + ([label] if label else [])
    columns += [id] if id else []
    require_columns(frame, columns)
    ids = _ids(frame, id)
    texts = _text_column(frame, text, ids)
    pairs = _text_column(frame, text_pair, ids) if text_pair else None
    labels = None
    if label is not None:
        labels, classes = encode_labels(frame[label], ids, column=label, classes=classes)
        present = np.unique(labels)
        if len(present) < min_classes:
            raise InvalidInputError(
                f"column {label!r} has {len(present)} class"
                f"{'es' if len(present) != 1 else ''} ({classes[present].tolist()}); "
                f"at least {min_classes} are needed to find label errors"
            )
    elif classes is None:
        classes = np.array([])
    return TextDataset(ids=ids, texts=texts, text_pairs=pairs, labels=labels,
                       classes=np.asarray(classes))
