"""A table validated as a text-classification dataset (:class:`TextDataset`), the user's
probabilities checked against it, and the checks that two sets compared are two sets."""

from __future__ import annotations

import warnings
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from labelaudit._errors import (
    InvalidInputError,
    InvalidParameterError,
    LabelAuditWarning,
    format_rows,
    format_values,
    plain_value,
)
from labelaudit._validation import shown
from labelaudit.io._labels import check_label_values, clean_label, text_keys
from labelaudit.io._paths import same_file

if TYPE_CHECKING:
    import pandas as pd


# How far a row of the user's probabilities may sum from 1 (pred_probs, impact's predictions).
PROBABILITY_SUM_TOLERANCE = 1e-3


@dataclass(frozen=True)
class TextDataset:
    """A validated text (or text-pair) classification dataset.

    Attributes
    ----------
    ids, labels
        The user's ids (else row numbers) and labels as indices into ``classes`` (None if
        unlabelled), shape (n_samples,).
    texts, text_pairs
        The texts, and the second texts of sentence pairs (NLI) or None.
    classes
        The user's label values, shape (n_classes,), sorted (or in the order of the user's
        probabilities' columns after :func:`align_pred_probs`).
    """

    ids: np.ndarray
    texts: list[str]
    text_pairs: list[str] | None
    labels: np.ndarray | None
    classes: np.ndarray

    def __len__(self) -> int:
        return len(self.texts)

    def item_keys(self) -> list[tuple[str, str]]:
        """Each item's (text, text pair or ``""``), as :func:`warn_overlap` compares."""
        return list(zip(self.texts, self.text_pairs or [""] * len(self), strict=True))


def require_columns(frame: pd.DataFrame, columns: Sequence[str], *, where: str = "") -> None:
    """Refuse missing columns, naming the ones there are and ``where`` (the file)."""
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise InvalidInputError(
            (f"{where}: " if where else "") + f"missing column{'s' if len(missing) > 1 else ''} "
            f"{', '.join(map(repr, missing))}; "
            f"the table has {', '.join(map(repr, map(str, frame.columns[:12])))}")


def text_values(values: pd.Series) -> tuple[list[str], np.ndarray]:
    """The values as text, and where they are missing or blank."""
    missing = values.isna().to_numpy()
    as_text = values.where(~missing, "").astype(str)
    return as_text.tolist(), missing | (as_text.str.strip() == "").to_numpy()


def _text_column(frame: pd.DataFrame, column: str, ids: np.ndarray) -> list[str]:
    texts, empty = text_values(frame[column])
    if empty.any():
        raise InvalidInputError(
            f"column {column!r} has empty or missing text in {format_rows(ids[empty])}; "
            "drop or fill those rows")
    return texts


def encode_labels(
    values: pd.Series | np.ndarray, ids: np.ndarray, *, column: str = "label",
    classes: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """``(labels, classes)``: labels as indices into their sorted values (or ``classes``).

    >>> import pandas as pd
    >>> labels, classes = encode_labels(pd.Series(["b", "a", "b"]), np.arange(3))
    >>> labels.tolist(), classes.tolist()
    ([1, 0, 1], ['a', 'b'])
    """
    import pandas as pd
    series = pd.Series(values)
    check_label_values(series, column=column, ids=ids)
    missing = series.isna().to_numpy()
    if missing.any():
        raise InvalidInputError(
            f"column {column!r} has missing labels in {format_rows(ids[missing])}; "
            "label or drop those rows")
    raw, kinds = label_values(series)
    if len(kinds) > 1:
        raise InvalidInputError(
            f"column {column!r} mixes label types ({', '.join(sorted(kinds))}); "
            "use all strings or all integers")
    uniques = np.unique(raw) if classes is None else np.asarray(classes)
    index = {v: i for i, v in enumerate(uniques.tolist())}
    encoded = np.fromiter((index.get(v, -1) for v in np.asarray(raw).tolist()), dtype=np.int64,
                          count=len(raw))
    unknown = encoded < 0
    if unknown.any():
        raise InvalidInputError(
            f"column {column!r} has labels outside the training label set "
            f"{uniques.tolist()} in {format_rows(ids[unknown])}")
    return encoded, uniques


def value_kind(value: object) -> str:
    if isinstance(value, (bool, np.bool_)):
        return "bool"
    if isinstance(value, (int, float, np.integer, np.floating)):
        return "number"
    return type(value).__name__


def label_values(series: pd.Series) -> tuple[np.ndarray, frozenset[str]]:
    """Label values, numbers as integers when all are whole, and the kinds of values seen."""
    raw = series.to_numpy(dtype=object)
    kinds = frozenset(map(value_kind, raw))
    if kinds == {"number"}:
        floats = np.asarray(raw, dtype=float)
        return (floats.astype(np.int64) if np.all(floats == np.round(floats)) else floats), kinds
    return raw, kinds


def _ids(frame: pd.DataFrame, id_column: str | None) -> np.ndarray:
    import pandas as pd
    if id_column is None:
        return np.arange(len(frame))
    ids = frame[id_column]
    if ids.isna().any():
        raise InvalidInputError(
            f"column {id_column!r} has missing ids in "
            f"{format_rows(np.flatnonzero(ids.isna().to_numpy()))}")
    kinds = {value_kind(v) for v in ids.tolist()}
    if len(kinds) > 1:
        firsts: dict[str, tuple[int, object]] = {}
        for row, value in enumerate(ids.tolist()):
            firsts.setdefault(value_kind(value), (row, value))
        kinds_seen = ", ".join(f"{shown(v)} ({k}, row {r})" for k, (r, v) in firsts.items())
        raise InvalidInputError(
            f"column {id_column!r} mixes id types: {kinds_seen}; an id 2 and an id '2' would "
            "be two items; use all strings or all integers")
    duplicated = ids.duplicated(keep=False).to_numpy()
    if duplicated.any():
        values = pd.unique(ids[duplicated])
        repeated = (", ".join(shown(v) for v in values[:5]) + (" ..." if len(values) > 5 else ""))
        raise InvalidInputError(
            f"column {id_column!r} has duplicate ids {repeated} in "
            f"{format_rows(np.flatnonzero(duplicated))}; ids must be unique")
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
    """Check a table and turn it into a :class:`TextDataset`, refusing (naming the first
    rows) a missing column, empty text, a missing label, duplicate ids or fewer than
    ``min_classes`` classes.

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"text": ["good", "bad", "fine"], "label": ["pos", "neg", "pos"]})
    >>> data = prepare_text_dataset(frame, text="text", label="label")
    >>> data.labels.tolist(), data.classes.tolist()
    ([1, 0, 1], ['neg', 'pos'])
    """
    roles = {"text": text, "text_pair": text_pair, "label": label}
    given = [(name, column) for name, column in roles.items() if column]
    for i, (first, column) in enumerate(given):
        for second, other in given[i + 1:]:
            if column == other:
                raise InvalidParameterError(
                    f"{first}= and {second}= both name column {column!r}: each names a "
                    f"column of its own", param=(second, first))
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
                f"at least {min_classes} are needed to find label errors")
    elif classes is None:
        classes = np.array([])
    return TextDataset(ids=ids, texts=texts, text_pairs=pairs, labels=labels,
                       classes=np.asarray(classes))


def _key(value: object) -> str:
    """A label or class name as text, so that 1, 1.0, "1" and np.int64(1) agree."""
    return str(clean_label(value)).strip()


def _as_label_value(name: object, classes: np.ndarray) -> object:
    """A class name as the labels spell it (the same text, else a number for numbers)."""
    for value in classes.tolist():
        if _key(value) == _key(name):
            return value
    if classes.dtype.kind in "iuf" and isinstance(name, str):
        try:
            number = float(name)
        except ValueError:
            return name
        return int(number) if number.is_integer() else number
    return plain_value(name)


def _names(values: Sequence[object]) -> str:
    return ", ".join(shown(v) for v in values[:12]) + (" ..." if len(values) > 12 else "")


def _column_classes(names: list[object] | None, data: TextDataset,
                    classes: Sequence[object] | None,
                    default_classes: Sequence[object] | None) -> list[object]:
    """The class of each column of pred_probs, as label values."""
    present = data.classes
    if classes is None and names is not None:
        keys = {_key(c) for c in present.tolist()}
        stray = [c for c in names if _key(c) not in keys]
        if stray:
            raise InvalidInputError(
                f"pred_probs columns {_names(stray)} are not label values (the labels are "
                f"{_names(present.tolist())}); name the columns by class, or give the column "
                "order with classes=")
        classes = names
    elif classes is None:
        classes = present.tolist() if default_classes is None else list(default_classes)
    given = [_as_label_value(c, present) for c in classes]
    seen: set[str] = set()
    twice = [c for c in given if _key(c) in seen or seen.add(_key(c))]  # type: ignore[func-returns-value]
    if twice:
        raise InvalidParameterError(f"classes= lists {_names(twice)} more than once",
                                    param="classes")
    keys = {_key(c) for c in given}
    unknown = [c for c in present.tolist() if _key(c) not in keys]
    if unknown:
        assert data.labels is not None  # noqa: S101 - the caller checked
        index = {_key(c): i for i, c in enumerate(present.tolist())}
        rows = np.flatnonzero(np.isin(data.labels, [index[_key(c)] for c in unknown]))
        what = "columns" if names is not None and classes is names else "classes="
        raise InvalidInputError(
            f"labels {_names(unknown)} (in {format_rows(data.ids[rows])}) are not among the "
            f"pred_probs {what} {_names(given)}; list every class, in the column order of "
            "pred_probs")
    if names is not None and classes is not names and keys == {_key(c) for c in names} \
            and [_key(c) for c in names] != [_key(c) for c in given]:
        raise InvalidInputError(
            f"classes= {_names(given)} orders the columns differently from their names "
            f"{_names(names)}; drop classes= to match the columns by name, or rename them")
    return given


def pred_probs_by_id(pred_probs: pd.DataFrame, ids: np.ndarray,
                     id: str) -> pd.DataFrame:  # noqa: A002 - the data's id column
    """A pred_probs table's rows in the order of ``ids``, matched as text by its ``id`` column
    (then dropped); blank, repeated, missing and unknown ids refused.

    >>> import pandas as pd
    >>> table = pd.DataFrame({"id": ["b", "a"], "pos": [0.2, 0.9], "neg": [0.8, 0.1]})
    >>> pred_probs_by_id(table, np.array(["a", "b"]), "id")["pos"].tolist()
    [0.9, 0.2]
    """
    import pandas as pd
    column = pred_probs[id]
    blank = column.isna().to_numpy()
    if blank.any():
        raise InvalidInputError(
            f"pred_probs column {id!r} is blank in {format_rows(np.flatnonzero(blank))}; give "
            "every row the id of its item")
    keys = pd.Index(text_keys(column))
    if keys.has_duplicates:
        raise InvalidInputError(
            f"pred_probs column {id!r} repeats ids "
            f"{format_values(pd.unique(column[keys.duplicated()]))}; give one row per item")
    wanted = text_keys(ids)
    position = keys.get_indexer(wanted)
    if (position < 0).any():
        raise InvalidInputError(
            f"pred_probs has no row for ids {format_values(ids[position < 0])} of the "
            f"data (matched by column {id!r}); give one row per item")
    extra = ~keys.isin(wanted)
    if extra.any():
        raise InvalidInputError(
            f"pred_probs column {id!r} has ids the data does not have: "
            f"{format_values(column[extra])}; give the rows of these items only")
    return pred_probs.drop(columns=[id]).iloc[position].reset_index(drop=True)


def _probability_values(pred_probs: object) -> tuple[np.ndarray, list[object] | None]:
    """The numbers of pred_probs and, for a table, its column names."""
    import pandas as pd
    if isinstance(pred_probs, pd.DataFrame):
        bad = [c for c in pred_probs.columns
               if not pd.api.types.is_numeric_dtype(pred_probs[c])
               or pd.api.types.is_bool_dtype(pred_probs[c])]
        if bad:
            raise InvalidInputError(
                f"pred_probs column{'s' if len(bad) > 1 else ''} {_names(bad)} "
                f"{'are' if len(bad) > 1 else 'is'} not numeric; the table must hold only "
                "one probability column per class")
        return pred_probs.to_numpy(dtype=float), list(pred_probs.columns)
    try:
        values = np.asarray(pred_probs, dtype=float)
    except (TypeError, ValueError):
        raise InvalidInputError(
            "pred_probs must hold numbers: an array of shape (n_items, n_classes)") from None
    if values.ndim != 2:
        raise InvalidInputError(
            f"pred_probs must be 2-D, shape (n_items, n_classes); got {values.ndim}-D with "
            f"shape {values.shape}")
    return values, None


def align_pred_probs(
    pred_probs: np.ndarray | pd.DataFrame, data: TextDataset, *,
    classes: Sequence[object] | None = None,
    default_classes: Sequence[object] | None = None,
    id: str | None = None,  # noqa: A002 - the data's id column, as scan's id=
) -> tuple[np.ndarray, TextDataset]:
    """The user's probabilities, shape (n_items, n_classes), checked against ``data``, and
    ``data`` with ``classes`` in column order. Rows are items (or matched by an ``id``
    column); columns are ``classes``, else a table's names, else ``default_classes``, else
    the sorted labels.

    >>> import pandas as pd
    >>> frame = pd.DataFrame({"text": ["good", "bad", "fine"], "label": ["pos", "neg", "pos"]})
    >>> data = prepare_text_dataset(frame, text="text", label="label")
    >>> probs = pd.DataFrame({"pos": [0.9, 0.2, 0.7], "neg": [0.1, 0.8, 0.3]})
    >>> values, ordered = align_pred_probs(probs, data)
    >>> ordered.classes.tolist(), ordered.labels.tolist()
    (['pos', 'neg'], [0, 1, 0])
    """
    import pandas as pd
    if data.labels is None:
        raise InvalidInputError("pred_probs needs labelled data")
    if id is not None and isinstance(pred_probs, pd.DataFrame) and id in pred_probs.columns:
        pred_probs = pred_probs_by_id(pred_probs, data.ids, id)
    values, names = _probability_values(pred_probs)
    n_items = len(data)
    if values.shape[0] != n_items:
        hint = ("; a CSV without a header row loses its first row: name the columns by "
                "class in a header, or save an array with numpy.save"
                if names is not None and values.shape[0] == n_items - 1 else "")
        raise InvalidInputError(
            f"pred_probs has shape {values.shape}; expected ({n_items}, n_classes): one row "
            f"per item, in the order of the data{hint}")
    columns = _column_classes(names, data, classes, default_classes)
    if values.shape[1] != len(columns):
        hint = ("; if the model knows classes no item has, name every column with classes="
                if classes is None and names is None else "")
        raise InvalidInputError(
            f"pred_probs has shape {values.shape}; expected ({n_items}, {len(columns)}): one "
            f"column per class ({_names(columns)}){hint}")
    _check_probabilities(values)
    position = {_key(c): i for i, c in enumerate(columns)}
    remap = np.array([position[_key(c)] for c in data.classes.tolist()], dtype=np.int64)
    kinds = {type(c) for c in columns}
    ordered = np.array(columns, dtype=object) if len(kinds) > 1 else np.asarray(columns)
    return values, replace(data, labels=remap[data.labels], classes=ordered)


def _check_probabilities(values: np.ndarray) -> None:
    bad = ~np.isfinite(values).all(axis=1)
    if bad.any():
        raise InvalidInputError(
            f"pred_probs has NaN or infinite values in {format_rows(np.flatnonzero(bad))} "
            "(0-based, in the order of the data)")
    negative = (values < 0).any(axis=1)
    if negative.any():
        raise InvalidInputError(
            f"pred_probs has negative values in {format_rows(np.flatnonzero(negative))} "
            "(0-based); pass probabilities (softmax outputs), not logits or scores")
    sums = values.sum(axis=1)
    off = np.abs(sums - 1.0) > PROBABILITY_SUM_TOLERANCE
    if off.any():
        rows = np.flatnonzero(off)
        shown_sums = ", ".join(f"{s:.4g}" for s in sums[rows[:5]])
        raise InvalidInputError(
            f"pred_probs rows must sum to 1 (within {PROBABILITY_SUM_TOLERANCE:g}): "
            f"{format_rows(rows)} (0-based) sum "
            f"to {shown_sums}; pass probabilities (softmax outputs), not logits or scores")


# The share of one set's items found in the other above which a comparison is suspect.
OVERLAP_WARN_SHARE = 0.1


class OverlapWarning(LabelAuditWarning):
    """Many items of one set are also in the set it is compared with."""


def check_distinct_files(sources: Sequence[tuple[str, object]], *, why: str) -> None:
    """Refuse one file given as two of the (name, source) sets compared.

    >>> check_distinct_files([("train", "a.csv"), ("suspect", "./a.csv")], why="...")
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    labelaudit._errors.InvalidParameterError: train and suspect are the same file (a.csv): ...
    """
    paths = [(name, source) for name, source in sources if isinstance(source, (str, Path))]
    for i, (first, a) in enumerate(paths):
        for second, b in paths[i + 1:]:
            if same_file(a, b):  # type: ignore[arg-type]
                raise InvalidParameterError(f"{first} and {second} are the same file ({a}): {why}")


def warn_overlap(first: tuple[str, Sequence[Hashable]], second: tuple[str, Sequence[Hashable]],
                 *, why: str, same: str = "text", share: float = OVERLAP_WARN_SHARE) -> float:
    """The share of the second (name, keys) set's items in the first, with an
    :class:`OverlapWarning` above ``share``; ``same`` says what equal keys share."""
    name, keys = second
    if not len(keys):
        return 0.0
    seen = set(first[1])
    shared = sum(key in seen for key in keys)
    found = shared / len(keys)
    if found > share:
        warnings.warn(OverlapWarning(
            f"{shared} of the {len(keys)} {name} items ({found:.0%}) are also in the "
            f"{first[0]} set (the same {same}): {why}"), stacklevel=3)
    return found
