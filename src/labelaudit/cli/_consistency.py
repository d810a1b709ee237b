"""``labelaudit consistency``: are two annotated sets labelled by the same rules?"""

from __future__ import annotations

import argparse

from labelaudit._errors import InvalidParameterError
from labelaudit.cli import _common as cli
from labelaudit.consistency_check import consistency
from labelaudit.models import SCORERS, TOKEN_SCORERS


def add_parser(subparsers, parents) -> None:
    p = cli.add_command(subparsers, "consistency", parents, handler=run)
    p.add_argument("train", help="training data: CoNLL / token JSONL, or a table with --text")
    p.add_argument("--suspect", required=True, metavar="FILE",
                   help="the set whose labels are in doubt (same format as train)")
    p.add_argument("--corrected", metavar="FILE",
                   help="the suspect set with corrected labels (same tokens, or same ids)")
    table = p.add_argument_group("tables (text classification and pairs)")
    cli.add_options(table, "text", "text_pair", "label", "id",
                    text={"default": None, "help": "text column: the files are tables (else "
                          "tagged files)"},
                    id={"default": "id", "help": "id column matching --corrected to --suspect "
                        "(default: id, else by row)"})
    table.add_argument("--metric", choices=("accuracy", "macro_f1"),
                       help="score of tables (default: accuracy)")
    cli.add_tag_options(p.add_argument_group("tagged files (NER, POS)"), what="the tagged files")
    p.add_argument("--scorer", choices=sorted(set(SCORERS) | set(TOKEN_SCORERS)),
                   help="model fitted on every prefix (default: tfidf for tables, encoder "
                   "for tagged files)")
    p.add_argument("--size", type=cli.at_least(1), metavar="N",
                   help="x, the size of each subset and of the new test set (default: the "
                   "suspect set's size)")
    p.add_argument("--train-size", type=cli.at_least(1), metavar="N",
                   help="w, the training subset of the --corrected schemes (default: --size)")
    p.add_argument("--repeats", type=cli.at_least(2), default=5,
                   help="redraws of the subsets, at most (default: 5): from 3, more are "
                   "drawn only while a verdict's interval includes 0 and is wider than 0.02")
    p.add_argument("--fixed-repeats", dest="adaptive", action="store_false",
                   help="always draw --repeats redraws")
    p.add_argument("--no-warm-start", dest="warm_start", action="store_false",
                   help="fit every curve point afresh (default with the encoder scorer's CRF "
                   "head: each point starts from the fit of the point before, 2 passes "
                   "instead of 8 or more)")
    p.add_argument("--checkpoint-dir", metavar="FOLDER",
                   help="keep every finished fit here; a rerun of an interrupted run reuses "
                   "them instead of fitting again")
    p.add_argument("--points", dest="n_points", type=cli.at_least(2), default=10, metavar="N",
                   help="prefix sizes per curve (default: 10)")
    p.add_argument("--interval", choices=("t", "bootstrap"), default="t",
                   help="interval of a verdict's gap over repeats: t (default) or the "
                   "percentile bootstrap (too narrow for few repeats)")
    cli.add_seed(p)
    cli.add_options(p, "engine", "ray_address", workers={
        "default": None, "help": "processes running the fits at once; the result is the same "
        "(default: one per free core)"})
    cli.add_output_options(p, what="the verdicts", json="verdicts and every curve",
                           table="the verdict table")
    cli.add_options(p, plot_out="the learning curves with bands, .png or .svg")


def run(args: argparse.Namespace) -> int:
    if args.text is None and args.metric is not None:
        raise InvalidParameterError("--metric goes with tables (--text); tagged files "
                                    "are scored by entity F1", param=("metric", "text"))
    with cli.warnings_to_stderr(args):
        result = consistency(
            args.train, args.suspect, args.corrected, text=args.text, label=args.label,
            text_pair=args.text_pair, id=args.id, scheme=cli.tag_scheme(args),
            tag_column=args.tag_column, scorer=args.scorer, metric=args.metric, size=args.size,
            train_size=args.train_size, repeats=args.repeats, n_points=args.n_points,
            interval=args.interval, random_state=args.seed, workers=args.workers,
            engine=args.engine, ray_address=args.ray_address, adaptive=args.adaptive,
            warm_start=args.warm_start, checkpoint_dir=args.checkpoint_dir,
            progress=cli.show_progress(args), on_plan=lambda line: cli.log(args, line))
        cli.emit_result(args, result)
    cli.log(args, result.summary())  # after the warnings, which the block prints as it closes
    return 0
