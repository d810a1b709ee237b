"""Results of the agreement package as text for a person and as JSON-ready values."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from labelaudit.io import plain_value

if TYPE_CHECKING:
    import pandas as pd


def _missing(x: object) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def percent(x: float | None) -> str:
    """A share as a percentage with one decimal; ``n/a`` for None or NaN.

    Examples
    --------
    >>> percent(0.1389), percent(float("nan"))
    ('13.9%', 'n/a')
    """
    return "n/a" if _missing(x) else f"{100 * x:.1f}%"  # type: ignore[operator]


def number(x: float | None) -> str:
    """A statistic with three decimals; ``n/a`` for None or NaN."""
    return "n/a" if _missing(x) else f"{x:.3f}"


def key_value_text(rows: Sequence[tuple[str, object]]) -> str:
    """Two aligned columns, one ``name  value`` line each.

    Examples
    --------
    >>> print(key_value_text([("items", 10), ("noise rate", "5.0%")]), end="")
    items       10
    noise rate  5.0%
    """
    width = max(len(k) for k, _ in rows)
    return "".join(f"{k:<{width}}  {v}\n" for k, v in rows)


def _plain(value: object) -> object:
    """A value for JSON: numpy values as Python ones, NaN as None."""
    value = plain_value(value)
    return None if _missing(value) else value


def _records(frame: pd.DataFrame) -> list[dict]:
    return [{k: _plain(v) for k, v in row.items()} for row in frame.to_dict(orient="records")]
