"""Shared pieces of the noise methods: encoded inputs, exact allocation, capacity errors."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from labelaudit._errors import InvalidInputError, InvalidParameterError, format_rows

__all__ = [
    "Crowd",
    "Flips",
    "NoiseData",
    "Shortfall",
    "allocate",
    "check_rate",
    "crowd_from_annotations",
    "target_count",
]


class Shortfall(Exception):
    """Internal: a method cannot noise as many items as asked; ``available`` it can."""

    def __init__(self, available: int, reason: str = "") -> None:
        super().__init__(available, reason)
        self.available = available
        self.reason = reason


@dataclass(frozen=True)
class Crowd:
    """Crowd annotations encoded against the dataset's label set.

    Attributes
    ----------
    items, workers, labels : ndarray of int, shape (n_annotations,)
        Row of the dataset, annotator code (-1 when unknown) and class index of each
        annotation.
    counts : ndarray of int, shape (n_samples, n_classes)
        How many annotators gave each item each class.
    n_workers : int
        Number of distinct known annotators (0 when the annotations carry no ids).
    """

    items: np.ndarray
    workers: np.ndarray
    labels: np.ndarray
    counts: np.ndarray
    n_workers: int


@dataclass(frozen=True)
class NoiseData:
    """Everything a noise method may look at; labels are class indices."""

    labels: np.ndarray
    n_classes: int
    crowd: Crowd | None = None
    embeddings: np.ndarray | None = None
    texts: Sequence[str] | None = None
    noise_matrix: np.ndarray | None = None
    swap_input: bool = False
    cache: dict = field(default_factory=dict, compare=False)

    @property
    def n_samples(self) -> int:
        return len(self.labels)


@dataclass(frozen=True)
class Flips:
    """What one method did: the rows it noised and their new labels.

    ``text_from[k]`` is the row whose text replaces row ``items[k]``'s (``--swap-input``),
    or -1 when the label is flipped instead.
    """

    items: np.ndarray
    new_labels: np.ndarray
    text_from: np.ndarray

    @staticmethod
    def of(items: np.ndarray, new_labels: np.ndarray,
           text_from: np.ndarray | None = None) -> Flips:
        items = np.asarray(items, dtype=np.int64)
        if text_from is None:
            text_from = np.full(len(items), -1, dtype=np.int64)
        return Flips(items, np.asarray(new_labels, dtype=np.int64),
                     np.asarray(text_from, dtype=np.int64))


def check_rate(rate: object, *, allow_none: bool = False) -> float | None:
    """Validate a noise rate in [0, 1).

    Examples
    --------
    >>> check_rate(0.05)
    0.05
    >>> check_rate(1.0)
    Traceback (most recent call last):
    ...
    labelaudit._errors.InvalidParameterError: rate must be a number in [0, 1); got 1.0
    """
    if rate is None and allow_none:
        return None
    ok = isinstance(rate, (int, float, np.integer, np.floating)) and not isinstance(rate, bool)
    if not ok or not math.isfinite(float(rate)) or not 0 <= float(rate) < 1:  # type: ignore[arg-type]
        raise InvalidParameterError(f"rate must be a number in [0, 1); got {rate!r}")
    return float(rate)  # type: ignore[arg-type]


def target_count(rate: float, n: int) -> int:
    """``round(rate * n)`` with halves rounded up, robust to float error.

    Examples
    --------
    >>> target_count(0.05, 800), target_count(0.25, 2), target_count(0.1, 5)
    (40, 1, 1)
    """
    return int(math.floor(rate * n + 0.5 + 1e-9))


def allocate(total: int, weights: Sequence[float] | np.ndarray,
             caps: Sequence[int] | np.ndarray | None = None) -> np.ndarray:
    """Split the integer ``total`` in proportion to ``weights`` (largest remainder).

    Each share is the floor or the ceiling of its exact quota, and the shares sum to
    ``total``. With ``caps``, no share exceeds its cap; what a capped share cannot take
    is passed on to the others in proportion to their weights. Ties in the remainders go
    to the earlier entry, so the split is deterministic.

    Examples
    --------
    >>> allocate(5, [0.8, 0.2]).tolist()
    [4, 1]
    >>> allocate(3, [1, 1]).tolist()
    [2, 1]
    >>> allocate(4, [1, 1], caps=[1, 10]).tolist()
    [1, 3]
    """
    weights = np.asarray(weights, dtype=float)
    caps_arr = (np.full(len(weights), max(total, 0), dtype=np.int64) if caps is None
                else np.asarray(caps, dtype=np.int64))
    shares = np.zeros(len(weights), dtype=np.int64)
    if total <= 0 or len(weights) == 0:
        return shares
    if caps_arr.sum() < total:
        raise ValueError("the caps cannot hold the total")  # internal: callers check first
    open_ = (caps_arr > 0) & (weights > 0)
    remaining = total
    while remaining > 0:
        if not open_.any():  # weights of the still-open entries are all zero
            open_ = shares < caps_arr
            use = open_.astype(float)
        else:
            use = np.where(open_, weights, 0.0)
        quota = remaining * use / use.sum()
        add = np.minimum(np.floor(quota + 1e-9).astype(np.int64), caps_arr - shares)
        left = remaining - int(add.sum())
        if left > 0:
            order = np.lexsort((np.arange(len(quota)), -(quota - np.floor(quota + 1e-9))))
            for i in order:
                if left == 0:
                    break
                if use[i] > 0 and shares[i] + add[i] < caps_arr[i]:
                    add[i] += 1
                    left -= 1
        shares += add
        remaining = left
        open_ = open_ & (shares < caps_arr)
    return shares


def _python_value(value: object) -> object:
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def crowd_from_annotations(
    annotations: pd.DataFrame | pd.Series | Sequence[object], *, ids: np.ndarray,
    classes: np.ndarray,
) -> Crowd:
    """Encode crowd annotations against the rows and the label set of a dataset.

    ``annotations`` is either a long table (one row per annotation: ``item_id``,
    ``annotator_id``, ``label``, or the aliases :func:`labelaudit.agreement.to_annotations`
    knows) whose item ids are the dataset's ``ids``, or one entry per row: a list of plain
    labels or of ``{"worker": id, "label": value}`` objects (JSON text is parsed).

    Examples
    --------
    >>> crowd = crowd_from_annotations([["a", "b"], ["b"]], ids=np.arange(2),
    ...                                classes=np.array(["a", "b"]))
    >>> crowd.counts.tolist(), crowd.n_workers
    ([[1, 1], [0, 1]], 0)
    """
    from labelaudit.agreement import nested_to_long, to_annotations

    n = len(ids)
    if isinstance(annotations, pd.DataFrame):
        long = annotations
        position = {_python_value(v): i for i, v in enumerate(np.asarray(ids).tolist())}
    else:
        values = list(annotations)
        if len(values) != n:
            raise InvalidInputError(
                f"annotations has {len(values)} entries but there are {n} labels; give one "
                "list of annotations per row, or a long table (item_id, annotator_id, label)"
            )
        nested = pd.DataFrame({"item": np.arange(n),
                               "annotations": pd.Series(values, dtype=object)})
        long = nested_to_long(nested, item="item", annotations="annotations")
        if long["annotator"].notna().any() and long["annotator"].isna().any():
            without = pd.unique(long.loc[long["annotator"].isna(), "item"])
            raise InvalidInputError(
                "give every annotation an annotator id or none at all: "
                f"{format_rows(without)} have annotations without one"
            )
        position = {i: i for i in range(n)}
        if len(long) == 0:
            return _empty_crowd(n, len(classes))
    if len(long) == 0:
        return _empty_crowd(n, len(classes))
    ann = to_annotations(long)
    rows = np.array([position.get(_python_value(v), -1) for v in ann.items.tolist()],
                    dtype=np.int64)
    if (rows < 0).any():
        raise InvalidInputError(
            f"the annotations name items that are not in the data: "
            f"{format_rows(ann.items[rows < 0].tolist())}; item ids must match the id column "
            "(or row numbers 0..n-1 without one)"
        )
    index = {_python_value(c): i for i, c in enumerate(np.asarray(classes).tolist())}
    codes = np.array([index.get(_python_value(c), -1) for c in ann.classes], dtype=np.int64)
    if (codes < 0).any():
        unknown = [c for c, k in zip(ann.classes, codes, strict=True) if k < 0]
        bad = np.isin(ann.label_codes, np.flatnonzero(codes < 0))
        where = pd.unique(ann.items[ann.item_codes[bad]])
        raise InvalidInputError(
            f"the annotations use labels outside the label set {np.asarray(classes).tolist()}: "
            f"{unknown}, in {format_rows(where)}; "
            "map them to dataset labels or pass the full label set as classes"
        )
    items = rows[ann.item_codes]
    labels = codes[ann.label_codes]
    counts = np.zeros((n, len(classes)), dtype=np.int64)
    np.add.at(counts, (items, labels), 1)
    n_workers = 0 if ann.annotators is None else len(ann.annotators)
    return Crowd(items=items, workers=ann.annotator_codes.astype(np.int64), labels=labels,
                 counts=counts, n_workers=n_workers)


def _empty_crowd(n: int, n_classes: int) -> Crowd:
    empty = np.zeros(0, dtype=np.int64)
    return Crowd(items=empty, workers=empty, labels=empty,
                 counts=np.zeros((n, n_classes), dtype=np.int64), n_workers=0)


def require_crowd(data: NoiseData, method: str, *, workers: bool = False,
                  several: bool = False) -> Crowd:
    """The crowd annotations, or a clear error when a method needs what is missing."""
    if data.crowd is None or len(data.crowd.items) == 0:
        raise InvalidInputError(
            f"{method} needs per-item crowd annotations; pass annotations "
            "(CLI: --annotations COLUMN or --annotations-file FILE)"
        )
    if workers and data.crowd.n_workers == 0:
        raise InvalidInputError(
            f"{method} needs annotator ids, and these annotations have none; give annotations "
            "as {'worker': id, 'label': value} objects or a long table with an annotator "
            "column, or use dissenting-label / minority-split instead"
        )
    if several and data.crowd.counts.sum(axis=1).max() < 2:
        raise InvalidInputError(
            f"{method} needs several annotations per item; no item has more than one"
        )
    return data.crowd
