"""The numbers behind the report's figures: confident learning's count of label errors, the
given-versus-suggested confusion matrix, per-class counts and a probability histogram."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from labelaudit.detect import IssueCount

__all__ = ["class_table", "confusion_matrix", "issue_count", "probability_histogram",
           "top_confused"]


def issue_count(frame: pd.DataFrame, classes: list[Any]) -> IssueCount:
    """Confident learning's count of label errors from a scan output's ``label``,
    ``given_prob``, ``suggested_label`` and ``suggested_prob`` columns
    (:func:`labelaudit.detect.count_label_issues`).

    Examples
    --------
    >>> frame = pd.DataFrame({"label": ["a", "a", "a", "b", "b", "b"],
    ...                       "suggested_label": ["b", "b", "b", "a", "a", "a"],
    ...                       "given_prob": [0.9, 0.8, 0.2, 0.7, 0.9, 0.8],
    ...                       "suggested_prob": [0.1, 0.2, 0.8, 0.3, 0.1, 0.2]})
    >>> issue_count(frame, ["a", "b"]).n_issues
    1
    """
    import pandas as pd

    from labelaudit.detect import count_label_issues

    labels = pd.Categorical(frame["label"], categories=classes).codes
    suggested = pd.Categorical(frame["suggested_label"], categories=classes).codes
    return count_label_issues(labels, frame["given_prob"].to_numpy(dtype=float), suggested,
                              frame["suggested_prob"].to_numpy(dtype=float),
                              n_classes=len(classes))


def confusion_matrix(frame: pd.DataFrame, classes: list[Any]) -> pd.DataFrame:
    """Given label (rows) against the label the model prefers (columns), counted over the
    items whose most probable label is another one (``model_agrees`` false).

    There the model's top label is the ``suggested_label``; the diagonal is empty by
    construction (the model agreeing is counted in :func:`class_table`).

    Examples
    --------
    >>> frame = pd.DataFrame({"label": ["a", "a", "b", "b"],
    ...                       "suggested_label": ["b", "b", "a", "a"],
    ...                       "model_agrees": [False, False, True, False]})
    >>> confusion_matrix(frame, ["a", "b"]).to_numpy().tolist()
    [[0, 2], [1, 0]]
    """
    import pandas as pd
    off = frame.loc[~frame["model_agrees"].to_numpy(dtype=bool)]
    matrix = pd.crosstab(off["label"], off["suggested_label"])
    matrix = matrix.reindex(index=classes, columns=classes, fill_value=0).fillna(0).astype(int)
    matrix.index.name, matrix.columns.name = "given", "suggested"
    return matrix


def top_confused(matrix: pd.DataFrame, n: int) -> list[Any]:
    """At most ``n`` classes for a readable heat map: all of them, in class order, when
    there are at most ``n``; else the classes of the most frequent confusions (pairs taken
    largest first, both classes of a pair together, so they sit side by side), then the
    classes with the most confusions in all.

    Examples
    --------
    >>> m = pd.DataFrame([[0, 5, 0], [0, 0, 1], [2, 0, 0]], index=list("abc"),
    ...                  columns=list("abc"))
    >>> top_confused(m, 2)
    ['a', 'b']
    """
    if len(matrix) <= n:
        return list(matrix.index)
    counts = matrix.to_numpy()
    rows, cols = np.nonzero(counts)
    order = np.argsort(-counts[rows, cols], kind="stable")
    chosen: dict[int, None] = {}
    for i, j in zip(rows[order].tolist(), cols[order].tolist(), strict=True):
        if len(chosen) + (i not in chosen) + (j not in chosen) > n:
            break
        chosen.update(dict.fromkeys([i, j]))
    totals = counts.sum(axis=1) + counts.sum(axis=0)
    for k in np.argsort(-totals, kind="stable").tolist():
        if len(chosen) >= n:
            break
        chosen.setdefault(k, None)
    return [matrix.index[i] for i in chosen]


def class_table(frame: pd.DataFrame, classes: list[Any]) -> pd.DataFrame:
    """One row per class: ``class, n, share, flagged, flagged_share, model_agrees`` (share of
    the class's items whose most probable label is the given one), ``top_suggestion`` and
    ``n_top_suggestion`` (among the items where the model prefers another label).

    Examples
    --------
    >>> frame = pd.DataFrame({"label": ["a", "a", "b"], "suggested_label": ["b", "b", "a"],
    ...                       "flagged": [True, False, False],
    ...                       "model_agrees": [False, True, True]})
    >>> class_table(frame, ["a", "b"])[["class", "n", "flagged", "model_agrees"]]
      class  n  flagged  model_agrees
    0     a  2        1           0.5
    1     b  1        0           1.0
    """
    import pandas as pd
    rows = []
    grouped = {key: part for key, part in frame.groupby("label", sort=False)}
    total = max(len(frame), 1)
    for c in classes:
        part = grouped.get(c)
        if part is None or not len(part):
            rows.append((c, 0, 0.0, 0, math.nan, math.nan, None, 0))
            continue
        flagged = int(part["flagged"].sum())
        off = part.loc[~part["model_agrees"].to_numpy(dtype=bool), "suggested_label"]
        counts = off.value_counts()
        top = counts.index[0] if len(counts) else None
        rows.append((c, len(part), len(part) / total, flagged, flagged / len(part),
                     float(part["model_agrees"].mean()), top,
                     int(counts.iloc[0]) if len(counts) else 0))
    return pd.DataFrame(rows, columns=["class", "n", "share", "flagged", "flagged_share",
                                       "model_agrees", "top_suggestion", "n_top_suggestion"])


def probability_histogram(given_prob: np.ndarray, flagged: np.ndarray, *, bins: int = 20
                          ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Bin edges over [0, 1] and the counts of flagged and of other items in each bin.

    Examples
    --------
    >>> edges, hit, rest = probability_histogram(np.array([0.01, 0.5, 0.99]),
    ...                                          np.array([True, False, False]), bins=2)
    >>> edges.tolist(), hit.tolist(), rest.tolist()
    ([0.0, 0.5, 1.0], [1, 0], [0, 2])
    """
    edges = np.linspace(0.0, 1.0, bins + 1)
    p = np.clip(np.asarray(given_prob, dtype=float), 0.0, 1.0)
    flagged = np.asarray(flagged, dtype=bool)
    hit = np.histogram(p[flagged], bins=edges)[0]
    rest = np.histogram(p[~flagged], bins=edges)[0]
    return edges, hit, rest
