"""The clean, noisy and corrected versions of a split, for
:func:`labelaudit.impact.select_models`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from labelaudit.io import TextDataset
from labelaudit.noise import noisy_labels, parse_noise

__all__ = ["LabelVersions", "corrected_labels", "label_versions", "noisy_labels", "parse_noise"]

# the noise helpers select shares with train-bench live in labelaudit.noise


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
