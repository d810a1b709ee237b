"""Noise for multi-label data: each class's membership flipped (the class added to an item
that lacks it, or removed from one that has it) at an exact rate per class."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from labelaudit._errors import InvalidParameterError
from labelaudit.io import ResultFiles, format_label_set
from labelaudit.noise._common import check_rate

if TYPE_CHECKING:
    import pandas as pd

# The noise methods that take label sets.
LABEL_SET_NOISE = ("uniform", "class-dependent")


@dataclass(frozen=True)
class LabelSetNoiseResult(ResultFiles):
    """Noised label sets: ``clean`` and ``noisy`` of shape (n_samples, n_classes), 1
    where an item has a class, and ``class_rates`` the share of items whose membership of each
    class was flipped."""

    ids: np.ndarray
    classes: np.ndarray
    clean: np.ndarray
    noisy: np.ndarray
    method: str
    class_rates: np.ndarray
    random_state: int | None

    @property
    def is_noisy(self) -> np.ndarray:
        """Items whose set changed."""
        return (self.clean != self.noisy).any(axis=1)

    def _sets(self, matrix: np.ndarray, sep: str | None) -> list[Any]:
        return [format_label_set(row, self.classes, sep) for row in matrix]

    def apply_to(self, frame: pd.DataFrame, *, label: str = "label",
                 sep: str | None = None) -> pd.DataFrame:
        """The noised copy of ``frame``: ``label`` the noisy sets, ``clean_label``,
        ``is_noisy``, ``noise_method`` and the classes each item gained (``added``) and lost
        (``removed``); sets are lists, or text joined by ``sep``."""
        out = frame.copy()
        out[label] = self._sets(self.noisy, sep)
        out["clean_label"] = self._sets(self.clean, sep)
        out["is_noisy"] = self.is_noisy
        out["noise_method"] = [self.method if noisy else None for noisy in self.is_noisy]
        out["added"] = self._sets(((self.noisy == 1) & (self.clean == 0)).astype(np.int8), sep)
        out["removed"] = self._sets(((self.noisy == 0) & (self.clean == 1)).astype(np.int8),
                                    sep)
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"method": self.method, "n_items": len(self.ids),
                "n_noisy": int(self.is_noisy.sum()), "random_state": self.random_state,
                "class_rates": {str(c): float(r) for c, r in zip(self.classes,
                                                                 self.class_rates,
                                                                 strict=True)},
                "added": int(((self.noisy == 1) & (self.clean == 0)).sum()),
                "removed": int(((self.noisy == 0) & (self.clean == 1)).sum())}

    def summary(self) -> str:
        doc = self.to_dict()
        rates = ", ".join(f"{c} {r:.1%}" for c, r in doc["class_rates"].items())
        return (f"{self.method} label-set noise: {doc['n_noisy']} of {doc['n_items']} items "
                f"changed ({doc['added']} classes added, {doc['removed']} removed); flipped "
                f"per class: {rates}")


def _class_rates(method: str, rate: float, n_classes: int,
                 rng: np.random.Generator) -> np.ndarray:
    if method == "uniform":
        return np.full(n_classes, rate)
    # class-dependent: each class its own rate, drawn uniformly and scaled so that their
    # mean is the rate asked for (capped at 1)
    draws = rng.uniform(0.0, 1.0, n_classes)
    return np.minimum(draws / draws.mean() * rate, 1.0)


def inject_label_set_noise(label_sets: np.ndarray, classes: np.ndarray, *,
                           method: str = "uniform", rate: float,
                           ids: np.ndarray | None = None,
                           random_state: int | None = 0) -> LabelSetNoiseResult:
    """Flip each class's membership for exactly ``round(rate_j * n)`` items (halves up),
    chosen at random: ``uniform`` flips every class at ``rate``; ``class-dependent`` at a
    rate of its own, drawn at random around ``rate`` (their mean).

    Examples
    --------
    >>> Y = np.array([[1, 0], [0, 1], [1, 1], [0, 0]] * 5)
    >>> result = inject_label_set_noise(Y, np.array(["a", "b"]), rate=0.1)
    >>> (result.clean != result.noisy).sum(axis=0).tolist()
    [2, 2]
    """
    if method not in LABEL_SET_NOISE:
        raise InvalidParameterError(
            f"method {method!r} does not noise label sets; multi-label noise is "
            f"{' or '.join(LABEL_SET_NOISE)}")
    rate = float(check_rate(rate) or 0.0)
    clean = np.asarray(label_sets, dtype=np.int8)
    n, k = clean.shape
    rng = np.random.default_rng(random_state)
    rates = _class_rates(method, rate, k, rng)
    noisy = clean.copy()
    for j in range(k):
        count = int(np.floor(rates[j] * n + 0.5))
        chosen = rng.choice(n, size=count, replace=False)
        noisy[chosen, j] = 1 - noisy[chosen, j]
    flipped = (noisy != clean).mean(axis=0)
    return LabelSetNoiseResult(ids=np.arange(n) if ids is None else np.asarray(ids),
                               classes=np.asarray(classes), clean=clean, noisy=noisy,
                               method=method, class_rates=flipped, random_state=random_state)
