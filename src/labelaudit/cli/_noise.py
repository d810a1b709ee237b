"""``labelaudit noise``: inject controlled label noise; ``noise realism``: how real it looks."""

from __future__ import annotations

import argparse
from pathlib import Path

from labelaudit.cli._common import (
    add_command,
    add_folds,
    add_output_options,
    at_least,
    choice_list,
    emit_output,
    fold_rule,
    log,
    show_progress,
    warnings_to_stderr,
)
from labelaudit.registry import NOISE_METHODS, SCORERS

ORDER = 40

_EPILOG = """examples:
  labelaudit noise clean.jsonl --label label --method uniform --rate 0.05 --seed 0 --out noisy.jsonl
  labelaudit noise crowd.jsonl --label gold --annotations annotator_labels \\
      --method dissenting-worker --rate 0.04 --out noisy.jsonl
  labelaudit noise crowd.jsonl --label gold --annotations annotator_labels \\
      --recipe "dissenting-worker:0.8,dissenting-label:0.2" --rate 0.05 --out noisy.jsonl
  labelaudit noise clean.csv --text text --label label --method instance-dependent --rate 0.2 \\
      --out noisy.csv
  labelaudit noise realism noisy.jsonl --text text --label label --plot losses.png

The output keeps every input column; LABEL holds the noisy label, and clean_label, is_noisy
and noise_method are added (noise_source with --sources; text_from and clean_<column> with
--swap-input). A summary of the achieved rates goes to stderr (--summary FILE for JSON).

`noise realism FILE` cross-fits the scan's default scorers on the noisy labels and reports,
per noise method, the Wasserstein distance between the losses of noised and clean items
(Chong, Hong & Manning 2022): the lower, the more the noise looks like real errors.
"""


def add_parser(subparsers, parents) -> None:
    p = add_command(
        subparsers, "noise", parents, handler=run, epilog=_EPILOG,
        help="inject realistic, controlled label noise (and measure its realism)",
        description="Noise a clean dataset at an exact rate with synthetic (uniform, "
        "class-dependent), human-originated (dissenting label/worker, crowd majority, "
        "minority split) or instance-dependent noise, or a recipe mixing them.",
        usage="labelaudit noise INPUT --label COL (--method M | --recipe SPEC) [--rate R] ...\n"
        "       labelaudit noise realism INPUT --text COL --label COL [--plot FILE] ...")
    p.add_argument("input", metavar="INPUT",
                   help="CSV, TSV, JSONL, JSON, Parquet or datasets folder; or the word "
                   "'realism' followed by the noisy file")
    p.add_argument("realism_input", nargs="?", metavar="FILE", help=argparse.SUPPRESS)
    p.add_argument("--label", default="label", help="label column (default: label)")
    p.add_argument("--text", help="text column (instance-dependent noise; realism, "
                   "default: text)")
    p.add_argument("--text-pair", help="second text column for sentence pairs (NLI)")
    p.add_argument("--id", help="id column (default: the row number)")
    p.add_argument("--seed", type=at_least(0), default=0, help="random seed (default: 0)")
    add_output_options(p, what="the noised table (realism: the distances)", default_format=None,
                       out_help="output file, format by suffix: .csv .tsv .jsonl .json .parquet "
                       "(default: stdout; noise writes jsonl there, realism a table)")

    g = p.add_argument_group("noise injection")
    how = g.add_mutually_exclusive_group()
    how.add_argument("--method", choices=NOISE_METHODS.names(), help="the noise method")
    how.add_argument("--recipe", metavar="SPEC", help="methods and their shares of the noised "
                     "items, e.g. 'dissenting-worker:0.8,dissenting-label:0.2'")
    g.add_argument("--rate", type=float, help="share of items to noise, in [0, 1): round(rate * "
                   "n) items, halves up (required, except crowd-majority where it is a cap)")
    g.add_argument("--annotations", metavar="COLUMN", help="per-item list column of crowd "
                   "labels, plain or {\"worker\": id, \"label\": value} objects")
    g.add_argument("--annotations-file", metavar="FILE", help="long table of crowd labels "
                   "(item_id, annotator_id, label); item ids match --id (or row numbers)")
    g.add_argument("--noise-matrix", metavar="FILE", help="class-dependent: row-stochastic "
                   "matrix, CSV with clean classes as rows and noisy classes as columns, or "
                   "JSON {clean: {noisy: p}} (default: drawn at random)")
    g.add_argument("--swap-input", action="store_true", help="instance-dependent: keep the "
                   "label and swap in the nearest other-class item's text")
    g.add_argument("--sources", metavar="SPEC", help="noise sources: 'CLASS=SOURCE,...' or a "
                   "JSON file {class: source}; the rate applies per source")
    g.add_argument("--split", metavar="COLUMN", help="split column; the rate applies per split")
    g.add_argument("--summary", metavar="FILE", help="write the achieved rates and noise "
                   "matrix as JSON")

    r = p.add_argument_group("shared by instance-dependent noise and realism")
    r.add_argument("--model", help="sentence encoder (default: the packaged all-MiniLM-L6-v2)")
    r.add_argument("--cache-dir", help="embedding cache (default: ~/.cache/labelaudit)")

    q = p.add_argument_group("noise realism")
    q.add_argument("--noise-column", help="column naming each item's noise method, or a "
                   "boolean column (default: noise_method, else is_noisy)")
    q.add_argument("--scorers", default=",".join(SCORERS.default),
                   type=choice_list(SCORERS.names()),
                   help="comma-separated scorers to cross-fit "
                   f"(default: {','.join(SCORERS.default)})")
    add_folds(q)
    q.add_argument("--plot", metavar="FILE", help="save loss histograms (.png, .pdf, .svg)")
    p.set_defaults(noise_parser=p)


def run(args: argparse.Namespace) -> int:
    if args.input == "realism" and args.realism_input is not None:
        return _run_realism(args)
    if args.realism_input is not None:
        args.noise_parser.error(f"unexpected argument {args.realism_input!r} (did you mean "
                                f"`labelaudit noise realism {args.realism_input}`?)")
    return _run_noise(args)


def _check_usage(args: argparse.Namespace) -> None:
    """Refuse what argparse cannot: a missing method, rate or an out-of-range rate."""
    from labelaudit._errors import InvalidParameterError
    from labelaudit.noise._common import check_rate

    if args.method is None and args.recipe is None:
        args.noise_parser.error("give --method or --recipe")
    if args.rate is None and args.method != "crowd-majority":
        args.noise_parser.error("--rate is required (except for --method crowd-majority)")
    if args.annotations and args.annotations_file:
        args.noise_parser.error("give --annotations or --annotations-file, not both")
    realism = [flag for flag, given in (
        ("--noise-column", args.noise_column is not None),
        ("--scorers", args.scorers != list(SCORERS.default)),
        ("--folds", getattr(args, "folds_given", False)), ("--plot", args.plot is not None))
        if given]
    if realism:
        args.noise_parser.error(f"{', '.join(realism)}: used by `noise realism` only")
    try:  # up front, before reading the data (an out-of-range rate stays a data-style exit 1)
        check_rate(args.rate, allow_none=True)
    except InvalidParameterError as exc:
        raise InvalidParameterError(f"--{exc}") from None


def _run_noise(args: argparse.Namespace) -> int:
    from labelaudit.io import read_table, write_json
    from labelaudit.noise import inject_noise_table, read_noise_matrix, read_noise_sources

    _check_usage(args)
    frame = read_table(args.input)
    with warnings_to_stderr(args, flags=("text", "sources")):
        result = inject_noise_table(
            frame, label=args.label, method=args.method, recipe=args.recipe, rate=args.rate,
            random_state=args.seed, id=args.id, text=args.text, text_pair=args.text_pair,
            annotations=(read_table(args.annotations_file) if args.annotations_file
                         else args.annotations), split=args.split,
            noise_matrix=read_noise_matrix(args.noise_matrix) if args.noise_matrix else None,
            sources=read_noise_sources(args.sources) if args.sources else None,
            swap_input=args.swap_input, model=args.model, cache_dir=args.cache_dir,
            progress=show_progress(args))
    out = result.apply_to(frame, label=args.label, text=args.text, text_pair=args.text_pair)
    args.format = args.format or "jsonl"
    emit_output(out, args)
    if args.summary:
        write_json(result.to_dict(), args.summary)
    log(args, result.summary())
    return 0


def _run_realism(args: argparse.Namespace) -> int:
    from labelaudit.io import read_table
    from labelaudit.noise import measure_noise_realism, plot_loss_histograms

    injection = [flag for flag, value in (
        ("--method", args.method), ("--recipe", args.recipe), ("--rate", args.rate),
        ("--annotations", args.annotations), ("--annotations-file", args.annotations_file),
        ("--noise-matrix", args.noise_matrix), ("--swap-input", args.swap_input),
        ("--sources", args.sources), ("--split", args.split), ("--summary", args.summary))
        if value not in (None, False)]
    if injection:
        args.noise_parser.error(f"{', '.join(injection)}: not used by `noise realism`")
    frame = read_table(args.realism_input)
    with warnings_to_stderr(args, flags=("noise_column",)), fold_rule(args):
        result = measure_noise_realism(
            frame, text=args.text or "text", label=args.label, text_pair=args.text_pair,
            id=args.id, noise_column=args.noise_column, scorers=args.scorers,
            n_folds=args.folds, random_state=args.seed, model=args.model,
            cache_dir=args.cache_dir, progress=show_progress(args))
    if args.plot:
        plot_loss_histograms(result, args.plot, title=Path(args.realism_input).name)
    table = result.to_frame()
    if not args.out and args.format in (None, "table"):
        table = table.round(4)
    emit_output(table, args)
    return 0
