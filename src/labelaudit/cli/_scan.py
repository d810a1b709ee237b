"""``labelaudit scan``: rank a text dataset's items by how likely their label is wrong."""

from __future__ import annotations

import argparse
from typing import Any

from labelaudit.cli import _common as cli
from labelaudit.registry import (
    LABEL_SET_METHODS,
    PRESETS,
    RANKING_METHODS,
    SCORERS,
    STREAMED_SCORERS,
)

ORDER = 10


def add_parser(subparsers, parents) -> None:
    p = cli.add_command(
        subparsers, "scan", parents, handler=run,
        help="find label errors in a text classification dataset")
    p.add_argument("data", help="CSV, TSV, JSONL, JSON, Parquet, a datasets folder or a "
                   "Hugging Face hub dataset name (the training split with --score)")
    p.add_argument("--split", metavar="NAME",
                   help="split of a datasets folder or hub dataset (DATA:SPLIT works too)")
    cli.add_options(p, "text", "text_pair", "label", "id", "label_sep")
    p.add_argument("--score", metavar="FILE",
                   help="rank this file's items with models fitted on DATA (test-set audit)")
    p.add_argument("--pred-probs", metavar="FILE",
                   help="your own out-of-sample probabilities instead of labelaudit's models: "
                   ".npy (n_items, n_classes), or a table with one column per class")
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
        "type": cli.choice_list(SCORERS.names()),
        "help": f"comma-separated members: {', '.join(SCORERS)} (default: "
        f"{','.join(SCORERS.default)}, each first tried on a 2,000-item sample and skipped when "
        "its ensemble weight there is below 0.05; named members always run)"})
    p.add_argument("--preset", choices=list(PRESETS),
                   help="a measured set of members instead of --scorers: fast (word TF-IDF "
                   "alone), default, best (word TF-IDF and the --model encoder, default "
                   "all-MiniLM-L6-v2, fine-tuned on every fold, 3 epochs, 512 tokens: for a "
                   "GPU, about 4 minutes for 12,600 reviews on one H100)")
    p.add_argument("--methods", type=cli.choice_list(RANKING_METHODS.names()),
                   help="comma-separated ranking methods (default: every method that applies "
                   "but self_confidence, which ranks as ensemble does)")
    p.add_argument("--rank-by", choices=RANKING_METHODS.names() + LABEL_SET_METHODS,
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
        device={"dest": "devices", "type": cli.comma_list, "metavar": "LIST", "old": "--devices",
                "help": "fit folds at once on these devices, one process each (cuda:0,cuda:1; "
                "default: every GPU when there are several)"},
        sweep={"default": 0, "help": "run N configurations and keep the best --keep (FME)"})
    tune.add_argument("--keep", type=cli.at_least(1), default=3, metavar="K",
                      help="configurations kept from --sweep (default: 3)")
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
    p.add_argument("--show", type=cli.at_least(0), default=20, help="rows printed without --out")
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
                     "streamed (default: none in memory; <out>.parts when streaming); "
                     "removed when the scan succeeds")
    cli.add_options(p, report_out={
        "type": cli.output_file((".html", ".htm")),
        "help": "also write the self-contained HTML audit report (labelaudit report)"})
    p.add_argument("--datalab", action="store_true",
                   help="add cleanlab Datalab's near-duplicate (with the duplicate's id and "
                   "whether its label differs), outlier and non-IID findings")
    p.add_argument("--datalab-features", choices=["tfidf", "embed"],
                   help="features for --datalab: TF-IDF reduced to 256 dimensions (default) "
                   "or the embed member's sentence embeddings")


_TUNING = ("epochs", "max_length", "batch_size", "learning_rate", "devices")
# The options that configure labelaudit's models, and their values when not given.
_MODEL_OPTIONS = {"scorers": None, "preset": None, "model": None, "epochs": None,
                  "max_length": None, "batch_size": None, "learning_rate": None,
                  "devices": None, "sweep": 0, "long_texts": None, "pair_mode": None,
                  "score": None, "seeds": 1, "weights": "auto"}
# The scan's options that its messages name (library name=dest of the flag).
_LIBRARY_FLAGS = ("classes", "split", "pred_probs", "score", "annotations", "methods",
                  "weights", "n_seeds=seeds", "sweep", "datalab", "engine", "checkpoint_dir",
                  "preset", "pair_mode", "rank_by", "label_sep")
# The options only the in-memory scan has, and their values when not given.
_IN_MEMORY = {"label_sep": None, "split": None, "score": None, "pred_probs": None,
              "annotations": None,
              "methods": None, "rank_by": None, "weights": "auto", "seeds": 1,
              "datalab": False, "report_out": None, "sweep": 0, "long_texts": None,
              **{name: None for name in _TUNING}}


def _given(args: argparse.Namespace, unset: dict[str, Any]) -> list[str]:
    """The flags of the options of ``unset`` that were given."""
    return [cli.flag(args, dest) for dest, value in unset.items() if getattr(args, dest) != value]


def _check_usage(args: argparse.Namespace) -> None:
    """Options that would be silently ignored are usage errors, before any work."""
    if args.datalab_features is not None and not args.datalab:
        args.parser.error("--datalab-features sets the features of --datalab: add --datalab, "
                          "or drop --datalab-features")
    if args.engine is not None and args.pred_probs is not None:
        args.parser.error(f"--engine {args.engine} runs labelaudit's models; with --pred-probs no "
                          "model runs (your probabilities are used as they are): drop --engine")
    if args.checkpoint_dir is not None and args.pred_probs is not None:
        args.parser.error("--checkpoint-dir keeps the folds of labelaudit's models; with "
                          "--pred-probs no model runs: drop --checkpoint-dir")


def _apply_preset(args: argparse.Namespace) -> None:
    """--preset as the --scorers and fine-tuning options it stands for (the user's own
    fine-tuning options win)."""
    from labelaudit.scan import preset_settings

    if args.preset is None:
        return
    if args.scorers is not None:
        args.parser.error("--preset names the members: give --preset or --scorers, not both")
    args.scorers, settings = preset_settings(
        args.preset, **{k: getattr(args, k) for k in _TUNING if k != "devices"})
    for key, value in settings.items():
        setattr(args, key, value)


def members(args: argparse.Namespace) -> list[Any] | None:
    """The ensemble: a name per scorer, or a configured scorer object where --model or the
    fine-tuning options apply (one per --model for embed and finetune); None for the
    default members, which scan screens."""
    from labelaudit._errors import InvalidParameterError
    from labelaudit.models import make_scorer

    tuning = {k: getattr(args, k) for k in _TUNING if getattr(args, k) is not None}
    if args.scorers is None and not (tuning or args.model or args.long_texts or args.sweep):
        return None
    names = args.scorers or list(SCORERS.default)
    if args.long_texts and "embed" not in names:
        raise InvalidParameterError("--long-texts sets the embed scorer: add it to --scorers")
    if tuning and "finetune" not in names:
        raise InvalidParameterError(f"{', '.join(cli.flag(args, k) for k in tuning)} "
                                    f"{'sets' if len(tuning) == 1 else 'set'} the finetune "
                                    "scorer: add it to --scorers")
    if args.sweep and "finetune" not in names:
        raise InvalidParameterError("--sweep tunes the finetune scorer: add it to --scorers")
    out: list[Any] = []
    for name in names:
        if name not in ("embed", "finetune"):
            out.append(name)
            continue
        for model in args.model or [None]:
            options = (dict(tuning) if name == "finetune" else
                       {"long_texts": args.long_texts} if args.long_texts else {})
            out.append(make_scorer(name, model=model, pair_mode=args.pair_mode,
                                   cache_dir=args.cache_dir, **options))
    return out


def _check_pred_probs(args: argparse.Namespace) -> None:
    """--pred-probs replaces the models: refuse the flags that configure them."""
    from labelaudit._errors import InvalidParameterError

    if args.pred_probs is None:
        if args.classes is not None:
            raise InvalidParameterError("--classes names the columns of --pred-probs; give "
                                        "--pred-probs too, or drop --classes")
        return
    given = _given(args, _MODEL_OPTIONS)
    if given:
        raise InvalidParameterError(
            f"--pred-probs replaces labelaudit's models, so {', '.join(given)} cannot be "
            "given with it; drop " + ("them" if len(given) > 1 else "it")
            + ", or drop --pred-probs")


def _streams(args: argparse.Namespace) -> bool:
    """Whether this scan streams (labelaudit.scan.scan_stream): --engine with nothing
    that needs every item in memory, or a TF-IDF scan of a file written with --out."""
    from labelaudit._errors import InvalidParameterError

    given = _given(args, _IN_MEMORY)
    given += [f"--scorers {name}" for name in args.scorers or () if name not in STREAMED_SCORERS]
    given += ["--model (more than one)"] if args.model and len(args.model) > 1 else []
    if args.engine is None:
        if args.ray_address:
            raise InvalidParameterError("--ray-address is for --engine ray: add it")
        if given or args.scorers != ["tfidf"] or not args.out or args.folds < 2:
            return False
        from labelaudit.engine import first_rows_hold_label_sets, is_streamable

        return (is_streamable(args.data)
                and not first_rows_hold_label_sets(args.data, args.label))
    if given:
        if args.engine == "ray":
            return False  # in memory, with its folds as Ray tasks
        raise InvalidParameterError(
            f"--engine local streams the tfidf and embed members: {', '.join(given)} "
            f"need{'s' if len(given) == 1 else ''} every item in memory; drop "
            f"{'it' if len(given) == 1 else 'them'}, drop --engine, or use --engine ray "
            "(in memory, its folds as Ray tasks)")
    if not args.out:
        raise InvalidParameterError("--engine writes its output in chunks: give --out")
    return True


def _run_stream(args: argparse.Namespace) -> int:
    from labelaudit.engine import EmbedOptions
    from labelaudit.scan import scan_stream

    embed = EmbedOptions(model=args.model[0] if args.model else None,
                         pair_mode=args.pair_mode or "features", cache_dir=args.cache_dir)
    with cli.warnings_to_stderr(args), cli.fold_rule(args):
        result = scan_stream(
            args.data, text=args.text, label=args.label, text_pair=args.text_pair, id=args.id,
            out=args.out, scorers=args.scorers, engine=args.engine or "local",
            ray_address=args.ray_address, chunk_size=args.chunk_size, n_folds=args.folds,
            random_state=args.seed, top=args.top, threshold=args.threshold,
            resume=args.resume, keep_columns=args.keep_columns, embed=embed,
            overwrite=args.overwrite, checkpoint_dir=args.checkpoint_dir,
            progress=cli.show_progress(args))
    cli.log(args, result.summary())
    return 0


def _output_frame(args: argparse.Namespace, result: Any, table: bool) -> Any:
    """The table to write: label sets as lists, or as text joined by --label-sep (or |)
    in CSV, TSV and the table view."""
    from labelaudit.scan import LabelSetScanResult

    if not isinstance(result, LabelSetScanResult):
        return result.to_table(args.show) if table else result.to_frame()
    frame = result.to_frame(sep=cli.set_separator(args))
    return frame.head(args.show) if table and args.show else frame


def run(args: argparse.Namespace) -> int:
    from labelaudit._errors import InvalidInputError, InvalidParameterError
    from labelaudit.scan import scan

    _check_usage(args)
    _check_pred_probs(args)
    with cli.warnings_to_stderr(args):
        _apply_preset(args)
    if _streams(args):
        return _run_stream(args)
    out = str(args.out or "")
    if "://" in out or out.endswith("/"):
        raise InvalidParameterError(
            f"--out {out}: only a streamed scan writes to a folder or a URI (--engine local "
            "or ray, with the tfidf and embed members and nothing that needs every item in "
            "memory); write a local file")
    weights: Any = args.weights
    if args.weights not in ("auto", "equal"):
        try:
            weights = [float(w) for w in cli.comma_list(args.weights)]
        except ValueError:
            raise InvalidParameterError(
                f"--weights must be auto, equal or numbers; got {args.weights!r}") from None
    with cli.warnings_to_stderr(args, flags=_LIBRARY_FLAGS, bare=("split",)), \
            cli.fold_rule(args):
        result = scan(
            args.data, text=args.text, label=args.label, text_pair=args.text_pair, id=args.id,
            split=args.split, score=args.score, pred_probs=args.pred_probs,
            classes=args.classes, keep_columns=args.keep_columns,
            scorers=None if args.pred_probs else members(args), methods=args.methods,
            annotations=args.annotations, rank_by=args.rank_by, weights=weights,
            n_folds=args.folds, n_seeds=args.seeds, random_state=args.seed, top=args.top,
            threshold=args.threshold, pair_mode=args.pair_mode, cache_dir=args.cache_dir,
            sweep=args.sweep, keep=args.keep, progress=cli.show_progress(args),
            datalab=args.datalab, datalab_features=args.datalab_features or "tfidf",
            engine=args.engine or "local", ray_address=args.ray_address,
            checkpoint_dir=args.checkpoint_dir, resume=args.resume, label_sep=args.label_sep)
    cli.log(args, result.summary())
    table = not args.out and args.format == "table"
    try:
        cli.emit_output(_output_frame(args, result, table), args, max_colwidth=70)
    except Exception as exc:
        if type(exc).__module__.split(".")[0] != "pyarrow" or result.extra is None:
            raise
        raise InvalidInputError(
            f"cannot write Parquet ({' '.join(str(exc).split())}): a kept input column mixes "
            "value types; write .csv or .jsonl, or leave the input's columns out with "
            "--no-keep-columns") from None
    if args.report_out:
        from pathlib import Path

        from labelaudit.report import write_report


        written = write_report(result, args.report_out, data_name=Path(str(args.data)).name)
        cli.log(args, f"wrote {written}")
    return 0
