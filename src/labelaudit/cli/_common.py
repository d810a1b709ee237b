"""What the command modules share: the parsers of commands and steps, the option vocabulary
(one flag, type and help per concept), argparse types, and the helpers that write outputs and
talk on stderr."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from labelaudit.cli._help import command_help
from labelaudit.cli._library import (  # noqa: F401 - the command modules use them as cli.X
    as_flags,
    call,
    error_text,
    exit_code,
    flag,
    show_progress,
    tag_scheme,
    warnings_to_stderr,
)
from labelaudit.cli._types import (  # noqa: F401 - the command modules use them as cli.X
    at_least,
    choice_list,
    comma_list,
    cut_offs,
    fraction,
    interval,
    output_file,
    separator,
    tag_column,
)

# The closing paragraph of the --help of every command that runs torch.
TORCH_NOTE = """
threads: torch uses one thread per free CPU core (the cores this process may use, less the
1-minute load average; 1 to 8), so a busy machine is not slowed further; set
LABELAUDIT_THREADS=N to choose the number.
"""


class Parser(argparse.ArgumentParser):
    """The parser of ``labelaudit``, of each command and of each step. A command with steps
    (:func:`add_steps`) and a default step reads ``COMMAND FILE ...`` as
    ``COMMAND STEP FILE ...``. An option is spelled in full: a prefix (``--report`` for
    ``--report-out``) is an unknown option."""

    steps: Any = None
    default_step: str | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **{"allow_abbrev": False, **kwargs})

    def parse_known_args(self, args=None, namespace=None):  # type: ignore[override]
        if self.default_step:
            args = list(sys.argv[1:] if args is None else args)
            if not args:
                self.print_help(sys.stderr)
                self.exit(2)
            if args[0] not in self.steps.choices and args[0] not in ("-h", "--help"):
                args = [self.default_step, *args]
        return super().parse_known_args(args, namespace)

    def parse_args(self, args=None, namespace=None):  # type: ignore[override]
        """As argparse's, but an option of another step of the command is named as such
        (``--folds: used by `noise realism` only``)."""
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            flags = [x.split("=")[0] for x in extras if x.startswith("-")]
            if where := self._steps_with(parsed, flags):
                parsed.parser.error(f"{', '.join(flags)}: used by {' and '.join(where)} only")
            # the usage of the command (or step) that was given them, not the top level's
            getattr(parsed, "parser", self).error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed

    def _steps_with(self, parsed: argparse.Namespace, flags: list[str]) -> list[str]:
        """The other steps of the command parsed that have one of ``flags``."""
        command = self.steps.choices.get(getattr(parsed, "command", None)) if self.steps else None
        steps = getattr(command, "steps", None)
        return [f"`{parsed.command} {name}`" for name, step in (steps.choices.items() if steps
                                                                 else ())
                if step is not parsed.parser and set(flags) & set(step._option_string_actions)]


def add_command(subparsers, name: str, parents: list[argparse.ArgumentParser], *, help: str,
                handler, raw: bool = True, **kwargs) -> Parser:
    """The parser of one command or step (``help`` is its line in the parent's ``--help``;
    its description and examples come from help.toml), run by ``handler`` (None for a
    command with steps); ``raw`` keeps the description's and epilog's line breaks.
    ``args.parser`` is the parser that read the command line."""
    path = " ".join([*subparsers._prog_prefix.split()[1:], name])
    text = command_help()[path]
    epilog = text.get("epilog")
    if text.get("torch_note"):
        epilog = (epilog or "") + TORCH_NOTE
    formatter = argparse.RawDescriptionHelpFormatter if raw else argparse.HelpFormatter
    parser = subparsers.add_parser(name, parents=parents, help=help,
                                   description=text["description"], epilog=epilog,
                                   formatter_class=formatter, **kwargs)
    parser.set_defaults(handler=handler, parser=parser)
    return parser


def add_steps(parser: Parser, *, dest: str, default: str | None = None, **kwargs):
    """The steps of a command (``review init``...), each added with :func:`add_command`;
    with ``default``, ``COMMAND FILE ...`` is short for ``COMMAND DEFAULT FILE ...``."""
    parser.steps = parser.add_subparsers(dest=dest, **kwargs)
    parser.default_step = default
    return parser.steps


# ---------------------------------------------------------------- the option vocabulary

_FILE = {"metavar": "FILE"}
# One spelling, type and help per concept, whatever the command (add_options). Every other
# output file than --out is --<what>-out.
VOCABULARY: dict[str, dict[str, Any]] = {
    "text": {"default": "text", "help": "text column (default: text)"},
    "text_pair": {"metavar": "COLUMN", "help": "second text column, for sentence pairs (NLI)"},
    "label": {"default": "label", "help": "label column (default: label)"},
    "id": {"help": "id column (default: a column named id if the table has one, else the row "
           "number from 0)"},
    "model": {"help": "encoder: a Hugging Face id or a local folder (default: the packaged "
              "all-MiniLM-L6-v2)"},
    "epochs": {"type": at_least(1)},
    "batch_size": {"type": at_least(1), "metavar": "N"},
    "max_length": {"type": at_least(8), "metavar": "N"},
    "lr": {"dest": "learning_rate", "type": float, "metavar": "RATE"},
    "device": {"help": "torch device: cuda, cpu, cuda:1... (default: cuda when available, "
               "else cpu)"},
    "cache_dir": {"help": "embedding cache (default: ~/.cache/labelaudit)"},
    "seeds": {"type": at_least(1)},
    "sweep": {"type": at_least(1), "metavar": "N"},
    "scorers": {"metavar": "NAMES"},
    "eval": _FILE,
    "score": {**_FILE, "help": "rank this file's items with models fitted on DATA (a test-set "
              "audit)"},
    "annotations_file": _FILE,
    "tag_column": {"type": tag_column, "default": -1},
    "scheme": {"choices": ["auto", "iob1", "iob2", "bioes", "plain"], "default": "auto"},
    "plot_out": _FILE, "summary_out": _FILE, "metrics_out": _FILE,
    "report_out": {"metavar": "FILE.html"}, "label_config_out": _FILE,
    "gold_out": _FILE, "items_out": _FILE, "annotators_out": _FILE,
    "engine": {"choices": ["local", "ray"], "default": "local",
               "help": "where the fits run: here (default; --workers processes), or each as "
               "a Ray task (needs labelaudit[scale])"},
    "ray_address": {"metavar": "ADDRESS", "help": "an existing Ray cluster for --engine ray "
                    "(auto, host:6379)"},
    "label_sep": {"metavar": "SEP", "type": separator,
                  "help": "the label column holds label sets (multi-label) as text joined by "
                  "SEP (\"sports|politics\" with |); a column of lists (JSONL, Parquet) is "
                  "read as label sets without it"},
    "workers": {"type": at_least(1), "default": 1, "metavar": "N",
                "help": "processes running the fits at once; the result is the same "
                "(default: 1)"},
}


def add_options(parser, *names: str, **changes: Any) -> None:
    """The options ``names``, then those of ``changes``, as :data:`VOCABULARY` has them,
    flag ``--name-with-dashes``; a change is the option's help, or a dict of add_argument
    arguments that update the vocabulary's."""
    for name in (*names, *(n for n in changes if n not in names)):
        change = changes.get(name) or {}
        spec = {**VOCABULARY.get(name, {}), **({"help": change} if isinstance(change, str)
                                               else change)}
        parser.add_argument(f"--{name.replace('_', '-')}", **spec)


def add_seed(parser, *, type=int, help: str = "random seed (default: 0)") -> None:
    """``--seed`` (default 0)."""
    parser.add_argument("--seed", type=type, default=0, help=help)


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
    from labelaudit.models import exact_folds

    return exact_folds(getattr(args, "folds_given", False))


def add_backbone_options(parser) -> None:
    """--backbone, --model and --epochs of the models ``train`` and ``train-bench`` fit."""
    parser.add_argument("--backbone", choices=("head", "finetune"), default="head",
                        help="head: a network over frozen embeddings (default); finetune: the "
                        "whole model")
    add_options(parser, model="encoder (head) or model to fine-tune (default: "
                "all-MiniLM-L6-v2, packaged)", epochs="default: 20 (head), 4 (finetune)")


def add_tag_options(parser, *, what: str) -> None:
    """``--scheme`` and ``--tag-column``: how to read the tags of a token file."""
    add_options(parser, scheme=f"tagging scheme of {what} (default: detected); 'plain' for "
                "tags without spans such as POS tags",
                tag_column=f"0-based column of the tag in CoNLL files of {what}; negative "
                "counts from the end (default: -1, the last)")


def add_truth_options(parser, *, what: str) -> None:
    """The known errors, as ``evaluate`` and ``report`` read them: ``--is-error`` or
    ``--true-label`` and ``--unknown``."""
    kind = parser.add_mutually_exclusive_group()
    kind.add_argument("--is-error", metavar="COLUMN",
                      help="column of the --eval file that is true for wrong labels, blank for "
                      "unverified (default: is_error, else --true-label true_label)")
    kind.add_argument("--true-label", metavar="COLUMN",
                      help=f"column of the --eval file with the correct label, compared with "
                      f"{what}; blank for unverified")
    parser.add_argument("--unknown", choices=["exclude", "clean"],
                        help="unverified items (blank in the --eval file, or scan ids missing "
                        "from it): leave them out, or count them as clean")


def add_output_options(parser, *, what: str = "the result table",
                       default_format: str | None = "table", out_help: str | None = None,
                       json: str | None = None, table: str = "the table",
                       formats: tuple[str, ...] | None = None, format_help: str | None = None,
                       extra_suffixes: tuple[str, ...] = (), folders: bool = False) -> None:
    """``--out FILE`` and ``--format`` as every command that writes a table has them.

    The output file's suffix picks its format (.csv .tsv .jsonl .json .parquet, and
    ``extra_suffixes``); without ``--out``, ``--format`` picks what goes to stdout. With
    ``json``, a .json file holds that document, the other suffixes ``table``.
    """
    from labelaudit.registry import FORMATS

    choices = formats or FORMATS.names()
    suffixes = tuple(f".{f}" for f in choices if f != "table")
    if json:
        out_help = f"write the result: .json ({json}) or .csv .tsv .jsonl .parquet ({table})"
    parser.add_argument(
        "--out", "-o", type=output_file(suffixes + extra_suffixes, folders=folders),
        help=out_help or f"write {what} to this file; {' '.join(suffixes)} by its suffix "
        "(default: stdout)")
    parser.add_argument(
        "--format", choices=choices, default=default_format,
        help=format_help or f"format of {what} on stdout when --out is not given "
        f"(default: {default_format or 'depends on the command'})")


# ---------------------------------------------------------------- output and stderr

def emit_output(frame, args: argparse.Namespace, *, max_colwidth: int = 60,
                summary=None) -> None:
    """Write ``frame`` to ``--out`` or to stdout in ``--format`` (see
    :func:`labelaudit.io.emit`); with ``--out``, say so on stderr unless ``--quiet``. With
    ``summary`` (a result): its document to ``--summary-out`` when given, then its summary
    on stderr."""
    from labelaudit.io import emit, write_json

    out = getattr(args, "out", None)
    emit(frame, out, format=None if out else getattr(args, "format", None),
         max_colwidth=max_colwidth)
    if out:
        log(args, f"wrote {len(frame)} rows to {out}")
    if summary is not None:
        if getattr(args, "summary_out", None):
            write_json(summary.to_dict(), args.summary_out)
        log(args, summary.summary())


def set_separator(args: argparse.Namespace) -> str | None:
    """How label sets are written: joined by ``--label-sep`` (else ``|``) when the output
    is CSV, TSV or the table view; None (lists) for JSON, JSONL and Parquet."""
    out = getattr(args, "out", None)
    fmt = (str(out).rsplit(".", 1)[-1].lower() if out else getattr(args, "format", None)) or ""
    return (getattr(args, "label_sep", None) or "|") if fmt in ("csv", "tsv", "table") else None


def emit_result(args: argparse.Namespace, result, *, shown=None) -> None:
    """A command's result (:class:`labelaudit.io.ResultFiles`): ``--out`` gets
    ``result.write``, standard output ``shown`` (default the result's table) in
    ``--format``; ``--plot-out`` its plot."""
    if args.out:
        result.write(args.out)
        json = args.out.lower().endswith(".json")
        log(args, f"wrote {args.out}" if json else
            f"wrote {len(result.file_frame())} rows to {args.out}")
    else:
        emit_output(result.file_frame() if shown is None else shown, args)
    if getattr(args, "plot_out", None):
        result.plot(args.plot_out)
        log(args, f"wrote {args.plot_out}")


def log(args: argparse.Namespace, text: str) -> None:
    """A line for a person on stderr, unless --quiet."""
    if not getattr(args, "quiet", False):
        print(text, file=sys.stderr)
