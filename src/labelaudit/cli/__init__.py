"""The ``labelaudit`` command line: a thin layer over the library.

Each command is a private module named after it (``_train_bench.py`` for ``train-bench``)
whose ``add_parser(subparsers, parents)`` adds it with ``_common.add_command`` and options
from ``_common.add_options``; its handler calls the library flag by flag. A new command is a
module and an entry in help.toml (its help, description and examples, in --help's order).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from labelaudit._errors import LabelAuditError
from labelaudit._version import __version__
from labelaudit.cli._common import COMMANDS, HELP, Parser, add_steps, error_text, exit_code, flag
from labelaudit.io import check_command_paths

__all__ = ["main"]


def build_parser(*commands: str) -> argparse.ArgumentParser:
    """The parser of ``labelaudit``: every command listed, and the full parser of each of
    ``commands``. The one place that imports a command's module when it runs, so that
    ``labelaudit scan`` builds ``scan`` alone and ``labelaudit --help`` none."""
    parser = Parser(prog="labelaudit",
                    description="Find, measure and fix label errors in NLP datasets.")
    parser.add_argument("--version", action="version", version=f"labelaudit {__version__}")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    common.add_argument("--quiet", "-q", action="store_true", help="no progress bars or summary")
    common.add_argument("--overwrite", action="store_true",
                        help="replace labelaudit's own earlier output even if it was changed "
                        "since (unchanged, it is replaced anyway); a file or folder labelaudit "
                        "did not write, an input and a file inside a model folder never are")
    sub = add_steps(parser, dest="command", metavar="COMMAND")
    for command in COMMANDS:
        if command in commands:
            module = importlib.import_module(f"labelaudit.cli._{command.replace('-', '_')}")
            module.add_parser(sub, parents=[common])
        else:
            sub.add_parser(command, help=HELP[command]["help"])
    return parser


def _check_outputs(args: argparse.Namespace) -> None:
    """Before any work, the files the command names (:func:`~labelaudit.io.check_command_paths`)."""
    check_command_paths(
        vars(args), flag=lambda name: flag(args, name),
        # `review init` creates (or replaces its own earlier) --db; the other steps read it.
        writes=["db"] if getattr(args, "review_command", None) == "init" else [],
        overwrite=bool(getattr(args, "overwrite", False)),
        remote=["out"] if getattr(args, "command", None) == "scan" else [])


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the process exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    # the command is the first word: the top level's options (--help, --version) take no value
    parser = build_parser(*[word for word in argv if not word.startswith("-")][:1])
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help(sys.stderr)
        return 2
    try:
        _check_outputs(args)
        return int(args.handler(args) or 0)
    except BrokenPipeError:
        # stdout was closed early (``labelaudit ... | head``): not an error of ours.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except (LabelAuditError, OSError) as exc:
        # OSError: an unwritable --out folder, a permission error... one line, like data errors.
        # A bad option value exits 2 as argparse's usage errors do (see exit_code).
        if getattr(args, "debug", False):
            raise
        print(f"labelaudit {args.command}: error: {error_text(exc, args)}", file=sys.stderr)
        return exit_code(exc)
    except KeyboardInterrupt:
        print("labelaudit: interrupted", file=sys.stderr)
        return 130
