"""The ``labelaudit`` command line: a thin layer over the library.

Each command lives in its own private module here (``_scan.py``, ``_evaluate.py``...) whose
``add_parser(subparsers, parents)`` adds it (and its steps) with ``_common.add_command``, its
options from the shared vocabulary (``_common.add_options``); its handler calls the library
with ``_common.call``, which sets each parameter from the option of the same name. Modules are
discovered, so adding a command never edits this file; they import heavy dependencies inside
their handlers so that ``--help`` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from collections.abc import Sequence

from labelaudit._errors import LabelAuditError
from labelaudit.cli._common import Parser, add_steps, error_text, exit_code, flag

__all__ = ["main", "build_parser"]


def _command_modules() -> list:
    modules = [importlib.import_module(f"{__name__}.{info.name}")
               for info in pkgutil.iter_modules(__path__)
               if info.name.startswith("_") and not info.name.startswith("__")]
    return sorted((m for m in modules if hasattr(m, "add_parser")),
                  key=lambda m: (getattr(m, "ORDER", 50), m.__name__))


def build_parser() -> argparse.ArgumentParser:
    """Build the top-level parser with every discovered subcommand."""
    from labelaudit import __version__

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
    for module in _command_modules():
        module.add_parser(sub, parents=[common])
    return parser


def _check_outputs(args: argparse.Namespace) -> None:
    """Before any work, the files the command names (see
    :func:`labelaudit.io.check_command_paths`)."""
    from labelaudit.io import check_command_paths

    check_command_paths(
        vars(args), flag=lambda name: flag(args, name),
        # `review init` creates (or replaces its own earlier) --db; the other steps read it.
        writes=["db"] if getattr(args, "review_command", None) == "init" else [],
        overwrite=bool(getattr(args, "overwrite", False)),
        remote=["out"] if getattr(args, "command", None) == "scan" else [])


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help(sys.stderr)
        return 2
    try:
        _check_outputs(args)
        return int(args.handler(args) or 0)
    except BrokenPipeError:
        # stdout was closed early (``labelaudit ... | head``): not an error of ours.
        import os

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
