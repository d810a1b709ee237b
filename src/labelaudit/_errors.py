"""Exceptions and warnings of labelaudit: ``InvalidInputError`` for bad data,
``InvalidParameterError`` for bad options (the CLI prints either as one line and exits 2 for
one naming its option, ``param``, else 1), ``LabelAuditWarning`` for every warning."""

from __future__ import annotations

from collections.abc import Iterable, Sequence


class _Params:
    """``param`` names the option (the Python keyword) the message is about, or several, the
    one at fault first: ``InvalidParameterError("keep must be at most sweep (2); got 5",
    param=("keep", "sweep"))``; the command line spells them as its flags from ``params``."""

    def __init__(self, *args: object, param: str | Sequence[str] | None = None) -> None:
        super().__init__(*args)
        self.params: tuple[str, ...] = ((param,) if isinstance(param, str)
                                        else tuple(param or ()))


class LabelAuditError(_Params, Exception):
    """Base class of every error labelaudit raises on purpose (``param``: see ``_Params``)."""


class InvalidInputError(LabelAuditError, ValueError):
    """The data is not usable as given: names what is wrong, where, and how to fix it."""


class InvalidParameterError(LabelAuditError, ValueError, TypeError):
    """An option has a value outside what the function accepts. With ``param``, the
    option at fault: the command line prints it as a usage error (exit 2)."""


class LabelAuditWarning(_Params, UserWarning):
    """Base class of every warning labelaudit gives on purpose, so that one filter silences
    them all; one about options names them as an error does: ``FoldWarning("...",
    param="n_folds")``."""


class MissingExtraError(LabelAuditError, ImportError):
    """An optional dependency is missing; the message names the extra to install."""

    def __init__(self, package: str, extra: str) -> None:
        super().__init__(
            f"this feature needs the package {package!r}: "
            f"install it with `pip install 'labelaudit[{extra}]'`"
        )


def plain_value(value: object) -> object:
    """A numpy value as the Python value it holds (messages print ``68``, not
    ``np.int64(68)``; an array as a list): the one conversion, for messages and JSON alike.

    Examples
    --------
    >>> import numpy as np
    >>> plain_value(np.int64(68)), plain_value(np.array([1, 2])), plain_value("a")
    (68, [1, 2], 'a')
    """
    tolist = getattr(value, "tolist", None)
    return tolist() if callable(tolist) and hasattr(value, "dtype") else value


def format_rows(rows: Iterable[object], *, limit: int = 5, word: str = "row") -> str:
    """The first few offending rows (or ``word``: items, ids) for an error message.

    >>> format_rows([3, 7, 9, 11, 12, 40, 41])
    'rows 3, 7, 9, 11, 12 and 2 more'
    >>> format_rows(["a"])
    "row 'a'"
    """
    items: Sequence[object] = [plain_value(r) for r in rows]
    shown = ", ".join(repr(r) if isinstance(r, str) else str(r) for r in items[:limit])
    more = f" and {len(items) - limit} more" if len(items) > limit else ""
    return f"{word}{'' if len(items) == 1 else 's'} {shown}{more}"


def format_values(values: Iterable[object], *, limit: int = 5, width: int = 40) -> str:
    """The first few values of a list for a message, each cut to ``width`` characters, so
    that a message stays one readable line however many values there are.

    >>> format_values(["a", "b", "c"], limit=2)
    "['a', 'b'] and 1 more"
    >>> format_values(["a long text that is not a class name"], width=12)
    "['a long ...']"
    """
    items = [plain_value(v) for v in values]

    def cut(value: object) -> str:
        text = repr(value)
        if len(text) <= width:
            return text
        quote = text[-1] if isinstance(value, str) else ""
        return text[:width - 3 - len(quote)] + "..." + quote

    more = f" and {len(items) - limit} more" if len(items) > limit else ""
    return "[" + ", ".join(cut(v) for v in items[:limit]) + "]" + more
