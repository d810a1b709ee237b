"""Per-item category counts of crowd annotations (the input of Fleiss' kappa)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from labelaudit.io import Annotations, to_annotations

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["annotation_counts"]


def annotation_counts(
    annotations: pd.DataFrame | Annotations,
    *,
    item: str | None = None,
    annotator: str | None = None,
    label: str | None = None,
) -> pd.DataFrame:
    """Count how many annotators put each item in each category.

    Parameters
    ----------
    annotations : DataFrame
        Long format (see :func:`to_annotations`).
    item, annotator, label : str, optional
        Column names (found among the usual aliases when not given).

    Returns
    -------
    DataFrame of shape (n_items, n_classes)
        Indexed by item id, one column per category; the input of :func:`fleiss_kappa`.

    Examples
    --------
    >>> df = pd.DataFrame({"item": [1, 1, 1, 2, 2, 2], "label": list("aabbbb")})
    >>> counts = annotation_counts(df)
    >>> counts.columns.tolist(), counts.index.tolist(), counts.to_numpy().tolist()
    (['a', 'b'], [1, 2], [[2, 1], [0, 3]])
    """
    import pandas as pd
    ann = to_annotations(annotations, item=item, annotator=annotator, label=label)
    frame = pd.DataFrame(ann.counts(), columns=list(ann.classes))
    frame.index = pd.Index(ann.items, name="item")
    frame.columns.name = None
    return frame
