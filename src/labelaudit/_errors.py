"""Exceptions raised by labelaudit.

Every error a user can cause is one of these. ``InvalidInputError`` is for bad
data (a missing column, an empty text, duplicate ids), ``InvalidParameterError``
for bad options. The CLI prints either as one line on stderr and exits 1.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = [
    "LabelAuditError",
    "InvalidInputError",
    "InvalidParameterError",
    "MissingExtraError",
    "format_rows",
    "plain_value",
]


class LabelAuditError(Exception):
    """Base class of every error labelaudit raises on purpose."""


class InvalidInputError(LabelAuditError, ValueError):
    """The data is not usable as given: names what is wrong, where, and how to fix it."""


class InvalidParameterError(LabelAuditError, ValueError, TypeError):
    """An option has a value outside what the function accepts."""


class MissingExtraError(LabelAuditError, ImportError):
    """An optional dependency is missing; the message names the extra to install."""

    def __init__(self, package: str, extra: str) -> None:
        super().__init__(
            f"this feature needs the package {package!r}: "
            f"install it with `pip install 'labelaudit[{extra}]'`"
        )


def plain_value(value: object) -> object:
    """A numpy scalar as the Python value it holds (so messages print ``68``, not
    ``np.int64(68)``); anything else unchanged."""
    item = getattr(value, "item", None)
    if callable(item) and hasattr(value, "dtype") and getattr(value, "ndim", 1) == 0:
        return item()
    return value


def format_rows(rows: Iterable[object], *, limit: int = 5) -> str:
    """Format the first few offending rows for an error message.

    Examples
    --------
    >>> format_rows([3, 7, 9, 11, 12, 40, 41])
    'rows 3, 7, 9, 11, 12 and 2 more'
    >>> format_rows(["a"])
    "row 'a'"
    """
    items: Sequence[object] = [plain_value(r) for r in rows]
    shown = ", ".join(repr(r) if isinstance(r, str) else str(r) for r in items[:limit])
    word = "row" if len(items) == 1 else "rows"
    more = f" and {len(items) - limit} more" if len(items) > limit else ""
    return f"{word} {shown}{more}"
