"""The result of a multi-label scan: per-class out-of-sample probabilities, each item's
label-set quality, and which classes look missing or wrong."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from labelaudit.io import SET_THRESHOLD
from labelaudit.scanning._text_result import ScannedTexts

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["LabelSetScanResult", "output_frame"]



@dataclass(frozen=True)
class LabelSetScanResult(ScannedTexts):
    """The outcome of :func:`labelaudit.scan` on multi-label data.

    Attributes
    ----------
    ids, texts, text_pairs : the scored items (``text_pairs`` None for single texts).
    label_sets : ndarray of int8, shape (n_samples, n_classes)
        The given label sets: 1 where the item has the class.
    classes : ndarray of str, shape (n_classes,)
    pred_probs : ndarray of shape (n_samples, n_classes)
        Each class's out-of-sample probability of being in the item's set (the members'
        mean; a row need not sum to 1).
    member_probs : dict of str to ndarray
    scores : dict of str to ndarray (n_samples,)
        Label-set quality of every method; lower = more suspect.
    rank_by : str
    flagged : ndarray of bool
    flag_rule : str
    n_issues_estimate : int
        cleanlab's estimate of the number of items whose label set is wrong.
    label_sep : str or None
        How label sets are written to CSV and TSV (and read from them).
    """

    label_sets: np.ndarray
    classes: np.ndarray
    pred_probs: np.ndarray
    member_probs: dict[str, np.ndarray]
    label_sep: str | None = None
    extra: pd.DataFrame | None = None

    @property
    def suggested_sets(self) -> np.ndarray:
        """The classes each item's probabilities put in its set (at least
        :data:`SET_THRESHOLD`), shape (n_samples, n_classes)."""
        return (self.pred_probs >= SET_THRESHOLD).astype(np.int8)

    @property
    def missing(self) -> np.ndarray:
        """Classes not in the given set that the probabilities put there."""
        return (self.suggested_sets == 1) & (self.label_sets == 0)

    @property
    def extra_classes(self) -> np.ndarray:
        """Classes in the given set that the probabilities leave out."""
        return (self.suggested_sets == 0) & (self.label_sets == 1)

    def order(self) -> np.ndarray:
        """Item positions, most suspect first (ties in item order)."""
        return np.argsort(self.scores[self.rank_by], kind="stable")

    def class_counts(self) -> pd.DataFrame:
        """Per class: items given it, items suggested it, and the flagged items where it
        looks missing or wrong."""
        import pandas as pd
        flagged = self.flagged[:, None]
        return pd.DataFrame({
            "class": [str(c) for c in self.classes],
            "given": self.label_sets.sum(axis=0),
            "suggested": self.suggested_sets.sum(axis=0),
            "flagged_missing": (self.missing & flagged).sum(axis=0),
            "flagged_extra": (self.extra_classes & flagged).sum(axis=0),
        })

    def to_frame(self, *, sep: str | None = None) -> pd.DataFrame:
        """One row per item, most suspect first: id, text(s), the given ``label`` set, the
        ``suggested_label`` set, the ``missing`` and ``extra`` classes, every method's
        ``score_*``, ``rank`` and ``flagged``. Sets are lists, or text joined by ``sep``
        (for CSV and TSV)."""
        import pandas as pd

        from labelaudit.io import format_label_set

        order = self.order()

        def sets(matrix: np.ndarray) -> list[Any]:
            return [format_label_set(matrix[i], self.classes, sep) for i in order]

        frame = pd.DataFrame({"id": self.ids[order], "text": np.asarray(self.texts,
                                                                        dtype=object)[order]})
        if self.text_pairs is not None:
            frame["text_pair"] = np.asarray(self.text_pairs, dtype=object)[order]
        frame["label"] = sets(self.label_sets)
        frame["suggested_label"] = sets(self.suggested_sets)
        frame["missing"] = sets(self.missing.astype(np.int8))
        frame["extra"] = sets(self.extra_classes.astype(np.int8))
        for name, values in self.scores.items():
            frame[f"score_{name}"] = values[order]
        frame["rank"] = np.arange(1, len(order) + 1)
        frame["flagged"] = self.flagged[order]
        if self.extra is not None:
            kept = self.extra.iloc[order].reset_index(drop=True)
            frame = pd.concat([frame, kept.rename(columns=lambda c: f"input_{c}" if c in
                                                   frame.columns else c)], axis=1)
        return frame

    def write(self, path: str | Path) -> Path:
        """The table to ``path`` (CSV, TSV, JSONL, JSON or Parquet; sets joined by
        ``label_sep`` or ``|`` in CSV and TSV, lists elsewhere)."""
        from labelaudit.io import write_table

        suffix = Path(path).suffix.lower()
        sep = (self.label_sep or "|") if suffix in (".csv", ".tsv") else None
        return write_table(self.to_frame(sep=sep), path)

    def summary(self) -> str:
        n = len(self.ids)
        counts = self.class_counts()
        lines = [f"{n} items, {len(self.classes)} classes (multi-label; "
                 f"{int((self.label_sets.sum(axis=1) == 0).sum())} with the empty set), "
                 f"members {', '.join(self.member_probs)}; "
                 f"{int((self.missing | self.extra_classes).any(axis=1).sum())} items' "
                 "suggested set differs from the given one; cleanlab estimates "
                 f"{self.n_issues_estimate} items with a wrong label set; flagged "
                 f"{int(self.flagged.sum())} ({self.flag_rule}); ranked by {self.rank_by} in "
                 f"{self.seconds:.1f} s",
                 "per class, among the flagged items (missing: the class looks left out; "
                 "extra: it looks wrong):",
                 counts.to_string(index=False)]
        return "\n".join(lines)


def output_frame(result: Any, *, rows: int | None = None, sep: str | None = None) -> pd.DataFrame:
    """The table a scan's result writes: every item (``rows`` None), or the table view of
    the ``rows`` most suspect (:meth:`ScanResult.to_table`; for label sets the first
    ``rows``, every item when ``rows`` is 0), a label set as a list or as text joined by
    ``sep`` (for CSV, TSV and the table view).

    Parameters
    ----------
    result : ScanResult or LabelSetScanResult
    rows : int, optional
    sep : str, optional

    Returns
    -------
    DataFrame
    """
    if not isinstance(result, LabelSetScanResult):
        return result.to_frame() if rows is None else result.to_table(rows)
    frame = result.to_frame(sep=sep)
    return frame.head(rows) if rows else frame
