"""``labelaudit train``: fit a classifier that resists label noise, and measure it."""

from __future__ import annotations

import argparse

from labelaudit.cli import _common as cli

ORDER = 70

_EPILOG = """examples:
  labelaudit train noisy.jsonl --text text --label label --method seal --eval clean_test.jsonl \\
      --out model/ --metrics-out metrics.json
  labelaudit train noisy.jsonl --text text --label label --method auto --eval test.jsonl \\
      --out model/
  labelaudit train noisy.jsonl --text text --label label --method filter-relabel+seal \\
      --out model/
  labelaudit train noisy.jsonl --text text --label label --method co-teaching --noise-rate 0.2 \\
      --backbone finetune --model microsoft/deberta-v3-base --out model/

Methods: base (cross-entropy), mixup, data-parameters, sr (sparse regularisation),
co-teaching, cnlcu, seal (self-evolution); filter (ours: a cross-fitted scan, then base
on the data with the flagged items dropped, or relabelled with --filter relabel) and its
detect-then-train forms filter[-relabel][-iterate][+METHOD]: a cross-fitted SEAL head
detects, a two-component mixture of the out-of-sample losses says which labels are likely
wrong, -relabel trains them on soft labels instead of dropping them, -iterate detects
again with models trained on the kept items, +METHOD trains with METHOD. auto screens
the candidates on a held-out fifth of the data (accuracy on its given labels), prints
the table and trains the winner on everything. Defaults follow the NoisywikiHow paper's
appendix. The head backbone trains a small network over
frozen MiniLM sentence embeddings (the scan's cache) in seconds on a CPU; --backbone
finetune fine-tunes the whole --model (use a GPU). co-teaching and cnlcu need the noise
rate: --noise-rate, or cleanlab's estimate. --metrics-out writes top-1, top-5 and macro-F1 on
--eval (labels the model never saw count as wrong and are listed), the achieved noise rate
when the training file has a clean_label column, the training time and the seed.
"""

_OPTIONS = ("method", "backbone", "noise_rate", "epochs", "batch_size", "learning_rate",
            "hidden", "text", "label", "text_pair")


def add_parser(subparsers, parents) -> None:
    from labelaudit.registry import FILTER_DETECTORS, LNL_METHODS

    p = cli.add_command(
        subparsers, "train", parents, handler=run, epilog=_EPILOG + cli.TORCH_NOTE,
        help="train a classifier with a learning-with-noisy-labels method",
        description="Train a text classifier on possibly wrong labels with one of seven\n"
        "published learning-with-noisy-labels methods or our scan-then-train filter, save\n"
        "it to a folder, and measure it on a clean evaluation set.")
    p.add_argument("data", help="training table (CSV, TSV, JSONL, JSON, Parquet)")
    cli.add_options(p, "text", "text_pair", "label")
    p.add_argument("--method", default="base", choices=(*LNL_METHODS.names(), "auto"),
                   help="training method (default: base)")
    p.add_argument("--filter", dest="filter_mode", choices=("drop", "relabel"),
                   help="what --method filter does with flagged items (default: drop)")
    p.add_argument("--filter-detector", choices=FILTER_DETECTORS,
                   help="the detector of a filter method: the scan (filter's default) or a "
                   "head trained with this method, cross-fitted (the others' default: seal)")
    p.add_argument("--noise-rate", type=float, metavar="RATE",
                   help="share of wrong labels for co-teaching and cnlcu (default: "
                   "cleanlab's estimate)")
    cli.add_backbone_options(p)
    cli.add_options(p, batch_size={"default": 64, "help": "default: 64"},
                    lr={"old": "--learning-rate", "help": "default: 1e-3 (head), 3e-5 (finetune)"},
                    hidden={"type": int, "default": 256,
                            "help": "hidden units of the head (0: linear; default: 256)"})
    cli.add_options(p, "device", "cache_dir")
    cli.add_seed(p)
    cli.add_options(p, eval="clean labelled table to measure the model on")
    p.add_argument("--out", dest="model_out", metavar="FOLDER",
                   help="save the model to this folder")
    cli.add_options(p, metrics_out="write the metrics as JSON (.json)")


_NOISE_RATE_METHODS = ("co-teaching", "cnlcu")


def _check_usage(args: argparse.Namespace) -> None:
    """Options that would be silently ignored are usage errors, before any work."""
    if args.noise_rate is not None and args.method not in _NOISE_RATE_METHODS:
        args.parser.error(f"--noise-rate is the noise rate of --method co-teaching or cnlcu; "
                          f"--method {args.method} does not use it: drop --noise-rate")
    if args.filter_mode is not None and args.method != "filter":
        args.parser.error(f"--filter says what --method filter does with flagged items; "
                          f"--method {args.method} "
                          + ("says it in its name" if args.method.startswith("filter")
                             else "flags none: add --method filter"))
    if args.filter_detector is not None and not args.method.startswith(("filter", "auto")):
        args.parser.error(f"--filter-detector is the detector of a filter method; "
                          f"--method {args.method} detects nothing: drop it")
    if args.metrics_out and not args.metrics_out.lower().endswith(".json"):
        args.parser.error(f"{cli.flag(args, 'metrics_out')} {args.metrics_out}: the metrics "
                          "are written as JSON; give a file name ending in .json")


def run(args: argparse.Namespace) -> int:
    from labelaudit._errors import InvalidParameterError
    from labelaudit.io import write_json
    from labelaudit.train import evaluate_model, train

    if not (args.model_out or args.metrics_out):
        raise InvalidParameterError("give --out FOLDER to save the model and/or --metrics-out "
                                    "FILE (with --eval) to measure it")
    if args.metrics_out and not args.eval:
        raise InvalidParameterError(f"{cli.flag(args, 'metrics_out')} needs --eval, a clean "
                                    "labelled table")
    if args.noise_rate is not None and not 0.0 <= args.noise_rate < 1.0:
        raise InvalidParameterError(f"--noise-rate must be in [0, 1); got {args.noise_rate}")
    _check_usage(args)
    evaluation = _evaluation_table(args) if args.eval else None
    with cli.warnings_to_stderr(args, flags=_OPTIONS):
        model = train(args.data, text=args.text, label=args.label, text_pair=args.text_pair,
                      method=args.method, backbone=args.backbone, model=args.model,
                      noise_rate=args.noise_rate, filter=args.filter_mode,
                      filter_detector=args.filter_detector,
                      epochs=args.epochs, batch_size=args.batch_size,
                      learning_rate=args.learning_rate, hidden=args.hidden,
                      device=args.device, cache_dir=args.cache_dir, random_state=args.seed,
                      progress=cli.show_progress(args))
        if "auto" in model.log:
            from labelaudit.train import Screen

            cli.log(args, Screen.from_dict(model.log["auto"]).summary())
        cli.log(args, f"trained {model.method} ({args.backbone}) on {model.log['n_used']} of "
                f"{model.log['n_train']} items in {model.log['seconds']:.1f} s")
        for line in _training_notes(model.log):
            cli.log(args, line)
        if args.model_out:
            model.save(args.model_out, overwrite=args.overwrite)
            cli.log(args, f"wrote {args.model_out}")
        if args.eval:
            metrics = evaluate_model(model, evaluation, text=args.text, label=args.label,
                                     text_pair=args.text_pair)
            doc = {**metrics.to_dict(), **_facts(args, model)}
            cli.log(args, f"top-1 {metrics.top1:.4f}  top-5 {metrics.top5:.4f}  macro-F1 "
                    f"{metrics.macro_f1:.4f} on {metrics.n_eval} items"
                    + (f"; {metrics.n_unseen} items have labels the model never saw "
                       f"({', '.join(metrics.unseen_labels[:5])}), counted as wrong"
                       if metrics.n_unseen else ""))
            if args.metrics_out:
                write_json(doc, args.metrics_out)
                cli.log(args, f"wrote {args.metrics_out}")
    return 0


def _training_notes(record: dict) -> list[str]:
    """What a person should know of a run: the items filter dropped (or relabelled) and
    why, and the noise rate co-teaching or CNLCU used and where it came from."""
    notes = []
    if "filter" in record and "filter_scorers" in record:
        done = "dropped" if record["filter"] == "drop" else "relabelled"
        n, total = record["flagged"], record["n_train"]
        notes.append(
            f"filter: {done} {n} of {total} items ({n / max(total, 1):.1%}): those a "
            f"cross-fitted scan ({', '.join(record['filter_scorers'])}, out-of-sample "
            f"accuracy {record['filter_accuracy']:.3f}) flags as cleanlab's estimated number "
            f"of label errors; estimated share of wrong labels {record['filter_noise_share']:.1%}")
    elif "filter" in record:
        total = record["n_train"]
        for step in record["filter_rounds"]:
            notes.append(
                f"filter round {step['round']}: a cross-fitted {record['filter_detector']} "
                f"head ({record['filter_folds']} folds, every class in every training part) "
                f"estimates {step['noise_share']:.1%} of the labels wrong "
                f"(cleanlab's confident joint: {step['noise_share_cleanlab']:.1%}); flagged "
                f"{step['flagged']} of {total} ({step['flagged'] / max(total, 1):.1%})")
        notes.append(
            f"filter: {'dropped' if record['filter'] == 'drop' else 'soft-relabelled'} the "
            f"{record['flagged']} flagged items, then trained {record['filter_then']}")
    if "noise_rate_source" in record:
        notes.append(f"noise rate: {record['noise_rate']:.3f} ({record['noise_rate_source']}"
                     f"{' with --noise-rate' if record['noise_rate_source'] == 'given' else ''})")
    return notes


def _evaluation_table(args: argparse.Namespace):
    """The --eval table, read and its label column checked before any training."""
    from labelaudit._errors import InvalidInputError
    from labelaudit.io import check_label_values, read_table

    frame = read_table(args.eval)
    if args.label not in frame.columns:
        raise InvalidInputError(f"--eval {args.eval} has no label column {args.label!r}; its "
                                f"columns are {list(map(str, frame.columns[:12]))}")
    check_label_values(frame[args.label], column=args.label, where=f"--eval {args.eval}")
    return frame


def _facts(args: argparse.Namespace, model) -> dict:
    """Method, seed, time and what the training log knows (items dropped by filter, the
    noise rate given or estimated, the achieved noise rate of a file with clean_label)."""
    facts = {"method": model.method, "backbone": args.backbone, "seed": args.seed,
             "train_seconds": model.log["seconds"], "n_train": model.log["n_train"],
             "n_used": model.log["n_used"]}
    for key in ("flagged", "filter", "dropped", "relabelled", "filter_scorers",
                "filter_noise_share", "filter_noise_share_cleanlab", "filter_detector",
                "filter_then", "filter_rounds", "auto",
                "filter_accuracy", "noise_rate", "noise_rate_source",
                "noise_rate_estimated", "noise_rate_cleanlab", "achieved_noise_rate"):
        if key in model.log:
            facts[key] = model.log[key]
    return facts
