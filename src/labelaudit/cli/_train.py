"""``labelaudit train``: fit a classifier that resists label noise, and measure it."""

from __future__ import annotations

import argparse

from labelaudit.cli._common import (
    add_command,
    add_seed,
    at_least,
    log,
    show_progress,
    warnings_to_stderr,
)

ORDER = 70

_EPILOG = """examples:
  labelaudit train noisy.jsonl --text text --label label --method seal --eval clean_test.jsonl \\
      --out model/ --metrics metrics.json
  labelaudit train noisy.jsonl --text text --label label --method filter --eval test.jsonl \\
      --out model/
  labelaudit train noisy.jsonl --text text --label label --method co-teaching --noise-rate 0.2 \\
      --backbone finetune --model microsoft/deberta-v3-base --out model/

Methods: base (cross-entropy), mixup, data-parameters, sr (sparse regularisation),
co-teaching, cnlcu, seal (self-evolution), and filter (ours: a cross-fitted scan, then base
on the data with the flagged items dropped, or relabelled with --filter relabel). Defaults
follow the NoisywikiHow paper's appendix. The head backbone trains a small network over
frozen MiniLM sentence embeddings (the scan's cache) in seconds on a CPU; --backbone
finetune fine-tunes the whole --model (use a GPU). co-teaching and cnlcu need the noise
rate: --noise-rate, or cleanlab's estimate. --metrics writes top-1, top-5 and macro-F1 on
--eval (labels the model never saw count as wrong and are listed), the achieved noise rate
when the training file has a clean_label column, the training time and the seed.
"""

_OPTIONS = ("method", "backbone", "noise_rate", "epochs", "batch_size", "learning_rate",
            "hidden", "text", "label", "text_pair")


def add_parser(subparsers, parents) -> None:
    from labelaudit.registry import LNL_METHODS

    p = add_command(
        subparsers, "train", parents, handler=run, epilog=_EPILOG,
        help="train a classifier with a learning-with-noisy-labels method",
        description="Train a text classifier on possibly wrong labels with one of seven\n"
        "published learning-with-noisy-labels methods or our scan-then-train filter, save\n"
        "it to a folder, and measure it on a clean evaluation set.")
    p.add_argument("data", help="training table (CSV, TSV, JSONL, JSON, Parquet)")
    p.add_argument("--text", default="text", help="text column (default: text)")
    p.add_argument("--text-pair", metavar="COLUMN", help="second text of sentence pairs")
    p.add_argument("--label", default="label", help="label column (default: label)")
    p.add_argument("--method", default="base", choices=LNL_METHODS.names(),
                   help="training method (default: base)")
    p.add_argument("--filter", dest="filter_mode", choices=("drop", "relabel"), default="drop",
                   help="what --method filter does with flagged items (default: drop)")
    p.add_argument("--noise-rate", type=float, metavar="RATE",
                   help="share of wrong labels for co-teaching and cnlcu (default: "
                   "cleanlab's estimate)")
    p.add_argument("--backbone", choices=("head", "finetune"), default="head",
                   help="head: a network over frozen embeddings (default); finetune: the "
                   "whole model")
    p.add_argument("--model", help="encoder (head) or model to fine-tune (default: "
                   "all-MiniLM-L6-v2, packaged)")
    p.add_argument("--epochs", type=at_least(1), help="default: 20 (head), 4 (finetune)")
    p.add_argument("--batch-size", type=at_least(1), default=64, help="default: 64")
    p.add_argument("--learning-rate", type=float, metavar="LR",
                   help="default: 1e-3 (head), 3e-5 (finetune)")
    p.add_argument("--hidden", type=int, default=256,
                   help="hidden units of the head (0: linear; default: 256)")
    p.add_argument("--device", help="torch device (default: cuda when present, else cpu)")
    p.add_argument("--cache-dir", help="embedding cache folder")
    add_seed(p)
    p.add_argument("--eval", metavar="FILE", help="clean labelled table to measure the model on")
    p.add_argument("--out", dest="model_out", metavar="FOLDER",
                   help="save the model to this folder")
    p.add_argument("--overwrite", action="store_true",
                   help="replace an existing --out folder that is not a labelaudit model")
    p.add_argument("--metrics", metavar="FILE", help="write the metrics as JSON")


def run(args: argparse.Namespace) -> int:
    from labelaudit._errors import InvalidParameterError
    from labelaudit.io import write_json
    from labelaudit.robust import evaluate_model, train
    from labelaudit.robust._model import check_model_folder

    if not (args.model_out or args.metrics):
        raise InvalidParameterError("give --out FOLDER to save the model and/or --metrics "
                                    "FILE (with --eval) to measure it")
    if args.metrics and not args.eval:
        raise InvalidParameterError("--metrics needs --eval, a clean labelled table")
    if args.noise_rate is not None and not 0.0 <= args.noise_rate < 1.0:
        raise InvalidParameterError(f"--noise-rate must be in [0, 1); got {args.noise_rate}")
    if args.model_out:
        from pathlib import Path

        check_model_folder(Path(args.model_out), overwrite=args.overwrite)
    with warnings_to_stderr(args, flags=_OPTIONS):
        model = train(args.data, text=args.text, label=args.label, text_pair=args.text_pair,
                      method=args.method, backbone=args.backbone, model=args.model,
                      noise_rate=args.noise_rate, filter=args.filter_mode,
                      epochs=args.epochs, batch_size=args.batch_size,
                      learning_rate=args.learning_rate, hidden=args.hidden,
                      device=args.device, cache_dir=args.cache_dir, random_state=args.seed,
                      progress=show_progress(args))
        log(args, f"trained {args.method} ({args.backbone}) on {model.log['n_used']} of "
            f"{model.log['n_train']} items in {model.log['seconds']:.1f} s")
        if args.model_out:
            model.save(args.model_out, overwrite=args.overwrite)
            log(args, f"wrote {args.model_out}")
        if args.eval:
            metrics = evaluate_model(model, args.eval, text=args.text, label=args.label,
                                     text_pair=args.text_pair)
            doc = {**metrics.to_dict(), **_facts(args, model)}
            log(args, f"top-1 {metrics.top1:.4f}  top-5 {metrics.top5:.4f}  macro-F1 "
                f"{metrics.macro_f1:.4f} on {metrics.n_eval} items"
                + (f"; {metrics.n_unseen} items have labels the model never saw "
                   f"({', '.join(metrics.unseen_labels[:5])}), counted as wrong"
                   if metrics.n_unseen else ""))
            if args.metrics:
                write_json(doc, args.metrics)
                log(args, f"wrote {args.metrics}")
    return 0


def _facts(args: argparse.Namespace, model) -> dict:
    """Method, seed, time and what the training log knows (items dropped by filter, the
    noise rate given or estimated, the achieved noise rate of a file with clean_label)."""
    facts = {"method": args.method, "backbone": args.backbone, "seed": args.seed,
             "train_seconds": model.log["seconds"], "n_train": model.log["n_train"],
             "n_used": model.log["n_used"]}
    for key in ("flagged", "filter", "noise_rate", "noise_rate_estimated",
                "achieved_noise_rate"):
        if key in model.log:
            facts[key] = model.log[key]
    return facts
