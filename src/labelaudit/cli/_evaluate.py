"""``labelaudit evaluate``: measure a scan's rankings against known label errors."""

from __future__ import annotations

import argparse

from labelaudit.cli import _common as cli
from labelaudit.evaluation import evaluate
from labelaudit.io import emit


def add_parser(subparsers, parents) -> None:
    p = cli.add_command(subparsers, "evaluate", parents, handler=run)
    p.add_argument("issues", help="the scan output (CSV, TSV, JSONL, JSON, Parquet)")
    cli.add_options(p, eval={"required": True,
                             "help": "file with the known errors, keyed by id"},
                    id={"default": "id", "help": "id column in both files (default: id)"})
    cli.add_truth_options(p, what="--label")
    p.add_argument("--label", default="label",
                   help="given-label column of the scan output, for --true-label (default: label)")
    p.add_argument("--scores", metavar="COLUMNS",
                   help="comma-separated score columns, lower = more suspect but for loss "
                   "and --higher-is-suspect (default: every score_* column)")
    p.add_argument("--higher-is-suspect", metavar="COLUMNS",
                   help="comma-separated score columns whose higher values are more suspect "
                   "(labelaudit's loss is known; another column of --scores is read as lower "
                   "= more suspect, with a warning)")
    cli.add_options(p, label_sep={
        "help": "the labels compared with --true-label are label sets (multi-label) written "
        "as text joined by SEP (default: | for a multi-label scan's output, as scan writes "
        "it); sets are compared in any order, a blank cell is the empty set"})
    p.add_argument("--partial-ranking", action="store_true",
                   help="the scan output lists only some items (a flagged list): truth items "
                   "missing from it rank after every listed item, tied")
    estimate = p.add_mutually_exclusive_group()
    estimate.add_argument("--error-rate", type=cli.interval(0.0, low_open=True), metavar="RATE",
                          help="estimated share of errors in the whole set, when only part "
                          "was verified: sets k of the @Err metrics and the recall denominator")
    estimate.add_argument("--n-errors", type=cli.at_least(1), metavar="N",
                          help="estimated number of errors in the whole set (as --error-rate); "
                          "at most the number of items")
    p.add_argument("--at-k", metavar="K,...", type=cli.cut_offs, default=[],
                   help="also report precision and recall at these cut-offs, e.g. 10,50 "
                   "(a cut-off beyond the items evaluated is clipped to them, with a warning)")
    cli.add_output_options(p, what="the metrics", out_help="also write the metrics: .json (a "
                           "document with the options used) or .csv .tsv .jsonl .parquet "
                           "(the table)")
    cli.add_options(p, plot_out="precision-recall curves, .png or .svg")


def run(args: argparse.Namespace) -> int:
    with cli.warnings_to_stderr(args):
        result = evaluate(
            args.issues, args.eval, id=args.id, is_error=args.is_error,
            true_label=args.true_label, label=args.label, scores=args.scores,
            higher_is_suspect=args.higher_is_suspect, label_sep=args.label_sep,
            unknown=args.unknown, partial_ranking=args.partial_ranking,
            error_rate=args.error_rate, n_errors=args.n_errors,
            at_k=list(dict.fromkeys(args.at_k)))
        # The metrics always go to stdout (--out writes them too), the curves to --plot-out.
        emit(result.to_table() if args.format == "table" else result.to_frame(), format=args.format)
        if args.out:
            result.write(args.out)
        if args.plot_out:
            result.plot(args.plot_out)
        cli.log(args, result.summary())
        for path in (args.out, args.plot_out):
            if path:
                cli.log(args, f"wrote {path}")
    return 0
