"""``labelaudit train``: fit a classifier that resists label noise, and measure it."""

from __future__ import annotations

import argparse

from labelaudit._errors import InvalidParameterError
from labelaudit.cli import _common as cli
from labelaudit.io import check_distinct_files, write_json
from labelaudit.training import (
    FILTER_DETECTORS,
    FilterPlan,
    TrainOptions,
    evaluate_model,
    method_names,
    read_eval_table,
    run_train,
    training_facts,
    training_notes,
)


def add_parser(subparsers, parents) -> None:
    p = cli.add_command(subparsers, "train", parents, handler=run)
    p.add_argument("data", help="training table (CSV, TSV, JSONL, JSON, Parquet)")
    cli.add_options(p, "text", "text_pair", "label", "label_sep")
    p.add_argument("--method", default="base", choices=(*method_names(), "auto"),
                   help="training method (default: base)")
    p.add_argument("--filter", choices=("drop", "relabel"),
                   help="what --method filter does with flagged items (default: drop)")
    p.add_argument("--filter-detector", choices=FILTER_DETECTORS,
                   help="the detector of a filter method: the scan (filter's default) or a "
                   "head trained with this method, cross-fitted (the others' default: seal)")
    p.add_argument("--noise-rate", type=cli.interval(0.0, 1.0, high_open=True), metavar="RATE",
                   help="share of wrong labels for co-teaching and cnlcu (default: "
                   "cleanlab's estimate)")
    cli.add_backbone_options(p)
    cli.add_options(p, batch_size={"default": 64, "help": "default: 64"},
                    lr={"help": "default: 1e-3 (head), 3e-5 (finetune)"},
                    hidden={"type": int, "help": "hidden units of the head backbone and of "
                            "the filter methods' detector heads (0: linear; default: 256)"})
    cli.add_options(p, "device", "cache_dir")
    cli.add_seed(p)
    cli.add_options(p, eval="clean labelled table to measure the model on")
    p.add_argument("--out", dest="model_out", metavar="FOLDER",
                   help="save the model to this folder")
    cli.add_options(p, metrics_out="write the metrics as JSON (.json)")


def _check_usage(args: argparse.Namespace) -> None:
    """Options that would be silently ignored are usage errors, before any work."""
    if args.noise_rate is not None and args.method not in ("co-teaching", "cnlcu"):
        args.parser.error(f"--noise-rate is the noise rate of --method co-teaching or cnlcu; "
                          f"--method {args.method} does not use it: drop --noise-rate")
    # a method trains head networks whatever the backbone if it is auto (its candidates include
    # such methods) or a filter method whose detector is not the scan
    if args.hidden is not None and args.backbone == "finetune" and args.method != "auto" and not (
            args.method.startswith("filter")
            and FilterPlan.parse(args.method, detector=args.filter_detector).detector != "scan"):
        args.parser.error(f"--hidden sizes a head network; --backbone finetune tops the model "
                          f"with a linear classifier, and --method {args.method} has no "
                          "detector head: drop --hidden")
    if args.metrics_out and not args.metrics_out.lower().endswith(".json"):
        args.parser.error(f"{cli.flag(args, 'metrics_out')} {args.metrics_out}: the metrics "
                          "are written as JSON; give a file name ending in .json")


def run(args: argparse.Namespace) -> int:
    if not (args.model_out or args.metrics_out):
        raise InvalidParameterError("give --out FOLDER to save the model and/or --metrics-out "
                                    "FILE (with --eval) to measure it",
                                    param=("model_out", "metrics_out"))
    if args.metrics_out and not args.eval:
        raise InvalidParameterError(f"{cli.flag(args, 'metrics_out')} needs --eval, a clean "
                                    "labelled table", param=("metrics_out", "eval"))
    _check_usage(args)
    options = TrainOptions(
        text=args.text, label=args.label, text_pair=args.text_pair, method=args.method,
        backbone=args.backbone, model=args.model, noise_rate=args.noise_rate,
        filter=args.filter, filter_detector=args.filter_detector, epochs=args.epochs,
        batch_size=args.batch_size, learning_rate=args.learning_rate, hidden=args.hidden,
        device=args.device, cache_dir=args.cache_dir, random_state=args.seed,
        label_sep=args.label_sep, progress=cli.show_progress(args))
    # read_eval_table's rule, said with the flag (a refused path: exit 1)
    check_distinct_files([("data", args.data), ("--eval", args.eval)],
                         why="the model is trained on data and measured on --eval, so --eval "
                         "needs items of its own")
    with cli.warnings_to_stderr(args):  # before the training, not after
        evaluation = (read_eval_table(args.eval, label=args.label, where=f"--eval {args.eval}",
                                      label_sets=True, training=args.data,
                                      label_sep=args.label_sep, text=args.text,
                                      text_pair=args.text_pair)
                      if args.eval else None)
    with cli.warnings_to_stderr(args):
        model = run_train(args.data, options)
        for line in training_notes(model):
            cli.log(args, line)
        if args.model_out:
            model.save(args.model_out)
            cli.log(args, f"wrote {args.model_out}")
        if args.eval:
            metrics = evaluate_model(model, evaluation, text=args.text, label=args.label,
                                     text_pair=args.text_pair, label_sep=args.label_sep)
            cli.log(args, metrics.summary())
            if args.metrics_out:
                write_json({**metrics.to_dict(), **training_facts(model, seed=args.seed)},
                           args.metrics_out)
                cli.log(args, f"wrote {args.metrics_out}")
    return 0
