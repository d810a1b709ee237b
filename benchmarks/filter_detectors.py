"""Which detector should the ``filter`` methods use? Average precision of each candidate's
out-of-sample loss at finding the injected label errors, per data set and noise.

Candidates: the scan's members (``tfidf``, ``embed``: logistic regression on TF-IDF or on
the MiniLM embeddings) and heads over the embeddings trained with ``base`` or ``seal``
(:class:`labelaudit.training.HeadScorer`), all cross-fitted over the same 5 stratified
folds of the noisy labels; one seed per cell.

    python -m benchmarks.filter_detectors [--data-dir ../shared/data]
        [--noise uniform:0.4 --noise instance-dependent:0.4] [--out ...]

About 10 minutes on 2 CPU cores once the embeddings are cached.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.train_noise import DATA, _table, _twenty_news

OUT = Path(__file__).resolve().parent / "results" / "filter_detectors"
DETECTORS = ("tfidf", "embed", "head-base", "head-seal")


def _probs(name: str, dataset, labels: np.ndarray, folds: np.ndarray, n_classes: int,
           vectors: np.ndarray) -> np.ndarray:
    from labelaudit.models import crossfit_pred_probs, make_scorer
    from labelaudit.training import HeadScorer

    if name.startswith("head-"):
        scorer = HeadScorer(name.split("-", 1)[1])
        features = vectors
    else:
        scorer = make_scorer(name)
        features = vectors if name == "embed" else scorer.prepare(dataset)
    return crossfit_pred_probs(scorer, features, labels, folds, n_classes=n_classes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=DATA)
    parser.add_argument("--noise", action="append")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()

    from sklearn.metrics import average_precision_score

    from labelaudit.io import prepare_text_dataset, read_table
    from labelaudit.models import make_folds
    from labelaudit.noise import noisy_labels
    from labelaudit.training import embed, noise_share, parse_noise_grid

    wikihow = read_table(args.data_dir / "noisywikihow" / "train.jsonl")
    news, _ = _twenty_news(args.data_dir / "labelerrors_20news")
    sets = [("noisywikihow", wikihow, args.noise or ["uniform:0.4", "instance-dependent:0.4"]),
            ("20news", news, ["uniform:0.4"])]
    rows = []
    for name, frame, grid in sets:
        clean = prepare_text_dataset(frame, text="text", label="label")
        vectors = embed(clean, {"encoder": None})
        for spec in grid:
            method, rates = parse_noise_grid(spec)
            for rate in rates:
                noisy = noisy_labels(frame, label="label", method=method, rate=rate,
                                     classes=clean.classes, text="text", text_pair=None,
                                     random_state=args.seed)
                wrong = noisy != clean.labels
                folds = make_folds(noisy, n_folds=5, random_state=args.seed)
                data = prepare_text_dataset(frame.assign(label=clean.classes[noisy]),
                                            text="text", label="label")
                for detector in DETECTORS:
                    started = time.perf_counter()
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        probs = _probs(detector, data, noisy, folds, len(clean.classes),
                                       vectors)
                    loss = -np.log(np.clip(probs[np.arange(len(noisy)), noisy], 1e-12, None))
                    rows.append({"data": name, "noise": method, "rate": rate,
                                 "detector": detector,
                                 "ap": float(average_precision_score(wrong, loss)),
                                 "base_rate": float(wrong.mean()),
                                 "oos_accuracy": float(np.mean(probs.argmax(axis=1) == noisy)),
                                 "cleanlab_share": noise_share(noisy, probs),
                                 "seconds": time.perf_counter() - started})
                    print(rows[-1], flush=True)
    frame = pd.DataFrame(rows)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".json").write_text(json.dumps(rows, indent=1))
    wide = frame.assign(cell=[f"{d} {n} {r:.0%}" for d, n, r in
                              zip(frame["data"], frame["noise"], frame["rate"], strict=True)])
    text = ("# Filter detectors: AP at finding injected label errors (seed "
            f"{args.seed})\n\n`python -m benchmarks.filter_detectors`\n\n"
            + _table(wide.pivot(index="detector", columns="cell", values="ap").round(3)
                     .loc[list(DETECTORS)])
            + "\n\nout-of-sample accuracy on the noisy labels:\n\n"
            + _table(wide.pivot(index="detector", columns="cell", values="oos_accuracy")
                     .round(3).loc[list(DETECTORS)])
            + "\n\ncleanlab's estimated share of wrong labels (truth: the rate):\n\n"
            + _table(wide.pivot(index="detector", columns="cell", values="cleanlab_share")
                     .round(3).loc[list(DETECTORS)]) + "\n")
    args.out.with_suffix(".md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
