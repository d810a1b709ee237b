"""Time ``labelaudit.impact.measure_impact`` on 100,000 synthetic items and 10 models.

The target (issue 13) is under 5 seconds: impact is arithmetic on arrays. The timed call
includes aligning every model's predictions by id and checking their labels.

    python benchmarks/impact_speed.py [--items 100000] [--models 10] [--repeat 3]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd

from labelaudit.impact import measure_impact


def synthetic(n_items: int, n_models: int, *, n_classes: int = 20, seed: int = 0,
              ) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    """A corrected table (5 % flagged: half correctable, a fifth unknown) and predictions
    of models whose accuracy rises with their index."""
    rng = np.random.default_rng(seed)
    ids = np.arange(n_items) * 7 + 3
    labels = rng.integers(0, n_classes, n_items)
    flagged = rng.random(n_items) < 0.05
    kind = rng.random(n_items)
    corrected = labels.copy()
    correctable = flagged & (kind < 0.5)
    corrected[correctable] = (labels[correctable] + 1) % n_classes
    verdict = np.where(~flagged, "", np.where(correctable, "Correctable", np.where(
        kind < 0.7, "Non-Agreement", "Non-Error")))
    table = pd.DataFrame({"id": ids, "label": labels, "corrected": corrected,
                          "flagged": flagged, "verdict": verdict})
    predictions = {}
    for m in range(n_models):
        right = rng.random(n_items) < 0.6 + 0.03 * m
        pred = np.where(right, corrected, rng.integers(0, n_classes, n_items))
        order = rng.permutation(n_items)  # each file in its own order
        predictions[f"model{m}"] = pd.DataFrame({"id": ids[order], "pred": pred[order]})
    return table, predictions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--models", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    table, predictions = synthetic(args.items, args.models)
    times = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = measure_impact(table, predictions)
        times.append(time.perf_counter() - start)
    print(f"impact on {args.items:,} items x {args.models} models: best {min(times):.2f} s, "
          f"median {float(np.median(times)):.2f} s over {args.repeat} runs (target < 5 s)")
    print(f"B={result.n_benign} C={result.n_correctable} U={result.n_unknown} "
          f"N={result.noise_prevalence:.4f}, {len(result.flips)} flips")


if __name__ == "__main__":
    main()
