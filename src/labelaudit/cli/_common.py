"""What the command modules share: help.toml (every command's line of help, description and
examples), the parsers of commands and steps, the option vocabulary (one flag, type and help
per concept) with its argparse types, and how a command speaks: the library's errors and
warnings with the options they name spelled as flags, its outputs and its lines on stderr."""

from __future__ import annotations

import argparse
import re
import sys
import tomllib
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from importlib.resources import files
from pathlib import Path
from typing import Any

from labelaudit._errors import InvalidParameterError
from labelaudit._validation import check_int, check_number
from labelaudit.io import FORMATS, check_separator, emit, write_json
from labelaudit.tokens import Scheme

# Every command and step by its path ("scan", "review init"), the commands in --help's order:
# help (its line in the parent's --help), description, epilog (the examples), torch_note.
HELP: dict[str, dict[str, Any]] = tomllib.loads(
    files("labelaudit.cli").joinpath("help.toml").read_text(encoding="utf-8"))
COMMANDS = [path for path in HELP if " " not in path]

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


def add_command(subparsers, name: str, parents: list[argparse.ArgumentParser], *, handler,
                raw: bool = True, **kwargs) -> Parser:
    """One command's or step's parser, texts from :data:`HELP`; sets ``args.parser``."""
    path = " ".join([*subparsers._prog_prefix.split()[1:], name])
    text = HELP[path]
    epilog = text.get("epilog")
    if text.get("torch_note"):
        epilog = (epilog or "") + TORCH_NOTE
    formatter = argparse.RawDescriptionHelpFormatter if raw else argparse.HelpFormatter
    parser = subparsers.add_parser(name, parents=parents, help=text["help"],
                                   description=text["description"], epilog=epilog,
                                   formatter_class=formatter, **kwargs)
    parser.set_defaults(handler=handler, parser=parser)
    return parser


def add_steps(parser: Parser, *, dest: str, default: str | None = None, **kwargs):
    """The steps of a command; with ``default``, ``COMMAND FILE`` means ``COMMAND DEFAULT FILE``."""
    parser.steps = parser.add_subparsers(dest=dest, **kwargs)
    parser.default_step = default
    return parser.steps


# ---------------------------------------------------------------- argparse types

def _number(text: str, kind: type = float) -> Any:
    try:
        return kind(text)
    except ValueError:
        what = "an integer" if kind is int else "a number"
        raise argparse.ArgumentTypeError(f"not {what}: {text!r}") from None


def _checked(kind: type, check: Any, note: str = "", **limits: Any):
    """Argparse type of a number in the range the library's ``check`` enforces, in its words."""

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
    """Argparse type of --label-sep: :func:`labelaudit.io.check_separator`'s rule."""
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
    """Argparse type of an output path whose suffix picks the format; with ``folders``, a
    folder (ending in ``/``, or a URI without a suffix) of Parquet parts too."""

    def parse(text: str) -> str:
        where = text.split("?", 1)[0] if "://" in text else text
        if folders and (where.endswith("/") or ("://" in where and not Path(where).suffix)):
            return text
        if Path(where).suffix.lower() not in suffixes:
            raise argparse.ArgumentTypeError(
                f"{text}: the suffix picks the format; use one of {' '.join(suffixes)}")
        return text

    return parse


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
    """The :data:`VOCABULARY` options ``names`` and ``changes`` (a help or add_argument kwargs)."""
    for name in (*names, *(n for n in changes if n not in names)):
        change = changes.get(name) or {}
        spec = {**VOCABULARY.get(name, {}), **({"help": change} if isinstance(change, str)
                                               else change)}
        parser.add_argument(f"--{name.replace('_', '-')}", **spec)


def add_seed(parser, *, type=int, help: str = "random seed (default: 0)") -> None:
    """``--seed`` (default 0)."""
    parser.add_argument("--seed", type=type, default=0, help=help)


def add_folds(parser) -> None:
    """``--folds``, None when not given (see :func:`labelaudit.models.make_folds`)."""
    parser.add_argument("--folds", type=at_least(2), default=None,
                        help="cross-fitting folds (default: 5, fewer when a class has fewer "
                        "items; a --folds above the smallest class is an error)")


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
    """``--is-error`` or ``--true-label``, and ``--unknown`` (``evaluate``, ``report``)."""
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
    """``--out FILE`` (the suffix picks the format; with ``json``, .json holds that document)
    and ``--format`` (of stdout)."""
    choices = formats or tuple(FORMATS)
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

def emit_output(frame, args: argparse.Namespace, *, max_colwidth: int = 60, summary=None) -> None:
    """``frame`` to ``--out`` or stdout; ``summary``'s document to ``--summary-out``."""
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
    """``--label-sep`` (else ``|``) for CSV, TSV or table output; None (lists) otherwise."""
    out = getattr(args, "out", None)
    fmt = (str(out).rsplit(".", 1)[-1].lower() if out else getattr(args, "format", None)) or ""
    return (getattr(args, "label_sep", None) or "|") if fmt in ("csv", "tsv", "table") else None


def emit_result(args: argparse.Namespace, result, *, shown=None) -> None:
    """A ResultFiles to ``--out`` or stdout (``shown``), its plot to ``--plot-out``."""
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


# ---------------------------------------------------------------- the library's messages

# The library parameters that every command's option names otherwise (parameter: its dest).
# A command's other options are stored under the name of the parameter they set (``--sweep``
# of `select` in ``n_configs``), so that the library's messages can name their flag.
RENAMED = {"n_folds": "folds", "n_seeds": "seeds", "random_state": "seed"}


def _option(args: argparse.Namespace, dest: str) -> argparse.Action | None:
    """The option of the command that stores ``dest``, if --help shows one."""
    for action in getattr(getattr(args, "parser", None), "_actions", ()):
        if action.dest == dest and action.option_strings and action.help != argparse.SUPPRESS:
            return action
    return None


def flag(args: argparse.Namespace, dest: str) -> str:
    """The flag of the option stored in ``dest`` (else ``--dest-with-dashes``)."""
    option = _option(args, dest)
    return max(option.option_strings, key=len) if option else f"--{dest.replace('_', '-')}"


def show_progress(args: argparse.Namespace) -> bool:
    """Progress unless --quiet: bars on a terminal, plain lines on stderr elsewhere (see
    :func:`labelaudit.models.progress_bar`)."""
    return not getattr(args, "quiet", False)


def tag_scheme(args: argparse.Namespace) -> Scheme | None:
    """The ``--scheme`` of a token command for the library: None (``auto``) to detect it."""
    return None if args.scheme == "auto" else args.scheme  # argparse checked the choice


def error_text(message: BaseException | Warning | str, args: argparse.Namespace) -> str:
    """A labelaudit error's or warning's text with its ``params`` spelled as the command's
    flags: ``name=value`` as ``--name value`` (``name=True`` as ``--name``; a choice unquoted)
    and a ``name`` that begins the message as ``--name``; elsewhere a bare word is left
    alone, as it may be plain English."""
    text = str(message)
    for name in getattr(message, "params", ()):
        dest = RENAMED.get(name, name)
        spelled, choices = flag(args, dest), getattr(_option(args, dest), "choices", None)
        text = re.sub(rf"\b{name}=('[^']*'|[^\s,;:)/]*)",
                      partial(_with_value, spelled, bare=bool(choices)), text)
        if re.match(rf"{name}(?![\w'\"=-])", text):
            text = spelled + text[len(name):]
    return text


def _with_value(spelled: str, match: re.Match[str], *, bare: bool) -> str:
    """``--flag value`` for a ``name=value`` match (no value for True, unquoted if ``bare``)."""
    value = "" if match[1] == "True" else match[1].strip("'") if bare else match[1]
    return spelled + (f" {value}" if value else "")


def exit_code(exc: BaseException) -> int:
    """2 for a bad option value (an InvalidParameterError with ``params``), else 1."""
    return 2 if isinstance(exc, InvalidParameterError) and exc.params else 1


@contextmanager
def warnings_to_stderr(args: argparse.Namespace) -> Iterator[None]:
    """labelaudit's warnings of the block at its end (after the progress bars), one line each."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            yield
        finally:
            if not getattr(args, "quiet", False):
                seen = set()
                for w in caught:
                    text = error_text(w.message, args)
                    if w.category.__module__.startswith("labelaudit") and text not in seen:
                        seen.add(text)
                        print(f"labelaudit: warning: {text}", file=sys.stderr)
