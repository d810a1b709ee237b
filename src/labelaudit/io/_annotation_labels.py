"""Label values as crowd annotations hold them: missing, empty, plain Python values."""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence

import numpy as np

from labelaudit._errors import format_rows

__all__ = ["clean_label", "format_items", "is_empty_label", "is_missing", "label_kind"]


def format_items(items: Sequence[object], *, limit: int = 5) -> str:
    """Name the first few offending items: ``"items 'a', 'b'"``, ``"item 3"``.

    Examples
    --------
    >>> format_items(["a", "b"])
    "items 'a', 'b'"
    """
    return "item" + format_rows(items, limit=limit)[3:]


def is_missing(value: object) -> bool:
    import pandas as pd
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    return isinstance(value, float) and math.isnan(value)


def is_empty_label(value: object) -> bool:
    """A missing label: None, NaN, or a blank string."""
    return is_missing(value) or (isinstance(value, str) and not value.strip())


def clean_label(value: object) -> object:
    """Turn numpy scalars into Python values and integral floats into ints."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def label_kind(value: object) -> str:
    if isinstance(value, str):
        return "str"
    if isinstance(value, numbers.Number):
        return "number"
    return type(value).__name__
