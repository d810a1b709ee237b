"""Shared pieces of the noise methods: encoded inputs, exact allocation, capacity errors."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from labelaudit._errors import InvalidInputError, LabelAuditWarning
from labelaudit._validation import check_fraction
from labelaudit.io import Annotations


class NoiseRateWarning(LabelAuditWarning):
    """The rate, rounded to whole items, noises no item or every item; or the noise gives
    a class's items one wrong label at least as often as their own."""


class Shortfall(Exception):
    """Internal: a method cannot noise as many items as asked; ``available`` it can."""

    def __init__(self, available: int, reason: str = "") -> None:
        super().__init__(available, reason)
        self.available = available
        self.reason = reason


@dataclass(frozen=True)
class NoiseData:
    """Everything a noise method may look at; labels are class indices."""

    labels: np.ndarray
    n_classes: int
    crowd: Annotations | None = None
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

    @staticmethod
    def gathered(items: list[np.ndarray], new_labels: list[np.ndarray]) -> Flips:
        """Flips collected in parts (per class, per annotator), in item order."""
        if not items:
            return Flips.of(np.zeros(0, np.int64), np.zeros(0, np.int64))
        items_arr, new_arr = np.concatenate(items), np.concatenate(new_labels)
        order = np.argsort(items_arr)
        return Flips.of(items_arr[order], new_arr[order])


def draw(candidates: np.ndarray, count: int, rng: np.random.Generator,
         reason: str = "") -> np.ndarray:
    """``count`` of the ``candidates`` at random, sorted; :class:`Shortfall` when too few."""
    if count > len(candidates):
        raise Shortfall(len(candidates), reason)
    return np.sort(rng.choice(candidates, size=count, replace=False))


def check_rate(rate: object, *, allow_none: bool = False) -> float | None:
    """Validate a noise rate in [0, 1).

    >>> check_rate(1.0)
    Traceback (most recent call last):
    ...
    labelaudit._errors.InvalidParameterError: rate must be a number in [0, 1); got 1.0
    """
    if rate is None and allow_none:
        return None
    return check_fraction(rate, "rate", high_open=True)


def target_count(rate: float, n: int) -> int:
    """``round(rate * n)`` with halves rounded up, robust to float error.

    Examples
    --------
    >>> target_count(0.05, 800), target_count(0.25, 2), target_count(0.1, 5)
    (40, 1, 1)
    """
    return int(math.floor(rate * n + 0.5 + 1e-9))


def warn_rounding(rate: float, n: int, *, stacklevel: int = 3) -> None:
    """Warn when ``round(rate * n)`` is 0 for a positive rate, or every one of the ``n`` items.

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_rounding(0.999, 40)
    >>> str(caught[0].message)[:60]
    'rate 0.999 of 40 items asks for 39.96 items, which rounds to'
    """
    count = target_count(rate, n)
    exact = f"{rate * n:.6g}"
    if rate > 0 and count == 0:
        warnings.warn(NoiseRateWarning(
            f"rate {rate:g} of {n} items asks for {exact} items, which rounds to 0: no item is "
            f"noised (a rate of at least {0.5 / n:.6g} noises one)"), stacklevel=stacklevel)
    elif n and count == n:
        warnings.warn(NoiseRateWarning(
            f"rate {rate:g} of {n} items asks for {exact} items, which rounds to all {n}: every "
            f"item is noised (a rate below {(n - 0.5) / n:.6g} keeps at least one clean item)"),
            stacklevel=stacklevel)


def warn_wrong_majority(clean: np.ndarray, noisy: np.ndarray, classes: np.ndarray, *,
                        method: str, rate: float | None, stacklevel: int = 3) -> None:
    """Warn when the noise gives a class's items one wrong label at least as often as their
    own: a model trained on them learns the wrong label, and no detector can tell.

    Uniform noise tips from ``rate >= (K - 1) / K``: checked on the rate, not the draw (a
    small class can tip by chance); other methods on their achieved counts.

    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_wrong_majority(np.array([0, 0, 0, 1, 1]), np.array([1, 1, 0, 1, 1]),
    ...                         np.array(["a", "b"]), method="class-dependent", rate=0.4)
    >>> str(caught[0].message)[:62]
    "rate 0.4 gives class 'a' its own label on 1 of its 3 items and"
    """
    k = len(classes)
    if method == "uniform":
        if rate is not None and k > 1 and rate >= (k - 1) / k - 1e-12:
            warnings.warn(NoiseRateWarning(
                f"uniform noise at rate {rate:g} over {k} classes keeps each class's own "
                f"label on {1 - rate:.0%} of its items and gives each other class "
                f"{rate / (k - 1):.0%}: a wrong label is at least as likely as the right one "
                f"from rate (K - 1) / K = {(k - 1) / k:.3g}, so a model trained on these "
                f"labels learns wrong ones; lower the rate below {(k - 1) / k:.3g}"),
                stacklevel=stacklevel)
        return
    counts = np.bincount(np.asarray(clean) * k + np.asarray(noisy),
                         minlength=k * k).reshape(k, k)
    kept = np.diag(counts).copy()
    wrong = counts - np.diag(kept)
    top = wrong.argmax(axis=1)
    most = wrong[np.arange(k), top]
    bad = np.flatnonzero((most > 0) & (most >= kept))
    if not len(bad):
        return
    i = int(bad[0])
    what = f"rate {rate:g}" if rate is not None else "the noise"
    more = f" (and {len(bad) - 1} more class{'es' if len(bad) > 2 else ''})" \
        if len(bad) > 1 else ""
    warnings.warn(NoiseRateWarning(
        f"{what} gives class {str(classes[i])!r} its own label on {kept[i]} of its "
        f"{counts[i].sum()} items and {str(classes[top[i]])!r} on {most[i]}{more}: a wrong "
        f"label is at least as frequent as the right one, so a model trained on these labels "
        f"learns the wrong one; lower the rate"), stacklevel=stacklevel)


def allocate(total: int, weights: Sequence[float] | np.ndarray,
             caps: Sequence[int] | np.ndarray | None = None) -> np.ndarray:
    """Split the integer ``total`` in proportion to ``weights`` (largest remainder, ties
    to the earlier entry); with ``caps``, what a capped share cannot take goes to the others.

    >>> allocate(5, [0.8, 0.2]).tolist()
    [4, 1]
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


def require_crowd(data: NoiseData, method: str, *, workers: bool = False,
                  several: bool = False) -> Annotations:
    """The crowd annotations, or a clear error when a method needs what is missing."""
    if data.crowd is None or len(data.crowd.item_codes) == 0:
        raise InvalidInputError(
            f"{method} needs per-item crowd annotations; pass annotations "
            "(CLI: --annotations COLUMN or --annotations-file FILE)"
        )
    if workers and data.crowd.n_annotators == 0:
        raise InvalidInputError(
            f"{method} needs annotator ids, and these annotations have none; give annotations "
            "as {'worker': id, 'label': value} objects or a long table with an annotator "
            "column, or use dissenting-label / minority-split instead"
        )
    if several and data.crowd.counts().sum(axis=1).max() < 2:
        raise InvalidInputError(
            f"{method} needs several annotations per item; no item has more than one")
    return data.crowd
