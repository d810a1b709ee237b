"""What cleanlab's Datalab found besides label issues: :class:`DatalabIssues`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["DatalabIssues"]


@dataclass(frozen=True)
class DatalabIssues:
    """What cleanlab's Datalab found besides label issues, one entry per item.

    Issue types that were not asked for keep their neutral values (False, None, NaN) and
    are left out of :meth:`to_frame` and :meth:`summary`.

    Attributes
    ----------
    ids : ndarray of shape (n_samples,)
        Item ids (row positions when none were given).
    labels : ndarray of int, shape (n_samples,)
        Given labels, as class indices.
    issue_types : tuple of str
        The issue types that were run.
    is_near_duplicate : ndarray of bool, shape (n_samples,)
    near_duplicate_id : ndarray of object, shape (n_samples,)
        Id of the item's closest near-duplicate, None where it has none.
    near_duplicate_sets : list of ndarray of int
        Positions of each item's near-duplicates (empty for most items), as cleanlab's
        ``get_info("near_duplicate")["near_duplicate_sets"]``.
    near_duplicate_label_conflict : ndarray of bool, shape (n_samples,)
        Some near-duplicate of the item has a different given label.
    is_outlier : ndarray of bool, shape (n_samples,)
    outlier_score : ndarray of float, shape (n_samples,)
        cleanlab's outlier score in [0, 1]; lower = more atypical.
    non_iid_p_value : float or None
        p-value of cleanlab's permutation test that neighbours in feature space are no
        closer in row order than chance; None when ``non_iid`` was not run.
    is_non_iid : bool
        ``non_iid_p_value < 0.05``: the row order carries information (sorted, drifting
        or grouped data), so row-order splits would not be random.
    seconds : float
        Wall time of the Datalab pass (features excluded).
    """

    ids: np.ndarray
    labels: np.ndarray
    issue_types: tuple[str, ...]
    is_near_duplicate: np.ndarray
    near_duplicate_id: np.ndarray
    near_duplicate_sets: list[np.ndarray]
    near_duplicate_label_conflict: np.ndarray
    is_outlier: np.ndarray
    outlier_score: np.ndarray
    non_iid_p_value: float | None
    is_non_iid: bool
    seconds: float

    @property
    def duplicate_groups(self) -> np.ndarray:
        """Group number of each item among near-duplicates, -1 for items without one.

        Items linked by near-duplicate relations, directly or through others, share a
        group (connected components of the near-duplicate graph), numbered from 0 in
        order of their first item.
        """
        from scipy.sparse import coo_matrix
        from scipy.sparse.csgraph import connected_components

        n = len(self.ids)
        rows = np.concatenate([np.full(len(s), i) for i, s in enumerate(self.near_duplicate_sets)]
                              + [np.zeros(0, int)]).astype(np.int64)
        cols = np.concatenate([np.asarray(s, np.int64) for s in self.near_duplicate_sets]
                              + [np.zeros(0, np.int64)])
        graph = coo_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, n))
        _, component = connected_components(graph, directed=False)
        groups = np.full(n, -1, dtype=np.int64)
        members = np.flatnonzero(self.is_near_duplicate)
        _, first, inverse = np.unique(component[members], return_index=True, return_inverse=True)
        renumber = np.argsort(np.argsort(first))  # groups numbered by first item
        groups[members] = renumber[inverse]
        return groups

    @property
    def n_duplicate_sets(self) -> int:
        """Number of near-duplicate groups (see :attr:`duplicate_groups`)."""
        return int(self.duplicate_groups.max(initial=-1) + 1)

    @property
    def n_conflicting_sets(self) -> int:
        """Near-duplicate groups holding an item whose near-duplicate has another label."""
        groups = self.duplicate_groups
        return len(np.unique(groups[self.near_duplicate_label_conflict & (groups >= 0)]))

    def to_frame(self) -> pd.DataFrame:
        """One row per item, in item order (a RangeIndex, aligned by position).

        Columns, for the issue types run: ``is_near_duplicate, near_duplicate_id,
        near_duplicate_label_conflict`` (near_duplicate) and ``is_outlier,
        outlier_score`` (outlier), and ``non_iid_p_value`` (non_iid: a dataset-level
        finding, the same in every row, so a written scan output still carries it).
        """
        import pandas as pd
        columns: dict[str, Any] = {}
        if "near_duplicate" in self.issue_types:
            columns["is_near_duplicate"] = self.is_near_duplicate
            columns["near_duplicate_id"] = pd.Series(self.near_duplicate_id, dtype=object)
            columns["near_duplicate_label_conflict"] = self.near_duplicate_label_conflict
        if "outlier" in self.issue_types:
            columns["is_outlier"] = self.is_outlier
            columns["outlier_score"] = self.outlier_score
        if "non_iid" in self.issue_types and self.non_iid_p_value is not None:
            columns["non_iid_p_value"] = np.full(len(self.ids), float(self.non_iid_p_value))
        return pd.DataFrame(columns, index=pd.RangeIndex(len(self.ids)))

    def summary(self) -> str:
        """A line per issue type run, e.g. ``near-duplicates: 120 items in 55 sets, 14
        sets with different labels``."""
        lines = []
        if "near_duplicate" in self.issue_types:
            n_items = int(self.is_near_duplicate.sum())
            lines.append(
                f"near-duplicates: {n_items} items in {self.n_duplicate_sets} sets, "
                f"{self.n_conflicting_sets} sets with different labels "
                f"({int(self.near_duplicate_label_conflict.sum())} items)")
        if "outlier" in self.issue_types:
            lines.append(f"outliers: {int(self.is_outlier.sum())}")
        if self.non_iid_p_value is not None:
            verdict = ("the row order carries information: neighbouring rows are more alike "
                       "than chance (sorted, drifting or grouped data)" if self.is_non_iid
                       else "no evidence of ordering effects")
            lines.append(f"non-IID: p = {_p_text(self.non_iid_p_value)} ({verdict})")
        return "\n".join(lines)


def _p_text(p: float) -> str:
    return f"{p:.2g}" if p >= 1e-3 else f"{p:.1e}"
