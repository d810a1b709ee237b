"""``labelaudit select``: what noisy and corrected validation data do to model selection."""

from __future__ import annotations

import argparse

from labelaudit._errors import InvalidParameterError
from labelaudit.cli import _common as cli
from labelaudit.impact import SWEEP_SCORERS, select_models, sweep_configs
from labelaudit.noise import parse_noise


def add_parser(subparsers, parents) -> None:
    p = cli.add_command(subparsers, "select", parents, handler=run)
    p.add_argument("train", help="training table with clean labels (CSV, TSV, JSONL, JSON, "
                   "Parquet)")
    p.add_argument("--val", required=True, help="validation table, clean labels")
    cli.add_options(p, "eval", "text", "text_pair", "label",
                    eval={"required": True, "help": "test table, clean labels"},
                    label="clean-label column (default: label)")
    noise = p.add_mutually_exclusive_group()
    noise.add_argument("--noise", metavar="METHOD:RATE",
                       help="noise method and share of labels noised in every split "
                       "(default: uniform:0.05)")
    noise.add_argument("--noisy-label", metavar="COLUMN",
                       help="instead of --noise: a column of every table with labels "
                       "already noised (e.g. by `labelaudit noise`, with --label clean_label)")
    cli.add_options(
        p, sweep={"dest": "n_configs", "default": 40,
                  "help": "model configurations in the sweep (default: 40; the grid has 42 "
                  "TF-IDF and 7 embedding configurations)"},
        seeds={"default": 3, "help": "repeats with different noise and scan folds (default: 3)"},
        scorers={"type": cli.choice_list(tuple(SWEEP_SCORERS)), "default": ["tfidf"],
                 "help": "scorer families of the sweep and the scan, comma-separated from "
                 f"{', '.join(SWEEP_SCORERS)} (default: tfidf)"},
        model="encoder of the embed scorer (default: all-MiniLM-L6-v2)")
    cli.add_options(p, "cache_dir", "workers", "engine", "ray_address")
    cli.add_seed(p)
    cli.add_output_options(p, what="the selections", json="every accuracy, the sweep and the "
                           "summary", table="the selection table")


def run(args: argparse.Namespace) -> int:
    noise = None if args.noisy_label else (args.noise or "uniform:0.05")
    try:  # --noise, and --sweep against the grid of --scorers: usage errors, before any work
        if noise is not None:
            parse_noise(noise)
        sweep_configs(args.n_configs, scorers=args.scorers, random_state=args.seed)
    except InvalidParameterError as exc:
        args.parser.error(cli.error_text(exc, args))
    with cli.warnings_to_stderr(args):
        result = select_models(
            args.train, args.val, args.eval, text=args.text, label=args.label,
            text_pair=args.text_pair, noise=noise, noisy_label=args.noisy_label,
            n_configs=args.n_configs, seeds=args.seeds, scorers=args.scorers,
            random_state=args.seed, model=args.model, cache_dir=args.cache_dir,
            workers=args.workers, engine=args.engine, ray_address=args.ray_address,
            progress=cli.show_progress(args))
        cli.emit_result(args, result)
    cli.log(args, result.summary())  # after the warnings, which the block prints as it closes
    return 0
