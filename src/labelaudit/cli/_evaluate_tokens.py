"""``labelaudit evaluate-tokens``: measure a token scan against a corrected copy."""

from __future__ import annotations

import argparse

from labelaudit.cli import _common as cli
from labelaudit.io import emit_report, render_table
from labelaudit.scanning import evaluate_token_scan


def add_parser(subparsers, parents) -> None:
    p = cli.add_command(subparsers, "evaluate-tokens", parents, handler=run)
    p.add_argument("issues", help="JSONL written by `labelaudit scan-tokens`")
    cli.add_options(p, eval={"required": True, "help": "corrected copy: "
                             "CoNLL file or .jsonl with tokens/tags lists"})
    cli.add_tag_options(p, what="the --eval file")
    p.add_argument("--at-k", dest="ks", metavar="AT_K", type=cli.cut_offs, default=[10, 50, 100],
                   help="comma-separated cut-offs for P@k and R@k (default: 10,50,100)")
    cli.add_output_options(p, what="the metrics", json="a document", table="the table")


def run(args: argparse.Namespace) -> int:
    with cli.warnings_to_stderr(args):
        evaluation = evaluate_token_scan(args.issues, args.eval, tag_column=args.tag_column,
                                         scheme=cli.tag_scheme(args), ks=args.ks)
    frame = evaluation.to_frame()
    if args.out:  # a .json file: the whole document (levels and span precision)
        evaluation.write(args.out)
        if not args.out.lower().endswith(".json"):
            cli.log(args, f"wrote {len(frame)} rows to {args.out}")
    # Standard output gets the metrics too (the table unless --quiet with --out).
    if args.format != "table" or not args.out or not args.quiet:
        emit_report(frame, evaluation.to_dict(), render_table(frame.round(4)) + "\n",
                    format=args.format)
    return 0
