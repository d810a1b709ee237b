"""``labelaudit train-bench``: every training method under every noise setting."""

from __future__ import annotations

import argparse

from labelaudit.cli import _common as cli
from labelaudit.training import method_names, parse_noise_grid, train_bench


def _methods(text: str) -> list[str] | None:
    return None if text == "all" else cli.choice_list(method_names())(text)


def add_parser(subparsers, parents) -> None:
    p = cli.add_command(subparsers, "train-bench", parents, handler=run)
    p.add_argument("train", help="clean training table")
    cli.add_options(p, "eval", "text", "text_pair", "label",
                    eval={"required": True, "help": "clean evaluation table"})
    p.add_argument("--noise", action="append", metavar="METHOD:RATES",
                   help="noise method and comma-separated rates; repeat per method "
                   "(default: uniform:0.1,0.2,0.4)")
    p.add_argument("--methods", type=_methods, default=None, metavar="all|M1,M2",
                   help="methods to train (default: all)")
    cli.add_options(p, seeds={"default": 3, "help": "seeds per cell (default: 3)"})
    cli.add_backbone_options(p)
    cli.add_seed(p)
    cli.add_options(p, "workers", "engine", "ray_address")
    cli.add_output_options(p, what="the benchmark table", json="every run and the summary",
                           table="the summary rows")
    cli.add_options(p, plot_out="top-1 against the rate per method, .png/.svg")


def run(args: argparse.Namespace) -> int:
    noise = args.noise or ["uniform:0.1,0.2,0.4"]
    with cli.warnings_to_stderr(args):
        for spec in noise:
            parse_noise_grid(spec)  # a bad spec fails before any training
        result = train_bench(
            args.train, args.eval, text=args.text, label=args.label, text_pair=args.text_pair,
            noise=noise, methods=args.methods, seeds=args.seeds, backbone=args.backbone,
            model=args.model, train_options={"epochs": args.epochs} if args.epochs else None,
            random_state=args.seed, workers=args.workers, engine=args.engine,
            ray_address=args.ray_address, progress=cli.show_progress(args))
        cli.emit_result(args, result, shown=result.table("top1").reset_index())
    cli.log(args, result.summary())  # after the warnings, which the block prints as it closes
    return 0
