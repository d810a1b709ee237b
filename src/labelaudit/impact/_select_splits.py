"""The clean, noisy and corrected versions of a split, for
:func:`labelaudit.impact.select_models`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from labelaudit._errors import InvalidParameterError
from labelaudit.io import TextDataset, encode_labels

__all__ = ["LabelVersions", "corrected_labels", "label_versions", "noisy_labels", "parse_noise"]


def parse_noise(noise: str) -> tuple[str, float]:
    """``"method:rate"`` as ``(method, rate)``, checked against the noise methods.

    Examples
    --------
    >>> parse_noise("uniform:0.05")
    ('uniform', 0.05)
    """
    from labelaudit.noise import NOISE_METHODS

    method, sep, rate_text = str(noise).strip().rpartition(":")
    if not sep or not method:
        raise InvalidParameterError(
            f"noise must be METHOD:RATE such as 'uniform:0.05'; got {noise!r}")
    if method not in NOISE_METHODS:
        raise InvalidParameterError(
            f"unknown noise method {method!r} in noise={noise!r}; choose from "
            f"{', '.join(NOISE_METHODS)}")
    try:
        rate = float(rate_text)
    except ValueError:
        raise InvalidParameterError(
            f"the rate of noise={noise!r} is not a number; write e.g. 'uniform:0.05'") from None
    if not 0.0 < rate < 1.0:
        raise InvalidParameterError(f"the rate of noise={noise!r} must be in (0, 1)")
    return method, rate


@dataclass(frozen=True)
class LabelVersions:
    """The three label versions of one split, as indices into the training classes.

    Attributes
    ----------
    labels : ndarray of int, shape (3, n_samples)
        Rows: clean (as given), noisy, corrected.
    relabelled : ndarray of bool, shape (n_samples,)
        The items the scan flagged and relabelled to its suggested label.
    """

    labels: np.ndarray
    relabelled: np.ndarray

    @property
    def n_noisy(self) -> int:
        """Items whose noisy label differs from the clean one."""
        return int((self.labels[1] != self.labels[0]).sum())

    @property
    def n_fixed(self) -> int:
        """Relabelled items whose corrected label is the clean one."""
        return int((self.relabelled & (self.labels[2] == self.labels[0])).sum())


def noisy_labels(frame: pd.DataFrame, *, label: str, method: str, rate: float,
                 classes: np.ndarray, text: str, text_pair: str | None,
                 random_state: int, options: dict[str, Any] | None = None) -> np.ndarray:
    """The ``label`` column noised at ``rate`` by ``method``, as indices into ``classes``."""
    from labelaudit.noise import inject_noise_table

    result = inject_noise_table(frame, label=label, method=method,  # type: ignore[arg-type]
                                rate=rate, random_state=random_state, text=text,
                                text_pair=text_pair, **(options or {}))
    return encode_labels(pd.Series(result.labels), np.arange(len(frame)), column=label,
                         classes=classes)[0]


def corrected_labels(train: TextDataset, data: TextDataset, noisy: np.ndarray, *,
                     n_relabel: int, scorers: Sequence[str], random_state: int,
                     options: dict[str, Any] | None = None,
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Scan the split with its ``noisy`` labels and relabel the ``n_relabel`` most suspect
    items to the suggested label.

    The scan is :func:`labelaudit.scan` with ``score=`` (fit on the noisy training split,
    score this one; Northcutt et al. 2021) and its default ranking, ``ensemble``: the
    ``scorers`` averaged with weights fitted to their log loss, items ordered by the loss
    of their given label (ties by row); the suggested label is the most probable other
    one. It is computed here rather than through ``scan`` so that the scorers take
    ``options``. ``train.labels`` must be the noisy training labels. Returns the
    corrected labels (indices into the training classes) and the relabelled mask.
    """
    from labelaudit.detect import ensemble_pred_probs, label_quality_scores, suggest_labels
    from labelaudit.models._registry import member_pred_probs

    relabelled = np.zeros(len(noisy), dtype=bool)
    if n_relabel == 0:
        return noisy.copy(), relabelled
    run = member_pred_probs(train, data, scorers=list(scorers), random_state=random_state,
                            **(options or {}))
    pred_probs = ensemble_pred_probs(list(run.per_scorer().values()), noisy).pred_probs
    scores = label_quality_scores(noisy, pred_probs, method="loss")
    top = np.argsort(scores, kind="stable")[:n_relabel]
    suggested, _ = suggest_labels(noisy, pred_probs)
    relabelled[top] = True
    corrected = noisy.copy()
    corrected[top] = suggested[top]
    return corrected, relabelled


def label_versions(train: TextDataset, data: TextDataset, noisy: np.ndarray, *,
                   scorers: Sequence[str], random_state: int,
                   options: dict[str, Any] | None = None) -> LabelVersions:
    """Clean (as given), noisy, and corrected: the scan's top Err % of the noisy split
    relabelled, Err % being the share of labels that differ from the clean ones."""
    assert data.labels is not None
    clean = data.labels
    n_relabel = int((noisy != clean).sum())
    corrected, relabelled = corrected_labels(
        train, data, noisy, n_relabel=n_relabel, scorers=scorers,
        random_state=random_state, options=options)
    return LabelVersions(np.stack([clean, noisy, corrected]), relabelled)
