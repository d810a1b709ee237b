"""``labelaudit noise``: inject controlled label noise; ``noise realism``: how real it looks."""

from __future__ import annotations

import argparse
from pathlib import Path

from labelaudit.cli import _common as cli
from labelaudit.io import read_table
from labelaudit.models import DEFAULT_SCORERS, SCORERS
from labelaudit.noise import (
    NOISE_METHODS,
    LabelSetNoiseResult,
    inject_noise_table,
    measure_noise_realism,
    parse_recipe,
    plot_loss_histograms,
    read_noise_matrix,
    read_noise_sources,
)


def add_parser(subparsers, parents) -> None:
    p = cli.add_command(subparsers, "noise", parents, handler=None)
    sub = cli.add_steps(p, dest="noise_command", default="inject", metavar="{inject,realism}")

    i = cli.add_command(sub, "inject", parents, handler=run_inject)
    i.add_argument("input", metavar="INPUT",
                   help="CSV, TSV, JSONL, JSON, Parquet or datasets folder")
    cli.add_options(i, "text", "text_pair", "label", "id",
                    text={"default": None, "help": "text column (instance-dependent noise)"},
                    id="id column (default: the row number)")
    cli.add_options(i, "label_sep")
    cli.add_seed(i, type=cli.at_least(0))
    cli.add_output_options(i, what="the noised table", default_format="jsonl",
                           out_help="output file, format by suffix: .csv .tsv .jsonl .json "
                           ".parquet (default: stdout, as jsonl)")
    g = i.add_argument_group("noise injection")
    how = g.add_mutually_exclusive_group(required=True)
    how.add_argument("--method", choices=list(NOISE_METHODS), help="the noise method")
    how.add_argument("--recipe", metavar="SPEC", help="methods and their shares of the noised "
                     "items, e.g. 'dissenting-worker:0.8,dissenting-label:0.2'")
    g.add_argument("--rate", type=cli.interval(0.0, 1.0, high_open=True),
                   help="share of items to noise, in [0, 1): round(rate * n) items, halves up "
                   "(required, except crowd-majority where it is a cap)")
    crowd = g.add_mutually_exclusive_group()
    crowd.add_argument("--annotations", metavar="COLUMN", help="per-item list column of crowd "
                       "labels, plain or {\"worker\": id, \"label\": value} objects")
    cli.add_options(crowd, annotations_file="long table of crowd labels (item_id, annotator_id, "
                    "label); item ids match --id (or row numbers)")
    g.add_argument("--noise-matrix", metavar="FILE", help="class-dependent: row-stochastic "
                   "matrix, CSV with clean classes as rows and noisy classes as columns, or "
                   "JSON {clean: {noisy: p}} (default: drawn at random)")
    g.add_argument("--swap-input", action="store_true", help="instance-dependent: keep the "
                   "label and swap in the nearest other-class item's text")
    g.add_argument("--sources", metavar="SPEC", help="noise sources: 'CLASS=SOURCE,...' or a "
                   "JSON file {class: source}; the rate applies per source")
    g.add_argument("--split", metavar="COLUMN", help="split column; the rate applies per split")
    cli.add_options(g, "model", "cache_dir", model="sentence encoder of instance-dependent noise "
                    "(default: the packaged all-MiniLM-L6-v2)",
                    summary_out="write the achieved rates and noise matrix as JSON")

    r = cli.add_command(sub, "realism", parents, handler=run_realism)
    r.add_argument("input", metavar="FILE", help="the noisy file (`labelaudit noise --out`)")
    cli.add_options(r, "text", "text_pair", "label", "model", "cache_dir",
                    id="id column (default: the row number)")
    cli.add_seed(r, type=cli.at_least(0))
    cli.add_output_options(r, what="the distances")
    r.add_argument("--noise-column", help="column naming each item's noise method, or a "
                   "boolean column (default: noise_method, else is_noisy)")
    cli.add_options(
        r, scorers={"default": ",".join(DEFAULT_SCORERS), "type": cli.choice_list(tuple(SCORERS)),
                    "help": "comma-separated scorers to cross-fit (default: "
                    f"{','.join(DEFAULT_SCORERS)})"},
        plot_out="save loss histograms (.png, .pdf, .svg)")
    cli.add_folds(r)


def run_inject(args: argparse.Namespace) -> int:
    if args.recipe is not None:  # a recipe that does not parse says so, before --rate
        parse_recipe(args.recipe)
    if args.rate is None and args.method != "crowd-majority":
        args.parser.error("--rate is required (except for --method crowd-majority)")
    frame = read_table(args.input)
    with cli.warnings_to_stderr(args):
        result = inject_noise_table(
            frame, label=args.label, method=args.method, rate=args.rate, recipe=args.recipe,
            random_state=args.seed, id=args.id, text=args.text, text_pair=args.text_pair,
            annotations=(read_table(args.annotations_file) if args.annotations_file
                         else args.annotations), split=args.split,
            noise_matrix=read_noise_matrix(args.noise_matrix) if args.noise_matrix else None,
            sources=read_noise_sources(args.sources) if args.sources else None,
            swap_input=args.swap_input, model=args.model, cache_dir=args.cache_dir,
            label_sep=args.label_sep, progress=cli.show_progress(args))
    if isinstance(result, LabelSetNoiseResult):
        noised = result.apply_to(frame, label=args.label, sep=cli.set_separator(args))
    else:
        noised = result.apply_to(frame, label=args.label, text=args.text, text_pair=args.text_pair)
    cli.emit_output(noised, args, summary=result)
    return 0


def run_realism(args: argparse.Namespace) -> int:
    frame = read_table(args.input)
    with cli.warnings_to_stderr(args):
        result = measure_noise_realism(
            frame, text=args.text, label=args.label, text_pair=args.text_pair, id=args.id,
            noise_column=args.noise_column, scorers=args.scorers, n_folds=args.folds,
            random_state=args.seed, model=args.model, cache_dir=args.cache_dir,
            progress=cli.show_progress(args))
    if args.plot_out:
        plot_loss_histograms(result, args.plot_out, title=Path(args.input).name)
    table = result.to_frame()
    cli.emit_output(table.round(4) if not args.out and args.format == "table" else table, args)
    return 0
