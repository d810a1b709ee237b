"""``labelaudit report``: a scan's audit report as one self-contained HTML page."""

from __future__ import annotations

import argparse

from labelaudit.cli import _common as cli
from labelaudit.report import render_report


def add_parser(subparsers, parents) -> None:
    p = cli.add_command(subparsers, "report", parents, handler=run)
    p.add_argument("issues", help="the scan output: CSV, TSV, JSONL, JSON or Parquet")
    p.add_argument("--out", "-o", required=True, type=cli.output_file((".html", ".htm")),
                   help="the page to write (.html)")
    p.add_argument("--top", type=cli.at_least(1), default=500,
                   help="items (sentences) in the table of top issues (default: 500)")
    p.add_argument("--title", help="title of the page (default: 'Label audit: ISSUES')")
    truth = p.add_argument_group("known errors (as `labelaudit evaluate`)")
    cli.add_options(truth, eval={"help": "file with the known errors, keyed "
                                 "by --id (a corrected CoNLL or JSONL file for a token scan): "
                                 "adds precision-recall curves"},
                    id={"default": "id", "help": "id column in both files (default: id)"})
    cli.add_truth_options(truth, what="the scan's label")
    crowd = p.add_argument_group("annotations (as `labelaudit agreement`)")
    cli.add_options(crowd, annotations_file={
        "help": "several annotators' labels, long (item, annotator, "
        "label) or nested (a list column per item): adds kappa, alpha and gamma"})
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
    with cli.warnings_to_stderr(args):
        report = render_report(
            args.issues, truth=args.eval, annotations=args.annotations_file, top=args.top,
            title=args.title, id=args.id, is_error=args.is_error, true_label=args.true_label,
            unknown=args.unknown, item=args.item, annotator=args.annotator,
            annotation_label=args.annotation_label, annotation_list=args.annotation_list)
        report.write(args.out)
    cli.log(args, report.summary(args.out))
    return 0

