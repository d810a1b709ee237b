"""``labelaudit scan``: rank a text dataset's items by how likely their label is wrong."""

from __future__ import annotations

import argparse
from typing import Any

from labelaudit.cli._common import (
    add_command,
    add_output_options,
    at_least,
    choice_list,
    comma_list,
    emit_output,
    fraction,
    log,
    show_progress,
    warnings_to_stderr,
)
from labelaudit.registry import RANKING_METHODS, SCORERS

ORDER = 10

_EPILOG = """examples:
  labelaudit scan reviews.csv --text text --label label --out issues.csv
  labelaudit scan nli.jsonl --text premise --text-pair hypothesis --label gold --out issues.parquet
  labelaudit scan train.csv --score test.csv --text text --label label --out test_issues.csv
  labelaudit scan reviews.csv --scorers finetune,tfidf --model microsoft/deberta-v3-base \
      --epochs 3 --max-length 512 --batch-size 32 --lr 2e-5 --out issues.csv
  labelaudit scan reviews.csv --scorers finetune --model roberta-base \
      --model microsoft/deberta-v3-base --seeds 2 --out issues.csv     # FME: models x seeds
  labelaudit scan reviews.csv --scorers finetune --sweep 8 --keep 3 --out issues.csv

Fine-tuning (--scorers finetune) is for a GPU; --epochs, --max-length, --batch-size and
--lr set it (defaults 2, 256 with head+tail truncation, 16, 5e-5). Several --model values
make one member per model for embed and finetune (an FME over models; with --seeds, over
seeds too). --sweep N runs N fine-tuning configurations (learning rate, epochs, seed) and
keeps the --keep with the lowest out-of-sample loss, selected on the same out-of-sample
predictions the ranking uses.
"""


def add_parser(subparsers, parents) -> None:
    p = add_command(
        subparsers, "scan", parents, handler=run, epilog=_EPILOG,
        help="find label errors in a text classification dataset",
        description="Rank every item by the out-of-sample loss of its given label "
        "(cross-fitted, or fitted on a training file with --score) and suggest a label.")
    p.add_argument("data", help="CSV, TSV, JSONL, JSON, Parquet or a datasets folder "
                   "(the training split with --score)")
    p.add_argument("--text", default="text", help="text column (default: text)")
    p.add_argument("--text-pair", help="second text column for sentence pairs (NLI)")
    p.add_argument("--label", default="label", help="label column (default: label)")
    p.add_argument("--id", help="id column (default: a column named id if the table has "
                   "one, else the row number from 0)")
    p.add_argument("--score", metavar="FILE",
                   help="rank this file's items with models fitted on DATA (test-set audit)")
    add_output_options(p, what="every item, most suspect first",
                       out_help="write every item, most suspect first, to this file; "
                       ".csv .tsv .jsonl .json or .parquet by its suffix "
                       "(default: a table of the top items on stdout)")
    p.add_argument("--scorers", type=choice_list(SCORERS.names()),
                   help=f"comma-separated members: {', '.join(SCORERS)} (default: "
                   f"{','.join(SCORERS.default)}, each first tried on a 2,000-item sample "
                   "and skipped when its ensemble weight there is below 0.05; named "
                   "members always run)")
    p.add_argument("--methods", type=choice_list(RANKING_METHODS.names()),
                   help="comma-separated ranking methods (default: every method that applies "
                   "but self_confidence, which ranks as ensemble does)")
    p.add_argument("--rank-by", choices=RANKING_METHODS.names(),
                   help="method that orders the output (default: crowdlab with "
                   "--annotations, else ensemble)")
    p.add_argument("--annotations", metavar="COL",
                   help="column of per-item lists of several annotators' labels (plain labels "
                   "or {worker, label} objects): adds cleanlab's CROWDLAB as method crowdlab")
    p.add_argument("--weights", default="auto",
                   help="ensemble weights: auto (fitted to out-of-sample loss), equal, "
                   "or comma-separated numbers")
    p.add_argument("--model", action="append",
                   help="encoder for embed/finetune: a Hugging Face id or a local folder "
                   "(default: the packaged all-MiniLM-L6-v2); repeat for one member per "
                   "model")
    tune = p.add_argument_group("fine-tuning (--scorers finetune)")
    tune.add_argument("--epochs", type=at_least(1), help="default: 2")
    tune.add_argument("--max-length", type=at_least(8), help="tokens per text (default: 256)")
    tune.add_argument("--batch-size", type=at_least(1), help="default: 16")
    tune.add_argument("--lr", type=float, dest="learning_rate", help="default: 5e-5")
    tune.add_argument("--sweep", type=at_least(1), default=0, metavar="N",
                      help="run N configurations and keep the best --keep (FME)")
    tune.add_argument("--keep", type=at_least(1), default=3, metavar="K",
                      help="configurations kept from --sweep (default: 3)")
    p.add_argument("--long-texts", choices=["truncate", "windows"],
                   help="embed: cut texts longer than the encoder's window (default), or "
                   "embed them as the mean of their windows")
    p.add_argument("--pair-mode", choices=["features", "joint"],
                   help="how embed encodes sentence pairs (default: features)")
    p.add_argument("--folds", type=at_least(2), default=5, help="cross-fitting folds (default: 5)")
    p.add_argument("--seeds", type=at_least(1), default=1,
                   help="repeat cross-fitting with this many fold seeds (default: 1)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    flag = p.add_mutually_exclusive_group()
    flag.add_argument("--top", type=at_least(0), help="flag the K most suspect items "
                      "(default: as many as cleanlab estimates)")
    flag.add_argument("--threshold", type=fraction,
                      help="flag items whose given label has probability below this")
    p.add_argument("--cache-dir", help="embedding cache (default: ~/.cache/labelaudit)")
    p.add_argument("--show", type=at_least(0), default=20, help="rows printed without --out")


_TUNING = ("epochs", "max_length", "batch_size", "learning_rate")


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
        flags = ", ".join(f"--{k.replace('_', '-')}" for k in tuning).replace(
            "--learning-rate", "--lr")
        raise InvalidParameterError(f"{flags} set the finetune scorer: add it to --scorers")
    if args.sweep and "finetune" not in names:
        raise InvalidParameterError("--sweep tunes the finetune scorer: add it to --scorers")
    models = args.model or [None]
    out: list[Any] = []
    for name in names:
        if name not in ("embed", "finetune"):
            out.append(name)
            continue
        for model in models:
            options = (dict(tuning) if name == "finetune" else
                       {"long_texts": args.long_texts} if args.long_texts else {})
            out.append(make_scorer(name, model=model, pair_mode=args.pair_mode,
                                   cache_dir=args.cache_dir, **options))
    return out


def run(args: argparse.Namespace) -> int:
    from labelaudit._errors import InvalidParameterError
    from labelaudit.audit import scan

    weights: Any = args.weights
    if args.weights not in ("auto", "equal"):
        try:
            weights = [float(w) for w in comma_list(args.weights)]
        except ValueError:
            raise InvalidParameterError(
                f"--weights must be auto, equal or numbers; got {args.weights!r}") from None
    with warnings_to_stderr(args):
        result = scan(
            args.data, text=args.text, label=args.label, text_pair=args.text_pair, id=args.id,
            score=args.score, scorers=members(args), methods=args.methods,
            annotations=args.annotations, rank_by=args.rank_by, weights=weights,
            n_folds=args.folds, n_seeds=args.seeds, random_state=args.seed, top=args.top,
            threshold=args.threshold, pair_mode=args.pair_mode, cache_dir=args.cache_dir,
            sweep=args.sweep, keep=args.keep, progress=show_progress(args))
    log(args, result.summary())
    table = not args.out and args.format == "table"
    emit_output(result.to_table(args.show) if table else result.to_frame(), args,
                max_colwidth=70)
    return 0
