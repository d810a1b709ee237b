"""``labelaudit scan-tokens``: find label errors in NER/POS data (CoNLL or JSONL)."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from labelaudit.cli._common import show_progress

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
    p.add_argument("--out", "-o", help="output file: .jsonl (records), .csv/.tsv/.parquet "
                   "(one row per issue) or .txt (table); default: a table on stdout")
    p.add_argument("--format", choices=["table", "jsonl", "csv"],
                   help="output format (default: by --out suffix; table on stdout)")
    p.add_argument("--scheme", choices=["auto", "iob1", "iob2", "bioes", "plain"],
                   default="auto", help="tagging scheme of the input (default: detected); "
                   "'plain' for tags without spans such as POS tags")
    p.add_argument("--tag-column", type=int, default=-1,
                   help="0-based column of the tag in CoNLL files; negative counts from the "
                   "end (default: -1, the last)")
    p.add_argument("--folds", type=int, default=5, help="cross-fitting folds (default: 5)")
    p.add_argument("--scorer", choices=["encoder", "finetune"],
                   help="encoder: frozen word vectors + a head (default, CPU-friendly); "
                   "finetune: fine-tune --model (default when --model is given)")
    p.add_argument("--model", help="model to fine-tune (or the frozen encoder with --scorer "
                   "encoder): a Hugging Face id or local folder (default: all-MiniLM-L6-v2)")
    p.add_argument("--head", choices=["linear", "crf"], default="crf",
                   help="head on the frozen encoder's word vectors: a linear-chain CRF (default; "
                   "fast) or logistic regression (linear)")
    p.add_argument("--epochs", type=int, default=3, help="fine-tuning epochs (default: 3)")
    p.add_argument("--batch-size", type=int, default=16, help="fine-tuning batch size")
    p.add_argument("--no-rules", action="store_true",
                   help="skip rule-based issues (invalid sequences, inconsistent tags)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    p.add_argument("--cache-dir", help="word-vector cache (default: ~/.cache/labelaudit)")
    p.add_argument("--no-cache", action="store_true", help="do not cache word vectors")
    p.add_argument("--show", type=int, default=20,
                   help="sentences shown in the table view (default: 20; 0 for all)")
    p.set_defaults(handler=run)


def _format(args: argparse.Namespace) -> str:
    if args.format:
        return args.format
    if not args.out:
        return "table"
    suffix = Path(args.out).suffix.lower()
    if suffix == ".jsonl":
        return "jsonl"
    if suffix in (".csv", ".tsv", ".parquet", ".json"):
        return "csv"
    return "table"


def run(args: argparse.Namespace) -> int:
    import json

    from labelaudit._errors import InvalidParameterError
    from labelaudit.io import atomic_path, write_table
    from labelaudit.tokens import (
        format_issue_table,
        issues_to_frame,
        make_token_scorer,
        read_tokens,
        scan_tokens,
    )

    scheme = None if args.scheme == "auto" else args.scheme
    fmt = _format(args)
    if args.folds < 2:
        raise InvalidParameterError(f"--folds must be at least 2; got {args.folds}")
    started = time.perf_counter()
    data = read_tokens(args.data, tag_column=args.tag_column, scheme=scheme)
    test = read_tokens(args.score, tag_column=args.tag_column, scheme=scheme) if args.score \
        else None
    progress = show_progress(args)
    kind = args.scorer or ("finetune" if args.model else "encoder")
    if kind == "finetune":
        scorer = make_token_scorer("finetune", model=args.model, epochs=args.epochs,
                                   batch_size=args.batch_size, progress=progress,
                                   random_state=args.seed)
    else:
        scorer = make_token_scorer("encoder", model=args.model, head=args.head,
                                   cache=not args.no_cache, cache_dir=args.cache_dir,
                                   progress=progress, random_state=args.seed)
    result = scan_tokens(data, score=test, scorer=scorer, n_folds=args.folds,
                         random_state=args.seed, rules=not args.no_rules, progress=progress)
    records = result.to_records()
    if fmt == "jsonl":
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    elif fmt == "table":
        text = format_issue_table(records, top=args.show or None) + "\n"
    else:
        frame = issues_to_frame(records)
        if args.out and Path(args.out).suffix.lower() != ".txt":
            write_table(frame, args.out)
            text = None
        else:
            text = frame.to_csv(index=False)
    if text is not None:
        if args.out:
            with atomic_path(args.out) as tmp:
                Path(tmp).write_text(text, encoding="utf-8")
        else:
            sys.stdout.write(text)
    if not args.quiet:
        audited = result.dataset
        kinds: dict[str, int] = {}
        for issues in result.issues:
            for x in issues:
                kinds[x.kind] = kinds.get(x.kind, 0) + 1
        flagged = sum(1 for issues in result.issues if issues)
        summary = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items(), key=lambda kv: -kv[1]))
        print(f"labelaudit scan-tokens: {len(audited)} sentences ({audited.n_tokens} tokens, "
              f"{audited.scheme.upper()}) scored by {result.scorer} in "
              f"{time.perf_counter() - started:.1f}s; {flagged} sentences with issues"
              + (f": {summary}" if summary else "")
              + (f"; wrote {args.out}" if args.out else ""), file=sys.stderr)
    return 0
