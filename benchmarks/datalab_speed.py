"""Time cleanlab Datalab's other issue types on 20 Newsgroups and measure what they find.

Out-of-sample probabilities come from a ``scan`` with the tfidf member (its ``flagged``
column is the scan's verdict); then :func:`labelaudit.detect._datalab.datalab_issues`
runs near_duplicate, outlier and non_iid on each feature choice of ``datalab_features``:
MiniLM embeddings (cold in a private, empty cache, then cached) and TF-IDF + SVD(256).
The target (issue 17) is under 30 s for the Datalab pass with cached features.

    python -m benchmarks.datalab_speed [--data ../shared/data/labelerrors_20news]
        [--no-cold]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "labelerrors_20news"


def _report(name: str, found, flagged: np.ndarray, is_error: np.ndarray,
            is_error_broad: np.ndarray) -> None:
    dup = found.is_near_duplicate
    conflict = found.near_duplicate_label_conflict
    print(f"  Datalab pass:                     {found.seconds:7.1f} s")
    for line in found.summary().splitlines():
        print(f"  {line}")
    print(f"  flagged by scan that are near-duplicates of another post: "
          f"{int((flagged & dup).sum())} of {int(flagged.sum())}")
    for label, truth in (("is_error", is_error), ("is_error_broad", is_error_broad)):
        hits = int((truth & conflict).sum())
        precision = hits / max(int(conflict.sum()), 1)
        print(f"  {label}: {hits} of {int(truth.sum())} among the {int(conflict.sum())} "
              f"label-conflict items (precision {precision:.3f} vs base rate "
              f"{truth.mean():.4f}); among near-duplicates {int((truth & dup).sum())}")
    print(f"  outliers that are verified errors (is_error_broad): "
          f"{int((found.is_outlier & is_error_broad).sum())} of {int(found.is_outlier.sum())}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--no-cold", action="store_true",
                        help="skip the cold embedding run (encodes all 7,532 posts)")
    args = parser.parse_args()

    import pandas as pd

    from labelaudit import scan
    from labelaudit.detect._datalab import datalab_features, datalab_issues

    raw = pd.read_json(args.data / "test.jsonl", lines=True)
    frame = raw[["id", "text", "label"]]
    is_error = raw["is_error"].fillna(False).astype(bool).to_numpy()
    is_error_broad = raw["is_error_broad"].fillna(False).astype(bool).to_numpy()
    texts = frame["text"].astype(str).tolist()
    print(f"20news: {len(frame):,} posts, {int(is_error.sum())} is_error, "
          f"{int(is_error_broad.sum())} is_error_broad")

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        result = scan(frame, text="text", label="label", id="id", scorers=["tfidf"],
                      progress=False)
        print(f"scan (tfidf, 5 folds): {time.perf_counter() - start:7.1f} s, "
              f"{int(result.flagged.sum())} flagged, accuracy {result.accuracy:.3f}")
    labels, pred_probs, flagged = result.labels, result.pred_probs, result.flagged
    ids = np.asarray(result.ids)
    assert list(ids) == frame["id"].tolist(), "scan kept the input order"

    choices: dict[str, np.ndarray] = {}
    cache = tempfile.mkdtemp(prefix="labelaudit-datalab-")
    try:
        if not args.no_cold:
            start = time.perf_counter()
            datalab_features(texts, method="embed", cache_dir=cache)
            print(f"features embed, cold (empty cache): {time.perf_counter() - start:7.1f} s")
        start = time.perf_counter()
        choices["embed"] = datalab_features(texts, method="embed",
                                            cache_dir=None if args.no_cold else cache)
        print(f"features embed, cached:             {time.perf_counter() - start:7.1f} s")
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    start = time.perf_counter()
    choices["tfidf"] = datalab_features(texts, method="tfidf")
    print(f"features tfidf + SVD(256):          {time.perf_counter() - start:7.1f} s")

    found = {}
    for name, features in choices.items():
        print(f"\n[{name}] features {features.shape}")
        found[name] = datalab_issues(labels, pred_probs, features, ids=ids, random_state=0)
        _report(name, found[name], flagged, is_error, is_error_broad)
    both = found["embed"].is_near_duplicate & found["tfidf"].is_near_duplicate
    print(f"\nnear-duplicates found by both feature choices: {int(both.sum())} "
          f"(embed {int(found['embed'].is_near_duplicate.sum())}, "
          f"tfidf {int(found['tfidf'].is_near_duplicate.sum())})")
    conflict = found["embed"].near_duplicate_label_conflict
    rows = np.flatnonzero(conflict)[:6]
    if len(rows):
        print("examples of label conflicts (embed):")
    for i in rows:
        j = int(found["embed"].near_duplicate_id[i])
        print(f"  id {ids[i]} [{raw['label_name'][i]}] ~ id {j} [{raw['label_name'][j]}]: "
              f"{texts[i][:70]!r}")


if __name__ == "__main__":
    main()
