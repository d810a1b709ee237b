"""``labelaudit predict``: top-k labels and probabilities from a model `train` saved."""

from __future__ import annotations

import argparse

from labelaudit.cli import _common as cli
from labelaudit.training import load_model


def add_parser(subparsers, parents) -> None:
    p = cli.add_command(subparsers, "predict", parents, handler=run)
    p.add_argument("model", help="model folder (labelaudit train --out)")
    p.add_argument("data", help="table of items to predict (CSV, TSV, JSONL, JSON, Parquet)")
    cli.add_options(p, "text_pair", text={"default": None, "help": "text column (default: the "
                                          "one the model was trained on)"},
                    id="id column to keep (default: id when the table has one, else the row "
                    "number)")
    p.add_argument("--top-k", type=cli.at_least(1), default=5, help="labels per item (default: 5)")
    cli.add_output_options(p, what="the predictions")


def run(args: argparse.Namespace) -> int:
    model = load_model(args.model)
    with cli.warnings_to_stderr(args):
        table = model.predict_table(args.data, text=args.text, text_pair=args.text_pair,
                                    id=args.id, top_k=args.top_k, sep=cli.set_separator(args))
    cli.emit_output(table, args)
    return 0
