"""Label columns of multi-label data: every item has a set of labels (the topics of an
article, the entity types of a sentence), given as lists or as text with a separator."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from labelaudit._errors import InvalidInputError, InvalidParameterError, format_rows

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["LABEL_SET_TYPES", "SET_THRESHOLD", "check_label_set_classes", "check_label_set_members",
           "check_separator", "format_label_set", "holds_label_sets", "label_set_names",
           "read_label_sets", "refuse_single_label_options"]

# The values that hold a label set (a list of labels) rather than one label.
LABEL_SET_TYPES = (list, tuple, set, frozenset, np.ndarray)
# A class belongs in a predicted label set (a multi-label scan's suggestion, a multi-label
# model's prediction) when its probability is at least this.
SET_THRESHOLD = 0.5


def holds_label_sets(values: pd.Series | np.ndarray) -> bool:
    """Whether a label column holds lists of labels (a multi-label column).

    Examples
    --------
    >>> holds_label_sets(pd.Series([["a", "b"], []])), holds_label_sets(pd.Series(["a"]))
    (True, False)
    """
    import pandas as pd
    return any(isinstance(v, LABEL_SET_TYPES) for v in pd.Series(values).to_numpy(dtype=object))


def check_separator(sep: str | None) -> str | None:
    """The separator of label sets written as text (``label_sep``): None, or a non-empty
    text (an empty one would split nothing, and join class names into one).

    Examples
    --------
    >>> check_separator("|")
    '|'
    >>> check_separator("")
    Traceback (most recent call last):
    ...
    labelaudit._errors.InvalidParameterError: label_sep must be at least one character, \
such as '|' or ';'; got ''
    """
    if sep is not None and (not isinstance(sep, str) or not sep):
        raise InvalidParameterError(
            f"label_sep must be at least one character, such as '|' or ';'; got {sep!r}",
            param="label_sep")
    return sep


def _is_missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and np.isnan(value))


def label_set_names(value: object, sep: str = "|") -> list[str]:
    """One value's labels as text: a list's items, or text split at ``sep``; a missing
    value or empty text is the empty set.

    Examples
    --------
    >>> label_set_names(["b", "a"]), label_set_names("b|a"), label_set_names(float("nan"))
    (['b', 'a'], ['b', 'a'], [])
    """
    if isinstance(value, LABEL_SET_TYPES):
        return [str(v) for v in value]
    if _is_missing(value):
        return []
    return [part for part in str(value).split(sep) if part]


def _has_hole(value: object, sep: str | None) -> bool:
    """Whether a label set holds a member that names no class: a missing value (null,
    NaN) or blank text in a list, or blank text between separators (``"a||b"``, ``"a|"``)."""
    import pandas as pd
    if isinstance(value, LABEL_SET_TYPES):
        return any((pd.api.types.is_scalar(v) and pd.isna(v))
                   or (isinstance(v, str) and not v.strip()) for v in value)
    if sep is None or _is_missing(value) or not str(value).strip():
        return False
    return any(not part.strip() for part in str(value).split(sep))


def check_label_set_members(values: pd.Series | np.ndarray, *, column: str,
                            ids: Sequence[object] | np.ndarray, sep: str | None = None,
                            where: str | None = None) -> None:
    """Refuse a label set holding a member that names no class: a missing value (null,
    NaN) or blank text in a list, or with ``sep`` blank text between separators
    (``"a||b"``, ``"a|"``). One line naming the column, the items (``ids``, aligned with
    ``values``) and, first, ``where`` (the file) when given. The one rule for every reader
    of label sets: scan, train, evaluate, report.

    Examples
    --------
    >>> check_label_set_members(pd.Series([["a"], ["b", None]]), column="topics",
    ...                         ids=["x", "y"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    labelaudit._errors.InvalidInputError: column 'topics' has a label set with a missing or \
empty label in row 'y' (e.g. ['b', None]); ...
    """
    import pandas as pd
    raw = pd.Series(values).to_numpy(dtype=object)
    holes = np.array([_has_hole(v, sep) for v in raw], dtype=bool)
    if holes.any():
        raise InvalidInputError(
            f"{f'{where}: ' if where else ''}column {column!r} has a label set with a "
            f"missing or empty label in {format_rows(np.asarray(ids, dtype=object)[holes])} "
            f"(e.g. {raw[int(np.argmax(holes))]!r}); a label set lists class names only: "
            "remove the null or empty entries (an empty set, [] or an empty cell, is how to "
            "say that no class applies)")


def _members(value: object, sep: str | None) -> list[str] | None:
    """The labels of one value as text, white space trimmed; None for a scalar in a
    column of lists."""
    if sep is None and not isinstance(value, LABEL_SET_TYPES):
        return None
    return [name for name in (n.strip() for n in label_set_names(value, sep or "|")) if name]


def refuse_single_label_options(takes: str, **given: object) -> None:
    """Options that go with one label per item, given (``name=value``, None when not)
    for label sets: refused with one line naming them and saying what ``takes`` the sets."""
    named = [f"{name}=" for name, value in given.items() if value is not None]
    if named:
        raise InvalidParameterError(
            f"the label column holds label sets (multi-label), and {', '.join(named)} "
            f"{'go' if len(named) > 1 else 'goes'} with one label per item; {takes}")


def read_label_sets(values: pd.Series | np.ndarray, *, column: str, ids: np.ndarray,
                    sep: str | None = None, classes: Sequence[object] | None = None,
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Label sets as an indicator matrix: ``(Y, classes)``, ``Y[i, j]`` 1 when item ``i``
    has class ``classes[j]``; the classes sorted as text, or as given.

    A value is a list of labels (JSONL, Parquet, a Hugging Face ``Sequence`` column) or,
    with ``sep``, text such as ``"sports|politics"``; an empty list or an empty cell is
    the empty set, a meaningful label (no class applies). Refused with one line each: a
    column that mixes lists and single labels, a missing value in a column of lists, a
    set holding a member that names no class (null or blank in a list, blank between
    separators: one rule for JSONL, Parquet and CSV), a class name that holds ``sep``
    (it would not read back), and labels outside ``classes``.

    Examples
    --------
    >>> Y, classes = read_label_sets(pd.Series(["b|a", "", "a"]), column="topics",
    ...                              ids=np.arange(3), sep="|")
    >>> Y.tolist(), classes.tolist()
    ([[1, 1], [0, 0], [1, 0]], ['a', 'b'])
    """
    import pandas as pd
    check_separator(sep)
    raw = pd.Series(values).to_numpy(dtype=object)
    sets = [_members(v, sep) for v in raw]
    scalars = np.array([s is None and not _is_missing(v) for s, v in zip(sets, raw,
                                                                            strict=True)])
    missing = np.array([s is None and _is_missing(v) for s, v in zip(sets, raw, strict=True)])
    if scalars.any():
        lists = int(len(raw) - scalars.sum() - missing.sum())
        raise InvalidInputError(
            f"column {column!r} mixes lists of labels ({lists} items) and single labels "
            f"(in {format_rows(ids[scalars])}, e.g. {raw[int(np.argmax(scalars))]!r}); give "
            "every item a list (an empty list for no label), or give every item text with "
            "--label-sep")
    if missing.any():
        raise InvalidInputError(
            f"column {column!r} has no label set in {format_rows(ids[missing])}; give an "
            "empty list where no class applies")
    check_label_set_members(raw, column=column, ids=ids, sep=sep)
    if sep is not None:
        holding = sorted({name for s, v in zip(sets, raw, strict=True)
                          if isinstance(v, LABEL_SET_TYPES) for name in s or () if sep in name})
        if holding:
            raise InvalidInputError(
                f"the class names {holding[:5]} of column {column!r} hold the separator "
                f"{sep!r}, so they would not read back from a CSV: choose another --label-sep")
    names = sorted({name for s in sets for name in s or () if name}) if classes is None else [
        str(c) for c in classes]
    index = {name: j for j, name in enumerate(names)}
    Y = np.zeros((len(raw), len(names)), dtype=np.int8)
    unknown = []
    for i, labels in enumerate(sets):
        for name in labels or ():
            if name == "":
                continue
            if name not in index:
                unknown.append(i)
                continue
            Y[i, index[name]] = 1
    if unknown:
        raise InvalidInputError(
            f"column {column!r} has labels outside the classes {names[:10]} in "
            f"{format_rows(ids[np.unique(unknown)])}")
    return Y, np.asarray(names, dtype=object)


def check_label_set_classes(label_sets: np.ndarray, classes: np.ndarray) -> None:
    """Refuse a class that a single item has: a model cannot learn it out of sample.

    Examples
    --------
    >>> check_label_set_classes(np.array([[1, 0], [1, 1]]), np.array(["a", "b"]))
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    labelaudit._errors.InvalidInputError: 1 class is on a single item: ['b']; ...
    """
    counts = np.asarray(label_sets).sum(axis=0)
    once = [str(c) for c, n in zip(classes, counts, strict=True) if n < 2]
    if once:
        them = "them" if len(once) > 1 else "it"
        raise InvalidInputError(
            f"{len(once)} class{'es are' if len(once) > 1 else ' is'} on a single item: "
            f"{once[:10]}; a model cannot learn {them} out of sample: drop or merge {them}")


def format_label_set(row: np.ndarray, classes: np.ndarray, sep: str | None = None
                     ) -> list[str] | str:
    """One item's label set: a list of class names, or with ``sep`` one text (for CSV,
    TSV and the table view). A class name that holds ``sep`` is refused: the text would
    read back as other classes.

    Examples
    --------
    >>> format_label_set(np.array([1, 0, 1]), np.array(["a", "b", "c"]), sep="|")
    'a|c'
    """
    names = [str(c) for c in np.asarray(classes)[np.asarray(row, dtype=bool)]]
    if sep is None:
        return names
    check_separator(sep)
    if holding := [name for name in names if sep in name]:
        raise InvalidInputError(
            f"the class {holding[0]!r} holds {sep!r}, the separator of label sets written "
            "as text (CSV, TSV, the table view), so it would read back as other classes: "
            "choose another separator with label_sep=, or write JSONL or Parquet, which keep "
            "the sets as lists", param="label_sep")
    return sep.join(names)
