"""``labelaudit agreement``: annotator agreement, aggregation and the gold standard's noise."""

from __future__ import annotations

import argparse
from pathlib import Path

from labelaudit.agreement import (
    AGGREGATION_METHODS,
    chance_difference,
    noise_bound,
    read_annotation_file,
    tolerance,
)
from labelaudit.cli import _common as cli
from labelaudit.io import emit_report

_NESTED_GUESSES = ("annotator_labels", "annotations", "labels", "votes")  # agreement._read
_share = cli.interval(0.5, low_open=True, note=" (a strict majority)")  # --min-share
_confidence = cli.interval(0.0, low_open=True, high_open=True)  # --confidence


def add_parser(subparsers, parents) -> None:
    p = cli.add_command(subparsers, "agreement", parents, handler=None)
    sub = cli.add_steps(p, dest="agreement_command", default="measure",
                        metavar="{measure,compare,noise,tolerate}")
    m = cli.add_command(sub, "measure", parents, handler=run_measure)
    m.add_argument("input", help="annotations: CSV, TSV, JSONL, JSON or Parquet")
    cols = m.add_argument_group("columns")
    cols.add_argument("--item", help="item-id column (default: item/item_id/task, or id when "
                      "nested)")
    cols.add_argument("--annotations", metavar="COLUMN",
                      help="nested input: the per-item list column (default: found among "
                      + ", ".join(_NESTED_GUESSES) + " when it holds lists)")
    cols.add_argument("--annotator", help="long input: annotator column (default: "
                      "annotator/annotator_id/worker; optional)")
    cols.add_argument("--label", help="long input: label column (default: label)")
    cols.add_argument("--gold", metavar="COLUMN",
                      help="column with reference labels (e.g. expert gold) for some or all items")
    m.add_argument("--method", choices=list(AGGREGATION_METHODS), default="majority",
                   help="label aggregation (default: majority)")
    m.add_argument("--ties", choices=["random", "first", "abstain", "error"], default="random",
                   help="majority-vote ties: seeded random pick, first category, no label, or "
                   "fail (default: random)")
    m.add_argument("--min-share", type=_share, default=1.0,
                   help="share of votes the top label needs for the gold standard, in (0.5, 1] "
                   "(default: 1, unanimous)")
    m.add_argument("--confidence", type=_confidence, default=0.95,
                   help="confidence of the intervals and of the noise bound (default: 0.95)")
    m.add_argument("--p-chance", type=cli.fraction,
                   help="chance agreement on a hard item (default: estimated from the labels on "
                   "disagreed items, the paper's footnote 3)")
    m.add_argument("--p-method", choices=["annotators", "pooled"], default="annotators",
                   help="estimate p with one coin per annotator or one pooled coin "
                   "(default: annotators)")
    m.add_argument("--level", choices=["nominal", "ordinal", "interval", "ratio"],
                   default="nominal", help="Krippendorff's alpha level (default: nominal)")
    m.add_argument("--bootstrap", type=cli.at_least(0), default=1000, metavar="N",
                   help="bootstrap replicates for the intervals, 0 for none (default: 1000)")
    cli.add_seed(m, type=cli.at_least(0))
    m.add_argument("--drop-single", action="store_true",
                   help="drop items with fewer than 2 annotations instead of failing")
    cli.add_output_options(m, what="the report", default_format=None,
                           out_help="write the report here instead of stdout: .json (the "
                           "report) or .csv .tsv .jsonl .parquet (the statistics table)")
    cli.add_options(
        m, gold_out="write the agreed items with their label (format by suffix) and a "
        "FILE-stem.noise.json sidecar with gamma",
        items_out="write one row per item: aggregated label, support, agreement, tied",
        annotators_out="write one row per annotator: labels, agreement with the majority, "
        "quality, gold accuracy")

    c = _calculation(sub, parents, "compare", run_compare)
    c.add_argument("--n", type=cli.at_least(1), required=True, help="L, items in the gold standard")
    noise = c.add_mutually_exclusive_group(required=True)
    noise.add_argument("--noise-rate", type=cli.fraction,
                       help="gamma, the noise rate (R = round(gamma*L))")
    noise.add_argument("--noise-items", type=cli.at_least(0),
                       help="R, the number of noise items (at most --n)")
    c.add_argument("--delta", type=int, help="observed difference in correct answers (its size "
                   "at most --n)")

    nz = _calculation(sub, parents, "noise", run_noise)
    nz.add_argument("--n", type=cli.at_least(1), required=True, help="items annotated")
    nz.add_argument("--disagreements", "-d", type=cli.at_least(0), required=True,
                    help="items disagreed on (at most --n)")
    nz.add_argument("--p-chance", type=cli.fraction, required=True,
                    help="chance agreement on a hard item (0.5 for 2 annotators, 2 classes)")

    t = _calculation(sub, parents, "tolerate", run_tolerate)
    t.add_argument("--n", type=cli.at_least(1), required=True, help="items annotated")
    t.add_argument("--p-chance", type=cli.fraction, required=True,
                   help="chance agreement on a hard item")
    t.add_argument("--gamma", type=cli.fraction, default=0.05, help="target noise (default: 0.05)")


def _calculation(sub, parents, name: str, handler) -> argparse.ArgumentParser:
    """A step that computes from numbers: ``--confidence`` and the output options."""
    parser = cli.add_command(sub, name, parents, handler=handler, raw=False)
    parser.add_argument("--confidence", type=_confidence, default=0.95, help="(default: 0.95)")
    cli.add_output_options(parser, what="the result", default_format=None)
    return parser


def _emit(args: argparse.Namespace, result, text: str | None = None) -> None:
    """Write a result to --out or stdout: its summary as the table format, its dict as
    json, its frame in the other formats (json by default off a terminal or to a file)."""
    frame = result.to_frame()
    fmt = emit_report(frame, result.to_dict(), text or result.summary(), args.out,
                      format=args.format)
    if args.out and fmt not in ("table", "json"):
        cli.log(args, f"wrote {len(frame)} rows to {args.out}")


def run_measure(args: argparse.Namespace) -> int:
    with cli.warnings_to_stderr(args):  # what was dropped: empty labels, empty lists, --drop-single
        data = read_annotation_file(args.input, item=args.item, annotations=args.annotations,
                                    annotator=args.annotator, label=args.label, gold=args.gold)
        if args.method in ("glad", "mace"):
            cli.log(args, f"labelaudit agreement: fitting {args.method} (can take a minute on "
                    "large files)")
        report = data.agreement_report(
            method=args.method, ties=args.ties,
            min_share=args.min_share, confidence=args.confidence, p_chance=args.p_chance,
            p_method=args.p_method, level=args.level, n_bootstrap=args.bootstrap,
            drop_single=args.drop_single, random_state=args.seed)
    _emit(args, report, report.summary(source=Path(args.input).name, method=args.method))
    for line in data.write_tables(report, source=args.input, items_out=args.items_out,
                                  annotators_out=args.annotators_out, gold_out=args.gold_out):
        cli.log(args, f"labelaudit agreement: {line}")
    return 0


def run_compare(args: argparse.Namespace) -> int:
    if args.noise_items is not None and args.noise_items > args.n:
        args.parser.error(f"--noise-items {args.noise_items} is more than --n {args.n}: at most "
                          "every item of the gold standard is noise")
    if args.delta is not None and abs(args.delta) > args.n:
        args.parser.error(f"--delta {args.delta} is larger in size than --n {args.n}: two "
                          f"systems' correct answers on {args.n} items differ by at most {args.n}")
    _emit(args, chance_difference(args.n, n_noise=args.noise_items, noise_rate=args.noise_rate,
                                  delta=args.delta, confidence=args.confidence))
    return 0


def run_noise(args: argparse.Namespace) -> int:
    if args.disagreements > args.n:
        args.parser.error(f"--disagreements {args.disagreements} is more than --n {args.n} items")
    _emit(args, noise_bound(args.n, args.disagreements, args.p_chance, confidence=args.confidence))
    return 0


def run_tolerate(args: argparse.Namespace) -> int:
    _emit(args, tolerance(args.n, args.p_chance, gamma=args.gamma, confidence=args.confidence))
    return 0
