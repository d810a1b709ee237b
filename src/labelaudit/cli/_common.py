"""Helpers shared by the command modules."""

from __future__ import annotations

import argparse
import re
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from labelaudit.tokens._schemes import Scheme

__all__ = ["TORCH_NOTE", "add_command", "add_folds", "add_output_options", "add_seed",
           "add_tag_options",
           "at_least", "choice_list", "comma_list", "cut_offs", "emit_output", "emit_result",
           "fold_rule", "fraction", "interval", "log", "output_file", "show_progress",
           "tag_scheme", "warnings_to_stderr"]

# The closing paragraph of the --help of every command that runs torch.
TORCH_NOTE = """
threads: torch uses one thread per free CPU core (the cores this process may use, less the
1-minute load average; 1 to 8), so a busy machine is not slowed further; set
LABELAUDIT_THREADS=N to choose the number.
"""


def add_command(subparsers, name: str, parents: list[argparse.ArgumentParser], *, help: str,
                description: str, handler, epilog: str | None = None, raw: bool = True,
                **kwargs) -> argparse.ArgumentParser:
    """The parser of one command (``help`` is its line in the parent's ``--help``), run by
    ``handler``; ``raw`` keeps the description's and epilog's line breaks."""
    formatter = argparse.RawDescriptionHelpFormatter if raw else argparse.HelpFormatter
    parser = subparsers.add_parser(name, parents=parents, help=help, description=description,
                                   epilog=epilog, formatter_class=formatter, **kwargs)
    parser.set_defaults(handler=handler)
    return parser


class _OldSeed(argparse.Action):
    """``--random-state``, the old spelling of ``--seed``: still works, and says so."""

    def __call__(self, parser, namespace, values, option=None) -> None:  # type: ignore[override]
        print(f"labelaudit: warning: {option} is deprecated; use --seed", file=sys.stderr)
        setattr(namespace, self.dest, values)


def add_seed(parser, *, type=int, help: str = "random seed (default: 0)") -> None:
    """``--seed`` (default 0), and ``--random-state``, its deprecated hidden spelling."""
    parser.add_argument("--seed", type=type, default=0, help=help)
    parser.add_argument("--random-state", type=type, dest="seed", default=argparse.SUPPRESS,
                        action=_OldSeed, help=argparse.SUPPRESS)


class _GivenFolds(argparse.Action):
    """``--folds``: remembers that the user chose the number (see :func:`fold_rule`)."""

    def __call__(self, parser, namespace, values, option=None) -> None:  # type: ignore[override]
        setattr(namespace, self.dest, values)
        namespace.folds_given = True


def add_folds(parser, *, default: int = 5) -> None:
    """``--folds``, cross-fitting folds: lowered for a class too small for the default,
    an error naming the smallest class when the user asked for more (:func:`fold_rule`)."""
    parser.add_argument("--folds", type=at_least(2), default=default, action=_GivenFolds,
                        help=f"cross-fitting folds (default: {default}, fewer when a class "
                        "has fewer items; a --folds above the smallest class is an error)")


def fold_rule(args: argparse.Namespace):
    """The block the library runs in: the number of folds taken as asked when --folds was
    given (see :func:`labelaudit.models.exact_folds`), else lowered for small classes."""
    from contextlib import nullcontext

    from labelaudit.models import exact_folds

    return exact_folds() if getattr(args, "folds_given", False) else nullcontext()


def tag_column(text: str) -> int:
    """Argparse type of --tag-column: any column but 0, the token."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value == 0:
        raise argparse.ArgumentTypeError(
            "0 is the token column; give the tag's column (1 or more, or negative from the end)")
    return value


def add_tag_options(parser: argparse.ArgumentParser | argparse._ArgumentGroup, *,
                    what: str) -> None:
    """``--scheme`` and ``--tag-column``: how to read the tags of a token file."""
    parser.add_argument("--scheme", choices=["auto", "iob1", "iob2", "bioes", "plain"],
                        default="auto", help=f"tagging scheme of {what} (default: detected); "
                        "'plain' for tags without spans such as POS tags")
    parser.add_argument("--tag-column", type=tag_column, default=-1,
                        help=f"0-based column of the tag in CoNLL files of {what}; negative "
                        "counts from the end (default: -1, the last)")


def tag_scheme(args: argparse.Namespace) -> Scheme | None:
    """The --scheme of :func:`add_tag_options` for the library: None to detect it."""
    return None if args.scheme == "auto" else args.scheme  # argparse checked the choice


def cut_offs(text: str) -> list[int]:
    """Argparse type of --at-k: comma-separated integers of at least 1."""
    values = []
    for part in (x.strip() for x in text.split(",")):
        if not part:
            continue
        try:
            value = int(part)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"not an integer: {part!r}; give comma-separated cut-offs such as 10,50") \
                from None
        if value < 1:
            raise argparse.ArgumentTypeError(f"cut-offs must be at least 1, got {value}")
        values.append(value)
    if not values:
        raise argparse.ArgumentTypeError("no cut-off given; use for example 10,50,100")
    return values


def fraction(text: str) -> float:
    """Argparse type of an option that takes a number between 0 and 1."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1, got {value}")
    return value


def at_least(minimum: int, maximum: int | None = None):
    """Argparse type of an integer option with a lower (and optionally an upper) bound."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        if maximum is not None and value > maximum:
            raise argparse.ArgumentTypeError(f"must be at most {maximum}, got {value}")
        return value

    return parse


def interval(low: float, high: float = 1.0, *, low_open: bool = False,
             high_open: bool = False, note: str = ""):
    """Argparse type of a number in an interval, ``(0.5, 1]`` with ``low_open=True``."""
    shown = f"{'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}{note}"

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if not (low < value if low_open else low <= value) or \
                not (value < high if high_open else value <= high):
            raise argparse.ArgumentTypeError(f"must be in {shown}, got {value:g}")
        return value

    return parse


def comma_list(text: str) -> list[str]:
    """Argparse type of a comma-separated list of names (blanks dropped)."""
    return [v.strip() for v in text.split(",") if v.strip()]


def choice_list(choices: tuple[str, ...], *, allow_all: bool = False):
    """Argparse type of a comma-separated list of names from ``choices``."""

    def parse(text: str) -> list[str]:
        if allow_all and text == "all":
            return list(choices)
        values = comma_list(text)
        unknown = [v for v in values if v not in choices]
        if unknown or not values:
            raise argparse.ArgumentTypeError(
                f"unknown {', '.join(map(repr, unknown)) or 'empty list'}; "
                f"choose from {', '.join(choices)}")
        return values

    return parse


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


def add_output_options(parser: argparse.ArgumentParser, *, what: str = "the result table",
                       default_format: str | None = "table", out_help: str | None = None,
                       formats: tuple[str, ...] | None = None, format_help: str | None = None,
                       extra_suffixes: tuple[str, ...] = (), folders: bool = False) -> None:
    """``--out FILE`` and ``--format`` as every command that writes a table has them.

    The output file's suffix picks its format (.csv .tsv .jsonl .json .parquet, and
    ``extra_suffixes``); without ``--out``, ``--format`` picks what goes to stdout.
    """
    from labelaudit.registry import FORMATS

    choices = formats or FORMATS.names()
    suffixes = tuple(f".{f}" for f in choices if f != "table")
    parser.add_argument(
        "--out", "-o", type=output_file(suffixes + extra_suffixes, folders=folders),
        help=out_help or f"write {what} to this file; {' '.join(suffixes)} by its suffix "
        "(default: stdout)")
    parser.add_argument(
        "--format", choices=choices, default=default_format,
        help=format_help or f"format of {what} on stdout when --out is not given "
        f"(default: {default_format or 'depends on the command'})")


def emit_output(frame, args: argparse.Namespace, *, max_colwidth: int = 60) -> None:
    """Write ``frame`` to ``--out`` or to stdout in ``--format`` (see
    :func:`labelaudit.io.emit`); with ``--out``, say so on stderr unless ``--quiet``."""
    from labelaudit.io import emit

    out = getattr(args, "out", None)
    emit(frame, out, format=None if out else getattr(args, "format", None),
         max_colwidth=max_colwidth)
    if out:
        log(args, f"wrote {len(frame)} rows to {out}")


def emit_result(args: argparse.Namespace, document: dict, frame, *, shown=None) -> None:
    """A result with a JSON document and a table: ``--out x.json`` gets the document,
    another ``--out`` the table, standard output ``shown`` (default the table) in
    ``--format``."""
    if args.out and args.out.lower().endswith(".json"):
        from labelaudit.io import write_json

        write_json(document, args.out)
        log(args, f"wrote {args.out}")
    else:
        emit_output(frame if args.out or shown is None else shown, args)


def log(args: argparse.Namespace, text: str) -> None:
    """A line for a person on stderr, unless --quiet."""
    if not getattr(args, "quiet", False):
        print(text, file=sys.stderr)


def show_progress(args: argparse.Namespace) -> bool:
    """Progress bars only on a terminal and without --quiet."""
    return not getattr(args, "quiet", False) and sys.stderr.isatty()


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

    if not options:
        return text
    pattern = rf"\b({'|'.join(options)})=('[^']*'|[^\s,;:)/]*)"
    return re.sub(pattern, flag, text)


@contextmanager
def warnings_to_stderr(args: argparse.Namespace, *, flags: tuple[str, ...] = (),
                       bare: tuple[str, ...] = ()) -> Iterator[None]:
    """Show labelaudit's warnings as one ``warning:`` line each (none with --quiet), and
    reword them and labelaudit's errors with the library options ``flags`` spelled as
    flags (see :func:`as_flags`)."""
    from labelaudit._errors import LabelAuditError

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            yield
        except LabelAuditError as exc:
            if not flags:
                raise
            raise type(exc)(as_flags(str(exc), flags, bare)) from None
        finally:
            if not getattr(args, "quiet", False):
                seen = set()
                for w in caught:
                    text = as_flags(str(w.message), flags, bare)
                    if w.category.__module__.startswith("labelaudit") and text not in seen:
                        seen.add(text)
                        print(f"labelaudit: warning: {text}", file=sys.stderr)
