"""argparse types of the command line: numbers in a range, fractions, lists, cut-offs, tag
columns and output files checked by suffix (re-exported by :mod:`labelaudit.cli._common`)."""

from __future__ import annotations

import argparse
from typing import Any

from labelaudit._errors import InvalidParameterError
from labelaudit._validation import check_int, check_number

__all__ = ["at_least", "choice_list", "comma_list", "cut_offs", "fraction", "interval",
           "output_file", "separator", "tag_column"]


def _number(text: str, kind: type = float) -> Any:
    try:
        return kind(text)
    except ValueError:
        what = "an integer" if kind is int else "a number"
        raise argparse.ArgumentTypeError(f"not {what}: {text!r}") from None


def _checked(kind: type, check: Any, note: str = "", **limits: Any):
    """Argparse type of a number of ``kind`` in the range that the library's ``check``
    (:mod:`labelaudit._validation`) enforces with ``limits``, in its words."""

    def parse(text: str) -> Any:
        try:
            return check(_number(text, kind), "", **limits)
        except InvalidParameterError as exc:
            said = str(exc).strip()
            raise argparse.ArgumentTypeError(said.replace("; got", f"{note}; got", 1)) from None

    return parse


def at_least(minimum: int, maximum: int | None = None):
    """Argparse type of an integer option with a lower (and optionally an upper) bound."""
    return _checked(int, check_int, minimum=minimum, maximum=maximum)


def interval(low: float, high: float = 1.0, *, low_open: bool = False,
             high_open: bool = False, note: str = ""):
    """Argparse type of a number in an interval, ``(0.5, 1]`` with ``low_open=True``."""
    return _checked(float, check_number, note, low=low, high=high, low_open=low_open,
                    high_open=high_open)


fraction = interval(0.0, 1.0)  # Argparse type of an option that takes a number in [0, 1].


def comma_list(text: str) -> list[str]:
    """Argparse type of a comma-separated list of names (blanks dropped)."""
    return [v.strip() for v in text.split(",") if v.strip()]


def choice_list(choices: tuple[str, ...]):
    """Argparse type of a comma-separated list of names from ``choices``."""

    def parse(text: str) -> list[str]:
        values = comma_list(text)
        unknown = [v for v in values if v not in choices]
        if unknown or not values:
            raise argparse.ArgumentTypeError(
                f"unknown {', '.join(map(repr, unknown)) or 'empty list'}; "
                f"choose from {', '.join(choices)}")
        return values

    return parse


def cut_offs(text: str) -> list[int]:
    """Argparse type of --at-k: comma-separated integers of at least 1."""
    values = []
    for part in comma_list(text):
        try:
            values.append(int(part))
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"not an integer: {part!r}; give comma-separated cut-offs such as 10,50") \
                from None
        if values[-1] < 1:
            raise argparse.ArgumentTypeError(f"cut-offs must be at least 1, got {values[-1]}")
    if not values:
        raise argparse.ArgumentTypeError("no cut-off given; use for example 10,50,100")
    return values


def separator(text: str) -> str:
    """Argparse type of --label-sep: the library's rule
    (:func:`labelaudit.io.check_separator`), in its words."""
    from labelaudit.io import check_separator

    try:
        return str(check_separator(text))
    except InvalidParameterError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("label_sep ")) from None


def tag_column(text: str) -> int:
    """Argparse type of --tag-column: any column but 0, the token."""
    if _number(text, int) == 0:
        raise argparse.ArgumentTypeError(
            "0 is the token column; give the tag's column (1 or more, or negative from the end)")
    return int(text)


def output_file(suffixes: tuple[str, ...], *, folders: bool = False):
    """Argparse type of an output path whose suffix picks the format: checked up front.
    With ``folders``, a folder (a path ending in ``/``, or a URI without a suffix) passes
    too: the command writes a folder of Parquet parts there."""

    def parse(text: str) -> str:
        from pathlib import Path

        where = text.split("?", 1)[0] if "://" in text else text
        if folders and (where.endswith("/") or ("://" in where and not Path(where).suffix)):
            return text
        if Path(where).suffix.lower() not in suffixes:
            raise argparse.ArgumentTypeError(
                f"{text}: the suffix picks the format; use one of {' '.join(suffixes)}")
        return text

    return parse
