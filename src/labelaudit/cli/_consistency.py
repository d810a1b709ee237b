"""``labelaudit consistency``: are two annotated sets labelled by the same rules?"""

from __future__ import annotations

import argparse

from labelaudit.cli import _common as cli

ORDER = 38

_EPILOG = """examples:
  labelaudit consistency train.conll --suspect test.conll --out consistency.json \\
      --plot-out curves.png
  labelaudit consistency train.conll --suspect test.conll --corrected test.fixed.conll \\
      --out validate.json --plot-out validate.png
  labelaudit consistency train.jsonl --suspect batch7.jsonl --text text --label label \\
      --out batch7.json

Exclusive subsets of size x (--size, default the suspect set's size) are drawn from the
training set; one is a new test set. A fresh model is fitted on growing prefixes of
PureTrain (two training subsets), TrainTest (a training subset, then the suspect set) and
TestTrain (the suspect set first), and scored on the new test set. A suspect set labelled
by other rules is less predictive: its curves run below PureTrain. --corrected adds the
eight Mistake/Correct schemes of Zeng et al. (Figure 2) against two pure-training
references. The verdict: the mean signed area between a curve and its reference per item
fed, with a t interval over --repeats (--interval bootstrap for the percentile bootstrap);
inconsistent when the interval is below 0. A warning says when the model is near chance
on the new test set: its curves cannot tell.

Without --text the files are tagged (CoNLL or token JSONL) and scored by entity-level F1
with MiniLM word vectors and a CRF head (--scorer encoder); with --text they are tables
scored by accuracy (--metric macro_f1) with TF-IDF + logistic regression (--scorer tfidf).
The verdict table goes to stdout or --out (.json: the whole document with every curve).
"""

_OPTIONS = ("size", "train_size", "repeats", "n_points", "metric", "scorer", "text",
            "label", "text_pair")


def add_parser(subparsers, parents) -> None:
    from labelaudit.registry import SCORERS, TOKEN_SCORERS

    p = cli.add_command(
        subparsers, "consistency", parents, handler=run, epilog=_EPILOG,
        help="test whether a suspect set follows the training set's labelling rules",
        description="Compare learning curves of models fed training data only, training data\n"
        "then a suspect set, and the suspect set first (Zeng et al. 2020), and say whether\n"
        "the suspect set is consistent with the training labels; with --corrected, whether\n"
        "a correction restored consistency.")
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
    p.add_argument("--scorer", choices=sorted(set(SCORERS.names()) | set(TOKEN_SCORERS.names())),
                   help="model fitted on every prefix (default: tfidf for tables, encoder "
                   "for tagged files)")
    p.add_argument("--size", type=cli.at_least(1), metavar="N",
                   help="x, the size of each subset and of the new test set (default: the "
                   "suspect set's size)")
    p.add_argument("--train-size", type=cli.at_least(1), metavar="N",
                   help="w, the training subset of the --corrected schemes (default: --size)")
    p.add_argument("--repeats", type=cli.at_least(2), default=5,
                   help="redraws of the subsets (default: 5)")
    p.add_argument("--points", dest="n_points", type=cli.at_least(2), default=10, metavar="N",
                   help="prefix sizes per curve (default: 10)")
    p.add_argument("--interval", choices=("t", "bootstrap"), default="t",
                   help="interval of a verdict's gap over repeats: t (default) or the "
                   "percentile bootstrap (too narrow for few repeats)")
    cli.add_seed(p)
    cli.add_output_options(p, what="the verdicts", json="verdicts and every curve",
                           table="the verdict table")
    cli.add_options(p, plot_out="the learning curves with bands, .png or .svg")


def run(args: argparse.Namespace) -> int:
    from labelaudit.consistency import consistency

    with cli.warnings_to_stderr(args, flags=_OPTIONS):
        if args.text is None and args.metric is not None:
            from labelaudit._errors import InvalidParameterError

            raise InvalidParameterError("--metric goes with tables (--text); tagged files "
                                        "are scored by entity F1")
        result = consistency(
            args.train, args.suspect, args.corrected, text=args.text, label=args.label,
            text_pair=args.text_pair, id=args.id, scheme=cli.tag_scheme(args),
            tag_column=args.tag_column, scorer=args.scorer, metric=args.metric, size=args.size,
            train_size=args.train_size, repeats=args.repeats, n_points=args.n_points,
            interval=args.interval, random_state=args.seed, progress=cli.show_progress(args))
        cli.emit_result(args, result, result.verdict_frame())
    cli.log(args, result.summary())  # after the warnings, which the block prints as it closes
    return 0
