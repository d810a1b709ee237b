"""``labelaudit report``: a scan's audit report as one self-contained HTML page."""

from __future__ import annotations

import argparse

from labelaudit.cli._common import add_command, at_least, log, output_file, warnings_to_stderr

ORDER = 32

_EPILOG = """examples:
  labelaudit report issues.csv --out report.html
  labelaudit report issues.csv --truth truth.csv --is-error is_error --out report.html
  labelaudit report issues.csv --annotations crowd.jsonl --out report.html
  labelaudit report tokens.jsonl --truth dev.clean.conll --out tokens.html

ISSUES is the output of `labelaudit scan --out` or `labelaudit scan-tokens --out` (JSON lines
for whole sentences). The page needs no network: open it in any browser, sort the table by
a column, filter it by class or text.
"""

# labelaudit.report names its options as Python does; messages say them as flags here.
_OPTIONS = ("id", "is_error", "true_label", "unknown", "top")


def add_parser(subparsers, parents) -> None:
    p = add_command(
        subparsers, "report", parents, handler=run, epilog=_EPILOG,
        help="write a scan's audit report as one self-contained HTML page",
        description="Summarise a scan in one HTML file: the estimated number of label "
        "errors, per-class counts and the given-versus-suggested confusion heat map, the "
        "probability of the given labels, and the most suspect items in a table you can sort "
        "and filter; with --truth, precision-recall curves per method; with --annotations, "
        "annotator agreement (kappa, alpha) and the gold standard's noise bound gamma.")
    p.add_argument("issues", help="the scan output: CSV, TSV, JSONL, JSON or Parquet")
    p.add_argument("--out", "-o", required=True, type=output_file((".html", ".htm")),
                   help="the page to write (.html)")
    p.add_argument("--top", type=at_least(1), default=500,
                   help="items (sentences) in the table of top issues (default: 500)")
    p.add_argument("--title", help="title of the page (default: 'Label audit: ISSUES')")
    truth = p.add_argument_group("known errors (as `labelaudit evaluate`)")
    truth.add_argument("--truth", metavar="FILE",
                       help="file with the known errors, keyed by --id (a corrected CoNLL or "
                       "JSONL file for a token scan): adds precision-recall curves")
    truth.add_argument("--id", default="id", help="id column in both files (default: id)")
    kind = truth.add_mutually_exclusive_group()
    kind.add_argument("--is-error", metavar="COLUMN",
                      help="truth column that is true for wrong labels, blank for unverified "
                      "(default: is_error, else --true-label true_label)")
    kind.add_argument("--true-label", metavar="COLUMN",
                      help="truth column with the correct label, compared with the scan's "
                      "label; blank for unverified")
    truth.add_argument("--unknown", choices=["exclude", "clean"],
                       help="unverified items (blank truth, or scan ids missing from the "
                       "truth file): leave them out, or count them as clean")
    crowd = p.add_argument_group("annotations (as `labelaudit agreement`)")
    crowd.add_argument("--annotations", dest="annotations_file", metavar="FILE",
                       help="several annotators' labels, long (item, annotator, label) or "
                       "nested (a list column per item): adds kappa, alpha and gamma")
    crowd.add_argument("--item", help="item-id column of the annotations (default: item/"
                       "item_id/task, or id when nested)")
    crowd.add_argument("--annotator", help="annotator column of long annotations (default: "
                       "annotator/annotator_id/worker)")
    crowd.add_argument("--annotation-label", metavar="COLUMN",
                       help="label column of long annotations (default: label)")
    crowd.add_argument("--annotation-list", metavar="COLUMN",
                       help="the per-item list column of nested annotations (default: found "
                       "among annotator_labels, annotations, labels, votes)")


def run(args: argparse.Namespace) -> int:
    from labelaudit.report import render_report

    with warnings_to_stderr(args, flags=_OPTIONS, bare=("unknown",)):
        report = render_report(
            args.issues, truth=args.truth, annotations=args.annotations_file, top=args.top,
            title=args.title, id=args.id, is_error=args.is_error, true_label=args.true_label,
            unknown=args.unknown, item=args.item, annotator=args.annotator,
            annotation_label=args.annotation_label, annotation_list=args.annotation_list)
        report.write(args.out)
    log(args, report.summary(args.out))
    return 0
