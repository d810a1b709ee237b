"""``labelaudit evaluate-tokens``: measure a token scan against a corrected copy."""

from __future__ import annotations

import argparse
from pathlib import Path

from labelaudit.cli._common import add_output_options, emit_output
from labelaudit.cli._scan_tokens import add_tag_options

ORDER = 35

_EPILOG = """examples:
  labelaudit evaluate-tokens test_issues.jsonl --truth test.corrected.conll
  labelaudit evaluate-tokens issues.jsonl --truth fixed.jsonl --at-k 20,100 --out metrics.json

token level: ranking by log p(given tag) against tokens whose tag the correction changed;
sentence level: worst token (min) and soft-min against sentences with any change;
span level: share of the top-k issues whose region the correction changed (p@k) and whose
suggestion equals the correction (fix@k).
"""


def cut_offs(text: str) -> list[int]:
    """Argparse type of --at-k: comma-separated integers of at least 1."""
    values = []
    for part in (x.strip() for x in text.split(",")):
        if not part:
            continue
        try:
            value = int(part)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"not an integer: {part!r}; give comma-separated cut-offs such as 10,50") \
                from None
        if value < 1:
            raise argparse.ArgumentTypeError(f"cut-offs must be at least 1, got {value}")
        values.append(value)
    if not values:
        raise argparse.ArgumentTypeError("no cut-off given; use for example 10,50,100")
    return values


def add_parser(subparsers, parents) -> None:
    p = subparsers.add_parser(
        "evaluate-tokens", parents=parents,
        help="token, sentence and span metrics of a scan-tokens output against corrected data",
        description="Join a scan-tokens JSONL with a corrected copy of the same sentences "
        "(same tokens, corrected tags) and report AUPR, average precision and P/R@k at the "
        "token and sentence level, and the precision of the top span issues.",
        epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("issues", help="JSONL written by `labelaudit scan-tokens`")
    p.add_argument("--truth", required=True,
                   help="corrected copy: CoNLL file or .jsonl with tokens/tags lists")
    add_tag_options(p, what="the truth file")
    p.add_argument("--at-k", type=cut_offs, default=[10, 50, 100],
                   help="comma-separated cut-offs for P@k and R@k (default: 10,50,100)")
    p.add_argument("--k", dest="at_k", type=cut_offs, default=argparse.SUPPRESS,
                   help=argparse.SUPPRESS)  # the old spelling
    add_output_options(p, what="the metrics",
                       out_help="write the metrics: .json (a document), or "
                       ".csv/.tsv/.jsonl/.parquet (the table)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import json

    from labelaudit.io import emit, write_json
    from labelaudit.tokens import evaluate_tokens, read_token_issues, read_tokens

    records = read_token_issues(args.issues)
    scheme = None if args.scheme == "auto" else args.scheme
    truth = read_tokens(args.truth, tag_column=args.tag_column, scheme=scheme)
    evaluation = evaluate_tokens(records, truth, ks=args.at_k)
    frame = evaluation.to_frame()
    # JSON is the whole document (levels and span precision), not the table's rows.
    if args.out and Path(args.out).suffix.lower() == ".json":
        write_json(evaluation.to_dict(), args.out)
    elif args.out:
        emit_output(frame, args)
    # Standard output gets the metrics too (the table unless --quiet with --out).
    if args.format == "json":
        print(json.dumps(evaluation.to_dict(), indent=2))
    elif args.format != "table" or not args.out or not args.quiet:
        emit(frame.round(4) if args.format == "table" else frame, format=args.format)
    return 0
