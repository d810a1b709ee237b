"""Label values: one label per item (clean, missing, checked, as text keys) and label sets,
the labels of multi-label data (lists, or text with a separator)."""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from labelaudit._errors import InvalidInputError, InvalidParameterError, format_rows, plain_value

if TYPE_CHECKING:
    import pandas as pd


# The values that hold a label set (a list of labels) rather than one label.
LABEL_SET_TYPES = (list, tuple, set, frozenset, np.ndarray)
# A class belongs in a predicted label set when its probability is at least this.
SET_THRESHOLD = 0.5
# The words of a true/false column, as lower-case text (evaluate's is_error, impact's flags).
TRUE_WORDS = frozenset({"true", "t", "yes", "y", "1", "1.0"})
FALSE_WORDS = frozenset({"false", "f", "no", "n", "0", "0.0"})


def is_missing(value: object) -> bool:
    """None, NaN, ``pd.NA`` or ``pd.NaT``."""
    import pandas as pd

    if value is None or value is pd.NA or value is pd.NaT:
        return True
    return isinstance(value, float) and math.isnan(value)


def is_empty_label(value: object) -> bool:
    """A missing label: None, NaN, or a blank string."""
    return is_missing(value) or (isinstance(value, str) and not value.strip())


def clean_label(value: object) -> object:
    """A label as the user wrote it: numpy values as Python ones, a whole float (``68.0``, as
    pandas reads numbers with a blank) as an int.

    Examples
    --------
    >>> clean_label(68.0), clean_label("a")
    (68, 'a')
    """
    value = plain_value(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def label_kind(value: object) -> str:
    if isinstance(value, str):
        return "str"
    if isinstance(value, numbers.Number):
        return "number"
    return type(value).__name__


def format_items(items: Sequence[object], *, limit: int = 5) -> str:
    """Name the first few offending items: ``"items 'a', 'b'"``, ``"item 3"``."""
    return format_rows(items, limit=limit, word="item")


def label_problem(values: pd.Series | np.ndarray, *, column: str) -> tuple[np.ndarray, str]:
    """Positions of values that are no single label, and a message template with ``{rows}``."""
    import pandas as pd
    series = pd.Series(values) if not isinstance(values, pd.Series) else values
    raw = series.to_numpy(dtype=object)
    lists = np.fromiter((isinstance(v, LABEL_SET_TYPES) for v in raw), dtype=bool, count=len(raw))
    objects = np.fromiter((isinstance(v, Mapping) for v in raw), dtype=bool, count=len(raw))
    rows = np.flatnonzero(lists if lists.any() else objects)
    if not len(rows):
        return rows, ""
    first = raw[int(rows[0])]
    example = repr(plain_value(first))
    example = example if len(example) <= 60 else example[:57] + "..."
    # the message is a template: braces of the data are escaped
    example, column = (t.replace("{", "{{").replace("}", "}}") for t in (example, repr(column)))
    if lists.any():
        return rows, (f"column {column} holds label sets (multi-label) in {{rows}}, e.g. "
                      f"{example}; this takes one label per item (a string or an integer): "
                      "`labelaudit scan` audits label sets (docs/concepts/multi-label.md)")
    return rows, (f"column {column} holds objects, not labels, in {{rows}}, e.g. {example}; "
                  "give one label per item (a string or an integer)")


def check_label_values(values: pd.Series | np.ndarray, *, column: str,
                       ids: np.ndarray | None = None, where: str = "") -> None:
    """Refuse a label column holding lists or objects, naming ``where``, rows and a value.

    >>> import pandas as pd
    >>> check_label_values(pd.Series([["a"], ["a", "b"]]), column="label")
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    labelaudit._errors.InvalidInputError: column 'label' holds label sets ...
    """
    rows, message = label_problem(values, column=column)
    if len(rows):
        named = rows if ids is None else np.asarray(ids)[rows]
        raise InvalidInputError((f"{where}: " if where else "")
                                + message.format(rows=format_rows(named)))


def text_keys(values: pd.Series | np.ndarray, *, strip: bool = False) -> np.ndarray:
    """Values as text, the one way ids and labels are matched: whole numbers as integers
    (the text ``"7.0"`` is never parsed), missing as ``""``.

    >>> import pandas as pd
    >>> text_keys(pd.Series([7.0, 7.5, None])).tolist()
    ['7', '7.5', '']
    >>> text_keys(pd.Series([7, None], dtype="Int64")).tolist(), text_keys([" a "], strip=True)
    (['7', ''], array(['a'], dtype=object))
    """
    import pandas as pd
    series = pd.Series(values)
    missing = series.isna().to_numpy(dtype=bool)
    if pd.api.types.is_bool_dtype(series.dtype) or pd.api.types.is_integer_dtype(series.dtype):
        out = series.astype(str).to_numpy(dtype=object, copy=True)  # exact: uint64, Int64 too
    elif pd.api.types.is_float_dtype(series.dtype):
        floats = series.to_numpy(dtype=float, na_value=np.nan)
        whole = np.isfinite(floats) & (floats == np.round(floats))
        small = whole & (np.abs(floats) < 2.0**63)  # in int64's range
        out = series.astype(str).to_numpy(dtype=object, copy=True)
        out[small] = floats[small].astype(np.int64).astype(str)
        out[whole & ~small] = [str(int(f)) for f in floats[whole & ~small]]
    else:
        out = series.astype(object).map(
            lambda v: str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)
        ).to_numpy(dtype=object, copy=True)  # a copy: pandas may hand back read-only data
    out[missing] = ""
    if strip:
        out = np.array([key.strip() for key in out], dtype=object)
    return out


def holds_label_sets(values: pd.Series | np.ndarray) -> bool:
    """Whether a label column holds lists of labels (a multi-label column)."""
    import pandas as pd
    return any(isinstance(v, LABEL_SET_TYPES) for v in pd.Series(values).to_numpy(dtype=object))


def check_separator(sep: str | None) -> str | None:
    """The separator of label sets written as text: None or non-empty.

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


def label_set_names(value: object, sep: str = "|") -> list[str]:
    """One value's labels as text: a list's items, or text split at ``sep``; missing: none.

    >>> label_set_names(["b", "a"]), label_set_names("b|a"), label_set_names(float("nan"))
    (['b', 'a'], ['b', 'a'], [])
    """
    if isinstance(value, LABEL_SET_TYPES):
        return [str(v) for v in value]
    if is_missing(value):
        return []
    return [part for part in str(value).split(sep) if part]


def _has_hole(value: object, sep: str | None) -> bool:
    """Whether a label set holds a member that names no class (null, blank, ``"a||b"``)."""
    import pandas as pd
    if isinstance(value, LABEL_SET_TYPES):
        return any((pd.api.types.is_scalar(v) and pd.isna(v))
                   or (isinstance(v, str) and not v.strip()) for v in value)
    if sep is None or is_missing(value) or not str(value).strip():
        return False
    return any(not part.strip() for part in str(value).split(sep))


def check_label_set_members(values: pd.Series | np.ndarray, *, column: str,
                            ids: Sequence[object] | np.ndarray, sep: str | None = None,
                            where: str | None = None) -> None:
    """Refuse a label set with a member naming no class (null, blank, ``"a||b"``): the one
    rule for every reader of label sets.

    >>> import pandas as pd
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
    """The labels of one value as trimmed text; None for a scalar in a column of lists."""
    if sep is None and not isinstance(value, LABEL_SET_TYPES):
        return None
    return [name for name in (n.strip() for n in label_set_names(value, sep or "|")) if name]


def refuse_single_label_options(takes: str, **given: object) -> None:
    """Refuse single-label options given for label sets, saying what ``takes`` the sets."""
    named = [f"{name}=" for name, value in given.items() if value is not None]
    if named:
        raise InvalidParameterError(
            f"the label column holds label sets (multi-label), and {', '.join(named)} "
            f"{'go' if len(named) > 1 else 'goes'} with one label per item; {takes}",
            param=tuple(name.rstrip("=") for name in named))


def read_label_sets(values: pd.Series | np.ndarray, *, column: str, ids: np.ndarray,
                    sep: str | None = None, classes: Sequence[object] | None = None,
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Label sets (lists, or text split at ``sep``) as ``(Y, classes)``: ``Y[i, j]`` 1 when
    item ``i`` has ``classes[j]`` (sorted, or as given).

    >>> import pandas as pd
    >>> Y, classes = read_label_sets(pd.Series(["b|a", "", "a"]), column="topics",
    ...                              ids=np.arange(3), sep="|")
    >>> Y.tolist(), classes.tolist()
    ([[1, 1], [0, 0], [1, 0]], ['a', 'b'])
    """
    import pandas as pd
    check_separator(sep)
    raw = pd.Series(values).to_numpy(dtype=object)
    sets = [_members(v, sep) for v in raw]
    scalars = np.array([s is None and not is_missing(v) for s, v in zip(sets, raw, strict=True)])
    missing = np.array([s is None and is_missing(v) for s, v in zip(sets, raw, strict=True)])
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
    """One item's label set: a list of class names, or with ``sep`` one text.

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
