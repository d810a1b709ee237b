"""``labelaudit impact``: what the verified label errors do to accuracy and model ranking."""

from __future__ import annotations

import argparse

from labelaudit.cli._common import (
    add_command,
    add_output_options,
    choice_list,
    log,
    show_progress,
    warnings_to_stderr,
)

ORDER = 32

_EPILOG = """examples:
  labelaudit impact corrected.jsonl --predictions resnet=a.csv --predictions bert=b.csv \\
      --out impact.json --plot impact.png
  labelaudit impact corrected.jsonl --train train.jsonl --text text --models ladder \\
      --out impact.json
  labelaudit impact table.csv --label label --corrected true_label --flagged verified ...

The corrected table is what `labelaudit review apply` writes (original label in
review_original_label, corrected label in the label column, review_verdict); a plain table
needs --label, --corrected and --flagged and/or --verdict (Correctable, Non-Agreement,
Non-Error; Pending items count as unknown, with a warning). A prediction file holds the id
and a predicted label (predicted_label, prediction, pred or label), or one probability
column per class. The model table goes to stdout, or to --out (.json: the whole document
with sizes, N and its interval, flips and the curves).

--models ladder fits TF-IDF + logistic regression at C = 0.01..100, MiniLM embeddings +
logistic regression, and fine-tuning when a CUDA GPU is present; --models tfidf,embed
picks kinds of rung.
"""

_OPTIONS = ("id", "label", "flagged", "verdict", "members",
            "confidence_level")
_LADDER = ("tfidf", "embed", "finetune")


def _prediction(text: str) -> tuple[str, str]:
    """Argparse type of --predictions NAME=FILE."""
    name, sep, path = text.partition("=")
    if not sep or not name.strip() or not path.strip():
        raise argparse.ArgumentTypeError(f"expected NAME=FILE, got {text!r}")
    return name.strip(), path.strip()


def _models(text: str) -> list[str]:
    """Argparse type of --models: ``ladder`` (every kind) or some of tfidf, embed, finetune."""
    return list(_LADDER) if text == "ladder" else choice_list(_LADDER)(text)


def add_parser(subparsers, parents) -> None:
    p = add_command(
        subparsers, "impact", parents, handler=run, epilog=_EPILOG,
        help="show what verified label errors do to model accuracy and ranking",
        description="Split a corrected test set into benign (B), correctable (C) and unknown\n"
        "(U) items; report the noise prevalence N = |C|/|P| with a Wilson interval, each\n"
        "model's original and corrected accuracy on P = B + C, on C and on B, the rankings,\n"
        "and the share of benign items removed at which each pair of models swaps places\n"
        "(Northcutt et al. 2021, section 6).")
    p.add_argument("corrected", help="corrected table (CSV, TSV, JSONL, JSON, Parquet)")
    source = p.add_argument_group("predictions (give --predictions or --train)")
    source.add_argument("--predictions", metavar="NAME=FILE", type=_prediction,
                        action="append", default=[],
                        help="one model's predictions for every item; repeat per model")
    source.add_argument("--train", metavar="FILE",
                        help="fit our own models on this training file instead")
    source.add_argument("--text", help="text column of --train and the corrected table")
    source.add_argument("--text-pair", metavar="COLUMN", help="second text of sentence pairs")
    source.add_argument("--train-label", metavar="COLUMN", default="label",
                        help="label column of --train (default: label)")
    source.add_argument("--models", type=_models, default=None, metavar="ladder|KINDS",
                        help="models fitted with --train: ladder (default), or some of "
                        "tfidf,embed,finetune")
    columns = p.add_argument_group("columns of the corrected table")
    columns.add_argument("--id", default="id", help="id column of every file (default: id)")
    columns.add_argument("--label", help="original label (default: review_original_label "
                         "of a review apply output, else label)")
    columns.add_argument("--corrected", dest="corrected_label", metavar="COLUMN",
                         help="corrected label (default: label of a review apply output, "
                         "else corrected)")
    columns.add_argument("--flagged", metavar="COLUMN",
                         help="true for items flagged for review (default: flagged, else "
                         "every item with a verdict)")
    columns.add_argument("--verdict", metavar="COLUMN",
                         help="review verdict (default: review_verdict or verdict)")
    add_output_options(p, what="the model table",
                       out_help="write the result: .json (the whole document) or "
                       ".csv .tsv .jsonl .parquet (the model table)")
    p.add_argument("--plot", metavar="FILE", help="A(x; M) per model against N, .png or .svg")


def _predictions(args: argparse.Namespace) -> dict:
    """Model name to predictions: the files given, or the ladder fitted on --train."""
    from labelaudit._errors import InvalidParameterError
    from labelaudit.metrics import ladder_predictions

    if args.train and args.predictions:
        raise InvalidParameterError("give --predictions or --train, not both")
    if args.predictions:
        if args.models is not None:
            raise InvalidParameterError("--models goes with --train")
        names = [name for name, _ in args.predictions]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise InvalidParameterError(f"model names given twice in --predictions: {twice}")
        return dict(args.predictions)
    if not args.train:
        raise InvalidParameterError("give --predictions NAME=FILE or --train FILE --text COL")
    if not args.text:
        raise InvalidParameterError("--train needs --text, the text column")
    log(args, "fitting the model ladder on " + args.train)
    return ladder_predictions(args.train, args.corrected, text=args.text,
                              text_pair=args.text_pair, label=args.train_label, id=args.id,
                              members=args.models or list(_LADDER),
                              progress=show_progress(args))


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from labelaudit.io import emit, write_json, write_table
    from labelaudit.metrics import impact

    with warnings_to_stderr(args, flags=_OPTIONS):
        result = impact(args.corrected, _predictions(args), id=args.id, label=args.label,
                        corrected_label=args.corrected_label, flagged=args.flagged,
                        verdict=args.verdict)
        if args.out and Path(args.out).suffix.lower() == ".json":
            write_json(result.to_dict(), args.out)
        elif args.out:
            write_table(result.to_frame(), args.out)
        else:
            emit(result.to_frame(), format=args.format)
        if args.plot:
            result.plot(args.plot)
        log(args, result.summary())
        for path in (args.out, args.plot):
            if path:
                log(args, f"wrote {path}")
    return 0
