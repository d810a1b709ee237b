"""Token-level benchmark on CoNLL-03 with an expert re-annotation (``conll2003_dev``).

Fits labelaudit's default token scorer (frozen all-MiniLM-L6-v2 word vectors + a CRF head)
on ``train.orig.conll``, audits ``dev.orig.conll`` and measures the rankings against
``dev.cleanconll.conll``: token level (694 changed tokens), sentence level (410 changed
sentences) and the precision of the top span issues. Next to labelaudit's rankings it puts
cleanlab's ``token_classification`` rankings computed on the very same probabilities, so
the comparison isolates the ranking.

Run alone (``python -m benchmarks.tokens``) or through the harness (``python -m benchmarks
--datasets conll2003_dev_tokens,conll2003_dev_sentences``, which calls :func:`run`). The
word vectors are cached under ``~/.cache/labelaudit`` (or ``$LABELAUDIT_CACHE``); the first
run encodes ~17k sentences (about 10 minutes on one shared core), later runs reuse them.
Our scan runs in a forked child (``benchmarks.detectors.measure``): ``seconds`` is its wall
time and ``memory_mb`` its peak RSS increase; ``encode_seconds`` says how much of the time
was encoding (a few seconds of cache reading when warm).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

DATASET = "conll2003_dev"
LEVELS = ("tokens", "sentences")
REPO = Path(__file__).resolve().parents[1]


def _names() -> list[str]:
    return [f"{DATASET}_{level}" for level in LEVELS]


def _subsample(dataset, size: int, seed: int):
    if len(dataset) <= size:
        return dataset
    rng = np.random.default_rng(seed)
    return dataset.subset(sorted(rng.choice(len(dataset), size=size, replace=False)))


def _report_row(detector: str, is_error: np.ndarray, scores: np.ndarray, **extra) -> dict:
    from labelaudit.evaluation import detection_report

    report = detection_report(is_error, scores)
    return {
        "detector": detector,
        **{k: getattr(report, k) for k in ("n_items", "n_errors", "aupr", "average_precision",
                                           "precision_at_err", "recall_at_err",
                                           "recall_at_2err", "roc_auc")},
        **extra,
    }


def compute(data_root: Path, *, quick: bool = False, seed: int = 0, head: str = "crf",
            progress: bool = False) -> dict[str, Any]:
    """Fit, audit and measure; returns rows per level plus span precision and timings."""
    from cleanlab.token_classification.rank import get_label_quality_scores

    from benchmarks.detectors import measure
    from labelaudit.evaluation import evaluate_tokens
    from labelaudit.models import EncoderTokenScorer
    from labelaudit.scanning import scan_tokens
    from labelaudit.tokens import encode_tags, read_conll, token_classes

    folder = Path(data_root) / DATASET
    train = read_conll(folder / "train.orig.conll")
    audit = read_conll(folder / "dev.orig.conll")
    truth = read_conll(folder / "dev.cleanconll.conll")
    if quick:
        train = _subsample(train, 2000, seed)
        keep = sorted(np.random.default_rng(seed).choice(len(audit), 600, replace=False))
        audit, truth = audit.subset(keep), truth.subset(keep)
    classes = token_classes(train, audit)

    # Our default scan in a forked child (the harness's ``measure``): wall time and peak RSS
    # of encoding (cached), fitting, scoring and building the issues.
    def call():
        scorer = EncoderTokenScorer(head=head, progress=progress, random_state=seed)
        t0 = time.perf_counter()
        train_features = scorer.prepare(train)
        audit_features = scorer.prepare(audit)
        encode_seconds = time.perf_counter() - t0
        scorer.fit(train_features, encode_tags(train, classes), len(classes))
        probs = [np.asarray(p, dtype=float) for p in scorer.predict_proba(audit_features)]
        del train_features, audit_features
        result = scan_tokens(train, score=audit, pred_probs=probs, classes=classes)
        extra = {"probs": probs, "records": result.to_records(), "result": result,
                 "encode_seconds": encode_seconds}
        return {}, {}, extra

    run_ = measure(lambda: None, call)
    result, probs = run_.extra["result"], run_.extra["probs"]
    seconds, memory_mb = run_.seconds, run_.memory_mb
    encode_seconds = run_.extra["encode_seconds"]

    labels = result.labels
    token_error = np.concatenate([[a != b for a, b in zip(g, t, strict=False)]
                                  for g, t in zip(audit.iob2_tags, truth.iob2_tags, strict=False)])
    sentence_error = np.array([any(a != b for a, b in zip(g, t, strict=False))
                               for g, t in zip(audit.iob2_tags, truth.iob2_tags, strict=False)])
    accuracy = float(np.mean(np.concatenate([p.argmax(1) for p in probs])
                             == np.concatenate(labels)))
    n_tokens, n_sentences = len(token_error), len(sentence_error)
    ours = {"seconds": seconds, "memory_mb": memory_mb, "timing_group": "scan"}
    rows: dict[str, list[dict]] = {level: [] for level in LEVELS}
    rows["tokens"].append(_report_row("ours:default", token_error,
                                      np.concatenate(result.token_scores),
                                      items_per_s=n_tokens / seconds, **ours))
    rows["sentences"].append(_report_row("ours:default", sentence_error,
                                         result.sentence_scores,
                                         items_per_s=n_sentences / seconds, **ours))
    rows["sentences"].append(_report_row("ours:softmin", sentence_error,
                                         result.sentence_scores_softmin, **ours))
    span = np.array([min([x.score for x in issues if x.source == "model"], default=np.inf)
                     for issues in result.issues])
    span_rank = np.where(np.isfinite(span), span, 1.0 + result.sentence_scores)
    rows["sentences"].append(_report_row("ours:span-issues", sentence_error, span_rank, **ours))
    # Worst token times the consistency share of the sentence's least consistent string.
    share = np.array([min([x.score for x in issues if x.kind == "inconsistent-tag"],
                          default=1.0) for issues in result.issues])
    rows["sentences"].append(_report_row("ours:min*consistency", sentence_error,
                                         result.sentence_scores * share, **ours))

    # cleanlab's token_classification ranking on the same probabilities.
    for method, key in (("self_confidence", "cleanlab:same-probs"),
                        ("normalized_margin", "cleanlab:margin"),
                        ("confidence_weighted_entropy", "cleanlab:cw-entropy")):
        t0 = time.perf_counter()
        sentence, token = get_label_quality_scores(
            [list(map(int, y)) for y in labels], probs, token_score_method=method)
        elapsed = time.perf_counter() - t0
        rows["tokens"].append(_report_row(key, token_error,
                                          np.concatenate([s.to_numpy() for s in token]),
                                          seconds=elapsed, items_per_s=n_tokens / elapsed))
        rows["sentences"].append(_report_row(key, sentence_error, np.asarray(sentence),
                                             seconds=elapsed, items_per_s=n_sentences / elapsed))
    t0 = time.perf_counter()
    sentence, _ = get_label_quality_scores([list(map(int, y)) for y in labels], probs,
                                           sentence_score_method="softmin")
    elapsed = time.perf_counter() - t0
    rows["sentences"].append(_report_row("cleanlab:softmin", sentence_error, np.asarray(sentence),
                                         seconds=elapsed, items_per_s=n_sentences / elapsed))

    evaluation = evaluate_tokens(run_.extra["records"], truth, ks=(10, 50, 100, 200, 400))
    return {
        "rows": rows,
        "spans": [s.__dict__ for s in evaluation.spans],
        "accuracy": accuracy,
        "encode_seconds": encode_seconds,
        "seconds": seconds,
        "n_train_sentences": len(train),
        "n_sentences": n_sentences,
        "n_tokens": n_tokens,
        "head": head,
    }


def run(data_root: Path, args) -> list[dict]:
    """Harness hook: rows for ``conll2003_dev_tokens`` and ``conll2003_dev_sentences``."""
    wanted = getattr(args, "wanted_datasets", None)
    if wanted is not None and not ({DATASET, *_names()} & set(wanted)):
        return []
    if not (Path(data_root) / DATASET / "dev.cleanconll.conll").exists():
        print(f"[{DATASET}] not under {data_root}: skipped", file=sys.stderr)
        return []
    print(f"[{DATASET}] token-level scan (train -> dev) ...", file=sys.stderr, flush=True)
    out = compute(data_root, quick=getattr(args, "quick", False), seed=getattr(args, "seed", 0))
    rows = []
    for level in LEVELS:
        for row in out["rows"][level]:
            rows.append({"dataset": f"{DATASET}_{level}", "quick": getattr(args, "quick", False),
                         "flagged": None, **row})
    _print_spans(out, file=sys.stderr)
    return rows


def _print_spans(out: dict, file=sys.stdout) -> None:
    print(f"span issues (precision of the top k; hit = the correction changes the region, "
          f"fix = it matches the suggestion); out-of-sample token accuracy "
          f"{out['accuracy']:.3f}", file=file)
    for s in out["spans"]:
        cells = "  ".join(f"@{k}: {h:.2f}/{f:.2f}" for k, h, f in
                          zip(s["ks"], s["hit_precision_at_k"], s["fix_precision_at_k"],
                              strict=True))
        print(f"  {s['source']:<5} ({s['n_issues']} issues)  hit/fix {cells}", file=file)
        kinds = ", ".join(f"{k} {h}/{n}" for k, n, h in
                          zip(s["kinds"], s["kind_counts"], s["kind_hits"], strict=False))
        print(f"        hits by kind: {kinds}", file=file)


def _table(rows: list[dict]) -> str:
    keys = [("detector", "detector"), ("aupr", "AUPR"), ("average_precision", "AP"),
            ("precision_at_err", "P@Err"), ("recall_at_2err", "R@2Err"),
            ("roc_auc", "ROC-AUC"), ("seconds", "seconds")]
    body = [[r["detector"]] + [f"{r[k]:.3f}" if k != "seconds" else f"{r.get(k, 0):.1f}"
                               for k, _ in keys[1:]] for r in rows]
    widths = [max(len(h), *(len(b[i]) for b in body)) for i, (_, h) in enumerate(keys)]
    lines = ["  ".join(h.ljust(w) if i == 0 else h.rjust(w)
                       for i, ((_, h), w) in enumerate(zip(keys, widths, strict=False)))]
    lines += ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in
                        enumerate(zip(b, widths, strict=False))) for b in body]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.tokens", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    p.add_argument("--quick", action="store_true", help="2,000 training and 600 audited "
                   "sentences (a smoke run; numbers not comparable)")
    p.add_argument("--head", choices=["linear", "crf"], default="crf")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1, help="torch threads (default: 1)")
    p.add_argument("--out", type=Path, help="write the results as JSON here")
    args = p.parse_args(argv)
    os.environ.setdefault("LABELAUDIT_THREADS", str(args.threads))
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    if not (args.data / DATASET).is_dir():
        print(f"{args.data / DATASET} not found", file=sys.stderr)
        return 1
    out = compute(args.data, quick=args.quick, seed=args.seed, head=args.head,
                  progress=sys.stderr.isatty())
    for level in LEVELS:
        rows = out["rows"][level]
        print(f"== {DATASET} {level}: {rows[0]['n_items']} items, {rows[0]['n_errors']} errors"
              f"{' (quick sample)' if args.quick else ''}")
        print(_table(rows))
        print()
    _print_spans(out)
    print(f"wall time of our scan {out['seconds']:.1f}s (encoding {out['encode_seconds']:.1f}s, "
          f"head={out['head']}, {out['n_train_sentences']} training sentences); cleanlab "
          "rows time only the ranking on our probabilities")
    if args.out:
        from labelaudit.io import write_json

        write_json(out, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
