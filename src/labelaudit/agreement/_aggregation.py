"""The result type shared by every label-aggregation method."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Aggregation"]


@dataclass(frozen=True)
class Aggregation:
    """Aggregated labels of crowd-annotated items.

    Attributes
    ----------
    method : str
        ``"majority_vote"``, ``"dawid_skene"``, ``"glad"`` or ``"mace"``.
    items : ndarray of shape (n_items,)
        Item ids, in order of first appearance in the annotations.
    labels : ndarray of shape (n_items,)
        The aggregated label (a user value); None where a tie was left unresolved
        (``ties="abstain"``).
    classes : tuple
        The categories, sorted; columns of ``probs``.
    probs : ndarray of shape (n_items, n_classes)
        Vote shares (majority vote) or posterior probabilities (the latent-class models).
    support : ndarray of shape (n_items,)
        ``probs`` of the chosen label (0 where abstained).
    n_annotations : ndarray of shape (n_items,)
        Number of annotations of each item.
    tied : ndarray of shape (n_items,)
        True where two or more categories had the top score.
    annotators : ndarray of shape (n_annotators,) or None
        Annotator ids; None when the annotations had none.
    annotator_quality : ndarray of shape (n_annotators,) or None
        Per-annotator quality: agreement with the aggregated label (majority vote), the
        diagonal-weighted accuracy of the confusion matrix (Dawid-Skene), the ability
        ``alpha`` (GLAD) or the competence (MACE).
    """

    method: str
    items: np.ndarray
    labels: np.ndarray
    classes: tuple
    probs: np.ndarray
    support: np.ndarray
    n_annotations: np.ndarray
    tied: np.ndarray
    annotators: np.ndarray | None = None
    annotator_quality: np.ndarray | None = None

    def to_frame(self) -> pd.DataFrame:
        """One row per item: ``item, label, support, n_annotations, tied, prob_<class>...``."""
        import pandas as pd
        frame = pd.DataFrame(
            {
                "item": self.items,
                "label": self.labels,
                "support": self.support,
                "n_annotations": self.n_annotations,
                "tied": self.tied,
            }
        )
        for j, cls in enumerate(self.classes):
            frame[f"prob_{cls}"] = self.probs[:, j]
        return frame

    def annotators_frame(self) -> pd.DataFrame:
        """One row per annotator: ``annotator, quality`` (empty without annotator ids)."""
        import pandas as pd
        if self.annotators is None or self.annotator_quality is None:
            return pd.DataFrame({"annotator": [], "quality": []})
        return pd.DataFrame({"annotator": self.annotators, "quality": self.annotator_quality})

    def to_dict(self) -> dict:
        """JSON-ready dict: the method, classes, per-item rows and per-annotator quality."""
        return {
            "method": self.method,
            "classes": list(self.classes),
            "items": _records(self.to_frame()),
            "annotators": _records(self.annotators_frame()),
        }

    def as_series(self) -> pd.Series:
        """The aggregated labels as a Series indexed by item id."""
        import pandas as pd
        return pd.Series(self.labels, index=pd.Index(self.items, name="item"), name="label")


def _records(frame: pd.DataFrame) -> list[dict]:
    out = []
    for row in frame.to_dict(orient="records"):
        out.append({k: _plain(v) for k, v in row.items()})
    return out


def _plain(value: object) -> object:
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and np.isnan(value):
        return None
    return value
