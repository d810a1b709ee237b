"""How a command calls the library: its options bound to a function's parameters by name
(:func:`call`), and the library's messages spelled with the command's flags
(:func:`warnings_to_stderr`). Re-exported by :mod:`labelaudit.cli._common`."""

from __future__ import annotations

import argparse
import copy
import inspect
import re
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from labelaudit._errors import InvalidParameterError, LabelAuditError

if TYPE_CHECKING:  # pragma: no cover
    from labelaudit.tokens import Scheme

__all__ = ["as_flags", "call", "error_text", "exit_code", "flag", "show_progress", "tag_scheme",
           "warnings_to_stderr"]

# The library parameters whose option is named otherwise (parameter: the option's dest).
RENAMED = {"n_folds": "folds", "n_seeds": "seeds", "random_state": "seed",
           "n_reviewers": "reviewers", "n_sentinels": "sentinels",
           "n_qualification": "qualification"}
# What argparse and the command line keep in the namespace that is no option of the command.
_NOT_OPTIONS = {"handler", "parser", "command", "debug", "quiet", "folds_given",
                "bound"}


def flag(args: argparse.Namespace, dest: str) -> str:
    """The flag of the option stored in ``dest``, as --help shows it (``--`` and ``dest``
    with dashes when the command has no such option)."""
    for action in getattr(getattr(args, "parser", None), "_actions", ()):
        if action.dest == dest and action.option_strings and action.help != argparse.SUPPRESS:
            return max(action.option_strings, key=len)
    return f"--{dest.replace('_', '-')}"


def show_progress(args: argparse.Namespace) -> bool:
    """Progress bars only on a terminal and without --quiet."""
    return not getattr(args, "quiet", False) and sys.stderr.isatty()


def tag_scheme(args: argparse.Namespace) -> Scheme | None:
    """The ``--scheme`` of a token command for the library: None (``auto``) to detect it."""
    return None if args.scheme == "auto" else args.scheme  # argparse checked the choice


def _option(args: argparse.Namespace, name: str) -> str | None:
    """The dest of the command's option that sets the library parameter ``name``, if any."""
    dest = RENAMED.get(name, name)
    options = vars(args)
    if dest in options and dest not in _NOT_OPTIONS and not dest.endswith("_command"):
        return dest
    return None


def _has_flag(args: argparse.Namespace, dest: str) -> bool:
    """Whether ``dest`` is set by a flag (not by a positional argument)."""
    return any(action.dest == dest and action.option_strings
               for action in getattr(getattr(args, "parser", None), "_actions", ()))


def _choices(args: argparse.Namespace, dest: str) -> bool:
    """Whether the option stored in ``dest`` takes one of a few names (``choices``)."""
    return any(action.dest == dest and action.choices is not None
               for action in getattr(getattr(args, "parser", None), "_actions", ()))


def call(function: Any, args: argparse.Namespace, *positional: Any, **given: Any) -> Any:
    """``function(*positional, **given)``, each other parameter that the command has an
    option for (the same name, or :data:`RENAMED`) set from ``args``, ``progress`` to
    :func:`show_progress` and ``scheme`` to :func:`tag_scheme`. The parameters that options
    set are remembered, so that :func:`warnings_to_stderr` spells them as flags."""
    signature = inspect.signature(function)
    taken = set(signature.bind_partial(*positional).arguments) | set(given)
    keywords: dict[str, Any] = {}
    for name, parameter in signature.parameters.items():
        if name in taken or parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD,
                                               parameter.POSITIONAL_ONLY):
            continue
        if name == "progress":
            keywords[name] = show_progress(args)
        elif (dest := _option(args, name)) is not None:
            keywords[name] = tag_scheme(args) if name == "scheme" else getattr(args, dest)
    options = {name: dest for name in (*keywords, *given)
               if (dest := _option(args, name)) and _has_flag(args, dest)}
    args.bound = {**getattr(args, "bound", {}), **options}
    return function(*positional, **keywords, **given)


def as_flags(text: str, flags: dict[str, str], bare: tuple[str, ...] = ()) -> str:
    """A library message with ``option=value`` spelled as flags (``flags``, the flag of
    each library option): ``n_errors=5`` as ``--n-errors 5``, ``partial_ranking=True`` as
    ``--partial-ranking``; the quotes of a ``bare`` option's value go (``unknown='clean'``
    as ``--unknown clean``)."""
    def spell(match: re.Match[str]) -> str:
        name, value = match[1], match[2]
        if value == "True":
            value = ""
        elif name in bare:
            value = value.strip("'")
        return flags[name] + (f" {value}" if value else "")

    if not flags:
        return text
    return re.sub(rf"\b({'|'.join(flags)})=('[^']*'|[^\s,;:)/]*)", spell, text)


def _param_flag(args: argparse.Namespace, name: str) -> str:
    """The flag of the option that sets the library parameter ``name``: the one
    :func:`call` bound to it, else the option of the same name (or :data:`RENAMED`)."""
    return flag(args, getattr(args, "bound", {}).get(name) or RENAMED.get(name, name))


def error_text(exc: BaseException, args: argparse.Namespace) -> str:
    """The message of ``exc`` with the options it names (its ``params``, see
    :class:`labelaudit.LabelAuditError`) spelled as the command's flags: ``name=value`` as
    ``--name value`` wherever it appears, and a ``name`` that begins the message, its
    subject, as ``--name`` (``rank_by must be one of...`` as ``--rank-by must be one
    of...``); elsewhere a bare word is left alone, as it may be plain English."""
    text = str(exc)
    flags = {name: _param_flag(args, name) for name in getattr(exc, "params", ())}
    text = as_flags(text, flags)
    for name, spelled in flags.items():
        if re.match(rf"{re.escape(name)}(?![\w'\"=-])", text):
            text = spelled + text[len(name):]
    return text


def exit_code(exc: BaseException) -> int:
    """The exit code of an error: 2, a usage error, for a bad option value (an
    :class:`~labelaudit.InvalidParameterError` that names its option, ``param``, as every
    range and choice check does); 1 for the rest (bad data, a refused path, a missing file
    or model)."""
    return 2 if isinstance(exc, InvalidParameterError) and exc.params else 1


@contextmanager
def warnings_to_stderr(args: argparse.Namespace, *, flags: tuple[str, ...] = (),
                       bare: tuple[str, ...] = ()) -> Iterator[None]:
    """Show labelaudit's warnings as one ``warning:`` line each (none with --quiet), and
    reword them and labelaudit's errors with the library options spelled as the command's
    flags (see :func:`as_flags`): those that :func:`call` set from options, and ``flags``
    (``name=dest``: the library's ``name`` is the option stored in ``dest``)."""

    def reworded(text: str) -> str:
        bound = getattr(args, "bound", {})
        named = {name.split("=")[0]: name.split("=")[-1] for name in flags}
        words = {name: flag(args, dest) for name, dest in {**bound, **named}.items()}
        # an option with choices is spelled without quotes: engine='ray' as --engine ray
        unquoted = (*bare, *(name for name, dest in bound.items() if _choices(args, dest)))
        return as_flags(text, words, unquoted)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            yield
        except LabelAuditError as exc:
            if (text := reworded(str(exc))) == str(exc):
                raise
            reworded_exc = copy.copy(exc)  # the same error (its params too), reworded
            reworded_exc.args = (text,)
            raise reworded_exc from None
        finally:
            if not getattr(args, "quiet", False):
                seen = set()
                for w in caught:
                    text = reworded(str(w.message))
                    if w.category.__module__.startswith("labelaudit") and text not in seen:
                        seen.add(text)
                        print(f"labelaudit: warning: {text}", file=sys.stderr)
