"""``labelaudit evaluate-tokens``: measure a token scan against a corrected copy."""

from __future__ import annotations

import argparse

from labelaudit.cli import _common as cli

ORDER = 35

_EPILOG = """examples:
  labelaudit evaluate-tokens test_issues.jsonl --eval test.corrected.conll
  labelaudit evaluate-tokens issues.jsonl --eval fixed.jsonl --at-k 20,100 --out metrics.json

token level: ranking by log p(given tag) against tokens whose tag the correction changed;
sentence level: worst token (min) and soft-min against sentences with any change;
span level: share of the top-k issues whose region the correction changed (p@k) and whose
suggestion equals the correction (fix@k).
"""


def add_parser(subparsers, parents) -> None:
    p = cli.add_command(
        subparsers, "evaluate-tokens", parents, handler=run, epilog=_EPILOG,
        help="token, sentence and span metrics of a scan-tokens output against corrected data",
        description="Join a scan-tokens JSONL with a corrected copy of the same sentences "
        "(same tokens, corrected tags) and report AUPR, average precision and P/R@k at the "
        "token and sentence level, and the precision of the top span issues.")
    p.add_argument("issues", help="JSONL written by `labelaudit scan-tokens`")
    cli.add_options(p, eval={"required": True, "old": "--truth", "help": "corrected copy: "
                             "CoNLL file or .jsonl with tokens/tags lists"})
    cli.add_tag_options(p, what="the --eval file")
    cli.option(p, "--at-k", old="--k", type=cli.cut_offs, default=[10, 50, 100],
               help="comma-separated cut-offs for P@k and R@k (default: 10,50,100)")
    cli.add_output_options(p, what="the metrics", json="a document", table="the table")


def run(args: argparse.Namespace) -> int:
    from labelaudit.io import emit_report, render_table, write_json
    from labelaudit.scan import evaluate_token_scan

    evaluation = evaluate_token_scan(args.issues, args.eval, tag_column=args.tag_column,
                                     scheme=cli.tag_scheme(args), ks=args.at_k)
    frame = evaluation.to_frame()
    # JSON is the whole document (levels and span precision), not the table's rows.
    if args.out and args.out.lower().endswith(".json"):
        write_json(evaluation.to_dict(), args.out)
    elif args.out:
        cli.emit_output(frame, args)
    # Standard output gets the metrics too (the table unless --quiet with --out).
    if args.format != "table" or not args.out or not args.quiet:
        emit_report(frame, evaluation.to_dict(), render_table(frame.round(4)) + "\n",
                    format=args.format)
    return 0
