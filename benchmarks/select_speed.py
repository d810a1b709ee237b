"""Time ``labelaudit.impact.select_models`` on NoisywikiHow (issue 13).

The target is the CPU sweep on NoisywikiHow in under 10 minutes with cached embeddings
(TF-IDF needs no cache). Validation is a stratified 20 % of ``train.jsonl`` (seed 0), the
test split is ``test.jsonl``; the data is read from ``../shared/data/noisywikihow`` and never
copied. ``--subset`` keeps that share of every split (stratified) for a quick figure.

    python benchmarks/select_speed.py [--sweep 40] [--seeds 3] [--noise uniform:0.05]
        [--scorers tfidf] [--subset 1.0] [--data ../shared/data/noisywikihow]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from labelaudit.impact import select_models

DEFAULT_DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "noisywikihow"


def stratified(frame: pd.DataFrame, share: float, seed: int = 0
               ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(rest, sample)``: ``share`` of every class drawn (at least one item per class)."""
    rng = np.random.default_rng(seed)
    chosen = np.zeros(len(frame), dtype=bool)
    for rows in frame.groupby("label").indices.values():
        chosen[rng.choice(rows, max(1, round(share * len(rows))), replace=False)] = True
    return (frame[~chosen].reset_index(drop=True), frame[chosen].reset_index(drop=True))


def load(root: Path, subset: float) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    train = pd.read_json(root / "train.jsonl", lines=True)
    test = pd.read_json(root / "test.jsonl", lines=True)
    train, val = stratified(train, 0.2)
    if subset < 1.0:
        train, val, test = (stratified(f, subset)[1] for f in (train, val, test))
    return train, val, test


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--sweep", type=int, default=40)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--noise", default="uniform:0.05")
    parser.add_argument("--scorers", default="tfidf")
    parser.add_argument("--subset", type=float, default=1.0)
    args = parser.parse_args()
    if not (args.data / "train.jsonl").exists():
        print(f"skipped: no NoisywikiHow at {args.data}", file=sys.stderr)
        return
    train, val, test = load(args.data, args.subset)
    start = time.perf_counter()
    result = select_models(train, val, test, noise=args.noise, n_configs=args.sweep,
                           seeds=args.seeds, scorers=args.scorers.split(","), progress=False)
    seconds = time.perf_counter() - start
    print(result.summary())
    fits = args.sweep * args.seeds
    print(f"select on NoisywikiHow ({len(train):,} train, {len(val):,} val, {len(test):,} test, "
          f"{args.sweep} configs x {args.seeds} seeds, {args.scorers}): {seconds:.1f} s "
          f"({seconds / fits:.2f} s per model fit and scoring); target: under 600 s")


if __name__ == "__main__":
    main()
