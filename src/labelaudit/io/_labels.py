"""The check every label column passes: one label per item, never a list of labels."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from labelaudit._errors import InvalidInputError, format_rows, plain_value
from labelaudit.io._label_sets import LABEL_SET_TYPES

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["check_label_values", "label_problem", "text_keys"]



def label_problem(values: pd.Series | np.ndarray, *, column: str) -> tuple[np.ndarray, str]:
    """The positions of values that are no single label (lists of labels, or objects such
    as ``{"a": 1}``) and a message about them with ``{rows}`` where the rows go; no
    positions and ``""`` when every value is one label."""
    import pandas as pd
    series = pd.Series(values) if not isinstance(values, pd.Series) else values
    raw = series.to_numpy(dtype=object)
    lists = np.fromiter((isinstance(v, LABEL_SET_TYPES) for v in raw), dtype=bool, count=len(raw))
    objects = np.fromiter((isinstance(v, Mapping) for v in raw), dtype=bool, count=len(raw))
    rows = np.flatnonzero(lists if lists.any() else objects)
    if not len(rows):
        return rows, ""
    first = raw[int(rows[0])]
    example = repr(plain_value(first.tolist() if isinstance(first, np.ndarray) else first))
    example = example if len(example) <= 60 else example[:57] + "..."
    # the message is a template: braces of the data are escaped
    example, column = (t.replace("{", "{{").replace("}", "}}") for t in (example, repr(column)))
    if lists.any():
        return rows, (f"column {column} holds label sets (multi-label) in {{rows}}, e.g. "
                      f"{example}; this takes one label per item (a string or an integer): "
                      "`labelaudit scan` audits label sets (README, Multi-label data)")
    return rows, (f"column {column} holds objects, not labels, in {{rows}}, e.g. {example}; "
                  "give one label per item (a string or an integer)")


def check_label_values(values: pd.Series | np.ndarray, *, column: str,
                       ids: np.ndarray | None = None, where: str = "") -> None:
    """Refuse a label column that holds lists of labels (multi-label) or objects.

    Every command reads one label per item; a list of labels would otherwise fail deep
    inside (``unhashable type: 'list'``) or be read as the text ``"['a', 'b']"``.

    Parameters
    ----------
    values : Series or ndarray of shape (n_samples,)
        The label column.
    column : str
        Its name, for the message.
    ids : ndarray of shape (n_samples,), optional
        The items' ids, to name the offending rows by (default: row numbers from 0).
    where : str
        What the message starts with, such as the file's name.

    Raises
    ------
    InvalidInputError
        Naming the column, the first offending rows and one of their values.

    Examples
    --------
    >>> check_label_values(pd.Series(["a", "b"]), column="label")
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
    """Values as text: the one way ids (and labels) are matched across tables and file
    formats. A whole number keys as the integer it is, whatever its type: ``7``, ``7.0``
    (as pandas reads a column of numbers that has a blank) and the text ``"7"`` all key as
    ``"7"``, while the text ``"7.0"`` stays ``"7.0"`` (text is never parsed). Missing
    values (None, NaN, NA) key as ``""``; ``strip`` drops white space around each key.

    Examples
    --------
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
