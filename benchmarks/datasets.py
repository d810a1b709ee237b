"""The text-classification datasets with human-verified label errors, read from ../shared/data.

Nothing here is copied into the repository: each dataset is read at run time from the data
root, and a dataset whose file is missing is skipped.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["DatasetSpec", "Dataset", "SPECS", "load", "read_raw", "subsample"]


@dataclass(frozen=True)
class DatasetSpec:
    name: str
    path: str  # relative to the data root
    text: str
    label: str
    text_pair: str | None = None
    is_error: str = "is_error"
    id: str = "id"
    note: str = ""
    annotations: str | None = None  # per-item annotator labels, for the crowdlab row


@dataclass(frozen=True)
class Dataset:
    spec: DatasetSpec
    frame: pd.DataFrame  # columns: id, text, [text_pair,] label
    is_error: np.ndarray  # bool, aligned with frame
    quick: bool = False

    @property
    def name(self) -> str:
        return self.spec.name


SPECS: dict[str, DatasetSpec] = {
    spec.name: spec
    for spec in (
        DatasetSpec("labelerrors_20news", "labelerrors_20news/test.jsonl", "text", "label",
                    note="22 verified errors; unchecked items count as clean (a lower bound)"),
        DatasetSpec("chaosnli_snli", "chaosnli_snli/snli.jsonl", "text_a", "label", "text_b",
                    note="original gold vs majority of 100 ChaosNLI votes",
                    annotations="annotator_labels"),
        DatasetSpec("snow2008_rte", "snow2008_rte/rte.jsonl", "text_a", "label", "text_b",
                    note="crowd majority vote vs expert gold (ties broken to 0)",
                    annotations="annotator_labels"),
    )
}


def load(spec: DatasetSpec, data_root: Path) -> Dataset | None:
    """Read a dataset, or None when its file is not under ``data_root``."""
    from labelaudit.io import read_table

    path = data_root / spec.path
    if not path.exists():
        return None
    raw = read_table(path)
    columns = {spec.id: "id", spec.text: "text", spec.label: "label"}
    if spec.text_pair:
        columns[spec.text_pair] = "text_pair"
    if spec.annotations:
        columns[spec.annotations] = "annotations"
    frame = raw[list(columns)].rename(columns=columns).reset_index(drop=True)
    is_error = raw[spec.is_error].fillna(False).astype(bool).to_numpy()
    return Dataset(spec, frame, is_error)


def read_raw(name: str, data_root: str | Path) -> pd.DataFrame | None:
    """Read a dataset's file with all its columns, or say on stderr that it is missing."""
    from labelaudit.io import read_table

    path = Path(data_root) / SPECS[name].path
    if not path.exists():
        print(f"missing {path}; nothing to do", file=sys.stderr)
        return None
    return read_table(path)


def subsample(data: Dataset, *, size: int, n_folds: int = 5, random_state: int = 0) -> Dataset:
    """A small sample for a smoke run: ``size`` items with at least 5 errors when available.

    Errors are over-sampled on purpose (a rate of at least ``5 / size``), so the quick run's
    numbers are not comparable with a full run. Classes with fewer than ``n_folds`` items in
    the sample are dropped so that cross-fitting works.
    """
    if size >= len(data.frame):
        return data
    rng = np.random.default_rng(random_state)
    errors = np.flatnonzero(data.is_error)
    clean = np.flatnonzero(~data.is_error)
    n_err = min(len(errors), max(5, round(size * len(errors) / len(data.frame))))
    chosen = np.r_[rng.choice(errors, n_err, replace=False),
                   rng.choice(clean, size - n_err, replace=False)]
    chosen.sort()
    frame = data.frame.iloc[chosen].reset_index(drop=True)
    is_error = data.is_error[chosen]
    counts = frame["label"].value_counts()
    keep = frame["label"].map(counts).to_numpy() >= n_folds
    return Dataset(data.spec, frame[keep].reset_index(drop=True), is_error[keep], quick=True)
