"""``labelaudit evaluate``: measure a scan's rankings against known label errors."""

from __future__ import annotations

import argparse
import sys

from labelaudit.cli._common import (
    add_output_options,
    at_least,
    flag_spelling,
    warnings_to_stderr,
)

ORDER = 30

_EPILOG = """examples:
  labelaudit evaluate issues.csv --truth truth.csv --id id --is-error is_error
  labelaudit evaluate issues.csv --truth truth.csv --true-label gold --unknown exclude
  labelaudit evaluate issues.csv --truth truth.csv --error-rate 0.05 --plot pr.png --format table

Every column named score_<method> (lower = more suspect) is one row of the output; choose
others with --scores. Items the truth leaves blank are unverified: --unknown says whether
to leave them out (exclude) or count them as clean; it is required when there are any.

--n-errors cannot exceed the number of items. An --at-k cut-off beyond the items evaluated
is clipped to them (p@k is then the error rate, r@k the share of errors found by checking
everything) and a warning says so.
"""

# labelaudit.metrics.evaluate names its options as Python does (unknown='exclude'); the
# messages it raises and warns say them as flags here (--unknown exclude).
_OPTIONS = ("id", "is_error", "true_label", "label", "scores", "unknown", "partial_ranking",
            "error_rate", "n_errors", "at_k")


def _error_rate(text: str) -> float:
    """Argparse type of --error-rate: a share in (0, 1]."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 < value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be in (0, 1], got {value:g}")
    return value


def _cutoffs(text: str) -> list[int]:
    """Argparse type of --at-k: comma-separated positive integers."""
    try:
        ks = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be comma-separated integers, e.g. 10,50; got {text!r}") from None
    if not ks or any(k < 1 for k in ks):
        raise argparse.ArgumentTypeError(f"cut-offs must be positive integers; got {text!r}")
    return list(dict.fromkeys(ks))


def add_parser(subparsers, parents) -> None:
    p = subparsers.add_parser(
        "evaluate", parents=parents,
        help="measure how well a scan's rankings find known label errors",
        description="Join a scan output with a truth file by id and report, for every score "
        "column, AUPR (trapezoidal), average precision, precision and recall at the number "
        "of errors (P,R@Err%), recall at twice that (R@2*Err%) and ROC AUC.",
        epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("issues", help="the scan output (CSV, TSV, JSONL, JSON, Parquet)")
    p.add_argument("--truth", required=True, help="file with the known errors, keyed by id")
    p.add_argument("--id", default="id", help="id column in both files (default: id)")
    truth = p.add_mutually_exclusive_group()
    truth.add_argument("--is-error", metavar="COLUMN",
                       help="truth column that is true for wrong labels, blank for unverified "
                       "(default: is_error, else --true-label true_label)")
    truth.add_argument("--true-label", metavar="COLUMN",
                       help="truth column with the correct label, compared with --label; "
                       "blank for unverified")
    p.add_argument("--label", default="label",
                   help="given-label column of the scan output, for --true-label (default: label)")
    p.add_argument("--scores", metavar="COLUMNS",
                   help="comma-separated score columns, lower = more suspect "
                   "(default: every score_* column)")
    p.add_argument("--unknown", choices=["exclude", "clean"],
                   help="unverified items (blank truth, or scan ids missing from the truth "
                   "file): leave them out, or count them as clean")
    p.add_argument("--partial-ranking", action="store_true",
                   help="the scan output lists only some items (a flagged list): truth items "
                   "missing from it rank after every listed item, tied")
    estimate = p.add_mutually_exclusive_group()
    estimate.add_argument("--error-rate", type=_error_rate, metavar="RATE",
                          help="estimated share of errors in the whole set, when only part "
                          "was verified: sets k of the @Err metrics and the recall denominator")
    estimate.add_argument("--n-errors", type=at_least(1), metavar="N",
                          help="estimated number of errors in the whole set (as --error-rate); "
                          "at most the number of items")
    p.add_argument("--at-k", metavar="K,...", type=_cutoffs, default=[],
                   help="also report precision and recall at these cut-offs, e.g. 10,50 "
                   "(a cut-off beyond the items evaluated is clipped to them, with a warning)")
    add_output_options(p, what="the metrics", out_help="also write the metrics: .json (a "
                       "document with the options used) or .csv .tsv .jsonl .parquet (the table)")
    p.add_argument("--plot", metavar="FILE", help="precision-recall curves, .png or .svg")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from labelaudit.metrics import evaluate

    with warnings_to_stderr(args):
        with flag_spelling(_OPTIONS, bare=("unknown",)):
            result = evaluate(
                args.issues, args.truth, id=args.id, is_error=args.is_error,
                true_label=args.true_label, label=args.label, scores=args.scores,
                unknown=args.unknown, partial_ranking=args.partial_ranking,
                error_rate=args.error_rate, n_errors=args.n_errors, at_k=args.at_k)
        _write(result, args)
    return 0


def _write(result, args: argparse.Namespace) -> None:
    """The metrics to stdout (and --out), the curves to --plot, the summary to stderr."""
    from labelaudit.io import emit, write_json

    table = result.to_frame()
    shown = table
    if args.format == "table":
        shown = table.rename(columns={
            "average_precision": "ap", "precision_at_err": "p@err", "recall_at_err": "r@err",
            "recall_at_2err": "r@2err", "n_unknown": "unverified",
            **{f"precision_at_{k}": f"p@{k}" for k in result.at_k},
            **{f"recall_at_{k}": f"r@{k}" for k in result.at_k},
        }).fillna({"unknown": "-"}).round(4)
    emit(shown, format=args.format)  # the metrics always go to stdout; --out writes them too
    if args.out and args.out.lower().endswith(".json"):
        write_json(result.to_dict(), args.out)
    elif args.out:
        emit(table, args.out)
    if args.plot:
        result.plot(args.plot)
    if not args.quiet:
        print(result.summary(), file=sys.stderr)
        for path in (args.out, args.plot):
            if path:
                print(f"wrote {path}", file=sys.stderr)
