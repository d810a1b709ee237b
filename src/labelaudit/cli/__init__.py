"""The ``labelaudit`` command line: a thin layer over the library.

Each command lives in its own private module here (``_scan.py``, ``_evaluate.py``...) whose
``add_parser(subparsers, parents)`` adds it (and its steps) with ``_common.add_command``, its
options from the shared vocabulary (``_common.add_options``). Modules are discovered, so adding
a command never edits this file; they import heavy dependencies inside their handlers so that
``--help`` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from collections.abc import Sequence
from pathlib import Path

from labelaudit._errors import LabelAuditError
from labelaudit.cli._common import Parser, add_steps, flag

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
                        help="replace an existing output file that labelaudit did not write "
                        "(its own earlier outputs are replaced anyway; an input, a file inside "
                        "a model folder and a folder labelaudit did not write never are)")
    sub = add_steps(parser, dest="command", metavar="COMMAND")
    for module in _command_modules():
        module.add_parser(sub, parents=[common])
    return parser


# Argument names (``dest``) that hold files a command reads. A list value (``--predictions
# NAME=FILE``, repeated) names one file per item, the path last. The files a command writes
# are ``out`` and every ``*_out`` (one rule for every command), and review init's --db.
_INPUTS = ("data", "score", "issues", "input", "verdicts", "file", "scan", "sentinels_file",
           "annotations_file", "noise_matrix", "corrected", "train", "val", "predictions",
           "original", "suspect", "eval", "pred_probs")
_POSITIONAL = ("data", "issues", "input", "verdicts", "file", "scan", "corrected", "train")
# Folders a command writes a model to, and arguments that may name a model folder it reads.
_FOLDER_OUTPUTS = {"model_out": "model", "tapt_out": "tapt"}
_MODELS = ("model",)
# Inputs that must exist before any work starts (a hub dataset name passes: see read_data).
_MUST_EXIST = ("score", "verdicts", "sentinels_file", "annotations_file", "noise_matrix", "val",
               "predictions", "original", "suspect", "eval", "pred_probs")


def _check_outputs(args: argparse.Namespace) -> None:
    """Before any work: refuse an output that names an input (or the review project), lies
    inside a model folder, replaces a file or folder labelaudit did not write, or cannot be
    written; refuse a missing input file and a plot suffix that cannot be drawn."""
    from labelaudit.io import check_input_paths, check_output_folder, check_output_paths

    in_names = list(_INPUTS)
    out_names = [name for name in vars(args) if name not in _FOLDER_OUTPUTS and
                 (name == "out" or name.endswith("_out"))]
    # `review init` creates (or with --overwrite replaces) --db; the other steps read it.
    (out_names if getattr(args, "review_command", None) == "init" else in_names).append("db")
    inputs = [("an input file" if name in _POSITIONAL else f"the {flag(args, name)} file", path)
              for name in in_names for path in _paths(getattr(args, name, None))]
    check_input_paths([(f"the {flag(args, name)} file", path) for name in _MUST_EXIST
                       for path in _paths(getattr(args, name, None))])
    models = [path for name in _MODELS for path in _paths(getattr(args, name, None))
              if isinstance(path, str) and Path(path).is_dir()]
    folders = [(name, getattr(args, name, None)) for name in _FOLDER_OUTPUTS]
    for name, folder in folders:
        if isinstance(folder, str):
            check_output_folder(folder, kind=_FOLDER_OUTPUTS[name], name="--out",
                                inputs=[path for _, path in inputs] + models)
    check_output_paths(
        [(flag(args, name), getattr(args, name, None)) for name in out_names],
        inputs, overwrite=bool(getattr(args, "overwrite", False)),
        model_folders=models + [f for _, f in folders if isinstance(f, str)],
        remote=["--out"] if getattr(args, "command", None) == "scan" else [])
    if isinstance(getattr(args, "plot_out", None), str):
        from labelaudit.io import figure_path

        figure_path(args.plot_out)


def _paths(value: object) -> list[object]:
    """The file paths an argument holds: itself, or each item's path for a repeated one."""
    if isinstance(value, list):
        return [item[-1] if isinstance(item, tuple) else item for item in value]
    return [value]


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
        if getattr(args, "debug", False):
            raise
        print(f"labelaudit {args.command}: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("labelaudit: interrupted", file=sys.stderr)
        return 130
