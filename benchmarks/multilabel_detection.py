"""Multi-label detection on real errors: CoNLL-2003 dev sentences labelled with the set of
entity types they contain (original annotation); an item is an error where CleanCoNLL's
correction gives another set. Average precision of each label-set score beside cleanlab's
multi-label ranking on the same probabilities, with a paired bootstrap of the difference;
and the same scan on synthetic noise (CoNLL train sentence sets, 10 % of the items with one
class added or removed).

Probabilities compared:
- the multi-label scan's members, cross-fitted on the dev sets (one-vs-rest logistic
  regression on TF-IDF, character TF-IDF, MiniLM sentence embeddings);
- the entity-type sets a token model predicts: ``scan-tokens``' cross-fitted encoder + CRF
  per-token probabilities, P(type in sentence) = 1 - prod over tokens of (1 - P(B-type)),
  given to the scan as ``pred_probs``.

    python -m benchmarks.multilabel_detection [--data-dir ../shared/data] [--out ...]

About 3 minutes on 2 CPU cores (MiniLM encodes the 3,250 sentences twice).
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.train_noise import DATA, _table

OUT = Path(__file__).resolve().parent / "results" / "multilabel_detection"
MEMBERS = (("tfidf",), ("tfidf-char",), ("embed",), ("tfidf", "tfidf-char"))
N_BOOT = 2000


def _types(tags: list[str | None] | None) -> list[str] | None:
    """The entity types of a sentence's IOB2 tags; None where a tag is unknown."""
    if tags is None or None in tags:
        return None
    return sorted({str(t)[2:] for t in tags if t != "O"})


def dev_sets(data_dir: Path) -> pd.DataFrame:
    """CoNLL dev sentences: text, tokens, the original set, the CleanCoNLL set, is_error
    (sentences the correction re-tokenised are left out)."""
    rows = [json.loads(line) for line in
            (data_dir / "conll2003_dev" / "sentences.dev.jsonl").read_text().splitlines()]
    frame = pd.DataFrame({
        "id": [r["id"] for r in rows], "tokens": [r["tokens"] for r in rows],
        "tags": [r["labels"] for r in rows], "text": [" ".join(r["tokens"]) for r in rows],
        "label": [_types(r["labels"]) for r in rows],
        "true_label": [_types(r["true_labels_cleanconll"]) for r in rows]})
    frame = frame[frame["true_label"].notna()].reset_index(drop=True)
    frame["is_error"] = [a != b for a, b in zip(frame["label"], frame["true_label"],
                                                strict=True)]
    return frame


def _ap(errors: np.ndarray, scores: np.ndarray) -> float:
    from sklearn.metrics import average_precision_score

    return float(average_precision_score(errors, -scores))


def _bootstrap(errors: np.ndarray, a: np.ndarray, b: np.ndarray, seed: int = 0
               ) -> tuple[float, float]:
    """95 % paired bootstrap interval of AP(a) - AP(b) over items."""
    rng = np.random.default_rng(seed)
    diffs = []
    for _ in range(N_BOOT):
        take = rng.integers(0, len(errors), len(errors))
        if errors[take].any():
            diffs.append(_ap(errors[take], a[take]) - _ap(errors[take], b[take]))
    low, high = np.percentile(diffs, [2.5, 97.5])
    return float(low), float(high)


def _rows(name: str, result, errors: np.ndarray) -> list[dict]:
    scores = result.scores
    row = {"probabilities": name, "n_items": len(errors), "n_errors": int(errors.sum()),
           "base_rate": float(errors.mean()), "seconds": result.seconds}
    row.update({f"ap_{m}": _ap(errors, v) for m, v in scores.items()})
    for ours in ("log_likelihood", "worst_class"):
        low, high = _bootstrap(errors, scores[ours], scores["cleanlab"])
        row[f"{ours}_minus_cleanlab"] = f"[{low:+.3f}, {high:+.3f}]"
    return [row]


def token_set_probs(frame: pd.DataFrame) -> tuple[np.ndarray, list[str]]:
    """P(type in sentence) from scan-tokens' cross-fitted per-token probabilities."""
    from labelaudit.scanning import scan_tokens
    from labelaudit.tokens import make_token_dataset

    result = scan_tokens(make_token_dataset(frame["tokens"].tolist(), frame["tags"].tolist()))
    names = sorted({c[2:] for c in result.classes if c != "O"})
    begins = [[k for k, c in enumerate(result.classes) if c == f"B-{n}"] for n in names]
    probs = np.zeros((len(frame), len(names)))
    for i, p in enumerate(result.pred_probs):
        for j, cols in enumerate(begins):
            probs[i, j] = 1.0 - np.prod(1.0 - np.asarray(p)[:, cols].sum(axis=1))
    return probs, names


def synthetic(data_dir: Path, rate: float = 0.1, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    """CoNLL train sentence sets with ``rate`` of the items given one class more or less."""
    from labelaudit.tokens import read_conll

    train = read_conll(data_dir / "conll2003_dev" / "train.orig.conll")
    sets = [_types(list(t)) for t in train.tags]
    names = sorted({n for s in sets for n in s})
    rng = np.random.default_rng(seed)
    noisy = [list(s) for s in sets]
    errors = np.zeros(len(sets), dtype=bool)
    for i in rng.choice(len(sets), size=int(rate * len(sets)), replace=False):
        flip = str(rng.choice(names))
        noisy[i] = sorted(set(noisy[i]) ^ {flip})
        errors[i] = True
    frame = pd.DataFrame({"id": np.arange(len(sets)),
                          "text": [" ".join(t) for t in train.tokens], "label": noisy})
    return frame, errors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=DATA)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    import labelaudit

    started = time.perf_counter()
    frame = dev_sets(args.data_dir)
    errors = frame["is_error"].to_numpy()
    table = frame[["id", "text", "label"]]
    rows: list[dict] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for members in MEMBERS:
            result = labelaudit.scan(table, scorers=list(members), progress=False)
            rows += _rows("+".join(members) + " (cross-fitted)", result, errors)
            print(rows[-1], flush=True)
        probs, names = token_set_probs(frame)
        given = pd.DataFrame(probs, columns=names)
        result = labelaudit.scan(table, pred_probs=given, progress=False)
        rows += _rows("token model (scan-tokens encoder+CRF) via pred_probs", result, errors)
        print(rows[-1], flush=True)
        noisy, planted = synthetic(args.data_dir)
        result = labelaudit.scan(noisy, scorers=["tfidf"], progress=False)
        synthetic_rows = _rows("tfidf (cross-fitted), CoNLL train sets, 10 % one class "
                               "flipped", result, planted)  # scores are in item order
        print(synthetic_rows[-1], flush=True)
    doc = {"dev": rows, "synthetic": synthetic_rows,
           "seconds": time.perf_counter() - started}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".json").write_text(json.dumps(doc, indent=1))
    shown = pd.DataFrame(rows + synthetic_rows).round(4)
    text = "\n".join([
        "# Multi-label detection (label sets)", "",
        "`python -m benchmarks.multilabel_detection`. CoNLL-2003 dev sentences labelled with "
        "their set of entity types; an error is a sentence whose set CleanCoNLL changes. "
        "AP of each label-set score (lower = more suspect), and a 95 % paired bootstrap "
        f"({N_BOOT} resamples) of our score's AP minus cleanlab's on the same probabilities.",
        "", _table(shown, index=False), ""])
    args.out.with_suffix(".md").write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
