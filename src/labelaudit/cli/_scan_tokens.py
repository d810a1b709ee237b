"""``labelaudit scan-tokens``: find label errors in NER/POS data (CoNLL or JSONL)."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from labelaudit.cli._common import (
    at_least,
    choice_list,
    output_file,
    show_progress,
    warnings_to_stderr,
)
from labelaudit.registry import FORMATS, TOKEN_SCORERS

ORDER = 15

_EPILOG = """examples:
  labelaudit scan-tokens train.conll --score test.conll --out test_issues.jsonl
  labelaudit scan-tokens data.conll --folds 5 --scheme iob2 --out issues.jsonl
  labelaudit scan-tokens data.conll --format table --show 10
  labelaudit scan-tokens train.conll --score test.conll --model bert-base-cased --epochs 3

output (.jsonl): one record per sentence, most suspect first, with id, tokens, tags (given),
suggested_tags, score (worst token's probability), score_softmin, token_scores
(log p(given tag)) and issues: wrong-type, wrong-boundary, missing-entity, spurious-entity
(model) and invalid-sequence, inconsistent-tag (rules). Lower scores are more suspect.
"""


# --out suffixes: .jsonl holds records, .txt the text view (or --format csv), the others one
# row per issue; "csv" (the issue table) is also accepted with .tsv, .json and .parquet.
_SUFFIXES = (".jsonl", ".csv", ".tsv", ".parquet", ".json", ".txt")
_MAX_SEED = 2**32 - 1  # labelaudit.models._token_scorer.MAX_SEED, without importing numpy here


def tag_column(text: str) -> int:
    """Argparse type of --tag-column: any column but 0, the token."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value == 0:
        raise argparse.ArgumentTypeError(
            "0 is the token column; give the tag's column (1 or more, or negative from the end)")
    return value


def seed(text: str) -> int:
    """Argparse type of --seed: an integer from 0 to 2**32 - 1."""
    value = at_least(0)(text)
    if value > _MAX_SEED:
        raise argparse.ArgumentTypeError(f"must be at most {_MAX_SEED}, got {value}")
    return value


def add_tag_options(parser: argparse.ArgumentParser, *, what: str) -> None:
    """``--scheme`` and ``--tag-column``: how to read the tags of a token file."""
    parser.add_argument("--scheme", choices=["auto", "iob1", "iob2", "bioes", "plain"],
                        default="auto", help=f"tagging scheme of {what} (default: detected); "
                        "'plain' for tags without spans such as POS tags")
    parser.add_argument("--tag-column", type=tag_column, default=-1,
                        help=f"0-based column of the tag in CoNLL files of {what}; negative "
                        "counts from the end (default: -1, the last)")


def add_parser(subparsers, parents) -> None:
    p = subparsers.add_parser(
        "scan-tokens", parents=parents,
        help="find label errors in token-tagged data (NER, POS) in CoNLL or JSONL",
        description="Score every token, entity and sentence of a tagged dataset by the "
        "out-of-sample probability of its given tags (cross-fitted by documents, or fitted "
        "on a training file with --score) and report typed span issues with suggestions.",
        epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("data", help="CoNLL column file or .jsonl with tokens/tags lists "
                   "(the training data with --score)")
    p.add_argument("--score", metavar="FILE",
                   help="audit this file with a model fitted on DATA (test-set audit)")
    p.add_argument("--out", "-o", type=output_file(_SUFFIXES),
                   help="output file, its suffix picks the format: .jsonl (records), "
                   ".csv/.tsv/.parquet/.json (one row per issue) or .txt (table); "
                   "default: a table on stdout")
    p.add_argument("--format", choices=FORMATS.names(),
                   help="output format (default: by --out suffix; table on stdout): table "
                   "(the text view), jsonl (records), or csv/tsv/json/parquet (one row per "
                   "issue); with --out it must match the suffix")
    add_tag_options(p, what="the input")
    p.add_argument("--folds", type=at_least(2), default=5,
                   help="cross-fitting folds (default: 5)")
    p.add_argument("--scorers", type=choice_list(TOKEN_SCORERS.names()),
                   help="comma-separated token scorers: encoder (frozen word vectors + a "
                   "head; the default, CPU-friendly), finetune (fine-tune --model; the "
                   "default when --model is given); several are averaged per token")
    p.add_argument("--scorer", dest="scorers", type=choice_list(TOKEN_SCORERS.names()),
                   help=argparse.SUPPRESS)  # the old spelling
    p.add_argument("--model", help="model to fine-tune (or the frozen encoder with --scorers "
                   "encoder): a Hugging Face id or local folder (default: all-MiniLM-L6-v2)")
    p.add_argument("--head", choices=["linear", "crf"], default="crf",
                   help="head on the frozen encoder's word vectors: a linear-chain CRF (default; "
                   "fast) or logistic regression (linear)")
    p.add_argument("--epochs", type=at_least(1), default=3,
                   help="fine-tuning epochs (default: 3)")
    p.add_argument("--batch-size", type=at_least(1), default=16,
                   help="fine-tuning batch size (default: 16)")
    p.add_argument("--no-rules", action="store_true",
                   help="skip rule-based issues (invalid sequences, inconsistent tags)")
    p.add_argument("--seed", type=seed, default=0, help="random seed (default: 0)")
    p.add_argument("--cache-dir", help="word-vector cache (default: ~/.cache/labelaudit)")
    p.add_argument("--no-cache", action="store_true", help="do not cache word vectors")
    p.add_argument("--show", type=at_least(0), default=20,
                   help="sentences shown in the table view (default: 20; 0 for all)")
    p.set_defaults(handler=run, scan_tokens_parser=p)


def _format(args: argparse.Namespace) -> str:
    """The output format: --format, else the --out suffix's; a mismatch is a usage error."""
    if not args.out:
        return args.format or "table"
    suffix = Path(args.out).suffix.lower()
    formats = {".txt": ("table", "csv"), ".jsonl": ("jsonl",), ".csv": ("csv",)}.get(
        suffix, (suffix[1:], "csv"))
    if args.format and args.format not in formats:
        args.scan_tokens_parser.error(
            f"--format {args.format} does not match --out {args.out}: a {suffix} file gets "
            f"--format {' or '.join(formats)}; change the suffix or leave out --format")
    return args.format or formats[0]


# Line separators that JSON allows raw inside strings but str.splitlines() breaks at.
_LINE_BREAKS = {"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def _json_line(record: dict) -> str:
    """One JSON line, with U+0085, U+2028 and U+2029 escaped so any line reader keeps it whole."""
    import json

    text = json.dumps(record, ensure_ascii=False)
    for char, escaped in _LINE_BREAKS.items():
        text = text.replace(char, escaped)
    return text + "\n"


def _scorers(args: argparse.Namespace, progress: bool) -> list:
    """The token scorers asked for, each with the options that apply to it."""
    from labelaudit.models import make_token_scorer

    kinds = args.scorers or ["finetune" if args.model else "encoder"]
    return [make_token_scorer("finetune", model=args.model, epochs=args.epochs,
                              batch_size=args.batch_size, progress=progress,
                              random_state=args.seed) if kind == "finetune" else
            make_token_scorer(kind, model=args.model, head=args.head, cache=not args.no_cache,
                              cache_dir=args.cache_dir, progress=progress,
                              random_state=args.seed)
            for kind in dict.fromkeys(kinds)]


def _write(result, args: argparse.Namespace, fmt: str) -> None:
    """Records (jsonl) or the text view (table, .txt) as text; any other format is the
    table of issues through :func:`labelaudit.io.emit`."""
    from labelaudit.io import atomic_path, emit
    from labelaudit.tokens import format_issue_table, issues_to_frame

    records = result.to_records()
    if fmt == "jsonl":
        text = "".join(_json_line(r) for r in records)
    elif fmt == "table":
        text = format_issue_table(records, top=args.show or None) + "\n"
    elif args.out and Path(args.out).suffix.lower() == ".txt":
        text = issues_to_frame(records).to_csv(index=False)
    else:
        emit(issues_to_frame(records), args.out, format=None if args.out else fmt)
        return
    if not args.out:
        sys.stdout.write(text)
        return
    with atomic_path(args.out) as tmp:
        Path(tmp).write_text(text, encoding="utf-8")


def _summary(result, args: argparse.Namespace, seconds: float) -> str:
    audited = result.dataset
    kinds: dict[str, int] = {}
    for issues in result.issues:
        for x in issues:
            kinds[x.kind] = kinds.get(x.kind, 0) + 1
    flagged = sum(1 for issues in result.issues if issues)
    summary = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items(), key=lambda kv: -kv[1]))
    return (f"labelaudit scan-tokens: {len(audited)} sentences ({audited.n_tokens} tokens, "
            f"{audited.scheme.upper()}) scored by {result.scorer} in {seconds:.1f}s; "
            f"{flagged} sentences with issues" + (f": {summary}" if summary else "")
            + (f"; wrote {args.out}" if args.out else ""))


def run(args: argparse.Namespace) -> int:
    from labelaudit.audit import scan_tokens
    from labelaudit.tokens import read_tokens

    scheme = None if args.scheme == "auto" else args.scheme
    fmt = _format(args)
    started = time.perf_counter()
    progress = show_progress(args)
    # Warnings are held until the progress bars are gone, then shown one line each.
    with warnings_to_stderr(args):
        data = read_tokens(args.data, tag_column=args.tag_column, scheme=scheme)
        test = read_tokens(args.score, tag_column=args.tag_column, scheme=scheme) \
            if args.score else None
        result = scan_tokens(data, score=test, scorer=_scorers(args, progress),
                             n_folds=args.folds, random_state=args.seed,
                             rules=not args.no_rules, progress=progress)
    _write(result, args, fmt)
    if not args.quiet:
        print(_summary(result, args, time.perf_counter() - started), file=sys.stderr)
    return 0
