"""``labelaudit evaluate-tokens``: measure a token scan against a corrected copy."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from labelaudit.cli._common import output_file, print_table
from labelaudit.cli._scan_tokens import tag_column

ORDER = 35

_EPILOG = """examples:
  labelaudit evaluate-tokens test_issues.jsonl --truth test.corrected.conll
  labelaudit evaluate-tokens issues.jsonl --truth fixed.jsonl --k 20,100 --out metrics.json

token level: ranking by log p(given tag) against tokens whose tag the correction changed;
sentence level: worst token (min) and soft-min against sentences with any change;
span level: share of the top-k issues whose region the correction changed (p@k) and whose
suggestion equals the correction (fix@k).
"""


def cut_offs(text: str) -> list[int]:
    """Argparse type of --k: comma-separated integers of at least 1."""
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
    p.add_argument("--scheme", choices=["auto", "iob1", "iob2", "bioes", "plain"],
                   default="auto", help="tagging scheme of the truth file (default: detected)")
    p.add_argument("--tag-column", type=tag_column, default=-1,
                   help="tag column of a CoNLL truth file (default: -1, the last)")
    p.add_argument("--k", type=cut_offs, default=[10, 50, 100],
                   help="comma-separated cut-offs for P@k and R@k (default: 10,50,100)")
    p.add_argument("--out", "-o",
                   type=output_file((".json", ".csv", ".tsv", ".jsonl", ".parquet")),
                   help="write the metrics: .json (a document), or .csv/.tsv/.jsonl/.parquet "
                   "(the table)")
    p.add_argument("--format", choices=["table", "json", "csv"], default="table",
                   help="stdout format (default: table)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import json

    from labelaudit.io import write_json, write_table
    from labelaudit.tokens import evaluate_tokens, read_token_issues, read_tokens

    records = read_token_issues(args.issues)
    scheme = None if args.scheme == "auto" else args.scheme
    truth = read_tokens(args.truth, tag_column=args.tag_column, scheme=scheme)
    evaluation = evaluate_tokens(records, truth, ks=args.k)
    frame = evaluation.to_frame()
    if args.out:
        if Path(args.out).suffix.lower() == ".json":
            write_json(evaluation.to_dict(), args.out)
        else:
            write_table(frame, args.out)
    if args.format == "json":
        print(json.dumps(evaluation.to_dict(), indent=2))
    elif args.format == "csv":
        sys.stdout.write(frame.to_csv(index=False))
    elif not args.out or not args.quiet:
        print_table(frame.round(4))
    return 0
