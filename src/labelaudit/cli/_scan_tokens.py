"""``labelaudit scan-tokens``: find label errors in NER/POS data (CoNLL or JSONL)."""

from __future__ import annotations

import argparse
import time

from labelaudit._errors import InvalidParameterError
from labelaudit.cli import _common as cli
from labelaudit.io import check_distinct_files
from labelaudit.models import MAX_SEED, TOKEN_SCORERS
from labelaudit.scanning import (
    TokenScanOptions,
    describe_token_scan,
    run_scan_tokens,
    token_output_format,
    write_token_scan,
)
from labelaudit.tokens import read_tokens


def add_parser(subparsers, parents) -> None:
    p = cli.add_command(subparsers, "scan-tokens", parents, handler=run)
    p.add_argument("data", help="CoNLL column file or .jsonl with a tokens list and a tags "
                   "(or labels) list per line (the training data with --score)")
    cli.add_options(p, "score")
    cli.add_output_options(p, default_format=None, extra_suffixes=(".txt",),
                           out_help="output file, its suffix picks the format: .jsonl "
                           "(records), .csv/.tsv/.parquet/.json (one row per issue) or .txt "
                           "(table); default: a table on stdout",
                           format_help="output format (default: by --out suffix; table on "
                           "stdout): table (the text view), jsonl (records), or csv/tsv/json/"
                           "parquet (one row per issue); with --out it must match the suffix")
    cli.add_tag_options(p, what="the input")
    p.add_argument("--folds", type=cli.at_least(2), default=5,
                   help="cross-fitting folds (default: 5)")
    cli.add_options(
        p, scorers={"type": cli.choice_list(tuple(TOKEN_SCORERS)),
                    "help": "comma-separated token scorers: encoder (frozen word vectors + a "
                    "head; the default, CPU-friendly), finetune (fine-tune --model; the default "
                    "when --model is given); several are averaged per token"},
        model="model to fine-tune (or the frozen encoder with --scorers encoder): a Hugging Face "
        "id or local folder (default: all-MiniLM-L6-v2)")
    p.add_argument("--head", choices=["linear", "crf"], default="crf",
                   help="head on the frozen encoder's word vectors: a linear-chain CRF (default; "
                   "fast) or logistic regression (linear)")
    cli.add_options(p, epochs={"default": 3, "help": "fine-tuning epochs (default: 3)"},
                    batch_size={"default": 16, "help": "fine-tuning batch size (default: 16)"})
    cli.add_options(p, "engine", "ray_address", engine="where the folds are fitted: this "
                    "process (default), or each fold as a Ray task, a fine-tuning fold on a GPU of "
                    "its own when the cluster has GPUs (needs labelaudit[scale])")
    p.add_argument("--no-rules", action="store_true",
                   help="skip rule-based issues (invalid sequences, inconsistent tags)")
    p.add_argument("--no-evidence", action="store_true",
                   help="leave out each issue's evidence (the tokens around it, how often the "
                   "same text carries each tag, and up to 3 sentences where it carries the "
                   "suggested tag); on by default")
    cli.add_seed(p, type=cli.at_least(0, MAX_SEED))
    cli.add_options(p, cache_dir="word-vector cache (default: ~/.cache/labelaudit)")
    p.add_argument("--no-cache", action="store_true", help="do not cache word vectors")
    p.add_argument("--show", type=cli.at_least(0), default=20,
                   help="sentences shown in the table view (default: 20; 0 for all)")


def run(args: argparse.Namespace) -> int:
    try:
        fmt = token_output_format(args.out, args.format)
    except InvalidParameterError as exc:
        args.parser.error(str(exc))
    started = time.perf_counter()
    # Warnings are held until the progress bars are gone, then shown one line each.
    with cli.warnings_to_stderr(args):
        check_distinct_files(
            [("data", args.data), ("--score", args.score)],
            why="the scored sentences are tagged by models fitted on all of the data, so those "
                "in both look right by construction; give a split of other sentences, or drop "
                "--score to cross-fit the data")
        data = read_tokens(args.data, tag_column=args.tag_column, scheme=cli.tag_scheme(args))
        test = read_tokens(args.score, tag_column=args.tag_column,
                           scheme=cli.tag_scheme(args)) if args.score else None
        result = run_scan_tokens(data, TokenScanOptions(
            score=test, scorer=args.scorers, model=args.model, head=args.head,
            n_folds=args.folds, random_state=args.seed, rules=not args.no_rules,
            cache=not args.no_cache, cache_dir=args.cache_dir, epochs=args.epochs,
            batch_size=args.batch_size, progress=cli.show_progress(args), engine=args.engine,
            ray_address=args.ray_address, evidence=not args.no_evidence))
    write_token_scan(result, args.out, format=fmt, show=args.show)
    summary = describe_token_scan(result, time.perf_counter() - started)
    cli.log(args, f"labelaudit scan-tokens: {summary}" + (f"; wrote {args.out}" if args.out
                                                          else ""))
    return 0
