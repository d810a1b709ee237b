"""The check every label column passes: one label per item, never a list of labels."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from labelaudit._errors import InvalidInputError, format_rows, plain_value
from labelaudit.io._label_sets import LABEL_SET_TYPES

__all__ = ["check_label_values", "label_problem", "text_keys"]



def label_problem(values: pd.Series | np.ndarray, *, column: str) -> tuple[np.ndarray, str]:
    """The positions of values that are no single label (lists of labels, or objects such
    as ``{"a": 1}``) and a message about them with ``{rows}`` where the rows go; no
    positions and ``""`` when every value is one label."""
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


def text_keys(values: pd.Series | np.ndarray) -> np.ndarray:
    """Values as text, whole floats read back as integers (``3.0`` -> ``"3"``); missing
    values become ``""``."""
    series = pd.Series(values)
    if pd.api.types.is_bool_dtype(series.dtype):
        return series.astype(str).to_numpy(dtype=object)
    if pd.api.types.is_integer_dtype(series.dtype):
        return series.astype(np.int64).astype(str).to_numpy(dtype=object)
    if pd.api.types.is_float_dtype(series.dtype):
        floats = series.to_numpy(dtype=float)
        whole = np.isfinite(floats) & (floats == np.round(floats))
        out = series.astype(str).to_numpy(dtype=object)
        out[whole] = floats[whole].astype(np.int64).astype(str)
        out[np.isnan(floats)] = ""
        return out
    out = series.astype(object).where(series.notna(), "").map(
        lambda v: str(int(v)) if isinstance(v, float) and v.is_integer() else str(v))
    return out.to_numpy(dtype=object)
