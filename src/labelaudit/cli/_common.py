"""Helpers shared by the command modules."""

from __future__ import annotations

import argparse
import re
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = [
    "add_output_options",
    "at_least",
    "choice_list",
    "emit_output",
    "flag_spelling",
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


def add_output_options(parser: argparse.ArgumentParser, *, what: str = "the result table",
                       default_format: str | None = "table", out_help: str | None = None,
                       formats: tuple[str, ...] | None = None) -> None:
    """``--out FILE`` and ``--format`` as every command that writes a table has them.

    The output file's suffix picks its format (.csv .tsv .jsonl .json .parquet); without
    ``--out``, ``--format`` picks what goes to stdout.
    """
    from labelaudit.registry import FORMATS

    choices = formats or FORMATS.names()
    suffixes = tuple(f".{f}" for f in choices if f != "table")
    parser.add_argument(
        "--out", "-o", type=output_file(suffixes),
        help=out_help or f"write {what} to this file; {' '.join(suffixes)} by its suffix "
        "(default: stdout)")
    parser.add_argument(
        "--format", choices=choices, default=default_format,
        help=f"format of {what} on stdout when --out is not given "
        f"(default: {default_format or 'depends on the command'})")


def emit_output(frame, args: argparse.Namespace, *, max_colwidth: int = 60) -> None:
    """Write ``frame`` to ``--out`` or to stdout in ``--format`` (see
    :func:`labelaudit.io.emit`); with ``--out``, say so on stderr unless ``--quiet``."""
    from labelaudit.io import emit

    out = getattr(args, "out", None)
    emit(frame, out, format=None if out else getattr(args, "format", None),
         max_colwidth=max_colwidth)
    if out and not getattr(args, "quiet", False):
        print(f"wrote {len(frame)} rows to {out}", file=sys.stderr)


def show_progress(args: argparse.Namespace) -> bool:
    """Progress bars only on a terminal and without --quiet."""
    return not getattr(args, "quiet", False) and sys.stderr.isatty()


def print_table(frame, *, file=None, max_rows: int | None = None, max_colwidth: int = 60) -> None:
    """Print a DataFrame as an aligned text table."""
    from labelaudit.io import render_table

    print(render_table(frame, max_rows=max_rows, max_colwidth=max_colwidth),
          file=file or sys.stdout)


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


def as_flags(text: str, options: tuple[str, ...], bare: tuple[str, ...] = ()) -> str:
    """A library message with ``option=value`` spelled as flags: ``n_errors=5`` as
    ``--n-errors 5``, ``partial_ranking=True`` as ``--partial-ranking``; the quotes of a
    ``bare`` option's value go (``unknown='clean'`` as ``--unknown clean``)."""
    def flag(match: re.Match[str]) -> str:
        name, value = match[1], match[2]
        if value == "True":
            value = ""
        elif name in bare:
            value = value.strip("'")
        return f"--{name.replace('_', '-')}" + (f" {value}" if value else "")

    pattern = rf"\b({'|'.join(options)})=('[^']*'|[^\s,;:)/]*)"
    return re.sub(pattern, flag, text)


@contextmanager
def flag_spelling(options: tuple[str, ...], *, bare: tuple[str, ...] = ()) -> Iterator[None]:
    """Reword labelaudit's errors and warnings inside the block with ``options`` as flags."""
    from labelaudit._errors import LabelAuditError

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            yield
        except LabelAuditError as exc:
            raise type(exc)(as_flags(str(exc), options, bare)) from None
    for w in caught:
        ours = w.category.__module__.startswith("labelaudit")
        warnings.warn(type(w.message)(as_flags(str(w.message), options, bare)) if ours
                      else w.message, stacklevel=1)
