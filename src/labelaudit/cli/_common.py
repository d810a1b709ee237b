"""Helpers shared by the command modules."""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = [
    "at_least",
    "choice_list",
    "fraction",
    "output_file",
    "print_table",
    "show_progress",
    "warnings_to_stderr",
]


def fraction(text: str) -> float:
    """Argparse type of an option that takes a number between 0 and 1."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1, got {value}")
    return value


def at_least(minimum: int):
    """Argparse type of an integer option with a lower bound."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        return value

    return parse


def choice_list(choices: tuple[str, ...], *, allow_all: bool = False):
    """Argparse type of a comma-separated list of names from ``choices``."""

    def parse(text: str) -> list[str]:
        if allow_all and text == "all":
            return list(choices)
        values = [v.strip() for v in text.split(",") if v.strip()]
        unknown = [v for v in values if v not in choices]
        if unknown or not values:
            raise argparse.ArgumentTypeError(
                f"unknown {', '.join(map(repr, unknown)) or 'empty list'}; "
                f"choose from {', '.join(choices)}")
        return values

    return parse


def output_file(suffixes: tuple[str, ...]):
    """Argparse type of an output path whose suffix picks the format: checked up front."""

    def parse(text: str) -> str:
        from pathlib import Path

        if Path(text).suffix.lower() not in suffixes:
            raise argparse.ArgumentTypeError(
                f"{text}: the suffix picks the format; use one of {' '.join(suffixes)}")
        return text

    return parse


def show_progress(args: argparse.Namespace) -> bool:
    """Progress bars only on a terminal and without --quiet."""
    return not getattr(args, "quiet", False) and sys.stderr.isatty()


def print_table(frame, *, file=None, max_rows: int | None = None, max_colwidth: int = 60) -> None:
    """Print a DataFrame as an aligned text table."""
    import pandas as pd

    with pd.option_context("display.max_rows", max_rows, "display.max_columns", None,
                           "display.width", 200, "display.max_colwidth", max_colwidth):
        print(frame.to_string(index=False), file=file or sys.stdout)


@contextmanager
def warnings_to_stderr(args: argparse.Namespace) -> Iterator[None]:
    """Show labelaudit's warnings as one ``warning:`` line each (none with --quiet)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            yield
        finally:
            if not getattr(args, "quiet", False):
                seen = set()
                for w in caught:
                    text = str(w.message)
                    if w.category.__module__.startswith("labelaudit") and text not in seen:
                        seen.add(text)
                        print(f"labelaudit: warning: {text}", file=sys.stderr)
