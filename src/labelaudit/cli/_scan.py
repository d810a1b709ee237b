"""``labelaudit scan``: rank a text dataset's items by how likely their label is wrong."""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from labelaudit.cli import _common as cli
from labelaudit.detect import RANKING_METHODS
from labelaudit.models import DEFAULT_SCORERS, SCORERS
from labelaudit.report import write_report
from labelaudit.scanning import (
    LABEL_SET_METHODS,
    PRESETS,
    ScanOptions,
    result_table,
    run_scan,
    streams,
)


def add_parser(subparsers, parents) -> None:
    p = cli.add_command(subparsers, "scan", parents, handler=run)
    p.add_argument("data", help="CSV, TSV, JSONL, JSON, Parquet, a datasets folder or a "
                   "Hugging Face hub dataset name (the training split with --score)")
    p.add_argument("--split", metavar="NAME",
                   help="split of a datasets folder or hub dataset (DATA:SPLIT works too)")
    cli.add_options(p, "text", "text_pair", "label", "id", "label_sep", "score")
    p.add_argument("--pred-probs", metavar="FILE",
                   help="your own out-of-sample probabilities instead of labelaudit's models: "
                   ".npy (n_items, n_classes), or a table with one column per class (and "
                   "optionally the data's --id column, to match rows by id)")
    p.add_argument("--classes", type=cli.comma_list, metavar="LIST",
                   help="comma-separated class of each --pred-probs column, in order "
                   "(default: a table's column names; sorted labels for .npy)")
    p.add_argument("--no-keep-columns", dest="keep_columns", action="store_false",
                   help="leave the input's other columns out of the output")
    cli.add_output_options(p, what="every item, most suspect first", folders=True,
                           out_help="write every item, most suspect first, to this file; "
                           ".csv .tsv .jsonl .json or .parquet by its suffix, or a URI "
                           "(s3://bucket/issues.parquet) or a folder of Parquet parts "
                           "(issues/, s3://bucket/issues/) when the scan streams "
                           "(default: a table of the top items on stdout)")
    cli.add_options(p, scorers={
        "type": cli.choice_list(tuple(SCORERS)),
        "help": f"comma-separated members: {', '.join(SCORERS)} (default: "
        f"{','.join(DEFAULT_SCORERS)}, each first tried on a 2,000-item sample and skipped when "
        "its ensemble weight there is below 0.05; named members always run)"})
    p.add_argument("--preset", choices=list(PRESETS),
                   help="a measured set of members instead of --scorers: fast (word TF-IDF "
                   "alone), default, best (word TF-IDF and the --model encoder, default "
                   "all-MiniLM-L6-v2, fine-tuned on every fold, 3 epochs, 512 tokens: for a "
                   "GPU, about 4 minutes for 12,600 reviews on one H100)")
    p.add_argument("--methods", type=cli.choice_list(tuple(RANKING_METHODS)),
                   help="comma-separated ranking methods (default: every method that applies "
                   "but self_confidence, which ranks as ensemble does)")
    p.add_argument("--rank-by", choices=[*RANKING_METHODS, *LABEL_SET_METHODS],
                   help="method that orders the output (default: crowdlab with "
                   "--annotations, else ensemble; for label sets: worst_class (default), "
                   "log_likelihood or cleanlab)")
    p.add_argument("--annotations", metavar="COL",
                   help="column of per-item lists of several annotators' labels (plain labels "
                   "or {worker, label} objects): adds cleanlab's CROWDLAB as method crowdlab")
    p.add_argument("--weights", default="auto",
                   help="ensemble weights: auto (fitted to out-of-sample loss), equal, "
                   "or comma-separated numbers")
    cli.add_options(p, model={
        "action": "append", "help": "encoder for embed/finetune: a Hugging Face id or a local "
        "folder (default: the packaged all-MiniLM-L6-v2); repeat for one member per model"})
    tune = p.add_argument_group("fine-tuning (--scorers finetune)")
    cli.add_options(
        tune, epochs="default: 2", max_length="tokens per text (default: 256)",
        batch_size="default: 16", lr="default: 5e-5",
        device={"dest": "devices", "type": cli.comma_list, "metavar": "LIST",
                "help": "fit folds at once on these devices, one process each (cuda:0,cuda:1; "
                "default: every GPU when there are several)"},
        sweep={"default": 0, "help": "run N configurations and keep the best --keep (FME)"})
    tune.add_argument("--keep", type=cli.at_least(1), metavar="K",
                      help="configurations kept from --sweep (default: 3, or all of a "
                           "smaller sweep)")
    p.add_argument("--long-texts", choices=["truncate", "windows"],
                   help="embed: cut texts longer than the encoder's window (default), or "
                   "embed them as the mean of their windows")
    p.add_argument("--pair-mode", choices=["features", "joint"],
                   help="how embed encodes sentence pairs (default: features)")
    cli.add_folds(p)
    cli.add_options(p, seeds={"default": 1, "help": "repeat cross-fitting with this many fold "
                              "seeds (default: 1)"})
    cli.add_seed(p)
    flag = p.add_mutually_exclusive_group()
    flag.add_argument("--top", type=cli.at_least(0), help="flag the K most suspect items "
                      "(default: as many as cleanlab estimates)")
    flag.add_argument("--threshold", type=cli.fraction,
                      help="flag items whose given label has probability below this")
    cli.add_options(p, "cache_dir")
    p.add_argument("--show", type=cli.at_least(0), default=20,
                   help="rows printed without --out (0: none, only the summary)")
    big = p.add_argument_group(
        "big data (streams with --scorers tfidf and --out, or with --engine)")
    big.add_argument("--engine", choices=["local", "ray"],
                     help="stream the scan in chunks (the tfidf and embed members): local (this "
                     "process) or ray (Ray Data, a pool of encoder actors and Ray tasks; a local "
                     "Ray with every core unless --ray-address); with what needs every item in "
                     "memory (finetune, --report-out...), ray runs the in-memory scan with its "
                     "folds as Ray tasks, one GPU each for fine-tuning; --scorers tfidf with --out "
                     "on a file streams locally by itself")
    big.add_argument("--ray-address", metavar="ADDRESS",
                     help="an existing Ray cluster for --engine ray (auto, host:6379, "
                     "ray://host:10001)")
    big.add_argument("--chunk-size", type=cli.at_least(1), default=100_000, metavar="N",
                     help="rows per chunk when streaming (default: 100000)")
    big.add_argument("--no-resume", dest="resume", action="store_false",
                     help="start over instead of reusing the finished folds of an "
                     "interrupted run (a streamed scan's, or --checkpoint-dir's)")
    big.add_argument("--checkpoint-dir", metavar="FOLDER",
                     help="save every finished fold here, and on a rerun of an interrupted "
                     "scan reuse them instead of fitting them again: any size, in memory or "
                     "streamed (default: none in memory; <out>.parts when streaming); a new "
                     "or empty folder, or one labelaudit made; when the scan succeeds, "
                     "labelaudit's own files there go, and the folder too if labelaudit "
                     "made it and it is then empty")
    cli.add_options(p, report_out={
        "type": cli.output_file((".html", ".htm")),
        "help": "also write the self-contained HTML audit report (labelaudit report)"})
    p.add_argument("--datalab", action="store_true",
                   help="add cleanlab Datalab's near-duplicate (with the duplicate's id and "
                   "whether its label differs), outlier and non-IID findings")
    p.add_argument("--no-evidence", dest="evidence", action="store_false",
                   help="leave out the evidence column (why each flagged item is flagged: its "
                   "words toward the suggested label, out of fold; its 3 nearest items with "
                   "that label; conflicting duplicates)")
    p.add_argument("--top-classes", type=cli.at_least(2), metavar="K",
                   help="keep each item's K likeliest classes' probabilities instead of "
                   "every class's (default: all up to 256 classes, 32 above; memory then "
                   "grows with the items, not items x classes)")
    p.add_argument("--datalab-features", choices=["tfidf", "embed"],
                   help="features for --datalab: TF-IDF reduced to 256 dimensions (default) "
                   "or the embed member's sentence embeddings")


def run(args: argparse.Namespace) -> int:
    options = ScanOptions(
        text=args.text, label=args.label, text_pair=args.text_pair, id=args.id,
        split=args.split, score=args.score, pred_probs=args.pred_probs, classes=args.classes,
        keep_columns=args.keep_columns, scorers=args.scorers, preset=args.preset,
        methods=args.methods, rank_by=args.rank_by, annotations=args.annotations,
        weights=args.weights, n_folds=args.folds, n_seeds=args.seeds, random_state=args.seed,
        top=args.top, threshold=args.threshold, model=args.model, pair_mode=args.pair_mode,
        cache_dir=args.cache_dir, long_texts=args.long_texts, epochs=args.epochs,
        max_length=args.max_length, batch_size=args.batch_size, learning_rate=args.learning_rate,
        devices=args.devices, progress=cli.show_progress(args), sweep=args.sweep,
        keep=args.keep, datalab=args.datalab, datalab_features=args.datalab_features,
        evidence=args.evidence, top_classes=args.top_classes,
        engine=args.engine or "local", ray_address=args.ray_address,
        checkpoint_dir=args.checkpoint_dir, resume=args.resume, label_sep=args.label_sep,
        out=args.out, chunk_size=args.chunk_size, overwrite=args.overwrite)
    with cli.warnings_to_stderr(args):
        # --engine streams (--engine ray with what needs memory: in memory, its folds as Ray
        # tasks); so does --scorers tfidf with --out on a file
        streamed = streams(args.data, options, engine=args.engine,
                           report=args.report_out is not None)
        result = run_scan(args.data, replace(options, out=args.out if streamed else None))
    cli.log(args, result.summary())
    if streamed:  # written to --out in chunks
        return 0
    rows = args.show if not args.out and args.format == "table" else None
    if rows != 0:  # --show 0: the summary alone
        cli.emit_output(result_table(result, rows=rows, sep=cli.set_separator(args)), args,
                        max_colwidth=70)
    if args.report_out:
        written = write_report(result, args.report_out, data_name=Path(str(args.data)).name)
        cli.log(args, f"wrote {written}")
    return 0
