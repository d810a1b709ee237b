"""Helpers shared by the command modules."""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["fraction", "show_progress", "print_table", "warnings_to_stderr"]


def fraction(text: str) -> float:
    """Argparse type of an option that takes a number between 0 and 1."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1, got {value}")
    return value


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
