"""``labelaudit select``: what noisy and corrected validation data do to model selection."""

from __future__ import annotations

import argparse

from labelaudit.cli import _common as cli

ORDER = 36


def noise_spec(text: str) -> str:
    """Argparse type of --noise: METHOD:RATE, checked against the noise methods."""
    from labelaudit._errors import InvalidParameterError
    from labelaudit.noise import parse_noise

    try:
        parse_noise(text)
    except InvalidParameterError as exc:
        raise argparse.ArgumentTypeError(str(exc).replace("noise=", "--noise ")) from None
    return text


def add_parser(subparsers, parents) -> None:
    from labelaudit.registry import SWEEP_SCORERS

    p = cli.add_command(
        subparsers, "select", parents, handler=run,
        help="measure what noisy and corrected validation data do to model selection")
    p.add_argument("train", help="training table with clean labels (CSV, TSV, JSONL, JSON, "
                   "Parquet)")
    p.add_argument("--val", required=True, help="validation table, clean labels")
    cli.add_options(p, "eval", "text", "text_pair", "label",
                    eval={"required": True, "help": "test table, clean labels"},
                    label="clean-label column (default: label)")
    noise = p.add_mutually_exclusive_group()
    noise.add_argument("--noise", type=noise_spec, metavar="METHOD:RATE",
                       help="noise method and share of labels noised in every split "
                       "(default: uniform:0.05)")
    noise.add_argument("--noisy-label", metavar="COLUMN",
                       help="instead of --noise: a column of every table with labels "
                       "already noised (e.g. by `labelaudit noise`, with --label clean_label)")
    cli.add_options(
        p, sweep={"default": 40, "help": "model configurations in the sweep (default: 40; the "
                  "grid has 42 TF-IDF and 7 embedding configurations)"},
        seeds={"default": 3, "help": "repeats with different noise and scan folds (default: 3)"},
        scorers={"type": cli.choice_list(SWEEP_SCORERS), "default": ["tfidf"],
                 "help": "scorer families of the sweep and the scan, comma-separated from "
                 f"{', '.join(SWEEP_SCORERS)} (default: tfidf)"},
        model="encoder of the embed scorer (default: all-MiniLM-L6-v2)")
    cli.add_options(p, "cache_dir", "workers", "engine", "ray_address")
    cli.add_seed(p)
    cli.add_output_options(p, what="the selections", json="every accuracy, the sweep and the "
                           "summary", table="the selection table")


def run(args: argparse.Namespace) -> int:
    from labelaudit._errors import InvalidParameterError
    from labelaudit.impact import select_models, sweep_configs

    noise = None if args.noisy_label else (args.noise or "uniform:0.05")
    try:  # --sweep against the grid of --scorers: a usage error, before any work
        sweep_configs(args.sweep, scorers=args.scorers, random_state=args.seed)
    except InvalidParameterError as exc:
        args.parser.error(str(exc).replace("n_configs", "--sweep"))
    with cli.warnings_to_stderr(args, flags=("n_configs=sweep",)):
        result = cli.call(select_models, args, test=args.eval, noise=noise, n_configs=args.sweep)
        cli.emit_result(args, result)
    cli.log(args, result.summary())  # after the warnings, which the block prints as it closes
    return 0
