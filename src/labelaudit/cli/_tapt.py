"""``labelaudit tapt``: continue masked-LM pre-training on a dataset's own texts."""

from __future__ import annotations

import argparse

from labelaudit.cli import _common as cli
from labelaudit.models import tapt


def add_parser(subparsers, parents) -> None:
    p = cli.add_command(subparsers, "tapt", parents, handler=run)
    p.add_argument("data", nargs="+", metavar="DATA",
                   help="tables (.csv .tsv .jsonl .json .parquet or a datasets folder) whose "
                   "texts are trained on: give every split")
    cli.add_options(p, "text", text_pair="second text column, for sentence pairs (NLI), "
                    "encoded with the first", model="Hugging Face id or local folder to adapt "
                    "(default: the packaged all-MiniLM-L6-v2)")
    p.add_argument("--out", dest="tapt_out", required=True, metavar="FOLDER",
                   help="folder to write the adapted model and tokenizer to")
    cli.add_options(
        p, epochs={"default": 3, "help": "passes over the texts (default: 3)"},
        max_length={"type": cli.at_least(4), "default": 256,
                    "help": "tokens kept per text or pair (default: 256)"},
        batch_size={"default": 16, "help": "texts per batch (default: 16)"},
        lr={"type": cli.interval(0.0, 1.0, low_open=True), "default": 5e-5,
            "help": "peak learning rate (default: 5e-5)"})
    p.add_argument("--mlm-probability", type=cli.interval(0.0, 1.0, low_open=True,
                                                          high_open=True),
                   default=0.15, metavar="P", help="share of tokens masked (default: 0.15)")
    p.add_argument("--warmup", type=cli.interval(0.0, 1.0), default=0.06, metavar="FRACTION",
                   help="share of the steps warming the learning rate up (default: 0.06)")
    cli.add_options(p, "device")
    cli.add_seed(p)


def run(args: argparse.Namespace) -> int:
    with cli.warnings_to_stderr(args):
        result = tapt(args.data, text=args.text, text_pair=args.text_pair, model=args.model,
                      out=args.tapt_out, epochs=args.epochs, max_length=args.max_length,
                      batch_size=args.batch_size, learning_rate=args.learning_rate,
                      mlm_probability=args.mlm_probability, warmup=args.warmup,
                      random_state=args.seed, device=args.device, overwrite=args.overwrite,
                      progress=cli.show_progress(args))
    cli.log(args, result.summary())
    return 0
