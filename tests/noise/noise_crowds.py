"""Random crowd tables for the noise tests (importable by test modules)."""

from __future__ import annotations

import numpy as np
import pandas as pd


def random_crowd(seed: int, n_items: int = 60, n_classes: int = 3, n_workers: int = 8,
                 per_item: int = 5, accuracy: float = 0.7) -> pd.DataFrame:
    """Items with a gold label and ``per_item`` worker labels each (right w.p. accuracy)."""
    rng = np.random.default_rng(seed)
    classes = [f"c{k}" for k in range(n_classes)]
    gold = rng.integers(n_classes, size=n_items)
    rows = []
    for i in range(n_items):
        workers = rng.choice(n_workers, size=min(per_item, n_workers), replace=False)
        notes = []
        for w in workers:
            right = rng.random() < accuracy
            label = gold[i] if right else (gold[i] + rng.integers(1, n_classes)) % n_classes
            notes.append({"worker": f"w{w}", "label": classes[label]})
        rows.append({"id": i, "gold": classes[gold[i]], "annotator_labels": notes})
    return pd.DataFrame(rows)
