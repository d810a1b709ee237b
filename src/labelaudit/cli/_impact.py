"""``labelaudit impact``: what the verified label errors do to accuracy and model ranking."""

from __future__ import annotations

import argparse

from labelaudit.cli import _common as cli
from labelaudit.impact import (
    check_impact_options,
    ladder_predictions,
    measure_impact,
    measure_impact_tokens,
    token_ladder_predictions,
)


def _prediction(text: str) -> tuple[str, str]:
    """Argparse type of --predictions NAME=FILE."""
    name, sep, path = text.partition("=")
    if not sep or not name.strip() or not path.strip():
        raise argparse.ArgumentTypeError(f"expected NAME=FILE, got {text!r}")
    return name.strip(), path.strip()


def _scorers(text: str) -> list[str] | None:
    """Argparse type of --scorers: ``ladder`` (every kind, None) or some kinds of rung."""
    return None if text == "ladder" else cli.choice_list(("tfidf", "embed", "finetune",
                                                          "encoder"))(text)


def add_parser(subparsers, parents) -> None:
    p = cli.add_command(subparsers, "impact", parents, handler=run)
    p.add_argument("corrected", help="corrected table (CSV, TSV, JSONL, JSON, Parquet)")
    source = p.add_argument_group("predictions (give --predictions or --train)")
    source.add_argument("--predictions", metavar="NAME=FILE", type=_prediction,
                        action="append", default=[],
                        help="one model's predictions for every item; repeat per model")
    source.add_argument("--train", metavar="FILE",
                        help="fit our own models on this training file instead")
    cli.add_options(
        source, "text", "text_pair",
        text={"default": None, "help": "text column of --train and the corrected table"},
        train_label={"metavar": "COLUMN", "default": "label",
                     "help": "label column of --train (default: label)"},
        scorers={"dest": "members", "type": _scorers, "metavar": "ladder|KINDS",
                 "help": "models fitted with --train: ladder (default), or some of "
                 "tfidf,embed,finetune (token data: encoder,finetune)"})
    columns = p.add_argument_group("columns of the corrected table")
    cli.add_options(columns, id={"default": "id", "help": "id column of every file (default: id)"})
    columns.add_argument("--label", help="original label (default: review_original_label "
                         "of a review apply output, else label)")
    cli.add_options(columns, corrected_label={
        "metavar": "COLUMN",
        "help": "corrected label (default: label of a review apply output, else corrected)"})
    columns.add_argument("--flagged", metavar="COLUMN",
                         help="true for items flagged for review (default: flagged, else "
                         "every item with a verdict)")
    columns.add_argument("--verdict", metavar="COLUMN",
                         help="review verdict (default: review_verdict or verdict)")
    tokens = p.add_argument_group("token data (NER, POS)")
    tokens.add_argument("--original", metavar="FILE",
                        help="the original copy of a tagged file (CoNLL or token JSONL); the "
                        "corrected file is then its corrected copy")
    cli.add_tag_options(tokens, what="the token files")
    cli.add_output_options(p, what="the model table", json="the whole document",
                           table="the model table")
    cli.add_options(p, plot_out="A(x; M) per model against N, .png or .svg")


def _fitted(args: argparse.Namespace, members: list[str]) -> dict:
    """The predictions of the model ladder fitted on --train."""
    if args.original:
        cli.log(args, "fitting the token model ladder on " + args.train)
        return token_ladder_predictions(
            args.train, args.original, members=members, scheme=cli.tag_scheme(args),
            tag_column=args.tag_column, progress=cli.show_progress(args))
    cli.log(args, "fitting the model ladder on " + args.train)
    return ladder_predictions(args.train, args.corrected, text=args.text,
                              text_pair=args.text_pair, label=args.train_label, id=args.id,
                              members=members, progress=cli.show_progress(args))


def run(args: argparse.Namespace) -> int:
    with cli.warnings_to_stderr(args):
        members = check_impact_options(
            args.corrected, predictions=args.predictions, train=args.train,
            original=args.original, members=args.members, text=args.text,
            text_pair=args.text_pair, label=args.label, corrected_label=args.corrected_label,
            flagged=args.flagged, verdict=args.verdict, scheme=cli.tag_scheme(args),
            tag_column=args.tag_column)
    with cli.warnings_to_stderr(args):
        predictions = dict(args.predictions) if members is None else _fitted(args, members)
        if args.original:
            result = measure_impact_tokens(args.corrected, args.original, predictions,
                                           scheme=cli.tag_scheme(args),
                                           tag_column=args.tag_column)
        else:
            result = measure_impact(args.corrected, predictions, id=args.id, label=args.label,
                                    corrected_label=args.corrected_label,
                                    flagged=args.flagged, verdict=args.verdict)
        cli.emit_result(args, result)
    cli.log(args, result.summary())  # after the warnings, which the block prints as it closes
    return 0
